"""The ISA-evidence oracle pinned (issue 23).

tests/support/isa_oracle.py reads ``llvm-objdump -d -z`` into the per-kernel
fields of issue 23; tests/data/isa/expected.json is its output on the fixture
code objects tests/data/isa/build.sh compiles (scripts/generate-isa-
expectations.py writes it).  Here:

* the committed fixtures are the recorded builds, and build.sh still makes
  them byte for byte (clang 22);
* the oracle rerun now gives exactly the committed figures, so a change of
  the oracle's rules shows here (needs the recorded LLVM's objdump);
* LLVM 22, 23 and 24 (and 19 where it knows the target) print the same
  instructions and give the same figures on every fixture: the choice of
  version does not decide a result;
* the compiler's own "; N-byte Folded Spill/Reload" comments agree with the
  scratch bytes of every kernel whose scratch traffic is spills only, and
  with its slot bytes (no VGPR address) -- the derived figures: slot against
  addressed bytes, AGPR spill copies against accumulator moves (read by hand
  on mfma_spill), innermost loops;
* hand-checked facts of isa.md and the issue;
* the oracle's rules on small synthetic objdump texts.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support import isa_oracle
from support.isa_oracle import Function, Insn

DATA = Path(__file__).resolve().parents[1] / "data" / "isa"
EXPECTED = json.loads((DATA / "expected.json").read_text())
COMMENTS = json.loads((DATA / "spill_comments.json").read_text())
FIXTURES = sorted(EXPECTED["fixtures"])
SPILL_ONLY = ("spill_pressure", "spill_in_loop", "agpr_spill")   # no private arrays, no calls


def missing(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def functions(name: str) -> dict:
    return EXPECTED["fixtures"][name]["functions"]


def test_fixture_files_are_the_recorded_builds():
    on_disk = sorted(p.name for p in (DATA / "co").glob("*.co"))
    assert on_disk == FIXTURES
    for name in FIXTURES:
        digest = hashlib.sha256((DATA / "co" / name).read_bytes()).hexdigest()
        assert digest == EXPECTED["fixtures"][name]["sha256"], f"{name} changed: rerun generate-isa-expectations.py"
    assert sorted(COMMENTS) == [name.removesuffix(".co") for name in FIXTURES]


def test_build_script_command_reproduces_a_fixture(tmp_path):
    """build.sh's clang 22 command gives the committed gfx906 object byte for byte."""
    clang = shutil.which("clang++-22")
    if clang is None:
        missing("clang++-22 is not installed (scripts/install-toolchains.sh)")
    version = subprocess.run([clang, "--version"], capture_output=True, text=True).stdout
    if "22.1.8" not in version:
        pytest.skip(f"the fixtures were built with Debian clang 22.1.8, this is {version.splitlines()[0]}")
    out = tmp_path / "gfx906.co"
    subprocess.run([clang, "-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output", "-nogpuinc", "-nogpulib",
                    "-O2", "-cuid=spillway-isa", "--offload-arch=gfx906", "-c", str(DATA / "kernels.cpp"),
                    "-o", str(out)], check=True, capture_output=True)
    assert out.read_bytes() == (DATA / "co" / "gfx906.clang22.co").read_bytes()


# Both fixture sets: kernels.cpp's and rare.cpp's ("rare/...").
COMMITTED = isa_oracle.committed_fixtures()


def test_rare_fixture_files_are_the_recorded_builds():
    """rare.cpp's objects: each recorded, with its SHA-256 (scripts/generate-isa-expectations.py)."""
    folder = isa_oracle.FIXTURE_FOLDERS["rare/"]
    rare = {k: v for k, v in COMMITTED.items() if k.startswith("rare/")}
    assert sorted(f"rare/{p.name}" for p in (folder / "co").glob("*.co")) == sorted(rare)
    for name, (path, recorded) in rare.items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == recorded["sha256"], f"{name} changed"


