"""A workflow run's events and listens on the table (``parley.workflow.event_store``,
``parley.workflow.listening``): sent once per id, kept within the bounds, taken by a listen once, a
listen delivered again answered the same, an emit recorded once and handed to the listens of its type."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from parley.clock import ManualClock, format_time
from parley.definitions.model import PlaybookRef
from parley.errors import Problem
from parley.runs.model import Run
from parley.runs.store import DynamoRunStore
from parley.workflow.listening import RunEvents, emitted_id

PLAYBOOK = PlaybookRef("acme", "campaigns")
RUN_A = "0f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c"
RUN_B = "1f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c"


class Engine:
    """The engine port's task answers, recorded."""

    def __init__(self) -> None:
        self.answers: list[tuple[str, str, Any]] = []

    def succeed(self, token: str, output: Any) -> None:
        self.answers.append(("succeed", token, output))

    def fail(self, token: str, error: str, cause: str) -> None:
        self.answers.append(("fail", token, json.loads(cause)))


@pytest.fixture
def world(dynamodb: tuple[Any, str], content: Any, manual_clock: ManualClock) -> SimpleNamespace:
    client, table = dynamodb
    store = DynamoRunStore(client, table, content)
    engine = Engine()
    runtime = SimpleNamespace(clock=manual_clock, workflows=engine)
    runs = SimpleNamespace(store=store, runtime=runtime, retrying=lambda work: work())
    for run_id, run_type in ((RUN_A, "workflow"), (RUN_B, "workflow")):
        run = Run(run_id, run_type, "brief-flow", 1, "started", format_time(manual_clock.now()), "alice", "d")
        store.record_run(PLAYBOOK, run, [], replacing=None)
    return SimpleNamespace(events=RunEvents(runs), engine=engine, store=store, clock=manual_clock)  # type: ignore[arg-type]


def send(world: SimpleNamespace, event_type: str, data: Any = None, **more: Any) -> dict[str, Any]:
    result: dict[str, Any] = world.events.send(
        PLAYBOOK,
        more.pop("run_id", RUN_A),
        event_type=event_type,
        sent_id=more.pop("sent_id", None),
        source=more.pop("source", None),
        subject=more.pop("subject", None),
        data=data,
        principal="alice",
    )
    return result


def listen(world: SimpleNamespace, to: dict[str, Any], **more: Any) -> str:
    payload = {
        "action": "listen",
        "token": more.get("token", "tok-1"),
        "run": {"org": "acme", "playbook": "campaigns", "run_id": more.get("run_id", RUN_A)},
        "task": more.get("task", "/do/0/wait"),
        "attempt": more.get("attempt", "1"),
        "to": to,
        "read": more.get("read", "data"),
    }
    outcome: str = world.events.listen(payload)
    return outcome


def history(world: SimpleNamespace, run_id: str = RUN_A) -> list[Any]:
    found = world.store.list_events(
        PLAYBOOK, run_id=run_id, event_type=None, since=None, descending=False, limit=500, after=None
    )
    return list(found.items)


ONE_A: Callable[[], dict[str, Any]] = lambda: {"one": {"with": {"type": "a"}}}  # noqa: E731


def test_an_event_sent_before_the_listen_is_kept_and_taken(world: SimpleNamespace) -> None:
    receipt = send(world, "a", {"n": 1})
    assert receipt["run_id"] == RUN_A and receipt["received_at"] == format_time(world.clock.now())

    assert listen(world, ONE_A()) == "answered"

    assert world.engine.answers == [("succeed", "tok-1", {"output": [{"n": 1}]})]
    received = history(world)[0]
    assert received.id == receipt["event_id"] and received.type == "event_received"
    assert received.data["source"] == "/callers/alice" and received.data["data"] == {"n": 1}
    assert world.events.store.kept(PLAYBOOK, RUN_A) == []


