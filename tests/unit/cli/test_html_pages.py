"""``--format html`` (issue 25) in a real browser: Debian's Chromium, headless,
driven by Selenium through Debian's chromedriver (tests/support/browser.py;
missing locally: skipped, under CI: failed).  Each page loads with no console
error in standards mode, shows the counts the JSON output of the same command
gives, opens a kernel's detail on a click, sorts and filters.  Inputs are real
builds: tests/data/formats.hip by clang-22 (report), the gate fixtures' clang-15
and clang-22 objects (compare, check), the tests' one build of the local
matrix (matrix compare)."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spillway.cli import main
from spillway.cli.output import is_spillway_file
from spillway.gate.failure_code import FailureCode
from spillway.render.html import encoded_data, page as write_page, read_page_data
from support.browser import chromium, open_page, shown_count, visible_rows
from support.cli_fixtures import kernel, report
from support.formats_fixtures import FORMATS, SECOND
from support.gate_fixtures import builds  # noqa: F401  (a session fixture)
from support.toolchains import REPO


@pytest.fixture(scope="module")
def library(builder):
    objects = [builder.hip(22, FORMATS, ["gfx90a", "gfx1151"]), builder.hip(22, SECOND, ["gfx90a", "gfx1151"])]
    return builder.link(22, objects, "libengine.so", "-shared")


@pytest.fixture(scope="module")
def browser():
    with chromium() as driver:
        yield driver


def spillway(*argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spillway", *map(str, argv)], capture_output=True, text=True,
                          cwd=REPO)


def page_data(path: Path) -> dict:
    return read_page_data(path.read_text())


def load(browser, path: Path) -> None:
    problems = open_page(browser, path)
    assert problems == [], problems
    assert browser.execute_script("return document.compatMode") == "CSS1Compat"       # standards mode
    # Self-contained: nothing but the page itself was loaded.
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert loaded == []


def text_of(browser, element_id: str) -> str:
    return browser.find_element("id", element_id).text


def click_row(browser, index: int = 0) -> str:
    browser.find_elements("css selector", "#kernels tbody tr")[index].click()
    assert browser.execute_script("return document.getElementById('detail').hidden") is False
    return text_of(browser, "detail-name")


def set_filter(browser, text: str) -> None:
    box = browser.find_element("id", "filter")
    box.clear()
    box.send_keys(text)


def column(browser, label: str) -> int:
    heads = browser.execute_script("return Array.from(document.querySelectorAll('#kernels th'))"
                                   ".map(th => th.textContent)")
    return [h.split(" ")[0] for h in heads].index(label)


def sort_by(browser, label: str) -> int:
    index = column(browser, label)
    browser.find_element("css selector", f"#kernels th[data-col='{index}']").click()
    return index


def number(text: str) -> int:
    return int(text.replace(",", "").split(" ")[0])


# -- the file ---------------------------------------------------------------------------

def test_data_cannot_end_its_script_element(browser, tmp_path):
    data = {"name": "</script><script>alert(1)</script><!--"}
    encoded = encoded_data(data)
    assert set(encoded) <= set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
    assert encoded == encoded_data(dict(data))            # no timestamp: the same model, the same bytes
    page = write_page("report", "t", {**data, "counts": {}, "listed_what": "", "inputs": [], "histograms": {},
                                      "columns": [], "rows": [], "names": [], "name_at": 0, "files": [],
                                      "curves": {}, "notes": []})
    assert read_page_data(page.decode())["name"] == data["name"]
    path = tmp_path / "p.html"
    path.write_bytes(page)
    load(browser, path)         # the browser inflates it: no console error, the table drawn
    assert browser.execute_script("return document.body.dataset.ready") == "1"


def test_report_page(library, browser, tmp_path):
    page = tmp_path / "report.html"
    assert spillway("report", "--all", library, "--format", "html", "-o", page).returncode == 0
    lines = page.read_text().splitlines()
    assert lines[0] == "<!DOCTYPE html>" and lines[1].startswith("<!-- spillway report: written by spillway")
    assert is_spillway_file(str(page))
    assert "http://" not in page.read_text().replace("http://www.w3.org/2000/svg", "")
    document = json.loads(spillway("report", library, "--json").stdout)
    kernels = document["kernels"]
    load(browser, page)
    assert number(text_of(browser, "count-read")) == len(kernels)
    assert shown_count(browser) == len(kernels) == len(visible_rows(browser))
    assert len(browser.find_elements("css selector", "#histograms svg")) == 3
    # Sorting: VGPRs, largest first, then smallest first.
    at = sort_by(browser, "VGPRs")
    vgprs = [int(row[at]) for row in visible_rows(browser)]
    assert vgprs == sorted((k["vgpr_count"] for k in kernels), reverse=True)
    sort_by(browser, "VGPRs")
    assert [int(row[at]) for row in visible_rows(browser)] == sorted(vgprs)
    # Filtering by name and by target.
    set_filter(browser, "scale")
    expected = [k for k in kernels if "scale" in k["name"].lower()]
    assert expected and shown_count(browser) == len(expected)
    browser.find_element("css selector", "#target option[value='gfx90a']").click()
    assert shown_count(browser) == len([k for k in expected if k["target"] == "gfx90a"])
    assert all(row[1] == "gfx90a" for row in visible_rows(browser))
    # A kernel's detail: its figures and its target's two occupancy curves.
    name = click_row(browser)
    assert "scale" in name
    assert len(browser.find_elements("css selector", "#detail .curve-chart svg")) == 2
    assert browser.find_elements("css selector", "#detail circle.pos")


def test_report_page_draws_the_live_vgprs_along_the_code(browser, tmp_path):
    """report --pressure --format html (issue 41 item 6): a kernel's detail draws its VGPR curve (one flat
    segment per stretch of vgpr_curve, in order), its loops shaded (isa.loop_spans), the VGPRs it was given
    and the occupancy steps' VGPR limits in range, and the peak marked; without --pressure, no chart."""
    co = REPO / "tests" / "data" / "isa" / "co" / "gfx90a.clang22.co"
    page = tmp_path / "report.html"
    assert spillway("report", co, "spill_in_loop", "--pressure", "--format", "html", "-o", page).returncode == 0
    record = json.loads(spillway("report", co, "spill_in_loop", "--pressure", "--json").stdout)["kernels"]
    isa = next(k["isa"] for k in record if k.get("isa"))
    pressure = isa["pressure"]
    load(browser, page)
    click_row(browser)
    chart = browser.find_element("id", "pressure")
    assert f"peak {pressure['vgprs']['peak']}" in chart.text and "At the peak: " in chart.text
    path = chart.find_element("css selector", "path.pressure").get_attribute("d")
    points = [tuple(map(float, pair.split())) for pair in re.findall(r"[ML]([-0-9.e]+ [-0-9.e]+)", path)]
    assert len(points) == 2 * len(pressure["vgpr_curve"])
    heights = [y for _x, y in points[::2]]
    lefts = [x for x, _y in points[::2]]
    assert lefts == sorted(lefts)
    # each stretch higher on the page (a smaller y) exactly where more VGPRs are live
    for (live_a, y_a), (live_b, y_b) in itertools.combinations(zip(pressure["vgpr_curve"], heights), 2):
        assert (live_a > live_b) == (y_a < y_b - 1e-6) or live_a == live_b
    assert len(chart.find_elements("css selector", "rect.loop")) == len(isa["loop_spans"]) > 0
    assert chart.find_elements("css selector", "line.limit") and "waves" in chart.text
    assert "given " in chart.text and chart.find_elements("css selector", "circle.pos")
    # --isa alone: no pressure, no chart
    plain = tmp_path / "plain.html"
    assert spillway("report", co, "spill_in_loop", "--isa", "--format", "html", "-o", plain).returncode == 0
    load(browser, plain)
    click_row(browser)
    assert not browser.find_elements("id", "pressure")