@pytest.mark.parametrize("name", sorted(COMMITTED))
def test_oracle_reproduces_committed_figures(name):
    path, recorded = COMMITTED[name]
    if isa_oracle.llvm_tool("llvm-objdump", recorded["llvm"]) is None:
        missing(f"llvm-objdump of LLVM {recorded['llvm']} is not installed (scripts/install-toolchains.sh)")
    now = isa_oracle.read_code_object(path).document()
    assert (now["llvm"], now["target"]) == (recorded["llvm"], recorded["target"])
    assert sorted(now["functions"]) == sorted(recorded["functions"])
    for symbol, fields in recorded["functions"].items():
        differ = {k: (v, now["functions"][symbol][k]) for k, v in fields.items() if now["functions"][symbol][k] != v}
        assert not differ, f"{name} {symbol}: committed vs now: {differ}"
    assert now == {**recorded, "llvm_version": now["llvm_version"]}


# rare.cpp's: those LLVM 22 does not read (gfx1170, gfx1310, clang 24's gfx1250), where the oracle's
# LLVM 23 meets the tables' LLVM 24; the others' instructions are kernels.cpp's kinds (CI time).
AGREEING = FIXTURES + sorted(k for k, (_p, r) in COMMITTED.items() if k.startswith("rare/") and r["llvm"] != 22)


@pytest.mark.parametrize("name", AGREEING)
def test_other_llvm_versions_agree(name):
    """Every other installed LLVM that decodes the fixture completely prints
    the same instructions (offset, length, mnemonic) and gives the same
    figures as the one recorded (on these fixtures: 22, 23 and 24 always;
    19 wherever it knows the target)."""
    path, recorded = COMMITTED[name]
    if isa_oracle.llvm_tool("llvm-objdump", recorded["llvm"]) is None:
        missing(f"llvm-objdump of LLVM {recorded['llvm']} is not installed")
    base = isa_oracle.read_code_object(path, (recorded["llvm"],))
    compared = 0
    for version in isa_oracle.PREFERENCE:
        if version == recorded["llvm"] or isa_oracle.llvm_tool("llvm-objdump", version) is None:
            continue
        try:
            other = isa_oracle.read_code_object(path, (version,))
        except isa_oracle.OracleUnavailable:
            continue            # that LLVM does not know the target (or its newest instructions)
        compared += 1
        for mine, theirs in zip(base.functions, other.functions, strict=True):
            assert mine.listing == theirs.listing, f"{name} {mine.symbol}: LLVM {version} decodes otherwise"
            assert mine.fields() == theirs.fields(), f"{name} {mine.symbol}: LLVM {version} differs"
    if recorded["llvm"] == 22 and isa_oracle.sid_root() is not None:
        assert compared >= 2, "LLVM 23 and 24 should both decode what LLVM 22 decodes"


def test_rare_instructions_as_objdump_prints_them():
    """What rare.cpp's kernels hold, by the oracle (llvm-objdump's text):
    the six ds_gws_* of the gws kernel on GFX8-GFX11 (LDS ops), none from
    GFX12 on; message, halt and trap instructions everywhere; gfx950's and
    gfx1250's scaled matrix op one instruction (one matrix op), and every
    function decoded to its end."""
    rare = {k: v for k, v in COMMITTED.items() if k.startswith("rare/")}
    targets = {recorded["target"] for _path, recorded in rare.values()}
    assert {"gfx900", "gfx908", "gfx90a", "gfx1034", "gfx1170", "gfx1310"} <= targets
    for name, (_path, recorded) in rare.items():
        functions = recorded["functions"]
        for symbol, fields in functions.items():
            assert fields["status"] == "complete", (name, symbol)
        gws = functions["gws"]["lds_ops"]
        assert gws == (0 if recorded["target"].startswith(("gfx12", "gfx13")) else 6), name
        assert functions["messages"]["instructions"] > 8, name
    for name in ("rare/gfx950.clang22.co", "rare/gfx1250.clang22.co", "rare/gfx1250.clang24.co"):
        kernel = "scaled_mfma" if "gfx950" in name else "scaled_wmma"
        assert rare[name][1]["functions"][kernel]["matrix_ops"] == 1, name


