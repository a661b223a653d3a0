"""An agent run's ``ask`` and ``approve`` saved: every rule with its line and pointer, the page's example,
and the overview's words (agent-runs.md, "Turning it on: ``ask``"; reasoning-format.md, "How a document is
checked" and "The overview")."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from parley.errors import Problem
from parley.reasoning.document import ApproveEntry, AskBlock, check_reasoning_document
from parley.reasoning.overview import write_reasoning_overview

#: The page's example, with its comments, and the model, the input and the tools it names around it.
EXAMPLE = (
    """---
description: Plans a trip with its owner
model: anthropic/claude-sonnet-4-5
input:
  schema:
    type: object
    properties:
      owner: { type: string }
      trip_id: { type: string }
    required: [owner, trip_id]
    additionalProperties: false
tools: [trips/remove_day, trips/clear_day, trips/preview_clear_day]
ask:
  to: '{{ input.owner }}'   # required: the party, a template over input, today, now """
    """(as `to` of interaction functions)
  expires: P2D               # required: how long each question or approval waits, PT1M to P30D
  progress: true             # optional: offer the model report_progress
approve:                     # optional: tools that wait for a person's approval before each call
  - tool: trips/remove_day
    confirmation: 'Delete day {{ arguments.day_number }} and move its places to the unplanned pool?'
  - tool: trips/clear_day
    preview: trips/preview_clear_day   # a read-only tool of the same server, """
    """called with the same arguments; its text is the confirmation
---
Tidy the trip {{ input.trip_id }}.
"""
)

MODEL = "model: anthropic/claude-sonnet-4-5"
TOOLS = "tools: [trips/remove_day, trips/clear_day, trips/preview_clear_day]\n"
ASK = "ask:\n  to: '{{ input.owner }}'\n  expires: P2D\n"
TOOL_FORM = (
    "write server/tool, the server's name 1 to 32 lowercase letters, digits and hyphens "
    "starting with a letter"
)


def doc(front: str, body: str = "Hello {{ today }}\n") -> str:
    """A document whose front matter starts on line 2 with ``model``; ``front`` follows on line 3."""
    return f"---\n{MODEL}\n{front.strip(chr(10))}\n---\n{body}"


def with_ask(approve: str) -> str:
    """``tools`` on line 3, ``ask`` on lines 4 to 6, ``approve`` from line 7 (its first entry on line 8)."""
    return doc(TOOLS + ASK + approve)


def problems(source: str) -> list[str]:
    with pytest.raises(Problem) as caught:
        check_reasoning_document(source)
    problem = caught.value
    assert problem.reason == "invalid_input" and problem.status == 422
    assert all(entry.pointer == "/source" for entry in problem.errors)
    return [entry.detail for entry in problem.errors]


def only(source: str) -> str:
    found = problems(source)
    assert len(found) == 1, found
    return found[0]


# --- the page's example ----------------------------------------------------------------------------------


def test_the_pages_example_is_saved() -> None:
    checked = check_reasoning_document(EXAMPLE)
    assert checked.ask == AskBlock(to="{{ input.owner }}", expires=timedelta(days=2), progress=True)
    assert checked.approve == (
        ApproveEntry(
            server="trips",
            tool="remove_day",
            confirmation="Delete day {{ arguments.day_number }} and move its places to the unplanned pool?",
            preview=None,
        ),
        ApproveEntry(server="trips", tool="clear_day", confirmation=None, preview="preview_clear_day"),
    )
    assert [str(entry) for entry in checked.approve] == ["trips/remove_day", "trips/clear_day"]


def test_a_function_without_ask_asks_nobody() -> None:
    checked = check_reasoning_document(doc(TOOLS))
    assert checked.ask is None and checked.approve == ()


def test_progress_is_false_when_left_out_and_the_expiry_is_read() -> None:
    checked = check_reasoning_document(doc("ask:\n  to: 'ops-{{ today }}@example.com'\n  expires: PT90M\n"))
    assert checked.ask == AskBlock(to="ops-{{ today }}@example.com", expires=timedelta(minutes=90))
    assert checked.ask.progress is False
    assert checked.approve == ()


def test_approve_may_be_empty() -> None:
    assert check_reasoning_document(with_ask("approve: []\n")).approve == ()


def test_a_tool_covered_by_server_star_may_wait_for_approval() -> None:
    source = doc("tools: ['trips/*']\n" + ASK + "approve:\n  - tool: trips/add_day\n    confirmation: Add?\n")
    assert check_reasoning_document(source).approve == (ApproveEntry("trips", "add_day", "Add?", None),)


