"""What a failing kernel's machine code shows, for check's failures: the
evidence of its instances (isa.evidence's KernelCode, read by
report.kernel_code) folded into one figure each, at its worst.

Check reads the build's code again only when it fails, once per command,
for the failures its outputs show (every failure for the documents that list
them all: json, junit, sarif, html): a green check costs nothing more."""

from __future__ import annotations

from dataclasses import dataclass, replace

from typing import Callable, Optional

from spillway.isa.evidence import COMPLETE, KernelCode
from spillway.isa.source_lines import SourceLine, source_object


@dataclass(frozen=True)
class PeakNote:
    """check --pressure: a failing kernel's VGPR peak (isa.liveness) and where it is."""
    vgprs: int                      # the most VGPRs live at once
    offset: int                     # the first instruction where they are (bytes from the kernel's start)
    source: Optional[SourceLine]    # its line (None: no line table, or no line)
    # what holds it: (registers, what defined them, their line or None), most first (isa.liveness.origin_sums)
    held_by: tuple[tuple[int, str, Optional[SourceLine]], ...]
    status: str                     # the liveness' status (complete, partial: ...)

    def as_dict(self) -> dict:
        return {"vgprs": self.vgprs, "offset": self.offset, "status": self.status,
                "source": source_object(self.source),
                "held_by": [{"count": count, "defined_by": name, "source": source_object(line)}
                            for count, name, line in self.held_by]}

    def text(self, quote: Callable[[str], str] = str) -> str:
        """``VGPR peak 128 at gemm.hip:88 (+0x80c): 84 v_mfma_i32_16x16x16i8 or v_mov_b32_e32, 18 ds_read2_b32``"""
        where = f"+{self.offset:#x}" if self.source is None else \
            f"{quote(self.source.file)}:{self.source.line} (+{self.offset:#x})"
        held = ", ".join(f"{count} {quote(name)}" + ("" if line is None else f" ({quote(line.file)}:{line.line})")
                         for count, name, line in self.held_by[:2])
        partial = "" if self.status == COMPLETE else " (read partly)"
        return f"VGPR peak {self.vgprs}{partial} at {where}" + (f": {held}" if held else "")


@dataclass(frozen=True)
class FailureCode:
    scratch_load_bytes: int     # bytes per lane the scratch loads name (worst instance)
    scratch_store_bytes: int    # bytes per lane the scratch stores name (worst instance)
    scratch_accesses: int       # scratch loads + stores (worst instance)
    scratch_in_loops: int       # of them inside loops (worst instance)
    agpr_copies: int            # v_accvgpr_write + v_accvgpr_read (worst instance)
    calls: int                  # calls (the callees' code is not in the figures)
    status: str                 # "complete", or the first instance's status that is not
    instances: int
    peak: Optional[PeakNote] = None     # check --pressure: the VGPR peak of the instance with the most

    @classmethod
    def fold(cls, codes: list[KernelCode]) -> "FailureCode":
        stopped = [c.status for c in codes if c.status != COMPLETE]
        return cls(max(c.scratch_load_bytes for c in codes), max(c.scratch_store_bytes for c in codes),
                   max(c.scratch_loads + c.scratch_stores for c in codes), max(c.scratch_in_loops for c in codes),
                   max(c.agpr_writes + c.agpr_reads for c in codes), max(c.calls for c in codes),
                   stopped[0] if stopped else COMPLETE, len(codes))

    def as_dict(self) -> dict:
        """The figures by name: a failure's ``code`` member in check --json (spillway.check/4),
        its SARIF result's ``code`` property, the HTML page's detail."""
        return {"scratch_load_bytes": self.scratch_load_bytes, "scratch_store_bytes": self.scratch_store_bytes,
                "scratch_accesses": self.scratch_accesses, "scratch_in_loops": self.scratch_in_loops,
                "agpr_copies": self.agpr_copies, "calls": self.calls, "status": self.status,
                "instances": self.instances, **({"vgpr_peak": self.peak.as_dict()} if self.peak else {})}

    def text(self, prefix: str = "code: ", quote: Callable[[str], str] = str) -> str:
        """``code: scratch 64 B loaded + 64 B stored per lane, 12 of 16 accesses in loops, 0 AGPR
        copies, complete``"""
        text = (f"{prefix}scratch {self.scratch_load_bytes} B loaded + {self.scratch_store_bytes} B stored per "
                f"lane, {self.scratch_in_loops} of {self.scratch_accesses} accesses in loops, "
                f"{self.agpr_copies} AGPR copies")
        if self.calls:
            text += f", {self.calls} call{'s' if self.calls != 1 else ''} (callees not counted)"
        # (a status names the target, which comes from the binary: ``quote``, the sink's)
        text += ", complete" if self.status == COMPLETE else f", decoding stopped: {quote(self.status)}"
        if self.instances > 1:
            text += f" (worst of {self.instances} instances)"
        if self.peak is not None:
            text += "; " + self.peak.text(quote)
        return text


def failures_code(found: dict[tuple[str, str], list[KernelCode]],
                  peaks: Optional[dict[tuple[str, str], list[PeakNote]]] = None) -> dict[tuple[str, str], FailureCode]:
    """Each kernel's FailureCode; ``peaks`` (check --pressure): with the VGPR peak of the instance that has
    the most."""
    out = {kernel: FailureCode.fold(codes) for kernel, codes in found.items() if codes}
    for kernel, notes in (peaks or {}).items():
        if kernel in out and notes:
            out[kernel] = replace(out[kernel], peak=max(notes, key=lambda note: note.vgprs))
    return out
