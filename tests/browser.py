"""Headless Chromium for browser tests: Debian's /usr/bin/chromium driven by Playwright.

Never `playwright install`: a test tool's own browser download fails on this project's machines
(`.ci/run` installs Debian's `chromium`). A missing Chromium fails the test; it never skips.

    async def test_...(chromium: Browser) -> None:      # the session fixture in tests/conftest.py
        page = await chromium.new_page()

Playwright's async API, on the tests' own event loop: its sync API runs a loop of its own that stays
marked as running in the thread, so an async fixture set up after it fails ("asyncio.run() cannot be
called from a running event loop").
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from playwright.async_api import Browser, async_playwright

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


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    """Chromium with a fresh profile (Playwright gives every launch a new --user-data-dir)."""
    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield browser
        finally:
            await browser.close()
