"""Names shared by modules that should not import each other (the reader
must not pull in pydantic: import time counts on every CI run)."""

from typing import Final

REPORT_SCHEMA: Final = "spillway.report/3"
# Report schemas check and compare read: version 2 holds the same records, its isa objects
# (report --isa) without the derived figures version 3 added (nothing reads those yet).
READABLE_REPORT_SCHEMAS: Final = ("spillway.report/2", REPORT_SCHEMA)

# Compiler processes `spillway matrix build` runs at once (one per core here).
MATRIX_DEFAULT_JOBS = 2

# The gate's metric names, in order (gate.metrics.METRICS defines them; the
# command line words its --help from this copy so that building the parser
# does not import the gate, which imports pydantic; a test keeps them equal).
METRIC_NAMES = ("scratch", "spills", "occupancy", "vgprs", "lds", "loop_scratch", "agpr_copies")
DEFAULT_GATE_NAMES = ("scratch",)


def metrics_help() -> str:
    return "comma-separated metrics: " + ", ".join(METRIC_NAMES)
