"""Patterns that name a kernel, cut from its demangled name, and the check
that resources.names.mangled_prefilter passes its mangled name for each
(tests/unit/resources/test_mangled_prefilter.py, tests/oracle/test_mangled_prefilter_rocm.py)."""

from __future__ import annotations

import random

from spillway.resources.names import NameFilter, demangle, display_key, mangled_prefilter, short_name


def patterns_from(demangled: str, chooser: random.Random) -> list[str]:
    """Patterns that name ``demangled``: itself, its short name, pieces of both (substrings, in another case),
    and globs made by putting * and ? in place of pieces."""
    short = short_name(display_key(demangled))
    out = [demangled, short, short.upper()]
    for text in (demangled, short):
        for _ in range(12):
            start = chooser.randrange(len(text))
            out.append(text[start:start + chooser.randrange(1, 40)])
        for _ in range(6):
            cut = sorted(chooser.sample(range(len(text) + 1), min(4, len(text) + 1)))
            glob = "*" + text[cut[0]:cut[1]] + "*" + text[cut[2]:cut[3]] + "*"
            out.append(glob)
        out.append(text[:len(text) // 2] + "*")
        out.append("*" + text[len(text) // 3:])
    return [p for p in out if p]


def check_names(names: list[str], chooser: random.Random, least: int = 2000) -> None:
    """For each mangled name, every pattern cut from its demangled name that names it passes the prefilter."""
    tried = used = 0
    for mangled in names:
        demangled = demangle(mangled)
        for pattern in patterns_from(demangled, chooser):
            if not NameFilter(pattern)(demangled):
                continue            # (a glob cut across a versioned namespace can miss: not a naming pattern)
            tried += 1
            test = mangled_prefilter(pattern)
            if test is not None:
                used += 1
                assert test(mangled), (pattern, mangled)
    assert tried > least and used > tried // 2, (tried, used)
