"""The compiler's output, construct by construct (``parley.workflow.compiler``): the machine's frame
(``#start``, folded into the first state where it can be, ``#end``), state names and roles (states
standing for several tasks), ``Next``s, the end's Catch outside any try, the try's Task or Parallel and
Catch, the catch's Choice (with the recovery's first set folded in), the retry's Wait, the call's
payload, and what every compiled machine of the corpus keeps to (names, Step Functions' variable scopes,
one line per expression, no state that does no work)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from unit.workflow.machines import BRIEF_APPROVAL, CASES, REVIEW_AND_APPROVE

import parley
from parley.workflow import engine
from parley.workflow.compile_expressions import Place, bound, condition_text, field, one_line
from parley.workflow.compiler import (
    COMPILED_TASKS,
    CompiledWorkflow,
    NotCompiled,
    compile_workflow,
    not_yet_compiled,
)
from parley.workflow.document import check_workflow_document
from parley.workflow.errors import SPEC_ERRORS
from parley.workflow.states import MAX_NAME, is_cut, reference_of, state_name


def compiled(body: str) -> CompiledWorkflow:
    return compile_workflow(
        yaml.safe_load("document: { dsl: '1.0.3', namespace: t, name: n, version: '1' }\n" + body)
    )


def states_of(branch: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, state in branch.items():
        yield name, state
        for inner in state.get("Branches", []):
            yield from states_of(inner["States"])


def every_state(machine: CompiledWorkflow) -> dict[str, dict[str, Any]]:
    return dict(states_of(machine.definition["States"]))


def top(machine: CompiledWorkflow) -> dict[str, Any]:
    states: dict[str, Any] = machine.definition["States"]
    return states


START_VARIABLES = {"workflow", "runtime", "run", "depth", "uncaught"}


# -- state names ------------------------------------------------------------------------------------------


def test_a_state_is_named_by_its_task_reference_and_a_part() -> None:
    assert state_name("/do/0/approval") == "/do/0/approval"
    assert state_name("/do/0/approval", "catch") == "/do/0/approval#catch"
    assert state_name("", "start") == "#start"
    assert reference_of("/do/0/approval#catch") == "/do/0/approval"


def test_a_long_name_is_cut_with_a_digest() -> None:
    reference = "/do/0/" + "a" * 60 + "/do/0/" + "b" * 40
    cut = state_name(reference, "done")
    assert len(cut) == MAX_NAME
    assert is_cut(cut)
    assert cut.startswith(reference[:60])
    assert cut != state_name(reference, "if")
    assert cut == state_name(reference, "done")
    assert not is_cut(state_name("/do/0/x"))


def test_cut_names_are_read_back_through_a_table() -> None:
    name = "a-" + "long" * 20
    machine = compiled(
        f"do:\n  - {name}:\n      try:\n        - fail: {{ set: '${{ $number(\"x\") }}' }}\n"
        "      catch: {}\n"
    )
    cut = [state for state in every_state(machine) if is_cut(state)]
    assert cut
    text = json.dumps(machine.definition)
    assert "$lookup(" in text
    for state in cut:
        assert machine.states[state].reference.startswith(f"/do/0/{name}")
        assert json.dumps(state) in text.replace("\\\\", "\\")


# -- the machine's frame ----------------------------------------------------------------------------------


def test_the_frame_start_and_end() -> None:
    # A first task whose if is a Choice: #start stays.
    machine = compiled("do:\n  - one: { if: '$data.go', set: { a: 1 } }\n")
    definition = machine.definition
    assert definition["QueryLanguage"] == "JSONata"
    assert definition["StartAt"] == "#start"
    assert list(definition["States"]) == ["#start", "/do/0/one#if", "/do/0/one", "#end"]
    start = definition["States"]["#start"]
    assert start["Type"] == "Pass"
    assert set(start["Assign"]) == START_VARIABLES
    assert start["Assign"]["runtime"] == {"name": "parley", "version": parley.__version__}
    assert start["Assign"]["uncaught"] is None
    assert "$states.context.Execution.StartTime" in start["Assign"]["workflow"]
    assert start["Output"] == "{% $states.input.input %}"
    assert start["Next"] == "/do/0/one#if"
    end = definition["States"]["#end"]
    assert end["Resource"] == engine.INVOKE_RESOURCE
    assert end["Arguments"]["FunctionName"] == engine.ENTRY_FUNCTION
    assert '"action": "end", "run": $run' in end["Arguments"]["Payload"]
    assert '$type($uncaught) = "object" ? {"error": $uncaught} : {"output": $states.input}' in end["Output"]
    assert [retrier["ErrorEquals"] for retrier in end["Retry"]] == [
        [
            "Lambda.ServiceException",
            "Lambda.AWSLambdaException",
            "Lambda.SdkClientException",
            "Lambda.TooManyRequestsException",
        ],
        ["States.ALL"],
    ]
    assert end["End"] is True and "Next" not in end
    assert definition["States"]["/do/0/one"]["Next"] == "#end"
    assert {name: sorted(role.roles) for name, role in machine.states.items() if role.reference == ""} == {
        "#start": ["start"],
        "#end": ["end"],
    }


def test_start_folds_into_a_first_state_entered_once() -> None:
    machine = compiled(
        "do:\n"
        "  - one: { set: { a: '${ $data.x }', id: '${ $workflow.id }', kind: '${ $runtime.name }' } }\n"
        "  - two: { set: { b: 2 } }\n"
    )
    definition = machine.definition
    assert definition["StartAt"] == "/do/0/one"
    assert list(definition["States"]) == ["/do/0/one", "/do/1/two", "#end"]
    one = definition["States"]["/do/0/one"]
    # It reads the execution's input itself, and binds what #start would have assigned.
    assert one["Output"]["a"] == "{% ($data := ($states.input.input); ($data.x)) %}"
    assert one["Output"]["id"].startswith('{% ($workflow := {"id": $states.input.run.run_id, ')
    assert one["Output"]["kind"].startswith('{% ($runtime := {"name": "parley", ')
    assert set(one["Assign"]) == START_VARIABLES
    assert one["Assign"]["run"] == "{% $states.input.run %}"
    assert machine.states["/do/0/one"].starts == ("",)


def test_start_folds_into_a_call_its_catch_assigning_too() -> None:
    machine = compiled("do:\n  - ask: { call: run_definition, with: { type: interaction, name: a } }\n")
    ask = top(machine)["/do/0/ask"]
    assert machine.definition["StartAt"] == "/do/0/ask"
    assert ask["Arguments"]["Payload"]["run"] == "{% $states.input.run %}"
    assert ask["Arguments"]["Payload"]["depth"] == "{% $states.input.depth %}"
    assert set(ask["Assign"]) == START_VARIABLES
    (catcher,) = ask["Catch"]
    assert set(catcher["Assign"]) == START_VARIABLES  # a state that fails assigns nothing of its own
    assert catcher["Assign"]["uncaught"].startswith("{% ($e := $states.errorOutput;")
    assert catcher["Next"] == "#end"


@pytest.mark.parametrize(
    "body",
    [
        "do:\n  - one: { if: '$data.go', set: { a: 1 } }\n",  # a Choice
        "do:\n  - route: { switch: [ { big: { when: '$data.n > 1', then: end } } ] }\n",  # a Choice
        "do:\n  - t:\n      try:\n        - a: { set: { x: 1 } }\n      catch: {}\n",  # a Parallel
        "do:\n  - a: { set: { n: 1 } }\n  - b: { switch: [ { again: { when: '$data.n < 1', then: a } } ] }\n",
        "do:\n  - a: { set: { n: '${ ($states := 1; $states) }' } }\n",  # binds $states itself
    ],
)
def test_start_stays_where_the_first_state_cannot_take_it(body: str) -> None:
    machine = compiled(body)
    assert machine.definition["StartAt"] == "#start"


def test_an_expression_of_the_first_state_binding_a_start_variable_keeps_its_own() -> None:
    machine = compiled("do:\n  - a: { set: '${ ($workflow := 1; $workflow + 1) }' }\n")
    output = top(machine)["/do/0/a"]["Output"]
    assert output.startswith("{% ($workflow := {")  # bound around it: its own binding is inside
    assert output.endswith("(($workflow := 1; $workflow + 1))) %}")


def test_the_same_document_compiles_to_the_same_json() -> None:
    first = compile_workflow(yaml.safe_load(REVIEW_AND_APPROVE))
    second = compile_workflow(yaml.safe_load(REVIEW_AND_APPROVE))
    assert json.dumps(first.definition) == json.dumps(second.definition)
    assert dict(first.states) == dict(second.states)


def test_the_document_input_from_and_output_as() -> None:
    machine = compiled(
        "input: { from: '${ $data.x }' }\n"
        'output: { as: \'${ {"y": $data, "w": $workflow.id} }\' }\n'
        "do:\n  - a: { if: '$data', set: '${ $data }' }\n"
    )
    states = top(machine)
    assert states["#start"]["Output"] == "{% ($data := $states.input.input; ($data.x)) %}"
    assert states["#start"]["Next"] == "/do/0/a#if"
    assert states["/do/0/a"]["Next"] == "#output"
    assert states["#output"]["Next"] == "#end"
    assert "$workflow.id" in states["#output"]["Output"]


def test_the_document_input_from_folds_into_the_first_state_too() -> None:
    machine = compiled(
        "input: { from: '${ {\"v\": $data.x, \"w\": $workflow.id} }' }\ndo:\n  - a: { set: '${ $data.v }' }\n"
    )
    output = top(machine)["/do/0/a"]["Output"]
    assert output.startswith("{% ($data := (($data := $states.input.input; $workflow := {")
    assert output.endswith("; ($data.v)) %}")


# -- set, then, if ----------------------------------------------------------------------------------------


def test_set_is_a_pass_and_then_its_next() -> None:
    machine = compiled(
        "do:\n"
        "  - a: { set: { x: 1, y: '${ $data.y }' }, then: c }\n"
        "  - b: { set: { x: 2 }, then: exit }\n"
        "  - c: { set: { x: 3 }, then: b }\n"
        "  - d: { set: { x: 4 } }\n"
    )
    states = top(machine)
    assert states["/do/0/a"]["Type"] == "Pass"
    assert states["/do/0/a"]["Output"] == {"x": 1, "y": "{% ($data := ($states.input.input); ($data.y)) %}"}
    assert states["/do/0/a"]["Next"] == "/do/2/c"
    assert states["/do/1/b"] == {"Type": "Pass", "Output": {"x": 2}, "Next": "#end"}
    assert states["/do/2/c"]["Next"] == "/do/1/b"
    assert "/do/3/d" not in states  # nothing reaches it
    assert sorted(machine.states["/do/0/a"].roles) == ["completed", "entered"]


def test_if_is_a_choice_whose_default_is_the_next_task() -> None:
    machine = compiled("do:\n  - a: { if: '$data.go', set: { x: 1 }, then: end }\n  - b: { set: { x: 2 } }\n")
    states = top(machine)
    choice = states["/do/0/a#if"]
    assert choice["Type"] == "Choice"
    assert choice["Choices"][0]["Next"] == "/do/0/a"
    assert choice["Default"] == "/do/1/b"  # the skipped task's then is not followed
    assert "$data := $states.input; ($data.go)" in choice["Choices"][0]["Condition"]
    assert "/do/0/a#skip" not in states
    assert states["/do/0/a"]["Next"] == "#end"
    assert machine.states["/do/0/a#if"].roles == {"condition"}
    assert machine.states["/do/0/a#if"].way("/do/1/b") == (("/do/0/a", frozenset({"skipped"})),)
    assert machine.states["/do/0/a#if"].way("/do/0/a") == ()


def test_an_export_reading_context_in_its_output_moves_to_a_pass_of_its_own() -> None:
    machine = compiled(
        "do:\n"
        "  - a:\n"
        "      set: { seen: '${ $context }' }\n"
        "      export: { as: '${ {\"n\": 1} }' }\n"
        "  - b: { set: { a: 1 }, export: { as: { n: 2 } } }\n"
    )
    states = top(machine)
    assert states["/do/0/a"]["Assign"]["context_0"] == {}  # #start's, folded in
    assert states["/do/0/a"]["Next"] == "/do/0/a#export"
    assert states["/do/0/a#export"]["Assign"] == {"context_0": '{% ({"n": 1}) %}'}
    assert machine.states["/do/0/a"].roles == {"entered"}
    assert machine.states["/do/0/a#export"].roles == {"completed"}
    assert states["/do/1/b"]["Assign"] == {"context_0": '{% {"n": 2} %}'}


def test_a_first_state_exporting_assigns_its_export_over_the_empty_context() -> None:
    machine = compiled(
        "do:\n  - a: { set: { a: 1 }, export: { as: '${ $merge([$context, {\"n\": 2}]) }' } }\n"
    )
    assign = top(machine)["/do/0/a"]["Assign"]
    assert assign["context_0"] == (
        '{% ($context_0 := {}; ($context := $context_0; ($merge([$context, {"n": 2}])))) %}'
    )


# -- switch -----------------------------------------------------------------------------------------------


def test_switch_is_a_choice_with_a_default() -> None:
    machine = compiled(
        "do:\n"
        "  - route:\n"
        "      switch:\n"
        "        - big: { when: '${ $data.n > 9 }', then: big }\n"
        "        - other: { then: exit }\n"
        "  - small: { set: { size: small } }\n"
        "  - big: { set: { size: big } }\n"
    )
    states = top(machine)
    route = states["/do/0/route"]
    assert route["Type"] == "Choice"
    assert [rule["Next"] for rule in route["Choices"]] == ["/do/2/big"]
    assert route["Default"] == "#end"
    assert "/do/1/small" not in states


def test_a_do_without_shaping_is_its_list() -> None:
    machine = compiled(
        "do:\n"
        "  - first: { set: { n: 0 } }\n"
        "  - outer:\n"
        "      do:\n"
        "        - one: { set: { n: 1 } }\n"
        "        - two: { set: { n: 2 } }\n"
        "  - after: { set: { n: 3 } }\n"
    )
    states = top(machine)
    assert "/do/1/outer" not in states and "/do/1/outer#done" not in states
    assert states["/do/0/first"]["Next"] == "/do/1/outer/do/0/one"
    assert states["/do/1/outer/do/1/two"]["Next"] == "/do/2/after"
    assert machine.states["/do/1/outer/do/0/one"].starts == ("/do/1/outer",)
    assert machine.states["/do/1/outer/do/1/two"].completes == ("/do/1/outer",)


def test_a_do_going_back_to_its_first_task_keeps_its_pass() -> None:
    machine = compiled(
        "do:\n"
        "  - first: { set: { n: 0 } }\n"
        "  - outer:\n"
        "      do:\n"
        "        - one: { set: { n: '${ $data.n + 1 }' } }\n"
        "        - again: { switch: [ { more: { when: '$data.n < 3', then: one } } ] }\n"
    )
    states = top(machine)
    assert states["/do/1/outer"] == {"Type": "Pass", "Next": "/do/1/outer/do/0/one"}
    assert machine.states["/do/1/outer"].roles == {"entered"}


def test_a_choice_going_one_place_on_two_ways_keeps_the_done_pass() -> None:
    """A case that exits its do and one that ends the run both go to the end: only the first completes
    the do, so the do keeps a Pass of its own there."""
    machine = compiled(
        "do:\n"
        "  - first: { set: { n: 0 } }\n"
        "  - outer:\n"
        "      do:\n"
        "        - route:\n"
        "            switch:\n"
        "              - out: { when: '$data.n = 0', then: exit }\n"
        "              - stop: { when: '$data.n = 1', then: end }\n"
        "        - more: { set: { n: 2 } }\n"
    )
    states = top(machine)
    route = states["/do/1/outer/do/0/route"]
    assert [rule["Next"] for rule in route["Choices"]] == ["/do/1/outer#done", "#end"]
    assert states["/do/1/outer#done"] == {"Type": "Pass", "Next": "#end"}
    assert machine.states["/do/1/outer#done"].roles == {"completed"}
    # Only the way that must be told apart goes through it.
    assert states["/do/1/outer/do/1/more"]["Next"] == "#end"
    assert machine.states["/do/1/outer/do/1/more"].completes == ("/do/1/outer",)


def test_a_condition_gives_a_boolean() -> None:
    text = condition_text("${ $data.x }", Place({"data": "$states.input"}))
    assert text.startswith("($held := ($data := $states.input; ($data.x));")
    assert '$type($held) = "boolean" ? $held' in text
    assert condition_text(True, Place()) == "true"


# -- raise ------------------------------------------------------------------------------------------------


def test_raise_outside_any_try_keeps_its_error_for_the_end() -> None:
    machine = compiled(
        "use:\n  errors:\n    late: { type: timeout, status: 408, title: '${ $data.t }' }\n"
        "do:\n"
        "  - a:\n"
        "      if: '$data.x'\n"
        "      raise:\n"
        "        error: { type: https://serverlessworkflow.io/spec/1.0.0/errors/validation, status: 400 }\n"
        "  - b: { raise: { error: late } }\n"
    )
    states = top(machine)
    error = {"type": SPEC_ERRORS + "validation", "status": 400, "instance": "/do/0/a"}
    assert states["/do/0/a"] == {
        "Type": "Pass",
        "Assign": {"uncaught": "{% " + json.dumps(error, separators=(", ", ": ")) + " %}"},
        "Next": "#end",
    }
    assigned = states["/do/1/b"]["Assign"]["uncaught"]
    assert assigned.startswith("{% {") and '"instance": "/do/1/b"' in assigned
    assert machine.states["/do/1/b"].roles == {"entered", "failed"}


def test_raise_inside_a_try_is_a_fail_with_the_error_as_its_cause() -> None:
    machine = compiled(
        "use:\n  errors:\n    late: { type: timeout, status: 408, title: '${ $data.t }' }\n"
        "do:\n"
        "  - t:\n"
        "      try:\n"
        "        - a: { if: '$data.x', raise: { error: { type: validation, status: 400 } } }\n"
        "        - b: { raise: { error: late } }\n"
        "      catch: {}\n"
    )
    states = every_state(machine)
    error = {"type": SPEC_ERRORS + "validation", "status": 400, "instance": "/do/0/t/try/0/a"}
    assert states["/do/0/t/try/0/a"] == {
        "Type": "Fail",
        "Error": engine.ERROR_NAME,
        "Cause": json.dumps(error, separators=(",", ":")),
    }
    assert states["/do/0/t/try/1/b"]["Cause"].startswith("{% $string({")


def test_a_call_outside_any_try_keeps_its_error_for_the_end() -> None:
    machine = compiled(
        "do:\n"
        "  - first: { if: '$data', set: {} }\n"
        "  - ask: { call: run_definition, with: { type: interaction, name: a } }\n"
        "  - t:\n"
        "      try:\n"
        "        - inner: { call: run_definition, with: { type: interaction, name: b } }\n"
        "        - more: { set: {} }\n"
        "      catch: {}\n"
    )
    ask = top(machine)["/do/1/ask"]
    (catcher,) = ask["Catch"]
    assert catcher["ErrorEquals"] == ["States.ALL"] and catcher["Next"] == "#end"
    assert list(catcher["Assign"]) == ["uncaught"]
    assert '"/do/1/ask"' in catcher["Assign"]["uncaught"]  # the instance, where Step Functions names none
    assert "Catch" not in every_state(machine)["/do/2/t/try/0/inner"]  # the try's Parallel takes it


# -- call -------------------------------------------------------------------------------------------------


def test_call_is_a_task_on_the_entry_with_its_payload() -> None:
    machine = compile_workflow(yaml.safe_load(REVIEW_AND_APPROVE))
    approval = every_state(machine)["/do/1/approval"]
    assert approval["Type"] == "Task"
    assert approval["Resource"] == engine.WAIT_FOR_TOKEN_RESOURCE
    assert approval["Arguments"] == {
        "FunctionName": engine.ENTRY_FUNCTION,
        "Payload": {
            "action": "call",
            "token": "{% $states.context.Task.Token %}",
            "run": "{% $run %}",
            "depth": "{% $depth %}",
            "task": "/do/1/approval",
            "attempt": "0",
            "type": "interaction",
            "name": "approve-campaign-brief",
            "input": {
                "owner": "{% ($data := $states.input; ($data.owner)) %}",
                "review": "{% ($data := $states.input; ($data.review)) %}",
            },
        },
    }
    assert approval["Output"] == (
        "{% ($input := $states.input; $data := $states.result.output; "
        '($merge([$input, { "decision": $data }]))) %}'
    )
    assert [retrier["ErrorEquals"][0] for retrier in approval["Retry"]] == ["Lambda.ServiceException"]
    assert "States.ALL" not in json.dumps(approval["Retry"])
    assert approval["Catch"][0]["Next"] == "#end"
    assert machine.states["/do/1/approval"].roles == {"entered", "completed", "call"}


def test_a_call_under_retries_joins_their_counts_as_its_attempt() -> None:
    machine = compile_workflow(yaml.safe_load(REVIEW_AND_APPROVE))
    payload = every_state(machine)["/do/0/review/try/0/run-review"]["Arguments"]["Payload"]
    assert payload["attempt"] == "{% $string($retry_0_0.attempt) %}"
    assert every_state(machine)["/do/1/approval"]["Arguments"]["Payload"]["attempt"] == "0"


# -- try, catch, retry ------------------------------------------------------------------------------------


def test_a_try_of_one_call_is_that_task_with_the_catch_on_it() -> None:
    machine = compile_workflow(yaml.safe_load(BRIEF_APPROVAL))
    states = top(machine)
    assert machine.definition["StartAt"] == "/do/0/approval/try/0/ask"
    assert list(states) == [
        "/do/0/approval/try/0/ask",
        "/do/0/approval#catch",
        "/do/0/approval#raise",
        "#end",
    ]
    ask = states["/do/0/approval/try/0/ask"]
    assert ask["Type"] == "Task"
    assert ask["Arguments"]["Payload"]["input"] == "{% ($data := ($states.input.input); ($data)) %}"
    assert ask["Output"] == "{% $states.result.output %}"
    assert ask["Next"] == "#end"
    (catcher,) = ask["Catch"]
    assert catcher["ErrorEquals"] == ["States.ALL"]
    assert catcher["Next"] == "/do/0/approval#catch"
    assert catcher["Output"] == "{% ($states.input.input) %}"  # the try's data (#start folded in)
    assert set(catcher["Assign"]) == {"error_0_0"} | START_VARIABLES
    assert "$parse($e.Cause)" in catcher["Assign"]["error_0_0"]
    choice = states["/do/0/approval#catch"]
    not_taken, recovered = choice["Choices"]
    assert not_taken == {
        "Condition": (
            '{% $not(($error_0_0.type = "https://on.auto/problems/unanswered") '
            'and ($error_0_0.kind = "expired")) %}'
        ),
        "Next": "/do/0/approval#raise",
    }
    # The recovery's first task, a set, is the catch's last rule: taking the error gives its value.
    assert recovered == {
        "Condition": "{% true %}",
        "Output": {"verdict": "revise", "note": "No answer within two days"},
        "Next": "#end",
    }
    assert "Default" not in choice
    assert states["/do/0/approval#raise"] == {
        "Type": "Pass",
        "Assign": {"uncaught": "{% $error_0_0 %}"},
        "Next": "#end",
    }
    roles = {name: sorted(machine.states[name].roles) for name in states}
    assert roles == {
        "/do/0/approval/try/0/ask": ["call", "completed", "entered"],
        "/do/0/approval#catch": ["catch"],
        "/do/0/approval#raise": ["failed"],
        "#end": ["end"],
    }
    ask_state = machine.states["/do/0/approval/try/0/ask"]
    assert ask_state.starts == ("", "/do/0/approval")
    assert ask_state.completes == ("/do/0/approval",)
    unanswered = "/do/0/approval/catch/do/0/unanswered"
    assert machine.states["/do/0/approval#catch"].way("#end") == (
        (unanswered, frozenset({"entered", "completed"})),
        ("/do/0/approval", frozenset({"completed"})),
    )
    assert machine.states["/do/0/approval#catch"].way("/do/0/approval#raise") == ()


def test_try_of_several_tasks_is_a_parallel_whose_catch_leads_to_the_catch_choice() -> None:
    machine = compiled(
        "do:\n"
        "  - first: { if: '$data', set: {} }\n"
        "  - guarded:\n"
        "      try:\n"
        "        - one: { call: run_definition, with: { type: interaction, name: a } }\n"
        "        - two: { set: { n: 1 } }\n"
        "      catch:\n"
        "        errors: { with: { status: 503 } }\n"
        "        do:\n"
        "          - note: { set: { n: 0 } }\n"
        "          - more: { set: { n: '${ $data.n + 1 }' } }\n"
    )
    states = top(machine)
    parallel = states["/do/1/guarded"]
    assert parallel["Type"] == "Parallel"
    assert parallel["Output"] == "{% $states.result[0] %}"
    assert parallel["Next"] == "#end"
    (catcher,) = parallel["Catch"]
    assert catcher["Next"] == "/do/1/guarded#catch"
    assert catcher["Output"] == "{% $states.input %}"
    assert list(catcher["Assign"]) == ["error_0_0"]
    branch = parallel["Branches"][0]["States"]
    assert "Catch" not in branch["/do/1/guarded/try/0/one"]  # the Parallel's Catch takes it
    assert branch["/do/1/guarded/try/1/two"]["End"] is True
    # The Parallel completes its try where its branch's last states complete.
    assert machine.states["/do/1/guarded/try/1/two"].completes == ("/do/1/guarded",)
    assert machine.states["/do/1/guarded"].roles == {"entered"}
    assert machine.states["/do/1/guarded"].completes == ()
    choice = states["/do/1/guarded#catch"]
    assert [rule["Next"] for rule in choice["Choices"]] == [
        "/do/1/guarded#raise",
        "/do/1/guarded/catch/do/1/more",
    ]
    assert choice["Choices"][1]["Output"] == {"n": 0}
    assert states["/do/1/guarded/catch/do/1/more"]["Next"] == "#end"
    assert machine.states["/do/1/guarded/catch/do/1/more"].completes == ("/do/1/guarded",)
    assert "/do/1/guarded/catch/do/0/note" not in states


def test_retry_is_a_count_a_wait_and_the_task_again() -> None:
    machine = compile_workflow(yaml.safe_load(REVIEW_AND_APPROVE))
    states = top(machine)
    entry = states["/do/0/review"]
    assert entry["Type"] == "Pass"
    assert entry["Assign"]["retry_0_0"] == '{% {"attempt": 0, "first": $millis()} %}'
    assert entry["Next"] == "/do/0/review/try/0/run-review"
    task = states["/do/0/review/try/0/run-review"]
    assert task["Catch"][0]["Next"] == "/do/0/review#catch"
    assert machine.states["/do/0/review/try/0/run-review"].starts == ()  # the Pass starts the try
    choice = states["/do/0/review#catch"]
    not_taken, retried = choice["Choices"]
    assert not_taken == {"Condition": "{% $not(($error_0_0.status = 503)) %}", "Next": "/do/0/review#raise"}
    assert retried["Next"] == "/do/0/review#retry"
    assert "$retry_0_0.attempt < 3" in retried["Condition"]
    assert (
        '$not($error_0_0.type in ["https://on.auto/problems/unanswered", "https://on.auto/problems/cancelled"])'
        in (retried["Condition"])
    )
    assert "Assign" not in retried  # the Wait counts: a rule's Output never reads what it assigns
    assert retried["Output"] == (
        '{% {"attempt": ($retry_0_0.attempt + 1), '
        '"delay": $ceil((5000 * $power(2, ($retry_0_0.attempt + 1) - 1)) / 1000), "data": $states.input} %}'
    )
    assert choice["Default"] == "/do/0/review#done"
    wait = states["/do/0/review#retry"]
    assert wait == {
        "Type": "Wait",
        "Seconds": "{% $states.input.delay %}",
        "Assign": {"retry_0_0": '{% {"attempt": $states.input.attempt, "first": $retry_0_0.first} %}'},
        "Output": "{% $states.input.data %}",
        "Next": "/do/0/review/try/0/run-review",
    }
    assert machine.states["/do/0/review#retry"].roles == {"retried"}
    done = states["/do/0/review#done"]
    assert done["Output"] == (
        '{% ($input := $task_0_0.input; $data := $states.input; ($merge([$input, { "review": $data }]))) %}'
    )
    assert "task_0_0" in entry["Assign"]


def test_a_catch_naming_unanswered_retries_it_and_cancelled_not() -> None:
    machine = compiled(
        "do:\n"
        "  - t:\n"
        "      try:\n"
        "        - a: { set: { x: 1 } }\n"
        "      catch:\n"
        "        errors: { with: { type: https://on.auto/problems/unanswered } }\n"
        "        retry: { delay: PT1S }\n"
    )
    retried = top(machine)["/do/0/t#catch"]["Choices"][1]
    assert retried["Condition"] == '{% ($not($error_0_0.type in ["https://on.auto/problems/cancelled"])) %}'


def test_a_catch_of_every_error_without_retry_has_no_choice() -> None:
    machine = compiled("do:\n  - t:\n      try:\n        - a: { set: { x: 1 } }\n      catch: {}\n")
    states = top(machine)
    # Caught, the try hands its input on: its end needs a state of its own, which a Catch can name.
    assert states["/do/0/t"]["Catch"][0]["Next"] == "/do/0/t#done"
    assert states["/do/0/t#done"] == {"Type": "Pass", "Next": "#end"}
    assert states["/do/0/t"]["Next"] == "#end"
    assert machine.states["/do/0/t/try/0/a"].completes == ("/do/0/t",)
    assert "/do/0/t#catch" not in states


def test_an_export_inside_a_try_has_its_scope_and_comes_back_with_the_output() -> None:
    machine = compiled(
        "do:\n  - t:\n      try:\n        - a: { set: { x: 1 }, export: { as: { x: 1 } } }\n      catch: {}\n"
    )
    parallel = top(machine)["/do/0/t"]
    branch = parallel["Branches"][0]
    assert branch["StartAt"] == "/do/0/t#begin"
    assert branch["States"]["/do/0/t#begin"]["Assign"] == {"context_1": "{% $context_0 %}"}
    assert branch["States"]["/do/0/t/try/0/a"]["Assign"] == {"context_1": '{% {"x": 1} %}'}
    assert branch["States"]["/do/0/t#out"]["Output"] == '{% {"data": $states.input, "context": $context_1} %}'
    assert parallel["Output"] == "{% $states.result[0].data %}"
    assert parallel["Assign"] == {"context_0": "{% $states.result[0].context %}"}


def test_an_export_of_a_try_of_one_call_assigns_the_context_around_it() -> None:
    machine = compiled(
        "do:\n"
        "  - first: { if: '$data', set: {} }\n"
        "  - t:\n"
        "      try:\n"
        "        - a:\n"
        "            call: run_definition\n"
        "            with: { type: reasoning, name: r }\n"
        "            export: { as: { x: 1 } }\n"
        "      catch: {}\n"
    )
    task = top(machine)["/do/1/t/try/0/a"]
    assert task["Assign"] == {
        "context_0": '{% {"x": 1} %}'
    }  # only when it succeeds: a failure keeps $context


def test_then_end_inside_a_try_ends_the_branch_telling_so() -> None:
    machine = compiled(
        "do:\n"
        "  - t:\n"
        "      try:\n"
        "        - a: { set: { x: 1 }, then: end }\n"
        "      catch: {}\n"
        "  - b: { set: { x: 2 } }\n"
    )
    states = top(machine)
    inner = states["/do/0/t"]["Branches"][0]["States"]
    assert inner["/do/0/t/try/0/a"]["Next"] == "/do/0/t#end"
    assert inner["/do/0/t#end"]["Output"] == '{% {"data": $states.input, "end": true} %}'
    assert states["/do/0/t"]["Next"] == "/do/0/t#ended"
    ended = states["/do/0/t#ended"]["Choices"]
    assert ended[0]["Next"] == "#end"
    assert ended[1] == {
        "Condition": "{% true %}",
        "Next": "/do/1/b",
        "Output": "{% $states.input.data %}",
    }
    assert machine.states["/do/0/t#ended"].way("/do/1/b") == (("/do/0/t", frozenset({"completed"})),)
    assert machine.states["/do/0/t#ended"].way("#end") == ()


def test_then_end_inside_a_last_try_goes_one_place_on_two_ways() -> None:
    """Ended by its list, or done, the try goes to the end: only the second completes it, so that way
    goes through its Pass ``R#done``."""
    machine = compiled(
        "do:\n"
        "  - t:\n"
        "      try:\n"
        "        - a: { if: '$data.stop', set: { x: 1 }, then: end }\n"
        "        - b: { set: { x: 2 } }\n"
        "      catch: { errors: { with: { status: 500 } } }\n"
    )
    states = top(machine)
    ended = states["/do/0/t#ended"]["Choices"]
    assert [rule["Next"] for rule in ended] == ["#end", "/do/0/t#done"]
    assert states["/do/0/t#done"] == {"Type": "Pass", "Next": "#end"}
    assert states["/do/0/t#catch"]["Default"] == "#end"  # taken: the way there completes the try
    assert machine.states["/do/0/t#catch"].way("#end") == (("/do/0/t", frozenset({"completed"})),)


