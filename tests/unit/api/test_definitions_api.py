"""The definition routes through the Lambda handler, with the API Gateway events of ``events/api``."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from parley.api.app import Handler, build_handler
from parley.clock import ManualClock
from parley.config import parse_operator_config
from parley.definitions.store import DynamoDefinitionStore
from parley.ports.runtime import Runtime

OPERATOR = """
principals:
  - id: dev
    token: dev-token
    grants: [{ org: acme, playbook: campaigns, role: write }]
  - id: viewer
    token: viewer-token
    grants: [{ org: acme, playbook: campaigns, role: read }]
  - id: outsider
    token: outsider-token
    grants: [{ org: acme, playbook: elsewhere, role: write }]
"""
BASE = "/v1/orgs/acme/playbooks/campaigns/definitions"
NAME = "approve-campaign-brief"

LoadEvent = Callable[[str], dict[str, Any]]


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: Any

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)


@pytest.fixture
def runtime(dynamodb: tuple[Any, str], manual_clock: ManualClock, stub_check: Any) -> Runtime:
    client, table = dynamodb
    return Runtime(
        definitions=DynamoDefinitionStore(client, table),
        clock=manual_clock,
        operator=parse_operator_config(OPERATOR, "test", environ={}),
        check_document=stub_check,
    )


@pytest.fixture
def handler(runtime: Runtime) -> Handler:
    return build_handler(runtime)


@pytest.fixture
def call(handler: Handler) -> Callable[[dict[str, Any]], Reply]:
    def invoke(event: dict[str, Any]) -> Reply:
        result = handler(event, None)
        headers = {k: ", ".join(v) for k, v in (result.get("multiValueHeaders") or {}).items()}
        headers.update(result.get("headers") or {})
        body = result["body"]
        if result.get("isBase64Encoded"):
            body = base64.b64decode(body).decode()
        return Reply(result["statusCode"], headers, json.loads(body) if body else None)

    return invoke


def with_body(
    event: dict[str, Any], body: str | bytes | None, content_type: str | None = "application/json"
) -> dict[str, Any]:
    if isinstance(body, bytes):
        event["body"], event["isBase64Encoded"] = base64.b64encode(body).decode(), True
    else:
        event["body"], event["isBase64Encoded"] = body, False
    return with_header(event, "Content-Type", content_type)


def with_header(event: dict[str, Any], name: str, value: str | None) -> dict[str, Any]:
    for key in [k for k in event["headers"] if k.lower() == name.lower()]:
        del event["headers"][key]
        del event["multiValueHeaders"][key]
    if value is not None:
        event["headers"][name] = value
        event["multiValueHeaders"][name] = [value]
    return event


def at(event: dict[str, Any], method: str, path: str, query: dict[str, str] | None = None) -> dict[str, Any]:
    event["httpMethod"] = event["requestContext"]["httpMethod"] = method
    event["path"] = path
    event["pathParameters"] = {"proxy": path.removeprefix("/v1/")}
    event["requestContext"]["path"] = "/prod" + path
    event["queryStringParameters"] = query
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()} if query else None
    return event


def as_principal(event: dict[str, Any], token: str) -> dict[str, Any]:
    return with_header(event, "Authorization", f"Bearer {token}")


def problem_shape(reply: Reply, status: int, reason: str) -> None:
    assert reply.status == status, reply.body
    assert reply.header("Content-Type") == "application/problem+json"
    assert reply.body["type"] == f"https://on.auto/problems/{reason}"
    assert reply.body["reason"] == reason
    assert reply.body["status"] == status
    assert isinstance(reply.body["title"], str) and reply.body["title"]
    assert isinstance(reply.body["detail"], str) and reply.body["detail"]


# --- the five operations with the event fixtures ------------------------------------------------


def test_create_answers_201_with_the_definition(
    call: Any, load_event: LoadEvent, example_source: str
) -> None:
    reply = call(load_event("api/create_definition"))

    assert reply.status == 201
    assert reply.header("Content-Type") == "application/json"
    assert reply.header("Cache-Control") == "no-store"
    assert reply.header("Location") == f"{BASE}/interaction/{NAME}"
    assert set(reply.body) == {
        "type", "name", "version", "status", "media_type", "description", "source", "overview", "warnings",
        "created_at", "updated_at",
    }  # fmt: skip
    assert reply.body["source"] == example_source
    assert (reply.body["type"], reply.body["name"], reply.body["version"], reply.body["status"]) == (
        "interaction", NAME, 1, "active",
    )  # fmt: skip
    assert reply.body["created_at"] == reply.body["updated_at"] == "2026-10-17T10:18:42.000Z"


def test_get_list_update_retire_with_the_event_fixtures(
    call: Any, load_event: LoadEvent, manual_clock: ManualClock
) -> None:
    created = call(load_event("api/create_definition")).body
    manual_clock.advance(60)

    got = call(load_event("api/get_definition"))
    listed = call(load_event("api/list_definitions"))
    updated = call(load_event("api/update_definition"))
    retired = call(load_event("api/retire_definition"))
    after = call(load_event("api/list_definitions"))

    assert (got.status, got.body) == (200, created)
    assert listed.status == 200
    assert listed.body == {"definitions": [created], "next_cursor": None}
    assert updated.status == 200
    assert (updated.body["version"], updated.body["updated_at"]) == (2, "2026-10-17T10:19:42.000Z")
    assert "expires: P3D" in updated.body["source"]
    assert retired.status == 200
    assert (retired.body["status"], retired.body["version"]) == ("retired", 2)
    assert after.body == {"definitions": [], "next_cursor": None}
    for reply in (got, listed, updated, retired):
        assert reply.header("Cache-Control") == "no-store"
        assert reply.header("Content-Type") == "application/json"


def test_list_pages_through_the_api(call: Any, load_event: LoadEvent, manual_clock: ManualClock) -> None:
    for n in range(3):
        event = load_event("api/create_definition")
        call(with_body(event, json.dumps({"name": f"def-{n}", "source": "---\n---\n"})))
        manual_clock.advance(1)

    first = call(at(load_event("api/list_definitions"), "GET", f"{BASE}/interaction", {"limit": "2"}))
    second = call(
        at(
            load_event("api/list_definitions"),
            "GET",
            f"{BASE}/interaction",
            {"limit": "2", "cursor": first.body["next_cursor"]},
        )
    )

    assert [d["name"] for d in first.body["definitions"]] == ["def-2", "def-1"]
    assert isinstance(first.body["next_cursor"], str)
    assert [d["name"] for d in second.body["definitions"]] == ["def-0"]
    assert second.body["next_cursor"] is None


def test_include_retired(call: Any, load_event: LoadEvent) -> None:
    call(load_event("api/create_definition"))
    call(load_event("api/retire_definition"))

    shown = call(
        at(load_event("api/list_definitions"), "GET", f"{BASE}/interaction", {"include_retired": "true"})
    )

    assert [(d["name"], d["status"]) for d in shown.body["definitions"]] == [(NAME, "retired")]


def test_retire_accepts_an_empty_object(call: Any, load_event: LoadEvent) -> None:
    call(load_event("api/create_definition"))

    reply = call(with_body(load_event("api/retire_definition"), "{}"))

    assert (reply.status, reply.body["status"]) == (200, "retired")


# --- auth --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "authorization", [None, "", "Bearer", "Bearer ", "Basic ZGV2OmRldi10b2tlbg==", "Bearer nope", "dev-token"]
)
def test_without_a_valid_token_401_with_www_authenticate(
    call: Any, load_event: LoadEvent, authorization: str | None
) -> None:
    for name in ("create_definition", "get_definition", "list_definitions"):
        reply = call(with_header(load_event(f"api/{name}"), "Authorization", authorization))

        problem_shape(reply, 401, "unauthenticated")
        assert reply.header("WWW-Authenticate") == "Bearer"


def test_the_header_name_and_scheme_are_case_insensitive(call: Any, load_event: LoadEvent) -> None:
    event = with_header(load_event("api/list_definitions"), "authorization", "bearer dev-token")

    assert call(event).status == 200


def test_a_reader_reads_but_cannot_write(call: Any, load_event: LoadEvent) -> None:
    call(load_event("api/create_definition"))

    assert call(as_principal(load_event("api/get_definition"), "viewer-token")).status == 200
    assert call(as_principal(load_event("api/list_definitions"), "viewer-token")).status == 200
    for name in ("create_definition", "update_definition", "retire_definition"):
        problem_shape(call(as_principal(load_event(f"api/{name}"), "viewer-token")), 403, "forbidden")
    assert call(load_event("api/get_definition")).body["status"] == "active"


def test_a_playbook_the_caller_cannot_read_does_not_exist(call: Any, load_event: LoadEvent) -> None:
    call(load_event("api/create_definition"))

    denied = call(as_principal(load_event("api/get_definition"), "outsider-token"))
    missing = call(
        at(
            load_event("api/get_definition"),
            "GET",
            "/v1/orgs/acme/playbooks/nowhere/definitions/interaction/x",
        )
    )
    writing = call(as_principal(load_event("api/create_definition"), "outsider-token"))

    problem_shape(denied, 404, "not_found")
    problem_shape(writing, 404, "not_found")
    problem_shape(missing, 404, "not_found")
    assert "campaigns" in denied.body["detail"]
    assert NAME not in denied.body["detail"]


def test_auth_comes_before_the_body(call: Any, load_event: LoadEvent) -> None:
    event = with_header(with_body(load_event("api/create_definition"), "{oops"), "Authorization", None)

    assert call(event).status == 401


# --- problems ----------------------------------------------------------------------------------


def test_a_taken_name_is_409(call: Any, load_event: LoadEvent) -> None:
    call(load_event("api/create_definition"))

    problem_shape(call(load_event("api/create_definition")), 409, "conflict")


def test_updating_a_retired_definition_is_409(call: Any, load_event: LoadEvent) -> None:
    call(load_event("api/create_definition"))
    call(load_event("api/retire_definition"))

    problem_shape(call(load_event("api/update_definition")), 409, "conflict")


def test_unknown_definitions_are_404(call: Any, load_event: LoadEvent) -> None:
    for name in ("get_definition", "update_definition", "retire_definition"):
        problem_shape(call(load_event(f"api/{name}")), 404, "not_found")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        # (GET / redirects to the web inbox: http-api.md, "The web inbox".)
        ("GET", "/v1"),
        ("GET", "/v1/orgs/acme/playbooks/campaigns"),
        ("GET", f"{BASE}"),
        ("GET", f"{BASE}/agent"),
        ("POST", f"{BASE}/agent"),
        ("GET", f"{BASE}/agent/{NAME}"),
        ("GET", f"{BASE}/interaction/{NAME}/versions"),
        ("POST", f"{BASE}/interaction/{NAME}/unknown-action"),
    ],
)
def test_unknown_routes_and_types_are_404(call: Any, load_event: LoadEvent, method: str, path: str) -> None:
    reply = call(at(load_event("api/get_definition"), method, path))

    problem_shape(reply, 404, "not_found")
    assert reply.header("Cache-Control") == "no-store"


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("DELETE", f"{BASE}/interaction/{NAME}", "GET, HEAD, PUT"),
        ("PATCH", f"{BASE}/interaction/{NAME}", "GET, HEAD, PUT"),
        ("PUT", f"{BASE}/interaction", "GET, HEAD, POST"),
        ("DELETE", f"{BASE}/interaction", "GET, HEAD, POST"),
        ("GET", f"{BASE}/interaction/{NAME}/retire", "POST"),
    ],
)
def test_a_known_route_with_another_method_is_405_with_allow(
    call: Any, load_event: LoadEvent, method: str, path: str, allow: str
) -> None:
    reply = call(at(load_event("api/get_definition"), method, path))

    problem_shape(reply, 405, "method_not_allowed")
    assert reply.header("Allow") == allow


def test_head_answers_like_get(call: Any, load_event: LoadEvent) -> None:
    call(load_event("api/create_definition"))

    head = call(at(load_event("api/get_definition"), "HEAD", f"{BASE}/interaction/{NAME}"))

    assert head.status == 200
    assert head.header("Cache-Control") == "no-store"


@pytest.mark.parametrize(
    "body",
    [
        "{bad json",
        "[1, 2]",
        '"a string"',
        "null",
        "42",
        '{"name": NaN, "source": ""}',
        b"\xff\xfe{}",
        "[" * 100_000 + "]" * 100_000,
        '{"name": "a"} trailing',
    ],
)
def test_a_body_that_is_not_a_json_object_is_400(call: Any, load_event: LoadEvent, body: str | bytes) -> None:
    problem_shape(call(with_body(load_event("api/create_definition"), body)), 400, "bad_request")


def test_a_body_over_1_mib_is_413(call: Any, load_event: LoadEvent) -> None:
    body = json.dumps({"name": NAME, "source": "x" * (1024 * 1024)})

    problem_shape(call(with_body(load_event("api/create_definition"), body)), 413, "content_too_large")


def test_a_body_of_exactly_1_mib_is_read(call: Any, load_event: LoadEvent) -> None:
    envelope = json.dumps({"name": NAME, "source": ""})
    body = json.dumps({"name": NAME, "source": "x" * (1024 * 1024 - len(envelope))})
    assert len(body) == 1024 * 1024

    reply = call(with_body(load_event("api/create_definition"), body))

    problem_shape(reply, 422, "invalid_input")  # read, then refused for the 65,536-byte source limit
    assert [e["pointer"] for e in reply.body["errors"]] == ["/source"]


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None],
)
def test_a_body_that_is_not_json_by_its_content_type_is_415(
    call: Any, load_event: LoadEvent, content_type: str | None
) -> None:
    event = with_body(
        load_event("api/create_definition"), json.dumps({"name": NAME, "source": "---\n---\n"}), content_type
    )

    problem_shape(call(event), 415, "unsupported_media_type")


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "APPLICATION/JSON", "application/merge-patch+json"]
)
def test_json_content_types_are_accepted(call: Any, load_event: LoadEvent, content_type: str) -> None:
    event = with_body(
        load_event("api/create_definition"), json.dumps({"name": NAME, "source": "---\n---\n"}), content_type
    )

    assert call(event).status == 201


@pytest.mark.parametrize(
    ("body", "pointers"),
    [
        ({"name": 3, "source": "---\n---\n"}, ["/name"]),
        ({"name": NAME}, ["/source"]),
        ({"source": "---\n---\n"}, ["/name"]),
        ({}, ["/name", "/source"]),
        ({"name": NAME, "source": ["---"]}, ["/source"]),
        ({"name": NAME, "source": None}, ["/source"]),
        ({"name": NAME, "source": "---\n---\n", "sorce": "typo"}, ["/sorce"]),
        ({"name": "Not A Name", "source": "---\n---\n"}, ["/name"]),
        ({"name": NAME, "source": "no front matter"}, ["/source"]),
    ],
)
def test_body_fields_missing_or_of_the_wrong_type_are_422(
    call: Any, load_event: LoadEvent, body: dict[str, Any], pointers: list[str]
) -> None:
    reply = call(with_body(load_event("api/create_definition"), json.dumps(body)))

    problem_shape(reply, 422, "invalid_input")
    assert [e["pointer"] for e in reply.body["errors"]] == pointers
    assert all(isinstance(e["detail"], str) and e["detail"] for e in reply.body["errors"])


def test_an_absent_body_is_an_empty_object(call: Any, load_event: LoadEvent) -> None:
    reply = call(with_body(load_event("api/create_definition"), None, None))

    problem_shape(reply, 422, "invalid_input")
    assert [e["pointer"] for e in reply.body["errors"]] == ["/name", "/source"]


def test_update_body_is_checked(call: Any, load_event: LoadEvent) -> None:
    call(load_event("api/create_definition"))

    reply = call(with_body(load_event("api/update_definition"), json.dumps({"source": 1, "name": "x"})))

    problem_shape(reply, 422, "invalid_input")
    assert [e["pointer"] for e in reply.body["errors"]] == ["/source", "/name"]


def test_retire_takes_no_fields(call: Any, load_event: LoadEvent) -> None:
    call(load_event("api/create_definition"))

    reply = call(with_body(load_event("api/retire_definition"), json.dumps({"reason": "old"})))

    problem_shape(reply, 422, "invalid_input")
    assert call(load_event("api/get_definition")).body["status"] == "active"


@pytest.mark.parametrize(
    "query",
    [
        {"limit": "0"},
        {"limit": "101"},
        {"limit": "x"},
        {"limit": "-1"},
        {"limit": "1.5"},
        {"limit": ""},
        {"include_retired": "maybe"},
        {"cursor": "not-ours"},
        {"cursor": ""},
    ],
)
def test_bad_query_values_are_400(call: Any, load_event: LoadEvent, query: dict[str, str]) -> None:
    reply = call(at(load_event("api/list_definitions"), "GET", f"{BASE}/interaction", query))

    problem_shape(reply, 400, "bad_request")


@pytest.mark.parametrize("limit", ["1", "100", "50"])
def test_good_limits(call: Any, load_event: LoadEvent, limit: str) -> None:
    assert (
        call(at(load_event("api/list_definitions"), "GET", f"{BASE}/interaction", {"limit": limit})).status
        == 200
    )


# --- unexpected errors -------------------------------------------------------------------------


class BrokenStore:
    def __getattr__(self, name: str) -> Any:
        def fail(*_: Any, **__: Any) -> Any:
            raise RuntimeError("secret internals: /var/task/parley/store.py line 3")

        return fail


def test_an_unexpected_error_is_500_internal_with_an_instance_that_is_logged(
    runtime: Runtime, load_event: LoadEvent, caplog: pytest.LogCaptureFixture
) -> None:
    runtime.definitions = BrokenStore()  # type: ignore[assignment]
    handler = build_handler(runtime)

    result = handler(load_event("api/get_definition"), None)

    body = json.loads(result["body"])
    assert result["statusCode"] == 500
    assert result["multiValueHeaders"]["Content-Type"] == ["application/problem+json"]
    assert body["reason"] == "internal"
    assert re.fullmatch(r"urn:uuid:[0-9a-f-]{36}", body["instance"])
    assert "secret internals" not in result["body"]
    assert "Traceback" not in result["body"]
    entry = next(r for r in caplog.records if getattr(r, "instance", None) == body["instance"])
    assert entry.levelname == "ERROR"
    assert entry.exc_info is not None and "secret internals" in str(entry.exc_info[1])


def test_the_token_is_never_logged(
    runtime: Runtime, load_event: LoadEvent, caplog: pytest.LogCaptureFixture
) -> None:
    runtime.definitions = BrokenStore()  # type: ignore[assignment]
    build_handler(runtime)(load_event("api/get_definition"), None)

    assert caplog.records
    for record in caplog.records:
        assert "dev-token" not in str(vars(record))


def test_an_event_the_resolver_cannot_read_is_still_a_problem(handler: Handler) -> None:
    result = handler({"httpMethod": None}, None)

    assert result["statusCode"] == 500
    assert json.loads(result["body"])["reason"] == "internal"


# --- text that is not text, numbers that are too long, names with a final newline ----------------------


def test_a_lone_surrogate_anywhere_in_a_body_is_a_422_with_its_pointer(
    call: Callable[[dict[str, Any]], Reply], load_event: LoadEvent
) -> None:
    body = '{"name": "fine-name", "source": "---\\nto: x\\u00e9\\ud800\\n---\\nHi"}'
    event = with_body(load_event("api/create_definition"), body)

    reply = call(event)

    problem_shape(reply, 422, "invalid_input")
    assert [entry["pointer"] for entry in reply.body["errors"]] == ["/source"]


@pytest.mark.parametrize("limit", ["9" * 5000, " 7", "+5", "\uff17", "1e2"])
def test_a_limit_that_is_not_plain_digits_of_1_to_100_is_a_400(
    call: Callable[[dict[str, Any]], Reply], load_event: LoadEvent, limit: str
) -> None:
    event = at(load_event("api/list_definitions"), "GET", f"{BASE}/interaction", {"limit": limit})

    problem_shape(call(event), 400, "bad_request")


def test_a_name_ending_in_a_newline_is_refused_and_no_header_carries_it(
    call: Callable[[dict[str, Any]], Reply], load_event: LoadEvent
) -> None:
    body = json.dumps({"name": "fz-153-b197\n", "source": "---\nto: x\n---\nHi"})
    event = with_body(load_event("api/create_definition"), body)

    reply = call(event)

    problem_shape(reply, 422, "invalid_input")
    assert reply.header("Location") is None
