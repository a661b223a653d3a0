"""Fixtures of the browser tests: Playwright (sync API) driving Debian's ``chromium`` — never a browser
Playwright downloads (``playwright install`` is not part of the set-up: no browser download is possible
here; ``make install`` installs the ``chromium`` package where it is missing).

``browser`` is one Chromium per test module; each test gets a fresh context (``page``): its own
``sessionStorage``, so each signs in again. Not one per session: Playwright's sync API keeps an asyncio
loop running in the main thread while it is started, and every other test that calls ``asyncio.run()``
(the MCP clients) would fail in the meantime. A page that throws an uncaught error fails
its test. The tests of this folder are skipped only when Chromium is absent.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: Debian's Chromium (``apt-get install chromium``), else one on the PATH.
CHROMIUM = next(
    (path for path in ("/usr/bin/chromium", shutil.which("chromium")) if path and os.access(path, os.X_OK)),
    None,
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if CHROMIUM is not None:
        return
    skip = pytest.mark.skip(reason="Chromium is not installed (make install installs Debian's chromium)")
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    assert CHROMIUM is not None
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1000, "height": 900}, locale="en-GB", timezone_id="UTC")
    context.set_default_timeout(15_000)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield opened
    finally:
        context.close()
    assert errors == [], errors
