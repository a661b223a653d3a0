"""Checking a workflow document when it is saved (workflow-format.md, "Document fields", "Refused when
saved", "Tasks", "Expressions", "Durations", "Schedules" and "Bounds"): every problem, with its line,
column and pointer."""

from __future__ import annotations

import textwrap

import pytest
from unit.workflow.examples import BRIEF_APPROVAL, REVIEW_AND_APPROVE

from parley.errors import Problem
from parley.workflow.document import MEDIA_TYPE, CalledFunction, WorkflowDocument, check_workflow_document

HEAD = "document: {dsl: '1.0.3', namespace: tests, name: checks, version: '1.0.0'}\n"


def workflow(body: str, head: str = HEAD) -> str:
    return head + textwrap.dedent(body)


def problems_of(source: str) -> list[str]:
    """Every problem's detail, as the definition's rejection lists them under ``/source``."""
    with pytest.raises(Problem) as caught:
        check_workflow_document(source)
    assert caught.value.reason == "invalid_input"
    assert {entry.pointer for entry in caught.value.errors} == {"/source"}
    return [entry.detail for entry in caught.value.errors]


def problem_of(source: str) -> str:
    found = problems_of(source)
    assert len(found) == 1, found
    return found[0]


def checked(source: str) -> WorkflowDocument:
    return check_workflow_document(source)


# --- the page's examples ---------------------------------------------------------------------------------


def test_brief_approval_is_saved() -> None:
    document = checked(BRIEF_APPROVAL)

    assert document.description == (
        "Asks the campaign's owner to approve a review, and asks for a revision when nobody answered."
    )
    assert document.calls == (
        CalledFunction("interaction", "approve-campaign-brief", "/do/0/approval/try/0/ask"),
    )
    assert document.input_schema == {"type": "object", "required": ["owner", "review"]}
    assert document.output_schema is None
    assert document.schedule is None
    assert document.dsl == "1.0.3"
    assert document.data["do"][0]["approval"]["catch"]["errors"]["with"]["kind"] == "expired"
    assert MEDIA_TYPE == "application/yaml"


def test_review_and_approve_is_saved() -> None:
    document = checked(REVIEW_AND_APPROVE)

    assert document.description is None
    assert document.calls == (
        CalledFunction("reasoning", "review-brief", "/do/0/review/try/0/run-review"),
        CalledFunction("interaction", "approve-campaign-brief", "/do/1/approval"),
    )
    assert document.data["use"]["retries"]["patient"]["limit"] == {"attempt": {"count": 3}}


@pytest.mark.parametrize("version", ["1.0.0", "1.0.1", "1.0.2", "1.0.3"])
def test_each_dsl_version_is_read(version: str) -> None:
    assert checked(REVIEW_AND_APPROVE.replace("dsl: '1.0.3'", f"dsl: '{version}'")).dsl == version


def test_the_title_is_the_description_without_a_summary() -> None:
    head = "document: {dsl: '1.0.3', namespace: tests, name: checks, version: '1.0.0', title: Checks}\n"
    assert checked(workflow("do: [{a: {set: {x: 1}}}]\n", head)).description == "Checks"


def test_the_schedule_and_the_output_schema_are_kept() -> None:
    document = checked(
        workflow(
            """\
            schedule: {cron: '0 9 * * MON-FRI', every: PT15M}
            output:
              schema:
                document: {type: object, properties: {done: {type: boolean}}}
            do: [{a: {set: {done: true}}}]
            """
        )
    )
    assert document.schedule == {"cron": "0 9 * * MON-FRI", "every": "PT15M"}
    assert document.output_schema == {"type": "object", "properties": {"done": {"type": "boolean"}}}


def test_yaml_1_2_keeps_yes_and_dates_as_text() -> None:
    document = checked(workflow("do: [{a: {set: {answer: yes, day: 2026-10-01, on: no}}}]\n"))
    assert document.data["do"][0]["a"]["set"] == {"answer": "yes", "day": "2026-10-01", "on": "no"}


# --- the YAML --------------------------------------------------------------------------------------------


def test_a_document_that_is_not_a_mapping() -> None:
    assert problem_of("- document\n- do\n") == (
        "Line 1, column 1: The workflow document is a mapping of fields, such as 'name: value'"
    )


def test_an_empty_document() -> None:
    assert problem_of("\n") == "Line 1, column 1: The workflow document is empty: write its fields"


def test_anchors_and_aliases_are_refused() -> None:
    source = workflow(
        """\
        do:
          - a: &shared {set: {x: 1}}
          - b: *shared
        """
    )
    assert problems_of(source) == [
        "Line 3, column 8, /do/0/a: Anchors (&shared) are not allowed: write the value out",
        "Line 4, column 8, /do/1/b: Aliases (*shared) are not allowed: write the value out",
    ]


