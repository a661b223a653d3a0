"""Workflows end to end over HTTP, against a real ``parley serve --clock manual`` (workflow-format.md:
"A workflow document", "Calling a function", "Errors, retries and timeouts", "How a run ends",
"Overview"; http-api.md, "Definitions", "Runs"): the compiled state machine runs on the local
interpreter, each call waits on a task token, and the called run's ending answers it.

Each test works in a playbook of its own, so the tests share one server and its clock.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tool_serving import PlaybookClient, problem, serving_manually, serving_with, writer_and_viewer

pytestmark = pytest.mark.http

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOKS = [f"w{n:02d}" for n in range(1, 31)]
OPERATOR = writer_and_viewer(PLAYBOOKS)
APPROVE = "approve-campaign-brief"
BRIEF = {"owner": "maria@example.com", "review": "Clear goals; the budget needs a source."}
UNANSWERED = "https://on.auto/problems/unanswered"

#: The format page's first example, as examples/ ships it (with the input's fields typed).
BRIEF_APPROVAL = (ROOT / "examples" / "definitions" / "brief-approval.yaml").read_text(encoding="utf-8")

#: Asks, then routes on the verdict: a revision raises an error nothing catches.
ASK_AND_ROUTE = """\
document: { dsl: '1.0.3', namespace: campaigns, name: ask-and-route, version: '1.0.0' }
do:
  - approval:
      call: run_definition
      with:
        type: interaction
        name: approve-campaign-brief
        input: { owner: '${ $data.owner }', review: '${ $data.review }' }
      output:
        as: '${ $merge([$input, { "decision": $data }]) }'
  - route:
      switch:
        - revise: { when: '${ $data.decision.verdict = "revise" }', then: stop }
        - otherwise: { then: continue }
  - done: { set: { approved: true, owner: '${ $data.owner }' }, then: end }
  - stop:
      raise:
        error: { type: https://example.com/errors/revision-asked, status: 422, title: Revision asked }
"""

#: Calls a function by the name given in its input, and catches nothing.
CALL_NAMED = """\
document: {{ dsl: '1.0.3', namespace: campaigns, name: call-named, version: '1.0.0' }}
do:
  - ask:
      call: run_definition
      with: {{ type: {type}, name: {name}, input: '${{ $data }}' }}
"""

#: Catches every error of its call and shows it.
CATCH_ALL = """\
document: { dsl: '1.0.3', namespace: campaigns, name: catch-all, version: '1.0.0' }
do:
  - guarded:
      try:
        - ask:
            call: run_definition
            with: { type: interaction, name: no-such-function, input: {} }
      catch:
        as: caught
        do:
          - show:
              set: { type: '${ $caught.type }', status: '${ $caught.status }', at: '${ $caught.instance }' }
"""

#: An expression that fails when it runs raises ``expression`` (400), which a catch may take.
FAILING_EXPRESSION = """\
document: { dsl: '1.0.3', namespace: campaigns, name: failing-expression, version: '1.0.0' }
do:
  - guarded:
      try:
        - compute: { set: { value: '${ $number("not a number") }' } }
      catch:
        errors: { with: { status: 400 } }
        as: caught
        do:
          - show: { set: { type: '${ $caught.type }' } }
"""

#: A workflow that calls the brief-approval workflow.
OUTER = """\
document: { dsl: '1.0.3', namespace: campaigns, name: outer, version: '1.0.0' }
do:
  - inner:
      call: run_definition
      with: { type: workflow, name: brief-approval, input: '${ $data }' }
  - wrap: { set: { inner: '${ $data }' } }
"""


class Playbook(PlaybookClient):
    """A client of one playbook of the server, with the workflow runs' calls."""

    def save(self, definition_type: str, name: str, source: str) -> dict[str, Any]:
        created = self.post(f"/definitions/{definition_type}", {"name": name, "source": source})
        assert created.status_code == 201, created.text
        body: dict[str, Any] = created.json()
        return body

    def run(self, name: str, input_value: Any, run_id: str | None = None) -> httpx.Response:
        body: dict[str, Any] = {"input": input_value}
        if run_id is not None:
            body["run_id"] = run_id
        return self.post(f"/definitions/workflow/{name}/run", body)

    def started(self, name: str, input_value: Any) -> str:
        reply = self.run(name, input_value)
        assert reply.status_code == 200, reply.text
        assert reply.json()["status"] == "started", reply.text
        run_id: str = reply.json()["run_id"]
        return run_id

    def child_of(self, run_id: str) -> dict[str, Any]:
        """The one run the workflow waits for, found through its open request."""
        children = [self.run_of(item["run_id"]) for item in self.open_requests()]
        mine = [child for child in children if child.get("parent", {}).get("run_id") == run_id]
        assert len(mine) == 1, children
        return mine[0]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serving_with(tmp_path_factory.mktemp("serve-workflows"), OPERATOR) as url:
        yield url


_next_playbook = iter(PLAYBOOKS)


@pytest.fixture
def playbook(server: str, example_source: str) -> Iterator[Playbook]:
    with httpx.Client(base_url=server, timeout=30) as http:
        chosen = Playbook(http, f"/v1/orgs/acme/playbooks/{next(_next_playbook)}")
        chosen.save("interaction", APPROVE, example_source)
        chosen.save("workflow", "brief-approval", BRIEF_APPROVAL)
        yield chosen


def test_the_brief_approval_asks_in_the_inbox_and_the_answer_is_its_output(playbook: Playbook) -> None:
    definition = playbook.get("/definitions/workflow/brief-approval").json()
    assert definition["media_type"] == "application/yaml"
    assert definition["state_machine"]["QueryLanguage"] == "JSONata"
    assert definition["schedule"] is None
    assert "```mermaid" in definition["overview"]
    used = playbook.get(f"/definitions/interaction/{APPROVE}").json()["overview"]
    assert "**Used by**" in used and "brief-approval" in used

    run_id = playbook.started("brief-approval", BRIEF)
    child = playbook.child_of(run_id)
    assert child["type"] == "interaction" and child["name"] == APPROVE
    assert child["parent"] == {"run_id": run_id, "task": "/do/0/approval/try/0/ask"}
    assert child["started_by"] == "dev"

    answered = playbook.post(f"/runs/{child['run_id']}/answer", {"answer": {"verdict": "approve"}})
    assert answered.status_code == 200, answered.text
    done = playbook.run_of(run_id)
    assert done["status"] == "succeeded", done
    assert done["output"] == {"verdict": "approve"}
    types = [event["type"] for event in playbook.history(run_id)]
    assert types[0] == "run_started" and types[-1] == "run_succeeded"
    assert "call_started" in types and "task_started" in types and "task_completed" in types


def test_an_expired_request_is_caught_and_the_workflow_asks_for_a_revision(playbook: Playbook) -> None:
    run_id = playbook.started("brief-approval", BRIEF)
    child = playbook.child_of(run_id)
    playbook.advance(2 * 24 * 3600 + 60)
    assert playbook.run_of(child["run_id"])["rejection"]["reason"] == "unanswered"
    done = playbook.run_of(run_id)
    assert done["status"] == "succeeded", done
    assert done["output"] == {"verdict": "revise", "note": "No answer within two days"}


def test_an_unanswered_request_nothing_catches_rejects_the_workflow_as_unanswered(playbook: Playbook) -> None:
    playbook.save("workflow", "ask-and-route", ASK_AND_ROUTE)
    run_id = playbook.started("ask-and-route", BRIEF)
    playbook.advance(2 * 24 * 3600 + 60)
    done = playbook.run_of(run_id)
    assert done["status"] == "rejected", done
    assert done["rejection"]["reason"] == "unanswered"
    assert done["rejection"]["kind"] == "expired"


def test_a_switch_routes_and_a_raise_nothing_catches_rejects_with_its_title(playbook: Playbook) -> None:
    playbook.save("workflow", "ask-and-route", ASK_AND_ROUTE)
    approved = playbook.started("ask-and-route", BRIEF)
    child = playbook.child_of(approved)
    playbook.post(f"/runs/{child['run_id']}/answer", {"answer": {"verdict": "approve"}})
    assert playbook.run_of(approved)["output"] == {"approved": True, "owner": BRIEF["owner"]}

    revised = playbook.started("ask-and-route", BRIEF)
    child = playbook.child_of(revised)
    playbook.post(f"/runs/{child['run_id']}/answer", {"answer": {"verdict": "revise", "note": "Budget"}})
    done = playbook.run_of(revised)
    assert done["status"] == "rejected", done
    assert done["rejection"]["reason"] == "invalid_input"
    assert done["rejection"]["detail"] == "Revision asked (at /do/3/stop)"
    tasks = [(event["type"], event["data"].get("task")) for event in playbook.history(revised)]
    assert tasks[0] == ("run_started", None) and tasks[-1] == ("run_rejected", None)
    assert tasks[1:4] == [
        (kind, "/do/0/approval") for kind in ("task_started", "call_started", "task_completed")
    ]
    assert tasks.index(("task_started", "/do/3/stop")) < tasks.index(("task_failed", "/do/3/stop"))
    assert ("task_completed", "/do/1/route") in tasks and ("task_started", "/do/2/done") not in tasks


def test_a_missing_function_raises_configuration_404(playbook: Playbook) -> None:
    playbook.save("workflow", "call-named", CALL_NAMED.format(type="interaction", name="no-such-function"))
    reply = playbook.run("call-named", {})
    body = problem(reply, 422, "invalid_input")
    assert "no-such-function" in body["detail"] and "/do/0/ask" in body["detail"]

    playbook.save("workflow", "catch-all", CATCH_ALL)
    reply = playbook.run("catch-all", {})
    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] == "succeeded"
    assert reply.json()["output"] == {
        "type": "https://open-workflow-specification.org/spec/1.0.0/errors/configuration",
        "status": 404,
        "at": "/do/0/guarded/try/0/ask",
    }


