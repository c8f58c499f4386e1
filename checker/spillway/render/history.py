"""Text of ``spillway matrix history`` and ``bisect``: per kernel and target, one
row per release in order.  Kernel names come from the binary: each is
cut and made one visible line (render.grid.cell_text, the terminal's sink) once, here."""

from __future__ import annotations

from spillway.matrix.bisect import BisectDocument
from spillway.matrix.history import HistoryDocument
from spillway.matrix.releases import CacheDocument
from spillway.render.grid import cell_text
from spillway.untrusted import visible

CODE_DIGITS = 12


def _grid(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def history_text(document: HistoryDocument) -> str:
    front = document.frontend
    out = [f"front end: {front.cxx} {front.version} (upstream; {front.why}); back ends: AMD LLVM per release; "
           f"occupancy model {document.occupancy_model}"]
    for target, reason in document.dropped_targets.items():
        out.append(f"target {target} dropped: {reason}")
    for column in document.releases:
        if column.status != "built":
            out.append(f"ROCm {column.release}: {column.status}: {column.reason}")
    built = sum(c.builds for c in document.releases)
    out.append(f"{built} back-end build{'s' if built != 1 else ''} made, the others reused")
    if not document.kernels:
        out.append("no kernel read")
    for kernel in document.kernels:
        out.append("")
        out.append(f"{cell_text(kernel.kernel)}  {kernel.target}  ({kernel.unit})")
        rows, previous = [], None
        for column in document.releases:
            figures = kernel.figures.get(column.release)
            if figures is None:
                rows.append([column.release, column.llvm_version, *["-"] * 5, column.status])
                continue
            code = (figures.code_sha256 or "")[:CODE_DIGITS]
            same = previous is not None and figures.code_sha256 == previous
            rows.append([column.release, column.llvm_version, str(figures.vgpr), str(figures.agpr),
                         str(figures.spills), str(figures.scratch), str(figures.waves),
                         "same code" if same else code])
            previous = figures.code_sha256
        out += _grid(["ROCm", "AMD LLVM", "VGPRs", "AGPRs", "spilled", "scratch B", "waves", "code"], rows)
    return "\n".join(out) + "\n"


def bisect_text(document: BisectDocument) -> str:
    out = [f"bisect {cell_text(document.kernel)} ({document.unit}, {document.target}) on {document.metric}: "
           f"{document.releases[0]} good .. {document.releases[-1]} bad, {len(document.releases)} releases; "
           f"front end {document.frontend.cxx} {document.frontend.version}"]
    for number, build in enumerate(document.builds, 1):
        value = "-" if build.value is None else str(build.value)
        how = "built" if build.built else "reused"
        reason = f": {build.reason}" if build.reason else ""
        out.append(f"  {number}. ROCm {build.release} (AMD LLVM {build.llvm_version} {build.commit[:12]}): "
                   f"{document.metric} {value} -> {build.verdict}{reason} ({how})")
    if document.first_bad:
        out.append(f"first bad release: ROCm {document.first_bad} (last good: ROCm {document.last_good})")
    out.append(document.note)
    return "\n".join(out) + "\n"


# -- the page: one chart per kernel ------------------------------------------------------------

CHART_SERIES = (("spills", "spilled registers", "#c0392b"), ("vgpr", "VGPRs", "#2c7fb8"),
                ("agpr", "AGPRs", "#7b3294"), ("scratch", "scratch B", "#e08214"))
_WIDTH, _HEIGHT, _LEFT, _BOTTOM, _TOP = 640, 220, 56, 40, 16


def _chart(releases: list[str], values: dict[str, list[int | None]]) -> str:
    """An SVG line chart: releases in order on x, each series scaled to its own maximum
    (the figures are in the table below it)."""
    from html import escape
    step = (_WIDTH - _LEFT - 16) / max(1, len(releases) - 1)
    plot = _HEIGHT - _BOTTOM - _TOP
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" role="img">',
             f'<line x1="{_LEFT}" y1="{_TOP + plot}" x2="{_WIDTH - 8}" y2="{_TOP + plot}" stroke="#888"/>']
    for index, release in enumerate(releases):
        x = _LEFT + index * step
        parts.append(f'<text x="{x:.1f}" y="{_HEIGHT - 22}" font-size="10" text-anchor="middle">'
                     f'{escape(release)}</text>')
    for metric, label, colour in CHART_SERIES:
        series = values[metric]
        top = max((v for v in series if v is not None), default=0)
        if top <= 0:
            continue
        points = [f"{_LEFT + i * step:.1f},{_TOP + plot - plot * v / top:.1f}" for i, v in enumerate(series)
                  if v is not None]
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(points)}">'
                     f'<title>{escape(label)} (max {top})</title></polyline>')
    legend = " ".join(f'<tspan fill="{colour}">{escape(label)}</tspan>' for _, label, colour in CHART_SERIES)
    parts.append(f'<text x="{_LEFT}" y="{_HEIGHT - 6}" font-size="10">each line scaled to its own maximum: '
                 f'{legend}</text></svg>')
    return "".join(parts)


