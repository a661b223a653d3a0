"""The overview of an interaction function (interaction-format.md, "The overview"), with templates read
as reasoning-format.md's "The overview" reads them."""

from __future__ import annotations

import copy
import functools
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.documents.template_words import MESSAGE_CUT, template_in_words
from parley.interaction.overview import write_overview
from parley.interaction.reply_rule import ReplyRule, RulePart

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "definitions"
APPROVE_CAMPAIGN_BRIEF = (EXAMPLES / "approve-campaign-brief.md").read_text(encoding="utf-8")

CHAT_APPROVAL = """---
description: Send the draft to its owner in the chat and take their approval
to: '{{ input.owner }}'
expires: P2D
deliver:
  server: chat
  tool: post_message
  with:
    channel: '{{ to }}'
    text: '{{ message }}'
  sent:
    conversation: /channel
    id: /ts
replies:
  conversation: '{{ sent.conversation }}/{{ sent.id }}'
  tool: thread_replies
  with:
    channel: '{{ sent.conversation }}'
    ts: '{{ sent.id }}'
    oldest: '{{ since | default: "0" }}'
    limit: 15
  read:
    list: /messages
    order: oldest_first
    each: { id: /ts, sender: /user, text: /text, to: /thread_ts }
  wait: PT1M
  tell:
    with:
      channel: '{{ sent.conversation }}'
      thread_ts: '{{ sent.id }}'
      text: '{{ message }}'
reply: { verdict: word, note: rest }
input:
  schema:
    type: object
    required: [owner, draft]
    properties:
      owner: { type: string }
      draft: { type: string, maxLength: 4000 }
output:
  schema:
    type: object
    required: [verdict]
    properties:
      verdict: { type: string, enum: [approve, revise] }
      note: { type: string, maxLength: 2000 }
---
Here is the draft:

{{ input.draft }}

Reply **approve**, or **revise** with a note of what to change.
"""

THREAD_REPLIES_CALL: dict[str, Any] = {
    "description": "Reads the replies of a chat thread",
    "call": {
        "server": "chat",
        "tool": "thread_replies",
        "with": {"channel": "{{ input.channel }}", "ts": "{{ input.ts }}", "limit": 15},
        "read": "/messages",
    },
    "input": {
        "schema": {
            "type": "object",
            "required": ["channel", "ts"],
            "properties": {
                "channel": {"type": "string", "description": "The channel the thread is in"},
                "ts": {"type": "string"},
            },
        }
    },
    "output": {
        "schema": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["ts", "user"],
                "properties": {
                    "ts": {"type": "string"},
                    "user": {"type": "string"},
                    "text": {"type": "string"},
                },
            },
        }
    },
}


def _document(source: str) -> tuple[dict[str, Any], str, int]:
    """Front matter, body and the line the body starts on, as the checker hands them over."""
    front_matter, body, first_line = _parsed(source)
    return copy.deepcopy(front_matter), body, first_line


@functools.cache
def _parsed(source: str) -> tuple[dict[str, Any], str, int]:
    _, front, body = source.split("---\n", 2)
    return yaml.safe_load(front), body, front.count("\n") + 3


def _overview(source: str, reply_rule: ReplyRule | None = None) -> str:
    front_matter, body, first_line = _document(source)
    return write_overview(front_matter, body, body_first_line=first_line, reply_rule=reply_rule)


def _section(overview: str, title: str) -> str:
    """The text under a bold section title, up to the next one."""
    match = re.search(
        rf"^\*\*{re.escape(title)}\*\*\n(.*?)(?=^\*\*[A-Z][^*\n]*\*\*$|\Z)", overview, re.M | re.S
    )
    assert match is not None, f"no section {title!r} in:\n{overview}"
    return match.group(1)


def _bullet(text: str, name: str) -> str:
    match = re.search(rf"^\s*- \*\*{re.escape(name)}\*\*: (.*)$", text, re.M)
    assert match is not None, f"no field {name!r} in:\n{text}"
    return match.group(1)


# The spec's examples


