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

Opt-in, from the machine code (CODE_GATES: check and baseline write decode it
when one is gated, as report --isa does):

============  ========================================================  =========
loop_scratch  scratch loads and stores inside loops (``scratch_in_loops``)  ceiling
agpr_copies   ``v_accvgpr_write*`` + ``v_accvgpr_read*``                  ceiling
============  ========================================================  =========

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

MetricName = Literal["scratch", "spills", "occupancy", "vgprs", "lds", "loop_scratch", "agpr_copies"]


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
    Metric("loop_scratch", False, lambda r: r.loop_scratch, "scratch accesses in loops",
           "scratch loads and stores inside loops, from the machine code (report --isa's scratch_in_loops)", 0),
    Metric("agpr_copies", False, lambda r: r.agpr_copies, "AGPR copies",
           "v_accvgpr_write + v_accvgpr_read instructions, from the machine code (agpr_writes + agpr_reads)", 0),
)}
DEFAULT_GATE: tuple[str, ...] = ("scratch",)
# Gates that hold every kernel to a figure of its own (not to zero when it is
# absent): a baseline for them records every kernel (baseline write --record-all).
ALL_KERNEL_GATES: tuple[str, ...] = ("occupancy", "vgprs", "lds")
# Gates read from the machine code: check and baseline write decode it when one is gated.
CODE_GATES: tuple[str, ...] = ("loop_scratch", "agpr_copies")


def needs_code(gate) -> bool:
    return any(m in CODE_GATES for m in gate)


def refuse_without_code(usage: dict, gate) -> None:
    """InputError when a gate reads the machine code and a kernel was read
    without it (a report JSON written without --isa): it would pass unseen."""
    if not needs_code(gate):
        return
    for kernel in usage.values():
        if kernel.resources.loop_scratch is None or kernel.resources.agpr_copies is None:
            from spillway.errors import InputError

            gated = ",".join(m for m in CODE_GATES if m in gate)
            raise InputError(f"the gate {gated} needs each kernel's machine code, and {kernel.name} "
                             f"[{kernel.target}] was read without it (a report JSON written without --isa: "
                             f"give the binaries, or write the report with report --isa)")


def parse_metrics(text: str) -> tuple[str, ...]:
    """``scratch,spills`` -> ("scratch", "spills") in METRICS order; UsageError otherwise."""
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in METRICS]
    if unknown or not names:
        what = f"unknown metric {', '.join(map(repr, unknown))}" if unknown else "no metric given"
        raise UsageError(f"{what} in --gate {text!r}; valid metrics: {', '.join(METRICS)}")
    return tuple(m for m in METRICS if m in names)

