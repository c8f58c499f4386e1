"""--target skips the code objects of other processors before parsing them
(report.reader: the processor their ELF header names), and still judges a
code object whose header names a machine value spillway does not know by
its metadata's target."""

from __future__ import annotations

import struct

import pytest

from spillway.errors import InputError
from spillway.formats.codeobject import flags_processor
from spillway.report.reader import ReadOptions, read_report
from support.synthetic_elf import (ABI_VERSION, ELFOSABI_AMDGPU_HSA, EM_AMDGPU, ET_DYN, GFX90A_FLAGS,
                                   NT_AMDGPU_METADATA, SHF_ALLOC, SHT_NOTE, code_object, elf, kernel_metadata,
                                   note)

GFX906_FLAGS = 0x2F | 0x100 | 0x400
UNKNOWN_MACH_FLAGS = 0xFE | 0x100 | 0x400


def _unreadable_metadata(e_flags: int) -> bytes:
    """A code object whose metadata note is not msgpack (0xc1: a byte msgpack never uses)."""
    return elf([(".note", SHT_NOTE, SHF_ALLOC, note(b"AMDGPU", NT_AMDGPU_METADATA, b"\xc1"))], machine=EM_AMDGPU,
               osabi=ELFOSABI_AMDGPU_HSA, abi_version=ABI_VERSION[5], e_type=ET_DYN, e_flags=e_flags)


@pytest.fixture
def objects(tmp_path):
    good = tmp_path / "gfx90a.co"
    good.write_bytes(code_object([kernel_metadata("kept", scratch=16)]))
    broken = tmp_path / "gfx906.co"
    broken.write_bytes(_unreadable_metadata(GFX906_FLAGS))
    return good, broken


def test_flags_processor_reads_the_header_only():
    assert flags_processor(code_object([], e_flags=GFX90A_FLAGS)) == "gfx90a"
    assert flags_processor(code_object([], e_flags=GFX906_FLAGS)) == "gfx906"
    assert flags_processor(code_object([], e_flags=UNKNOWN_MACH_FLAGS)) is None
    assert flags_processor(b"\x7fELF") is None
    host = bytearray(code_object([]))
    struct.pack_into("<H", host, 18, 62)            # e_machine x86-64: not a code object
    assert flags_processor(bytes(host)) is None


def test_a_code_object_of_another_processor_is_not_parsed(objects):
    good, broken = objects
    with pytest.raises(InputError):                 # read: its metadata is refused
        read_report([str(good), str(broken)], ReadOptions())
    document = read_report([str(good), str(broken)], ReadOptions(targets=["gfx90a"]))
    assert [k["name"] for k in document["kernels"]] == ["kept"]
    # a full target ID leaves the same processor's others out the same way
    document = read_report([str(good), str(broken)], ReadOptions(targets=["gfx90a:sramecc+:xnack-", "gfx90a"]))
    assert [k["name"] for k in document["kernels"]] == ["kept"]


def test_the_processor_asked_for_is_parsed(objects):
    _good, broken = objects
    with pytest.raises(InputError):
        read_report([str(broken)], ReadOptions(targets=["gfx906"]))


def test_an_unknown_machine_value_is_judged_by_its_metadata(tmp_path):
    unknown = tmp_path / "unknown.co"
    unknown.write_bytes(code_object([kernel_metadata("by_metadata")], e_flags=UNKNOWN_MACH_FLAGS))
    document = read_report([str(unknown)], ReadOptions(targets=["gfx90a"]))
    assert [k["name"] for k in document["kernels"]] == ["by_metadata"]
    with pytest.raises(InputError):                 # its metadata says gfx90a: nothing of gfx906
        read_report([str(unknown)], ReadOptions(targets=["gfx906"], require_kernels=True))