def test_approve_campaign_brief_reads_as_the_page_says() -> None:
    overview = _overview(APPROVE_CAMPAIGN_BRIEF)

    assert overview.startswith("Asks the campaign owner to approve a reviewed brief\n")
    needs = _section(overview, "What it needs")
    assert _bullet(needs, "owner") == "text, required."
    assert _bullet(needs, "review") == "text, required."
    assert "**owner**" in _section(overview, "Who it asks")
    assert "{{" not in overview
    sends = _section(overview, "What it sends")
    assert "> The review of your campaign brief is ready:" in sends
    assert "> **review**\n" in sends
    assert "> Approve the brief as it stands, or ask for a revision." in sends
    assert "the playbook's inbox" in _section(overview, "Where")
    assert "2 days" in _section(overview, "How long it waits")
    answer = _section(overview, "What answer it expects")
    verdict = _bullet(answer, "verdict")
    assert "required" in verdict
    assert "one of `approve` or `revise`" in verdict
    note = _bullet(answer, "note")
    assert "optional" in note
    assert "at most 2,000 characters" in note
    assert "How it reads replies" not in overview
    assert "Used by" not in overview


def test_the_sections_come_in_the_order_the_page_gives() -> None:
    overview = _overview(CHAT_APPROVAL, ReplyRule({"verdict": RulePart("word"), "note": RulePart("rest")}))
    titles = re.findall(r"^\*\*([A-Z][^*\n]*)\*\*$", overview, re.M)
    assert titles == [
        "What it needs",
        "Who it asks",
        "What it sends",
        "Where",
        "How long it waits",
        "What answer it expects",
        "How it reads replies",
    ]


def test_chat_approval_names_its_tools_and_reads_the_reply_rule() -> None:
    rule = ReplyRule({"verdict": RulePart("word"), "note": RulePart("rest")})
    overview = _overview(CHAT_APPROVAL, rule)

    where = _section(overview, "Where")
    assert "`post_message` on the server `chat`" in where
    assert "inbox" not in where
    replies = _section(overview, "How it reads replies")
    assert "`thread_replies` on the server `chat`" in replies
    assert "1 minute" in replies
    assert "Only a reply from **owner** counts" in replies
    assert "told how to answer through `post_message`" in replies
    verdict = _bullet(replies, "verdict")
    assert verdict.startswith("the first word of the reply")
    assert "one of `approve` or `revise`" in verdict
    assert _bullet(replies, "note") == "what follows the first word."
    assert "made from the answer schema" not in replies


def test_words_that_mean_a_value_are_said() -> None:
    rule = ReplyRule(
        {"verdict": RulePart("word", {"approve": ("yes", "ok"), "revise": ("no",)}), "note": RulePart("rest")}
    )
    replies = _section(_overview(CHAT_APPROVAL, rule), "How it reads replies")
    verdict = _bullet(replies, "verdict")
    assert '"yes" and "ok" also mean `approve`' in verdict
    assert '"no" also means `revise`' in verdict


def test_a_rule_made_from_the_schema_says_it_reads_nothing_else() -> None:
    rule = ReplyRule({"verdict": RulePart("word")}, derived=True)
    replies = _section(_overview(CHAT_APPROVAL, rule), "How it reads replies")
    assert _bullet(replies, "verdict").startswith("the first word of the reply")
    assert "**note**" not in replies
    assert "made from the answer schema" in replies


def test_the_whole_reply_part_and_a_reading_without_tell() -> None:
    front_matter, body, first_line = _document(CHAT_APPROVAL)
    del front_matter["replies"]["tell"]
    del front_matter["replies"]["wait"]
    rule = ReplyRule({"note": RulePart("text")})
    replies = _section(
        write_overview(front_matter, body, body_first_line=first_line, reply_rule=rule),
        "How it reads replies",
    )
    assert _bullet(replies, "note") == "the whole reply."
    assert "nobody is told" in replies
    assert "5 seconds" in replies


def test_a_notification_takes_no_answer() -> None:
    front_matter, body, first_line = _document(APPROVE_CAMPAIGN_BRIEF)
    del front_matter["output"]
    front_matter["expires"] = "PT4H"
    overview = write_overview(front_matter, body, body_first_line=first_line, reply_rule=None)

    answer = _section(overview, "What answer it expects")
    assert "notification" in answer
    assert "in the inbox" in answer
    assert "**verdict**" not in overview
    assert "4 hours" in _section(overview, "How long it waits")


