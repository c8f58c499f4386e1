"""No function in checker/spillway is over 100 lines (issue 38, "the long
rooms"): a longer one is split into named steps, unless the allow-list below
names it with why it stays whole.

A function's length counts from its ``def`` line to its last line, docstring
and comments included, nested functions and methods each on their own too
(``Class.method``, ``outer.inner``).
"""

from __future__ import annotations

import ast
from fnmatch import fnmatchcase
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "checker" / "spillway"
MOST_LINES = 100

# Functions that stay over MOST_LINES, each with why (relative path, qualified name) -> reason.
WHOLE: dict[tuple[str, str], str] = {
    ("formats/dwarf_lines.py", "_run"):
        "the DWARF line-number state machine: one loop over opcodes whose seven registers a split would pass "
        "back and forth for every row (the hot path of reading a library's line tables)",
    ("isa/vector.py", "evidence_many"):
        "a vectorized pass of the decoder: numpy arrays of every kernel's instructions built and reduced in one "
        "scope (per-kernel Python is what it exists to avoid)",
    ("isa/vector.py", "listings_many"):
        "a vectorized pass of the decoder: the kernels' listings from one set of decoded arrays (DecodedSection)",
    ("isa/vector.py", "line_traffic_many"):
        "a vectorized pass of the decoder: accesses, copies, loops, blocks and line rows from one set of arrays",
}

# Files other branches are changing while this list was written: any function in them may be over
# MOST_LINES until they are merged, then split (or named in WHOLE) and the entry removed.
SPLIT_PENDING_MERGE: dict[str, str] = {
}


def function_lengths(source: str) -> dict[str, int]:
    """Each function and method of a module's source by qualified name -> its lines."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                assert child.end_lineno is not None
                found[name] = max(found.get(name, 0), child.end_lineno - child.lineno + 1)
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def package_functions() -> dict[tuple[str, str], int]:
    return {(path.relative_to(PACKAGE).as_posix(), name): lines
            for path in sorted(PACKAGE.rglob("*.py"))
            for name, lines in function_lengths(path.read_text()).items()}


def pending_merge(path: str) -> bool:
    return any(fnmatchcase(path, pattern) for pattern in SPLIT_PENDING_MERGE)


def test_no_function_is_over_100_lines_but_those_named_with_why():
    functions = package_functions()
    assert len(functions) > 500 and functions[("gate/baseline.py", "build")] > 20
    long = [f"{path}:{name} ({lines} lines)" for (path, name), lines in sorted(functions.items())
            if lines > MOST_LINES and (path, name) not in WHOLE and not pending_merge(path)]
    assert not long, (f"functions over {MOST_LINES} lines (split them into named steps, or name one in WHOLE "
                      "with why it stays whole):\n" + "\n".join(long))


def test_the_allow_list_names_only_what_needs_it():
    """Each function WHOLE names is there and still over the limit (once split, its entry goes), and
    each pending file still exists."""
    functions = package_functions()
    stale = [f"{path}:{name} ({functions.get((path, name), 'no such function')})" for path, name in WHOLE
             if functions.get((path, name), 0) <= MOST_LINES]
    assert not stale, "allow-listed but not over the limit: remove from WHOLE:\n" + "\n".join(stale)
    assert all(reason.strip() for reason in [*WHOLE.values(), *SPLIT_PENDING_MERGE.values()])
    for pattern in SPLIT_PENDING_MERGE:
        assert list(PACKAGE.glob(pattern)), f"{pattern}: no such file (merged and renamed? update the list)"


def test_lengths_are_counted_from_def_to_last_line_nested_ones_apart():
    source = ("def short():\n    return 1\n\n\nclass Kind:\n    def method(self):\n"
              + "        x = 1\n" * 101 + "        return x\n\n\n"
              "def outer():\n    def inner():\n        pass\n    return inner\n")
    assert function_lengths(source) == {"short": 2, "Kind.method": 103, "outer": 4, "outer.inner": 2}
