"""The register-operand oracle (issue 40): each instruction's defined and used
VGPRs, AGPRs and numbered SGPRs read from the text ``llvm-objdump -d``
prints, with rules of its own -- never spillway's operand tables or its
generator (the issue forbids copying rule lists between the two).

Reading the text
  An instruction line is ``<mnemonic> <operands>  // <address>: <words>``.
  Operands are split on commas outside brackets; a register is ``vN``,
  ``v[N:M]``, ``aN``, ``a[N:M]``, ``sN``, ``s[N:M]`` (v/a/s then numbers:
  N..M inclusive, so its width is what objdump prints); a true16 half
  ``vN.l``/``vN.h`` (GFX11 and later) is VGPR N.  Everything else
  (vcc, exec, m0, ttmp, null, flat_scratch, constants, ``off``, modifiers)
  is no register.  An address list ``[v6, v5]`` (MIMG NSA, GFX12 VIMAGE)
  holds a register per element.  Modifiers after the last operand (``offset:16 glc``)
  are read for the return rule below.  A VOPD line holds two halves joined
  by ``::``, each read alone.

Rules (written from the ISA manuals' instruction descriptions)
  - The first operand is the destination and defined, except for stores
    (``*store*``, ``ds_write*``, ``exp``), prefetches (``global_prefetch*``:
    into a cache, no register), scalar compares and bit tests
    (``s_cmp*``, ``s_bitcmp*``), branches, ``s_setpc``, ``s_set*``,
    ``s_waitcnt*``, ``s_sendmsg*``, ``s_dcache*``, ``s_atc_probe*``,
    ``s_prefetch*``, ``ds_gws*``, and non-returning atomics.
  - An atomic returns (defines its first operand) when its mnemonic says
    ``_rtn`` or it carries ``glc`` (GFX9-GFX11), ``sc0`` (gfx940 family),
    or ``th:TH_ATOMIC_RETURN`` (GFX12); DS atomics return only as ``_rtn``
    (and ``ds_*_rtn_*``, ``ds_wrxchg*``, ``ds_cmpst*_rtn``).
  - The destination is also used when the instruction keeps part of its
    old value: ``v_writelane``, ``v_mac_*``/``v_fmac_*``/``v_pk_fmac``/``v_dual_fmac``,
    ``v_dot2acc``/``v_dual_dot2acc``,
    ``v_dot*c_*`` (the accumulating dot forms), loads into a half
    (``*d16*``), ``s_cmov*``, ``s_addk``, ``s_mulk``, ``s_bitset*``, the
    ``v_mad_mixhi``/``v_fma_mixhi`` high-half and ``v_mad_mixlo``/``v_fma_mixlo`` low-half writes,
    ``v_permlane16``/``v_permlanex16`` (lanes whose select is out of range keep their value), a
    true16 destination (``v1.h``: the other half stays), and a VOP3 16-bit result written to the
    high half (GFX9, GFX10: ``op_sel:[...,1]`` whose last element, one past the sources, is the
    destination's; the manuals ignore it where the result is 32 bits: ``v_mad_u32_u16``,
    ``v_mad_i32_i16``, ``v_pack_b32_f16``, ``v_cvt_pknorm_*``/``v_cvt_pk_norm_*``, ``v_alignbit_b32``,
    ``v_alignbyte_b32``).
  - VOP3b's second operand is defined too when it is a numbered SGPR
    (carry-out / scale out): ``v_add_co``, ``v_sub_co``, ``v_subrev_co``,
    ``v_addc_co``, ``v_subb_co``, ``v_subbrev_co``, ``v_div_scale``,
    ``v_mad_u64_u32``, ``v_mad_i64_i32``, ``v_mad_co``.
  - DPP (VOP1/VOP2 and, GFX11 and later, ``*_e64_dpp``): a VGPR destination is used too when lanes
    may keep their old value (a compare's SGPR result is a mask written whole):
    ``row_mask`` or ``bank_mask`` other than 0xf, or a lane shift
    (``row_shl``, ``row_shr``, ``wave_shl``, ``wave_shr``, ``row_bcast``)
    without ``bound_ctrl``; ``dpp8`` writes every lane.  SDWA: used too
    with ``dst_unused:UNUSED_PRESERVE``.
  - Every other register operand is used.

Wave size
  GFX10 and later code runs in wave32 or wave64, and objdump reads lane
  masks (a compare's SGPR result, v_cndmask's mask, a carry) as one SGPR
  unless told the code is wave64: ``--mattr=+wavefrontsize64`` is given
  where the code object's metadata note says ``.wavefront_size: 64`` for
  its kernels (llvm-readelf --notes; objdump prints GFX9's code the same
  either way).  A code object whose kernels say both is not read.
"""

