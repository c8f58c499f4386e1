"""Which SGPRs an instruction writes (isa.evidence.written_sgprs), as far as
following the private segment buffer s[0:3] through the entry block needs:
decided by what the instruction writes on its generation, not by which field
holds a value (issue 42).  Each instruction is assembled by llvm-mc-22 (or, for
clang 15's encoding of a GFX10 v_cmpx, given as the bytes librocsparse0 holds),
decoded by spillway's decoder, and also put before a MUBUF store on s[0:3]:
the store is a scratch access exactly when nothing wrote s0-s3 (evidence()
and the vectorized evidence_many() alike)."""

from __future__ import annotations

import re
import subprocess

import pytest

from spillway.isa import vector
from spillway.isa.decoder import decode, family_of, load_family
from spillway.isa.evidence import evidence, written_sgprs
from support import isa_oracle
from support.toolchains import require

# (processor, assembly or raw bytes, SGPRs written)
CASES = [
    # VOP3 v_cmpx: GFX8/9 write their SDST (and EXEC); GFX10 and later EXEC only, whatever the vdst field holds.
    ("gfx803", "v_cmpx_gt_i32_e64 s[0:1], s13, v9", {0, 1}),
    ("gfx900", "v_cmpx_gt_i32_e64 s[2:3], s13, v9", {2, 3}),
    ("gfx1030", bytes.fromhex("000094d40d120200"), set()),   # D4940000 0002120D: clang 15's, vdst 0
    ("gfx1030", "v_cmpx_gt_i32_e64 s0, v9", set()),           # LLVM 22's, vdst 0x7E
    ("gfx1100", "v_cmpx_gt_i32_e64 s0, v9", set()),
    ("gfx1100", bytes.fromhex("0000c4d40d120200"), set()),   # the same with vdst 0
    ("gfx1200", "v_cmpx_gt_i32_e64 s0, v9", set()),
    # VOP3 v_cmp writes its SDST on every generation (wave64 on GFX8/9: two SGPRs).
    ("gfx900", "v_cmp_gt_i32_e64 s[0:1], s13, v9", {0, 1}),
    ("gfx1030", "v_cmp_gt_i32_e64 s1, s13, v9", {1}),
    ("gfx1100", "v_cmp_gt_i32_e64 s2, s13, v9", {2}),
    # VOPC e32 writes VCC (or EXEC): no SGPR the buffer can be in.
    ("gfx900", "v_cmp_gt_i32_e32 vcc, s0, v9", set()),
    ("gfx1030", "v_cmpx_gt_i32_e32 s0, v9", set()),
    # SDWA compares: an SDST when SD (bit 47) is set (GFX9, GFX10); GFX10's v_cmpx_sdwa has none.
    ("gfx900", "v_cmp_eq_f32_sdwa s[2:3], v0, v1 src0_sel:DWORD src1_sel:DWORD", {2, 3}),
    ("gfx900", "v_cmp_eq_f32_sdwa vcc, v0, v1 src0_sel:DWORD src1_sel:DWORD", set()),
    ("gfx1030", "v_cmp_eq_f32_sdwa s2, v0, v1 src0_sel:DWORD src1_sel:DWORD", {2}),
    ("gfx1030", "v_cmpx_eq_f32_sdwa v0, v1 src0_sel:DWORD src1_sel:DWORD", set()),
    # Carry-outs (VOP3b): GFX8's v_add_u32 had one, GFX9's has none (v_add_co_u32 does).
    ("gfx803", "v_add_u32_e64 v0, s[2:3], v1, v2", {2, 3}),
    ("gfx803", "v_subrev_u32_e64 v0, s[0:1], v1, v2", {0, 1}),
    ("gfx900", "v_add_u32_e64 v0, v1, v2", set()),
    ("gfx900", "v_add_co_u32_e64 v0, s[2:3], v1, v2", {2, 3}),
    ("gfx1030", "v_add_co_u32 v0, s2, v1, v2", {2}),
    ("gfx1030", "v_mad_u64_u32 v[0:1], s3, v1, v2, v[4:5]", {3}),
    # Lane reads write an SGPR, lane writes a VGPR.
    ("gfx900", "v_readlane_b32 s2, v0, 1", {2}),
    ("gfx900", "v_writelane_b32 v0, s2, 1", set()),
    ("gfx1030", "v_readfirstlane_b32 s1, v0", {1}),
    # Scalar forms whose destination field means nothing, or writes only sometimes.
    ("gfx1030", "s_gl1_inv", set()),
    ("gfx900", "s_rfe_restore_b64 s[0:1], s2", set()),
    ("gfx1200", "s_alloc_vgpr s3", set()),
    ("gfx900", "s_atomic_add s1, s[4:5], 0x0", set()),          # no glc: s1 is the data, not written
    ("gfx900", "s_atomic_add s1, s[4:5], 0x0 glc", {1}),       # glc: the old value returned into s1
    ("gfx1100", "s_sendmsg_rtn_b32 s2, sendmsg(MSG_RTN_GET_DOORBELL)", {2}),
    ("gfx900", "s_mov_b32 s3, s9", {3}),
    ("gfx900", "s_load_dwordx4 s[0:3], s[4:5], 0x0", {0, 1, 2, 3}),
]


