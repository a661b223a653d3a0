"""Bad bytes at every route of a real ``parley serve --clock manual`` (hypothesis, bounded, 127.0.0.1).

Each example is one request made of a route of the API (every operation of ``parley.api.registry``, and
the routes beside it: the inbox, the description, the MCP front door, the local clock) with fuzzed
parts: path values (lone surrogates, newlines, long and non-ASCII text), query values (5,000 digits,
``" 7"``, ``"+5"``, full-width digits), methods (unknown ones too), tokens, content types and bodies
(invalid UTF-8, broken JSON, lone surrogate escapes, every field of the operation's body with values of
any type, unknown fields). Whatever comes in, the server answers: never a 5xx, every error a problem
document whose ``status`` is the HTTP status and whose ``type`` names its ``reason``, and no header
carrying a caller's text unchecked. The MCP front door's transport answers JSON-RPC errors in JSON-RPC,
as MCP clients expect. A second test sends raw framings (conflicting lengths, broken chunks, garbage
request lines) and wants a problem document or a clean close.
"""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp_servers import running_tool_server
from tool_serving import serving_with

from parley.api.operation import Operation
from parley.api.registry import OPERATIONS

pytestmark = pytest.mark.http

PLAYBOOK = "/v1/orgs/acme/playbooks/campaigns"
ASK = "---\ndescription: Asks for a yes\nto: '{{ input.to }}'\nexpires: PT10M\n---\nYes?\n"
TOKENS = {"writer": "Bearer dev-token", "reader": "Bearer read-token"}
FUZZ = settings(
    max_examples=500,
    deadline=None,
    derandomize=True,  # the same examples on every run: CI stays repeatable
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@dataclass
class Target:
    url: str
    run_id: str
    event_id: str


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    tmp = tmp_path_factory.mktemp("serve-fuzz")
    with running_tool_server() as tools, serving_with(tmp, _operator(tools.url)) as url:
        yield _seeded(url)


def _operator(tools_url: str) -> str:
    return f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
  - {{ id: reader, token: read-token, grants: [{{ org: acme, playbook: campaigns, role: read }}] }}
tool_servers:
  - {{ name: chat, url: "{tools_url}", orgs: [acme], allowed: [post_message, thread_replies] }}
"""


def _seeded(url: str) -> Target:
    """A definition and a run waiting for an answer, so that fuzzed requests also reach real ones."""
    headers = {"Authorization": TOKENS["writer"]}
    with httpx.Client(base_url=url + PLAYBOOK, headers=headers, timeout=30) as http:
        created = http.post("/definitions/interaction", json={"name": "ask-yes", "source": ASK})
        assert created.status_code == 201, created.text
        run = http.post("/definitions/interaction/ask-yes/run", json={"input": {"to": "ana@example.com"}})
        assert run.status_code == 200, run.text
        run_id = run.json()["run_id"]
        events = http.get("/events").json()["events"]
    return Target(url, run_id, events[0]["id"] if events else str(uuid.uuid4()))


# --- the parts of a request ----------------------------------------------------------------------------

#: Any text, lone surrogates included (valid JSON escapes, not valid Unicode text).
TEXT = st.text(st.characters(exclude_categories=()), max_size=30)
ODD_TEXT = st.one_of(
    TEXT,
    st.sampled_from(["fz-153-b197\n", "a" * 200, "x" * 5000, "\ud800", "ñame", "../../etc", "%00", " ", ""]),
)
NUMBERISH = st.sampled_from(
    ["5" * 5000, " 7", "7 ", "+5", "５", "-1", "0", "1", "200", "201", "1e3", "0x10", "true", "", "1_000"]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | ODD_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


def segment(text: str) -> str:
    """A path segment carrying ``text`` as its UTF-8 bytes (a lone surrogate's as they are: not UTF-8)."""
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


def path_value(name: str, target: Target) -> st.SearchStrategy[str]:
    plausible = {
        "type": ["interaction", "reasoning"],
        "name": ["ask-yes", "not-there"],
        "run_id": [target.run_id, str(uuid.uuid4())],
        "event_id": [target.event_id],
        "server": ["chat", "nowhere"],
        "tool": ["post_message", "thread_replies", "missing"],
    }.get(name, ["x"])
    return st.one_of(st.sampled_from(plausible), ODD_TEXT.filter(bool))


def query_value(name: str) -> st.SearchStrategy[str]:
    plausible = {
        "include_retired": ["true", "false", "1", "yes"],
        "order": ["asc", "desc", "sideways"],
        "status": ["started", "succeeded", "nope"],
        "type": ["interaction", "reasoning", "question"],
        "cursor": ["", "eyJ4IjogMX0", "not-a-cursor"],
        "since": ["2026-01-01T00:00:00Z", "yesterday"],
    }.get(name, [])
    return st.one_of(st.sampled_from(plausible or ["x"]), NUMBERISH, ODD_TEXT)


def body_strategy(operation: Operation) -> st.SearchStrategy[Any]:
    """A JSON body with the operation's fields (some left out) valued with anything, maybe one more."""
    if operation.body is None:
        return st.one_of(st.none(), JSON)
    fields = list(operation.body.model_fields)
    plausible: dict[str, st.SearchStrategy[Any]] = {
        "name": st.sampled_from(["ask-yes", "fz-new", "fz-153-b197\n"]),
        "source": st.sampled_from([ASK, ASK.replace("Yes?", "Yes \ud800?"), "---\n---\n", "no front matter"]),
        "input": st.sampled_from([{"to": "ana@example.com"}, {"to": "\ud800"}, {}]),
        "answer": st.sampled_from([True, "yes", {"answer": "\ud800"}, None]),
    }
    values = {name: st.one_of(plausible.get(name, JSON), JSON) for name in fields}
    return st.fixed_dictionaries({}, optional={**values, "unexpected": JSON})


def encoded_body(value: Any) -> st.SearchStrategy[bytes | None]:
    if value is None:
        return st.sampled_from([None, b""])
    text = json.dumps(value)  # lone surrogates as \ud800 escapes: valid JSON
    return st.one_of(
        st.just(text.encode("ascii")),
        st.just(text.encode("ascii")[: max(1, len(text) // 2)]),  # cut short
        st.just(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")),  # not UTF-8
        st.binary(max_size=40),
        st.just(b"1" * 5000),
    )


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes | None

    def url(self) -> str:
        pairs = "&".join(f"{segment(k)}={segment(v)}" for k, v in self.query)
        return f"{self.path}?{pairs}" if pairs else self.path


@st.composite
def api_requests(draw: st.DrawFn, target: Target) -> Request:
    operation = draw(st.sampled_from(OPERATIONS))
    org, playbook = draw(
        st.one_of(
            st.just(("acme", "campaigns")), st.just(("globex", "campaigns")), st.tuples(ODD_TEXT, ODD_TEXT)
        )
    )
    path = operation.path.replace("{org}", segment(org or "o")).replace(
        "{playbook}", segment(playbook or "p")
    )
    for param in operation.params:
        if param.where == "path":
            path = path.replace(f"{{{param.name}}}", segment(draw(path_value(param.name, target))))
    query = [
        (param.name, draw(query_value(param.name)))
        for param in operation.params
        if param.where == "query" and draw(st.booleans())
    ]
    if draw(st.booleans()):
        query.append(draw(st.tuples(ODD_TEXT, ODD_TEXT)))
    method = draw(
        st.one_of(
            st.just(operation.method),
            st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "BREW"]),
        )
    )
    body = draw(encoded_body(draw(body_strategy(operation))))
    return Request(method, path, query, draw(header_sets()), body)


@st.composite
def other_requests(draw: st.DrawFn) -> Request:
    """The routes beside the operations, and paths that are no route."""
    method, path = draw(
        st.one_of(
            st.sampled_from(
                [
                    ("GET", "/"),
                    ("GET", "/inbox"),
                    ("GET", "/inbox/config.json"),
                    ("GET", "/inbox/inbox.js"),
                    ("GET", "/openapi.json"),
                    ("GET", "/docs"),
                    ("GET", "/v1/me"),
                    ("POST", "/mcp"),
                    ("GET", "/mcp"),
                    ("POST", f"{PLAYBOOK}/mcp"),
                    ("POST", "/v1/orgs/globex/playbooks/campaigns/mcp"),
                    ("GET", "/_local/clock"),
                    ("POST", "/_local/clock/advance"),
                ]
            ),
            st.tuples(st.sampled_from(["GET", "POST", "BREW"]), ODD_TEXT.map(lambda t: "/" + segment(t))),
            st.tuples(st.sampled_from(["GET", "POST"]), ODD_TEXT.map(lambda t: f"{PLAYBOOK}/{segment(t)}")),
        )
    )
    value = draw(
        st.one_of(
            st.none(),
            JSON,
            st.fixed_dictionaries({"seconds": st.one_of(st.integers(-5, 10**6), JSON)}),
            st.fixed_dictionaries(
                {
                    "jsonrpc": st.just("2.0"),
                    "id": st.integers(0, 9),
                    "method": st.sampled_from(["tools/list", "tools/call", "initialize", "nope"]),
                },
                optional={"params": JSON},
            ),
        )
    )
    return Request(method, path, [], draw(header_sets(mcp="mcp" in path)), draw(encoded_body(value)))


@st.composite
def header_sets(draw: st.DrawFn, mcp: bool = False) -> dict[str, str]:
    headers: dict[str, str] = {}
    auth = draw(
        st.sampled_from(
            [
                "writer",
                "writer",
                "reader",
                "none",
                "Bearer nope",
                "Basic ZGV2OmRldg==",
                "Bearer",
                "bearer dev-token",
            ]
        )
    )
    if auth in TOKENS:
        headers["Authorization"] = TOKENS[auth]
    elif auth != "none":
        headers["Authorization"] = auth
    content_type = draw(
        st.sampled_from(
            [
                "application/json",
                "application/json",
                "text/plain",
                "application/json; charset=latin-1",
                "",
                "x/y",
            ]
        )
    )
    if content_type:
        headers["Content-Type"] = content_type
    if mcp:
        headers["Accept"] = draw(
            st.sampled_from(["application/json, text/event-stream", "application/json", "text/html"])
        )
    return headers


# --- what every answer must be --------------------------------------------------------------------------


def check(request: Request, response: httpx.Response) -> None:
    shown = f"{request.method} {request.url()[:300]} -> {response.status_code} {response.text[:300]}"
    assert response.status_code < 500, shown
    for value in response.headers.values():
        assert "\n" not in value and "\r" not in value, shown
    if response.status_code < 400 or request.method == "HEAD":
        return
    media = response.headers.get("content-type", "")
    if "/mcp" in urlsplit(request.path).path and media.startswith("application/json"):
        assert "error" in response.json(), shown  # the MCP transport's JSON-RPC error
        return
    assert media.startswith("application/problem+json"), shown
    document = response.json()
    assert document["status"] == response.status_code, shown
    assert document["type"] == f"https://on.auto/problems/{document['reason']}", shown
    assert isinstance(document.get("detail", ""), str) and "Traceback" not in response.text, shown


def send(client: httpx.Client, request: Request) -> httpx.Response:
    return client.request(request.method, request.url(), headers=request.headers, content=request.body)


@pytest.fixture(scope="module")
def client(target: Target) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=target.url, timeout=60) as http:
        yield http


def test_every_route_answers_bad_input_with_a_problem_and_never_a_5xx(
    target: Target, client: httpx.Client
) -> None:
    @FUZZ
    @given(request=st.one_of(api_requests(target), api_requests(target), other_requests()))
    def one(request: Request) -> None:
        check(request, send(client, request))

    one()
    # The server is still whole after the storm: the seeded run still answers as it stands.
    shown = client.get(f"{PLAYBOOK}/runs/{target.run_id}", headers={"Authorization": TOKENS["writer"]})
    assert shown.status_code == 200, shown.text


# --- framing ------------------------------------------------------------------------------------------------

FRAMINGS = st.sampled_from(
    [
        b"Content-Length: 2\r\nContent-Length: 5\r\n\r\n{}",
        b"Content-Length: 2, 3\r\n\r\n{}",
        b"Content-Length: -1\r\n\r\n",
        b"Content-Length: abc\r\n\r\n",
        b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
        b"Transfer-Encoding: gzip\r\n\r\n{}",
        b"Content-Length: 0\r\n\r\nGARBAGE / HTTP/1.1\r\n\r\n",
        b"Content-Length: 2\r\n\r\n{}\x00\x01\x02 not http\r\n\r\n",
        b"X-Bad\x00Header: 1\r\n\r\n",
        b"Bad Header Name: 1\r\n\r\n",
        b"\r\n",
    ]
)


def raw_exchange(url: str, data: bytes) -> bytes:
    host, port = urlsplit(url).hostname, urlsplit(url).port
    assert host is not None and port is not None
    with socket.create_connection((host, port), timeout=20) as conn:
        conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)
        received = bytearray()
        while chunk := conn.recv(65536):
            received.extend(chunk)
        return bytes(received)


def answers(raw: bytes) -> Iterator[tuple[int, bytes, bytes]]:
    """The responses in ``raw``, one after the other: (status, head, body by its Content-Length)."""
    while raw:
        head, _, rest = raw.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 "), raw[:300]
        fields = dict(line.split(b":", 1) for line in head.split(b"\r\n")[1:])
        length = int({name.strip().lower(): value for name, value in fields.items()}[b"content-length"])
        yield int(head[9:12]), head, rest[:length]
        raw = rest[length:]


def test_bad_framing_is_a_problem_or_a_clean_close(target: Target) -> None:
    @settings(FUZZ, max_examples=60)
    @given(
        line=st.sampled_from(
            [
                f"POST {PLAYBOOK}/definitions/interaction HTTP/1.1",
                "GET / HTTP/1.1",
                "BREW /x HTTP/1.1",
                "GET /\x7f HTTP/1.1",
                "GET / HTTP/9.9",
                "GET",
            ]
        ),
        framing=FRAMINGS,
    )
    def one(line: str, framing: bytes) -> None:
        data = (
            line.encode("latin-1") + b"\r\nHost: 127.0.0.1\r\nAuthorization: Bearer dev-token\r\n" + framing
        )
        raw = raw_exchange(target.url, data)
        for status, head, body in answers(raw):
            assert status < 500, raw[:500]
            if status >= 400:
                assert b"content-type: application/problem+json" in head.lower(), raw[:500]
                assert json.loads(body)["status"] == status, raw[:500]

    one()