def test_tags_and_repeated_keys_are_refused() -> None:
    source = workflow(
        """\
        do:
          - a: {set: {x: !!str 1}}
        do: []
        """
    )
    assert problems_of(source) == [
        "Line 3, column 18, /do/0/a/set/x: Tags such as !!str are not allowed: write the value plainly",
        "Line 4, column 1, /do: The key 'do' appears twice in this mapping",
    ]


def test_yaml_that_does_not_parse() -> None:
    assert problem_of(workflow("do: [{a: {set: {x: 1}}\n")) == (
        "Line 3, column 1: Invalid YAML: did not find expected ',' or '}' (while parsing a flow mapping)"
    )


def test_two_yaml_documents() -> None:
    assert problem_of(workflow("do: []\n---\ndo: []\n")) == (
        "Line 3, column 1: The workflow document is one YAML document"
    )


# --- document fields -------------------------------------------------------------------------------------


def test_a_dsl_outside_1_0_0_to_1_0_3() -> None:
    source = workflow("do: [{a: {set: {x: 1}}}]\n", HEAD.replace("'1.0.3'", "'1.1.0'"))
    assert problem_of(source) == (
        "Line 1, column 17, /document/dsl: The DSL versions read are 1.0.0 to 1.0.3, written as text such "
        "as dsl: '1.0.3'; not '1.1.0'"
    )


def test_a_dsl_written_as_a_number_says_so_once() -> None:
    source = workflow("do: [{a: {set: {x: 1}}}]\n", HEAD.replace("'1.0.3'", "1.0"))
    assert problem_of(source).endswith(
        "/document/dsl: The DSL versions read are 1.0.0 to 1.0.3, written as "
        "text such as dsl: '1.0.3'; not a number"
    )


def test_the_dsl_fields_are_required() -> None:
    source = "document: {dsl: '1.0.3', namespace: tests}\ndo: []\n"
    assert problems_of(source) == [
        "Line 1, column 1, /document/name: 'name' is required here",
        "Line 1, column 1, /document/version: 'version' is required here",
    ]


def test_do_is_required() -> None:
    assert problem_of(HEAD) == "Line 1, column 1, /do: 'do' is required here"


def test_a_field_that_is_not_a_workflows() -> None:
    assert problem_of(workflow("do: []\nsteps: []\n")) == (
        "Line 3, column 1, /steps: 'steps' is not a field of a workflow; expected document, input, use, do, "
        "timeout, output, schedule, evaluate"
    )


def test_the_dsl_schema_names_a_field_of_the_document() -> None:
    source = "document: {dsl: '1.0.3', namespace: tests, name: checks, version: '1.0.0', owner: x}\ndo: []\n"
    assert problem_of(source) == (
        "Line 1, column 76, /document/owner: 'owner' is not a field here; expected dsl, metadata, name, "
        "namespace, summary, tags, title, version"
    )


def test_the_dsl_schema_names_a_pattern_in_words() -> None:
    source = "document: {dsl: '1.0.3', namespace: my_team, name: checks, version: '1.0.0'}\ndo: []\n"
    assert problem_of(source) == (
        'Line 1, column 26, /document/namespace: "my_team" is not 1 to 63 letters, digits and hyphens, '
        "starting and ending with a letter or digit"
    )


@pytest.mark.parametrize(
    ("evaluate", "pointer"),
    [("{language: jq}", "/evaluate/language"), ("{mode: loose}", "/evaluate/mode")],
)
def test_evaluate_takes_jsonata_and_strict_only(evaluate: str, pointer: str) -> None:
    assert f", {pointer}: " in problem_of(workflow(f"evaluate: {evaluate}\ndo: []\n"))


def test_evaluate_written_as_parley_reads_it() -> None:
    checked(workflow("evaluate: {language: jsonata, mode: strict}\ndo: [{a: {set: {x: 1}}}]\n"))


# --- the refused list ------------------------------------------------------------------------------------


def test_a_run_task_is_refused() -> None:
    source = workflow(
        """\
        do:
          - build:
              run: {shell: {command: make}}
        """
    )
    assert problem_of(source) == (
        "Line 4, column 7, /do/0/build/run: run tasks are refused: a workflow runs no container, script, "
        "shell "
        "or workflow of its own; it calls its playbook's functions with call: run_definition"
    )


@pytest.mark.parametrize("kind", ["http", "grpc", "openapi", "asyncapi", "a2a", "mcp"])
def test_a_call_that_reaches_the_world_is_refused(kind: str) -> None:
    source = workflow(f"do:\n  - fetch:\n      call: {kind}\n      with: {{}}\n")
    assert problem_of(source) == (
        f"Line 4, column 13, /do/0/fetch/call: call: {kind} is refused: a workflow reaches the world through "
        "its playbook's functions and their tool servers: call one with call: run_definition"
    )


