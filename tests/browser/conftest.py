"""Fixtures of the browser tests: Playwright (sync API) driving Debian's ``chromium`` — never a browser
Playwright downloads (``playwright install`` is not part of the set-up: no browser download is possible
here; ``make install`` installs the ``chromium`` package where it is missing).

``browser`` is one Chromium per test module; each test gets a fresh context (``page``): its own
``sessionStorage``, so each signs in again. Not one per session: Playwright's sync API keeps an asyncio
loop running in the main thread while it is started, and every other test that calls ``asyncio.run()``
(the MCP clients) would fail in the meantime. A page that throws an uncaught error fails
its test. The tests of this folder are skipped only when Chromium is absent.

The ``axe`` fixture is ``axe_violations``: ``axe(page)`` runs axe-core (the npm package of
``package.json``, from ``node_modules``; the tests that use it are skipped without it) on the page as it
stands, and gives each violation as ``"<rule>: <element> <why>"``. It is evaluated through the DevTools
protocol, which the pages' strict Content-Security-Policy does not govern, so the pages are checked as
they are served.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: axe-core's browser build, from ``npm ci`` (``make install``).
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"

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
    from playwright.sync_api import expect, sync_playwright

    assert CHROMIUM is not None
    # As long as the pages' own waits (15 s): an answered card leaves after 4 s, which a loaded machine
    # must not turn into a failure.
    expect.set_options(timeout=15_000)
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


def axe_violations(page: Any) -> list[str]:
    """axe-core's violations on the page as it stands (every rule axe runs by default: WCAG 2 A and AA,
    and its best practices), one line each; ``[]`` when it finds none."""
    if not AXE.is_file():
        pytest.skip("node_modules/axe-core is not installed (make install)")
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    found: list[str] = page.evaluate(
        """async () => {
          const result = await window.axe.run(document);
          return result.violations.flatMap((violation) => violation.nodes.map((node) =>
            `${violation.id}: ${node.target.join(" ")} ${node.failureSummary || violation.help}`));
        }"""
    )
    return found


@pytest.fixture
def axe() -> Callable[[Any], list[str]]:
    return axe_violations