def _axis(chart) -> tuple[float, float, float]:
    """The code axis of a pressure chart: its left and right x, and its y."""
    axis = chart.find_elements("css selector", "line.axis")[0]
    return (float(axis.get_attribute("x1")), float(axis.get_attribute("x2")), float(axis.get_attribute("y1")))


def _tick_xs(chart, css: str) -> list[float]:
    return [float(tick.get_attribute("x1")) for tick in chart.find_elements("css selector", css)]


def test_report_page_ticks_each_scratch_access_and_names_the_peaks_loop(browser, tmp_path):
    """report --pressure --format html: a tick on the code axis for each of isa.pressure.scratch_offsets
    (those in the code's range), each at its offset's x, with a legend entry; the loop holding the peak
    (at_vgpr_peak.loop) named by its head's line in the caption."""
    co = REPO / "tests" / "data" / "isa" / "lines" / "co" / "gfx90a.clang22.dwarf5.co"
    page = tmp_path / "report.html"
    assert spillway("report", co, "spill_in_loop", "--pressure", "--format", "html", "-o", page).returncode == 0
    record = json.loads(spillway("report", co, "spill_in_loop", "--pressure", "--json").stdout)["kernels"]
    pressure = next(k["isa"] for k in record if k.get("isa"))["pressure"]
    offsets = [at for at in pressure["scratch_offsets"] if 0 <= at <= pressure["code_bytes"]]
    assert offsets
    load(browser, page)
    click_row(browser)
    chart = browser.find_element("id", "pressure")
    left, right, base = _axis(chart)
    xs = _tick_xs(chart, "svg > line.scratch")
    assert len(xs) == len(offsets)
    for x, at in zip(xs, offsets):
        assert x == pytest.approx(left + (right - left) * at / pressure["code_bytes"], abs=1e-6)
    assert all(float(t.get_attribute("y2")) == base for t in chart.find_elements("css selector", "svg > line.scratch"))
    assert f"{len(offsets)} scratch accesses" in chart.find_element("css selector", ".scratch-legend").text
    loop = pressure["at_vgpr_peak"]["loop"]
    caption = chart.find_element("css selector", "p.peak-loop").text
    assert f"inside the loop at {loop['head']['file']}:{loop['head']['line']}" in caption
    assert f"+0x{loop['start']:x} .. +0x{loop['end']:x}" in caption


