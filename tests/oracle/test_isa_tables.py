"""The decoder's opcode tables (checker/spillway/isa/tables/) hold every
instruction LLVM's assembler knows (issue 31).

scripts/generate-isa-tables.py refuses to write a table its audit finds
incomplete; this keeps the committed tables so without running it all:
every mnemonic of LLVM's own assembler (its AsmMatcher table, read from the
libLLVM llvm-mc runs on) that llvm-mc accepts for a processor must be a
mnemonic of that processor's table (less LLVM's _e32/_e64/_sdwa/_dpp
suffixes) or one of the table's recorded aliases -- each alias with the
encoding llvm-mc gave it, which must decode with the table to that length
(checked here without LLVM) -- or one the generator lists, with LLVM's
reason, as taking no operands at all (UNASSEMBLABLE).  One llvm-mc run per processor, with the
table's LLVM.  SPILLWAY_ISA_TABLES_FULL=1 also runs the generator's whole
audit (``--check``: every opcode value of every encoding under random
operands, minutes per family).
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spillway.isa import decoder
from spillway.isa.encodings import FAMILIES, PROCESSOR_FAMILY
from support import isa_oracle

REPO = Path(__file__).resolve().parents[2]
GENERATOR = REPO / "scripts" / "generate-isa-tables.py"
TABLES = REPO / "checker" / "spillway" / "isa" / "tables"


def _generator():
    spec = importlib.util.spec_from_file_location("generate_isa_tables", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATE = _generator()


def _table(name: str) -> dict:
    return json.loads((TABLES / f"{name}.json").read_text())


def _llvm_mc(major: int) -> list[str] | None:
    """llvm-mc of that LLVM (the sid root's through its own loader, as the oracle runs its tools)."""
    return isa_oracle.llvm_tool("llvm-mc", major)


def _missing(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_recorded_aliases_decode_with_the_table(name):
    """No LLVM: each alias llvm-mc assembled at generation decodes with the
    table as one instruction of the length llvm-mc encoded."""
    data = _table(name)
    family = decoder.load_family(name)
    for mnemonic, examples in data.get("aliases", {}).items():
        for line, code, processors in examples:
            raw = bytes.fromhex(code)
            found = list(decoder.decode(raw, 0, len(raw), family))
            assert [i.length for i in found] == [len(raw)], f"{name} ({processors}): `{line}` [{code}]"


def _llvm_for(name: str, data: dict) -> list[str]:
    """llvm-mc of the table's LLVM (skip, or fail in CI, without it)."""
    major = FAMILIES[name][2]
    command = _llvm_mc(major)
    if command is None:
        _missing(f"llvm-mc-{major} is not installed (scripts/install-test-deps.sh)")
    assert command is not None
    version = subprocess.run(command + ["--version"], capture_output=True, text=True).stdout
    if data["llvm"] not in version:
        pytest.skip(f"{name}.json comes from LLVM {data['llvm']}, llvm-mc-{major} is another")
    return command


def _lacking(name: str, data: dict, command: list[str]) -> tuple[list[str], int]:
    """Per processor of the family LLVM knows: the mnemonics llvm-mc takes
    there that the table lacks (no row, no alias, no UNASSEMBLABLE reason);
    and how many processors were asked."""
    mnemonics = GENERATE.matcher_mnemonics(FAMILIES[name][2])
    known = GENERATE.table_mnemonics(data) | set(data.get("aliases", {}))
    known |= {m for family, m in GENERATE.UNASSEMBLABLE if family == name}     # with the generator's reason
    checked = 0
    faults = []
    for cpu in [p for p, f in PROCESSOR_FAMILY.items() if f == name]:
        absent = GENERATE.absent_mnemonics(command, cpu, mnemonics)
        if absent is None:
            continue                 # this LLVM does not know the processor (gfx941 in LLVM 22 ...)
        lacking = [m for m in mnemonics if m not in absent and m not in known]
        if lacking:
            faults.append(f"{cpu}: {', '.join(lacking)}")
        checked += 1
    return faults, checked


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_mnemonic_llvm_assembles_is_in_the_table(name):
    """The test that fails on the tables of 4221669: ds_gws_barrier (and the
    other ds_gws_*, ds_ordered_count, buffer_store_lds_dword, image_bvh_*,
    v_mfma_scale_*) assembled on their processors but were no mnemonic of
    the tables."""
    data = _table(name)
    faults, checked = _lacking(name, data, _llvm_for(name, data))
    assert checked, f"LLVM {data['llvm']} knows no processor of {name}"
    assert not faults, f"{name}.json lacks mnemonics llvm-mc assembles:\n  " + "\n  ".join(faults)


def _without(data: dict, mnemonic: str) -> dict:
    """The table less every row and alias of ``mnemonic`` (a table of 4221669's kind)."""
    out = copy.deepcopy(data)
    for rows in out["encodings"].values():
        for key in [k for k, row in rows.items() if row[0] == mnemonic]:
            del rows[key]
    out.get("aliases", {}).pop(mnemonic, None)
    return out


def test_a_table_missing_an_opcode_llvm_assembles_fails_every_audit():
    """The known-bad sample: gfx900's table less its ds_gws_barrier row (the
    row 4221669's tables lacked).  The check above names it; the generator's
    disassembler sweep (audit 1, the DS encoding only here) reports DS
    opcode 157 as decoded by LLVM with no row; its assembler check (audit 2)
    reports llvm-mc's encoding of ``ds_gws_barrier v0 gds`` as one the table
    does not decode.  The complete table passes all three."""
    name, cpu = "gfx900", "gfx900"
    whole = _table(name)
    command = _llvm_for(name, whole)
    bad = _without(whole, "ds_gws_barrier")
    assert bad != whole

    faults, _checked = _lacking(name, bad, command)
    assert any("ds_gws_barrier" in fault.split(": ", 1)[1].split(", ") for fault in faults), faults
    assert _lacking(name, whole, command)[0] == []

    problems, _texts = GENERATE.sweep(name, decoder.family_from_table(name, bad), command, cpu, only=("DS",))
    assert any("DS opcode 157 (ds_gws_barrier)" in p and "has no row" in p for p in problems), problems
    problems, _texts = GENERATE.sweep(name, decoder.family_from_table(name, whole), command, cpu, only=("DS",))
    assert problems == []

    line = "ds_gws_barrier v0 gds"
    code, = GENERATE.assemble(command, cpu, [line])
    assert isinstance(code, bytes), code
    finding = GENERATE.Finding("ds_gws_barrier", (cpu,), line, code)
    problems, _aliases = GENERATE.assembler_check(name, decoder.family_from_table(name, bad), [finding])
    assert len(problems) == 1 and "`ds_gws_barrier v0 gds`" in problems[0] and "DS opcode 157" in problems[0]
    assert GENERATE.assembler_check(name, decoder.family_from_table(name, whole), [finding]) == ([], 1)


def test_the_whole_audit():
    """SPILLWAY_ISA_TABLES_FULL=1: scripts/generate-isa-tables.py --check
    (both audits of every family; the committed tables must be what LLVM
    says now)."""
    if not os.environ.get("SPILLWAY_ISA_TABLES_FULL"):
        pytest.skip("SPILLWAY_ISA_TABLES_FULL=1 runs the generator's whole audit (about 20 minutes)")
    done = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO / "checker")))
    assert done.returncode == 0, done.stderr[-4000:]


