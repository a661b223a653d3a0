"""``make demo``: the local server, the demo chat and the demo model in one process, one command, one
Ctrl-C (issue 29, item 3).

The chat and the model are served from background threads of this process (``parley.demo.server.running``,
``parley.demo.model.running``: their own event loops, quiet), and ``parley serve`` runs in the main thread
with ``examples/operator-demo.yaml``, which names them: the tool server ``chat`` on 9001 and the gateway
``demo`` on 9100. Ctrl-C (or SIGTERM) stops the server as ``parley serve`` stops, then the chat and the
model; the last line says so. A port in use is said as each command says it, and nothing is left
running.

Run as ``python -m parley.demo.together`` (what the Makefile does); ``--help`` gives the options.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

__all__ = ["main"]

DEFAULT_CONFIG: Final = Path("examples/operator-demo.yaml")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m parley.demo.together",
        description="Serve Parley, the demo chat and the demo model at once; Ctrl-C stops all three.",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address all three listen on (default: 127.0.0.1)"
    )
    parser.add_argument("--port", type=int, default=8000, help="Parley's port (default: 8000)")
    parser.add_argument(
        "--config",
        type=Path,
        default=DEFAULT_CONFIG,
        metavar="FILE",
        help=f"operator configuration naming the chat and the model (default: {DEFAULT_CONFIG})",
    )
    parser.add_argument("--clock", choices=("real", "manual"), default="real", help="as parley serve's")
    parser.add_argument(
        "--data", default=".parley", metavar="DIR", help="as parley serve's (default: .parley)"
    )
    parser.add_argument(
        "--chat-port",
        type=int,
        default=9001,
        help="the demo chat's port (default: 9001, as the configuration's url)",
    )
    parser.add_argument(
        "--model-port",
        type=int,
        default=9100,
        help="the demo model's port (default: 9100, as the configuration's base_url)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from parley.demo.model import DemoModelOptions
    from parley.demo.model import running as model_running
    from parley.demo.server import PORT_HINT, DemoChatOptions
    from parley.demo.server import running as chat_running
    from parley.listening import listen_failure
    from parley.local.server import ServeOptions, serve

    with contextlib.ExitStack() as stack:
        try:
            chat = stack.enter_context(chat_running(DemoChatOptions(args.host, args.chat_port)))
        except OSError as exc:
            print(
                f"parley demo-chat: {listen_failure(args.host, args.chat_port, exc, PORT_HINT)}",
                file=sys.stderr,
            )
            return 1
        print(
            f"The demo chat is serving {chat.url} (MCP endpoint {chat.mcp_url}; "
            f"open {chat.url}/ to read and reply).",
            flush=True,
        )
        try:
            model = stack.enter_context(model_running(DemoModelOptions(args.host, args.model_port)))
        except OSError as exc:
            print(
                f"parley demo-model: {listen_failure(args.host, args.model_port, exc, PORT_HINT)}",
                file=sys.stderr,
            )
            return 1
        print(
            f"The demo model is serving {model.url} (OpenAI-compatible base URL {model.openai_base_url}).",
            flush=True,
        )
        data = None if args.data.lower() == "none" else Path(args.data)
        code = serve(
            ServeOptions(host=args.host, port=args.port, config=args.config, clock=args.clock, data=data)
        )
    print("The demo chat and the demo model stopped.", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
