#!/usr/bin/env python3
"""The pictures of the HTML pages (docs/html.md): the matrix page (kernels x cells)
and one kernel's detail (figures per cell, its target's occupancy curves),
from the matrix built in BUILD (default build/, as scripts/main-job.sh makes
it), drawn by Debian's headless Chromium (tests/support/browser.py) into
docs/matrix-page.png and docs/matrix-kernel.png.  Not a test: run it by hand
after the pages change.

    scripts/screenshots.py [--build-dir BUILD] [--kernel NAME]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.browser import chromium, open_page  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default=str(ROOT / "build"), help="the built matrix (default: build/)")
    parser.add_argument("--kernel", default="gemm_i8<128, 128, 32, 2, 2, 1024>",
                        help="the kernel whose detail is shown (its gfx11 row)")
    args = parser.parse_args()
    docs = ROOT / "docs"
    with tempfile.TemporaryDirectory() as work:
        page = Path(work) / "matrix.html"
        subprocess.run([sys.executable, "-m", "spillway", "matrix", "compare", "--build-dir", args.build_dir,
                        "--format", "html", "-o", str(page)], cwd=ROOT, check=True)
        with chromium(width=1400, height=860) as browser:
            problems = open_page(browser, page)
            if problems:
                print(f"screenshots: the page logged {problems}", file=sys.stderr)
                return 1
            browser.find_element("id", "differing").click()
            browser.save_screenshot(str(docs / "matrix-page.png"))
            box = browser.find_element("id", "filter")
            box.send_keys(args.kernel)
            rows = browser.find_elements("css selector", "#kernels tbody tr")
            if not rows:
                print(f"screenshots: no kernel {args.kernel!r} in the matrix", file=sys.stderr)
                return 1
            rows[0].click()
            browser.set_window_size(1400, 1240)
            browser.save_screenshot(str(docs / "matrix-kernel.png"))
    for name in ("matrix-page.png", "matrix-kernel.png"):
        print(f"screenshots: wrote docs/{name} ({(docs / name).stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
