"""Random and mutated documents through the whole create_definition path: always 201 or 422, never 500."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from document_strategies import mutated
from hypothesis import given, settings
from hypothesis import strategies as st

from parley.api.app import Handler, build_handler
from parley.clock import ManualClock
from parley.config import parse_operator_config
from parley.definitions.store import DynamoDefinitionStore
from parley.local.events import api_gateway_event
from parley.ports.runtime import Runtime

OPERATOR = """
principals:
  - id: dev
    token: dev-token
    grants: [{ org: acme, playbook: campaigns, role: write }]
"""
PATH = "/v1/orgs/acme/playbooks/campaigns/definitions/interaction"
HEADERS = [("Authorization", "Bearer dev-token"), ("Content-Type", "application/json")]
NAMES = itertools.count()


@pytest.fixture(scope="module")
def handler(_dynamodb_client: Any) -> Iterator[Handler]:
    from moto import mock_aws

    from parley.local.aws import create_table

    with mock_aws():
        table = create_table(_dynamodb_client, "parley-fuzz")
        runtime = Runtime(
            definitions=DynamoDefinitionStore(_dynamodb_client, table),
            clock=ManualClock(),
            operator=parse_operator_config(OPERATOR, "test", environ={}),
        )
        yield build_handler(runtime)


def create(handler: Handler, source: str) -> None:
    body = json.dumps({"name": f"fuzz-{next(NAMES)}", "source": source}).encode()
    result = handler(api_gateway_event("POST", PATH, HEADERS, body), None)
    document = json.loads(result["body"])
    assert result["statusCode"] in (201, 422), document
    if result["statusCode"] == 422:
        assert document["reason"] == "invalid_input"
        assert document["errors"] and all(e["pointer"] == "/source" for e in document["errors"])
    else:
        assert document["version"] == 1 and document["overview"]


@settings(max_examples=120)
@given(source=mutated())
def test_mutated_documents_are_saved_or_refused(handler: Handler, source: str) -> None:
    create(handler, source)


@settings(max_examples=60)
@given(source=st.text(max_size=400))
def test_random_text_is_refused_with_problems(handler: Handler, source: str) -> None:
    create(handler, source)
