"""The published JSON schema of ``spillway check --json`` (spillway.check/2)."""

from __future__ import annotations

from typing import Literal, Optional

from spillway.gate.check import CHECK_SCHEMA
from spillway.gate.metrics import MetricName


def json_schema() -> dict:
    """The JSON schema of ``check --json``.  The pydantic models are built here,
    on demand, so that every run of the CLI does not pay for importing pydantic."""
    from pydantic import BaseModel, ConfigDict, Field

    from spillway.report.record import OccupancyModelChoice

    class CheckFailure(BaseModel):
        model_config = ConfigDict(extra="forbid")

        target: str
        key: str = Field(description="Stable mangled key")
        name: str = Field(description="Demangled name")
        metric: MetricName
        allowed: Optional[int] = Field(description="Allowance (a floor for occupancy)")
        actual: Optional[int]
        new_kernel: bool = Field(description="The kernel is not in the baseline and was held to zero "
                                             "scratch and spills")
        dynamic_stack: bool = Field(description="scratch: the kernel uses a dynamic stack the baseline "
                                                "does not allow")


    class KernelRef(BaseModel):
        model_config = ConfigDict(extra="forbid")

        target: str
        key: str
        name: str


    class CheckCounts(BaseModel):
        model_config = ConfigDict(extra="forbid")

        kernels: int = Field(description="Distinct (target, key) kernels checked")
        failed_kernels: int = Field(description="Kernels over their allowance in at least one metric")
        failures: int = Field(description="(kernel, metric) pairs over their allowance")
        by_metric: dict[str, int] = Field(description="Failing kernels per metric")
        added: int = Field(description="Kernels not in the baseline")
        removed: int = Field(description="Baseline kernels no longer built")


    class CheckDocument(BaseModel):
        model_config = ConfigDict(extra="forbid")

        schema_: Literal["spillway.check/2"] = Field(CHECK_SCHEMA, alias="schema")
        spillway_version: str
        occupancy_model: OccupancyModelChoice = Field(
            description="The occupancy model the build's figures follow: the one the baseline was written with "
                        "unless --occupancy-model overrides it (a version-1 baseline names none: llvm22); "
                        "producer: per code object, the producing LLVM's")
        baseline: str = Field(description="Path of the baseline file")
        gate: list[MetricName] = Field(description="Metrics checked")
        passed: bool
        summary: CheckCounts = Field(description="Counts")
        sentence: str = Field(description="The verdict as one sentence")
        failures: list[CheckFailure]
        added: list[KernelRef] = Field(description="Kernels not in the baseline (held to zero scratch and "
                                                   "spills)")
        removed: list[KernelRef] = Field(description="Baseline kernels no longer built (a note, not a failure)")

    schema = CheckDocument.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://spillway.dev/schemas/check-2.json"
    return schema
