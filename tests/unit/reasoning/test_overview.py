"""The overview of a reasoning function (reasoning-format.md, "The overview"; output-shapes.md, "In the
overview"): description, what it needs, what it produces, the model and its tools, what the model is told."""

from __future__ import annotations

import re

import pytest

from parley.documents.template_words import MESSAGE_CUT
from parley.reasoning.document import check_reasoning_document
from parley.reasoning.overview import write_reasoning_overview
from parley.reasoning.shapes import SHAPE_NAMES, ShapeName, shape_sentence

SYSTEM_LINE = (
    "{% system %}Review the brief using the supplied criteria. Identify missing evidence. "
    "Do not invent facts.{% endsystem %}"
)
#: The page's example, "A function document".
EXAMPLE = """---
description: Reviews a campaign brief against the team's criteria
model: anthropic/claude-sonnet-4-5
config:
  max_output_tokens: 800
input:
  schema:
    type: object
    properties:
      brief: { type: string }
      criteria: { type: string }
    required: [brief, criteria]
---

@SYSTEM@
Brief: {{ input.brief }}
Criteria: {{ input.criteria }}
""".replace("@SYSTEM@", SYSTEM_LINE)


def _overview(source: str) -> str:
    return write_reasoning_overview(check_reasoning_document(source))


def _document(front_matter: str, template: str) -> str:
    return f"---\n{front_matter.strip()}\n---\n{template}"


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


def _quoted(text: str, after: str) -> str:
    """The block quote that follows the paragraph ``after``, without its ``> `` marks."""
    match = re.search(rf"^{re.escape(after)}\n\n((?:^>.*\n?)+)", text, re.M)
    assert match is not None, f"no quote after {after!r} in:\n{text}"
    return "\n".join(line[2:] if line.startswith("> ") else "" for line in match.group(1).splitlines())


# The page's example


def test_the_example_reads_as_the_page_says() -> None:
    overview = _overview(EXAMPLE)

    assert overview.startswith("Reviews a campaign brief against the team's criteria\n\n")
    needs = _section(overview, "What it needs")
    assert _bullet(needs, "brief") == "text, required."
    assert _bullet(needs, "criteria") == "text, required."
    assert "Text" in _section(overview, "What it produces")
    model = _section(overview, "Which model it uses")
    assert "`anthropic/claude-sonnet-4-5`" in model
    assert "no tools" in model
    assert "mermaid" not in overview
    told = _section(overview, "What the model is told")
    assert _quoted(told, "The instructions:") == (
        "Review the brief using the supplied criteria. Identify missing evidence. Do not invent facts."
    )
    assert _quoted(told, "The message:") == "Brief: **brief**\nCriteria: **criteria**"
    assert "{{" not in overview
    assert "{%" not in overview
    assert "Used by" not in overview
    assert overview.endswith("\n")
    assert not overview.endswith("\n\n")


def test_the_sections_come_in_the_order_the_page_gives() -> None:
    titles = re.findall(r"^\*\*([A-Z][^*\n]*)\*\*$", _overview(EXAMPLE), re.M)
    assert titles == ["What it needs", "What it produces", "Which model it uses", "What the model is told"]


# 1. The description


def test_a_function_without_a_description_says_it_has_none_yet() -> None:
    overview = _overview(
        EXAMPLE.replace("description: Reviews a campaign brief against the team's criteria\n", "")
    )
    assert overview.startswith("This function has no description yet.\n")


# 2. What it needs


def test_input_defaults_are_shown_with_each_field() -> None:
    source = _document(
        """
model: openai/gpt-5
input:
  schema:
    type: object
    required: [brief]
    properties:
      brief: { type: string, maxLength: 4000, description: The campaign brief }
      tone: { type: string, enum: [warm, plain], default: plain }
      limit: { type: integer, minimum: 1, maximum: 10 }
      notes: { type: string }
  default: { tone: warm, limit: 3 }
""",
        "Review {{ input.brief }}",
    )
    needs = _section(_overview(source), "What it needs")

    assert _bullet(needs, "brief") == "text, required, at most 4,000 characters. The campaign brief."
    tone = _bullet(needs, "tone")
    assert "one of `warm` or `plain`" in tone
    assert "`warm` when left out" in tone  # input.default wins over the schema's own default
    assert "`plain` when left out" not in tone
    assert _bullet(needs, "limit") == "whole number, optional, from 1 to 10, `3` when left out."
    assert _bullet(needs, "notes") == "text, optional."


