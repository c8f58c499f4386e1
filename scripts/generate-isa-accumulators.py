#!/usr/bin/env python3
"""Write checker/spillway/isa/tables/accumulators.json: for each table family
with AGPRs (gfx908, gfx90a, gfx940, gfx942, gfx950), every matrix op
(``v_mfma*``, ``v_smfmac*``) and the registers its result (vdst, and the
MFMA's src2 accumulator) spans, as LLVM's own disassembler prints them.

    python3 scripts/generate-isa-accumulators.py [--check]

Each opcode of the family's VOP3 table whose mnemonic is a matrix op is
encoded with vdst = a0 (acc_cd set, bit 15; gfx908 has no acc_cd: its matrix
ops always write AGPRs), src0 = src1 = v0 and src2 = a0 (256), then
disassembled by ``llvm-mc-N --disassemble -mcpu=<processor>`` (N: the LLVM
the family's table came from, encodings.FAMILIES); the width is the count of
registers of the first operand (``a[0:15]``: 16).  ``v_mfma_ld_scale_b32``
(gfx950: the scale operands of the next MFMA) has no accumulator: not listed;
the pair llvm-objdump reads it and that MFMA as (``v_mfma_scale_*``, the
table's pairs) has the MFMA's.  Facts, not code: the table holds only
mnemonic -> dwords.  --check compares instead of writing.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TABLES = REPO / "checker" / "spillway" / "isa" / "tables"
FAMILIES = {"gfx908": ("gfx908", 22), "gfx90a": ("gfx90a", 22), "gfx940": ("gfx940", 19),
            "gfx942": ("gfx942", 22), "gfx950": ("gfx950", 22)}
_FIRST = re.compile(r"^\s*(v_\w+)\s+a(?:\[(\d+):(\d+)\]|(\d+))")


def widths(family: str) -> dict[str, int]:
    processor, version = FAMILIES[family]
    rows = json.loads((TABLES / f"{family}.json").read_text())["encodings"]["VOP3"]
    wanted = sorted((int(key), row[0]) for key, row in rows.items()
                    if row[0].startswith(("v_mfma", "v_smfmac")) and "_ld_scale" not in row[0])
    lines = []
    for key, _mnemonic in wanted:
        dword0 = 0xD0000000 | key << 16 | (0 if family == "gfx908" else 0x8000)
        dword1 = 0x100 | 0x100 << 9 | 0x100 << 18
        raw = dword0.to_bytes(4, "little") + dword1.to_bytes(4, "little")
        lines.append(" ".join(f"0x{b:02x}" for b in raw))
    tool = shutil.which(f"llvm-mc-{version}")
    if tool is None:
        raise SystemExit(f"llvm-mc-{version} is not installed")
    done = subprocess.run([tool, "--disassemble", "-arch=amdgcn", f"-mcpu={processor}"], input="\n".join(lines) + "\n",
                          capture_output=True, text=True)
    printed = [line for line in done.stdout.splitlines() if line.strip().startswith("v_")]
    if len(printed) != len(wanted):
        raise SystemExit(f"{family}: {len(wanted)} matrix opcodes, llvm-mc printed {len(printed)}:\n{done.stderr}")
    out = {}
    for (_key, mnemonic), line in zip(wanted, printed):
        found = _FIRST.match(line)
        if found is None or found.group(1) != mnemonic:
            raise SystemExit(f"{family}: {mnemonic}: llvm-mc printed {line.strip()!r}")
        out[mnemonic] = int(found.group(3)) - int(found.group(2)) + 1 if found.group(2) else 1
    # A pair llvm-objdump reads as one instruction (v_mfma_ld_scale_b32 + an MFMA: v_mfma_scale_*)
    # accumulates where its MFMA does: the decoder gives the pair the MFMA's fields.
    for row in rows.values():
        for partner, (form, _mask, _value) in (row[4].items() if len(row) > 4 else ()):
            partner_mnemonic = rows.get(partner.split(":")[1], [None])[0] if partner.startswith("VOP3:") else None
            if partner_mnemonic in out:
                out[form] = out[partner_mnemonic]
    return dict(sorted(out.items()))


def main(argv: list[str]) -> int:
    text = json.dumps({"source": "scripts/generate-isa-accumulators.py",
                       "families": {family: widths(family) for family in FAMILIES}}, indent=1) + "\n"
    out = TABLES / "accumulators.json"
    if argv == ["--check"]:
        return 0 if out.is_file() and out.read_text() == text else 1
    tmp = out.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(out)
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
