"""The report document: ``{"schema": "spillway.report/6", "files": [...],
"kernels": [...]}``.  Field names of kernel records are the AMDGPU metadata
keys (without the leading dot) so users can cross-check with
``llvm-readelf --notes``."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from spillway.constants import INFERRED_LINE, REPORT_SCHEMA as SCHEMA, SCRATCH_OFFSETS
from spillway.resources.occupancy import UNNAMED_MODEL
from spillway.json_codec import published_schema

ScratchCause = Literal["none", "spill", "private", "dynamic_stack"]
OccupancyLimit = Literal["vgpr", "sgpr", "lds", "workgroup", "hardware", "unknown target"]
OccupancyModelName = Literal["llvm22", "llvm23", "llvm24"]
# What a document names as the model it used (--occupancy-model): a model, or producer.
OccupancyModelChoice = Literal["llvm22", "llvm23", "llvm24", "producer"]


# How paths that are not UTF-8 are kept (spillway.paths).
PATH_ENCODING = ("; a path byte that is not UTF-8 is written as the JSON escape \\udcXX (XX its hex value, "
                 "80-ff: Python's surrogateescape, PEP 383), so the exact bytes come back; \"-\" is standard input")

class OccupancyNeed(BaseModel):
    model_config = ConfigDict(extra="forbid")

    resource: Literal["vgpr", "agpr", "sgpr", "lds", "workgroup"] = Field(
        description="vgpr is vgpr_count (on gfx90a/gfx942/gfx950 the unified VGPR+AGPR total); lds is "
                    "group_segment_fixed_size in bytes; workgroup is max_flat_workgroup_size")
    at_most: int = Field(description="The largest value of the resource that reaches `waves`")


class OccupancyNext(BaseModel):
    """What the limiting resources must come down to for one more wave per SIMD."""

    model_config = ConfigDict(extra="forbid")

    waves: int = Field(description="Waves per SIMD the kernel reaches with every need met")
    needs: list[OccupancyNeed] = Field(description="Every resource that must come down (several when "
                                                   "two limits hold the kernel at the same figure)")


class InstructionMix(BaseModel):
    """Instructions per class (spillway.isa.mix; docs/isa.md, "Instruction mix"): the first class whose rule
    matches the mnemonic; they add up to ``instructions``."""

    model_config = ConfigDict(extra="forbid")

    valu: int = Field(description="v_* that are not matrix ops or AGPR copies (VOPD pairs, v_interp* too)")
    salu: int = Field(description="s_* in no other class")
    vmem: int = Field(description="buffer_*, tbuffer_*, global_*, flat_*, image_*, cluster_*, tensor_*, and "
                                  "scratch_*/buffer_* that are not counted scratch accesses")
    smem: int = Field(description="s_load_*, s_buffer_*, s_store_*, s_scratch_*, s_atomic_*, s_dcache_*, "
                                  "s_memtime, s_memrealtime, s_atc_probe*, s_prefetch_*, s_gl1_inv, "
                                  "s_get_waveid_in_workgroup")
    lds: int = Field(description="ds_*, lds_*")
    matrix: int = Field(description="v_mfma*, v_smfmac*, v_wmma*, v_swmmac*")
    scratch: int = Field(description="The counted scratch accesses: scratch_loads + scratch_stores")
    agpr_copy: int = Field(description="v_accvgpr_* (write, read, mov)")
    branch: int = Field(description="s_branch, s_cbranch_*, s_setpc_*, s_set_pc_*, s_swappc_*, s_swap_pc_*, "
                                    "s_call_*, s_rfe_*, s_subvector_loop_*")
    waitcnt: int = Field(description="s_waitcnt*, s_wait_*")
    other: int = Field(description="exp, export, s_nop, s_endpgm*, s_barrier*, s_sendmsg*, s_sleep*, s_wakeup*, "
                                   "s_setprio*, s_trap, s_clause, s_delay_alu and the other program-control "
                                   "mnemonics isa.mix names; any mnemonic no rule names")


class LineTrafficRecord(BaseModel):
    """What the scratch accesses and AGPR copies placed on one source line do (isa.source_lines.LineTraffic;
    bytes per lane)."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="The source file as the line table joins it (absolute when the build's paths "
                                  "were); \"\" with line 0: the accesses no line was found for")
    line: int
    load_bytes: int
    store_bytes: int
    loop_load_bytes: int = Field(description="Of which inside at least one loop span")
    loop_store_bytes: int
    innermost_load_bytes: int = Field(description="Of which inside an innermost loop span")
    innermost_store_bytes: int
    accesses: int = Field(description="Scratch accesses")
    inferred: int = Field(description=f"Of which placed by inference ({INFERRED_LINE})")
    agpr_copies: int = Field(description="v_accvgpr_write/read")
    agpr_spill_copies: int = Field(description="Of which spill copies (not accumulator moves)")


