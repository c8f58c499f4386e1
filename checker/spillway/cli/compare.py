"""``spillway compare NEW... --against OLD...``: what changed, kernel by kernel."""

from __future__ import annotations

import io

from spillway.cli.common import add_read_options, progress_shown, read_options
from spillway.cli.output import (TSV_HEADERS, Outputs, add_output_options, add_table_options, chosen_format,
                                 markdown_marker, text_marker, write)

FORMATS = ("table", "json", "markdown", "github", "tsv", "sarif", "html")
TSV_FIELDS = ("status", "target", "name", "key", "worse", "better", "old_vgprs", "new_vgprs", "old_vgpr_spills",
              "new_vgpr_spills", "old_sgpr_spills", "new_sgpr_spills", "old_scratch", "new_scratch",
              "old_dynamic_stack", "new_dynamic_stack", "old_occupancy", "new_occupancy", "next_step")
TSV_HEADERS.add("\t".join(TSV_FIELDS).encode())
TSV_HEADERS.add("\t".join(TSV_FIELDS[:-1]).encode())     # (before next_step: still spillway's to replace)
# --isa: after next_step, what each kernel's code did (gate.tsv's code cells).
CODE_TSV_FIELDS = ("code", "code_notes", "old_code_sha256", "new_code_sha256", "old_code_scratch_bytes",
                   "new_code_scratch_bytes", "old_scratch_in_loops", "new_scratch_in_loops", "old_agpr_copies",
                   "new_agpr_copies")
TSV_HEADERS.add("\t".join(TSV_FIELDS + CODE_TSV_FIELDS).encode())


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare", help="compare two builds kernel by kernel",
        description="Classify every kernel present in both builds (same target and stable key) as worse "
                    "(more scratch, more spilled registers, or lower occupancy), better, mixed or unchanged, "
                    "list kernels only in one build (added, removed), and end with a summary sentence. Each "
                    "side may be binaries, spillway report JSON files (report --json) or a baseline file (its "
                    "recorded values).")
    parser.add_argument("new", nargs="+", metavar="NEW", help="the new build")
    parser.add_argument("--against", nargs="+", required=True, metavar="OLD", help="the old build")
    parser.add_argument("--all", action="store_true",
                        help="also list unchanged kernels (JSON always lists every compared kernel)")
    parser.add_argument("--isa", action="store_true",
                        help="also compare the kernels' machine code (binaries decoded; report JSON written with "
                             "report --isa): identical code, same figures but changed code, and the scratch bytes, "
                             "scratch in loops and AGPR copies before and after")
    parser.add_argument("--fail-on-worse", action="store_true",
                        help="exit 1 when a kernel got worse (or mixed), or a kernel only in NEW uses scratch")
    add_output_options(parser, FORMATS, github_auto=True,
                       output_help="write the document to FILE (atomically) instead of stdout; the verdict "
                                   "is still printed")
    add_table_options(parser)
    add_read_options(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    from spillway.gate.compare import compare
    from spillway.render.markdown import compare_markdown
    from spillway.gate.reading import read_sources

    fmt = chosen_format(args)
    options = read_options(args)
    outputs = Outputs(args.new + args.against, force=args.force)
    outputs.claim(args.output, "-o")
    with progress_shown(args.new, options):
        new = read_sources(args.new, options, allow_baseline=True, side="NEW")
    with progress_shown(args.against, options):
        old = read_sources(args.against, options, allow_baseline=True, side="OLD")
    comparison = compare(new.usage, old.usage, args.new, args.against, occupancy_model=options.occupancy_model,
                         code=args.isa)
    status = 1 if args.fail_on_worse and comparison.has_worse else 0
    to_file = args.output not in (None, "-")
    if fmt == "json":
        write(args.output, comparison.json_chunks())
    elif fmt == "markdown":
        text = compare_markdown(comparison, args.all, args.limit, args.names)
        write(args.output, markdown_marker("compare") + text)
    elif fmt == "tsv":
        from spillway.render.table import tsv

        from spillway.render.tsv import compare_tsv_rows

        fields = TSV_FIELDS + CODE_TSV_FIELDS if args.isa else TSV_FIELDS
        write(args.output, tsv(fields, compare_tsv_rows(comparison, args.all)))
    elif fmt == "github":
        _github(comparison, args)
    elif fmt == "sarif":
        write(args.output, _sarif(comparison, new, old, args))
    elif fmt == "html":
        from spillway.render.html import compare_page

        write(args.output, compare_page(comparison))
    elif to_file:
        buffer = io.StringIO()
        _print_table(comparison, args, buffer)
        write(args.output, text_marker("compare") + buffer.getvalue())
    if fmt == "table":
        _print_table(comparison, args)
    elif to_file and fmt != "github":
        # The document went to the file: the terminal gets the verdict and the counts only.
        print(comparison.sentence(), flush=True)
    return status


def _github(comparison, args) -> None:
    from spillway.render.github import append_step_summary, compare_annotations, print_annotations
    from spillway.render.markdown import compare_markdown

    level = "error" if args.fail_on_worse else "warning"
    summary = compare_markdown(comparison, args.all, args.limit, args.names)
    append_step_summary(summary)
    if args.output not in (None, "-"):
        write(args.output, markdown_marker("compare") + summary)
    from spillway.paths import STDIN

    # Annotations name the first NEW path that is a file name (standard input is none).
    file = next((p for p in args.new if p != STDIN), "")
    print_annotations(compare_annotations(comparison, file, args.against, args.names, level))
    _print_table(comparison, args)


def _print_table(comparison, args, file=None) -> None:
    from spillway.render.table import print_compare
    from spillway.render.table import console as make_console

    print_compare(comparison, make_console(file), everything=args.all, limit=args.limit, names=args.names)



def _sarif(comparison, new, old, args) -> bytes:
    """Results located at the kernel's line of a baseline file given as a side
    (OLD first), else at that baseline's first line, else at the first NEW path
    (the first side's path that is not standard input).  The baselines' lines
    are those read with the sides (gate.reading): no file is opened again."""
    from spillway.render import sarif
    from spillway.paths import STDIN

    located: dict[tuple[str, str], sarif.Location] = {}
    baselines = []
    for path, data in old.baselines + new.baselines:
        if path == STDIN:               # no file to point at
            continue
        baselines.append(path)
        for kernel, line in sarif.kernel_lines(data).items():
            located.setdefault(kernel, sarif.Location(path, line))
    named = [p for p in args.new + args.against if p != STDIN]
    fallback = sarif.Location(baselines[0] if baselines else named[0] if named else STDIN)
    return sarif.document([sarif.compare_run(comparison, lambda target, key: located.get((target, key), fallback),
                                             sarif.category_for("compare"))])
