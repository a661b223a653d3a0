"""``parley runs``, ``parley show RUN_ID``, ``parley events RUN_ID [--follow]`` and ``parley send-event
RUN_ID TYPE [DATA]`` (issue 29, item 1; ``http-api.md``, "Runs").

``show`` is the run (status, output or rejection, parent, what it waits for) and its history as a
timeline; its ``--json`` is the run as ``get_run`` answers it, with its ``record``. ``events`` prints the
history, one event a line, as JSON Lines with ``--json`` (so that ``--follow`` streams), and with
``--follow`` goes on until the run ends, ending as the run did (exit 4 for ``rejected`` or ``failed``).
"""

from __future__ import annotations

import argparse
from typing import Any

from parley.client import printing
from parley.client.connection import Connection
from parley.client.exits import OK, RUN_ENDED_BADLY
from parley.client.files import json_value
from parley.client.following import follow, history


def runs(args: argparse.Namespace, connection: Connection) -> int:
    params = {"type": args.type, "name": args.name, "status": args.status, "limit": args.limit,
              "cursor": args.cursor}  # fmt: skip
    page: dict[str, Any] = connection.get("/runs", params)
    printing.page_of(
        page,
        "runs",
        as_json=args.json,
        quiet=args.quiet,
        empty="No runs.",
        headers=("RUN ID", "FUNCTION", "STATUS", "STARTED", "ENDED"),
        row=lambda each: (
            str(each.get("run_id")),
            f"{each.get('type')} {each.get('name')}",
            str(each.get("status")),
            printing.when(each.get("started_at")),
            printing.when(each.get("finished_at")),
        ),
        more="parley runs",
    )
    return OK


def show(args: argparse.Namespace, connection: Connection) -> int:
    run: dict[str, Any] = connection.get(f"/runs/{args.run_id}")
    if args.json:
        printing.dump_json(run)
        return OK
    parent = run.get("parent")
    waiting = run.get("waiting")
    printing.fields(
        (
            ("Run", str(run.get("run_id"))),
            ("Function", printing.function_of(run)),
            ("Status", str(run.get("status"))),
            ("Started", f"{printing.when(run.get('started_at'))} by {run.get('started_by')}"),
            ("Ended", printing.when(run["finished_at"]) if run.get("finished_at") else None),
            (
                "Parent",
                f"{parent.get('run_id')} (task {parent.get('task')})" if isinstance(parent, dict) else None,
            ),
            (
                "Waits",
                f"for {waiting.get('for')} since {printing.when(waiting.get('since'))}, until "
                f"{printing.when(waiting.get('expires_at'))}"
                if isinstance(waiting, dict)
                else None,
            ),
        )
    )
    if "output" in run:
        printing.out("Output")
        printing.out(printing.indented(printing.output_text(run["output"])))
    if isinstance(run.get("rejection"), dict):
        printing.out("Rejection")
        for line in printing.rejection_lines(run["rejection"]):
            printing.out("  " + line)
    if run.get("record") is not None:
        printing.out(
            f"Record\n  {printing.record_summary(run['record'])} (parley show --json shows it whole)"
        )
    printing.out("History")
    for event in history(connection, args.run_id):
        printing.out("  " + printing.event_line(event))
    return OK


def events(args: argparse.Namespace, connection: Connection) -> int:
    def shown(event: dict[str, Any]) -> None:
        if args.json:
            printing.dump_json(event, line=True)
        else:
            print(printing.event_line(event), flush=True)

    if not args.follow:
        for event in history(connection, args.run_id):
            shown(event)
        return OK
    try:
        ended = follow(connection, args.run_id, shown, interval=args.interval, timeout=args.timeout)
    except KeyboardInterrupt:
        printing.err(f"Stopped following; the run goes on: parley show {args.run_id}")
        raise
    if not args.json:
        printing.err(f"The run {ended.get('status')}.")
    return OK if ended.get("status") == "succeeded" else RUN_ENDED_BADLY


def send_event(args: argparse.Namespace, connection: Connection) -> int:
    body: dict[str, Any] = {"type": args.event_type}
    if args.data is not None:
        body["data"] = json_value(args.data, "DATA")
    for key in ("id", "source", "subject"):
        if getattr(args, key) is not None:
            body[key] = getattr(args, key)
    sent: dict[str, Any] = connection.post(f"/runs/{args.run_id}/events", body)
    if args.json:
        printing.dump_json(sent)
    else:
        printing.out(
            f"Sent {args.event_type} to run {sent.get('run_id')}: event {sent.get('event_id')}, received at "
            f"{printing.when(sent.get('received_at'))}."
        )
    return OK
