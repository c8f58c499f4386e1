"""Instruction mix (issue 32): every instruction of a kernel in one class, so
that two builds of a kernel can be told apart as "the arithmetic is the same,
only the spill traffic changed".

A class is a pure function of the mnemonic, except ``scratch`` (the kernel's
counted scratch accesses, ``scratch_loads + scratch_stores`` of the evidence:
a MUBUF ``buffer_load*``/``buffer_store*`` is scratch only on the private
segment buffer's quad, else ``vmem``).  The first rule that matches wins:

==========  ==================================================================
class       mnemonics
==========  ==================================================================
scratch     the counted scratch accesses (isa.evidence's rule)
matrix      ``v_mfma*``, ``v_smfmac*``, ``v_wmma*``, ``v_swmmac*``
agpr_copy   ``v_accvgpr_*`` (write, read, mov)
valu        every other ``v_*`` (VOPD ``v_dual_*`` pairs and ``v_interp*`` too)
lds         ``ds_*``, ``lds_*``
vmem        ``buffer_*``, ``tbuffer_*``, ``global_*``, ``flat_*``, ``scratch_*``,
            ``image_*``, ``cluster_*``, ``tensor_*``
smem        ``s_load_*``, ``s_buffer_*``, ``s_store_*``, ``s_scratch_*``,
            ``s_atomic_*``, ``s_dcache_*``, ``s_memtime``, ``s_memrealtime``,
            ``s_atc_probe*``, ``s_prefetch_*``, ``s_gl1_inv``,
            ``s_get_waveid_in_workgroup``
branch      ``s_branch``, ``s_cbranch_*``, ``s_setpc_*``, ``s_set_pc_*``,
            ``s_swappc_*``, ``s_swap_pc_*``, ``s_call_*``, ``s_rfe_*``,
            ``s_subvector_loop_*``
waitcnt     ``s_waitcnt*``, ``s_wait_*``
salu        every other ``s_*`` except those of ``other``
other       ``exp``, ``export``, and ``s_nop``, ``s_endpgm*``, ``s_barrier*``,
            ``s_sendmsg*``, ``s_sleep*``, ``s_wakeup*``, ``s_setprio*``,
            ``s_trap``, ``s_clause``, ``s_delay_alu``, ``s_code_end``,
            ``s_icache_inv``, ``s_inst_prefetch``, ``s_set_inst_prefetch_distance``,
            ``s_ttracedata*``, ``s_sethalt``, ``s_setkill``, ``s_incperflevel``,
            ``s_decperflevel``, ``s_monitor_sleep``, ``s_singleuse_vdst``,
            ``s_version``; and any mnemonic no rule names
==========  ==================================================================

The classes add up to ``instructions``.  ``scripts/isa-figures.awk`` applies
the same rule to ``llvm-objdump -d -z`` text (the oracle), and a unit test
holds the mnemonic rule to the encodings of every decoder table (every
``smem`` mnemonic is SMEM-encoded, every SMEM one ``smem``; every SOPP one
``branch``, ``waitcnt``, ``other`` or ``salu``).

Two builds' mixes are compared by gate.code_change (compare --isa).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from spillway.constants import MIX_CLASSES

(VALU, SALU, VMEM, SMEM, LDS, MATRIX, SCRATCH, AGPR_COPY, BRANCH, WAITCNT, OTHER) = range(len(MIX_CLASSES))

_MATRIX = ("v_mfma", "v_smfmac", "v_wmma", "v_swmmac")
_VMEM = ("buffer_", "tbuffer_", "global_", "flat_", "scratch_", "image_", "cluster_", "tensor_")
_SMEM = ("s_load_", "s_buffer_", "s_store_", "s_scratch_", "s_atomic_", "s_dcache_", "s_memtime", "s_memrealtime",
         "s_atc_probe", "s_prefetch_", "s_gl1_inv", "s_get_waveid_in_workgroup")
_BRANCH = ("s_branch", "s_cbranch_", "s_setpc_", "s_set_pc_", "s_swappc_", "s_swap_pc_", "s_call_", "s_rfe_",
           "s_subvector_loop_")
_WAITCNT = ("s_waitcnt", "s_wait_")
_OTHER_EXACT = frozenset(("exp", "export", "s_nop", "s_trap", "s_clause", "s_delay_alu", "s_code_end",
                          "s_icache_inv", "s_inst_prefetch", "s_set_inst_prefetch_distance", "s_sethalt",
                          "s_setkill", "s_incperflevel", "s_decperflevel", "s_monitor_sleep", "s_singleuse_vdst",
                          "s_version"))
_OTHER = ("s_endpgm", "s_barrier", "s_sendmsg", "s_sleep", "s_wakeup", "s_setprio", "s_ttracedata")


@lru_cache(maxsize=None)
def mix_class(mnemonic: str) -> int:
    """The class (an index into MIX_CLASSES) of a mnemonic, before the
    scratch rule: ``scratch_*`` is VMEM here, the evidence moves its counted
    accesses to SCRATCH."""
    m = mnemonic
    if m.startswith("v_"):
        if m.startswith(_MATRIX):
            return MATRIX
        return AGPR_COPY if m.startswith("v_accvgpr_") else VALU
    if m.startswith(("ds_", "lds_")):
        return LDS
    if m.startswith(_VMEM):
        return VMEM
    if m in _OTHER_EXACT:
        return OTHER
    if m.startswith("s_"):
        if m.startswith(_SMEM):
            return SMEM
        if m.startswith(_BRANCH):
            return BRANCH
        if m.startswith(_WAITCNT):
            return WAITCNT
        if m.startswith(_OTHER):
            return OTHER
        return SALU
    return OTHER


def with_scratch(counts: Sequence[int], scratch_accesses: int) -> tuple[int, ...]:
    """Counts by mix_class (scratch_* and buffer_* under VMEM) with the
    kernel's counted scratch accesses moved from VMEM to SCRATCH."""
    out = list(counts)
    out[VMEM] -= scratch_accesses
    out[SCRATCH] += scratch_accesses
    return tuple(out)


def mix_object(mix: Sequence[int]) -> dict[str, int]:
    """A mix as the JSON object ``{class: count}`` (every class, zeros too;
    an empty mix, a kernel whose code was not read, is all zeros)."""
    return dict(zip(MIX_CLASSES, mix or (0,) * len(MIX_CLASSES)))
