"""What a command that listens says when it cannot: a port in use names the way out."""

from __future__ import annotations

import errno


def listen_failure(host: str, port: int, exc: OSError, hint: str) -> str:
    """The words for ``exc``, raised while listening on ``host:port``; ``hint`` says how to choose
    another port (used when the port is in use)."""
    if exc.errno == errno.EADDRINUSE:
        return (
            f"port {port} on {host} is in use (another one running?); stop it, or choose another port: {hint}"
        )
    return f"cannot listen on {host}:{port}: {exc}"
