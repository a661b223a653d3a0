"""The reference pages (``docs/reference/``): one copy, shipped in the package ``parley.reference`` for the
MCP front door's resources; every route the API registers is in ``http-api.md``; and no page of the
repository links outside it (a clone has no ``../shared``) or to a file or heading it does not have."""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path
from typing import Any, cast

import pytest

from parley.api.app import build_resolver
from parley.clock import ManualClock
from parley.config import parse_operator_config
from parley.ports.runtime import Runtime

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
REFERENCE = DOCS / "reference"
PACKAGE = ROOT / "layers" / "parley" / "reference"
PAGES = (
    "interaction-format",
    "reasoning-format",
    "agent-runs",
    "output-shapes",
    "workflow-format",
    "http-api",
)

#: What a person reads in the README and under docs/ (the reference pages are among them).
MARKDOWN = (ROOT / "README.md", *sorted(DOCS.rglob("*.md")))
#: ``[words](target)``, the target without its optional title.
LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
#: A route as http-api.md writes it: ``METHOD /path`` inside backticks.
DOCUMENTED_ROUTE = re.compile(r"`(GET|POST|PUT|PATCH|DELETE) (/[^`\s]*)`")


def _page(name: str) -> str:
    return files("parley.reference").joinpath(f"{name}.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", PAGES)
def test_each_page_is_read_from_the_package_and_says_something(name: str) -> None:
    text = _page(name)
    assert text.startswith("# "), "a page opens with its title"
    assert len(text.split()) > 500, "a page is more than a stub"
    assert "\n| --- |" in text, "a page has at least one table (fields, bounds or routes)"


@pytest.mark.parametrize("name", PAGES)
def test_the_package_and_the_docs_hold_one_copy(name: str) -> None:
    shipped = PACKAGE / f"{name}.md"
    written = REFERENCE / f"{name}.md"
    assert written.is_file() and not written.is_symlink(), "docs/reference holds the text itself"
    assert shipped.resolve() == written.resolve(), (
        f"layers/parley/reference/{name}.md is a relative link to docs/reference/{name}.md"
    )
    assert _page(name) == written.read_text(encoding="utf-8")


def test_the_package_ships_exactly_the_pages() -> None:
    shipped = {path.stem for path in PACKAGE.glob("*.md")}
    written = {path.stem for path in REFERENCE.glob("*.md")}
    assert shipped == written == set(PAGES)


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda path: str(path.relative_to(ROOT)))
def test_nothing_links_outside_the_repository(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "../shared" not in text and "shared/spec" not in text


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_finds_its_file_and_heading(path: Path) -> None:
    broken: list[str] = []
    for target in LINK.findall(_without_code(path.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, guide:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target}: no such heading")
    assert broken == []


def test_every_route_the_api_registers_is_in_the_http_reference() -> None:
    documented = {(method, _normalized(path)) for method, path in DOCUMENTED_ROUTE.findall(_page("http-api"))}
    missing = sorted(
        f"{method} {path}" for method, path in _registered_routes() if (method, path) not in documented
    )
    assert missing == [], "document these routes in docs/reference/http-api.md"


def test_the_local_clock_routes_are_in_the_http_reference() -> None:
    text = _page("http-api")
    assert "`GET /_local/clock`" in text and "`POST /_local/clock/advance`" in text


# --- helpers -------------------------------------------------------------------------------------------


def _registered_routes() -> set[tuple[str, str]]:
    """Every (method, path) of the resolver the API function serves, with each parameter as ``{}``; the
    HEAD every GET also answers is left out."""
    runtime = Runtime(
        definitions=cast(Any, None),  # registering the routes reads nothing
        clock=ManualClock(),
        operator=parse_operator_config("principals: []", "test", environ={}),
    )
    resolver = build_resolver(runtime)
    routes = [*resolver._static_routes, *resolver._dynamic_routes]
    found = {(route.method.upper(), _normalized(route.path)) for route in routes}
    assert found, "the resolver has routes"
    return {(method, path) for method, path in found if method != "HEAD"}


def _normalized(path: str) -> str:
    """``/runs/<run_id>`` and ``/runs/{run_id}`` alike as ``/runs/{}``."""
    return re.sub(r"<[^>]+>|\{[^}]+\}", "{}", path)


def _without_code(text: str) -> str:
    """The text without fenced blocks and inline code, where brackets are not links."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text)


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of ``path``."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for line in _without_fences(path.read_text(encoding="utf-8")).splitlines():
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading is None:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _without_fences(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)


# --- the guide an agent reads names the tools it calls -----------------------------------------------------

#: A route as the guides write it in their text: ``POST …/runs/{run_id}/answer``.
ROUTE_IN_TEXT = re.compile(r"`(GET|POST|PUT)\s+…(/[^`\s]*)`")


def _tools_of(method: str, tail: str) -> set[str]:
    """The operations (the MCP tools of the same names) whose route ends with ``tail``: its first segment
    as written, a parameter of the route standing for any value (``…/definitions/interaction``)."""
    from parley.api.registry import OPERATIONS

    written = _normalized(tail).strip("/").split("/")

    def fits(path: str) -> bool:
        segments = _normalized(path).strip("/").split("/")[-len(written) :]
        return (
            len(segments) == len(written)
            and segments[0] == written[0]
            and all(route in ("{}", text) for route, text in zip(segments, written, strict=True))
        )

    return {op.name for op in OPERATIONS if op.method == method and fits(op.path)}


@pytest.mark.parametrize("name", [page for page in PAGES if page != "http-api"])
def test_a_guide_names_the_tool_beside_each_route(name: str) -> None:
    """An agent reads the guides (``guide://interaction-format`` first) and calls tools, not routes:
    wherever a page names a route (listing and answering requests above all), the same paragraph names
    its tool. ``http-api`` is the table of both."""
    from parley.front.guides import packaged_guide

    text = packaged_guide(name)
    assert text is not None
    unnamed: list[str] = []
    for paragraph in re.split(r"\n\s*\n", _without_fences(text)):
        for method, tail in ROUTE_IN_TEXT.findall(paragraph):
            tools = _tools_of(method, tail)
            assert tools, f"{method} …{tail} is no route of the API"
            if not any(f"`{tool}`" in paragraph for tool in tools):
                unnamed.append(f"{method} …{tail}: name {' or '.join(sorted(tools))} beside it")
    assert unnamed == []


def test_the_interaction_guide_says_how_an_agent_lists_and_answers_requests() -> None:
    from parley.front.guides import packaged_guide

    text = re.sub(r"\s+", " ", packaged_guide("interaction-format") or "")
    listing = text.split("## Listing requests", 1)[1].split(" ## ", 1)[0]
    answering = text.split("## Answering a request", 1)[1].split(" ## ", 1)[0]
    assert "`list_interactions`" in listing and "`GET …/interactions`" in listing
    assert "`answer_interaction`" in answering and "`POST …/runs/{run_id}/answer`" in answering