def test_compare_page_ticks_both_builds_scratch_accesses(browser, tmp_path):
    """compare --pressure --format html: each build's scratch accesses ticked over the fraction of its own
    code (the old ones dashed, below the axis), as many as compare --json's code.pressure.*.scratch_offsets;
    the loops holding the peaks named under the chart."""
    co = REPO / "tests" / "data" / "isa" / "lines" / "co"
    argv = ["compare", co / "gfx90a.clang22.dwarf5.co", "--against", co / "gfx90a.clang19.dwarf5.co", "--pressure"]
    page = tmp_path / "compare.html"
    assert spillway(*argv, "--format", "html", "-o", page).returncode in (0, 1)
    document = json.loads(spillway(*argv, "--json").stdout)
    shift = next(k["code"]["pressure"] for k in document["kernels"] if k["name"] == "spill_in_loop")
    load(browser, page)
    set_filter(browser, "spill_in_loop")
    click_row(browser)
    chart = browser.find_element("id", "pressure-overlay")
    left, right, base = _axis(chart)
    for side, css in (("old", "line.old-scratch"), ("new", "line.new-scratch")):
        offsets = [at for at in shift[side]["scratch_offsets"] if 0 <= at <= shift[side]["code_bytes"]]
        xs = _tick_xs(chart, css)
        assert len(xs) == len(offsets) > 0, side
        for x, at in zip(xs, offsets):
            assert x == pytest.approx(left + (right - left) * at / shift[side]["code_bytes"], abs=1e-6)
    assert {float(t.get_attribute("y2")) for t in chart.find_elements("css selector", "line.old-scratch")} \
        != {float(t.get_attribute("y2")) for t in chart.find_elements("css selector", "line.new-scratch")}
    loop = shift["new"]["loop"]
    assert f"new peak inside the loop at {loop['head']['file']}:{loop['head']['line']}" in chart.text


def test_compare_page_overlays_both_builds_live_vgprs(browser, tmp_path):
    """compare --pressure --format html (issue 41 item 6): a kernel's detail draws both builds' VGPR curves
    over the fraction of their own code, the old dashed; each path has one flat segment per stretch of its
    side's vgpr_curve (compare --json's code.pressure)."""
    co = REPO / "tests" / "data" / "isa" / "co"
    argv = ["compare", co / "gfx90a.clang22.co", "--against", co / "gfx90a.clang19.co", "--pressure"]
    page = tmp_path / "compare.html"
    assert spillway(*argv, "--format", "html", "-o", page).returncode in (0, 1)
    document = json.loads(spillway(*argv, "--json").stdout)
    shifts = {k["name"]: k["code"]["pressure"] for k in document["kernels"]
              if k.get("code") and k["code"].get("pressure")}
    assert shifts
    load(browser, page)
    set_filter(browser, "spill_pressure")
    click_row(browser)
    shift = shifts["spill_pressure"]
    chart = browser.find_element("id", "pressure-overlay")
    assert f"peak {shift['old']['vgprs']} \u2192 {shift['new']['vgprs']}" in chart.text
    for side, css in (("old", "path.old-curve"), ("new", "path.new-curve")):
        path = chart.find_element("css selector", css).get_attribute("d")
        points = re.findall(r"[ML]([-0-9.e]+) ([-0-9.e]+)", path)
        assert len(points) == 2 * len(shift[side]["vgpr_curve"]) > 0


