"""The web inbox in a real browser (``http-api.md``, "The web inbox"): Chromium, driven by Playwright,
against one ``parley serve --clock manual`` per module, with a fake model provider scripting agent runs
(``tests/fake_providers.py``) and a real MCP server for their tools (``tests/mcp_servers.py``), as in
``tests/http/test_agent_runs.py``.

Each principal of the operator configuration reads one playbook of its own where a test needs to know
everything the inbox shows (the keyboard's focus order, the screenshot); the other tests share
``acme/campaigns`` and find their request by its run id.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_providers import MESSAGES, FakeProviders, Scripted, anthropic_text
from fake_providers import anthropic_tool_steps as tool_use
from mcp_servers import LocalToolServer, running_tool_server
from playwright.sync_api import Locator, Page, expect
from tool_serving import serving_with

pytestmark = pytest.mark.http

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "definitions"
#: The test's artifact (docs/inbox.png, shown in the README, is a copy of one: ``make screenshot``).
SCREENSHOT = Path(__file__).resolve().parents[2] / "build" / "test-artifacts" / "inbox.png"
APPROVE = "approve-campaign-brief"
#: A notification stays in the inbox only while it is being delivered (one without ``deliver`` succeeds at
#: once): this one goes to the chat server, made to fail, so that it waits to be retried.
NOTIFY = "notify-in-chat"
NOTIFY_SOURCE = """---
description: Tells the campaign's owner in the chat that the campaign went live
to: '{{ input.owner }}'
expires: PT4H
deliver:
  server: chat
  tool: post_message
  with:
    channel: '{{ to }}'
    text: '{{ message }}'
input:
  schema:
    type: object
    required: [owner, campaign]
    properties:
      owner: { type: string }
      campaign: { type: string }
---
Your campaign **{{ input.campaign }}** is live.
"""
AGENT = "launch-helper"
#: Each principal and the one playbook it may answer in (``viewer`` only reads dev's).
PLAYBOOKS = {"dev": "campaigns", "kim": "keyboard", "maria": "launches"}
#: Every kind of field the page makes from an answer schema.
PLAN = "plan-launch"
PLAN_SOURCE = """---
description: Asks the owner how to launch
to: '{{ input.owner }}'
expires: P1D
output:
  schema:
    type: object
    required: [decision, budget, channels, starts]
    properties:
      decision: { type: string, enum: [go, wait, stop, rethink, escalate, cancel], description: What to do }
      urgent: { type: boolean }
      budget: { type: integer, minimum: 1000, maximum: 5000 }
      channels: { type: array, minItems: 1, items: { type: string, enum: [email, chat, press] } }
      title: { type: string, maxLength: 80, allOf: [{ minLength: 4 }] }
      starts: { type: string, format: date }
      review_at: { type: string, format: date-time }
      brief: { type: string, format: uri }
      summary: { type: string }
      contact:
        type: object
        properties:
          name: { type: string, maxLength: 60 }
          email: { type: string, format: email }
---
How should we launch?
"""


def agent_source(approve: str = "") -> str:
    return f"""---
description: Helps launch a campaign, asking its owner what it cannot decide
model: anthropic/claude-sonnet-4-5
tools: [chat/post_message]
ask: {{ to: '{{{{ input.owner }}}}', expires: P3D, progress: true }}
{approve}---
Launch the campaign: {{{{ input.task }}}}
"""


APPROVALS = (
    "approve: [{ tool: chat/post_message, "
    "confirmation: 'Post **{{ arguments.text }}** to {{ arguments.channel }}?' }]\n"
)


@dataclass
class Served:
    url: str
    fake: FakeProviders
    tools: LocalToolServer

    def client(self, principal: str = "dev") -> httpx.Client:
        base = f"{self.url}/v1/orgs/acme/playbooks/{PLAYBOOKS[principal]}"
        return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {principal}-token"}, timeout=60)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("serve-inbox")
    grants = "\n".join(
        f"  - {{ id: {who}, token: {who}-token, grants: [{{ org: acme, playbook: {book}, role: write }}] }}"
        for who, book in PLAYBOOKS.items()
    )
    grants += (
        "\n  - { id: viewer, token: viewer-token, grants: [{ org: acme, playbook: campaigns, role: read }] }"
    )
    with ExitStack() as stack:
        fake = stack.enter_context(FakeProviders())
        tools = stack.enter_context(running_tool_server())
        operator = f"""
