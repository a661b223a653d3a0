"""Runs end to end over HTTP, against a real ``parley serve --clock manual``: moto's Step Functions
executor holds each waiting run on its task token, the local scheduler fires expiries when
``POST /_local/clock/advance`` moves the clock (interaction-format.md, "How a run ends", "Answering a
request", "Listing requests", "The run's history"; http-api.md, "Runs", "Events", "Local server").

Each test works in a playbook of its own (the open-requests bound counts per playbook), so the tests
share one server and its clock without counting each other's requests.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from tool_serving import PlaybookClient, serving_manually, writer_and_viewer

pytestmark = pytest.mark.http

PLAYBOOKS = [f"p{n:02d}" for n in range(1, 41)]
OPERATOR = writer_and_viewer(PLAYBOOKS, "limits:", "  interaction_open_requests: 5")
READY_WITHIN = 20.0
APPROVE = "approve-campaign-brief"
BRIEF = {"owner": "maria@example.com", "review": "Clear goals; the budget needs a source."}

NOTIFY_SOURCE = """---
to: '{{ input.owner }}'
expires: PT1H
---
The brief for {{ input.campaign }} went out on {{ today }}.
"""
ASK_SOURCE = """---
to: '{{ input.to }}'
expires: PT10M
output:
  schema:
    type: object
    required: [ok]
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
  with: { channel: '{{ to }}', text: '{{ message }}' }
---
Hello
"""


@dataclass
class Server:
    url: str
    output: Path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One ``parley serve --clock manual`` for the module (its own: the runs need their own grants)."""
    tmp = tmp_path_factory.mktemp("serve-runs")
    config = tmp / "operator.yaml"
    config.write_text(OPERATOR, encoding="utf-8")
    output = tmp / "serve.log"
    with serving_manually(config, output, READY_WITHIN) as url:
        yield Server(url, output)


class Playbook(PlaybookClient):
    """A client of one playbook of the server, with the interaction runs' calls."""

    def save(self, name: str, source: str) -> None:
        created = self.post("/definitions/interaction", {"name": name, "source": source})
        assert created.status_code == 201, created.text

    def run(self, name: str, input_value: Any = None, run_id: str | None = None) -> httpx.Response:
        body: dict[str, Any] = {}
        if input_value is not None:
            body["input"] = input_value
        if run_id is not None:
            body["run_id"] = run_id
        return self.post(f"/definitions/interaction/{name}/run", body)

    def answer(self, run_id: str, answer: Any, claimed_for: str | None = None) -> httpx.Response:
        body: dict[str, Any] = {"answer": answer}
        if claimed_for is not None:
            body["claimed_for"] = claimed_for
        return self.post(f"/runs/{run_id}/answer", body)

    def settled(self, run_id: str, within: float = 30.0) -> dict[str, Any]:
        """The run once it has left ``started`` (the spec allows "within about a second")."""
        deadline = time.monotonic() + within
        while True:
            run: dict[str, Any] = self.get(f"/runs/{run_id}").json()
            if run["status"] != "started" or time.monotonic() > deadline:
                return run
            time.sleep(0.05)


_next_playbook = iter(PLAYBOOKS)


