"""The warnings every function type shares when a document is saved (issue 18, point 3): a misspelt input
field a template reads, a schema keyword no draft defines, a tool server that does not serve the
playbook. Each is saved all the same; the definition's ``warnings`` name its line and pointer."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.documents.problems import DocumentWarning
from parley.documents.save_warnings import MAX_WARNINGS, SaveContext, merged_warnings, save_warnings
from parley.runs.kinds import check_source

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "definitions"
SERVED = SaveContext(servers=frozenset({"chat", "notes"}))

INTERACTION = """\
---
description: Asks the campaign owner to approve a reviewed brief
to: '{{ input.ownr }}'
expires: P2D
deliver:
  server: mail
  tool: post_message
  with:
    channel: '{{ to }}'
    text: '{{ message }}'
input:
  schema:
    type: object
    requried: [owner, review]
    properties:
      owner: { type: string }
      review: { type: string, maxLenght: 4000 }
output:
  schema:
    type: object
    required: [verdict]
    properties:
      verdict: { type: string, enum: [approve, revise] }
---
The review of your campaign brief is ready:

{{ input.reveiw }}
"""

REASONING = """\
---
model: anthropic/claude-sonnet-4-5
tools: [graph/search, notes/find, graph/query]
input:
  schema:
    type: object
    properties:
      brief: { type: string }
      owner: { type: string }
    requried: [brief]
  default: { tone: plain }
output:
  format: json
  schema:
    type: object
    additionalProperties: false
    required: [verdict]
    properties:
      verdict: { type: string, enumm: [approve, revise] }
ask:
  to: '{{ input.ownr }}'
  expires: P1D
---
{% system %}Review in a {{ input.tone }} voice.{% endsystem %}
Brief: {{ input.breif }}
"""


def shown(definition_type: str, source: str, context: SaveContext = SERVED) -> list[str]:
    checked = check_source(definition_type, source)  # saved: the type's check passes
    return merged_warnings(checked.warnings, save_warnings(definition_type, source, context))


def test_an_interaction_function_is_warned_of_each_mistake() -> None:
    assert shown("interaction", INTERACTION) == [
        "Line 3, /to: `to` reads 'input.ownr', which the input schema does not list; did you mean "
        "'input.owner'?",
        "Line 6, /deliver/server: no tool server named 'mail' serves this playbook; runs will end "
        "unavailable until the operator adds it",
        "Line 14, /input/schema/requried: requried is not a JSON Schema keyword, so nothing checks it; "
        "did you mean required?",
        "Line 17, /input/schema/properties/review/maxLenght: maxLenght is not a JSON Schema keyword, so "
        "nothing checks it; did you mean maxLength?",
        "Line 27: the message reads 'input.reveiw', which the input schema does not list; did you mean "
        "'input.review'?",
    ]


def test_a_reasoning_function_is_warned_of_each_mistake() -> None:
    assert shown("reasoning", REASONING) == [
        "Line 3, /tools/0: no tool server named 'graph' serves this playbook; runs will end unavailable "
        "until the operator adds it",
        "Line 10, /input/schema/requried: requried is not a JSON Schema keyword, so nothing checks it; "
        "did you mean required?",
        # the type's own warning at this pointer ("not a keyword the runtime knows") gives way to this one
        "Line 19, /output/schema/properties/verdict/enumm: enumm is not a JSON Schema keyword, so nothing "
        "checks it; did you mean enum?",
        "Line 21, /ask/to: `ask.to` reads 'input.ownr', which the input schema does not list; did you mean "
        "'input.owner'?",
        # input.tone is not listed, but input.default gives it to every run
        "Line 25: the template reads 'input.breif', which the input schema does not list; did you mean "
        "'input.brief'?",
    ]


def test_the_types_own_warnings_stay() -> None:
    source = REASONING.replace("    additionalProperties: false\n", "")
    found = shown("reasoning", source)
    assert any("/output/schema: An object without additionalProperties: false" in text for text in found)
    assert sum("/output/schema/properties/verdict/enumm:" in text for text in found) == 1


def test_a_server_the_playbook_has_is_not_warned_of_and_without_a_context_none_is() -> None:
    served = SaveContext(servers=frozenset({"mail", "graph", "notes"}))
    assert not any("tool server" in text for text in shown("interaction", INTERACTION, served))
    assert not any("tool server" in text for text in shown("reasoning", REASONING, served))
    assert not any("tool server" in text for text in shown("interaction", INTERACTION, SaveContext()))


def test_a_call_names_its_server_too() -> None:
    source = """\