def test_defaults_for_fields_the_schema_does_not_list_are_shown_too() -> None:
    source = _document(
        """
model: openai/gpt-5
input:
  schema:
    type: object
    properties:
      brief: { type: string }
  default: { region: EU }
""",
        "Review {{ input.brief }}",
    )
    needs = _section(_overview(source), "What it needs")
    assert "Other fields the input gets when it leaves them out:" in needs
    assert _bullet(needs, "region") == "`EU`."


def test_a_function_without_an_input_schema_takes_any_json_object() -> None:
    source = _document("model: openai/gpt-5\ninput:\n  default: { tone: warm }", "Hello {{ input.name }}")
    needs = _section(_overview(source), "What it needs")
    assert "any JSON object" in needs
    assert _bullet(needs, "tone") == "`warm`."

    plain = _section(_overview(_document("model: openai/gpt-5", "Hello")), "What it needs")
    assert "any JSON object" in plain
    assert "- " not in plain


# 3. What it produces


def test_an_output_schema_lists_its_fields() -> None:
    source = _document(
        """
model: openai/gpt-5
output:
  format: json
  schema:
    type: object
    required: [verdict]
    properties:
      verdict: { type: string, enum: [approve, revise] }
      note: { type: string, maxLength: 2000 }
""",
        "Review this.",
    )
    produces = _section(_overview(source), "What it produces")
    assert "JSON" in produces
    verdict = _bullet(produces, "verdict")
    assert "required" in verdict
    assert "one of `approve` or `revise`" in verdict
    assert _bullet(produces, "note") == "text, optional, at most 2,000 characters."


@pytest.mark.parametrize("shape", SHAPE_NAMES)
def test_each_shape_is_named_in_its_sentence(shape: ShapeName) -> None:
    source = _document(f"model: openai/gpt-5\noutput: {{ shape: {shape} }}", "Summarize the week.")
    produces = _section(_overview(source), "What it produces")
    assert shape_sentence(shape) in produces
    assert f"`{shape}`" in produces
    assert "- " not in produces  # the shape's sentence, not its schema's fields


# 4. The model and its tools


def test_tools_are_listed_and_drawn_in_a_mermaid_flowchart() -> None:
    source = _document('model: openai/gpt-5\ntools: [crm/lookup_account, "search/*"]', "Find the owner.")
    model = _section(_overview(source), "Which model it uses")

    assert "`openai/gpt-5`" in model
    assert "- the tool `lookup_account` on the server `crm`" in model
    assert "- every tool the server `search` allows" in model
    match = re.search(r"^```mermaid\n(.*?)^```$", model, re.M | re.S)
    assert match is not None, model
    diagram = match.group(1)
    assert diagram.startswith("flowchart LR\n")
    assert 'function["This function"] -->|asks| model["openai/gpt-5"]' in diagram
    assert 'model -->|may call| tool1["crm/lookup_account"]' in diagram
    assert 'model -->|may call| tool2["every tool of search"]' in diagram


def test_a_model_id_cannot_break_the_diagram() -> None:
    source = _document('model: acme/a"b`c#d<e>\ntools: [crm/lookup]', "Find the owner.")
    diagram = _section(_overview(source), "Which model it uses").split("```mermaid\n", 1)[1]
    assert 'model["acme/a#quot;b#96;c#35;d#lt;e#gt;"]' in diagram


def test_a_function_without_tools_draws_no_diagram() -> None:
    overview = _overview(_document("model: openai/gpt-5", "Hello"))
    assert "The model may call no tools." in _section(overview, "Which model it uses")
    assert "mermaid" not in overview
    assert "flowchart" not in overview


# 5. What the model is told


def test_conditions_over_several_lines_read_as_italic_lines() -> None:
    template = """
{% system %}
{% if input.vip %}
Be warm.
{% elsif input.new %}
Welcome them.
{% else %}
Be brief.
{% endif %}
{% endsystem %}
{% unless input.quiet %}
Say hello.
{% endunless %}
{% for item in input.items %}
- {{ item.name | upcase }}
{% endfor %}
{% comment %}Not for the model{% endcomment %}
{% raw %}{{ kept }}{% endraw %}
Dear {% if input.vip %}friend{% else %}customer{% endif %}.
"""
    told = _section(_overview(_document("model: openai/gpt-5", template)), "What the model is told")

    instructions = _quoted(told, "The instructions:")
    assert "_When input.vip:_" in instructions
    assert "_Or when input.new:_" in instructions
    assert "_Otherwise:_" in instructions
    assert "Be warm." in instructions
    message = _quoted(told, "The message:")
    assert "_Unless input.quiet:_" in message
    assert "_For each item of input.items:_" in message
    assert "- **name**" in message
    assert "upcase" not in message
    assert "Not for the model" not in told
    assert "{{ kept }}" in message
    assert "Dear friend when input.vip, otherwise customer." in message