# -- what the compiler does not compile yet ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "found"),
    [
        (
            "timeout: { after: '${ \"PT1H\" }' }\ndo:\n  - s: { set: {} }\n",
            [("/timeout", "the document's timeout written as an expression")],
        ),
    ],
)
def test_what_is_not_compiled_yet_is_refused(body: str, found: list[tuple[str, str]]) -> None:
    data = yaml.safe_load("document: { dsl: '1.0.3', namespace: t, name: n, version: '1' }\n" + body)
    assert not_yet_compiled(data) == found
    with pytest.raises(NotCompiled) as raised:
        compile_workflow(data)
    assert raised.value.found == tuple(found)
    assert found[0][1] in str(raised.value)


def test_the_compiled_tasks() -> None:
    assert COMPILED_TASKS == (
        "call",
        "set",
        "do",
        "switch",
        "try",
        "raise",
        "wait",
        "emit",
        "listen",
        "for",
        "fork",
    )


# -- expressions ------------------------------------------------------------------------------------------


def test_a_block_binds_only_what_the_body_reads() -> None:
    place = Place({"input": "$states.input", "data": "$d", "context": "$context_0"})
    assert bound("1 + 1", place) == "(1 + 1)"
    assert (
        bound("$data.x & $context.y", place)
        == "($data := $d; $context := $context_0; ($data.x & $context.y))"
    )


