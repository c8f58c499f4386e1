"""``spillway code``'s document: named kernels' loops and the instructions
behind their evidence (isa.listing), as JSON (spillway.code/2) or text.

The model is a list of ViewedKernel (a report record's place and names,
its KernelListing and its source lines, isa.source_lines.KernelLines);
``code_document`` is its JSON, render.code its text.  Offsets are bytes from
the kernel's start, as objdump's ``<kernel+0x..>``.  Version 2 added the
instruction mix to ``isa`` and the source lines: each scratch access's and
AGPR copy's ``source``, each loop's ``head`` and ``back_branch``, and the
kernel's ``source_lines`` (where the lines came from, the per-line summary).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from spillway import __version__
from spillway.isa.listing import KernelListing
from spillway.isa.source_lines import KernelLines, SourceLine, line_object, without_lines
from spillway.report.code_evidence import isa_object
from spillway.json_codec import published_schema

CODE_SCHEMA: Final = "spillway.code/2"
# The record's members a viewed kernel keeps (where it is, what it is).
PLACE_FIELDS: Final = ("file", "bundle_index", "target", "name", "symbol")


@dataclass(frozen=True)
class ViewedKernel:
    record: dict              # the kernel's report record (PLACE_FIELDS are used)
    listing: KernelListing
    lines: KernelLines | None = None     # None: not asked for (read as "no line table")


def source_object(source: SourceLine | None) -> dict | None:
    """A placed instruction's line as JSON (None: it has none)."""
    if source is None:
        return None
    return {"file": source.file, "line": source.line, "column": source.column, "inferred": source.inferred}


def lines_of(viewed: ViewedKernel) -> KernelLines:
    return viewed.lines if viewed.lines is not None else without_lines(viewed.listing.code.code_sha256)


def kernel_object(viewed: ViewedKernel) -> dict:
    listing = viewed.listing
    lines = lines_of(viewed)
    found = {name: viewed.record.get(name) for name in PLACE_FIELDS}
    found["isa"] = isa_object(listing.code)
    heads = {placed.loop.start: placed for placed in lines.loops}
    found["loops"] = [{"start": loop.start, "end": loop.end, "branches": loop.branches, "depth": loop.depth,
                       "innermost": loop.innermost,
                       "head": source_object(heads[loop.start].head) if loop.start in heads else None,
                       "back_branch": source_object(heads[loop.start].back_branch) if loop.start in heads else None}
                      for loop in listing.loops]
    placed = {p.instruction.offset: p.source for p in (*lines.scratch, *lines.agpr_copies)}
    found["instructions"] = [{"offset": i.offset, "length": i.length, "mnemonic": i.mnemonic, "kind": i.kind,
                              "bytes": i.bytes, "loop_depth": i.loop_depth, "role": i.role or None,
                              "source": source_object(placed.get(i.offset))}
                             for i in listing.instructions]
    found["source_lines"] = {"status": lines.status, "lines_from": lines.lines_from or None,
                             "comp_dir": lines.comp_dir, "code_sha256": lines.code_sha256,
                             "lines_code_sha256": lines.lines_code_sha256 or None,
                             "by_line": [line_object(row) for row in lines.by_line]}
    return found


def code_document(kernels: list[ViewedKernel]) -> dict:
    return {"schema": CODE_SCHEMA, "spillway_version": __version__, "kernels": [kernel_object(k) for k in kernels]}


def json_schema() -> dict:
    """The JSON schema of ``spillway code --format json`` (pydantic built on demand)."""
    from typing import Literal, Optional

    from pydantic import BaseModel, ConfigDict, Field

    from spillway.isa.listing import KINDS, ROLES
    from spillway.report.record import KernelIsa, LineTrafficRecord

    class SourceModel(BaseModel):
        """An instruction's source line (DWARF line table: llvm-objdump -d -l's line at its address)."""

        model_config = ConfigDict(extra="forbid")

        file: str = Field(description="The path as the line table joins it (absolute when the build's were)")
        line: int = Field(description="From 1")
        column: int = Field(description="0: the row names no column")
        inferred: bool = Field(description="The row said line 0 (code LLVM gives no line, often spill code): the "
                                           "line of the nearest preceding instruction of the same basic block")

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
        source_lines: SourceLinesModel = Field(description="Where the kernel's lines came from, and the per-line "
                                                           "summary (version 2)")

    class CodeModel(BaseModel):
        """spillway code --format json: named kernels' loops and the instructions behind their evidence."""

        model_config = ConfigDict(extra="forbid", populate_by_name=True)

        schema_: Literal["spillway.code/2"] = Field(CODE_SCHEMA, alias="schema")
        spillway_version: str
        kernels: list[KernelModel]

    return published_schema(CodeModel, "code-2.json")
