"""``HEAD`` answers wherever ``GET`` does (``http-api.md``: "Every GET also answers HEAD"; issue 29,
item 5), through a real ``parley serve --clock manual``: every GET of ``/openapi.json`` (with a saved
definition and a run behind its ids, and with ids that name nothing), the pages (``/``, ``/inbox`` and
its files, ``/docs``, ``/openapi.json``) and the manual clock — the same status and headers as the GET,
no body."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tool_serving import serving_manually

pytestmark = pytest.mark.http

ROOT = Path(__file__).resolve().parents[2]
TOKEN = {"Authorization": "Bearer dev-token"}
BASE = "/v1/orgs/acme/playbooks/campaigns"
PAGES = ["/", "/inbox", "/docs", "/openapi.json", "/_local/clock"]


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    tmp = tmp_path_factory.mktemp("head")
    with (
        serving_manually(ROOT / "examples" / "operator.yaml", tmp / "serve.log") as url,
        httpx.Client(base_url=url, headers=TOKEN, timeout=60) as client,
    ):
        yield client


def get_paths(http: httpx.Client) -> list[str]:
    """Every GET of the API's description, its ids filled: a saved definition and its run where the ids
    name them."""
    source = (ROOT / "examples" / "definitions" / "approve-campaign-brief.md").read_text(encoding="utf-8")
    assert http.post(f"{BASE}/definitions/interaction", json={"name": "brief", "source": source}).is_success
    run = http.post(
        f"{BASE}/definitions/interaction/brief/run", json={"input": {"owner": "maria", "review": "ok"}}
    ).json()
    event = http.get(f"{BASE}/events").json()["events"][0]["id"]
    values = {"org": "acme", "playbook": "campaigns", "type": "interaction", "name": "brief",
              "run_id": run["run_id"], "event_id": event, "server": "chat",
              "tool": "post_message"}  # fmt: skip
    paths = [
        path for path, operations in http.get("/openapi.json").json()["paths"].items() if "get" in operations
    ]
    assert len(paths) >= 10
    return [re.sub(r"\{(\w+)\}", lambda match: values[match.group(1)], path) for path in paths]


def assert_head_as_get(http: httpx.Client, path: str) -> None:
    got = http.get(path)
    head = http.head(path)
    assert head.status_code == got.status_code, (path, head.status_code, got.status_code)
    assert head.content == b"", path
    for name in ("content-type", "cache-control", "location", "allow"):
        assert head.headers.get(name) == got.headers.get(name), (path, name)


def test_every_get_of_the_api_answers_head(http: httpx.Client) -> None:
    paths = get_paths(http)
    for path in paths:
        assert_head_as_get(http, path)
    assert http.head(paths[0]).status_code == 200


def test_ids_that_name_nothing_answer_head_as_get(http: httpx.Client) -> None:
    for path in (f"{BASE}/definitions/interaction/nothing", f"{BASE}/runs/nothing", "/v1/nowhere"):
        assert_head_as_get(http, path)
        assert http.head(path).status_code == 404


@pytest.mark.parametrize("path", PAGES)
def test_the_pages_and_the_clock_answer_head(http: httpx.Client, path: str) -> None:
    assert_head_as_get(http, path)
    assert http.head(path).status_code in (200, 302)


def test_the_inbox_files_answer_head(http: httpx.Client) -> None:
    page = http.get("/inbox").text
    files = re.findall(r'(?:src|href)="/?(inbox/[^"]+)"', page)
    assert files, page[:500]
    for path in ("/" + file for file in files):
        assert_head_as_get(http, path)
        assert http.head(path).status_code == 200


def test_a_method_a_route_does_not_take_names_head_in_allow(http: httpx.Client) -> None:
    refused = http.delete("/_local/clock")

    assert refused.status_code == 405
    assert refused.headers["allow"] == "GET, HEAD"
