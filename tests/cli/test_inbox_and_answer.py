"""``parley inbox`` and ``parley answer`` against ``parley serve`` (issue 29, item 1): the open requests
as a table, ids or JSON; an answer given as JSON, a file or standard input; a refused answer with its
pointer; and the answer asked for on the terminal from the answer schema, checked as it is typed, in
process and through the real entry point on a pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.http

Cli = Any
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "definitions"
BRIEF = str(EXAMPLES / "approve-campaign-brief.md")
PARLEY = str(Path(sys.executable).parent / "parley")

BUDGET = """---
description: Asks for a campaign's budget
to: maria
expires: P1D
output:
  schema:
    type: object
    required: [amount, channels, start]
    properties:
      amount: { type: integer, minimum: 1000, maximum: 50000 }
      channels:
        type: array
        minItems: 1
        items: { type: string, enum: [email, social, radio] }
      start: { type: string, format: date }
      contact: { type: string, format: email }
      urgent: { type: boolean }
---
How much may the launch spend, where, and from when?
"""


def ask(parley: Cli, owner: str = "maria") -> str:
    parley("save", BRIEF, "-q")
    run_id: str = parley("run", "approve-campaign-brief", "-q", "--input",
                         json.dumps({"owner": owner, "review": "Clear goals."})).out.strip()  # fmt: skip
    return run_id


def test_inbox_lists_the_open_requests(parley: Cli) -> None:
    assert parley("inbox").out == "Nothing waits in the inbox.\n"
    first, second = ask(parley, "maria"), ask(parley, "omar")
    table = parley("inbox").out.splitlines()  # newest first; the manual clock makes them of one moment
    assert table[0].split() == ["RUN", "ID", "FUNCTION", "TO", "ASKS", "EXPIRES", "STANDING"]
    rows = {row.split()[0]: row for row in table[1:]}
    assert set(rows) == {first, second}
    assert " omar " in rows[second] and rows[second].endswith("in_inbox")
    assert " maria " in rows[first] and "The review of your campaign brief is ready:" in rows[first]
    assert sorted(parley("inbox", "-q").out.split()) == sorted([first, second])
    assert parley("inbox", "--to", "maria", "-q").out.split() == [first]
    page = json.loads(parley("inbox", "--json").out)
    assert {each["run_id"] for each in page["interactions"]} == {first, second}
    assert page["interactions"][0]["answer_schema"]["required"] == ["verdict"]


def test_answer_sends_json_and_says_how_the_run_stands(parley: Cli) -> None:
    run_id = ask(parley)
    answered = parley("answer", run_id, '{"verdict": "approve", "note": "Ship it"}')
    assert answered.code == 0, answered.err
    assert answered.out.splitlines() == [
        f'Answered run {run_id} as dev: {{"verdict": "approve", "note": "Ship it"}}',
        'The run succeeded: {"verdict": "approve", "note": "Ship it"}',
    ]
    assert parley("inbox", "-q").out == ""


def test_answer_reads_a_file_or_standard_input_and_prints_json(parley: Cli, tmp_path: Path) -> None:
    from_file = tmp_path / "answer.json"
    from_file.write_text('{"verdict": "revise", "note": "Source the budget"}')
    fact = json.loads(parley("answer", ask(parley), f"@{from_file}", "--json").out)
    assert (
        fact["answer"] == {"verdict": "revise", "note": "Source the budget"} and fact["answered_by"] == "dev"
    )
    piped = parley(
        "answer", ask(parley), "@-", "--claimed-for", "the team", "--json", stdin='{"verdict": "approve"}'
    )
    assert json.loads(piped.out)["claimed_for"] == "the team"


def test_a_refused_answer_is_printed_with_its_pointer_and_the_request_stays(parley: Cli) -> None:
    run_id = ask(parley)
    refused = parley("answer", run_id, '{"verdict": "maybe"}')
    assert refused.code == 1 and refused.out == ""
    assert (
        'Invalid input (422 invalid_input)\n  /answer/verdict: Expected one of "approve", "revise"'
        in refused.err
    )
    assert parley("inbox", "-q").out.split() == [run_id]


def test_answer_without_an_answer_off_a_terminal_says_how_to_give_one(parley: Cli) -> None:
    run_id = ask(parley)
    told = parley("answer", run_id, stdin="")
    assert told.code == 2 and "--interactive" in told.err
    assert parley("answer", run_id, "{nope").code == 2


def test_answer_asks_from_the_schema_and_checks_what_is_typed(parley: Cli, tmp_path: Path) -> None:
    document = tmp_path / "budget-request.md"
    document.write_text(BUDGET)
    assert parley("save", str(document), "-q").code == 0
    run_id = parley("run", "budget-request", "-q").out.strip()
    typed = [
        "500",  # amount: below the minimum, asked again
        "12000",
        "",  # channels: at least one
        "1,2",
        "next week",  # start: not a date
        "2026-11-02",
        "not-an-email",  # contact
        "maria@example.com",
        "y",  # urgent
        "",  # send it: yes
    ]
    answered = parley("answer", run_id, "-i", stdin="\n".join(typed) + "\n")
    assert answered.code == 0, answered.err
    assert "How much may the launch spend" in answered.err
    assert "Type a number at least 1000." in answered.err
    assert "Choose at least one." in answered.err
    assert "Type a date." in answered.err
    assert "Type an email address, such as maria@example.com." in answered.err
    output = json.loads(parley("show", run_id, "--json").out)["output"]
    assert output == {"amount": 12000, "channels": ["email", "social"], "start": "2026-11-02",
                      "contact": "maria@example.com", "urgent": True}  # fmt: skip


def test_an_interactive_answer_not_confirmed_or_cut_short_sends_nothing(parley: Cli) -> None:
    run_id = ask(parley)
    declined = parley("answer", run_id, "-i", stdin="1\n\nn\n")
    assert declined.code == 2 and "Nothing was sent." in declined.err
    cut = parley("answer", run_id, "-i", stdin="1\n")
    assert cut.code == 2 and "nothing was sent" in cut.err
    assert parley("inbox", "-q").out.split() == [run_id]
    gone = parley("answer", "0b7a3c52-6d1e-4f7a-9c55-3a1d2b4c5e6f", "-i", stdin="")
    assert gone.code == 1 and "No open request of run" in gone.err


def test_answer_on_a_terminal_asks_without_being_told(parley: Cli) -> None:
    """The real entry point with a pseudo-terminal as its standard input: no ANSWER, no -i."""
    run_id = ask(parley)
    leader, follower = pty.openpty()
    answering = subprocess.Popen(
        [PARLEY, "answer", run_id], env=parley.env, stdin=follower, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    os.close(follower)
    try:
        os.write(leader, b"2\nMore numbers, please\n\n")
        out, err = answering.communicate(timeout=60)
    finally:
        answering.kill()
        os.close(leader)
    assert answering.returncode == 0, err
    assert "verdict:\n  1) approve\n  2) revise\n" in err
    assert 'The run succeeded: {"verdict": "revise", "note": "More numbers, please"}' in out
