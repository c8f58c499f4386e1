"""The gate's kernel vocabulary: a kernel's resource figures (Resources, the
one definition of the record baselines, checks and comparisons share), its
usage folded over every instance (KernelUsage: the worst value of each
resource), and a build's kernels as read (Inputs).

A kernel is identified by (target, key), key being the reader's stable
mangled name.  When the same kernel appears several times (one instance per
translation unit or bundle, or the same library read twice) its worst value
of each resource counts.
"""

from __future__ import annotations

import gc
import operator
from dataclasses import dataclass, field
from typing import Annotated, Iterable, Optional

from pydantic import ConfigDict, Field

from spillway.constants import MIX_CLASSES
from spillway.gate.code_change import PeakSide, higher_peak
from spillway.paths import relative_path
from spillway.report.fields import FIELDS, RESOURCE_FIELDS
from spillway.report.report_input import NEED_ORDER   # occupancy_next's resources, as it lists them
from spillway.resources.occupancy import UNNAMED_MODEL

Kernel = tuple[str, str]        # (target, key)


@dataclass(frozen=True, slots=True)
class Resources:
    """The figures spillway gates and compares, for one kernel on one target:
    the one definition of a kernel's resource record.  Baselines store it as
    ``recorded`` and compare documents as ``old``/``new``/``resources``; their
    JSON schemas are generated from this class (pydantic reads the
    annotations), so the three cannot drift apart."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    scratch: Annotated[int, Field(ge=0, description="private_segment_fixed_size, bytes per lane")]
    dynamic_stack: Annotated[bool, Field(description="uses_dynamic_stack")]
    vgpr_spills: Annotated[int, Field(ge=0, description="vgpr_spill_count")]
    sgpr_spills: Annotated[int, Field(ge=0, description="sgpr_spill_count")]
    vgprs: Annotated[int, Field(ge=0, description="vgpr_count")]
    agprs: Annotated[Optional[int], Field(description="agpr_count; null on targets without AGPRs")]
    sgprs: Annotated[int, Field(ge=0, description="sgpr_count")]
    lds: Annotated[int, Field(ge=0, description="group_segment_fixed_size, bytes per work-group")]
    occupancy: Annotated[Optional[int], Field(description="Waves per SIMD; null for an unknown target")]
    # From the machine code (report --isa); None when it was not read.
    loop_scratch: Annotated[Optional[int], Field(ge=0, description="Scratch loads and stores inside loops "
                                                                   "(report --isa's scratch_in_loops); absent "
                                                                   "when the machine code was not read")] = None
    agpr_copies: Annotated[Optional[int], Field(ge=0, description="v_accvgpr_write + v_accvgpr_read instructions "
                                                                  "(report --isa's agpr_writes + agpr_reads); "
                                                                  "absent when the machine code was not read")] = None

    @property
    def spills(self) -> int:
        return self.vgpr_spills + self.sgpr_spills

    @classmethod
    def from_record(cls, record: dict) -> "Resources":
        isa = record.get("isa")
        return cls(record["private_segment_fixed_size"], bool(record["uses_dynamic_stack"]),
                   record["vgpr_spill_count"], record["sgpr_spill_count"], record["vgpr_count"],
                   record["agpr_count"], record["sgpr_count"], record["group_segment_fixed_size"],
                   record["occupancy"], *_code_values(isa))

    def worst(self, other: "Resources") -> "Resources":
        """Each resource at its worse value of the two."""
        return Resources(max(self.scratch, other.scratch), self.dynamic_stack or other.dynamic_stack,
                         max(self.vgpr_spills, other.vgpr_spills), max(self.sgpr_spills, other.sgpr_spills),
                         max(self.vgprs, other.vgprs), _max_optional(self.agprs, other.agprs),
                         max(self.sgprs, other.sgprs), max(self.lds, other.lds),
                         _min_optional(self.occupancy, other.occupancy),
                         _max_optional(self.loop_scratch, other.loop_scratch),
                         _max_optional(self.agpr_copies, other.agpr_copies))

    def as_dict(self) -> dict:
        """The record; the machine code's figures only when they were read."""
        out = {"scratch": self.scratch, "dynamic_stack": self.dynamic_stack,
               "vgpr_spills": self.vgpr_spills, "sgpr_spills": self.sgpr_spills, "vgprs": self.vgprs,
               "agprs": self.agprs, "sgprs": self.sgprs, "lds": self.lds, "occupancy": self.occupancy}
        if self.loop_scratch is not None:
            out["loop_scratch"] = self.loop_scratch
        if self.agpr_copies is not None:
            out["agpr_copies"] = self.agpr_copies
        return out


