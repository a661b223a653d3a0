"""Reading a request: who calls, its JSON body and its query (``http-api.md``, "Base and auth").

Client mistakes are told apart, and none is a 500:

- a body over 1 MiB: ``413 content_too_large``;
- a body whose ``Content-Type`` is not JSON: ``415 unsupported_media_type``;
- a body that is not JSON, or not a JSON object: ``400 bad_request``;
- body fields missing, unknown or of the wrong type: ``422 invalid_input``, one ``errors`` entry per
  field with its JSON Pointer (``/name``, ``/source``); an absent body counts as ``{}``;
- query values that cannot be used (``limit=0``, ``include_retired=maybe``): ``400 bad_request``, as
  each operation declares its parameters (``parley.api.operation.Param``).

Bodies are checked after the caller is known (``401`` comes first).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from parley.auth import authenticate, authorize, authorized_principal
from parley.definitions.model import PlaybookRef
from parley.errors import ErrorEntry, Problem

if TYPE_CHECKING:  # the configuration loads with the runtime, the body models with a body
    from pydantic import BaseModel

    from parley.config import OperatorConfig, Principal

MAX_BODY_BYTES: Final = 1_048_576

Model = TypeVar("Model", bound="BaseModel")


def caller(
    event: APIGatewayProxyEvent,
    operator: OperatorConfig,
    org: str,
    playbook: str,
    needs: Literal["read", "write"],
) -> tuple[Principal, PlaybookRef]:
    """The calling principal, once it is known to hold the role the call ``needs`` on the playbook.

    On AWS the API's JWT authorizer has checked the token and names the principal in the request's
    authorizer context; locally (no authorizer) the bearer token is one of the operator configuration's.
    """
    principal = calling_principal(event, operator)
    authorize(principal, org, playbook, needs)
    return principal, PlaybookRef(org=org, playbook=playbook)


def calling_principal(event: APIGatewayProxyEvent, operator: OperatorConfig) -> Principal:
    """Who calls: on AWS the principal the API's JWT authorizer names in the request's authorizer
    context; locally (no authorizer) the one whose bearer token the operator configuration holds.
    ``401`` otherwise."""
    authorizer = (event.raw_event.get("requestContext") or {}).get("authorizer")
    if isinstance(authorizer, Mapping) and "principalId" in authorizer:
        principal_id = authorizer["principalId"]
        return authorized_principal(principal_id if isinstance(principal_id, str) else None, operator)
    return authenticate(event.headers.get("authorization"), operator)


def json_object_body(event: APIGatewayProxyEvent, *, any_media_type: bool = False) -> dict[str, Any]:
    """The body as a JSON object; an absent or empty body is ``{}``. ``any_media_type`` reads a body
    sent without ``application/json`` too (the local clock's routes, which a person types by hand)."""
    raw = _raw_body(event)
    if not raw:
        return {}
    if len(raw) > MAX_BODY_BYTES:
        raise Problem(
            "content_too_large",
            f"A body is at most {MAX_BODY_BYTES:,} bytes (1 MiB); this one is {len(raw):,}.",
        )
    content_type = event.headers.get("content-type")
    if not any_media_type and not is_json_media_type(content_type):
        shown = f"{content_type!r}" if content_type else "none"
        raise Problem(
            "unsupported_media_type", f"Send the body as application/json (Content-Type was {shown})."
        )
    try:
        text = raw.decode("utf-8")
        data = json.loads(text, parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise Problem("bad_request", f"The body is not valid JSON: {_json_error(exc)}") from None
    except RecursionError:
        raise Problem("bad_request", "The body nests too deeply to be read.") from None
    if not isinstance(data, dict):
        raise Problem("bad_request", f"The body is a JSON object, not {_json_kind(data)}.")
    broken = _lone_surrogate(data, "")
    if broken is not None:
        # JSON may escape half of a UTF-16 pair ("\ud800"), which is no Unicode text: the caller's
        # mistake, answered before any field is read (it could not be stored or hashed as UTF-8).
        raise Problem(
            "invalid_input",
            f"{broken or '/'}: a text holds a lone surrogate escape (such as \\ud800), which is not Unicode "
            "text; send UTF-8 text.",
            errors=[
                ErrorEntry(
                    broken or "/", "This text holds a lone surrogate escape, which is not Unicode text."
                )
            ],
        )
    return data


def _lone_surrogate(value: Any, pointer: str, depth: int = 0) -> str | None:
    """The pointer of the first text (a key or a value) holding a lone surrogate, or ``None``."""
    from parley.documents.pointers import escape_token

    if isinstance(value, str):
        return pointer if _has_surrogate(value) else None
    if depth > 600:  # the JSON parser's own recursion bound came first; nothing deeper is read
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            place = f"{pointer}/{escape_token(key) if not _has_surrogate(key) else '~'}"
            if _has_surrogate(key):
                return place
            found = _lone_surrogate(item, place, depth + 1)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _lone_surrogate(item, f"{pointer}/{index}", depth + 1)
            if found is not None:
                return found
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def parse_body(model: type[Model], event: APIGatewayProxyEvent) -> Model:
    """The JSON object body as ``model`` (strict types, no unknown fields), or ``422 invalid_input``."""
    from parley.api.operation import checked_body

    checked: Model = checked_body(model, json_object_body(event))
    return checked


def is_json_media_type(content_type: str | None) -> bool:
    """``application/json`` or ``application/<something>+json``, with any parameters."""
    if not content_type:
        return False
    media_type = content_type.split(";", 1)[0].strip().lower()
    kind, _, subtype = media_type.partition("/")
    return kind == "application" and (subtype == "json" or subtype.endswith("+json"))


def _raw_body(event: APIGatewayProxyEvent) -> bytes:
    body = event.body
    if not body:
        return b""
    if event.is_base64_encoded:
        try:
            return base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            raise Problem("bad_request", "The body is not valid base64.") from None
    return body.encode("utf-8")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _json_error(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno}, column {exc.colno}."
    if isinstance(exc, UnicodeDecodeError):
        return "it is not UTF-8."
    return f"{exc}."


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array"
