"""compare at scale keeps to its line budget: librocsparse1 7.2.4 against 6.4.3
and back (249,970 and 184,020 kernel records; 29,990 matched, 209,816 and
148,620 on one side only) print at most 200 lines at the default --limit, at
80 and 120 columns, piped and on a terminal, totals included (issue 31: 218
lines at 120 columns, 233 at 80, once the totals came).  Each library is read
once; the output is what `spillway compare` prints (gate.table.print_compare)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from spillway.gate.compare import compare
from spillway.gate.reading import read_sources
from spillway.render.table import print_compare
from spillway.report.reader import ReadOptions
from support.rocm_packages import locate

pytestmark = pytest.mark.oracle

LINE_BUDGET = 200


@pytest.fixture(scope="module")
def libraries():
    new, old = locate("librocsparse1-7.2.4").host_library(), locate("librocsparse1-6.4.3").host_library()
    return {side: read_sources([str(path)], ReadOptions()).usage for side, path in (("7.2.4", new), ("6.4.3", old))}


@pytest.mark.parametrize("new, old", [("7.2.4", "6.4.3"), ("6.4.3", "7.2.4")])
def test_compare_of_two_rocm_libraries_fits_its_budget(libraries, new, old):
    comparison = compare(libraries[new], libraries[old], [new], [old])
    for width in (80, 120):
        for terminal in (False, True):
            out = io.StringIO()
            console = Console(file=out, width=width, force_terminal=terminal,
                              color_system="standard" if terminal else None, soft_wrap=False, highlight=False,
                              emoji=False)
            print_compare(comparison, console, everything=False, limit=50, names="short")
            lines = out.getvalue().splitlines()
            assert len(lines) <= LINE_BUDGET, (width, terminal, len(lines))
            assert lines[1].startswith("totals over 29,990 kernels in both builds"), lines[1]
            assert sum(line.startswith("  largest ") for line in lines) >= 6
            for count, title in ((len(comparison.only_new), "added (only in the new build)"),
                                 (len(comparison.only_old), "removed (only in the old build)")):
                heading = lines.index(f"{count} kernels {title}:")
                assert lines[heading + 1].startswith("  ") and "B/lane scratch" in lines[heading + 1]
            print(f"compare {new} against {old}, {width} columns{', terminal' if terminal else ''}: "
                  f"{len(lines)} lines")
