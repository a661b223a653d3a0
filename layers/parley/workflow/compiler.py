"""A checked workflow document becomes the Amazon States Language of its Step Functions state machine, in
the JSONata query language (``workflow-format.md``: "Tasks", "Data between tasks", "Expressions",
"Errors, retries and timeouts", "Calling a function", "How a run ends").

:func:`compile_workflow` takes the document as read from its YAML, after the checks of saving (the DSL's
schema, Parley's refusals, the names that must exist, every expression parsed): it checks nothing of that
again. It compiles every task of the page (``call: run_definition``, ``set``, ``do``, ``switch``,
``try``/``catch`` with ``retry``, ``raise``, ``for``, ``fork`` with ``compete``, ``wait``, ``listen``,
``emit``), and on every task ``if``, ``input.from``, ``output.as``, ``export.as``, ``then`` and
``timeout`` (on ``set``, ``switch`` and ``raise``, which take no time, it changes nothing); the
document's ``input.from``, ``output.as`` and ``timeout`` (its ``schedule`` is the runtime's: nothing
in the machine). Not compiled yet: the document's ``timeout`` written as an expression (a machine's
``TimeoutSeconds`` is a number). :func:`not_yet_compiled` lists what such a document uses, and
:func:`compile_workflow` raises :class:`NotCompiled`.

**What a run costs.** Step Functions bills each state a run enters, so the machine has no state that
does no work: a state that would only hand its input on is left out wherever the state before it can
name the one after it, and one state may then stand for several tasks (:mod:`parley.workflow.states`
says how the history reads them back). The brief-approval workflow answered enters two states (its
call, the end); expired and caught, three (the call, the catch's decision giving the recovery's value,
the end).

**The machine.** ``#start`` (Pass) assigns what every expression reads: ``$workflow`` (``id``,
``input``, ``startedAt``), ``$runtime``, the run key ``$run`` and ``$depth`` for calls, ``$context`` as
``{}`` where the document exports, and ``$uncaught`` (``null``); its output is the run's input after the
document's ``input.from``. Where the first task's state is a Pass or a Task that nothing enters again
(not a Choice, whose default assigns nothing; not a Parallel, whose branch would read the variables
before it assigns them), ``#start`` is folded into it: that state's expressions read the execution's
input themselves (each in a block binding what ``#start`` would have assigned), and it assigns those
variables, as its Catch does too (a state that fails assigns nothing of its own). The tasks follow at
the machine's top level; ``#output`` applies the document's ``output.as``; ``#end`` tells the workflow
entry how the run ended (``{"action": "end", "run", "output"}``, or ``…, "error"}`` when ``$uncaught``
holds an error; retried, it is idempotent; its output, the execution's, is that ``{"output"}`` or
``{"error"}``) and ends the execution, which succeeds whatever the run's ending (but see below). States
nothing reaches (a task after ``then: end``) are left out: Step Functions refuses them.

**An error nothing catches.** Outside any ``try``, every Task has a ``Catch`` (``States.ALL``) that keeps
the error, as a workflow error, in ``$uncaught`` and goes to ``#end``; a ``raise`` is a Pass that does
the same with its error, as is a ``catch`` that does not take its ``try``'s error. A Pass or a Choice
outside any ``try`` whose expression fails makes the execution fail with
``States.QueryEvaluationError`` (a Pass or a Choice has no ``Catch``): the runtime ends such a run from
the execution's failure (the entry's ``ended`` action), as the ``expression`` error. So do the errors
Step Functions does not let a Catch take (``States.Runtime``, ``States.DataLimitExceeded``).

**How each task compiles** (``R`` its reference; the states are named as :mod:`parley.workflow.states`
says, with their roles):

- ``set``: a Pass ``R`` whose ``Output`` is the value (``output.as`` applied), whose ``Assign`` is the
  export. ``call``: a Task ``R`` on ``lambda:invoke.waitForTaskToken`` of the workflow entry (the payload
  of :mod:`parley.workflow.engine`; Lambda's own failures retried), its output ``$states.result.output``.
  ``raise``: inside a ``try``, a Fail ``R`` with the error as its ``Cause`` (``instance`` the task's
  reference unless written); outside any, the Pass above. Where the ``Output`` reads ``$context`` and the
  task exports, the export moves to a Pass ``R#export`` (Step Functions may evaluate ``Output`` after
  ``Assign``: a state never reads what it assigns).
- ``switch``: a Choice ``R``, one rule per case with ``when``, the case without ``when`` its
  ``Default`` (none: the next task); its output is its input. With ``output.as`` or ``export.as``,
  every rule shapes (a last rule that always holds stands for the default).
- ``do``: its list; a Pass ``R`` before it only where the task has ``input.from``, keeps its input for
  ``output.as``/``export.as``, or its list is empty or goes back to its first task; a Pass ``R#done``
  after it only where the task has ``output.as`` or ``export.as``.
- ``try``: its list as one Task where the list is one ``call`` (no ``if``, no ``export`` that must move,
  no ``then`` but ``continue`` and ``exit``), the ``try``'s Catch on that Task; else a Parallel of one
  branch holding the list (``R``, or ``R#try``). A Pass ``R`` before it where the ``try`` starts the
  retry's count, keeps its input or applies ``input.from``. The Catch keeps the error (as a workflow
  error, in a variable) and leads to the Choice ``R#catch`` (whether ``errors.with``, ``when`` and
  ``exceptWhen`` take it, and whether the retry runs the list again), or straight to the recovery when
  the catch takes every error and has no retry. Not taken: ``R#raise`` raises it again. Retried: the
  Wait ``R#retry`` for the delay (its input ``{attempt, delay, data}``; it counts), then the Task or
  Parallel again. Taken: ``catch.do`` (its input the task's data), or the task hands its data on; where
  ``catch.do`` begins with a ``set`` (no ``if``, nothing going back to it), that set is ``R#catch``'s
  last rule (a rule has ``Output`` and ``Assign``), so that taking the error gives the recovery's value.
  ``R#done`` (``output.as``, ``export.as``) only where the task has them.
- ``retry``: ``limit.attempt.count`` retries at most (none: no limit but the run's), a failed attempt
  that lasted longer than ``limit.attempt.duration`` is not retried, nor one after ``limit.duration``
  since the first attempt began.
- ``if``: a Choice ``R#if`` before the task: held, the task; not held, the next task (``then`` is not
  followed; the Choice's way out tells the task skipped).
- ``then``: the ``Next`` of the task's last state: ``continue`` the next task (or what follows the
  list), ``exit`` what follows the list, a sibling its first state, ``end`` the end of the run (inside a
  ``try``, the branch ends telling so, and the Parallel's Choice ``R#ended`` goes on ending; inside a
  ``fork``'s branch, the branch fails with ``Parley.End`` and its data, which the fork's Catch takes to
  the end).
- ``wait``: a Wait ``R`` of the duration's whole seconds (rounded up): a number for ISO 8601 or a
  mapping, a ``$ceil`` of the expression's value (ISO 8601 text or a mapping, read as it runs); its
  output is its input.
- ``emit``: a Task ``R`` on ``lambda:invoke`` of the entry (``{"action": "emit", "run", "task",
  "attempt", "event": {"type", "source", "subject"?, "data"?}}``, evaluated); its output is its input.
  ``listen``: a Task ``R`` on ``lambda:invoke.waitForTaskToken`` (``{"action": "listen", "token", "run",
  "task", "attempt", "to", "read"}``, the filters as written, expressions kept as their ``${ … }``
  text); its output ``$states.result.output``, the events.
- ``for``: a Pass ``R`` evaluates ``for.in`` once (on the data after ``input.from``) into the variable
  ``items_S`` and sets the position ``at_S`` to -1; the Choice ``R#each`` goes into the list while
  there is another item and ``while`` holds (its rule assigns the next position), else to the task's
  end. The list's end goes back to ``R#each``, so each iteration takes the one before's output;
  ``then: exit`` in the list leaves the loop. ``$item``/``$index`` (or ``for.each``/``for.at``) read
  ``$items_S[$at_S]`` and ``$at_S``. Per iteration: the list's states and one Choice.
- ``fork``: a Parallel ``R`` (``R#fork`` after a Pass ``R`` where it shapes its input or keeps it), a
  branch per task of ``fork.branches`` (a scope of its own; a branch that exports has its own
  ``$context``, started from the one around it in ``B#begin``, and its exports stay in the branch); its
  output ``$states.result``, the outputs in the order written. With ``compete: true``, each branch is a
  Parallel ``B#race`` of its task, which, done, goes to the Fail ``B#won`` (error ``Parley.Won``, the
  output as ``{"data"}`` JSON its cause): a Parallel stops its other branches when one fails, and the
  fork's Catch takes that output (through ``R#done``); a branch that is one call is that Task, its
  Next ``B#won`` and its Catch ``B#lost``, without a race. A branch whose task fails goes (its race's
  Catch) to the Pass ``B#lost``, ending with ``{"error"}``; when every branch lost, the Parallel
  completes and ``R#lost`` raises the first branch's error: the fork fails only when every branch
  fails. A ``then: end`` inside a branch fails its race with ``Parley.End`` (``B#race-end``), which
  the race's Catch hands on to ``B#ending`` and the fork's Catch to the run's end; a branch that
  exports has its own ``$context`` in its race (``B#begin``). The runs the stopped branches waited for
  are the runtime's to cancel.
- ``timeout``: on a Task (``call``, ``listen``, ``emit``), its ``TimeoutSeconds`` and a first Catch of
  ``States.Timeout`` raising the ``timeout`` error (408, at the task): outside any ``try`` the Catch
  keeps it in ``$uncaught``, inside one ``R#timeout`` (a Fail) raises it; a call or a listen first goes
  to the Task ``R#deadline`` (``{"action": "deadline", "run", "task", "attempt"}``: the entry cancels
  the called run with the kind ``deadline``, or forgets the listen), which outside any ``try`` keeps
  the error and goes to the end. A ``wait`` no shorter than its timeout waits the timeout, then
  ``R#timeout`` raises it. A ``do``, ``for``, ``fork`` or ``try`` with a ``timeout``, or a ``wait``
  whose duration or timeout is an expression, races its clock in the Parallel ``R#timed``: its first
  branch (a scope of its own) holds the task, which ends failing with ``Parley.Won`` and ``{"data",
  "context"?}`` as JSON (``R#in-time``); its second waits the timeout (``R#clock``) and fails with
  ``Parley.Late`` (``R#late``). A Parallel stops its other branch when one fails: the Catch takes the
  task's output (and its exports) on, or goes to ``R#deadline`` (its ``task`` the timed task's
  reference: the entry cancels the runs the calls inside it wait for, and forgets its listens) and the
  ``timeout`` error. In time, the race costs three transitions (the Parallel, the clock's Wait,
  ``R#in-time``). The document's ``timeout`` is the machine's ``TimeoutSeconds``: the execution times
  out without its end, and the runtime ends the run from that (the entry's ``ended`` action).

Where a task ends without a state of its own, the states that go on past it complete it
(:attr:`~parley.workflow.states.TaskState.completes`, a Parallel's through its branch's last states, or
a Choice's ways); where that cannot be told apart (a Catch going there, or a Choice going to one state
on two ways that mean different things), that way goes through the task's Pass ``R#done``.

**Variables.** Step Functions gives a Parallel's branch the variables of the scopes around it to read,
never to assign. So ``$context`` lives in one variable per scope (``context_0`` at the top level; a
``try`` whose list exports has its own, started from the one around it in ``R#begin`` and handed back
with the branch's output); a ``try``'s error, retry count and a task's kept input are variables named by
the scope and the list's depth (``error_1_2``), which no scope around assigns; ``$uncaught`` is assigned
at the top level only. A ``try`` list that fails leaves ``$context`` as it was before the ``try``.

**A call's attempt** (and a listen's, an emit's; ``engine``: the same attempt for a step Step Functions
performs again, another for each time a retry runs the ``try`` again and for each iteration of a
``for``): the counts of the retries and the positions of the ``for`` loops around it, outermost first,
joined with ``.`` (``"0"`` without one); where a ``then`` can run the task again (a sibling before it),
also ``@`` and the time its state was entered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Final

import parley
from parley.errors import ParleyError
from parley.workflow import engine
from parley.workflow.compile_errors import (
    LAMBDA_ERRORS,
    caught_error,
    delay_seconds_text,
    needs_attempt_duration,
    raised_error,
    retry_text,
    takes_text,
    timeout_error,
)
from parley.workflow.compile_expressions import (
    Place,
    condition_text,
    expression_text,
    literal,
    literal_duration_ms,
    mapping,
    member,
    referenced,
    seconds_field,
    shaping_text,
    template,
    value_text,
)
from parley.workflow.compile_expressions import (
    field as template_field,
)
from parley.workflow.states import DOCUMENT, Role, TaskRoles, TaskState, state_name

__all__ = [
    "COMPILED_TASKS",
    "LATER_TASKS",
    "CompiledWorkflow",
    "NotCompiled",
    "compile_workflow",
    "not_yet_compiled",
]

#: The task kinds the compiler compiles.
COMPILED_TASKS: Final = (
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
#: The task kinds of the DSL it does not compile yet.
LATER_TASKS: Final[tuple[str, ...]] = ()
#: The error a fork's branch fails with to end the run (``then: end``), its data as the cause.
END_ERROR: Final = "Parley.End"
#: The error a competing fork's branch fails with when it succeeds first, its output as the cause.
WON_ERROR: Final = "Parley.Won"
#: Step Functions' longest error cause, in characters: the most data a branch hands out by failing.
MAX_CAUSE: Final = 32_768
#: The error the clock of a task's ``timeout`` fails with when it passes first.
LATE_ERROR: Final = "Parley.Late"
#: What a task is, by the key that makes it (``for`` and ``fork`` first: a ``for`` has a ``do`` too).
_KINDS: Final = (
    "for",
    "fork",
    "try",
    "call",
    "set",
    "switch",
    "raise",
    "wait",
    "listen",
    "emit",
    "run",
    "do",
)
#: The tasks a ``timeout`` is compiled on (a Task's ``TimeoutSeconds``; a wait's shorter wait; a task that
#: takes no time, which no timeout can end).
_TIMED_TASKS: Final = ("call", "listen", "emit", "wait", "set", "switch", "raise", "do", "for", "fork", "try")
#: The tasks of several states whose ``timeout`` races them with a clock.
_RACED_TASKS: Final = ("do", "for", "fork", "try")
#: The target of a state that ends its branch.
_END: Final = "\x00end"
_ALL: Final = "States.ALL"


@dataclass(frozen=True)
class CompiledWorkflow:
    """A workflow's state machine: the ASL (``definition``, JSON) and what each state is to its task."""

    definition: dict[str, Any]
    states: Mapping[str, TaskState]


