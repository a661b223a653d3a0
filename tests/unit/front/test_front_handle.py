"""The mcp function's Lambda entry: it imports nothing heavy and builds its runtime on the first event."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from parley.front import handler as front

OPERATOR = {
    "principals": [
        {
            "id": "dev",
            "token": "dev-token",
            "grants": [{"org": "acme", "playbook": "campaigns", "role": "write"}],
        }
    ]
}


def test_importing_the_mcp_function_builds_nothing_and_loads_no_mcp() -> None:
    code = (
        "import sys, runpy, boto3\n"
        "boto3.client = boto3.resource = None  # any call at import would fail\n"
        "module = runpy.run_path('functions/mcp/handler.py')\n"
        "import parley.front.handler as handler\n"
        "assert handler._default_handler.cache_info().currsize == 0\n"
        "assert callable(module['handler'])\n"
        "loaded = [m for m in ('mcp', 'pydantic', 'starlette', 'parley.api.registry') if m in sys.modules]\n"
        "assert loaded == [], loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.fixture
def deployed(dynamodb: tuple[Any, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    _, table = dynamodb
    monkeypatch.setenv("PARLEY_TABLE", table)
    monkeypatch.setenv("PARLEY_OPERATOR_CONFIG", json.dumps(OPERATOR))
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    front._default_handler.cache_clear()
    yield
    front._default_handler.cache_clear()


def test_handle_serves_the_front_door_from_the_environment(deployed: None) -> None:
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}
    event = {
        "resource": "/mcp",
        "path": "/mcp",
        "httpMethod": "POST",
        "headers": {
            "Authorization": "Bearer dev-token",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
        "requestContext": {"requestId": "r", "identity": {}},
        "body": json.dumps(message),
        "isBase64Encoded": False,
    }

    result = front.handle(event, None)

    assert result["statusCode"] == 200, result
    assert len(json.loads(result["body"])["result"]["tools"]) == 25  # all but approve_connection (admin)
    assert front._default_handler.cache_info().currsize == 1
