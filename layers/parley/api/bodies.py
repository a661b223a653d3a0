"""The bodies of the operations that take one (``http-api.md``): pydantic models, checked strictly
(``parley.api.operation.checked_body``), whose JSON Schemas the OpenAPI document and the MCP tools show.

Their own module, loaded when a call with a body is read or a schema is shown, never with the registry:
a GET (the api function's most common first event) loads no pydantic (issue 20). An operation names its
body here by ``body_model``.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field

from parley.connections.model import (
    CONNECTION_NAME,
    MAX_CONNECTION_HEADERS,
    MAX_CONNECTION_PLAYBOOKS,
    URL_MAX_LENGTH,
)
from parley.definitions.service import MAX_SOURCE_BYTES, NAME_PATTERN
from parley.runs.answering import CLAIMED_FOR_MAX_BYTES
from parley.runs.endings import CANCEL_REASON_MAX_CHARS
from parley.tools.service import MAX_ARGUMENTS_BYTES

#: A workflow run's event (``workflow-format.md``, "Events"; ``parley.workflow.listening`` checks them).
MAX_EVENT_TYPE_CHARS: Final = 256
MAX_EVENT_ID_CHARS: Final = 256
MAX_EVENT_SOURCE_CHARS: Final = 1024

# --- definitions ---------------------------------------------------------------------------------

_NAME_WORDS: Final = "3 to 48 characters of a-z, 0-9 and '-', starting with a letter"
_SOURCE_WORDS: Final = (
    f"The document, at most {MAX_SOURCE_BYTES:,} bytes as UTF-8: a function is Markdown with front "
    "matter, a workflow a YAML document of the Open Workflow Specification; guide://interaction-format, "
    "guide://reasoning-format and guide://workflow-format say how each is written."
)


class CreateDefinitionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Annotated[
        str,
        Field(
            description=f"The new definition's name: {_NAME_WORDS}. Never reused, also once retired.",
            json_schema_extra={"minLength": 3, "maxLength": 48, "pattern": f"^{NAME_PATTERN.pattern}$"},
        ),
    ]
    source: Annotated[
        str, Field(description=_SOURCE_WORDS, json_schema_extra={"maxLength": MAX_SOURCE_BYTES})
    ]


class UpdateDefinitionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: Annotated[
        str,
        Field(
            description=_SOURCE_WORDS + " An identical source makes no new version.",
            json_schema_extra={"maxLength": MAX_SOURCE_BYTES},
        ),
    ]


class RetireDefinitionBody(BaseModel):
    """Retiring takes no fields; an empty body or ``{}``."""

    model_config = ConfigDict(extra="forbid")


# --- runs ----------------------------------------------------------------------------------------


class RunDefinitionBody(BaseModel):
    """``{input?, run_id?}``: ``input`` is checked by the run (a JSON object; ``{}`` when left out)."""

    model_config = ConfigDict(extra="forbid")

    input: Annotated[
        Any,
        Field(
            description=(
                "The function's input: a JSON object matching the input schema its definition declares "
                "({} when left out)."
            )
        ),
    ] = None
    run_id: Annotated[
        str | None,
        Field(
            description=(
                "A UUID you choose, so that a retry under it answers the recorded result instead of "
                "running again (a new one when left out)."
            ),
            json_schema_extra={"format": "uuid"},
        ),
    ] = None


class AnswerBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer: Annotated[
        Any,
        Field(
            description=(
                "The answer, in the shape of the request's answer_schema (list_interactions shows it): "
                "what the person said, never made up."
            )
        ),
    ]
    claimed_for: Annotated[
        str | None,
        Field(
            description=(
                f"Whom the answer is given for (at most {CLAIMED_FOR_MAX_BYTES} bytes), such as the "
                "person who told you: kept with the answer, never checked."
            ),
            json_schema_extra={"maxLength": CLAIMED_FOR_MAX_BYTES},
        ),
    ] = None


class CancelBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: Annotated[
        str | None,
        Field(
            description=f"Why the run is cancelled, 1 to {CANCEL_REASON_MAX_CHARS:,} characters.",
            json_schema_extra={"minLength": 1, "maxLength": CANCEL_REASON_MAX_CHARS},
        ),
    ] = None


# --- tool servers --------------------------------------------------------------------------------


class ArgumentsBody(BaseModel):
    """``{arguments}``: the tool's arguments, a JSON object (``{}`` when left out)."""

    model_config = ConfigDict(extra="forbid")

    arguments: Annotated[
        dict[str, Any],
        Field(
            description=(
                "The tool's arguments, matching its input_schema (introspect shows it), at most "
                f"{MAX_ARGUMENTS_BYTES // 1024} KiB as JSON ({{}} when left out)."
            )
        ),
    ] = Field(default_factory=dict)