def test_a_listen_waits_and_the_event_that_completes_it_answers_it_once(world: SimpleNamespace) -> None:
    to = {"all": [{"with": {"type": "a"}}, {"with": {"type": "b"}}]}
    assert listen(world, to, read="envelope") == "waiting"
    send(world, "b", 2, sent_id="e-b", subject="s")
    assert world.engine.answers == []
    send(world, "a", 1)
    send(world, "a", 3)

    [(kind, token, output)] = world.engine.answers
    assert (kind, token) == ("succeed", "tok-1")
    assert [(e["type"], e["data"], e["subject"]) for e in output["output"]] == [("a", 1, None), ("b", 2, "s")]
    assert output["output"][1]["id"] == "e-b"
    # The third stays kept; the listen delivered again is answered the same, taking nothing more.
    assert [k.envelope["data"] for k in world.events.store.kept(PLAYBOOK, RUN_A)] == [3]
    assert listen(world, to, read="envelope") == "answered"
    assert world.engine.answers[1] == world.engine.answers[0]
    assert len(world.events.store.kept(PLAYBOOK, RUN_A)) == 1


def test_the_same_id_is_taken_once(world: SimpleNamespace) -> None:
    first = send(world, "a", 1, sent_id="same")
    again = send(world, "a", 1, sent_id="same")
    assert again == first
    assert len(world.events.store.kept(PLAYBOOK, RUN_A)) == 1
    assert [e.type for e in history(world)] == ["event_received"]


def test_the_oldest_kept_events_are_dropped_past_64_and_said_so(world: SimpleNamespace) -> None:
    for number in range(66):
        send(world, "a", number)
    kept = world.events.store.kept(PLAYBOOK, RUN_A)
    assert [k.envelope["data"] for k in kept] == list(range(2, 66))
    dropped = [e for e in history(world) if e.type == "event_dropped"]
    assert sum(len(e.data["event_ids"]) for e in dropped) == 2


def test_a_run_takes_1024_events_over_its_life(world: SimpleNamespace) -> None:
    for number in range(5):
        send(world, "a", number)
    receipt_store = world.events.store
    original = receipt_store.receive

    def limited(*args: Any, **kwargs: Any) -> Any:
        return original(*args, **{**kwargs, "limit": 5})

    receipt_store.receive = limited
    with pytest.raises(Problem) as refused:
        send(world, "a", 5)
    assert refused.value.reason == "conflict" and "1,024" in refused.value.detail


def test_send_checks_the_run_and_the_event(world: SimpleNamespace) -> None:
    with pytest.raises(Problem) as missing:
        send(world, "a", run_id="2f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c")
    assert missing.value.reason == "not_found"
    with pytest.raises(Problem) as empty:
        send(world, "")
    assert empty.value.reason == "invalid_input"
    with pytest.raises(Problem) as big:
        send(world, "a", "x" * (256 * 1024))
    assert big.value.reason == "invalid_input" and "256 KiB" in big.value.errors[0].detail


def test_an_emit_is_recorded_once_and_reaches_the_listens_of_its_type(world: SimpleNamespace) -> None:
    assert (
        listen(world, {"any": [{"with": {"type": "brief.ready"}}]}, run_id=RUN_B, token="tok-b") == "waiting"
    )
    payload = {
        "action": "emit",
        "run": {"org": "acme", "playbook": "campaigns", "run_id": RUN_A},
        "task": "/do/1/tell",
        "attempt": "1",
        "event": {"type": "brief.ready", "source": "/workflows/brief-flow", "data": {"brief": 7}},
    }
    assert world.events.emit(payload) == "published"
    assert world.events.emit(payload) == "unchanged"

    assert world.engine.answers == [("succeed", "tok-b", {"output": [{"brief": 7}]})]
    [published] = [e for e in history(world, RUN_A) if e.type == "event_published"]
    assert published.data["event_id"] == emitted_id(RUN_A, "/do/1/tell", "1")
    [received] = history(world, RUN_B)
    assert received.data["emitted_by"] == RUN_A and received.data["event_id"] == published.data["event_id"]


def test_a_cancelled_run_forgets_its_listens(world: SimpleNamespace) -> None:
    listen(world, {"one": {"with": {"type": "a"}}})
    assert world.events.forget(PLAYBOOK, RUN_A) == 1
    send(world, "a")
    assert world.engine.answers == []
    assert world.events.store.runs_listening_for(PLAYBOOK, "a") == []


def test_a_listen_of_an_ended_run_is_refused(world: SimpleNamespace) -> None:
    listen(world, ONE_A(), run_id="2f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c", token="tok-x")
    [(kind, token, cause)] = world.engine.answers
    assert (kind, token, cause["status"]) == ("fail", "tok-x", 500)


