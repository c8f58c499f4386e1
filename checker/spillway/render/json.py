"""``--format json``: each model's versioned JSON document (spillway.report,
spillway.check, spillway.compare, spillway.code, spillway.matrix-summary,
spillway.matrix-list), written by spillway.json_codec.  The documents
themselves are defined beside their models (gate.check.CheckResult.to_json,
gate.compare.Comparison.json_chunks, report.code_view.code_document,
matrix.summary.summary_json); this module picks the one of a model."""

from __future__ import annotations

from functools import singledispatch
from typing import Iterable

from spillway import json_codec
from spillway.render.models import (BaselineWriteModel, BisectModel, CacheModel, CheckModel, CodeModel, CompareModel,
                                    HistoryModel, MatrixListModel, MatrixPairModel, MatrixSummaryModel, ReportModel,
                                    View)


def dump_json(document) -> bytes | Iterable[bytes]:
    """A document as spillway writes JSON (indented, a newline at the end); a
    report of a ROCm library in pieces, one kernel per line."""
    from spillway.report.reader import KernelTable, json_chunks

    if isinstance(document, dict) and isinstance(document.get("kernels"), KernelTable):
        return json_chunks(document)
    return json_codec.dumps(document, indent=True) + b"\n"


@singledispatch
def document(model, view: View) -> bytes | Iterable[bytes]:
    raise TypeError(f"no JSON document for {type(model).__name__}")


@document.register
def _(model: BaselineWriteModel, view: View):
    from spillway.gate.baseline import render

    return render(model.result.baseline)        # (the baseline's own bytes: deterministic, one key a line)


@document.register
def _(model: ReportModel, view: View):
    if model.pattern:
        return dump_json(dict(model.document, kernels=model.matching))
    return dump_json(model.document)


@document.register
def _(model: CodeModel, view: View):
    from spillway.report.code_view import code_document

    return dump_json(code_document(list(model.kernels)))


@document.register
def _(model: CheckModel, view: View):
    return dump_json(model.result.to_json(model.code))


@document.register(CompareModel)
@document.register(MatrixPairModel)
def _(model, view: View):
    return model.comparison.json_chunks()


@document.register
def _(model: MatrixSummaryModel, view: View):
    from spillway.matrix.summary import summary_json

    return dump_json(summary_json(model.summary))


@document.register
def _(model: MatrixListModel, view: View):
    from spillway import __version__
    from spillway.matrix.documents import MATRIX_LIST_SCHEMA

    available = sum(1 for _, a, _ in model.rows if a.available)
    return dump_json({
        "schema": MATRIX_LIST_SCHEMA, "spillway_version": __version__, "cells_file": model.cells_file,
        "summary": {"cells": len(model.rows), "available": available},
        "cells": [{"name": c.name, "description": c.description, "toolchain": c.toolchain(), "source": c.source,
                   "local": c.local, "cxx": c.cxx, "targets": c.targets, "available": a.available,
                   "reason": a.reason, "compiler": a.version, "baseline": c.baseline, "baseline_exists": present}
                  for c, a, present in model.rows]})


@document.register(HistoryModel)
@document.register(BisectModel)
@document.register(CacheModel)
def _(model, view: View):
    from spillway.json_codec import dumps

    # (pydantic documents of the matrix history commands, as their schemas publish them)
    return dumps(model.document.model_dump(mode="json", by_alias=True), indent=True) + b"\n"
