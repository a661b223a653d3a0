"""The entries of the functions a run's execution and the scheduler call (``wait``, ``settle``,
``timer``): each adapts its event to one call of :class:`~parley.runs.service.RunService`.

- ``wait`` (the ``.waitForTaskToken`` task): ``{"token", "run": {"org", "playbook", "run_id"}}`` →
  ``park_request``: the token is kept on the open request, or the wait ends at once when the request
  has already ended.
- ``settle`` (the backstop, when the wait failed or timed out): ``{"run", "error": {"Error", "Cause"}}``
  → ``settle_run``: what nothing else ended, ended from what the store says.
- ``timer`` (the scheduler's target, invoked with one piece of work, or by the timer queue with a
  batch of SQS records whose bodies are work; failed records are reported for SQS to deliver again):
  ``{"work": "expire", "run"}`` → ``expire_request``; any other work goes to the type that scheduled
  it (``parley.runs.kinds.TIMED_WORK``): the interaction type's attempts (``deliver``, ``lost``) and
  reads of conversations (``read``).

``build_*_handler(runtime)`` wraps any runtime (the local runtime dispatches moto's Lambda invocations
to them); ``handle_*`` are the Lambda entries, building the runtime from the environment on their first
call, never at import. Every handler is idempotent: Step Functions, the scheduler and Lambda deliver at
least once. A failure raises, so the caller's retry policy tries again.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from parley.ports.waiting import RunKey
from parley.runs.kinds import work_kind

if TYPE_CHECKING:
    from parley.ports.runtime import Runtime
    from parley.runs.service import RunService

FunctionHandler = Callable[[Mapping[str, Any], Any], dict[str, Any]]
LOG = logging.getLogger("parley.timer")


def build_wait_handler(runtime: Runtime) -> FunctionHandler:
    service = _service(runtime)

    def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        run = RunKey.from_json(event["run"])
        token = event["token"]
        if not isinstance(token, str) or not token:
            raise ValueError("the wait task's event carries its task token as 'token'")
        return {"run": run.as_json(), "outcome": service.park_request(run, token)}

    return handler


def build_settle_handler(runtime: Runtime) -> FunctionHandler:
    service = _service(runtime)

    def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        run = RunKey.from_json(event["run"])
        error = event.get("error")
        name = str(error.get("Error")) if isinstance(error, Mapping) and error.get("Error") else None
        return {"run": run.as_json(), "outcome": service.settle_run(run, name)}

    return handler


def build_timer_handler(runtime: Runtime) -> FunctionHandler:
    service = _service(runtime)

    def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        records = event.get("Records")
        if isinstance(records, list):  # the timer queue's batch (SQS): report the messages that failed
            failures = []
            for record in records:
                try:
                    handle_work(json.loads(record["body"]))
                except Exception:
                    LOG.exception("timed work from the queue failed")
                    failures.append({"itemIdentifier": record.get("messageId", "")})
            return {"batchItemFailures": failures}
        return handle_work(event)

    def handle_work(event: Mapping[str, Any]) -> dict[str, Any]:
        work = event.get("work")
        if work == "expire":
            run = RunKey.from_json(event["run"])
            return {"run": run.as_json(), "work": work, "outcome": service.expire_request(run)}
        return service.kind(work_kind(str(work))).timed(event)

    return handler


def handle_wait(event: dict[str, Any], context: object) -> dict[str, Any]:
    """The Lambda entry of the ``wait`` function."""
    return _default(build_wait_handler)(event, context)


def handle_settle(event: dict[str, Any], context: object) -> dict[str, Any]:
    """The Lambda entry of the ``settle`` function."""
    return _default(build_settle_handler)(event, context)


def handle_timer(event: dict[str, Any], context: object) -> dict[str, Any]:
    """The Lambda entry of the ``timer`` function."""
    return _default(build_timer_handler)(event, context)


def _service(runtime: Runtime) -> RunService:
    from parley.runs.service import run_service

    return run_service(runtime)


@functools.cache
def _default(build: Callable[[Runtime], FunctionHandler]) -> FunctionHandler:
    return build(_default_runtime())


@functools.cache
def _default_runtime() -> Runtime:
    from parley.aws.environment import runtime_from_environment

    return runtime_from_environment()
