"""The client commands' options (issue 29, item 1), added to ``parley``'s parser beside ``serve``.

Only ``argparse`` is imported here, so that ``parley --help`` stays quick; :func:`dispatch` imports the
command that runs. Every client command takes the connection's options (``--url``, ``--token``,
``--org``, ``--playbook``, read from ``PARLEY_*`` when left out) and ``--json``.
"""

from __future__ import annotations

import argparse
from typing import Final

from parley.client.exits import DESCRIPTION

#: The commands of this package, for ``parley.cli`` to tell them from ``serve`` and the demos.
COMMANDS: Final = (
    "save", "run", "inbox", "answer", "runs", "show", "events", "send-event", "connections", "connection"
)  # fmt: skip
TYPES: Final = ("interaction", "reasoning", "workflow")
_F: Final = argparse.RawDescriptionHelpFormatter


def _connection_options(*, playbook: bool = True) -> argparse.ArgumentParser:
    """The options of where and as whom; the connections' commands are the org's, without
    ``--playbook`` (``connection add --playbook`` names the playbooks that see the connection)."""
    common = argparse.ArgumentParser(add_help=False)
    where = common.add_argument_group("where and as whom")
    where.add_argument(
        "--url", help="the Parley server (default: $PARLEY_URL, else http://127.0.0.1:8000, the local server)"
    )
    where.add_argument(
        "--token",
        help="the bearer token (default: $PARLEY_TOKEN, else dev-token of examples/operator.yaml for a "
        "server on this machine)",
    )
    where.add_argument("--org", help="the org (default: $PARLEY_ORG, else acme)")
    if playbook:
        where.add_argument("--playbook", help="the playbook (default: $PARLEY_PLAYBOOK, else campaigns)")
    common.add_argument("--json", action="store_true", help="print the server's JSON, for scripts")
    return common


def _positive(value: str) -> float:
    number = float(value)
    if not number > 0:
        raise argparse.ArgumentTypeError(f"{value} is not a number of seconds above 0")
    return number


def _limit(value: str) -> int:
    number = int(value)
    if not 1 <= number <= 100:
        raise argparse.ArgumentTypeError(f"{value} is not from 1 to 100")
    return number


