"""``parley runs``, ``show``, ``events [--follow]`` and ``send-event`` against ``parley serve`` (issue
29, item 1): tables and ``--json``, the history as a timeline, a follow that ends when the run does
(exit 0, or 4), and a workflow run taken to its end by an event."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.http

Cli = Any
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "definitions"
BRIEF = str(EXAMPLES / "approve-campaign-brief.md")
INPUT = '{"owner": "maria", "review": "Clear goals; the budget needs a source."}'
PARLEY = str(Path(sys.executable).parent / "parley")


def answered_run(parley: Cli) -> str:
    parley("save", BRIEF, "-q")
    run_id: str = parley("run", "approve-campaign-brief", "--input", INPUT, "-q").out.strip()
    assert (
        parley(
            "answer", run_id, '{"verdict": "approve", "note": "Ship it"}', "--claimed-for", "the team"
        ).code
        == 0
    )
    return run_id


def test_runs_lists_a_table_ids_or_the_servers_page(parley: Cli) -> None:
    assert parley("runs").out == "No runs.\n"
    done = answered_run(parley)
    waiting = parley("run", "approve-campaign-brief", "--input", INPUT, "-q").out.strip()
    table = parley("runs").out.splitlines()  # newest first; the manual clock makes them of one moment
    assert table[0].split() == ["RUN", "ID", "FUNCTION", "STATUS", "STARTED", "ENDED"]
    rows = {row.split()[0]: row for row in table[1:]}
    assert set(rows) == {done, waiting}
    assert " started " in rows[waiting] and rows[waiting].endswith("-")
    assert "interaction approve-campaign-brief" in rows[done] and " succeeded " in rows[done]
    assert parley("runs", "--status", "succeeded", "-q").out.split() == [done]
    page = json.loads(parley("runs", "--json", "--limit", "1").out)
    assert len(page["runs"]) == 1 and page["next_cursor"]
    more = parley("runs", "--limit", "1")
    assert "More: parley runs --cursor " in more.err
    cursor = more.err.split("--cursor ")[1].strip()
    rest = parley("runs", "--limit", "1", "--cursor", cursor, "-q").out.split()
    assert {more.out.split()[6], *rest} == {done, waiting}


def test_show_prints_the_status_output_and_history_as_a_timeline(parley: Cli) -> None:
    run_id = answered_run(parley)
    shown = parley("show", run_id)
    assert shown.code == 0
    lines = shown.out.splitlines()
    assert lines[0] == f"Run       {run_id}"
    assert "Function  interaction approve-campaign-brief, version 1" in lines
    assert "Status    succeeded" in lines
    output = shown.out.split("Output\n")[1].split("History\n")[0]
    assert json.loads(output) == {"verdict": "approve", "note": "Ship it"}
    history = shown.out.split("History\n")[1].splitlines()
    assert [line.split()[2] for line in history] == [
        "interaction_requested",
        "request_answered",
        "run_succeeded",
    ]
    assert "to maria, in the inbox, until" in history[0]
    assert 'by dev for the team: {"verdict": "approve", "note": "Ship it"}' in history[1]
    as_json = json.loads(parley("show", run_id, "--json").out)
    assert as_json["run_id"] == run_id and as_json["output"]["verdict"] == "approve"


def test_show_of_a_rejected_run_gives_its_rejection(parley: Cli) -> None:
    parley("save", BRIEF, "-q")
    run_id = parley("run", "approve-campaign-brief", "--input", INPUT, "-q").out.strip()
    parley.advance(2 * 86400 + 60)
    shown = parley("show", run_id).out
    assert "Status    rejected" in shown
    assert "Rejection\n  unanswered (kind expired)" in shown
    assert "run_rejected" in shown.split("History\n")[1]


def test_show_of_an_unknown_run_is_the_servers_problem(parley: Cli) -> None:
    missing = parley("show", "0b7a3c52-6d1e-4f7a-9c55-3a1d2b4c5e6f")
    assert missing.code == 1 and "Not found (404 not_found)" in missing.err
    malformed = parley("show", "not-a-run")
    assert malformed.code == 1 and (
        "(400 bad_request)" in malformed.err or "(404 not_found)" in malformed.err
    )


def test_events_prints_the_history_or_json_lines(parley: Cli) -> None:
    run_id = answered_run(parley)
    lines = parley("events", run_id).out.splitlines()
    assert [line.split()[2] for line in lines] == [
        "interaction_requested",
        "request_answered",
        "run_succeeded",
    ]
    events = [json.loads(line) for line in parley("events", run_id, "--json").out.splitlines()]
    assert [event["type"] for event in events] == [
        "interaction_requested",
        "request_answered",
        "run_succeeded",
    ]
    assert all(event["run_id"] == run_id for event in events)


def test_events_follow_goes_on_until_the_run_ends(parley: Cli) -> None:
    parley("save", BRIEF, "-q")
    run_id = parley("run", "approve-campaign-brief", "--input", INPUT, "-q").out.strip()
    following = subprocess.Popen(
        [PARLEY, "events", run_id, "--follow", "--interval", "0.1"],
        env=parley.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert following.stdout is not None
        first = following.stdout.readline()  # the request, before any answer
        assert "interaction_requested" in first
        assert parley("answer", run_id, '{"verdict": "revise", "note": "More numbers"}').code == 0
        out, err = following.communicate(timeout=60)
    finally:
        following.kill()
    assert following.returncode == 0, err
    assert [line.split()[2] for line in out.splitlines()] == ["request_answered", "run_succeeded"]
    assert "The run succeeded." in err


def test_events_follow_exits_4_when_the_run_is_rejected(parley: Cli) -> None:
    parley("save", BRIEF, "-q")
    run_id = parley("run", "approve-campaign-brief", "--input", INPUT, "-q").out.strip()
    following = subprocess.Popen(
        [PARLEY, "events", run_id, "-f", "--json", "--interval", "0.1"],
        env=parley.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert following.stdout is not None
        assert json.loads(following.stdout.readline())["type"] == "interaction_requested"
        parley.advance(2 * 86400 + 60)
        out, err = following.communicate(timeout=60)
    finally:
        following.kill()
    assert following.returncode == 4, err
    types = [json.loads(line)["type"] for line in out.splitlines()]
    assert types == ["run_rejected"]


def test_send_event_takes_a_workflow_run_to_its_end(parley: Cli) -> None:
    parley("save", BRIEF, "-q")
    saved = parley("save", str(EXAMPLES / "launch-decision.yaml"), "-q")
    assert saved.out.startswith("Created workflow launch-decision"), saved.err
    given = '{"owner": "maria", "finance": "omar", "review": "Budget sourced."}'
    workflow = parley("run", "launch-decision", "-q", "--input", given).out.strip()
    asks = parley("inbox", "--function", "approve-campaign-brief", "-q").out.split()
    assert len(asks) == 2
    for ask in asks:
        assert parley("answer", ask, '{"verdict": "approve"}').code == 0
    parley.advance(86400)
    sent = parley(
        "send-event", workflow, "launch.decided", '{"approved": true, "by": "cmo"}', "--id", "decision-1"
    )
    assert sent.code == 0, sent.err
    assert sent.out.startswith(f"Sent launch.decided to run {workflow}: event ")
    late = parley(
        "send-event", workflow, "launch.decided", '{"approved": true}', "--id", "decision-2", "--json"
    )
    assert late.code == 1 and json.loads(late.out)["reason"] == "conflict"
    assert "has ended (succeeded)" in late.err
    ended = json.loads(parley("show", workflow, "--json").out)
    assert ended["status"] == "succeeded", ended
    assert ended["output"]["decision"] == {"approved": True, "by": "cmo"}
    timeline = parley("show", workflow).out
    assert "call_started" in timeline and "event_received          launch.decided from" in timeline


def test_send_event_to_a_run_that_takes_none_is_the_servers_problem(parley: Cli) -> None:
    run_id = answered_run(parley)
    refused = parley("send-event", run_id, "launch.decided")
    assert refused.code == 1 and "(409 conflict)" in refused.err
    broken = parley("send-event", run_id, "launch.decided", "{nope")
    assert broken.code == 2 and "DATA is not JSON" in broken.err
