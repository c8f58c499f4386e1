"""Published schemas of the matrix's JSON documents: ``spillway matrix list
--json`` (spillway.matrix-list/2) and ``spillway matrix compare --json``
with no cell pair (spillway.matrix-summary/2).  The pydantic models are built
on demand (``spillway schema`` imports them; the matrix commands do not)."""

from __future__ import annotations

from typing import Final, Literal, Optional

from spillway.json_codec import published_schema

MATRIX_LIST_SCHEMA: Final = "spillway.matrix-list/2"
MATRIX_SUMMARY_SCHEMA: Final = "spillway.matrix-summary/2"


def list_json_schema() -> dict:
    from pydantic import BaseModel, ConfigDict, Field

    class CellEntry(BaseModel):
        model_config = ConfigDict(extra="forbid")

        name: str
        description: str
        toolchain: str = Field(description="e.g. 'ROCm 7.2.3, clang 22'")
        source: str = Field(description="nixpkgs, tarball or debian")
        local: bool = Field(description="Built here from Debian packages (not through Nix)")
        cxx: str = Field(description="The compiler command")
        targets: list[str]
        available: bool = Field(description="The toolchain runs on this machine")
        reason: str = Field(description="Why it is not available (empty when it is)")
        compiler: str = Field(description="First line of the compiler's --version (empty when unavailable)")
        baseline: str = Field(description="The cell's baseline, relative to the root")
        baseline_exists: bool

    class MatrixList(BaseModel):
        model_config = ConfigDict(extra="forbid")

        schema_: Literal["spillway.matrix-list/2"] = Field(MATRIX_LIST_SCHEMA, alias="schema")
        spillway_version: str
        cells_file: str
        summary: dict[str, int] = Field(description="Counts: cells, available")
        cells: list[CellEntry]

    return published_schema(MatrixList, "matrix-list-2.json")


def summary_json_schema() -> dict:
    from pydantic import BaseModel, ConfigDict, Field

    from spillway.gate.kernels import Resources   # the one resource record (worst values per kernel)
    from spillway.report.record import OccupancyModelChoice

    class CellRef(BaseModel):
        model_config = ConfigDict(extra="forbid")

        name: str
        toolchain: str
        targets: list[str] = Field(description="Processors the cell built")

    class Row(BaseModel):
        model_config = ConfigDict(extra="forbid")

        name: str = Field(description="Short name: no return type, no parameters, no versioned namespaces")
        key: str = Field(description="Stable mangled key")
        target: str = Field(description="Target group: the processor, or gfx11 for every gfx11 part")
        cells: dict[str, Optional[Resources]] = Field(description="Per cell; null where the cell did not "
                                                                   "build this kernel")

    class MatrixSummary(BaseModel):
        model_config = ConfigDict(extra="forbid")

        schema_: Literal["spillway.matrix-summary/2"] = Field(MATRIX_SUMMARY_SCHEMA, alias="schema")
        spillway_version: str
        occupancy_model: OccupancyModelChoice = Field(
            description="The occupancy model every cell's figures follow (--occupancy-model, default "
                        "llvm23; producer: per code object, the producing LLVM's)")
        cells: list[CellRef]
        kernels: list[Row]

    return published_schema(MatrixSummary, "matrix-summary-2.json")
