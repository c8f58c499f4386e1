"""AMDGPU code objects: the device ELF (e_machine 224) inside a bundle.

Reads the code object version from the ELF header, the target from
``amdhsa.target`` or ``e_flags``, the compiler from ``.comment``, the
command line it recorded (``.GCC.command.line``, -frecord-command-line) and
the kernels from the metadata note.  Only headers, notes, those two sections
and (when the metadata lacks the WGP mode) kernel descriptors are touched.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from spillway.formats import command_line, metadata
from spillway.formats.elf import (CODE_OBJECT, ET_DYN, ET_REL, SHF_ALLOC, SHF_EXECINSTR, SHT_PROGBITS, STT_OBJECT,
                                  ElfImage, is_elf64_le, machine)
from spillway.errors import InputError
from spillway.resources.targets import (ABI_VERSION_TO_COV, ELFOSABI_AMDGPU_HSA, EM_AMDGPU, MACH_TO_PROCESSOR,
                                        architected_flat_scratch, occupancy_model, processor_of,
                                        target_id_from_flags)

CONTAINER = CODE_OBJECT
# A kernel's descriptor is the 64-byte object named after the kernel's STT_FUNC symbol with this suffix.
DESCRIPTOR_SUFFIX = ".kd"
_KD_RSRC1 = 48
_KD_RSRC2 = 52
_KD_PROPERTIES = 56            # kernel_code_properties (u16), then kernarg_preload (u16)
_WGP_MODE_BIT = 1 << 29


def function_symbol(descriptor: str) -> str:
    """The kernel's STT_FUNC symbol: its descriptor's name without ``.kd``."""
    return descriptor.removesuffix(DESCRIPTOR_SUFFIX)


def _descriptor_name(kernel: metadata.KernelMetadata) -> str:
    """The kernel's descriptor symbol: the metadata's ``.symbol``, else its name with ``.kd``."""
    return kernel.symbol or kernel.name + DESCRIPTOR_SUFFIX


@dataclass(frozen=True)
class CodeObject:
    target_id: str
    code_object_version: int
    compiler: str
    e_flags: int
    kernels: list[metadata.KernelMetadata]
    # The distinct command lines recorded in .GCC.command.line; empty without one.
    command_lines: tuple[str, ...] = ()


def is_amdgpu_elf(data: bytes | memoryview) -> bool:
    head = bytes(data[:20])
    return is_elf64_le(head) and machine(head) == EM_AMDGPU


def flags_processor(data: bytes | memoryview) -> str | None:
    """The processor an AMDGPU ELF's header names in ``e_flags`` (what its
    loader goes by), without parsing the rest; None where the header is not
    an AMDGPU ELF's or names a machine value this table does not know (the
    metadata's ``amdhsa.target`` may then say more)."""
    if len(data) < 64 or not is_amdgpu_elf(data):
        return None
    (e_flags,) = struct.unpack_from("<I", data, 48)
    return MACH_TO_PROCESSOR.get(e_flags & 0xFF)


def _compiler_from_comment(data: bytes) -> str:
    strings = [s.decode("utf-8", "replace").strip() for s in data.split(b"\0")]
    compilers = [s for s in strings if s and not s.startswith("Linker:")]
    # Every function contributes the same ident; keep the distinct ones in order.
    return "; ".join(dict.fromkeys(compilers))


def parse(data: memoryview | bytes, max_kernels: int | None = None) -> CodeObject:
    """Parse one code object.  Raises InputError with offsets inside it.
    ``max_kernels``: more kernels listed in its notes is an InputError before
    they are decoded (--max-kernels)."""
    data = memoryview(data)
    version = _code_object_version(data)
    try:
        image = ElfImage(data)
    except struct.error as exc:
        raise InputError(f"corrupt ELF structure ({exc})", container=CONTAINER) from None
    e_flags = image.e_flags
    notes = image.notes()
    comment = image.section_bytes(".comment") or b""
    documents = _metadata_documents(notes, max_kernels)
    kernels, target = _kernels_and_target(documents)
    if len(documents) > 1:
        _check_kernels_match_descriptors(kernels, image)
    if target and "--" in target:
        target_id = target.split("--", 1)[1]
    else:
        target_id = target_id_from_flags(e_flags, version)

    model = occupancy_model(processor_of(target_id))
    if model is not None and model.gfx_major >= 10 and model.lds_per_cu_cumode is not None:
        kernels = _with_wgp_mode(kernels, image)
    recorded = image.section_bytes(command_line.SECTION)
    return CodeObject(target_id, version, _compiler_from_comment(comment), e_flags, kernels,
                      tuple(command_line.parse_section(recorded)) if recorded else ())


