"""Published JSON schemas of the documents spillway writes, generated from
the pydantic models (the committed copies under docs/schemas/ are checked
against these in the tests).  Entries name "module:function" so that listing
them does not import pydantic."""

from __future__ import annotations

import importlib

SCHEMAS: dict[str, str] = {
    "report": "spillway.report.record:json_schema",
    "code": "spillway.report.code_schema:json_schema",
    "baseline": "spillway.gate.baseline:json_schema",
    "check": "spillway.gate.check_schema:json_schema",
    "compare": "spillway.gate.compare_schema:json_schema",
    "matrix-list": "spillway.matrix.documents:list_json_schema",
    "matrix-summary": "spillway.matrix.documents:summary_json_schema",
    "history": "spillway.matrix.history:history_json_schema",
    "bisect": "spillway.matrix.bisect:bisect_json_schema",
}

# What each document is, for `spillway schema` without a name.
DESCRIPTIONS: dict[str, str] = {
    "report": "spillway report --json: files read and every kernel record",
    "code": "spillway code --json: named kernels' loops, live registers and scratch, AGPR-copy, matrix and call "
            "instructions (every instruction with --all-instructions)",
    "baseline": "spillway baseline write: per-kernel allowances of one toolchain",
    "check": "spillway check --json: the verdict against a baseline",
    "compare": "spillway compare --json: two builds kernel by kernel",
    "matrix-list": "spillway matrix list --json: cells and their toolchains",
    "matrix-summary": "spillway matrix compare --json (no cell pair): every built cell side by side",
    "history": "spillway matrix history --json: kernels' figures per ROCm release (AMD's LLVM)",
    "bisect": "spillway matrix bisect --json: the builds a bisect over ROCm releases made and its result",
}


def schema_for(name: str) -> dict:
    module, function = SCHEMAS[name].split(":")
    return getattr(importlib.import_module(module), function)()


def published_name(name: str) -> str:
    """File name under docs/schemas/: ``check-2.json`` (from the schema's $id)."""
    return schema_for(name)["$id"].rsplit("/", 1)[1]
