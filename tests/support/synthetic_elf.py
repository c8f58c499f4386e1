"""Small ELF files written from the ELF-64 layout (System V gABI, section
headers only): a host object holding chosen sections (a ``.rocm_kpack_ref``
marker), and an AMDGPU code object whose only content is its
NT_AMDGPU_METADATA note (AMDGPUUsage, "Code Object V3/V4/V5 Metadata").

For inputs no compiler writes: a hostile kpack marker, a code object with a
million kernels.  The code objects hold no machine code; spillway reads
their kernels from the note alone, and llvm-readelf --notes reads the same
note back (tests/unit/formats/test_synthetic_elf.py).
"""

from __future__ import annotations

import struct
from typing import Iterable, Iterator

import msgpack

EM_X86_64, EM_AMDGPU = 62, 224
ELFOSABI_AMDGPU_HSA = 64
ET_REL, ET_DYN = 1, 3
SHT_PROGBITS, SHT_STRTAB, SHT_NOTE = 1, 3, 7
SHF_ALLOC = 2
NT_AMDGPU_METADATA = 32
# EI_ABIVERSION -> code object version 4 (2) and 5 (3)
ABI_VERSION = {4: 2, 5: 3}
# e_flags of gfx90a with sramecc and xnack "any" (code object v4+): EF_AMDGPU_MACH 0x3f,
# EF_AMDGPU_FEATURE_XNACK_ANY_V4 0x100, EF_AMDGPU_FEATURE_SRAMECC_ANY_V4 0x400.
GFX90A_FLAGS = 0x3F | 0x100 | 0x400


def elf(sections: Iterable[tuple[str, int, int, bytes]], *, machine: int = EM_X86_64, osabi: int = 0,
        abi_version: int = 0, e_type: int = ET_REL, e_flags: int = 0) -> bytes:
    """An ELF-64 little-endian file: header, each (name, sh_type, sh_flags,
    content) section 8-byte aligned, a .shstrtab, then the section headers."""
    sections = list(sections)
    names = bytearray(b"\0")
    name_at = []
    for name, *_ in sections + [(".shstrtab", SHT_STRTAB, 0, b"")]:
        name_at.append(len(names))
        names += name.encode() + b"\0"
    body = bytearray(64)
    headers = [struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)]
    contents = [(n, t, f, c) for n, t, f, c in sections] + [(".shstrtab", SHT_STRTAB, 0, bytes(names))]
    for index, (_name, sh_type, sh_flags, content) in enumerate(contents):
        body += b"\0" * (-len(body) % 8)
        headers.append(struct.pack("<IIQQQQIIQQ", name_at[index], sh_type, sh_flags, 0, len(body), len(content),
                                   0, 0, {SHT_STRTAB: 1, SHT_NOTE: 4}.get(sh_type, 8), 0))
        body += content
    body += b"\0" * (-len(body) % 8)
    shoff = len(body)
    body += b"".join(headers)
    ident = b"\x7fELF" + bytes([2, 1, 1, osabi, abi_version]) + b"\0" * 7
    struct.pack_into("<16sHHIQQQIHHHHHH", body, 0, ident, e_type, machine, 1, 0, 0, shoff, e_flags, 64, 0, 0,
                     64, len(headers), len(headers) - 1)
    return bytes(body)


def note(name: bytes, note_type: int, desc: bytes) -> bytes:
    """One ELF note record (name and desc padded to 4 bytes)."""
    named = name + b"\0"
    return (struct.pack("<III", len(named), len(desc), note_type) + named + b"\0" * (-len(named) % 4)
            + desc + b"\0" * (-len(desc) % 4))


def kpack_host(kernel_name: str, search_paths: list[str]) -> bytes:
    """A host object split by rocm-kpack as far as spillway looks: a
    .rocm_kpack_ref marker ({"kernel_name", "kpack_search_paths"}, msgpack)."""
    marker = msgpack.packb({"kernel_name": kernel_name, "kpack_search_paths": search_paths})
    return elf([(".rocm_kpack_ref", SHT_PROGBITS, SHF_ALLOC, marker)])


def kernel_metadata(name: str, *, vgprs: int = 8, sgprs: int = 16, scratch: int = 0, vgpr_spills: int = 0) -> dict:
    """One amdhsa.kernels entry: the fields spillway reads and those LLVM's
    metadata verifier requires."""
    return {".name": name, ".symbol": name + ".kd", ".vgpr_count": vgprs, ".agpr_count": 0, ".sgpr_count": sgprs,
            ".vgpr_spill_count": vgpr_spills, ".sgpr_spill_count": 0, ".private_segment_fixed_size": scratch,
            ".group_segment_fixed_size": 0, ".wavefront_size": 64, ".max_flat_workgroup_size": 256,
            ".uses_dynamic_stack": False, ".kernarg_segment_size": 0, ".kernarg_segment_align": 8}


def code_object(kernels: Iterable[dict], *, version: int = 5, processor: str = "gfx90a",
                e_flags: int = GFX90A_FLAGS) -> bytes:
    """An AMDGPU code object whose note lists ``kernels`` (kernel_metadata
    entries); no machine code, no symbols."""
    document = {"amdhsa.version": [1, 2 if version == 5 else 1],
                "amdhsa.target": f"amdgcn-amd-amdhsa--{processor}",
                "amdhsa.kernels": list(kernels)}
    desc = msgpack.packb(document)
    return elf([(".note", SHT_NOTE, SHF_ALLOC, note(b"AMDGPU", NT_AMDGPU_METADATA, desc))], machine=EM_AMDGPU,
               osabi=ELFOSABI_AMDGPU_HSA, abi_version=ABI_VERSION[version], e_type=ET_DYN, e_flags=e_flags)


def many_kernels(count: int, prefix: str = "k") -> Iterator[dict]:
    """``count`` tiny kernels with distinct names (k0000000, k0000001, ...)."""
    width = len(str(max(count - 1, 0)))
    for number in range(count):
        yield kernel_metadata(f"{prefix}{number:0{width}d}")
