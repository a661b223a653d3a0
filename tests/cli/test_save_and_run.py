"""``parley save`` and ``parley run`` against ``parley serve`` (issue 29, item 1): the name and type from
the file, create then update, problems with their line and pointer, the type found by the name, a run
rejected at once (exit 4) or refused (exit 1), ``--wait`` following a run to its end through the real
entry point."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.http

#: The ``parley`` fixture of ``conftest.py``: ``parley(*argv, stdin=None)`` → ``Result(code, out, err)``.
Cli = Any
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "definitions"
BRIEF = str(EXAMPLES / "approve-campaign-brief.md")
INPUT = '{"owner": "maria", "review": "Clear goals; the budget needs a source."}'
PARLEY = str(Path(sys.executable).parent / "parley")


def test_save_creates_then_updates_and_says_when_nothing_changed(parley: Cli, tmp_path: Path) -> None:
    created = parley("save", BRIEF)
    assert created.code == 0, created.err
    assert created.out.startswith("Created interaction approve-campaign-brief, version 1.")
    assert "What answer it expects" in created.out  # the overview
    again = parley("save", BRIEF, "-q")
    assert (again.code, again.out) == (
        0,
        "Unchanged interaction approve-campaign-brief, version 1 (the same source).\n",
    )
    changed = tmp_path / "approve-campaign-brief.md"
    changed.write_text(Path(BRIEF).read_text().replace("expires: P2D", "expires: P3D"))
    updated = parley("save", str(changed), "--json")
    assert updated.code == 0
    body = json.loads(updated.out)
    assert (body["type"], body["name"], body["version"]) == ("interaction", "approve-campaign-brief", 2)


def test_save_reads_the_type_from_the_file_and_takes_another_name(parley: Cli) -> None:
    reasoning = parley("save", str(EXAMPLES / "reasoning" / "review-brief.md"), "-q")
    assert reasoning.out.startswith("Created reasoning review-brief, version 1."), reasoning.err
    assert parley("save", BRIEF, "-q").code == 0
    workflow = parley("save", str(EXAMPLES / "brief-approval.yaml"), "-q", "--name", "ask-and-catch")
    assert workflow.out.startswith("Created workflow ask-and-catch, version 1."), workflow.err


def test_warnings_are_printed_with_their_line_and_it_is_saved(parley: Cli, tmp_path: Path) -> None:
    document = tmp_path / "greet.md"
    document.write_text("---\ndescription: Greets\nmodel: demo/echo\n---\nHello {{ input.who }}\n")
    saved = parley("save", str(document), "-q")
    assert saved.code == 0 and saved.out.startswith("Created reasoning greet, version 1.")
    warnings = [line for line in saved.err.splitlines() if line.startswith("warning: ")]
    assert warnings and all(line.startswith(f"warning: {document}:") for line in warnings), saved.err


def test_a_document_with_problems_is_printed_with_each_line_and_pointer(parley: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad-brief.md"
    bad.write_text("---\ndescription: Asks\nto: maria\nexpires: PT30S\nmodel: y\n---\nHello\n")
    saved = parley("save", str(bad), "--type", "interaction")
    assert saved.code == 1
    assert saved.out == ""
    assert "Invalid input (422 invalid_input)" in saved.err
    assert f"{bad}:4: /expires: PT30S (30 seconds) is outside" in saved.err
    assert f"{bad}:5: /model: 'model' is not a field of interaction functions" in saved.err
    as_json = parley("save", str(bad), "--type", "interaction", "--json")
    problem = json.loads(as_json.out)  # for scripts, the problem document itself
    assert as_json.code == 1 and problem["reason"] == "invalid_input"
    assert [entry["pointer"] for entry in problem["errors"]] == ["/source", "/source"]


def test_a_file_that_cannot_be_read_or_told_is_a_usage_error(parley: Cli, tmp_path: Path) -> None:
    missing = parley("save", str(tmp_path / "nothing.md"))
    assert missing.code == 2 and "There is no file" in missing.err
    plain = tmp_path / "notes.txt"
    plain.write_text("just words\n")
    untold = parley("save", str(plain))
    assert untold.code == 2 and "--type" in untold.err


def test_run_prints_the_run_its_id_alone_or_its_json(parley: Cli) -> None:
    parley("save", BRIEF, "-q")
    started = parley("run", "approve-campaign-brief", "--input", INPUT)
    assert started.code == 0, started.err
    assert "interaction approve-campaign-brief, version 1, started." in started.out
    assert "parley events" in started.out
    quiet = parley("run", "approve-campaign-brief", "--input", INPUT, "-q")
    run_id = quiet.out.strip()
    assert len(run_id) == 36 and quiet.out.count("\n") == 1
    as_json = parley("run", "approve-campaign-brief", "--input", INPUT, "--json")
    assert json.loads(as_json.out)["status"] == "started"
    listed = parley("runs", "-q")
    assert run_id in listed.out.split()


def test_run_reads_its_input_from_a_file_and_takes_a_run_id(parley: Cli, tmp_path: Path) -> None:
    parley("save", BRIEF, "-q")
    given = tmp_path / "input.json"
    given.write_text(INPUT)
    run_id = "0b7a3c52-6d1e-4f7a-9c55-3a1d2b4c5e6f"
    ran = parley("run", "approve-campaign-brief", "--input", f"@{given}", "--run-id", run_id, "-q")
    assert ran.out.strip() == run_id
    again = parley("run", "approve-campaign-brief", "--input", f"@{given}", "--run-id", run_id, "--json")
    assert json.loads(again.out)["run_id"] == run_id  # the same id and input: the recorded run


def test_a_run_rejected_at_once_exits_4_with_its_problem(parley: Cli) -> None:
    parley("save", BRIEF, "-q")
    rejected = parley("run", "approve-campaign-brief", "--input", '{"owner": "maria"}')
    assert rejected.code == 4
    assert ", rejected." in rejected.err
    assert '/input: Missing required property "review"' in rejected.err
    as_json = parley("run", "approve-campaign-brief", "--input", '{"owner": "maria"}', "--json")
    assert as_json.code == 4 and json.loads(as_json.out)["status"] == "rejected"


def test_a_request_refused_exits_1_and_bad_json_exits_2(parley: Cli) -> None:
    missing = parley("run", "no-such-function")
    assert missing.code == 1
    assert "Not found (404 not_found)" in missing.err and "no-such-function" in missing.err
    parley("save", BRIEF, "-q")
    broken = parley("run", "approve-campaign-brief", "--input", '{"owner": ')
    assert broken.code == 2 and "--input is not JSON" in broken.err and "line 1, column 11" in broken.err


def test_a_name_two_types_share_needs_its_type(parley: Cli) -> None:
    parley("save", BRIEF, "-q")
    parley("save", str(EXAMPLES / "brief-approval.yaml"), "-q", "--name", "approve-campaign-brief")
    ambiguous = parley("run", "approve-campaign-brief", "--input", INPUT)
    assert ambiguous.code == 2
    assert "interaction and a workflow" in ambiguous.err and "--type" in ambiguous.err
    chosen = parley("run", "approve-campaign-brief", "--type", "workflow", "--input", INPUT, "--json")
    assert chosen.code == 0 and json.loads(chosen.out)["type"] == "workflow"


def test_run_wait_follows_the_run_until_it_is_answered(parley: Cli) -> None:
    parley("save", BRIEF, "-q")
    waiting = subprocess.Popen(
        [PARLEY, "run", "approve-campaign-brief", "--input", INPUT, "--wait", "--interval", "0.1"],
        env=parley.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        run_id = _first_open_request(parley)
        answered = parley("answer", run_id, '{"verdict": "approve", "note": "Ship it"}')
        assert answered.code == 0, answered.err
        out, err = waiting.communicate(timeout=60)
    finally:
        waiting.kill()
    assert waiting.returncode == 0, err
    assert f"Run {run_id}: interaction approve-campaign-brief, version 1, started." in out
    assert "interaction_requested" in out and "request_answered" in out and "run_succeeded" in out
    assert '"note": "Ship it"' in out.split("Succeeded. Output:")[1]


def test_run_wait_exits_4_when_the_run_ends_unanswered(parley: Cli) -> None:
    parley("save", BRIEF, "-q")
    waiting = subprocess.Popen(
        [PARLEY, "run", "approve-campaign-brief", "--input", INPUT, "--wait", "--interval", "0.1", "--json"],
        env=parley.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _first_open_request(parley)
        parley.advance(2 * 86400 + 60)
        out, err = waiting.communicate(timeout=60)
    finally:
        waiting.kill()
    assert waiting.returncode == 4, err
    ended = json.loads(out)
    assert ended["status"] == "rejected" and ended["rejection"]["reason"] == "unanswered"


def test_run_wait_gives_up_after_its_timeout_and_the_run_goes_on(parley: Cli) -> None:
    parley("save", BRIEF, "-q")
    gave_up = parley("run", "approve-campaign-brief", "--input", INPUT, "--wait", "--interval", "0.1",
                     "--timeout", "0.3")  # fmt: skip
    assert gave_up.code == 5
    assert "still started" in gave_up.err and "parley show" in gave_up.err
    assert parley("runs", "--status", "started", "-q").out.strip()


def test_ctrl_c_stops_the_waiting_and_not_the_run(parley: Cli) -> None:
    parley("save", BRIEF, "-q")
    waiting = subprocess.Popen(
        [PARLEY, "run", "approve-campaign-brief", "--input", INPUT, "--wait", "--interval", "0.1"],
        env=parley.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert waiting.stdout is not None
        assert ", started." in waiting.stdout.readline()
        assert "interaction_requested" in waiting.stdout.readline()
        waiting.send_signal(signal.SIGINT)
        _, err = waiting.communicate(timeout=60)
    finally:
        waiting.kill()
    assert waiting.returncode == 130
    assert "Stopped waiting; the run goes on: parley show " in err and "Traceback" not in err
    assert len(parley("runs", "--status", "started", "-q").out.split()) == 1


def _first_open_request(parley: Cli) -> str:
    """The run id of the first open request of the test's playbook, once there is one."""
    import time

    for _ in range(600):
        listed = parley("inbox", "-q")
        if listed.out.strip():
            return listed.out.split()[0]
        time.sleep(0.1)
    raise AssertionError("no request came")
