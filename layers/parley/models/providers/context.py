"""What an adapter gets besides the settings and the request: its clients, its clock and the secret
resolver. Kept free of httpx and boto3 imports, so the package's entry point stays light."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx


def same(value: str) -> str:
    """The resolver of values that are the secrets themselves."""
    return value


@dataclass(frozen=True)
class CallContext:
    """``http`` and ``bedrock_client`` are made on first need when not given; ``resolve`` turns a
    configured value (such as a ``{{resolve:secretsmanager:…}}`` reference) into the secret at send
    time; ``google_token`` gives a Vertex access token instead of google-auth's default credentials."""

    http: httpx.Client | None = None
    bedrock_client: Any | None = None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    resolve: Callable[[str], str] = same
    google_token: Callable[[], str] | None = None

    @contextmanager
    def http_client(self) -> Iterator[httpx.Client]:
        """The given client, or the process's shared one (:func:`shared_http_client`)."""
        yield self.http if self.http is not None else shared_http_client()


_shared: list[httpx.Client] = []
_shared_lock = threading.Lock()


def shared_http_client() -> httpx.Client:
    """One HTTP client for every model call of the process, made on first need and kept: a new client
    loads the CA bundle again (about 50 ms of CPU, measured by ``make bench``), and a kept one reuses its
    TLS connections to the provider across a warm function's runs. Timeouts are set per request."""
    with _shared_lock:
        if not _shared:
            import atexit

            import httpx

            client = httpx.Client(limits=httpx.Limits(max_connections=32, max_keepalive_connections=8))
            atexit.register(client.close)
            _shared.append(client)
        return _shared[0]
