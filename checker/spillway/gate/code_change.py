"""What changed in a kernel's machine code between two builds, beyond its
figures (compare --isa, issue 32): its instruction mix (isa.mix) and the
source lines that gained or lost scratch traffic in loops.

Mix: the *arithmetic* classes (valu, salu, vmem, smem, lds, matrix), the
*spill traffic* (scratch, agpr_copy) and the *control* (branch, waitcnt,
other: waits and nops follow the memory traffic).  "arithmetic identical,
only spill traffic changed" is the answer a kernel author wants after a
compiler update that made a kernel spill: the same work, more scratch.  As
spill code has ALU instructions of its own, a change of spill traffic with
VALU/SALU changes but the same matrix ops and memory/LDS accesses is
"matrix and memory work identical, spill traffic and ALU changed"; any other
change of an arithmetic class is "arithmetic changed".

Lines: each side's ``source_lines.top`` (report --isa: the lines with the
most scratch bytes per lane in loops, files relative to their compile unit's
directory so that two builds made in other folders match).  A line listed on
one side only has 0 bytes on the other when that side listed all its lines
(``more`` 0); otherwise it is left out (not known).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Optional, Sequence

from spillway.constants import MIX_CLASSES
from spillway.paths import relative_path

ARITHMETIC: Final = ("valu", "salu", "vmem", "smem", "lds", "matrix")
SPILL_TRAFFIC: Final = ("scratch", "agpr_copy")
CONTROL: Final = ("branch", "waitcnt", "other")

IDENTICAL_MIX: Final = "identical mix"
ONLY_SPILL_TRAFFIC: Final = "arithmetic identical, only spill traffic changed"
ONLY_CONTROL: Final = "arithmetic and spill traffic identical, only waits, branches and other changed"
# Spill code brings ALU instructions of its own (scratch offsets in VGPRs, M0 and SGPR setup, readlane and
# writelane of SGPR spills): with no matrix op, memory or LDS access changed, that is still the compiler's
# spilling, not the kernel's work.
ONLY_SPILL_AND_ALU: Final = "matrix and memory work identical, spill traffic and ALU changed"
ARITHMETIC_CHANGED: Final = "arithmetic changed"
MIX_VERDICTS: Final = (IDENTICAL_MIX, ONLY_SPILL_TRAFFIC, ONLY_CONTROL, ONLY_SPILL_AND_ALU, ARITHMETIC_CHANGED)
WORK: Final = ("vmem", "smem", "lds", "matrix")
# Lines listed per direction (gained, lost) in a kernel's comparison.
SHOWN_LINES: Final = 5


@dataclass(frozen=True)
class MixChange:
    verdict: str                                   # one of MIX_VERDICTS
    changed: tuple[tuple[str, int, int], ...]      # (class, old, new) of each class that differs, in class order

    def phrase(self) -> str:
        """The verdict with the classes that changed: "arithmetic identical,
        only spill traffic changed (scratch 12 -> 40, waitcnt 30 -> 41)"."""
        if not self.changed:
            return self.verdict
        return self.verdict + " (" + ", ".join(f"{name} {old} -> {new}" for name, old, new in self.changed) + ")"

    def as_dict(self) -> dict:
        return {"verdict": self.verdict,
                "changed": [{"class": name, "old": old, "new": new} for name, old, new in self.changed]}


def mix_change(old: tuple[int, ...] | dict[str, int], new: tuple[int, ...] | dict[str, int]) -> MixChange:
    """What changed between two mixes (counts in MIX_CLASSES order, or ``{class: count}``)."""
    before = old if isinstance(old, dict) else dict(zip(MIX_CLASSES, old))
    after = new if isinstance(new, dict) else dict(zip(MIX_CLASSES, new))
    changed = tuple((name, before.get(name, 0), after.get(name, 0)) for name in MIX_CLASSES
                    if before.get(name, 0) != after.get(name, 0))
    names = {name for name, _old, _new in changed}
    if not names:
        verdict = IDENTICAL_MIX
    elif names & set(ARITHMETIC):
        verdict = ONLY_SPILL_AND_ALU if names & set(SPILL_TRAFFIC) and not names & set(WORK) else ARITHMETIC_CHANGED
    elif names & set(SPILL_TRAFFIC):
        verdict = ONLY_SPILL_TRAFFIC
    else:
        verdict = ONLY_CONTROL
    return MixChange(verdict, changed)