def _code_object_version(data: memoryview) -> int:
    """The code object version of an AMDGPU HSA ELF (3 and up); InputError for
    anything else."""
    if len(data) < 64:
        raise InputError(f"truncated ELF header ({len(data)} bytes)", container=CONTAINER, offset=0)
    if not is_amdgpu_elf(data):
        raise InputError("not an AMDGPU ELF (64-bit little-endian, e_machine 224)",
                         container=CONTAINER, offset=0)
    osabi, abi_version = data[7], data[8]
    if osabi != ELFOSABI_AMDGPU_HSA:
        raise InputError(f"OS ABI {osabi} is not AMDGPU HSA (64): PAL and Mesa code objects "
                         "carry no HSA kernel metadata", container=CONTAINER, offset=7)
    version = ABI_VERSION_TO_COV.get(abi_version)
    if version is None:
        raise InputError(f"unknown code object version (EI_ABIVERSION {abi_version})",
                         container=CONTAINER, offset=8)
    if version == 2:
        raise InputError("code object v2 (YAML metadata, LLVM 13 and older) is not supported",
                         container=CONTAINER, offset=8)
    return version


def _metadata_documents(notes: list[tuple[memoryview, int]], max_kernels: int | None
                        ) -> list[dict | metadata.NoteResources]:
    """The NT_AMDGPU_METADATA notes' documents (read by the fast path where it
    can, else decoded), the kernels they list counted against ``max_kernels``
    before they are decoded.  Every note counts: Tensile links one code object
    per kernel into one file, which leaves one metadata note per kernel."""
    documents: list[dict | metadata.NoteResources] = []
    listed = 0      # kernels of the notes before this one
    for note_data, note_offset in notes:
        try:
            for name, note_type, desc, position in metadata.iter_notes(note_data):
                if name == metadata.AMDGPU_NOTE_NAME and note_type == metadata.NT_AMDGPU_METADATA:
                    # Counted before they are decoded (a kernel takes a byte at least: a smaller
                    # note cannot list too many).
                    if max_kernels is not None and listed + len(desc) > max_kernels:
                        count = listed + (metadata.kernel_count(desc) or 0)
                        if count > max_kernels:
                            raise InputError(f"its metadata lists {count} kernels, more than the {max_kernels} "
                                             f"a run reads (--max-kernels N raises the limit)",
                                             container=f"{CONTAINER} note", offset=position)
                    fast = metadata.read_fast(desc)
                    if fast is not None:
                        documents.append(fast)
                        listed += len(fast.kernels)
                        continue
                    try:
                        decoded = metadata.decode_resources(desc)
                    except InputError as exc:
                        raise exc.within(f"{CONTAINER} note", position) from None
                    documents.append(decoded)
                    entries = decoded.get(b"amdhsa.kernels")
                    listed += len(entries) if isinstance(entries, (list, tuple)) else 0
        except InputError as exc:
            raise exc.within(f"{CONTAINER} note section", note_offset) from None
    if not documents:
        raise InputError("no NT_AMDGPU_METADATA note", container=CONTAINER)
    return documents


def _kernels_and_target(documents: list[dict | metadata.NoteResources]
                        ) -> tuple[list[metadata.KernelMetadata], str | None]:
    """Every note's kernels, in order, and the target they name (None: none
    does); notes naming different targets are an InputError."""
    kernels: list[metadata.KernelMetadata] = []
    targets: list[str] = []
    for number, document in enumerate(documents):
        if isinstance(document, metadata.NoteResources):
            kernels.extend(document.kernels)
            target = document.target
        else:
            try:
                kernels.extend(metadata.kernels_from(document))
                target = metadata.target_of(document)
            except InputError as exc:
                numbered = f" note {number + 1} of {len(documents)}" if len(documents) > 1 else ""
                raise exc.within(f"{CONTAINER} metadata{numbered}") from None
        if target and target not in targets:
            targets.append(target)
    if len(targets) > 1:
        raise InputError(f"metadata notes disagree on the target ({', '.join(targets)})", container=CONTAINER)
    return kernels, targets[0] if targets else None


