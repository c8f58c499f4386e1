"""The words and figures the renderings of a check and of a comparison
share (Markdown, tables, GitHub annotations, TSV): a finding's allowance and
actual figure, a diff's ``old -> new`` cells, a kernel's next step."""

from __future__ import annotations

from typing import Callable, Optional

from spillway.gate.check import Finding
from spillway.gate.code_change import OriginChange, PeakGroup, PeakLoop, Source, grew_most
from spillway.gate.compare import KernelDiff
from spillway.gate.kernels import Resources
from spillway.resources.occupancy import next_step_text


def allowed_text(finding: Finding) -> str:
    if finding.allowed is None:
        return "-"
    return f"≥ {finding.allowed}" if finding.metric == "occupancy" else str(finding.allowed)


def actual_text(finding: Finding) -> str:
    text = "?" if finding.actual is None else str(finding.actual)
    return text + ("+dyn" if finding.dynamic_stack else "")


def _arrow(old, new, arrow: str) -> str:
    old_text = "?" if old is None else str(old)
    new_text = "?" if new is None else str(new)
    return new_text if old == new else f"{old_text}{arrow}{new_text}"


def scratch_text(r: Resources) -> str:
    return f"{r.scratch}+dyn" if r.dynamic_stack else str(r.scratch)


def spilled_text(r: Resources) -> str:
    return f"{r.vgpr_spills} (+{r.sgpr_spills} SGPR)" if r.sgpr_spills else str(r.vgpr_spills)


def cells(diff: KernelDiff, arrow: str = " -> ") -> tuple[str, str, str, str]:
    """VGPRs, spilled VGPRs, scratch, occupancy: ``old -> new`` where they differ."""
    old, new = diff.old, diff.new
    return (_arrow(old.vgprs, new.vgprs, arrow), _arrow(spilled_text(old), spilled_text(new), arrow),
            _arrow(scratch_text(old), scratch_text(new), arrow), _arrow(old.occupancy, new.occupancy, arrow))


_FIGURES = {"vgpr": ("VGPRs", lambda r: r.vgprs, ""), "agpr": ("AGPRs", lambda r: r.agprs, ""),
            "sgpr": ("SGPRs", lambda r: r.sgprs, ""), "lds": ("LDS", lambda r: r.lds, " B")}


def next_step(new: Resources, step: Optional[dict], old: Optional[Resources] = None, arrow: str = " -> ") -> str:
    """The next step of a kernel as compare shows it: each limiting resource's
    figure (``old -> new`` where it changed), the waves, and what the limits
    must come down to for one more wave, from the new side's ``occupancy_next``:
    "VGPRs 104 -> 112, 6 waves; 96 or fewer for 7".  "" when there is none (at
    the cap, nothing in the binary raises it, or the side is a baseline, which
    keeps no wave size or work-group bound to compute it from)."""
    if not step or not step.get("needs") or new.occupancy is None:
        return ""
    figures = []
    for need in step["needs"]:
        resource = need["resource"]
        if resource not in _FIGURES:                   # workgroup: the bound is not among the figures
            figures.append("work-group size")
            continue
        label, value, unit = _FIGURES[resource]
        shown = str(value(new)) if old is None else _arrow(value(old), value(new), arrow)
        figures.append(f"{label} {shown}{unit}")
    waves = f"{new.occupancy} wave{'' if new.occupancy == 1 else 's'}"
    needs = step["needs"]
    if len(needs) == 1 and needs[0]["resource"] in ("vgpr", "agpr", "sgpr"):
        wanted = f"{needs[0]['at_most']} or fewer for {step['waves']}"    # the unit was just named
    else:
        wanted = next_step_text(step)
    return f"{', '.join(figures)}, {waves}; {wanted}"


def code_text(diff: KernelDiff, arrow: str = " -> ") -> str:
    """What a kernel's machine code did (compare --isa): "identical code", or
    the verdict, what moved, and the code's figures that changed, ``old ->
    new``: "code changed (spills moved into a loop): scratch B 128 -> 160, in
    loops 0 -> 32"; a side decoded only in part is marked "(partly decoded)"."""
    verdict = diff.code_verdict
    old, new = diff.old_code, diff.new_code
    if old is None or new is None or verdict in ("identical code", "code not read"):
        return verdict
    moved = [f"{label} {_arrow(before, after, arrow)}" for label, before, after in (
        ("scratch B", old.scratch_bytes, new.scratch_bytes), ("in loops", old.scratch_in_loops, new.scratch_in_loops),
        ("AGPR copies", old.agpr_copies, new.agpr_copies)) if before != after]
    notes = diff.code_notes() + ([] if old.complete and new.complete else ["partly decoded"])
    return verdict + (f" ({'; '.join(notes)})" if notes else "") + (": " + ", ".join(moved) if moved else "")