def test_folded_comment_bytes_equal_scratch_bytes_of_spill_only_kernels():
    """One comment is one spill-slot access of N bytes (a GFX10+ reload
    clause carries one comment for several loads), so bytes, not
    instruction counts, must agree.  gfx1250 (LLVM 22-24) leaves some 8-byte
    spill stores without a comment: there the comments are a lower bound."""
    checked = 0
    for name in FIXTURES:
        stem = name.removesuffix(".co")
        for kernel in SPILL_ONLY:
            fields = functions(name).get(kernel)
            if fields is None:
                continue
            comments = COMMENTS[stem].get(kernel, {"spill_bytes": 0, "reload_bytes": 0, "spill_on": {},
                                                   "reload_on": {}})
            assert set(comments["spill_on"]) | set(comments["reload_on"]) <= {
                m for m in set(comments["spill_on"]) | set(comments["reload_on"])
                if m.startswith(("buffer_", "scratch_"))}, f"{stem} {kernel}: a comment off a scratch access"
            got = (fields["scratch_store_bytes"], fields["scratch_load_bytes"])
            said = (comments["spill_bytes"], comments["reload_bytes"])
            if EXPECTED["fixtures"][name]["target"] == "gfx1250":
                assert said[0] <= got[0] and said[1] <= got[1], f"{stem} {kernel}: comments {said}, oracle {got}"
            else:
                assert said == got, f"{stem} {kernel}: comments say {said} bytes, the oracle counts {got}"
            checked += 1
    assert checked == 59      # 25 fixtures x 2 kernels, and agpr_spill on the 9 with AGPRs


def test_hand_checked_facts():
    # gfx906: MUBUF spills through the entry block's copy of s[0:3] (isa.md
    # section 1); one 4-byte comment per dword access.
    k = functions("gfx906.clang22.co")["spill_pressure"]
    assert k["private_segment_buffer"] == ["s[8:11]"]
    assert (k["scratch_stores"], k["scratch_loads"]) == (63, 81)
    assert (COMMENTS["gfx906.clang22"]["spill_pressure"]["spill"],
            COMMENTS["gfx906.clang22"]["spill_pressure"]["reload"]) == (63, 81)
    # gfx90a, gfx908, gfx942, gfx950: AGPR copies where AGPRs may be allocated,
    # then memory (MUBUF on gfx90a/gfx908, scratch_* on gfx94x/gfx950).
    for name in ("gfx908.clang22.co", "gfx90a.clang22.co", "gfx942.clang22.co", "gfx950.clang22.co",
                 "gfx90a.clang19.co", "gfx940.clang19.co"):
        k = functions(name)["agpr_spill"]
        assert k["agpr_writes"] > 10 and k["agpr_reads"] > 10 and k["matrix_ops"] == 0, name
    assert functions("gfx90a.clang22.co")["agpr_spill"]["private_segment_buffer"] == ["s[8:11]"]
    # No AGPR copies where clang marks the kernel "amdgpu-agpr-alloc"="0" (except gfx908, which spills there anyway).
    assert functions("gfx90a.clang22.co")["spill_pressure"]["agpr_writes"] == 0
    assert functions("gfx908.clang22.co")["spill_pressure"]["agpr_writes"] == 40
    # The same kernel: byte counts compare across generations, instruction counts do not.
    gfx1100 = functions("gfx1100.clang22.co")["private_dynamic"]
    gfx906 = functions("gfx906.clang22.co")["private_dynamic"]
    assert gfx1100["scratch_store_bytes"] == gfx906["scratch_store_bytes"] == 388
    assert gfx1100["scratch_stores"] < gfx906["scratch_stores"]
    # An ordinary buffer resource (s[4:7]) is not scratch; the private array beside it is.
    for name in ("gfx906.clang22.co", "gfx1030.clang22.co", "gfx1100.clang22.co"):
        k = functions(name)["buffer_resource"]
        assert k["scratch_store_bytes"] == 384 and k["scratch_loads"] == 1, name
    # A format load on the private segment buffer is scratch with no width; the
    # MTBUF load beside it never is; without the buffer (flat scratch) neither is.
    for name in ("gfx803.clang22.co", "gfx906.clang22.co", "gfx90a.clang22.co", "gfx1030.clang22.co"):
        k = functions(name)["format_loads"]
        assert k["scratch_unsized"] == {"buffer_load_format_x": 1} and k["scratch_load_bytes"] == 4, name
    for name in ("gfx942.clang22.co", "gfx1100.clang22.co", "gfx1201.clang22.co"):
        assert functions(name)["format_loads"]["scratch_unsized"] == {}, name
    # A volatile array behind a generic pointer: flat_* only, no scratch counted.
    for name in FIXTURES:
        k = functions(name)["private_flat"]
        assert k["flat_ops"] >= 32 and k["scratch_loads"] == k["scratch_stores"] == 0, name
    # Calls: the callee is named, its code (and scratch) stays in its own record.
    for name in FIXTURES:
        k = functions(name)["calls"]
        assert k["calls"] == 2 and k["callees"] == ["_Z6helperPKfi"] * 2, name
        # the callee's 80-float array (and, from LLVM 23 on gfx1250, its saved registers)
        assert k["scratch_stores"] == 0 and functions(name)["_Z6helperPKfi"]["scratch_store_bytes"] >= 320, name
    # Loops: spill_in_loop's spills sit in its loops, except where LLVM 19 on
    # gfx90a/gfx94x keeps its one spill slot outside them.
    outside = []
    for name in FIXTURES:
        k = functions(name)["spill_in_loop"]
        assert k["loops"] >= 3
        assert k["scratch_in_loops"] <= k["scratch_loads"] + k["scratch_stores"], name
        if k["scratch_in_loops"] == 0:
            outside.append(name)
    assert outside == ["gfx90a.clang19.co", "gfx940.clang19.co", "gfx941.clang19.co"]
    # Identity: gfx1100 and gfx1151 get byte-identical code for most kernels.
    same = [s for s, f in functions("gfx1100.clang22.co").items()
            if functions("gfx1151.clang22.co")[s]["code_sha256"] == f["code_sha256"]]
    assert "spill_pressure" in same and "dynamic_stack" not in same
    # Every fixture decodes completely; every instruction counted once.
    for name in FIXTURES:
        for symbol, f in functions(name).items():
            assert f["status"] == "complete", (name, symbol)
            assert len(f["words"]) == f["instructions"] and 4 * sum(map(int, f["words"])) == f["code_bytes"]


