"""The overview of a workflow (workflow-format.md, "Overview"): the description, the input's fields, a
Mermaid flowchart of the tasks (calls by type and function, catches as labelled edges, every task kind)
and the functions it calls. Every chart is checked for Mermaid's syntax by :func:`_chart`: declared ids,
quoted labels, balanced subgraphs; with mermaid itself (npm) when it is installed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from unit.workflow.examples import BRIEF_APPROVAL, REVIEW_AND_APPROVE

from parley.workflow.overview import (
    MAX_LABEL,
    CalledFunction,
    called_functions,
    flowchart,
    write_workflow_overview,
)

ROOT = Path(__file__).resolve().parents[3]

#: A document with every kind of task, and every way a task leaves.
EVERY_KIND = """\
document: { dsl: '1.0.3', namespace: t, name: every-kind, version: '1.0.0', title: Every kind of task }
use:
  errors:
    refused: { type: https://example.com/errors/refused, status: 403 }
  retries:
    patient: { delay: { seconds: 5 } }
do:
  - first: { set: '${ $data }', if: '$data.note' }
  - loop:
      for: { in: '${ $data.items }', each: thing }
      while: '$index < 10'
      do:
        - each-call: { call: run_definition, with: { type: workflow, name: child-flow } }
        - skip-me: { set: { a: 1 }, if: '${ false }', then: exit }
  - both:
      fork:
        compete: true
        branches:
          - left: { wait: PT30M }
          - right:
              do:
                - hear: { listen: { to: { one: { with: { type: com.example.ready } } } } }
                - say: { emit: { event: { with: { type: com.example.said, source: /me } } } }
  - guard:
      try:
        - risky: { call: run_definition, with: { type: reasoning, name: risky }, timeout: { after: PT1M } }
      catch:
        errors: { with: { type: timeout } }
        when: '$error.status = 408'
        exceptWhen: '${ $error.detail = "x" }'
        retry: { delay: { seconds: 1 }, limit: { attempt: { count: 3 } } }
        do:
          - recover: { set: { recovered: true }, then: end }
  - grouped:
      do:
        - inner-a: { wait: { hours: 1, minutes: 30 } }
        - inner-b: { raise: { error: refused } }
  - pick:
      switch:
        - again: { when: '$data.retry', then: first }
        - stop: { when: '$data.stop', then: end }
  - anything:
      try:
        - waiter: { listen: { to: { any: [{ with: { type: a } }, { with: { type: b } }] } } }
      catch:
        retry: patient
  - later: { wait: '${ $data.delay }' }
  - gather: { listen: { to: { all: [{ with: { type: c } }, { with: { type: d } }] } } }
  - last: { set: { done: true } }
"""


# --- the chart, as Mermaid reads it ------------------------------------------------------------------

_LABEL = r'"(?P<label>[^"]*)"'
_SHAPES = {
    "rectangle": (r"\[", r"\]"),
    "call": (r"\[\[", r"\]\]"),
    "decision": (r"\{", r"\}"),
    "loop": (r"\{\{", r"\}\}"),
    "flag": (r">", r"\]"),
    "rounded": (r"\(", r"\)"),
    "terminal": (r"\(\[", r"\]\)"),
    "fork": (r"\[/", r"\\\]"),
    "listen": (r"\[/", r"/\]"),
    "emit": (r"\[\\", r"\\\]"),
}
_ID = r"(?P<id>[A-Za-z][A-Za-z0-9_]*)"
_EDGE = re.compile(r'^\s*(?P<source>\w+) -->(?:\|"(?P<label>[^"]*)"\|)? (?P<target>\w+)$')
_SUBGRAPH = re.compile(rf"^\s*subgraph {_ID} \[{_LABEL}\]$")
_ENTITIES = {"#quot;": '"', "#35;": "#", "#lt;": "<", "#gt;": ">", "#96;": "`", "#amp;": "&"}


def _decoded(label: str) -> str:
    for entity, char in _ENTITIES.items():
        label = label.replace(entity, char)
    return label


@dataclass
class _Chart:
    nodes: dict[str, tuple[str, str]] = field(default_factory=dict)  # id: (shape, label)
    subgraphs: dict[str, str] = field(default_factory=dict)  # id: title
    members: dict[str, str] = field(default_factory=dict)  # node id: the subgraph it is in
    edges: list[tuple[str, str | None, str]] = field(default_factory=list)  # (source, label, target)

    def name(self, node: str) -> str:
        return self.nodes[node][1] if node in self.nodes else self.subgraphs[node]

    def named(self, label: str) -> str:
        found = [node for node, (_, said) in self.nodes.items() if said == label]
        found += [box for box, title in self.subgraphs.items() if title == label]
        assert len(found) == 1, f"{label!r} names {found} in {self}"
        return found[0]

    def shape(self, label: str) -> str:
        return self.nodes[self.named(label)][0]

    @property
    def readable(self) -> set[tuple[str, str | None, str]]:
        """Every edge as (what its source says, its label, what its target says)."""
        return {(self.name(source), label, self.name(target)) for source, label, target in self.edges}

    def leaving(self, label: str) -> set[tuple[str | None, str]]:
        return {(edge, target) for source, edge, target in self.readable if source == label}


def _chart(overview: str) -> _Chart:
    """The flowchart of an overview, read line by line as Mermaid's grammar takes it; a line it does not
    take, an edge to an id nobody declares, a label with a raw quote or an unbalanced subgraph fails."""
    blocks = re.findall(r"^```mermaid\n(.*?)^```$", overview, re.M | re.S)
    assert len(blocks) == 1, overview
    lines = blocks[0].rstrip("\n").split("\n")
    assert lines[0] == "flowchart TD"
    chart = _Chart()
    open_boxes: list[str] = []
    for line in lines[1:]:
        if (box := _SUBGRAPH.match(line)) is not None:
            assert box["id"] not in chart.subgraphs and box["id"] not in chart.nodes
            chart.subgraphs[box["id"]] = _decoded(box["label"])
            if open_boxes:
                chart.members[box["id"]] = open_boxes[-1]
            open_boxes.append(box["id"])
            continue
        if line.strip() == "end":
            assert open_boxes, "an end without its subgraph"
            open_boxes.pop()
            continue
        if (edge := _EDGE.match(line)) is not None:
            chart.edges.append(
                (edge["source"], _decoded(edge["label"]) if edge["label"] else None, edge["target"])
            )
            continue
        for shape, (opening, closing) in _SHAPES.items():
            node = re.fullmatch(rf"\s*{_ID}{opening}{_LABEL}{closing}", line)
            if node is not None:
                assert node["id"] not in chart.nodes and node["id"] not in chart.subgraphs
                assert node["id"] != "end"
                chart.nodes[node["id"]] = (shape, _decoded(node["label"]))
                if open_boxes:
                    chart.members[node["id"]] = open_boxes[-1]
                break
        else:
            raise AssertionError(f"Mermaid would not read {line!r}")
    assert open_boxes == [], "every subgraph ends"
    declared = chart.nodes.keys() | chart.subgraphs.keys()
    for source, _, target in chart.edges:
        assert source in declared and target in declared, (source, target)
    assert len(set(chart.edges)) == len(chart.edges), "no edge twice"
    return chart


def _overview(source: str) -> str:
    return write_workflow_overview(yaml.safe_load(source))


def _section(overview: str, title: str) -> str:
    match = re.search(
        rf"^\*\*{re.escape(title)}\*\*\n(.*?)(?=^\*\*[A-Z][^*\n]*\*\*$|\Z)", overview, re.M | re.S
    )
    assert match is not None, f"no section {title!r} in:\n{overview}"
    return match.group(1)


def _titles(overview: str) -> list[str]:
    return re.findall(r"^\*\*([A-Z][^*\n]*)\*\*$", overview, re.M)


# --- the page's examples -----------------------------------------------------------------------------


def test_brief_approval_reads_as_the_page_says() -> None:
    overview = _overview(BRIEF_APPROVAL)

    assert overview.startswith(
        "Asks the campaign's owner to approve a review, and asks for a revision when nobody answered.\n\n"
    )
    assert _titles(overview) == ["What it needs", "What it does", "What it calls"]
    needs = _section(overview, "What it needs")
    assert "- **owner**: any value, required." in needs
    assert "- **review**: any value, required." in needs
    assert "Its 3 tasks" in _section(overview, "What it does")
    assert _section(overview, "What it calls").strip() == (
        "- the interaction function `approve-campaign-brief`, called by the task **ask**"
    )
    assert "Used by" not in overview
    assert overview.endswith(
        "```\n\n**What it calls**\n\n- the interaction function "
        "`approve-campaign-brief`, called by the task **ask**\n"
    )


def test_brief_approval_is_drawn_with_its_catch_as_a_labelled_edge() -> None:
    chart = _chart(_overview(BRIEF_APPROVAL))

    ask = "ask: interaction approve-campaign-brief"
    assert chart.shape(ask) == "call"
    assert chart.subgraphs[chart.members[chart.named(ask)]] == "approval: try"
    assert chart.readable == {
        ("Start", None, ask),
        (ask, None, "End"),
        ("approval: try", "unanswered (410, expired)", "unanswered: set verdict, note"),
        ("unanswered: set verdict, note", None, "End"),
    }
    assert chart.nodes["start"] == ("terminal", "Start")
    assert chart.nodes["finish"] == ("terminal", "End")


def test_review_and_approve_draws_its_retry_its_switch_and_its_raise() -> None:
    overview = _overview(REVIEW_AND_APPROVE)
    chart = _chart(overview)

    assert overview.startswith("This workflow has no description yet.\n\n")
    assert "The document gives no input schema" in _section(overview, "What it needs")
    review = "run-review: reasoning review-brief"
    approval = "approval: interaction approve-campaign-brief"
    stop = "stop: raise revision-asked (422)"
    assert chart.readable == {
        ("Start", None, review),
        (review, None, approval),
        ("review: try", "status 503; retry: patient", approval),
        (approval, None, "route: switch"),
        ("route: switch", 'revise: $data.decision.verdict = "revise"', stop),
        ("route: switch", "otherwise", "done: set approved, review"),
        ("done: set approved, review", None, "End"),
    }
    assert chart.shape("route: switch") == "decision"
    assert chart.shape(stop) == "flag"
    assert chart.leaving(stop) == set(), "a raise ends where it is"
    assert _section(overview, "What it calls").strip().split("\n") == [
        "- the reasoning function `review-brief`, called by the task **run-review**",
        "- the interaction function `approve-campaign-brief`, called by the task **approval**",
    ]


def test_the_functions_a_workflow_calls_are_listed_once_with_their_tasks() -> None:
    assert called_functions(yaml.safe_load(REVIEW_AND_APPROVE)) == (
        CalledFunction("reasoning", "review-brief", ("/do/0/review/try/0/run-review",)),
        CalledFunction("interaction", "approve-campaign-brief", ("/do/1/approval",)),
    )
    twice = """
document: { dsl: '1.0.3', namespace: t, name: twice, version: '1.0.0' }
do:
  - a: { call: run_definition, with: { type: interaction, name: ask } }
  - b: { do: [{ c/d: { call: run_definition, with: { type: interaction, name: ask } } }] }
  - e: { call: run_definition, with: { type: workflow, name: flow } }
"""
    called = called_functions(yaml.safe_load(twice))
    assert [function.key for function in called] == ["interaction/ask", "workflow/flow"]
    assert called[0].tasks == ("/do/0/a", "/do/1/b/do/0/c~1d")
    assert _section(_overview(twice), "What it calls").strip().split("\n") == [
        "- the interaction function `ask`, called by the tasks **a** and **c/d**",
        "- the workflow `flow`, called by the task **e**",
    ]


def test_the_reference_page_shows_the_example_file_and_the_longer_example() -> None:
    page = (ROOT / "docs" / "reference" / "workflow-format.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```yaml\n(.*?)^```$", page, re.M | re.S)
    example = (ROOT / "examples" / "definitions" / "brief-approval.yaml").read_text(encoding="utf-8")

    assert blocks[:2] == [example, REVIEW_AND_APPROVE]
    overview = _overview(example)
    chart = _chart(overview)
    assert ("approval: try", "unanswered (410, expired)", "unanswered: set verdict, note") in chart.readable
    assert "- **owner**: text, required." in _section(overview, "What it needs")


# --- what it needs, produces, and the description ----------------------------------------------------


def test_the_title_stands_for_a_missing_summary_and_the_fields_are_described() -> None:
    source = """
document: { dsl: '1.0.3', namespace: t, name: n, version: '1.0.0', title: '  Sends the launch notes  ' }
input:
  schema:
    document:
      type: object
      required: [campaign]
      properties:
        campaign: { type: string, maxLength: 80, description: The campaign's name }
        notify: { type: boolean, default: true }
output:
  schema:
    document: { type: object, properties: { sent: { type: integer } } }
do:
  - only: { set: { sent: 1 } }
"""
    overview = _overview(source)

    assert overview.startswith("Sends the launch notes\n\n")
    assert _titles(overview) == ["What it needs", "What it produces", "What it does", "What it calls"]
    needs = _section(overview, "What it needs")
    assert "- **campaign**: text, required, at most 80 characters. The campaign's name." in needs
    assert "- **notify**: true or false, optional, `true` when left out." in needs
    assert "- **sent**: whole number, optional." in _section(overview, "What it produces")
    assert _section(overview, "What it calls").strip() == "It calls no function."
    assert "Its 1 task," in overview


# --- every kind of task ------------------------------------------------------------------------------


def test_every_kind_of_task_is_drawn() -> None:
    overview = _overview(EVERY_KIND)
    chart = _chart(overview)
    shapes = {label: shape for shape, label in chart.nodes.values()}

    assert overview.startswith("Every kind of task\n\n")
    assert shapes == {
        "Start": "terminal",
        "End": "terminal",
        "first: set $data": "rectangle",
        "loop: for each thing in $data.items while $index < 10": "loop",
        "each-call: workflow child-flow": "call",
        "skip-me: set a": "rectangle",
        "both: fork, the first branch to succeed wins": "fork",
        "left: wait 30 minutes": "rounded",
        "hear: listen for com.example.ready": "listen",
        "say: emit com.example.said": "emit",
        "risky: reasoning risky, at most 1 minute": "call",
        "recover: set recovered": "rectangle",
        "inner-a: wait 1 hour 30 minutes": "rounded",
        "inner-b: raise refused (403)": "flag",
        "pick: switch": "decision",
        "waiter: listen for any of a, b": "listen",
        "later: wait $data.delay": "rounded",
        "gather: listen for all of c, d": "listen",
        "last: set done": "rectangle",
    }
    assert set(chart.subgraphs.values()) == {
        "loop: each thing",
        "right",
        "guard: try",
        "grouped",
        "anything: try",
    }


def test_an_if_labels_the_edges_into_its_task_and_passes_them_on_when_it_does_not_hold() -> None:
    chart = _chart(_overview(EVERY_KIND))
    loop = "loop: for each thing in $data.items while $index < 10"

    assert chart.leaving("Start") == {("if $data.note", "first: set $data"), ("else", loop)}
    assert chart.leaving("each-call: workflow child-flow") == {
        ("if false", "skip-me: set a"),
        ("else; next", loop),
    }


def test_a_for_loop_goes_round_and_leaves_when_done() -> None:
    chart = _chart(_overview(EVERY_KIND))
    loop = "loop: for each thing in $data.items while $index < 10"

    assert chart.leaving(loop) == {
        ("each thing", "each-call: workflow child-flow"),
        ("done", "both: fork, the first branch to succeed wins"),
    }
    # then: exit leaves the body, which goes round again
    assert chart.leaving("skip-me: set a") == {("next", loop)}
    body = chart.named("loop: each thing")
    assert chart.members[chart.named("each-call: workflow child-flow")] == body


def test_a_fork_starts_its_branches_together_and_each_goes_on_after_it() -> None:
    chart = _chart(_overview(EVERY_KIND))
    risky = "risky: reasoning risky, at most 1 minute"

    assert chart.leaving("both: fork, the first branch to succeed wins") == {
        (None, "left: wait 30 minutes"),
        (None, "hear: listen for com.example.ready"),
    }
    assert chart.leaving("left: wait 30 minutes") == {(None, risky)}, "a branch does not run into the next"
    assert chart.leaving("hear: listen for com.example.ready") == {(None, "say: emit com.example.said")}
    assert chart.leaving("say: emit com.example.said") == {(None, risky)}


def test_catches_are_labelled_with_what_they_take_and_their_retry() -> None:
    chart = _chart(_overview(EVERY_KIND))

    assert chart.leaving("guard: try") == {
        ('timeout; when $error.status = 408; unless $error.detail = "x"; retry ×3', "recover: set recovered")
    }
    assert chart.leaving("recover: set recovered") == {(None, "End")}, "then: end"
    # a catch without errors.with takes every error; without do, the task hands its input on
    assert chart.leaving("anything: try") == {("any error; retry: patient", "later: wait $data.delay")}


def test_a_switch_draws_each_case_and_goes_on_when_none_holds() -> None:
    chart = _chart(_overview(EVERY_KIND))

    assert chart.leaving("pick: switch") == {
        ("again: $data.retry; if $data.note", "first: set $data"),  # back to a task with an if
        ("again: $data.retry; else", "loop: for each thing in $data.items while $index < 10"),
        ("stop: $data.stop", "End"),
        ("no case", "waiter: listen for any of a, b"),
    }


def test_a_do_list_is_a_subgraph_and_a_raise_ends_it() -> None:
    chart = _chart(_overview(EVERY_KIND))

    grouped = chart.named("grouped")
    assert chart.members[chart.named("inner-a: wait 1 hour 30 minutes")] == grouped
    assert chart.leaving("inner-a: wait 1 hour 30 minutes") == {(None, "inner-b: raise refused (403)")}
    assert chart.leaving("inner-b: raise refused (403)") == set()
    assert chart.leaving("gather: listen for all of c, d") == {(None, "last: set done")}
    assert chart.leaving("last: set done") == {(None, "End")}


@pytest.mark.parametrize(
    ("with_", "label"),
    [
        ("{ type: https://on.auto/problems/unanswered, kind: expired }", "unanswered (410, expired)"),
        ("{ type: https://on.auto/problems/cancelled }", "cancelled (409)"),
        ("{ status: 410 }", "status 410"),
        ("{ kind: effect_unknown }", "kind effect_unknown"),
        ("{ type: https://serverlessworkflow.io/spec/1.0.0/errors/runtime, status: 500 }", "runtime (500)"),
        ("{ type: https://example.com/errors/late, instance: /do/0/a }", "late (at /do/0/a)"),
        ("{ status: 409, because: busy, title: Taken }", 'status 409, because busy, title "Taken"'),
    ],
)
def test_a_catch_says_what_it_takes(with_: str, label: str) -> None:
    source = f"""
document: {{ dsl: '1.0.3', namespace: t, name: n, version: '1.0.0' }}
do:
  - guarded:
      try:
        - a: {{ call: run_definition, with: {{ type: interaction, name: ask }} }}
      catch:
        errors: {{ with: {with_} }}
        retry: {{ delay: PT1S }}
"""
    chart = _chart(_overview(source))
    expected = label if "retry" in label else f"{label}; retry"
    assert chart.leaving("guarded: try") == {(expected, "End")}


def test_then_jumps_to_a_sibling_forwards_or_back_and_exit_leaves_the_list() -> None:
    source = """
document: { dsl: '1.0.3', namespace: t, name: n, version: '1.0.0' }
do:
  - a: { set: { n: 1 }, then: c }
  - b: { set: { n: 2 } }
  - c:
      do:
        - d: { set: { n: 3 }, then: exit }
        - e: { set: { n: 4 } }
      then: b
"""
    chart = _chart(_overview(source))

    assert chart.readable == {
        ("Start", None, "a: set n"),
        ("a: set n", None, "d: set n"),
        ("b: set n", None, "d: set n"),
        ("d: set n", None, "b: set n"),  # exit leaves c, whose then is b
        ("e: set n", None, "b: set n"),
    }


def test_a_loop_of_conditions_and_jumps_is_drawn_once() -> None:
    source = """
document: { dsl: '1.0.3', namespace: t, name: n, version: '1.0.0' }
do:
  - x: { set: { n: 1 }, if: '$data.go' }
  - d:
      do:
        - y: { set: { n: 2 }, if: '$data.again' }
      then: x
"""
    chart = _chart(_overview(source))

    assert ("Start", "if $data.go", "x: set n") in chart.readable
    assert ("x: set n", "if $data.again", "y: set n") in chart.readable
    assert ("y: set n", "if $data.go", "x: set n") in chart.readable
    assert ("y: set n", "else; if $data.again", "y: set n") in chart.readable


# --- Mermaid-safety ----------------------------------------------------------------------------------

ODD = """\
document: { dsl: '1.0.3', namespace: t, name: odd, version: '1.0.0', summary: 'Odd "names" <b> & `ticks`' }
use:
  errors:
    'bad"one': { type: 'x"y', status: 418 }
do:
  - 'a"b[c]{d}(e)|f#g;end': { set: { 'x"]': 1, '<y>': 2 } }
  - end:
      switch:
        - 'case "1"|]': { when: '${ $data.x = "]}" and $data.y < 3 }', then: end }
        - default: { then: 'a"b[c]{d}(e)|f#g;end' }
  - 'sub graph': { do: [{ 'end': { raise: { error: 'bad"one' } } }] }
  - long:
      call: run_definition
      with: { type: interaction, name: @LONG@ }
  - 'x --> y': { wait: { days: 1 }, if: '$a |> $b' }
  - '&#35;': { emit: { event: { with: { type: '`a`' } } } }
""".replace("@LONG@", "n" * 120)


def test_odd_names_and_labels_never_break_the_chart() -> None:
    overview = _overview(ODD)
    chart = _chart(overview)  # every line as Mermaid reads it, every label quoted without a raw quote
    block = overview.split("```mermaid\n", 1)[1].split("```", 1)[0]

    labels = {label for _, label in chart.nodes.values()}
    assert 'a"b[c]{d}(e)|f#g;end: set x"], <y>' in labels
    assert "end: switch" in labels
    assert 'end: raise bad"one (418)' in labels
    assert "&#35;: emit `a`" in labels
    assert chart.leaving("end: switch") == {
        ('case "1"|]: $data.x = "]}" and $data.y < 3', "End"),
        ("otherwise", 'a"b[c]{d}(e)|f#g;end: set x"], <y>'),
    }
    assert ("sub graph" in chart.subgraphs.values()) and "x --> y: wait 1 day" in labels
    assert all(re.fullmatch(r"t\d+|start|finish", node) for node in (*chart.nodes, *chart.subgraphs))
    assert "#amp;#35;35;" in block  # & and # in a label are Mermaid's entities, always
    assert "`" not in block
    long = next(label for label in labels if label.startswith("long:"))
    assert len(long) == MAX_LABEL and long.endswith("…")


def test_the_chart_alone_is_what_the_overview_draws() -> None:
    data = yaml.safe_load(REVIEW_AND_APPROVE)
    assert f"```mermaid\n{flowchart(data)}\n```" in write_workflow_overview(data)


# --- it never raises ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"document": None, "do": None},
        {"do": "nothing"},
        {"do": [None, 3, {"a": 1, "b": 2}, {"c": None}, {"d": {"unknown": True}}]},
        {"do": [{"r": {"run": {"shell": {"command": "ls"}}}}, {"h": {"call": "http", "with": {}}}]},
        {"do": [{"s": {"switch": "no"}}, {"t": {"try": None, "catch": [1]}}, {"f": {"for": None}}]},
        {"do": [{"w": {"wait": {"days": "x"}}}, {"v": {"wait": {"seconds": 1e400}}}, {"x": {"wait": "P1Y"}}]},
        {
            "do": [
                {"l": {"listen": {"to": {"any": []}}}},
                {"e": {"emit": None}},
                {"k": {"fork": {"branches": 1}}},
            ]
        },
        {
            "do": [{"a": {"set": {}, "then": "nowhere", "timeout": "named"}}],
            "input": {"schema": {"document": True}},
        },
        {"do": [{"a": {"raise": {"error": "missing"}}}, {"b": {"call": "run_definition", "with": None}}]},
    ],
)
def test_odd_values_still_get_an_overview(data: dict[str, Any]) -> None:
    overview = write_workflow_overview(data)
    assert overview.endswith("\n") and not overview.endswith("\n\n")
    if "```mermaid" in overview:
        _chart(overview)


def test_a_fork_without_branches_goes_on() -> None:
    chart = _chart(write_workflow_overview({"do": [{"k": {"fork": {"branches": []}}}]}))
    assert chart.leaving("k: fork, every branch at once") == {(None, "End")}


def test_a_workflow_with_no_tasks_says_so() -> None:
    assert "It has no tasks." in write_workflow_overview({"do": []})


def test_a_workflow_too_large_to_draw_gets_a_sentence() -> None:
    tasks = [{f"step-{index}": {"set": {"n": index}}} for index in range(600)]
    overview = write_workflow_overview({"document": {"summary": "Long"}, "do": tasks})

    assert "```mermaid" not in overview
    assert "It has 600 tasks, too many to draw: the document shows them." in overview


# --- mermaid itself, where it is installed -----------------------------------------------------------

_MERMAID_PARSE = """
const { JSDOM } = require('jsdom');
const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window; globalThis.document = dom.window.document;
(async () => {
  const { default: mermaid } = await import('mermaid');
  mermaid.initialize({ startOnLoad: false });
  const charts = JSON.parse(require('fs').readFileSync(0, 'utf8'));
  const failed = [];
  for (const chart of charts) {
    try { await mermaid.parse(chart); } catch (e) { failed.push(String(e.message || e)); }
  }
  console.log(JSON.stringify(failed));
})();
"""


def _mermaid_modules() -> Path | None:
    for folder in (ROOT / "node_modules", ROOT / "tests" / "node_modules"):
        if (folder / "mermaid").is_dir() and (folder / "jsdom").is_dir():
            return folder
    return None


@pytest.mark.skipif(
    shutil.which("node") is None or _mermaid_modules() is None,
    reason="mermaid and jsdom (npm) are not installed beside the repository",
)
def test_mermaid_itself_parses_every_chart() -> None:
    charts = [
        flowchart(yaml.safe_load(source)) for source in (BRIEF_APPROVAL, REVIEW_AND_APPROVE, EVERY_KIND, ODD)
    ]
    modules = _mermaid_modules()
    assert modules is not None
    done = subprocess.run(
        ["node", "-e", _MERMAID_PARSE],
        input=json.dumps(charts),
        capture_output=True,
        text=True,
        cwd=modules.parent,
        timeout=120,
        check=True,
    )
    assert json.loads(done.stdout) == []