# kernel_code_properties bits 0-6: the user SGPRs each enables, in the order the hardware loads them
# (private segment buffer, dispatch ptr, queue ptr, kernarg segment ptr, dispatch ID, flat scratch init,
# private segment size).
_USER_SGPRS = (4, 2, 2, 2, 2, 2, 1)


@dataclass(frozen=True, slots=True)
class EntryRegisters:
    """The registers the hardware sets before a kernel's first instruction."""
    user_sgprs: int        # s0 up: the user SGPRs the kernel enables, preloaded kernel arguments included
    system_from: int       # the first system SGPR (work-group IDs, info, scratch wave offset)
    system_sgprs: int
    vgprs: int             # v0 up: the work-item IDs

    def sgprs(self) -> tuple[int, ...]:
        return (*range(self.user_sgprs), *range(self.system_from, self.system_from + self.system_sgprs))


_WAVEFRONT_SIZE32 = 1 << 10      # kernel_code_properties' ENABLE_WAVEFRONT_SIZE32 (GFX10 and later; 0 before)


def descriptor_wavefront_size(descriptor: bytes | memoryview) -> int:
    """The lanes a kernel runs in, from its descriptor (AMDGPUUsage, "Kernel
    Descriptor"): 32 where kernel_code_properties (bytes 56-57) sets
    ENABLE_WAVEFRONT_SIZE32 (bit 10, the bit the hardware dispatches by),
    else 64 (the bit is reserved, 0, before GFX10: wave64 only)."""
    return 32 if struct.unpack_from("<H", descriptor, 56)[0] & _WAVEFRONT_SIZE32 else 64


def entry_registers(descriptor: bytes | memoryview, processor: str) -> EntryRegisters:
    """The registers set at a kernel's entry, from its descriptor (AMDGPUUsage,
    "Initial Kernel Execution State"): the user SGPRs kernel_code_properties
    enables and the kernel arguments preloaded into SGPRs
    (KERNARG_PRELOAD_SPEC_LENGTH) from s0; after COMPUTE_PGM_RSRC2's
    USER_SGPR_COUNT SGPRs, one each for the work-group IDs X, Y, Z (RSRC2
    bits 7-9), the work-group info (bit 10) and the scratch wave offset (bit
    0, where the ``processor`` has no architected flat scratch); the work-item
    IDs from v0 up to v(ENABLE_VGPR_WORKITEM_ID, bits 11-12; packed into v0
    where the target packs them, so an upper bound).  USER_SGPR_COUNT may
    exceed the SGPRs enabled: GFX11 code sets it to 15 or 16 (LLVM's
    workaround of a hardware bug initialising user SGPRs), which puts the
    work-group ID X in s15 or s16; the SGPRs between hold nothing the kernel
    asked for.  On GFX12 the work-group IDs sit in TTMPs even where the bits
    are set: an upper bound there."""
    (rsrc2,) = struct.unpack_from("<I", descriptor, _KD_RSRC2)
    properties, preload = struct.unpack_from("<HH", descriptor, _KD_PROPERTIES)
    user = sum(size for bit, size in enumerate(_USER_SGPRS) if properties >> bit & 1) + (preload & 0x7F)
    system = (7, 8, 9, 10) if architected_flat_scratch(processor) else (0, 7, 8, 9, 10)
    return EntryRegisters(user, max(user, (rsrc2 >> 1) & 0x1F), sum((rsrc2 >> bit) & 1 for bit in system),
                          1 + min((rsrc2 >> 11) & 3, 2))


def kernel_descriptors(image: ElfImage) -> dict[str, memoryview]:
    """64-byte objects named ``*.kd`` from .symtab (or .dynsym when stripped)."""
    out: dict[str, memoryview] = {}
    for table in image.symbol_tables():
        for symbol in image.symbols(table, type=STT_OBJECT, size=64):
            if symbol.shndx >= len(image.sections) or not symbol.name.endswith(DESCRIPTOR_SUFFIX) \
                    or symbol.name in out:
                continue
            section = image.sections[symbol.shndx]
            # A linked object's symbol values are addresses; a relocatable one's, offsets in their section.
            at = symbol.value + section.offset - (section.addr if image.e_type == ET_DYN else 0)
            if 0 <= at and at + 64 <= len(image.data):
                out[symbol.name] = image.data[at:at + 64]
        if out:
            break
    return out