def test_a_called_run_refusing_its_input_raises_validation_400(playbook: Playbook) -> None:
    playbook.save("workflow", "call-named", CALL_NAMED.format(type="interaction", name=APPROVE))
    reply = playbook.run("call-named", {"owner": "maria"})  # no review
    body = problem(reply, 422, "invalid_input")
    assert "/do/0/ask" in body["detail"]


def test_an_expression_failing_at_run_time_raises_expression_400_a_catch_takes(playbook: Playbook) -> None:
    playbook.save("workflow", "failing-expression", FAILING_EXPRESSION)
    reply = playbook.run("failing-expression", {})
    assert reply.status_code == 200, reply.text
    assert reply.json()["output"] == {
        "type": "https://open-workflow-specification.org/spec/1.0.0/errors/expression"
    }


def test_the_input_schema_is_checked_before_anything_runs(playbook: Playbook) -> None:
    reply = playbook.run("brief-approval", {"owner": "maria"})
    body = problem(reply, 422, "invalid_input")
    assert body["errors"][0]["pointer"] == "/input"
    assert playbook.open_requests() == []


def test_cancelling_a_workflow_cancels_the_run_it_waits_for(playbook: Playbook) -> None:
    run_id = playbook.started("brief-approval", BRIEF)
    child = playbook.child_of(run_id)
    cancelled = playbook.post(f"/runs/{run_id}/cancel", {})
    assert cancelled.status_code == 200, cancelled.text
    assert playbook.run_of(run_id)["rejection"] == {
        "reason": "cancelled",
        "kind": "requested",
        "detail": "cancel_run cancelled the run (by dev).",
    }
    ended = playbook.run_of(child["run_id"])
    assert ended["status"] == "rejected"
    assert ended["rejection"]["reason"] == "cancelled" and ended["rejection"]["kind"] == "parent_ended"
    assert playbook.open_requests() == []


