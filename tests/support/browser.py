"""A real browser for the HTML pages: Debian's Chromium, headless, driven by
Selenium through Debian's chromedriver (never a downloaded browser).  Missing
locally: the test is skipped; under CI (CI set): it fails, as the other tests'
missing tools do."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM = "/usr/bin/chromium"


def _missing(message: str):
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def chromium(width: int = 1400, height: int = 1000):
    if os.environ.get("NIX_BUILD_TOP"):
        # The flake's checks.tests: the host's browser is no input of the build (and, unsandboxed, it would
        # write its profile under HOME=/homeless-shelter, which every later Nix build then refuses).
        pytest.skip("no browser inside a Nix build: the HTML pages are tested by .ci/run")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium missing: pip install selenium (the [test] extra)")
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (os.path.exists(path) or shutil.which(os.path.basename(path))):
            _missing(f"{path} missing: apt-get install {package}")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}", "--disable-extensions",
                     "--disable-background-networking", "--no-first-run"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # A profile and a HOME of its own: nothing is written to the user's home.
    with tempfile.TemporaryDirectory(prefix="spillway-chromium-") as home:
        options.add_argument(f"--user-data-dir={home}/profile")
        service = Service(executable_path=CHROMEDRIVER, env={**os.environ, "HOME": home})
        driver = webdriver.Chrome(service=service, options=options)
        try:
            yield driver
        finally:
            driver.quit()


def open_page(driver, path: Path) -> list[dict]:
    """Load a page from its file and wait until its table is drawn; the browser
    log's entries of level SEVERE or WARNING (errors, failed loads)."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(Path(path).resolve().as_uri())
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
    return [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]


def visible_rows(driver) -> list[list[str]]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#kernels tbody tr'))"
        ".map(tr => Array.from(tr.children).map(td => td.textContent));")


def shown_count(driver) -> int:
    return int(driver.execute_script("return document.getElementById('count').dataset.count;"))
