"""Playwright in the tests: headless Chromium from the OS packages, driven through
`executable_path` (no `playwright install`, which downloads). A browser test module does

    from tests.support.browser import needs_chromium, launch, playwright, shown
    pytestmark = needs_chromium

and is skipped, saying why, where Playwright or Chromium is missing (./scripts/test
installs Chromium when it can)."""

from __future__ import annotations

import os
import shutil
import socket
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Where the docs' screenshots go too (`SCREENSHOTS_DIR=docs`): resolved now, as the tests
# change directory.
DOCS_DIR = Path(os.environ["SCREENSHOTS_DIR"]).resolve() if os.environ.get("SCREENSHOTS_DIR") \
    else None
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

playwright = pytest.importorskip("playwright.sync_api", reason="the test extra installs "
                                 "playwright: pip install -e '.[test]'")
needs_chromium = pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason=(
    f"no Chromium at {CHROMIUM}: ./scripts/test installs it (apt-get install chromium "
    "chromium-driver, as root); it could not here"))


def launch(p):
    """Headless Chromium from Playwright's `p` (sync_playwright())."""
    return p.chromium.launch(executable_path=CHROMIUM, args=ARGS)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, seconds: float = 30, what: str = "") -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def shown(page, selector: str) -> None:
    """Wait for `selector`; when it never comes, fail with what the page said instead
    (an error page's message, not only a timeout)."""
    try:
        page.locator(selector).first.wait_for()
    except playwright.TimeoutError:
        raise AssertionError(f"no {selector} on {page.url}: "
                             + page.inner_text("body")[:2000]) from None


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def screenshot(page, path: Path, *, docs: bool = True, full_page: bool = False) -> Path:
    """`page` as the PNG `path`, copied into DOCS_DIR too when it is set and `docs` (a
    screenshot the docs show)."""
    page.screenshot(path=str(path), full_page=full_page)
    if docs and DOCS_DIR:
        DOCS_DIR.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, DOCS_DIR / path.name)
    return path
