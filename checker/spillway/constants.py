"""Names shared by modules that should not import each other (the reader
must not pull in pydantic: import time counts on every CI run)."""

REPORT_SCHEMA = "spillway.report/1"