def test_a_call_of_any_other_function_is_refused() -> None:
    detail = problem_of(workflow("do:\n  - mail:\n      call: send_email\n"))
    assert detail.startswith("Line 4, column 13, /do/0/mail/call: call: 'send_email' is refused: the one")
    assert "playbook's functions and their tool servers" in detail


@pytest.mark.parametrize("field", ["functions", "catalogs", "extensions", "secrets", "authentications"])
def test_use_of_the_worlds_parts_is_refused(field: str) -> None:
    value = "[a]" if field in ("secrets", "extensions") else "{}"
    detail = problem_of(workflow(f"use:\n  {field}: {value}\ndo: [{{a: {{set: {{x: 1}}}}}}]\n"))
    assert detail.startswith(f"Line 3, column 3, /use/{field}: use.{field} is refused: ")


@pytest.mark.parametrize(
    ("schedule", "pointer"),
    [("{on: {one: {with: {type: x}}}}", "/schedule/on"), ("{after: PT1H}", "/schedule/after")],
)
def test_schedule_on_and_after_are_refused(schedule: str, pointer: str) -> None:
    detail = problem_of(workflow(f"schedule: {schedule}\ndo: [{{a: {{set: {{x: 1}}}}}}]\n"))
    assert f"{pointer}: schedule.{pointer.rsplit('/', 1)[1]} is refused: " in detail


def test_listen_until_is_refused() -> None:
    source = workflow("do:\n  - hear:\n      listen: {to: {any: [{with: {type: a}}], until: '${ true }'}}\n")
    assert problem_of(source).startswith("Line 4, column 47, /do/0/hear/listen/to/until: listen with until")


def test_listen_foreach_is_refused() -> None:
    source = workflow(
        """\
        do:
          - hear:
              listen: {to: {one: {with: {type: a}}}}
              foreach: {item: event, do: [{b: {set: {x: 1}}}]}
        """
    )
    assert problem_of(source).startswith("Line 5, column 7, /do/0/hear/foreach: listen with foreach")


def test_listen_correlate_is_refused() -> None:
    source = workflow(
        """\
        do:
          - hear:
              listen:
                to:
                  all:
                    - with: {type: a}
                      correlate: {order: {from: '${ .id }'}}
        """
    )
    assert problem_of(source).startswith(
        "Line 8, column 15, /do/0/hear/listen/to/all/0/correlate: listen with correlate is refused"
    )


def test_listen_reads_data_or_envelope() -> None:
    source = workflow("do:\n  - hear: {listen: {to: {one: {with: {type: a}}}, read: raw}}\n")
    assert problem_of(source) == (
        "Line 3, column 57, /do/0/hear/listen/read: listen.read is data or envelope"
    )


def test_a_schema_from_elsewhere_is_refused() -> None:
    source = workflow(
        """\
        input:
          schema:
            resource: {endpoint: 'https://example.com/schema.json'}
        do: [{a: {set: {x: 1}}}]
        """
    )
    assert problem_of(source) == (
        "Line 4, column 5, /input/schema/resource: A schema is written inline, under document: a workflow "
        "reads no schema from elsewhere"
    )


def test_a_schema_in_another_format_is_refused() -> None:
    source = workflow(
        """\
        output:
          schema: {format: avro, document: {type: object}}
        do: [{a: {set: {x: 1}}}]
        """
    )
    assert problem_of(source) == (
        "Line 3, column 20, /output/schema/format: A schema is JSON Schema: write format: json, or leave it "
        "out"
    )


def test_an_inline_schema_keeps_the_reasoning_formats_rules() -> None:
    source = workflow(
        """\
        input:
          schema:
            document:
              type: object
              properties:
                owner: {type: string, pattern: '^[a-z]+$'}
        do: [{a: {set: {x: 1}}}]
        """
    )
    assert problem_of(source) == (
        "Line 7, column 31, /input/schema/document/properties/owner/pattern: pattern is not allowed, "
        "because a "
        "hostile regular expression can stall validation"
    )


def test_the_input_schemas_root_is_an_object() -> None:
    source = workflow("input: {schema: {document: {type: array}}}\ndo: [{a: {set: {x: 1}}}]\n")
    assert problem_of(source) == (
        'Line 2, column 18, /input/schema/document: The input schema\'s root is "type": "object"'
    )


def test_a_task_schema_is_checked_too() -> None:
    source = workflow("do:\n  - a:\n      set: {x: 1}\n      output: {schema: {document: {type: objet}}}\n")
    assert "/do/0/a/output/schema/document/type: " in problem_of(source)


