"""``--format html``: one self-contained page (no network: its script and style
are spillway's own, read from render/html_assets/ and written inline), the
command's model as gzip-compressed JSON in base64 in a ``<script>`` element
(the page's script inflates it with the browser's DecompressionStream).

This module writes the page and the data of every command's model: report's
records, compare's Comparison, check's result, the matrix's Summary.  The
script draws every chart as inline SVG (hand-written: a chart library would
be the largest part of the file for four kinds of chart).
"""

from __future__ import annotations

import base64
import gzip
from functools import lru_cache, singledispatch
from importlib import resources
from typing import TYPE_CHECKING, Iterable, Mapping, Optional

from spillway import __version__, json_codec
from spillway.untrusted import visible
from spillway.resources.occupancy import DEFAULT_MODEL, curves, next_step_text
from spillway.resources.targets import MODEL_NAMES
from spillway.render.models import (CheckModel, CompareModel, HistoryModel, MatrixPairModel, MatrixSummaryModel,
                                    ReportModel, View)

if TYPE_CHECKING:   # the gate imports pydantic: only when a comparison or a check is drawn
    from spillway.gate.compare import Comparison, KernelDiff
    from spillway.gate.failure_code import FailureCode
    from spillway.gate.kernels import KernelUsage, Resources
    from spillway.matrix.summary import Summary

# The page's second line (after the doctype: a comment before it would put
# browsers in quirks mode); cli.output recognises it as spillway's.
HTML_MARKER = "<!-- spillway {what}: written by spillway; safe to overwrite with spillway -->"
# A page lists at most this many kernels (the JSON keeps them all): the table of
# a ROCm library must draw in well under two seconds and the file stay small.
ROW_CAP = 40_000


@lru_cache(maxsize=None)
def _asset(name: str) -> str:
    return resources.files("spillway.render").joinpath("html_assets").joinpath(name).read_text(encoding="utf-8")


DATA_ELEMENT = '<script type="application/octet-stream" id="spillway-data" data-encoding="gzip+base64">'


def encoded_data(data) -> bytes:
    """The model as the page holds it: JSON, gzip-compressed (no timestamp:
    the same model gives the same file), in base64 (nothing in it can end the
    script element).  librocsparse's report page: 10.5 MB as JSON text, well
    under 1 MB so.  A path that is not UTF-8 is kept as \\udcXX escapes
    (json_codec; the page shows U+FFFD for the byte)."""
    return base64.b64encode(gzip.compress(json_codec.dumps(data), compresslevel=6, mtime=0))


def read_page_data(html: str) -> dict:
    """The model a page written by ``page`` holds (for tests and tools)."""
    start = html.index(DATA_ELEMENT) + len(DATA_ELEMENT)
    end = html.index("</script>", start)
    return json_codec.loads(gzip.decompress(base64.b64decode(html[start:end])))


