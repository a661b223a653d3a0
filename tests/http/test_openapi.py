"""The API described (http-api.md, "API description"): ``GET /openapi.json`` and ``GET /docs`` of a real
``parley serve``, and Schemathesis run against that description (no server error, every response as
described), bounded to stay fast."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from mcp_servers import running_tool_server
from tool_serving import serving_with

pytestmark = pytest.mark.http

TOKEN = "dev-token"
ASK = "---\ndescription: Asks for a yes\nto: '{{ input.to }}'\nexpires: PT10M\n---\nYes?\n"
#: What Schemathesis checks: no 5xx, and every status, media type, header and body as described.
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
)


@dataclass
class Served:
    url: str
    log: Path
    tmp: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("serve-openapi")
    with running_tool_server() as tools:
        operator = f"""
principals:
  - {{ id: dev, token: {TOKEN}, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - {{ name: chat, url: "{tools.url}", orgs: [acme], allowed: [post_message, thread_replies] }}
"""
        with serving_with(tmp, operator) as url:
            yield Served(url, tmp / "serve.log", tmp)


def test_the_description_needs_no_token_and_is_openapi_3_1(served: Served) -> None:
    import schemathesis

    reply = httpx.get(served.url + "/openapi.json", timeout=30)
    document = reply.json()

    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"
    assert document["openapi"] == "3.1.0"
    operations = {op["operationId"] for item in document["paths"].values() for op in item.values()}
    assert len(operations) == 26 and {"create_definition", "answer_interaction", "list_models"} <= operations
    limit = next(
        p
        for p in document["paths"]["/v1/orgs/{org}/playbooks/{playbook}/runs"]["get"]["parameters"]
        if p["name"] == "limit"
    )
    assert limit["schema"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}
    run = document["paths"]["/v1/orgs/{org}/playbooks/{playbook}/definitions/{type}/{name}/run"]["post"]
    assert set(run["responses"]) == {
        "200",
        "400",
        "401",
        "403",
        "404",
        "409",
        "410",
        "413",
        "415",
        "422",
        "500",
        "503",
    }
    assert schemathesis.openapi.from_dict(document).raw_schema == document  # a description it can read
    assert httpx.post(served.url + "/openapi.json", timeout=30).status_code == 405


def test_the_docs_page_renders_the_description_with_nothing_from_elsewhere(served: Served) -> None:
    reply = httpx.get(served.url + "/docs", timeout=30)
    policy = reply.headers["content-security-policy"]

    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/html")
    assert 'fetch("openapi.json"' in reply.text
    assert re.findall(r"https?://", reply.text) == []  # no third-party origin: the page is whole
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'", policy)


def test_schemathesis_finds_no_server_error_and_no_response_outside_the_description(served: Served) -> None:
    # Something to find: a definition, a run waiting on its request.
    with httpx.Client(
        base_url=served.url + "/v1/orgs/acme/playbooks/campaigns",
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=60,
    ) as client:
        assert (
            client.post("/definitions/interaction", json={"name": "ask-yes", "source": ASK}).status_code
            == 201
        )
        assert (
            client.post("/definitions/interaction/ask-yes/run", json={"input": {"to": "x"}}).status_code
            == 200
        )
    config = served.tmp / "schemathesis.toml"
    # Most cases land in the playbook the token may use, where there is data to read.
    config.write_text('[parameters]\n"path.org" = "acme"\n"path.playbook" = "campaigns"\n', encoding="utf-8")
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "--config-file", str(config),
        "--no-color",
        "run", served.url + "/openapi.json",
        "--url", served.url,
        "--header", f"Authorization: Bearer {TOKEN}",
        "--checks", ",".join(CHECKS),
        # Fuzzing only, 6 cases an operation, valid and invalid (about 20 s). The coverage phase (every
        # boundary of every parameter: 700-odd cases, about a minute) passes too; run it by hand with
        # --phases coverage when the description changes.
        "--phases", "examples,fuzzing",
        "--max-examples", "6",
        "--seed", "16",
        "--workers", "1",
        "--generation-database", "none",
        "--request-timeout", "30",
    ]  # fmt: skip

    finished = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=served.tmp)

    assert finished.returncode == 0, finished.stdout[-8000:] + finished.stderr[-2000:]
    assert "passed" in finished.stdout
