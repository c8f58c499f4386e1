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
from typing import Callable

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


# Bounded: an unbounded cache kept every distinct name a worker read, whatever
# the size of the input (librocsparse1 7.2.4 has 17,129; 32,768 hold them).
@lru_cache(maxsize=1 << 15)
def demangle(symbol: str) -> str:
    """Demangled name, or the symbol itself when it is not a C++ name."""
    if not symbol.startswith("_Z") or _cxxfilt is None:
        return symbol
    text = _demangle_new_builtins(symbol) if _NEW_BUILTINS.search(symbol) else None
    if text is None:
        text = _cxa_demangle(symbol)
    return symbol if text is None else text


# A <source-name> that may be a versioned namespace: its decimal length
# (not the tail of a longer number), then a library prefix.  The length
# decides where the identifier ends, so each candidate is checked once, over
# at most _MAX_NS_TOKEN characters: linear in the name's length.
_NS_CANDIDATE = re.compile(r"(?<![0-9])([1-9][0-9]{0,2})(?=ROCPRIM_|HIPCUB_|ROCTHRUST_|THRUST_|CUB_)")
_NS_TOKEN = re.compile(r"(ROCPRIM|HIPCUB|ROCTHRUST|THRUST|CUB)_[0-9A-Z_]*_NS")
_MAX_NS_TOKEN = 255


@lru_cache(maxsize=4096)
def stable_key(symbol: str) -> str:
    """The mangled name with versioned inline namespaces renamed to fixed ones.

    Only whole ``<length><identifier>`` tokens are touched: the decimal prefix
    right before the identifier must equal its length.
    """
    if "_NS" not in symbol or not ("CUB_" in symbol or "THRUST_" in symbol or "ROCPRIM_" in symbol):
        return symbol          # (_NS_CANDIDATE needs one of these; "NS_" alone is any nested name's end)
    out = []
    position = 0
    for match in _NS_CANDIDATE.finditer(symbol):
        before = match.start()
        if before < position:
            continue
        length = int(match.group(1))
        start = match.end()
        if length > _MAX_NS_TOKEN or start + length > len(symbol):
            continue
        token = _NS_TOKEN.fullmatch(symbol, start, start + length)
        if token is None:
            continue
        fixed = f"{token.group(1)}_NS"
        if token.group(0) == fixed:
            continue
        out.append(symbol[position:before])
        out.append(f"{len(fixed)}{fixed}")
        position = start + length
    if not out:
        return symbol
    out.append(symbol[position:])
    return "".join(out)


# Longer demangled names are not shortened (no real kernel name comes close;
# a hostile one costs at most this many bracket visits).
SHORT_NAME_LIMIT = 1 << 16
_PARENS = re.compile(r"[()]")
_BRACKETS_OR_SPACE = re.compile(r"[()<> ]")
_DEPTH = {")": 1, ">": 1, "(": -1, "<": -1, " ": 0}


def short_name(name: str) -> str:
    """``void ns::topk<32>(float const*, int)`` -> ``ns::topk<32>``: the
    demangled name without return type and parameter list (best effort).
    Only brackets and spaces are visited (found by the regex engine), and
    names longer than SHORT_NAME_LIMIT are returned whole: the work is
    bounded whatever a binary claims a kernel is called."""
    if len(name) > SHORT_NAME_LIMIT:
        return name
    text = name
    if text.endswith(")"):
        depth = 0
        for match in reversed(list(_PARENS.finditer(text))):
            depth += 1 if match.group() == ")" else -1
            if depth == 0:
                text = text[:match.start()]
                break
    # The return type ends at the last space outside <...> and (...), so
    # "(anonymous namespace)::k" keeps its space.
    if " " not in text:
        return text
    depth = 0
    for match in reversed(list(_BRACKETS_OR_SPACE.finditer(text))):
        char = match.group()
        depth += _DEPTH[char]
        if char == " " and depth == 0:
            return text[match.start() + 1:]
    return text


def display_key(name: str) -> str:
    """Demangled text with versioned namespaces removed, for display and matching
    (``ROCPRIM_300400_NS::``, and ``ROCPRIM_NS::`` of a name rebuilt from its key)."""
    return _VERSIONED_NAMESPACE.sub("", name)


_VERSIONED_NAMESPACE = re.compile(r"\b(?:ROCPRIM|HIPCUB|ROCTHRUST|THRUST|CUB)(?:_[0-9A-Z_]*)?_NS::")


# Template arguments nested deeper than this are shown as "…" in tables.
TEMPLATE_DEPTH = 1


_ANGLES = re.compile(r"[<>]")


def elide_templates(name: str, depth: int = TEMPLATE_DEPTH) -> str:
    """``f<a<b<c>>, d>`` -> ``f<a<…>, d>`` at depth 1: template argument
    lists nested more than ``depth`` levels become ``<…>``.  Names with an
    ``operator`` (whose ``<`` is not a bracket) are returned as they are.
    Only the brackets are visited (found by the regular expression engine),
    the text between them kept in slices."""
    if "<" not in name or "operator" in name:
        return name
    out = []
    level = 0
    kept_from: int | None = 0       # where the text being kept starts (None: inside an elided list)
    for match in _ANGLES.finditer(name):
        at = match.start()
        if match.group() == "<":
            level += 1
            if level == depth + 1 and kept_from is not None:
                out.append(name[kept_from:at])
                out.append("<…")
                kept_from = None
        else:
            level -= 1
            if level == depth and kept_from is None:
                kept_from = at      # the closing ">" is kept, and what follows
    if level != 0:
        return name
    if kept_from is not None:
        out.append(name[kept_from:])
    return "".join(out)