# --- call: run_definition --------------------------------------------------------------------------------


def test_call_with_a_wrong_type_and_name_and_another_field() -> None:
    source = workflow(
        """\
        do:
          - ask:
              call: run_definition
              with: {type: tool, name: Approve, input: {}, timeout: PT1H}
        """
    )
    assert problems_of(source) == [
        "Line 5, column 20, /do/0/ask/with/type: with.type is interaction, reasoning or workflow",
        "Line 5, column 32, /do/0/ask/with/name: with.name is a definition's name: 3 to 48 characters of "
        "a-z, 0-9 and -, starting with a letter",
        "Line 5, column 52, /do/0/ask/with/timeout: 'timeout' is not a field of with here; expected type, "
        "name, input",
    ]


def test_call_without_with() -> None:
    assert problem_of(workflow("do:\n  - ask: {call: run_definition}\n")) == (
        "Line 3, column 5, /do/0/ask/with: call: run_definition needs with: the type and name of the "
        "function to run"
    )


def test_call_without_a_type_or_a_name() -> None:
    found = problems_of(workflow("do:\n  - ask: {call: run_definition, with: {input: {}}}\n"))
    assert [detail.split(": ", 1)[0] for detail in found] == [
        "Line 3, column 33, /do/0/ask/with/name",
        "Line 3, column 33, /do/0/ask/with/type",
    ]


def test_call_input_is_optional() -> None:
    document = checked(
        workflow("do:\n  - ask: {call: run_definition, with: {type: workflow, name: sub-flow}}\n")
    )
    assert document.calls == (CalledFunction("workflow", "sub-flow", "/do/0/ask"),)


# --- names -----------------------------------------------------------------------------------------------


def test_task_names_are_letters_digits_hyphens_and_underscores() -> None:
    source = workflow("do:\n  - 'ask owner': {set: {x: 1}}\n  - ask_owner-2: {set: {x: 1}}\n")
    assert problem_of(source) == (
        "Line 3, column 5, /do/0/ask owner: A task's name is letters, digits, - and _, not 'ask owner'"
    )


def test_task_names_differ_within_a_list() -> None:
    source = workflow("do:\n  - a: {set: {x: 1}}\n  - a: {set: {x: 2}}\n")
    assert (
        problem_of(source)
        == "Line 4, column 5, /do/1/a: Task names differ within a list: 'a' is also /do/0/a"
    )


def test_each_item_of_a_task_list_has_one_key() -> None:
    source = workflow("do:\n  - {a: {set: {x: 1}}, b: {set: {x: 2}}}\n")
    assert problem_of(source).startswith(
        "Line 3, column 5, /do/0: Each item of a task list is a mapping with one key, the task's name"
    )


def test_a_task_does_one_thing() -> None:
    found = problems_of(workflow("do:\n  - a: {set: {x: 1}, wait: PT1S}\n  - b: {then: end}\n"))
    assert found == [
        "Line 3, column 5, /do/0/a: A task does one thing: this one has set and wait",
        "Line 4, column 5, /do/1/b: A task does one of call, do, emit, for, fork, listen, raise, set, "
        "switch, "
        "try, wait: this one has none of these fields",
    ]


def test_a_misspelled_kind_of_task_is_named() -> None:
    assert problem_of(workflow("do:\n  - a: {sett: {x: 1}, then: end}\n")) == (
        "Line 3, column 5, /do/0/a: A task does one of call, do, emit, for, fork, listen, raise, set, "
        "switch, try, wait: this one has none of these fields; did you mean set (not 'sett')?"
    )


def test_then_names_a_task_of_the_same_list() -> None:
    source = workflow(
        """\
        do:
          - a: {set: {x: 1}, then: c}
          - b:
              do:
                - c: {set: {x: 2}, then: a}
          - c: {set: {x: 3}, then: a}
          - d: {set: {x: 4}, then: exit}
        """
    )
    assert problem_of(source) == (
        "Line 6, column 34, /do/1/b/do/0/c/then: then names continue, exit, end or a task of the same list "
        "(c); "
        "there is no task 'a' in it"
    )


def test_a_switch_case_goes_to_a_task_of_the_same_list() -> None:
    source = workflow(
        """\
        do:
          - route:
              switch:
                - yes: {when: '${ $data.ok }', then: done}
                - no: {then: nowhere}
          - done: {set: {x: 1}}
        """
    )
    assert problem_of(source).startswith(
        "Line 6, column 22, /do/0/route/switch/1/no/then: then names continue"
    )


def test_a_switch_has_one_default() -> None:
    source = workflow("do:\n  - route: {switch: [{a: {then: end}}, {b: {then: exit}}]}\n")
    assert problem_of(source) == (
        "Line 3, column 41, /do/0/route/switch/1/b: A switch has one case without when, its default: "
        "/do/0/route/switch/0/a is one already"
    )


