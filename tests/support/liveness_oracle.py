"""The live-register oracle (issue 40 item 4): each instruction's register
pressure computed from ``llvm-objdump`` text alone, to hold spillway's
isa.liveness to.

Independent of spillway: the operands come from operand_oracle (its own
reading of the printed operands), the branch targets from the ``<fn+0x..>``
objdump prints after a branch, the registers set at entry from the
``.amdhsa_*`` directives objdump prints for each kernel descriptor
(``-D -j .rodata``), and the dataflow is done here on sets of registers,
instruction by instruction (no blocks, no bit masks).

Rules (as the issue states them): a branch goes to its target, a
conditional one to the next instruction too; ``s_endpgm*`` and
``s_setpc*`` end; everything else falls through.  Live-in = uses |
(live-out - defs), to a fixpoint; "may be defined" forward from the entry
registers, to a fixpoint; pressure = |(live-in | defs) & (defined before |
defs)| per file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from support.operand_oracle import read_line

FUNCTION = re.compile(r"^([0-9a-f]+) <(.+)>:$")
TARGET = re.compile(r"<(.+)\+0x([0-9a-f]+)>\s*$")
DIRECTIVE = re.compile(r"^\s*\.amdhsa_(\w+)\s+(\d+)")
# User SGPRs each enabled .amdhsa_user_sgpr_* directive takes (AMDGPUUsage's table of initial SGPRs).
USER_SGPRS = {"private_segment_buffer": 4, "dispatch_ptr": 2, "queue_ptr": 2, "kernarg_segment_ptr": 2,
              "dispatch_id": 2, "flat_scratch_init": 2, "private_segment_size": 1}
SYSTEM_SGPRS = ("private_segment_wavefront_offset", "workgroup_id_x", "workgroup_id_y", "workgroup_id_z",
                "workgroup_info")


@dataclass
class Step:
    address: int
    mnemonic: str
    defs: frozenset
    uses: frozenset
    target: int | None          # a branch's target address


@dataclass(frozen=True)
class Pressure:
    address: int
    vgprs: int
    agprs: int
    sgprs: int
    undefined_read: bool


def functions(text: str) -> dict[str, list[Step]]:
    """Each function's instructions from ``llvm-objdump -d`` text."""
    out: dict[str, list[Step]] = {}
    starts: dict[str, int] = {}
    current: list[Step] | None = None
    for line in text.splitlines():
        header = FUNCTION.match(line)
        if header:
            current = out.setdefault(header.group(2), [])
            starts[header.group(2)] = int(header.group(1), 16)
            continue
        read = read_line(line)
        if read is None or current is None:
            continue
        target = None
        aim = TARGET.search(line)
        if aim and (read.mnemonic == "s_branch" or read.mnemonic.startswith("s_cbranch_")):
            target = starts.get(aim.group(1), 0) + int(aim.group(2), 16)
        current.append(Step(read.offset, read.mnemonic, read.defs, read.uses, target))
    return out


DESCRIPTOR = re.compile(r"^([0-9a-f]+) <(.+)\.kd>:$")
# Where objdump cannot decode a descriptor (clang 15 and 16's gfx11 descriptors set reserved RSRC1 bits; every
# LLVM refuses them) its -D prints bytes -- not even the descriptor's own (LLVM 22 printed the previous
# descriptor's): the oracle reads those from the -s hex dump at the descriptor's address instead
# (AMDGPUUsage's kernel descriptor layout), the fields the directives would have said.
_PROPERTY_BITS = ("private_segment_buffer", "dispatch_ptr", "queue_ptr", "kernarg_segment_ptr", "dispatch_id",
                  "flat_scratch_init", "private_segment_size")
_RSRC2_BITS = {"private_segment_wavefront_offset": 0, "workgroup_id_x": 7, "workgroup_id_y": 8,
               "workgroup_id_z": 9, "workgroup_info": 10}


def _from_bytes(data: bytes, architected: bool) -> dict[str, int]:
    rsrc2 = int.from_bytes(data[52:56], "little")
    properties = int.from_bytes(data[56:58], "little")
    values = {"user_sgpr_" + name: properties >> bit & 1 for bit, name in enumerate(_PROPERTY_BITS)}
    values["user_sgpr_kernarg_preload_length"] = data[58] & 0x7F
    for name, bit in _RSRC2_BITS.items():
        if not (architected and name == "private_segment_wavefront_offset"):
            values["system_sgpr_" + name] = rsrc2 >> bit & 1
    values["system_vgpr_workitem_id"] = rsrc2 >> 11 & 3
    return values