def table_name(name: str, names: str = "short") -> str:
    """The one name every table shows for a demangled kernel name: with
    ``names="short"`` no return type, no parameters, no versioned inline
    namespaces and template arguments elided past TEMPLATE_DEPTH (one line
    per kernel); ``"full"`` is the demangled name itself."""
    if names == "full":
        return name
    return elide_templates(short_name(display_key(name)))


def name_matches(pattern: str, name: str) -> bool:
    """A filter on a demangled name: a glob when it has ``*``, ``?`` or
    ``[``, else a case-insensitive substring; tried on the full name and on
    the short one (``rms*`` matches ``void rmsnorm<256>(float*)``)."""
    return NameFilter(pattern)(name)


class NameFilter:
    """``name_matches(pattern, name)`` for many names: the pattern compiled
    once, each distinct name tested once (librocsparse1 7.2.4's 249,970
    kernels have 17,129 names, long templates whose short name costs a
    parse), and the short name worked out only when the full one does not
    match."""

    _KEPT = 1 << 16       # names remembered (a hostile binary's names must not grow it without end)

    def __init__(self, pattern: str):
        import fnmatch

        self.pattern = pattern
        wanted = pattern.lower()
        if any(c in pattern for c in "*?["):
            self._test = re.compile(fnmatch.translate(wanted), re.DOTALL).match
        else:
            self._test = lambda text: wanted in text       # type: ignore[assignment,return-value]
        self._seen: dict[str, bool] = {}

    def __call__(self, name: str) -> bool:
        found = self._seen.get(name)
        if found is None:
            if len(self._seen) >= self._KEPT:
                self._seen.clear()
            test = self._test
            found = self._seen[name] = bool(test(name.lower()) or test(short_name(display_key(name)).lower()))
        return found


# Words a demangler writes that are not spelled out in the mangled name: builtin types, qualifiers,
# operators, the standard abbreviations' expansions (Sa: std::allocator ...), and its own phrases
# (lambdas, unnamed types, clones, special names).  mangled_prefilter never relies on one of these.
_DEMANGLER_WORDS = frozenset("""
void wchar_t bool char signed unsigned short int long __int128 float double __float128 char8_t char16_t
char32_t _float16 _float32 _float64 _float128 __bf16 __fp16 half bfloat16_t _bitint _accum _fract _sat decimal32
decimal64 decimal128 _complex complex _imaginary imaginary vector __vector pixel auto decltype nullptr nullptr_t
const volatile restrict __restrict __unaligned __attribute__ address_space std allocator basic_string string
char_traits basic_istream basic_ostream basic_iostream istream ostream iostream operator new delete sizeof
alignof typeid throw noexcept static_cast dynamic_cast const_cast reinterpret_cast requires typename template
true false this lambda unnamed type anonymous namespace vtable vtt typeinfo name for guard variable virtual
thunk non covariant return to construction in reference temporary transaction clone hidden alias tls init
function wrapper parameter object default arg literal structured binding abi
""".split())
_IDENTIFIER = re.compile(r"[A-Za-z0-9_]+")
# The shortest token worth testing (shorter ones pass nearly every name).
_PREFILTER_TOKEN = 4


def mangled_prefilter(pattern: str) -> Callable[[str], bool] | None:
    """A test on a kernel's mangled name that every kernel ``pattern``
    names passes (NameFilter on its demangled or short name, or the exact
    demangled, mangled or symbol name): the longest identifier in the
    pattern's literal text, case-insensitively, which a mangled name spells
    out wherever its demangled name holds it (<length><identifier>; a
    substitution repeats an earlier one).  Only identifiers a demangler
    cannot have written itself are used: no word of _DEMANGLER_WORDS, and a
    piece cut by the pattern's edge or a wildcard must not be part of one.
    None when the pattern has no such identifier (every name passes).
    spillway code reads only the kernels it passes (their names demangled)."""
    wildcards = any(c in pattern for c in "*?[")
    literal = re.split(r"\*|\?|\[[^\]]*\]?", pattern) if wildcards else [pattern]
    best = ""
    for number, part in enumerate(literal):
        for match in _IDENTIFIER.finditer(part):
            token = match.group().lower()
            # whole: bounded by other characters inside the pattern (an exact or glob pattern's ends
            # are a name's ends too)
            whole = ((match.start() > 0 or (wildcards and number == 0))
                     and (match.end() < len(part) or (wildcards and number == len(literal) - 1)))
            if len(token) < _PREFILTER_TOKEN or token[0].isdigit() or len(token) <= len(best):
                continue
            if token in _DEMANGLER_WORDS or (not whole and any(token in word for word in _DEMANGLER_WORDS)):
                continue
            best = token
    if not best:
        return None
    return lambda mangled: best in mangled.lower()