@dataclass(frozen=True)
class LineChange:
    file: str          # relative to the compile unit's directory when under it
    line: int          # 0 with file "": the accesses no line was found for
    old: int           # scratch bytes per lane in loops
    new: int

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "old_loop_bytes": self.old, "new_loop_bytes": self.new}


@dataclass(frozen=True)
class LinesChange:
    gained: tuple[LineChange, ...]     # most gained first, at most SHOWN_LINES
    lost: tuple[LineChange, ...]       # most lost first
    more_gained: int                   # further lines not shown
    more_lost: int

    def as_dict(self) -> dict:
        return {"gained": [c.as_dict() for c in self.gained], "lost": [c.as_dict() for c in self.lost],
                "more_gained": self.more_gained, "more_lost": self.more_lost}


def lines_change(old: Optional[tuple[tuple[str, int, int], ...]], old_complete: bool,
                 new: Optional[tuple[tuple[str, int, int], ...]], new_complete: bool) -> Optional[LinesChange]:
    """Which source lines gained or lost scratch bytes in loops; None when a
    side has no lines (no line table, a report without them)."""
    if old is None or new is None:
        return None
    before = {(file, line): figure for file, line, figure in old}
    after = {(file, line): figure for file, line, figure in new}
    changes = []
    for key in sorted(set(before) | set(after)):
        if key not in before and not old_complete or key not in after and not new_complete:
            continue           # not among the lines that side listed: not known
        a, b = before.get(key, 0), after.get(key, 0)
        if a != b:
            changes.append(LineChange(key[0], key[1], a, b))
    gained = sorted((c for c in changes if c.new > c.old), key=lambda c: (c.old - c.new, c.file, c.line))
    lost = sorted((c for c in changes if c.new < c.old), key=lambda c: (c.new - c.old, c.file, c.line))
    return LinesChange(tuple(gained[:SHOWN_LINES]), tuple(lost[:SHOWN_LINES]),
                       max(len(gained) - SHOWN_LINES, 0), max(len(lost) - SHOWN_LINES, 0))


# -- where the VGPR peak moved (compare --pressure, issue 41 item 5) ------------------------------------------

Source = tuple[str, int, int, bool]      # (file relative to its comp_dir when under it, line, column, inferred)


@dataclass(frozen=True)
class PeakGroup:
    """The largest group of registers live at a side's VGPR peak (report --pressure's at_vgpr_peak)."""
    count: int                                   # 32-bit registers
    defined_by: tuple[str, ...]                  # the defining instructions' mnemonics
    defined_at: tuple[int, ...]                  # their offsets from the kernel's start
    defined_source: tuple[Optional[Source], ...]
    from_entry: bool                             # some path reaches the peak with the entry's value

    def as_dict(self) -> dict:
        return {"count": self.count, "defined_by": list(self.defined_by), "defined_at": list(self.defined_at),
                "defined_source": [source_dict(s) for s in self.defined_source], "from_entry": self.from_entry}


@dataclass(frozen=True)
class PeakLoop:
    """The innermost loop holding a side's VGPR peak (report --pressure's at_vgpr_peak.loop)."""
    start: int                      # its head, bytes from the kernel's start
    end: int                        # its last backward branch
    head: Optional[Source]          # the head's line (None: no line table, or no line)
    back_branch: Optional[Source]

    def as_dict(self) -> dict:
        return {"start": self.start, "end": self.end, "head": source_dict(self.head),
                "back_branch": source_dict(self.back_branch)}


