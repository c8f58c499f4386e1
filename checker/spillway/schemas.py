"""Published JSON schemas of the documents spillway writes, generated from
the pydantic models (the committed copies under docs/schemas/ are checked
against these in the tests)."""

from __future__ import annotations

from typing import Callable

from . import report

SCHEMAS: dict[str, Callable[[], dict]] = {
    "report": report.json_schema,
}


def schema_for(name: str) -> dict:
    return SCHEMAS[name]()