def _code_values(isa: Optional[dict]) -> tuple[Optional[int], Optional[int]]:
    """Resources' loop_scratch and agpr_copies from an isa object (None, None without one)."""
    if isa is None:
        return None, None
    return isa["scratch_in_loops"], isa["agpr_writes"] + isa["agpr_reads"]


# SHA-256 of no bytes: what reports before issue 42 gave a kernel whose code was not read.
_NO_BYTES_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


@dataclass(frozen=True, slots=True)
class CodeFigures:
    """What a kernel's machine code shows, as compare reads it: from report
    --isa's ``isa`` object (report.code_evidence), folded over the kernel's
    instances (each figure at its worst, every instance's code hash)."""

    code_sha256: tuple[str, ...]     # the distinct codes of its instances, sorted (those read)
    scratch_bytes: int               # scratch_load_bytes + scratch_store_bytes, per lane
    scratch_in_loops: int            # scratch accesses inside loops
    agpr_copies: int                 # agpr_writes + agpr_reads
    complete: bool                   # every instance decoded to its end
    # The instruction mix (isa.mix: counts in MIX_CLASSES order); None when a report without it (versions
    # 2 and 3) was read, or the kernel's instances differ in it.
    mix: Optional[tuple[int, ...]] = None
    # Source lines with scratch bytes in loops: (file relative to its comp_dir, line, loop bytes per lane)
    # from the isa object's source_lines; None without a line table, or when the instances differ.
    loop_lines: Optional[tuple[tuple[str, int, int], ...]] = None
    lines_complete: bool = True      # loop_lines lists every such line (the record's ``more`` was 0)
    # Every instance's code was read: it has a code SHA-256 (a report before issue 42 gave an unread
    # kernel the SHA-256 of no bytes, which is not an identity either).
    read: bool = True
    # Its live registers (report --pressure's pressure object: the instance with the highest VGPR peak);
    # None when an instance was read without them or its code was not read.
    pressure: Optional[PeakSide] = None

    @classmethod
    def from_isa(cls, isa: dict) -> "CodeFigures":
        mix = isa.get("mix")
        lines = isa.get("source_lines")
        loop_lines = None
        complete = True
        if isinstance(lines, dict) and lines.get("status") == "placed":
            comp_dir = lines.get("comp_dir", "")
            loop_lines = tuple((relative_path(row["file"], comp_dir), row["line"],
                                row["loop_load_bytes"] + row["loop_store_bytes"]) for row in lines["top"])
            complete = not lines.get("more")
        read = isa["code_sha256"] not in ("", _NO_BYTES_SHA256)
        live = isa.get("pressure")
        pressure = None if live is None else PeakSide.from_object(
            live, lines.get("comp_dir", "") if isinstance(lines, dict) else "",
            isinstance(lines, dict) and lines.get("status") == "placed")
        return cls((isa["code_sha256"],) if read else (), isa["scratch_load_bytes"] + isa["scratch_store_bytes"],
                   isa["scratch_in_loops"], isa["agpr_writes"] + isa["agpr_reads"], isa["status"] == "complete",
                   tuple(mix[name] for name in MIX_CLASSES) if isinstance(mix, dict) else None, loop_lines,
                   complete, read, pressure)

    def worst(self, other: "CodeFigures") -> "CodeFigures":
        return CodeFigures(tuple(sorted(set(self.code_sha256) | set(other.code_sha256))),
                           max(self.scratch_bytes, other.scratch_bytes),
                           max(self.scratch_in_loops, other.scratch_in_loops),
                           max(self.agpr_copies, other.agpr_copies), self.complete and other.complete,
                           self.mix if self.mix == other.mix else None,
                           self.loop_lines if self.loop_lines == other.loop_lines else None,
                           self.lines_complete and other.lines_complete, self.read and other.read,
                           higher_peak(self.pressure, other.pressure))

    def as_dict(self) -> dict:
        return {"code_sha256": list(self.code_sha256), "scratch_bytes": self.scratch_bytes,
                "scratch_in_loops": self.scratch_in_loops, "agpr_copies": self.agpr_copies,
                "complete": self.complete}