@dataclass(frozen=True)
class PeakOrigin:
    """VGPRs held at a side's peak that instructions of one mnemonic defined on one line (report --pressure's
    vgpr_peak_origins)."""
    count: int
    defined_by: str
    source: Optional[Source]

    def key(self, by_line: bool) -> tuple[str, Optional[tuple[str, int]]]:
        """What two builds' origins are matched by: the mnemonic, and (``by_line``: both sides have line
        tables) the file and line (columns move)."""
        return self.defined_by, None if self.source is None or not by_line else (self.source[0], self.source[1])

    def as_dict(self) -> dict:
        return {"count": self.count, "defined_by": self.defined_by, "source": source_dict(self.source)}


@dataclass(frozen=True)
class PeakSide:
    """One side's live registers (report --pressure's ``pressure`` object)."""
    status: str                     # complete, "partial: ...", "not read: ..."
    vgprs: int
    agprs: int
    sgprs: int
    vgpr_offset: Optional[int]      # the first instruction at the VGPR peak (None: no VGPR is ever live)
    source: Optional[Source]        # its source line (None: no line table, or no line there)
    group: Optional[PeakGroup]      # the largest group live there (None: no VGPR is ever live)
    curve: tuple[int, ...] = ()     # the VGPRs live along the code (report --pressure's vgpr_curve; () none)
    code_bytes: int = 0             # the code the curve's stretches divide
    # The innermost loop holding the peak (None: outside every loop, or a report-5 side, which has none).
    loop: Optional[PeakLoop] = None
    # What holds the peak, summed by mnemonic and line, most first (at most isa.liveness.ORIGIN_SUMS).
    origins: tuple[PeakOrigin, ...] = ()
    # The scratch accesses' offsets (report --pressure's scratch_offsets; () none, or a report-5 side).
    scratch_offsets: tuple[int, ...] = ()
    # The side's code object has a line table (its source_lines placed): its origins are matched by line.
    lines: bool = False

    @classmethod
    def from_object(cls, pressure: dict, comp_dir: str = "", lines: bool = False) -> "PeakSide":
        """From a ``pressure`` object report_input.pressure_ok accepted; files made relative to ``comp_dir``;
        ``lines``: its code object has a line table."""
        def source(found: Optional[dict]) -> Optional[Source]:
            if found is None:
                return None
            return relative_path(found["file"], comp_dir), found["line"], found["column"], found["inferred"]

        held = pressure.get("at_vgpr_peak")
        group = None
        loop = None
        if held is not None and held["groups"]:
            first = held["groups"][0]
            group = PeakGroup(first["count"], tuple(first["defined_by"]), tuple(first["defined_at"]),
                              tuple(source(s) for s in first["defined_source"]), first["from_entry"])
        if held is not None and held.get("loop") is not None:
            found = held["loop"]
            loop = PeakLoop(found["start"], found["end"], source(found["head"]), source(found["back_branch"]))
        origins = tuple(PeakOrigin(o["count"], o["defined_by"], source(o["source"]))
                        for o in pressure.get("vgpr_peak_origins") or ())
        return cls(pressure["status"], pressure["vgprs"]["peak"], pressure["agprs"]["peak"],
                   pressure["sgprs"]["peak"], pressure["vgprs"]["offset"],
                   None if held is None else source(held["source"]), group,
                   tuple(pressure.get("vgpr_curve") or ()), pressure.get("code_bytes") or 0, loop, origins,
                   tuple(pressure.get("scratch_offsets") or ()), lines)

    def origin_counts(self, by_line: bool) -> dict:
        """Registers at the peak by PeakOrigin.key (origins of one mnemonic and line in other columns summed)."""
        counts: dict = {}
        for found in self.origins:
            counts[found.key(by_line)] = counts.get(found.key(by_line), 0) + found.count
        return counts

    @property
    def origins_complete(self) -> bool:
        """The origins listed hold the whole peak (an origin not listed holds none of it)."""
        return sum(found.count for found in self.origins) == self.vgprs

    def as_dict(self) -> dict:
        return {"status": self.status, "vgprs": self.vgprs, "agprs": self.agprs, "sgprs": self.sgprs,
                "vgpr_peak_offset": self.vgpr_offset, "vgpr_peak_source": source_dict(self.source),
                "largest_group": None if self.group is None else self.group.as_dict(),
                "vgpr_curve": list(self.curve), "code_bytes": self.code_bytes,
                "loop": None if self.loop is None else self.loop.as_dict(),
                "vgpr_peak_origins": [found.as_dict() for found in self.origins],
                "scratch_offsets": list(self.scratch_offsets)}


