"""The JSON Schemas of what the operations answer (``http-api.md``): the OpenAPI document's success
bodies and the MCP tools' ``outputSchema``, and the problem document every failure is.

They say what a client may count on — the members always present, their types — and leave room for
members a later version adds (no ``additionalProperties: false``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from parley.definitions.model import DEFINITION_TYPES
from parley.errors import PROBLEM_TYPE_BASE, REASONS
from parley.runs.status import RUN_STATUSES

JsonSchema = Mapping[str, Any]

TEXT: Final = {"type": "string"}
TIME: Final = {"type": "string", "description": "An ISO 8601 UTC time, such as 2026-10-17T10:18:42.000Z."}


def nullable(kind: str, description: str | None = None) -> dict[str, Any]:
    """A value of JSON type ``kind`` or ``null`` (as ``anyOf``: the spelling that most clients map)."""
    shown: dict[str, Any] = {"anyOf": [{"type": kind}, {"type": "null"}]}
    if description is not None:
        shown["description"] = description
    return shown


OPTIONAL_TEXT: Final = nullable("string")
CURSOR: Final = nullable("string", "Pass it as cursor for the next page; null on the last page.")


def obj(required: list[str], properties: Mapping[str, Any], description: str | None = None) -> dict[str, Any]:
    shown: dict[str, Any] = {"type": "object", "required": required, "properties": dict(properties)}
    if description is not None:
        shown["description"] = description
    return shown


def page_of(key: str, item: JsonSchema) -> dict[str, Any]:
    """``{<key>: [item…], next_cursor}``."""
    return obj([key, "next_cursor"], {key: {"type": "array", "items": item}, "next_cursor": CURSOR})


ERROR_ENTRY: Final = obj(
    ["pointer", "detail"],
    {
        "pointer": {"type": "string", "description": "A JSON Pointer into the request (/input/owner)."},
        "detail": TEXT,
    },
)

DEFINITION: Final = obj(
    [
        "type",
        "name",
        "version",
        "status",
        "media_type",
        "description",
        "source",
        "overview",
        "warnings",
        "created_at",
        "updated_at",
    ],
    {
        "type": {"enum": list(DEFINITION_TYPES)},
        "name": TEXT,
        "version": {"type": "integer", "minimum": 1},
        "status": {"enum": ["active", "retired"]},
        "media_type": TEXT,
        "description": OPTIONAL_TEXT,
        "source": TEXT,
        "overview": {"type": "string", "description": "What the function does, in plain words."},
        "warnings": {"type": "array", "items": TEXT},
        "created_at": TIME,
        "updated_at": TIME,
        "state_machine": {
            "type": "object",
            "description": "A workflow's compiled Step Functions state machine (ASL, JSONata), its "
            "entry function's ARN a placeholder.",
        },
        "schedule": nullable("object", "A workflow's schedule (cron, every), or null."),
    },
    "A definition at its latest version.",
)

REJECTION: Final = obj(
    ["reason", "detail"],
    {
        "reason": {"enum": ["invalid_input", "conflict", "unavailable", "cancelled", "unanswered"]},
        "kind": TEXT,
        "because": TEXT,
        "detail": TEXT,
        "errors": {"type": "array", "items": ERROR_ENTRY},
    },
)

RUN: Final = obj(
    ["run_id", "type", "name", "definition_version", "status", "started_at", "started_by"],
    {
        "run_id": {"type": "string", "format": "uuid"},
        "type": {"enum": list(DEFINITION_TYPES)},
        "name": TEXT,
        "definition_version": {"type": "integer"},
        "status": {"enum": list(RUN_STATUSES)},
        "output": {"description": "The run's output, once it succeeded (as its size when a list omits it)."},
        "rejection": REJECTION,
        "started_at": TIME,
        "started_by": TEXT,
        "waiting": nullable("object", "What a started agent run waits for."),
        "finished_at": TIME,
        "omitted": {"type": "array", "items": TEXT},
        "record": {"type": "object", "description": "What the type records of the run (get_run only)."},
        "parent": obj(
            ["run_id", "task"],
            {"run_id": {"type": "string", "format": "uuid"}, "task": TEXT},
            "The workflow run whose call: run_definition task started this run, and the task.",
        ),
    },
    "A run of a definition.",
)

ANSWER_FACT: Final = obj(
    ["run_id", "answer_id", "answer", "claimed_for", "answered_by", "answered_at"],
    {
        "run_id": {"type": "string", "format": "uuid"},
        "answer_id": {"type": "string", "description": "The id of the request_answered event."},
        "answer": {"description": "The answer as it was given."},
        "claimed_for": OPTIONAL_TEXT,
        "answered_by": TEXT,
        "answered_at": TIME,
    },
    "The answer, as it was recorded on the run.",
)

RUN_EVENT_RECEIPT: Final = obj(
    ["run_id", "event_id", "received_at"],
    {
        "run_id": {"type": "string", "format": "uuid"},
        "event_id": {
            "type": "string",
            "description": "The id of the run's event_received event (get_event reads it); the first one "
            "for an id sent again.",
        },
        "received_at": TIME,
    },
    "The event, taken by the workflow run: a listen that waits for it goes on with it.",
)

INTERACTION: Final = obj(
    ["run_id", "type", "function", "to", "message", "takes_answer", "requested_at", "expires_at", "standing"],
    {
        "run_id": {"type": "string", "format": "uuid"},
        "type": {"enum": list(DEFINITION_TYPES)},
        "function": TEXT,
        "version": {"type": "integer"},
        "to": TEXT,
        "delivery": nullable("object", "The tool the request is sent through ({server, tool}), or null."),
        "message": TEXT,
        "takes_answer": {"type": "boolean"},
        "requested_at": TIME,
        "expires_at": TIME,
        "attempts": {"type": "integer"},
        "standing": {
            "enum": [
                "in_inbox",
                "to_deliver",
                "delivering",
                "delivered",
                "retrying",
                "undelivered",
                "cancelling",
            ]
        },
        "answer_schema": {"description": "The JSON Schema an answer to this request must match."},
        "conversation": OPTIONAL_TEXT,
        "answerer": OPTIONAL_TEXT,
        "reply_refusals": {"type": "integer"},
    },
    "An open request, waiting for its answer.",
)

EVENT: Final = obj(
    ["id", "type", "at", "data"],
    {
        "id": TEXT,
        "type": TEXT,
        "at": TIME,
        "run_id": {"type": "string", "format": "uuid"},
        "data": {"type": "object"},
        "omitted": {"type": "array", "items": TEXT},
    },
    "One fact of the playbook's history.",
)

SEARCH: Final = obj(
    ["servers"],
    {
        "servers": {
            "type": "array",
            "items": obj(
                ["server", "tools"],
                {
                    "server": TEXT,
                    "tools": {
                        "type": "array",
                        "items": obj(
                            ["tool", "description", "read_only"],
                            {"tool": TEXT, "description": TEXT, "read_only": {"type": "boolean"}},
                        ),
                    },
                    "because": TEXT,
                    "detail": TEXT,
                },
            ),
        }
    },
)

INTROSPECTED: Final = obj(
    ["server", "tool", "description", "input_schema", "read_only"],
    {
        "server": TEXT,
        "tool": TEXT,
        "description": TEXT,
        "input_schema": {"type": "object"},
        "read_only": {"type": "boolean"},
    },
)

EXECUTED: Final = obj(
    ["outcome", "answer", "is_error", "text", "duration_ms"],
    {
        "outcome": {"enum": ["answered", "tool_error"]},
        "answer": {
            "description": "The tool's structured content, else its first text parsed as JSON, else that text"
        },
        "is_error": {"type": "boolean"},
        "text": OPTIONAL_TEXT,
        "duration_ms": {"type": "integer", "minimum": 0},
    },
)

DRY_RUN: Final = obj(
    ["server", "tool", "would_call", "read_only", "checks", "calls_nothing"],
    {
        "server": TEXT,
        "tool": TEXT,
        "would_call": {"type": "boolean"},
        "read_only": nullable("boolean"),
        "checks": {
            "type": "array",
            "items": obj(
                ["check", "ok"],
                {"check": TEXT, "ok": nullable("boolean"), "because": TEXT, "detail": TEXT},
            ),
        },
        "calls_nothing": TEXT,
    },
)

MODELS: Final = obj(
    ["object", "data", "catalog_status", "listed_at"],
    {
        "object": {"const": "list"},
        "data": {
            "type": "array",
            "items": obj(
                ["id", "object", "created", "owned_by"],
                {
                    "id": TEXT,
                    "object": {"const": "model"},
                    "created": {"type": "integer"},
                    "owned_by": TEXT,
                    "name": TEXT,
                    "context_window": {"type": "integer"},
                    "max_tokens": {"type": "integer"},
                    "resolved_to": TEXT,
                    "pattern": {"type": "boolean"},
                },
            ),
        },
        "catalog_status": {"enum": ["complete", "partial"]},
        "listed_at": TIME,
    },
)


#: A connection (``http-api.md``, "Connections"): never a secret.
CONNECTION: Final = obj(
    ["name", "url", "status", "playbooks", "added_by", "added_at", "approved_by", "approved_at", "auth"],
    {
        "name": TEXT,
        "url": TEXT,
        "status": {
            "enum": ["pending", "active", "broken", "not_allowed"],
            "description": (
                "pending: no admin of the org approved it yet; broken: its credential cannot be read or "
                "refreshed (remove it and add it again); not_allowed: a rule of the operator no longer "
                "allows its URL."
            ),
        },
        "playbooks": {
            "anyOf": [{"type": "array", "items": TEXT}, {"type": "null"}],
            "description": "The playbooks of the org that see it; null: every one.",
        },
        "added_by": TEXT,
        "added_at": TIME,
        "approved_by": OPTIONAL_TEXT,
        "approved_at": nullable("string", TIME["description"]),
        "auth": {"enum": ["none", "headers", "oauth"]},
    },
)
CONNECTIONS: Final = obj(["connections"], {"connections": {"type": "array", "items": CONNECTION}})
#: A ``204 No Content`` success: no body over HTTP, ``{}`` as an MCP tool's output.
NO_CONTENT: Final = obj([], {})


def problem_schema(reasons: tuple[str, ...] = tuple(REASONS)) -> dict[str, Any]:
    """The RFC 9457 problem document (``http-api.md``, "Problems"), its ``reason`` one of ``reasons``."""
    return obj(
        ["type", "title", "status", "reason", "detail"],
        {
            "type": {"type": "string", "enum": [PROBLEM_TYPE_BASE + reason for reason in reasons]},
            "title": TEXT,
            "status": {"type": "integer", "enum": sorted({REASONS[reason][0] for reason in reasons})},
            "reason": {"enum": list(reasons)},
            "detail": TEXT,
            "kind": TEXT,
            "because": TEXT,
            "errors": {"type": "array", "items": ERROR_ENTRY, "maxItems": 21},
            "instance": TEXT,
        },
        "An RFC 9457 problem.",
    )
