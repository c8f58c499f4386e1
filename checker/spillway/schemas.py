"""Published JSON schemas of the documents spillway writes, generated from
the pydantic models (the committed copies under docs/schemas/ are checked
against these in the tests).  Entries name "module:function" so that listing
them does not import pydantic."""

from __future__ import annotations

import importlib

SCHEMAS: dict[str, str] = {
    "report": "spillway.report.record:json_schema",
    "baseline": "spillway.gate.baseline:json_schema",
    "check": "spillway.gate.check:json_schema",
    "compare": "spillway.gate.compare:json_schema",
}


def schema_for(name: str) -> dict:
    module, function = SCHEMAS[name].split(":")
    return getattr(importlib.import_module(module), function)()