def test_derived_scratch_figures_against_the_compilers_comments():
    """Slot bytes (vaddr printed ``off``) are the spill traffic: on every
    spill-only kernel they equal the Folded Spill/Reload comment bytes
    (gfx1250: at least them, as above) and no byte goes through a VGPR
    address; the dynamically indexed private array goes through one on
    every fixture; slot + addressed = all scratch bytes everywhere."""
    checked = 0
    for name in FIXTURES:
        stem = name.removesuffix(".co")
        for symbol, f in functions(name).items():
            assert f["scratch_slot_load_bytes"] + f["scratch_addressed_load_bytes"] == f["scratch_load_bytes"]
            assert f["scratch_slot_store_bytes"] + f["scratch_addressed_store_bytes"] == f["scratch_store_bytes"]
        for kernel in SPILL_ONLY:
            f = functions(name).get(kernel)
            if f is None:
                continue
            said = COMMENTS[stem].get(kernel, {"spill_bytes": 0, "reload_bytes": 0})
            got = (f["scratch_slot_store_bytes"], f["scratch_slot_load_bytes"])
            if EXPECTED["fixtures"][name]["target"] == "gfx1250":
                assert said["spill_bytes"] <= got[0] and said["reload_bytes"] <= got[1], (name, kernel)
            else:
                assert got == (said["spill_bytes"], said["reload_bytes"]), (name, kernel)
            assert f["scratch_addressed_load_bytes"] == f["scratch_addressed_store_bytes"] == 0, (name, kernel)
            checked += 1
        dynamic = functions(name)["private_dynamic"]
        assert dynamic["scratch_addressed_load_bytes"] > 0, name
        # its array is filled at constant offsets (slots) and read at run-time indices
        assert dynamic["scratch_slot_store_bytes"] >= 384, name
        constant = functions(name)["private_const"]
        assert constant["scratch_addressed_load_bytes"] == constant["scratch_addressed_store_bytes"] == 0, name
    assert checked == 59