def test_cancelling_the_called_run_rejects_the_workflow(playbook: Playbook) -> None:
    run_id = playbook.started("brief-approval", BRIEF)
    child = playbook.child_of(run_id)
    assert playbook.post(f"/runs/{child['run_id']}/cancel", {}).status_code == 200
    done = playbook.run_of(run_id)
    assert done["status"] == "rejected", done
    # cancelled is 409, which the brief-approval's catch (unanswered, expired) does not take.
    assert done["rejection"]["reason"] == "invalid_input"
    assert "cancelled" in done["rejection"]["detail"]


def test_retrying_under_a_run_id(playbook: Playbook) -> None:
    run_id = "0f5e8c1a-4d3b-4f6e-9a2c-7b1d3e5f7a9c"
    first = playbook.run("brief-approval", BRIEF, run_id=run_id)
    again = playbook.run("brief-approval", BRIEF, run_id=run_id)
    assert first.status_code == again.status_code == 200
    assert again.json()["status"] == "started"
    assert len(playbook.open_requests()) == 1
    other = playbook.run("brief-approval", {**BRIEF, "owner": "ana"}, run_id=run_id)
    problem(other, 409, "conflict")


def test_a_workflow_calls_a_workflow(playbook: Playbook) -> None:
    playbook.save("workflow", "outer", OUTER)
    run_id = playbook.started("outer", BRIEF)
    inner = [
        run
        for run in playbook.get("/runs", {"type": "workflow"}).json()["runs"]
        if run["name"] == "brief-approval"
    ]
    assert len(inner) == 1
    inner_run = playbook.run_of(inner[0]["run_id"])
    assert inner_run["parent"] == {"run_id": run_id, "task": "/do/0/inner"}
    child = playbook.child_of(inner_run["run_id"])
    playbook.post(f"/runs/{child['run_id']}/answer", {"answer": {"verdict": "approve"}})
    assert playbook.run_of(run_id)["output"] == {"inner": {"verdict": "approve"}}


