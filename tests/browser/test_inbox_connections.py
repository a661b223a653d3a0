"""The inbox's Connections view (``http-api.md``, "Connections" and "The web inbox"; issue 32) in Chromium,
against a ``parley serve`` whose operator configuration allows connections to 127.0.0.1 and names an
admin of the org (``boss``), and a real MCP server started by the test (``tests/mcp_servers.py``).

A person adds the server in the page (after the rules refused another URL, shown beside the URL field
with what was typed kept), sees it pending, is told in words that only an admin approves it, and authorizes
another (an OAuth-protected MCP server, ``tests/oauth_servers.py``: the page goes to its authorization URL,
the callback's page leads back to the view); the admin approves both in the page, and their tools show;
then the first is removed, after a confirmation, with the keyboard. The view passes axe as it stands at
each step, and fits a phone's width. Then every status (a broken one and a disallowed one included, which
the page cannot make) is read in words with what to do, and the view passes axe in light and dark.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from mcp_servers import LocalToolServer, running_tool_server
from oauth_servers import OAuthToolServer, running_oauth_server
from playwright.sync_api import Browser, Page, expect
from tool_serving import serving_with

pytestmark = pytest.mark.http

#: A header the person gives the connection: a secret, sent to the server and never shown again.
SECRET = "sk-conn-page-7f3a91"
PHONE = {"width": 375, "height": 800}


@dataclass
class Served:
    url: str
    tools: LocalToolServer
    oauth: OAuthToolServer

    def connections(self, token: str = "dev-token") -> list[dict[str, Any]]:
        reply = httpx.get(
            f"{self.url}/v1/orgs/acme/connections", headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
        assert reply.status_code == 200, reply.text
        listed: list[dict[str, Any]] = reply.json()["connections"]
        return listed


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    operator = """
principals:
  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
  - id: boss
    token: boss-token
    grants:
      - { org: acme, role: admin }
      - { org: acme, playbook: campaigns, role: read }
connections:
  allowed_urls: ["http://127.0.0.1:*"]
"""
    with (
        running_tool_server() as tools,
        running_oauth_server() as oauth,
        serving_with(tmp_path_factory.mktemp("serve-connections"), operator) as url,
    ):
        yield Served(url, tools, oauth)


def sign_in(page: Page, served: Served, principal: str) -> None:
    """Sign in straight into the connections' view, as the OAuth callback sends a person back."""
    page.goto(f"{served.url}/inbox#connections")
    page.get_by_label("Bearer token").fill(f"{principal}-token")
    page.get_by_label("Bearer token").press("Enter")
    expect(page.get_by_text(f"Signed in as {principal}")).to_be_visible()
    expect(page.get_by_role("heading", name="Connections", exact=True)).to_be_focused()


