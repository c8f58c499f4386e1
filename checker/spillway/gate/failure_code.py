"""What a failing kernel's machine code shows, for check's failures: the
evidence of its instances (isa.evidence's KernelCode, read by
report.kernel_code) folded into one figure each, at its worst.

Check reads the build's code again only when it fails, once per command,
for the failures its outputs show (every failure for the documents that list
them all: json, junit, sarif, html): a green check costs nothing more."""

from __future__ import annotations

from dataclasses import dataclass

from typing import Callable

from spillway.isa.evidence import COMPLETE, KernelCode


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

    @classmethod
    def fold(cls, codes: list[KernelCode]) -> "FailureCode":
        stopped = [c.status for c in codes if c.status != COMPLETE]
        return cls(max(c.scratch_load_bytes for c in codes), max(c.scratch_store_bytes for c in codes),
                   max(c.scratch_loads + c.scratch_stores for c in codes), max(c.scratch_in_loops for c in codes),
                   max(c.agpr_writes + c.agpr_reads for c in codes), max(c.calls for c in codes),
                   stopped[0] if stopped else COMPLETE, len(codes))

    def as_dict(self) -> dict:
        """The figures by name: a failure's ``code`` member in check --json (spillway.check/3),
        its SARIF result's ``code`` property, the HTML page's detail."""
        return {"scratch_load_bytes": self.scratch_load_bytes, "scratch_store_bytes": self.scratch_store_bytes,
                "scratch_accesses": self.scratch_accesses, "scratch_in_loops": self.scratch_in_loops,
                "agpr_copies": self.agpr_copies, "calls": self.calls, "status": self.status,
                "instances": self.instances}

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
        return text


def failures_code(found: dict[tuple[str, str], list[KernelCode]]) -> dict[tuple[str, str], FailureCode]:
    return {kernel: FailureCode.fold(codes) for kernel, codes in found.items() if codes}
