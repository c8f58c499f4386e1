"""Names shared by modules that should not import each other (the reader
must not pull in pydantic: import time counts on every CI run)."""

from typing import Final

REPORT_SCHEMA: Final = "spillway.report/6"
# Report schemas check and compare read: versions 2 and 3 hold the same records, their isa objects
# (report --isa) without the derived figures version 3 added, and without the instruction mix and
# source lines of version 4 (compare --isa then says the mix and lines were not read); version 4 holds
# version 5's records without the live registers report --pressure adds; version 5's live registers lack
# version 6's loop at the VGPR peak and scratch access offsets (compare says no loop for them).
READABLE_REPORT_SCHEMAS: Final = ("spillway.report/2", "spillway.report/3", "spillway.report/4", "spillway.report/5",
                                  REPORT_SCHEMA)

# The instruction-mix classes (spillway.isa.mix states their rules), in the order records list them:
# here so that the gate reads records' mixes without importing the decoder.
MIX_CLASSES: Final = ("valu", "salu", "vmem", "smem", "lds", "matrix", "scratch", "agpr_copy", "branch",
                      "waitcnt", "other")

# What a source line's ``inferred`` flag means (isa.source_lines' rule), in the words every schema gives it.
INFERRED_LINE: Final = ("the row said line 0 (code LLVM gives no line: often spill code, a loop's head): the line "
                        "of the nearest preceding instruction of the same basic block, or with none the first row "
                        "with a line after it in the block")

# The most scratch access offsets report --pressure's isa.pressure.scratch_offsets lists (a kernel with more
# lists this many, evenly spread over them; isa.scratch_loads + scratch_stores count them all): the page marks
# each on the VGPR curve, and a report of a library's kernels stays small.
SCRATCH_OFFSETS: Final = 1024

# Compiler processes `spillway matrix build` runs at once (one per core here).
MATRIX_DEFAULT_JOBS = 2

# The gate's metric names, in order (gate.metrics.METRICS defines them; the
# command line words its --help from this copy so that building the parser
# does not import the gate, which imports pydantic; a test keeps them equal).
METRIC_NAMES = ("scratch", "spills", "occupancy", "vgprs", "lds", "loop_scratch", "agpr_copies")
DEFAULT_GATE_NAMES = ("scratch",)


def metrics_help() -> str:
    return "comma-separated metrics: " + ", ".join(METRIC_NAMES)
