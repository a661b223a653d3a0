"""The ``parley`` command: ``parley serve`` runs the local server (``http-api.md``, "Local server")."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parley",
        description="Parley: functions that ask people and systems, and functions that reason.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    serve = commands.add_parser(
        "serve",
        help="serve the whole HTTP API on this machine, with AWS emulated in process",
        description="Serve the HTTP API locally: the same handlers as on AWS, DynamoDB in moto. "
        "Stops cleanly on SIGTERM or Ctrl-C.",
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
        help="manual: time stands still until POST /_local/clock/advance moves it (default: real)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        from parley.local.server import ServeOptions, serve

        return serve(ServeOptions(host=args.host, port=args.port, config=args.config, clock=args.clock))
    return 2  # pragma: no cover - argparse refuses unknown commands


if __name__ == "__main__":
    sys.exit(main())
