"""OAuth of a connection end to end, as a person does it (issue 32, part 4; ``http-api.md``, "Connections",
OAuth): a real ``parley serve --clock manual`` keeping its data in a folder, and a real MCP server on
127.0.0.1 that is its own OAuth authorization server (``tests/oauth_servers.py``: it approves every
authorization at once, as a person who signs in and allows would).

A writer adds the server as a connection, asks ``authorize_connection`` for the authorization URL, and
opens it as a browser does: the authorization server redirects to ``/v1/oauth/callback`` on the local
server, which keeps the tokens. The org's admin approves the connection; ``execute`` calls its tool with
the kept token. An hour later the token is refreshed before the next call; after another hour the
authorization server refuses the refresh and the connection is ``broken``. A ``state`` brought back by
another person, or twice, is refused. No token, code or state is in any response, in the server's log
or in a file of its data folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from oauth_servers import OAuthToolServer, running_oauth_server
from tool_serving import serving_manually

pytestmark = pytest.mark.http

WRITER = {"Authorization": "Bearer dev-token"}
OTHER_WRITER = {"Authorization": "Bearer eve-token"}
ADMIN = {"Authorization": "Bearer boss-token"}
BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
ORG = "/v1/orgs/acme"
BASE = f"{ORG}/playbooks/campaigns"
OPERATOR = """
principals:
  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
  - { id: eve, token: eve-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
  - id: boss
    token: boss-token
    grants: [{ org: acme, role: admin }, { org: acme, playbook: campaigns, role: read }]
connections:
  allowed_urls: ["http://127.0.0.1:*/*"]
"""


@dataclass
class Served:
    url: str
    tmp: Path
    data: Path
    server: OAuthToolServer
    bodies: list[str] = field(default_factory=list)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    config = tmp_path / "operator.yaml"
    config.write_text(OPERATOR, encoding="utf-8")
    data = tmp_path / "data"
    data.mkdir()
    with running_oauth_server() as server:
        with pytest.MonkeyPatch.context() as env:  # only while the process starts: it copies os.environ
            env.setenv("PARLEY_SECRET_KEY_FILE", str(tmp_path / "keys" / "secret.key"))
            serving = serving_manually(config, tmp_path / "serve.log", data=data)
            url = serving.__enter__()
        try:
            yield Served(url, tmp_path, data, server)
        finally:
            serving.__exit__(None, None, None)


@pytest.fixture
def http(served: Served) -> Iterator[httpx.Client]:
    def keep(response: httpx.Response) -> None:
        response.read()
        served.bodies.append(
            response.text + "\n" + "\n".join(f"{k}: {v}" for k, v in response.headers.items())
        )

    with httpx.Client(base_url=served.url, timeout=60, event_hooks={"response": [keep]}) as client:
        yield client


def authorization_url(http: httpx.Client, as_who: dict[str, str] = WRITER) -> str:
    started = http.post(f"{ORG}/connections/notes/authorize", headers=as_who)
    assert started.status_code == 200, started.text
    url: str = started.json()["authorization_url"]
    return url


def redirected(url: str) -> str:
    """Where the authorization server sends the browser back to (not followed)."""
    answer = httpx.get(url, timeout=30)
    assert answer.status_code == 302, answer.text
    return answer.headers["location"]


def execute(http: httpx.Client, topic: str) -> httpx.Response:
    return http.post(
        f"{BASE}/tool-servers/notes/tools/notes/execute", json={"arguments": {"topic": topic}}, headers=WRITER
    )


def advance(http: httpx.Client, seconds: int) -> None:
    assert http.post("/_local/clock/advance", json={"seconds": seconds}, headers=WRITER).status_code == 200


def test_a_person_authorizes_a_connection_and_its_tokens_serve_until_a_refresh_is_refused(
    served: Served, http: httpx.Client
) -> None:
    server = served.server
    added = http.post(f"{ORG}/connections", json={"name": "notes", "url": server.url}, headers=WRITER)
    assert added.status_code == 201, added.text
    assert (added.json()["status"], added.json()["auth"]) == ("pending", "none")

    url = authorization_url(http)
    asked = parse_qs(urlsplit(url).query)
    assert asked["redirect_uri"] == [served.url + "/v1/oauth/callback"]
    assert asked["resource"] == [server.url] and asked["code_challenge_method"] == ["S256"]
    # Someone else may not start it: the tokens would act for them.
    assert http.post(f"{ORG}/connections/notes/authorize", headers=OTHER_WRITER).status_code == 403

    # The browser: the authorization server approves and sends it back to the callback, no token.
    with httpx.Client(timeout=30, follow_redirects=True, headers=BROWSER) as browser:
        page = browser.get(url)
    served.bodies.append(page.text)
    assert page.status_code == 200, page.text
    assert str(page.url).startswith(served.url + "/v1/oauth/callback?")
    assert "text/html" in page.headers["content-type"]
    assert "The connection notes of acme is authorized" in page.text
    assert "waits for an admin" in page.text

    shown = http.get(f"{ORG}/connections/notes", headers=WRITER).json()
    assert (shown["auth"], shown["status"]) == ("oauth", "pending")
    # The same state again: used.
    again = http.get(str(page.url).removeprefix(served.url))
    assert again.status_code == 400 and "already used" in again.json()["detail"]

    approved = http.post(f"{ORG}/connections/notes/approve", headers=ADMIN)
    assert approved.status_code == 200 and approved.json()["status"] == "active", approved.text

    first = execute(http, "launch")
    assert first.status_code == 200, first.text
    assert first.json()["outcome"] == "answered"
    assert "Notes on launch" in first.text

    # An hour on, the token is about to expire: it is refreshed before the call.
    refreshes = server.authorization.refreshes
    advance(http, server.authorization.expires_in - 30)
    second = execute(http, "budget")
    assert second.status_code == 200 and second.json()["outcome"] == "answered", second.text
    assert server.authorization.refreshes == refreshes + 1

    # Another hour, and the authorization server refuses to refresh it: the connection is broken.
    server.authorization.refuse_refresh = True
    advance(http, server.authorization.expires_in)
    refused = execute(http, "hiring")
    assert refused.status_code == 503, refused.text
    assert refused.json()["because"] == "connection_broken"
    assert http.get(f"{ORG}/connections/notes", headers=WRITER).json()["status"] == "broken"

    # No token, code or state in any response, in the log or in a data file.
    secrets = [s for s in server.authorization.issued if s]
    secrets += [c.client_secret for c in server.authorization.registered if c.client_secret]
    state = asked["state"][0]
    log = (served.tmp / "serve.log").read_text(encoding="utf-8")
    files = [path.read_bytes() for path in served.data.rglob("*") if path.is_file()]
    for value in [*secrets, state]:
        assert not [body for body in served.bodies if value in body and "/authorize?" not in body], value
        assert value not in log, value
        assert not [data for data in files if value.encode() in data], value
    assert "/v1/oauth/callback?code=…&state=…" in log


def test_a_state_brought_back_by_another_person_is_refused(served: Served, http: httpx.Client) -> None:
    added = http.post(f"{ORG}/connections", json={"name": "notes", "url": served.server.url}, headers=WRITER)
    assert added.status_code == 201, added.text
    back = redirected(authorization_url(http)).removeprefix(served.url)

    other = http.get(back, headers=OTHER_WRITER)
    assert other.status_code == 403 and "started by someone else" in other.json()["detail"]
    unknown = http.get("/v1/oauth/callback?state=made-up&code=x", headers=BROWSER)
    assert unknown.status_code == 400 and "text/html" in unknown.headers["content-type"]
    assert "authorize the connection again" in unknown.text

    mine = http.get(back, headers=WRITER)
    assert mine.status_code == 200 and mine.json()["auth"] == "oauth", mine.text