def test_a_document_with_problems_names_line_column_and_pointer(playbook: Playbook) -> None:
    source = BRIEF_APPROVAL.replace("input: '${ $data }'", "input: '${ $data. }'")
    reply = playbook.post("/definitions/workflow", {"name": "broken", "source": source})
    body = problem(reply, 422, "invalid_input")
    assert body["errors"][0]["pointer"] == "/source"
    assert body["errors"][0]["detail"] == (
        "Line 23, column 32, /do/0/approval/try/0/ask/with/input: The expression does not parse: "
        "Unexpected end of expression"
    )

    refused = (
        "document: { dsl: '1.0.3', namespace: a, name: b, version: '1.0.0' }\n"
        "do:\n  - x: { run: { shell: { command: ls } } }\n"
    )
    reply = playbook.post("/definitions/workflow", {"name": "runs-shell", "source": refused})
    body = problem(reply, 422, "invalid_input")
    assert body["errors"][0]["detail"].startswith("Line 3, column ")


def test_data_past_256_kib_ends_the_run_with_the_runtime_error(playbook: Playbook) -> None:
    source = (
        "document: { dsl: '1.0.3', namespace: a, name: big, version: '1.0.0' }\n"
        "do:\n"
        '  - grow: { set: \'${ { "text": $pad("", 300000, "x") } }\' }\n'
        "  - after: { set: { done: true } }\n"
    )
    playbook.save("workflow", "big", source)
    body = problem(playbook.run("big", {}), 503, "unavailable")
    assert "256 KiB" in body["detail"]
    runs = playbook.get("/runs", {"type": "workflow"}).json()["runs"]
    assert [run["status"] for run in runs if run["name"] == "big"] == ["rejected"]


