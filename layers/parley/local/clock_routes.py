"""The manual clock's routes (``http-api.md``, "Local server").

- ``GET /_local/clock`` (and ``HEAD``, as every ``GET`` of the API) answers ``{now}``.
- ``POST /_local/clock/advance {"seconds": N}`` (N ≥ 0; 0 runs what is already due) moves the clock
  on and answers ``{now}`` once all the work that fell due has run.

They exist only under ``--clock manual``; under ``--clock real`` the request goes to the API like any
other and answers ``404``.

Moving the clock can expire every open request, so a page the developer visits must not be able to do
it (issue 27, "A local server no other website can drive"): the advance takes a writer's token
(``Authorization: Bearer``, of a principal with the ``write`` role on some playbook: ``401``/``403``
otherwise) and a JSON body only (``415`` otherwise, as the API), neither of which a cross-site form or
simple request can send without the browser asking the server first. Reading the clock needs no token.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from parley.api.problems import json_result, problem_result
from parley.api.requests import json_object_body
from parley.auth import authenticate
from parley.clock import ManualClock, format_time
from parley.errors import Problem
from parley.ports.runtime import DueWork

if TYPE_CHECKING:
    from parley.config import OperatorConfig

CLOCK_PATH: Final = "/_local/clock"
ADVANCE_PATH: Final = "/_local/clock/advance"
#: Further than this is surely a mistake (and would overflow datetime soon after).
MAX_ADVANCE_SECONDS: Final = 100 * 366 * 24 * 3600
#: Work that keeps scheduling work at the same moment would otherwise never let the call return.
MAX_STEPS: Final = 100_000


def is_clock_path(path: str) -> bool:
    return path.rstrip("/") in (CLOCK_PATH, ADVANCE_PATH)


def answer_clock_route(
    event: dict[str, Any], clock: ManualClock, work: Sequence[DueWork], operator: OperatorConfig
) -> dict[str, Any]:
    """The REST proxy result for a request to one of the clock routes (``operator``: whose tokens may
    move the clock)."""
    path = str(event.get("path", "")).rstrip("/")
    method = str(event.get("httpMethod", "")).upper()
    allowed = ("GET", "HEAD") if path == CLOCK_PATH else ("POST",)  # a GET also answers HEAD, as the API's
    try:
        if method not in allowed:
            raise Problem(
                "method_not_allowed",
                f"{path} takes {' or '.join(allowed)}, not {method}.",
                headers={"Allow": ", ".join(allowed)},
            )
        if path == CLOCK_PATH:
            return json_result({"now": format_time(clock.now())})
        request = APIGatewayProxyEvent(event)
        _writer(request.headers.get("authorization"), operator)
        seconds = _seconds(json_object_body(request))
        return json_result({"now": format_time(advance(clock, seconds, work))})
    except Problem as problem:
        return problem_result(problem)


def advance(clock: ManualClock, seconds: float, work: Sequence[DueWork]) -> datetime:
    """Move ``clock`` on by ``seconds``, stopping at each due time on the way to run what fell due
    (so that work scheduled by work runs at its own time), and finally at the target."""
    target = clock.now() + timedelta(seconds=seconds)
    for _ in range(MAX_STEPS):
        due = [moment for hook in work if (moment := hook.next_due()) is not None and moment <= target]
        if not due:
            break
        step = min(due)
        if step > clock.now():
            clock.advance((step - clock.now()).total_seconds())
        for hook in work:
            hook.run_due(clock.now())
    else:
        raise RuntimeError(f"due work kept falling due after {MAX_STEPS} steps")
    if target > clock.now():
        clock.advance((target - clock.now()).total_seconds())
    return clock.now()


def _writer(authorization: str | None, operator: OperatorConfig) -> None:
    """Raise unless the header carries the token of a principal with the write role on some playbook."""
    principal = authenticate(authorization, operator)
    if not any(grant.role == "write" for grant in principal.grants):
        raise Problem(
            "forbidden",
            f"Moving the clock takes a token with the write role on some playbook; "
            f"{principal.id!r} has none.",
        )


def _seconds(body: dict[str, Any]) -> float:
    value = body.get("seconds")
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
        or value > MAX_ADVANCE_SECONDS
    ):
        raise Problem(
            "bad_request",
            'Send {"seconds": N} with N a number of seconds, at least 0 (0 runs what is already due).',
        )
    return float(value)