from __future__ import annotations

import functools
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

REGISTER = re.compile(r"^([vas])(?:(\d+)|\[(\d+):(\d+)\])(\.[lh])?$")
LINE = re.compile(r"^\s+(\S+)(.*?)\s*//\s*([0-9A-Fa-f]+):((?:\s+[0-9A-Fa-f]{8})+)")
_NO_DEF_PREFIX = ("s_cmp", "s_bitcmp", "s_branch", "s_cbranch", "s_setpc", "s_set", "s_waitcnt", "s_sendmsg",
                  "s_dcache", "s_atc_probe", "s_prefetch", "ds_gws", "ds_write", "ds_store", "exp", "s_nop",
                  "s_endpgm", "s_barrier", "s_trap", "s_sleep", "s_icache", "s_wait", "s_clause", "s_delay",
                  "s_sethalt", "s_setprio", "s_ttrace", "s_incperflevel", "s_decperflevel", "s_memtime",
                  "s_memrealtime", "s_cbranch", "s_sendmsghalt", "s_rfe", "s_call")
_KEEPS_OLD = ("v_writelane", "v_mac_", "v_fmac_", "v_pk_fmac", "s_cmov", "s_addk", "s_mulk", "s_bitset",
              "v_dual_fmac", "v_dot2acc", "v_dual_dot2acc", "v_mad_mixhi", "v_fma_mixhi", "v_mad_mixlo",
              "v_fma_mixlo", "v_permlane16_b32", "v_permlanex16_b32")
# VOP3 instructions with 32-bit results whose op_sel destination bit LLVM prints and the manuals ignore.
_WHOLE_RESULT = ("v_mad_u32_u16", "v_mad_i32_i16", "v_pack_b32_f16", "v_cvt_pknorm_", "v_cvt_pk_norm_",
                 "v_alignbit_b32", "v_alignbyte_b32")
_CARRY = ("v_add_co", "v_sub_co", "v_subrev_co", "v_addc_co", "v_subb_co", "v_subbrev_co", "v_div_scale",
          "v_mad_u64_u32", "v_mad_i64_i32", "v_mad_co")


@dataclass(frozen=True)
class Read:
    offset: int                 # byte address in the section
    words: int
    mnemonic: str
    defs: frozenset[tuple[str, int]]
    uses: frozenset[tuple[str, int]]


def split_operands(text: str) -> list[str]:
    out, depth, current = [], 0, ""
    for char in text:
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        if char == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        out.append(current.strip())
    return out


def registers(token: str) -> list[tuple[str, int]]:
    match = REGISTER.match(token.strip())
    if not match:
        return []
    file, one, low, high, _half = match.groups()
    if one is not None:
        return [(file, int(one))]
    return [(file, n) for n in range(int(low), int(high) + 1)]


def _is_atomic(mnemonic: str) -> bool:
    return "_atomic" in mnemonic


def _returns(mnemonic: str, modifiers: set[str]) -> bool:
    if mnemonic.startswith("ds_"):
        return "_rtn" in mnemonic or mnemonic.startswith(("ds_wrxchg", "ds_cmpst", "ds_condxchg"))
    return "_rtn" in mnemonic or bool({"glc", "sc0", "th:TH_ATOMIC_RETURN"} & modifiers)


_DS_ATOMIC = {"add", "sub", "rsub", "inc", "dec", "min", "max", "and", "or", "xor", "mskor", "wrxchg", "wrxchg2",
              "wrxchg2st64", "cmpst", "cmpxchg", "condxchg32", "pk", "cond"}