# --- a workflow run's events ---------------------------------------------------------------------


class SendRunEventBody(BaseModel):
    """``{type, id?, source?, subject?, data?}``: an event to a workflow run (``workflow-format.md``,
    "Events"); at most 256 KiB as JSON."""

    model_config = ConfigDict(extra="forbid")

    type: Annotated[
        str,
        Field(
            description=(
                f"What happened, 1 to {MAX_EVENT_TYPE_CHARS} characters, such as com.example.brief.approved: "
                "the workflow's listen filters on it."
            ),
            json_schema_extra={"minLength": 1, "maxLength": MAX_EVENT_TYPE_CHARS},
        ),
    ]
    id: Annotated[
        str | None,
        Field(
            description=(
                f"The event's id, 1 to {MAX_EVENT_ID_CHARS} characters, so that sending it again is taken "
                "once (the first event_id is answered); a new one when left out."
            ),
            json_schema_extra={"minLength": 1, "maxLength": MAX_EVENT_ID_CHARS},
        ),
    ] = None
    source: Annotated[
        str | None,
        Field(
            description=(
                f"Who sends it, 1 to {MAX_EVENT_SOURCE_CHARS:,} characters (/callers/<your principal> when "
                "left out)."
            ),
            json_schema_extra={"minLength": 1, "maxLength": MAX_EVENT_SOURCE_CHARS},
        ),
    ] = None
    subject: Annotated[
        str | None,
        Field(
            description=f"What it is about, at most {MAX_EVENT_SOURCE_CHARS:,} characters.",
            json_schema_extra={"maxLength": MAX_EVENT_SOURCE_CHARS},
        ),
    ] = None
    data: Annotated[
        Any,
        Field(description="The event's data, any JSON value (the listen's output when it reads data)."),
    ] = None


# --- connections ---------------------------------------------------------------------------------


class AddConnectionBody(BaseModel):
    """``{name, url, headers?, playbooks?}``: an MCP server to add to the org (``http-api.md``,
    "Connections"); ``parley.api.connections`` checks each field's rules."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[
        str,
        Field(
            description=(
                "The connection's name, as functions name it in tools (notes/search): 1 to 32 of a-z, "
                "0-9 and '-', starting with a letter; not the name of one of the org's tool servers."
            ),
            json_schema_extra={
                "minLength": 1,
                "maxLength": 32,
                "pattern": f"^{CONNECTION_NAME.pattern[1:-1]}$",
            },
        ),
    ]
    url: Annotated[
        str,
        Field(
            description=(
                "The MCP server's streamable-HTTP URL: https (http only to 127.0.0.1 on the local server), "
                "allowed by the operator's connections.allowed_urls."
            ),
            json_schema_extra={"minLength": 1, "maxLength": URL_MAX_LENGTH, "format": "uri"},
        ),
    ]
    headers: Annotated[
        dict[str, str] | None,
        Field(
            description=(
                f"Headers sent with every request to the server, such as Authorization (at most "
                f"{MAX_CONNECTION_HEADERS}): kept as a secret, never shown, logged or recorded."
            ),
            json_schema_extra={"maxProperties": MAX_CONNECTION_HEADERS},
        ),
    ] = None
    playbooks: Annotated[
        list[str] | None,
        Field(
            description=(
                f"Only these playbooks of the org see the connection (at most {MAX_CONNECTION_PLAYBOOKS}); "
                "every playbook when left out."
            ),
            json_schema_extra={"maxItems": MAX_CONNECTION_PLAYBOOKS},
        ),
    ] = None
