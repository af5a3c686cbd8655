"""Headless Chromium for browser tests: Debian's /usr/bin/chromium driven by Playwright.

Never `playwright install`: a test tool's own browser download fails on this project's machines
(`.ci/run` installs Debian's `chromium`). A missing Chromium fails the test; it never skips.

    def test_...(chromium: Browser) -> None:      # the fixture in tests/conftest.py
        page = chromium.new_page()
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Browser, sync_playwright

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def chromium() -> Iterator[Browser]:
    """Chromium with a fresh profile (Playwright gives every launch a new --user-data-dir)."""
    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()