@pytest.fixture
def playbook(server: Server, example_source: str) -> Iterator[Playbook]:
    """A fresh playbook with the page's example and the test functions saved."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        chosen = Playbook(http, f"/v1/orgs/acme/playbooks/{next(_next_playbook)}")
        chosen.save(APPROVE, example_source)
        chosen.save("brief-sent", NOTIFY_SOURCE)
        chosen.save("ask-ok", ASK_SOURCE)
        chosen.save("deliver-post", DELIVER_SOURCE)
        yield chosen


def problem(reply: httpx.Response, status: int, reason: str, kind: str | None = None) -> dict[str, Any]:
    assert reply.status_code == status, reply.text
    assert reply.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = reply.json()
    assert (body["reason"], body.get("kind")) == (reason, kind)
    return body


def at_once(count: int, work: Callable[[int], httpx.Response]) -> list[httpx.Response]:
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def one(i: int) -> None:
        barrier.wait()
        results[i] = work(i)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


# --- running ---------------------------------------------------------------------------------------------


def test_a_question_waits_in_the_inbox_and_its_answer_is_the_output(playbook: Playbook) -> None:
    started = playbook.run(APPROVE, BRIEF)
    assert started.status_code == 200, started.text
    run = started.json()
    run_id = run["run_id"]
    assert run["status"] == "started" and "output" not in run and "finished_at" not in run

    inbox = playbook.get("/interactions").json()
    [listed] = inbox["interactions"]
    assert inbox["next_cursor"] is None
    assert listed["run_id"] == run_id
    assert {k: listed[k] for k in ("type", "function", "version", "to", "delivery", "takes_answer")} == {
        "type": "interaction", "function": APPROVE, "version": 1, "to": "maria@example.com",
        "delivery": None, "takes_answer": True,
    }  # fmt: skip
    assert (listed["attempts"], listed["standing"], listed["conversation"], listed["answerer"]) == (
        0, "in_inbox", None, None,
    )  # fmt: skip
    assert listed["reply_refusals"] == 0
    assert "Clear goals; the budget needs a source." in listed["message"]
    assert listed["answer_schema"]["properties"]["verdict"]["enum"] == ["approve", "revise"]
    assert listed["requested_at"] == run["started_at"]

    answered = playbook.answer(
        run_id, {"verdict": "approve", "note": "Ready to launch."}, "the campaign team"
    )
    assert answered.status_code == 200, answered.text
    fact = answered.json()
    assert fact["answer"] == {"verdict": "approve", "note": "Ready to launch."}
    assert (fact["claimed_for"], fact["answered_by"]) == ("the campaign team", "dev")

    done = playbook.settled(run_id)
    assert (done["status"], done["output"]) == ("succeeded", fact["answer"])
    assert "record" not in done
    assert playbook.get("/interactions").json()["interactions"] == []
    history = playbook.get(f"/runs/{run_id}/history").json()["events"]
    assert [e["type"] for e in history] == ["interaction_requested", "request_answered", "run_succeeded"]
    assert history[1]["id"] == fact["answer_id"]
    event = playbook.get(f"/events/{fact['answer_id']}").json()
    assert event["data"]["answer"] == fact["answer"] and event["run_id"] == run_id


def test_a_notification_succeeds_at_once_and_never_waits_in_the_inbox(playbook: Playbook) -> None:
    reply = playbook.run("brief-sent", {"owner": "maria", "campaign": "Spring"})

    assert reply.status_code == 200, reply.text
    assert (reply.json()["status"], reply.json()["output"]) == ("succeeded", {})
    assert playbook.get("/interactions").json()["interactions"] == []
    problem(playbook.answer(reply.json()["run_id"], {}), 409, "conflict")


def test_rejections_are_answered_with_their_problem_and_recorded_on_the_run(playbook: Playbook) -> None:
    invalid_id, party_id, message_id, deliver_id = (str(uuid.uuid4()) for _ in range(4))

    invalid = problem(playbook.run(APPROVE, {"owner": 3}, invalid_id), 422, "invalid_input")
    missing = problem(playbook.run("brief-sent", {"owner": "maria"}), 422, "invalid_input")
    party = problem(playbook.run("ask-ok", {"to": "lee\u0007"}, party_id), 409, "conflict", "unworkable")
    message = problem(
        playbook.run("ask-ok", {"to": "lee", "message": "m" * 9000}, message_id),
        409,
        "conflict",
        "unworkable",
    )
    deliver = problem(
        playbook.run("deliver-post", {"owner": "maria"}, deliver_id), 503, "unavailable", "tool_not_offered"
    )
    bad_id = problem(playbook.run(APPROVE, BRIEF, "run-1"), 422, "invalid_input")

    assert [e["pointer"] for e in invalid["errors"]] == ["/input", "/input/owner"]
    assert [e["pointer"] for e in missing["errors"]] == ["/input/campaign"]
    assert "U+0007" in party["detail"] and "9,001 bytes" in message["detail"]
    assert "search" in deliver["detail"] and "Nothing was sent" in deliver["detail"]
    assert [e["pointer"] for e in bad_id["errors"]] == ["/run_id"]
    for run_id, shown in ((invalid_id, invalid), (party_id, party), (deliver_id, deliver)):
        recorded = playbook.get(f"/runs/{run_id}").json()
        assert recorded["status"] == "rejected"
        assert recorded["rejection"]["reason"] == shown["reason"]
        assert recorded["rejection"]["detail"] == shown["detail"]
    problem(playbook.run("no-such-function", {}), 404, "not_found")


def test_retrying_under_a_run_id(playbook: Playbook) -> None:
    run_id = str(uuid.uuid4())
    first = playbook.run("ask-ok", {"to": "lee"}, run_id)

    again = playbook.run("ask-ok", {"to": "lee"}, run_id)
    other_input = playbook.run("ask-ok", {"to": "kim"}, run_id)
    other_function = playbook.run(APPROVE, {"to": "lee"}, run_id)

    assert (again.status_code, again.json()) == (200, first.json())
    problem(other_input, 409, "conflict")
    problem(other_function, 409, "conflict")
    assert len(playbook.get("/interactions").json()["interactions"]) == 1
    # a run that ended unanswered is 410 under its id
    playbook.advance(10 * 60)
    gone = problem(playbook.run("ask-ok", {"to": "lee"}, run_id), 410, "unanswered", "expired")
    assert "expired" in gone["detail"]


def test_the_same_run_id_in_two_playbooks_makes_two_runs(server: Server, example_source: str) -> None:
    """Run ids are the caller's: execution and schedule names must still tell playbooks apart."""
    run_id = str(uuid.uuid4())
    with httpx.Client(base_url=server.url, timeout=30) as http:
        first, second = (Playbook(http, f"/v1/orgs/acme/playbooks/{next(_next_playbook)}") for _ in range(2))
        for each in (first, second):
            each.save("ask-ok", ASK_SOURCE)
            assert each.run("ask-ok", {"to": "lee"}, run_id).status_code == 200
        assert first.answer(run_id, {"ok": True}).status_code == 200, "the first playbook's run waits"
        assert first.settled(run_id)["status"] == "succeeded"
        assert second.get(f"/runs/{run_id}").json()["status"] == "started"
        first.advance(10 * 60)
        expired = second.settled(run_id)
        assert (expired["status"], expired["rejection"]["kind"]) == ("rejected", "expired")