def test_derived_agpr_figures():
    """No matrix op: every AGPR copy is a spill copy (agpr_spill, every
    target with AGPRs).  mfma_spill, read by hand in ``llvm-objdump-22 -d -z``:
    on gfx908 the rule's split is exact -- 48 accumulator moves (32
    ``v_accvgpr_write_b32 aN, 0`` into a0-a15 on the two paths before the
    loop, 16 ``v_accvgpr_read_b32`` of a0-a15 after it), 78 spill copies (of
    a16-a39: VGPR values parked there and read back).  On gfx90a (LLVM 22)
    the loop carries the accumulator in a16-a31 (``v_accvgpr_mov_b32``,
    followed by the rule) and the 32 zero writes into a16-a31 are its moves;
    after the loop LLVM reuses a0-a15 for spilled values: those 31 copies
    count as accumulator moves by register number (so there
    agpr_spill_copies is a lower bound: 91 by the rule, 122 by hand)."""
    for name in FIXTURES:
        f = functions(name).get("agpr_spill")
        if f is not None:
            assert f["agpr_accumulator_moves"] == 0 and f["agpr_spill_copies"] == f["agpr_writes"] + f["agpr_reads"]
        for symbol, f in functions(name).items():
            assert f["agpr_spill_copies"] + f["agpr_accumulator_moves"] == f["agpr_writes"] + f["agpr_reads"]
    gfx908 = functions("gfx908.clang22.co")
    assert (gfx908["mfma_spill"]["agpr_accumulator_moves"], gfx908["mfma_spill"]["agpr_spill_copies"]) == (48, 78)
    assert (gfx908["matrix"]["agpr_accumulator_moves"], gfx908["matrix"]["agpr_spill_copies"]) == (12, 0)
    gfx90a = functions("gfx90a.clang22.co")["mfma_spill"]
    assert (gfx90a["agpr_accumulator_moves"], gfx90a["agpr_spill_copies"]) == (32 + 31, 122 - 31)
    # every target with AGPRs: the kernel has both kinds; on gfx90a and later the
    # MFMA of ``matrix`` accumulates in VGPRs (acc_cd 0): no AGPR copies at all
    for name in FIXTURES:
        if "mfma_spill" in functions(name):
            f = functions(name)["mfma_spill"]
            assert f["agpr_accumulator_moves"] >= 16 and f["agpr_spill_copies"] >= 16, name
            assert f["scratch_slot_store_bytes"] > 0, name       # and memory spills beside them


def test_derived_loop_figures():
    """spill_in_loop (two nested source loops) compiles, with clang 22, to
    three spans, two of them innermost, depth 2; the innermost spans hold all
    of its in-loop scratch traffic but on gfx1250."""
    for name in FIXTURES:
        for symbol, f in functions(name).items():
            assert f["innermost_loops"] <= f["loops"] and f["loop_depth_max"] <= f["loops"]
            assert (f["innermost_loops"] > 0) == (f["loops"] > 0) == (f["loop_depth_max"] > 0)
            assert f["scratch_in_innermost_loops"] <= f["scratch_in_loops"]
        if name.endswith("clang22.co"):
            k = functions(name)["spill_in_loop"]
            assert (k["loops"], k["innermost_loops"], k["loop_depth_max"]) == (3, 2, 2), name
            if EXPECTED["fixtures"][name]["target"] == "gfx1250":
                # 8 of its 56 in-loop accesses sit in the outer loop only
                assert (k["scratch_in_innermost_loops"], k["scratch_in_loops"]) == (48, 56)
            else:
                assert k["scratch_in_innermost_loops"] == k["scratch_in_loops"], name
    # clang 23 on gfx1201: three nested spans, one innermost, and spills outside it
    k = functions("gfx1201.clang23.co")["spill_in_loop"]
    assert (k["loops"], k["innermost_loops"], k["loop_depth_max"]) == (3, 1, 3)
    assert 0 < k["scratch_in_innermost_loops"] < k["scratch_in_loops"]


# -- the rules on synthetic objdump text ---------------------------------------------------------

