"""The connection to a Parley server: one ``httpx`` client with the bearer token, JSON in and out, and
the two ways a request fails: :class:`ServerProblem` (the server answered with a problem document,
RFC 9457) and :class:`~parley.client.exits.CommandError` with ``UNREACHABLE`` (nothing answered, or
something that is not Parley did).

A read waits up to five minutes: ``run_definition`` of a reasoning function answers when the run ends,
up to the server's run wait (25 s by default, but an operator may raise it).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from parley.client.exits import UNREACHABLE, CommandError
from parley.client.settings import Settings

if TYPE_CHECKING:
    import httpx

CONNECT_SECONDS: Final = 10.0
READ_SECONDS: Final = 300.0


class ServerProblem(Exception):
    """The server's problem document (``http-api.md``, "Problems") and the response's status."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(problem.get("detail") or problem.get("title") or f"HTTP {status}")
        self.status = status
        self.problem = problem
        #: The file a document's problem is about (``parley save``), to print its lines as FILE:LINE.
        self.source: str | None = None

    @property
    def reason(self) -> str:
        return str(self.problem.get("reason") or "")


class Connection:
    """Requests to one playbook of one server (paths relative to the playbook's base, or absolute when
    they start with ``/v1/``)."""

    def __init__(self, settings: Settings, transport: httpx.BaseTransport | None = None) -> None:
        import httpx

        self.settings = settings
        headers = {"Accept": "application/json", "User-Agent": "parley-cli"}
        if settings.token:
            headers["Authorization"] = f"Bearer {settings.token}"
        self._http = httpx.Client(
            base_url=settings.url,
            headers=headers,
            timeout=httpx.Timeout(READ_SECONDS, connect=CONNECT_SECONDS),
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def path(self, route: str) -> str:
        return route if route.startswith("/v1/") else self.settings.playbook_path + route

    def get(self, route: str, params: dict[str, Any] | None = None) -> Any:
        kept = {key: value for key, value in (params or {}).items() if value is not None}
        return self.request("GET", route, params=kept)

    def post(self, route: str, body: Any) -> Any:
        return self.request("POST", route, body=body)

    def put(self, route: str, body: Any) -> Any:
        return self.request("PUT", route, body=body)

    def request(
        self, method: str, route: str, *, params: dict[str, Any] | None = None, body: Any = None
    ) -> Any:
        """The JSON body of a success; :class:`ServerProblem` for a problem; ``CommandError`` with
        ``UNREACHABLE`` when no Parley server answered."""
        import httpx

        content = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"} if content is not None else {}
        url = self.settings.url
        try:
            reply = self._http.request(
                method, self.path(route), params=params, content=content, headers=headers
            )
        except httpx.TimeoutException:
            raise CommandError(UNREACHABLE, f"{url} did not answer in time.") from None
        except httpx.TransportError as exc:
            raise CommandError(
                UNREACHABLE,
                f"Nothing answers at {url} ({_why(exc)}). Start the local server (make serve, or parley "
                "serve), or name another with --url or PARLEY_URL.",
            ) from None
        try:
            parsed = reply.json() if reply.content else None
        except ValueError:
            parsed = None
        if reply.is_success and (parsed is not None or not reply.content):
            return parsed
        if isinstance(parsed, dict) and "status" in parsed and ("title" in parsed or "reason" in parsed):
            raise ServerProblem(reply.status_code, parsed)
        raise CommandError(
            UNREACHABLE,
            f"{url} answered {method} {self.path(route)} with HTTP {reply.status_code} and no Parley "
            f"answer: is it a Parley server? (its first words: {reply.text[:120]!r})",
        )


def _why(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text.removeprefix("[Errno 111] ")