def test_workflows_call_workflows_at_most_eight_deep(playbook: Playbook) -> None:
    source = (
        "document: { dsl: '1.0.3', namespace: a, name: itself, version: '1.0.0' }\n"
        "do:\n"
        "  - again: { call: run_definition, with: { type: workflow, name: itself } }\n"
    )
    playbook.save("workflow", "itself", source)
    body = problem(playbook.run("itself", {}), 503, "unavailable")
    assert "/do/0/again" in body["detail"]
    runs = playbook.get("/runs", {"type": "workflow", "limit": "100"}).json()["runs"]
    mine = [run for run in runs if run["name"] == "itself"]
    assert len(mine) == 9  # the run a caller started, and the eight below it
    deepest = [playbook.run_of(run["run_id"]) for run in mine]
    refused = [run for run in deepest if run["rejection"]["detail"].startswith("Too many calls above a run")]
    assert len(refused) == 1, [run["rejection"] for run in deepest]
    assert refused[0]["parent"]["task"] == "/do/0/again"


def test_an_expression_failing_outside_any_try_rejects_the_run_as_expression_400(playbook: Playbook) -> None:
    source = (
        "document: { dsl: '1.0.3', namespace: a, name: uncaught, version: '1.0.0' }\n"
        "do:\n"
        "  - first: { set: { a: 1 } }\n"
        "  - compute: { set: { value: '${ $number(\"not a number\") }' } }\n"
    )
    playbook.save("workflow", "uncaught", source)
    body = problem(playbook.run("uncaught", {}), 422, "invalid_input")
    assert body["detail"].startswith("An expression failed")
    runs = playbook.get("/runs", {"type": "workflow"}).json()["runs"]
    assert [run["status"] for run in runs if run["name"] == "uncaught"] == ["rejected"]


#: Every task of this version and every field a task takes: do, set, if, input.from, output.as,
#: export.as ($context), then (exit, a sibling), switch, and a call whose input comes from them.
EVERY_TASK = """\
document: { dsl: '1.0.3', namespace: t, name: every-task, version: '1.0.0' }
input:
  from: '${ { "owner": $data.owner, "review": $data.review, "urgent": $data.urgent = true } }'
do:
  - prepare:
      do:
        - remember:
            set: '${ $merge([$data, { "remembered": true }]) }'
            input: { from: '${ $data }' }
            export: { as: '${ { "owner": $output.owner } }' }
        - skipped-when-calm:
            if: '${ $input.owner = "nobody" }'
            set: { never: true }
        - leave: { set: '${ $input }', then: exit }
        - never-reached: { set: { never: true } }
  - route:
      switch:
        - hurry: { when: '${ $data.urgent }', then: ask }
        - otherwise: { then: continue }
  - calm: { set: '${ $merge([$data, { "calm": true }]) }' }
  - ask:
      call: run_definition
      with:
        type: interaction
        name: approve-campaign-brief
        input: { owner: '${ $context.owner }', review: '${ $data.review }' }
      output:
        as: '${ { "verdict": $data.verdict, "owner": $context.owner, "task": $task.name } }'
"""


def test_every_task_and_field_of_this_version(playbook: Playbook) -> None:
    playbook.save("workflow", "every-task", EVERY_TASK)
    for urgent, calm in ((True, None), (False, True)):
        run_id = playbook.started("every-task", {**BRIEF, "urgent": urgent, "extra": "dropped"})
        child = playbook.child_of(run_id)
        assert playbook.run_of(child["run_id"])["name"] == APPROVE
        playbook.post(f"/runs/{child['run_id']}/answer", {"answer": {"verdict": "approve"}})
        done = playbook.run_of(run_id)
        assert done["output"] == {"verdict": "approve", "owner": BRIEF["owner"], "task": "ask"}, done
        events = [(event["type"], event["data"].get("task")) for event in playbook.history(run_id)]
        assert ("task_skipped", "/do/0/prepare/do/1/skipped-when-calm") in events
        assert ("task_started", "/do/0/prepare/do/3/never-reached") not in events
        assert (("task_started", "/do/2/calm") in events) is bool(calm)