def test_a_forks_branches_go_on_only_with_continue_exit_or_end() -> None:
    source = workflow(
        """\
        do:
          - both:
              fork:
                branches:
                  - left: {set: {x: 1}, then: right}
                  - right:
                      do:
                        - one: {set: {x: 2}, then: two}
                        - two: {set: {x: 3}, then: end}
        """
    )
    assert problem_of(source) == (
        "Line 6, column 39, /do/0/both/fork/branches/0/left/then: A fork's branch goes on with continue, "
        "exit "
        "or end: it cannot go to another task"
    )


def test_names_of_use_must_exist() -> None:
    source = workflow(
        """\
        use:
          errors: {late: {type: 'https://example.com/late', status: 408}}
          retries: {patient: {delay: PT5S}}
          timeouts: {short: {after: PT1M}}
        timeout: long
        do:
          - a:
              try: [{b: {set: {x: 1}, timeout: short}}]
              catch: {retry: eager}
          - c: {raise: {error: early}}
          - d: {raise: {error: late}}
          - e: {try: [{f: {set: {x: 1}}}], catch: {retry: patient}}
        """
    )
    assert problems_of(source) == [
        "Line 6, column 10, /timeout: There is no timeout 'long' in use.timeouts",
        "Line 10, column 22, /do/0/a/catch/retry: There is no retry policy 'eager' in use.retries",
        "Line 11, column 24, /do/1/c/raise/error: There is no error 'early' in use.errors",
    ]


# --- bounds ----------------------------------------------------------------------------------------------


def nested_lists(levels: int) -> str:
    lines = ["do:"]
    indent = "  "
    for level in range(1, levels):
        lines += [f"{indent}- t{level}:", f"{indent}    do:"]
        indent += "      "
    lines.append(f"{indent}- last: {{set: {{done: true}}}}")
    return workflow("\n".join(lines) + "\n")


def test_task_lists_nest_64_levels() -> None:
    checked(nested_lists(64))


def test_a_65th_level_is_refused() -> None:
    detail = problem_of(nested_lists(65))
    assert detail.endswith("/t63/do/0/t64/do: Task lists nest at most 64 levels; this one is deeper")
    assert detail.startswith("Line 130, column 385, /do/0/t1/do/0/t2/")


def fork_of(branches: int) -> str:
    items = ", ".join(f"{{b{i}: {{set: {{x: {i}}}}}}}" for i in range(branches))
    return workflow(f"do:\n  - both: {{fork: {{branches: [{items}]}}}}\n")


def test_a_fork_has_32_branches() -> None:
    checked(fork_of(32))


def test_a_33rd_branch_is_refused() -> None:
    assert problem_of(fork_of(33)) == (
        "Line 3, column 19, /do/0/both/fork/branches: A fork has at most 32 branches, not 33"
    )


@pytest.mark.parametrize("every", ["PT1M", "PT15M", "P1D", "{minutes: 90}"])
def test_every_a_minute_or_longer(every: str) -> None:
    checked(workflow(f"schedule: {{every: {every}}}\ndo: [{{a: {{set: {{x: 1}}}}}}]\n"))


@pytest.mark.parametrize(
    ("every", "message"),
    [
        ("PT30S", "A schedule runs at most once a minute: write every as PT1M or longer"),
        ("{seconds: 59}", "A schedule runs at most once a minute: write every as PT1M or longer"),
        ("PT90S", "every is a whole number of minutes, such as PT15M or PT1H"),
        ("'${ $data.every }'", "every is a duration written out: it is read when the workflow is saved"),
    ],
)
def test_every_less_than_a_minute_or_not_whole_minutes(every: str, message: str) -> None:
    source = workflow(f"schedule: {{every: {every}}}\ndo: [{{a: {{set: {{x: 1}}}}}}]\n")
    assert problem_of(source) == f"Line 2, column 19, /schedule/every: {message}"


@pytest.mark.parametrize("cron", ["0 9 * * MON-FRI", "*/15 * * * *", "0 0 1 jan,jul *", "30 6 * * 0,7"])
def test_a_cron_of_five_fields(cron: str) -> None:
    checked(workflow(f"schedule: {{cron: '{cron}'}}\ndo: [{{a: {{set: {{x: 1}}}}}}]\n"))


def test_a_cron_with_a_field_out_of_range() -> None:
    source = workflow("schedule: {cron: '0 24 * * *'}\ndo: [{a: {set: {x: 1}}}]\n")
    assert problem_of(source) == (
        "Line 2, column 18, /schedule/cron: '24' is not a hour: write *, 0 to 23, a range, a step or a list "
        "of them"
    )


