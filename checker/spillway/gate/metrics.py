"""The gate's metrics, named the same everywhere (``--gate``, baseline files,
check and compare output):

=========  ===========================================  =========
metric     value                                        direction
=========  ===========================================  =========
scratch    ``private_segment_fixed_size`` (bytes/lane)  ceiling
spills     ``vgpr_spill_count + sgpr_spill_count``      ceiling
occupancy  waves per SIMD (``occupancy``)               floor
vgprs      ``vgpr_count``                               ceiling
lds        ``group_segment_fixed_size`` (bytes)         ceiling
=========  ===========================================  =========

``spills`` is one number, the spilled VGPRs plus the spilled SGPRs, so a
compiler that trades one kind for the other does not fail the gate; the two
counts are recorded separately in baselines and shown separately by compare.
The ``scratch`` metric also covers the dynamic stack: a kernel that starts
using one fails unless its allowance says ``dynamic_stack: true``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Optional

from spillway.constants import metrics_help  # noqa: F401  (the --help words, worded once there)
from spillway.errors import UsageError
from spillway.gate.kernels import Resources

MetricName = Literal["scratch", "spills", "occupancy", "vgprs", "lds"]


@dataclass(frozen=True)
class Metric:
    name: str
    floor: bool                               # occupancy: the allowance is a minimum
    value: Callable[[Resources], Optional[int]]
    unit: str
    description: str
    new_kernel_allowance: Optional[int]       # what a kernel absent from the baseline is held to

    def within(self, actual: Optional[int], allowed: Optional[int]) -> bool:
        if actual is None or allowed is None:
            return True
        return actual >= allowed if self.floor else actual <= allowed

    def format(self, value: Optional[int]) -> str:
        if value is None:
            return "?"
        return f"{value} {self.unit}" if self.unit else str(value)


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("scratch", False, lambda r: r.scratch, "B/lane",
           "scratch bytes per lane (private_segment_fixed_size); a dynamic stack fails unless allowed", 0),
    Metric("spills", False, lambda r: r.spills, "spilled registers",
           "spilled VGPRs + spilled SGPRs (vgpr_spill_count + sgpr_spill_count)", 0),
    Metric("occupancy", True, lambda r: r.occupancy, "waves/SIMD",
           "waves per SIMD, a floor", None),
    Metric("vgprs", False, lambda r: r.vgprs, "VGPRs", "VGPRs per work-item (vgpr_count)", None),
    Metric("lds", False, lambda r: r.lds, "B", "static LDS bytes per work-group (group_segment_fixed_size)",
           None),
)}
DEFAULT_GATE: tuple[str, ...] = ("scratch",)
# Gates that hold every kernel to a figure of its own (not to zero when it is
# absent): a baseline for them records every kernel (baseline write --record-all).
ALL_KERNEL_GATES: tuple[str, ...] = ("occupancy", "vgprs", "lds")


def parse_metrics(text: str) -> tuple[str, ...]:
    """``scratch,spills`` -> ("scratch", "spills") in METRICS order; UsageError otherwise."""
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in METRICS]
    if unknown or not names:
        what = f"unknown metric {', '.join(map(repr, unknown))}" if unknown else "no metric given"
        raise UsageError(f"{what} in --gate {text!r}; valid metrics: {', '.join(METRICS)}")
    return tuple(m for m in METRICS if m in names)