class SourceLines(BaseModel):
    """report --isa on a code object with a DWARF line table: the kernel's source lines with the most scratch
    traffic in loops."""

    model_config = ConfigDict(extra="forbid")

    status: str = Field(description="placed (a kernel without scratch accesses or AGPR copies has nothing to "
                                    "place: top is empty); 'no line-table row covers the kernel' (one with "
                                    "some); or 'line table not read: ...' (a malformed table: the rest of the "
                                    "record stands)")
    comp_dir: str = Field(description="DW_AT_comp_dir of the compile unit holding the kernel's rows (a kernel "
                                      "with nothing to place: the code object's units' one directory, \"\" when "
                                      "they name several)")
    top: list[LineTrafficRecord] = Field(description="Source lines with scratch bytes in loops, most innermost-"
                                                     "loop bytes first, then loop bytes (at most 8)")
    more: int = Field(description="Further lines with scratch bytes in loops, not listed")


class SourceModel(BaseModel):
    """An instruction's source line (DWARF line table: llvm-objdump -d -l's line at its address)."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="The path as the line table joins it (absolute when the build's were)")
    line: int = Field(description="From 1")
    column: int = Field(description="0: the row names no column")
    inferred: bool = Field(description=INFERRED_LINE[0].upper() + INFERRED_LINE[1:])


class PeakModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    peak: int = Field(description="The most registers of the file live at once (32-bit registers)")
    offset: Optional[int] = Field(description="The first instruction where that many are live, bytes from the "
                                              "kernel's start (null: none is ever live)")


class HolderModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    registers: list[str] = Field(description="The registers, as runs ('v[40:71]', 'v80')")
    count: int = Field(description="32-bit registers")
    defined_at: list[int] = Field(description="Offsets of the instructions whose values may reach the peak in "
                                              "them (several: defined on several paths)")
    defined_by: list[str] = Field(description="Those instructions' mnemonics")
    defined_source: list[Optional[SourceModel]] = Field(description="The source line of each of defined_at "
                                                                    "(null: no line table, or no line)")
    from_entry: bool = Field(description="Some path reaches the peak with the value the hardware set at entry")
    last_used_at: list[int] = Field(description="Offsets after which no path from the peak needs them (their "
                                                "last reads, or a loop's exit branch)")
    last_used_source: list[Optional[SourceModel]] = Field(description="The source line of each of last_used_at")


class AtPeakModel(BaseModel):
    """What holds one register file's peak (issue 41)."""

    model_config = ConfigDict(extra="forbid")

    file: Literal["v", "a", "s"] = Field(description="VGPRs, AGPRs or SGPRs")
    offset: int = Field(description="The peak instruction (the first where the peak is reached)")
    source: Optional[SourceModel] = Field(description="Its source line (null: no line table, or no line)")
    groups: list[HolderModel] = Field(description="The live registers grouped by the instructions that defined "
                                                  "them, most registers first; they add up to the peak")


class PeakLoopModel(BaseModel):
    """The innermost loop holding the VGPR peak (version 6)."""

    model_config = ConfigDict(extra="forbid")

    start: int = Field(description="Its head (the target of its backward branches), bytes from the kernel's start, "
                                   "as loop_spans (spillway code's loops: loop_spans grouped by their target)")
    end: int = Field(description="Its last backward branch to the head")
    head: Optional[SourceModel] = Field(description="The head's source line (null: no line table, or no line)")
    back_branch: Optional[SourceModel] = Field(description="The last backward branch's source line")


