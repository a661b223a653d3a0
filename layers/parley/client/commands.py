"""The client commands run: the connection opened from the settings, the command called, and its
failures turned into their exit codes (``parley.client.exits``): a server's problem printed with its
line and pointer (1), a command line that cannot be used (2), no server (3), Ctrl-C (130)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Final

from parley.client import printing
from parley.client.connection import Connection, ServerProblem
from parley.client.exits import INTERRUPTED, PROBLEM, CommandError
from parley.client.settings import Settings, settings_from

Command = Callable[[argparse.Namespace, Connection], int]


def _commands() -> dict[str, Command]:
    from parley.client import connections, definitions, inbox, runs

    return {
        "save": definitions.save,
        "run": definitions.run,
        "inbox": inbox.inbox,
        "answer": inbox.answer,
        "runs": runs.runs,
        "show": runs.show,
        "events": runs.events,
        "send-event": runs.send_event,
        "connections": connections.connections,
        "connection": connections.connection,
    }


#: The commands of the org rather than of a playbook (its connections).
ORG_COMMANDS: Final = frozenset({"connections", "connection"})

HINTS: Final = {
    401: "The token ({how}) is not valid at {url}: give one with --token or PARLEY_TOKEN.",
    403: "The token ({how}) may read this playbook but not write it.",
}


def run_command(args: argparse.Namespace) -> int:
    settings = settings_from(args.url, args.token, args.org, getattr(args, "playbook", None))
    command = _commands()[args.command]
    try:
        with Connection(settings) as connection:
            return command(args, connection)
    except ServerProblem as problem:
        if args.json:
            printing.dump_json(problem.problem)
        printing.print_problem(problem.problem, problem.status, source=problem.source)
        _hint(problem, settings, org_only=args.command in ORG_COMMANDS)
        return PROBLEM
    except CommandError as error:
        action = getattr(args, "action", None)
        printing.err(f"parley {args.command}{' ' + action if action else ''}: {error.message}")
        return error.code
    except KeyboardInterrupt:
        return INTERRUPTED


def _hint(problem: ServerProblem, settings: Settings, *, org_only: bool = False) -> None:
    """A line on what to change, after a problem: the token of a ``401``; a playbook's ``403`` and
    ``404`` (not for the org's commands, whose problem says which grant they take)."""
    if org_only and problem.status != 401:
        return
    hint = HINTS.get(problem.status)
    if hint:
        printing.err(hint.format(how=settings.token_from, url=settings.url))
    elif (
        problem.status == 404
        and problem.reason == "not_found"
        and "playbook" in str(problem.problem.get("detail"))
    ):
        printing.err(f"(the org {settings.org}, the playbook {settings.playbook}: --org, --playbook)")