def _text(value: str) -> str:
    """Text in the page's head: one visible line (spillway.untrusted), HTML-escaped."""
    return visible(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def page(kind: str, title: str, data: dict) -> bytes:
    """The whole file: doctype, marker, style, data, script."""
    data = dict(data, kind=kind, title=title, spillway_version=__version__)
    head = (f"<!DOCTYPE html>\n{HTML_MARKER.format(what=kind)}\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<meta name=\"generator\" content=\"spillway {_text(__version__)}\">\n"
            f"<title>{_text(title)}</title>\n<style>\n{_asset('page.css')}</style>\n</head>\n<body>\n"
            f"<div id=\"app\"><noscript>This page draws its tables with JavaScript.</noscript></div>\n"
            f"{DATA_ELEMENT}")
    tail = f"</script>\n<script>\n{_asset('page.js')}</script>\n</body>\n</html>\n"
    return head.encode() + encoded_data(data) + tail.encode()


# -- occupancy curves ------------------------------------------------------------------

# A kernel that names none runs in waves of this size (HIP's defaults) and at most this many work-items.
def default_wave_size(target: str) -> int:
    return 64 if target.startswith("gfx9") or target.startswith("gfx8") else 32


DEFAULT_WORKGROUP = 1024


class Curves:
    """The occupancy curves a page needs, each computed once, by a short key."""

    def __init__(self, model: str = DEFAULT_MODEL):
        # (--occupancy-model producer picks a model per compiler: the curves show the default's)
        self.model = model if model in MODEL_NAMES else DEFAULT_MODEL
        self.by_key: dict[str, dict] = {}

    def key(self, target: str, wave_size: Optional[int] = None, workgroup: Optional[int] = None,
            wgp_mode: bool = True) -> Optional[str]:
        wave = wave_size or default_wave_size(target)
        size = workgroup or DEFAULT_WORKGROUP
        key = f"{target}|{wave}|{size}|{int(wgp_mode)}"
        if key not in self.by_key:
            try:
                found = curves(target, model=self.model, wavefront_size=wave, max_flat_workgroup_size=size,
                               workgroup_processor_mode=wgp_mode)
            except (KeyError, ValueError):
                found = None
            self.by_key[key] = found        # type: ignore[assignment]  # None: no model (drawn as such)
        return key if self.by_key[key] is not None else None


class Names:
    """Each distinct name once in the page; rows hold its index.

    ``coded`` writes the list sorted and front-coded: entry i is ``[shared,
    suffix]``, the first ``shared`` UTF-16 code units of name i - 1 (as
    JavaScript's ``slice`` counts) followed by ``suffix``.  A ROCm library's
    kernels share most of their template prefixes: 40,000 rocSPARSE names take
    10 MB as they are and about a fifth of that coded."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def __call__(self, name: str) -> int:
        found = self.index.get(name)
        if found is None:
            found = self.index[name] = len(self.index)
        return found

    def listed(self) -> list[str]:
        return list(self.index)

    def coded(self, rows: list[list], column: int) -> list[list]:
        """The page's ``names``; renumbers ``rows[*][column]`` (indexes from
        this object) to the sorted order."""
        ordered = sorted(self.index)
        position = {self.index[name]: at for at, name in enumerate(ordered)}
        for row in rows:
            row[column] = position[row[column]]
        return front_code(ordered)


def front_code(names: list[str]) -> list[list]:
    out: list[list] = []
    previous = b""
    for name in names:
        units = name.encode("utf-16-le")
        shared = 0
        limit = min(len(units), len(previous)) // 2
        while shared < limit and units[2 * shared:2 * shared + 2] == previous[2 * shared:2 * shared + 2]:
            shared += 1
        # never end the shared part between the two halves of a surrogate pair
        if shared and 0xD800 <= int.from_bytes(units[2 * shared - 2:2 * shared], "little") <= 0xDBFF:
            shared -= 1
        out.append([shared, units[2 * shared:].decode("utf-16-le")])
        previous = units
    return out


def front_decode(coded: list[list]) -> list[str]:
    """The names ``front_code`` coded (what the page's script does)."""
    names: list[str] = []
    previous = b""
    for shared, suffix in coded:
        units = previous[:2 * shared] + suffix.encode("utf-16-le")
        names.append(units.decode("utf-16-le"))
        previous = units
    return names


# -- histograms ---------------------------------------------------------------------

SCRATCH_BINS = ((0, 0), (1, 64), (65, 256), (257, 1024), (1025, 4096), (4097, 16384), (16385, None))
VGPR_BIN = 32


def histograms(kernels: Iterable[dict]) -> dict:
    """Waves per SIMD, scratch bytes per lane and VGPRs of every kernel, as
    ``{name: [[label, count], ...]}``."""
    waves: dict[str, int] = {}
    scratch = [0] * len(SCRATCH_BINS)
    vgprs: dict[int, int] = {}
    for k in kernels:
        w = k["occupancy"]
        label = "?" if w is None else str(w)
        waves[label] = waves.get(label, 0) + 1
        s = k["private_segment_fixed_size"]
        for index, (low, high) in enumerate(SCRATCH_BINS):
            if s >= low and (high is None or s <= high):
                scratch[index] += 1
                break
        v = k["vgpr_count"]
        bucket = 0 if v == 0 else (v - 1) // VGPR_BIN
        vgprs[bucket] = vgprs.get(bucket, 0) + 1
    wave_labels = sorted((w for w in waves if w != "?"), key=int) + (["?"] if "?" in waves else [])
    return {
        "waves per SIMD": [[w, waves[w]] for w in wave_labels],
        "scratch B/lane": [[_range(low, high), count] for (low, high), count in zip(SCRATCH_BINS, scratch)],
        "VGPRs": [[f"{b * VGPR_BIN + 1}-{(b + 1) * VGPR_BIN}" if b or vgprs.get(0) is None else f"0-{VGPR_BIN}",
                   vgprs[b]] for b in sorted(vgprs)],
    }


def _range(low: int, high: Optional[int]) -> str:
    if high is None:
        return f">{low - 1}"
    return str(low) if low == high else f"{low}-{high}"


# -- the report page -------------------------------------------------------------------

REPORT_COLUMNS = ("kernel", "target", "VGPRs", "AGPRs", "SGPRs", "VGPR spills", "SGPR spills", "scratch B/lane",
                  "dynamic stack", "cause", "LDS B", "waves/SIMD", "bound", "next step", "file", "curve", "next",
                  "isa")


def report_page(document: dict, kernels: list[dict], *, everything: bool, pattern: Optional[str],
                model: str = DEFAULT_MODEL) -> bytes:
    """``report --format html``: histograms over every kernel read, and the table
    of the kernels the table format lists (those using scratch, or --all)."""
    every = document["kernels"]
    shown = kernels[:ROW_CAP]
    table = Curves(model)
    names, files = Names(), Names()
    rows = []
    for k in shown:
        curve = table.key(k["target"], k.get("wavefront_size"), k.get("max_flat_workgroup_size"),
                          k.get("workgroup_processor_mode") is not False)
        rows.append([names(k["name"]), k["target"], k["vgpr_count"], k["agpr_count"], k["sgpr_count"],
                     k["vgpr_spill_count"], k["sgpr_spill_count"], k["private_segment_fixed_size"],
                     bool(k["uses_dynamic_stack"]), k["scratch_cause"], k["group_segment_fixed_size"],
                     k["occupancy"], k["occupancy_limit"] if k["occupancy"] is not None else "",
                     next_step_text(k.get("occupancy_next")), files(k["file"]), curve, k.get("occupancy_next"),
                     k.get("isa")])
    what = "kernels" if everything else "kernels using scratch"
    notes = []
    if pattern:
        notes.append(f"kernels matching {pattern!r}")
    if len(kernels) > len(shown):
        notes.append(f"the first {len(shown)} of {len(kernels)} {what} in the table (the JSON output keeps every "
                     f"kernel)")
    data = {
        "counts": {"read": len(every), "listed": len(kernels), "in_page": len(shown)},
        "listed_what": what,
        "inputs": [f["path"] for f in document["files"]] if document.get("files") else [],
        "histograms": histograms(every),
        "columns": REPORT_COLUMNS,
        "rows": rows, "names": names.coded(rows, REPORT_COLUMNS.index("kernel")),
        "name_at": REPORT_COLUMNS.index("kernel"),
        "files": files.listed(),          # (the file column: an index into this list)
        "curves": {key: value for key, value in table.by_key.items() if value is not None},
        "notes": notes,
    }
    return page("report", "spillway report", data)

# -- compare and check pages (gate.compare's Comparison, gate.check's result) ----------------------------
FIGURES = ("vgprs", "agprs", "sgprs", "vgpr_spills", "sgpr_spills", "spills", "scratch", "lds", "occupancy")
# ("name": an index into the page's list of names: a library's kernels share few long names)
ROW_FIELDS = ("status", "target", "name",
              *(f"{side}_{f}" for f in FIGURES for side in ("old", "new")),
              "next_text", "next", "curve", "old_isa", "new_isa")
TOTALLED = (("scratch", "scratch bytes per lane"), ("spills", "spilled registers"), ("vgprs", "VGPRs"))


def _figure(resources: Optional[Resources], name: str):
    if resources is None:
        return None
    return resources.spills if name == "spills" else getattr(resources, name)


def _code(code) -> Optional[dict]:
    """A side's code evidence (compare --isa: gate.kernels.CodeFigures) for the kernel's detail."""
    if code is None:
        return None
    # The names of compare --isa --json's code objects; with --pressure, the VGPR curve the detail draws, each
    # build's scratch accesses and the loop holding its peak.
    found = {"code_sha256": ", ".join(code.code_sha256), "scratch_bytes": code.scratch_bytes,
             "scratch_in_loops": code.scratch_in_loops, "agpr_copies": code.agpr_copies, "complete": code.complete}
    peak = code.pressure
    if peak is not None and peak.curve:
        found["pressure"] = {"vgprs": peak.vgprs, "offset": peak.vgpr_offset, "status": peak.status,
                             "vgpr_curve": list(peak.curve), "code_bytes": peak.code_bytes,
                             "scratch_offsets": list(peak.scratch_offsets),
                             "loop": None if peak.loop is None else peak.loop.as_dict()}
    return found


def _row(status: str, target: str, name: int, old: Optional[Resources], new: Optional[Resources],
         step: Optional[dict], curve: Optional[str], old_code=None, new_code=None) -> list:
    row: list = [status, target, name]
    for f in FIGURES:
        row += [_figure(old, f), _figure(new, f)]
    return row + [next_step_text(step), step, curve, _code(old_code), _code(new_code)]


def totals_data(comparison: Comparison) -> dict:
    """The comparison's totals (gate.totals, the one definition every format
    shows) as the page draws them: per metric the matched pairs' sums before and
    after and each side's sums; the kernels losing and gaining waves."""
    found = comparison.totals()
    metrics = []
    for name, label in TOTALLED:
        matched = found.metric(name)
        metrics.append({"metric": name, "label": label, "old": matched.old, "new": matched.new,
                        "kernels": matched.kernels, "added": getattr(found.added, name),
                        "removed": getattr(found.removed, name)})
    return {"matched": found.matched, "metrics": metrics, "losing_waves": found.losing_waves,
            "gaining_waves": found.gaining_waves}


def top_data(comparison: Comparison) -> dict:
    """Per metric, the largest regressions and improvements (gate.totals):
    ``[name, target, old, new]``."""
    from spillway.gate.totals import FIGURES as FIGURE_OF

    return {ranked.metric: {side: [[d.name, d.target, FIGURE_OF[ranked.metric](d.old), FIGURE_OF[ranked.metric](d.new)]
                                   for d in pairs]
                            for side, pairs in (("worse", ranked.regressions), ("better", ranked.improvements))}
            for ranked in comparison.totals().top}


def compare_page(comparison: Comparison, *, title: str = "spillway compare", extra: Optional[dict] = None) -> bytes:
    from spillway.gate.compare import uses_scratch

    curves = Curves(comparison.occupancy_model)
    changed: list[KernelDiff] = [k for k in comparison.kernels if k.old != k.new]
    added = [u for u in comparison.only_new if uses_scratch(u.resources)]
    removed = [u for u in comparison.only_old if uses_scratch(u.resources)]
    names = Names()
    rows = []
    for k in changed[:ROW_CAP]:
        rows.append(_row(k.status, k.target, names(k.name), k.old, k.new, k.occupancy_next, curves.key(k.target),
                         k.old_code, k.new_code))
    room = max(ROW_CAP - len(rows), 0)
    over_zero = [k.usage for k in comparison.not_in_baseline if k.worse]
    one_side: list[tuple[str, KernelUsage]] = ([("added", u) for u in added] + [("removed", u) for u in removed]
                                               + [("not in the baseline", u) for u in over_zero])
    for status, u in one_side[:room]:
        old, new = (u.resources, None) if status == "removed" else (None, u.resources)
        rows.append(_row(status, u.target, names(u.name), old, new, u.occupancy_next if status != "removed" else None,
                         curves.key(u.target)))
    unchanged = len(comparison.kernels) - len(changed)
    notes = [f"The table lists the {len(changed)} kernels on both sides whose figures changed (not the {unchanged} "
             f"unchanged ones), and the added and removed kernels that use scratch or spill ({len(added)} of "
             f"{len(comparison.only_new)} added, {len(removed)} of {len(comparison.only_old)} removed, "
             f"{len(over_zero)} of {len(comparison.not_in_baseline)} not in the baseline); totals and "
             f"counts are over every kernel. The JSON output (--format json) lists every kernel."]
    if len(changed) + len(one_side) > len(rows):
        notes.append(f"This page holds the first {len(rows)} of those {len(changed) + len(one_side)} rows.")
    counts = {{"only_new": "added", "only_old": "removed"}.get(k, k): v for k, v in comparison.count().items()}
    data = {
        "new": comparison.new_sources, "old": comparison.old_sources,
        "occupancy_model": comparison.occupancy_model,
        "summary": counts, "sentence": comparison.sentence(),
        "totals": totals_data(comparison), "top": top_data(comparison),
        "figures": ROW_FIELDS, "rows": rows,
        "names": names.coded(rows, ROW_FIELDS.index("name")), "name_at": ROW_FIELDS.index("name"),
        "curves": {key: value for key, value in curves.by_key.items() if value is not None},
        "notes": notes,
    }
    return page("compare", title, dict(data, **(extra or {})))


# -- check -------------------------------------------------------------------------------

# code: a failure's machine code in the table's words (gate.failure_code.FailureCode.text),
# code_figures: its figures (FailureCode.as_dict) for the detail panel; null where none was read.
CHECK_FIELDS = ("kind", "name", "target", "metric", "recorded", "now", "message", "failing", "curve", "code",
                "code_figures")


def check_page(result, sources: list[str], accept: str = "", accept_removed: str = "",
               code: Optional[Mapping[tuple[str, str], FailureCode]] = None) -> bytes:
    """``check --format html``: the verdict, the counts, and the findings over
    their allowance (each with its kernel's machine code, ``code`` by (target,
    key)), the kernels not in the baseline and the kernels and targets no
    longer built (kernels within their allowance are counted, not listed);
    ``accept``, ``accept_removed``: the commands that accept them."""
    curves = Curves(result.occupancy_model)
    names = Names()
    rows: list[list] = []
    for f in result.failures:
        figures = code.get((f.target, f.key)) if code else None
        rows.append(["over" if not f.new_kernel else "new, over", names(f.name), f.target, f.metric, f.allowed,
                     f.actual, f.message(), True, curves.key(f.target),
                     None if figures is None else figures.text(prefix=""),
                     None if figures is None else figures.as_dict()])
    for target, _key, name in result.new_kernels:
        rows.append(["not in baseline", names(name), target, "", None, None, "kernel not in the baseline", False,
                     curves.key(target), None, None])
    for removed in result.removed_targets:
        rows.append(["target no longer built", names(""), removed.target, "", None, None, removed.line(), True,
                     curves.key(removed.target), None, None])
    for target, _key, name in result.vanished:
        rows.append(["no longer built", names(name), target, "", None, None, "baseline kernel no longer built", True,
                     curves.key(target), None, None])
    counts = result.counts()
    flat = {k: v for k, v in counts.items() if not isinstance(v, dict)}
    flat.update({f"over: {metric}": n for metric, n in counts["by_metric"].items()})
    data = {
        "sources": sources, "baseline": result.baseline_path, "gate": list(result.gate),
        "occupancy_model": result.occupancy_model,
        "verdict": "pass" if result.passed else "fail", "sentence": result.summary(), "counts": flat,
        "figures": CHECK_FIELDS, "rows": rows[:ROW_CAP], "names": names.coded(rows, CHECK_FIELDS.index("name")),
        "name_at": CHECK_FIELDS.index("name"),
        "curves": {key: value for key, value in curves.by_key.items() if value is not None},
        "notes": ["Kernels within their allowance are counted, not listed; the JSON output lists every failure."
                  + (f" Accept these figures with: {accept}" if accept else "")
                  + (f" Accept the removals with: {accept_removed}" if accept_removed else "")]
                 + [f"Note: {note.line()}" for note in result.fewer_kernels],
    }
    return page("check", "spillway check", data)

# -- the matrix's page (matrix.summary's Summary: kernels x cells, each cell's verdict on a run) ---------
METRICS = ("vgprs", "agprs", "sgprs", "spills", "scratch", "lds", "occupancy")


def _figures(usage) -> Optional[list]:
    if usage is None:
        return None
    r = usage.resources
    return [r.vgprs, r.agprs, r.sgprs, r.spills, r.scratch, r.lds, r.occupancy]


def summary_page(summary: Summary, verdicts: Optional[list[dict]] = None, title: str = "spillway matrix") -> bytes:
    """``verdicts``: ``[{"cell", "verdict", "reason"}]`` of a run, in order."""
    from spillway.matrix.summary import target_group

    curves = Curves(summary.occupancy_model)
    processors = sorted({p for built in summary.targets.values() for p in built})
    group_curves: dict[str, Optional[str]] = {}
    rows = []
    for row in summary.rows:
        group, key, name = row
        if group not in group_curves:
            # The group's curve: its first processor built (gfx11 is one row for gfx1100 and gfx1151).
            target = next((p for p in processors if target_group(p) == group), group)
            group_curves[group] = curves.key(target)
        found = [summary.usage[c.name].get((group, key)) for c in summary.cells]
        steps = [None if u is None else {"text": next_step_text(u.occupancy_next), "next": u.occupancy_next}
                 for u in found]
        isa = [getattr(u, "isa", None) for u in found]
        rows.append([group, key, name, summary.differs(row), [_figures(u) for u in found], steps,
                     isa if any(isa) else None])
    differing = sum(1 for r in rows if r[3])
    data = {
        "occupancy_model": summary.occupancy_model,
        "cells": [{"name": c.name, "toolchain": c.toolchain(), "targets": summary.targets.get(c.name, []),
                   "kernels": len(summary.usage[c.name])} for c in summary.cells],
        "metrics": METRICS,
        "rows": rows,
        "group_curves": group_curves,
        "curves": {key: value for key, value in curves.by_key.items() if value is not None},
        "verdicts": verdicts or [],
        "notes": [f"{len(rows)} kernels (name and target group; gfx11 parts are one row), {differing} where the "
                  f"cells' VGPRs, spills, scratch or waves differ. A cell is coloured against the reference cell: "
                  f"red worse, green better, grey not built there. Click a kernel for its figures per cell and "
                  f"its target's occupancy curves (work-groups of 1024 work-items and HIP's default wave size: "
                  f"the cells' records keep no launch bounds)."],
    }
    return page("matrix", title, data)


# -- each model's page (render.emit: --format html) ------------------------------------------------------

@singledispatch
def document(model, view: View) -> bytes:
    raise TypeError(f"no page for {type(model).__name__}")


@document.register
def _(model: ReportModel, view: View) -> bytes:
    return report_page(model.document, model.kernels, everything=view.everything, pattern=model.pattern,
                       model=model.occupancy_model)


@document.register
def _(model: CheckModel, view: View) -> bytes:
    result, commands = model.result, model.commands
    return check_page(result, list(commands.paths), commands.accept_all(result)[0] if result.failures else "",
                      commands.removals().every(result)[0] if result.vanished or result.removed_targets else "",
                      model.code)


@document.register
def _(model: CompareModel, view: View) -> bytes:
    return compare_page(model.comparison)


@document.register
def _(model: MatrixPairModel, view: View) -> bytes:
    return compare_page(model.comparison, title=f"spillway matrix compare {model.old.name} {model.new.name}")


@document.register
def _(model: MatrixSummaryModel, view: View) -> bytes:
    return summary_page(model.summary, list(model.verdicts) if model.verdicts is not None else None)


@document.register
def _(model: HistoryModel, view: View) -> bytes:
    from spillway.render.history import history_html

    return history_html(model.document).encode()
