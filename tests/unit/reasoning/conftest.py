"""Fixtures of the reasoning tests: the fake providers (one server per test module, its script and
log reset for each test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_providers import FakeProviders


@pytest.fixture(scope="module")
def providers() -> Iterator[FakeProviders]:
    with FakeProviders() as fake:
        yield fake


@pytest.fixture
def fake(providers: FakeProviders) -> FakeProviders:
    providers.reset()
    return providers
