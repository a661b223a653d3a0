"""``GET /openapi.json`` and ``GET /docs`` (``http-api.md``, "API description"): no token needed."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from parley.api.problems import json_response
from parley.api.routing import Routes

OPENAPI_PATH = "/openapi.json"
DOCS_PATH = "/docs"


def register_description_routes(routes: Routes) -> None:
    @routes.add("GET", OPENAPI_PATH)
    def openapi() -> Response[str]:
        from parley.api.openapi import openapi_document

        return json_response(openapi_document())

    @routes.add("GET", DOCS_PATH)
    def docs() -> Response[str]:
        from parley.api.docs_page import docs_page

        page, headers = docs_page()
        return Response(
            status_code=200, content_type="text/html; charset=utf-8", body=page, headers=dict(headers)
        )
