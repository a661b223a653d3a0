"""The Open Workflow Specification's own conformance scenarios (its conformance kit's Gherkin features,
vendored under ``ctk/``; see ``ctk/README.md``) run on Parley: each scenario's document is checked as a
save checks it (``parley.workflow.document``), compiled (``parley.workflow.compiler``), and its state
machine run by the local interpreter (``parley.local.jsonata_states``) with the corpus's fake entry
(``unit.local.test_jsonata_corpus``); the run's ending and the tasks it ran (read from the execution's
history as a run's history reads them, ``parley.workflow.history``) are compared with the scenario's
``Then`` steps.

The scenarios run are the ``<feature>.jsonata.feature`` copies, whose expressions are written in JSONata;
a test checks that each copy differs from the specification's text (``<feature>.feature``) only in the
workflow documents' expressions, so the expected outputs are the specification's own.

The Gherkin reader is this module's few lines: the features use only ``Feature``, ``Scenario``, steps,
``#`` comments and ``\"\"\"`` doc strings, and the steps below. A step it does not know fails its scenario.

Scenarios that cannot pass are ``xfail(strict=True)`` with the reason and the exception their failure
raises (:data:`NOT_PASSING`, and those using a task not compiled yet), so each starts failing the suite
the day it passes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pytest
import yaml
from unit.local.test_jsonata_corpus import ENTRY, MAX_TIMERS, FakeEntry, outcome_of
from unit.workflow.machines import RUN, Case, Succeeded, run_ending

from parley.clock import ManualClock
from parley.errors import Problem
from parley.local.jsonata_states import WorkflowMachine
from parley.workflow import engine
from parley.workflow.compiler import NotCompiled, compile_workflow, not_yet_compiled
from parley.workflow.document import check_workflow_document
from parley.workflow.history import TASK_STARTED, task_events

CTK: Final = Path(__file__).parent / "ctk"
#: The features that need no network, in the specification's file names.
FEATURES: Final = ("branch", "data-flow", "do", "emit", "flow", "for", "raise", "set", "switch")

_HTTP: Final = "a workflow reaches the world only through its playbook's functions: `call: http` is refused"
#: The scenarios that do not pass, by (feature, scenario): why, and the exception their failure raises.
#: Besides these, a scenario using a task the compiler does not compile yet (``not_yet_compiled``) is
#: expected to raise ``NotCompiled``, and to pass once it is compiled.
NOT_PASSING: Final[
    dict[tuple[str, str], tuple[str, type[BaseException] | tuple[type[BaseException], ...]]]
] = {
    ("data-flow", "Output Filtering"): (_HTTP, Problem),
    ("data-flow", "Use Non-object Output"): (_HTTP, Problem),
    ("emit", "Emit Task"): (
        "Parley's emit hands its input on (the event goes to the playbook's events); the kit expects the"
        " emitted CloudEvent as the task's output",
        (NotCompiled, AssertionError),
    ),
}


# -- the Gherkin reader ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    keyword: str
    text: str
    doc: str | None = None


@dataclass
class Scenario:
    feature: str
    name: str
    steps: list[Step] = field(default_factory=list)


_KEYWORDS: Final = ("Given", "When", "Then", "And", "But")


def read_feature(path: Path, feature: str) -> list[Scenario]:
    """The scenarios of a feature file: ``Scenario:`` blocks of steps, each step with its doc string."""
    scenarios: list[Scenario] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    number = 0
    while number < len(lines):
        line = lines[number]
        stripped = line.strip()
        number += 1
        if stripped.startswith('"""'):  # a doc string: its lines less the opening's indentation
            indent = len(line) - len(line.lstrip())
            body: list[str] = []
            while not lines[number].strip().startswith('"""'):
                body.append(lines[number][indent:] if lines[number][:indent].isspace() else lines[number])
                number += 1
            number += 1
            last = scenarios[-1].steps[-1]
            scenarios[-1].steps[-1] = Step(last.keyword, last.text, "\n".join(body) + "\n")
        elif stripped.startswith("Scenario:"):
            scenarios.append(Scenario(feature, stripped.removeprefix("Scenario:").strip()))
        elif stripped.split(" ", 1)[0] in _KEYWORDS and scenarios:
            keyword, _, text = stripped.partition(" ")
            scenarios[-1].steps.append(Step(keyword, text))
        elif stripped and not stripped.startswith("#") and scenarios:
            raise ValueError(f"{path.name}:{number}: not understood: {stripped}")
    return scenarios


def scenarios_of(suffix: str) -> list[Scenario]:
    return [found for name in FEATURES for found in read_feature(CTK / f"{name}{suffix}", name)]


# -- running a scenario ----------------------------------------------------------------------------------