def _assemble(processor: str, text: str) -> bytes:
    done = subprocess.run([require("llvm-mc-22"), "-triple=amdgcn-amd-amdhsa", f"-mcpu={processor}", "-show-encoding"],
                          input=text + "\n", capture_output=True, text=True, check=True)
    found = re.search(r"encoding: \[([^\]]*)\]", done.stdout)
    assert found, done.stdout + done.stderr
    return bytes(int(byte, 16) for byte in found.group(1).split(","))


def _code(processor: str, instruction: bytes | str) -> bytes:
    return instruction if isinstance(instruction, bytes) else _assemble(processor, instruction)


def _disassemble(processor: str, code: bytes) -> str:
    """The instruction as LLVM prints it (llvm-objdump's text)."""
    done = subprocess.run([require("llvm-mc-22"), "--disassemble", "-triple=amdgcn-amd-amdhsa", f"-mcpu={processor}"],
                          input=" ".join(f"{byte:#04x}" for byte in code) + "\n", capture_output=True, text=True,
                          check=True)
    return next(line.strip() for line in done.stdout.splitlines() if line.startswith("\t") and "." not in line[:2])


def _name(value) -> str | None:
    return value.hex() if isinstance(value, bytes) else value if isinstance(value, str) else None


@pytest.mark.parametrize("processor, instruction, written", CASES, ids=_name)
def test_written_sgprs(processor, instruction, written):
    family = load_family(family_of(processor))
    code = _code(processor, instruction)
    decoded, = decode(code, 0, len(code), family)
    assert set(written_sgprs(decoded, family.layout == "gfx9")) == written, decoded.mnemonic
    # The oracle's rule (tests/support/isa_oracle.py) on LLVM's text of it says the same.
    mnemonic, _, operands = _disassemble(processor, code).partition(" ")
    assert set(isa_oracle.written_sgprs(isa_oracle.Insn(0, len(code), mnemonic, operands.strip(), ""))) == written


@pytest.mark.parametrize("processor, instruction, written",
                         [case for case in CASES if case[0] in ("gfx803", "gfx900", "gfx1030")], ids=_name)
def test_a_write_of_s0_3_ends_the_private_segment_buffer(processor, instruction, written):
    """On the targets reaching scratch through MUBUF: the store on s[0:3]
    after the instruction counts exactly when it wrote none of s0-s3."""
    code = (_code(processor, instruction) + _assemble(processor, "buffer_store_dword v1, off, s[0:3], 0 offset:8")
            + _assemble(processor, "s_endpgm"))
    expected = 0 if written & {0, 1, 2, 3} else 1
    found = evidence(code, 0, len(code), processor, True)
    assert (found.scratch_stores, found.status) == (expected, "complete")
    assert vector.evidence_many(code, [(0, len(code), True)], processor) == [found]
