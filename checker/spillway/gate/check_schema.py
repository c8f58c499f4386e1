"""The published JSON schema of ``spillway check --json`` (spillway.check/4:
version 3 with a failure's optional ``code.vgpr_peak`` (check --pressure);
version 3: version 2 with ``removed_targets`` and ``fewer_kernels``, the
kernels and targets no longer built failing the check, and each failure's
optional ``source`` and ``code``; docs/schemas/check-2.json and check-3.json
stay published).

Its models live here, apart from gate.check, so that only ``spillway schema``
(spillway.schemas names this module, imported on demand) pays for them."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from spillway.constants import INFERRED_LINE
from spillway.gate.check import CHECK_SCHEMA
from spillway.gate.metrics import MetricName
from spillway.report.record import OccupancyModelChoice
from spillway.json_codec import published_schema


class SourceModel(BaseModel):
    """gate.source_location: the kernel's line with the most scratch traffic, else its first
    instruction's, in a file under the source root."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="Relative to the source root (check --source-root, default the current "
                                  "directory), forward slashes")
    line: int
    column: int = Field(description="0: the line table names none")
    inferred: bool = Field(description=INFERRED_LINE[0].upper() + INFERRED_LINE[1:])
    chosen_by: Literal["the line with the most scratch traffic", "the kernel's first instruction"]


class HeldByModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    count: int = Field(description="VGPRs")
    defined_by: str = Field(description="The defining instructions' mnemonic, or several joined by ' or ' "
                                        "(isa.liveness.origin)")
    source: Optional[PeakSourceModel] = Field(description="Their source line, when one instruction defined each "
                                                          "group and the code object has a line table")


class PeakNoteModel(BaseModel):
    """gate.failure_code.PeakNote: a failing kernel's VGPR peak (isa.liveness)."""

    model_config = ConfigDict(extra="forbid")

    vgprs: int = Field(description="The most VGPRs live at once")
    offset: int = Field(description="The first instruction where they are, bytes from the kernel's start")
    status: str = Field(description="The liveness' status: complete, or partial: ... (the peak covers what was read)")
    source: Optional[PeakSourceModel] = Field(description="Its source line (null: no line table, or no line)")
    held_by: list[HeldByModel] = Field(description="What holds the peak, summed by what defined it, most first "
                                                   "(at most 4)")


class PeakSourceModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="As the line table names it (from the binary)")
    line: int
    column: int = Field(description="0: the line table names none")
    inferred: bool = Field(description=INFERRED_LINE[0].upper() + INFERRED_LINE[1:])


class CodeModel(BaseModel):
    """gate.failure_code: the failing kernel's machine code, each figure at its worst instance."""

    model_config = ConfigDict(extra="forbid")

    scratch_load_bytes: int = Field(description="Bytes per lane the scratch loads name")
    scratch_store_bytes: int = Field(description="Bytes per lane the scratch stores name")
    scratch_accesses: int = Field(description="Scratch loads + stores")
    scratch_in_loops: int = Field(description="Of them, inside loops")
    agpr_copies: int = Field(description="v_accvgpr_write + v_accvgpr_read")
    calls: int = Field(description="Calls (the callees' code is not in the figures)")
    status: str = Field(description="\"complete\", or the first instance's decoding status that is not (the "
                                    "figures cover the code read before it)")
    instances: int = Field(description="Instances of the kernel (code objects) read; each figure is the worst")
    vgpr_peak: Optional[PeakNoteModel] = Field(None, description="check --pressure: the VGPR peak of the instance "
                                                                 "with the most (version 4)")


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
    source: Optional[SourceModel] = Field(None, description="Where the kernel is in the repository, when its "
                                                            "binary has a DWARF line table (json and sarif "
                                                            "formats; absent otherwise)")
    code: Optional[CodeModel] = Field(None, description="The kernel's machine code, read again from the binaries "
                                                        "of a failing check (absent for report JSON inputs)")


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
    removed: int = Field(description="Baseline kernels no longer built (those of removed targets not counted)")
    removed_targets: int = Field(description="Targets no longer built")


class RemovedTarget(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target: str
    kernels_written_from: Optional[int] = Field(description="The kernels the baseline was written from on it "
                                                            "(null: not known)")
    declared: bool = Field(description="The build declares the target (a matrix cell's targets in cells.toml)")
    in_baseline: bool = Field(description="The baseline was written from the target")


class FewerKernels(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target: str
    built: int = Field(description="Distinct kernels the build has on the target")
    written_from: int = Field(description="Distinct kernels the baseline was written from on it")
    unnamed: int = Field(description="At least this many of the kernels the baseline does not record are no "
                                     "longer built (written_from - built - the recorded kernels gone)")


class CheckDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: Literal["spillway.check/4"] = Field(CHECK_SCHEMA, alias="schema")
    spillway_version: str
    occupancy_model: OccupancyModelChoice = Field(
        description="The occupancy model the build's figures follow: the one the baseline was written with "
                    "unless --occupancy-model overrides it (a version-1 baseline names none: llvm22); "
                    "producer: per code object, the producing LLVM's")
    baseline: str = Field(description="Path of the baseline file")
    gate: list[MetricName] = Field(description="Metrics checked")
    passed: bool = Field(description="No kernel over its allowance, and every baseline kernel and target (and "
                                     "every declared target) still built")
    summary: CheckCounts = Field(description="Counts")
    sentence: str = Field(description="The verdict as one sentence")
    failures: list[CheckFailure]
    added: list[KernelRef] = Field(description="Kernels not in the baseline (held to zero scratch and "
                                               "spills)")
    removed: list[KernelRef] = Field(description="Baseline kernels no longer built, on targets still built (a "
                                                 "failure: baseline write --allow-removed KEY --reason TEXT "
                                                 "accepts it)")
    removed_targets: list[RemovedTarget] = Field(
        description="Targets with no kernel in the build that the baseline was written from or the build "
                    "declares (a failure: baseline write --allow-removed-target TARGET --reason TEXT accepts it)")
    fewer_kernels: list[FewerKernels] = Field(
        description="A baseline written without --record-all: targets the build has fewer kernels on than the "
                    "baseline was written from (a note: the kernels it does not record cannot be named)")


def json_schema() -> dict:
    """The JSON schema of ``check --json``."""
    return published_schema(CheckDocument, f"check-{CHECK_SCHEMA.rsplit('/', 1)[1]}.json")
