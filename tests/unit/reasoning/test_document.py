"""The reasoning-format checker: every field, unknown keys, the YAML rules, schemas, tools, options and
the template with its system block (reasoning-format.md, "Fields" and "How a document is checked")."""

from __future__ import annotations

import pytest

from parley.errors import Problem
from parley.models.providers.base import Settings
from parley.reasoning.document import (
    ModelReference,
    ToolReference,
    check_reasoning_document,
)

SYSTEM_LINE = (
    "{% system %}Review the brief using the supplied criteria. Identify missing evidence. "
    "Do not invent facts.{% endsystem %}"
)
#: The page's example, "A function document", byte for byte.
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

MODEL = "model: anthropic/claude-sonnet-4-5"


def doc(front: str, body: str = "Hello {{ today }}\n") -> str:
    """A document whose front matter starts on line 2, with ``model`` first unless ``front`` has one."""
    text = front.strip("\n")
    if not any(line.startswith("model:") for line in text.splitlines()):
        text = f"{MODEL}\n{text}" if text else MODEL
    return f"---\n{text}\n---\n{body}"


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
    assert checked.description == "Reviews a campaign brief against the team's criteria"
    assert checked.model == ModelReference("anthropic", "claude-sonnet-4-5")
    assert str(checked.model) == "anthropic/claude-sonnet-4-5"
    assert checked.settings == Settings(max_output_tokens=800)
    assert checked.input_schema is not None and checked.input_schema["required"] == ["brief", "criteria"]
    assert checked.input_default == {}
    assert checked.output_format == "text"
    assert checked.output_schema is None and checked.output_shape is None and checked.answer_schema is None
    assert checked.provider_options == {} and checked.tools == ()
    assert checked.template_first_line == 14
    assert checked.template.startswith("\n{% system %}Review the brief")
    assert checked.warnings == ()


def test_max_output_tokens_is_1024_when_left_out() -> None:
    assert check_reasoning_document(doc("")).settings == Settings(max_output_tokens=1_024)


def test_every_setting_is_read() -> None:
    checked = check_reasoning_document(
        doc(
            """
config:
  max_output_tokens: 64000
  temperature: 0.2
  top_p: 1
  seed: 0
  stop_sequences: [END, "###"]
  reasoning: none
"""
        )
    )
    assert checked.settings == Settings(
        max_output_tokens=64_000,
        temperature=0.2,
        top_p=1,
        seed=0,
        stop_sequences=("END", "###"),
        reasoning="none",
    )


# --- the fields, their types and ranges ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        ("description: 3", "Line 3, /description: Expected text"),
        ("description: ''", "Line 3, /description: A description is 1 to 1,000 characters"),
        (f"description: {'x' * 1_001}", "Line 3, /description: A description is 1 to 1,000 characters"),
        ("config: 3", "Line 3, /config: Expected a mapping"),
        ("config: { temperature: hot }", "Line 3, /config/temperature: Expected number"),
        ("config: { temperature: true }", "Line 3, /config/temperature: Expected number"),
        ("config: { top_p: [1] }", "Line 3, /config/top_p: Expected number"),
        (
            "config: { max_output_tokens: 0 }",
            "Line 3, /config/max_output_tokens: Expected a whole number from 1 to 64,000",
        ),
        (
            "config: { max_output_tokens: 64001 }",
            "Line 3, /config/max_output_tokens: Expected a whole number from 1 to 64,000",
        ),
        (
            "config: { max_output_tokens: 1.5 }",
            "Line 3, /config/max_output_tokens: Expected a whole number from 1 to 64,000",
        ),
        (
            "config: { max_output_tokens: '800' }",
            "Line 3, /config/max_output_tokens: Expected a whole number from 1 to 64,000",
        ),
        ("config: { seed: -1 }", "Line 3, /config/seed: Expected a whole number of 0 or more"),
        ("config: { seed: 0.5 }", "Line 3, /config/seed: Expected a whole number of 0 or more"),
        ("config: { seed: true }", "Line 3, /config/seed: Expected a whole number of 0 or more"),
        ("config: { stop_sequences: END }", "Line 3, /config/stop_sequences: Expected a list of strings"),
        ("config:\n  stop_sequences:\n    - END\n    - 3", "Line 6, /config/stop_sequences/1: Expected text"),
        (
            "config: { reasoning: extreme }",
            "Line 3, /config/reasoning: Expected one of none, minimal, low, medium, high, xhigh",
        ),
        (
            "config: { reasoning: null }",
            "Line 3, /config/reasoning: Expected one of none, minimal, low, medium, high, xhigh",
        ),
    ],
)
def test_a_field_of_the_wrong_type_or_range(front: str, expected: str) -> None:
    assert only(doc(front)) == expected


