"""Exit statuses of `spillway matrix check|run|build|baseline`."""

EXIT_OK = 0
EXIT_FAILED = 1       # a cell failed to build, is over its baseline, or could not be checked
EXIT_USAGE = 2        # bad cells.toml, unknown cell, bad option
EXIT_SKIPPED = 3      # nothing failed, but a required cell was skipped (toolchain missing)


def exit_status(*, failed: bool, required_skipped: bool, any_done: bool) -> int:
    """The one rule: a failure fails the run; else a required cell skipped, or
    no cell done at all (built, checked, its baseline written), is a skip."""
    if failed:
        return EXIT_FAILED
    if required_skipped or not any_done:
        return EXIT_SKIPPED
    return EXIT_OK