GFX906_ENTRY = """
0000000000001000 <k>:
\ts_mov_b64 s[10:11], s[2:3]                                 // 000000001000: BE8A0102
\ts_mov_b64 s[8:9], s[0:1]                                   // 000000001004: BE880100
\ts_load_dwordx2 s[0:1], s[4:5], 0x0                         // 000000001008: C0060002 00000000
\ts_add_u32 s8, s8, s7                                       // 000000001010: 80080708
\ts_addc_u32 s9, s9, 0                                       // 000000001014: 82098009
\tbuffer_store_dword v2, off, s[8:11], 0 offset:4            // 000000001018: E0700004 80020200
\tbuffer_load_dwordx4 v[2:5], v1, s[0:3], 0 offen            // 000000001020: E05C1000 80000201
\tbuffer_load_format_xyzw v[2:5], off, s[8:11], 0            // 000000001028: E00C0000 80020200
\tscratch_load_ubyte_d16_hi v1, off, s2                      // 000000001030: DC8C0000 0102007F
\tflat_store_dword v[0:1], v2                                // 000000001038: DC700000 00000200
\tv_accvgpr_write_b32 a0, v1                                 // 000000001040: D3D94000 18000101
\tds_read_b32 v1, v2                                         // 000000001048: D86C0000 01000002
\ts_cbranch_scc0 65529                                       // 000000001050: BF84FFF9 <k+0x38>
\ts_branch 1                                                 // 000000001054: BF820001 <k+0x5c>
\ts_nop 0                                                    // 000000001058: BF800000
\ts_endpgm                                                   // 00000000105C: BF810000
"""


def synthetic(text: str, psb: bool = True) -> isa_oracle.Evidence:
    insns = isa_oracle.parse_objdump(text)
    size = insns[-1].address + insns[-1].length - insns[0].address
    return isa_oracle.evidence(Function("k", insns[0].address, size, "kernel", bytes(size), psb), insns, {})


def test_rules_on_a_synthetic_gfx9_kernel():
    e = synthetic(GFX906_ENTRY)
    # s[0:1] is overwritten by the argument load: only the copy s[8:11] stays the PSB
    assert e.private_segment_buffer == ["s[8:11]"]
    assert (e.scratch_stores, e.scratch_store_bytes) == (1, 4)
    # the dwordx4 load on s[0:3] is not scratch; the format load is, with no width; the scratch_ d16 load is 1 byte
    assert (e.scratch_loads, e.scratch_load_bytes) == (2, 1)
    assert e.scratch_unsized == {"buffer_load_format_xyzw": 1}
    assert (e.flat_ops, e.agpr_writes, e.lds_ops) == (1, 1, 1)
    # s_cbranch_scc0 at 0x50 goes back to 0x38 (65529 = -7): one loop, holding the flat store,
    # the accvgpr write and the ds read but no scratch access; s_branch goes forward.
    assert e.loops == 1 and e.scratch_in_loops == 0
    assert (e.instructions, e.words) == (16, "1121122222221111")
    assert e.status == "complete"


def test_without_the_descriptor_bit_mubuf_is_not_scratch():
    e = synthetic(GFX906_ENTRY, psb=False)
    assert e.private_segment_buffer == [] and e.scratch_stores == 0 and e.scratch_loads == 1   # the scratch_ one


def test_loop_spans_count_each_access_once():
    text = """
0000000000000000 <k>:
\tscratch_store_b128 off, v[1:4], off offset:16             // 000000000000: ED06807C 00010010
\tscratch_load_b32 v1, off, off                              // 000000000008: ED05007C 01000000
\ts_cbranch_scc1 65533                                       // 000000000010: BFA2FFFD <k+0x8>
\ts_cbranch_vccnz 65532                                      // 000000000014: BFA4FFFC <k+0x8>
\ts_cbranch_execz 65531                                      // 000000000018: BFA5FFFB <k+0x8>
\ts_cbranch_join s4                                          // 00000000001C: BE8A0F04
\ts_endpgm                                                   // 000000000020: BFB00000
"""
    e = synthetic(text, psb=False)
    assert e.loops == 3             # three backward branches; s_cbranch_join is none
    assert e.scratch_in_loops == 1  # the load, inside all three spans, once; the store precedes them
    assert (e.scratch_store_bytes, e.scratch_load_bytes) == (16, 4)