def test_a_template_without_a_system_block_has_no_instructions() -> None:
    told = _section(
        _overview(_document("model: openai/gpt-5", "Summarize {{ input.text }}.\n")), "What the model is told"
    )
    assert "instructions" not in told
    assert _quoted(told, "The message:") == "Summarize **text**."


def test_the_message_around_the_block_is_read_as_one_template() -> None:
    template = "Intro:\n{%- system -%}\nBe brief.\n{%- endsystem -%}\n\n{{ input.topic }}\n"
    told = _section(_overview(_document("model: openai/gpt-5", template)), "What the model is told")
    assert _quoted(told, "The instructions:") == "Be brief."
    # The dashes remove the whitespace around the block, as rendering does.
    assert _quoted(told, "The message:") == "Intro:**topic**"


def test_a_message_past_8192_characters_is_cut_with_the_line_it_continues_on() -> None:
    lines = [f"Line {number:05}: {{{{ input.text }}}} and more words to read." for number in range(400)]
    body = "\n".join(lines)
    assert len(body) > MESSAGE_CUT
    source = _document("model: openai/gpt-5", "{% system %}Be brief.{% endsystem %}\n" + body + "\n")
    told = _section(_overview(source), "What the model is told")

    match = re.search(r"_The message is cut here; it continues on line ([\d,]+) of the document\._", told)
    assert match is not None, told
    continues = int(match.group(1).replace(",", ""))
    document_lines = source.split("\n")
    # The line named holds the first text left out; the text before it is in the overview.
    named = re.match(r"Line (\d+)", document_lines[continues - 1])
    assert named is not None
    number = int(named.group(1))
    assert f"Line {number - 1:05}: **text**" in told
    assert f"Line {number + 1:05}" not in told
    assert "instructions are cut" not in told


def test_a_message_before_and_after_the_block_names_the_document_line_past_the_block() -> None:
    long_block = "{% system %}\n" + "Be brief.\n" * 30 + "{% endsystem %}"
    after = "\n".join(f"After {number:05} and some words to fill the line up." for number in range(300))
    source = _document("model: openai/gpt-5", "Before the block.\n" + long_block + "\n" + after + "\n")
    told = _section(_overview(source), "What the model is told")

    match = re.search(r"it continues on line ([\d,]+) of the document", told)
    assert match is not None, told
    named = source.split("\n")[int(match.group(1).replace(",", "")) - 1]
    assert named.startswith("After ")
    number = int(named.split()[1])
    assert f"After {number - 1:05}" in told
    assert f"After {number + 1:05}" not in told


def test_long_instructions_are_cut_with_the_line_they_continue_on() -> None:
    instructions = "\n".join(f"Rule {number:05}: keep to the facts you are given." for number in range(300))
    source = _document("model: openai/gpt-5", "{% system %}\n" + instructions + "\n{% endsystem %}\nGo.\n")
    told = _section(_overview(source), "What the model is told")

    match = re.search(
        r"_The instructions are cut here; they continue on line ([\d,]+) of the document\._", told
    )
    assert match is not None, told
    named = source.split("\n")[int(match.group(1).replace(",", "")) - 1]
    assert named.startswith("Rule ")
    assert _quoted(told, "The message:") == "Go."
    assert "message is cut" not in told


def test_a_system_tag_inside_a_comment_does_not_split_the_template() -> None:
    template = "{% comment %}{% system %}x{% endsystem %}{% endcomment %}Hello {{ input.name }}\n"
    told = _section(_overview(_document("model: openai/gpt-5", template)), "What the model is told")
    assert "instructions" not in told
    assert _quoted(told, "The message:") == "Hello **name**"


def test_odd_but_valid_documents_still_get_an_overview() -> None:
    source = _document(
        """
model: openai/gpt-5
input:
  schema:
    type: object
    $defs:
      Owner: { type: string, minLength: 1 }
    properties:
      owner: { $ref: "#/$defs/Owner" }
      anything: true
      kinds: { type: [string, "null"] }
  default: { owner: maria, anything: [1, 2] }
""",
        "{% system %}{% endsystem %}{{ input.owner }}",
    )
    overview = _overview(source)
    needs = _section(overview, "What it needs")
    assert "`maria` when left out" in _bullet(needs, "owner")
    assert "`[1, 2]` when left out" in _bullet(needs, "anything")
    assert "text or null" in _bullet(needs, "kinds")
    told = _section(overview, "What the model is told")
    assert "The instructions are empty." in told
    assert _quoted(told, "The message:") == "**owner**"