# The name the code of a code object goes by (isa.evidence.KernelRange.section, formats.dwarf_lines'
# Sequence.section): its .text, or a relocatable object's executable sections laid out (code_layout).
CODE_SECTION = ".text"
# Where code_layout puts each of a relocatable object's executable sections: at a multiple of this
# (AMDGPU kernels are 256-byte aligned; a device function's section less).
_CODE_ALIGN = 256


def code_layout(image: ElfImage) -> dict[int, int]:
    """Where each section holding code starts in the code object's code
    (the bytes isa.evidence.kernel_ranges() reads kernels from, the offsets
    formats.dwarf_lines places line rows at): section index -> offset.

    A linked code object (ET_DYN): its ``.text``, at 0.  A relocatable one
    (ET_REL: a device ``-c`` compile, an ``llc -filetype=obj``) may hold its
    code in one ``.text`` or in a section per function (``-ffunction-sections``,
    a template's COMDAT group): every allocated executable section, one after
    the other in section order, each at a multiple of 256 bytes.  A symbol's
    value, a relocation's addend and a line table row's address are offsets
    in their own section there: ``layout[st_shndx] + offset`` in the code."""
    if image.e_type != ET_REL:
        for number, section in enumerate(image.sections):
            if section.name == CODE_SECTION:
                return {number: 0}
        return {}
    layout: dict[int, int] = {}
    at = 0
    for number, section in enumerate(image.sections):
        if section.type == SHT_PROGBITS and section.flags & SHF_ALLOC and section.flags & SHF_EXECINSTR \
                and section.size:   # (an empty .text)
            at = -(-at // _CODE_ALIGN) * _CODE_ALIGN
            layout[number] = at
            at += section.size
    return layout


def code_bytes(image: ElfImage, layout: dict[int, int]) -> memoryview:
    """The code code_layout() lays out: one section at 0 not copied (a linked
    object's .text, a relocatable object's single .text), several copied into
    place (zeros between).  Raises InputError on a section running past the
    end of the ELF."""
    views = {number: image.view(image.sections[number].offset, image.sections[number].size,
                                 image.sections[number].name) for number in layout}
    if len(layout) == 1 and not next(iter(layout.values())):
        return next(iter(views.values()))
    end = max((at + image.sections[number].size for number, at in layout.items()), default=0)
    code = bytearray(end)
    for number, at in layout.items():
        code[at:at + len(views[number])] = views[number]
    return memoryview(bytes(code))


def _with_wgp_mode(kernels: list[metadata.KernelMetadata], image: ElfImage) -> list[metadata.KernelMetadata]:
    """Code object V4 has no .workgroup_processor_mode: read rsrc1 bit 29."""
    if all(k.workgroup_processor_mode is not None for k in kernels):
        return kernels
    descriptors = kernel_descriptors(image)
    out = []
    for kernel in kernels:
        descriptor = descriptors.get(_descriptor_name(kernel))
        if kernel.workgroup_processor_mode is None and descriptor is not None:
            (rsrc1,) = struct.unpack_from("<I", descriptor, _KD_RSRC1)
            kernel = kernel._replace(workgroup_processor_mode=bool(rsrc1 & _WGP_MODE_BIT))
        out.append(kernel)
    return out


def _check_kernels_match_descriptors(kernels: list[metadata.KernelMetadata], image: ElfImage) -> None:
    """With several metadata notes, each kernel must appear once and have its
    descriptor, and every descriptor must have its kernel: a code object whose
    notes and symbols disagree would otherwise give a silent partial answer."""
    seen: set[str] = set()
    for kernel in kernels:
        symbol = _descriptor_name(kernel)
        if symbol in seen:
            raise InputError(f"kernel {kernel.name} is described by more than one metadata note",
                             container=CONTAINER)
        seen.add(symbol)
    descriptors = kernel_descriptors(image)
    if not descriptors:
        return   # no symbol table (stripped): nothing to cross-check
    missing = sorted(seen - descriptors.keys())
    extra = sorted(descriptors.keys() - seen)
    if missing:
        raise InputError(f"{len(missing)} kernel(s) in the metadata notes have no kernel descriptor "
                         f"symbol (first: {missing[0]})", container=CONTAINER)
    if extra:
        raise InputError(f"{len(extra)} kernel descriptor(s) have no metadata note "
                         f"(first: {extra[0]})", container=CONTAINER)
