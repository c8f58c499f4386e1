"""The synthetic ELF writer of tests/support (hostile kpack markers, code
objects with a million kernels for benchmarks/bench_hostile_inputs.py) writes
what LLVM's tools read: llvm-readelf's metadata note and header give the
records spillway gives, and llvm-objcopy cuts out the marker written."""

from __future__ import annotations

import subprocess

import msgpack

from spillway.report.reader import ReadOptions, read_path
from support import oracles, synthetic_elf


def test_code_object_note_is_what_llvm_readelf_reads(tmp_path):
    path = tmp_path / "three.co"
    kernels = [synthetic_elf.kernel_metadata("a", vgprs=40, scratch=16, vgpr_spills=3),
               synthetic_elf.kernel_metadata("b"), synthetic_elf.kernel_metadata("c", sgprs=90)]
    path.write_bytes(synthetic_elf.code_object(kernels))
    want = oracles.expected_records(path)
    got = {r["symbol"]: r for r in read_path(str(path), ReadOptions())[1]}
    assert len(want) == len(got) == 3
    for record in want:
        for field, value in record.items():
            if not (field == "workgroup_processor_mode" and value is None):
                assert got[record["symbol"]][field] == value, (record["symbol"], field)
    assert got["a"]["vgpr_spill_count"] == 3 and got["a"]["private_segment_fixed_size"] == 16


def test_kpack_host_marker_is_the_section_llvm_objcopy_cuts_out(tmp_path):
    path = tmp_path / "host.so"
    path.write_bytes(synthetic_elf.kpack_host("lib/x.so", ["../.kpack/x_@GFXARCH@.kpack"]))
    section = tmp_path / "marker.bin"
    subprocess.run([oracles.tool("llvm-objcopy"), f"--dump-section=.rocm_kpack_ref={section}", str(path),
                    str(tmp_path / "copy.so")], check=True)
    assert msgpack.unpackb(section.read_bytes()) == {"kernel_name": "lib/x.so",
                                                     "kpack_search_paths": ["../.kpack/x_@GFXARCH@.kpack"]}