@dataclass
class Ran:
    """How a scenario's run ended (``{"output"}`` or ``{"error"}``) and the tasks it started, in order."""

    ending: dict[str, Any]
    started: list[str]
    emitted: list[dict[str, Any]]


def execute(definition: str, input_value: Any) -> Ran:
    """Check, compile and run a workflow document on the local interpreter, as the corpus runs its cases."""
    document = check_workflow_document(definition)
    compiled = compile_workflow(document.data)
    clock = ManualClock()
    entry = FakeEntry(Case("ctk", definition, input_value, Succeeded(None)))  # no call is answered
    answers: list[tuple[str, Any]] = []
    emitted: list[dict[str, Any]] = []

    def invoke(function: str, payload: Any) -> Any:
        assert function == ENTRY
        if payload["action"] == engine.END_ACTION:
            return entry.end(payload)
        if payload["action"] == engine.EMIT_ACTION:
            emitted.append(payload["event"])
            return {"outcome": "emitted"}
        answers.append((payload["token"], entry.answer(payload)))
        return {"outcome": "started"}

    machine = WorkflowMachine(
        engine.with_entry(compiled.definition, ENTRY),
        arn="arn:aws:states:us-east-1:123456789012:stateMachine:ctk:1",
        invoke=invoke,
        now=clock.now,
    )
    execution = machine.start(
        "arn:aws:states:us-east-1:123456789012:execution:ctk:run-1",
        "run-1",
        engine.execution_input(RUN, input_value, 0),
    )
    machine.run(execution)
    for _ in range(MAX_TIMERS):
        if execution.status != "RUNNING":
            break
        if answers:
            token, answer = answers.pop(0)
            assert machine.resume(execution, token, outcome_of(answer))
            continue
        due = execution.due()
        assert due, f"the execution waits for nothing it can be given: {execution.history[-3:]}"
        name, at = min(due.items(), key=lambda item: item[1])
        clock.advance((at - clock.now()).total_seconds())
        assert machine.fire(execution, name)
    end = entry.ends[-1] if entry.ends else None
    ending = run_ending(execution.status, end, execution.error, execution.cause)
    events = task_events(RUN["run_id"], execution.history, compiled.states, clock.now())
    started = [str(event.data["name"]) for event in events if event.type == TASK_STARTED]
    return Ran(ending, started, emitted)


def _path(value: Any, dotted: str) -> Any:
    """The property a dotted name names (``error.type``); it must be there."""
    for key in dotted.split("."):
        assert isinstance(value, dict) and key in value, f"no property {dotted!r} in {value!r}"
        value = value[key]
    return value


def _output(ran: Ran | None) -> Any:
    assert ran is not None, "the workflow was not executed"
    assert "error" not in ran.ending, ran.ending["error"]
    return ran.ending["output"]


def run_scenario(scenario: Scenario) -> None:
    """Run a scenario's steps in order; a step not understood fails it."""
    definition: str | None = None
    input_value: Any = {}
    ran: Ran | None = None
    for step in scenario.steps:
        text = step.text.removeprefix("given ")
        doc: Any = yaml.safe_load(step.doc) if step.doc is not None else None
        if text == "a workflow with definition:":
            definition = step.doc
        elif text == "the workflow input is:":
            input_value = doc
        elif text == "the workflow is executed":
            assert definition is not None, "no workflow definition given"
            ran = execute(definition, input_value)
        elif text == "the workflow should complete":
            _output(ran)
        elif text == "the workflow should complete with output:":
            assert _output(ran) == doc
        elif text == "the workflow should fault with error:":
            assert ran is not None and "error" in ran.ending, ran and ran.ending
            assert {key: ran.ending["error"].get(key) for key in doc} == doc, ran.ending["error"]
        elif found := re.fullmatch(r"the workflow output should have properties (.+)", text):
            for name in re.findall(r"'([^']+)'", found[1]):
                _path(_output(ran), name)
        elif found := re.fullmatch(r"the workflow output should have a '([^']+)' property with value:", text):
            assert _path(_output(ran), found[1]) == doc
        elif found := re.fullmatch(
            r"the workflow output should have a '([^']+)' property containing (\d+) items", text
        ):
            assert len(_path(_output(ran), found[1])) == int(found[2])
        elif found := re.fullmatch(r"(\S+) should run (first|last)", text):
            assert ran is not None and ran.started, "no task ran"
            assert ran.started[0 if found[2] == "first" else -1] == found[1], ran.started
        elif found := re.fullmatch(r"(\S+) should run after (\S+)", text):
            assert ran is not None and found[1] in ran.started and found[2] in ran.started, ran
            assert ran.started.index(found[1]) > ran.started.index(found[2]), ran.started
        else:
            pytest.fail(f"step not understood: {step.keyword} {step.text}")


