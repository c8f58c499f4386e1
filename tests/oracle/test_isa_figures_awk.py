"""docs/isa.md's objdump recipe for the derived isa figures (scripts/isa-figures.awk,
any POSIX awk over ``llvm-objdump -d -z --disassemble-symbols=KERNEL
--stop-address=END``) gives the committed oracle figures
(tests/data/isa/expected.json) for every kernel of fixtures of each
generation: the documented commands are checked, not just written."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from support import isa_oracle

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "isa"
EXPECTED = json.loads((DATA / "expected.json").read_text())
SCRIPT = REPO / "scripts" / "isa-figures.awk"
FIXTURES = ("gfx803.clang22.co", "gfx906.clang22.co", "gfx908.clang22.co", "gfx90a.clang22.co",
            "gfx942.clang22.co", "gfx1030.clang22.co", "gfx1100.clang22.co", "gfx1201.clang24.co",
            "gfx1250.clang22.co")
FIGURES = ("scratch_slot_load_bytes", "scratch_slot_store_bytes", "scratch_addressed_load_bytes",
           "scratch_addressed_store_bytes", "agpr_spill_copies", "agpr_accumulator_moves", "loops",
           "innermost_loops", "loop_depth_max", "scratch_in_loops", "scratch_in_innermost_loops")


@pytest.mark.parametrize("name", FIXTURES)
def test_awk_recipe_gives_the_oracle_figures(name):
    recorded = EXPECTED["fixtures"][name]
    objdump = isa_oracle.llvm_tool("llvm-objdump", recorded["llvm"])
    awk = shutil.which("awk")
    if objdump is None or awk is None:
        pytest.skip(f"llvm-objdump of LLVM {recorded['llvm']} or awk is not installed")
    path = DATA / "co" / name
    for function in isa_oracle.read_functions(path):
        want = recorded["functions"][function.name]
        listing = subprocess.run([*objdump, "-d", "-z", f"--disassemble-symbols={function.name}",
                                  f"--stop-address={function.start + function.size:#x}", str(path)],
                                 capture_output=True, text=True, check=True).stdout
        quads = " ".join(want["private_segment_buffer"])
        out = subprocess.run([awk, "-v", f"Q={quads}", "-f", str(SCRIPT)], input=listing, capture_output=True,
                             text=True, check=True).stdout
        got = dict(line.split() for line in out.splitlines())
        assert {f: int(got[f]) for f in FIGURES} == {f: want[f] for f in FIGURES}, (name, function.name)
        mix = {f[len("mix."):]: int(n) for f, n in got.items() if f.startswith("mix.")}
        assert mix == want["mix"], (name, function.name)