class ReportAtPeakModel(AtPeakModel):
    """What holds the VGPR peak (report --pressure): its line, the loop holding it, the largest group."""

    model_config = ConfigDict(extra="forbid")

    loop: Optional[PeakLoopModel] = Field(None, description="The innermost loop holding the peak instruction, its "
                                                            "lines placed as spillway code's loop heads (null: "
                                                            "outside every loop; absent before version 6)")


VGPR_CURVE = ("VGPR pressure along the code: the most VGPRs live in each of up to 64 equal stretches of "
              "code_bytes (fewer for a short kernel)")
CURVE_CODE_BYTES = "The bytes of code read (the curve's stretches divide them)"


class PressurePeaks(BaseModel):
    """A kernel's live registers from its machine code: peaks and status (isa.liveness)."""

    model_config = ConfigDict(extra="forbid")

    status: str = Field(description="'complete'; 'partial: ...' naming each reason with its first offset (a "
                                    "call, an indirect branch, a branch out of the kernel, an undecodable word, "
                                    "operands not read, indexed register access, VGPR MSB state): the peaks "
                                    "cover what was read; or 'not read: ...' (no operand table for the target)")
    vgprs: PeakModel = Field(description="Architectural VGPRs")
    agprs: PeakModel = Field(description="AGPRs (gfx908, gfx90a, gfx94x, gfx950)")
    sgprs: PeakModel = Field(description="Numbered SGPRs (vcc, exec, m0, flat_scratch, ttmp not counted)")
    undefined_reads: int = Field(description="Instructions reading a register no path from the entry has "
                                             "written (not counted as live before the first write)")
    first_undefined_read: Optional[int] = Field(description="The first such instruction's offset")
    instructions: int = Field(description="Instructions read")


class PeakOrigin(BaseModel):
    """Registers held at a peak that instructions of one mnemonic and line defined."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(description="32-bit registers")
    defined_by: str = Field(description="The defining instructions' mnemonic; 'set at entry' (the hardware's "
                                        "value); where paths bring different definitions, their mnemonics "
                                        "joined by ' or ' (at most 3, then 'defined on several paths')")
    source: Optional[SourceModel] = Field(description="Their source line, when one instruction defined each "
                                                      "group and the code object has a line table")


class ReportPressure(PressurePeaks):
    """report --pressure: a kernel's live registers (version 5)."""

    model_config = ConfigDict(extra="forbid")

    at_vgpr_peak: Optional[ReportAtPeakModel] = Field(description="At the VGPR peak: its source line and the largest "
                                                            "group of registers held there (null: no VGPR is "
                                                            "ever live)")
    vgpr_peak_origins: list[PeakOrigin] = Field(description="The VGPRs held at the peak summed by what defined "
                                                            "them, most first (at most 4)")
    vgpr_curve: list[int] = Field(description=VGPR_CURVE)
    code_bytes: int = Field(description=CURVE_CODE_BYTES)
    scratch_offsets: list[int] = Field(description="The offsets of the kernel's scratch accesses (spillway code's "
                                                   "scratch_load and scratch_store instructions), bytes from its "
                                                   f"start, ascending; at most {SCRATCH_OFFSETS}: a kernel with "
                                                   f"more lists {SCRATCH_OFFSETS} evenly spread over them "
                                                   "(scratch_loads + scratch_stores count them all) (version 6)")