def test_compare_page(builds, browser, tmp_path):  # noqa: F811
    page = tmp_path / "compare.html"
    done = spillway("compare", builds.new, "--against", builds.old, "--format", "html", "-o", page)
    assert done.returncode == 0, done.stderr
    document = json.loads(spillway("compare", builds.new, "--against", builds.old, "--json").stdout)
    summary = document["summary"]
    load(browser, page)
    for name in ("compared", "worse", "mixed", "better", "same", "added", "removed"):
        assert number(text_of(browser, f"count-{name}")) == summary[name], name
    pairs = document["kernels"]
    # The totals: summed here from the pairs, and as the JSON's totals give them.
    for metric, figure in (("scratch", lambda r: r["scratch"]), ("vgprs", lambda r: r["vgprs"]),
                           ("spills", lambda r: r["vgpr_spills"] + r["sgpr_spills"])):
        old_sum, new_sum = sum(figure(k["old"]) for k in pairs), sum(figure(k["new"]) for k in pairs)
        assert document["totals"]["matched"][metric] == {"kernels": len(pairs), "old": old_sum, "new": new_sum}
        shown = text_of(browser, f"total-{metric}").split()
        assert f"{old_sum:,}" in shown and f"{new_sum:,}" in shown, (metric, shown)
        added = sum(figure(k["resources"]) for k in document["added"])
        assert f"{added:,}" in shown
    losing = sum(1 for k in pairs if k["new"]["occupancy"] < k["old"]["occupancy"])
    gaining = sum(1 for k in pairs if k["new"]["occupancy"] > k["old"]["occupancy"])
    assert text_of(browser, "total-waves").endswith(f"{losing:,} / {gaining:,}")
    # The table: the changed pairs, and the added and removed kernels that use scratch.
    changed = [k for k in pairs if k["old"] != k["new"]]
    using = [k for k in document["added"] + document["removed"]
             if k["resources"]["scratch"] or k["resources"]["vgpr_spills"] or k["resources"]["sgpr_spills"]
             or k["resources"]["dynamic_stack"]]
    assert shown_count(browser) == len(changed) + len(using) > 0
    assert browser.find_elements("css selector", "#scatter circle")
    name = click_row(browser)
    assert name in {k["name"] for k in pairs + document["added"] + document["removed"]}
    set_filter(browser, "zzz-no-such-kernel")
    assert shown_count(browser) == 0


@pytest.mark.parametrize("written_from", ["old", "new"])
def test_check_page(builds, browser, tmp_path, written_from):  # noqa: F811
    """clang-22's build against clang-15's baseline (failures, kernels not in the baseline), and
    clang-15's against clang-22's (also the baseline kernels it does not build)."""
    built, source = (builds.new, builds.old) if written_from == "old" else (builds.old, builds.new)
    baseline = tmp_path / "baseline.json"
    assert spillway("baseline", "write", source, "-o", baseline, "--note", written_from, "--record-all").returncode == 0
    page = tmp_path / "check.html"
    done = spillway("check", built, "--baseline", baseline, "--format", "html", "-o", page)
    document = json.loads(spillway("check", built, "--baseline", baseline, "--json").stdout)
    assert done.returncode == (0 if document["passed"] else 1)
    assert bool(document["removed"]) == (written_from == "new")
    load(browser, page)
    for name in ("kernels", "failed_kernels", "failures", "added", "removed", "removed_targets"):
        assert number(text_of(browser, f"count-{name}")) == document["summary"][name], name
    assert shown_count(browser) == len(document["failures"]) + len(document["added"]) + len(document["removed"]) \
        + len(document["removed_targets"])
    assert text_of(browser, "sentence").endswith(document["sentence"])
    # Each failure shows its kernel's machine code, as the JSON document gives it, in the table's words.
    expected = {FailureCode(**f["code"]).text(prefix="") for f in document["failures"]}
    assert expected                                 # (both builds fail the other's baseline)
    at = column(browser, "machine")
    over = [row for row in visible_rows(browser) if row[0] in ("over", "new, over")]
    assert len(over) == min(len(document["failures"]), len(visible_rows(browser)))
    assert {row[at] for row in over} <= expected and all(row[at] for row in over)
    if over:
        sort_by(browser, "finding")                 # (the failures first, whatever the default order)
        rows = visible_rows(browser)
        first = next(i for i, row in enumerate(rows) if row[0] in ("over", "new, over"))
        click_row(browser, first)
        block = browser.find_element("css selector", "#detail .isa")
        assert "machine code, worst instance" in block.text and "scratch_in_loops" in block.text
    elif shown_count(browser):
        click_row(browser)