def test_one_line_keeps_the_meaning() -> None:
    assert one_line('{\n  "a": "x\ny",\n  /* a\n b */ "b": 1\n}') == '{   "a": "x\\ny",   /* a  b */ "b": 1 }'
    assert one_line("'it''s\r\n'") == "'it''s\\r\\n'"


def test_strings_step_functions_would_read_otherwise_are_literals() -> None:
    assert field({"a": "", "b": "{% x %}", "c": "x\ny", "d": "plain", "e": "50%}"}, Place()) == {
        "a": '{% "" %}',
        "b": '{% "{% x %}" %}',
        "c": '{% "x\\ny" %}',
        "d": "plain",
        "e": '{% "50%}" %}',
    }
    assert field([1, "a"], Place()) == '{% [1, "a"] %}'
    assert field("text", Place()) == '{% "text" %}'


# -- what every compiled machine keeps to -----------------------------------------------------------------


def test_every_document_of_the_corpus_passes_the_checks_of_saving() -> None:
    for document in sorted({case.document for case in CASES}):
        checked = check_workflow_document(document)
        assert (
            compile_workflow(checked.data).definition == compile_workflow(yaml.safe_load(document)).definition
        )


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


_ASSIGNED = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_BOUND = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*) :=")


def _read(value: Any) -> set[str]:
    """The variables a field reads from outside it (not those its expressions bind themselves, as the
    first state does what #start would have assigned)."""
    text = json.dumps(value)
    return set(_ASSIGNED.findall(text)) - set(_BOUND.findall(text))