SCENARIOS: Final = scenarios_of(".jsonata.feature")


def definition_of(scenario: Scenario) -> dict[str, Any]:
    """The scenario's workflow document, as data."""
    for step in scenario.steps:
        if step.text.endswith("a workflow with definition:") and step.doc is not None:
            data: dict[str, Any] = yaml.safe_load(step.doc)
            return data
    raise ValueError(f"{scenario.name}: no workflow definition")


def _param(scenario: Scenario) -> Any:
    marks = []
    later = "; ".join(f"{pointer}: {what}" for pointer, what in not_yet_compiled(definition_of(scenario)))
    if (scenario.feature, scenario.name) in NOT_PASSING:
        reason, raises = NOT_PASSING[(scenario.feature, scenario.name)]
        marks.append(pytest.mark.xfail(strict=True, raises=raises, reason=reason))
    elif later:
        reason = f"not compiled yet: {later}"
        marks.append(pytest.mark.xfail(strict=True, raises=NotCompiled, reason=reason))
    return pytest.param(scenario, marks=marks, id=f"{scenario.feature}: {scenario.name}")


@pytest.mark.parametrize("scenario", [_param(scenario) for scenario in SCENARIOS])
def test_the_specifications_scenario(scenario: Scenario) -> None:
    run_scenario(scenario)


def test_the_emit_scenario_emits_the_event_it_expects() -> None:
    """Only the emit task's output differs: the event it emits is the one the scenario expects."""
    scenario = next(found for found in SCENARIOS if found.feature == "emit")
    if not_yet_compiled(definition_of(scenario)):
        pytest.skip("emit is not compiled yet")
    steps = {step.text: step.doc for step in scenario.steps}
    ran = execute(
        steps["a workflow with definition:"] or "",
        yaml.safe_load(steps["given the workflow input is:"] or ""),
    )
    expected = {
        name: yaml.safe_load(steps[f"the workflow output should have a '{name}' property with value:"] or "")
        for name in ("source", "type", "data")
    }
    assert [{name: event.get(name) for name in expected} for event in ran.emitted] == [expected]


def test_every_not_passing_scenario_exists() -> None:
    assert set(NOT_PASSING) <= {(scenario.feature, scenario.name) for scenario in SCENARIOS}


# -- the copies keep the specification's expectations ----------------------------------------------------

#: Where a string is an expression without ``${ }`` (``workflow-format.md``, "Expressions").
_EXPRESSION_KEYS: Final = ("if", "when", "in", "from", "as", "while", "exceptWhen")


def _differ_in_expressions(original: Any, copy: Any, key: str = "") -> list[str]:
    """Where two documents differ other than in an expression (in both): the same keys, lengths and
    values everywhere else."""
    if isinstance(original, dict) and isinstance(copy, dict):
        if original.keys() != copy.keys():
            return [f"keys {sorted(original)} != {sorted(copy)}"]
        return [
            found for name in original for found in _differ_in_expressions(original[name], copy[name], name)
        ]
    if isinstance(original, list) and isinstance(copy, list) and len(original) == len(copy):
        return [
            found for a, b in zip(original, copy, strict=True) for found in _differ_in_expressions(a, b, key)
        ]
    if original == copy:
        return []
    expressions = isinstance(original, str) and isinstance(copy, str)
    if expressions and (key in _EXPRESSION_KEYS or (original.startswith("${") and copy.startswith("${"))):
        return []
    return [f"{key}: {original!r} != {copy!r}"]


def test_the_jsonata_copies_change_only_the_expressions() -> None:
    originals = scenarios_of(".feature")
    assert [(s.feature, s.name) for s in originals] == [(s.feature, s.name) for s in SCENARIOS]
    for original, copy in zip(originals, SCENARIOS, strict=True):
        assert len(original.steps) == len(copy.steps), copy.name
        for before, after in zip(original.steps, copy.steps, strict=True):
            assert (before.keyword, before.text) == (after.keyword, after.text), copy.name
            if before.text.endswith("a workflow with definition:"):
                differences = _differ_in_expressions(
                    yaml.safe_load(before.doc or ""), yaml.safe_load(after.doc or "")
                )
                assert differences == [], (copy.name, differences)
            else:
                assert before.doc == after.doc, copy.name


def test_the_reader_reads_every_step_and_doc_string() -> None:
    assert len(SCENARIOS) == 14
    definitions = [step.doc for scenario in SCENARIOS for step in scenario.steps if step.doc]
    assert all(yaml.safe_load(doc) is not None for doc in definitions)
    first = SCENARIOS[0].steps
    assert [step.keyword for step in first] == ["Given", "When", "Then", "And"]
    assert (first[0].doc or "").startswith("document:\n  dsl: '1.0.3'\n")
