"""Fixtures of the run tests (the lifecycle's and the interaction type's): the service over moto's
DynamoDB (small tables: moto's transactions copy the whole table), the real document checker, and
in-memory waits and scheduler.

- ``waits``: a fake :class:`~parley.ports.waiting.Waits`. ``start`` parks the run at once (its token is
  ``token-{run_id}``) unless ``park_on_start`` is off; ``succeed``/``fail`` settle the run at once, as
  the execution's settle step would, and remember how each token ended.
- ``scheduler``: a fake :class:`~parley.ports.waiting.Scheduler`; ``fire_due(now)`` runs the timer on
  what fell due.
- ``save(name, source)``: saves an interaction function; ``run(name, input, run_id)`` runs one as
  ``dev``; ``answer(run_id, answer)``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest

from parley.clock import ManualClock
from parley.config import parse_operator_config
from parley.definitions.model import PlaybookRef
from parley.definitions.store import DynamoDefinitionStore
from parley.executions.entry import build_settle_handler, build_timer_handler, build_wait_handler
from parley.ports.runtime import Runtime
from parley.ports.waiting import RunKey
from parley.runs.kinds import check_source
from parley.runs.model import AnswerFact, Run
from parley.runs.service import RunService, run_service

OPERATOR = """
principals:
  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
  - { id: viewer, token: viewer-token, grants: [{ org: acme, playbook: campaigns, role: read }] }
  - { id: outsider, token: outsider-token, grants: [{ org: acme, playbook: elsewhere, role: write }] }
limits:
  interaction_open_requests: 5
"""
PLAYBOOK = PlaybookRef("acme", "campaigns")
APPROVE = "approve-campaign-brief"
NOTIFY = "brief-sent"
PARTY = "party-check"

NOTIFY_SOURCE = """---
to: '{{ input.owner }}'
expires: PT1H
---
The brief for {{ input.campaign }} went out on {{ today }} at {{ now }}.
"""

PARTY_SOURCE = """---
to: '{{ input.to }}'
from: '{% if input.from == nil %}{{ input.to }}{% else %}{{ input.from }}{% endif %}'
expires: PT10M
output:
  schema:
    type: object
    properties:
      ok: { type: boolean }
---
{{ input.message | default: "Is it ok?" }}
"""

DELIVER_SOURCE = """---
to: '{{ input.owner }}'
expires: P2D
deliver:
  server: chat
  tool: post_message
  with:
    channel: '{{ to }}'
    text: '{{ message }}'
---
Hello
"""

CALL_SOURCE = """---
call:
  server: chat
  tool: thread_replies
  with: { channel: '{{ input.channel }}' }
  read: /messages
output:
  schema: { type: array }