# --- answering -------------------------------------------------------------------------------------------


def test_the_rules_of_an_answer(playbook: Playbook) -> None:
    run_id = playbook.run("ask-ok", {"to": "lee"}).json()["run_id"]

    wrong = problem(playbook.answer(run_id, {"ok": "yes"}), 422, "invalid_input")
    large = problem(playbook.answer(run_id, {"ok": True, "pad": "x" * 70_000}), 422, "invalid_input")
    claim = problem(playbook.answer(run_id, {"ok": True}, "c" * 257), 422, "invalid_input")
    still_open = playbook.get("/interactions").json()["interactions"]
    fact = playbook.answer(run_id, {"ok": True}, "c" * 256)
    same = playbook.answer(run_id, {"ok": True})
    different = playbook.answer(run_id, {"ok": False})

    assert [e["pointer"] for e in wrong["errors"]] == ["/answer/ok"]
    assert [e["pointer"] for e in large["errors"]] == ["/answer"]
    assert [e["pointer"] for e in claim["errors"]] == ["/claimed_for"]
    assert [r["run_id"] for r in still_open] == [run_id]
    assert fact.status_code == 200 and fact.json()["claimed_for"] == "c" * 256
    assert (same.status_code, same.json()) == (200, fact.json())
    problem(different, 409, "conflict")
    problem(playbook.answer(str(uuid.uuid4()), {"ok": True}), 404, "not_found")


def test_many_different_answers_at_once_one_is_taken(playbook: Playbook) -> None:
    run_id = playbook.run(APPROVE, BRIEF).json()["run_id"]

    replies = at_once(10, lambda i: playbook.answer(run_id, {"verdict": "revise", "note": f"note {i}"}))

    statuses = sorted(r.status_code for r in replies)
    assert statuses == [200] + [409] * 9, [r.text for r in replies]
    taken = next(r.json() for r in replies if r.status_code == 200)
    assert playbook.settled(run_id)["output"] == taken["answer"]


# --- expiry and cancel -----------------------------------------------------------------------------------


def test_a_request_nobody_answers_expires_when_the_clock_reaches_it(playbook: Playbook) -> None:
    run_id = playbook.run("ask-ok", {"to": "lee"}).json()["run_id"]

    playbook.advance(10 * 60 - 1)
    waiting = playbook.get(f"/runs/{run_id}").json()
    playbook.advance(1)
    ended = playbook.get(f"/runs/{run_id}").json()

    assert waiting["status"] == "started"
    assert ended["status"] == "rejected"
    assert (ended["rejection"]["reason"], ended["rejection"]["kind"]) == ("unanswered", "expired")
    assert playbook.get("/interactions").json()["interactions"] == []
    problem(playbook.answer(run_id, {"ok": True}), 409, "conflict")
    events = playbook.get("/events", {"run_id": run_id, "order": "asc"}).json()["events"]
    assert [e["type"] for e in events] == ["interaction_requested", "run_rejected"]