def test_a_notification_through_a_tool_succeeds_once_delivered() -> None:
    front_matter, body, first_line = _document(CHAT_APPROVAL)
    for key in ("output", "replies", "reply"):
        del front_matter[key]
    overview = write_overview(front_matter, body, body_first_line=first_line, reply_rule=None)
    assert "notification" in _section(overview, "What answer it expects")
    assert "once it is delivered" in overview
    assert "How it reads replies" not in overview


def test_from_names_whose_answer_counts() -> None:
    front_matter, body, first_line = _document(APPROVE_CAMPAIGN_BRIEF)
    front_matter["to"] = "team-{{ input.team | downcase }}"
    front_matter["from"] = "{{ input.owner }}"
    overview = write_overview(front_matter, body, body_first_line=first_line, reply_rule=None)
    who = _section(overview, "Who it asks")
    assert "team-**team**" in who
    assert "only the answer of **owner** counts" in who


def test_a_function_that_asks_a_system() -> None:
    overview = write_overview(THREAD_REPLIES_CALL, "", body_first_line=1, reply_rule=None)

    assert overview.startswith("Reads the replies of a chat thread\n")
    assert "`thread_replies` on the server `chat`" in _section(overview, "Who it asks")
    sends = _section(overview, "What it sends")
    assert _bullet(sends, "channel") == "text, required. The channel the thread is in."
    assert _bullet(sends, "ts") == "text, required."
    assert "- `channel`: **channel**" in sends
    assert "- `limit`: `15`" in sends
    reads = _section(overview, "What it reads")
    assert "at `/messages`" in reads
    assert "A list of objects, each with:" in reads
    assert _bullet(reads, "user") == "text, required."
    assert _bullet(reads, "text") == "text, optional."
    for person_only in ("How long it waits", "Where", "What answer it expects", "inbox"):
        assert person_only not in overview


def test_a_call_without_read_returns_the_whole_answer() -> None:
    front_matter = {**THREAD_REPLIES_CALL, "call": {"server": "chat", "tool": "thread_replies"}}
    overview = write_overview(front_matter, "", body_first_line=1, reply_rule=None)
    assert "The tool's whole answer" in _section(overview, "What it reads")
    assert "takes no arguments" in _section(overview, "What it sends")


def test_without_descriptions_the_types_alone() -> None:
    front_matter, body, first_line = _document(APPROVE_CAMPAIGN_BRIEF)
    del front_matter["description"]
    overview = write_overview(front_matter, body, body_first_line=first_line, reply_rule=None)
    assert overview.startswith("This function has no description yet.\n")
    assert _bullet(_section(overview, "What it needs"), "owner") == "text, required."


def test_field_descriptions_and_bounds_in_words() -> None:
    front_matter, body, first_line = _document(APPROVE_CAMPAIGN_BRIEF)
    front_matter["input"]["schema"]["properties"] = {
        "owner": {"type": "string", "description": "Who owns the campaign", "minLength": 1, "maxLength": 256},
        "review": {"type": "string", "description": "The review, as the reviewer wrote it."},
        "budget": {"type": "number", "minimum": 0, "exclusiveMaximum": 1_000_000, "multipleOf": 0.5},
        "rounds": {"type": "integer", "minimum": 1, "maximum": 3, "default": 1},
        "due": {"type": ["string", "null"], "format": "date"},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": True},
        "tier": {"enum": ["gold", "silver", 3]},
        "kind": {"const": "brief"},
    }
    needs = _section(
        write_overview(front_matter, body, body_first_line=first_line, reply_rule=None), "What it needs"
    )
    assert _bullet(needs, "owner") == "text, required, 1 to 256 characters. Who owns the campaign."
    assert _bullet(needs, "review") == "text, required. The review, as the reviewer wrote it."
    assert _bullet(needs, "budget") == "number, optional, at least 0, less than 1,000,000, a multiple of 0.5."
    assert _bullet(needs, "rounds") == "whole number, optional, from 1 to 3, `1` when left out."
    assert _bullet(needs, "due") == "text or null, optional, a date such as 2026-10-17."
    assert _bullet(needs, "tags") == "list of text, optional, at least 1 item, no item twice."
    assert _bullet(needs, "tier") == "text or whole number, optional, one of `gold`, `silver` or `3`."
    assert _bullet(needs, "kind") == "text, optional, always `brief`."


