"""The published JSON schema of ``spillway compare --format json`` (spillway.compare/6: version 5 and in
``code.pressure`` each side's loop at the VGPR peak, origins and scratch access offsets, and the origins'
changes; version 5: version 4 and each kernel's ``code.pressure``, compare --pressure; version 4:
``not_in_baseline``, the kernels a default
baseline on the OLD side does not record, held to zero).

Its models live here, apart from gate.compare, so that only ``spillway schema``
(spillway.schemas names this module, imported on demand) pays for importing pydantic."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from spillway.constants import MIX_CLASSES
from spillway.gate.code_change import MIX_VERDICTS
from spillway.gate.compare import COMPARE_SCHEMA, CodeVerdict, Status
from spillway.gate.kernels import Resources
from spillway.json_codec import published_schema
from spillway.report.record import OccupancyModelChoice, OccupancyNext


# The resource record is gate.kernels.Resources itself (one definition, as in baselines), and the
# next step the report's OccupancyNext.
NEXT_DESCRIPTION = ("The {side}'s occupancy_next, under occupancy_model: null at the hardware cap, when "
                    "nothing in the binary raises the figure, or when that side is a baseline (it keeps no "
                    "wave size or work-group bound)")


class CodeFiguresModel(BaseModel):
    """One side's machine code (gate.kernels.CodeFigures), folded over the kernel's instances."""

    model_config = ConfigDict(extra="forbid")

    code_sha256: list[str] = Field(description="The distinct code SHA-256 of the kernel's instances, sorted; "
                                               "an instance whose code was not read has none (the verdict is "
                                               "then 'code not read')")
    scratch_bytes: int = Field(description="scratch_load_bytes + scratch_store_bytes of report --isa (worst "
                                           "instance), bytes per lane")
    scratch_in_loops: int = Field(description="Scratch accesses inside loops (worst instance)")
    agpr_copies: int = Field(description="agpr_writes + agpr_reads (worst instance)")
    complete: bool = Field(description="Every instance decoded to its end (isa status complete)")


class ClassChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    class_: Literal[MIX_CLASSES] = Field(alias="class")  # type: ignore[valid-type]
    old: int
    new: int


class MixChangeModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verdict: Literal[MIX_VERDICTS] = Field(  # type: ignore[valid-type]
        description="arithmetic: valu, salu, vmem, smem, lds, matrix; spill traffic: scratch, agpr_copy; the "
                    "rest (branch, waitcnt, other) is control")
    changed: list[ClassChange] = Field(description="Each class whose count differs, in class order")


class LineChangeModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="Relative to the compile unit's DW_AT_comp_dir when under it; \"\" with "
                                  "line 0: accesses with no line")
    line: int
    old_loop_bytes: int = Field(description="Scratch bytes per lane in loops on that line, OLD")
    new_loop_bytes: int


class LinesChangeModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gained: list[LineChangeModel] = Field(description="Most gained first (at most 5)")
    lost: list[LineChangeModel] = Field(description="Most lost first (at most 5)")
    more_gained: int
    more_lost: int


class PeakSourceModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="From the DWARF line table; relative to the compile unit's DW_AT_comp_dir "
                                  "when under it")
    line: int
    column: int = Field(description="0: the row names none")
    inferred: bool = Field(description="The table said line 0 there: the first real line after it in the same "
                                       "block")


class PeakGroupModel(BaseModel):
    """The largest group of registers live at the VGPR peak (report --pressure's at_vgpr_peak.groups[0])."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(description="32-bit VGPRs in the group")
    defined_by: list[str] = Field(description="Mnemonics of the instructions whose values may reach the peak")
    defined_at: list[int] = Field(description="Their offsets from the kernel's start")
    defined_source: list[Optional[PeakSourceModel]] = Field(description="Their source lines (null: none)")
    from_entry: bool = Field(description="Some path from the entry reaches the peak with the entry's value")


class PeakLoopModel(BaseModel):
    """The innermost loop holding a side's VGPR peak (report --pressure's at_vgpr_peak.loop; version 6)."""

    model_config = ConfigDict(extra="forbid")

    start: int = Field(description="Its head (its backward branches' target), bytes from the kernel's start")
    end: int = Field(description="Its last backward branch to the head")
    head: Optional[PeakSourceModel] = Field(description="The head's source line (null: no line table or no line)")
    back_branch: Optional[PeakSourceModel] = Field(description="The last backward branch's source line")


class PeakOriginModel(BaseModel):
    """VGPRs held at the peak that instructions of one mnemonic and line defined (report --pressure's
    vgpr_peak_origins)."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(description="32-bit VGPRs")
    defined_by: str = Field(description="The defining instructions' mnemonic, 'set at entry', or several joined "
                                        "by ' or ' (report --pressure's)")
    source: Optional[PeakSourceModel] = Field(description="Their source line (null: none, or several)")


class OriginChangeModel(BaseModel):
    """The VGPRs one origin holds at each side's peak (version 6)."""

    model_config = ConfigDict(extra="forbid")

    defined_by: str = Field(description="The mnemonic (as vgpr_peak_origins)")
    source: Optional[PeakSourceModel] = Field(description="Its line (the new side's where it lists the origin; "
                                                          "null: none, or a side without a line table: then "
                                                          "origins are matched by mnemonic alone)")
    old: Optional[int] = Field(description="VGPRs it holds at the old peak: 0 when the old side does not list "
                                           "it and its listed origins hold the whole peak; null when they do "
                                           "not (not known)")
    new: Optional[int] = Field(description="The same at the new peak")
    change: Optional[int] = Field(description="new - old (null: either not known)")


class PeakSideModel(BaseModel):
    """One side's live registers (report --pressure), its instance with the highest VGPR peak."""

    model_config = ConfigDict(extra="forbid")

    status: str = Field(description="'complete', 'partial: ...' or 'not read: ...' (report --pressure's status)")
    vgprs: int = Field(description="Peak live architectural VGPRs")
    agprs: int = Field(description="Peak live AGPRs")
    sgprs: int = Field(description="Peak live numbered SGPRs")
    vgpr_peak_offset: Optional[int] = Field(description="The first instruction at the VGPR peak, from the kernel's "
                                                        "start (null: no VGPR is ever live)")
    vgpr_peak_source: Optional[PeakSourceModel] = Field(description="Its source line (null: no line table or no line)")
    largest_group: Optional[PeakGroupModel] = Field(description="The largest group held at the VGPR peak (null: "
                                                                "no VGPR is ever live)")
    vgpr_curve: list[int] = Field(description="The VGPRs live along the code: the most in each of up to 64 equal "
                                              "stretches of code_bytes (report --pressure's; empty from a report "
                                              "without one)")
    code_bytes: int = Field(description="The bytes of code the curve's stretches divide (0: no curve)")
    loop: Optional[PeakLoopModel] = Field(description="The innermost loop holding the VGPR peak (null: outside "
                                                      "every loop, or a spillway.report/5 side; version 6)")
    vgpr_peak_origins: list[PeakOriginModel] = Field(description="What holds the VGPR peak summed by mnemonic and "
                                                                 "line, most first, at most 4 (version 6)")
    scratch_offsets: list[int] = Field(description="The scratch accesses' offsets (report --pressure's "
                                                   "scratch_offsets; empty from a spillway.report/5 side; "
                                                   "version 6)")


class PeakShiftModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    old: PeakSideModel
    new: PeakSideModel
    vgpr_change: int = Field(description="new.vgprs - old.vgprs")
    origin_changes: list[OriginChangeModel] = Field(description="Each origin either side lists at its VGPR peak, "
                                                                "matched by mnemonic and line (by mnemonic alone "
                                                                "when a side has no line table), most grown first, "
                                                                "those not known last (version 6)")
    grew_most: Optional[OriginChangeModel] = Field(description="The origin whose VGPRs at the peak grew most (the "
                                                               "text's '+32 from ds_read_b128 at gemm.hip:72'); "
                                                               "null: none grew, as known (the text then names the "
                                                               "largest group at the new peak; version 6)")


class CodeDiffModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verdict: CodeVerdict = Field(description="identical code: the same code SHA-256 on both sides; same "
                                             "figures, code changed: status same but other code; code not read: "
                                             "a side without machine code (a baseline, a report without --isa)")
    notes: list[Literal["spills moved into a loop", "spills moved out of the loops"]] = Field(
        description="spills moved into a loop: scratch_in_loops 0 before, more after; out: the reverse")
    old: Optional[CodeFiguresModel]
    new: Optional[CodeFiguresModel]
    mix: Optional[MixChangeModel] = Field(None, description="What changed in the instruction mix (null: a side "
                                                            "has none: not read, a report older than "
                                                            "spillway.report/4, or instances that differ)")
    lines: Optional[LinesChangeModel] = Field(None, description="Source lines that gained or lost scratch bytes "
                                                                "per lane in loops (null: a side has no DWARF "
                                                                "line table)")
    pressure: Optional[PeakShiftModel] = Field(None, description="Each side's live registers and the change of the "
                                                                 "VGPR peak (compare --pressure; null: a side has "
                                                                 "none: read without --pressure, a baseline, code "
                                                                 "not read; version 5)")


class DiffModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target: str
    key: str
    name: str
    status: Status
    worse: list[Literal["scratch", "spills", "occupancy"]]
    better: list[Literal["scratch", "spills", "occupancy"]]
    old: Resources
    new: Resources
    occupancy_next: Optional[OccupancyNext] = Field(description=NEXT_DESCRIPTION.format(side="new side"))
    code: Optional[CodeDiffModel] = Field(None, description="compare --isa only: what the kernel's machine "
                                                            "code did")


class OneSideModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target: str
    key: str
    name: str
    resources: Resources
    occupancy_next: Optional[OccupancyNext] = Field(description=NEXT_DESCRIPTION.format(side="kernel"))


class UnrecordedModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target: str
    key: str
    name: str
    resources: Resources
    occupancy_next: Optional[OccupancyNext] = Field(description=NEXT_DESCRIPTION.format(side="kernel"))
    status: Literal["worse", "same"] = Field(description="worse: over zero in a criterion of held_to_zero")
    held_to_zero: list[Literal["scratch", "spills"]] = Field(
        description="The criteria the baseline gates, which hold a kernel it does not record to zero (scratch: "
                    "no scratch and no dynamic stack; spills: no spilled register), as check holds it")
    worse: list[Literal["scratch", "spills"]] = Field(description="The criteria of held_to_zero it is over zero in")


class CodeCountModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    identical: int
    same_figures_code_changed: int
    changed: int
    not_read: int


class SummaryModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    compared: int = Field(description="Kernels (target, key) on both sides")
    spills_or_scratch_worse: int
    occupancy_worse: int
    worse: int
    mixed: int
    better: int
    same: int
    added: int = Field(description="Kernels only in NEW")
    removed: int = Field(description="Kernels only in OLD")
    added_using_scratch: int = Field(description="Kernels only in NEW that use scratch or spill")
    not_in_baseline: int = Field(description="Kernels of NEW a baseline written without --record-all on the OLD "
                                             "side does not record, on a target it was written from (never "
                                             "counted added)")
    not_in_baseline_worse: int = Field(description="Of those, the ones over zero in what the baseline holds "
                                                   "them to (also counted in spills_or_scratch_worse)")
    code: Optional[CodeCountModel] = Field(None, description="compare --isa only: kernels on both sides per "
                                                             "code verdict")


class MetricSums(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kernels: int = Field(description="Matched kernels whose figure is known on both sides")
    old: int
    new: int


class DynamicStacks(BaseModel):
    model_config = ConfigDict(extra="forbid")

    old: int = Field(description="Matched kernels with a dynamic stack in OLD")
    new: int


class MatchedTotals(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kernels: int = Field(description="Kernels (target, key) on both sides")
    scratch: MetricSums = Field(description="Scratch bytes per lane (private_segment_fixed_size), summed")
    spills: MetricSums = Field(description="Spilled registers (vgpr_spill_count + sgpr_spill_count), summed")
    vgprs: MetricSums = Field(description="VGPRs (vgpr_count), summed")
    occupancy: MetricSums = Field(description="Waves per SIMD, summed")
    losing_waves: int = Field(description="Matched kernels with lower occupancy in NEW")
    gaining_waves: int = Field(description="Matched kernels with higher occupancy in NEW")
    dynamic_stack: DynamicStacks


class SideTotals(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kernels: int
    scratch: int = Field(description="Scratch bytes per lane, summed")
    spills: int = Field(description="Spilled registers, summed")
    vgprs: int = Field(description="VGPRs, summed (unknown figures count 0)")
    using_scratch: int = Field(description="Kernels with scratch, spills or a dynamic stack")
    dynamic_stack: int


class TopKernel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target: str
    key: str
    name: str
    old: int
    new: int


class TopChanges(BaseModel):
    model_config = ConfigDict(extra="forbid")

    regressions: list[TopKernel] = Field(description="Largest changes for the worse first (at most 10)")
    improvements: list[TopKernel] = Field(description="Largest changes for the better first (at most 10)")


class TopPerMetric(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scratch: TopChanges
    spills: TopChanges
    vgprs: TopChanges
    occupancy: TopChanges


class TotalsModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    matched: MatchedTotals = Field(description="Over the kernels on both sides: before and after")
    added: SideTotals = Field(description="Over the kernels only in NEW")
    removed: SideTotals = Field(description="Over the kernels only in OLD")
    not_in_baseline: SideTotals = Field(description="Over the kernels of NEW not in a default baseline on the "
                                                    "OLD side (version 4)")
    top: TopPerMetric = Field(description="Per metric, among the matched kernels")


class CompareDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: Literal["spillway.compare/6"] = Field(COMPARE_SCHEMA, alias="schema")
    spillway_version: str
    occupancy_model: OccupancyModelChoice = Field(
        description="The one occupancy model applied to both sides (binaries read with it, report records "
                    "recomputed under it); a baseline's figures stay as recorded")
    new: list[str]
    old: list[str]
    summary: SummaryModel
    sentence: str
    totals: TotalsModel = Field(description="Whole-build totals (version 3)")
    kernels: list[DiffModel] = Field(description="Kernels on both sides, worst first")
    added: list[OneSideModel] = Field(description="Kernels only in NEW")
    removed: list[OneSideModel] = Field(description="Kernels only in OLD")
    not_in_baseline: list[UnrecordedModel] = Field(
        description="Kernels of NEW a baseline written without --record-all on the OLD side does not record "
                    "(version 4), worse first")


def json_schema() -> dict:
    """The JSON schema of ``compare --format json``."""
    return published_schema(CompareDocument, f"compare-{COMPARE_SCHEMA.rsplit('/', 1)[1]}.json")
