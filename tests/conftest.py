"""Fixtures shared across the test tree.

- ``load_event(name)``: a fresh copy of a payload of ``events/``, such as ``"api/get_definition"``.
- ``dynamodb``: moto in process with the one table created; yields ``(client, table_name)``.
- ``manual_clock``: a :class:`~parley.clock.ManualClock` at a fixed time.
- ``stub_check``: a save-time check that only wants front matter, for tests of the definition rules
  that must not depend on the document checker (its own tests live under ``tests/unit/documents``).
- ``example_source``: the ``approve-campaign-brief`` document of ``interaction-format.md``.
- ``tool_server`` / ``tools``: a real MCP server on 127.0.0.1 per test module; ``tools`` resets it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from parley.clock import ManualClock
from parley.documents.definition import CheckedDocument
from parley.errors import ErrorEntry, Problem

# Timing is for `make bench`, never for tests: on a busy 2-core machine a slow example is not a failure.
settings.register_profile("parley", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("parley")

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ROOT / "events"

#: The example of interaction-format.md, "A function document", byte for byte.
EXAMPLE_SOURCE = (ROOT / "examples" / "definitions" / "approve-campaign-brief.md").read_text(encoding="utf-8")

START = datetime(2026, 10, 17, 10, 18, 42, tzinfo=UTC)


@cache
def _event_text(name: str) -> str:
    return (EVENTS / f"{name}.json").read_text(encoding="utf-8")


def load_event(name: str) -> dict[str, Any]:
    """A fresh copy of ``events/{name}.json``."""
    event: dict[str, Any] = json.loads(_event_text(name))
    return copy.deepcopy(event)


@pytest.fixture(scope="module")
def tool_server() -> Iterator[Any]:
    """A real MCP server on 127.0.0.1 (``tests/mcp_servers.py``), one per test module."""
    from mcp_servers import running_tool_server

    with running_tool_server() as running:
        yield running


@pytest.fixture
def tools(tool_server: Any) -> Any:
    """The module's MCP server, with its failures, received headers and calls forgotten."""
    tool_server.reset()
    return tool_server


@pytest.fixture(name="load_event")
def load_event_fixture() -> Callable[[str], dict[str, Any]]:
    return load_event


@pytest.fixture(scope="session")
def _dynamodb_client() -> Any:
    # Creating a client costs most of a moto test's setup; moto intercepts every client made after it
    # is imported, so one client serves each test's own mock (and its own, empty, table).
    import moto  # noqa: F401

    from parley.local.aws import local_dynamodb_client

    return local_dynamodb_client()


@pytest.fixture
def dynamodb(_dynamodb_client: Any) -> Iterator[tuple[Any, str]]:
    from moto import mock_aws

    from parley.local.aws import create_table

    with mock_aws():
        yield _dynamodb_client, create_table(_dynamodb_client, "parley-test")


@pytest.fixture
def content(dynamodb: tuple[Any, str]) -> Any:
    """The content bucket, in the same moto as ``dynamodb``."""
    from parley.local.aws import local_content_store

    return local_content_store("parley-test-content")


@pytest.fixture
def manual_clock() -> ManualClock:
    return ManualClock(START)


def stub_check(definition_type: str, source: str) -> CheckedDocument:
    if not source.startswith("---\n"):
        raise Problem(
            "invalid_input",
            "The document has 1 problem: Line 1: A document starts with YAML front matter",
            errors=[ErrorEntry("/source", "Line 1: A document starts with YAML front matter")],
        )
    first = source.splitlines()[1] if source.count("\n") > 1 else ""
    description = first.removeprefix("description: ") if first.startswith("description: ") else None
    return CheckedDocument(
        media_type="text/markdown",
        description=description,
        front_matter={},
        body=source,
        overview=f"Overview of {definition_type}: {description or 'no description yet'}",
        warnings=[],
    )


@pytest.fixture(name="stub_check")
def stub_check_fixture() -> Callable[[str, str], CheckedDocument]:
    return stub_check


@pytest.fixture
def example_source() -> str:
    return EXAMPLE_SOURCE
