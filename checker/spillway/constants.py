"""Names shared by modules that should not import each other (the reader
must not pull in pydantic: import time counts on every CI run)."""

REPORT_SCHEMA = "spillway.report/1"

# Compiler processes `spillway matrix build` runs at once (one per core here).
MATRIX_DEFAULT_JOBS = 2
