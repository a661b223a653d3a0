"""The overview of a workflow: the workflow in plain words and one picture (``workflow-format.md``,
"Overview").

``get_definition`` shows it before the document, for a person who reads neither YAML nor JSONata. It is
written once, from the checked document, when the document is saved, and reads as the other types'
overviews read (``parley.interaction.overview``, ``parley.reasoning.overview``): the description (the
document's ``summary``, else its ``title``), **What it needs** (the fields of ``input.schema.document``),
**What it produces** (only when ``output.schema.document`` is written), **What it does** (a Mermaid
flowchart of its tasks) and **What it calls** (each function by type and name, with the tasks that call
it).

The flowchart (``flowchart TD``) draws every task as a node named after the task: a call with the type
and name of the function it runs (``ask: interaction approve-campaign-brief``), ``set`` with the fields
it sets, ``raise`` with its error, ``switch`` as a decision whose edges carry its cases, ``wait`` with its
duration, ``listen`` and ``emit`` with their event types, ``for`` as a loop (``each item``, ``next``,
``done``) and ``fork`` as branches leaving one node. ``do`` and ``try`` lists are subgraphs; each
``catch`` is an edge out of its ``try`` labelled with what it takes (``unanswered (410, expired)``,
``status 503``, ``any error``) and its retry (``retry: patient``, ``retry ×3``). An ``if`` labels the
edges into its task (``if …``), with an ``else`` edge past it; ``then`` (``exit``, ``end``, a sibling)
draws the edge it names. Node ids are generated (``t0``, ``t1``, …, with ``start`` and ``finish``), and
every label is quoted with Mermaid's entity codes for the characters that would break it, so a task's
name or an expression never breaks the diagram. A workflow too large for Mermaid to draw (past
:data:`MAX_EDGES` edges or :data:`MAX_TEXT` characters) gets a sentence instead.

Everything here reads a document that has already been checked, but it never raises on any JSON-like
value: a construct saving refuses, or an odd value, still gets a node.

**Used by** is not written here: the definitions that use a function are read each time it is returned.
:func:`called_functions` gives what a workflow calls, for that list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from parley.documents.durations import duration_in_words, parse_duration
from parley.documents.schema_words import schema_in_words
from parley.documents.words import (
    as_mapping,
    bold,
    code,
    counted,
    mermaid_label,
    one_line,
    section,
    series,
    text_in_words,
)
from parley.workflow.errors import FORMER_SPEC_ERRORS, PROBLEMS, SPEC_ERRORS
from parley.workflow.expressions import condition_body, expression_body

#: Mermaid's own limits (``maxEdges`` and ``maxTextSize`` of mermaid 11): a larger chart is not drawn.
MAX_EDGES: Final = 500
MAX_TEXT: Final = 50_000
#: A label longer than this is cut with "…".
MAX_LABEL: Final = 80
#: Fields of a ``set``, or event types, named in a label before "…".
_MAX_NAMED: Final = 4

_START: Final = "start"
_FINISH: Final = "finish"
#: The status each of Parley's own problem types always has (``workflow-format.md``, "Calling a
#: function"), shown beside the type in a catch's label.
_PROBLEM_STATUS: Final[Mapping[str, int]] = {
    "unanswered": 410,
    "cancelled": 409,
    "tools_called": 409,
    "effect_unknown": 409,
    "tools_unfinished": 503,
}
_TASK_KINDS: Final = (
    #: ``for`` first: a ``for`` task has a ``do`` too.
    "for",
    "call",
    "set",
    "do",
    "switch",
    "fork",
    "try",
    "raise",
    "wait",
    "listen",
    "emit",
    "run",
)
_DURATION_UNITS: Final = ("days", "hours", "minutes", "seconds", "milliseconds")


# --------------------------------------------------------------------------------------------------
# What the document holds


def _tasks(value: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """A task list as ``(name, task)`` pairs; anything else in it is left out."""
    if not isinstance(value, list):
        return []
    found: list[tuple[str, Mapping[str, Any]]] = []
    for item in value:
        if isinstance(item, Mapping) and len(item) == 1:
            ((name, task),) = item.items()
            found.append((str(name), as_mapping(task)))
    return found


def _kind(task: Mapping[str, Any]) -> str | None:
    return next((kind for kind in _TASK_KINDS if kind in task), None)


def _text(value: Any) -> str:
    """A value as one line of text: an expression as its JSONata, anything else as JSON or as written."""
    body = expression_body(value)
    return one_line(body if body is not None else text_in_words(value))


def _condition(value: Any) -> str:
    return one_line(condition_body(value)) if isinstance(value, str) else _text(value)


def _pointer_token(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


@dataclass(frozen=True)
class CalledFunction:
    """A function a workflow calls (``call: run_definition``), and the tasks that call it."""

    type: str
    name: str
    #: The references (JSON Pointers) of the tasks that call it, in document order.
    tasks: tuple[str, ...]

    @property
    def key(self) -> str:
        """``type/name``, as a definition's ``uses`` lists it."""
        return f"{self.type}/{self.name}"


