"""The Lambda entry ``handle``: it builds its runtime from the environment on the first call only."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from parley.api import app

OPERATOR = {
    "principals": [
        {
            "id": "dev",
            "token": "dev-token",
            "grants": [{"org": "acme", "playbook": "campaigns", "role": "write"}],
        }
    ]
}


@pytest.fixture
def deployed(dynamodb: tuple[Any, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    _, table = dynamodb
    monkeypatch.setenv("PARLEY_TABLE", table)
    monkeypatch.setenv("PARLEY_OPERATOR_CONFIG", json.dumps(OPERATOR))
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    app._default_handler.cache_clear()
    yield
    app._default_handler.cache_clear()


def test_importing_the_api_builds_nothing() -> None:
    code = (
        "import os, boto3\n"
        "os.environ.pop('PARLEY_TABLE', None)\n"
        "boto3.client = boto3.resource = None  # any call at import would fail\n"
        "import parley.api.app as app\n"
        "assert app._default_handler.cache_info().currsize == 0\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_handle_serves_the_api_from_the_environment(
    deployed: None, load_event: Callable[[str], dict[str, Any]], example_source: str
) -> None:
    created = app.handle(load_event("api/create_definition"), None)
    got = app.handle(load_event("api/get_definition"), None)

    assert created["statusCode"] == 201, created["body"]
    assert got["statusCode"] == 200
    definition = json.loads(got["body"])
    assert definition["source"] == example_source
    assert definition["description"] == "Asks the campaign owner to approve a reviewed brief"
    assert definition["media_type"] == "text/markdown"
    assert "Asks the campaign owner to approve a reviewed brief" in definition["overview"]
    assert app._default_handler.cache_info().currsize == 1


def test_handle_without_a_table_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PARLEY_TABLE", raising=False)
    app._default_handler.cache_clear()
    try:
        with pytest.raises(ValueError, match="PARLEY_TABLE"):
            app.handle({}, None)
    finally:
        app._default_handler.cache_clear()
