"""Route of ``http-api.md`` "Models": list_models, ``GET /v1/orgs/{org}/models``.

The route is relative to the org, not a playbook: a principal with any grant in the org (``read`` or
``write``, on any of its playbooks) may read it; one with none answers ``404 not_found``, worded the same
whether the org exists or not. ``provider`` (optional) keeps the entries of one configured provider; any
other value is ``400 bad_request``.

The listing (``parley.reasoning.models.listing``) brings the catalog and the providers' entry point with
it: it is imported when the route is first called, so the api function's cold start carries no provider code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from parley.api.problems import json_response
from parley.api.requests import calling_principal, query_text
from parley.api.routing import ORG_BASE, Routes
from parley.errors import Problem
from parley.ports.runtime import Runtime

if TYPE_CHECKING:
    from parley.config import OperatorConfig, Principal


def register_model_routes(routes: Routes, runtime: Runtime) -> None:
    app = routes.app

    @routes.add("GET", ORG_BASE + "/models")
    def list_models(org: str) -> Response[str]:
        org_member(app.current_event, runtime.operator, org)
        query = app.current_event.query_string_parameters or {}
        provider = query_text(query, "provider")
        from parley.reasoning.models.listing import models_listing

        return json_response(models_listing(runtime, provider=provider))


def org_member(event: APIGatewayProxyEvent, operator: OperatorConfig, org: str) -> Principal:
    """The calling principal, once it is known to hold a grant in ``org``: ``401`` without a valid
    token, ``404 not_found`` without a grant (as for a playbook the caller cannot read)."""
    principal = calling_principal(event, operator)
    if not any(grant.org == org for grant in principal.grants):
        raise Problem("not_found", f"There is no org {org!r}.")
    return principal
