"""The interaction-format checker: fields, shapes, templates, tool blocks, reply rules and schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parley.errors import Problem
from parley.interaction.document import check_interaction_source

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "definitions"
BRIEF = (EXAMPLES / "approve-campaign-brief.md").read_text()
CHAT = (EXAMPLES / "approve-draft-in-chat.md").read_text()


def problems(source: str) -> list[str]:
    with pytest.raises(Problem) as caught:
        check_interaction_source(source)
    problem = caught.value
    assert problem.reason == "invalid_input" and problem.status == 422
    assert all(entry.pointer == "/source" for entry in problem.errors)
    return [entry.detail for entry in problem.errors]


def has(found: list[str], prefix: str, *words: str) -> bool:
    return any(line.startswith(prefix) and all(w in line for w in words) for line in found)


def doc(front: str, body: str = "Hello {{ input.owner }}\n") -> str:
    return f"---\n{front.strip()}\n---\n{body}"


INBOX = """
to: '{{ input.owner }}'
expires: P2D
input:
  schema:
    type: object
    properties:
      owner: { type: string }
"""


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.md")), ids=lambda p: p.stem)
def test_the_example_documents_are_accepted(path: Path) -> None:
    checked = check_interaction_source(path.read_text())
    assert checked.media_type == "text/markdown"
    assert checked.overview.strip()


def test_the_pages_example_keeps_its_description_and_message() -> None:
    checked = check_interaction_source(BRIEF)
    assert checked.description == "Asks the campaign owner to approve a reviewed brief"
    assert checked.body.startswith("The review of your campaign brief is ready:")
    assert checked.front_matter["expires"] == "P2D"
    assert checked.warnings == []


def test_unknown_fields_are_refused_with_their_line() -> None:
    found = problems(doc(INBOX + "model: anthropic/claude\nconfig: { temperature: 1 }\n"))
    assert has(found, "Line 9, /model:", "not a field")
    assert has(found, "Line 10, /config:", "not a field")


def test_yes_and_dates_stay_strings() -> None:
    checked = check_interaction_source(doc("description: yes\n" + INBOX))
    assert checked.description == "yes"
    checked = check_interaction_source(doc("description: 2026-10-01\n" + INBOX))
    assert checked.description == "2026-10-01"


def test_anchors_aliases_tags_and_duplicate_keys_are_refused() -> None:
    assert problems(doc(INBOX + "description: &a hi\n"))
    assert problems(doc(INBOX + "description: !!str hi\n"))
    found = problems(doc(INBOX + "expires: P1D\n"))
    assert has(found, "Line 9", "expires")


def test_description_bounds() -> None:
    assert has(problems(doc("description: ''\n" + INBOX)), "Line 2, /description:", "1 to 1,000")
    assert has(problems(doc(f"description: {'x' * 1001}\n" + INBOX)), "Line 2, /description:")
    assert check_interaction_source(doc(f"description: {'x' * 1000}\n" + INBOX)).description == "x" * 1000


class TestFieldsByShape:
    def test_call_refuses_the_fields_of_a_request(self) -> None:
        found = problems(
            doc(
                "call: { server: chat, tool: list }\nto: x\nexpires: P1D\n"
                "output: { schema: { type: object } }\n",
                body="A message\n",
            )
        )
        assert has(found, "Line 3, /to:", "refused")
        assert has(found, "Line 4, /expires:", "refused")
        assert any("no message" in line for line in found)

    def test_call_requires_an_output_schema(self) -> None:
        assert any(
            "output.schema" in line for line in problems(doc("call: { server: chat, tool: list }", ""))
        )

    def test_a_request_requires_to_expires_and_a_message(self) -> None:
        found = problems(doc("description: d", body="\n  \n"))
        assert any("'to' is required" in line for line in found)
        assert any("'expires' is required" in line for line in found)
        assert any("message is required" in line for line in found)

    def test_replies_are_refused_in_the_inbox(self) -> None:
        replies = CHAT.split("deliver:")[0] + "replies:" + CHAT.split("replies:")[1]
        found = problems(replies)
        assert has(found, "Line", "/replies:", "only read with 'deliver'")

    def test_replies_need_deliver_sent_and_an_output_schema(self) -> None:
        without_sent = CHAT.replace("  sent:\n    conversation: /channel\n    id: /ts\n", "")
        assert has(problems(without_sent), "Line", "/replies:", "deliver.sent")
        notification = CHAT.split("output:")[0] + "---" + CHAT.split("---", 2)[2]
        found = problems(notification)
        assert any("/replies:" in line and "output.schema" in line for line in found)

    def test_reply_needs_an_output_schema(self) -> None:
        assert has(problems(doc(INBOX + "reply: { verdict: word }\n")), "Line 9, /reply:", "output.schema")

    def test_a_reply_rule_nothing_reads_is_a_warning(self) -> None:
        front = BRIEF.split("---")[1] + "reply: { verdict: word, note: rest }\n"
        checked = check_interaction_source("---" + front + "---" + BRIEF.split("---", 2)[2])
        assert len(checked.warnings) == 1 and "/reply" in checked.warnings[0]


class TestDurations:
    @pytest.mark.parametrize("value", ["PT1M", "P30D", "PT4H", "P2D", "P1W"])
    def test_expires_within_bounds(self, value: str) -> None:
        check_interaction_source(doc(INBOX.replace("P2D", value)))

    @pytest.mark.parametrize("value", ["PT59S", "P31D", "2 days", "P1M", "''"])
    def test_expires_outside_bounds(self, value: str) -> None:
        assert has(problems(doc(INBOX.replace("P2D", value))), "Line 3, /expires:")

    @pytest.mark.parametrize(
        ("value", "ok"), [("PT5S", True), ("PT1H", True), ("PT4S", False), ("PT61M", False)]
    )
    def test_wait(self, value: str, ok: bool) -> None:
        source = CHAT.replace("wait: PT1M", f"wait: {value}")
        if ok:
            check_interaction_source(source)
        else:
            assert has(problems(source), "Line 26, /replies/wait:")


class TestToolBlocks:
    def test_server_and_tool_name_formats(self) -> None:
        found = problems(
            CHAT.replace("server: chat", "server: Chat").replace("tool: post_message", "tool: post message")
        )
        assert has(found, "Line 6, /deliver/server:", "not a valid name")
        assert has(found, "Line 7, /deliver/tool:", "not a valid name")
        long_server = "s" * 33
        assert has(
            problems(CHAT.replace("server: chat", f"server: {long_server}")), "Line 6, /deliver/server:"
        )
        check_interaction_source(CHAT.replace("tool: post_message", "tool: chat.post-message_v2"))

    def test_pointers(self) -> None:
        assert has(
            problems(CHAT.replace("conversation: /channel", "conversation: channel")),
            "Line 12, /deliver/sent/conversation:",
        )
        assert has(problems(CHAT.replace("list: /messages", "list: /a~2b")), "Line 23, /replies/read/list:")
        check_interaction_source(CHAT.replace("list: /messages", "list: /a~1b/~0c"))

    def test_read_order(self) -> None:
        found = problems(CHAT.replace("order: oldest_first", "order: newest"))
        assert has(found, "Line 24, /replies/read/order:", "oldest_first or newest_first")

    def test_required_keys_of_each_block(self) -> None:
        found = problems(
            CHAT.replace("    each: { id: /ts, sender: /user, text: /text, to: /thread_ts }\n", "")
        )
        assert has(found, "Line 22, /replies/read:", "'each' is required")
        assert has(
            problems(CHAT.replace("  tool: thread_replies\n", "")), "Line 14, /replies:", "'tool' is required"
        )

    def test_unknown_keys_in_blocks(self) -> None:
        assert has(
            problems(CHAT.replace("  tool: post_message\n", "  tool: post_message\n  retries: 3\n")),
            "Line 8, /deliver/retries:",
        )

    def test_call_read_refuses_the_empty_pointer(self) -> None:
        source = (EXAMPLES / "read-thread-replies.md").read_text().replace("read: /messages", "read: ''")
        assert has(problems(source), "Line 11, /call/read:")

    def test_call_arguments_over_16_kib_that_read_no_input(self) -> None:
        big = "x" * (17 * 1024)
        base = (EXAMPLES / "read-thread-replies.md").read_text()
        reading_input = "".join(
            line + "\n" for line in base.splitlines() if "{{ input." in line and "limit" not in line
        )
        refused = base.replace("limit: '{{ input.limit }}'", f"limit: 5\n    blob: {big}").replace(
            reading_input, ""
        )
        assert has(problems(refused), "Line 6, /call/with:", "16 KiB")
        reads_input = base.replace(
            "limit: '{{ input.limit }}'", f"limit: '{{{{ input.limit }}}}'\n    blob: {big}"
        )
        check_interaction_source(reads_input)


class TestTemplates:
    def test_a_name_the_place_does_not_read(self) -> None:
        found = problems(doc(INBOX.replace("'{{ input.owner }}'", "'{{ owner }}'")))
        assert has(found, "Line 2, /to:")
        found = problems(doc(INBOX, body="Hello\n{{ sent.id }}\n"))
        assert has(found, "Line 11:", "sent")

    def test_deliver_with_reads_the_request(self) -> None:
        check_interaction_source(
            CHAT.replace(
                "text: '{{ message }}'\n  sent",
                "text: '{{ message }} {{ run_id }} {{ function }} {{ expires_at }}'\n"
                "    schema: '{{ answer_schema }}'\n  sent",
            )
        )
        assert has(
            problems(CHAT.replace("channel: '{{ to }}'", "channel: '{{ since }}'")),
            "Line 9, /deliver/with/channel:",
        )

    def test_a_literal_argument_the_filter_refuses_is_refused_with_the_templates_pointer(self) -> None:
        refused = CHAT.replace("text: '{{ message }}'", "text: '{{ message | clip: -1 }}'")
        assert problems(refused) == [
            "Line 10, /deliver/with/text: clip takes a length of 0 or more",
            "Line 31, /replies/tell/with/text: clip takes a length of 0 or more",
        ]
        assert problems(doc(INBOX, body="Hello\n{{ input.owner | json: 'x' }}\n")) == [
            "Line 11: json takes a whole number, not text"
        ]

    def test_replies_places(self) -> None:
        assert has(
            problems(CHAT.replace("ts: '{{ sent.id }}'", "ts: '{{ input.owner }}'")),
            "Line 19, /replies/with/ts:",
        )
        assert has(
            problems(CHAT.replace("'{{ sent.conversation }}/{{ sent.id }}'", "'{{ sent.thread }}'")),
            "Line 15, /replies/conversation:",
        )
        check_interaction_source(
            CHAT.replace("'{{ sent.conversation }}/{{ sent.id }}'", "'{{ to }}:{{ sent.id }}'")
        )

    def test_a_property_the_input_schema_does_not_allow(self) -> None:
        closed = INBOX + "    additionalProperties: false\n"
        assert has(problems(doc(closed, body="Hi {{ input.nickname }}\n")), "Line 11:")
        check_interaction_source(doc(INBOX, body="Hi {{ input.nickname }}\n"))

    def test_dollar_brace_is_refused(self) -> None:
        assert has(problems(doc(INBOX, body="Key: ${API_KEY}\n")), "Line 10:", "${")

    def test_tags_and_filters_outside_the_allowed_set(self) -> None:
        assert has(problems(doc(INBOX, body="One\n{% include 'x' %}\n")), "Line 11:")
        assert has(problems(doc(INBOX, body="One\n\n{{ input.owner | date: '%Y' }}\n")), "Line 12:")

    def test_a_template_that_does_not_compile(self) -> None:
        assert has(problems(doc(INBOX, body="One\n{% if input.owner %}\n")), "Line")

    def test_a_structure_inside_a_longer_text(self) -> None:
        schema = INBOX + "      account: { type: object }\n"
        assert problems(doc(schema, body="Account: {{ input.account }}\n"))
        check_interaction_source(doc(schema, body="Account: {{ input.account | json }}\n"))


class TestReplyRules:
    def test_a_function_that_reads_replies_without_a_rule_is_refused(self) -> None:
        source = CHAT.replace("reply: { verdict: word, note: rest }\n", "").replace(
            "required: [verdict]", "required: [verdict, note]"
        )
        assert has(problems(source), "Line 14, /replies:", "reply rule")

    def test_the_rule_made_from_the_schema_suffices(self) -> None:
        check_interaction_source(CHAT.replace("reply: { verdict: word, note: rest }\n", ""))

    def test_words_with_the_page_example(self) -> None:
        check_interaction_source(
            CHAT.replace(
                "reply: { verdict: word, note: rest }",
                "reply: { verdict: { from: word, words: { approve: [yes, ok] } }, note: rest }",
            )
        )

    def test_rule_problems_carry_their_line(self) -> None:
        found = problems(CHAT.replace("reply: { verdict: word, note: rest }", "reply: { verdict: first }"))
        assert has(found, "Line 32, /reply/verdict:")


class TestSchemas:
    def test_schema_rules_apply_to_input_and_output(self) -> None:
        found = problems(BRIEF.replace("owner: { type: string }", "owner: { type: string, pattern: '^a+$' }"))
        assert has(found, "Line 10, /input/schema/properties/owner/pattern:")
        found = problems(
            BRIEF.replace("verdict: { type: string, enum: [approve, revise] }", "verdict: { if: {} }")
        )
        assert has(found, "Line 17, /output/schema/properties/verdict/if:")

    def test_the_input_schema_is_an_object(self) -> None:
        assert has(
            problems(
                BRIEF.replace(
                    "    type: object\n    required: [owner, review]",
                    "    type: array\n    required: [owner, review]",
                )
            ),
            "Line",
            "/input/schema",
        )


def test_problems_are_capped_at_twenty_then_counted() -> None:
    extra = "".join(f"unknown{i}: 1\n" for i in range(30))
    found = problems(doc(INBOX + extra))
    assert len(found) == 21
    assert found[-1] == "Line 29: 10 more issues are not shown"
    assert [int(line.split()[1].rstrip(",:")) for line in found[:20]] == sorted(
        int(line.split()[1].rstrip(",:")) for line in found[:20]
    )


def test_a_document_without_front_matter() -> None:
    assert has(problems("Hello there\n"), "Line 1")


def test_source_over_64_kib() -> None:
    assert has(problems(doc(INBOX, body="x" * 70_000)), "Line 1", "65,536")


def test_every_problem_is_listed_once() -> None:
    found = problems(doc(INBOX + "model: a\n", body="{{ secret }} {{ secret }}\n"))
    assert len(found) == len(set(found))
    json.dumps(found)
