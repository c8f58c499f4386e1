"""Kernel names: demangling for display and stable keys for baselines.

Libraries such as rocPRIM put their kernels in a versioned inline namespace
(``rocprim::ROCPRIM_300400_NS::``), so every ROCm update renames every kernel.
The stable key renames that namespace token to a fixed one of the same shape
(``10ROCPRIM_NS``) instead of deleting it: deleting would shift the numbering
of every later substitution (``S0_``...) and silently yield a different valid
name; renaming keeps the mangling valid (amdgpu-binaries.md section 5.4 A).
"""

from __future__ import annotations

import re
from functools import lru_cache

try:  # ctypes binding to the C++ runtime's __cxa_demangle
    import cxxfilt as _cxxfilt
except Exception:  # pragma: no cover - only when no C++ runtime is loadable
    _cxxfilt = None

# <source-name> tokens of versioned inline namespaces: the library prefix,
# then version digits (and NVIDIA's _SM_<arch list> part), then _NS.
_VERSIONED_NS = re.compile(r"(ROCPRIM|HIPCUB|ROCTHRUST|THRUST|CUB)_[0-9A-Z_]*?_NS")


@lru_cache(maxsize=None)
def demangle(symbol: str) -> str:
    """Demangled name, or the symbol itself when it is not a C++ name."""
    if not symbol.startswith("_Z") or _cxxfilt is None:
        return symbol
    try:
        return _cxxfilt.demangle(symbol, external_only=False)
    except Exception:
        return symbol


@lru_cache(maxsize=None)
def stable_key(symbol: str) -> str:
    """The mangled name with versioned inline namespaces renamed to fixed ones.

    Only whole ``<length><identifier>`` tokens are touched: the decimal prefix
    right before the match must equal the identifier's length.
    """
    if "_NS" not in symbol:
        return symbol
    out = []
    position = 0
    for match in _VERSIONED_NS.finditer(symbol):
        token = match.group(0)
        start = match.start()
        length = str(len(token))
        if symbol[start - len(length):start] != length:
            continue
        # The length prefix must not be the tail of a longer number.
        before = start - len(length)
        if before > 0 and symbol[before - 1].isdigit():
            continue
        fixed = f"{match.group(1)}_NS"
        if token == fixed:
            continue
        out.append(symbol[position:before])
        out.append(f"{len(fixed)}{fixed}")
        position = match.end()
    if not out:
        return symbol
    out.append(symbol[position:])
    return "".join(out)


def display_key(name: str) -> str:
    """Demangled text with versioned namespaces removed, for display and matching."""
    return re.sub(r"\b(ROCPRIM|HIPCUB|ROCTHRUST|THRUST|CUB)_[0-9A-Z_]*_NS::", "", name)