def _registers(values: dict[str, int], user_sgpr_count: int) -> frozenset:
    """The enabled user SGPRs from s0; the system SGPRs after the descriptor's
    USER_SGPR_COUNT (GFX11 code sets it to 15 or 16 whatever it enables)."""
    user = sum(size for key, size in USER_SGPRS.items() if values.get("user_sgpr_" + key))
    user += values.get("user_sgpr_kernarg_preload_length", 0)
    system = sum(values.get("system_sgpr_" + key, 0) for key in SYSTEM_SGPRS)
    first = max(user, user_sgpr_count)
    vgprs = 1 + min(values.get("system_vgpr_workitem_id", 0), 2)
    return frozenset({("s", n) for n in [*range(user), *range(first, first + system)]}
                     | {("v", n) for n in range(vgprs)})


def rodata_bytes(hex_dump: str) -> dict[int, int]:
    """address -> byte, from ``llvm-objdump -s -j .rodata``."""
    out = {}
    for line in hex_dump.splitlines():
        found = re.match(r"^ ([0-9a-f]+) ((?:[0-9a-f]{2,8} ?){1,4})", line)
        if not found:
            continue
        address = int(found.group(1), 16)
        for byte in bytes.fromhex(found.group(2).replace(" ", "")):
            out[address] = byte
            address += 1
    return out


def _descriptor_bytes(memory: dict[int, int], address: int) -> bytes:
    return bytes(memory.get(address + n, 0) for n in range(64))


def entry_registers(rodata_text: str, hex_dump: str, architected_flat_scratch: bool = False
                    ) -> dict[str, frozenset]:
    """Each kernel's registers set at entry (kernel name -> {("s", n)...,
    ("v", n)...}): the enables from the ``.amdhsa_*`` directives ``llvm-objdump
    -D -j .rodata`` prints, or from the descriptor's bytes in ``llvm-objdump -s
    -j .rodata`` where it prints none; USER_SGPR_COUNT (RSRC2 bits 1-5, no
    directive) always from the bytes.  ``architected_flat_scratch``: the
    target takes no wave-offset SGPR (needed only where objdump prints bytes:
    its directives say it)."""
    memory = rodata_bytes(hex_dump)
    out = {}
    name = None
    values: dict[str, int] = {}
    pending: tuple[str, int] | None = None       # a descriptor header not (yet) followed by directives
    for line in [*rodata_text.splitlines(), ""]:
        header = DESCRIPTOR.match(line)
        if header or not line.strip():
            if pending is not None:              # no directives: objdump could not decode it
                data = _descriptor_bytes(memory, pending[1])
                out[pending[0]] = _registers(_from_bytes(data, architected_flat_scratch), data[52] >> 1 & 0x1F)
            pending = (header.group(2), int(header.group(1), 16)) if header else None
            continue
        if line.startswith(".amdhsa_kernel "):
            name, values = line.split(None, 1)[1].strip(), {}
            address = pending[1] if pending is not None else -1
            pending = None
        elif line.startswith(".end_amdhsa_kernel") and name is not None:
            count = _descriptor_bytes(memory, address)[52] >> 1 & 0x1F if address >= 0 else 0
            out[name] = _registers(values, count)
            name = None
        else:
            found = DIRECTIVE.match(line)
            if found:
                values[found.group(1)] = int(found.group(2))
    return out


def pressure(steps: list[Step], entry: frozenset | None) -> list[Pressure]:
    """Each instruction's pressure; ``entry`` None: every register may be
    defined at entry (a callee)."""
    index = {step.address: n for n, step in enumerate(steps)}
    following: list[list[int]] = []
    for n, step in enumerate(steps):
        nxt = [n + 1] if n + 1 < len(steps) else []
        if step.mnemonic.startswith(("s_endpgm", "s_setpc", "s_set_pc")):
            following.append([])
        elif step.mnemonic == "s_branch":
            following.append([index[step.target]] if step.target in index else [])
        elif step.mnemonic.startswith("s_cbranch_") and step.target is not None:
            following.append(([index[step.target]] if step.target in index else []) + nxt)
        else:
            following.append(nxt)
    live_in: list[frozenset] = [frozenset()] * len(steps)
    changed = True
    while changed:
        changed = False
        for n in reversed(range(len(steps))):
            out = frozenset().union(*(live_in[m] for m in following[n]))
            new = steps[n].uses | (out - steps[n].defs)
            if new != live_in[n]:
                live_in[n], changed = new, True
    # A callee: every register may hold an argument at entry.
    start = entry if entry is not None else frozenset(
        {("v", n) for n in range(512)} | {("a", n) for n in range(256)} | {("s", n) for n in range(256)})
    reach: list[set] = [set() for _ in steps]
    if steps:
        reach[0] = set(start)
    changed = True
    while changed:
        changed = False
        for n, step in enumerate(steps):
            after = reach[n] | step.defs
            for m in following[n]:
                if not after <= reach[m]:
                    reach[m] |= after
                    changed = True
    out = []
    for n, step in enumerate(steps):
        held = (live_in[n] | step.defs) & (reach[n] | step.defs)
        count = {f: sum(1 for file, _ in held if file == f) for f in "vas"}
        out.append(Pressure(step.address, count["v"], count["a"], count["s"], bool(step.uses - reach[n])))
    return out