class KernelIsa(BaseModel):
    """What the kernel's machine code shows (report --isa), read from its STT_FUNC symbol's bytes by
    spillway's own decoder; each count is what a reader of ``llvm-objdump -d -z`` output gets by the
    same rule (docs/isa.md: "What the machine code shows")."""

    model_config = ConfigDict(extra="forbid")

    instructions: int = Field(description="Instructions in [st_value, st_value + st_size), as llvm-objdump -d -z "
                                          "prints them (a VOPD pair is one)")
    code_bytes: int = Field(description="st_size of the kernel's symbol")
    code_sha256: str = Field(description="SHA-256 of the kernel's code bytes: equal means byte-identical code; "
                                         "empty when no code was read (status says why): no identity")
    scratch_loads: int = Field(description="scratch_load* and MUBUF buffer_load* on the private segment buffer")
    scratch_stores: int = Field(description="scratch_store* and MUBUF buffer_store* on the private segment buffer")
    scratch_load_bytes: int = Field(description="Bytes per lane the scratch loads name (dword 4 ... dwordx4 16)")
    scratch_store_bytes: int = Field(description="Bytes per lane the scratch stores name")
    scratch_without_width: dict[str, int] = Field(description="Scratch accesses whose mnemonic names no width "
                                                              "(_format, _block): mnemonic -> count")
    flat_ops: int = Field(description="flat_* instructions (may reach scratch; not counted as scratch)")
    agpr_writes: int = Field(description="v_accvgpr_write*")
    agpr_reads: int = Field(description="v_accvgpr_read*")
    matrix_ops: int = Field(description="v_mfma*, v_smfmac*, v_wmma*, v_swmmac*")
    lds_ops: int = Field(description="ds_*")
    loops: int = Field(description="s_branch/s_cbranch_* whose target lies in the kernel at or before the branch")
    loop_spans: list[list[int]] = Field(description="Each loop as [target, branch], byte offsets from the kernel's "
                                                    "start")
    scratch_in_loops: int = Field(description="Scratch loads and stores inside at least one loop span")
    calls: int = Field(description="s_swappc_b64/s_call_b64; the callees' own code is not in these counts")
    status: str = Field(description="complete, or what stopped the decoder and where (+offset from the kernel's "
                                    "start); the counts cover what was decoded")
    # derived figures (docs/isa.md, "What the machine code shows")
    scratch_slot_load_bytes: int = Field(description="Bytes per lane of scratch loads with no VGPR address "
                                                     "(vaddr off: a fixed frame slot, e.g. a spill reload)")
    scratch_slot_store_bytes: int = Field(description="Bytes per lane of scratch stores with no VGPR address")
    scratch_addressed_load_bytes: int = Field(description="Bytes per lane of scratch loads through a VGPR address "
                                                          "(a private array indexed at run time)")
    scratch_addressed_store_bytes: int = Field(description="Bytes per lane of scratch stores through a VGPR "
                                                           "address")
    agpr_spill_copies: int = Field(description="v_accvgpr_write/read of an AGPR no matrix op accumulates in "
                                               "(spills into AGPRs; every copy when the kernel has no matrix op)")
    agpr_accumulator_moves: int = Field(description="v_accvgpr_write/read of an AGPR a matrix op accumulates in "
                                                    "(or one v_accvgpr_mov_b32 copies to or from such an AGPR)")
    innermost_loops: int = Field(description="Loop spans that hold no other span")
    scratch_in_innermost_loops: int = Field(description="Scratch loads and stores inside at least one innermost "
                                                        "loop span")
    loop_depth_max: int = Field(description="The most loop spans holding one offset (0: no loops)")
    mix: InstructionMix = Field(description="Instructions per class (version 4)")
    source_lines: Optional[SourceLines] = Field(None, description="Only for code objects with a DWARF line table "
                                                                  "(version 4)")


class ReportIsa(KernelIsa):
    """What the kernel's machine code shows (report --isa), read from its STT_FUNC symbol's bytes by
    spillway's own decoder; each count is what a reader of ``llvm-objdump -d -z`` output gets by the
    same rule (docs/isa.md: "What the machine code shows")."""

    model_config = ConfigDict(extra="forbid")

    pressure: Optional[ReportPressure] = Field(None, description="Only with --pressure: the kernel's live "
                                                                 "registers (null: its code was not read; "
                                                                 "version 5)")


