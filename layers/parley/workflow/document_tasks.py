"""The task lists of a workflow document (``workflow-format.md``, "Tasks", the refused list of "Document
fields", "Expressions" and "Bounds").

Each item of a task list is a mapping with one key, the task's name (letters, digits, ``-``, ``_``, once
per list), whose value is the task. A task does one thing, named by one of its fields (``call``, ``do``,
``emit``, ``for``, ``fork``, ``listen``, ``raise``, ``set``, ``switch``, ``try``, ``wait``), and is checked
against that kind of task in the DSL's schema. Here too: what Parley refuses (``run``, a ``call`` of
anything but ``run_definition``, ``listen`` with ``until``, ``foreach`` or ``correlate``); ``then``, which
names ``continue``, ``exit``, ``end`` or a task of the same list (only the first three for a fork's
branch); the names of ``use`` a task refers to; the bounds (task lists 64 levels deep, a fork 32
branches); and every expression, with the variables its place reads.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Final

from parley.documents.pointers import join_pointer
from parley.workflow.document_checks import ERROR_FIELDS, Checks, Scope
from parley.workflow.document_schema import LATEST_DSL, task_problems
from parley.workflow.expressions import CAUGHT_ERROR, LOOP_INDEX, LOOP_ITEM, expression_body

MAX_TASK_LIST_DEPTH: Final = 64
MAX_BRANCHES: Final = 32
TASK_NAME: Final = re.compile(r"[A-Za-z0-9_-]+")
#: The directives of ``then`` besides a task's name.
FLOW_DIRECTIVES: Final = ("continue", "exit", "end")
#: The kinds of task Parley runs, by the field that names each.
TASK_KINDS: Final = ("call", "do", "emit", "for", "fork", "listen", "raise", "set", "switch", "try", "wait")
#: The fields every task takes, and the fields that go with one kind (``catch``, ``while``).
COMMON_FIELDS: Final = ("if", "input", "output", "export", "timeout", "then", "metadata", "catch", "while")
#: The function a workflow calls, and the types of definition it runs.
RUN_DEFINITION: Final = "run_definition"
CALL_TYPES: Final = ("interaction", "reasoning", "workflow")
CALL_FIELDS: Final = ("type", "name", "input")
#: A definition's name (``http-api.md``, "Definitions").
DEFINITION_NAME: Final = re.compile(r"[a-z][a-z0-9-]{2,47}")
#: The calls of the DSL that reach the world directly.
WORLD_CALLS: Final = ("http", "grpc", "openapi", "asyncapi", "a2a", "mcp")
EMIT_FIELDS: Final = ("type", "source", "subject", "data")
LISTEN_READS: Final = ("data", "envelope")
_REACH: Final = (
    "a workflow reaches the world through its playbook's functions and their tool servers: "
    "call one with call: run_definition"
)


@dataclass(frozen=True)
class CalledFunction:
    """A ``call: run_definition`` task: the type and name of the definition it runs, and the task's
    reference (its JSON Pointer, such as ``/do/0/approval/try/0/ask``)."""

    type: str
    name: str
    reference: str


@dataclass(frozen=True)
class TaskPlace:
    """Where a task is: how deep its list is (the document's ``do`` is 1), the variables its places
    read, the names of the tasks of its list, and whether its list is a fork's branches."""

    depth: int
    scope: Scope
    siblings: frozenset[str]
    branch: bool


@dataclass
class TaskChecks(Checks):
    """The checks of the task lists, on top of the shared ones: ``version`` is the DSL version whose
    schema the tasks are checked against; ``calls`` collects the ``call: run_definition`` tasks."""

    version: str = LATEST_DSL
    calls: list[CalledFunction] = field(default_factory=list)

    def task_list(
        self, pointer: str, value: Any, depth: int, scope: Scope, *, branches: bool = False
    ) -> None:
        """A task list (``do``, ``try``, ``catch.do``, ``fork.branches``), ``depth`` levels deep (the
        document's ``do`` is 1). ``branches`` is a fork's list, whose tasks go on only with ``continue``,
        ``exit`` or ``end``."""
        if not isinstance(value, list):
            return  # the DSL's schema says a task list is a list
        if depth > MAX_TASK_LIST_DEPTH:
            self.problem(pointer, f"Task lists nest at most {MAX_TASK_LIST_DEPTH} levels; this one is deeper")
            return
        tasks: list[tuple[str, str, dict[str, Any]]] = []
        names: dict[str, str] = {}
        for index, item in enumerate(value):
            here = join_pointer(pointer, index)
            if not isinstance(item, dict) or len(item) != 1:
                self.problem(
                    here,
                    "Each item of a task list is a mapping with one key, the task's name, whose value is "
                    "the task, such as '- ask: {call: run_definition, with: …}'",
                )
                continue
            ((name, body),) = item.items()
            reference = join_pointer(here, name)
            if TASK_NAME.fullmatch(name) is None:
                self.problem(reference, f"A task's name is letters, digits, - and _, not {_shown(name)}")
            elif name in names:
                self.problem(reference, f"Task names differ within a list: {name!r} is also {names[name]}")
            else:
                names[name] = reference
            if not isinstance(body, dict):
                self.problem(reference, "A task is a mapping of its fields, such as 'set: {done: true}'")
                continue
            tasks.append((reference, name, body))
        at = TaskPlace(depth, scope, frozenset(names), branches)
        for reference, _, body in tasks:
            self.task(reference, body, at)

    def task(self, pointer: str, body: dict[str, Any], at: TaskPlace) -> None:
        """One task: its kind and the checks of that kind, then the fields every task takes."""
        kinds = [kind for kind in (*TASK_KINDS, "run") if kind in body]
        if "for" in kinds and "do" in kinds:
            kinds.remove("do")  # a for's body
        checked = True
        if "run" in body:
            self.problem(
                join_pointer(pointer, "run"),
                "run tasks are refused: a workflow runs no container, script, shell or workflow of its own; "
                "it calls its playbook's functions with call: run_definition",
            )
            checked = False
        if "call" in body and body["call"] != RUN_DEFINITION:
            self.refused_call(join_pointer(pointer, "call"), body["call"])
            checked = False
        if not kinds:
            self.problem(
                pointer,
                f"A task does one of {', '.join(TASK_KINDS)}: this one has none of these fields"
                + _meant_kind(body),
            )
            checked = False
        elif len(kinds) > 1:
            self.problem(pointer, f"A task does one thing: this one has {' and '.join(kinds)}")
            checked = False
        if checked:
            for problem in task_problems(body, kinds[0], self.version):
                self.schema_problem(join_pointer(pointer, *problem.path), problem.message)
        self.common_fields(pointer, body, at)
        for kind in kinds:
            getattr(self, f"kind_{kind}")(pointer, body, at)

    # -- every task -------------------------------------------------------------------------------------

    def common_fields(self, pointer: str, body: dict[str, Any], at: TaskPlace) -> None:
        if "if" in body:
            self.condition(join_pointer(pointer, "if"), body["if"], at.scope)
        if "input" in body:
            self.data_block(join_pointer(pointer, "input"), body["input"], "from", at.scope)
        if "output" in body:
            self.data_block(join_pointer(pointer, "output"), body["output"], "as", at.scope)
        if "export" in body:
            self.data_block(join_pointer(pointer, "export"), body["export"], "as", at.scope.with_output())
        if "timeout" in body:
            self.timeout(join_pointer(pointer, "timeout"), body["timeout"], at.scope)
        if "then" in body:
            self.then(join_pointer(pointer, "then"), body["then"], at.siblings, at.branch)

    def data_block(
        self, pointer: str, value: Any, shaping: str, scope: Scope, *, object_root: bool = False
    ) -> None:
        """``input`` (``from``), ``output`` and ``export`` (``as``), and their ``schema``."""
        if not isinstance(value, dict):
            return
        if shaping in value:
            where = join_pointer(pointer, shaping)
            if isinstance(value[shaping], str):
                self.condition(where, value[shaping], scope)
            else:
                self.values(where, value[shaping], scope)
        if "schema" in value:
            self.inline_schema(join_pointer(pointer, "schema"), value["schema"], object_root=object_root)

    def then(self, pointer: str, value: Any, siblings: frozenset[str], branch: bool) -> None:
        if not isinstance(value, str) or value in FLOW_DIRECTIVES:
            return
        if branch:
            self.value_problem(
                pointer, "A fork's branch goes on with continue, exit or end: it cannot go to another task"
            )
        elif value not in siblings:
            names = sorted(siblings)
            known = ", ".join(names[:10]) + (", …" if len(names) > 10 else "")
            self.value_problem(
                pointer,
                f"then names continue, exit, end or a task of the same list ({known}); "
                f"there is no task {_shown(value)} in it",
            )

    # -- each kind --------------------------------------------------------------------------------------

    def refused_call(self, pointer: str, value: Any) -> None:
        if isinstance(value, str) and value in WORLD_CALLS:
            self.value_problem(pointer, f"call: {value} is refused: {_REACH}")
        elif isinstance(value, str):
            self.value_problem(
                pointer,
                f"call: {_shown(value)} is refused: the one function a workflow calls is run_definition, "
                f"which runs a function of its playbook; {_REACH.split(': ')[0]}",
            )

    def kind_call(self, pointer: str, body: dict[str, Any], at: TaskPlace) -> None:
        if body.get("call") != RUN_DEFINITION:
            return
        where = join_pointer(pointer, "with")
        arguments = body.get("with")
        if arguments is None:
            self.problem(where, "call: run_definition needs with: the type and name of the function to run")
            return
        if not isinstance(arguments, dict):
            return  # the DSL's schema says with is a mapping
        for key in arguments:
            if key not in CALL_FIELDS:
                self.problem(
                    join_pointer(where, key),
                    f"{key!r} is not a field of with here; expected type, name, input",
                )
        call_type, name = arguments.get("type"), arguments.get("name")
        if "type" not in arguments:
            self.problem(
                join_pointer(where, "type"), "with.type is required: interaction, reasoning or workflow"
            )
        elif call_type not in CALL_TYPES:
            self.value_problem(join_pointer(where, "type"), "with.type is interaction, reasoning or workflow")
        if "name" not in arguments:
            self.problem(
                join_pointer(where, "name"), "with.name is required: the name of the function to run"
            )
        elif not isinstance(name, str) or DEFINITION_NAME.fullmatch(name) is None:
            self.value_problem(
                join_pointer(where, "name"),
                "with.name is a definition's name: 3 to 48 characters of a-z, 0-9 and -, starting with "
                "a letter",
            )
        if "input" in arguments:
            self.values(join_pointer(where, "input"), arguments["input"], at.scope)
        if call_type in CALL_TYPES and isinstance(name, str) and DEFINITION_NAME.fullmatch(name) is not None:
            self.calls.append(CalledFunction(str(call_type), name, pointer))

    def kind_do(self, pointer: str, body: dict[str, Any], at: TaskPlace) -> None:
        self.task_list(join_pointer(pointer, "do"), body.get("do"), at.depth + 1, at.scope)

    def kind_set(self, pointer: str, body: dict[str, Any], at: TaskPlace) -> None:
        value, where = body.get("set"), join_pointer(pointer, "set")
        if isinstance(value, str) and expression_body(value) is None:
            self.value_problem(where, "set is a mapping of values, or one expression written ${ … }")
            return
        self.values(where, value, at.scope)

    def kind_wait(self, pointer: str, body: dict[str, Any], at: TaskPlace) -> None:
        if "wait" in body:
            self.duration(join_pointer(pointer, "wait"), body["wait"], at.scope)

    def kind_raise(self, pointer: str, body: dict[str, Any], at: TaskPlace) -> None:
        block = body.get("raise")
        if not isinstance(block, dict) or "error" not in block:
            return
        error, where = block["error"], join_pointer(pointer, "raise", "error")
        if isinstance(error, str):
            if error not in self.errors:
                self.value_problem(where, f"There is no error {_shown(error)} in use.errors")
        else:
            self.error(where, error, at.scope)

    def kind_switch(self, pointer: str, body: dict[str, Any], at: TaskPlace) -> None:
        cases = body.get("switch")
        if not isinstance(cases, list):
            return
        default: str | None = None
        for index, item in enumerate(cases):
            if not isinstance(item, dict) or len(item) != 1:
                continue  # the DSL's schema says each case is a mapping with one key
            ((name, case),) = item.items()
            here = join_pointer(pointer, "switch", index, name)
            if not isinstance(case, dict):
                continue
            if "when" in case:
                self.condition(join_pointer(here, "when"), case["when"], at.scope)
            elif default is None:
                default = here
            else:
                self.problem(
                    here, f"A switch has one case without when, its default: {default} is one already"
                )
            if "then" in case:
                self.then(join_pointer(here, "then"), case["then"], at.siblings, at.branch)

    def kind_for(self, pointer: str, body: dict[str, Any], at: TaskPlace) -> None:
        loop = body.get("for")
        item, index = LOOP_ITEM, LOOP_INDEX
        if isinstance(loop, dict):
            if "in" in loop:
                self.condition(join_pointer(pointer, "for", "in"), loop["in"], at.scope)
            if "each" in loop:
                item = (
                    self.variable_name(join_pointer(pointer, "for", "each"), loop["each"], "for.each") or item
                )
            if "at" in loop:
                index = self.variable_name(join_pointer(pointer, "for", "at"), loop["at"], "for.at") or index
            if item == index:
                self.value_problem(
                    join_pointer(pointer, "for", "at"), "for.each and for.at name two variables"
                )
        inside = at.scope.with_loop(item, index)
        if "while" in body:
            self.condition(join_pointer(pointer, "while"), body["while"], inside)
        self.task_list(join_pointer(pointer, "do"), body.get("do"), at.depth + 1, inside)

    def kind_fork(self, pointer: str, body: dict[str, Any], at: TaskPlace) -> None:
        fork = body.get("fork")
        if not isinstance(fork, dict):
            return
        branches, where = fork.get("branches"), join_pointer(pointer, "fork", "branches")
        if isinstance(branches, list) and len(branches) > MAX_BRANCHES:
            self.problem(where, f"A fork has at most {MAX_BRANCHES} branches, not {len(branches)}")
            return
        self.task_list(where, branches, at.depth + 1, at.scope, branches=True)

    def kind_try(self, pointer: str, body: dict[str, Any], at: TaskPlace) -> None:
        self.task_list(join_pointer(pointer, "try"), body.get("try"), at.depth + 1, at.scope)
        catch = body.get("catch")
        if not isinstance(catch, dict):
            return
        here = join_pointer(pointer, "catch")
        errors = catch.get("errors")
        if isinstance(errors, dict) and isinstance(errors.get("with"), dict):
            self.error_filter(join_pointer(here, "errors", "with"), errors["with"])
        name = CAUGHT_ERROR
        if "as" in catch:
            name = self.variable_name(join_pointer(here, "as"), catch["as"], "catch.as") or name
        caught = at.scope.with_error(name)
        for name_of_condition in ("when", "exceptWhen"):
            if name_of_condition in catch:
                where = join_pointer(here, name_of_condition)
                self.condition(where, catch[name_of_condition], caught)
        retry = catch.get("retry")
        if isinstance(retry, str):
            if retry not in self.retries:
                self.value_problem(
                    join_pointer(here, "retry"), f"There is no retry policy {_shown(retry)} in use.retries"
                )
        elif retry is not None:
            self.retry_policy(join_pointer(here, "retry"), retry, caught)
        if "do" in catch:
            self.task_list(join_pointer(here, "do"), catch["do"], at.depth + 1, caught)

    def error_filter(self, pointer: str, value: dict[str, Any]) -> None:
        """``errors.with``: the fields an error is matched on, each written out."""
        for key, item in value.items():
            where = join_pointer(pointer, key)
            if key not in ERROR_FIELDS:
                hint = "; did you mean detail?" if key == "details" else ""
                self.problem(where, f"errors.with matches {', '.join(ERROR_FIELDS)}, not {key!r}{hint}")
            elif expression_body(item) is not None:
                self.value_problem(where, "errors.with matches values written out; write a condition in when")

    def kind_listen(self, pointer: str, body: dict[str, Any], at: TaskPlace) -> None:
        if "foreach" in body:
            self.problem(
                join_pointer(pointer, "foreach"),
                "listen with foreach is refused: a listen takes its events as a list",
            )
        listen = body.get("listen")
        if not isinstance(listen, dict):
            return
        if listen.get("read") not in (None, *LISTEN_READS):
            self.value_problem(join_pointer(pointer, "listen", "read"), "listen.read is data or envelope")
        to = listen.get("to")
        if not isinstance(to, dict):
            return
        here = join_pointer(pointer, "listen", "to")
        if "until" in to:
            self.problem(
                join_pointer(here, "until"),
                "listen with until is refused: to.any takes the first event that matches one of its filters",
            )
        filters: list[tuple[str, Any]] = []
        if "one" in to:
            filters.append((join_pointer(here, "one"), to["one"]))
        for many in ("any", "all"):
            if isinstance(to.get(many), list):
                filters.extend((join_pointer(here, many, i), item) for i, item in enumerate(to[many]))
        for where, event_filter in filters:
            if not isinstance(event_filter, dict):
                continue
            if "correlate" in event_filter:
                self.problem(
                    join_pointer(where, "correlate"),
                    "listen with correlate is refused: a filter's with names what each event must hold",
                )
            if "with" in event_filter:
                self.values(join_pointer(where, "with"), event_filter["with"], at.scope)

    def kind_emit(self, pointer: str, body: dict[str, Any], at: TaskPlace) -> None:
        emit = body.get("emit")
        event = emit.get("event") if isinstance(emit, dict) else None
        attributes = event.get("with") if isinstance(event, dict) else None
        if not isinstance(attributes, dict):
            return
        where = join_pointer(pointer, "emit", "event", "with")
        for key in attributes:
            if key not in EMIT_FIELDS:
                self.problem(
                    join_pointer(where, key),
                    f"emit.event.with takes {', '.join(EMIT_FIELDS)}, not {key!r}: Parley gives the event "
                    "its id and time",
                )
        self.values(where, attributes, at.scope)

    def kind_run(self, pointer: str, body: dict[str, Any], at: TaskPlace) -> None:
        """Refused (see :meth:`task`); nothing inside it is read."""


def _meant_kind(body: dict[str, Any]) -> str:
    """``; did you mean set?`` for a task whose field is a kind of task misspelled (``sett``)."""
    for key in body:
        if key not in COMMON_FIELDS:
            close = difflib.get_close_matches(key.lower(), TASK_KINDS, n=1, cutoff=0.6)
            if close:
                return f"; did you mean {close[0]} (not {_shown(key)})?"
    return ""


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "…")