def _scopes(branch: dict[str, Any], outer: frozenset[str]) -> Iterator[tuple[str, set[str], frozenset[str]]]:
    """Each branch's variables assigned, with those of the scopes around it."""
    assigned: set[str] = set()
    for state in branch.values():
        for holder in [state, *state.get("Choices", []), *state.get("Catch", [])]:
            assigned.update(holder.get("Assign", {}))
    yield "branch", assigned, outer
    for state in branch.values():
        for inner in state.get("Branches", []):
            yield from _scopes(inner["States"], outer | assigned)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_every_compiled_machine_keeps_to_step_functions_rules(case: Any) -> None:
    machine = compile_workflow(check_workflow_document(case.document).data)
    states = every_state(machine)
    assert set(states) == set(machine.states)
    assert all(len(name) <= MAX_NAME for name in states)
    text = json.dumps(machine.definition)
    assert json.loads(text) == machine.definition
    for value in _strings(machine.definition):
        if value.startswith("{%"):
            assert value.startswith("{% ") and value.endswith(" %}")
            assert "\n" not in value and "\r" not in value  # one line (asl-validator reads one)
    for _, assigned, outer in _scopes(machine.definition["States"], frozenset()):
        assert not assigned & outer, "a branch assigns a variable of a scope around it"
    for name, state in states.items():
        for holder in [state, *state.get("Choices", [])]:
            written = set(holder.get("Assign", {}))
            assert not written & _read(holder.get("Output", "")), (
                f"{name}: its Output reads what its Assign writes"
            )
        for catcher in state.get("Catch", []):
            assert not set(catcher.get("Assign", {})) & _read(catcher.get("Output", ""))
        if state["Type"] == "Pass" and not {"Output", "Assign"} & set(state):
            # A Pass that does no work is a branch's last state, or tells its task's history.
            assert state.get("End") or machine.states[name].roles & {"entered", "completed"}, name
    assert "\\u0000" not in text  # nothing of the compiler's own bookkeeping is left