def _code_of(isa: Optional[dict]) -> Optional[CodeFigures]:
    return None if isa is None else CodeFigures.from_isa(isa)


def _max_optional(a, b):
    return b if a is None else a if b is None else max(a, b)


def _min_optional(a, b):
    return b if a is None else a if b is None else min(a, b)


@dataclass(slots=True)
class KernelUsage:
    target: str
    key: str
    name: str
    resources: Resources
    instances: int = 1
    # The report record's ``occupancy_next`` under the model it was read with
    # (its worst instance's); None at the cap, when nothing raises it, and for a
    # baseline's kernels (a baseline keeps no wave size or work-group bound).
    occupancy_next: Optional[dict] = None
    # Its machine code (read with --isa, or from report JSON holding isa objects); None when an
    # instance was read without it (a baseline, a report written without --isa).
    code: Optional[CodeFigures] = None

    def add_instance(self, resources: Resources, occupancy_next: Optional[dict], instances: int = 1,
                     code: Optional[CodeFigures] = None) -> None:
        """Fold in another instance of the kernel: each resource at its worse value."""
        self.occupancy_next = worse_next(self.resources.occupancy, self.occupancy_next,
                                         resources.occupancy, occupancy_next)
        if self.resources != resources:
            self.resources = self.resources.worst(resources)
        self.code = self.code.worst(code) if self.code is not None and code is not None else None
        self.instances += instances


def worse_next(occupancy: Optional[int], step: Optional[dict], other_occupancy: Optional[int],
               other_step: Optional[dict]) -> Optional[dict]:
    """The next step of two instances of one kernel: the lower one's; at the same
    figure, every need of both (each resource at its lower ``at_most``) for the
    smaller ``waves``, which holds for both as fewer resources never cost a wave;
    None when either instance has none (nothing known raises both)."""
    if occupancy is None or other_occupancy is None:     # as Resources.worst: an unknown figure yields
        return other_step if occupancy is None else step
    if occupancy != other_occupancy:
        return step if occupancy < other_occupancy else other_step
    if step is None or other_step is None:
        return None
    if step == other_step:
        return step
    needs: dict[str, int] = {}
    for need in (*step["needs"], *other_step["needs"]):
        resource, at_most = need["resource"], need["at_most"]
        needs[resource] = min(at_most, needs.get(resource, at_most))
    return {"waves": min(step["waves"], other_step["waves"]),
            "needs": [{"resource": r, "at_most": needs[r]} for r in NEED_ORDER if r in needs]}






_SHARED_RESOURCES: dict[tuple, Resources] = {}