# --- durations -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "duration",
    ["PT30M", "P7D", "P1W", "PT1.5S", "{days: 1, hours: 2}", "{milliseconds: 250}", "'${ $data.delay }'"],
)
def test_a_duration(duration: str) -> None:
    checked(workflow(f"do:\n  - pause: {{wait: {duration}}}\n"))


@pytest.mark.parametrize(
    ("duration", "message"),
    [
        ("P1M", "'P1M': years and months are not a fixed length; use days instead, such as P30D"),
        ("P1Y", "'P1Y': years and months are not a fixed length; use days instead, such as P30D"),
        ("soon", "'soon' is not an ISO 8601 duration such as PT30M, PT4H, P2D or P1W"),
    ],
)
def test_a_duration_that_is_not_one(duration: str, message: str) -> None:
    assert problem_of(workflow(f"do:\n  - pause: {{wait: {duration}}}\n")) == (
        f"Line 3, column 19, /do/0/pause/wait: {message}"
    )


def test_a_duration_mapping_with_a_wrong_field() -> None:
    found = problems_of(workflow("do:\n  - pause: {wait: {weeks: 1, hours: -1}}\n"))
    assert found == [
        "Line 3, column 20, /do/0/pause/wait/weeks: 'weeks' is not a field of a duration; expected days, "
        "hours, "
        "minutes, seconds, milliseconds",
        "Line 3, column 37, /do/0/pause/wait/hours: Expected a whole number of hours, at least 0",
    ]


def test_durations_of_retries_and_timeouts() -> None:
    source = workflow(
        """\
        use:
          retries:
            slow: {delay: P1M, jitter: {from: PT1S, to: PT1Y}, limit: {attempt: {count: -1, duration: x}}}
          timeouts: {short: {after: {minutes: 1.5}}}
        timeout: {after: PT1H}
        do: [{a: {set: {x: 1}, timeout: {after: P2M}}}]
        """
    )
    assert [detail.split(": ", 1)[0] for detail in problems_of(source)] == [
        "Line 4, column 19, /use/retries/slow/delay",
        "Line 4, column 49, /use/retries/slow/jitter/to",
        "Line 4, column 81, /use/retries/slow/limit/attempt/count",
        "Line 4, column 95, /use/retries/slow/limit/attempt/duration",
        "Line 5, column 39, /use/timeouts/short/after/minutes",
        "Line 7, column 41, /do/0/a/timeout/after",
    ]


# --- expressions -----------------------------------------------------------------------------------------


def test_an_expression_that_does_not_parse_names_its_line_and_column() -> None:
    source = workflow(
        """\
        do:
          - approval:
              call: run_definition
              with:
                type: interaction
                name: approve-campaign-brief
                input: {owner: '${ $data.owner. }', note: fine}
        """
    )
    line = source.splitlines()[7]
    column = line.index("$data.owner.") + len("$data.owner.") + 1
    assert problem_of(source) == (
        f"Line 8, column {column}, /do/0/approval/with/input/owner: The expression does not parse: "
        "Unexpected end of expression"
    )
    assert column == 40


def test_a_plain_condition_that_does_not_parse() -> None:
    source = workflow("do:\n  - a:\n      set: {x: 1}\n      if: $data.count >\n")
    assert problem_of(source) == (
        "Line 5, column 24, /do/0/a/if: The expression does not parse: Unexpected end of expression"
    )


def test_a_multi_line_expression_that_does_not_parse_names_where_it_starts() -> None:
    source = workflow(
        """\
        do:
          - a:
              set: {x: 1}
              if: >-
                $data.count >
                  )
        """
    )
    assert problem_of(source).startswith("Line 6, column 9, /do/0/a/if: The expression does not parse: ")


def test_error_outside_a_catch() -> None:
    source = workflow("do:\n  - a: {set: {title: '${ $error.title }'}}\n")
    assert problem_of(source) == (
        "Line 3, column 26, /do/0/a/set/title: The expression reads $error, which this place does not have: "
        "$error is read only in a catch's when, exceptWhen and do"
    )


def test_error_in_a_catch() -> None:
    checked(
        workflow(
            """\
            do:
              - a:
                  try: [{b: {call: run_definition, with: {type: reasoning, name: review-brief}}}]
                  catch:
                    when: $error.status = 503
                    exceptWhen: '${ $error.kind = "x" }'
                    retry: {delay: PT1S, when: '${ $error.status >= 500 }'}
                    do: [{c: {set: {status: '${ $error.status }'}}}]
            """
        )
    )