def _quiet(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("-q", "--quiet", action="store_true", help=f"print only {what}")


def _paging(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=_limit, help="how many, 1 to 100 (default: the server's, 50)")
    parser.add_argument("--cursor", help="the next page, as the last one's 'More:' line names it")


def _following(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--interval", type=_positive, default=1.0, metavar="SECONDS", help="how often to look (default: 1)"
    )
    parser.add_argument(
        "--timeout",
        type=_positive,
        metavar="SECONDS",
        help="give up after this long (exit 5; the run goes on)",
    )


def add_client_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    common = _connection_options()

    def command(name: str, summary: str, description: str) -> argparse.ArgumentParser:
        return commands.add_parser(
            name,
            help=summary,
            description=description,
            epilog=DESCRIPTION,
            parents=[common],
            formatter_class=_F,
        )

    save = command(
        "save",
        "save a definition from a file (create it, or update it when its name is taken)",
        "Save FILE as a definition of the playbook: created, or updated when its name is taken (a source\n"
        "that has not changed makes no new version). The name is the file's name without its suffix\n"
        "(approve-campaign-brief.md: approve-campaign-brief) unless --name; the type is read from the\n"
        "file: Markdown with front matter is a reasoning function when it names a model (or config,\n"
        "tools, ask, approve, provider_options), else an interaction function; YAML with document: is a\n"
        "workflow. Prints the overview and any warnings; a problem names its line and pointer.",
    )
    save.add_argument(
        "file", metavar="FILE", help="the document: Markdown with front matter, or a workflow's YAML"
    )
    save.add_argument("--name", help="the definition's name (default: the file's name without its suffix)")
    save.add_argument("--type", choices=TYPES, help="the definition's type (default: read from the file)")
    _quiet(save, "the line that says what was saved (no overview)")

    run = command(
        "run",
        "run a definition",
        "Run the definition NAME (its type found by the name; --type where two types share it). Prints\n"
        "the run: its id and status, its output once it succeeded. --wait follows it until it ends,\n"
        "printing its history as it happens.",
    )
    run.add_argument("name", metavar="NAME", help="the definition's name")
    run.add_argument(
        "--input", metavar="JSON|@FILE", help="the run's input: JSON, @FILE, or @- for standard input"
    )
    run.add_argument("--type", choices=TYPES, help="the definition's type, where several have the name")
    run.add_argument("--run-id", metavar="UUID", help="the run's id, to retry safely (default: a new one)")
    run.add_argument(
        "--wait", action="store_true", help="follow the run until it ends (exit 4 if it did not succeed)"
    )
    _following(run)
    _quiet(run, "the run's id")

    inbox = command(
        "inbox",
        "list the open requests that wait for an answer",
        "List the playbook's open requests, newest first: the run that asks, the function, whom it asks,\n"
        "the first words of its message, when it expires and how its delivery stands.",
    )
    inbox.add_argument("--to", help="only those to this party")
    inbox.add_argument("--type", choices=("interaction", "reasoning"), help="only those of this type")
    inbox.add_argument("--function", metavar="NAME", help="only those of this function")
    _paging(inbox)
    _quiet(inbox, "the run ids")

    answer = command(
        "answer",
        "answer a run's open request",
        "Answer the open request of RUN_ID with ANSWER (JSON, @FILE, or @- for standard input), such as\n"
        '\'{"verdict": "approve"}\'. Without ANSWER, on a terminal (or with --interactive), the request\n'
        "is shown and its answer asked for, field by field, from its answer schema, then sent once you\n"
        "confirm it.",
    )
    answer.add_argument("run_id", metavar="RUN_ID", help="the run whose request is answered")
    answer.add_argument("answer", metavar="ANSWER", nargs="?", help="the answer: JSON, @FILE or @-")
    answer.add_argument("--claimed-for", metavar="TEXT", help="on whose behalf the answer is given")
    answer.add_argument(
        "-i",
        "--interactive",
        action="store_true",
        help="ask for the answer even when standard input is not a terminal",
    )

    runs = command("runs", "list runs, newest first", "List the playbook's runs, newest first.")
    runs.add_argument("--type", choices=TYPES, help="only runs of this type")
    runs.add_argument("--name", help="only runs of this definition")
    runs.add_argument(
        "--status", choices=("started", "succeeded", "rejected", "failed"), help="only runs in this status"
    )
    _paging(runs)
    _quiet(runs, "the run ids")

    show = command(
        "show",
        "show a run: its status, output and history",
        "Show the run RUN_ID: its function, status, output or rejection, parent and what it waits for,\n"
        "then its history as a timeline. --json prints the run as the server gives it, with its record.",
    )
    show.add_argument("run_id", metavar="RUN_ID", help="the run")

    events = command(
        "events",
        "print a run's history; --follow until it ends",
        "Print the history of RUN_ID, an event a line (JSON Lines with --json). --follow goes on printing\n"
        "events as they happen until the run ends, and exits as it ended (4 if rejected or failed).",
    )
    events.add_argument("run_id", metavar="RUN_ID", help="the run")
    events.add_argument("-f", "--follow", action="store_true", help="go on until the run ends")
    _following(events)

    send = command(
        "send-event",
        "send an event to a workflow run",
        "Send an event of TYPE, with DATA (JSON, @FILE or @-), to the workflow run RUN_ID, for its listen\n"
        "tasks. An event sent again with the same --id is taken once.",
    )
    send.add_argument("run_id", metavar="RUN_ID", help="the workflow run")
    send.add_argument("event_type", metavar="TYPE", help="the event's type, such as launch.decided")
    send.add_argument("data", metavar="DATA", nargs="?", help="the event's data: JSON, @FILE or @-")
    send.add_argument("--id", help="the event's id, so that sending it again takes it once")
    send.add_argument("--source", help="the event's source (default: the server names the caller)")
    send.add_argument("--subject", help="the event's subject")

    _connection_commands(commands)


def _connection_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``connections`` and ``connection ACTION`` (issue 32), the org's MCP servers."""
    common = _connection_options(playbook=False)

    listing = commands.add_parser(
        "connections",
        help="list the org's connections: the MCP servers people added",
        description="List the connections of the org: the MCP servers people added to it, with their\n"
        "status (pending, active, broken, not_allowed), how they authenticate, their URL and the\n"
        "playbooks that see them. Never a header or a token.",
        epilog=DESCRIPTION,
        parents=[common],
        formatter_class=_F,
    )
    _quiet(listing, "the names")

    one = commands.add_parser(
        "connection",
        help="add, show, approve, authorize or remove a connection of the org",
        description="Add an MCP server to the org, show one, approve it (the org's admin), authorize it\n"
        "through OAuth, or remove it. The org's functions name its tools as they name a tool server's\n"
        "(tools: [notes/search]) once it is active.",
        epilog=DESCRIPTION,
        formatter_class=_F,
    )
    actions = one.add_subparsers(dest="action", metavar="ACTION", required=True)

    def action(name: str, summary: str, description: str) -> argparse.ArgumentParser:
        made = actions.add_parser(
            name,
            help=summary,
            description=description,
            epilog=DESCRIPTION,
            parents=[common],
            formatter_class=_F,
        )
        made.add_argument("name", metavar="NAME", help="the connection's name, as functions name it (notes)")
        return made

    add = action(
        "add",
        "add an MCP server to the org",
        "Add the MCP server at URL (its streamable-HTTP endpoint) to the org as NAME. It is pending until\n"
        "an admin of the org approves it, unless the operator approves every connection. Header values\n"
        "are secrets, kept by the server and never shown: give them from an environment variable\n"
        "(--header-from-env Authorization=NOTES_TOKEN) or typed without echo (--header-prompt\n"
        "Authorization), so that they stay out of the shell's history.",
    )
    add.add_argument(
        "server_url", metavar="URL", help="the server's MCP endpoint, such as https://notes.acme.example/mcp"
    )
    add.add_argument(
        "--header",
        action="append",
        metavar="'NAME: VALUE'",
        help="a header sent to the server, value and all (it stays in the shell's history); repeatable",
    )
    add.add_argument(
        "--header-from-env",
        action="append",
        metavar="NAME=VARIABLE",
        help="a header whose value is the environment variable VARIABLE's; repeatable",
    )
    add.add_argument(
        "--header-prompt",
        action="append",
        metavar="NAME",
        help="a header whose value is typed at the terminal, not shown; repeatable",
    )
    add.add_argument(
        "--playbook",
        dest="playbook_of",
        action="append",
        metavar="PLAYBOOK",
        help="a playbook that sees the connection; repeatable (default: every playbook of the org)",
    )
    action(
        "show",
        "show a connection",
        "Show the connection NAME: its URL, status, auth, playbooks, who added and approved it.",
    )
    action(
        "approve",
        "approve a pending connection (the org's admin)",
        "Approve the pending connection NAME, so that the org's functions may use its tools. It takes the\n"
        "org's admin grant ({org: acme, role: admin} in the operator configuration).",
    )
    authorize = action(
        "authorize",
        "authorize a connection through OAuth: print the page to open",
        "Start the OAuth authorization of the connection NAME (a server that answers 401 with the MCP\n"
        "authorization flow): prints the authorization server's page to open, valid 10 minutes and once.\n"
        "Signing in there comes back to Parley, which keeps the tokens. --open opens it in the browser.",
    )
    authorize.add_argument("--open", action="store_true", help="open the page in the browser as well")
    action(
        "remove",
        "remove a connection and its secrets",
        "Remove the connection NAME and its secrets. The org's admin removes any; a writer the ones they\n"
        "added.",
    )


def dispatch(args: argparse.Namespace) -> int:
    """Run the client command ``args.command``; its exit code."""
    from parley.client.commands import run_command

    return run_command(args)