---
call:
  server: crm
  tool: find_account
  with: { id: '{{ input.acount_id }}', page: { size: 10, of: '{{ input.acount_id }}' } }
input:
  schema: { type: object, properties: { account_id: { type: string } } }
output:
  schema: { type: object }
---
"""
    assert shown("interaction", source) == [
        "Line 3, /call/server: no tool server named 'crm' serves this playbook; runs will end unavailable "
        "until the operator adds it",
        "Line 5, /call/with/id: `call.with` reads 'input.acount_id', which the input schema does not list; "
        "did you mean 'input.account_id'?",
        "Line 5, /call/with/page/of: `call.with` reads 'input.acount_id', which the input schema does not "
        "list; did you mean 'input.account_id'?",
    ]


def test_from_and_a_block_template_are_read_at_their_own_lines() -> None:
    source = """\
---
to: '{{ input.owner }}'
from: '{{ input.approver }}'
expires: P2D
deliver:
  server: chat
  tool: post_message
  with:
    text: |
      Hello
      {{ input.reveiw | default: "" }}
input:
  schema:
    type: object
    properties: { owner: { type: string }, review: { type: string }, approvers: { type: string } }
---
Hello
"""
    assert shown("interaction", source) == [
        "Line 3, /from: `from` reads 'input.approver', which the input schema does not list; did you mean "
        "'input.approvers'?",
        "Line 11, /deliver/with/text: `deliver.with` reads 'input.reveiw', which the input schema does not "
        "list; did you mean 'input.review'?",
    ]


@pytest.mark.parametrize("path", sorted(EXAMPLES.rglob("*.md")), ids=lambda path: path.stem)
def test_the_example_documents_have_no_such_warnings(path: Path) -> None:
    definition_type = "reasoning" if path.parent.name == "reasoning" else "interaction"
    # chat: the operator's server of examples/operator-demo.yaml; team-chat: the connection the README adds
    context = SaveContext(servers=frozenset({"chat", "team-chat"}))
    assert save_warnings(definition_type, path.read_text(), context) == []


def test_a_source_that_is_not_a_document_has_none() -> None:
    assert save_warnings("interaction", "no front matter", SERVED) == []
    assert save_warnings("interaction", "---\n- a list\n---\nHi\n", SERVED) == []
    assert save_warnings("reasoning", "---\nmodel: [\n---\nHi\n", SERVED) == []


def test_at_most_100_are_shown_the_last_counting_the_rest() -> None:
    own = [f"Line {n}, /output/schema/x{n}: own" for n in range(1, 61)]
    found = [DocumentWarning(n, f"/input/schema/k{n}", "shared") for n in range(30, 90)]

    merged = merged_warnings(own, found)

    assert len(merged) == MAX_WARNINGS
    assert merged[0] == "Line 1, /output/schema/x1: own"
    # lines 1 to 29 once, 30 to 60 twice (own, then shared), from 61 once: the 100th is on line 69
    assert merged[-1] == "Line 69: 21 more warnings are not shown"


def test_a_count_the_type_already_made_is_counted_on() -> None:
    own = [
        *(f"Line {n}, /output/schema/x{n}: own" for n in range(1, 100)),
        "Line 100: 7 more warnings are not shown",
    ]

    merged = merged_warnings(own, [DocumentWarning(200, "/input/schema/k", "shared")])

    assert merged[-1] == "Line 100: 8 more warnings are not shown"