def aggregate_rows(rows: Iterable[tuple], usage: dict[Kernel, KernelUsage] | None = None,
                   fields: tuple[str, ...] | None = None) -> dict[Kernel, KernelUsage]:
    """Like ``aggregate``, from the reader's compact rows (KernelTable.rows,
    FIELDS order, or ``fields``), without a dict per kernel."""
    usage = {} if usage is None else usage
    at = (fields or FIELDS).index
    target_at, key_at, name_at = at("target"), at("key"), at("name")
    picks = tuple(at(f) for f in RESOURCE_FIELDS)
    next_at = at("occupancy_next")
    head = operator.itemgetter(target_at, key_at, name_at, next_at)
    isa_at = at("isa") if "isa" in (fields or FIELDS) else None
    figures = operator.itemgetter(*picks)
    get = usage.get
    shared = _SHARED_RESOURCES
    if len(shared) > 1 << 16:
        shared.clear()
    shared_get = shared.get
    # Folding makes no reference cycles, and the collector's passes over the growing table
    # of kernels (a KernelUsage each) took 40% of the time (1.1 of 2.6 s on librocsparse1 7.2.4).
    collecting = gc.isenabled()
    gc.disable()
    try:
        for row in rows:
            target, key, name, step = head(row)
            ident = (target, key)
            # Resources are immutable, and a library's kernels have few distinct ones (35,557 of
            # 249,970 on librocsparse1 7.2.4): each is made once (a frozen dataclass costs
            # microseconds to build).
            values = figures(row)
            if isa_at is not None:
                values = (*values, *_code_values(row[isa_at]))
            resources = shared_get(values)
            if resources is None:
                resources = shared[values] = Resources(values[0], bool(values[1]), *values[2:])
            code = None if isa_at is None else _code_of(row[isa_at])
            seen = get(ident)
            if seen is None:
                usage[ident] = KernelUsage(target, key, name, resources, 1, step, code)
            else:
                seen.add_instance(resources, step, 1, code)
    finally:
        if collecting:
            gc.enable()
    return usage


def aggregate(records: Iterable[dict]) -> dict[Kernel, KernelUsage]:
    """Report records -> one KernelUsage per (target, key), worst values."""
    usage: dict[Kernel, KernelUsage] = {}
    for record in records:
        ident = (record["target"], record["key"])
        resources = Resources.from_record(record)
        code = _code_of(record.get("isa"))
        seen = usage.get(ident)
        if seen is None:
            usage[ident] = KernelUsage(record["target"], record["key"], record["name"], resources, 1,
                                       record.get("occupancy_next"), code)
        else:
            seen.add_instance(resources, record.get("occupancy_next"), 1, code)
    return usage


@dataclass
class Inputs:
    """Kernels read from binaries, spillway report JSON files and (where the
    caller allows it) baseline files' recorded values."""

    files: list[dict] = field(default_factory=list)        # report "files" entries
    sources: list[str] = field(default_factory=list)       # the user-named paths
    usage: dict[Kernel, KernelUsage] = field(default_factory=dict)
    # What baselines record about where their kernels came from, gathered as
    # the records go by (no record is kept, of a binary or a report JSON read
    # back: a library has 250,000).
    compilers: set[str] = field(default_factory=set)
    code_object_versions: set[int] = field(default_factory=set)
    occupancy_models: set[str] = field(default_factory=set)
    # Baseline files read as a side (compare): (the path as named, ``-`` for standard
    # input; its bytes), for the outputs that locate kernels at their lines.
    baselines: list[tuple[str, bytes]] = field(default_factory=list)
    # Per target, the criteria (scratch, spills) a baseline written without --record-all among
    # them holds the kernels it does not record to zero in (gate.compare.Unrecorded).
    unrecorded_held: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # read_sources(places=True): where each kernel's instances read from binaries are (PLACE_FIELDS, the
    # code object's part shared), so that a command looks at some of them again without reading
    # everything again (gate.revisit).
    places: dict[Kernel, list[tuple]] = field(default_factory=dict)

    def note_records(self, records: Iterable[dict]) -> None:
        for record in records:
            compiler, version = record.get("compiler"), record.get("code_object_version")
            if isinstance(compiler, str) and compiler:
                self.compilers.add(compiler)
            if isinstance(version, int) and not isinstance(version, bool):
                self.code_object_versions.add(version)
            self.occupancy_models.add(record.get("occupancy_model") or UNNAMED_MODEL)

    def note_rows(self, rows: list[tuple], fields: tuple[str, ...] | None = None) -> None:
        at = (fields or FIELDS).index
        for index, found in ((at("compiler"), self.compilers),
                             (at("code_object_version"), self.code_object_versions),
                             (at("occupancy_model"), self.occupancy_models)):
            found.update({row[index] for row in rows} - {None, ""})

    def kernels_written_from(self) -> dict[str, int]:
        """Distinct kernels (target, key) per target."""
        counts: dict[str, int] = {}
        for target, _key in self.usage:
            counts[target] = counts.get(target, 0) + 1
        return dict(sorted(counts.items()))