def disagreements(steps: list[Step], entry: frozenset | None, found, symbol: str) -> list[str]:
    """Where spillway's steps (isa.liveness.PressureStep, offsets from the
    function's start) differ from the oracle's pressure of ``steps``."""
    base = steps[0].address
    expected = {p.address - base: p for p in pressure(steps, entry)}
    wrong = []
    for step in found.steps:
        want = expected.get(step.offset)
        if want is None:
            wrong.append(f"{symbol}+0x{step.offset:x} {step.mnemonic}: not an instruction in objdump's text")
            continue
        got = (step.vgprs, step.agprs, step.sgprs, step.undefined_read)
        if got != (want.vgprs, want.agprs, want.sgprs, want.undefined_read):
            wrong.append(f"{symbol}+0x{step.offset:x} {step.mnemonic}: spillway v/a/s/undef {got}, objdump "
                         f"{(want.vgprs, want.agprs, want.sgprs, want.undefined_read)}")
    return wrong


# Targets whose AGPRs share the VGPR file: .vgpr_count counts both (arch VGPRs rounded up to 4, then AGPRs).
UNIFIED = ("gfx90a", "gfx940", "gfx941", "gfx942", "gfx950", "gfx9-4-generic")


def peaks_within_counts(found, record: dict) -> list[str]:
    """The issue's truth: peak VGPRs <= .vgpr_count (where AGPRs share the
    file: arch VGPRs <= .vgpr_count - .agpr_count and VGPRs + AGPRs <=
    .vgpr_count), AGPRs <= .agpr_count, SGPRs <= .sgpr_count.  ``record``:
    the kernel's metadata in report terms (vgpr_count, agpr_count,
    sgpr_count, target)."""
    vgprs, agprs, sgprs = record["vgpr_count"], record.get("agpr_count"), record["sgpr_count"]
    unified = agprs is not None and record["target"].split(":")[0] in UNIFIED
    out = []
    if found.vgprs.registers > (vgprs - agprs if unified else vgprs):
        out.append(f"VGPRs {found.vgprs.registers} > {vgprs}" + (f" - {agprs}" if unified else ""))
    if found.agprs.registers > (agprs or 0):
        out.append(f"AGPRs {found.agprs.registers} > {agprs}")
    if unified and found.vgprs.registers + found.agprs.registers > vgprs:
        out.append(f"VGPRs + AGPRs {found.vgprs.registers + found.agprs.registers} > {vgprs}")
    if found.sgprs.registers > sgprs:
        out.append(f"SGPRs {found.sgprs.registers} > {sgprs}")
    return out


def loop_spans(steps: list[Step]) -> list[tuple[int, int]]:
    """The loops of a function as offsets from its start, from objdump's
    branch targets alone: each backward branch (a target at or before the
    branch) grouped by its target, (head, last branch back), by head."""
    base = steps[0].address if steps else 0
    heads: dict[int, int] = {}
    for step in steps:
        if step.target is not None and step.target <= step.address:
            heads[step.target - base] = max(heads.get(step.target - base, -1), step.address - base)
    return sorted(heads.items())


def loop_peaks(steps: list[Step], entry: frozenset | None, spans: list[tuple[int, int]]
               ) -> list[dict[str, tuple[int, int | None]]]:
    """Each span's peaks by this oracle's pressure: per file ("v", "a", "s")
    the most registers at an instruction inside it (both ends included) and
    the first offset (None: none live)."""
    base = steps[0].address if steps else 0
    counted = pressure(steps, entry)
    out = []
    for start, end in spans:
        inside = [p for p in counted if start <= p.address - base <= end]
        peaks = {}
        for file, attribute in (("v", "vgprs"), ("a", "agprs"), ("s", "sgprs")):
            most = max((getattr(p, attribute) for p in inside), default=0)
            first = next((p.address - base for p in inside if getattr(p, attribute) == most), None) if most else None
            peaks[file] = (most, first)
        out.append(peaks)
    return out


def innermost_span(spans: list[tuple[int, int]], offset: int) -> tuple[int, int] | None:
    """Of the spans holding ``offset``, the one holding no other that holds it (None: none holds it); of
    spans that overlap without nesting (two back branches to nearby heads, as in a kernel of the matrix's
    builds: +0x294..+0xc74 and +0x2ac..+0xf08), the one entered last, its head latest."""
    holding = [span for span in spans if span[0] <= offset <= span[1]]
    inner = [span for span in holding
             if not any(other != span and span[0] <= other[0] and other[1] <= span[1] for other in holding)]
    return max(inner, key=lambda span: span[0]) if inner else None
