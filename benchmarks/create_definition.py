"""create_definition latency in process: an API Gateway event through the real handler into moto.

The figure covers the whole operation as the Lambda runs it (routing, auth, the document checker with
its overview, two conditional DynamoDB writes in a transaction) except the network, over the format
page's example documents (``examples/definitions``).

moto's ``TransactWriteItems`` deep-copies the whole table to be able to roll back, so its cost grows
with the table (DynamoDB's does not): each saved definition is deleted again, outside the timing, so
every measured create meets the same small table.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "definitions"
ROUNDS = 200


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure() -> dict[str, tuple[float, float]]:
    """``{document: (p50 ms, p99 ms)}``, plus ``"first event"``: the first create of a fresh handler,
    which loads the routes, the document checker and the boto3 client (what a cold start adds after
    the module import)."""
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    from moto import mock_aws

    from parley.api.app import build_handler
    from parley.clock import SystemClock
    from parley.config import parse_operator_config
    from parley.definitions.store import DynamoDefinitionStore
    from parley.local.aws import create_table, local_dynamodb_client
    from parley.local.events import api_gateway_event
    from parley.local.server import LambdaContext
    from parley.ports.runtime import Runtime

    operator = parse_operator_config((ROOT / "examples" / "operator.yaml").read_text(), "operator.yaml")
    figures: dict[str, tuple[float, float]] = {}
    with mock_aws():
        client = local_dynamodb_client()
        table = "parley-bench"
        runtime = Runtime(
            definitions=DynamoDefinitionStore(client, create_table(client, table)),
            clock=SystemClock(),
            operator=operator,
        )
        handler = build_handler(runtime)
        headers = [("Authorization", "Bearer dev-token"), ("Content-Type", "application/json")]
        path = "/v1/orgs/acme/playbooks/campaigns/definitions/interaction"
        for document in sorted(EXAMPLES.glob("*.md")):
            source = document.read_text()
            samples: list[float] = []
            for i in range(ROUNDS + 10):
                body = json.dumps({"name": f"{document.stem[:38]}-{i}", "source": source}).encode()
                event = api_gateway_event("POST", path, headers, body)
                start = time.perf_counter()
                result = handler(event, LambdaContext(aws_request_id=f"bench-{i}"))
                elapsed = time.perf_counter() - start
                if result["statusCode"] != 201:
                    raise RuntimeError(f"{document.name}: {result['statusCode']} {result['body']}")
                if "first event" not in figures:
                    figures["first event"] = (elapsed * 1000, elapsed * 1000)
                if i >= 10:  # the first calls warm the caches of this document's code paths
                    samples.append(elapsed * 1000)
                _forget(client, table)
            figures[document.stem] = (statistics.median(samples), _percentile(samples, 0.99))
    return figures


def _forget(client: object, table: str) -> None:
    """Delete every item, so that moto's whole-table copy stays as small as a fresh table's."""
    scan = client.scan(TableName=table, ProjectionExpression="pk, sk")  # type: ignore[attr-defined]
    for item in scan["Items"]:
        client.delete_item(TableName=table, Key={"pk": item["pk"], "sk": item["sk"]})  # type: ignore[attr-defined]
