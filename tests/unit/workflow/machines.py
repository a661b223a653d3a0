"""A corpus of workflow documents and how their runs end, for every construct the compiler compiles
(``parley.workflow.compiler``): the compiler's tests run every case on moto's Step Functions executor
(``moto_runs``), the local interpreter's tests run them too.

A :class:`Case` is a document (YAML text; the format page's two are ``examples.py``'s), the run's input,
and how the run ends: :class:`Succeeded` with the run's output, or :class:`Rejected` with the uncaught
error's type and status (and instance where the case is about it). A case with calls (``case.calls``)
gives, for each call or listen task's reference, what a fake entry answers its successive calls with
(:class:`Answer`: the called run's output or the events listened for, the error it ended with, or no
answer at all; the last answer repeats). ``emits`` are the events the emit tasks sent the entry,
``deadlines`` the calls, listens and tasks of several states whose timeout passed (the entry's
``deadline`` action).
``waits`` is what the retries' Wait states wait, in order (seconds), where the case is about it
(``None``: not checked); ``attempts`` the calls made, in order, as ``(task, attempt)`` (``None``: not
checked; a call that a ``then`` can run again has the time its state was entered in its attempt, so
its attempts differ from each other).

The execution's input is ``engine.execution_input(RUN, case.input, 0)``; the run's end is what the
machine's end Task sends the entry (``{"output"}`` or ``{"error"}``), which is also the execution's
output — or, where Step Functions failed the execution before its end (an expression of a Pass or a
Choice outside any ``try`` that failed), the error the runtime ends the run with from that failure
(:func:`run_ending`). Every document passes the checks of saving (``parley.workflow.document``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from unit.workflow.examples import BRIEF_APPROVAL, REVIEW_AND_APPROVE

from parley.workflow import engine
from parley.workflow.errors import PROBLEMS, spec_type
from parley.workflow.running import execution_error

#: The run every case runs as.
RUN: Final = {"org": "acme", "playbook": "campaigns", "run_id": "run-1"}
UNANSWERED: Final = PROBLEMS + "unanswered"
CANCELLED: Final = PROBLEMS + "cancelled"


@dataclass(frozen=True)
class Succeeded:
    output: Any


@dataclass(frozen=True)
class Rejected:
    type: str
    status: int
    instance: str | None = None


@dataclass(frozen=True)
class Answer:
    """What the entry answers a call with: the called run's output, or the error (a workflow error as
    JSON) it ended with."""

    output: Any = None
    error: Mapping[str, Any] | None = None
    #: Never answered (the task's ``timeout`` ends it).
    never: bool = False


@dataclass(frozen=True)
class Case:
    name: str
    document: str
    input: Any
    expected: Succeeded | Rejected
    answers: Mapping[str, tuple[Answer, ...]] = field(default_factory=dict)
    waits: tuple[int, ...] | None = None
    attempts: tuple[tuple[str, str], ...] | None = None
    #: The events the emit tasks sent the entry, in order, as ``(task, attempt, event)`` (``None``: not
    #: checked).
    emits: tuple[tuple[str, str, Mapping[str, Any]], ...] | None = None
    #: The deadlines the entry was told, as ``(task, attempt)``.
    deadlines: tuple[tuple[str, str], ...] = ()
    #: Its Waits race a timeout's clock: moto sleeps them (a twentieth of their seconds) rather than
    #: going on at once (``moto_runs``).
    real_waits: bool = False

    @property
    def calls(self) -> bool:
        """Whether the case's machine calls functions (moto cannot run it)."""
        return bool(self.answers)


def _doc(body: str, name: str = "case") -> str:
    return f"document: {{ dsl: '1.0.3', namespace: tests, name: {name}, version: '1.0.0' }}\n{body}"


_BRIEF_INPUT: Final = {"owner": "ana@example.com", "review": {"summary": "Spring campaign"}}
_UNANSWERED_EXPIRED: Final = {
    "type": UNANSWERED,
    "status": 410,
    "instance": "/do/0/approval/try/0/ask",
    "title": "The interaction 'approve-campaign-brief' went unanswered",
    "kind": "expired",
}
_UNAVAILABLE: Final = {
    "type": spec_type("communication"),
    "status": 503,
    "instance": "/do/0/review/try/0/run-review",
    "title": "The reasoning 'review-brief' was unavailable",
}
_TOOLS_UNFINISHED: Final = {
    "type": PROBLEMS + "tools_unfinished",
    "status": 503,
    "instance": "/do/0/review/try/0/run-review",
    "kind": "tools_unfinished",
}

