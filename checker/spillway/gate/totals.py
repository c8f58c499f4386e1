"""Whole-build totals of a comparison: what a compiler change did to all the
kernels at once, before the kernel-by-kernel rows.

- over the *matched* kernels (target and key on both sides): each metric's
  sum before and after (scratch bytes per lane, spilled registers = VGPR +
  SGPR spills, VGPRs), counted over the pairs whose figure is known on both
  sides, and how many kernels lose or gain waves;
- per side for the kernels on one side only (added: only in NEW; removed:
  only in OLD; not in the baseline: kernels of NEW a default baseline on the
  OLD side does not record): their count and sums.  Sums over different kernel sets are
  never put side by side: the matched totals compare like with like;
- the largest regressions and improvements per metric among the matched
  kernels (``TOP`` each, largest change first, then name and target).

Dynamic stacks are counted apart (a size the metadata does not state).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Protocol, Sequence

from spillway.gate.kernels import KernelUsage, Resources


class Pair(Protocol):
    """A kernel on both sides (gate.compare.Pair, which imports this module)."""
    target: str
    key: str
    name: str
    old: Resources
    new: Resources

TOP = 10
# (name, figure, a larger figure is worse)
_METRICS: tuple[tuple[str, Callable[[Resources], Optional[int]], bool], ...] = (
    ("scratch", lambda r: r.scratch, True),
    ("spills", lambda r: r.spills, True),
    ("vgprs", lambda r: r.vgprs, True),
    ("occupancy", lambda r: r.occupancy, False),
)
METRIC_NAMES = tuple(name for name, _, _ in _METRICS)
FIGURES = {name: figure for name, figure, _ in _METRICS}
# What each metric's figure is, for the renderings.
METRIC_LABELS = {"scratch": "scratch (B/lane)", "spills": "spilled registers", "vgprs": "VGPRs",
                 "occupancy": "waves per SIMD"}


@dataclass(frozen=True)
class MetricTotal:
    metric: str
    kernels: int          # matched kernels whose figure is known on both sides
    old: int
    new: int

    @property
    def change(self) -> int:
        return self.new - self.old


@dataclass(frozen=True)
class SideTotal:
    """Kernels on one side only."""
    kernels: int
    scratch: int
    spills: int
    vgprs: int
    using_scratch: int    # with scratch, spills or a dynamic stack
    dynamic_stack: int


@dataclass(frozen=True)
class Ranked:
    metric: str
    regressions: tuple[Pair, ...]
    improvements: tuple[Pair, ...]


@dataclass(frozen=True)
class Totals:
    matched: int
    metrics: tuple[MetricTotal, ...]      # scratch, spills, vgprs, occupancy (the sum of waves)
    losing_waves: int
    gaining_waves: int
    dynamic_stack_old: int
    dynamic_stack_new: int
    added: SideTotal
    removed: SideTotal
    top: tuple[Ranked, ...]
    not_in_baseline: Optional[SideTotal] = None

    def metric(self, name: str) -> MetricTotal:
        return next(m for m in self.metrics if m.metric == name)

    def to_json(self) -> dict:
        def diff_json(diff: Pair, figure) -> dict:
            return {"target": diff.target, "key": diff.key, "name": diff.name, "old": figure(diff.old),
                    "new": figure(diff.new)}

        figures = FIGURES
        return {
            "matched": {
                "kernels": self.matched,
                **{m.metric: {"kernels": m.kernels, "old": m.old, "new": m.new} for m in self.metrics},
                "losing_waves": self.losing_waves, "gaining_waves": self.gaining_waves,
                "dynamic_stack": {"old": self.dynamic_stack_old, "new": self.dynamic_stack_new},
            },
            "added": _side_json(self.added),
            "removed": _side_json(self.removed),
            "not_in_baseline": _side_json(self.not_in_baseline or _side(())),
            "top": {r.metric: {"regressions": [diff_json(d, figures[r.metric]) for d in r.regressions],
                               "improvements": [diff_json(d, figures[r.metric]) for d in r.improvements]}
                    for r in self.top},
        }


def _side_json(side: SideTotal) -> dict:
    return {"kernels": side.kernels, "scratch": side.scratch, "spills": side.spills, "vgprs": side.vgprs,
            "using_scratch": side.using_scratch, "dynamic_stack": side.dynamic_stack}


def _side(usages: Sequence[KernelUsage]) -> SideTotal:
    resources = [u.resources for u in usages]
    return SideTotal(kernels=len(resources), scratch=sum(r.scratch for r in resources),
                     spills=sum(r.spills for r in resources), vgprs=sum(r.vgprs or 0 for r in resources),
                     using_scratch=sum(1 for r in resources if r.scratch or r.spills or r.dynamic_stack),
                     dynamic_stack=sum(1 for r in resources if r.dynamic_stack))


def totals(diffs: Sequence[Pair], only_new: Sequence[KernelUsage], only_old: Sequence[KernelUsage],
           not_in_baseline: Sequence[KernelUsage] = (), top: int = TOP) -> Totals:
    metrics = []
    ranked = []
    for name, figure, larger_is_worse in _METRICS:
        known = [(d, figure(d.old), figure(d.new)) for d in diffs]
        pairs = [(d, old, new) for d, old, new in known if old is not None and new is not None]
        metrics.append(MetricTotal(name, len(pairs), sum(old for _, old, _ in pairs),
                                   sum(new for _, _, new in pairs)))
        sign = 1 if larger_is_worse else -1
        # Largest change first; ties by name and target, so the lists are stable.
        worse = sorted((p for p in pairs if sign * (p[2] - p[1]) > 0),
                       key=lambda p: (-sign * (p[2] - p[1]), p[0].name, p[0].target))
        better = sorted((p for p in pairs if sign * (p[2] - p[1]) < 0),
                        key=lambda p: (sign * (p[2] - p[1]), p[0].name, p[0].target))
        ranked.append(Ranked(name, tuple(p[0] for p in worse[:top]), tuple(p[0] for p in better[:top])))
    waves = [(d.old.occupancy, d.new.occupancy) for d in diffs
             if d.old.occupancy is not None and d.new.occupancy is not None]
    return Totals(
        matched=len(diffs), metrics=tuple(metrics),
        losing_waves=sum(1 for old, new in waves if new < old),
        gaining_waves=sum(1 for old, new in waves if new > old),
        dynamic_stack_old=sum(1 for d in diffs if d.old.dynamic_stack),
        dynamic_stack_new=sum(1 for d in diffs if d.new.dynamic_stack),
        added=_side(only_new), removed=_side(only_old), top=tuple(ranked), not_in_baseline=_side(not_in_baseline))


def signed(n: int) -> str:
    return f"+{n:,}" if n > 0 else f"{n:,}"


def total_lines(t: Totals) -> list[str]:
    """The totals as short lines of text (the table and the Markdown both lead with them)."""
    lines = []
    for m in t.metrics:
        if m.metric == "occupancy":
            continue
        unknown = f" ({t.matched - m.kernels} without the figure)" if m.kernels != t.matched else ""
        lines.append(f"{METRIC_LABELS[m.metric]}: {m.old:,} -> {m.new:,} ({signed(m.change)}){unknown}")
    lines.append(f"waves: {t.losing_waves:,} kernel{'s' if t.losing_waves != 1 else ''} lose waves, "
                 f"{t.gaining_waves:,} gain")
    if t.dynamic_stack_old or t.dynamic_stack_new:
        lines.append(f"dynamic stack: {t.dynamic_stack_old:,} -> {t.dynamic_stack_new:,} kernels")
    return lines


def side_line(label: str, side: SideTotal) -> str:
    return (f"{label}: {side.kernels:,} kernel{'s' if side.kernels != 1 else ''}, scratch {side.scratch:,} B/lane, "
            f"{side.spills:,} spilled registers, {side.vgprs:,} VGPRs ({side.using_scratch:,} using scratch)")