# --- ask -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        ("ask: yes", "Line 3, /ask: Expected a mapping"),
        (
            ASK + "  wait: PT1H\n",
            "Line 6, /ask/wait: 'wait' is not a key here; expected to, expires, progress",
        ),
        ("ask:\n  to: 3\n  expires: P2D\n", "Line 4, /ask/to: Expected text"),
        (
            "ask:\n  to: ' '\n  expires: P2D\n",
            "Line 4, /ask/to: The party is empty: a template over input, today and now, "
            "such as '{{ input.owner }}'",
        ),
        (
            "ask:\n  to: '{{ arguments.owner }}'\n  expires: P2D\n",
            "Line 4, /ask/to: `to` reads 'arguments', which is not one of input, today, now",
        ),
        (
            "ask:\n  to: '{% render \"x\" %}'\n  expires: P2D\n",
            "Line 4, /ask/to: the tag 'render' is not available",
        ),
        (
            "ask:\n  to: '{{ now | date: \"%Y\" }}'\n  expires: P2D\n",
            "Line 4, /ask/to: the filter 'date' is not available",
        ),
        (
            "ask:\n  to: 'Dear {{ input }}'\n  expires: P2D\n",
            "Line 4, /ask/to: `to` renders 'input', an object, inside a longer text; "
            "use '| json' to write it as JSON",
        ),
        (
            "ask:\n  to: a\n  expires: PT59S\n",
            "Line 5, /ask/expires: PT59S (59 seconds) is outside one minute (PT1M) to thirty days (P30D)",
        ),
        (
            "ask:\n  to: a\n  expires: P31D\n",
            "Line 5, /ask/expires: P31D (31 days) is outside one minute (PT1M) to thirty days (P30D)",
        ),
        (
            "ask:\n  to: a\n  expires: P1M\n",
            "Line 5, /ask/expires: 'P1M': years and months are not a fixed length; use days instead, "
            "such as P30D",
        ),
        (
            "ask:\n  to: a\n  expires: 2 days\n",
            "Line 5, /ask/expires: '2 days' is not an ISO 8601 duration such as PT30M, PT4H, P2D or P1W",
        ),
        (
            "ask:\n  to: a\n  expires: 3\n",
            "Line 5, /ask/expires: Expected an ISO 8601 duration as text, such as PT30M, PT4H, P2D or P1W",
        ),
        (ASK + "  progress: 'yes'\n", "Line 6, /ask/progress: Expected true or false"),
    ],
)
def test_an_ask_that_breaks_a_rule(front: str, expected: str) -> None:
    assert only(doc(front)) == expected


@pytest.mark.parametrize("expires", ["PT1M", "P30D", "PT4H", "P1W"])
def test_expires_at_its_bounds_is_saved(expires: str) -> None:
    checked = check_reasoning_document(doc(f"ask:\n  to: a\n  expires: {expires}\n"))
    assert checked.ask is not None
    assert timedelta(minutes=1) <= checked.ask.expires <= timedelta(days=30)


def test_to_and_expires_are_required() -> None:
    assert problems(doc("ask: {}")) == [
        "Line 3, /ask: 'expires' is required: how long each question or approval waits, such as PT4H or P2D",
        "Line 3, /ask: 'to' is required: the party the run may ask, a template over input, today and now, "
        "such as '{{ input.owner }}'",
    ]


def test_to_reads_only_fields_the_input_schema_allows() -> None:
    schema = (
        "input:\n  schema: {type: object, properties: {owner: {type: string}}, additionalProperties: false}\n"
    )
    assert only(doc(schema + "ask:\n  to: '{{ input.ownr }}'\n  expires: P2D\n")) == (
        "Line 6, /ask/to: `to` reads 'input.ownr', which the input schema does not allow"
    )


def test_a_problem_in_a_block_scalar_to_names_its_own_line() -> None:
    source = doc("ask:\n  to: |\n    {{ input.owner }}\n    {{ secret }}\n  expires: P2D\n")
    assert only(source) == "Line 6, /ask/to: `to` reads 'secret', which is not one of input, today, now"


def test_any_other_key_is_still_refused() -> None:
    assert only(doc(ASK + "asks: 1\n")) == "Line 6, /asks: 'asks' is not a field of reasoning functions"


