"""Kernel labels for a table's name column: at most ``width`` characters, and
two distinct kernel names never get the same label.

A library's kernels share long names that differ deep inside their template
arguments (librocsparse1 7.2.4: 17,129 distinct names; cut at 80 columns they
read as 9,024).  The short name (``names.table_name``: no return type, no
parameters, template arguments past the first level as ``…``) is used where
it is distinct and fits.  Names whose short labels collide, or that are too
long, are labelled together: their tokens are aligned (difflib) and the tokens
where the names *agree* are elided as ``…``, while the tokens where they
differ, the kernel's own name and as much context as fits are kept.  A label
that still cannot fit, or still collides, is cut and numbered (``#2``): never
two kernels under one label.

Pure functions of the names; the table (render.grid.grid) calls them with
the room its name column has.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable, Sequence

from spillway.resources.names import display_key, elide_templates, short_name

ELLIPSIS = "…"
# Identifiers (with their namespaces' ::), numbers with suffixes, and any other single character.
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9A-Za-z_.]*|::|, |.", re.DOTALL)


def cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(0, width - 1)] + ELLIPSIS


def plain_name(name: str) -> str:
    """The name the labels are made from: no return type, no parameters, no
    versioned inline namespaces, every template argument kept."""
    return short_name(display_key(name))


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _head(toks: Sequence[str]) -> int:
    """Tokens of the kernel's own name: up to its first ``<`` (or all)."""
    for index, token in enumerate(toks):
        if token == "<":
            return index
    return len(toks)


def _render(toks: Sequence[str], keep: Sequence[bool]) -> str:
    out = []
    elided = False
    for token, kept in zip(toks, keep):
        if kept:
            out.append(token)
            elided = False
        elif not elided:
            out.append(ELLIPSIS)
            elided = True
    return "".join(out)


def _differing(group: Sequence[list[str]]) -> list[list[bool]]:
    """Per name, the tokens that tell it from the others of the group.

    The names are compared position by position from the left (instances of
    one template line up argument by argument until they differ) and split
    like a decision tree: at the leftmost position where the names of a
    branch differ, each branch marks that position and is split again on its
    own, so a name shows only where it differs from its nearest neighbours,
    not every position any name of the family varies in.  A name that ends
    where another goes on differs there by its end (nothing to mark)."""
    marks: list[list[bool]] = [[False] * len(toks) for toks in group]
    pending = [(list(range(len(group))), 0)]
    while pending:
        branch, position = pending.pop()
        if len(branch) < 2:
            continue
        longest = max(len(group[i]) for i in branch)
        while position < longest and len({_at(group[i], position) for i in branch}) == 1:
            position += 1
        if position >= longest:
            continue                          # the same tokens: told apart by the caller
        split: dict[str | None, list[int]] = defaultdict(list)
        for i in branch:
            if position < len(group[i]):
                marks[i][position] = True
            split[_at(group[i], position)].append(i)
        pending.extend((part, position + 1) for part in split.values())
    return marks


def _at(toks: Sequence[str], position: int) -> str | None:
    return toks[position] if position < len(toks) else None


def _fit(toks: list[str], mark: list[bool], width: int) -> str | None:
    """The label with the differing tokens and the kernel's name, then whole
    elided runs put back, left to right, while they fit; None when even the
    least does not fit."""
    head = _head(toks)
    keep = [i < head or m for i, m in enumerate(mark)]
    if toks and toks[-1] == ">":
        keep[-1] = True
    label = _render(toks, keep)
    if len(label) > width:
        # Drop the namespaces of the kernel's name, keep its last identifier.
        last = max((i for i in range(head) if toks[i] != "::"), default=-1)
        keep = [(i == last) or (i >= head and k) for i, k in enumerate(keep)]
        label = _render(toks, keep)
        if len(label) > width:
            return None
    slack = width - len(label)
    index = 0
    while index < len(toks) and slack > 0:
        if keep[index]:
            index += 1
            continue
        end = index
        while end < len(toks) and not keep[end]:
            end += 1
        run = sum(len(t) for t in toks[index:end]) - len(ELLIPSIS)
        if run <= slack:
            for i in range(index, end):
                keep[i] = True
            slack -= run
        else:
            # What fits of the run's start (the ellipsis stays for the rest).
            for i in range(index, end):
                if len(toks[i]) > slack:
                    break
                keep[i] = True
                slack -= len(toks[i])
        index = end
    return _render(toks, keep)