CASES: Final[tuple[Case, ...]] = (
    # -- set, data between tasks ----------------------------------------------------------------------
    Case(
        "set a written value",
        _doc(
            "do:\n  - hello: { set: { greeting: hello, count: 2, enabled: true, none: null, list: [1, a] } }"
        ),
        {"ignored": True},
        Succeeded({"greeting": "hello", "count": 2, "enabled": True, "none": None, "list": [1, "a"]}),
    ),
    Case(
        "set values with expressions inside",
        _doc(
            "do:\n"
            "  - sum:\n"
            "      set:\n"
            "        total: '${ $data.a + $data.b }'\n"
            "        nested: { names: ['${ $uppercase($data.name) }', plain], same: '${ $data.list }' }\n"
            "        items: ['${ $data.list }', '${ $data.a }']\n"
        ),
        {"a": 2, "b": 3, "name": "ana", "list": [1, 2]},
        Succeeded({"total": 5, "nested": {"names": ["ANA", "plain"], "same": [1, 2]}, "items": [[1, 2], 2]}),
    ),
    Case(
        "set one expression",
        _doc("do:\n  - pick: { set: '${ $data.items[price > 2].name }' }"),
        {"items": [{"name": "a", "price": 1}, {"name": "b", "price": 3}, {"name": "c", "price": 5}]},
        Succeeded(["b", "c"]),
    ),
    Case(
        "set strings Step Functions would read otherwise",
        _doc(
            "do:\n"
            "  - odd:\n"
            "      set:\n"
            "        empty: ''\n"
            "        template: '{% 1 + 1 %}'\n"
            '        lines: "one\\ntwo"\n'
            "        dollar: '$data'\n"
            "        half: 'a ${ x } b'\n"
        ),
        {},
        Succeeded(
            {
                "empty": "",
                "template": "{% 1 + 1 %}",
                "lines": "one\ntwo",
                "dollar": "$data",
                "half": "a ${ x } b",
            }
        ),
    ),
    Case(
        "a multi-line expression",
        _doc(
            "do:\n"
            "  - lines:\n"
            "      set: |-\n"
            "        ${ {\n"
            '          "text": "one\n'
            '        two",\n'
            "          /* a comment\n"
            "             on two lines */\n"
            '          "sum": $data.a\n'
            "            + 1\n"
            "        } }\n"
        ),
        {"a": 1},
        Succeeded({"text": "one\ntwo", "sum": 2}),
    ),
    Case(
        "each task takes the output of the one before",
        _doc(
            "do:\n"
            "  - first: { set: { n: '${ $data.n + 1 }' } }\n"
            "  - second: { set: { n: '${ $data.n * 10 }', was: '${ $input }' } }\n"
        ),
        {"n": 1},
        Succeeded({"n": 20, "was": {"n": 2}}),
    ),
    Case(
        "a task's input.from, output.as and its $input",
        _doc(
            "do:\n"
            "  - shape:\n"
            "      input: { from: '${ $data.inner }' }\n"
            "      set: { doubled: '${ $data.v * 2 }', raw: '${ $input.keep }' }\n"
            "      output: { as: '${ $merge([$input, {\"result\": $data}]) }' }\n"
        ),
        {"inner": {"v": 21}, "keep": "k"},
        Succeeded({"inner": {"v": 21}, "keep": "k", "result": {"doubled": 42, "raw": "k"}}),
    ),
    Case(
        "input.from and output.as written as objects",
        _doc(
            "do:\n"
            "  - shape:\n"
            "      input: { from: { v: '${ $data.a }', fixed: 1 } }\n"
            "      set: '${ $data }'\n"
            "      output: { as: { got: '${ $data }', from: '${ $input.a }' } }\n"
        ),
        {"a": 5},
        Succeeded({"got": {"v": 5, "fixed": 1}, "from": 5}),
    ),
    Case(
        "export.as becomes $context",
        _doc(
            "do:\n"
            "  - before: { set: { context: '${ $context }' } }\n"
            "  - remember:\n"
            "      set: { id: 7 }\n"
            "      export: { as: '${ $merge([$context, {\"id\": $output.id}]) }' }\n"
            "  - again:\n"
            "      set: { ignored: true }\n"
            "      export: { as: '${ $merge([$context, {\"more\": $output.ignored}]) }' }\n"
            "  - after: { set: { before: '${ $input.ignored }', context: '${ $context }' } }\n"
        ),
        {},
        Succeeded({"before": True, "context": {"id": 7, "more": True}}),
    ),
    Case(
        "the document's input.from and output.as",
        _doc(
            "input: { from: '${ $data.payload }' }\n"
            'output: { as: \'${ {"result": $data, "original": $workflow.input.payload.x} }\' }\n'
            "do:\n"
            "  - add: { set: { x: '${ $data.x + 1 }' } }\n"
        ),
        {"payload": {"x": 1}},
        Succeeded({"result": {"x": 2}, "original": 1}),
    ),
    Case(
        "the run's variables: $workflow, $runtime, $task",
        _doc(
            "do:\n"
            "  - look:\n"
            "      set:\n"
            "        id: '${ $workflow.id }'\n"
            "        input: '${ $workflow.input }'\n"
            "        started: '${ $type($workflow.startedAt) }'\n"
            "        runtime: '${ $runtime.name }'\n"
            "        name: '${ $task.name }'\n"
            "        reference: '${ $task.reference }'\n"
            "        taskStarted: '${ $type($task.startedAt) }'\n"
        ),
        {"q": 1},
        Succeeded(
            {
                "id": "run-1",
                "input": {"q": 1},
                "started": "string",
                "runtime": "parley",
                "name": "look",
                "reference": "/do/0/look",
                "taskStarted": "string",
            }
        ),
    ),
    # -- if and then ----------------------------------------------------------------------------------
    Case(
        "if: a skipped task hands its input on and its then is not followed",
        _doc(
            "do:\n"
            "  - skipped: { if: '${ $data.go }', set: { went: true }, then: end }\n"
            "  - next: { set: { went: '${ $data.go }', seen: next } }\n"
        ),
        {"go": False},
        Succeeded({"went": False, "seen": "next"}),
    ),
    Case(
        "if: a condition holds unless false, null or nothing",
        _doc(
            "do:\n"
            "  - zero: { if: '$data.zero', set: '${ $merge([$data, {\"zero\": \"held\"}]) }' }\n"
            "  - empty: { if: '${ $data.empty }', set: '${ $merge([$data, {\"empty\": \"held\"}]) }' }\n"
            "  - none: { if: '${ $data.none }', set: '${ $merge([$data, {\"none\": \"held\"}]) }' }\n"
            "  - missing: { if: '$data.missing', set: '${ $merge([$data, {\"missing\": \"held\"}]) }' }\n"
            "  - list: { if: '${ $data.list }', set: '${ $merge([$data, {\"list\": \"held\"}]) }' }\n"
        ),
        {"zero": 0, "empty": "", "none": None, "list": []},
        Succeeded({"zero": "held", "empty": "held", "none": None, "list": "held"}),
    ),
    Case(
        "then: end ends the run with the current data",
        _doc(
            "output: { as: '${ {\"out\": $data} }' }\n"
            "do:\n"
            "  - first: { set: { n: 1 }, then: end }\n"
            "  - never: { set: { n: 2 } }\n"
        ),
        {},
        Succeeded({"out": {"n": 1}}),
    ),
    Case(
        "then: a sibling forwards",
        _doc(
            "do:\n"
            "  - first: { set: { path: [first] }, then: third }\n"
            "  - second: { set: { path: '${ $append($data.path, \"second\") }' } }\n"
            "  - third: { set: { path: '${ $append($data.path, \"third\") }' } }\n"
        ),
        {},
        Succeeded({"path": ["first", "third"]}),
    ),
    Case(
        "then: a sibling back (a loop)",
        _doc(
            "do:\n"
            "  - start: { set: { n: 0 } }\n"
            "  - count: { set: { n: '${ $data.n + 1 }' } }\n"
            "  - again:\n"
            "      switch:\n"
            "        - more: { when: '${ $data.n < 3 }', then: count }\n"
            "        - enough: { then: continue }\n"
            "  - done: { set: { counted: '${ $data.n }' } }\n"
        ),
        {},
        Succeeded({"counted": 3}),
    ),
    Case(
        "then: exit leaves the list of a do",
        _doc(
            "do:\n"
            "  - outer:\n"
            "      do:\n"
            "        - one: { set: { n: 1 }, then: exit }\n"
            "        - two: { set: { n: 2 } }\n"
            '      output: { as: \'${ {"inner": $data, "input": $input} }\' }\n'
            "  - after: { set: '${ $merge([$data, {\"after\": true}]) }' }\n"
        ),
        {"x": 0},
        Succeeded({"inner": {"n": 1}, "input": {"x": 0}, "after": True}),
    ),
    Case(
        "do: a list inside a task, with input.from and export.as",
        _doc(
            "do:\n"
            "  - outer:\n"
            "      input: { from: '${ $data.inner }' }\n"
            "      do:\n"
            "        - one: { set: { v: '${ $data.v + 1 }', task: '${ $task.reference }' } }\n"
            "        - two: { set: { v: '${ $data.v * 2 }', task: '${ $data.task }' } }\n"
            "      export: { as: '${ {\"v\": $output.v} }' }\n"
            "  - after: { set: { v: '${ $data.v }', context: '${ $context }', task: '${ $data.task }' } }\n"
        ),
        {"inner": {"v": 1}},
        Succeeded({"v": 4, "context": {"v": 4}, "task": "/do/0/outer/do/0/one"}),
    ),
    # -- switch ---------------------------------------------------------------------------------------
    Case(
        "switch: the first case that holds; its output is its input",
        _doc(
            "do:\n"
            "  - route:\n"
            "      switch:\n"
            "        - small: { when: '${ $data.n < 10 }', then: small }\n"
            "        - big: { when: '${ $data.n >= 10 }', then: big }\n"
            "        - other: { then: end }\n"
            '  - small: { set: \'${ $merge([$data, {"size": "small"}]) }\', then: end }\n'
            '  - big: { set: \'${ $merge([$data, {"size": "big"}]) }\' }\n'
        ),
        {"n": 12},
        Succeeded({"n": 12, "size": "big"}),
    ),
    Case(
        "switch: the default case",
        _doc(
            "do:\n"
            "  - route:\n"
            "      switch:\n"
            "        - small: { when: '${ $data.n < 10 }', then: small }\n"
            "        - other: { then: end }\n"
            "  - small: { set: { size: small } }\n"
        ),
        {"n": 12},
        Succeeded({"n": 12}),
    ),
    Case(
        "switch: no case holds and none is the default",
        _doc(
            "do:\n"
            "  - route:\n"
            "      switch:\n"
            "        - small: { when: '${ $data.n < 10 }', then: end }\n"
            "  - next: { set: { went: onwards } }\n"
        ),
        {"n": 12},
        Succeeded({"went": "onwards"}),
    ),
    Case(
        "switch: input.from, output.as and export.as",
        _doc(
            "do:\n"
            "  - route:\n"
            "      input: { from: '${ $data.inner }' }\n"
            "      switch:\n"
            "        - yes: { when: '${ $data.flag }', then: continue }\n"
            "      output: { as: '${ {\"routed\": $data} }' }\n"
            "      export: { as: '${ {\"seen\": true} }' }\n"
            "  - after: { set: { data: '${ $data }', context: '${ $context }' } }\n"
        ),
        {"inner": {"flag": True}},
        Succeeded({"data": {"routed": {"inner": {"flag": True}}}, "context": {"seen": True}}),
    ),
    # -- raise ----------------------------------------------------------------------------------------
    Case(
        "raise an error written inline",
        _doc(
            "do:\n"
            "  - stop:\n"
            "      raise:\n"
            "        error: { type: https://example.com/errors/stop, status: 422, title: Stopped }\n"
        ),
        {},
        Rejected("https://example.com/errors/stop", 422, "/do/0/stop"),
    ),
    Case(
        "raise a named error with expressions; a short type",
        _doc(
            "use:\n"
            "  errors:\n"
            "    bad: { type: validation, status: '${ $data.code }', title: '${ \"Bad \" & $data.what }' }\n"
            "do:\n"
            "  - check: { raise: { error: bad } }\n"
        ),
        {"code": 400, "what": "input"},
        Rejected(spec_type("validation"), 400, "/do/0/check"),
    ),
    Case(
        "raise with its own instance",
        _doc(
            "do:\n"
            "  - stop:\n"
            "      raise:\n"
            "        error: { type: runtime, status: 500, instance: /somewhere/else }\n"
        ),
        {},
        Rejected(spec_type("runtime"), 500, "/somewhere/else"),
    ),
    Case(
        "an expression that fails raises the expression error",
        _doc("do:\n  - broken: { set: { n: '${ $number(\"not a number\") }' } }"),
        {},
        Rejected(spec_type("expression"), 400),
    ),
    Case(
        "an expression that gives nothing raises the expression error",
        _doc("do:\n  - missing: { set: { n: '${ $data.missing }' } }"),
        {},
        Rejected(spec_type("expression"), 400),
    ),
    # -- try and catch --------------------------------------------------------------------------------
    Case(
        "try: the list's output when nothing fails",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - one: { set: { n: '${ $data.n + 1 }' } }\n"
            "        - two: { set: { n: '${ $data.n + 1 }' } }\n"
            "      catch:\n"
            "        do:\n"
            "          - never: { set: { n: -1 } }\n"
        ),
        {"n": 0},
        Succeeded({"n": 2}),
    ),
    Case(
        "catch: every error, catch.do's output is the task's",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - fail:\n"
            "            raise: { error: { type: https://example.com/e, status: 418, title: Teapot } }\n"
            "      catch:\n"
            "        do:\n"
            "          - recover: { set: { caught: '${ $error }', data: '${ $data }' } }\n"
            "  - after: { set: '${ $merge([$data, {\"after\": true}]) }' }\n"
        ),
        {"x": 1},
        Succeeded(
            {
                "caught": {
                    "type": "https://example.com/e",
                    "status": 418,
                    "instance": "/do/0/guarded/try/0/fail",
                    "title": "Teapot",
                },
                "data": {"x": 1},
                "after": True,
            }
        ),
    ),
    Case(
        "catch: taken without do, the task hands its input on",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - change: { set: { changed: true } }\n"
            "        - fail: { raise: { error: { type: runtime, status: 500 } } }\n"
            "      catch: { errors: { with: { status: 500 } } }\n"
        ),
        {"x": 1},
        Succeeded({"x": 1}),
    ),
    Case(
        "catch: errors.with that does not match raises it again",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - fail: { raise: { error: { type: https://example.com/e, status: 418 } } }\n"
            "      catch:\n"
            "        errors: { with: { status: 503 } }\n"
            "        do:\n"
            "          - never: { set: { n: 1 } }\n"
        ),
        {},
        Rejected("https://example.com/e", 418, "/do/0/guarded/try/0/fail"),
    ),
    Case(
        "catch: every field of errors.with, and as",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - fail:\n"
            "            raise:\n"
            "              error:\n"
            "                type: https://example.com/e\n"
            "                status: 409\n"
            "                title: Conflict\n"
            "                detail: It clashed\n"
            "                instance: /here\n"
            "                kind: clash\n"
            "                because: the other one was first\n"
            "      catch:\n"
            "        errors:\n"
            "          with:\n"
            "            type: https://example.com/e\n"
            "            status: 409\n"
            "            title: Conflict\n"
            "            detail: It clashed\n"
            "            instance: /here\n"
            "            kind: clash\n"
            "            because: the other one was first\n"
            "        as: problem\n"
            "        do:\n"
            "          - recover: { set: { title: '${ $problem.title }' } }\n"
        ),
        {},
        Succeeded({"title": "Conflict"}),
    ),
    Case(
        "catch: types by their short name and their former address",
        _doc(
            "do:\n"
            "  - former:\n"
            "      try:\n"
            "        - fail: { raise: { error: { type: validation, status: 400 } } }\n"
            "      catch:\n"
            "        errors: { with: { type: https://serverlessworkflow.io/spec/1.0.0/errors/validation } }\n"
            "        do:\n"
            "          - recover: { set: { first: '${ $error.type }' } }\n"
            "  - short:\n"
            "      try:\n"
            "        - fail:\n"
            "            raise:\n"
            "              error:\n"
            "                { type: https://serverlessworkflow.io/spec/1.0.0/errors/runtime, status: 500 }\n"
            "      catch:\n"
            "        errors: { with: { type: runtime } }\n"
            "        do:\n"
            "          - recover: { set: '${ $merge([$data, {\"second\": $error.type}]) }' }\n"
        ),
        {},
        Succeeded({"first": spec_type("validation"), "second": spec_type("runtime")}),
    ),
    Case(
        "catch: when and exceptWhen",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - fail: { raise: { error: { type: runtime, status: 500, detail: '${ $data.why }' } } }\n"
            "      catch:\n"
            "        when: '${ $error.detail = \"transient\" }'\n"
            "        exceptWhen: '${ $data.strict }'\n"
            "        do:\n"
            "          - recover: { set: { recovered: '${ $error.detail }' } }\n"
        ),
        {"why": "transient", "strict": False},
        Succeeded({"recovered": "transient"}),
    ),
    Case(
        "catch: exceptWhen holds, the error is not taken",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - fail: { raise: { error: { type: runtime, status: 500, detail: '${ $data.why }' } } }\n"
            "      catch:\n"
            "        when: '${ $error.detail = \"transient\" }'\n"
            "        exceptWhen: '${ $data.strict }'\n"
            "        do:\n"
            "          - recover: { set: { recovered: true } }\n"
        ),
        {"why": "transient", "strict": True},
        Rejected(spec_type("runtime"), 500, "/do/0/guarded/try/0/fail"),
    ),
    Case(
        "catch: an expression's failure is the expression error (400)",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - broken: { set: { n: '${ $number(\"x\") }' } }\n"
            "      catch:\n"
            "        errors: { with: { status: 400, type: expression } }\n"
            "        do:\n"
            "          - recover: { set: { type: '${ $error.type }', status: '${ $error.status }' } }\n"
        ),
        {},
        Succeeded({"type": spec_type("expression"), "status": 400}),
    ),
    Case(
        "catch.do's then: exit, and the try's output.as",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - fail: { raise: { error: { type: runtime, status: 500 } } }\n"
            "      catch:\n"
            "        do:\n"
            "          - one: { set: { n: 1 }, then: exit }\n"
            "          - two: { set: { n: 2 } }\n"
            '      output: { as: \'${ {"out": $data, "in": $input} }\' }\n'
        ),
        {"x": 1},
        Succeeded({"out": {"n": 1}, "in": {"x": 1}}),
    ),
    Case(
        "nested try: the inner catch raises it again, the outer takes it",
        _doc(
            "do:\n"
            "  - outer:\n"
            "      try:\n"
            "        - inner:\n"
            "            try:\n"
            "              - fail: { raise: { error: { type: https://example.com/deep, status: 404 } } }\n"
            "            catch:\n"
            "              errors: { with: { status: 500 } }\n"
            "      catch:\n"
            "        errors: { with: { status: 404 } }\n"
            "        do:\n"
            "          - recover: { set: { from: '${ $error.instance }' } }\n"
        ),
        {},
        Succeeded({"from": "/do/0/outer/try/0/inner/try/0/fail"}),
    ),
    Case(
        "export.as inside a try, read after it",
        _doc(
            "do:\n"
            "  - first: { set: { a: 1 }, export: { as: '${ {\"a\": 1} }' } }\n"
            "  - guarded:\n"
            "      try:\n"
            "        - inside: { set: { b: 2 }, export: { as: '${ $merge([$context, {\"b\": 2}]) }' } }\n"
            "        - read: { set: { inside: '${ $context }' } }\n"
            "      catch: {}\n"
            "  - after: { set: { inside: '${ $data.inside }', after: '${ $context }' } }\n"
        ),
        {},
        Succeeded({"inside": {"a": 1, "b": 2}, "after": {"a": 1, "b": 2}}),
    ),
    Case(
        "then: end inside a try ends the run",
        _doc(
            "output: { as: '${ {\"ended\": $data} }' }\n"
            "do:\n"
            "  - outer:\n"
            "      do:\n"
            "        - guarded:\n"
            "            try:\n"
            "              - stop: { set: { stopped: true }, then: end }\n"
            "              - never: { set: { stopped: false } }\n"
            "            catch: {}\n"
            "            output: { as: { never: true } }\n"
            "        - never: { set: { never: true } }\n"
            "  - never: { set: { never: true } }\n"
        ),
        {},
        Succeeded({"ended": {"stopped": True}}),
    ),
    Case(
        "then: end inside a try, not taken: the try goes on",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - maybe: { if: '${ $data.stop }', set: { stopped: true }, then: end }\n"
            "        - carry-on: { set: { stopped: false } }\n"
            "      catch: {}\n"
            "      output: { as: '${ $merge([$data, {\"shaped\": true}]) }' }\n"
        ),
        {"stop": False},
        Succeeded({"stopped": False, "shaped": True}),
    ),
    Case(
        "long references: state names cut with a digest",
        _doc(
            "do:\n"
            "  - a-task-whose-name-is-long-enough-to-matter:\n"
            "      do:\n"
            "        - another-task-with-a-name-that-is-rather-long:\n"
            "            try:\n"
            "              - the-innermost-task-with-the-longest-name-of-them-all:\n"
            "                  if: '${ $data.go }'\n"
            "                  set: { deep: '${ $task.reference }' }\n"
            "              - and-one-that-fails-so-that-the-catch-reads-the-name-of-its-state:\n"
            "                  set: { n: '${ $number(\"x\") }' }\n"
            "            catch:\n"
            "              as: failure\n"
            "              do:\n"
            "                - recover: { set: { caught: '${ $failure.type }', data: '${ $data }' } }\n"
        ),
        {"go": True},
        Succeeded({"caught": spec_type("expression"), "data": {"go": True}}),
    ),
    # -- states that stand for several tasks ----------------------------------------------------------
    Case(
        "do: a list without shaping, its first and last states start and complete it",
        _doc(
            "do:\n"
            "  - outer:\n"
            "      do:\n"
            "        - one: { set: { n: '${ $data.n + 1 }' } }\n"
            "        - inner:\n"
            "            do:\n"
            "              - two: { set: { n: '${ $data.n * 10 }' } }\n"
            "  - after: { set: '${ $merge([$data, {\"after\": true}]) }' }\n"
        ),
        {"n": 1},
        Succeeded({"n": 20, "after": True}),
    ),
    Case(
        "do: a skipped last task completes its list",
        _doc(
            "do:\n"
            "  - outer:\n"
            "      do:\n"
            "        - one: { set: { n: 1 } }\n"
            "        - maybe: { if: '${ $data.n > 1 }', set: { n: 2 } }\n"
            "  - after: { set: { n: '${ $data.n }', after: true } }\n"
        ),
        {},
        Succeeded({"n": 1, "after": True}),
    ),
    Case(
        "do: a case that exits its list and one that ends the run",
        _doc(
            "do:\n"
            "  - first: { set: '${ $data }' }\n"
            "  - outer:\n"
            "      do:\n"
            "        - route:\n"
            "            switch:\n"
            "              - out: { when: '${ $data.way = \"exit\" }', then: exit }\n"
            "              - stop: { when: '${ $data.way = \"end\" }', then: end }\n"
            "        - more: { set: '${ $merge([$data, {\"more\": true}]) }' }\n"
        ),
        {"way": "exit"},
        Succeeded({"way": "exit"}),
    ),
    Case(
        "try: several tasks, the recovery's first set is the catch's rule, more tasks after it",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - one: { set: { n: 1 } }\n"
            "        - fail: { raise: { error: { type: communication, status: 503, detail: busy } } }\n"
            "      catch:\n"
            "        errors: { with: { status: 503 } }\n"
            "        do:\n"
            "          - first: { set: { why: '${ $error.detail }', was: '${ $data }' } }\n"
            "          - second: { set: '${ $merge([$data, {\"second\": true}]) }' }\n"
            "  - after: { set: '${ $merge([$data, {\"after\": true}]) }' }\n"
        ),
        {"x": 1},
        Succeeded({"why": "busy", "was": {"x": 1}, "second": True, "after": True}),
    ),
    Case(
        "try: the recovery's set exports from the catch's rule",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - fail: { raise: { error: { type: runtime, status: 500, title: Broke } } }\n"
            "      catch:\n"
            "        errors: { with: { status: 500 } }\n"
            "        do:\n"
            "          - note:\n"
            "              set: { noted: true }\n"
            "              export: { as: '${ {\"title\": $error.title} }' }\n"
            "  - after: { set: { data: '${ $data }', context: '${ $context }' } }\n"
        ),
        {},
        Succeeded({"data": {"noted": True}, "context": {"title": "Broke"}}),
    ),
    Case(
        "the document's input.from, read by the first state",
        _doc(
            'input: { from: \'${ {"v": $data.x, "id": $workflow.id} }\' }\n'
            "do:\n"
            "  - first: { set: { v: '${ $data.v }', id: '${ $data.id }', input: '${ $input }' } }\n"
        ),
        {"x": 3},
        Succeeded({"v": 3, "id": "run-1", "input": {"v": 3, "id": "run-1"}}),
    ),
    Case(
        "a first task that exports, then reads its context",
        _doc(
            "do:\n"
            "  - first: { set: { a: 1 }, export: { as: '${ $merge([$context, {\"n\": 2}]) }' } }\n"
            "  - second: { set: { context: '${ $context }', data: '${ $data }' } }\n"
        ),
        {},
        Succeeded({"context": {"n": 2}, "data": {"a": 1}}),
    ),
    Case(
        "an uncaught raise inside a do, outside any try",
        _doc(
            "do:\n"
            "  - outer:\n"
            "      do:\n"
            "        - one: { set: { n: 1 } }\n"
            "        - stop:\n"
            "            raise:\n"
            "              error: { type: validation, status: 400, detail: '${ $string($data.n) }' }\n"
        ),
        {},
        Rejected(spec_type("validation"), 400, "/do/0/outer/do/1/stop"),
    ),
    # -- retry ----------------------------------------------------------------------------------------
    Case(
        "retry: the try runs again after each delay (exponential), then catch.do",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - fail: { raise: { error: { type: communication, status: 503 } } }\n"
            "      catch:\n"
            "        errors: { with: { status: 503 } }\n"
            "        retry:\n"
            "          delay: { seconds: 2 }\n"
            "          backoff: { exponential: {} }\n"
            "          limit: { attempt: { count: 3 } }\n"
            "        do:\n"
            "          - gave-up: { set: { gaveUp: '${ $error.status }' } }\n"
        ),
        {},
        Succeeded({"gaveUp": 503}),
        waits=(2, 4, 8),
    ),
    Case(
        "retry: linear backoff, from use.retries",
        _doc(
            "use:\n"
            "  retries:\n"
            "    steady: { delay: PT3S, backoff: { linear: {} }, limit: { attempt: { count: 2 } } }\n"
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - fail: { raise: { error: { type: communication, status: 503 } } }\n"
            "      catch: { retry: steady }\n"
        ),
        {"kept": 1},
        Succeeded({"kept": 1}),
        waits=(3, 6),
    ),
    Case(
        "retry: constant delay, in milliseconds rounded up to seconds",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - fail: { raise: { error: { type: communication, status: 503 } } }\n"
            "      catch:\n"
            "        retry:\n"
            "          delay: { milliseconds: 1500 }\n"
            "          backoff: { constant: {} }\n"
            "          limit: { attempt: { count: 2 } }\n"
        ),
        {},
        Succeeded({}),
        waits=(2, 2),
    ),
    Case(
        "retry: when and exceptWhen",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - fail:\n"
            "            raise: { error: { type: communication, status: 503, detail: '${ $data.why }' } }\n"
            "      catch:\n"
            "        retry:\n"
            "          delay: PT1S\n"
            "          limit: { attempt: { count: 5 } }\n"
            "          when: '${ $error.detail = \"busy\" }'\n"
            "          exceptWhen: '${ $data.never }'\n"
        ),
        {"why": "down"},
        Succeeded({"why": "down"}),
        waits=(),
    ),
    Case(
        "retry: limit.duration and jitter",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - fail: { raise: { error: { type: communication, status: 503 } } }\n"
            "      catch:\n"
            "        retry:\n"
            "          delay: PT1S\n"
            "          jitter: { from: PT0S, to: PT1S }\n"
            "          limit: { attempt: { count: 2, duration: PT1H }, duration: P1D }\n"
            "        do:\n"
            "          - gave-up: { set: { gaveUp: true } }\n"
        ),
        {},
        Succeeded({"gaveUp": True}),
    ),
    Case(
        "asking again: a catch of every error takes unanswered but does not retry it",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - ask:\n"
            "            raise:\n"
            "              error: { type: https://on.auto/problems/unanswered, status: 410, kind: expired }\n"
            "      catch:\n"
            "        retry: { delay: PT1S, limit: { attempt: { count: 3 } } }\n"
            "        do:\n"
            "          - recover: { set: { taken: '${ $error.kind }' } }\n"
        ),
        {},
        Succeeded({"taken": "expired"}),
        waits=(),
    ),
    Case(
        "asking again: a catch by status 410 takes unanswered but does not retry it",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - ask:\n"
            "            raise: { error: { type: https://on.auto/problems/unanswered, status: 410 } }\n"
            "      catch:\n"
            "        errors: { with: { status: 410 } }\n"
            "        retry: { delay: PT1S, limit: { attempt: { count: 3 } } }\n"
        ),
        {"kept": True},
        Succeeded({"kept": True}),
        waits=(),
    ),
    Case(
        "asking again: a catch naming unanswered retries it",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - ask:\n"
            "            raise: { error: { type: https://on.auto/problems/unanswered, status: 410 } }\n"
            "      catch:\n"
            "        errors: { with: { type: https://on.auto/problems/unanswered } }\n"
            "        retry: { delay: PT1S, limit: { attempt: { count: 2 } } }\n"
            "        do:\n"
            "          - recover: { set: { asked: again } }\n"
        ),
        {},
        Succeeded({"asked": "again"}),
        waits=(1, 1),
    ),
    Case(
        "asking again: cancelled is not retried by a catch naming unanswered",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - ask: { raise: { error: { type: https://on.auto/problems/cancelled, status: 409 } } }\n"
            "      catch:\n"
            "        errors: { with: { status: 409 } }\n"
            "        retry: { delay: PT1S, limit: { attempt: { count: 2 } } }\n"
            "        do:\n"
            "          - recover: { set: { cancelled: true } }\n"
        ),
        {},
        Succeeded({"cancelled": True}),
        waits=(),
    ),
    Case(
        "retry: nested tries, each with its own count",
        _doc(
            "do:\n"
            "  - outer:\n"
            "      try:\n"
            "        - inner:\n"
            "            try:\n"
            "              - fail: { raise: { error: { type: communication, status: 503 } } }\n"
            "            catch:\n"
            "              retry: { delay: PT1S, limit: { attempt: { count: 1 } } }\n"
            "              do:\n"
            "                - again: { raise: { error: { type: runtime, status: 500 } } }\n"
            "      catch:\n"
            "        errors: { with: { status: 500 } }\n"
            "        retry: { delay: PT10S, limit: { attempt: { count: 1 } } }\n"
            "        do:\n"
            "          - done: { set: { done: true } }\n"
        ),
        {},
        Succeeded({"done": True}),
        waits=(1, 10, 1),
    ),
    # -- calls ----------------------------------------------------------------------------------------
    Case(
        "brief-approval: answered",
        BRIEF_APPROVAL,
        _BRIEF_INPUT,
        Succeeded({"verdict": "approve"}),
        answers={"/do/0/approval/try/0/ask": (Answer(output={"verdict": "approve"}),)},
    ),
    Case(
        "brief-approval: expired, caught",
        BRIEF_APPROVAL,
        _BRIEF_INPUT,
        Succeeded({"verdict": "revise", "note": "No answer within two days"}),
        answers={"/do/0/approval/try/0/ask": (Answer(error=_UNANSWERED_EXPIRED),)},
    ),
    Case(
        "brief-approval: unanswered of another kind is not caught",
        BRIEF_APPROVAL,
        _BRIEF_INPUT,
        Rejected(UNANSWERED, 410, "/do/0/approval/try/0/ask"),
        answers={"/do/0/approval/try/0/ask": (Answer(error={**_UNANSWERED_EXPIRED, "kind": "withdrawn"}),)},
    ),
    Case(
        "review-and-approve: approved",
        REVIEW_AND_APPROVE,
        {"brief": "Spring", "owner": "ana@example.com"},
        Succeeded({"approved": True, "review": {"score": 9}}),
        answers={
            "/do/0/review/try/0/run-review": (Answer(output={"score": 9}),),
            "/do/1/approval": (Answer(output={"verdict": "approve"}),),
        },
    ),
    Case(
        "review-and-approve: a revision asked",
        REVIEW_AND_APPROVE,
        {"brief": "Spring", "owner": "ana@example.com"},
        Rejected("https://example.com/errors/revision-asked", 422, "/do/4/stop"),
        answers={
            "/do/0/review/try/0/run-review": (Answer(output={"score": 3}),),
            "/do/1/approval": (Answer(output={"verdict": "revise"}),),
        },
    ),
    Case(
        "review-and-approve: the review retried while unavailable",
        REVIEW_AND_APPROVE,
        {"brief": "Spring", "owner": "ana@example.com"},
        Succeeded({"approved": True, "review": {"score": 7}}),
        answers={
            "/do/0/review/try/0/run-review": (
                Answer(error=_UNAVAILABLE),
                Answer(error=_TOOLS_UNFINISHED),
                Answer(output={"score": 7}),
            ),
            "/do/1/approval": (Answer(output={"verdict": "approve"}),),
        },
        waits=(5, 10),
        attempts=(
            ("/do/0/review/try/0/run-review", "0"),
            ("/do/0/review/try/0/run-review", "1"),
            ("/do/0/review/try/0/run-review", "2"),
            ("/do/1/approval", "0"),
        ),
    ),
    Case(
        "review-and-approve: the review unavailable after every retry",
        REVIEW_AND_APPROVE,
        {"brief": "Spring", "owner": "ana@example.com"},
        Succeeded({"approved": True, "review": {"brief": "Spring", "owner": "ana@example.com"}}),
        answers={
            "/do/0/review/try/0/run-review": (Answer(error=_UNAVAILABLE),),
            "/do/1/approval": (Answer(output={"verdict": "approve"}),),
        },
        waits=(5, 10, 20),
    ),
    Case(
        "a call's input, its with.input left out, output.as and export.as",
        _doc(
            "do:\n"
            "  - first:\n"
            "      call: run_definition\n"
            "      with: { type: reasoning, name: summarize }\n"
            '      output: { as: \'${ {"summary": $data, "from": $input.text} }\' }\n'
            "      export: { as: '${ {\"summary\": $output.summary} }' }\n"
            "  - second:\n"
            "      call: run_definition\n"
            "      with: { type: workflow, name: publish, input: { summary: '${ $context.summary }' } }\n"
        ),
        {"text": "long"},
        Succeeded({"published": True}),
        answers={
            "/do/0/first": (Answer(output="short"),),
            "/do/1/second": (Answer(output={"published": True}),),
        },
    ),
    Case(
        "calls in nested retries: the attempt joins every retry's count",
        _doc(
            "do:\n"
            "  - outer:\n"
            "      try:\n"
            "        - inner:\n"
            "            try:\n"
            "              - ask: { call: run_definition, with: { type: interaction, name: ask } }\n"
            "            catch:\n"
            "              errors: { with: { status: 500 } }\n"
            "              retry: { delay: PT1S, limit: { attempt: { count: 1 } } }\n"
            "              do:\n"
            "                - again: { raise: { error: { type: runtime, status: 500, title: Gave up } } }\n"
            "      catch:\n"
            "        errors: { with: { title: Gave up } }\n"
            "        retry: { delay: PT10S, limit: { attempt: { count: 1 } } }\n"
            "        do:\n"
            "          - gave-up: { set: { gaveUp: '${ $error.instance }' } }\n"
        ),
        {},
        Succeeded({"gaveUp": "/do/0/outer/try/0/inner/catch/do/0/again"}),
        answers={
            "/do/0/outer/try/0/inner/try/0/ask": (
                Answer(error={"type": spec_type("runtime"), "status": 500, "instance": "/x"}),
            )
        },
        waits=(1, 10, 1),
        attempts=(
            ("/do/0/outer/try/0/inner/try/0/ask", "0.0"),
            ("/do/0/outer/try/0/inner/try/0/ask", "0.1"),
            ("/do/0/outer/try/0/inner/try/0/ask", "1.0"),
            ("/do/0/outer/try/0/inner/try/0/ask", "1.1"),
        ),
    ),
    Case(
        "a call a then runs again",
        _doc(
            "do:\n"
            "  - start: { set: { n: 0 } }\n"
            "  - ask:\n"
            "      call: run_definition\n"
            "      with: { type: interaction, name: ask, input: '${ $data }' }\n"
            "      output: { as: '${ $merge([$input, {\"n\": $input.n + 1}]) }' }\n"
            "  - again:\n"
            "      switch:\n"
            "        - more: { when: '${ $data.n < 2 }', then: ask }\n"
        ),
        {},
        Succeeded({"n": 2}),
        answers={"/do/1/ask": (Answer(output={}),)},
    ),
    Case(
        "a call that fails, not caught",
        _doc(
            "do:\n"
            "  - call-it:\n"
            "      call: run_definition\n"
            "      with: { type: interaction, name: ask, input: {} }\n"
        ),
        {},
        Rejected(spec_type("runtime"), 500, "/do/0/call-it"),
        answers={
            "/do/0/call-it": (
                Answer(error={"type": spec_type("runtime"), "status": 500, "instance": "/do/0/call-it"}),
            )
        },
    ),
    Case(
        "a call's expression that fails outside any try is its task's expression error",
        _doc(
            "do:\n"
            "  - ask:\n"
            "      call: run_definition\n"
            "      with: { type: interaction, name: ask, input: { n: '${ $number(\"x\") }' } }\n"
        ),
        {},
        Rejected(spec_type("expression"), 400, "/do/0/ask"),
        answers={"/do/0/ask": (Answer(output={}),)},
    ),
    Case(
        "a try of one call inside a try: its own catch first",
        _doc(
            "do:\n"
            "  - outer:\n"
            "      try:\n"
            "        - inner:\n"
            "            try:\n"
            "              - ask: { call: run_definition, with: { type: interaction, name: ask } }\n"
            "            catch:\n"
            "              errors: { with: { status: 503 } }\n"
            "              do:\n"
            "                - retried: { set: { inner: '${ $error.status }' } }\n"
            "        - next: { set: '${ $merge([$data, {\"next\": true}]) }' }\n"
            "      catch:\n"
            "        do:\n"
            "          - outer-caught: { set: { outer: '${ $error.status }' } }\n"
        ),
        {},
        Succeeded({"inner": 503, "next": True}),
        answers={
            "/do/0/outer/try/0/inner/try/0/ask": (
                Answer(error={"type": spec_type("communication"), "status": 503}),
            )
        },
    ),
    Case(
        "a try of one call inside a try: what its catch does not take goes out",
        _doc(
            "do:\n"
            "  - outer:\n"
            "      try:\n"
            "        - inner:\n"
            "            try:\n"
            "              - ask: { call: run_definition, with: { type: interaction, name: ask } }\n"
            "            catch:\n"
            "              errors: { with: { status: 503 } }\n"
            "        - next: { set: { never: true } }\n"
            "      catch:\n"
            "        do:\n"
            "          - outer-caught: { set: { outer: '${ $error.status }', at: '${ $error.instance }' } }\n"
        ),
        {},
        Succeeded({"outer": 500, "at": "/do/0/outer/try/0/inner/try/0/ask"}),
        answers={
            "/do/0/outer/try/0/inner/try/0/ask": (
                Answer(
                    error={
                        "type": spec_type("runtime"),
                        "status": 500,
                        "instance": "/do/0/outer/try/0/inner/try/0/ask",
                    }
                ),
            )
        },
    ),
    Case(
        "a try of one call that exports: a failure leaves $context as it was",
        _doc(
            "do:\n"
            "  - start: { set: { go: true }, export: { as: { before: true } } }\n"
            "  - first:\n"
            "      try:\n"
            "        - ask:\n"
            "            call: run_definition\n"
            "            with: { type: interaction, name: ask }\n"
            "            export: { as: '${ $merge([$context, {\"asked\": $output}]) }' }\n"
            "      catch: {}\n"
            "  - second:\n"
            "      try:\n"
            "        - ask:\n"
            "            call: run_definition\n"
            "            with: { type: interaction, name: ask-again }\n"
            "            export: { as: '${ $merge([$context, {\"again\": $output}]) }' }\n"
            "      catch: {}\n"
            "  - after: { set: { context: '${ $context }' } }\n"
        ),
        {},
        Succeeded({"context": {"before": True, "asked": "yes"}}),
        answers={
            "/do/1/first/try/0/ask": (Answer(output="yes"),),
            "/do/2/second/try/0/ask": (Answer(error={"type": spec_type("runtime"), "status": 500}),),
        },
    ),
    # -- wait ------------------------------------------------------------------------------------------
    Case(
        "wait: ISO 8601, a mapping and an expression, each handing its input on",
        _doc(
            "do:\n"
            "  - short: { wait: PT30S }\n"
            "  - mapped: { wait: { minutes: 1, seconds: 5, milliseconds: 100 } }\n"
            "  - computed: { wait: '${ $data.delay }' }\n"
        ),
        {"delay": "PT2S", "x": 1},
        Succeeded({"delay": "PT2S", "x": 1}),
        waits=(30, 66, 2),
    ),
    Case(
        "wait: output.as and export.as",
        _doc(
            "do:\n"
            "  - pause:\n"
            "      wait: { seconds: 3 }\n"
            "      output: { as: '${ {\"waited\": $data.x} }' }\n"
            "      export: { as: '${ {\"seen\": $output.waited} }' }\n"
            "  - after: { set: { context: '${ $context }', data: '${ $data }' } }\n"
        ),
        {"x": 7},
        Succeeded({"context": {"seen": 7}, "data": {"waited": 7}}),
        waits=(3,),
    ),
    Case(
        "wait: a timeout shorter than the wait raises timeout at the task",
        _doc("do:\n  - long: { wait: PT1H, timeout: { after: PT10M } }\n  - never: { set: { n: 1 } }\n"),
        {},
        Rejected(spec_type("timeout"), 408, "/do/0/long"),
        waits=(600,),
    ),
    Case(
        "wait: a timeout longer than the wait changes nothing; the document's timeout",
        _doc(
            "timeout: { after: P1D }\n"
            "use: { timeouts: { quick: { after: PT1M } } }\n"
            "do:\n  - short: { wait: PT5S, timeout: quick }\n  - done: { set: { done: true } }\n"
        ),
        {},
        Succeeded({"done": True}),
        waits=(5,),
    ),
    # -- emit ------------------------------------------------------------------------------------------
    Case(
        "emit: the event evaluated, the task's output its input",
        _doc(
            "do:\n"
            "  - tell:\n"
            "      emit:\n"
            "        event:\n"
            "          with:\n"
            "            type: com.acme.brief.approved\n"
            "            source: https://acme.example/campaigns\n"
            "            subject: '${ $data.id }'\n"
            "            data: { id: '${ $data.id }', fixed: 1 }\n"
            "  - after: { set: '${ $data }' }\n"
        ),
        {"id": "b-1"},
        Succeeded({"id": "b-1"}),
        emits=(
            (
                "/do/0/tell",
                "0",
                {
                    "type": "com.acme.brief.approved",
                    "source": "https://acme.example/campaigns",
                    "subject": "b-1",
                    "data": {"id": "b-1", "fixed": 1},
                },
            ),
        ),
    ),
    # -- listen ----------------------------------------------------------------------------------------
    Case(
        "listen: the events taken, output.as",
        _doc(
            "do:\n"
            "  - decision:\n"
            "      listen:\n"
            "        to: { one: { with: { type: com.acme.decision, data: '${ $data.brief = \"b-1\" }' } } }\n"
            "      output: { as: '${ $data[0].approved }' }\n"
        ),
        {},
        Succeeded(True),
        answers={"/do/0/decision": (Answer(output=[{"brief": "b-1", "approved": True}]),)},
    ),
    Case(
        "listen: its timeout raises timeout at the task",
        _doc(
            "do:\n"
            "  - decision:\n"
            "      listen:\n"
            "        to: { any: [ { with: { type: a } }, { with: { type: b } } ] }\n"
            "        read: envelope\n"
            "      timeout: { after: PT1S }\n"
        ),
        {},
        Rejected(spec_type("timeout"), 408, "/do/0/decision"),
        answers={"/do/0/decision": (Answer(never=True),)},
        deadlines=(("/do/0/decision", "0"),),
    ),
    Case(
        "listen: a try takes its timeout",
        _doc(
            "do:\n"
            "  - waiting:\n"
            "      try:\n"
            "        - decision:\n"
            "            listen: { to: { all: [ { with: { type: a } } ] } }\n"
            "            timeout: { after: PT1S }\n"
            "      catch:\n"
            "        errors: { with: { status: 408 } }\n"
            "        do:\n"
            "          - late: { set: { late: '${ $error.instance }' } }\n"
        ),
        {},
        Succeeded({"late": "/do/0/waiting/try/0/decision"}),
        answers={"/do/0/waiting/try/0/decision": (Answer(never=True),)},
        deadlines=(("/do/0/waiting/try/0/decision", "0"),),
    ),
    # -- a call's timeout ------------------------------------------------------------------------------
    Case(
        "a call's timeout: the deadline told, then timeout raised at the task",
        _doc(
            "do:\n"
            "  - ask:\n"
            "      call: run_definition\n"
            "      with: { type: interaction, name: ask }\n"
            "      timeout: { after: PT1S }\n"
        ),
        {},
        Rejected(spec_type("timeout"), 408, "/do/0/ask"),
        answers={"/do/0/ask": (Answer(never=True),)},
        deadlines=(("/do/0/ask", "0"),),
    ),
    Case(
        "a call's timeout inside a try: the catch takes it after the deadline",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - ask:\n"
            "            call: run_definition\n"
            "            with: { type: interaction, name: ask }\n"
            "            timeout: { after: PT1S }\n"
            "      catch:\n"
            "        errors: { with: { type: timeout } }\n"
            "        do:\n"
            "          - late: { set: { status: '${ $error.status }', at: '${ $error.instance }' } }\n"
        ),
        {},
        Succeeded({"status": 408, "at": "/do/0/guarded/try/0/ask"}),
        answers={"/do/0/guarded/try/0/ask": (Answer(never=True),)},
        deadlines=(("/do/0/guarded/try/0/ask", "0"),),
    ),
    Case(
        "a call answered before its timeout",
        _doc(
            "do:\n"
            "  - ask:\n"
            "      call: run_definition\n"
            "      with: { type: interaction, name: ask }\n"
            "      timeout: { after: PT1H }\n"
        ),
        {},
        Succeeded("yes"),
        answers={"/do/0/ask": (Answer(output="yes"),)},
    ),
    # -- for -------------------------------------------------------------------------------------------
    Case(
        "for: each iteration takes the one before's output, each and at named",
        _doc(
            "do:\n"
            "  - add:\n"
            "      for: { in: '${ $data.items }', each: n, at: i }\n"
            "      do:\n"
            '        - step: { set: \'${ {"total": $data.total + $n * ($i + 1), "items": $data.items} }\' }\n'
            "  - out: { set: '${ $data.total }' }\n"
        ),
        {"items": [1, 2, 3], "total": 0},
        Succeeded(14),
    ),
    Case(
        "for: while is checked before each iteration",
        _doc(
            "do:\n"
            "  - add:\n"
            "      for: { in: '$data.items' }\n"
            "      while: '$data.total < 3'\n"
            "      do:\n"
            "        - step:\n"
            '            set: \'${ $merge([$data, {"total": $data.total + $item, "last": $index}]) }\'\n'
        ),
        {"items": [1, 2, 3, 4], "total": 0},
        Succeeded({"items": [1, 2, 3, 4], "total": 3, "last": 1}),
    ),
    Case(
        "for: then exit leaves the loop; an empty list hands the input on",
        _doc(
            "do:\n"
            "  - add:\n"
            "      for: { in: '${ $data.items }' }\n"
            "      do:\n"
            "        - stop:\n"
            "            if: '${ $item = 3 }'\n"
            "            set: '${ $merge([$data, {\"stopped\": $item}]) }'\n"
            "            then: exit\n"
            "        - step: { set: '${ $merge([$data, {\"total\": $data.total + $item}]) }' }\n"
            "  - none:\n"
            "      for: { in: '${ [] }' }\n"
            "      do:\n"
            "        - never: { set: { never: true } }\n"
            "      output: { as: '${ $merge([$data, {\"after\": $input.total}]) }' }\n"
        ),
        {"items": [1, 2, 3, 4], "total": 0},
        Succeeded({"items": [1, 2, 3, 4], "total": 3, "stopped": 3, "after": 3}),
    ),
    Case(
        "for: a call in each iteration, each with its own attempt",
        _doc(
            "do:\n"
            "  - each:\n"
            "      for: { in: '${ $data }' }\n"
            "      do:\n"
            "        - ask:\n"
            "            call: run_definition\n"
            "            with: { type: interaction, name: ask, input: { item: '${ $item }' } }\n"
            "            export: { as: '${ $merge([$context, {$string($index): $output}]) }' }\n"
            "  - out: { set: '${ $context }' }\n"
        ),
        ["a", "b"],
        Succeeded({"0": 1, "1": 2}),
        answers={"/do/0/each/do/0/ask": (Answer(output=1), Answer(output=2))},
        attempts=(("/do/0/each/do/0/ask", "0"), ("/do/0/each/do/0/ask", "1")),
    ),
    Case(
        "for: an emit in each iteration, emitted once each",
        _doc(
            "do:\n"
            "  - each:\n"
            "      for: { in: '${ $data }', each: name }\n"
            "      do:\n"
            "        - tell:\n"
            "            emit:\n"
            "              event:\n"
            "                with: { type: greeted, source: 'https://t.example', data: '${ $name }' }\n"
        ),
        ["ana", "bo"],
        Succeeded(["ana", "bo"]),
        emits=(
            ("/do/0/each/do/0/tell", "0", {"type": "greeted", "source": "https://t.example", "data": "ana"}),
            ("/do/0/each/do/0/tell", "1", {"type": "greeted", "source": "https://t.example", "data": "bo"}),
        ),
    ),
    Case(
        "for inside a try: an error in an iteration is caught",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - each:\n"
            "            for: { in: '${ $data }' }\n"
            "            do:\n"
            "              - check:\n"
            "                  if: '${ $item > 1 }'\n"
            "                  raise:\n"
            "                    error: { type: validation, status: 400, detail: '${ $string($item) }' }\n"
            "      catch:\n"
            "        do:\n"
            "          - caught: { set: '${ $error.detail }' }\n"
        ),
        [1, 2, 3],
        Succeeded("2"),
    ),
    # -- fork ------------------------------------------------------------------------------------------
    Case(
        "fork: the branches' outputs in the order written, output.as",
        _doc(
            "do:\n"
            "  - both:\n"
            "      fork:\n"
            "        branches:\n"
            "          - a: { set: { a: '${ $data.x }' } }\n"
            "          - b:\n"
            "              do:\n"
            "                - one: { set: { b: 1 } }\n"
            "                - two: { set: '${ $merge([$data, {\"c\": 2}]) }' }\n"
            "      output: { as: '${ $merge($data) }' }\n"
            "  - after: { set: '${ $data }' }\n"
        ),
        {"x": 5},
        Succeeded({"a": 5, "b": 1, "c": 2}),
    ),
    Case(
        "fork: two calls together",
        _doc(
            "do:\n"
            "  - reviews:\n"
            "      fork:\n"
            "        branches:\n"
            "          - legal: { call: run_definition, with: { type: reasoning, name: legal } }\n"
            "          - brand: { call: run_definition, with: { type: reasoning, name: brand } }\n"
        ),
        {},
        Succeeded([{"ok": "legal"}, {"ok": "brand"}]),
        answers={
            "/do/0/reviews/fork/branches/0/legal": (Answer(output={"ok": "legal"}),),
            "/do/0/reviews/fork/branches/1/brand": (Answer(output={"ok": "brand"}),),
        },
    ),
    Case(
        "fork: a branch's error nothing catches ends the run",
        _doc(
            "do:\n"
            "  - both:\n"
            "      fork:\n"
            "        branches:\n"
            "          - a: { set: { a: 1 } }\n"
            "          - b: { raise: { error: { type: validation, status: 400 } } }\n"
            "  - never: { set: { n: 1 } }\n"
        ),
        {},
        Rejected(spec_type("validation"), 400, "/do/0/both/fork/branches/1/b"),
    ),
    Case(
        "fork: a branch's then end ends the run with its data",
        _doc(
            "do:\n"
            "  - both:\n"
            "      fork:\n"
            "        branches:\n"
            "          - a: { set: { a: 1 } }\n"
            "          - b: { set: { ended: '${ $data.x }' }, then: end }\n"
            "  - never: { set: { n: 1 } }\n"
        ),
        {"x": "here"},
        Succeeded({"ended": "here"}),
    ),
    Case(
        "fork inside a try, a branch exporting: the catch takes a branch's error",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - both:\n"
            "            fork:\n"
            "              branches:\n"
            "                - a:\n"
            "                    do:\n"
            "                      - one: { set: { a: 1 }, export: { as: { seen: true } } }\n"
            "                      - two: { set: '${ $context }' }\n"
            "                - b: { raise: { error: { type: validation, status: 400 } } }\n"
            "      catch:\n"
            "        do:\n"
            "          - caught: { set: '${ $error.status }' }\n"
        ),
        {},
        Succeeded(400),
    ),
    Case(
        "fork compete: the first branch to succeed wins",
        _doc(
            "do:\n"
            "  - race:\n"
            "      fork:\n"
            "        compete: true\n"
            "        branches:\n"
            "          - failing: { raise: { error: { type: validation, status: 400 } } }\n"
            "          - winning: { set: { winner: '${ $data.name }' } }\n"
            "      output: { as: '${ $data.winner }' }\n"
        ),
        {"name": "b"},
        Succeeded("b"),
    ),
    Case(
        "fork compete: calls, one failing",
        _doc(
            "do:\n"
            "  - race:\n"
            "      fork:\n"
            "        compete: true\n"
            "        branches:\n"
            "          - first: { call: run_definition, with: { type: interaction, name: first } }\n"
            "          - second: { call: run_definition, with: { type: interaction, name: second } }\n"
        ),
        {},
        Succeeded("second"),
        answers={
            "/do/0/race/fork/branches/0/first": (
                Answer(error={"type": spec_type("runtime"), "status": 500}),
            ),
            "/do/0/race/fork/branches/1/second": (Answer(output="second"),),
        },
    ),
    Case(
        "fork compete: the fork fails only when every branch fails, with the first branch's error",
        _doc(
            "do:\n"
            "  - race:\n"
            "      fork:\n"
            "        compete: true\n"
            "        branches:\n"
            "          - one: { raise: { error: { type: validation, status: 400 } } }\n"
            "          - two: { raise: { error: { type: communication, status: 503 } } }\n"
        ),
        {},
        Rejected(spec_type("validation"), 400, "/do/0/race/fork/branches/0/one"),
    ),
    Case(
        "fork compete inside a try: every branch failing is caught",
        _doc(
            "do:\n"
            "  - guarded:\n"
            "      try:\n"
            "        - race:\n"
            "            fork:\n"
            "              compete: true\n"
            "              branches:\n"
            "                - one: { raise: { error: { type: validation, status: 400 } } }\n"
            "                - two: { raise: { error: { type: communication, status: 503 } } }\n"
            "      catch:\n"
            "        do:\n"
            "          - caught: { set: '${ $error.status }' }\n"
        ),
        {},
        Succeeded(400),
    ),
    # -- a timeout on a task of several states ---------------------------------------------------------
    Case(
        "a do's timeout: in time, its output and its export go on",
        _doc(
            "do:\n"
            "  - steps:\n"
            "      do:\n"
            "        - pause: { wait: PT5S }\n"
            "        - one: { set: { a: 1 }, export: { as: { seen: true } } }\n"
            "      timeout: { after: PT1M }\n"
            "  - after: { set: { context: '${ $context }', data: '${ $data }' } }\n"
        ),
        {},
        Succeeded({"context": {"seen": True}, "data": {"a": 1}}),
    ),
    Case(
        "a for's timeout passes while a call waits: the deadline told, timeout raised at the for",
        _doc(
            "do:\n"
            "  - each:\n"
            "      for: { in: '${ [1] }' }\n"
            "      do:\n"
            "        - ask: { call: run_definition, with: { type: interaction, name: ask } }\n"
            "      timeout: { after: PT1S }\n"
            "  - never: { set: { n: 1 } }\n"
        ),
        {},
        Rejected(spec_type("timeout"), 408, "/do/0/each"),
        answers={"/do/0/each/do/0/ask": (Answer(never=True),)},
        deadlines=(("/do/0/each", "0"),),
    ),
    Case(
        "a try's timeout inside a try: the outer catch takes it",
        _doc(
            "do:\n"
            "  - outer:\n"
            "      try:\n"
            "        - inner:\n"
            "            try:\n"
            "              - ask: { call: run_definition, with: { type: interaction, name: ask } }\n"
            "            catch: { errors: { with: { status: 500 } } }\n"
            "            timeout: { after: PT1S }\n"
            "      catch:\n"
            "        do:\n"
            "          - late: { set: { status: '${ $error.status }', at: '${ $error.instance }' } }\n"
        ),
        {},
        Succeeded({"status": 408, "at": "/do/0/outer/try/0/inner"}),
        answers={"/do/0/outer/try/0/inner/try/0/ask": (Answer(never=True),)},
        deadlines=(("/do/0/outer/try/0/inner", "0"),),
    ),
    Case(
        "a wait written as an expression, its timeout shorter: the race raises timeout",
        _doc(
            "do:\n"
            "  - long: { wait: '${ $data.wait }', timeout: { after: PT1S } }\n"
            "  - never: { set: { n: 1 } }\n"
        ),
        {"wait": "PT1H"},
        Rejected(spec_type("timeout"), 408, "/do/0/long"),
        deadlines=(("/do/0/long", "0"),),
        real_waits=True,
    ),
    Case(
        "a wait whose timeout is an expression, in time",
        _doc(
            "do:\n"
            "  - short: { wait: PT1S, timeout: { after: '${ $data.limit }' } }\n"
            "  - after: { set: '${ $data }' }\n"
        ),
        {"limit": {"minutes": 1}},
        Succeeded({"limit": {"minutes": 1}}),
        real_waits=True,
    ),
    Case(
        "a listen's timeout written as an expression",
        _doc(
            "do:\n"
            "  - decision:\n"
            "      listen: { to: { one: { with: { type: a } } } }\n"
            "      timeout: { after: '${ \"PT1S\" }' }\n"
        ),
        {},
        Rejected(spec_type("timeout"), 408, "/do/0/decision"),
        answers={"/do/0/decision": (Answer(never=True),)},
        deadlines=(("/do/0/decision", "0"),),
    ),
    Case(
        "fork compete: a branch's then end ends the run with its data",
        _doc(
            "do:\n"
            "  - race:\n"
            "      fork:\n"
            "        compete: true\n"
            "        branches:\n"
            "          - waiting: { listen: { to: { one: { with: { type: never } } } } }\n"
            "          - ending:\n"
            "              do:\n"
            "                - mark: { set: { ended: true }, export: { as: { marked: true } } }\n"
            "                - stop: { set: '${ $merge([$data, $context]) }', then: end }\n"
            "  - never: { set: { n: 1 } }\n"
        ),
        {},
        Succeeded({"ended": True, "marked": True}),
        answers={"/do/0/race/fork/branches/0/waiting": (Answer(never=True),)},
    ),
    Case(
        "for inside a for: a call's attempt has both positions",
        _doc(
            "do:\n"
            "  - outer:\n"
            "      for: { in: '${ $data }', each: a }\n"
            "      do:\n"
            "        - inner:\n"
            "            for: { in: '${ [1, 2] }', each: b }\n"
            "            do:\n"
            "              - ask:\n"
            "                  call: run_definition\n"
            "                  with:\n"
            "                    type: interaction\n"
            "                    name: ask\n"
            "                    input: { a: '${ $a }', b: '${ $b }' }\n"
        ),
        ["x", "y"],
        Succeeded("done"),
        answers={"/do/0/outer/do/0/inner/do/0/ask": (Answer(output="done"),)},
        attempts=tuple(
            ("/do/0/outer/do/0/inner/do/0/ask", attempt) for attempt in ("0.0", "0.1", "1.0", "1.1")
        ),
    ),
    Case(
        "timeouts together: a listen in a timed try that exports, then a raced wait",
        _doc(
            "timeout: { after: P1D }\n"
            "do:\n"
            "  - t:\n"
            "      try:\n"
            "        - l:\n"
            "            listen: { to: { all: [ { with: { type: a } }, { with: { type: b } } ] } }\n"
            "            timeout: { after: PT5M }\n"
            "            export: { as: '${ {\"l\": $output} }' }\n"
            "      catch: { do: [ { z: { set: '${ $context }' } } ] }\n"
            "      timeout: { after: PT10M }\n"
            "      export: { as: '${ $merge([$context, {\"t\": true}]) }' }\n"
            "  - w: { wait: '${ \"PT1M\" }', timeout: { after: PT30S }, if: '${ $context.t }' }\n"
        ),
        {},
        Rejected(spec_type("timeout"), 408, "/do/1/w"),
        answers={"/do/0/t/try/0/l": (Answer(output=[1, 2]),)},
        deadlines=(("/do/1/w", "0"),),
        real_waits=True,
    ),
    Case(
        "fork compete: a winner's output past an error's longest cause raises expression",
        _doc(
            "do:\n"
            "  - race:\n"
            "      fork:\n"
            "        compete: true\n"
            "        branches:\n"
            '          - big: { set: { text: \'${ $pad("", 40000, "x") }\' } }\n'
        ),
        {},
        Rejected(spec_type("expression"), 400),
    ),
)