def code_detail(diff: KernelDiff, arrow: str = " -> ", lines_shown: int = 3) -> str:
    """Beyond the figures (compare --isa, issue 32), when the code changed:
    what changed in its instruction mix and which source lines gained or
    lost scratch bytes per lane in loops: "arithmetic identical, only spill
    traffic changed (scratch 12 -> 40); lines in loops: kernels.cpp:90 0 ->
    12, kernels.cpp:95 4 -> 8 B/lane".  "" when there is nothing to add
    (identical code, no mix or lines read on a side)."""
    if diff.code_verdict in ("identical code", "code not read"):
        return ""
    parts = []
    mix = diff.mix_change()
    if mix is not None and mix.changed:
        parts.append(mix.verdict + " (" + ", ".join(f"{name} {_arrow(old, new, arrow)}"
                                                    for name, old, new in mix.changed) + ")")
    lines = diff.lines_change()
    if lines is not None and (lines.gained or lines.lost):
        changes = [*lines.gained, *lines.lost]
        more = len(changes) - lines_shown + lines.more_gained + lines.more_lost
        listed = ", ".join(f"{c.file or '(no line)'}:{c.line} {_arrow(c.old, c.new, arrow)}"
                           for c in changes[:lines_shown])
        parts.append(f"lines in loops: {listed} B/lane" + (f" (+{more} more lines)" if more > 0 else ""))
    return "; ".join(parts)


def _where(source: Optional[Source], offset: Optional[int], quote: Callable[[str], str]) -> str:
    """``kernels.cpp:77`` (the file quoted: it comes from the binary), or the offset without a line."""
    if source is None:
        return "no instruction" if offset is None else f"+{offset:#x}"
    return quote(f"{source[0]}:{source[1]}") + (" (inferred)" if source[3] else "")


def _group_text(group: PeakGroup, quote: Callable[[str], str]) -> str:
    """``32 VGPRs defined by v_mfma_f32_32x32x8f16 at gemm.hip:72`` (and how many other definitions reach it)."""
    sites = [f"{quote(mnemonic)} at {_where(source, offset, quote)}"
             for mnemonic, offset, source in zip(group.defined_by, group.defined_at, group.defined_source)]
    registers = f"{group.count} VGPR" + ("" if group.count == 1 else "s")
    if not sites:
        return f"{registers} set at the entry"
    others = len(sites) - 1 + group.from_entry
    return f"{registers} defined by {sites[0]}" + (f" (+{others} more definitions)" if others else "")


def _loop_text(loop: PeakLoop, quote: Callable[[str], str]) -> str:
    """``the loop at gemm.hip:88`` (its head's line), or by its offsets without a line."""
    if loop.head is None:
        return f"the loop +{loop.start:#x}..+{loop.end:#x}"
    return f"the loop at {_where(loop.head, loop.start, quote)}"


def _origin_text(change: OriginChange, quote: Callable[[str], str]) -> str:
    """``+32 from ds_read_b128 at gemm.hip:72``."""
    where = "" if change.source is None else f" at {_where(change.source, None, quote)}"
    return f"{change.change:+d} from {quote(change.defined_by)}{where}"


def peak_text(diff: KernelDiff, quote: Callable[[str], str], arrow: str = " -> ") -> str:
    """Where a kernel's VGPR peak moved (compare --pressure, issue 41 item 5):
    "peak 232 -> 256 VGPRs (+24) at gemm.hip:90 (was gemm.hip:80), inside
    the loop at gemm.hip:88; +32 from ds_read_b128 at gemm.hip:72": the
    innermost loop holding the new peak (by its head's line), and the
    origin (mnemonic and line) whose registers at the peak grew most; when
    none grew, the largest group at the new peak.  "" when the peaks are
    equal or a side has none.  ``quote`` makes the binary's strings (files,
    mnemonics) safe for the sink."""
    shift = diff.peak_shift()
    if shift is None or shift.vgpr_change == 0:
        return ""
    old, new = shift.old, shift.new
    text = (f"peak {old.vgprs}{arrow}{new.vgprs} VGPRs ({shift.vgpr_change:+d}) at "
            f"{_where(new.source, new.vgpr_offset, quote)} (was {_where(old.source, old.vgpr_offset, quote)})")
    if new.loop is not None:
        text += f", inside {_loop_text(new.loop, quote)}"
    if old.agprs != new.agprs:
        text += f", AGPRs {old.agprs}{arrow}{new.agprs}"
    if old.status != "complete" or new.status != "complete":
        text += " (partly read)"
    most = grew_most(shift.origin_changes())
    if most is not None:
        text += f"; {_origin_text(most, quote)}"
    elif new.group is not None:
        text += f"; largest group at the new peak: {_group_text(new.group, quote)}"
    return text


def diff_next_step(diff: KernelDiff, arrow: str = " -> ") -> str:
    return next_step(diff.new, diff.occupancy_next, diff.old, arrow)
