"""The published JSON schema of ``spillway compare --format json`` (spillway.compare/2)."""

from __future__ import annotations

from typing import Literal, Optional

from spillway.gate.compare import COMPARE_SCHEMA, Status
from spillway.gate.kernels import Resources


def json_schema() -> dict:
    """The JSON schema of ``compare --format json``.  The pydantic models are
    built here, on demand, so that every run of the CLI does not pay for
    importing pydantic."""
    from pydantic import BaseModel, ConfigDict, Field

    from spillway.report.record import OccupancyModelChoice, OccupancyNext

    # The resource record is gate.kernels.Resources itself (one definition, as in baselines), and the
    # next step the report's OccupancyNext.
    next_description = ("The {side}'s occupancy_next, under occupancy_model: null at the hardware cap, when "
                        "nothing in the binary raises the figure, or when that side is a baseline (it keeps no "
                        "wave size or work-group bound)")

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
        occupancy_next: Optional[OccupancyNext] = Field(description=next_description.format(side="new side"))


    class OneSideModel(BaseModel):
        model_config = ConfigDict(extra="forbid")

        target: str
        key: str
        name: str
        resources: Resources
        occupancy_next: Optional[OccupancyNext] = Field(description=next_description.format(side="kernel"))


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


    class CompareDocument(BaseModel):
        model_config = ConfigDict(extra="forbid")

        schema_: Literal["spillway.compare/2"] = Field(COMPARE_SCHEMA, alias="schema")
        spillway_version: str
        occupancy_model: OccupancyModelChoice = Field(
            description="The one occupancy model applied to both sides (binaries read with it, report records "
                        "recomputed under it); a baseline's figures stay as recorded")
        new: list[str]
        old: list[str]
        summary: SummaryModel
        sentence: str
        kernels: list[DiffModel] = Field(description="Kernels on both sides, worst first")
        added: list[OneSideModel] = Field(description="Kernels only in NEW")
        removed: list[OneSideModel] = Field(description="Kernels only in OLD")

    schema = CompareDocument.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://spillway.dev/schemas/compare-2.json"
    return schema