def run_ending(
    status: str, end: Mapping[str, Any] | None, error: str | None = None, cause: str | None = None
) -> dict[str, Any]:
    """How a run ended, as the runtime reads it: ``{"output"}`` or ``{"error"}`` as the machine's end
    Task sent it (``end``, its payload); for an execution that failed without its end, the error the
    workflow entry's ``ended`` action ends the run with (``{"error"}``)."""
    if end is not None:
        return {key: value for key, value in end.items() if key in ("output", "error")}
    if status != "FAILED":
        raise AssertionError(f"the execution {status} without its end")
    ended = {"action": engine.ENDED_ACTION, "run": RUN, "status": status, "error": error, "cause": cause}
    return {"error": execution_error(ended).as_json()}


def check_ending(case: Case, ending: Mapping[str, Any]) -> None:
    """The run ended as the case says."""
    expected = case.expected
    if isinstance(expected, Succeeded):
        assert "error" not in ending, ending.get("error")
        assert ending["output"] == expected.output
    else:
        assert "error" in ending, ending
        assert (ending["error"]["type"], ending["error"]["status"]) == (expected.type, expected.status)
        if expected.instance is not None:
            assert ending["error"]["instance"] == expected.instance


def check_told(case: Case, told: Sequence[Mapping[str, Any]]) -> None:
    """The emits and deadlines the entry was told are the case's."""
    emits = [event for event in told if event["action"] == engine.EMIT_ACTION]
    deadlines = [event for event in told if event["action"] == engine.DEADLINE_ACTION]
    assert all(event["run"] == RUN for event in told)
    if case.emits is not None:
        assert tuple((event["task"], event["attempt"], event["event"]) for event in emits) == case.emits
    assert tuple((event["task"], event["attempt"]) for event in deadlines) == case.deadlines


def case(name: str) -> Case:
    """The case of that name."""
    for found in CASES:
        if found.name == name:
            return found
    raise KeyError(name)
