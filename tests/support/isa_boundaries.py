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


def objdump_instructions(objdump: list[str], path: Path | str) -> dict[str, list[tuple[int, int, str]]]:
    """Per symbol: (address, length, mnemonic) of every instruction;
    ``objdump``: the argv that runs llvm-objdump."""
    text = subprocess.run([*objdump, "-d", "-z", str(path)], capture_output=True, text=True,
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


def compare_with_objdump(path: Path | str, objdump: list[str] | str = "llvm-objdump-22",
                         target: str | None = None) -> tuple[int, int, list[str]]:
    """(instructions, kernels, mismatches) of spillway's decoder against
    objdump on every kernel of a code object: each instruction's offset,
    length and mnemonic; the first difference per kernel is listed."""
    import struct

    from spillway.isa.decoder import DecodeError, decode, family_of, load_family
    from spillway.isa.evidence import kernel_ranges
    from spillway.formats.elf import ElfImage
    from spillway.resources.targets import target_id_from_flags

    data = Path(path).read_bytes()
    code, kernels = kernel_ranges(data)
    if target is None:
        target = target_id_from_flags(struct.unpack_from("<I", data, 48)[0], 5)
    family = load_family(family_of(target) or "")
    text = ElfImage(memoryview(data)).section(".text")
    assert text is not None
    listed = objdump_instructions([objdump] if isinstance(objdump, str) else objdump, path)
    count, mismatches = 0, []
    for kernel in kernels:
        base = kernel.start + text.addr
        want = [(a - base, n, m) for a, n, m in listed.get(kernel.name, []) if base <= a < base + kernel.size]
        got = []
        try:
            for insn in decode(code, kernel.start, kernel.start + kernel.size, family):
                got.append((insn.offset - kernel.start, insn.length, insn.mnemonic))
        except DecodeError as stop:
            got.append((stop.offset - kernel.start, -1, f"stopped: {stop.message}"))
        count += len(want)
        for index, (w, g) in enumerate(zip(want, got)):
            if w != g:
                mismatches.append(f"{path} {kernel.name} instruction {index}: objdump {w}, decoder {g}")
                break
        else:
            if len(want) != len(got):
                mismatches.append(f"{path} {kernel.name}: objdump {len(want)} instructions, decoder {len(got)}")
    return count, len(kernels), mismatches
