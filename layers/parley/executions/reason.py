"""The entry of the ``reason`` function (``http-api.md``, "Reasoning runs"): the api function invokes it
with ``{"run": {"org", "playbook", "run_id"}}`` for each reasoning run it starts, and it does the run's
work (``parley.reasoning.running``). Idempotent: the work ends the run only while it is ``started``.

An agent run that waited is taken up again the same way (``{"run", "resume": true}``), invoked by
whoever wrote its request's ending (the answer, the expiry, the backstop). The answer is ``{"run",
"outcome"}``, with ``"outcome": "waiting"`` and ``timeout_seconds`` when the run asked again (its new
wait's execution started by the step itself), for the log.

Its own module, so that the wait, settle and timer functions never load the reasoning type.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from parley.ports.waiting import RunKey

if TYPE_CHECKING:
    from parley.ports.runtime import Runtime

FunctionHandler = Callable[[Mapping[str, Any], Any], dict[str, Any]]


def build_reason_handler(runtime: Runtime) -> FunctionHandler:
    from parley.reasoning.running import Reasoning
    from parley.runs.service import run_service

    runs = run_service(runtime)

    def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        run = RunKey.from_json(event["run"])
        reasoning = runs.kind("reasoning")
        assert isinstance(reasoning, Reasoning)
        outcome, timeout_seconds = reasoning.take_up(run, resume=event.get("resume") is True)
        result: dict[str, Any] = {"run": run.as_json(), "outcome": outcome}
        if timeout_seconds is not None:
            result["timeout_seconds"] = timeout_seconds
        return result

    return handler


def handle_reason(event: dict[str, Any], context: object) -> dict[str, Any]:
    """The Lambda entry of the ``reason`` function."""
    return _default()(event, context)


@functools.cache
def _default() -> FunctionHandler:
    from parley.aws.environment import runtime_from_environment

    return build_reason_handler(runtime_from_environment())