class NotCompiled(ParleyError, ValueError):
    """A document that uses what the compiler does not compile yet; ``found`` lists each use as
    ``(pointer, what)``."""

    def __init__(self, found: Sequence[tuple[str, str]]) -> None:
        self.found = tuple(found)
        shown = "; ".join(f"{pointer or '/'}: {what}" for pointer, what in self.found)
        super().__init__(f"Workflows cannot use these yet: {shown}")


def compile_workflow(data: Mapping[str, Any]) -> CompiledWorkflow:
    """The state machine of a checked workflow document. Raises :class:`NotCompiled` for a document that
    uses what is not compiled yet."""
    found = not_yet_compiled(data)
    if found:
        raise NotCompiled(found)
    compiler = _Compiler(data, cut_names={})
    definition = compiler.machine()
    if compiler.cut_names:
        # The error of a state whose name was cut is read back through a table of those names.
        compiler = _Compiler(data, cut_names=dict(compiler.cut_names))
        definition = compiler.machine()
    return CompiledWorkflow(definition=definition, states=MappingProxyType(dict(compiler.roles)))


def not_yet_compiled(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What a document uses that is not compiled yet, each as ``(pointer, what)``."""
    found: list[tuple[str, str]] = []
    timeouts = mapping(mapping(data.get("use")).get("timeouts"))
    timeout = data.get("timeout")
    if isinstance(timeout, str):
        timeout = timeouts.get(timeout)
    if "timeout" in data and literal_duration_ms(mapping(timeout).get("after")) is None:
        found.append(("/timeout", "the document's timeout written as an expression"))
    for reference, task in _walk(data.get("do"), "/do"):
        kind = task_kind(task)
        if kind in LATER_TASKS:
            found.append((reference, _a(f"{kind} task")))
        if "timeout" in task and kind not in _TIMED_TASKS:
            found.append((f"{reference}/timeout", f"a timeout on a {kind} task"))
    return found


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"


def task_kind(task: Mapping[str, Any]) -> str:
    """The kind of a task (``call``, ``set``, …), by the key that makes it."""
    for kind in _KINDS:
        if kind in task:
            return kind
    return "unknown"


def _entries(items: Any, pointer: str) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """A task list's tasks: ``(name, reference, task)``."""
    if not isinstance(items, list):
        return
    for index, item in enumerate(items):
        if isinstance(item, Mapping):
            for name, task in item.items():
                if isinstance(task, Mapping):
                    yield str(name), f"{pointer}/{index}/{name}", task


def _sublists(task: Mapping[str, Any], reference: str) -> Iterator[tuple[Any, str]]:
    """The task lists inside a task, with their pointers."""
    kind = task_kind(task)
    if kind == "try":
        yield task.get("try"), f"{reference}/try"
        catch = task.get("catch")
        if isinstance(catch, Mapping) and "do" in catch:
            yield catch.get("do"), f"{reference}/catch/do"
    elif kind in ("do", "for"):
        yield task.get("do"), f"{reference}/do"
    elif kind == "fork":
        fork = task.get("fork")
        if isinstance(fork, Mapping):
            yield fork.get("branches"), f"{reference}/fork/branches"


def _walk(items: Any, pointer: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every task of a list and of the lists inside its tasks: ``(reference, task)``."""
    for _name, reference, task in _entries(items, pointer):
        yield reference, task
        for inner, inner_pointer in _sublists(task, reference):
            yield from _walk(inner, inner_pointer)


def _exports(items: Any) -> bool:
    """Whether a task of the list (or of a list inside it) exports (``export.as``)."""
    return any(
        isinstance(task.get("export"), Mapping) and "as" in task["export"] for _, task in _walk(items, "")
    )


def _ends(items: Any) -> bool:
    """Whether a task of the list (or of a list inside it), or a switch's case, ends the run
    (``then: end``)."""
    return any(then == "end" for _, task in _walk(items, "") for then in _thens(task))


def _thens(task: Mapping[str, Any]) -> list[Any]:
    """Where a task may go next: its ``then``, and its cases' if it is a ``switch``."""
    thens = [task.get("then")]
    if task_kind(task) == "switch":
        thens += [case.get("then") for _name, case in _cases(task)]
    return thens


def _cases(task: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    cases: list[tuple[str, Mapping[str, Any]]] = []
    for item in task.get("switch") or []:
        if isinstance(item, Mapping):
            for name, case in item.items():
                cases.append((str(name), case if isinstance(case, Mapping) else {}))
    return cases


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _reads(value: Any, *names: str) -> bool:
    """Whether an expression in ``value`` may read one of the variables ``names``."""
    return any(referenced(text) & set(names) for text in _strings(value))


def _mentions(value: Any, variable: str) -> bool:
    """Whether a field (or JSONata text) reads the machine's variable ``variable``."""
    return re.search(rf"\${re.escape(variable)}(?![A-Za-z0-9_])", json.dumps(value)) is not None


def _shaping(task: Mapping[str, Any], section: str, key: str) -> Any:
    part = task.get(section)
    return part.get(key) if isinstance(part, Mapping) else None


def _input_from(task: Mapping[str, Any], place: Place) -> str | None:
    """JSONata text of the data after the task's (or the document's) ``input.from`` at ``place``
    (``None`` without one)."""
    input_from = _shaping(task, "input", "from")
    return None if input_from is None else shaping_text(input_from, place)


def _back_to_first(entries: Sequence[tuple[str, str, Mapping[str, Any]]]) -> bool:
    """Whether a ``then`` of a list's tasks (or of a switch's cases) goes back to its first task."""
    return any(str(then) == entries[0][0] for _, _, task in entries for then in _thens(task))


@dataclass(frozen=True)
class _Site:
    """Where a task list is compiled: its scope (Parallel branches around it; 0 outside any), its depth
    (lists around it), ``$context`` there (JSONata text) and the variable an export assigns, the target
    of ``then: end``, the retry counts around it (variables, outermost first), whether a ``then`` can
    run its tasks again, and the variables of a ``catch`` or a ``for`` it may read (DSL name → JSONata
    text)."""

    scope: int
    depth: int
    context: str
    context_var: str | None
    end: str
    retries: tuple[str, ...] = ()
    loop: bool = False
    caught: Mapping[str, str] = field(default_factory=dict)

    def suffix(self) -> str:
        return f"{self.scope}_{self.depth}"


_Branch = dict[str, dict[str, Any]]


@dataclass(frozen=True)
class _TaskAt:
    """A task at its place: its ``name``, its ``reference``, the ``task`` as written, the ``site`` of its
    list, ``after`` (the state its ``then`` leads to), ``target`` (the state a ``then`` leads to from
    there: ``continue`` the next task, ``exit`` what follows the list, ``end`` the site's end, a sibling's
    name its first state) and the ``branch`` its states are compiled into."""

    name: str
    reference: str
    task: Mapping[str, Any]
    site: _Site
    after: str
    target: Callable[[Any], str]
    branch: _Branch

    def place(self, *, kept: str | None = None) -> Place:
        """The variables of the task's expressions at its first state (``kept``: the variable holding the
        task's input and start, for its later states)."""
        started = f"${kept}.startedAt" if kept else "$states.context.State.EnteredTime"
        bindings = {
            "input": f"${kept}.input" if kept else "$states.input",
            "data": "$states.input",
            "task": (
                f'{{"name": {literal(self.name)}, "reference": {literal(self.reference)}, '
                f'"startedAt": {started}}}'
            ),
            "context": self.site.context,
        }
        bindings.update(self.site.caught)
        return Place(bindings)

    def entry_place(self) -> Place:
        """The variables where the task's work is evaluated in its first state: ``$data`` its input after
        its own ``input.from``."""
        place = self.place()
        data = _input_from(self.task, place)
        return place if data is None else place.with_(data=data)

    def exported(self) -> tuple[str, Any] | None:
        """The variable the task's ``export.as`` assigns, and that ``export.as`` (``None``: it exports
        nothing here)."""
        export_as = _shaping(self.task, "export", "as")
        if export_as is None or self.site.context_var is None:
            return None
        return self.site.context_var, export_as

    def kept(self, own_lists: Sequence[str]) -> str | None:
        """The variable keeping the task's input and start for its later states, when an expression of
        the task (not of its lists ``own_lists``) reads ``$input`` or ``$task``."""
        return f"task_{self.site.suffix()}" if _reads_own(self.task, own_lists) else None

    def has_done(self) -> bool:
        """Whether the task, of several states, needs its Pass ``R#done`` (``output.as``, ``export.as``)."""
        return _shaping(self.task, "output", "as") is not None or self.exported() is not None


#: The tasks taking one way out of a state tells, in order.
_Told = tuple[TaskRoles, ...]
#: The target of a state going to a task's end that has no state of its own (a key of ``_Compiler.dones``).
_DONE: Final = "\x00done:"
#: While compiling, what taking a Choice's rule (or its Default) tells; removed when its branch closes.
_TOLD: Final = "\x00told"
_TOLD_DEFAULT: Final = "\x00told-default"
#: The variable the end reads an error nothing caught from.
UNCAUGHT: Final = "uncaught"
_COMPLETED: Final[frozenset[Role]] = frozenset({"completed"})
#: ``$workflow``, from the execution's input.
_WORKFLOW: Final = (
    '{"id": $states.input.run.run_id, "input": $states.input.input, '
    '"startedAt": $states.context.Execution.StartTime}'
)
_RUNTIME: Final = MappingProxyType({"name": "parley", "version": parley.__version__})
_STATES_INPUT: Final = re.compile(r"\$states\.input\b")
#: The fields a state's JSON shows last, in this order.
_LAST: Final = ("Retry", "Catch", "Next", "End")


@dataclass
class _Done:
    """Where a task ends without a state of its own: going to ``target`` completes it. ``state`` is the
    Pass ``R#done`` made for it where a Catch or a Choice must go to a state of its own (the others go
    on to ``target`` directly)."""

    reference: str
    target: str
    state: str | None = None


class _Compiler:
    def __init__(self, data: Mapping[str, Any], cut_names: Mapping[str, str]) -> None:
        self.data = data
        use = mapping(data.get("use"))
        self.use_errors: Mapping[str, Any] = use.get("errors") or {}
        self.use_retries: Mapping[str, Any] = use.get("retries") or {}
        self.use_timeouts: Mapping[str, Any] = use.get("timeouts") or {}
        self.known_cuts = cut_names
        self.cut_names: dict[str, str] = {}
        self.own: dict[str, tuple[str, frozenset[Role]]] = {}
        self.starts: dict[str, list[str]] = {}
        self.completes: dict[str, list[str]] = {}
        self.ways: dict[str, dict[str, _Told]] = {}
        self.dones: dict[str, _Done] = {}
        self.ending: set[str] = set()
        self.roles: dict[str, TaskState] = {}

    # -- names and states -------------------------------------------------------------------------------

    def name(self, reference: str, part: str | None = None) -> str:
        name = state_name(reference, part)
        if name != (reference if part is None else f"{reference}#{part}"):
            self.cut_names[name] = reference
        return name

    def add(self, branch: _Branch, name: str, state: dict[str, Any], reference: str, *roles: Role) -> None:
        if name in self.own:
            raise AssertionError(f"two states named {name!r}")
        branch[name] = state
        self.own[name] = (reference, frozenset(roles))

    def task_state(self, name: str) -> TaskState:
        reference, roles = self.own[name]
        return TaskState(
            reference,
            roles,
            starts=tuple(self.starts.get(name, ())),
            completes=tuple(self.completes.get(name, ())),
            ways=tuple(self.ways.get(name, {}).items()),
        )

    def first_state(self, reference: str, task: Mapping[str, Any]) -> str:
        """The state a task begins with (its ``if``, else :meth:`body_state`)."""
        return self.name(reference, "if") if "if" in task else self.body_state(reference, task)

    def body_state(self, reference: str, task: Mapping[str, Any]) -> str:
        """The state a task's work begins with: its own, or the first of its list where it has none (a
        task of several states with a ``timeout``: the Parallel ``R#timed`` racing it with its clock)."""
        if self.raced(task):
            return self.name(reference, "timed")
        return self.own_body_state(reference, task)

    def raced(self, task: Mapping[str, Any]) -> bool:
        """Whether a task's ``timeout`` races it with a clock (a task of several states; a ``wait`` whose
        duration or timeout is an expression)."""
        if "timeout" not in task:
            return False
        kind = task_kind(task)
        if kind == "wait":
            written = literal_duration_ms(self.task_timeout(task)), literal_duration_ms(task.get("wait"))
            return None in written
        return kind in _RACED_TASKS

    def own_body_state(self, reference: str, task: Mapping[str, Any]) -> str:
        """:meth:`body_state` without the race of a ``timeout``."""
        kind = task_kind(task)
        if kind == "do" and not self.do_entry(task):
            _name, inner_reference, inner = next(_entries(task.get("do"), f"{reference}/do"))
            return self.first_state(inner_reference, inner)
        if kind == "try" and not self.try_entry(task):
            single = self.single_call(reference, task)
            if single is not None:
                return self.name(single[1])
        return self.name(reference)

    def do_entry(self, task: Mapping[str, Any]) -> bool:
        """Whether a ``do`` needs a Pass of its own before its list."""
        entries = list(_entries(task.get("do"), ""))
        return (
            _shaping(task, "input", "from") is not None
            or _reads_own(task, ("do",))
            or not entries
            or _back_to_first(entries)
        )

    def try_entry(self, task: Mapping[str, Any]) -> bool:
        """Whether a ``try`` needs a Pass of its own first (the retry's count, its kept input,
        ``input.from``)."""
        return (
            self.retry_of(mapping(task.get("catch"))) is not None
            or _reads_own(task, ("try",))
            or _shaping(task, "input", "from") is not None
        )

    def retry_of(self, catch: Mapping[str, Any]) -> Mapping[str, Any] | None:
        retry = catch.get("retry")
        if isinstance(retry, str):
            retry = self.use_retries.get(retry)
        return retry if isinstance(retry, Mapping) else None

    def single_call(
        self, reference: str, task: Mapping[str, Any]
    ) -> tuple[str, str, Mapping[str, Any]] | None:
        """The one call a ``try``'s list is, where it needs no Parallel: ``(name, reference, task)``."""
        entries = list(_entries(task.get("try"), f"{reference}/try"))
        if len(entries) != 1 or len(task.get("try") or []) != 1:
            return None
        name, inner_reference, inner = entries[0]
        if task_kind(inner) != "call" or "if" in inner or inner.get("then") not in (None, "continue", "exit"):
            return None
        if "timeout" in inner:
            return None  # its deadline raises the timeout error in a branch of its own
        if _shaping(inner, "export", "as") is not None and _reads(_shaping(inner, "output", "as"), "context"):
            return None  # its export moves to a Pass of its own
        return name, inner_reference, inner

    # -- the machine ----------------------------------------------------------------------------------

    def machine(self) -> dict[str, Any]:
        start, end, output = (
            self.name(DOCUMENT, "start"),
            self.name(DOCUMENT, "end"),
            self.name(DOCUMENT, "output"),
        )
        items = self.data.get("do")
        context_var = "context_0" if _exports(items) else None
        output_as = _shaping(self.data, "output", "as")
        after = output if output_as is not None else end
        site = _Site(
            scope=0,
            depth=0,
            context=f"${context_var}" if context_var else "{}",
            context_var=context_var,
            end=after,
        )
        states: _Branch = {}
        first = self.task_list(items, "/do", site, after, states)
        if output_as is not None:
            place = Place({"input": "$workflow.input", "data": "$states.input", "context": site.context})
            self.add(
                states,
                output,
                {"Type": "Pass", "Output": template(shaping_text(output_as, place)), "Next": end},
                DOCUMENT,
                "part",
            )
        self.add(states, end, self.end_state(), DOCUMENT, "end")
        data = self.run_data()
        assign: dict[str, Any] = {
            "workflow": template(_WORKFLOW),
            "runtime": dict(_RUNTIME),
            "run": template("$states.input.run"),
            "depth": template("$states.input.depth"),
        }
        if context_var:
            assign[context_var] = {}
        assign[UNCAUGHT] = None
        self.add(
            states,
            start,
            {"Type": "Pass", "Assign": assign, "Output": template(data), "Next": first},
            DOCUMENT,
            "start",
        )
        states = {start: states.pop(start), **states}
        self.close_branch(states, None, DOCUMENT)
        start_at = self.fold_start(states, start, first, data, context_var)
        _prune(states, start_at)
        _check_targets(states)
        kept = set(_names(states))
        self.roles = {name: self.task_state(name) for name in self.own if name in kept}
        document = mapping(self.data.get("document"))
        comment = f"Parley workflow {document.get('namespace', '')}/{document.get('name', '')}"
        if document.get("version"):
            comment += f" {document['version']}"
        machine: dict[str, Any] = {"Comment": comment, "QueryLanguage": "JSONata", "StartAt": start_at}
        after = self.task_timeout(self.data)
        if after is not None:
            machine["TimeoutSeconds"] = seconds_field(after, Place(), least=1)
        machine["States"] = states
        return machine

    def run_data(self) -> str:
        """JSONata text of the run's data from the execution's input: its ``input`` after the document's
        ``input.from``."""
        place = Place(
            {
                "input": "$states.input.input",
                "data": "$states.input.input",
                "context": "{}",
                "workflow": _WORKFLOW,
                "runtime": literal(dict(_RUNTIME)),
            }
        )
        data = _input_from(self.data, place)
        return "$states.input.input" if data is None else data

    def end_state(self) -> dict[str, Any]:
        """``#end``: tells the entry how the run ended, and ends the execution."""
        ending = f'$type(${UNCAUGHT}) = "object" ? {{"error": ${UNCAUGHT}}} : {{"output": $states.input}}'
        return {
            "Type": "Task",
            "Resource": engine.INVOKE_RESOURCE,
            "Arguments": {
                "FunctionName": engine.ENTRY_FUNCTION,
                "Payload": template(
                    f'$merge([{{"action": {literal(engine.END_ACTION)}, "run": $run}}, {ending}])'
                ),
            },
            "Retry": [
                {
                    "ErrorEquals": list(LAMBDA_ERRORS),
                    "IntervalSeconds": 1,
                    "MaxAttempts": 6,
                    "BackoffRate": 2,
                    "JitterStrategy": "FULL",
                },
                {"ErrorEquals": [_ALL], "IntervalSeconds": 2, "MaxAttempts": 5, "BackoffRate": 2},
            ],
            "Output": template(ending),
            "End": True,
        }

    def end_catcher(self, reference: str) -> dict[str, Any]:
        """The Catch of a Task outside any ``try``: the error, kept for the end."""
        return {
            "ErrorEquals": [_ALL],
            "Assign": {UNCAUGHT: template(caught_error(reference, self.known_cuts))},
            "Next": self.name(DOCUMENT, "end"),
        }

    def fold_start(self, states: _Branch, start: str, first: str, data: str, context_var: str | None) -> str:
        """Folds ``#start`` into the first task's state where that is a Pass or a Task nothing enters
        again; returns the machine's first state."""
        state = states.get(first)
        if state is None or self.own[first][0] == DOCUMENT or state["Type"] not in ("Pass", "Task"):
            return start
        if any(first in _targets(other) for name, other in states.items() if name != start):
            return start
        if "$states" in json.dumps(self.data):
            return start  # the document binds $states itself: its expressions are left as written
        bindings = {
            "run": "$states.input.run",
            "depth": "$states.input.depth",
            "workflow": _WORKFLOW,
            "runtime": literal(dict(_RUNTIME)),
        }
        if context_var:
            bindings[context_var] = "{}"
        rebased = _rebased(state, data, bindings)
        started: dict[str, Any] = states.pop(start)["Assign"]
        del self.own[start]
        rebased.setdefault("Output", template(data))
        rebased["Assign"] = {
            **{key: value for key, value in started.items() if key not in rebased.get("Assign", {})},
            **rebased.get("Assign", {}),
        }
        for catcher in rebased.get("Catch", []):
            own = catcher.get("Assign", {})
            catcher["Assign"] = {**{key: value for key, value in started.items() if key not in own}, **own}
        state.clear()
        state.update({key: value for key, value in rebased.items() if key not in _LAST})
        state.update({key: rebased[key] for key in _LAST if key in rebased})
        self.starts.setdefault(first, []).insert(0, DOCUMENT)
        return first

    # -- ends without states of their own -------------------------------------------------------------

    def done_of(self, at: _TaskAt) -> str:
        """What a task of several states goes to when its work is done: its Pass ``R#done`` where it has
        one, else a target standing for its end, which has no state of its own there (going to it goes to
        what follows the task and completes it)."""
        if at.has_done():
            return self.name(at.reference, "done")
        key = f"{_DONE}{len(self.dones)}"
        self.dones[key] = _Done(at.reference, at.after)
        return key

    def resolved(self, target: str) -> tuple[str, _Told]:
        """The state a target goes to, and the tasks going there completes (innermost first)."""
        told: list[TaskRoles] = []
        while target in self.dones:
            done = self.dones[target]
            told.append((done.reference, _COMPLETED))
            target = done.target
        return target, tuple(told)

    def named(self, branch: _Branch, holder: dict[str, Any], key: str) -> bool:
        """Where ``holder[key]`` is a task's end without a state, points it at that task's Pass
        ``R#done`` (made once); whether it changed."""
        done = self.dones.get(holder[key])
        if done is None:
            return False
        if done.state is None:
            done.state = self.name(done.reference, "done")
            self.add(branch, done.state, {"Type": "Pass", "Next": done.target}, done.reference, "completed")
        holder[key] = done.state
        return True

    def close_branch(self, branch: _Branch, terminal: str | None, reference: str) -> None:
        """Resolves the branch's targets: a task's end without a state goes where it leads (the states
        going there complete the task; a Parallel's are its branch's last states); a Choice's ways are
        kept; the branch's end is ``End`` for most states, and a Choice or a Catch goes to its last state
        (a Pass named ``terminal``, made here when needed)."""
        for state in list(branch.values()):
            for catcher in state.get("Catch", []):
                self.named(branch, catcher, "Next")
            if state["Type"] != "Choice":
                continue
            changed = True
            while changed:
                changed = False
                ways: dict[str, set[_Told]] = {}
                for holder, key, told_key in _choice_ways(state):
                    real, told = self.resolved(holder[key])
                    ways.setdefault(real, set()).add(tuple(holder.get(told_key, ())) + told)
                for holder, key, _told_key in _choice_ways(state):
                    if len(ways[self.resolved(holder[key])[0]]) > 1:
                        changed = self.named(branch, holder, key) or changed
        needed = False
        for name, state in list(branch.items()):
            if state["Type"] == "Choice":
                taken: dict[str, _Told] = {}
                for holder, key, told_key in list(_choice_ways(state)):
                    real, told = self.resolved(holder[key])
                    if real == _END:
                        real, needed = str(terminal), True
                    holder[key] = real
                    taken[real] = tuple(holder.pop(told_key, ())) + told
                state.pop(_TOLD_DEFAULT, None)
                self.ways[name] = taken
                continue
            if "Next" in state:
                real, told = self.resolved(state["Next"])
                if real == _END:
                    del state["Next"]
                    state["End"] = True
                else:
                    state["Next"] = real
                if told:
                    self.complete(name, state, [task for task, _roles in told])
            for catcher in state.get("Catch", []):
                real, _told = self.resolved(catcher["Next"])
                if real == _END:
                    real, needed = str(terminal), True
                catcher["Next"] = real
        if needed and terminal is not None and terminal not in branch:
            self.add(branch, terminal, {"Type": "Pass", "End": True}, reference, "part")

    def complete(self, name: str, state: dict[str, Any], tasks: list[str]) -> None:
        """The state completes ``tasks`` when it completes; a Parallel, when its branch's last states
        complete."""
        if state["Type"] != "Parallel":
            self.completes.setdefault(name, []).extend(tasks)
            return
        for inner in state["Branches"]:
            for inner_name, inner_state in inner["States"].items():
                if inner_state.get("End") and inner_name not in self.ending:
                    self.complete(inner_name, inner_state, tasks)

    # -- task lists -----------------------------------------------------------------------------------

    def task_list(
        self, items: Any, pointer: str, site: _Site, after: str, branch: _Branch, exit_to: str | None = None
    ) -> str:
        """Compiles a task list into ``branch``; ``after`` is what follows it (``exit_to`` what ``then:
        exit`` leads to, where that is not ``after``: a ``for``'s end). Returns its first state."""
        entries = list(_entries(items, pointer))
        if not entries:
            return after
        firsts = [self.first_state(reference, task) for _name, reference, task in entries]
        index_of = {name: index for index, (name, _reference, _task) in enumerate(entries)}
        backwards = any(
            index_of.get(str(then), len(entries)) <= index
            for index, (_name, _reference, task) in enumerate(entries)
            for then in _thens(task)
        )
        if backwards and not site.loop:
            site = replace(site, loop=True)

        def targets(index: int) -> Callable[[Any], str]:
            def target(then: Any) -> str:
                if then is None or then == "continue":
                    return firsts[index + 1] if index + 1 < len(entries) else after
                if then == "exit":
                    return after if exit_to is None else exit_to
                if then == "end":
                    return site.end
                return firsts[index_of[str(then)]]

            return target

        for index, (name, reference, task) in enumerate(entries):
            target = targets(index)
            self.task(_TaskAt(name, reference, task, site, target(task.get("then")), target, branch))
        return firsts[0]

    # -- tasks ----------------------------------------------------------------------------------------

    def task(self, at: _TaskAt) -> None:
        kind = task_kind(at.task)
        compile_kind = {
            "set": self.set_task,
            "call": self.call_task,
            "raise": self.raise_task,
            "switch": self.switch_task,
            "do": self.do_task,
            "try": self.try_task,
            "wait": self.wait_task,
            "emit": self.emit_task,
            "listen": self.listen_task,
            "for": self.for_task,
            "fork": self.fork_task,
        }.get(kind)
        if compile_kind is None:
            raise NotCompiled([(at.reference, _a(f"{kind} task"))])
        if "if" in at.task:
            skipped: _Told = ((at.reference, frozenset({"skipped"})),)
            self.add(
                at.branch,
                self.name(at.reference, "if"),
                {
                    "Type": "Choice",
                    "Choices": [
                        {
                            "Condition": template(condition_text(at.task["if"], at.place())),
                            "Next": self.body_state(at.reference, at.task),
                        }
                    ],
                    "Default": at.target(None),  # skipped: the next task (its then is not followed)
                    _TOLD_DEFAULT: skipped,
                },
                at.reference,
                "condition",
            )
        if self.raced(at.task):
            self.timed_task(at, compile_kind)
        else:
            compile_kind(at)

    def output_as(self, task: Mapping[str, Any], produced: str, place: Place) -> str | None:
        """JSONata text of a task's output after its ``output.as`` (``None`` without one), for a state
        whose work gives ``produced`` (JSONata text)."""
        output_as = _shaping(task, "output", "as")
        if output_as is None:
            return None
        return shaping_text(output_as, place.with_(data=produced))

    def produce(
        self,
        at: _TaskAt,
        state: dict[str, Any],
        output: str,
        place: Place,
        roles: Sequence[Role],
        part: str | None = None,
    ) -> None:
        """Adds the state ``R`` (or ``R#part``) where a task produces ``output`` (JSONata text; the state's
        ``Output`` is already set where it differs), with the task's ``export.as`` as its ``Assign``, then
        what follows the task.

        Step Functions evaluates a state's ``Assign`` and ``Output`` from the same variables; where they
        would not agree (the ``Output`` reads ``$context``, which the export assigns), the state hands on
        its output and input, and a Pass ``R#export`` exports and gives the output."""
        name = self.name(at.reference, part)
        exported = at.exported()
        if exported is None or not _mentions(state.get("Output"), exported[0]):
            if exported is not None:
                variable, export_as = exported
                exporting = place.with_(data=output, output=output)
                state["Assign"] = {variable: template(shaping_text(export_as, exporting))}
            state["Next"] = at.after
            self.add(at.branch, name, state, at.reference, *roles)
            return
        variable, export_as = exported
        export = self.name(at.reference, "export")
        state["Output"] = template(f'{{"output": {output}, "input": {place.bindings["input"]}}}')
        state["Next"] = export
        self.add(at.branch, name, state, at.reference, *(role for role in roles if role != "completed"))
        handed = place.with_(
            input="$states.input.input", data="$states.input.output", output="$states.input.output"
        )
        self.add(
            at.branch,
            export,
            {
                "Type": "Pass",
                "Output": template("$states.input.output"),
                "Assign": {variable: template(shaping_text(export_as, handed))},
                "Next": at.after,
            },
            at.reference,
            "completed",
        )

    def set_task(self, at: _TaskAt) -> None:
        place = at.entry_place()
        value = at.task.get("set")
        produced = value_text(value, place)
        output = self.output_as(at.task, produced, place)
        state: dict[str, Any] = {
            "Type": "Pass",
            "Output": template(output) if output is not None else template_field(value, place),
        }
        self.produce(at, state, output or produced, place, ("entered", "completed"))

    def call_task(self, at: _TaskAt, catchers: Sequence[dict[str, Any]] | None = None) -> None:
        """The call's Task; its Catch is ``catchers`` (a ``try``'s), else outside any ``try`` the end's."""
        place = at.entry_place()
        with_ = mapping(at.task.get("with"))
        payload: dict[str, Any] = {
            "action": engine.CALL_ACTION,
            "token": template("$states.context.Task.Token"),
            "run": template("$run"),
            "depth": template("$depth"),
            "task": at.reference,
            "attempt": self.attempt(at.site),
            "type": member(with_.get("type"), place),
            "name": member(with_.get("name"), place),
            "input": template_field(with_.get("input", {}), place),
        }
        result = "$states.result.output"
        output = self.output_as(at.task, result, place) or result
        state: dict[str, Any] = {
            "Type": "Task",
            "Resource": engine.WAIT_FOR_TOKEN_RESOURCE,
            "Arguments": {"FunctionName": engine.ENTRY_FUNCTION, "Payload": payload},
            "Output": template(output),
            "Retry": [
                {"ErrorEquals": list(LAMBDA_ERRORS), "IntervalSeconds": 1, "MaxAttempts": 3, "BackoffRate": 2}
            ],
        }
        if catchers is None:
            catchers = [self.end_catcher(at.reference)] if at.site.scope == 0 else []
        if catchers:
            state["Catch"] = list(catchers)
        self.timed(at, state, deadline=True)
        self.produce(at, state, output, place, ("entered", "completed", "call"))

    def attempt(self, site: _Site) -> str:
        """The ``attempt`` of a call, a listen or an emit (see the module's docstring)."""
        text = _attempt_text(site)
        return "0" if text == '"0"' else template(text)

    def raise_error(self, error: str, site: _Site) -> dict[str, Any]:
        """A state raising the error JSONata ``error`` gives (an object): inside a ``try`` a Fail, outside
        any a Pass keeping it for the end."""
        if site.scope == 0:
            return {"Type": "Pass", "Assign": {UNCAUGHT: template(error)}, "Next": self.name(DOCUMENT, "end")}
        return {"Type": "Fail", "Error": engine.ERROR_NAME, "Cause": template(f"$string({error})")}

    def raise_task(self, at: _TaskAt) -> None:
        place = at.entry_place()
        raised = mapping(at.task.get("raise"))
        error = raised.get("error")
        if isinstance(error, str):
            error = self.use_errors.get(error)
        written, text = raised_error(error if isinstance(error, Mapping) else {}, at.reference, place)
        state = self.raise_error(text, at.site)
        if written and state["Type"] == "Fail":
            state["Cause"] = written
        self.add(at.branch, self.name(at.reference), state, at.reference, "entered", "failed")

    def switch_task(self, at: _TaskAt) -> None:
        raw = at.place()
        output = self.output_as(at.task, "$states.input", raw)
        exported = at.exported()
        split = exported is not None and output is not None and _mentions(output, exported[0])
        if split:
            # The output is made first (a Pass), the cases then read the input it hands on.
            self.add(
                at.branch,
                self.name(at.reference),
                {
                    "Type": "Pass",
                    "Output": template(f'{{"output": {output}, "input": $states.input}}'),
                    "Next": self.name(at.reference, "cases"),
                },
                at.reference,
                "entered",
            )
            raw = raw.with_(input="$states.input.input", data="$states.input.input")
            output = "$states.input.output"
        data = _input_from(at.task, raw)
        place = raw if data is None else raw.with_(data=data)
        rules: list[dict[str, Any]] = []
        default: str | None = None
        for _case_name, case in _cases(at.task):
            target = at.target(case.get("then"))
            if "when" in case:
                rules.append({"Condition": template(condition_text(case["when"], place)), "Next": target})
            elif default is None:
                default = target
        if default is None:
            default = at.after  # no case holds: the switch task's own then
        assign = None
        if exported is not None:
            variable, export_as = exported
            out = output if output is not None else raw.bindings["input"]
            assign = {variable: template(shaping_text(export_as, raw.with_(data=out, output=out)))}
        state: dict[str, Any]
        if output is not None or assign:
            # The same shaping on every way out: a rule that always holds stands for the default.
            rules.append({"Condition": template("true"), "Next": default})
            for rule in rules:
                if output is not None:
                    rule["Output"] = template(output)
                if assign:
                    rule["Assign"] = assign
            state = {"Type": "Choice", "Choices": rules}
        elif rules:
            state = {"Type": "Choice", "Choices": rules, "Default": default}
        else:
            state = {"Type": "Pass", "Next": default}
        if split:
            self.add(at.branch, self.name(at.reference, "cases"), state, at.reference, "completed")
        else:
            self.add(at.branch, self.name(at.reference), state, at.reference, "entered", "completed")

    def done_state(self, at: _TaskAt, kept: str | None) -> None:
        """``R#done``: where a task of several states produces its output (``output.as``, ``export.as``)."""
        place = at.place(kept=kept)
        output = self.output_as(at.task, "$states.input", place)
        state: dict[str, Any] = {"Type": "Pass"}
        if output is not None:
            state["Output"] = template(output)
        self.produce(at, state, output or "$states.input", place, ("completed",), part="done")

    def entry_state(self, at: _TaskAt, kept: str | None, assign: dict[str, Any], following: str) -> None:
        """``R``: a Pass starting a task of several states (``input.from``, the kept input)."""
        state: dict[str, Any] = {"Type": "Pass"}
        data = _input_from(at.task, at.place())
        if data is not None:
            state["Output"] = template(data)
        if kept:
            assign = {
                kept: template('{"input": $states.input, "startedAt": $states.context.State.EnteredTime}'),
                **assign,
            }
        if assign:
            state["Assign"] = assign
        state["Next"] = following
        self.add(at.branch, self.name(at.reference), state, at.reference, "entered")

    def do_task(self, at: _TaskAt) -> None:
        kept = at.kept(("do",))
        done = self.done_of(at)
        inner = replace(at.site, depth=at.site.depth + 1)
        entry_index = len(at.branch)
        first = self.task_list(at.task.get("do"), f"{at.reference}/do", inner, done, at.branch)
        if self.do_entry(at.task):
            self.entry_state(at, kept, {}, first)
            _move_to(at.branch, self.name(at.reference), entry_index)
        else:
            self.starts.setdefault(first, []).insert(0, at.reference)
        if at.has_done():
            self.done_state(at, kept)

    def folded_recovery(
        self, reference: str, catch_do: Any, recovery: str, branch: _Branch
    ) -> dict[str, Any] | None:
        """The first task of ``catch.do`` as the catch's last rule, where it is a ``set`` (no ``if``,
        nothing going back to it) whose Pass does all its work; its Pass is taken out of ``branch``."""
        entries = list(_entries(catch_do, f"{reference}/catch/do"))
        if not entries:
            return None
        _first_name, first_reference, first = entries[0]
        if task_kind(first) != "set" or "if" in first or _back_to_first(entries):
            return None
        name = self.name(first_reference)
        state = branch.get(name)
        if recovery != name or state is None or state.get("Next") == self.name(first_reference, "export"):
            return None
        del branch[name]
        del self.own[name]
        rule: dict[str, Any] = {"Condition": template("true")}
        for key in ("Output", "Assign"):
            if key in state:
                rule[key] = state[key]
        rule["Next"] = state["Next"]
        rule[_TOLD] = ((first_reference, frozenset({"entered", "completed"})),)
        return rule

    def try_task(self, at: _TaskAt) -> None:
        reference, site, branch = at.reference, at.site, at.branch
        catch: Mapping[str, Any] = mapping(at.task.get("catch"))
        retry = self.retry_of(catch)
        suffix = site.suffix()
        error_var = f"error_{suffix}"
        counter = f"retry_{suffix}" if retry is not None else None
        tried = f"tried_{suffix}" if retry is not None and needs_attempt_duration(retry) else None
        kept = at.kept(("try",))
        starts = self.try_entry(at.task)
        single = self.single_call(reference, at.task)
        done = self.done_of(at)
        if single is not None:
            body = self.name(single[1])
        else:
            body = self.name(reference, "try") if starts else self.name(reference)

        # The catch: its recovery, its decision.
        as_name = str(catch.get("as") or "error")
        catch_site = replace(site, depth=site.depth + 1, caught={**site.caught, as_name: f"${error_var}"})
        catch_place = replace(at, site=catch_site).place(kept=kept)
        recovery = done
        catch_index = len(branch)
        catch_do = catch.get("do")
        if isinstance(catch_do, list):
            recovery = self.task_list(catch_do, f"{reference}/catch/do", catch_site, done, branch)
        catch_states: _Branch = {}
        takes = takes_text(catch, f"${error_var}", catch_place)
        rules: list[dict[str, Any]] = []
        if takes is not None:
            raise_name = self.name(reference, "raise")
            rules.append({"Condition": template(f"$not({takes})"), "Next": raise_name})
            self.add(catch_states, raise_name, self.raise_error(f"${error_var}", site), reference, "failed")
        if retry is not None and counter is not None:
            wait = self.name(reference, "retry")
            number = f"(${counter}.attempt + 1)"
            test = retry_text(
                catch,
                retry,
                error=f"${error_var}",
                counter=f"${counter}",
                tried=f"${tried}" if tried else None,
                place=catch_place,
            )
            delay = delay_seconds_text(retry, number, catch_place)
            rules.append(
                {
                    "Condition": template(test),
                    "Next": wait,
                    "Output": template(f'{{"attempt": {number}, "delay": {delay}, "data": $states.input}}'),
                }
            )
            self.add(
                catch_states,
                wait,
                {
                    "Type": "Wait",
                    "Seconds": template("$states.input.delay"),
                    "Assign": {
                        counter: template(f'{{"attempt": $states.input.attempt, "first": ${counter}.first}}')
                    },
                    "Output": template("$states.input.data"),
                    "Next": body,
                },
                reference,
                "retried",
            )
        decide = recovery
        if rules:
            decide = self.name(reference, "catch")
            choice: dict[str, Any] = {"Type": "Choice", "Choices": rules, "Default": recovery}
            folded = self.folded_recovery(reference, catch_do, recovery, branch)
            if folded is not None:
                rules.append(folded)
                del choice["Default"]
            catch_states = {decide: choice, **catch_states}
            self.own[decide] = (reference, frozenset({"catch"}))

        # The Task or the Parallel, and what follows it.
        catcher_assign: dict[str, Any] = {error_var: template(caught_error(reference, self.known_cuts))}
        if tried:
            catcher_assign[tried] = template("$millis() - $toMillis($states.context.State.EnteredTime)")
        catcher = {
            "ErrorEquals": [_ALL],
            "Assign": catcher_assign,
            "Output": template("$states.input"),
            "Next": decide,
        }
        states: _Branch = {}
        own = replace(at, branch=states)
        inner_site = replace(
            site,
            depth=site.depth + 1,
            retries=site.retries + ((f"$string(${counter}.attempt)",) if counter else ()),
        )
        if starts:
            assign: dict[str, Any] = {}
            if counter:
                assign[counter] = template('{"attempt": 0, "first": $millis()}')
            self.entry_state(own, kept, assign, body)
        if single is not None:
            # Its ``then`` (``continue`` or ``exit``) leads where the list's end does.
            call_name, call_reference, call = single
            self.call_task(
                _TaskAt(call_name, call_reference, call, inner_site, done, lambda _then: done, states),
                catchers=[catcher],
            )
            if not starts:
                self.starts.setdefault(body, []).insert(0, reference)
        else:
            self.parallel(own, inner_site, body, catcher, starts, done)
        states.update(catch_states)
        # The task's own states first, then its recovery (already in ``branch``), then ``R#done``.
        recovery_states = {key: branch.pop(key) for key in list(branch)[catch_index:]}
        branch.update(states)
        branch.update(recovery_states)
        if at.has_done():
            self.done_state(at, kept)

    def parallel(
        self, at: _TaskAt, inner_site: _Site, body: str, catcher: dict[str, Any], starts: bool, done: str
    ) -> None:
        """A ``try``'s Parallel ``body``, into ``at.branch``: its list in a branch of its own (a scope of
        its own), compiled at ``inner_site`` (the list's depth and retry counts)."""
        reference, site, states = at.reference, at.site, at.branch
        items = at.task.get("try")
        own_context = _exports(items)
        ends = _ends(items)
        inner_context_var = f"context_{site.scope + 1}" if own_context else None
        envelope = own_context or ends
        inner_branch: _Branch = {}
        out_name = self.name(reference, "out")
        end_name = self.name(reference, "end")
        inner = replace(
            inner_site,
            scope=site.scope + 1,
            context=f"${inner_context_var}" if inner_context_var else site.context,
            context_var=inner_context_var,
            end=end_name if ends else _END,
        )
        first = self.task_list(items, f"{reference}/try", inner, out_name if envelope else _END, inner_branch)
        if inner_context_var is not None:
            inner_branch, first = self.begun(
                inner_branch, reference, "begin", inner_context_var, site.context, first
            )
        if envelope:
            kept_context = f', "context": ${inner_context_var}' if inner_context_var else ""
            ended = ', "end": false' if ends else ""
            self.add(
                inner_branch,
                out_name,
                {
                    "Type": "Pass",
                    "Output": template(f'{{"data": $states.input{ended}{kept_context}}}'),
                    "End": True,
                },
                reference,
                "part",
            )
            if ends:
                self.add(
                    inner_branch,
                    end_name,
                    {
                        "Type": "Pass",
                        "Output": template(f'{{"data": $states.input, "end": true{kept_context}}}'),
                        "End": True,
                    },
                    reference,
                    "part",
                )
                self.ending.add(end_name)
        if not inner_branch:
            first = out_name  # an empty list: the branch hands its input on
        self.close_branch(inner_branch, out_name, reference)
        if first == out_name and out_name not in inner_branch:
            self.add(inner_branch, out_name, {"Type": "Pass", "End": True}, reference, "part")
        ended_name = self.name(reference, "ended")
        parallel_state: dict[str, Any] = {
            "Type": "Parallel",
            "Branches": [{"StartAt": first, "States": inner_branch}],
            "Output": template("$states.result[0].data" if envelope and not ends else "$states.result[0]"),
        }
        if own_context and site.context_var:
            parallel_state["Assign"] = {site.context_var: template("$states.result[0].context")}
        parallel_state["Catch"] = [catcher]
        parallel_state["Next"] = ended_name if ends else done
        self.add(states, body, parallel_state, reference, "part" if starts else "entered")
        if ends:
            self.add(
                states,
                ended_name,
                {
                    "Type": "Choice",
                    "Choices": [
                        {
                            "Condition": template("$states.input.end = true"),
                            "Next": site.end,
                            "Output": template("$states.input.data"),
                        },
                        {
                            "Condition": template("true"),
                            "Next": done,
                            "Output": template("$states.input.data"),
                        },
                    ],
                },
                reference,
                "part",
            )

    # -- the rest of the task language ------------------------------------------------------------------

    def task_timeout(self, holder: Mapping[str, Any]) -> Any:
        """The duration of a task's (or the document's) ``timeout`` (``None`` without one)."""
        value = holder.get("timeout")
        if isinstance(value, str):
            value = self.use_timeouts.get(value)
        return mapping(value).get("after")

    def timed(self, at: _TaskAt, state: dict[str, Any], *, deadline: bool) -> None:
        """A Task's ``timeout``: its ``TimeoutSeconds``, and a Catch of Step Functions' timeout that raises
        the ``timeout`` error (408) at the task, first telling the entry the call's deadline passed
        (``deadline``: the Task ``R#deadline``)."""
        after = self.task_timeout(at.task)
        if after is None:
            return
        state["TimeoutSeconds"] = seconds_field(after, at.entry_place(), least=1)
        error = literal(timeout_error(at.reference))
        outside = at.site.scope == 0
        end = self.name(DOCUMENT, "end")
        raise_name = self.name(at.reference, "timeout")
        catcher: dict[str, Any] = {"ErrorEquals": [engine.TIMEOUT_ERROR]}
        if deadline:
            name = self.name(at.reference, "deadline")
            catcher["Output"] = template(f'{{"data": $states.input, "attempt": {_attempt_text(at.site)}}}')
            catcher["Next"] = name
            self.deadline_states(at, name)
        elif outside:
            catcher["Assign"] = {UNCAUGHT: template(error)}
            catcher["Next"] = end
        else:
            catcher["Next"] = raise_name
            self.add(at.branch, raise_name, self.raise_error(error, at.site), at.reference, "failed")
        state["Catch"] = [catcher, *state.get("Catch", [])]

    def timed_task(self, at: _TaskAt, compile_kind: Callable[[_TaskAt], None]) -> None:
        """A task of several states with a ``timeout``: the Parallel ``R#timed`` races it (its first
        branch, a scope of its own, ending in the Fail ``R#in-time`` with ``{"data", "context"?}`` as JSON)
        with its clock (the Wait ``R#clock``, then the Fail ``R#late``): a Parallel stops its other branch
        when one fails. Its Catch takes the task's output (and ``$context``) on to what follows the task;
        a ``then: end`` inside it (``R#timed-end``) to the run's end; the clock to the Task
        ``R#deadline`` (the entry cancels the runs the task's calls wait for) and the ``timeout`` error."""
        reference, site = at.reference, at.site
        after = self.task_timeout(at.task)
        timed, won = self.name(reference, "timed"), self.name(reference, "in-time")
        clock, late = self.name(reference, "clock"), self.name(reference, "late")
        ending = self.name(reference, "timed-end")
        ends = any(_ends(items) for items, _pointer in _sublists(at.task, reference))
        own_context = site.context_var is not None and _exports([{at.name: at.task}])
        context_var = f"context_{site.scope + 1}" if own_context else None
        inner_site = replace(
            site,
            scope=site.scope + 1,
            context=f"${context_var}" if context_var else site.context,
            context_var=context_var,
            end=ending if ends else _END,
        )
        inner_branch: _Branch = {}
        untimed = {key: value for key, value in at.task.items() if key != "timeout"}
        compile_kind(replace(at, task=untimed, site=inner_site, after=won, branch=inner_branch))
        first = self.own_body_state(reference, at.task)
        kept_context = f', "context": ${context_var}' if context_var else ""
        self.add(
            inner_branch,
            won,
            {
                "Type": "Fail",
                "Error": WON_ERROR,
                "Cause": _carried(f'{{"data": $states.input{kept_context}}}'),
            },
            reference,
            "part",
        )
        inner_branch, first = self.opened_branch(
            inner_branch, reference, first, ending if ends else None, context_var, site.context, "timed-begin"
        )
        clock_branch: _Branch = {}
        self.add(
            clock_branch,
            clock,
            {"Type": "Wait", "Seconds": seconds_field(after, at.place(), least=1), "Next": late},
            reference,
            "part",
        )
        self.add(clock_branch, late, {"Type": "Fail", "Error": LATE_ERROR}, reference, "part")
        in_time: dict[str, Any] = {
            "ErrorEquals": [WON_ERROR],
            "Output": template("$parse($states.errorOutput.Cause).data"),
            "Next": at.after,
        }
        if context_var and site.context_var:
            in_time["Assign"] = {site.context_var: template("$parse($states.errorOutput.Cause).context")}
        catchers = [in_time]
        if ends:
            catchers.append(
                {
                    "ErrorEquals": [END_ERROR],
                    "Output": template("$parse($states.errorOutput.Cause).data"),
                    "Next": site.end,
                }
            )
        deadline = self.name(reference, "deadline")
        catchers.append(
            {
                "ErrorEquals": [LATE_ERROR],
                "Output": template(f'{{"data": $states.input, "attempt": {_attempt_text(site)}}}'),
                "Next": deadline,
            }
        )
        if site.scope == 0:
            catchers.append(self.end_catcher(reference))
        self.add(
            at.branch,
            timed,
            {
                "Type": "Parallel",
                "Branches": [
                    {"StartAt": first, "States": inner_branch},
                    {"StartAt": clock, "States": clock_branch},
                ],
                "Catch": catchers,
                "Next": at.after,  # never taken: one branch always fails
            },
            reference,
            "part",  # the task's own first state, in the branch, starts it
        )
        self.deadline_states(at, deadline)

    def deadline_states(self, at: _TaskAt, name: str) -> None:
        """The Task ``R#deadline`` telling the entry a task's deadline passed (its input ``{"data",
        "attempt"}``), then the ``timeout`` error: outside any ``try`` kept for the end, inside one raised
        by the Fail ``R#timeout``."""
        error = literal(timeout_error(at.reference))
        end = self.name(DOCUMENT, "end")
        told: dict[str, Any] = {
            "Type": "Task",
            "Resource": engine.INVOKE_RESOURCE,
            "Arguments": {
                "FunctionName": engine.ENTRY_FUNCTION,
                "Payload": {
                    "action": engine.DEADLINE_ACTION,
                    "run": template("$run"),
                    "task": at.reference,
                    "attempt": template("$states.input.attempt"),
                },
            },
            "Retry": [
                {"ErrorEquals": list(LAMBDA_ERRORS), "IntervalSeconds": 1, "MaxAttempts": 3, "BackoffRate": 2}
            ],
            "Output": template("$states.input.data"),
        }
        if at.site.scope == 0:
            told["Assign"] = {UNCAUGHT: template(error)}
            told["Catch"] = [{"ErrorEquals": [_ALL], "Assign": {UNCAUGHT: template(error)}, "Next": end}]
            told["Next"] = end
            self.add(at.branch, name, told, at.reference, "failed")
        else:
            raise_name = self.name(at.reference, "timeout")
            told["Next"] = raise_name
            self.add(at.branch, name, told, at.reference, "part")
            self.add(at.branch, raise_name, self.raise_error(error, at.site), at.reference, "failed")

    def opened_branch(
        self,
        inner_branch: _Branch,
        reference: str,
        first: str,
        ending: str | None,
        context_var: str | None,
        context: str,
        begin_part: str,
    ) -> tuple[_Branch, str]:
        """A branch holding a task of its own (a timed task's, a fork's) made whole: the Fail ``ending``
        that carries a ``then: end`` out of it, its own ``$context`` started first (``begin_part``), and
        closed; the branch and its first state."""
        if ending is not None:
            self.add(
                inner_branch,
                ending,
                {"Type": "Fail", "Error": END_ERROR, "Cause": _carried('{"data": $states.input}')},
                reference,
                "part",
            )
        if context_var:
            inner_branch, first = self.begun(inner_branch, reference, begin_part, context_var, context, first)
        self.close_branch(inner_branch, self.name(reference, "out"), reference)
        return inner_branch, first

    def begun(
        self, inner_branch: _Branch, reference: str, part: str, context_var: str, context: str, first: str
    ) -> tuple[_Branch, str]:
        """The branch started by a Pass that gives it its own ``$context`` (``context_var``, from the
        ``context`` around it), first among its states; the branch and its new first state."""
        begin = self.name(reference, part)
        self.add(
            inner_branch,
            begin,
            {"Type": "Pass", "Assign": {context_var: template(context)}, "Next": first},
            reference,
            "part",
        )
        return {begin: inner_branch.pop(begin), **inner_branch}, begin

    @staticmethod
    def stopped_state(reference: str, done: str) -> dict[str, Any]:
        """The Task ``R#stopped`` after a competing fork was won: the entry cancels the runs the stopped
        branches waited for. It hands the winner's output on, and a failure of it stops nothing more."""
        return {
            "Type": "Task",
            "Resource": engine.INVOKE_RESOURCE,
            "Arguments": {
                "FunctionName": engine.ENTRY_FUNCTION,
                "Payload": {"action": engine.STOPPED_ACTION, "run": template("$run"), "task": reference},
            },
            "Retry": [
                {"ErrorEquals": list(LAMBDA_ERRORS), "IntervalSeconds": 1, "MaxAttempts": 3, "BackoffRate": 2}
            ],
            "Output": template("$states.input"),
            "Catch": [{"ErrorEquals": [_ALL], "Output": template("$states.input"), "Next": done}],
            "Next": done,
        }

    def entry_task(
        self, at: _TaskAt, resource: str, payload: dict[str, Any], output: str, roles: Sequence[Role]
    ) -> None:
        """A Task of the workflow entry (a listen, an emit): ``output`` is what it produces (JSONata
        text, before ``output.as``)."""
        place = at.entry_place()
        shaped = self.output_as(at.task, output, place) or output
        state: dict[str, Any] = {
            "Type": "Task",
            "Resource": resource,
            "Arguments": {"FunctionName": engine.ENTRY_FUNCTION, "Payload": payload},
            "Output": template(shaped),
            "Retry": [
                {"ErrorEquals": list(LAMBDA_ERRORS), "IntervalSeconds": 1, "MaxAttempts": 3, "BackoffRate": 2}
            ],
        }
        if at.site.scope == 0:
            state["Catch"] = [self.end_catcher(at.reference)]
        self.timed(at, state, deadline=resource == engine.WAIT_FOR_TOKEN_RESOURCE)
        self.produce(at, state, shaped, place, roles)

    def listen_task(self, at: _TaskAt) -> None:
        """``listen``: a Task waiting on its token for the events the entry hands it (``engine``)."""
        listen = mapping(at.task.get("listen"))
        to = mapping(listen.get("to"))
        payload: dict[str, Any] = {
            "action": engine.LISTEN_ACTION,
            "token": template("$states.context.Task.Token"),
            "run": template("$run"),
            "task": at.reference,
            "attempt": self.attempt(at.site),
            "to": template(literal({key: to[key] for key in ("one", "any", "all") if key in to})),
            "read": str(listen.get("read") or "data"),
        }
        self.entry_task(
            at, engine.WAIT_FOR_TOKEN_RESOURCE, payload, "$states.result.output", ("entered", "completed")
        )

    def emit_task(self, at: _TaskAt) -> None:
        """``emit``: a Task telling the entry the event (evaluated); its output is its input."""
        place = at.entry_place()
        written = mapping(mapping(mapping(at.task.get("emit")).get("event")).get("with"))
        event = {
            key: member(written[key], place)
            for key in ("type", "source", "subject", "data")
            if key in written
        }
        payload: dict[str, Any] = {
            "action": engine.EMIT_ACTION,
            "run": template("$run"),
            "task": at.reference,
            "attempt": self.attempt(at.site),
            "event": event,
        }
        self.entry_task(at, engine.INVOKE_RESOURCE, payload, "$states.input", ("entered", "completed"))

    def wait_task(self, at: _TaskAt) -> None:
        """``wait``: a Wait of the duration's whole seconds; its output is its input. With a ``timeout``
        no longer than the wait, it waits the timeout and raises the ``timeout`` error."""
        place = at.entry_place()
        duration = at.task.get("wait")
        state: dict[str, Any] = {"Type": "Wait", "Seconds": seconds_field(duration, place)}
        after = self.task_timeout(at.task)
        if after is not None:
            limit = literal_duration_ms(after)
            length = literal_duration_ms(duration)
            if limit is not None and length is not None and limit <= length:
                state["Seconds"] = seconds_field(after, place, least=1)
                state["Next"] = self.name(at.reference, "timeout")
                self.add(at.branch, self.name(at.reference), state, at.reference, "entered")
                error = literal(timeout_error(at.reference))
                self.add(
                    at.branch,
                    self.name(at.reference, "timeout"),
                    self.raise_error(error, at.site),
                    at.reference,
                    "failed",
                )
                return
        output = self.output_as(at.task, "$states.input", at.place())
        if output is not None:
            state["Output"] = template(output)
        self.produce(at, state, output or "$states.input", at.place(), ("entered", "completed"))

    def for_task(self, at: _TaskAt) -> None:
        """``for``: a Pass ``R`` evaluating ``for.in`` once (kept in a variable, with the position), then a
        Choice ``R#each`` before each iteration (another item, and ``while`` holds: the next position and
        the list; else the task's end). Each iteration takes the one before's output; ``then: exit`` in the
        list leaves the loop."""
        loop = mapping(at.task.get("for"))
        suffix = at.site.suffix()
        items, position = f"items_{suffix}", f"at_{suffix}"
        kept = at.kept(("do",))
        done = self.done_of(at)
        each = self.name(at.reference, "each")
        item_name, index_name = str(loop.get("each") or "item"), str(loop.get("at") or "index")
        inner = replace(
            at.site,
            depth=at.site.depth + 1,
            caught={**at.site.caught, item_name: f"${items}[${position}]", index_name: f"${position}"},
            retries=(*at.site.retries, f"$string(${position})"),
        )
        entry_index = len(at.branch)
        first = self.task_list(at.task.get("do"), f"{at.reference}/do", inner, each, at.branch, exit_to=done)
        place = at.entry_place()
        written = loop.get("in")
        in_text = expression_text(written, place) if isinstance(written, str) else value_text(written, place)
        self.entry_state(
            at,
            kept,
            {items: template(f"($v := {in_text}; $exists($v) ? $v : [])"), position: -1},
            each,
        )
        following = f"${position} + 1"
        test = f"{following} < $count(${items})"
        if "while" in at.task:
            upcoming = replace(
                at,
                site=replace(
                    inner,
                    caught={
                        **at.site.caught,
                        item_name: f"${items}[{following}]",
                        index_name: f"({following})",
                    },
                ),
            )
            test += f" and {condition_text(at.task['while'], upcoming.place(kept=kept))}"
        self.add(
            at.branch,
            each,
            {
                "Type": "Choice",
                "Choices": [
                    {"Condition": template(test), "Assign": {position: template(following)}, "Next": first}
                ],
                "Default": done,
            },
            at.reference,
            "part",
        )
        _move_to(at.branch, self.name(at.reference), entry_index)
        _move_to(at.branch, each, entry_index + 1)
        if at.has_done():
            self.done_state(at, kept)

    def fork_task(self, at: _TaskAt) -> None:
        """``fork``: a Parallel ``R`` (``R#fork`` after a Pass ``R`` shaping its input), a branch for each
        of its tasks; its output the branches' outputs in the order written. A branch's ``then: end`` ends
        its branch failing with :data:`END_ERROR` and ``{"data"}`` as JSON, which the Parallel's Catch
        takes to the end of the run. With ``compete``, each branch runs its task in a Parallel of its own
        (``B#race``): done, it fails with :data:`WON_ERROR` and ``{"data": <its output>}`` as JSON
        (``B#won``), which the fork's Catch takes as the fork's output (a Parallel stops its other
        branches when one fails); failed, it ends with the error (``B#lost``); when every branch lost,
        ``R#lost`` raises the first branch's error."""
        reference, site = at.reference, at.site
        fork = mapping(at.task.get("fork"))
        compete = fork.get("compete") is True
        entries = list(_entries(fork.get("branches"), f"{reference}/fork/branches"))
        kept = at.kept(("fork",))
        starts = _shaping(at.task, "input", "from") is not None or kept is not None
        body = self.name(reference, "fork") if starts else self.name(reference)
        if starts:
            self.entry_state(at, kept, {}, body)
        branches: list[dict[str, Any]] = []
        ends = False
        for name, branch_reference, task in entries:
            inner_branch: _Branch = {}
            # A competing branch's race keeps its own $context (branch_task).
            context_var = f"context_{site.scope + 1}" if _exports([{name: task}]) and not compete else None
            ending = self.name(branch_reference, "ending")
            branch_ends = _ends([{name: task}])
            ends = ends or branch_ends
            inner = replace(
                site,
                scope=site.scope + 1,
                depth=site.depth + 1,
                context=f"${context_var}" if context_var else site.context,
                context_var=context_var,
                end=ending,
            )
            first = self.branch_task(name, branch_reference, task, inner, inner_branch, compete)
            inner_branch, first = self.opened_branch(
                inner_branch,
                branch_reference,
                first,
                ending if branch_ends else None,
                context_var,
                site.context,
                "begin",
            )
            branches.append({"StartAt": first, "States": inner_branch})
        catchers: list[dict[str, Any]] = []
        if ends:
            catchers.append(
                {
                    "ErrorEquals": [END_ERROR],
                    "Output": template("$parse($states.errorOutput.Cause).data"),
                    "Next": site.end,
                }
            )
        state: dict[str, Any] = {"Type": "Parallel", "Branches": branches}
        roles: tuple[Role, ...] = ("part",) if starts else ("entered",)
        if compete:
            done = self.done_of(at)
            stopped = self.name(reference, "stopped")
            catchers.append(
                {
                    "ErrorEquals": [WON_ERROR],
                    "Output": template("$parse($states.errorOutput.Cause).data"),
                    "Next": stopped,
                }
            )
            self.add(at.branch, stopped, self.stopped_state(reference, done), reference, "part")
            if site.scope == 0:
                catchers.append(self.end_catcher(reference))
            state["Catch"] = catchers
            lost = self.name(reference, "lost")
            state["Next"] = lost
            self.add(at.branch, body, state, reference, *roles)
            self.add(at.branch, lost, self.raise_error("$states.input[0].error", site), reference, "failed")
            if at.has_done():
                self.done_state(at, kept)
            return
        if site.scope == 0:
            catchers.append(self.end_catcher(reference))
        if catchers:
            state["Catch"] = catchers
        place = at.place(kept=kept)
        output = self.output_as(at.task, "$states.result", place)
        state["Output"] = template(output or "$states.result")
        self.produce(
            at,
            state,
            output or "$states.result",
            place,
            (*roles, "completed"),
            part="fork" if starts else None,
        )

    def branch_task(
        self, name: str, reference: str, task: Mapping[str, Any], site: _Site, branch: _Branch, compete: bool
    ) -> str:
        """A fork's branch: its one task, into ``branch``; returns its first state."""

        def target(then: Any) -> str:
            return site.end if then == "end" else _END

        if not compete:
            self.task(_TaskAt(name, reference, task, site, target(task.get("then")), target, branch))
            return self.first_state(reference, task)
        race, won, lost = (self.name(reference, part) for part in ("race", "won", "lost"))
        lost_catcher = {
            "ErrorEquals": [_ALL],
            "Output": template(f'{{"error": {caught_error(reference, self.known_cuts)}}}'),
            "Next": lost,
        }
        won_state = {
            "Type": "Fail",
            "Error": WON_ERROR,
            "Cause": _carried('{"data": $states.input}'),
        }
        if self.lone_call(task):
            # One Task: its own Catch loses, its Next wins (no race of its own).
            self.call_task(
                _TaskAt(name, reference, task, site, won, lambda _then: won, branch), catchers=[lost_catcher]
            )
            self.add(branch, won, won_state, reference, "part")
            self.add(branch, lost, {"Type": "Pass", "End": True}, reference, "part")
            return self.name(reference)
        inner_branch: _Branch = {}
        context_var = f"context_{site.scope + 1}" if _exports([{name: task}]) else None
        ends = _ends([{name: task}])
        ending = self.name(reference, "race-end")
        inner_site = replace(
            site,
            scope=site.scope + 1,
            context=f"${context_var}" if context_var else site.context,
            context_var=context_var,
            end=ending if ends else _END,
        )

        def inner_target(then: Any) -> str:
            return inner_site.end if then == "end" else _END

        self.task(
            _TaskAt(
                name, reference, task, inner_site, inner_target(task.get("then")), inner_target, inner_branch
            )
        )
        first = self.first_state(reference, task)
        inner_branch, first = self.opened_branch(
            inner_branch, reference, first, ending if ends else None, context_var, site.context, "begin"
        )
        catchers: list[dict[str, Any]] = []
        if ends:
            # The run ends: the branch goes on failing with the same cause, to the fork's Catch.
            catchers.append(
                {
                    "ErrorEquals": [END_ERROR],
                    "Output": template("$parse($states.errorOutput.Cause).data"),
                    "Next": site.end,
                }
            )
        self.add(
            branch,
            race,
            {
                "Type": "Parallel",
                "Branches": [{"StartAt": first, "States": inner_branch}],
                "Output": template("$states.result[0]"),
                "Catch": [*catchers, lost_catcher],
                "Next": won,
            },
            reference,
            "part",
        )
        self.add(branch, won, won_state, reference, "part")
        self.add(branch, lost, {"Type": "Pass", "End": True}, reference, "part")
        return race

    def lone_call(self, task: Mapping[str, Any]) -> bool:
        """Whether a task is one call compiled as one Task (no ``if``, ``timeout``, ``then: end``, nor
        an export that must move to a Pass of its own)."""
        if task_kind(task) != "call" or "if" in task or "timeout" in task or task.get("then") == "end":
            return False
        return _shaping(task, "export", "as") is None or not _reads(_shaping(task, "output", "as"), "context")


def _carried(value: str) -> str:
    """The ``Cause`` of a Fail carrying data out of a Parallel's branch (a fork's winner, a branch's
    ``then: end``, a timed task in time): ``value`` (JSONata text) as JSON, at most
    :data:`MAX_CAUSE` characters (Step Functions' longest cause; longer, it fails as an expression)."""
    return template(
        f"($c := $string({value}); $length($c) <= {MAX_CAUSE} ? $c : "
        f"$error(\"The data handed out of a fork's branch or a timed task is {MAX_CAUSE:,} characters as "
        "JSON at most (it travels as an error's cause): \" & $string($length($c))))"
    )


def _attempt_text(site: _Site) -> str:
    """JSONata text of the ``attempt`` of a call, a listen or an emit at ``site``."""
    if not site.retries and not site.loop:
        return '"0"'
    parts = list(site.retries) or ['"0"']
    text = ' & "." & '.join(parts)
    if site.loop:
        text += ' & "@" & $states.context.State.EnteredTime'
    return text


def _reads_own(task: Mapping[str, Any], own_lists: Sequence[str]) -> bool:
    """Whether an expression of the task (not of its lists ``own_lists``, nor of its ``catch.do``) reads
    ``$input`` or ``$task``."""
    outside = {key: value for key, value in task.items() if key not in own_lists}
    if isinstance(outside.get("catch"), Mapping):
        outside["catch"] = {key: value for key, value in outside["catch"].items() if key != "do"}
    return _reads(outside, "input", "task")


def _choice_ways(state: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str, str]]:
    """A Choice's ways out: ``(holder, key of its target, key of what it tells)``."""
    for rule in state.get("Choices", []):
        yield rule, "Next", _TOLD
    if "Default" in state:
        yield state, "Default", _TOLD_DEFAULT


def _rebased(state: Mapping[str, Any], data: str, bindings: Mapping[str, str]) -> dict[str, Any]:
    """A copy of the first state whose expressions read the execution's input: its input is ``data``
    (JSONata text over the execution's input), and what ``#start`` would have assigned is bound in a block
    around each expression that reads it (``bindings``: variable → JSONata text)."""

    def rebase(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: rebase(item) for key, item in value.items()}
        if isinstance(value, list):
            return [rebase(item) for item in value]
        if isinstance(value, str) and value.startswith("{% ") and value.endswith(" %}"):
            read = referenced(value[3:-3])
            body = _STATES_INPUT.sub(lambda _match: f"({data})", value[3:-3])
            lets = [f"${name} := {text}" for name, text in bindings.items() if name in read]
            if len(lets) == 1 and body.strip() == lets[0].split(" := ")[0]:
                return template(bindings[body.strip()[1:]])  # the variable alone: what it would be
            return template(f"({'; '.join(lets)}; {body})" if lets else body)
        return value

    rebased: dict[str, Any] = rebase(state)
    return rebased


def _targets(state: Mapping[str, Any]) -> Iterator[str]:
    """Where a state may go next."""
    if "Next" in state:
        yield state["Next"]
    if "Default" in state:
        yield state["Default"]
    for rule in state.get("Choices", []):
        yield rule["Next"]
    for catcher in state.get("Catch", []):
        yield catcher["Next"]


def _check_targets(branch: _Branch) -> None:
    """Every target names a state of its branch (the compiler's own check)."""
    for name, state in branch.items():
        for target in _targets(state):
            if target not in branch:
                raise AssertionError(f"{name!r} goes to {target!r}, which is not a state of its branch")
        for inner in state.get("Branches", []):
            _check_targets(inner["States"])


def _prune(branch: _Branch, start: str) -> None:
    """Removes the states nothing reaches (a task after ``then: end``, or one every ``then`` passes
    by): Step Functions refuses a machine with a state it cannot reach."""
    reached: set[str] = set()
    waiting = [start]
    while waiting:
        name = waiting.pop()
        if name in reached or name not in branch:
            continue
        reached.add(name)
        waiting.extend(_targets(branch[name]))
    for name in [name for name in branch if name not in reached]:
        del branch[name]
    for state in branch.values():
        for inner in state.get("Branches", []):
            _prune(inner["States"], inner["StartAt"])


def _names(branch: _Branch) -> Iterator[str]:
    """Every state's name, in the branches inside too."""
    for name, state in branch.items():
        yield name
        for inner in state.get("Branches", []):
            yield from _names(inner["States"])


def _move_to(branch: _Branch, name: str, index: int) -> None:
    """Moves a state of the branch to ``index`` in its order (a task's first state before its list)."""
    items = list(branch.items())
    moved = next(item for item in items if item[0] == name)
    items.remove(moved)
    items.insert(index, moved)
    branch.clear()
    branch.update(items)
