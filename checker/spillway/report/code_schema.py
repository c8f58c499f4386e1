"""The published JSON schema of ``spillway code --format json``
(spillway.code/4; report.code_view writes the document).  Its models live
here, apart from code_view, so that only ``spillway schema`` (spillway.schemas
names this module, imported on demand) pays for pydantic."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from spillway.isa.listing import KINDS, ROLES
from spillway.isa.liveness import LOOP_HOLDERS
from spillway.json_codec import published_schema
from spillway.report.code_view import CODE_SCHEMA
from spillway.report.record import (CURVE_CODE_BYTES, VGPR_CURVE, AtPeakModel, KernelIsa, LineTrafficRecord,
                                    PeakModel, PeakOrigin, PressurePeaks, SourceModel)


class SourceLinesModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: str = Field(description="placed; or why there are no lines: 'no line table', 'no line-table row "
                                    "covers the kernel', 'code differs from the debug twin', 'no such kernel in "
                                    "the debug twin'")
    lines_from: Optional[Literal["code object", "debug twin"]] = Field(
        description="Where the lines came from: the kernel's own code object, or the debug twin given with "
                    "--lines-from (null: none)")
    comp_dir: str = Field(description="DW_AT_comp_dir of the compile unit holding the kernel's rows")
    code_sha256: str = Field(description="The kernel's code (isa.code_sha256)")
    lines_code_sha256: Optional[str] = Field(description="The code the lines describe: the twin's kernel's "
                                                         "with --lines-from (lines only where equal)")
    by_line: list[LineTrafficRecord] = Field(description="Per source line: the scratch traffic and AGPR copies "
                                                         "placed there, most innermost-loop bytes first")


class LoopPeakModel(BaseModel):
    """One loop's own peaks: the most registers of each file live at an instruction inside the loop (its head
    to its last backward branch, both included; isa.liveness.LoopPeak, version 4)."""

    model_config = ConfigDict(extra="forbid")

    vgprs: PeakModel = Field(description="Architectural VGPRs: the most live inside the loop, and the first "
                                         "offset there")
    agprs: PeakModel = Field(description="AGPRs (gfx908, gfx90a, gfx94x, gfx950)")
    sgprs: PeakModel = Field(description="Numbered SGPRs")
    source: Optional[SourceModel] = Field(description="The source line of the loop's VGPR peak (null: no line "
                                                      "table, no line, or no VGPR live)")
    held_by: Optional[list[PeakOrigin]] = Field(
        description="The VGPRs live at the loop's VGPR peak summed by what defined them (as report --pressure's "
                    "vgpr_peak_origins, every sum: they add up to vgprs.peak), most first; null for a loop beyond "
                    f"the {LOOP_HOLDERS} with the most VGPRs whose peak instruction is not one of theirs (not "
                    "worked out: each costs a pass over the kernel)")


class LoopSpanModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    start: int = Field(description="The loop's head (loops[].start)")
    end: int = Field(description="Its last backward branch (loops[].end)")


class LoopModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    start: int = Field(description="The loop's head: the target of its backward branches, bytes from the "
                                   "kernel's start")
    end: int = Field(description="Offset of the last backward branch to the head")
    branches: int = Field(description="Backward branches (s_branch/s_cbranch_*) to the head")
    depth: int = Field(description="Loops holding this one, itself included (1: outermost)")
    innermost: bool = Field(description="Holds no other loop")
    head: Optional[SourceModel] = Field(description="The source line of the loop's first instruction")
    back_branch: Optional[SourceModel] = Field(description="The source line of its last backward branch")
    peak: Optional[LoopPeakModel] = Field(description="The loop's own peaks and what holds its VGPR peak (null: "
                                                      "the registers were not read; version 4)")


class InstructionModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    offset: int = Field(description="Bytes from the kernel's start (llvm-objdump's <kernel+0x..>)")
    length: int = Field(description="Bytes")
    mnemonic: str = Field(description="As llvm-objdump -d prints it")
    kind: Literal[KINDS] = Field(description="What the evidence counts it as")  # type: ignore[valid-type]
    bytes: Optional[int] = Field(description="Scratch accesses: bytes per lane the mnemonic names (null: "
                                             "none named, or not a scratch access)")
    loop_depth: int = Field(description="Loops holding the instruction (0: outside every loop)")
    role: Optional[Literal[ROLES]] = Field(  # type: ignore[valid-type]
        description="Scratch accesses: 'slot' (no VGPR address: counted in isa.scratch_slot_*_bytes) or "
                    "'addressed' (isa.scratch_addressed_*_bytes); AGPR copies: 'spill copy' "
                    "(isa.agpr_spill_copies) or 'accumulator move' (isa.agpr_accumulator_moves); null for "
                    "matrix ops and calls")
    source: Optional[SourceModel] = Field(description="Scratch accesses and AGPR copies: the source line "
                                                      "(null: no line table, no row, a line-0 row with no "
                                                      "earlier line in its block; matrix ops and calls)")


class PressureModel(PressurePeaks):
    """The kernel's live registers from its machine code (isa.liveness; version 3)."""

    model_config = ConfigDict(extra="forbid")

    at_peaks: list[AtPeakModel] = Field(description="What holds each file's peak (files with a peak above 0)")
    vgpr_curve: list[int] = Field(description=VGPR_CURVE)
    code_bytes: int = Field(description=CURVE_CODE_BYTES)
    loop: Optional[LoopSpanModel] = Field(description="The innermost loop holding the VGPR peak (the one with "
                                                      "the latest head of those whose span holds it; null: "
                                                      "outside every loop, or no VGPR live; version 4)")


class StepModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    offset: int = Field(description="Bytes from the kernel's start")
    length: int = Field(description="Bytes")
    mnemonic: str = Field(description="As llvm-objdump -d prints it")
    defs: Optional[list[str]] = Field(description="Registers it defines ('v5', 'v[4:7]', 'a0', 's[0:1]'; null: "
                                                  "operands not read)")
    uses: Optional[list[str]] = Field(description="Registers it uses (a destination that keeps part of its old "
                                                  "value is in both)")
    vgprs: int = Field(description="VGPRs live at it: (live-in | defs) & may be defined")
    agprs: int
    sgprs: int
    undefined_read: bool = Field(description="It reads a register no path from the entry has written")


class KernelModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file: str
    bundle_index: Optional[int]
    target: str
    name: str
    symbol: str
    isa: KernelIsa = Field(description="The kernel's evidence, as report --isa's isa object")
    loops: list[LoopModel] = Field(description="Loops by head offset: isa.loop_spans grouped by their target")
    instructions: list[InstructionModel] = Field(description="Each scratch access, AGPR copy, matrix op and "
                                                             "call, by offset")
    pressure: Optional[PressureModel] = Field(description="The live registers: peaks and status (version 3)")
    all_instructions: Optional[list[StepModel]] = Field(
        None, description="With --all-instructions: every instruction, its operands and the registers live at "
                          "it (version 3)")
    source_lines: SourceLinesModel = Field(description="Where the kernel's lines came from, and the per-line "
                                                       "summary (version 2)")


class CodeModel(BaseModel):
    """spillway code --format json: named kernels' loops and the instructions behind their evidence."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["spillway.code/4"] = Field(CODE_SCHEMA, alias="schema")
    spillway_version: str
    kernels: list[KernelModel]


def json_schema() -> dict:
    """The JSON schema of ``spillway code --format json``."""
    return published_schema(CodeModel, "code-4.json")