def _defines_first(mnemonic: str, modifiers: set[str], count: int) -> bool:
    if mnemonic.startswith("s_sendmsg_rtn"):
        return True                # the message's answer
    if mnemonic.startswith(_NO_DEF_PREFIX) or "store" in mnemonic or "_prefetch" in mnemonic:
        return False
    if mnemonic.startswith(("v_cmp_", "v_cmpx_")) and mnemonic.endswith(("_e64", "_e64_dpp")):
        return count == 3          # an SGPR destination and two sources (GFX10+ v_cmpx_e64: sources only)
    if mnemonic.startswith(("v_cmp_", "v_cmpx_", "v_cmps_", "v_cmpsx_")) and mnemonic.endswith("_e32"):
        return False               # VOPC writes VCC or EXEC only (GFX10+ v_cmpx_e32 prints its two sources alone)
    parts = mnemonic.split("_")
    if _is_atomic(mnemonic) or (parts[0] == "ds" and len(parts) > 1 and parts[1] in _DS_ATOMIC):
        return _returns(mnemonic, modifiers)
    return True


def _keeps_lanes(mnemonic: str, modifiers: set[str]) -> bool:
    if mnemonic.endswith("_sdwa"):
        return "dst_unused:UNUSED_PRESERVE" in modifiers
    if not mnemonic.endswith("_dpp") or any(m.startswith("dpp8:") for m in modifiers):
        return False
    values = dict(m.split(":", 1) for m in modifiers if ":" in m)
    if values.get("row_mask", "0xf") != "0xf" or values.get("bank_mask", "0xf") != "0xf":
        return True
    shifts = any(m.startswith(("row_shl:", "row_shr:", "wave_shl:", "wave_shr:", "row_bcast:")) for m in modifiers)
    return shifts and not any(m.startswith("bound_ctrl:") for m in modifiers)


def _writes_high_half(mnemonic: str, modifiers: set[str], count: int) -> bool:
    """op_sel's destination element (the one after the sources') set on a 16-bit result."""
    for modifier in modifiers:
        if modifier.startswith("op_sel:["):
            elements = modifier[len("op_sel:["):-1].split(",")
            return len(elements) == count and elements[-1] == "1" and not mnemonic.startswith(_WHOLE_RESULT)
    return False


def read_half(mnemonic: str, rest: str) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """Defs and uses of one instruction (or VOPD half) from its operand text."""
    tokens = split_operands(rest)
    # Trailing modifiers are separated by spaces from the last operand ("v1, off offset:16 glc").
    modifiers: set[str] = set()
    if tokens:
        last = tokens[-1].split()
        tokens[-1] = last[0] if last else ""
        modifiers = set(last[1:])
    if mnemonic == "exp" and tokens:
        tokens[0] = tokens[0].split()[-1]      # "mrt0 v0": the target, then the first source
    defs: set[tuple[str, int]] = set()
    uses: set[tuple[str, int]] = set()
    for index, token in enumerate(tokens):
        token = re.sub(r"^(neg|abs|sext|-|\|)+\(?|\)?\|?$", "", token.strip()).strip("|")
        found = registers(token)
        if not found and token.startswith("[") and "," in token:
            # an address list (GFX10/GFX11 MIMG NSA, GFX12 VIMAGE): "[v6, v5]", each used
            found = [r for part in split_operands(token[1:-1]) for r in registers(part)]
        if not found:
            continue
        if index == 0 and _defines_first(mnemonic, modifiers, len(tokens)):
            defs.update(found)
            if (token.endswith((".l", ".h")) or mnemonic.startswith(_KEEPS_OLD) or "d16" in mnemonic
                    or re.match(r"v_dot\d+c_", mnemonic)
                    or (_keeps_lanes(mnemonic, modifiers) and found[0][0] == "v")
                    or _writes_high_half(mnemonic, modifiers, len(tokens))):
                uses.update(found)
        elif index == 1 and mnemonic.startswith(_CARRY) and found[0][0] == "s":
            defs.update(found)
        else:
            uses.update(found)
    return defs, uses


def read_line(line: str) -> Read | None:
    """One instruction line of ``llvm-objdump -d`` text (None: not an
    instruction, or one objdump could not decode)."""
    match = LINE.match(line)
    if not match:
        return None
    mnemonic, rest, address, words = match.groups()
    if mnemonic.startswith("<unknown>") or mnemonic == ".long":
        return None
    defs: set[tuple[str, int]] = set()
    uses: set[tuple[str, int]] = set()
    halves = (mnemonic + rest).split("::")
    for half in halves:
        half = half.strip()
        name, _, operands = half.partition(" ")
        d, u = read_half(name, operands)
        defs |= d
        uses |= u
    return Read(int(address, 16), len(words.split()), halves[0].split()[0] if len(halves) > 1 else mnemonic,
                frozenset(defs), frozenset(uses))