---
"""

BRIEF_INPUT = {"owner": "maria@example.com", "review": "Clear goals; the budget needs a source."}


@dataclass
class FakeWaits:
    """Executions that only wait, as the run's state machine does: ``start`` parks at once (unless
    ``park_on_start`` is false), ``succeed`` ends the wait and nothing else (the ending is written
    before it), :meth:`time_out` is the backstop (the settle step, synchronously)."""

    service: RunService | None = None
    park_on_start: bool = True
    started: dict[str, int] = field(default_factory=dict)
    numbers: list[tuple[str, int]] = field(default_factory=list)
    starts: int = 0
    ended: dict[str, tuple[str, Any]] = field(default_factory=dict)
    #: Every SendTaskSuccess, in order (one to a token that already ended included).
    calls: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, run: RunKey, *, timeout_seconds: int, number: int = 1) -> None:
        with self.lock:
            self.starts += 1
            self.started[run.run_id] = timeout_seconds
            self.numbers.append((run.run_id, number))
        if self.park_on_start:
            self.park(run)

    def park(self, run: RunKey) -> str:
        assert self.service is not None
        return self.service.park_request(run, f"token-{run.run_id}")

    def succeed(self, token: str, output: Mapping[str, Any]) -> None:
        with self.lock:
            self.calls.append(token)
        self._end(token, ("succeeded", dict(output)))

    def time_out(self, run_id: str) -> str:
        """The wait ran past its own timeout: the settle step, as the Catch runs it."""
        assert self.service is not None
        self._end(f"token-{run_id}", ("timed out", "States.Timeout"))
        return self.service.settle_run(_key_of(f"token-{run_id}"), "States.Timeout")

    def _end(self, token: str, outcome: tuple[str, Any]) -> bool:
        with self.lock:
            if token in self.ended:
                return False  # a token that already ended: not an error, nothing happens
            self.ended[token] = outcome
            return True


def _key_of(token: str) -> RunKey:
    return RunKey(PLAYBOOK.org, PLAYBOOK.playbook, token.removeprefix("token-"))


@dataclass
class FakeScheduler:
    schedules: dict[str, tuple[datetime, dict[str, Any]]] = field(default_factory=dict)
    cancelled: list[str] = field(default_factory=list)
    handler: Callable[[Mapping[str, Any], Any], dict[str, Any]] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def schedule(self, name: str, at: datetime, work: Mapping[str, Any]) -> None:
        with self.lock:
            self.schedules.setdefault(name, (at, dict(work)))

    def cancel(self, name: str) -> None:
        with self.lock:
            self.cancelled.append(name)
            self.schedules.pop(name, None)

    def fire_due(self, now: datetime) -> list[dict[str, Any]]:
        """Call the timer handler with each schedule due at ``now`` (deleted after it fires)."""
        assert self.handler is not None
        with self.lock:
            due = sorted((at, name) for name, (at, _) in self.schedules.items() if at <= now)
            works = [self.schedules.pop(name)[1] for _, name in due]
        return [self.handler(work, None) for work in works]


@pytest.fixture
def waits() -> FakeWaits:
    return FakeWaits()


@pytest.fixture
def scheduler() -> FakeScheduler:
    return FakeScheduler()


@pytest.fixture
def runtime(
    dynamodb: tuple[Any, str], manual_clock: ManualClock, waits: FakeWaits, scheduler: FakeScheduler
) -> Runtime:
    client, table = dynamodb
    built = Runtime(
        definitions=DynamoDefinitionStore(client, table),
        clock=manual_clock,
        operator=parse_operator_config(OPERATOR, "test", environ={}),
        check_document=check_source,
        waits=waits,
        scheduler=scheduler,
    )
    return built


@pytest.fixture
def service(runtime: Runtime, waits: FakeWaits, scheduler: FakeScheduler) -> Iterator[RunService]:
    built = run_service(runtime)
    waits.service = built
    scheduler.handler = build_timer_handler(runtime)
    yield built


@pytest.fixture
def handlers(runtime: Runtime) -> dict[str, Callable[[Mapping[str, Any], Any], dict[str, Any]]]:
    return {
        "wait": build_wait_handler(runtime),
        "settle": build_settle_handler(runtime),
        "timer": build_timer_handler(runtime),
    }


@pytest.fixture
def save(runtime: Runtime, example_source: str) -> Callable[[str, str | None], None]:
    definitions = runtime.definition_service()

    def saving(name: str, source: str | None = None) -> None:
        definitions.create_definition(PLAYBOOK, "interaction", name, source or example_source)

    return saving


@pytest.fixture
def functions(save: Callable[[str, str | None], None]) -> None:
    """Saves the functions the tests run: the page's example (``approve-campaign-brief``), a
    notification (``brief-sent``), a question whose parties come from the input (``party-check``), and
    one this runtime refuses to run (``deliver-post``) and one that asks a system (``call-replies``)."""
    save(APPROVE, None)
    save(NOTIFY, NOTIFY_SOURCE)
    save(PARTY, PARTY_SOURCE)
    save("deliver-post", DELIVER_SOURCE)
    save("call-replies", CALL_SOURCE)


@pytest.fixture
def run(service: RunService, functions: None) -> Callable[..., Run]:
    def running(name: str = APPROVE, input_value: Any = None, run_id: str | None = None, **kw: Any) -> Run:
        value = BRIEF_INPUT if input_value is None else input_value
        return service.run_definition(
            PLAYBOOK, "interaction", name, input_value=value, run_id=run_id, started_by=kw.get("by", "dev")
        )

    return running


@pytest.fixture
def answer(service: RunService) -> Callable[..., AnswerFact]:
    def answering(run_id: str, value: Any, claimed_for: str | None = None, by: str = "dev") -> AnswerFact:
        return service.answer_interaction(PLAYBOOK, run_id, value, claimed_for=claimed_for, answered_by=by)

    return answering
