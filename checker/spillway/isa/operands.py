"""Register operands of one AMDGPU instruction: the VGPRs, AGPRs and numbered
SGPRs it defines and uses, in 32-bit registers (issue 40 item 1).

Pure: bytes in (the ``bits`` of an instruction the decoder found), no LLVM.
The facts come from ``tables/operands/<family>.json``, written by
``scripts/generate-isa-operands.py`` from ``llvm-mc --disassemble
-show-inst`` and LLVM's instruction descriptors (regenerated, not edited).
A row lists each register operand of an opcode:

  role     "d" defined, "u" used, "ud" both (a destination that keeps part
           of its old value: LLVM ties it to an input -- v_mac/v_fmac,
           v_writelane, MUBUF/DS d16 loads, s_addk; by the manuals, s_bitset,
           s_cmov/s_cmovk and FLAT/global/scratch d16 loads, which LLVM's
           disassembler shows no tied input for)
  ud_when  [bit, value]: a "d" operand is "ud" where those bits hold (GFX9/
           GFX10 VOP3 op_sel's destination bit: a 16-bit result written to
           the VGPR's high half, the low half kept)
  shift, width, scale, files
           the bit field; the register number is value x scale + the file's
           offset (a 9-bit source: VGPR at offset -256, SGPR at 0), rounded
           down to ``align`` where LLVM reads a tuple so (SGPR pairs)
  acc_bit  gfx90a and later: set, the VGPR field names an AGPR
  when     [bit, value]: the operand is a register only where those bits
           hold (SMEM's soffset, an immediate otherwise)
  half_bit a true16 operand (GFX11 and later, ``v1.l``/``v1.h``): the bit
           that names the VGPR's high half -- inside the field (e32: its
           top VGPR bit, left out of the number) or an op_sel bit (VOP3);
           a half written keeps the other, so its role is "ud"
  units    its width in 32-bit registers, as llvm-objdump prints it; or
  width_bits, width_table
           the width for each combination of the bits that change it (MIMG
           dmask, tfe, d16)
  wave64   [units, alignment] (GFX10 and later): the SGPR width in wave64
           code where it is not the wave32 one the row gives (a lane mask:
           a VOP3 compare's sdst, v_cndmask's mask, a carry out or in,
           v_div_scale's and v_mad_u64_u32's sdst are s[4:5] there, s4 in
           wave32); load_operands(family, 64) reads it
A row may hold ``form_bits`` (bits that change the list of operands: an
atomic's return bit, MUBUF offen/idxen) with one list per combination, and
an ``alternative`` picked by one field's value (global_* with saddr "off":
no saddr, a 64-bit vaddr).

Special registers (vcc, exec, m0, flat_scratch, xnack_mask, ttmp, null),
inline constants and literals are no operands here: a numbered SGPR is one
below the family's ``sgpr_limit``.  ``operands()`` answers None where the
table has no row or a field combination LLVM never printed: the caller
counts such code as partial.

Registers in the dwords the probes keep plain are read here, by the ISA
manuals' layouts: the DPP/SDWA dword of VOP1/VOP2/VOPC (``_extended``) and
of VOP3/VOP3P (GFX11 and later, ``_vop3_dpp``), the SGPR an SDWA compare
writes with SD set (``_sdwa_compare_result``), MIMG NSA address lists
(GFX10, GFX11: ``_nsa_addresses``; an A16 list the row cannot count gets
None).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from spillway import json_codec
import spillway.isa.encodings as encodings
from spillway.isa import decoder
from spillway.isa.decoder import Instruction

VGPR = "v"
AGPR = "a"
SGPR = "s"
FILES = (VGPR, AGPR, SGPR)
_REGISTERS = {VGPR: 512, AGPR: 256, SGPR: 256}      # numbers a file can hold at all


@dataclass(frozen=True, slots=True)
class Registers:
    """``count`` registers of one file from ``first`` (v[4:7]: v, 4, 4)."""
    file: str
    first: int
    count: int

    def units(self) -> range:
        return range(self.first, self.first + self.count)

    def __str__(self) -> str:
        if self.count == 1:
            return f"{self.file}{self.first}"
        return f"{self.file}[{self.first}:{self.first + self.count - 1}]"


@dataclass(frozen=True, slots=True)
class Operands:
    defs: tuple[Registers, ...]
    uses: tuple[Registers, ...]

    def defined(self, file: str) -> frozenset[int]:
        return frozenset(n for r in self.defs if r.file == file for n in r.units())

    def used(self, file: str) -> frozenset[int]:
        return frozenset(n for r in self.uses if r.file == file for n in r.units())


@dataclass(frozen=True, slots=True)
class _Operand:
    role: str
    shift: int
    mask: int
    scale: int
    files: tuple[tuple[str, int, int], ...]       # (file, offset, alignment)
    acc_bit: int
    when: tuple[tuple[int, int], ...]
    units: int
    width_bits: tuple[int, ...]
    width_table: tuple[int | None, ...]
    half_bit: int                                 # true16: the bit naming the VGPR's high half; -1 none
    ud_when: tuple[tuple[int, int], ...] = ()     # where these bits hold, a "d" operand is "ud"


@dataclass(frozen=True, slots=True)
class _Form:
    operands: tuple[_Operand, ...]


@dataclass(frozen=True, slots=True)
class _Row:
    form_bits: tuple[int, ...]
    forms: dict[int, _Form]                        # combination of the form bits -> operands
    alternative: tuple[int, int, int, "_Row"] | None = None   # (shift, mask, value, row)


@dataclass(frozen=True)
class OperandTable:
    family: str
    llvm: str
    sgpr_limit: int
    rows: dict[tuple[str, int], _Row]
    nsa: tuple[int, int] | None = None            # (shift, width) of MIMG's NSA field (GFX10, GFX11)
    wavefront_size: int = 32                      # the lane-mask widths read: wave32's, or wave64's


def _operand(data: dict, wave64: bool) -> _Operand:
    aligns = data.get("align", {})
    units = data["units"]
    if wave64 and "wave64" in data:
        # a lane mask: an SGPR pair in wave64 (the row's wave32 width otherwise)
        units, align = data["wave64"]
        aligns = dict(aligns, s=align)
    return _Operand(
        role=data["role"], shift=data["shift"], mask=(1 << data["width"]) - 1, scale=data["scale"],
        files=tuple((file, offset, aligns.get(file, 1)) for file, offset in data["files"].items()),
        acc_bit=data.get("acc_bit", -1), when=tuple((b, v) for b, v in data.get("when", ())),
        units=units, width_bits=tuple(data.get("width_bits", ())),
        width_table=tuple(data.get("width_table", ())), half_bit=data.get("half_bit", -1),
        ud_when=tuple((b, v) for b, v in data.get("ud_when", ())))


def _row(data: dict, wave64: bool) -> _Row:
    if "form_bits" in data:
        forms = {int(combo): _Form(tuple(_operand(o, wave64) for o in form["operands"]))
                 for combo, form in data["forms"].items()}
        row = _Row(tuple(data["form_bits"]), forms)
    else:
        row = _Row((), {0: _Form(tuple(_operand(o, wave64) for o in data["operands"]))})
    other = data.get("alternative")
    if other is not None:
        shift, width, value = other["field"]
        return _Row(row.form_bits, row.forms, (shift, (1 << width) - 1, value, _row(other, wave64)))
    return row


WAVE_SIZES = (32, 64)


def table_from_data(data: dict, wavefront_size: int = 32) -> OperandTable:
    """The table for code of ``wavefront_size`` lanes (32 or 64): in
    wave64 the operands with a ``wave64`` width read that one."""
    if wavefront_size not in WAVE_SIZES:
        raise ValueError(f"wavefront size {wavefront_size} is neither 32 nor 64")
    wave64 = wavefront_size == 64
    rows = {(encoding, int(key)): _row(row, wave64)
            for encoding, entries in data["encodings"].items() for key, row in entries.items()}
    nsa = None
    layout = encodings.FAMILIES.get(data["family"], ("",))[0]
    mimg = next((e for e in encodings.LAYOUTS.get(layout, ()) if e.name == "MIMG"), None)
    if mimg is not None and mimg.aux is not None:
        nsa = (mimg.aux[0], mimg.aux[1])
    return OperandTable(data["family"], data.get("llvm", "?"), data["sgpr_limit"], rows, nsa, wavefront_size)


def instruction_bits(code: bytes | memoryview, instruction: Instruction) -> int:
    """``bits`` for ``operands()``: the decoder's dword0 | dword1 << 32, and
    for a 96-bit encoding (GFX12 memory, VOPD3) and a VOP3/VOP3P DPP form
    (GFX11 and later) its third dword << 64; for a GFX10/GFX11 MIMG NSA form
    every dword after the 64 bits (its address bytes) from bit 64."""
    bits = instruction.bits
    if instruction.encoding == "MIMG" and instruction.length > 8:
        # GFX10/GFX11 NSA: the address bytes after the 64 bits
        at = instruction.offset + 8
        return bits | int.from_bytes(bytes(code[at:instruction.offset + instruction.length]), "little") << 64
    third = instruction.encoding in _NINETY_SIX or (instruction.encoding in _VOP3_DPP
                                                     and instruction.mnemonic.endswith("_dpp"))
    if third and instruction.length >= 12:
        at = instruction.offset + 8
        bits |= int.from_bytes(bytes(code[at:at + 4]), "little") << 64
    return bits


def instruction_operands(table: OperandTable, code: bytes | memoryview, instruction: Instruction) -> Operands | None:
    """``operands()`` of an instruction the decoder found in ``code``: its
    key and bits read here, and of a pair LLVM reads as one (gfx950's
    v_mfma_ld_scale_b32 and the MFMA after it: v_mfma_scale_*, whose
    ``bits`` are the second's) the first's registers too (the scales)."""
    family = decoder.load_family(table.family)
    layout = {e.name: e for e in encodings.LAYOUTS[family.layout]}
    bits = instruction_bits(code, instruction)
    got = operands(table, instruction.encoding, layout[instruction.encoding].key(instruction.bits), bits,
                   instruction.mnemonic)
    at = instruction.offset
    head = int.from_bytes(bytes(code[at:at + 8]), "little")
    if got is None or instruction.length < 16 or head == instruction.bits & ((1 << 64) - 1):
        return got
    first = next(decoder.decode(code, at, at + 8, family))       # alone: its partner lies past the end
    alone = operands(table, first.encoding, layout[first.encoding].key(first.bits), first.bits, first.mnemonic)
    if alone is None:
        return None
    return Operands(alone.defs + got.defs, alone.uses + got.uses)


_NINETY_SIX = frozenset(("VBUFFER", "VIMAGE", "VSAMPLE", "VFLAT", "VSCRATCH", "VGLOBAL", "VOPD3"))
_VOP3_DPP = frozenset(("VOP3", "VOP3P"))         # GFX11 and later: + a DPP16 or DPP8 dword (bits 64-95)


def _path(family: str):
    return resources.files("spillway.isa").joinpath("tables").joinpath("operands").joinpath(f"{family}.json")


def available(family: str) -> bool:
    return _path(family).is_file()


def load_operands(family: str, wavefront_size: int = 32) -> OperandTable | None:
    """The family's operand table for code of ``wavefront_size`` lanes (the
    kernel's: 64 on GFX9 and before, 32 or 64 on GFX10 and later, where a
    lane mask is one SGPR or a pair); None when none was generated for it."""
    return _load_operands(family, wavefront_size)


@lru_cache(maxsize=None)
def _load_operands(family: str, wavefront_size: int) -> OperandTable | None:
    if not available(family):
        return None
    return table_from_data(json_codec.loads(_path(family).read_bytes()), wavefront_size)


def _register(operand: _Operand, bits: int, limit: int) -> Registers | None:
    for bit, value in operand.when:
        if (bits >> bit) & 1 != value:
            return None
    scaled = ((bits >> operand.shift) & operand.mask) * operand.scale
    if operand.width_bits:
        combo = sum(((bits >> bit) & 1) << n for n, bit in enumerate(operand.width_bits))
        units = operand.width_table[combo] if combo < len(operand.width_table) else None
        if units is None:
            raise _Unknown
    else:
        units = operand.units
    for file, offset, align in operand.files:
        number = scaled + offset
        number -= number % align
        if number < 0:
            continue
        if file == SGPR:
            if number + units > limit:
                continue
            return Registers(SGPR, number, units)
        if operand.shift <= operand.half_bit < operand.shift + operand.mask.bit_length():
            # e32 true16: the field's top VGPR bit says which half (v0-v127 only)
            number -= (((bits >> operand.half_bit) & 1) << (operand.half_bit - operand.shift)) * operand.scale
        if number >= 256:
            continue
        if operand.acc_bit >= 0:
            file = AGPR if (bits >> operand.acc_bit) & 1 else VGPR
        return Registers(file, number, units)
    return None


# The DPP/SDWA dword (bits 32-63 of ``bits``): the ISA manuals' VOP_DPP and VOP_SDWA layouts.
_DPP_SHIFTS = set(range(0x101, 0x110)) | set(range(0x111, 0x120)) | {0x130, 0x138, 0x142, 0x143}
_UNUSED_PRESERVE = 2


def _extended(table: OperandTable, operand: _Operand, bits: int, sdwa: bool) -> tuple[Registers | None, str]:
    """One operand of a VOP1/VOP2/VOPC instruction in its DPP or SDWA form:
    src0 is the extra dword's low byte (a VGPR; an SGPR where SDWA's S0 bit
    55 is set, GFX9 and later), an SDWA src1 an SGPR where S1 (bit 63) is;
    the destination keeps lanes or bits the instruction does not write --
    used as well -- where DPP's row or bank mask is not 0xF, or it shifts
    lanes in without bound_ctrl (DPP16), and where SDWA says
    UNUSED_PRESERVE.  ("?", None): a destination in another field (not read;
an SDWA compare's SGPR is _sdwa_compare_result's)."""
    scalar = table.family != "gfx8"
    if operand.shift == 0 and operand.mask == 0x1FF:           # src0
        number = (bits >> 32) & 0xFF
        if sdwa and scalar and (bits >> 55) & 1:
            return (Registers(SGPR, number, operand.units) if number + operand.units <= table.sgpr_limit
                    else None), "u"
        if operand.half_bit >= 0:
            number &= 0x7F         # true16: bit 7 names the high half
        return Registers(VGPR, number, operand.units), "u"
    if operand.role == "u":
        if sdwa and scalar and operand.shift == 9 and (bits >> 63) & 1:      # src1 an SGPR
            number = (bits >> 9) & 0xFF
            return (Registers(SGPR, number, operand.units) if number + operand.units <= table.sgpr_limit
                    else None), "u"
        return _register(operand, bits, table.sgpr_limit), "u"
    if operand.shift != 17:
        return None, "?"
    registers = _register(operand, bits, table.sgpr_limit)
    if sdwa:
        keeps = (bits >> 43) & 3 == _UNUSED_PRESERVE
    else:
        keeps = _dpp_keeps_lanes(bits & 0x1FF, (bits >> 32) & 0xFFFFFFFF)
    return registers, "ud" if keeps or "u" in operand.role else "d"


def _dpp_keeps_lanes(marker: int, dword: int) -> bool:
    """Whether a DPP form may leave lanes of its VGPR destination unwritten:
    ``marker`` the src0 field (DPP8 writes every lane), ``dword`` the DPP16
    dword (the ISA manuals' VOP_DPP16: dpp_ctrl bits 8-16, bound_ctrl 19,
    bank_mask 24-27, row_mask 28-31): a row or bank mask other than 0xF, or
    a lane shift without bound_ctrl."""
    if marker in (0xE9, 0xEA):
        return False
    control, bound_ctrl = (dword >> 8) & 0x1FF, (dword >> 19) & 1
    return ((dword >> 28) & 0xF != 0xF or (dword >> 24) & 0xF != 0xF
            or (control in _DPP_SHIFTS and not bound_ctrl))


def _vop3_dpp(table: OperandTable, operand: _Operand, bits: int) -> tuple[Registers | None, str]:
    """One operand of a VOP3 or VOP3P instruction in its DPP form (GFX11 and
    later, ``v_add_f32_e64_dpp``: a DPP16 or DPP8 dword after the 64 bits,
    bits 64-95 of ``bits``): src0 is that dword's low byte (a VGPR; a true16
    half chosen by op_sel, as in VOP3), the other sources and the
    destinations the VOP3 fields; the VGPR destination keeps the lanes DPP
    leaves unwritten (_dpp_keeps_lanes), a compare's SGPR result and a
    carry-out are written whole (LLVM ties DPP's old value to the VGPR
    destination only)."""
    if operand.shift == 32 and operand.mask == 0x1FF:          # src0
        return Registers(VGPR, (bits >> 64) & 0xFF, operand.units), "u"
    registers = _register(operand, bits, table.sgpr_limit)
    if registers is None or "d" not in operand.role or registers.file != VGPR:
        return registers, operand.role
    keeps = _dpp_keeps_lanes((bits >> 32) & 0x1FF, (bits >> 64) & 0xFFFFFFFF)
    return registers, "ud" if keeps or "u" in operand.role else "d"


_VADDR = 32                   # MIMG's vaddr field (bits 32-39): NSA's first address
_A16 = {1: 62, 0: 16}         # MIMG's A16 bit by where the NSA field is (GFX10: bits 1-2; GFX11: bit 0)
_NSA_OPERANDS = {0: 5}        # GFX11: at most 5 address operands, the last a tuple of the rest (partial NSA)


def _nsa_addresses(table: OperandTable, vaddr: _Operand, bits: int, nsa: int) -> list[Registers] | None:
    """The address VGPRs of a GFX10/GFX11 MIMG instruction in its NSA form:
    the first in the vaddr field, the others one byte each in the dwords after
    the 64 bits (GFX10: ``nsa`` dwords; GFX11: one, its fourth byte a tuple
    of the remaining addresses where there are more than five).  How many:
    the vaddr width the table gives the same fields in the contiguous form
    (LLVM counts both from dim, a16 and the opcode).  None where the table
    cannot tell: an A16 instruction whose row's width does not follow A16
    (probed from a base where it changed nothing), a width of 13 or more (the
    contiguous form rounds it up), more addresses than the dwords hold."""
    assert table.nsa is not None
    count: int | None = vaddr.units
    if vaddr.width_bits:
        a16 = _A16[table.nsa[0]]
        if (bits >> a16) & 1 and a16 not in vaddr.width_bits:
            return None
        combo = sum(((bits >> bit) & 1) << n for n, bit in enumerate(vaddr.width_bits))
        count = vaddr.width_table[combo] if combo < len(vaddr.width_table) else None
    most = _NSA_OPERANDS.get(table.nsa[0], 1 + 4 * nsa)
    if count is None or count < 2 or count > 12 or (table.nsa[0] != 0 and count > most):
        return None
    numbers = [(bits >> _VADDR) & 0xFF] + [(bits >> (64 + 8 * n)) & 0xFF for n in range(min(count, most) - 1)]
    out = [Registers(VGPR, number, 1) for number in numbers]
    if count > most:
        out[-1] = Registers(VGPR, numbers[-1], count - most + 1)
    return out


def _sdwa_compare_result(table: OperandTable, key: int, bits: int) -> tuple[Registers, ...] | None:
    """The SGPR an SDWA compare writes where its SD bit (47) is set (GFX9,
    GFX10; the ISA manuals' VOPC SDWA: sdst in bits 40-46, vcc where SD is
    clear): its width is the one the same compare's VOP3 form gives its SGPR
    destination (VOPC opcode N is VOP3 opcode N there: wave64 s[4:5] on GFX9,
    s4 on GFX10 as the tables read it); no destination where that form has
    none (GFX10's v_cmpx write exec only); () for a special register (vcc,
    ttmp, null); None where the VOP3 form has no row."""
    row = table.rows.get(("VOP3", key))
    if row is None or row.form_bits or row.alternative is not None:
        return None
    scalar = [o for o in row.forms[0].operands if "d" in o.role and o.shift < 8 and o.files[0][0] == SGPR]
    if not scalar:
        return ()
    units = scalar[0].units
    number = (bits >> 40) & 0x7F
    if number + units > table.sgpr_limit:
        return ()
    return (Registers(SGPR, number - number % units, units),)


# gfx1250's s_set_vgpr_msb sets the high bits of the VGPR fields of the instructions after it (v256
# and up): each instruction read alone cannot know them, so the instruction that sets them gets no
# answer and the caller counts the code as partial.
VGPR_MSB = "s_set_vgpr_msb"


class _Unknown(Exception):
    """A field combination the table has no width for."""


def operands(table: OperandTable, encoding: str, key: int, bits: int, mnemonic: str = "") -> Operands | None:
    """The registers an instruction defines and uses: ``encoding`` and
    ``key`` its encoding's name and opcode value, ``bits`` its dwords as one
    little-endian number (decoder.Instruction.bits, with dword2 << 64 for
    the 96-bit encodings of GFX12 and gfx1250: their third dword holds
    address registers; and for a VOP3/VOP3P DPP form and a MIMG NSA form
    the dwords after the 64 bits: ``instruction_bits()``; ``mnemonic`` as
    the decoder names it, ``_dpp``/``_sdwa`` forms apart).  None: not known
    (no row, a combination LLVM never printed, an A16 NSA address list the
    row cannot count, gfx1250's ``s_set_vgpr_msb``)."""
    if mnemonic.startswith(VGPR_MSB):
        return None            # gfx1250: the VGPR fields of what follows name v256 and up by its state: not modelled
    extended = mnemonic.endswith(("_dpp", "_sdwa"))
    vop3_dpp = extended and encoding in _VOP3_DPP and mnemonic.endswith("_dpp")
    if extended and encoding not in ("VOP1", "VOP2", "VOPC") and not vop3_dpp:
        return None
    row = table.rows.get((encoding, key))
    if row is None:
        return None
    result: tuple[Registers, ...] = ()
    if extended and encoding == "VOPC" and mnemonic.endswith("_sdwa") and table.family != "gfx8" and (bits >> 47) & 1:
        written = _sdwa_compare_result(table, key, bits)
        if written is None:
            return None
        result = written
    nsa = (bits >> table.nsa[0]) & ((1 << table.nsa[1]) - 1) if encoding == "MIMG" and table.nsa else 0
    if row.alternative is not None:
        shift, mask, value, other = row.alternative
        if (bits >> shift) & mask == value:
            row = other
    combo = sum(((bits >> bit) & 1) << n for n, bit in enumerate(row.form_bits))
    form = row.forms.get(combo)
    if form is None:
        return None
    defs: list[Registers] = []
    uses: list[Registers] = []
    try:
        for operand in form.operands:
            if nsa and operand.shift == _VADDR and operand.role == "u":
                listed = _nsa_addresses(table, operand, bits, nsa)
                if listed is None:
                    return None
                uses.extend(listed)
                continue
            if vop3_dpp:
                registers, role = _vop3_dpp(table, operand, bits)
            elif extended:
                registers, role = _extended(table, operand, bits, mnemonic.endswith("_sdwa"))
                if registers is None and role == "?":
                    return None
            else:
                registers, role = _register(operand, bits, table.sgpr_limit), operand.role
                if operand.ud_when and all((bits >> bit) & 1 == value for bit, value in operand.ud_when):
                    role = "ud"
            if registers is None:
                continue
            if "d" in role:
                defs.append(registers)
            if "u" in role:
                uses.append(registers)
    except _Unknown:
        return None
    defs.extend(result)
    return Operands(tuple(defs), tuple(uses))