def read_listing(text: str) -> list[Read]:
    """Every instruction line of ``llvm-objdump -d`` text."""
    return [read for read in map(read_line, text.splitlines()) if read is not None]


def objdump(path: Path, tool: str = "llvm-objdump-22") -> str:
    return subprocess.run([tool, "-d", "-z", str(path)], capture_output=True, text=True, check=True).stdout


def fixtures() -> dict[str, tuple[Path, dict]]:
    """The committed fixtures the operand and liveness oracles read: id ->
    (path, recorded figures with its target and LLVM version).  Besides the
    kernels.cpp and rare/ sets, the other committed linked code objects
    (source lines, relocatable device code, v_cmpx, kept destinations, wave64 lane masks; not the relocatable .o
    files objdump reads without relocations): their target from
    llvm-readelf-22, or bookworm's llvm-readelf-19 where LLVM 22 names no
    processor (gfx940, gfx941: "Flags: 0x540, xnack, sramecc"); the LLVM
    recorded is the one that named it."""
    from support import isa_oracle
    from spillway.isa import decoder

    out = isa_oracle.committed_fixtures()
    repo = Path(__file__).resolve().parents[2]
    for folder in ("lines", "rdc", "vcmpx", "forms", "keeps", "wave64"):
        for path in sorted((repo / "tests" / "data" / "isa" / folder / "co").glob("*.co")):
            for version in (22, 19):
                argv = isa_oracle.llvm_tool("llvm-readelf", version)
                target = isa_oracle.readelf_target(argv, path) if argv and path.is_file() else "unknown"
                if decoder.family_of(target):
                    out[f"{folder}/{path.name}"] = (path, {"target": target, "llvm": version})
                    break
    return out


WAVEFRONT_SIZE = re.compile(r"\.wavefront_size:\s+(\d+)")


@functools.lru_cache(maxsize=None)
def wavefront_size(path: Path) -> int | None:
    """The wave size every kernel of the code object's metadata note says
    (llvm-readelf-22 --notes); None where no kernel says one.  Read when a
    test reads the code object, not when the fixtures are listed."""
    from support import isa_oracle

    argv = isa_oracle.llvm_tool("llvm-readelf", 22)
    if argv is None or not path.is_file():
        return None
    text = subprocess.run([*argv, "--notes", str(path)], capture_output=True, text=True).stdout
    sizes = {int(size) for size in WAVEFRONT_SIZE.findall(text)}
    assert len(sizes) <= 1, f"{path}: kernels of wave sizes {sorted(sizes)}: objdump reads one"
    return sizes.pop() if sizes else None


def wave_args(path: Path) -> list[str]:
    """objdump's arguments for the code object's wave size: wave64 lane masks are SGPR pairs."""
    return ["--mattr=+wavefrontsize64"] if wavefront_size(path) == 64 else []


def covered(found: dict[str, tuple[Path, dict]]) -> list[str]:
    """The ids of ``found`` whose family has an operand table."""
    from spillway.isa import decoder, operands

    names = []
    for name, (_path, recorded) in sorted(found.items()):
        family = decoder.family_of(recorded["target"])
        if family and operands.available(family):
            names.append(name)
    return names


def table_objdump(target: str) -> list[str]:
    """argv of the llvm-objdump of the LLVM the target's family tables come
    from (LLVM 22 reads gfx12 without true16: v_mul_lo_u16 v0.h, v1.h
    op_sel:[0,1,1] printed as v0, v1, the op_sel that says "high half"
    dropped); skips the test when that LLVM is not installed."""
    import pytest
    from support import isa_oracle
    from spillway.isa import decoder
    from spillway.isa.encodings import FAMILIES

    family = decoder.family_of(target)
    assert family, target
    major = FAMILIES[family][2]
    argv = isa_oracle.llvm_tool("llvm-objdump", major)
    if argv is None:
        pytest.skip(f"LLVM {major} not installed")
    return argv