def test_the_pages_example_problem() -> None:
    source = "---\nmodel: openai/gpt-5\nconfig:\n  max_output_tokens: 100\n  temperature: warm\n---\nHi\n"
    assert only(source).startswith("Line 5, /config/temperature: Expected number")


def test_settings_are_checked_only_against_type_and_range() -> None:
    checked = check_reasoning_document(doc("config: { temperature: 7.5, top_p: -3, max_output_tokens: 1.0 }"))
    assert checked.settings.temperature == 7.5 and checked.settings.top_p == -3
    assert checked.settings.max_output_tokens == 1


@pytest.mark.parametrize("effort", ["none", "minimal", "low", "medium", "high", "xhigh"])
def test_each_reasoning_effort(effort: str) -> None:
    assert check_reasoning_document(doc(f"config: {{ reasoning: {effort} }}")).settings.reasoning == effort


class TestModel:
    def test_model_is_required(self) -> None:
        source = "---\ndescription: No model\n---\nHi\n"
        assert (
            only(source)
            == "Line 1, /model: 'model' is required: a model reference such as anthropic/claude-sonnet-4-5"
        )

    def test_a_missing_model_is_one_problem_beside_others(self) -> None:
        with pytest.raises(Problem) as caught:
            check_reasoning_document("---\nconfig: {}\n---\n")
        assert caught.value.detail.startswith(
            "The document has 2 problems: Line 1, /model: 'model' is required"
        )
        assert [entry.detail.split(":")[0] for entry in caught.value.errors] == ["Line 1, /model", "Line 4"]

    def test_model_is_text(self) -> None:
        expected = "Line 2, /model: Expected text: a model reference such as anthropic/claude-sonnet-4-5"
        assert only(doc("model: 3")) == expected

    @pytest.mark.parametrize(
        "reference", ["claude", "Anthropic/claude", "/claude", "anthropic/", "anth_ropic/x", "'anthropic /x'"]
    )
    def test_not_a_model_reference(self, reference: str) -> None:
        found = only(doc(f"model: {reference}"))
        assert (
            found.startswith("Line 2, /model: ") and "is not a model reference: write provider/model" in found
        )

    def test_a_model_id_has_no_spaces(self) -> None:
        found = only(doc("model: 'anthropic/claude sonnet'"))
        assert (
            found
            == "Line 2, /model: 'anthropic/claude sonnet' is not a model reference: a model id has no spaces "
            "or control characters"
        )

    @pytest.mark.parametrize(
        ("reference", "provider", "model"),
        [
            ("anthropic/claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
            ("my-gateway/meta/llama-3.3-70b", "my-gateway", "meta/llama-3.3-70b"),
            (
                "bedrock/us.anthropic.claude-3-7-sonnet-20250219-v1:0",
                "bedrock",
                "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
            ),
            ("demo/echo", "demo", "echo"),
        ],
    )
    def test_a_model_reference(self, reference: str, provider: str, model: str) -> None:
        assert check_reasoning_document(doc(f"model: {reference}")).model == ModelReference(provider, model)


# --- unknown keys at every level -------------------------------------------------------------------------


def test_unknown_keys_at_every_level_are_refused_with_their_line_and_pointer() -> None:
    source = doc(
        """
to: someone
config:
  max_tokens: 10
input:
  schema: { type: object }
  examples: []
output:
  format: text
  strict: true
provider_options:
  anthropic:
    thinking: { type: enabled, budget_tokens: 10 }
"""
    )
    assert problems(source) == [
        "Line 3, /to: 'to' is not a field of reasoning functions",
        "Line 5, /config/max_tokens: 'max_tokens' is not a key here; expected max_output_tokens, "
        "temperature, top_p, seed, stop_sequences, reasoning",
        "Line 8, /input/examples: 'examples' is not a key here; expected schema, default",
        "Line 11, /output/strict: 'strict' is not a key here; expected format, schema, shape",
        "Line 14, /provider_options/anthropic/thinking/budget_tokens: budget_tokens is not offered: thinking "
        "takes only type, budgetTokens and display",
    ]


def test_a_key_with_a_slash_is_named_by_its_escaped_pointer() -> None:
    assert only(doc("config: { a/b~c: 1 }")).startswith("Line 3, /config/a~1b~0c: 'a/b~c' is not a key here")


# --- "How a document is checked": the YAML rules ---------------------------------------------------------


class TestYaml:
    def test_yes_and_dates_stay_strings(self) -> None:
        assert check_reasoning_document(doc("description: yes")).description == "yes"
        assert check_reasoning_document(doc("description: 2026-10-01")).description == "2026-10-01"
        assert check_reasoning_document(doc("description: no")).description == "no"

    def test_anchors_aliases_and_tags_are_refused(self) -> None:
        assert only(doc("description: &a hi")) == (
            "Line 3, /description: Anchors (&a) are not allowed: write the value out"
        )
        found = problems(doc("config: &c { seed: 1 }\ninput: *c"))
        assert "Line 3, /config: Anchors (&c) are not allowed: write the value out" in found
        assert "Line 4, /input: Aliases (*c) are not allowed: write the value out" in found
        assert only(doc("description: !!str hi")) == (
            "Line 3, /description: Tags such as !!str are not allowed: write the value plainly"
        )

    def test_a_key_appears_once(self) -> None:
        assert only(doc("description: a\ndescription: b")) == (
            "Line 4, /description: The key 'description' appears twice in this mapping"
        )
        assert only(doc("config:\n  seed: 1\n  seed: 2")) == (
            "Line 5, /config/seed: The key 'seed' appears twice in this mapping"
        )

    @pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", ".NaN"])
    def test_numbers_are_finite(self, value: str) -> None:
        assert only(doc(f"config: {{ temperature: {value} }}")) == (
            f"Line 3, /config/temperature: Numbers must be finite: quote {value} to keep it as text"
        )

    def test_a_number_too_large_for_a_float(self) -> None:
        found = only(doc("config: { temperature: 1e999 }"))
        assert found.startswith("Line 3, /config/temperature: Numbers must be finite")

    def test_nesting_is_limited_to_72_levels(self) -> None:
        def nested(levels: int) -> str:
            # provider_options (1) > gateway (2) > field (3) > lists below
            return doc("provider_options:\n  gw:\n    deep: " + "[" * (levels - 3) + "]" * (levels - 3))

        check_reasoning_document(nested(72))  # 72 levels: saved
        found = only(nested(73))
        assert found.startswith("Line 5, /provider_options/gw/deep/0/0/")
        assert found.endswith("/0: Nesting is limited to 72 levels")

    def test_the_front_matter_is_one_mapping(self) -> None:
        assert (
            only("---\n- a\n---\nHi")
            == "Line 2: The front matter is a mapping of fields, such as 'name: value'"
        )
        assert only("no front matter") == (
            "Line 1: The document starts with a line '---' that opens the front matter, then the message"
        )

    def test_a_source_is_at_most_64_kib(self) -> None:
        assert only(doc("", body="x" * 65_536)) == "Line 1: A source is at most 65,536 bytes"


def test_problems_are_listed_once_in_line_order_at_most_20_then_counted() -> None:
    front = "\n".join(f"k{i}: 1" for i in range(30))
    found = problems(doc(front + "\ndescription: 3\nk0: 2"))
    assert found == ["Line 34, /k0: The key 'k0' appears twice in this mapping"]  # YAML problems come alone
    found = problems(doc(front + "\ndescription: 3"))
    assert len(found) == 21
    assert found[0] == "Line 3, /k0: 'k0' is not a field of reasoning functions"
    assert found[19] == "Line 22, /k19: 'k19' is not a field of reasoning functions"
    assert found[20] == "Line 23: 11 more issues are not shown"


def test_the_rejection_names_the_first_problem() -> None:
    with pytest.raises(Problem) as caught:
        check_reasoning_document(doc("description: 3\nconfig: { seed: -1 }"))
    assert caught.value.detail == "The document has 2 problems: Line 3, /description: Expected text …"


# --- input -----------------------------------------------------------------------------------------------


class TestInput:
    def test_the_input_schema_is_an_object(self) -> None:
        assert only(doc("input:\n  schema: { type: array }")) == (
            'Line 4, /input/schema: The input schema\'s root is "type": "object"'
        )

    def test_the_schema_rules_apply(self) -> None:
        source = doc(
            "input:\n  schema:\n    type: object\n    properties:\n"
            "      code: { type: string, pattern: '^a' }"
        )
        assert only(source) == (
            "Line 7, /input/schema/properties/code/pattern: pattern is not allowed, because a hostile "
            "regular expression can stall validation"
        )

    def test_no_schema_accepts_any_object_and_any_default(self) -> None:
        checked = check_reasoning_document(doc("input:\n  default: { tone: warm, n: 3 }"))
        assert checked.input_schema is None and checked.input_default == {"tone": "warm", "n": 3}

    def test_the_default_is_a_mapping(self) -> None:
        assert only(doc("input:\n  default: [1]")) == (
            "Line 4, /input/default: Expected a mapping of input fields and their default values"
        )

    def test_the_default_matches_the_schema_for_the_fields_it_names(self) -> None:
        schema = (
            "input:\n"
            "  schema:\n"
            "    type: object\n"
            "    properties:\n"
            "      brief: { type: string }\n"
            "      limit: { type: integer, minimum: 1 }\n"
            "    required: [brief, limit]\n"
            "    additionalProperties: false\n"
        )
        checked = check_reasoning_document(
            doc(schema + "  default: { limit: 3 }")
        )  # brief left for the input
        assert checked.input_default == {"limit": 3}
        found = problems(doc(schema + "  default:\n    limit: 0\n    extra: true"))
        assert found == [
            "Line 12, /input/default/limit: Expected at least 1",
            "Line 13, /input/default/extra: Unexpected property: the schema allows no others here",
        ]


# --- output ----------------------------------------------------------------------------------------------

OBJECT = (
    "{ type: object, properties: { total: { type: number } }, required: [total], "
    "additionalProperties: false }"
)


class TestOutput:
    def test_json_with_a_schema(self) -> None:
        checked = check_reasoning_document(doc(f"output:\n  format: json\n  schema: {OBJECT}"))
        assert checked.output_format == "json"
        assert checked.output_schema["required"] == ["total"]
        assert checked.answer_schema == checked.output_schema

    @pytest.mark.parametrize(
        ("front", "expected"),
        [
            ("output: { format: yaml }", "Line 3, /output/format: Expected text or json"),
            (
                "output: { format: json }",
                "Line 3, /output: 'schema' is required with format json, or name a shape",
            ),
            (
                f"output:\n  format: text\n  schema: {OBJECT}",
                "Line 5, /output/schema: output.schema is not allowed with format text",
            ),
            (
                f"output:\n  schema: {OBJECT}",
                "Line 4, /output/schema: output.schema needs format: json; the format is text when left out",
            ),
            (
                "output: { shape: chart }",
                "Line 3, /output/shape: Expected one of series, categories, table, text",
            ),
            (
                f"output:\n  format: json\n  schema: {OBJECT}\n  shape: table",
                "Line 6, /output/shape: output.shape is not allowed beside output.schema: write one of them",
            ),
            (
                "output:\n  format: text\n  shape: text",
                "Line 5, /output/shape: output.shape is not allowed with format text: "
                "a shape's answer is JSON",
            ),
            ("output: []", "Line 3, /output: Expected a mapping"),
        ],
    )
    def test_output_rules(self, front: str, expected: str) -> None:
        assert only(doc(front)) == expected

    def test_a_shape_alone_makes_the_answer_json(self) -> None:
        checked = check_reasoning_document(doc("output: { shape: series }"))
        assert checked.output_format == "json" and checked.output_shape == "series"
        assert checked.output_schema is None
        assert checked.answer_schema["properties"]["points"]["type"] == "array"
        assert checked.warnings == ()

    def test_a_shape_with_format_json(self) -> None:
        assert check_reasoning_document(doc("output: { format: json, shape: table }")).output_format == "json"

    def test_text_is_the_default(self) -> None:
        assert check_reasoning_document(doc("output: {}")).output_format == "text"

    def test_the_schema_carries_the_pages_warning(self) -> None:
        source = (
            "---\n"
            "model: openai/gpt-5\n"
            "output:\n"
            "  format: json\n"
            "  schema:\n"
            "    type: object\n"
            "    properties:\n"
            "      total: { type: number, minimum: 0 }\n"
            "    required: [total]\n"
            "    additionalProperties: false\n"
            "---\n"
            "Add up the expenses.\n"
        )
        assert check_reasoning_document(source).warnings == (
            "Line 8, /output/schema/properties/total/minimum: minimum is not enforced while Anthropic models "
            "write the answer; an answer outside it fails as output_invalid (anthropic, bedrock, "
            "bedrock-anthropic, vertex-anthropic)",
        )

    def test_the_schema_rules_apply_to_the_output_schema(self) -> None:
        found = only(doc("output:\n  format: json\n  schema:\n    type: object\n    not: { type: string }"))
        assert found == "Line 7, /output/schema/not: not may only be {}"


# --- tools -----------------------------------------------------------------------------------------------


class TestTools:
    def test_the_pages_tools(self) -> None:
        checked = check_reasoning_document(doc("tools: [graph/search, graph/query, notes/*]"))
        assert checked.tools == (
            ToolReference("graph", "search"),
            ToolReference("graph", "query"),
            ToolReference("notes", "*"),
        )
        assert checked.tools[2].every_tool and str(checked.tools[2]) == "notes/*"

    def test_tools_is_a_list(self) -> None:
        assert (
            only(doc("tools: graph/search"))
            == "Line 3, /tools: Expected a list of tools, each server/tool or server/*"
        )

    @pytest.mark.parametrize(
        "tool",
        [
            "graph",
            "Graph/search",
            "graph/",
            "/search",
            "9graph/search",
            "graph/a b",
            f"{'g' * 33}/x",
            "graph/*x",
        ],
    )
    def test_a_tool_in_another_form(self, tool: str) -> None:
        found = only(doc(f"tools:\n  - '{tool}'"))
        assert found.startswith(f"Line 4, /tools/0: {tool!r} is not a tool: write server/tool or server/*")

    def test_a_tool_listed_twice(self) -> None:
        assert only(doc("tools:\n  - graph/search\n  - notes/*\n  - graph/search")) == (
            "Line 6, /tools/2: 'graph/search' is listed twice"
        )

    def test_a_tool_that_is_not_text(self) -> None:
        assert only(doc("tools: [3]")) == "Line 3, /tools/0: Expected text"


# --- provider options ------------------------------------------------------------------------------------


class TestProviderOptions:
    def test_the_pages_example(self) -> None:
        checked = check_reasoning_document(
            doc("provider_options:\n  anthropic:\n    thinking: { type: enabled, budgetTokens: 2000 }")
        )
        assert checked.provider_options == {
            "anthropic": {"thinking": {"type": "enabled", "budgetTokens": 2000}}
        }

    def test_an_option_the_front_matter_sets(self) -> None:
        assert only(doc("provider_options:\n  anthropic:\n    effort: high")) == (
            "Line 5, /provider_options/anthropic/effort: effort is not offered: the front matter sets it"
        )

    def test_a_namespace_that_is_neither_a_providers_nor_a_gateways(self) -> None:
        assert only(doc("provider_options:\n  My_Gateway: { user: x }")).startswith(
            "Line 4, /provider_options/My_Gateway: My_Gateway is not offered: a namespace is a provider's"
        )

    def test_a_gateway_namespace_is_saved(self) -> None:
        checked = check_reasoning_document(doc("provider_options:\n  my-gateway: { user: x, models: [a] }"))
        assert checked.provider_options == {"my-gateway": {"user": "x", "models": ["a"]}}

    def test_provider_options_is_a_mapping(self) -> None:
        assert only(doc("provider_options: [anthropic]")).startswith(
            "Line 3, /provider_options: Expected a mapping"
        )


# --- the template ----------------------------------------------------------------------------------------


class TestTemplate:
    SCHEMA = (
        "input:\n"
        "  schema:\n"
        "    type: object\n"
        "    properties:\n"
        "      company: { type: string }\n"
        "    additionalProperties: false\n"
    )

    def test_the_template_is_required(self) -> None:
        assert only(doc("", body="\n  \n")) == (
            "Line 4: The template is required: write the prompt after the front matter"
        )

    def test_a_template_with_only_a_system_block_renders_no_message(self) -> None:
        found = only(doc("", body="\n{% system %}Be brief.{% endsystem %}\n{% comment %}x{% endcomment %}\n"))
        assert found == "Line 4: The template renders no text outside the system block: write the message"

    def test_the_pages_system_block_example(self) -> None:
        body = (
            "{% system %}You review expenses against the policy of {{ input.company }}.{% endsystem %}\n"
            "Review this expense: {{ input.expense | json }}\n"
        )
        check_reasoning_document(doc("", body=body))

    def test_a_name_the_template_does_not_read(self) -> None:
        assert only(doc("", body="Hi\n{{ user.name }}")) == (
            "Line 5: the template reads 'user', which is not one of input, today, now"
        )

    def test_an_input_field_the_schema_does_not_allow(self) -> None:
        found = only(doc(self.SCHEMA, body="{{ input.company }} {{ input.cmpany }}"))
        assert found == "Line 10: the template reads 'input.cmpany', which the input schema does not allow"

    def test_a_literal_argument_the_filter_refuses_is_refused_when_saved(self) -> None:
        assert only(doc("", body="Hi\n{{ today | clip: -1 }}")) == "Line 5: clip takes a length of 0 or more"
        refused = only(doc("", body="{{ today | json: 'wide' }}"))
        assert refused == "Line 4: json takes a whole number, not text"
        check_reasoning_document(doc("", body="{{ today | clip: 0 }}{{ today | json: 2 }}"))

    def test_names_the_template_creates(self) -> None:
        body = "{% assign n = 2 %}{% for i in (1..n) %}{{ i }}{% endfor %}{% increment k %}{{ n }}"
        check_reasoning_document(doc("", body=body))

    @pytest.mark.parametrize(
        ("body", "expected"),
        [
            ("{% include 'x' %}", "Line 4: the tag 'include' is not available"),
            ("{% capture x %}a{% endcapture %}{{ x }}", "Line 4: the tag 'capture' is not available"),
            ("{{ now | date: '%Y' }}", "Line 4: the filter 'date' is not available"),
            ("${HOME}", "Line 4: a template holds no '${': a document is never filled from the environment"),
        ],
    )
    def test_refused_tags_and_filters(self, body: str, expected: str) -> None:
        assert only(doc("", body=body)) == expected

    def test_names_are_limited(self) -> None:
        found = only(doc("", body="Hi " + "{{ today }}" * 1_001))
        assert found == "Line 4: the template uses more than 1,000 names in its tags and outputs"

    def test_two_system_blocks(self) -> None:
        body = "{% system %}a{% endsystem %}\nmessage\n{% system %}b{% endsystem %}"
        assert only(doc("", body=body)) == "Line 6: a template has at most one system block"

    def test_a_system_block_inside_another_tag(self) -> None:
        body = "Hi\n{% if input.vip %}{% system %}a{% endsystem %}{% endif %}"
        assert only(doc("", body=body)) == (
            "Line 5: the system block must sit at the top level, outside every other tag"
        )

    def test_system_tags_take_no_arguments(self) -> None:
        assert only(doc("", body="{% system strict %}a{% endsystem %}x")) == (
            "Line 4: the template does not compile: the system tag takes no arguments"
        )

    def test_an_assign_in_the_system_block_is_the_templates_own_name(self) -> None:
        body = (
            "{% system %}{% assign policy = 'strict' %}Follow {{ policy }}.{% endsystem %}\nUse {{ policy }}."
        )
        check_reasoning_document(doc("", body=body))
