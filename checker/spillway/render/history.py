"""Text of ``spillway matrix history`` and ``bisect``: per kernel and target, one
row per release in order.  Kernel names come from the binary: shown through
spillway.untrusted.visible once, here."""

from __future__ import annotations

from spillway.matrix.bisect import BisectDocument
from spillway.matrix.history import HistoryDocument
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
        out.append(f"{visible(kernel.kernel)}  {kernel.target}  ({kernel.unit})")
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
    out = [f"bisect {visible(document.kernel)} ({document.unit}, {document.target}) on {document.metric}: "
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