# -- wait, emit, listen, for, fork, timeouts --------------------------------------------------------------


def test_a_wait_is_a_wait_of_whole_seconds() -> None:
    states = top(compiled("do:\n  - a: { set: {} }\n  - w: { wait: { seconds: 1, milliseconds: 1 } }\n"))
    assert states["/do/1/w"] == {"Type": "Wait", "Seconds": 2, "Next": "#end"}
    computed = top(compiled("do:\n  - a: { set: {} }\n  - w: { wait: '${ $data.d }' }\n"))["/do/1/w"]
    assert computed["Seconds"].startswith("{% $max([0, $ceil(")
    assert "$states.input" in computed["Seconds"]


def test_emit_and_listen_are_tasks_of_the_entry() -> None:
    machine = compiled(
        "do:\n"
        "  - a: { set: {} }\n"
        "  - e: { emit: { event: { with: { type: t, source: 'https://s.example', data: '${ $data }' } } } }\n"
        "  - l: { listen: { to: { one: { with: { type: t, data: '${ $data.ok }' } } } } }\n"
    )
    states = top(machine)
    emit = states["/do/1/e"]
    assert emit["Resource"] == engine.INVOKE_RESOURCE
    assert emit["Arguments"]["Payload"] == {
        "action": "emit",
        "run": "{% $run %}",
        "task": "/do/1/e",
        "attempt": "0",
        "event": {
            "type": "t",
            "source": "https://s.example",
            "data": "{% ($data := $states.input; ($data)) %}",
        },
    }
    assert emit["Output"] == "{% $states.input %}"
    listen = states["/do/2/l"]
    assert listen["Resource"] == engine.WAIT_FOR_TOKEN_RESOURCE
    payload = listen["Arguments"]["Payload"]
    assert payload["action"] == "listen"
    assert payload["read"] == "data"
    assert json.loads(payload["to"][3:-3]) == {"one": {"with": {"type": "t", "data": "${ $data.ok }"}}}
    assert listen["Output"] == "{% $states.result.output %}"
    assert machine.states["/do/2/l"].roles == frozenset({"entered", "completed"})


