"""What a function's first event loads (issue 20, "Cold start as a user feels it"): only what the event
uses. The api function's GET and the mcp function's first requests (``initialize``, ``tools/list``) load
neither pydantic nor the mcp package; the wait, settle and timer functions never read the operator
configuration. Each runs in a fresh interpreter, over moto (``make bench`` measures the times)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
#: What no such event needs (moto, which plays AWS here, has loaded YAML already).
WATCHED = ("pydantic", "mcp", "mcp_types", "starlette", "httpx", "jsonschema", "liquid")
OPERATOR = {
    "principals": [
        {
            "id": "dev",
            "token": "dev-token",
            "grants": [{"org": "acme", "playbook": "campaigns", "role": "write"}],
        }
    ]
}
#: As the stack sets them for every function (their clients are made on first use).
STACK = {
    "PARLEY_STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:parley-test-runs",
    "PARLEY_SCHEDULE_GROUP": "parley-test",
    "PARLEY_SCHEDULER_ROLE_ARN": "arn:aws:iam::123456789012:role/parley-test-scheduler",
    "PARLEY_TIMER_FUNCTION_ARN": "arn:aws:lambda:us-east-1:123456789012:function:parley-test-timer",
}

FIRST_EVENT = """
import json, os, runpy, sys
import boto3
from moto import mock_aws

with mock_aws():
    from parley.local.aws import create_table

    os.environ["PARLEY_TABLE"] = create_table(boto3.client("dynamodb"), "parley-test")
    before = set(sys.modules)
    handler = runpy.run_path(sys.argv[1])["handler"]
    result = handler(json.loads(sys.argv[2]), None)
    loaded = set(sys.modules) - before
    watched = json.loads(sys.argv[3])
    print(json.dumps({
        "result": result,
        "loaded": sorted({name.split(".")[0] for name in loaded if name.split(".")[0] in watched}),
    }))
"""


def first_event(function: str, event: dict[str, Any], environ: dict[str, str]) -> dict[str, Any]:
    env = {
        "PATH": "/usr/bin:/bin",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "POWERTOOLS_LOG_LEVEL": "ERROR",
        **STACK,
        **environ,
    }
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            FIRST_EVENT,
            str(ROOT / "functions" / function / "handler.py"),
            json.dumps(event),
            json.dumps(WATCHED),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def api_event(path: str, body: Any = None, headers: dict[str, str] | None = None) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((ROOT / "events" / "api" / "list_definitions.json").read_text())
    event["requestContext"]["authorizer"] = {"principalId": "dev"}
    if body is not None:
        sent = {**event["headers"], **(headers or {})}
        event.update(
            path=path,
            resource=path,
            httpMethod="POST",
            headers=sent,
            multiValueHeaders={name: [value] for name, value in sent.items()},
            queryStringParameters=None,
            multiValueQueryStringParameters=None,
            pathParameters=None,
            body=json.dumps(body),
        )
    return event


def test_the_api_functions_first_get_loads_no_pydantic() -> None:
    found = first_event(
        "api", api_event("/v1/orgs/acme/playbooks/campaigns/definitions/interaction"), _configured()
    )

    assert found["result"]["statusCode"] == 200, found["result"]
    assert found["loaded"] == []


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        },
    ],
)
def test_the_mcp_functions_first_requests_load_neither_the_mcp_package_nor_pydantic(
    message: dict[str, Any],
) -> None:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Mcp-Protocol-Version": "2025-06-18",
    }

    found = first_event("mcp", api_event("/mcp", message, headers), _configured())

    assert found["result"]["statusCode"] == 200, found["result"]
    assert "result" in json.loads(found["result"]["body"])
    assert found["loaded"] == []


@pytest.mark.parametrize(
    ("function", "event"),
    [
        ("wait", "stepfunctions/wait.json"),
        ("settle", "stepfunctions/settle_timeout.json"),
        ("timer", "scheduler/expire.json"),
    ],
)
def test_the_execution_functions_never_read_the_operator_configuration(function: str, event: str) -> None:
    # The parameter does not exist: reading it would fail the event.
    environ = {"PARLEY_OPERATOR_CONFIG_PARAMETER": "/parley/test/nowhere"}

    found = first_event(function, json.loads((ROOT / "events" / event).read_text()), environ)

    assert "outcome" in found["result"]
    assert found["loaded"] == []


def _configured() -> dict[str, str]:
    return {"PARLEY_OPERATOR_CONFIG": json.dumps(OPERATOR)}