def test_matrix_page(one_machine_run, browser, tmp_path):
    build = one_machine_run.outputs
    page = tmp_path / "matrix.html"
    done = spillway("matrix", "compare", "--build-dir", build, "--format", "html", "-o", page)
    if "no cell is built" in done.stderr:
        pytest.skip("the local matrix built no cell")
    assert done.returncode == 0, done.stderr
    document = json.loads(spillway("matrix", "compare", "--build-dir", build, "--json").stdout)
    data = page_data(page)
    load(browser, page)
    assert number(text_of(browser, "count-rows")) == len(document["kernels"]) == shown_count(browser)
    cells = [c["name"] for c in data["cells"]]
    assert cells == [c if isinstance(c, str) else c["name"] for c in document["cells"]]
    # Only the differing rows, then all again.
    differing = sum(1 for row in data["rows"] if row[3])
    browser.find_element("id", "differing").click()
    assert shown_count(browser) == differing == number(text_of(browser, "count-differing"))
    browser.find_element("id", "differing").click()
    # Sorting by a cell's figure, against another reference cell.
    if len(cells) > 1:
        browser.find_element("css selector", "#reference option[value='1']").click()
        assert "(ref)" in browser.find_element("css selector", f"#kernels th[data-col='{2 + 1}']").text
    at = sort_by(browser, cells[-1])
    figures = [row[at] for row in visible_rows(browser) if row[at] not in ("not built", "\u2013")]
    assert [number(f) for f in figures] == sorted((number(f) for f in figures), reverse=True)
    # Filtering by name, then a kernel's detail: figures per cell, both curves, the positions.
    first = data["rows"][0][2]
    set_filter(browser, first)
    assert shown_count(browser) == sum(1 for row in data["rows"] if first.lower() in row[2].lower())
    assert click_row(browser) == first
    assert len(browser.find_elements("css selector", "#detail-figures thead th")) == len(cells) + 1
    assert len(browser.find_elements("css selector", "#detail .curve-chart svg")) == 2


def test_html_pages_are_replaced_only_when_spillway_wrote_them(tmp_path, capsys):
    old = report(tmp_path / "old.json", [kernel("_Z4topkILi32EEvPKfiPfPi")])
    new = report(tmp_path / "new.json", [kernel("_Z4topkILi32EEvPKfiPfPi", scratch=272)])
    page = tmp_path / "page.html"
    page.write_text("<!DOCTYPE html>\n<p>the user's own page</p>\n")
    assert main(["compare", str(new), "--against", str(old), "--format", "html", "-o", str(page)]) == 2
    assert "was not written by spillway" in capsys.readouterr().err
    assert main(["compare", str(new), "--against", str(old), "--format", "html", "-o", str(page), "--force"]) == 0
    assert main(["compare", str(new), "--against", str(old), "--format", "html", "-o", str(page)]) == 0
    assert page_data(page)["summary"]["worse"] == 1


def test_matrix_run_page_leads_with_each_cells_verdict(one_machine_run, browser, tmp_path):
    """``matrix run --format html`` on the tests' one build (checked, not rebuilt,
    in a copy): each cell's verdict as the run prints it, then the grid."""
    import shutil

    from support import golden

    build = tmp_path / "build"
    shutil.copytree(one_machine_run.outputs, build)
    cells = golden.built_cells(build)
    if not cells:
        pytest.skip("the local matrix built no cell")
    work = build / "html"
    golden.matrix_setup(work)
    done = subprocess.run([sys.executable, "-m", "spillway", "matrix", "run", "--no-build", "--build-dir", "..",
                           "--root", ".", "--format", "html", "-o", "matrix.html", *cells],
                          cwd=work, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    assert "wrote matrix.html" in done.stdout
    load(browser, work / "matrix.html")
    shown = browser.execute_script("return Array.from(document.querySelectorAll('#verdicts tr'))"
                                   ".map(tr => [tr.children[0].textContent, tr.children[1].textContent])")
    printed = [line.split()[:2] for line in done.stdout.splitlines()
               if line.split()[:1] in (["PASS"], ["FAIL"], ["ERROR"], ["SKIPPED"])]
    assert shown == [[cell, verdict] for verdict, cell in printed]
    assert set(cells) <= {cell for cell, _ in shown}
    click_row(browser)
