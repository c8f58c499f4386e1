"""compare --isa --format html: each kernel's detail carries both sides' code
evidence, the same figures compare --isa --json writes (no browser needed:
the page's data element is read; tests/unit/cli/test_html_pages.py drives
the page itself in Chromium)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from support.gate_fixtures import run_cli
from spillway.render.html import front_decode, read_page_data

CO = Path(__file__).resolve().parents[2] / "data" / "isa" / "co"


def test_compare_page_rows_carry_each_sides_code(capsys, tmp_path):
    new, old = CO / "gfx90a.clang22.co", CO / "gfx90a.clang19.co"
    document = json.loads(run_cli(capsys, "compare", "--isa", new, "--against", old, "--json").out)
    page = tmp_path / "c.html"
    assert run_cli(capsys, "compare", "--isa", new, "--against", old, "--format", "html", "-o", page).status == 0
    data = read_page_data(page.read_text())
    names = front_decode(data["names"])
    fields = data["figures"] if isinstance(data["figures"], list) else None
    by_name = {}
    for row in data["rows"]:
        name = names[row[2]] if isinstance(row[2], int) else row[2]
        by_name[(row[1], name)] = row[-2:]
    # The page holds the kernels whose figures changed (any figure, VGPRs too); the JSON, every one.
    shown = [k for k in document["kernels"] if (k["target"], k["name"]) in by_name]
    assert len(shown) >= sum(1 for k in document["kernels"] if k["status"] != "same") > 0, fields
    for kernel in shown:
        old_code, new_code = by_name[(kernel["target"], kernel["name"])]
        for side, shown in (("old", old_code), ("new", new_code)):
            wanted = kernel["code"][side]
            assert shown == {"code_sha256": ", ".join(wanted["code_sha256"]), "scratch_bytes": wanted["scratch_bytes"],
                             "scratch_in_loops": wanted["scratch_in_loops"], "agpr_copies": wanted["agpr_copies"],
                             "complete": wanted["complete"]}