def test_a_for_is_a_pass_and_a_choice_per_iteration() -> None:
    machine = compiled(
        "do:\n"
        "  - a: { set: {} }\n"
        "  - f:\n"
        "      for: { in: '$data.items', each: x }\n"
        "      while: '$x < 3'\n"
        "      do:\n"
        "        - s: { set: '${ $x }' }\n"
    )
    states = top(machine)
    entry = states["/do/1/f"]
    assert entry["Type"] == "Pass" and entry["Next"] == "/do/1/f#each"
    assert entry["Assign"]["at_0_0"] == -1
    each = states["/do/1/f#each"]
    assert each["Type"] == "Choice"
    assert each["Default"] == "#end"
    (rule,) = each["Choices"]
    assert rule["Next"] == "/do/1/f/do/0/s"
    assert rule["Assign"] == {"at_0_0": "{% $at_0_0 + 1 %}"}
    assert "$items_0_0[$at_0_0 + 1]" in rule["Condition"]
    assert states["/do/1/f/do/0/s"]["Next"] == "/do/1/f#each"
    assert machine.states["/do/1/f#each"].way("#end") == (("/do/1/f", frozenset({"completed"})),)


def test_a_fork_is_a_parallel_and_compete_races_each_branch() -> None:
    states = top(
        compiled(
            "do:\n  - a: { set: {} }\n"
            "  - f: { fork: { branches: [ { x: { set: 1 } }, { y: { set: 2 } } ] } }\n"
        )
    )
    fork = states["/do/1/f"]
    assert fork["Type"] == "Parallel"
    assert [branch["StartAt"] for branch in fork["Branches"]] == [
        "/do/1/f/fork/branches/0/x",
        "/do/1/f/fork/branches/1/y",
    ]
    assert fork["Output"] == "{% $states.result %}"
    race = top(
        compiled(
            "do:\n  - a: { set: {} }\n"
            "  - f: { fork: { compete: true, branches: [ { x: { set: 1 } }, { y: { set: 2 } } ] } }\n"
        )
    )
    fork = race["/do/1/f"]
    assert [catcher["ErrorEquals"] for catcher in fork["Catch"]] == [["Parley.Won"], ["States.ALL"]]
    assert fork["Next"] == "/do/1/f#lost"
    branch = fork["Branches"][0]["States"]
    assert set(branch) == {
        "/do/1/f/fork/branches/0/x#race",
        "/do/1/f/fork/branches/0/x#won",
        "/do/1/f/fork/branches/0/x#lost",
    }
    assert branch["/do/1/f/fork/branches/0/x#won"]["Error"] == "Parley.Won"