principals:
{grants}
tool_servers:
  - {{ name: chat, url: "{tools.url}", orgs: [acme] }}
models:
  allowed: [anthropic/*]
"""
        with pytest.MonkeyPatch.context() as env:
            env.setenv("ANTHROPIC_API_KEY", "sk-ant-inbox")
            env.setenv("ANTHROPIC_BASE_URL", fake.url)
            url = stack.enter_context(serving_with(tmp, operator))
        served = Served(url, fake, tools)
        for principal in PLAYBOOKS:
            with served.client(principal) as http:
                approve = (EXAMPLES / f"{APPROVE}.md").read_text(encoding="utf-8")
                for name, source in ((APPROVE, approve), (NOTIFY, NOTIFY_SOURCE), (PLAN, PLAN_SOURCE)):
                    saved = http.post("/definitions/interaction", json={"name": name, "source": source})
                    assert saved.status_code == 201, saved.text
                for name, source in (
                    (AGENT, agent_source()),
                    (f"{AGENT}-approvals", agent_source(APPROVALS)),
                ):
                    saved = http.post("/definitions/reasoning", json={"name": name, "source": source})
                    assert saved.status_code == 201, saved.text
        yield served


@pytest.fixture
def http(served: Served) -> Iterator[httpx.Client]:
    served.fake.reset()
    served.tools.reset()
    with served.client() as client:
        yield client


# --- helpers ----------------------------------------------------------------------------------------------


def ask(http: httpx.Client, name: str, **values: Any) -> str:
    """Run an interaction function; its run id (the run waits for its answer)."""
    reply = http.post(f"/definitions/interaction/{name}/run", json={"input": {"owner": "maria", **values}})
    assert reply.status_code == 200, reply.text
    run_id: str = reply.json()["run_id"]
    return run_id


def start_agent(http: httpx.Client, name: str = AGENT, task: str = "spring sale") -> dict[str, Any]:
    reply = http.post(f"/definitions/reasoning/{name}/run", json={"input": {"owner": "maria", "task": task}})
    assert reply.status_code == 200, reply.text
    run: dict[str, Any] = reply.json()
    assert run["status"] == "started" and "waiting" in run, run
    return run


def asking(kind: str, prompt: str, **fields: Any) -> Scripted:
    return tool_use(("request_input", {"kind": kind, "prompt": prompt, **fields}))


def run_of(http: httpx.Client, run_id: str) -> dict[str, Any]:
    run: dict[str, Any] = http.get(f"/runs/{run_id}").json()
    return run


def advance(served: Served, seconds: float) -> None:
    moved = httpx.post(
        f"{served.url}/_local/clock/advance",
        json={"seconds": seconds},
        headers={"Authorization": "Bearer dev-token"},
    )
    assert moved.status_code == 200, moved.text


def sign_in(page: Page, served: Served, principal: str = "dev") -> None:
    page.goto(f"{served.url}/inbox")
    page.get_by_label("Bearer token").fill(f"{principal}-token")
    page.get_by_label("Bearer token").press("Enter")
    expect(page.get_by_text(f"Signed in as {principal}")).to_be_visible()
    expect(page.locator("#status")).to_contain_text("Updated")


def progress(message: str) -> Scripted:
    """A model's step that reports its progress (``report_progress``)."""
    return tool_use(("report_progress", {"message": message}))


def closed(page: Page, run_id: str) -> Locator:
    """What the run's answered card says (its decision), while it shows."""
    return page.locator(f'li[data-run-id="{run_id}"].is-done .done')


def card(page: Page, run_id: str) -> Locator:
    """The card of the run's open request (a run asks one thing at a time)."""
    return page.locator(f'li[data-run-id="{run_id}"]:not(.is-done)')


def refresh(page: Page) -> None:
    page.get_by_role("button", name="Refresh").click()
    expect(page.locator("#status")).to_contain_text("Updated")


def tool_results(fake: FakeProviders, request: int) -> list[Any]:
    """What the model was sent as the results of its calls, in its ``request``-th Messages call."""
    content = fake.requests_to("/v1/messages")[request].body["messages"][-1]["content"]
    return [json.loads(part["content"]) for part in content if part.get("type") == "tool_result"]


# --- interaction functions ----------------------------------------------------------------------------------


def test_an_interaction_request_is_answered_through_its_form(
    page: Page, served: Served, http: httpx.Client
) -> None:
    run_id = ask(http, APPROVE, review="The brief is **ready**.")
    sign_in(page, served)
    request = card(page, run_id)

    # Titled by the function's description, its name beneath.
    expect(request.get_by_role("heading")).to_have_text(
        "RequestAsks the campaign owner to approve a reviewed brief"
    )
    expect(
        request.get_by_role("heading", name="Request Asks the campaign owner to approve a reviewed brief")
    ).to_be_visible()
    expect(request.locator(".meta .name")).to_have_text(APPROVE)
    expect(request).to_contain_text("Interaction function")
    expect(request).to_contain_text("to maria")
    expect(request).to_contain_text("expires in 2 days")
    expect(request.locator(".standing")).to_have_text("in the inbox")
    expect(request.locator(".message strong")).to_have_text("ready")
    # The answer schema: verdict (an enum: buttons), note (a string of at most 2,000: a text area, counted).
    expect(request.get_by_role("group", name="Verdict (required)")).to_be_visible()
    request.get_by_role("button", name="revise").click()
    expect(request.get_by_role("button", name="revise")).to_have_attribute("aria-pressed", "true")
    note = request.get_by_label("Note")
    assert note.evaluate("node => node.tagName") == "TEXTAREA"
    note.fill("Shorter, please.")
    expect(request.locator(".counter")).to_have_text("16 / 2000")
    request.get_by_role("button", name="Submit").click()

    # The decision in words, then the card leaves.
    expect(closed(page, run_id)).to_have_text("Revision asked: Shorter, please.")
    expect(closed(page, run_id)).to_be_focused()
    done = run_of(http, run_id)
    assert (done["status"], done["output"]) == (
        "succeeded",
        {"verdict": "revise", "note": "Shorter, please."},
    )
    expect(page.locator(f'li[data-run-id="{run_id}"]')).to_have_count(0)


def test_an_answer_is_checked_before_it_is_sent_with_what_was_typed_kept(
    page: Page, served: Served, http: httpx.Client
) -> None:
    run_id = ask(http, APPROVE, review="Ready.")
    sign_in(page, served)
    request = card(page, run_id)
    answers: list[str] = []
    page.on("request", lambda sent: answers.append(sent.url) if sent.url.endswith("/answer") else None)
    long_note = "Too long. " * 201

    note = request.get_by_label("Note")
    note.fill(long_note)
    expect(request.locator(".counter")).to_have_text("2010 / 2000")
    expect(request.locator(".counter")).to_have_class("counter over")
    request.get_by_role("button", name="Submit").click()

    verdict = request.locator("fieldset.enum .field-error")
    expect(verdict).to_have_text("Choose a verdict")
    note_error = request.locator(".field", has=page.get_by_label("Note")).locator(".field-error")
    expect(note_error).to_have_text("At most 2,000 characters (this has 2,010)")
    expect(note).to_have_attribute("aria-invalid", "true")
    assert note_error.get_attribute("id") in (note.get_attribute("aria-describedby") or "").split()
    expect(request.get_by_role("button", name="approve")).to_be_focused()  # the first field with a problem
    expect(note).to_have_value(long_note)
    assert answers == [] and run_of(http, run_id)["status"] == "started"

    request.get_by_role("button", name="approve").click()
    expect(verdict).to_be_hidden()  # a field's problem goes when it changes
    note.fill("Fine as it is.")
    expect(note_error).to_be_hidden()
    request.get_by_role("button", name="Submit").click()
    expect(closed(page, run_id)).to_have_text("Approved: Fine as it is.")
    assert run_of(http, run_id)["output"] == {"verdict": "approve", "note": "Fine as it is."}


def test_every_kind_of_field_is_made_from_the_answer_schema_and_checked_in_words(
    page: Page, served: Served, http: httpx.Client
) -> None:
    run_id = ask(http, PLAN)
    sign_in(page, served)
    request = card(page, run_id)
    answers: list[str] = []
    page.on("request", lambda sent: answers.append(sent.url) if sent.url.endswith("/answer") else None)

    decision = request.get_by_label("Decision")
    assert decision.evaluate("node => node.tagName") == "SELECT"  # six values: a choice list
    expect(request.get_by_text("What to do")).to_be_visible()
    urgent = request.get_by_role("switch", name="Urgent")
    budget = request.get_by_label("Budget")
    expect(budget).to_have_attribute("type", "number")
    expect(budget).to_have_attribute("min", "1000")
    expect(budget).to_have_attribute("max", "5000")
    expect(request).to_contain_text("A whole number, at least 1,000 and at most 5,000.")
    title = request.get_by_label("Title")
    assert title.evaluate("node => node.tagName") == "INPUT"  # at most 80 characters: one line
    summary = request.get_by_label("Summary")
    assert summary.evaluate("node => node.tagName") == "TEXTAREA"  # no maxLength: a text area
    starts = request.get_by_label("Starts")
    expect(starts).to_have_attribute("type", "date")
    review_at = request.get_by_label("Review at")
    expect(review_at).to_have_attribute("type", "datetime-local")
    brief = request.get_by_label("Brief")
    expect(brief).to_have_attribute("type", "url")
    contact = request.get_by_role("group", name="Contact")
    email = contact.get_by_label("Email")
    expect(email).to_have_attribute("type", "email")
    expect(contact.get_by_label("Name")).to_be_visible()

    urgent.check()
    budget.fill("50")
    title.fill("TBD")
    email.fill("not-an-email")
    brief.fill("the brief")
    request.get_by_role("button", name="Submit").click()

    # Every problem beside its field, in words, and nothing sent.
    def error_of(label: str) -> Locator:
        return request.locator(".field", has=page.get_by_label(label, exact=True)).locator(".field-error")

    expect(error_of("Decision (required)")).to_have_text("Choose a decision")
    expect(error_of("Budget (required)")).to_have_text("At least 1,000")
    expect(request.locator("fieldset.options .field-error")).to_have_text("Choose at least one channel")
    expect(error_of("Starts (required)")).to_have_text("Choose a date")
    expect(error_of("Brief")).to_have_text("A full web address, with its https: at the start")
    expect(error_of("Email")).to_have_text("An email address, such as maria@example.com")
    expect(decision).to_be_focused()  # the first field with a problem
    expect(request.locator(".form-error")).to_be_hidden()
    assert answers == []

    decision.select_option(label="escalate")
    budget.fill("1500")
    request.get_by_role("checkbox", name="chat").check()
    request.get_by_role("checkbox", name="press").check()
    starts.fill("2026-03-03")
    review_at.fill("2026-03-02T09:30")
    brief.fill("https://example.com/brief")
    email.fill("maria@example.com")
    summary.fill("Launch in stores first.")
    budget.press("Enter")

    # What the page does not check (a bound within allOf), the server does: its answer beside the field.
    expect(error_of("Title")).to_have_text("At least 4 characters")  # the server's words, said as the page's
    expect(title).to_be_focused()
    expect(title).to_have_value("TBD")
    expect(summary).to_have_value("Launch in stores first.")
    assert len(answers) == 1

    title.fill("Spring sale")
    expect(request.locator(".field", has=page.get_by_label("Title")).locator(".counter")).to_have_text(
        "11 / 80"
    )
    title.press("Enter")

    expect(closed(page, run_id)).to_have_text("Escalated: Launch in stores first.")
    assert run_of(http, run_id)["output"] == {
        "decision": "escalate",
        "urgent": True,
        "budget": 1500,
        "channels": ["chat", "press"],
        "title": "Spring sale",
        "starts": "2026-03-03",
        "review_at": "2026-03-02T09:30:00Z",  # the browser's time zone is UTC
        "brief": "https://example.com/brief",
        "summary": "Launch in stores first.",
        "contact": {"email": "maria@example.com"},
    }


def test_a_reader_sees_the_requests_but_no_form_it_could_send(
    page: Page, served: Served, http: httpx.Client
) -> None:
    run_id = ask(http, APPROVE, review="For the record.")
    sign_in(page, served, "viewer")
    request = card(page, run_id)

    expect(request).to_contain_text("You may read acme/campaigns but not answer in it.")
    expect(request.get_by_label("Note")).to_be_disabled()
    expect(request.get_by_role("button", name="Submit")).to_be_disabled()


def test_a_request_answered_elsewhere_is_shown_as_no_longer_waiting(
    page: Page, served: Served, http: httpx.Client
) -> None:
    run_id = ask(http, APPROVE, review="Ready.")
    sign_in(page, served)
    request = card(page, run_id)
    request.get_by_label("Note").fill("Typed here first.")

    answered = http.post(f"/runs/{run_id}/answer", json={"answer": {"verdict": "approve"}})
    assert answered.status_code == 200

    # The page lists again by itself every few seconds (5 by default): a generous wait for it.
    expect(request.locator(".gone")).to_contain_text(
        "No longer waiting: It was answered elsewhere.", timeout=60_000
    )
    expect(request.get_by_label("Note")).to_be_disabled()
    expect(request.get_by_label("Note")).to_have_value("Typed here first.")
    request.get_by_role("button", name="Dismiss").click()
    expect(page.locator(f'li[data-run-id="{run_id}"]')).to_have_count(0)


def test_markdown_is_rendered_and_a_script_in_a_message_never_runs(
    page: Page, served: Served, http: httpx.Client
) -> None:
    review = "\n\n".join(
        [
            "**Bold** and `code` and [the brief](https://example.com/brief).",
            "<script>window.inboxPwned = 'script'</script>",
            '<img src="x" onerror="window.inboxPwned = \'img\'">',
            "[a trap](javascript:window.inboxPwned='link')",
            "- one\n- two",
        ]
    )
    run_id = ask(http, APPROVE, review=review)
    served.tools.fail_next("post_message", 1)
    notice_id = ask(http, NOTIFY, campaign="Spring sale")
    reply = sign_in_and_load(page, served)
    message = card(page, run_id).locator(".message")

    assert "script-src 'self';" in reply
    expect(message.locator("strong")).to_have_text("Bold")
    expect(message.locator("code")).to_have_text("code")
    expect(message.locator("li")).to_have_count(2)
    link = message.get_by_role("link", name="the brief")
    expect(link).to_have_attribute("href", "https://example.com/brief")
    expect(link).to_have_attribute("rel", "noopener noreferrer nofollow")
    expect(message).to_contain_text("<script>window.inboxPwned = 'script'</script>")
    expect(message).to_contain_text('<img src="x" onerror=')
    assert message.locator("script, img, iframe, [onerror]").count() == 0
    assert message.locator('a[href^="javascript"]').count() == 0
    message.get_by_text("a trap", exact=False).click()
    assert page.evaluate("window.inboxPwned") is None

    notice = card(page, notice_id)
    expect(notice.locator(".kind")).to_have_text("Notification")
    expect(notice.locator(".message strong")).to_have_text("Spring sale")
    expect(notice.locator(".standing")).to_have_text("delivery retrying")
    expect(notice).to_contain_text("through chat/post_message")
    expect(notice).to_contain_text("For your information: nothing to answer.")
    assert notice.locator("form, input, textarea, button").count() == 0

    # Its next attempt (a minute later) delivers it: it leaves the inbox, and then the page.
    advance(served, 61)
    refresh(page)
    gone = page.locator(f'li[data-run-id="{notice_id}"]')
    expect(gone.locator(".gone")).to_have_text("No longer waiting: It was delivered.")
    expect(gone).to_have_count(0)


def sign_in_and_load(page: Page, served: Served) -> str:
    """Sign in as dev; the page's Content-Security-Policy as the browser received it."""
    with page.expect_response(lambda response: response.url.endswith("/inbox")) as loaded:
        page.goto(f"{served.url}/")
    assert page.url == f"{served.url}/inbox"
    policy: str = loaded.value.headers["content-security-policy"]
    page.get_by_label("Bearer token").fill("dev-token")
    page.get_by_label("Bearer token").press("Enter")
    expect(page.locator("#status")).to_contain_text("Updated")
    return policy


# --- agent runs ---------------------------------------------------------------------------------------------


def test_an_agent_runs_choice_takes_custom_text_then_a_form_takes_its_answers(
    page: Page, served: Served, http: httpx.Client
) -> None:
    fake = served.fake
    fake.script(
        MESSAGES,
        progress("Looked at the channels"),
        asking(
            "choice",
            "Which channel should announce the **sale**?",
            options=[
                {"id": "general", "label": "#general", "recommended": True},
                {"id": "random", "label": "#random"},
            ],
            allow_custom=True,
            allow_skip=True,
            skip_label="Let me think",
        ),
    )
    run = start_agent(http)
    sign_in(page, served)
    question = card(page, run["run_id"])

    expect(question.locator(".kind")).to_have_text("Question")
    expect(question.locator(".title")).to_have_text(
        "Helps launch a campaign, asking its owner what it cannot decide"
    )
    expect(question).to_contain_text("Agent run")
    expect(question.locator(".progress")).to_contain_text("Latest progress: Looked at the channels")
    expect(question.locator(".message strong")).to_have_text("sale")
    expect(question.get_by_role("radio", name="#general Recommended")).to_be_visible()
    expect(question.get_by_role("button", name="Let me think")).to_be_visible()
    question.get_by_label("Your own answer").fill("#launches")
    expect(question.get_by_role("radio", name="My own answer")).to_be_checked()
    fake.script(
        MESSAGES,
        progress("Chose the channel; writing the announcement"),
        asking(
            "form",
            "A few details for the announcement:",
            questions=[
                {"id": "headline", "kind": "text", "prompt": "Headline"},
                {
                    "id": "audiences",
                    "kind": "choice",
                    "prompt": "Audiences",
                    "multiple": True,
                    "options": [
                        {"id": "members", "label": "Members"},
                        {"id": "newsletter", "label": "Newsletter", "recommended": True},
                        {"id": "press", "label": "Press"},
                    ],
                },
                {"id": "remarks", "kind": "text", "prompt": "Anything else?", "required": False},
            ],
        ),
    )
    question.get_by_role("button", name="Submit").click()
    expect(closed(page, run["run_id"])).to_have_text("Answered: “#launches”")
    assert tool_results(fake, 2)[0]["answer"] == {"custom": "#launches"}

    refresh(page)
    form = card(page, run["run_id"])
    expect(form).to_contain_text("A few details for the announcement:")
    expect(form.locator(".progress")).to_contain_text("Chose the channel; writing the announcement")
    form.get_by_role("button", name="Submit").click()
    expect(form.locator(".field", has=page.get_by_label("Headline")).locator(".field-error")).to_have_text(
        "Write an answer"
    )
    expect(form.get_by_role("group", name="Audiences").locator(".field-error").first).to_have_text(
        "Choose at least one option"
    )
    expect(form.get_by_label("Headline")).to_be_focused()
    form.get_by_label("Headline").fill("Spring sale starts Monday")
    form.get_by_role("checkbox", name="Members").check()
    form.get_by_role("checkbox", name="Newsletter Recommended").check()
    # A multiple choice is sent only on Submit: checking boxes answered nothing.
    assert run_of(http, run["run_id"])["waiting"]["for"] == "input"
    fake.script(MESSAGES, Scripted(body=anthropic_text("Announced in #launches.")))
    form.get_by_role("button", name="Submit").click()

    expect(closed(page, run["run_id"])).to_have_text("Answered")
    done = run_of(http, run["run_id"])
    assert (done["status"], done["output"]) == ("succeeded", "Announced in #launches."), done
    assert tool_results(fake, 4)[0]["answer"] == {
        "answers": {
            "headline": "Spring sale starts Monday",
            "audiences": {"selected": ["members", "newsletter"]},
        }
    }


def test_an_approval_refused_with_a_note_and_one_approved(
    page: Page, served: Served, http: httpx.Client
) -> None:
    fake, tools = served.fake, served.tools
    fake.script(
        MESSAGES,
        tool_use(
            ("chat__post_message", {"channel": "C1", "text": "first"}),
            ("chat__post_message", {"channel": "C2", "text": "second"}),
        ),
        Scripted(body=anthropic_text("One posted.")),
    )
    run = start_agent(http, f"{AGENT}-approvals")
    sign_in(page, served)
    first = card(page, run["run_id"])

    expect(first.locator(".kind")).to_have_text("Approval")
    expect(first.locator(".message")).to_contain_text("Post first to C1?")
    expect(first.locator(".message strong")).to_have_text("first")
    expect(first.locator(".call code").first).to_have_text("chat/post_message")
    arguments = first.locator(".call pre").inner_text()
    assert json.loads(arguments) == {"channel": "C1", "text": "first"}
    first.get_by_label("Note (optional)").fill("Not that one.")
    first.get_by_role("button", name="Reject").click()
    expect(closed(page, run["run_id"])).to_have_text("Rejected: Not that one.")

    refresh(page)
    second = card(page, run["run_id"])
    assert json.loads(second.locator(".call pre").inner_text()) == {"channel": "C2", "text": "second"}
    second.get_by_role("button", name="Approve").click()
    expect(closed(page, run["run_id"])).to_have_text("Approved")

    done = run_of(http, run["run_id"])
    assert (done["status"], done["output"]) == ("succeeded", "One posted.")
    assert [arguments["text"] for name, arguments in tools.calls if name == "post_message"] == ["second"]
    assert tool_results(fake, 1)[0] == {"approved": False, "note": "Not that one."}


# --- keyboard, phone, screenshot ---------------------------------------------------------------------------


def focused_name(page: Page) -> str:
    name: str = page.evaluate(
        """() => {
          const node = document.activeElement;
          if (!node || node === document.body) return "";
          if (node.labels && node.labels.length) return node.labels[0].innerText.trim();
          return (node.getAttribute("aria-label") || node.innerText || node.value || "").trim();
        }"""
    )
    return name


def press_tab_until(page: Page, name: str, limit: int = 15) -> list[str]:
    seen = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        seen.append(focused_name(page))
        if seen[-1] == name:
            return seen
    raise AssertionError(f"{name!r} was never focused; the focus went {seen}")


def test_requests_are_answered_with_the_keyboard_alone(page: Page, served: Served) -> None:
    fake = served.fake
    fake.reset()
    with served.client("kim") as http:
        brief = ask(http, APPROVE, review="Ready for you.")
        advance(served, 1)
        fake.script(
            MESSAGES,
            asking(
                "choice",
                "Which day?",
                options=[{"id": "mon", "label": "Monday"}, {"id": "tue", "label": "Tuesday"}],
            ),
        )
        agent = start_agent(http)
        page.goto(f"{served.url}/inbox")
        expect(page.get_by_label("Bearer token")).to_be_focused()
        page.keyboard.type("kim-token")
        page.keyboard.press("Enter")
        expect(page.locator("#status")).to_contain_text("Updated")

        # Newest first: the agent's question, then the brief.
        assert press_tab_until(page, "Monday") == ["Monday"]
        page.keyboard.press("Enter")  # chooses Monday
        expect(page.get_by_role("radio", name="Monday")).to_be_checked()
        fake.script(MESSAGES, Scripted(body=anthropic_text("Monday it is.")))
        page.keyboard.press("Enter")  # sends it
        expect(closed(page, agent["run_id"])).to_have_text("Answered: Monday")
        expect(closed(page, agent["run_id"])).to_be_focused()
        assert run_of(http, agent["run_id"])["output"] == "Monday it is."

        # The answered card leaves; the focus goes on to the next request.
        expect(page.locator(f'li[data-run-id="{agent["run_id"]}"]')).to_have_count(0)
        expect(page.get_by_role("button", name="approve")).to_be_focused()
        assert press_tab_until(page, "Note") == ["revise", "Note"]
        page.keyboard.type("Good to go.")
        assert press_tab_until(page, "Submit") == ["Submit"]
        page.keyboard.press("Enter")
        # Checked before sending: the verdict is missing, and the focus is where it goes.
        expect(page.get_by_text("Choose a verdict")).to_be_visible()
        expect(page.get_by_role("button", name="approve")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.get_by_role("button", name="approve")).to_have_attribute("aria-pressed", "true")
        assert press_tab_until(page, "Note") == ["revise", "Note"]
        page.keyboard.press("Control+Enter")  # sends from the text area
        expect(closed(page, brief)).to_have_text("Approved: Good to go.")
        expect(closed(page, brief)).to_be_focused()
        assert run_of(http, brief)["output"] == {"verdict": "approve", "note": "Good to go."}
        expect(page.locator(f'li[data-run-id="{brief}"]')).to_have_count(0)
        expect(page.get_by_text("Nothing waits for you now.")).to_be_visible()


def test_the_inbox_of_three_requests_fits_a_phone_and_is_pictured_then_every_kind_passes_axe(
    page: Page, served: Served, axe: Callable[[Page], list[str]]
) -> None:
    fake = served.fake
    fake.reset()
    with served.client("maria") as http:
        ask(
            http,
            APPROVE,
            review="The spring sale brief: **20% off** outdoor gear, from 3 March, in stores and online.",
        )
        advance(served, 1)
        fake.script(
            MESSAGES,
            progress("Read the brief; choosing where to announce it"),
            asking(
                "choice",
                "Which channel should announce the spring sale?",
                options=[
                    {"id": "general", "label": "#general", "recommended": True},
                    {"id": "marketing", "label": "#marketing"},
                ],
                allow_custom=True,
                allow_skip=True,
                skip_label="Skip for now",
            ),
        )
        start_agent(http)
        advance(served, 1)
        fake.script(
            MESSAGES,
            tool_use(
                ("chat__post_message", {"channel": "#general", "text": "The spring sale starts on 3 March!"})
            ),
        )
        start_agent(http, f"{AGENT}-approvals")

        page.set_viewport_size({"width": 375, "height": 812})
        sign_in(page, served, "maria")
        expect(page.locator("#requests > li")).to_have_count(3)
        assert page.locator("#requests > li").evaluate_all(
            "items => items.map(item => item.dataset.kind)"
        ) == ["approval", "question", "request"]
        expect(page.locator(".progress:visible")).to_contain_text(
            "Read the brief; choosing where to announce it"
        )
        width = page.evaluate(
            "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert width[0] <= width[1] == 375, width
        for button in page.locator("#requests button").all():
            box = button.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375

        page.set_viewport_size({"width": 900, "height": 900})
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=True)
        assert SCREENSHOT.stat().st_size > 10_000
        assert page.title() == "Parley inbox"  # what the first listing shows is not new

        # Every other kind of card: a notification, a form of every field, an agent's form and text.
        served.tools.fail_next("post_message", 10)
        ask(http, NOTIFY, campaign="Spring sale")
        ask(http, PLAN)
        fake.script(
            MESSAGES,
            asking(
                "form",
                "Two details:",
                questions=[
                    {"id": "headline", "kind": "text", "prompt": "Headline"},
                    {
                        "id": "tone",
                        "kind": "choice",
                        "prompt": "Tone",
                        "options": [{"id": "warm", "label": "Warm"}],
                    },
                ],
            ),
        )
        start_agent(http)
        fake.script(MESSAGES, asking("text", "Anything the announcement must say?"))
        start_agent(http)

    refresh(page)
    expect(page.locator("#requests > li")).to_have_count(7)
    expect(page.locator("#count")).to_have_text("(7)")
    expect(page.locator(".new")).to_have_count(4)
    expect(page).to_have_title("(4) Parley inbox")
    assert axe(page) == []
    page.emulate_media(color_scheme="dark")
    assert axe(page) == []
    # A new request the person looked at is no longer counted.
    page.locator('li[data-kind="notification"] .message').click()
    expect(page).to_have_title("(3) Parley inbox")


def test_the_sign_in_page_and_the_api_docs_pass_axe(
    page: Page, served: Served, axe: Callable[[Page], list[str]]
) -> None:
    ready = {"/inbox": page.get_by_label("Bearer token"), "/docs": page.locator("h2").first}
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for path, shown in ready.items():
            page.goto(f"{served.url}{path}")
            expect(shown).to_be_visible()
            assert axe(page) == [], (scheme, path)
