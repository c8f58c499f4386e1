"""Instruction boundaries and mnemonics as ``llvm-objdump -d -z`` prints them,
to hold spillway's decoder against (the decoder-side check; the field oracle
is tests/support/isa_oracle.py).

objdump prints each instruction's dwords after ``//`` (address, then the
words): its length is 4 x the number of words.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

_SYMBOL = re.compile(r"^([0-9a-f]+) <(.+)>:$")
_INSN = re.compile(r"^\s+(\S+)[^\n]*?//\s*([0-9A-F]+):((?:\s[0-9A-F]{8})+)")


def objdump_instructions(objdump: str, path: Path | str,
                         extra: tuple[str, ...] = ()) -> dict[str, list[tuple[int, int, str]]]:
    """Per symbol: (address, length, mnemonic) of every instruction."""
    text = subprocess.run([objdump, "-d", "-z", *extra, str(path)], capture_output=True, text=True,
                          check=True).stdout
    out: dict[str, list[tuple[int, int, str]]] = {}
    current: list[tuple[int, int, str]] | None = None
    for line in text.splitlines():
        symbol = _SYMBOL.match(line)
        if symbol:
            current = out.setdefault(symbol.group(2), [])
            continue
        match = _INSN.match(line)
        if match and current is not None:
            words = match.group(3).split()
            current.append((int(match.group(2), 16), 4 * len(words), match.group(1)))
    return out