def test_timeouts() -> None:
    machine = compiled(
        "timeout: { after: PT2H }\n"
        "do:\n"
        "  - ask:\n"
        "      call: run_definition\n"
        "      with: { type: interaction, name: a }\n"
        "      timeout: { after: { minutes: 5 } }\n"
    )
    assert machine.definition["TimeoutSeconds"] == 7200
    states = top(machine)
    ask = states["/do/0/ask"]
    assert ask["TimeoutSeconds"] == 300
    assert ask["Catch"][0]["ErrorEquals"] == ["States.Timeout"]
    assert ask["Catch"][0]["Next"] == "/do/0/ask#deadline"
    deadline = states["/do/0/ask#deadline"]
    assert deadline["Arguments"]["Payload"]["action"] == engine.DEADLINE_ACTION
    assert deadline["Next"] == "#end"
    assert json.loads(deadline["Assign"]["uncaught"][3:-3])["status"] == 408
    assert machine.states["/do/0/ask#deadline"].roles == frozenset({"failed"})
    # A set takes no time: its timeout changes nothing.
    assert "TimeoutSeconds" not in json.dumps(
        compiled("do:\n  - s: { set: {}, timeout: { after: PT1S } }\n").definition
    )


def test_a_competing_branch_of_one_call_needs_no_race() -> None:
    fork = top(
        compiled(
            "do:\n  - a: { set: {} }\n"
            "  - f:\n"
            "      fork:\n"
            "        compete: true\n"
            "        branches:\n"
            "          - x: { call: run_definition, with: { type: interaction, name: x } }\n"
            "          - y: { call: run_definition, with: { type: interaction, name: y } }\n"
        )
    )["/do/1/f"]
    branch = fork["Branches"][0]
    assert branch["StartAt"] == "/do/1/f/fork/branches/0/x"
    call = branch["States"]["/do/1/f/fork/branches/0/x"]
    assert call["Next"] == "/do/1/f/fork/branches/0/x#won"
    assert [catcher["Next"] for catcher in call["Catch"]] == ["/do/1/f/fork/branches/0/x#lost"]
    assert not any(state["Type"] == "Parallel" for state in branch["States"].values())