def history_html(document: HistoryDocument) -> str:
    """A self-contained page: the front end, then per kernel a chart and its table."""
    from html import escape
    releases = [c.release for c in document.releases]
    front = document.frontend
    body = [f"<h1>Kernels over AMD's ROCm releases</h1><p>Front end {escape(front.cxx)} {escape(front.version)} "
            f"(upstream, {escape(front.why)}); optimizer and code generator: AMD LLVM of each release; "
            f"occupancy model {escape(document.occupancy_model)}.</p>"]
    for target, reason in document.dropped_targets.items():
        body.append(f"<p>Target {escape(target)} dropped: {escape(reason)}</p>")
    for column in document.releases:
        if column.status != "built":
            body.append(f"<p>ROCm {escape(column.release)}: {escape(column.status)}: {escape(column.reason)}</p>")
    for kernel in document.kernels:
        values: dict[str, list[int | None]] = {metric: [] for metric, _, _ in CHART_SERIES}
        rows = []
        for column in document.releases:
            figures = kernel.figures.get(column.release)
            for metric in values:
                values[metric].append(None if figures is None else int(getattr(figures, metric)))
            cells = ["-"] * 6 if figures is None else [
                str(figures.vgpr), str(figures.agpr), str(figures.spills), str(figures.scratch), str(figures.waves),
                (figures.code_sha256 or "")[:CODE_DIGITS]]
            rows.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in
                                         [column.release, column.llvm_version, *cells]) + "</tr>")
        body.append(f"<h2>{escape(visible(kernel.kernel))} <small>{escape(kernel.target)} "
                    f"({escape(kernel.unit)})</small></h2>{_chart(releases, values)}"
                    "<table><tr><th>ROCm</th><th>AMD LLVM</th><th>VGPRs</th><th>AGPRs</th><th>spilled</th>"
                    "<th>scratch B</th><th>waves</th><th>code</th></tr>" + "".join(rows) + "</table>")
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>spillway matrix history</title>"
            "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 8px;text-align:right}"
            "td:first-child,th:first-child{text-align:left}</style></head><body>"
            + "".join(body) + "</body></html>\n")


def cache_text(document: CacheDocument, location_set: str = "") -> str:
    """``matrix cache``: the store's location, what it holds (or what was removed), one line an entry."""
    total = sum(e.bytes for e in document.entries)
    lines = [f"{document.store}{location_set} {document.action} {len(document.entries)} entries, "
             f"{total / 1e6:.0f} MB"]
    lines += [f"  {e.kind:9} {e.bytes / 1e6:8.1f} MB  {e.release or '-':7} {e.path.rsplit('/', 1)[-1]}"
              for e in document.entries]
    return "\n".join(lines) + "\n"