def test_a_run_past_the_longest_duration_is_cancelled_as_overrun(tmp_path: Path, example_source: str) -> None:
    """WORKFLOW_MAX_DURATION (here the configuration's limits.workflow_max_duration, two hours): the run's
    execution times out, the run ends cancelled as overrun, and the run it waited for is cancelled."""
    config = tmp_path / "operator.yaml"
    config.write_text(
        writer_and_viewer(["w99"], "limits:", "  workflow_max_duration: PT2H"), encoding="utf-8"
    )
    with (
        serving_manually(config, tmp_path / "serve.log") as url,
        httpx.Client(base_url=url, timeout=30) as http,
    ):
        playbook = Playbook(http, "/v1/orgs/acme/playbooks/w99")
        playbook.save("interaction", APPROVE, example_source)
        playbook.save("workflow", "brief-approval", BRIEF_APPROVAL)
        run_id = playbook.started("brief-approval", BRIEF)
        child = playbook.child_of(run_id)
        playbook.advance(2 * 3600 + 1)
        done = playbook.run_of(run_id)
        assert done["status"] == "rejected", done
        assert (done["rejection"]["reason"], done["rejection"]["kind"]) == ("cancelled", "overrun")
        ended = playbook.run_of(child["run_id"])
        assert (ended["rejection"]["reason"], ended["rejection"]["kind"]) == ("cancelled", "parent_ended")
        assert playbook.open_requests() == []


def test_a_workflow_calls_a_reasoning_function(tmp_path: Path) -> None:
    """The called reasoning run works on its own thread while the workflow's call waits for it on the
    executor's (which holds none of the server's lock); its output is the task's."""
    from parley.demo.model import DemoModelOptions, running

    review = (ROOT / "examples" / "definitions" / "reasoning" / "review-brief.md").read_text(encoding="utf-8")
    source = (
        "document: { dsl: '1.0.3', namespace: t, name: reviewed, version: '1.0.0' }\n"
        "do:\n"
        "  - review:\n"
        "      call: run_definition\n"
        "      with: { type: reasoning, name: review-brief, input: { brief: May, criteria: Evidence } }\n"
        "  - done: { set: { reviewed: '${ $type($data) = \"string\" }' } }\n"
    )
    with running(DemoModelOptions(port=0)) as model:
        models = [
            "models:",
            "  gateways:",
            f"    - {{ name: demo, base_url: '{model.openai_base_url}', structured_outputs: true }}",
            "  catalog:",
            "    - { id: demo/echo, context_window: 32768, max_tokens: 4096 }",
        ]
        config = tmp_path / "operator.yaml"
        config.write_text(writer_and_viewer(["w98"], *models), encoding="utf-8")
        with (
            serving_manually(config, tmp_path / "serve.log") as url,
            httpx.Client(base_url=url, timeout=60) as http,
        ):
            playbook = Playbook(http, "/v1/orgs/acme/playbooks/w98")
            playbook.save("reasoning", "review-brief", review)
            playbook.save("workflow", "reviewed", source)
            reply = playbook.run("reviewed", {})
            assert reply.status_code == 200, reply.text
            run = reply.json()
            for _ in range(300):  # the reasoning run ends on its own thread, then answers the call
                if run["status"] != "started":
                    break
                time.sleep(0.05)
                run = playbook.run_of(run["run_id"])
            assert (run["status"], run.get("output")) == ("succeeded", {"reviewed": True}), run