def _call_target(task: Mapping[str, Any]) -> tuple[str, str] | None:
    """The type and name a ``call: run_definition`` task runs, as written."""
    if task.get("call") != "run_definition":
        return None
    with_ = as_mapping(task.get("with"))
    return _text(with_.get("type", "")), _text(with_.get("name", ""))


def _walk(tasks: Any, reference: str) -> list[tuple[str, Mapping[str, Any]]]:
    """Every task of a list and of the lists within it, with its reference, in document order."""
    found: list[tuple[str, Mapping[str, Any]]] = []
    for index, (name, task) in enumerate(_tasks(tasks)):
        here = f"{reference}/{index}/{_pointer_token(name)}"
        found.append((here, task))
        for key, inner in _inner_lists(task):
            found.extend(_walk(inner, f"{here}/{key}"))
    return found


def _inner_lists(task: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The task lists within a task, with the path of each from the task."""
    kind = _kind(task)
    if kind == "do":
        return [("do", task.get("do"))]
    if kind == "try":
        return [("try", task.get("try")), ("catch/do", as_mapping(task.get("catch")).get("do"))]
    if kind == "for":
        return [("do", task.get("do"))]
    if kind == "fork":
        return [("fork/branches", as_mapping(task.get("fork")).get("branches"))]
    return []


def called_functions(data: Mapping[str, Any]) -> tuple[CalledFunction, ...]:
    """Each function a workflow calls, once, in the order its first call is written."""
    calls: dict[tuple[str, str], list[str]] = {}
    for reference, task in _walk(as_mapping(data).get("do"), ""):
        target = _call_target(task)
        if target is not None:
            calls.setdefault(target, []).append(f"/do{reference}")
    return tuple(CalledFunction(type_, name, tuple(tasks)) for (type_, name), tasks in calls.items())


# --------------------------------------------------------------------------------------------------
# Labels


def _label(text: str) -> str:
    """``text`` as a quoted Mermaid label: one line, cut past :data:`MAX_LABEL`, every character that
    would break the syntax written as an entity code."""
    text = one_line(text)
    if len(text) > MAX_LABEL:
        text = text[: MAX_LABEL - 1].rstrip() + "…"
    return mermaid_label(text)


def _duration(value: Any) -> str:
    """A DSL duration in words: ISO 8601, a mapping of units, or an expression as written."""
    if isinstance(value, str):
        if expression_body(value) is not None:
            return _text(value)
        try:
            return duration_in_words(parse_duration(value))
        except (ValueError, OverflowError):
            return value
    if isinstance(value, Mapping):
        units = {unit: value.get(unit) for unit in _DURATION_UNITS}
        if all(
            isinstance(amount, int | float) and not isinstance(amount, bool)
            for amount in units.values()
            if amount is not None
        ):
            try:
                return duration_in_words(
                    timedelta(**{unit: float(amount) for unit, amount in units.items() if amount is not None})
                )
            except (OverflowError, ValueError):
                pass
    return _text(value)


def _type_words(error_type: str) -> str:
    """An error type as a label shows it: the DSL's and Parley's types by their name, any other URI by
    the last part of its path."""
    for prefix in (SPEC_ERRORS, FORMER_SPEC_ERRORS, PROBLEMS):
        if error_type.startswith(prefix) and error_type[len(prefix) :]:
            return error_type[len(prefix) :]
    if "/" in error_type:
        return error_type.rstrip("/").rsplit("/", 1)[-1] or error_type
    return error_type


def _error_words(error: Mapping[str, Any], named: str | None = None) -> str:
    """An error to raise: its name in ``use.errors`` or its type, and its status."""
    written = error.get("type")
    head = named or (_type_words(_text(written)) if written is not None else "") or "an error"
    status = error.get("status")
    return f"{head} ({_text(status)})" if status is not None else head


def _caught_words(catch: Mapping[str, Any]) -> str:
    """What a ``catch`` takes, and its retry: ``unanswered (410, expired); retry: patient``."""
    with_ = as_mapping(as_mapping(catch.get("errors")).get("with"))
    written = _text(with_["type"]) if "type" in with_ else None
    status = _text(with_["status"]) if "status" in with_ else None
    if status is None and written is not None and written.startswith(PROBLEMS):
        known = _PROBLEM_STATUS.get(written[len(PROBLEMS) :])
        status = str(known) if known is not None else None
    fields = [
        ("status", status),
        ("kind", _text(with_["kind"]) if "kind" in with_ else None),
        ("because", _text(with_["because"]) if "because" in with_ else None),
        ("at", _text(with_["instance"]) if "instance" in with_ else None),
        ("title", f'"{_text(with_["title"])}"' if "title" in with_ else None),
        ("detail", f'"{_text(with_["detail"])}"' if "detail" in with_ else None),
    ]
    if written is not None:
        # As the error reads: its type, then what else it must be (``unanswered (410, expired)``).
        extras = [
            value if key in ("status", "kind", "because") else f"{key} {value}"
            for key, value in fields
            if value
        ]
        said = f"{_type_words(written)} ({', '.join(extras)})" if extras else _type_words(written)
    else:
        said = ", ".join(f"{key} {value}" for key, value in fields if value) or "any error"
    parts = [said]
    if "when" in catch:
        parts.append(f"when {_condition(catch['when'])}")
    if "exceptWhen" in catch:
        parts.append(f"unless {_condition(catch['exceptWhen'])}")
    retry = catch.get("retry")
    if isinstance(retry, str):
        parts.append(f"retry: {retry}")
    elif retry is not None:
        count = as_mapping(as_mapping(as_mapping(retry).get("limit")).get("attempt")).get("count")
        parts.append(f"retry ×{_text(count)}" if count is not None else "retry")
    return "; ".join(parts)


def _listened_words(listen: Mapping[str, Any]) -> str:
    to = as_mapping(listen.get("to"))
    for key, lead in (("one", "for"), ("any", "for any of"), ("all", "for all of")):
        if key not in to:
            continue
        filters = to[key] if isinstance(to[key], list) else [to[key]]
        types = [_text(as_mapping(as_mapping(one).get("with")).get("type", "an event")) for one in filters]
        if not types:
            return "listen for any event"
        named = types[:_MAX_NAMED] + (["…"] if len(types) > _MAX_NAMED else [])
        return f"listen {lead} {', '.join(named)}"
    return "listen"


def _set_words(value: Any) -> str:
    if isinstance(value, Mapping) and value:
        names = [str(name) for name in value][:_MAX_NAMED]
        return "set " + ", ".join(names) + (", …" if len(value) > _MAX_NAMED else "")
    if isinstance(value, str) and expression_body(value) is not None:
        return f"set {_text(value)}"
    return "set"


def _node_words(task: Mapping[str, Any], kind: str | None, use: Mapping[str, Any]) -> str:
    """What a task's node says after its name."""
    if kind == "call":
        target = _call_target(task)
        if target is not None:
            return " ".join(part for part in target if part) or "call run_definition"
        return f"call {_text(task.get('call'))}"
    if kind == "set":
        return _set_words(task.get("set"))
    if kind == "raise":
        error = as_mapping(task.get("raise")).get("error")
        if isinstance(error, str):
            return "raise " + _error_words(as_mapping(as_mapping(use.get("errors")).get(error)), error)
        return "raise " + _error_words(as_mapping(error))
    if kind == "wait":
        return f"wait {_duration(task.get('wait'))}"
    if kind == "listen":
        return _listened_words(as_mapping(task.get("listen")))
    if kind == "emit":
        event = as_mapping(as_mapping(as_mapping(task.get("emit")).get("event")).get("with"))
        return f"emit {_text(event.get('type', 'an event'))}"
    if kind == "for":
        for_ = as_mapping(task.get("for"))
        each = _text(for_.get("each", "item"))
        said = f"for each {each} in {_condition(for_.get('in', ''))}"
        return said + (f" while {_condition(task['while'])}" if "while" in task else "")
    if kind == "fork":
        compete = as_mapping(task.get("fork")).get("compete") is True
        return "fork, the first branch to succeed wins" if compete else "fork, every branch at once"
    if kind == "switch":
        return "switch"
    if kind == "run":
        return "run"
    return kind or "task"


def _timeout_words(task: Mapping[str, Any]) -> str:
    timeout = task.get("timeout")
    if timeout is None:
        return ""
    if isinstance(timeout, str):
        return f", timeout: {timeout}"
    return f", at most {_duration(as_mapping(timeout).get('after'))}"


# --------------------------------------------------------------------------------------------------
# The flowchart


@dataclass(frozen=True)
class _Loose:
    """An edge that leaves ``source`` and has yet to find where it goes: ``base`` is what its source
    labels it (a case, a catch), ``extra`` what ``if`` adds on the way."""

    source: str
    base: str | None = None
    extra: tuple[str, ...] = ()

    def adding(self, words: str) -> _Loose:
        return _Loose(self.source, self.base, (*self.extra, words))

    @property
    def label(self) -> str | None:
        parts = [part for part in (self.base, *self.extra) if part]
        return "; ".join(parts) if parts else None


_Route = Callable[[list[_Loose]], None]


@dataclass
class _Task:
    name: str
    task: Mapping[str, Any]
    kind: str | None
    #: The node drawn for it, or ``None`` for ``do`` and ``try``, entered through their lists.
    node: str | None = None
    #: The list within it that is entered in its place (``do``, ``try``).
    inner: _List | None = None


@dataclass
class _List:
    """A task list being drawn: where an edge goes past its end, and whether its tasks are branches
    (each ends the list) rather than steps."""

    tasks: list[_Task]
    after: _Route
    branches: bool = False
    by_name: dict[str, int] = field(default_factory=dict)


class _Chart:
    def __init__(self, use: Mapping[str, Any]) -> None:
        self.use = use
        self.nodes: list[str] = []
        self.edges: list[str] = []
        self._drawn: set[tuple[str, str | None, str]] = set()
        self._routed: set[tuple[str, str | None, int]] = set()
        self._count = 0
        #: Edges to draw once every node is declared.
        self._pending: list[Callable[[], None]] = []

    # -- nodes

    def _id(self) -> str:
        node = f"t{self._count}"
        self._count += 1
        return node

    def _declare(self, indent: str, line: str) -> None:
        self.nodes.append(indent + line)

    def build(self, tasks: Any, after: _Route, indent: str, branches: bool = False) -> _List:
        """Declare the nodes of a list (and of the lists within it); its edges are drawn later."""
        built = _List([], after, branches)
        for index, (name, task) in enumerate(_tasks(tasks)):
            built.by_name.setdefault(name, index)
            built.tasks.append(self._task(built, index, name, task, indent))
        return built

    def _task(self, parent: _List, index: int, name: str, task: Mapping[str, Any], indent: str) -> _Task:
        kind = _kind(task)
        drawn = _Task(name, task, kind)
        timeout = _timeout_words(task)

        def leave(loose: list[_Loose]) -> None:
            self.follow(parent, index, loose, task.get("then"))

        if kind in ("do", "try"):
            box = self._id()
            heading = f"{name}{timeout}" if kind == "do" else f"{name}: try{timeout}"
            self._declare(indent, f"subgraph {box} [{_label(heading)}]")
            drawn.inner = self.build(task.get(kind), leave, indent + "  ")
            self._declare(indent, "end")
            if kind == "try":
                self._catch(box, as_mapping(task.get("catch")), leave, indent)
            return drawn

        node = self._id()
        drawn.node = node
        text = _label(f"{name}: {_node_words(task, kind, self.use)}{timeout}")
        shape = {
            "call": f"[[{text}]]",
            "switch": f"{{{text}}}",
            "raise": f">{text}]",
            "for": f"{{{{{text}}}}}",
            "fork": f"[/{text}\\]",
            "wait": f"({text})",
            "listen": f"[/{text}/]",
            "emit": f"[\\{text}\\]",
        }.get(kind or "", f"[{text}]")
        self._declare(indent, node + shape)

        if kind == "switch":
            self._pending.append(lambda: self._switch(parent, index, node, task.get("switch")))
        elif kind == "for":
            box = self._id()
            each = _text(as_mapping(task.get("for")).get("each", "item"))
            self._declare(indent, f"subgraph {box} [{_label(f'{name}: each {each}')}]")
            body = self.build(task.get("do"), lambda loose: self._next(node, loose), indent + "  ")
            self._declare(indent, "end")
            self._pending.append(lambda: self.route(body, 0, [_Loose(node, f"each {each}")]))
            self._pending.append(lambda: leave([_Loose(node, "done")]))
        elif kind == "fork":
            branches = self.build(as_mapping(task.get("fork")).get("branches"), leave, indent, branches=True)

            def fork() -> None:
                for branch in range(len(branches.tasks)):
                    self.route(branches, branch, [_Loose(node)])
                if not branches.tasks:
                    leave([_Loose(node)])

            self._pending.append(fork)
        elif kind != "raise":
            self._pending.append(lambda: leave([_Loose(node)]))
        return drawn

    def _catch(self, box: str, catch: Mapping[str, Any], leave: _Route, indent: str) -> None:
        caught = _Loose(box, _caught_words(catch))
        if "do" in catch:
            recovery = self.build(catch.get("do"), leave, indent)
            self._pending.append(lambda: self.route(recovery, 0, [caught]))
        else:
            self._pending.append(lambda: leave([caught]))

    def _switch(self, parent: _List, index: int, node: str, cases: Any) -> None:
        default = False
        for case_name, case in _tasks(cases):
            if "when" in case:
                words = f"{case_name}: {_condition(case['when'])}"
            else:
                words, default = (case_name if case_name != "default" else "otherwise"), True
            self.follow(parent, index, [_Loose(node, words)], case.get("then"))
        if not default:
            self.follow(parent, index, [_Loose(node, "no case")], None)

    def _next(self, loop: str, loose: list[_Loose]) -> None:
        for edge in loose:
            self.edge(edge.adding("next"), loop)

    # -- edges

    def edge(self, loose: _Loose, target: str) -> None:
        label = loose.label
        key = (loose.source, label, target)
        if key in self._drawn:
            return
        self._drawn.add(key)
        arrow = f" -->|{_label(label)}| " if label else " --> "
        self.edges.append(f"  {loose.source}{arrow}{target}")

    def follow(self, where: _List, index: int, loose: list[_Loose], then: Any) -> None:
        """Where the edges leaving a task go, by its ``then``."""
        if then == "end":
            for edge in loose:
                self.edge(edge, _FINISH)
        elif then == "exit":
            where.after(loose)
        elif isinstance(then, str) and then in where.by_name and not where.branches:
            self.route(where, where.by_name[then], loose)
        else:
            self.route(where, None if where.branches else index + 1, loose)

    def route(self, where: _List, index: int | None, loose: list[_Loose]) -> None:
        """Edges into the task at ``index`` of a list (past its end when ``None`` or beyond), with
        ``if``: the edges into it labelled with the condition, and ``else`` edges past it."""
        if index is None or index >= len(where.tasks):
            where.after(loose)
            return
        fresh = [
            edge for edge in loose if (edge.source, edge.base, id(where.tasks[index])) not in self._routed
        ]
        if not fresh:
            return
        self._routed.update((edge.source, edge.base, id(where.tasks[index])) for edge in fresh)
        task = where.tasks[index]
        condition = task.task.get("if")
        if condition is None:
            self._enter(task, fresh)
            return
        self._enter(task, [edge.adding(f"if {_condition(condition)}") for edge in fresh])
        self.route(where, None if where.branches else index + 1, [edge.adding("else") for edge in fresh])

    def _enter(self, task: _Task, loose: list[_Loose]) -> None:
        if task.node is not None:
            for edge in loose:
                self.edge(edge, task.node)
        elif task.inner is not None:
            self.route(task.inner, 0, loose)

    def draw(self, tasks: Any) -> str:
        def finish(loose: list[_Loose]) -> None:
            for edge in loose:
                self.edge(edge, _FINISH)

        top = self.build(tasks, finish, "  ")
        self.route(top, 0, [_Loose(_START)])
        for pending in self._pending:
            pending()
        lines = [
            "flowchart TD",
            f"  {_START}([{_label('Start')}])",
            *self.nodes,
            f"  {_FINISH}([{_label('End')}])",
            *self.edges,
        ]
        return "\n".join(lines)


def flowchart(data: Mapping[str, Any]) -> str:
    """The Mermaid flowchart of a workflow's tasks, without the fence."""
    data = as_mapping(data)
    return _Chart(as_mapping(data.get("use"))).draw(data.get("do"))


# --------------------------------------------------------------------------------------------------
# The overview


def _schema(part: Any) -> Any:
    return as_mapping(as_mapping(part).get("schema")).get("document")


def _needs(data: Mapping[str, Any]) -> list[str]:
    schema = _schema(data.get("input"))
    if schema is None:
        return section(
            "What it needs", "The document gives no input schema, so its input may be any JSON object."
        )
    return section("What it needs", schema_in_words(schema, "It takes no input fields."))


def _does(data: Mapping[str, Any]) -> list[str]:
    tasks = _walk(data.get("do"), "")
    if not tasks:
        return section("What it does", "It has no tasks.")
    chart = _Chart(as_mapping(data.get("use")))
    text = chart.draw(data.get("do"))
    if len(chart.edges) > MAX_EDGES or len(text) > MAX_TEXT:
        return section(
            "What it does",
            f"It has {counted(len(tasks), 'task', 'tasks')}, too many to draw: the document shows them.",
        )
    return section(
        "What it does",
        f"Its {counted(len(tasks), 'task', 'tasks')}, from its start to its end:",
        ["```mermaid", text, "```"],
    )


def _function_words(type_: str) -> str:
    return {
        "interaction": "the interaction function",
        "reasoning": "the reasoning function",
        "workflow": "the workflow",
    }.get(type_, f"the {type_} definition" if type_ else "the definition")


def _calls(data: Mapping[str, Any]) -> list[str]:
    called = called_functions(data)
    if not called:
        return section("What it calls", "It calls no function.")
    lines = []
    for function in called:
        names = [
            bold(reference.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~"))
            for reference in function.tasks
        ]
        tasks = (
            f"the task {names[0]}" if len(names) == 1 else f"the tasks {series(list(dict.fromkeys(names)))}"
        )
        lines.append(f"- {_function_words(function.type)} {code(function.name)}, called by {tasks}")
    return section("What it calls", lines)


def write_workflow_overview(data: Mapping[str, Any]) -> str:
    """The overview of a workflow, in Markdown (``workflow-format.md``, "Overview").

    ``data`` is the checked document as plain JSON-like values. In order: the description (the
    document's ``summary``, else its ``title``, else that there is none yet), **What it needs**, **What it
    produces** (only with ``output.schema.document``), **What it does** (a Mermaid flowchart of its
    tasks) and **What it calls**. It never raises on a checked document.
    """
    data = as_mapping(data)
    document = as_mapping(data.get("document"))
    description = next(
        (
            text.strip()
            for text in (document.get("summary"), document.get("title"))
            if isinstance(text, str) and text.strip()
        ),
        None,
    )
    lines = [description or "This workflow has no description yet.", ""]
    lines += _needs(data)
    output_schema = _schema(data.get("output"))
    if output_schema is not None:
        lines += section("What it produces", schema_in_words(output_schema, "An object."))
    lines += _does(data)
    lines += _calls(data)
    return "\n".join(lines).rstrip("\n") + "\n"


__all__ = ["CalledFunction", "called_functions", "flowchart", "write_workflow_overview"]
