"""Exit statuses of `spillway matrix check|run|build|baseline`."""

EXIT_OK = 0
EXIT_FAILED = 1       # a cell failed to build, is over its baseline, or could not be checked
EXIT_USAGE = 2        # bad cells.toml, unknown cell, bad option
EXIT_SKIPPED = 3      # nothing failed, but a required cell was skipped (toolchain missing)
