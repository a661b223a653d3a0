"""The ``parley`` command: ``parley serve`` runs the local server (``http-api.md``, "Local server");
``parley demo-chat`` runs the demo chat tool server (``docs/demo-chat.md``); ``parley demo-model`` runs
a deterministic model to try reasoning functions offline (``parley.demo.model``); ``save``, ``run``,
``inbox``, ``answer``, ``runs``, ``show``, ``events`` and ``send-event`` are a client of a Parley server
(``parley.client``, ``docs/cli.md``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from parley.client.exits import DESCRIPTION as EXIT_CODES
from parley.client.parser import COMMANDS as CLIENT_COMMANDS
from parley.client.parser import add_client_commands, dispatch


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parley",
        description="Parley: functions that ask people and systems, and functions that reason.",
        epilog="The client commands (save … send-event) reach http://127.0.0.1:8000 with the example "
        "token unless --url/--token or PARLEY_URL/PARLEY_TOKEN say otherwise; see docs/cli.md.\n\n"
        + EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, help="print the version of Parley and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    serve = commands.add_parser(
        "serve",
        help="serve the whole HTTP API on this machine, with AWS emulated in process",
        description="Serve the HTTP API locally: the same handlers as on AWS, DynamoDB in moto. "
        "It answers 32 requests at once; up to 1,024 more wait their turn, each at most 30 s, before a 503 "
        "with Retry-After. It answers only requests whose Host names it (its address, localhost, "
        "127.0.0.1, or an --allow-host name), so that other websites cannot drive it. One server keeps a "
        "data folder at a time. Stops cleanly on SIGTERM or Ctrl-C.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    serve.add_argument(
        "--port", type=int, default=8000, help="port to listen on (default: 8000; 0 picks one)"
    )
    serve.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="operator configuration YAML: principals, tool servers, limits (see examples/operator.yaml)",
    )
    serve.add_argument(
        "--clock",
        choices=("real", "manual"),
        default="real",
        help="manual: time stands still until POST /_local/clock/advance (with a writer's token) moves it "
        "(default: real)",
    )
    serve.add_argument(
        "--data",
        default=".parley",
        metavar="DIR",
        help="folder where definitions, runs, requests, pending work and the manual clock are kept across "
        "restarts (default: .parley of the current folder; 'none': forget everything when it stops); "
        "locked while the server runs",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        type=_allowed_host,
        metavar="NAME",
        help="also answer requests whose Host header is NAME (any port) or NAME:PORT, such as the name of "
        "a proxy or container in front of the server; repeatable (default: only the address it listens "
        "on, localhost and 127.0.0.1)",
    )
    add_demo_chat(commands)
    add_demo_model(commands)
    add_client_commands(commands)
    return parser


class _Version(argparse.Action):
    """``--version``: the installed package's version, read only when asked (not at every start)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from importlib.metadata import version

        print(f"parley {version('parley')}")
        parser.exit()


def _allowed_host(value: str) -> str:
    from parley.local.request_guard import allow_host_value

    try:
        return allow_host_value(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_demo_chat(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = commands.add_parser(
        "demo-chat",
        help="serve a chat tool server (MCP) to deliver to and answer from, with a page at /",
        description="Serve the demo chat: its MCP endpoint at /mcp (post_message, thread_replies, "
        "channel_messages, list_channels), a page at / to read threads and reply as a user, and `reply` to "
        "answer from the terminal. Everything is kept in memory. Stops cleanly on SIGTERM or Ctrl-C.",
    )
    demo.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    demo.add_argument("--port", type=int, default=9001, help="port to listen on (default: 9001; 0 picks one)")
    actions = demo.add_subparsers(dest="demo_command", metavar="ACTION")
    reply = actions.add_parser(
        "reply",
        help="post a reply in a thread as a user, from the terminal",
        description="Post TEXT as USER in the thread of THREAD (a message's ts) in CHANNEL.",
    )
    reply.add_argument(
        "--url", help="the demo chat (default: http://HOST:PORT, from --host and --port; 127.0.0.1:9001)"
    )
    reply.add_argument(
        "--port",
        type=int,
        dest="reply_port",
        help="the demo chat's port (default: 9001), as demo-chat --port",
    )
    reply.add_argument("--channel", required=True, help="the channel, such as maria")
    reply.add_argument(
        "--thread", metavar="TS", help="the thread's first message (its ts); left out: the channel"
    )
    reply.add_argument("--user", required=True, help="who replies, such as maria")
    reply.add_argument("text", help="the reply, such as 'approve, looks good'")


def add_demo_model(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = commands.add_parser(
        "demo-model",
        help="serve a deterministic model (OpenAI-compatible and Anthropic APIs) to try reasoning offline",
        description="Serve the demo model: an OpenAI-compatible Chat Completions endpoint (base URL "
        "http://HOST:PORT/v1, the gateway demo of examples/operator.yaml) and an Anthropic Messages one "
        "(base URL http://HOST:PORT/anthropic). It restates the message, writes JSON that matches the "
        "requested schema, and calls a tool the message names. Stops cleanly on SIGTERM or Ctrl-C.",
    )
    demo.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    demo.add_argument("--port", type=int, default=9100, help="port to listen on (default: 9100; 0 picks one)")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in CLIENT_COMMANDS:
        return dispatch(args)
    if args.command == "serve":
        from parley.local.server import ServeOptions, serve

        data = None if args.data.lower() == "none" else Path(args.data)
        return serve(
            ServeOptions(
                host=args.host,
                port=args.port,
                config=args.config,
                clock=args.clock,
                data=data,
                allow_hosts=tuple(args.allow_host),
            )
        )
    if args.command == "demo-chat":
        if args.demo_command == "reply":
            from parley.demo.reply import ReplyOptions, chat_url, reply

            url = chat_url(args.url, args.host, args.reply_port or args.port)
            return reply(ReplyOptions(url, args.channel, args.thread, args.user, args.text))
        from parley.demo.server import DemoChatOptions
        from parley.demo.server import serve as serve_demo_chat

        return serve_demo_chat(DemoChatOptions(host=args.host, port=args.port))
    if args.command == "demo-model":
        from parley.demo.model import DemoModelOptions
        from parley.demo.model import serve as serve_demo_model

        return serve_demo_model(DemoModelOptions(host=args.host, port=args.port))
    return 2  # pragma: no cover - argparse refuses unknown commands


if __name__ == "__main__":
    sys.exit(main())