def test_a_big_event_is_kept_in_the_content_store(world: SimpleNamespace) -> None:
    send(world, "a", "x" * (100 * 1024))
    assert listen(world, ONE_A()) == "answered"
    assert world.engine.answers[0][2]["output"] == ["x" * (100 * 1024)]


def test_a_listen_whose_timeout_passed_takes_no_event(world: SimpleNamespace) -> None:
    listen(world, ONE_A())
    lapsed = {"action": "deadline", "run": {"org": "acme", "playbook": "campaigns", "run_id": RUN_A}}
    assert world.events.lapsed({**lapsed, "task": "/do/0/wait", "attempt": "1"}) == "forgotten"
    assert world.events.lapsed({**lapsed, "task": "/do/0/wait", "attempt": "1"}) == "unchanged"
    send(world, "a", 1)
    assert world.engine.answers == []
    assert listen(world, ONE_A(), task="/do/1/again", token="tok-2") == "answered"
    assert world.engine.answers == [("succeed", "tok-2", {"output": [1]})]


def test_the_same_task_waiting_again_forgets_its_earlier_attempt(world: SimpleNamespace) -> None:
    listen(world, ONE_A(), attempt="1", token="tok-1")
    listen(world, ONE_A(), attempt="2", token="tok-2")
    assert [one.token for one in world.events.store.waiting(PLAYBOOK, RUN_A)] == ["tok-2"]
    send(world, "a", 1)
    assert world.engine.answers == [("succeed", "tok-2", {"output": [1]})]


def test_the_runs_end_forgets_the_listens_still_waiting_and_the_events_kept(world: SimpleNamespace) -> None:
    listen(world, ONE_A())
    send(world, "b", 1)
    world.events.ended({"action": "end", "run": {"org": "acme", "playbook": "campaigns", "run_id": RUN_A}})
    assert world.events.store.waiting(PLAYBOOK, RUN_A) == []
    assert world.events.store.kept(PLAYBOOK, RUN_A) == []


def test_a_listen_of_no_filter_or_too_many_is_refused(world: SimpleNamespace) -> None:
    assert listen(world, {"all": []}, token="tok-0") == "refused"
    many = {"all": [{"with": {"type": f"t{number}"}} for number in range(91)]}
    assert listen(world, many, task="/do/1/x", token="tok-9") == "refused"
    assert [(kind, token) for kind, token, _ in world.engine.answers] == [
        ("fail", "tok-0"),
        ("fail", "tok-9"),
    ]


def test_events_sent_at_once_answer_a_listen_once(world: SimpleNamespace) -> None:
    import threading

    listen(world, {"any": [{"with": {"type": "a"}}]})
    barrier = threading.Barrier(6)

    def one(number: int) -> None:
        barrier.wait()
        send(world, "a", number)

    threads = [threading.Thread(target=one, args=(number,)) for number in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    [(kind, token, output)] = world.engine.answers
    assert (kind, token) == ("succeed", "tok-1")
    kept = {k.envelope["data"] for k in world.events.store.kept(PLAYBOOK, RUN_A)}
    assert kept | set(output["output"]) == set(range(6)) and len(kept) == 5


def test_a_listen_run_again_under_a_new_token_is_answered_on_it(world: SimpleNamespace) -> None:
    listen(world, ONE_A(), token="tok-old")
    listen(world, ONE_A(), token="tok-new")
    send(world, "a", 1)
    assert world.engine.answers == [("succeed", "tok-new", {"output": [1]})]


def test_the_deadline_of_a_task_around_a_listen_forgets_it(world: SimpleNamespace) -> None:
    listen(world, ONE_A(), task="/do/0/wait/do/1/decision", attempt="3")
    listen(world, ONE_A(), task="/do/1/other", token="tok-2")
    lapsed = {"run": {"org": "acme", "playbook": "campaigns", "run_id": RUN_A}, "task": "/do/0/wait"}
    assert world.events.lapsed({**lapsed, "attempt": "1"}) == "forgotten"
    assert [one.task for one in world.events.store.waiting(PLAYBOOK, RUN_A)] == ["/do/1/other"]
