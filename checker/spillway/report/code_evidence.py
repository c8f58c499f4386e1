"""A report record's ``isa`` object (``report --isa``): the evidence of a
kernel's machine code (spillway.isa), read in the worker that parses its code
object, from the same bytes.

The object holds KernelCode's fields as JSON: ``scratch_without_width`` as
{mnemonic: count}, ``loop_spans`` as [target, branch] offset pairs from the
kernel's start.  A kernel whose code cannot be read (no STT_FUNC symbol, a
code object whose sections do not hold together) still has an object, with
zero counts and a ``status`` saying why: the rest of the report stands.
"""

from __future__ import annotations

import hashlib
from typing import Final

from spillway.errors import InputError
from spillway.formats.metadata import KernelMetadata
from spillway.isa.evidence import KernelCode, evidence, kernel_ranges

# The object's members, in the order a record writes them (the fields of KernelCode).
ISA_FIELDS: Final = tuple(KernelCode.__dataclass_fields__)

try:       # numpy: a dependency, but the plain-Python reference gives the same figures without it
    from spillway.isa import vector as _vector
except ImportError:        # pragma: no cover - exercised by tests that hide numpy
    _vector = None  # type: ignore[assignment]


def isa_object(code: KernelCode) -> dict:
    """KernelCode as the record's ``isa`` JSON object."""
    found = {name: getattr(code, name) for name in ISA_FIELDS}
    found["scratch_without_width"] = dict(code.scratch_without_width)
    found["loop_spans"] = [list(span) for span in code.loop_spans]
    return found


def _unread(status: str) -> KernelCode:
    return KernelCode(0, 0, hashlib.sha256(b"").hexdigest(), 0, 0, 0, 0, (), 0, 0, 0, 0, 0, 0, (), 0, 0, status)


def code_objects_evidence(payload: bytes | memoryview, kernels: list[KernelMetadata], target: str,
                          use_numpy: bool = True) -> list[dict]:
    """The ``isa`` object of each of ``kernels`` (a code object's, in its
    order) from the code object's bytes ``payload``.  Never raises on bad
    code: each kernel's ``status`` says what stopped the reading."""
    try:
        code, ranges = kernel_ranges(payload)
    except InputError as exc:
        where = f" at {exc.offset:#x}" if exc.offset is not None else ""
        return [isa_object(_unread(f"code not read: {exc.message}{where}")) for _ in kernels]
    by_name = {r.name: r for r in ranges}
    chosen = []
    for kernel in kernels:
        chosen.append(by_name.get(_symbol_of(kernel)) or by_name.get(kernel.name))
    batch = [(r.start, r.size, bool(r.private_segment_buffer)) for r in chosen if r is not None]
    if use_numpy and _vector is not None:
        found = iter(_vector.evidence_many(code, batch, target))
    else:
        found = iter([evidence(code, start, size, target, psb) for start, size, psb in batch])
    return [isa_object(next(found) if r is not None else _unread(f"no STT_FUNC symbol {_symbol_of(k)} with a "
                                                                 f"descriptor in the code object"))
            for k, r in zip(kernels, chosen)]


def kernel_evidence(section: memoryview, start: int, size: int, target: str, psb: bool) -> KernelCode:
    """evidence() of one kernel of a code section, by the numpy path when numpy is there (on the
    kernel's bytes alone: the rest of the section is not decoded)."""
    if _vector is None or start < 0 or size <= 0 or start + size > len(section):
        return evidence(section, start, size, target, psb)
    return _vector.evidence_many(section[start:start + size], [(0, size, psb)], target)[0]


def _symbol_of(kernel: KernelMetadata) -> str:
    """The kernel's STT_FUNC symbol: its descriptor's name (.symbol) without ``.kd``."""
    return kernel.symbol[:-3] if kernel.symbol.endswith(".kd") else kernel.symbol