def test_nested_fields_one_level_listed_and_refs_named() -> None:
    schema = {
        "type": "object",
        "required": ["address"],
        "properties": {
            "address": {"$ref": "#/$defs/Address", "description": "Where to send it"},
            "lines": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                },
            },
        },
        "$defs": {
            "Address": {
                "type": "object",
                "required": ["street"],
                "properties": {
                    "street": {"type": "string"},
                    "geo": {
                        "type": "object",
                        "properties": {"lat": {"type": "number"}, "lng": {"type": "number"}},
                    },
                },
            }
        },
    }
    front_matter, body, first_line = _document(APPROVE_CAMPAIGN_BRIEF)
    front_matter["input"]["schema"] = schema
    needs = _section(
        write_overview(front_matter, body, body_first_line=first_line, reply_rule=None), "What it needs"
    )
    assert "- **address**: Address (object), required, with: Where to send it." in needs
    assert "  - **street**: text, required." in needs
    assert "  - **geo**: object, optional, with the 2 fields **lat** and **lng**." in needs
    assert "**lat**:" not in needs  # deeper than one level is summarized
    assert "- **lines**: list of objects, optional, each with:" in needs
    assert "  - **qty**: whole number, optional." in needs


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        (True, "It is any value."),
        (False, "It is no value at all."),
        ({}, "It is any value."),
        ({"type": "string", "maxLength": 10}, "It is text, at most 10 characters."),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, "It is text or whole number."),
        (
            {"$ref": "#/$defs/Verdict", "$defs": {"Verdict": {"enum": ["approve", "revise"]}}},
            "Verdict (text)",
        ),
    ],
)
def test_an_answer_that_is_not_an_object(schema: Any, words: str) -> None:
    front_matter, body, first_line = _document(APPROVE_CAMPAIGN_BRIEF)
    front_matter["output"]["schema"] = schema
    answer = _section(
        write_overview(front_matter, body, body_first_line=first_line, reply_rule=None),
        "What answer it expects",
    )
    assert words in answer


# Templates in words


def test_values_read_as_their_names_in_bold_without_filters() -> None:
    assert template_in_words("{{ input.brief | upcase | clip: 20 }}") == "**brief**"
    assert template_in_words("{{ input.account.owner.name }}") == "**name**"
    assert template_in_words('{{ input["due date"] }}') == "**due date**"
    assert template_in_words("{{ input.items[0].title }}") == "**title**"
    assert template_in_words("On {{ today }} at {{ now }}") == "On **today** at **now**"
    assert template_in_words('{{ input.nickname | default: "friend" }}') == "**nickname**"
    assert template_in_words("{{ 'as written' }}") == "as written"


def test_a_multi_line_condition_reads_as_italic_lines() -> None:
    source = (
        "Hello,\n{% if input.vip %}\nThank you for staying with us.\n{% elsif input.new %}\nWelcome!\n"
        "{% else %}\nGood to see you.\n{% endif %}\n"
        "{% unless input.quiet %}\nCall us.\n{% endunless %}\nBye\n"
    )
    lines = [line.rstrip() for line in template_in_words(source).split("\n")]
    assert lines == [
        "Hello,",
        "",
        "_When input.vip:_",
        "Thank you for staying with us.",
        "",
        "_Or when input.new:_",
        "Welcome!",
        "",
        "_Otherwise:_",
        "Good to see you.",
        "",
        "_Unless input.quiet:_",
        "Call us.",
        "Bye",
        "",
    ]


def test_a_multi_line_loop_reads_as_an_italic_line() -> None:
    source = (
        "Items:\n\n{% for item in input.items %}\n- {{ item.name }}: {{ item.price | money }}\n{% endfor %}\n"
    )
    lines = [line.rstrip() for line in template_in_words(source).split("\n")]
    assert lines == ["Items:", "", "_For each item of input.items:_", "- **name**: **price**", ""]