# --- approve ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("approve", "expected"),
    [
        (
            "approve: trips/remove_day\n",
            "Line 7, /approve: Expected a list of tools that wait for approval, each with tool and "
            "confirmation or preview",
        ),
        ("approve:\n  - trips/remove_day\n", "Line 8, /approve/0: Expected a mapping"),
        (
            "approve:\n  - confirmation: Sure?\n",
            "Line 8, /approve/0: 'tool' is required: the server/tool that waits for approval",
        ),
        ("approve:\n  - tool: 3\n    confirmation: Sure?\n", "Line 8, /approve/0/tool: Expected text"),
        (
            "approve:\n  - tool: remove_day\n    confirmation: Sure?\n",
            f"Line 8, /approve/0/tool: 'remove_day' is not a tool: {TOOL_FORM}",
        ),
        (
            "approve:\n  - tool: trips/*\n    confirmation: Sure?\n",
            "Line 8, /approve/0/tool: 'trips/*' names every tool of a server: name one, server/tool",
        ),
        (
            "approve:\n  - tool: trips/add_day\n    confirmation: Sure?\n",
            "Line 8, /approve/0/tool: 'trips/add_day' is not one of the function's tools: name it in tools, "
            "or its server as trips/*",
        ),
        (
            "approve:\n  - tool: trips/remove_day\n",
            "Line 8, /approve/0: Write 'confirmation', the text the person approves, or 'preview', a tool "
            "that writes it",
        ),
        (
            "approve:\n  - tool: trips/clear_day\n    confirmation: Sure?\n"
            "    preview: trips/preview_clear_day\n",
            "Line 8, /approve/0: Write one of 'confirmation' and 'preview', not both",
        ),
        (
            "approve:\n  - tool: trips/remove_day\n    confirmation: Sure?\n"
            "  - tool: trips/remove_day\n    preview: trips/preview_clear_day\n",
            "Line 10, /approve/1/tool: 'trips/remove_day' is listed twice",
        ),
        (
            "approve:\n  - tool: trips/remove_day\n    confirmation: Sure?\n    when: always\n",
            "Line 10, /approve/0/when: 'when' is not a key here; expected tool, confirmation, preview",
        ),
    ],
)
def test_an_approval_that_breaks_a_rule(approve: str, expected: str) -> None:
    assert only(with_ask(approve)) == expected


def test_approve_needs_ask() -> None:
    source = doc(TOOLS + "approve:\n  - tool: trips/remove_day\n    confirmation: Sure?\n")
    assert only(source) == (
        "Line 4, /approve: 'approve' needs 'ask': the party who approves and how long an approval waits "
        "come from it"
    )


def test_a_function_without_tools_approves_none() -> None:
    source = doc(ASK + "approve:\n  - tool: trips/add_day\n    confirmation: Sure?\n")
    assert only(source) == (
        "Line 7, /approve/0/tool: 'trips/add_day' is not one of the function's tools: name it in tools, "
        "or its server as trips/*"
    )


# --- confirmation ----------------------------------------------------------------------------------------


def confirmation(text: str) -> str:
    return with_ask(f"approve:\n  - tool: trips/remove_day\n    confirmation: {text}\n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3", ["Line 9, /approve/0/confirmation: Expected text"]),
        (
            "''",
            [
                "Line 9, /approve/0/confirmation: The confirmation is empty: "
                "write the text the person approves"
            ],
        ),
        (
            "'Remove {{ input.day }} on {{ today }}?'",
            [
                f"Line 9, /approve/0/confirmation: the confirmation reads '{name}', "
                "which is not one of arguments"
                for name in ("input", "today")
            ],
        ),
        ("'{% include \"x\" %}'", ["Line 9, /approve/0/confirmation: the tag 'include' is not available"]),
        (
            "'{{ arguments.when | date: \"%Y\" }}'",
            ["Line 9, /approve/0/confirmation: the filter 'date' is not available"],
        ),
        (
            "'{{ arguments.day | truncate: 1, 2, 3 }}'",
            ["Line 9, /approve/0/confirmation: the filter 'truncate' takes at most 2 arguments, not 3"],
        ),
        (
            "'Send {{ arguments }}?'",
            [
                "Line 9, /approve/0/confirmation: the confirmation renders 'arguments', an object, inside a "
                "longer text; use '| json' to write it as JSON"
            ],
        ),
        (
            "'Pay ${HOME}?'",
            [
                "Line 9, /approve/0/confirmation: a template holds no '${': a document is never filled from "
                "the environment"
            ],
        ),
    ],
)
def test_a_confirmation_is_checked_as_every_template(text: str, expected: list[str]) -> None:
    assert problems(confirmation(text)) == expected


def test_a_confirmation_may_read_any_argument() -> None:
    text = (
        "'{{ arguments.a.b[0] | json }} {% assign n = arguments.days | size %}{{ n }} {{ arguments | json }}'"
    )
    assert check_reasoning_document(confirmation(text)).approve[0].tool == "remove_day"


