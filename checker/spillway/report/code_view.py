"""``spillway code``'s document: named kernels' loops and the instructions
behind their evidence (isa.listing), as JSON (spillway.code/1) or text.

The model is a list of ViewedKernel (a report record's place and names,
and its KernelListing); ``code_document`` is its JSON, render.code its text.
Offsets are bytes from the kernel's start, as objdump's ``<kernel+0x..>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from spillway import __version__
from spillway.isa.listing import KernelListing
from spillway.report.code_evidence import isa_object

CODE_SCHEMA: Final = "spillway.code/1"
# The record's members a viewed kernel keeps (where it is, what it is).
PLACE_FIELDS: Final = ("file", "bundle_index", "target", "name", "symbol")


@dataclass(frozen=True)
class ViewedKernel:
    record: dict              # the kernel's report record (PLACE_FIELDS are used)
    listing: KernelListing


def kernel_object(viewed: ViewedKernel) -> dict:
    listing = viewed.listing
    found = {name: viewed.record.get(name) for name in PLACE_FIELDS}
    found["isa"] = isa_object(listing.code)
    found["loops"] = [{"start": loop.start, "end": loop.end, "branches": loop.branches, "depth": loop.depth,
                       "innermost": loop.innermost} for loop in listing.loops]
    found["instructions"] = [{"offset": i.offset, "length": i.length, "mnemonic": i.mnemonic, "kind": i.kind,
                              "bytes": i.bytes, "loop_depth": i.loop_depth, "role": i.role or None}
                             for i in listing.instructions]
    return found


def code_document(kernels: list[ViewedKernel]) -> dict:
    return {"schema": CODE_SCHEMA, "spillway_version": __version__, "kernels": [kernel_object(k) for k in kernels]}


def json_schema() -> dict:
    """The JSON schema of ``spillway code --format json`` (pydantic built on demand)."""
    from typing import Literal, Optional

    from pydantic import BaseModel, ConfigDict, Field

    from spillway.isa.listing import KINDS, ROLES
    from spillway.report.record import KernelIsa

    class LoopModel(BaseModel):
        model_config = ConfigDict(extra="forbid")

        start: int = Field(description="The loop's head: the target of its backward branches, bytes from the "
                                       "kernel's start")
        end: int = Field(description="Offset of the last backward branch to the head")
        branches: int = Field(description="Backward branches (s_branch/s_cbranch_*) to the head")
        depth: int = Field(description="Loops holding this one, itself included (1: outermost)")
        innermost: bool = Field(description="Holds no other loop")

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

    class CodeModel(BaseModel):
        """spillway code --format json: named kernels' loops and the instructions behind their evidence."""

        model_config = ConfigDict(extra="forbid", populate_by_name=True)

        schema_: Literal["spillway.code/1"] = Field(CODE_SCHEMA, alias="schema")
        spillway_version: str
        kernels: list[KernelModel]

    schema = CodeModel.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://spillway.dev/schemas/code-1.json"
    return schema
