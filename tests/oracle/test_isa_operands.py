"""spillway's register operands (checker/spillway/isa/operands.py, issue 40
item 1) against llvm-objdump, instruction by instruction, on every function
of every committed fixture whose family has an operand table.

The oracle (tests/support/operand_oracle.py) reads the registers from the
text objdump prints (the objdump of the LLVM the family's table comes
from), with def/use rules of its own; spillway reads them from
the bytes with the tables scripts/generate-isa-operands.py wrote.  Every
instruction spillway answers for must agree (defs and uses, per 32-bit
register of each file); those it does not answer for (DPP/SDWA forms, rows
without operands) are counted, never silently passed: the coverage test
names them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import pytest

from spillway.isa import decoder, operands as isa_operands
from spillway.isa.encodings import FAMILIES
from support import isa_decoder, isa_oracle, operand_oracle

REPO = Path(__file__).resolve().parents[2]
COMMITTED = operand_oracle.fixtures()
FIXTURES = operand_oracle.covered(COMMITTED)


def _text_base(path: Path) -> int:
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as handle:
        text = ELFFile(handle).get_section_by_name(".text")
        assert text is not None
        return text["sh_addr"]


def compare(path: Path, recorded: dict) -> tuple[dict[str, list[str]], Counter, int]:
    """(disagreements by mnemonic, unanswered by mnemonic, instructions agreed)."""
    family_name = decoder.family_of(recorded["target"])
    assert family_name
    family = decoder.load_family(family_name)
    # the wave size as the oracle reads it (the metadata note): wave64 lane masks are SGPR pairs
    table = isa_operands.load_operands(family_name, operand_oracle.wavefront_size(path) or 32)
    assert table is not None
    argv = operand_oracle.table_objdump(recorded["target"]) + operand_oracle.wave_args(path)
    ok, text = isa_oracle.run_objdump(argv, path)
    assert ok, text[:300]
    oracle = {read.offset: read for read in operand_oracle.read_listing(text)}
    base = _text_base(path)
    wrong: dict[str, list[str]] = defaultdict(list)
    unanswered: Counter = Counter()
    agreed = 0
    for symbol, (data, start, size, _psb) in isa_decoder.functions_in(path).items():
        for instruction in decoder.decode(data, start, start + size, family):
            address = base + instruction.offset
            read = oracle.get(address)
            if read is None:
                continue
            bits = isa_operands.instruction_bits(data, instruction)
            got = isa_operands.instruction_operands(table, data, instruction)
            if got is None:
                nsa = (instruction.encoding == "MIMG" and table.nsa is not None
                       and (bits >> table.nsa[0]) & ((1 << table.nsa[1]) - 1))
                a16 = (bits >> {1: 62, 0: 16}[table.nsa[0]]) & 1 if nsa and table.nsa else 0
                unanswered[instruction.mnemonic + (" (NSA, A16)" if a16 else " (NSA)" if nsa else "")] += 1
                continue
            defs = {(r.file, n) for r in got.defs for n in r.units()}
            uses = {(r.file, n) for r in got.uses for n in r.units()}
            if defs != read.defs or uses != read.uses:
                wrong[instruction.mnemonic].append(
                    f"{symbol}+0x{instruction.offset - start:x}: objdump defs {sorted(read.defs)} uses "
                    f"{sorted(read.uses)}; spillway defs {sorted(defs)} uses {sorted(uses)}")
            else:
                agreed += 1
    return wrong, unanswered, agreed


@pytest.mark.parametrize("name", FIXTURES)
def test_operands_equal_objdump_oracle(name):
    path, recorded = COMMITTED[name]
    wrong, _unanswered, agreed = compare(path, recorded)
    assert agreed > 0
    lines = [f"{m} ({len(v)}x): {v[0]}" for m, v in sorted(wrong.items())]
    assert not wrong, f"{name} ({recorded['target']}): {len(wrong)} mnemonics disagree:\n  " + "\n  ".join(lines)


@pytest.mark.parametrize("name", FIXTURES)
def test_only_declared_gaps_go_unanswered(name):
    """What spillway does not answer for is counted, and must be a gap its
    table declares (``coverage.without``: rows the generator could not
    read, by mnemonic), an A16 MIMG NSA form whose row's address count does
    not follow A16, or gfx1250's s_set_vgpr_msb (the VGPR MSB state it sets
    is not modelled).  The DPP and SDWA forms (VOP3 DPP, SDWA compares
    writing an SGPR) and the other NSA forms are read (the forms/
    fixtures hold each)."""
    import json
    import re
    path, recorded = COMMITTED[name]
    family = decoder.family_of(recorded["target"])
    tables = Path(isa_operands.__file__).parent / "tables" / "operands"
    declared = {m for line in json.loads((tables / f"{family}.json").read_text())["coverage"]["without"]
                for m in re.findall(r"\((\w+)\)", line)}
    _wrong, unanswered, _agreed = compare(path, recorded)
    undeclared = {m: n for m, n in unanswered.items()
                  if m.split(" (")[0] not in declared and not m.endswith(" (NSA, A16)") and m != isa_operands.VGPR_MSB}
    assert not undeclared, undeclared


def test_oracle_reads_objdump_lines():
    text = "\n".join([
        "\tv_mac_f32_e32 v2, v1, v2                                  // 000000001500: 2C040501",
        "\tglobal_atomic_add v3, v[0:1], v2, off glc                 // 000000001504: DD098000 037F0200",
        "\tglobal_store_dword v[0:1], a2, off                        // 00000000150C: DC708000 00FF0200",
        "\tv_add_co_u32_e64 v1, s[4:5], v2, v3                       // 000000001514: D1190401 00020702",
        "\ts_load_dwordx4 s[4:7], s[0:1], 0x10                       // 00000000151C: C00A0100 00000010",
        "\tv_dual_mov_b32 v0, v1 :: v_dual_add_f32 v2, v3, v4        // 000000001524: CA100101 00020903",
        "\tv_mul_lo_u16 v0.h, 0x60, v1.h op_sel:[0,1,1]               // 00000000152C: D7055000 000202FF",
    ])
    reads = {r.offset: r for r in operand_oracle.read_listing(text)}
    assert reads[0x1500].defs == {("v", 2)} and reads[0x1500].uses == {("v", 1), ("v", 2)}
    assert reads[0x1504].defs == {("v", 3)} and reads[0x1504].uses == {("v", 0), ("v", 1), ("v", 2)}
    assert reads[0x150C].defs == set() and reads[0x150C].uses == {("v", 0), ("v", 1), ("a", 2)}
    assert reads[0x1514].defs == {("v", 1), ("s", 4), ("s", 5)}
    assert reads[0x151C].defs == {("s", n) for n in range(4, 8)} and reads[0x151C].words == 2
    assert reads[0x1524].defs == {("v", 0), ("v", 2)} and reads[0x1524].uses == {("v", 1), ("v", 3), ("v", 4)}
    # a true16 half is its VGPR; the half written keeps the other
    assert reads[0x152C].defs == {("v", 0)} and reads[0x152C].uses == {("v", 0), ("v", 1)}


def _operand_generator():
    import importlib.util
    spec = importlib.util.spec_from_file_location("generate_isa_operands",
                                                  REPO / "scripts" / "generate-isa-operands.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("family,only", [("gfx11.5", "SOPK,VOP1"), ("gfx940", "SOPK,VOP1,SMEM")])
def test_generator_check_rederives_part_of_a_table(tmp_path, family, only):
    """``--check --only=SOPK,VOP1 FAMILY`` re-derives two encodings of the
    committed table from LLVM (seconds; a whole family takes minutes) and
    finds them equal; the same with one operand's role changed in the
    committed copy finds the difference.  gfx940's LLVM 19 prints register
    numbers (``Reg:491``): the generator names them from that LLVM's own
    disassembler (register_names).  gfx940's SMEM too: its rows' soe form
    (soffset from bits 57-63), which the generator once lost."""
    import json
    import shutil
    generator = _operand_generator()
    major = FAMILIES[family][2]
    command = isa_oracle.llvm_tool("llvm-mc", major)
    library = Path(f"/usr/lib/x86_64-linux-gnu/libLLVM-{major}.so")
    if command is None or not library.is_file():
        pytest.skip(f"llvm-mc-{major} and libLLVM-{major}.so are needed")
    committed = generator.OUT / f"{family}.json"
    data = json.loads(committed.read_text())
    version = generator.tables.llvm_version(command)
    if version != data["llvm"]:
        pytest.skip(f"{family}.json comes from LLVM {data['llvm']}, llvm-mc-{major} is {version}")
    generator.OUT = tmp_path
    shutil.copy(committed, tmp_path / f"{family}.json")
    assert generator.main(["--check", f"--only={only}", family]) == 0
    row = data["encodings"]["VOP1"]["1"]            # v_mov_b32: its destination
    row["operands"][0]["role"] = "u"
    (tmp_path / f"{family}.json").write_text(json.dumps(data))
    assert generator.main(["--check", f"--only={only}", family]) == 1


def test_register_names_of_llvm_19():
    """LLVM 19's register numbers named by its own disassembler: every VGPR
    and AGPR, their tuples at every start (v[1:2], which gfx940's assembler
    refuses), the numbered SGPRs and their aligned tuples, each one number."""
    generator = _operand_generator()
    command = isa_oracle.llvm_tool("llvm-mc", 19)
    if command is None:
        pytest.skip("llvm-mc-19 is needed")
    names = generator.register_names(tuple(command), "gfx940")
    numbered = [name for name in names.values() if name.startswith(("VGPR", "AGPR", "SGPR"))]
    by_name = {name: number for number, name in names.items()}
    assert len(set(numbered)) == len(numbered)      # special registers may share a name (ttmp of two generations)
    for file in ("VGPR", "AGPR"):
        for width in (1, 2, 3, 4, 8, 16, 32):
            assert all("_".join(f"{file}{n}" for n in range(first, first + width)) in by_name
                       for first in range(257 - width)), (file, width)
    assert all(f"SGPR{n}" in by_name for n in range(102))
    assert "SGPR4_SGPR5" in by_name and "SGPR5_SGPR6" not in by_name
    assert {"vcc", "exec", "m0", "flat_scratch", "ttmp[0:1]"} <= set(by_name)


# (source line, a register, whether the row must read it): destinations kept with no tied input LLVM
# shows (s_cmov*, FLAT D16 loads), op_sel's high-half write of a 16-bit result (not of a 32-bit one),
# and gfx9 SMEM's soffset in both its places.
_CMOV = [("s_cmov_b32 s8, s9", ("s", 8), True), ("s_cmov_b64 s[8:9], s[10:11]", ("s", 9), True),
         ("s_cmovk_i32 s8, 0x7", ("s", 8), True)]
_GFX9_SMEM = [("s_load_dword s5, s[2:3], s7 offset:0x10", ("s", 7), True),
              ("s_load_dword s5, s[2:3], s7", ("s", 7), True), ("s_load_dword s5, s[2:3], 0x10", ("s", 5), False)]
_OP_SEL = [("v_mad_u16 v1, v2, v3, v4 op_sel:[0,0,0,1]", ("v", 1), True),
           ("v_fma_f16 v1, v2, v3, v4 op_sel:[0,0,0,1]", ("v", 1), True),
           ("v_mad_u16 v1, v2, v3, v4", ("v", 1), False),
           ("v_mad_u32_u16 v1, v2, v3, v4 op_sel:[0,0,0,1]", ("v", 1), False)]
_D16_GFX9 = [("global_load_short_d16_hi v1, v[2:3], off", ("v", 1), True),
             ("flat_load_ubyte_d16 v1, v[2:3]", ("v", 1), True),
             ("global_load_dword v1, v[2:3], off", ("v", 1), False)]
_D16_GFX11 = [("global_load_d16_hi_b16 v1, v[2:3], off", ("v", 1), True),
              ("flat_load_d16_u8 v1, v[2:3]", ("v", 1), True),
              ("global_load_b32 v1, v[2:3], off", ("v", 1), False)]


def _kept_cases(family: str) -> list[tuple[str, tuple[str, int], bool]]:
    layout = FAMILIES[family][0]
    if family == "gfx8":
        return _CMOV
    if layout == "gfx9":
        return _CMOV + _GFX9_SMEM + _OP_SEL + _D16_GFX9
    if layout == "gfx10":
        return _CMOV + _OP_SEL + _D16_GFX9
    return _CMOV + _D16_GFX11


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_kept_destinations_and_gfx9_smem_offsets(family):
    """Each case assembled by the llvm-mc of the LLVM the family's table
    comes from, read by spillway from the bytes and by the oracle from the
    text: the same defs and uses, and the register named read or not."""
    import re
    import subprocess
    layout, processors, major = FAMILIES[family]
    command = isa_oracle.llvm_tool("llvm-mc", major)
    if command is None:
        pytest.skip(f"llvm-mc-{major} is needed")
    cases = _kept_cases(family)
    run = subprocess.run([*command, "-triple=amdgcn-amd-amdhsa", f"-mcpu={processors.split('+')[0]}",
                          "-show-encoding"], input="\n".join(c[0] for c in cases) + "\n",
                         capture_output=True, text=True, check=False)
    encoded = [bytes(int(b, 16) for b in m.group(1).split(","))
               for m in re.finditer(r"encoding: \[([0-9a-fx,]+)\]", run.stdout)]
    assert len(encoded) == len(cases), run.stderr[:500]
    table = isa_operands.load_operands(family)
    assert table is not None
    decoded = decoder.load_family(family)
    for (line, register, read), data in zip(cases, encoded):
        instruction = next(decoder.decode(data, 0, len(data), decoded))
        got = isa_operands.instruction_operands(table, data, instruction)
        assert got is not None, (family, line)
        uses = {(r.file, n) for r in got.uses for n in r.units()}
        defs = {(r.file, n) for r in got.defs for n in r.units()}
        mnemonic, _, rest = line.partition(" ")
        oracle_defs, oracle_uses = operand_oracle.read_half(mnemonic, rest)
        assert (defs, uses) == (oracle_defs, oracle_uses), (family, line, defs, uses)
        assert (register in uses) == read, (family, line, sorted(uses))