def test_a_problem_in_a_block_scalar_confirmation_names_its_own_line() -> None:
    text = "|\n      Remove day {{ arguments.day }}?\n      {{ input.x }}"
    assert only(confirmation(text)) == (
        "Line 11, /approve/0/confirmation: the confirmation reads 'input', which is not one of arguments"
    )


def test_a_confirmation_has_the_limits_of_every_template() -> None:
    names = " ".join(f"{{{{ arguments.a{index} }}}}" for index in range(501))
    found = only(confirmation(f"'{names}'"))
    assert (
        found
        == "Line 9, /approve/0/confirmation: the template uses more than 1,000 names in its tags and outputs"
    )


# --- preview ---------------------------------------------------------------------------------------------


def preview(text: str) -> str:
    return with_ask(f"approve:\n  - tool: trips/clear_day\n    preview: {text}\n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4", "Line 9, /approve/0/preview: Expected text"),
        ("preview_clear_day", f"Line 9, /approve/0/preview: 'preview_clear_day' is not a tool: {TOOL_FORM}"),
        (
            "trips/*",
            "Line 9, /approve/0/preview: 'trips/*' names every tool of a server: name one, server/tool",
        ),
        (
            "maps/preview_clear_day",
            "Line 9, /approve/0/preview: 'maps/preview_clear_day' is not on the server trips: a preview is a "
            "tool of the same server as the tool it previews",
        ),
        (
            "trips/clear_day",
            "Line 9, /approve/0/preview: 'trips/clear_day' cannot preview itself: "
            "the preview is called before the approval, so name another, read-only tool",
        ),
    ],
)
def test_a_preview_is_another_tool_of_the_same_server(text: str, expected: str) -> None:
    assert only(preview(text)) == expected


def test_a_preview_need_not_be_among_the_tools() -> None:
    checked = check_reasoning_document(preview("trips/describe_day"))
    assert checked.approve == (ApproveEntry("trips", "clear_day", None, "describe_day"),)


# --- the overview ----------------------------------------------------------------------------------------


def _section(overview: str, title: str) -> str:
    match = re.search(
        rf"^\*\*{re.escape(title)}\*\*\n(.*?)(?=^\*\*[A-Z][^*\n]*\*\*$|\Z)", overview, re.M | re.S
    )
    assert match is not None, f"no section {title!r} in:\n{overview}"
    return match.group(1)


def test_the_overview_of_the_pages_example() -> None:
    overview = write_reasoning_overview(check_reasoning_document(EXAMPLE))
    assert _section(overview, "Whom it may ask") == (
        "\n"
        "While it works, the run may ask **owner** a question. Each question or approval waits 2 days for an "
        "answer; one nobody answers by then ends unanswered, and the run goes on.\n"
        "\n"
        "The model may report its progress while it works.\n"
        "\n"
        "These tools wait for the approval of **owner** before each call; a call that is not approved is not "
        "made:\n"
        "\n"
        "- the tool `remove_day` on the server `trips`, with the confirmation “Delete day **day_number** and "
        "move its places to the unplanned pool?”\n"
        "- the tool `clear_day` on the server `trips`, with the text of `preview_clear_day` as its "
        "confirmation (that tool is called first, with the same arguments)\n"
        "\n"
    )
    titles = re.findall(r"^\*\*([A-Z][^*\n]*)\*\*$", overview, re.M)
    assert titles == [
        "What it needs",
        "What it produces",
        "Which model it uses",
        "Whom it may ask",
        "What the model is told",
    ]


def test_the_overview_without_progress_or_approvals() -> None:
    source = doc(
        "ask:\n  to: '{% if input.urgent %}ops{% else %}{{ input.owner }}{% endif %}'\n  expires: PT90M\n",
        "Plan.\n",
    )
    asks = _section(write_reasoning_overview(check_reasoning_document(source)), "Whom it may ask")
    assert "the run may ask ops when input.urgent, otherwise **owner** a question" in asks
    assert "Each question or approval waits 1 hour 30 minutes for an answer" in asks
    assert "The model does not report its progress." in asks
    assert "No tool waits for approval." in asks


def test_a_confirmation_reads_in_words_as_other_templates() -> None:
    text = (
        "'Remove {% if arguments.force %}every{% else %}the{% endif %} stop of {{ arguments.day | upcase }}?'"
    )
    overview = write_reasoning_overview(check_reasoning_document(confirmation(text)))
    assert (
        "- the tool `remove_day` on the server `trips`, with the confirmation “Remove every when "
        "arguments.force, otherwise the stop of **day**?”"
    ) in _section(overview, "Whom it may ask")


def test_a_function_without_ask_has_no_such_section() -> None:
    overview = write_reasoning_overview(check_reasoning_document(doc(TOOLS)))
    assert "**Whom it may ask**" not in overview
