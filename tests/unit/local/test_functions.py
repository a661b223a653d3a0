"""The project's functions in process: invocations, moto's Lambda routed to them, and the grants of the
stack enforced locally (``parley.infrastructure.functions``: ``MAY_*``)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import boto3
import pytest

from parley.clock import ManualClock
from parley.infrastructure.functions import MAY_END_WAITS, MAY_SCHEDULE, MAY_START_RUNS
from parley.local.functions import (
    AccessDenied,
    LambdaContext,
    LocalFunctions,
    current_function,
    function_name_of,
    require_grant,
    routed_lambda_invocations,
)
from parley.local.scheduler import LocalScheduler


def test_each_handler_is_built_once_on_first_use_and_gets_a_lambda_context() -> None:
    built: list[str] = []
    seen: list[tuple[Any, LambdaContext, str]] = []

    def factory() -> Any:
        built.append("wait")
        return lambda event, context: seen.append((event, context, current_function())) or {"ok": True}

    functions = LocalFunctions({"wait": factory})
    assert built == []

    assert functions.invoke("wait", {"n": 1}) == {"ok": True}
    functions.invoke("wait", {"n": 2})

    assert built == ["wait"]
    assert [(event, name) for event, _, name in seen] == [({"n": 1}, "wait"), ({"n": 2}, "wait")]
    context = seen[0][1]
    assert context.function_name == "parley-wait-local"
    assert context.invoked_function_arn.endswith(":function:parley-wait-local")
    assert context.aws_request_id != seen[1][1].aws_request_id
    assert current_function() == "api"


def test_the_stacks_grants_hold_locally() -> None:
    scheduler = LocalScheduler(ManualClock(), lambda work: None)

    def settle(event: Any, context: Any) -> None:
        require_grant(MAY_END_WAITS, "end a wait")

    def wait(event: Any, context: Any) -> None:
        scheduler.schedule("expire-r-1", scheduler.clock.now() + timedelta(minutes=1), {"work": "expire"})

    def timer(event: Any, context: Any) -> str:
        require_grant(MAY_END_WAITS, "end a wait")
        return "expired"

    functions = LocalFunctions({"settle": lambda: settle, "wait": lambda: wait, "timer": lambda: timer})

    with pytest.raises(AccessDenied, match="the settle function may not end a wait"):
        functions.invoke("settle", {})
    with pytest.raises(AccessDenied, match="the wait function may not create a schedule"):
        functions.invoke("wait", {})
    assert functions.invoke("timer", {}) == "expired"
    # The HTTP front is the api function: it may do all three.
    require_grant(MAY_START_RUNS, "start")
    require_grant(MAY_END_WAITS, "end")
    require_grant(MAY_SCHEDULE, "schedule")
    assert current_function() == "api"


def test_function_names_from_arns() -> None:
    assert function_name_of("arn:aws:lambda:us-east-1:123456789012:function:parley-wait-1") == "parley-wait-1"
    assert (
        function_name_of("arn:aws:lambda:us-east-1:123456789012:function:parley-wait-1:live")
        == "parley-wait-1"
    )
    assert function_name_of("parley-wait-1") == "parley-wait-1"


def _invoke(client: Any, name: str, payload: Any) -> tuple[str | None, Any]:
    reply = client.invoke(
        FunctionName=f"arn:aws:lambda:us-east-1:123456789012:function:{name}", Payload=json.dumps(payload)
    )
    return reply.get("FunctionError"), json.loads(reply["Payload"].read())


def test_motos_lambda_runs_the_routed_functions_and_echoes_the_rest() -> None:
    from moto.awslambda_simple.models import LambdaSimpleBackend

    from parley.local.executor import local_aws

    original = LambdaSimpleBackend.invoke

    def broken(event: Any) -> Any:
        raise KeyError("token")

    with local_aws():
        client = boto3.client(
            "lambda", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
        )
        with routed_lambda_invocations(
            {"parley-wait-x": lambda event: {"got": event}, "parley-settle-x": broken}
        ):
            routed = _invoke(client, "parley-wait-x", {"token": "t"})
            failed = _invoke(client, "parley-settle-x", {"run": {}})
            echoed = _invoke(client, "someone-else", {"hello": "world"})
            with (
                pytest.raises(ValueError, match="already routed"),
                routed_lambda_invocations({"parley-wait-x": dict}),
            ):
                pass
        assert LambdaSimpleBackend.invoke is original

    assert routed == (None, {"got": {"token": "t"}})
    assert failed[0] == "Unhandled"
    assert failed[1]["errorType"] == "KeyError"
    assert "token" in failed[1]["errorMessage"]
    assert echoed == (None, {"hello": "world"})