def test_a_person_adds_a_server_an_admin_approves_it_its_tools_show_and_it_is_removed(
    page: Page, browser: Browser, served: Served, axe: Callable[[Page], list[str]]
) -> None:
    # dev opens the view from the requests' one, through the bar's link.
    page.goto(f"{served.url}/inbox")
    page.get_by_label("Bearer token").fill("dev-token")
    page.get_by_label("Bearer token").press("Enter")
    expect(page.locator("#status")).to_contain_text("Updated")
    page.get_by_role("link", name="Connections").click()
    expect(page.get_by_role("link", name="Connections")).to_have_attribute("aria-current", "page")
    expect(page.get_by_text("acme has no connection yet.")).to_be_visible()

    # A URL the operator's rules refuse: the problem shows beside the URL field; what was typed stays.
    form = page.get_by_role("form", name="Add a connection to acme")
    name = form.get_by_label("Name (required)")
    name.fill("notes")
    url = form.get_by_label("URL")
    url.fill("https://notes.example.com/mcp")
    form.get_by_role("button", name="Add a header").click()
    expect(form.get_by_label("Header name")).to_be_focused()
    page.keyboard.type("X-Team-Key")
    form.get_by_label("Header value").fill(SECRET)
    form.get_by_role("button", name="Add connection").click()
    url_error = form.locator(".field", has=page.get_by_label("URL")).locator(".field-error")
    expect(url_error).to_be_visible()
    expect(url).to_have_attribute("aria-invalid", "true")
    expect(url).to_be_focused()
    assert url_error.get_attribute("id") in (url.get_attribute("aria-describedby") or "").split()
    expect(name).to_have_value("notes")
    expect(url).to_have_value("https://notes.example.com/mcp")
    expect(form.get_by_label("Header value")).to_have_value(SECRET)
    assert axe(page) == []

    # The test's server: added, pending, its header never shown.
    url.fill(served.tools.url)
    expect(url_error).to_be_hidden()
    form.get_by_role("button", name="Add connection").click()
    card = page.locator('li[data-name="notes"]')
    expect(card.locator(".state")).to_have_text("Pending")
    expect(card.locator(".explain")).to_be_focused()
    expect(card.locator(".explain")).to_contain_text("until an admin of acme approves it")
    expect(card).to_contain_text("sends headers (kept secret)")
    expect(name).to_have_value("")
    assert SECRET not in page.content()
    (listed,) = served.connections()
    assert (listed["name"], listed["status"], listed["auth"], listed["added_by"]) == (
        "notes",
        "pending",
        "headers",
        "dev",
    )

    # dev may not approve it: the 403 in words.
    card.get_by_role("button", name="Approve notes").click()
    expect(card.get_by_role("alert")).to_have_text(
        "Only an admin of acme may approve a connection: ask one to approve notes."
    )
    assert served.connections()[0]["status"] == "pending"
    assert axe(page) == []

    # A second one, without headers, for one playbook: a server that asks for an OAuth sign-in (its own
    # authorization server approves at once, as a person who signs in would). Authorize goes there; the
    # callback's page leads back to the view, where it now signs in with OAuth.
    name.fill("wiki")
    url.fill(served.oauth.url)
    form.get_by_role("checkbox", name="campaigns").check()
    form.get_by_role("button", name="Add connection").click()
    wiki = page.locator('li[data-name="wiki"]')
    expect(wiki).to_contain_text("no credential")
    expect(wiki).to_contain_text("only for campaigns")
    wiki.get_by_role("button", name="Authorize wiki").click()
    page.get_by_role("link", name="Back to the connections").click()
    expect(page).to_have_url(f"{served.url}/inbox#connections")
    expect(page.get_by_role("heading", name="Connections", exact=True)).to_be_focused()
    expect(wiki).to_contain_text("signs in with OAuth")
    expect(wiki.locator(".state")).to_have_text("Pending")
    assert served.oauth.authorization.registered, "Parley registered itself at the authorization server"

    # The admin approves it in the page; its tools show.
    admin = browser.new_context(viewport=PHONE, locale="en-GB", timezone_id="UTC")
    try:
        boss = admin.new_page()
        sign_in(boss, served, "boss")
        card = boss.locator('li[data-name="notes"]')
        expect(card.locator(".explain")).to_contain_text("approve it if you trust this server")
        card.get_by_role("button", name="Approve notes").click()
        expect(card.locator(".state")).to_have_text("Active")
        expect(card).to_contain_text("approved by boss")
        tools = card.get_by_role("region", name="Tools of notes")
        expect(tools.get_by_text("notes/post_message")).to_be_visible()
        expect(tools.get_by_text("notes/thread_replies")).to_be_visible()
        assert {each["name"]: each for each in served.connections()}["notes"]["approved_by"] == "boss"
        # The OAuth one too: its tool is listed with the token its authorization kept.
        wiki = boss.locator('li[data-name="wiki"]')
        wiki.get_by_role("button", name="Approve wiki").click()
        expect(wiki.get_by_role("region", name="Tools of wiki").get_by_text("wiki/notes")).to_be_visible()
        # A phone's width: nothing wider than the screen.
        assert boss.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        assert axe(boss) == []

        # Removed after a confirmation, with the keyboard alone: "Keep it" (focused) keeps it, then
        # "Remove notes" removes it, and the focus goes on to the next connection.
        card.get_by_role("button", name="Remove notes").focus()
        boss.keyboard.press("Enter")
        keep = card.get_by_role("button", name="Keep it")
        expect(keep).to_be_focused()
        expect(card.get_by_role("group", name="Remove notes?")).to_be_visible()
        assert axe(boss) == []
        boss.keyboard.press("Enter")
        expect(card.get_by_role("button", name="Remove notes")).to_be_focused()
        boss.keyboard.press("Enter")
        boss.keyboard.press("Shift+Tab")
        expect(card.get_by_role("group").get_by_role("button", name="Remove notes")).to_be_focused()
        boss.keyboard.press("Enter")
        expect(boss.locator('li[data-name="notes"]')).to_have_count(0)
        expect(wiki.get_by_role("button", name="Authorize wiki")).to_be_focused()
        assert [each["name"] for each in served.connections()] == ["wiki"]
    finally:
        admin.close()


def connection(name: str, status: str, auth: str, playbooks: list[str] | None = None) -> dict[str, Any]:
    """A connection as list_connections shows it."""
    approved = status != "pending"
    return {
        "name": name,
        "url": f"https://{name}.example.com/mcp",
        "status": status,
        "playbooks": playbooks,
        "added_by": "dev",
        "added_at": "2026-12-02T03:00:00Z",
        "approved_by": "boss" if approved else None,
        "approved_at": "2026-12-02T03:05:00Z" if approved else None,
        "auth": auth,
    }


def test_every_status_says_what_to_do_and_passes_axe_light_and_dark(
    page: Page, served: Served, axe: Callable[[Page], list[str]]
) -> None:
    """A broken connection or one the rules no longer allow cannot be made through the page: the list's
    answer is stood in for, so that each status is read as the page says it."""
    listed = [
        connection("kept", "pending", "none"),
        connection("live", "active", "oauth", ["campaigns"]),
        connection("lost", "broken", "oauth"),
        connection("shut", "not_allowed", "headers"),
    ]
    page.route("**/v1/orgs/acme/connections", lambda route: route.fulfill(json={"connections": listed}))
    sign_in(page, served, "dev")
    said = {
        "kept": "Waiting for approval: its tools cannot be used until an admin of acme approves it. "
        "Ask one to approve it.",
        "live": "Active: the functions of campaigns can use its tools.",
        "lost": "Broken: the credential kept for it can no longer be read or refreshed, so its tools "
        "cannot be used. Remove it and add it again, then authorize it.",
        "shut": "Not allowed: a rule of the operator no longer allows its URL, so its tools cannot be "
        "used. Ask the operator to allow it again, or remove it.",
    }
    for name, words in said.items():
        expect(page.locator(f'li[data-name="{name}"] .explain')).to_have_text(words)
    live = page.locator('li[data-name="live"] .meta').first
    expect(live).to_contain_text("signs in with OAuth")
    expect(live).to_contain_text("only for campaigns")
    # What each may be asked: approve a pending one; authorize one without headers that is not broken.
    buttons = {
        name: page.locator(f'li[data-name="{name}"] .actions button').evaluate_all(
            "nodes => nodes.map((node) => node.dataset.action)"
        )
        for name in said
    }
    assert buttons == {
        "kept": ["approve", "authorize", "remove"],
        "live": ["authorize", "remove"],
        "lost": ["remove"],
        "shut": ["remove"],
    }
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        assert axe(page) == [], scheme