# GFX6 (SI) and GFX7 (CI): LLVM's assembler knows them, its disassembler does not.
GFX6_GFX7 = ("gfx600", "gfx601", "gfx602", "gfx700", "gfx701", "gfx702", "gfx703", "gfx704", "gfx705")


@pytest.mark.parametrize("major", (19, 22, 23, 24))
def test_no_llvm_disassembles_gfx6_gfx7(major):
    """Why GFX6/GFX7 have no table (docs/isa.md, "The decoder's opcode tables"):
    each LLVM here assembles for gfx600-gfx705 but refuses to disassemble
    for them, so there is nothing to take a table from and no objdump to
    hold one to.  When an LLVM starts to disassemble them, this fails: make
    the tables then.  spillway says so in every such kernel's isa status."""
    command = _llvm_mc(major)
    if command is None:
        _missing(f"llvm-mc-{major} is not installed (scripts/install-test-deps.sh)")
    assert command is not None
    for cpu in GFX6_GFX7:
        assert cpu not in PROCESSOR_FAMILY
        assembled = GENERATE.assemble(command, cpu, ["s_nop 0"])
        assert assembled == [bytes.fromhex("000080bf")], (cpu, assembled)
        run = subprocess.run(command + ["--disassemble", "-triple=amdgcn-amd-amdhsa", f"-mcpu={cpu}"],
                             input="0x00 0x00 0x80 0xbf\n", capture_output=True, text=True,
                             env=dict(os.environ, LLVM_DISABLE_SYMBOLIZATION="1"))
        assert run.returncode != 0 and "isassembly not yet supported for subtarget" in run.stderr, (cpu, run.stderr)
        assert "s_nop" not in run.stdout
        assert decoder.family_of(cpu) is None


@pytest.mark.parametrize("major", (22, 23, 24))
def test_every_processor_llvm_knows_has_a_table_or_a_reason(major):
    """Each gfx processor (and generic target) llvm-mc lists has a table
    family, but GFX6/GFX7 (test_no_llvm_disassembles_gfx6_gfx7): a target
    a new LLVM adds fails here until it gets a table or a reason."""
    command = _llvm_mc(major)
    if command is None:
        _missing(f"llvm-mc-{major} is not installed (scripts/install-test-deps.sh)")
    assert command is not None
    run = subprocess.run(command + ["-triple=amdgcn-amd-amdhsa", "-mcpu=help"], input="", capture_output=True,
                         text=True)
    listed = set(re.findall(r"^\s+(gfx[0-9a-z-]+)\s+- Select the", run.stdout + run.stderr, re.M))
    assert {"gfx600", "gfx803", "gfx1250"} <= listed, run.stderr[:400]
    without = sorted(cpu for cpu in listed if cpu not in PROCESSOR_FAMILY and cpu not in GFX6_GFX7)
    assert not without, f"LLVM {major} knows {', '.join(without)}: no table family (encodings.PROCESSOR_FAMILY)"
