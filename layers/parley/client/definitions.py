"""``parley save FILE`` and ``parley run NAME`` (issue 29, item 1; ``http-api.md``, "Definitions").

``save`` creates the definition (``create_definition``) and, when its name is taken, updates it
(``update_definition``), saying whether a new version was made. ``run`` finds the type by the name
(``get_definition`` of each type) unless ``--type`` names it, and sends a run id of its own making
(``--run-id`` to give one), so that a problem can be told apart: a run that was recorded and ended
``rejected`` (exit 4) from a request the server refused (exit 1).
"""

from __future__ import annotations

import argparse
import uuid
from typing import Any

from parley.client import printing
from parley.client.connection import Connection, ServerProblem
from parley.client.exits import OK, RUN_ENDED_BADLY, USAGE, CommandError
from parley.client.files import TYPES, json_value, name_of, read_text, type_of
from parley.client.following import ENDED, follow


def save(args: argparse.Namespace, connection: Connection) -> int:
    source = read_text(args.file)
    name = args.name or name_of(args.file)
    kind = args.type or type_of(source, args.file)
    try:
        try:
            saved = connection.post(f"/definitions/{kind}", {"name": name, "source": source})
            verb = "Created"
        except ServerProblem as problem:
            if problem.reason != "conflict":
                raise
            before = connection.get(f"/definitions/{kind}/{name}")
            saved = connection.put(f"/definitions/{kind}/{name}", {"source": source})
            verb = "Updated" if saved.get("version") != before.get("version") else "Unchanged"
    except ServerProblem as problem:
        problem.source = args.file
        raise
    if args.json:
        printing.dump_json(saved)
        return OK
    same = " (the same source)" if verb == "Unchanged" else ""
    printing.out(f"{verb} {kind} {name}, version {saved.get('version')}{same}.")
    for warning in saved.get("warnings") or ():
        printing.err(f"warning: {_warning_text(warning, args.file)}")
    if not args.quiet and saved.get("overview"):
        printing.out()
        printing.out(str(saved["overview"]).rstrip())
    return OK


def _warning_text(warning: Any, path: str) -> str:
    """A save's warning (``Line 8, /output/schema/…: …``) as ``FILE:8: /output/schema/…: …``."""
    if isinstance(warning, dict):
        return printing.error_line({"pointer": warning.get("pointer"), "detail": warning.get("detail")}, path)
    return printing.error_line({"pointer": "/source", "detail": str(warning)}, path)


def find_type(connection: Connection, name: str) -> str:
    """The type of the definition named ``name``: a usage error when several types hold it, the
    server's ``not_found`` (as a problem) when none does."""
    found = []
    for kind in TYPES:
        try:
            connection.get(f"/definitions/{kind}/{name}")
        except ServerProblem as problem:
            if problem.status == 404:
                continue
            raise
        found.append(kind)
    if len(found) > 1:
        raise CommandError(
            USAGE, f"{name} is the name of a {' and a '.join(found)}: say which with --type {found[0]}."
        )
    if not found:
        raise ServerProblem(
            404,
            {"title": "Not found", "status": 404, "reason": "not_found",
             "detail": f"This playbook has no interaction, reasoning or workflow named '{name}'."},
        )  # fmt: skip
    return found[0]


def run(args: argparse.Namespace, connection: Connection) -> int:
    body: dict[str, Any] = {"run_id": args.run_id or str(uuid.uuid4())}
    if args.input is not None:
        body["input"] = json_value(args.input, "--input")
    kind = args.type or find_type(connection, args.name)
    try:
        started: dict[str, Any] = connection.post(f"/definitions/{kind}/{args.name}/run", body)
    except ServerProblem as problem:
        return _refused(connection, body["run_id"], problem, args)
    if args.quiet and not args.json:
        printing.out(str(started["run_id"]))
    elif not args.json:
        printing.out(f"Run {started['run_id']}: {printing.function_of(started)}, {started.get('status')}.")
    if not args.wait or started.get("status") in ENDED:
        if args.json:
            printing.dump_json(started)
        elif not args.quiet:
            _tell_end(started)
        return OK if started.get("status") != "failed" else RUN_ENDED_BADLY
    try:
        ended = follow(
            connection,
            str(started["run_id"]),
            (lambda event: None)
            if args.json or args.quiet
            else lambda e: printing.out(printing.event_line(e)),
            interval=args.interval,
            timeout=args.timeout,
        )
    except KeyboardInterrupt:
        printing.err(f"Stopped waiting; the run goes on: parley show {started['run_id']}")
        raise
    if args.json:
        printing.dump_json(ended)
    elif not args.quiet:
        _tell_end(ended)
    return OK if ended.get("status") == "succeeded" else RUN_ENDED_BADLY


def _refused(connection: Connection, run_id: str, problem: ServerProblem, args: argparse.Namespace) -> int:
    """A run's problem: the run rejected (recorded under its id: exit 4), or the request refused."""
    try:
        recorded: dict[str, Any] | None = connection.get(f"/runs/{run_id}")
    except ServerProblem:
        recorded = None
    if recorded is None or recorded.get("status") not in ("rejected", "failed"):
        raise problem
    if args.quiet and not args.json:
        printing.out(run_id)
    if args.json:
        printing.dump_json(recorded)
    printing.err(f"Run {run_id}: {printing.function_of(recorded)}, {recorded.get('status')}.")
    printing.print_problem(problem.problem, problem.status)
    return RUN_ENDED_BADLY


def _tell_end(run: dict[str, Any]) -> None:
    """What people need once a run answered: its output, its rejection, or how to follow it."""
    status = run.get("status")
    run_id = run.get("run_id")
    if status == "succeeded":
        printing.out(f"Succeeded. Output:\n{printing.indented(printing.output_text(run.get('output')))}")
    elif status in ("rejected", "failed"):
        printing.out(f"It ended {status}:")
        for line in printing.rejection_lines(run.get("rejection") or {}):
            printing.out("  " + line)
    else:
        waiting = run.get("waiting")
        if isinstance(waiting, dict):
            printing.out(
                f"It waits for {waiting.get('for')} until {printing.when(waiting.get('expires_at'))}."
            )
        printing.out(f"Follow it: parley events {run_id} --follow (its requests: parley inbox)")