def test_undecoded_words_gaps_and_crossings_set_the_status():
    text = """
0000000000000000 <k>:
\ts_nop 0                                                    // 000000000000: BF800000
\t.long 0xfe000000                                           // 000000000004: FE000000
\ts_endpgm                                                   // 000000000008: BFB00000
"""
    assert synthetic(text).status == "undecoded word at +0x4"
    insns = isa_oracle.parse_objdump(text)
    short = isa_oracle.evidence(Function("k", 0, 6, "kernel", b"", False), insns, {})
    assert short.status == "undecoded word at +0x4"
    ok = [insns[0], insns[2]]
    gap = isa_oracle.evidence(Function("k", 0, 12, "kernel", b"", False), ok, {})
    assert gap.status == "no instruction at +0x4"
    crossing = isa_oracle.evidence(Function("k", 0, 10, "kernel", b"", False),
                                   [Insn(0, 4, "s_nop", "0", ""), Insn(4, 8, "s_mov_b32", "s0, 0x1234", "")], {})
    assert crossing.status == "instruction crosses the end at +0x4"
    assert isa_oracle.evidence(Function("k", 0, 0, "kernel", b"", False), [], {}).status == "size 0"


def test_call_targets_are_followed_on_each_generation():
    gfx9 = """
0000000000001000 <k>:
\ts_getpc_b64 s[8:9]                                         // 000000001000: BE881C00
\ts_add_u32 s8, s8, 0xfffffffc                               // 000000001004: 8008FF08 FFFFFFFC
\ts_addc_u32 s9, s9, lit(0xffffffff)                         // 00000000100C: 8209FF09 FFFFFFFF
\ts_swappc_b64 s[30:31], s[8:9]                              // 000000001014: BE9E1E08
\ts_endpgm                                                   // 000000001018: BF810000
"""
    gfx12 = """
0000000000001000 <k>:
\ts_getpc_b64 s[4:5]                                         // 000000001000: BE844700
\ts_sext_i32_i16 s5, s5                                      // 000000001004: BE850F05
\ts_add_co_u32 s4, s4, 0xfffffffc                            // 000000001008: 8004FF04 FFFFFFFC
\ts_add_co_ci_u32 s5, s5, lit(0xffffffff)                    // 000000001010: 8205FF05 FFFFFFFF
\ts_swappc_b64 s[30:31], s[4:5]                              // 000000001018: BE9E4904
\ts_endpgm                                                   // 00000000101C: BFB00000
"""
    gfx1250 = """
0000000000001000 <k>:
\ts_get_pc_i64 s[4:5]                                        // 000000001000: BE844700
\ts_add_nc_u64 s[4:5], s[4:5], 0xfffffffffffffffc            // 000000001004: A984FE04 FFFFFFFC FFFFFFFF
\ts_swap_pc_i64 s[30:31], s[4:5]                             // 000000001010: BE9E4904
\ts_endpgm                                                   // 000000001014: BFB00000
"""
    for text in (gfx9, gfx12, gfx1250):
        insns = isa_oracle.parse_objdump(text)
        size = insns[-1].address + 4 - 0x1000
        e = isa_oracle.evidence(Function("k", 0x1000, size, "kernel", b"", False), insns, {0x1000: "callee"})
        assert e.calls == 1 and e.callees == ["callee"], text


def test_widths_named_by_mnemonics():
    width = isa_oracle.access_width
    assert width("scratch_load_dwordx3", "scratch_load") == 12
    assert width("scratch_store_b96", "scratch_store") == 12
    assert width("scratch_load_d16_hi_u8", "scratch_load") == 1
    assert width("scratch_load_short_d16_hi", "scratch_load") == 2
    assert width("buffer_load_sshort", "buffer_load") == 2
    assert width("buffer_store_byte_d16_hi", "buffer_store") == 1
    assert width("buffer_load_lds_dwordx4", "buffer_load") == 16
    assert width("buffer_store_format_d16_xy", "buffer_store") is None
    assert width("scratch_load_block", "scratch_load") is None


