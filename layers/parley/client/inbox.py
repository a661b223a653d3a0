"""``parley inbox`` and ``parley answer RUN_ID [ANSWER]`` (issue 29, item 1; ``http-api.md``, "Runs":
``list_interactions``, ``answer_interaction``).

``answer`` sends the answer given (JSON, ``@FILE``, ``@-``); without one, on a terminal (or with
``--interactive``), it finds the run's open request in the inbox and asks the answer from its schema
(``parley.client.prompting``), shows it and sends it once confirmed. After the answer it reads the run,
to say whether it ended or goes on.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any

from parley.client import printing
from parley.client.connection import Connection, ServerProblem
from parley.client.exits import OK, USAGE, CommandError
from parley.client.files import json_value
from parley.client.prompting import Prompter, ask_answer


def inbox(args: argparse.Namespace, connection: Connection) -> int:
    params = {"to": args.to, "type": args.type, "function": args.function, "limit": args.limit,
              "cursor": args.cursor}  # fmt: skip
    page: dict[str, Any] = connection.get("/interactions", params)
    printing.page_of(
        page,
        "interactions",
        as_json=args.json,
        quiet=args.quiet,
        empty="Nothing waits in the inbox.",
        headers=("RUN ID", "FUNCTION", "TO", "ASKS", "EXPIRES", "STANDING"),
        row=lambda each: (
            str(each.get("run_id")),
            f"{each.get('type')} {each.get('function')}",
            printing.clip(str(each.get("to") or "-"), 24),
            _asks(each),
            printing.when(each.get("expires_at")),
            str(each.get("standing")),
        ),
        more="parley inbox",
    )
    return OK


def _asks(request: Mapping[str, Any]) -> str:
    message = str(request.get("message") or "")
    first = next((line.strip() for line in message.splitlines() if line.strip()), "")
    kind = "approval: " if request.get("approval") else "" if request.get("takes_answer", True) else "note: "
    return printing.clip(kind + first, 48)


def open_request(connection: Connection, run_id: str) -> dict[str, Any]:
    """The open request of ``run_id`` in the inbox, page after page; a problem when there is none."""
    cursor: str | None = None
    while True:
        page = connection.get("/interactions", {"limit": 100, "cursor": cursor})
        for each in page.get("interactions") or ():
            if each.get("run_id") == run_id:
                found: dict[str, Any] = each
                return found
        cursor = page.get("next_cursor")
        if not cursor:
            break
    raise ServerProblem(
        404,
        {"title": "Not found", "status": 404, "reason": "not_found",
         "detail": f"No open request of run {run_id} waits in the inbox: it was answered, it expired, "
                   "or the run asks nothing (parley show shows it)."},
    )  # fmt: skip


def answer(args: argparse.Namespace, connection: Connection) -> int:
    if args.answer is not None:
        given = json_value(args.answer, "ANSWER")
    elif args.interactive or sys.stdin.isatty():
        request = open_request(connection, args.run_id)
        prompter = Prompter(_read_line, _write)
        given = ask_answer(request, prompter)
        _write(f"The answer: {json.dumps(given, ensure_ascii=False)}\n")
        if not prompter.yes_no("Send it?", default=True):
            _write("Nothing was sent.\n")
            return USAGE
    else:
        raise CommandError(
            USAGE,
            "Give the answer as JSON (or @FILE, @- for standard input), or --interactive to be asked for it.",
        )
    body: dict[str, Any] = {"answer": given}
    if args.claimed_for is not None:
        body["claimed_for"] = args.claimed_for
    fact: dict[str, Any] = connection.post(f"/runs/{args.run_id}/answer", body)
    if args.json:
        printing.dump_json(fact)
        return OK
    printing.out(
        f"Answered run {args.run_id} as {fact.get('answered_by')}: {printing.compact(fact.get('answer'))}"
    )
    try:
        run: dict[str, Any] = connection.get(f"/runs/{args.run_id}")
    except ServerProblem:
        return OK
    status = run.get("status")
    if status == "succeeded":
        printing.out(f"The run succeeded: {printing.compact(run.get('output'))}")
    elif status in ("rejected", "failed"):
        printing.out(f"The run ended {status}: {printing.rejection_lines(run.get('rejection') or {})[0]}")
    else:
        printing.out(f"The run goes on: parley events {args.run_id} --follow")
    return OK


def _read_line() -> str | None:
    line = sys.stdin.readline()
    return line.rstrip("\n") if line else None


def _write(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()
