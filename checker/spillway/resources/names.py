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


# Builtin types newer than the C++ runtime's demangler: GCC 12 fails on
# _Float16 (DF16_) and misreads std::bfloat16_t (DF16b) as a fixed-point
# type, and HIP kernels use both all the time.
_NEW_BUILTINS = re.compile(r"DF(16b|[0-9]+_)")
# Stand-ins the old demangler knows. Like the new types they are builtins,
# so they take no substitution slot and S_/T_ references stay aligned.
_STAND_INS = (("Dh", "half"), ("g", "__float128"), ("e", "long double"),
              ("Dn", "decltype(nullptr)"), ("Ds", "char16_t"), ("Di", "char32_t"))


def _cxa_demangle(symbol: str) -> str | None:
    try:
        return _cxxfilt.demangle(symbol, external_only=False)
    except Exception:
        return None


def _spell_new_builtin(code: str) -> str:
    return "std::bfloat16_t" if code == "16b" else f"_Float{code[:-1]}"


def _spelled(spelling: str) -> re.Pattern:
    return re.compile(rf"(?<![\w:]){re.escape(spelling)}(?!\w)")


def _demangle_new_builtins(symbol: str) -> str | None:
    """Demangle with two disjoint sets of stand-ins. A reading is trusted
    only if its stand-ins' spellings are absent from the other reading, so a
    real ``half`` (or ``long double``...) in the name is never renamed."""
    codes = sorted(set(_NEW_BUILTINS.findall(symbol)))
    if not codes or 2 * len(codes) > len(_STAND_INS):
        return None
    readings = []
    for stand_ins in (_STAND_INS[:len(codes)], _STAND_INS[len(codes):2 * len(codes)]):
        chosen = dict(zip(codes, stand_ins))
        text = _cxa_demangle(_NEW_BUILTINS.sub(lambda m: chosen[m.group(1)][0], symbol))
        readings.append((text, chosen))
    for index, (text, chosen) in enumerate(readings):
        other = readings[1 - index][0]
        if text is None or other is None:
            continue
        if any(_spelled(spelling).search(other) for _, spelling in chosen.values()):
            continue
        for code, (_, spelling) in chosen.items():
            text = _spelled(spelling).sub(_spell_new_builtin(code), text)
        return text
    return None


@lru_cache(maxsize=None)
def demangle(symbol: str) -> str:
    """Demangled name, or the symbol itself when it is not a C++ name."""
    if not symbol.startswith("_Z") or _cxxfilt is None:
        return symbol
    text = _demangle_new_builtins(symbol) if _NEW_BUILTINS.search(symbol) else None
    if text is None:
        text = _cxa_demangle(symbol)
    return symbol if text is None else text


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


def short_name(name: str) -> str:
    """``void ns::topk<32>(float const*, int)`` -> ``ns::topk<32>``: the
    demangled name without return type and parameter list (best effort)."""
    text = name
    if text.endswith(")"):
        depth = 0
        for index in range(len(text) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(text[index], 0)
            if depth == 0:
                text = text[:index]
                break
    # The return type ends at the last space outside <...> and (...), so
    # "(anonymous namespace)::k" keeps its space.
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        char = text[index]
        depth += {">": 1, ")": 1, "<": -1, "(": -1}.get(char, 0)
        if char == " " and depth == 0:
            return text[index + 1:]
    return text


def display_key(name: str) -> str:
    """Demangled text with versioned namespaces removed, for display and matching."""
    return re.sub(r"\b(ROCPRIM|HIPCUB|ROCTHRUST|THRUST|CUB)_[0-9A-Z_]*_NS::", "", name)