def test_single_line_condition_and_loop_read_as_phrases() -> None:
    assert (
        template_in_words("{% if input.vip %}Dear {% else %}Hello {% endif %}{{ input.name }},")
        == "Dear when input.vip, otherwise Hello **name**,"
    )
    assert (
        template_in_words(
            "{% for item in input.items %}{{ item.name }}"
            "{% unless forloop.last %}, {% endunless %}{% endfor %}"
        )
        == "each item of input.items as **name**, separated by commas"
    )
    assert template_in_words("Hi{% unless input.quiet %}!{% endunless %}") == "Hi! unless input.quiet"


def test_comments_left_out_raw_kept_other_tags_as_written() -> None:
    source = (
        "{% comment %}\nFor the reviewers only {{ input.secret }}\n{% endcomment %}\n"
        "A{% # an inline comment %}B\n"
        "{% raw %}{{ input.kept }}{% endraw %}\n"
        "{% assign greeting = 'hi' %}{{ greeting }}\n"
    )
    assert template_in_words(source) == "AB\n{{ input.kept }}\n{% assign greeting = 'hi' %}**greeting**\n"


def test_a_long_message_is_cut_with_the_line_where_it_continues() -> None:
    front_matter, _, first_line = _document(APPROVE_CAMPAIGN_BRIEF)
    line = "x" * 99 + "\n"  # 100 characters a line
    body = line * 81 + "y" * 80 + "{{ input.review }} and the rest\n" + line * 5
    assert len(body) > MESSAGE_CUT
    overview = write_overview(front_matter, body, body_first_line=first_line, reply_rule=None)
    sends = _section(overview, "What it sends")
    # the cut falls within the output tag, so it is moved back to where the tag starts, on the 82nd line
    assert f"it continues on line {first_line + 81:,} of the document" in sends
    assert "**review**" not in sends
    assert "the rest" not in sends
    assert "> " + "y" * 80 + "\n" in sends