def test_catch_as_names_the_error() -> None:
    source = workflow(
        """\
        do:
          - a:
              try: [{b: {set: {x: 1}}}]
              catch: {as: failure, when: '${ $failure.status = 500 or $error.status = 503 }'}
        """
    )
    assert problem_of(source).endswith(
        "/do/0/a/catch/when: The expression reads $error, which this place does not have: this catch names "
        "the "
        "error $failure (catch.as)"
    )


def test_output_outside_export_as() -> None:
    source = workflow(
        """\
        do:
          - a:
              set: {x: 1}
              output: {as: '${ $output.x }'}
              export: {as: '${ $merge([$context, {"x": $output.x}]) }'}
        """
    )
    assert problem_of(source) == (
        "Line 5, column 24, /do/0/a/output/as: The expression reads $output, which this place does not have: "
        "only export.as reads $output"
    )


def test_item_outside_a_for() -> None:
    source = workflow(
        """\
        do:
          - each:
              for: {in: '${ $data.items }'}
              while: '${ $index < 10 }'
              do: [{a: {set: {name: '${ $item.name }'}}}]
          - after: {set: {last: '${ $item }'}}
        """
    )
    assert problem_of(source) == (
        "Line 7, column 29, /do/1/after/set/last: The expression reads $item, which this place does not "
        "have: "
        "$item is read only inside a for's while and do"
    )


def test_for_each_and_at_name_the_loops_variables() -> None:
    source = workflow(
        """\
        do:
          - each:
              for: {in: '${ $data.users }', each: user, at: position}
              while: '${ $position < 3 }'
              do: [{a: {set: {name: '${ $user.name }', also: '${ $item }'}}}]
        """
    )
    assert problem_of(source).endswith(
        "/do/0/each/do/0/a/set/also: The expression reads $item, which this place does not have: this for "
        "names its item $user (for.each)"
    )


def test_a_loop_variable_may_not_take_a_name_every_place_reads() -> None:
    source = workflow("do:\n  - each: {for: {in: '${ $data }', each: data}, do: [{a: {set: {x: 1}}}]}\n")
    assert problem_of(source) == (
        "Line 3, column 42, /do/0/each/for/each: for.each may not take the name $data, which every place "
        "reads"
    )


def test_an_unknown_function() -> None:
    source = workflow("do:\n  - a: {set: {x: '${ $upper($data.name) }'}}\n")
    assert problem_of(source) == (
        "Line 3, column 22, /do/0/a/set/x: $upper() is not a function: the functions are JSONata's and Step "
        "Functions' ($partition, $range, $hash, $random, $uuid, $parse)"
    )


def test_eval_is_refused() -> None:
    source = workflow("do:\n  - a: {set: {x: '${ $eval($data.text) }'}}\n")
    assert problem_of(source).endswith("Step Functions does not run $eval; read JSON text with $parse")


def test_an_unknown_variable() -> None:
    source = workflow("do:\n  - a: {set: {x: '${ $states.input }'}}\n")
    assert problem_of(source) == (
        "Line 3, column 22, /do/0/a/set/x: The expression reads $states, which is not a variable here; this "
        "place reads $data, $input, $context, $task, $workflow, $runtime"
    )


def test_variables_the_expression_binds_and_every_function() -> None:
    checked(
        workflow(
            """\
            do:
              - a:
                  set:
                    total: >-
                      ${ ($sum := function($xs){ $reduce($xs, function($a, $b){ $a + $b }) };
                      $sum($data.n)) }
                    named: '${ $data.items@$it#$i.{ "name": $it.name, "at": $i } }'
                    mapped: '${ $map($data.names, $uppercase) }'
                    sfn: '${ [$partition([1,2,3], 2), $range(0, 4, 2), $hash("a", "SHA-256")] }'
                    more: '${ [$uuid(), $parse("1"), $random()] }'
                    clock: '${ $now() & $string($millis()) }'
                    context: '${ [$input, $context, $task.reference, $workflow.id, $runtime.name, $, $$] }'
                    failed: '${ $error("no") }'
            """
        )
    )


def test_expressions_in_every_value_place() -> None:
    source = workflow(
        """\
        input: {from: {owner: '${ $nope1 }'}}
        output: {as: '$nope2'}
        use:
          errors: {late: {type: 'https://example.com/late', status: 408, detail: '${ $nope3 }'}}
        do:
          - a:
              if: '${ $nope4 }'
              input: {from: '$nope5'}
              raise: {error: {type: 'https://example.com/x', status: 400, title: '${ $nope6 }'}}
          - b: {emit: {event: {with: {type: x, source: 'https://example.com', data: ['${ $nope7 }']}}}}
          - c: {listen: {to: {one: {with: {type: '${ $nope8 }'}}}}}
          - d: {wait: '${ $nope9 }'}
          - e: {for: {in: '$nope10'}, do: [{f: {set: '${ $nope11 }'}}]}
        """
    )
    found = problems_of(source)
    assert [detail.split(" reads ")[1].split(",")[0] for detail in found] == [
        f"$nope{i}" for i in range(1, 12)
    ]


