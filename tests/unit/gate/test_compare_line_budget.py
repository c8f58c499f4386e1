"""compare's terminal output keeps to its line budget (200 lines at the default
--limit 50), totals included: the kernels on one side only share what the
sentence, the totals and the table leave, each list counting what it left out
(issue 31: librocsparse1 7.2.4 against 6.4.3 had grown to 218 lines, 233 at 80
columns, once the totals came).  tests/oracle/test_compare_line_budget.py holds
the same on those libraries."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from spillway.gate.compare import compare
from spillway.gate.kernels import aggregate
from spillway.render.table import print_compare
from support.gate_fixtures import record

LINE_BUDGET = 200          # lines, at the default --limit 50
STEP = {"waves": 16, "needs": [{"resource": "vgpr", "at_most": 96}]}


def _name(prefix: str, index: int) -> str:
    """A mangled template kernel with a long name (a library's are longer still)."""
    inner = "rocsparse_complex_num" * 6
    return f"_Z{len(prefix) + 4}{prefix}{index:04d}ILi{index}E{len(inner)}{inner}EvPKfPf"


def _comparison(changed: int = 80, added: int = 300, removed: int = 300):
    old, new = [], []
    for i in range(changed):
        for target in ("gfx1100", "gfx1101"):
            symbol = _name("changed", i)
            old.append(record(symbol, target=target, vgprs=91, occupancy=16, scratch=i % 3 * 4, vgpr_spills=i % 2))
            grown = record(symbol, target=target, vgprs=98, occupancy=12, scratch=i % 5 * 4, vgpr_spills=i % 3)
            grown["occupancy_next"] = STEP
            new.append(grown)
    new += [record(_name("added", i), scratch=i % 7) for i in range(added)]
    old += [record(_name("removed", i), vgpr_spills=i % 3) for i in range(removed)]
    return compare(aggregate(new), aggregate(old), ["new.so"], ["old.so"])


def _render(comparison, width: int, terminal: bool, limit: int = 50) -> list[str]:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=terminal, color_system="standard" if terminal else None,
                      soft_wrap=False, highlight=False, emoji=False)
    print_compare(comparison, console, everything=False, limit=limit, names="short")
    return out.getvalue().splitlines()


@pytest.mark.parametrize("terminal", [False, True])
@pytest.mark.parametrize("width", [80, 120])
def test_compare_keeps_to_its_line_budget(width, terminal):
    comparison = _comparison()
    lines = _render(comparison, width, terminal)
    assert len(lines) <= LINE_BUDGET, len(lines)
    text = "\n".join(lines)
    # Everything keeps its place: the sentence first and last, the totals, the table (its 50 rows), and
    # both lists, shortened, with what they left out counted.
    assert lines[0] == lines[-1] == comparison.sentence()
    assert lines[1].startswith("totals over 160 kernels in both builds")
    assert any(line.startswith("  largest VGPRs worse: ") for line in lines)
    assert sum(1 for line in lines if re.search(r"\bgfx110[01]\b.*91 → 98", line)) == 50
    assert "... and 110 more (--limit 0 shows all)." in text
    for count, title in ((300, "added (only in the new build)"), (300, "removed (only in the old build)")):
        heading = lines.index(f"{count} kernels {title}:")
        listed = 0
        while lines[heading + 1 + listed].startswith("  ") and "more (--limit 0" not in lines[heading + 1 + listed]:
            listed += 1
        assert 5 <= listed < 50, (title, listed)
        assert lines[heading + 1 + listed] == f"  ... and {count - listed} more (--limit 0 shows all)"


def test_what_fits_is_printed_as_before_and_limit_0_prints_everything():
    small = _comparison(changed=10, added=20, removed=20)
    lines = _render(small, 120, False)
    assert sum(1 for line in lines if line.startswith("  ") and "B/lane scratch" in line) == 40
    assert not any("more (--limit 0 shows all)" in line for line in lines)
    everything = _render(_comparison(), 80, False, limit=0)
    assert len(everything) > 600
    assert not any("more (--limit 0 shows all)" in line for line in everything)
    # A larger --limit has a larger budget: four lines a row.
    assert LINE_BUDGET < len(_render(_comparison(), 80, False, limit=100)) <= 400
