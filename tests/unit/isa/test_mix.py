"""The instruction mix (spillway.isa.mix): the mnemonic rule against the
encodings of every decoder table, and the scratch rule (comparing two
mixes: tests/unit/gate/test_code_change.py).  The rule against llvm-objdump: tests/oracle/test_isa_decoder.py
(expected.json's ``mix``) and test_isa_figures_awk.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from spillway.isa import mix
from spillway.isa.decoder import load_family
from spillway.isa.evidence import evidence
from spillway.isa.mix import MIX_CLASSES, mix_class, mix_object

TABLES = Path(mix.__file__).parent / "tables"
FAMILIES = sorted(p.stem for p in TABLES.glob("*.json") if p.stem != "accumulators")
SALU_ENCODINGS = ("SOP1", "SOP2", "SOPK", "SOPC")


def every_opcode():
    """(family, encoding, mnemonic) of every opcode of every table."""
    seen = set()
    for name in FAMILIES:
        for entries in load_family(name).by_top_byte:
            for encoding, table in entries:
                for opcode in table.values():
                    seen.add((name, encoding.name, opcode.mnemonic))
    return sorted(seen)


def test_the_mnemonic_rule_follows_the_encodings():
    """SMEM mnemonics are exactly the SMEM encoding's; VALU/matrix/AGPR copies
    are VOP*/VINTERP/VINTRP; SOPP is branch, waitcnt, other or SALU state;
    every memory encoding lands in its memory class."""
    wrong = []
    for family, encoding, mnemonic in every_opcode():
        found = MIX_CLASSES[mix_class(mnemonic)]
        if encoding == "SMEM":
            expected = {"smem"}
        elif encoding.startswith(("VOP", "VINT")):
            expected = {"valu", "matrix", "agpr_copy"}
        elif encoding in ("DS", "LDSDIR"):
            expected = {"lds"}
        elif encoding in ("MUBUF", "MTBUF", "MIMG", "FLAT", "VBUFFER", "VFLAT", "VGLOBAL", "VIMAGE", "VSAMPLE",
                          "VSCRATCH"):
            expected = {"vmem"}
        elif encoding == "SOPP":
            expected = {"branch", "waitcnt", "other", "salu"}
        elif encoding in SALU_ENCODINGS:
            expected = {"salu", "branch", "waitcnt", "other"}
        elif encoding == "EXP":
            expected = {"other"}
        else:
            expected = set()
        if found not in expected:
            wrong.append((family, encoding, mnemonic, found))
        if encoding != "SMEM" and found == "smem":
            wrong.append((family, encoding, mnemonic, found))
    assert not wrong, wrong[:20]


@pytest.mark.parametrize("mnemonic, expected", [
    ("v_mfma_f32_32x32x8f16", "matrix"), ("v_wmma_f32_16x16x16_f16", "matrix"), ("v_accvgpr_write_b32", "agpr_copy"),
    ("v_accvgpr_mov_b32", "agpr_copy"), ("v_dual_fmac_f32", "valu"), ("v_readlane_b32", "valu"),
    ("ds_read_b128", "lds"), ("lds_param_load", "lds"), ("global_load_dwordx4", "vmem"),
    ("buffer_load_dword", "vmem"), ("scratch_load_dword", "vmem"), ("s_load_dwordx2", "smem"),
    ("s_buffer_load_dword", "smem"), ("s_get_waveid_in_workgroup", "smem"), ("s_getpc_b64", "salu"),
    ("s_get_barrier_state", "salu"), ("s_cbranch_execz", "branch"), ("s_swappc_b64", "branch"),
    ("s_setpc_b64", "branch"), ("s_waitcnt", "waitcnt"), ("s_wait_loadcnt", "waitcnt"),
    ("s_waitcnt_vmcnt", "waitcnt"), ("s_nop", "other"), ("s_endpgm", "other"), ("s_barrier_signal", "other"),
    ("s_sendmsg_rtn_b32", "other"), ("exp", "other"), ("s_mov_b32", "salu"), ("s_set_gpr_idx_on", "salu"),
])
def test_classes_of_mnemonics(mnemonic, expected):
    assert MIX_CLASSES[mix_class(mnemonic)] == expected


def test_counted_scratch_accesses_move_from_vmem():
    """buffer_store_dword v0, off, s[0:3], 0 (MUBUF, the private segment
    buffer) is scratch; the same on s[4:7] is vmem; s_nop, s_endpgm other."""
    on_psb = bytes.fromhex("000070e0" "00000080")    # buffer_store_dword v0, off, s[0:3], 0 (llvm-mc-22)
    on_other = bytes.fromhex("000070e0" "00000180")  # buffer_store_dword v0, off, s[4:7], 0
    tail = bytes.fromhex("000080bf" "000081bf")      # s_nop 0; s_endpgm
    for code, scratch in ((on_psb + tail, 1), (on_other + tail, 0)):
        found = mix_object(evidence(code, 0, len(code), "gfx900", True).mix)
        assert found["scratch"] == scratch and found["vmem"] == 1 - scratch
        assert found["other"] == 2 and sum(found.values()) == 3


def test_a_kernel_not_read_has_a_mix_of_zeros():
    assert mix_object(()) == dict.fromkeys(MIX_CLASSES, 0)
