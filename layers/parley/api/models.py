"""Operation of ``http-api.md`` "Models": list_models, ``GET /v1/orgs/{org}/models``.

The route is relative to the org, not a playbook: a principal with any grant in the org (``read`` or
``write``, on any of its playbooks) may read it; one with none answers ``404 not_found``, worded the same
whether the org exists or not (``parley.api.operation.authorize_call``). ``provider`` (optional) keeps
the entries of one configured provider; any other value is ``400 bad_request``.

The listing (``parley.models.listing``) brings the catalog and the providers' entry point with
it: it is imported when the operation is first called, so the api function's cold start carries no
provider code.
"""

from __future__ import annotations

from typing import Any, Final

from parley.api.operation import Answer, Call, Hints, Operation, Param, Services
from parley.api.shapes import MODELS


def list_models(services: Services, call: Call) -> Answer:
    from parley.models import models_listing

    return Answer(models_listing(services.runtime, provider=call.values["provider"]))


def _listed(services: Services, call: Call, body: dict[str, Any]) -> str:
    count = len(body.get("data") or [])
    partial = (
        "; a provider's list could not be read, so it may miss some"
        if body.get("catalog_status") == "partial"
        else ""
    )
    return f"{count} model{'s are' if count != 1 else ' is'} listed{partial}."


OPERATIONS: Final = (
    Operation(
        name="list_models",
        title="List the models",
        method="GET",
        route="/models",
        scope="org",
        role="read",
        tag="Models",
        summary="List the models a reasoning function may name.",
        description=(
            "List the models a reasoning function of this org may name in its model: the aliases, the "
            "operator's catalog and what the configured providers list, each with its context window "
            "where known. Use it before writing or changing a reasoning function."
        ),
        hints=Hints(read_only=True, idempotent=True),
        invoke=list_models,
        summarize=_listed,
        params=(
            Param("provider", "query", "Only the models of this configured provider, such as anthropic."),
        ),
        output=MODELS,
    ),
)
