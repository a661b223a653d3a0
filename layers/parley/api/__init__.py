"""The HTTP API (``http-api.md``) on API Gateway REST proxy events, through powertools' resolver.

``app`` builds the resolver and the Lambda entry ``handle``; ``problems`` is the one place that turns
errors into RFC 9457 responses; ``requests`` reads bodies and queries; ``definitions`` holds the
definition routes.

Offers: the entry (:func:`handle`, :func:`build_handler`), the registry of operations (``OPERATIONS``,
``BY_NAME``; :class:`Operation`, :class:`Call`, :class:`Services`), the API's description
(:func:`openapi_document`, :func:`api_version`, :func:`body_json_schema`), and problems as responses
(:func:`problem_result`, :func:`internal_problem`).

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.api.app import build_handler, handle
    from parley.api.body_schemas import body_json_schema
    from parley.api.openapi import api_version, openapi_document
    from parley.api.operation import Call, Operation, Services
    from parley.api.problems import internal_problem, problem_result
    from parley.api.registry import BY_NAME, OPERATIONS

__all__ = [
    "BY_NAME",
    "OPERATIONS",
    "Call",
    "Operation",
    "Services",
    "api_version",
    "body_json_schema",
    "build_handler",
    "handle",
    "internal_problem",
    "openapi_document",
    "problem_result",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "app": ("build_handler", "handle"),
            "registry": ("BY_NAME", "OPERATIONS"),
            "operation": ("Call", "Operation", "Services"),
            "openapi": ("api_version", "openapi_document"),
            "body_schemas": ("body_json_schema",),
            "problems": ("internal_problem", "problem_result"),
        },
    )