def _ends_kept(texts: dict[str, str], width: int) -> dict[str, str]:
    """Names that still share a label (``occ_l4096_w64``, ``occ_l4096_w256``
    cut to ``occ_l4096_…``): the start that fits, ``…``, then the shortest end
    that no other name of the group has.  Names whose end does not fit keep
    their label (numbered by the caller)."""
    # The shortest distinct end: one more than the longest end shared with a
    # neighbour in the order of the reversed texts.
    order = sorted(texts, key=lambda name: texts[name][::-1])
    reversed_texts = [texts[name][::-1] for name in order]

    def shared(a: str, b: str) -> int:
        n = 0
        for x, y in zip(a, b):
            if x != y:
                break
            n += 1
        return n

    out = {}
    for index, name in enumerate(order):
        text = texts[name]
        common = max(shared(reversed_texts[index], reversed_texts[j]) for j in (index - 1, index + 1)
                     if 0 <= j < len(order))
        if common >= len(text):
            continue                          # another name ends with all of this one
        end = text[-(common + 1):]
        start = width - len(ELLIPSIS) - len(end)
        if start >= 1 and len(text) > width:
            out[name] = text[:start] + ELLIPSIS + end
    return out


def _numbered(texts: dict[str, str], width: int, taken: set[str]) -> dict[str, str]:
    """Last resort: each name's text cut and numbered in name order (``#2``),
    never a label in ``taken``."""
    out = {}
    number = 1
    for name in sorted(texts):
        while True:
            tag = f"#{number}"
            number += 1
            label = cut(texts[name], max(1, width - len(tag))) + tag
            if label not in taken:
                break
        taken.add(label)
        out[name] = label
    return out


def distinct_labels(names: Iterable[str], width: int) -> dict[str, str]:
    """A label of at most ``width`` characters for each distinct name (demangled),
    no two the same (when ``width`` leaves room for a number at all).

    A family (the names of one template: the same tokens before the first
    ``<``) is labelled together when two of its short labels (cut to the
    width) are the same:
    each name then shows where it differs from its neighbours in the family."""
    distinct = sorted(set(names))
    plain = {name: plain_name(name) for name in distinct}
    short = {name: elide_templates(plain[name]) for name in distinct}
    labels = {name: cut(short[name], width) for name in distinct}
    uses: dict[str, int] = defaultdict(int)
    for label in labels.values():
        uses[label] += 1
    families: dict[str, list[str]] = defaultdict(list)
    for name in distinct:
        head = plain[name].split("<", 1)[0]
        families[head].append(name)
    for members in families.values():
        if not any(uses[labels[m]] > 1 for m in members):
            continue                          # distinct: a long name is only cut at its end
        token_lists = [tokens(plain[m]) for m in members]
        if len({tuple(t) for t in token_lists}) < len(members):
            # Overloads: names that differ in their parameters only.
            token_lists = [tokens(display_key(m)) for m in members]
        for name, toks, mark in zip(members, token_lists, _differing(token_lists)):
            fitted = _fit(toks, mark, width)
            if fitted is not None:
                labels[name] = fitted
    groups: dict[str, list[str]] = defaultdict(list)
    for name in distinct:
        groups[labels[name]].append(name)
    for group in [g for g in groups.values() if len(g) > 1]:
        labels.update(_ends_kept({name: short[name] for name in group}, width))
    groups = defaultdict(list)
    for name in distinct:
        groups[labels[name]].append(name)
    taken = {label for label, group in groups.items() if len(group) == 1}
    for group in groups.values():
        if len(group) > 1:
            labels.update(_numbered({name: plain[name] for name in group}, width, taken))
    return labels