def test_an_answer_racing_the_expiry_exactly_one_wins(playbook: Playbook) -> None:
    for _ in range(3):
        run_id = playbook.run("ask-ok", {"to": "lee"}).json()["run_id"]
        playbook.advance(10 * 60 - 0.001)

        def race(i: int, run_id: str = run_id) -> httpx.Response:
            if i == 0:
                return playbook.answer(run_id, {"ok": True})
            return playbook.http.post(
                "/_local/clock/advance",
                json={"seconds": 0.001},
                headers={"Authorization": "Bearer dev-token"},
            )

        answer_reply, moved = at_once(2, race)
        assert moved.status_code == 200

        ended = playbook.settled(run_id)
        if answer_reply.status_code == 200:
            assert ended["status"] == "succeeded" and ended["output"] == {"ok": True}
        else:
            problem(answer_reply, 409, "conflict")
            assert ended["rejection"]["kind"] == "expired"
        kinds = [e["type"] for e in playbook.get(f"/runs/{run_id}/history").json()["events"]]
        assert kinds.count("run_succeeded") + kinds.count("run_rejected") == 1


def test_cancel_rejects_the_run_and_the_request_leaves_the_inbox(playbook: Playbook) -> None:
    run_id = playbook.run(APPROVE, BRIEF).json()["run_id"]

    cancelled = playbook.post(f"/runs/{run_id}/cancel", {"reason": "The launch moved to spring."})
    again = playbook.post(f"/runs/{run_id}/cancel")
    answer = playbook.answer(run_id, {"verdict": "approve"})
    bad_reason = playbook.post(
        f"/runs/{playbook.run(APPROVE, BRIEF).json()['run_id']}/cancel", {"reason": ""}
    )

    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "rejected"
    assert cancelled.json()["rejection"] == {"reason": "cancelled", "detail": "The launch moved to spring."}
    assert playbook.get(f"/runs/{run_id}").json() == cancelled.json()
    problem(again, 409, "conflict")
    problem(answer, 409, "conflict")
    problem(bad_reason, 422, "invalid_input")
    assert [r["run_id"] for r in playbook.get("/interactions").json()["interactions"]] != [run_id]


# --- the open-requests bound -----------------------------------------------------------------------------


def test_the_open_requests_bound_is_exact_and_an_ended_request_frees_its_place(playbook: Playbook) -> None:
    replies = at_once(8, lambda _: playbook.run("ask-ok", {"to": "lee"}))

    started = [r.json()["run_id"] for r in replies if r.status_code == 200]
    full = [r for r in replies if r.status_code != 200]
    assert len(started) == 5
    for reply in full:
        problem(reply, 503, "unavailable", "requests_full")
    assert len(playbook.get("/interactions", {"limit": "100"}).json()["interactions"]) == 5
    assert playbook.run("brief-sent", {"owner": "o", "campaign": "c"}).status_code == 200  # takes no place

    assert playbook.answer(started[0], {"ok": True}).status_code == 200
    assert playbook.run("ask-ok", {"to": "lee"}).status_code == 200
    problem(playbook.run("ask-ok", {"to": "lee"}), 503, "unavailable", "requests_full")


# --- lists -----------------------------------------------------------------------------------------------


def test_lists_page_newest_first_and_filter(playbook: Playbook) -> None:
    ids = []
    for to in ("lee", "kim", "lee"):
        ids.append(playbook.run("ask-ok", {"to": to}).json()["run_id"])
        playbook.advance(1)

    first = playbook.get("/interactions", {"limit": "2"}).json()
    second = playbook.get("/interactions", {"limit": "2", "cursor": first["next_cursor"]}).json()
    lee = playbook.get("/interactions", {"to": "lee", "limit": "1"}).json()
    runs = playbook.get("/runs", {"name": "ask-ok", "status": "started"}).json()

    assert [r["run_id"] for r in first["interactions"] + second["interactions"]] == ids[::-1]
    assert second["next_cursor"] is None
    assert [r["run_id"] for r in lee["interactions"]] == [ids[2]] and lee["next_cursor"] is not None
    assert [r["run_id"] for r in runs["runs"]] == ids[::-1]
    problem(playbook.get("/runs", {"limit": "0"}), 400, "bad_request")


def test_events_show_large_content_as_its_size_and_get_event_shows_it_whole(playbook: Playbook) -> None:
    run_id = playbook.run("ask-ok", {"to": "lee"}).json()["run_id"]
    answer = {"ok": True, "note": "n" * 3000}
    fact = playbook.answer(run_id, answer).json()
    playbook.settled(run_id)

    listed = playbook.get("/events", {"type": "request_answered", "run_id": run_id}).json()["events"]
    whole = playbook.get(f"/events/{fact['answer_id']}").json()

    assert listed[0]["data"]["answer"] == {"size": len(json.dumps(answer, separators=(",", ":")))}
    assert listed[0]["omitted"] == ["answer"]
    assert whole["data"]["answer"] == answer
    problem(playbook.get("/events/0000000000000000000000000000000"), 404, "not_found")