def test_spill_comments_count_clauses_once():
    asm = """k:
\ts_clause 0x1                            ; 8-byte Folded Reload
\tbuffer_load_dword v0, off, s[8:11], 0
\tbuffer_load_dword v1, off, s[8:11], 0 offset:4
\tbuffer_store_dword v2, off, s[8:11], 0 offset:128 ; 4-byte Folded Spill
.Lfunc_end0:
other:
\tscratch_store_b128 off, v[1:4], off offset:212 ; 16-byte Folded Spill
"""
    assert isa_oracle.spill_comments(asm) == {
        "k": {"spill": 1, "spill_bytes": 4, "spill_on": {"buffer_store_dword": 1},
              "reload": 1, "reload_bytes": 8, "reload_on": {"buffer_load_dword": 1}},
        "other": {"spill": 1, "spill_bytes": 16, "spill_on": {"scratch_store_b128": 1},
                  "reload": 0, "reload_bytes": 0, "reload_on": {}}}


def test_derived_rules_on_synthetic_text():
    text = """
0000000000000000 <k>:
\tv_accvgpr_write_b32 a16, 0                                 // 000000000000: D3D94010 18000080
\tv_accvgpr_mov_b32 a0, a16                                  // 000000000008: 7E00A510
\tv_mfma_f32_32x32x8f16 a[0:15], v[0:1], v[2:3], a[0:15]     // 00000000000C: D3CC8000 04020100
\tv_accvgpr_write_b32 a40, v3                                // 000000000014: D3D94028 18000103
\tv_accvgpr_read_b32 v3, a15                                 // 00000000001C: D3D84003 1800010F
\tscratch_load_dword v1, v2, off                             // 000000000024: DC506000 017F0002
\tscratch_store_dwordx2 off, v[4:5], s3 offset:8             // 00000000002C: DC744008 00030400
\ts_cbranch_scc1 65530                                       // 000000000034: BF85FFFA <k+0x20>
\tbuffer_load_dword v1, off, s[0:3], 0 offset:4              // 000000000038: E0500004 80000100
\tbuffer_store_dword v1, v2, s[0:3], 0 offen                 // 000000000040: E0701000 80000102
\ts_cbranch_scc1 65524                                       // 000000000048: BF85FFF4 <k+0x1c>
\ts_endpgm                                                   // 00000000004C: BF810000
"""
    e = synthetic(text)
    # a16 reaches the accumulator a0 through v_accvgpr_mov: its write is an accumulator move, as is the read of a15
    assert (e.agpr_spill_copies, e.agpr_accumulator_moves) == (1, 2)
    assert (e.scratch_addressed_load_bytes, e.scratch_slot_store_bytes) == (4, 8)
    assert (e.scratch_slot_load_bytes, e.scratch_addressed_store_bytes) == (4, 4)
    # spans [0x20, 0x34] inside [0x1c, 0x48]
    assert (e.loops, e.innermost_loops, e.loop_depth_max) == (2, 1, 2)
    assert (e.scratch_in_loops, e.scratch_in_innermost_loops) == (4, 2)
    assert isa_oracle.agprs("a[4:7]") == [4, 5, 6, 7] and isa_oracle.agprs("v4") == []


def test_classes_and_sequence_digests():
    e = synthetic(GFX906_ENTRY)
    assert e.classes == ["other"] * 5 + ["scratch_store", "other", "scratch_load", "scratch_load", "flat",
                                         "agpr_write", "lds", "loop", "other", "other", "other"]
    bounds, classes = isa_oracle.sequence_digests(e)
    lines = [(o, n, c) for (o, n, _), c in zip(e.listing, e.classes)]
    import hashlib as h
    assert bounds == h.sha256("".join(f"{o} {n}\n" for o, n, _ in lines).encode()).hexdigest()[:16]
    assert classes == h.sha256("".join(f"{o} {n} {c}\n" for o, n, c in lines).encode()).hexdigest()[:16]
    assert set(e.classes) <= set(isa_oracle.CLASSES)