#: Asks two people; the first answer wins.
COMPETE = """\
document: { dsl: '1.0.3', namespace: t, name: first-answer, version: '1.0.0' }
do:
  - race:
      fork:
        compete: true
        branches:
          - maria:
              call: run_definition
              with: { type: interaction, name: approve-campaign-brief, input: { owner: maria, review: r } }
          - omar:
              call: run_definition
              with: { type: interaction, name: approve-campaign-brief, input: { owner: omar, review: r } }
"""
#: A do timed as a whole, around a call.
TIMED_DO = """\
document: { dsl: '1.0.3', namespace: t, name: timed-do, version: '1.0.0' }
do:
  - asking:
      timeout: { after: PT1H }
      do:
        - ask:
            call: run_definition
            with: { type: interaction, name: approve-campaign-brief, input: { owner: maria, review: r } }
"""


def test_a_competing_fork_takes_the_first_answer_and_cancels_the_other_call(playbook: Playbook) -> None:
    # The run goes on after the fork (a day's wait): the losing branch's request leaves the inbox at once.
    playbook.save("workflow", "first-answer", COMPETE + "  - later: { wait: P1D }\n")
    run_id = playbook.started("first-answer", {})
    asked = {item["to"]: item["run_id"] for item in playbook.open_requests()}
    assert set(asked) == {"maria", "omar"}
    playbook.post(f"/runs/{asked['omar']}/answer", {"answer": {"verdict": "revise", "note": "No"}})
    assert playbook.run_of(run_id)["status"] == "started"  # waiting its day
    other = playbook.run_of(asked["maria"])
    assert (other["rejection"]["reason"], other["rejection"]["kind"]) == ("cancelled", "parent_ended")
    assert playbook.open_requests() == []
    playbook.advance(86400)
    done = playbook.run_of(run_id)
    assert (done["status"], done.get("output")) == ("succeeded", {"verdict": "revise", "note": "No"}), done


def test_a_do_past_its_timeout_raises_timeout_and_cancels_its_call_as_deadline(playbook: Playbook) -> None:
    playbook.save("workflow", "timed-do", TIMED_DO)
    run_id = playbook.started("timed-do", {})
    (asked,) = playbook.open_requests()
    playbook.advance(3601)
    done = playbook.run_of(run_id)
    assert (done["status"], done["rejection"]["reason"]) == ("rejected", "unavailable"), done
    assert "(at /do/0/asking)" in done["rejection"]["detail"]
    called = playbook.run_of(asked["run_id"])
    assert (called["rejection"]["reason"], called["rejection"]["kind"]) == ("cancelled", "deadline")


#: Asks each owner in turn, each iteration taking the one before's output, until one revises.
FOR_EACH = """\
document: { dsl: '1.0.3', namespace: t, name: each-owner, version: '1.0.0' }
do:
  - ask-each:
      for: { in: '${ $data.owners }', each: owner, at: position }
      while: '${ $not($data.revised) }'
      input: { from: '${ { "owners": $data.owners, "verdicts": [], "revised": false } }' }
      do:
        - ask:
            call: run_definition
            with:
              type: interaction
              name: approve-campaign-brief
              input: { owner: '${ $owner }', review: r }
            output:
              as: >-
                ${ { "owners": $input.owners,
                "verdicts": $append($input.verdicts, [$position & ":" & $data.verdict]),
                "revised": $data.verdict = "revise" } }
"""


def test_a_for_asks_each_in_turn_until_its_while_fails(playbook: Playbook) -> None:
    playbook.save("workflow", "each-owner", FOR_EACH)
    run_id = playbook.started("each-owner", {"owners": ["ana", "ben", "cy"]})
    for owner, verdict in (("ana", "approve"), ("ben", "revise")):
        (asked,) = playbook.open_requests()
        assert asked["to"] == owner
        playbook.post(f"/runs/{asked['run_id']}/answer", {"answer": {"verdict": verdict}})
    done = playbook.run_of(run_id)
    assert (done["status"], done.get("output")) == (
        "succeeded",
        {"owners": ["ana", "ben", "cy"], "verdicts": ["0:approve", "1:revise"], "revised": True},
    ), done
    assert playbook.open_requests() == []