def test_set_of_text_is_one_expression() -> None:
    assert problem_of(workflow("do:\n  - a: {set: done}\n")) == (
        "Line 3, column 14, /do/0/a/set: set is a mapping of values, or one expression written ${ … }"
    )


def test_errors_with_matches_values_written_out() -> None:
    source = workflow(
        """\
        do:
          - a:
              try: [{b: {set: {x: 1}}}]
              catch: {errors: {with: {status: 503, details: x, kind: '${ $data.kind }'}}}
        """
    )
    assert problems_of(source) == [
        "Line 5, column 44, /do/0/a/catch/errors/with/details: errors.with matches type, status, instance, "
        "title, detail, kind, because, not 'details'; did you mean detail?",
        "Line 5, column 62, /do/0/a/catch/errors/with/kind: errors.with matches values written out; write a "
        "condition in when",
    ]


def test_raise_takes_parleys_kind_and_because() -> None:
    checked(
        workflow(
            """\
            do:
              - stop:
                  raise:
                    error: {type: 'https://example.com/x', status: 409, kind: late, because: '${ $data.why }'}
            """
        )
    )


# --- the DSL's schema, task by task ----------------------------------------------------------------------


def test_a_field_a_task_does_not_take() -> None:
    source = workflow("do:\n  - a: {set: {x: 1}, retry: 3}\n")
    assert problem_of(source) == (
        "Line 3, column 22, /do/0/a/retry: 'retry' is not a field here; expected export, if, input, "
        "metadata, "
        "output, set, then, timeout"
    )


def test_a_field_of_the_wrong_type_names_the_types_it_takes() -> None:
    assert problem_of(workflow("do:\n  - a: {set: 5}\n")) == (
        "Line 3, column 9, /do/0/a/set: Expected a mapping or text, found a whole number"
    )


def test_an_error_type_that_is_not_a_uri() -> None:
    source = workflow("do:\n  - stop: {raise: {error: {type: late, status: 408}}}\n")
    assert problem_of(source) == (
        "Line 3, column 28, /do/0/stop/raise/error/type: Expected a URI, such as "
        "https://example.com/errors/late, an expression written ${ … } or a short type (configuration, "
        "validation, expression, authentication, authorization, timeout, communication, runtime)"
    )


def test_an_error_takes_a_short_type_and_expressions_in_every_field() -> None:
    checked(
        workflow(
            """\
            use:
              errors:
                bad: {type: validation, status: '${ $data.code }', title: '${ "Bad " & $data.what }'}
            do:
              - stop: {raise: {error: {type: runtime, status: 500, instance: /somewhere/else}}}
              - check: {raise: {error: bad}}
            """
        )
    )


def test_an_error_status_is_a_whole_number_or_an_expression() -> None:
    source = workflow("do:\n  - stop: {raise: {error: {type: runtime, status: five}}}\n")
    assert problem_of(source) == (
        "Line 3, column 43, /do/0/stop/raise/error/status: Expected a whole number or an expression written "
        "${ … }"
    )


def test_parleys_problem_wins_over_the_schemas_at_the_same_place() -> None:
    # the schema would also say "Expected at most 1 field" and "Expected a mapping, found a whole number"
    source = workflow("do:\n  - {a: {set: {x: 1}}, b: {set: {x: 1}}}\n  - c: 5\n")
    assert problems_of(source) == [
        "Line 3, column 5, /do/0: Each item of a task list is a mapping with one key, the task's name, whose "
        "value is the task, such as '- ask: {call: run_definition, with: …}'",
        "Line 4, column 5, /do/1/c: A task is a mapping of its fields, such as 'set: {done: true}'",
    ]


# --- many problems ---------------------------------------------------------------------------------------


def test_at_most_20_problems_then_a_count() -> None:
    tasks = "".join(f"  - t{i}: {{set: {{x: '${{ $nope{i} }}'}}}}\n" for i in range(25))
    with pytest.raises(Problem) as caught:
        check_workflow_document(workflow("do:\n" + tasks))
    details = [entry.detail for entry in caught.value.errors]
    assert len(details) == 21
    assert details[0].startswith("Line 3, column 23, /do/0/t0/set/x: The expression reads $nope0")
    assert details[19].startswith("Line 22, column 24, /do/19/t19/set/x: ")
    assert details[20] == "Line 23: 5 more issues are not shown"
    assert caught.value.detail.startswith("The document has 25 problems: Line 3, column 23, /do/0/t0/set/x: ")