class KernelRecord(BaseModel):
    """One kernel for one target in one code object."""

    model_config = ConfigDict(extra="forbid")

    # identity
    file: str = Field(description="File the kernel was read from; archive members as lib.a(x.o), "
                                  "wheel entries as pkg.whl!path" + PATH_ENCODING)
    bundle_index: Optional[int] = Field(description="Index of the offload bundle (one per translation "
                                                    "unit) in .hip_fatbin; null outside bundles")
    target: str = Field(description="Target ID with features, e.g. gfx90a:xnack-")
    code_object_version: int = Field(description="From EI_ABIVERSION: 3, 4, 5 or 6")
    compiler: str = Field(description="Producer from the code object's .comment")
    symbol: str = Field(description="Mangled kernel name (.name)")
    name: str = Field(description="Demangled kernel name")
    key: str = Field(description="Mangled name with versioned inline namespaces normalized; stable "
                                 "across library updates")
    # resources, as in the metadata
    vgpr_count: int = Field(description="VGPRs per work-item; on gfx90a/gfx942/gfx950 includes AGPRs")
    agpr_count: Optional[int] = Field(description="AGPRs; null on targets without AGPRs")
    sgpr_count: int
    vgpr_spill_count: int = Field(description="VGPR spill store instructions")
    sgpr_spill_count: int = Field(description="SGPR spill store instructions")
    private_segment_fixed_size: int = Field(description="Scratch bytes per work-item (lane)")
    uses_dynamic_stack: bool
    group_segment_fixed_size: int = Field(description="Static LDS bytes per work-group")
    wavefront_size: int
    max_flat_workgroup_size: int
    workgroup_processor_mode: Optional[bool] = Field(description="GFX10+: WGP (true) or CU mode")
    # derived
    occupancy: Optional[int] = Field(description="Waves per SIMD the resources allow (LLVM's model); "
                                                 "null for an unknown target")
    occupancy_limit: OccupancyLimit
    occupancy_model: OccupancyModelName = Field(UNNAMED_MODEL, description="The LLVM occupancy model the figure "
                                                                           "follows (version-1 documents: llvm22)")
    occupancy_next: Optional[OccupancyNext] = Field(None, description="The next step: null at the hardware cap, "
                                                                "for an unknown target, or when nothing in "
                                                                "the binary would raise the figure")
    scratch_cause: ScratchCause
    # where the code object sat, for containers without bundles (issue 13)
    image_offset: Optional[int] = Field(None, description="Offset in the host file of a code object embedded "
                                                          "as data (--scan-embedded); null otherwise")
    archive: Optional[str] = Field(None, description="The .kpack archive the code object came from; null "
                                                     "when it was inside the file itself")
    # the machine code (report --isa; absent otherwise)
    isa: Optional[ReportIsa] = Field(None, description="What the kernel's machine code shows; present only in "
                                                       "reports written with --isa")


class FileRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="As named on the command line" + PATH_ENCODING)
    kind: str = Field(description="ELF, code object, offload bundle, ar archive, zip, directory")
    bundles: int
    code_objects: int
    kernels: int
    bitcode_only: list[str] = Field(description="Entries that hold only LLVM bitcode: resource usage "
                                                "exists after the device link")
    skipped_without_device_code: int = Field(description="Files inside this path that hold no device code")
    spirv_entries: int = 0
    command_lines: Optional[list[str]] = Field(
        None, description="The distinct command lines the compiler recorded in the code objects read "
                          "(.GCC.command.line: clang -frecord-command-line), in the order found; absent when "
                          "none recorded one")


class Report(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: Literal["spillway.report/6"] = Field(SCHEMA, alias="schema")
    spillway_version: str
    occupancy_model: Literal["llvm22", "llvm23", "llvm24", "producer"] = Field(
        UNNAMED_MODEL, description="The occupancy model asked for (producer: per code object, the model of the "
                              "LLVM that built it; each kernel names the one applied); version-1 documents: llvm22")
    files: list[FileRecord]
    kernels: list[KernelRecord]


def json_schema() -> dict:
    return published_schema(Report, f"report-{SCHEMA.rsplit('/', 1)[1]}.json")
