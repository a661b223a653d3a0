"""The one mapping from errors to HTTP responses (``http-api.md``, "Problems").

Every error is an RFC 9457 ``application/problem+json`` document built from a
:class:`parley.errors.Problem`::

    Problem                        -> its reason's status, with its headers (WWW-Authenticate, Allow)
    powertools ServiceError        -> the reason of its status (bad_request, not_found, ...)
    no route for the path          -> 404 not_found, or 405 method_not_allowed with Allow
    any other exception            -> 500 internal, with instance urn:uuid:… (logged with that id;
                                      the client never sees a traceback)

Success and problem responses both carry ``Cache-Control: no-store``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Final

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError, ServiceError

from parley.api.log import logger
from parley.errors import REASONS, Problem

JSON: Final = "application/json"
PROBLEM_JSON: Final = "application/problem+json"
NO_STORE: Final = {"Cache-Control": "no-store"}


def _dumps(body: Any) -> str:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def json_response(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response[str]:
    """A success response: JSON, never cached."""
    return Response(
        status_code=status,
        content_type=JSON,
        body=_dumps(body),
        headers={**NO_STORE, **(headers or {})},
    )


def empty_response(headers: Mapping[str, str] | None = None) -> Response[str]:
    """A ``204 No Content`` success: no body, never cached."""
    return Response(status_code=204, content_type=None, body="", headers={**NO_STORE, **(headers or {})})


def problem_response(problem: Problem) -> Response[str]:
    return Response(
        status_code=problem.status,
        content_type=PROBLEM_JSON,
        body=_dumps(problem.as_json()),
        headers={**NO_STORE, **problem.headers},
    )


def problem_result(problem: Problem) -> dict[str, Any]:
    """The problem as an API Gateway REST proxy result, for answers made outside the resolver."""
    headers = {"Content-Type": PROBLEM_JSON, **NO_STORE, **problem.headers}
    return {
        "statusCode": problem.status,
        "multiValueHeaders": {name: [value] for name, value in headers.items()},
        "body": _dumps(problem.as_json()),
        "isBase64Encoded": False,
    }


def json_result(body: Any, status: int = 200) -> dict[str, Any]:
    """A success body as an API Gateway REST proxy result, for answers made outside the resolver."""
    headers = {"Content-Type": JSON, **NO_STORE}
    return {
        "statusCode": status,
        "multiValueHeaders": {name: [value] for name, value in headers.items()},
        "body": _dumps(body),
        "isBase64Encoded": False,
    }


def internal_problem(exc: BaseException, **context: Any) -> Problem:
    """Log ``exc`` under a fresh id and return the ``500 internal`` problem that names the id."""
    instance = f"urn:uuid:{uuid.uuid4()}"
    logger().exception(
        "Unexpected error", extra={"instance": instance, "error_type": type(exc).__name__, **context}
    )
    return Problem(
        "internal",
        "Something went wrong on our side. Quote the instance when you report it.",
        instance=instance,
    )


def _reason_of_status(status: int) -> str:
    for reason, (reason_status, _) in REASONS.items():
        if reason_status == status:
            return reason
    return "internal"


def register_problem_handlers(
    app: APIGatewayRestResolver, allowed_methods: Callable[[str], list[str]]
) -> None:
    """Register the exception handlers on ``app``.

    ``allowed_methods(path)`` names the methods the routes take on ``path``; when the request's own
    method is not among them (and there are some), the answer is 405 with ``Allow``.
    """

    def _problem(problem: Problem) -> Response[str]:
        return problem_response(problem)

    @app.not_found
    def _no_route(_: NotFoundError) -> Response[str]:
        event = app.current_event
        path = str(app.context.get("_path") or event.path)
        allowed = allowed_methods(path)
        if allowed and event.http_method.upper() not in allowed:
            return problem_response(
                Problem(
                    "method_not_allowed",
                    f"{path} takes {', '.join(allowed)}, not {event.http_method.upper()}.",
                    headers={"Allow": ", ".join(allowed)},
                )
            )
        return problem_response(Problem("not_found", f"There is nothing at {path}."))

    def _service_error(error: ServiceError) -> Response[str]:
        reason = _reason_of_status(error.status_code)
        if reason == "internal":
            return problem_response(internal_problem(error))
        return problem_response(Problem(reason, str(error.msg)))

    def _unexpected(exc: Exception) -> Response[str]:
        event = app.current_event
        return problem_response(internal_problem(exc, method=event.http_method, resource=event.resource))

    # Registered by calls, not decorators: powertools' decorators are untyped.
    app.exception_handler(Problem)(_problem)
    app.exception_handler(ServiceError)(_service_error)
    app.exception_handler(Exception)(_unexpected)
