"""The API's own base URL (``parley.api.origin``): what the OAuth redirect URI is made of."""

from __future__ import annotations

from typing import Any

import pytest

from parley.api.origin import api_base_url
from parley.local.events import api_gateway_event


def aws_event(host: str, stage: str = "dev", **headers: str) -> dict[str, Any]:
    return {
        "path": "/v1/orgs/acme/connections/notes/authorize",
        "headers": {"Host": host, "X-Forwarded-Proto": "https", **headers},
        "requestContext": {"stage": stage, "domainName": host, "path": f"/{stage}/v1/orgs/acme"},
    }


def test_on_api_gateways_own_domain_the_stage_is_part_of_the_base() -> None:
    event = aws_event("abc123.execute-api.eu-west-1.amazonaws.com")

    assert api_base_url(event, {}) == "https://abc123.execute-api.eu-west-1.amazonaws.com/dev"


def test_on_a_custom_domain_the_host_is_the_base() -> None:
    assert api_base_url(aws_event("parley.acme.com"), {}) == "https://parley.acme.com"


def test_the_operators_public_url_wins() -> None:
    event = aws_event("parley.acme.com")

    assert api_base_url(event, {"PARLEY_PUBLIC_URL": "https://acme.com/parley/"}) == "https://acme.com/parley"


def test_the_local_server_is_reached_over_http_at_its_host_and_port() -> None:
    event = api_gateway_event(
        "POST", "/v1/orgs/acme/connections/notes/authorize", [("Host", "127.0.0.1:8123")], b""
    )

    assert api_base_url(event, {}) == "http://127.0.0.1:8123"


@pytest.mark.parametrize("host", ["", "evil.example/path", "a b", "user@host"])
def test_a_host_that_is_not_one_gives_no_base(host: str) -> None:
    event = {"headers": {"Host": host} if host else {}, "requestContext": {}}

    assert api_base_url(event, {}) is None


def test_an_odd_forwarded_scheme_is_read_as_http() -> None:
    event = {"headers": {"Host": "127.0.0.1:8000", "X-Forwarded-Proto": "gopher"}, "requestContext": {}}

    assert api_base_url(event, {}) == "http://127.0.0.1:8000"