def source_dict(source: Optional[Source]) -> Optional[dict]:
    if source is None:
        return None
    file, line, column, inferred = source
    return {"file": file, "line": line, "column": column, "inferred": inferred}


@dataclass(frozen=True)
class OriginChange:
    """The VGPRs one origin (mnemonic and line) holds at each side's peak."""
    defined_by: str
    source: Optional[Source]        # the new side's line (the old side's when the new does not list it)
    old: Optional[int]              # None: the old side does not list it and its listed origins do not hold its
    new: Optional[int]              # whole peak (not known); 0: listed origins hold the whole peak

    @property
    def change(self) -> Optional[int]:
        return None if self.old is None or self.new is None else self.new - self.old

    def as_dict(self) -> dict:
        return {"defined_by": self.defined_by, "source": source_dict(self.source), "old": self.old,
                "new": self.new, "change": self.change}


def origin_changes(old: PeakSide, new: PeakSide) -> tuple[OriginChange, ...]:
    """Each origin either side lists at its VGPR peak, with its registers on
    both sides, matched by mnemonic and line (by mnemonic alone when a side
    has no line table): most grown first, then the ones not known."""
    by_line = old.lines and new.lines
    before, after = old.origin_counts(by_line), new.origin_counts(by_line)
    # (the new side's line where it lists the origin: the last of each key wins; a side without a line table
    # gives none)
    sources = {found.key(by_line): found.source if by_line else None for found in (*old.origins, *new.origins)}
    changes = []
    for key in dict.fromkeys([*after, *before]):
        changes.append(OriginChange(key[0], sources[key],
                                    before.get(key, 0 if old.origins_complete else None),
                                    after.get(key, 0 if new.origins_complete else None)))
    return tuple(sorted(changes, key=lambda c: (c.change is None, -(c.change or 0))))


def grew_most(changes: Sequence[OriginChange]) -> Optional[OriginChange]:
    """The origin whose registers at the peak grew most between the builds (None: none grew, as known)."""
    grown = [c for c in changes if c.change is not None and c.change > 0]
    return max(grown, key=lambda c: c.change or 0) if grown else None


@dataclass(frozen=True)
class PeakShift:
    """Each side's live registers and how the VGPR peak changed."""
    old: PeakSide
    new: PeakSide

    @property
    def vgpr_change(self) -> int:
        return self.new.vgprs - self.old.vgprs

    def origin_changes(self) -> tuple[OriginChange, ...]:
        return origin_changes(self.old, self.new)

    def as_dict(self) -> dict:
        changes = self.origin_changes()
        most = grew_most(changes)
        return {"old": self.old.as_dict(), "new": self.new.as_dict(), "vgpr_change": self.vgpr_change,
                "origin_changes": [c.as_dict() for c in changes],
                "grew_most": None if most is None else most.as_dict()}


def higher_peak(a: Optional[PeakSide], b: Optional[PeakSide]) -> Optional[PeakSide]:
    """Two instances' live registers folded: the one with more VGPRs at its peak (None when either has none)."""
    if a is None or b is None:
        return None
    return b if b.vgprs > a.vgprs else a