def test_a_message_of_exactly_the_limit_is_not_cut() -> None:
    front_matter, _, first_line = _document(APPROVE_CAMPAIGN_BRIEF)
    body = ("z" * 63 + "\n") * (MESSAGE_CUT // 64)
    assert len(body) == MESSAGE_CUT
    overview = write_overview(front_matter, body, body_first_line=first_line, reply_rule=None)
    assert "continues on line" not in overview


def test_the_cut_line_counts_from_the_body_start() -> None:
    front_matter, _, _ = _document(APPROVE_CAMPAIGN_BRIEF)
    body = "a" * (MESSAGE_CUT + 10)
    overview = write_overview(front_matter, body, body_first_line=40, reply_rule=None)
    assert "continues on line 40 of the document" in overview
    assert "a" * (MESSAGE_CUT + 1) not in overview


# Never raises

_JSON_LEAVES = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
_JSON = st.recursive(
    _JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
_KEYWORDS = [
    "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "pattern", "format", "minItems", "maxItems", "uniqueItems", "required",
    "description", "title", "default", "minProperties", "maxProperties",
]  # fmt: skip
_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object", "other"])
_REFS = st.sampled_from(
    ["#", "#/$defs/A", "#/$defs/B", "#/definitions/A", "#/$defs/missing", "other.json#/x", "#/"]
)


def _schema_shaped(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {},
        optional={
            "type": _TYPES | st.lists(_TYPES, max_size=3) | _JSON,
            "properties": st.dictionaries(st.text(max_size=6), inner, max_size=4) | _JSON,
            "required": st.lists(st.text(max_size=6), max_size=3) | _JSON,
            "items": inner,
            "additionalProperties": inner,
            "anyOf": st.lists(inner, max_size=3),
            "oneOf": st.lists(inner, max_size=3),
            "allOf": st.lists(inner, max_size=3),
            "$ref": _REFS | _JSON,
            "$defs": st.fixed_dictionaries({}, optional={"A": inner, "B": inner}),
            "enum": st.lists(_JSON, max_size=4) | _JSON,
            **{keyword: _JSON for keyword in _KEYWORDS if keyword not in ("type", "required", "enum")},
        },
    )


_SCHEMAS: st.SearchStrategy[Any] = st.recursive(st.booleans() | st.just({}), _schema_shaped, max_leaves=15)
_TEMPLATE_PARTS = st.sampled_from(
    [
        "text ", "\n", "{{ input.a }}", "{{ input.b | upcase }}", "{{", "}}", "{%", "%}", "{% if input.a %}",
        "{% elsif x %}", "{% else %}", "{% endif %}", "{% unless y %}", "{% endunless %}",
        "{% for i in input.items %}", "{% endfor %}", "{% raw %}", "{% endraw %}", "{% comment %}",
        "{% endcomment %}", "{% # note %}", "{% case x %}", "{% when 1 %}", "{% endcase %}",
        "{% unless forloop.last %}, {% endunless %}", "{{ 'q' }}", "{{ input['k'] }}", "{%- if z -%}",
    ]
)  # fmt: skip
_TEMPLATES = st.lists(_TEMPLATE_PARTS, max_size=30).map("".join) | st.text(max_size=40)
_RULES = st.none() | st.builds(
    ReplyRule,
    st.dictionaries(
        st.text(max_size=6),
        st.builds(
            RulePart,
            st.sampled_from(["word", "rest", "text"]),
            st.dictionaries(
                st.text(max_size=5), st.lists(st.text(max_size=5), max_size=3).map(tuple), max_size=3
            ),
        ),
        max_size=3,
    ),
    st.booleans(),
)
_BLOCK = st.fixed_dictionaries(
    {},
    optional={
        "server": _JSON,
        "tool": _JSON,
        "with": st.dictionaries(st.text(max_size=6), _TEMPLATES | _JSON, max_size=3) | _JSON,
        "read": st.just("/messages") | _JSON,
        "wait": st.sampled_from(["PT1M", "PT5S", "P1Y", "x"]) | _JSON,
        "tell": st.fixed_dictionaries({}, optional={"tool": _JSON, "with": _JSON}) | _JSON,
    },
)
_FRONT_MATTER = st.fixed_dictionaries(
    {},
    optional={
        "description": st.text(max_size=30) | _JSON,
        "to": _TEMPLATES | _JSON,
        "from": _TEMPLATES | _JSON,
        "expires": st.sampled_from(["P2D", "PT4H", "PT90M", "P1W", "P1M", "bad", ""]) | _JSON,
        "call": _BLOCK | _JSON,
        "deliver": _BLOCK | _JSON,
        "replies": _BLOCK | _JSON,
        "input": st.fixed_dictionaries({}, optional={"schema": _SCHEMAS}) | _JSON,
        "output": st.fixed_dictionaries({}, optional={"schema": _SCHEMAS}) | _JSON,
    },
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(front_matter=_FRONT_MATTER, body=_TEMPLATES, first_line=st.integers(1, 500), rule=_RULES)
def test_never_raises_on_odd_but_json_like_front_matter(
    front_matter: dict[str, Any], body: str, first_line: int, rule: ReplyRule | None
) -> None:
    overview = write_overview(front_matter, body, body_first_line=first_line, reply_rule=rule)
    assert overview.endswith("\n")
    assert overview.strip()


@settings(max_examples=150, deadline=None)
@given(schema=_SCHEMAS)
def test_never_raises_on_any_schema(schema: Any) -> None:
    for place in ("input", "output"):
        front_matter, body, first_line = _document(APPROVE_CAMPAIGN_BRIEF)
        front_matter[place] = {"schema": schema}
        assert write_overview(front_matter, body, body_first_line=first_line, reply_rule=None)
        call = {**THREAD_REPLIES_CALL, place: {"schema": schema}}
        assert write_overview(call, "", body_first_line=1, reply_rule=None)


@settings(max_examples=300, deadline=None)
@given(source=_TEMPLATES)
def test_reading_any_template_never_raises(source: str) -> None:
    assert isinstance(template_in_words(source), str)


def test_deep_nesting_and_long_templates_read_quickly() -> None:
    deep = "{% if input.a %}\n" * 3000 + "x\n" + "{% endif %}\n" * 3000
    assert "x" in template_in_words(deep)
    unclosed = "{{ {% " * 20_000
    assert template_in_words(unclosed) == unclosed
    cyclic = {"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}}
    front_matter, body, first_line = _document(APPROVE_CAMPAIGN_BRIEF)
    front_matter["output"]["schema"] = cyclic
    assert "A" in write_overview(front_matter, body, body_first_line=first_line, reply_rule=None)
