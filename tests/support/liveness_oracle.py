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

from support.operand_oracle import LINE, read_half

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
        match = LINE.match(line)
        if not match or current is None:
            continue
        mnemonic, rest, address, _words = match.groups()
        if mnemonic.startswith("<unknown>") or mnemonic == ".long":
            continue
        defs: set = set()
        uses: set = set()
        for half in (mnemonic + rest).split("::"):
            name, _, operands = half.strip().partition(" ")
            d, u = read_half(name, operands)
            defs |= d
            uses |= u
        target = None
        aim = TARGET.search(line)
        if aim and (mnemonic == "s_branch" or mnemonic.startswith("s_cbranch_")):
            target = starts.get(aim.group(1), 0) + int(aim.group(2), 16)
        current.append(Step(int(address, 16), mnemonic, frozenset(defs), frozenset(uses), target))
    return out


def entry_registers(rodata_text: str) -> dict[str, frozenset]:
    """Each kernel's registers set at entry, from ``llvm-objdump -D -j
    .rodata`` text (kernel name -> {("s", n)..., ("v", n)...})."""
    out = {}
    name = None
    values: dict[str, int] = {}
    for line in rodata_text.splitlines():
        if line.startswith(".amdhsa_kernel "):
            name, values = line.split(None, 1)[1].strip(), {}
        elif line.startswith(".end_amdhsa_kernel") and name is not None:
            user = values.get("user_sgpr_count")
            if user is None:
                user = sum(size for key, size in USER_SGPRS.items() if values.get("user_sgpr_" + key))
                user += values.get("user_sgpr_kernarg_preload_length", 0)
            system = sum(values.get("system_sgpr_" + key, 0) for key in SYSTEM_SGPRS)
            vgprs = 1 + min(values.get("system_vgpr_workitem_id", 0), 2)
            out[name] = frozenset({("s", n) for n in range(user + system)} | {("v", n) for n in range(vgprs)})
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
