"""The compare and report pages on the largest inputs (issue 25): librocsparse1 7.2.4
against 6.4.3 (249,970 and 184,020 kernel records; unpacked by
scripts/fetch-rocm-libraries.sh) stays under 10 MB and shows its table in under
2 s from navigation start, by the browser's own clock (Navigation Timing: the
mark the page sets when its table is drawn).  Skipped where the libraries or the
browser are not here, failed under CI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from support.browser import chromium, open_page, shown_count
from support.rocm_packages import locate

pytestmark = pytest.mark.oracle

LIMIT_BYTES = 10 * 1024 * 1024
LIMIT_MS = 2000


def test_librocsparse_compare_page_is_small_and_quick(tmp_path):
    new, old = locate("librocsparse1-7.2.4").host_library(), locate("librocsparse1-6.4.3").host_library()
    page = tmp_path / "compare.html"
    spillway = [sys.executable, "-m", "spillway", "compare", str(new), "--against", str(old)]
    done = subprocess.run([*spillway, "--format", "html", "-o", str(page)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    document = json.loads(subprocess.run([*spillway, "--json"], capture_output=True, check=True).stdout)
    size = page.stat().st_size
    assert size < LIMIT_BYTES, f"{size} bytes"
    with chromium() as browser:
        assert open_page(browser, page) == []
        drawn = browser.execute_script(
            "const nav = performance.getEntriesByType('navigation')[0];"
            "const mark = performance.getEntriesByName('spillway-table-drawn')[0];"
            "return [mark.startTime, nav.startTime, nav.domContentLoadedEventEnd];")
        table_ms = drawn[0] - drawn[1]          # from navigation start (0 in the page's own time origin)
        assert table_ms < LIMIT_MS, f"table drawn {table_ms:.0f} ms after navigation start"
        summary = document["summary"]
        for name in ("compared", "worse", "better", "same", "added", "removed"):
            shown = browser.find_element("id", f"count-{name}").text
            assert int(shown.replace(",", "")) == summary[name], name
        changed = sum(1 for k in document["kernels"] if k["old"] != k["new"])
        assert shown_count(browser) >= changed
        # Clicking a kernel opens its detail on this page too.
        browser.find_elements("css selector", "#kernels tbody tr")[0].click()
        assert browser.execute_script("return document.getElementById('detail').hidden") is False
    print(f"compare page: {size} bytes, table drawn {table_ms:.0f} ms after navigation start")


def test_librocsparse_report_page_is_small_and_quick(tmp_path):
    """report --all: histograms over all 249,970 records, the table's first ROW_CAP rows."""
    library = locate("librocsparse1-7.2.4").host_library()
    page = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "spillway", "report", "--all", str(library), "--format", "html",
                           "-o", str(page)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    size = page.stat().st_size
    assert size < LIMIT_BYTES, f"{size} bytes"
    with chromium() as browser:
        assert open_page(browser, page) == []
        table_ms = browser.execute_script("return performance.getEntriesByName('spillway-table-drawn')[0].startTime"
                                          " - performance.getEntriesByType('navigation')[0].startTime")
        assert table_ms < LIMIT_MS, f"table drawn {table_ms:.0f} ms after navigation start"
        assert int(browser.find_element("id", "count-read").text.replace(",", "").split(" ")[0]) == 249_970
        browser.find_elements("css selector", "#kernels tbody tr")[0].click()
        assert browser.execute_script("return document.getElementById('detail').hidden") is False
    print(f"report page: {size} bytes, table drawn {table_ms:.0f} ms after navigation start")
