"""How a workflow runs (``workflow-format.md``, "Calling a function", "How a run ends"): the run starts
an execution of its version's state machine; the machine's entry (``parley.executions.workflow``)
starts the runs it calls and writes its ending; a called run's ending answers the workflow's task token.

- :meth:`Workflows.run` (the api function): the input checked against ``input.schema``, the run
  written ``started`` with ``run_started``, the version's machine made (once) and its execution started
  under the run's name; answers ``started``, or the ending when the run ended before its first wait.
- :meth:`Workflows.call` (the entry, ``call: run_definition``): the called run started as
  ``run_definition`` starts it, acting for the workflow's starter, under a run id derived from the
  workflow's run id, the task and the attempt (a call the engine performs again meets the same run), with
  ``parent`` and the task token kept on it; ``call_started`` in the workflow's history.
- :meth:`Workflows.called_run_ended` (the store tells the lifecycle of every ending of a called run):
  ``SendTaskSuccess`` with ``{"output"}``, or ``SendTaskFailure`` with the error of the page's table.
- :meth:`Workflows.end` (the entry, at the machine's end): the run's ending, written once: ``succeeded``
  with its output (checked against ``output.schema``), or ``rejected`` as the uncaught error says.
- :meth:`Workflows.cancelled`: a cancelled workflow stops its execution and cancels every run it waits
  for (kind ``parent_ended``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import uuid
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from parley.clock import format_time, parse_time
from parley.definitions.model import PlaybookRef
from parley.dynamo import StoreConflict
from parley.errors import ErrorEntry, Problem
from parley.ports.waiting import RunKey
from parley.runs import events
from parley.runs.events import run_event
from parley.runs.listing import MAX_LIMIT
from parley.runs.model import Event, Parent, Rejection, Run, invalid_input
from parley.runs.versions import PerVersion
from parley.workflow import engine
from parley.workflow.errors import (
    PROBLEMS,
    WorkflowError,
    error_of_failure,
    error_of_rejection,
    runtime_error,
    spec_type,
)

if TYPE_CHECKING:
    from parley.errors import ErrorEntry as _ErrorEntry
    from parley.ports.workflows import WorkflowEngine
    from parley.runs.kinds import RunStart
    from parley.runs.model import Request
    from parley.runs.service import RunService
    from parley.workflow.document import WorkflowDocument

LOG: Final = logging.getLogger("parley.workflow")
#: Input of a run and of a call, data between tasks, output of a run: Step Functions' payload.
MAX_PAYLOAD_BYTES: Final = 256 * 1024
#: Where a run's id is derived from for a call (uuid5 of the workflow's run id, task and attempt).
_CALL_NAMESPACE: Final = uuid.UUID("6f6c5a54-3c1e-4f55-9d38-2b8f1f6c0a77")
#: The kinds of a cancellation (``workflow-format.md``, "How a run ends").
PARENT_ENDED: Final = "parent_ended"
DEADLINE: Final = "deadline"
OVERRUN: Final = "overrun"


def called_run_id(workflow_run_id: str, task: str, attempt: str) -> str:
    """The run id of a call: the same workflow run, task and attempt give the same run."""
    return str(uuid.uuid5(_CALL_NAMESPACE, f"{workflow_run_id}\n{task}\n{attempt}"))


def machine_name(playbook: PlaybookRef, name: str) -> str:
    """The state machine of a workflow: one per workflow of a playbook (Step Functions' names are at
    most 80 characters; the stage's prefix is the engine's)."""
    digest = hashlib.sha256(f"{playbook.org}/{playbook.playbook}".encode()).hexdigest()[:12]
    return f"wf-{digest}-{name}"


def execution_arn(state_machine_arn: str, name: str) -> str:
    """The ARN an execution of a machine's version has (``…:execution:<machine>:<name>``)."""
    prefix, _, rest = state_machine_arn.partition(":stateMachine:")
    machine = rest.split(":", 1)[0]
    return f"{prefix}:execution:{machine}:{name}"


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"))


class Workflows:
    """The workflow type over one lifecycle."""

    #: A started workflow holds no request of its own: cancel_run ends it (and what it waits for).
    works_elsewhere: Final = True
    requests_end_runs: Final = True

    def __init__(self, runs: RunService) -> None:
        self.runs = runs
        self._documents: PerVersion[WorkflowDocument] = PerVersion()
        self._machines: PerVersion[str] = PerVersion()
        self._versions: PerVersion[WorkflowDocument | None] = PerVersion()

    # --- the lifecycle's interface (a workflow holds no request of its own) ------------------------

    def waiting(self, playbook: PlaybookRef, request: Request) -> None:
        return None

    def resume(self, key: RunKey, request: Request) -> str:
        return "unchanged"

    def answer_errors(self, request: Request, answer: Any) -> list[_ErrorEntry]:
        return []

    def forget(self, key: RunKey, request: Request) -> None:
        return None

    def timed(self, work: Mapping[str, Any]) -> dict[str, Any]:
        """A due time of a workflow's schedule (``schedule``: ``parley.workflow.schedules``)."""
        from parley.workflow.schedules import WORK, fire

        if work.get("work") != WORK:
            raise ValueError(f"workflows do no timed work such as {work.get('work')!r}")
        return fire(self.runs, work)

    def listed(self, request: Request) -> dict[str, Any]:
        return request.as_listed()

    # --- starting a run (api, or the entry for a workflow a workflow calls) -------------------------

    def run(self, start: RunStart) -> Run:
        runs, playbook, run = self.runs, start.playbook, start.run
        document = self._document(playbook, run.name, run.definition_version, start.definition.source)
        try:
            _check_payload(start.input_value, "/input", "The input")
            if document.input_schema is not None:
                from parley.documents.json_schema import validate_instance

                errors = validate_instance(start.input_value, document.input_schema, "/input")
                if errors:
                    raise invalid_input(errors)
        except Problem as problem:
            raise runs.rejected(playbook, run, problem, start.replacing) from None
        workflows = self._engine()
        machine = self._machine(playbook, run.name, run.definition_version, document)
        key = RunKey(playbook.org, playbook.playbook, run.run_id)
        execution = execution_arn(machine, key.execution_name)
        started = replace(run, execution=execution, input=start.input_value)
        depth = run.parent.depth if run.parent is not None else 0
        runs.store.record_run(
            playbook,
            started,
            [
                run_event(
                    events.RUN_STARTED,
                    start.moment,
                    run.run_id,
                    {"definition_version": run.definition_version},
                )
            ],
            replacing=start.replacing,
        )
        try:
            workflows.start_execution(
                machine, key.execution_name, engine.execution_input(key.as_json(), start.input_value, depth)
            )
        except Exception as exc:
            lost = Problem("unavailable", "The workflow's execution could not be started; try again.")
            self._end(playbook, started, None, lost)
            raise lost from exc
        if run.parent is None:
            # A caller's run: answer its ending when it ended before its first wait. (A run a workflow
            # calls is started from within that workflow's step, which this would wait for.)
            try:
                workflows.settle()
            except Exception:  # only a wait for what can be told at once: the run is started either way
                LOG.warning("the workflow run %s did not come to rest in time", run.run_id)
        current = runs.store.get_run(playbook, run.run_id) or started
        if current.status == "rejected" and current.rejection is not None:
            raise current.rejection.problem()
        return replace(current, record=None, input=None)

    def rearm(self, playbook: PlaybookRef, run: Run) -> None:
        """A retry under the id of a started workflow run: start its execution again (harmless when it
        runs), so that a start cut short between the run's write and the execution's start is repaired."""
        if run.execution is None:
            return
        definition = self.runs.runtime.definitions.get(playbook, "workflow", run.name)
        if definition is None or definition.version != run.definition_version:
            return
        document = self._document(playbook, run.name, run.definition_version, definition.source)
        machine = self._machine(playbook, run.name, run.definition_version, document)
        key = RunKey(playbook.org, playbook.playbook, run.run_id)
        depth = run.parent.depth if run.parent is not None else 0
        self._engine().start_execution(
            machine, key.execution_name, engine.execution_input(key.as_json(), run.input, depth)
        )

    def _document(self, playbook: PlaybookRef, name: str, version: int, source: str) -> WorkflowDocument:
        from parley.workflow.document import check_workflow_document

        return self._documents.get(
            (playbook, name, version, hashlib.sha256(source.encode()).hexdigest()),
            lambda: check_workflow_document(source),
        )

    def _run_document(self, playbook: PlaybookRef, run: Run) -> WorkflowDocument | None:
        """The document of the version a run runs (a saved version never changes: read once a process);
        ``None`` when it is not kept."""

        def read() -> WorkflowDocument | None:
            version = self.runs.runtime.definitions.get_version(
                playbook, "workflow", run.name, run.definition_version
            )
            if version is None:
                return None
            return self._document(playbook, run.name, run.definition_version, version.source)

        return self._versions.get((playbook, run.name, run.definition_version), read)

    def _machine(self, playbook: PlaybookRef, name: str, version: int, document: WorkflowDocument) -> str:
        """The ARN of the machine's version this definition version runs on (made on first need)."""
        from parley.workflow.compiler import compile_workflow

        workflows = self._engine()

        def make() -> str:
            compiled = engine.with_entry(
                compile_workflow(document.data).definition, workflows.workflow_function_arn
            )
            return workflows.create_state_machine(machine_name(playbook, name), self._bounded(compiled))

        return self._machines.get((playbook, name, version), make)

    def _bounded(self, machine: dict[str, Any]) -> dict[str, Any]:
        """The machine with its execution's timeout: the document's ``timeout`` (compiled as the
        machine's ``TimeoutSeconds``), at most the operator's longest duration of a run."""
        longest = self.runs.runtime.operator.limits.workflow_max_seconds
        own = machine.get("TimeoutSeconds")
        bounded = min(own, longest) if isinstance(own, int) and not isinstance(own, bool) else longest
        return {**machine, "TimeoutSeconds": bounded}

    def _overran(self, playbook: PlaybookRef, run: Run) -> bool:
        """Whether a run whose execution timed out passed the operator's longest duration (``overrun``)
        rather than its document's own ``timeout``."""
        document = self._run_document(playbook, run)
        if document is None:
            return True
        from parley.workflow.compiler import compile_workflow

        own = compile_workflow(document.data).definition.get("TimeoutSeconds")
        longest = self.runs.runtime.operator.limits.workflow_max_seconds
        return not (isinstance(own, int) and own <= longest)

    def _engine(self) -> WorkflowEngine:
        workflows = self.runs.runtime.workflows
        if workflows is None:
            raise Problem("unavailable", "This runtime has no way to run workflows.")
        return workflows

    # --- a call (the entry) ---------------------------------------------------------------------------

    def call(self, payload: Mapping[str, Any]) -> str:
        """``call: run_definition``: start the called run and keep the task token on it; its ending
        answers the token. What happened: ``started``, ``ended`` (answered at once) or ``refused``."""
        key = RunKey.from_json(payload["run"])
        playbook = PlaybookRef(key.org, key.playbook)
        token, task = str(payload["token"]), str(payload["task"])
        definition_type, name = str(payload["type"]), str(payload["name"])
        depth = int(payload.get("depth") or 0) + 1
        workflow_run = self.runs.store.get_run(playbook, key.run_id)
        if workflow_run is None or workflow_run.status != "started":
            self._refuse(token, runtime_error("The workflow run has ended.", instance=task))
            return "refused"
        if depth > engine.MAX_DEPTH:
            error = runtime_error(
                f"Workflows call workflows at most {engine.MAX_DEPTH} deep; this call would be the "
                f"{depth}th run below the first.",
                instance=task,
                title="Too many calls above a run",
            )
            self._refuse(token, error)
            return "refused"
        input_value = payload.get("input", {})
        if _size(input_value) > MAX_PAYLOAD_BYTES:
            error = runtime_error(
                f"The input of the call is {_size(input_value):,} bytes as JSON; a call's input is at "
                f"most {MAX_PAYLOAD_BYTES:,}.",
                instance=task,
            )
            self._refuse(token, error)
            return "refused"
        child_id = called_run_id(key.run_id, task, str(payload.get("attempt", "0")))
        parent = Parent(key.run_id, task, token, depth)
        self._record_call_started(playbook, key.run_id, child_id, definition_type, name, task)
        try:
            self.runs.run_definition(
                playbook,
                definition_type,
                name,
                input_value=input_value,
                run_id=child_id,
                started_by=workflow_run.started_by,
                parent=parent,
            )
        except Problem as problem:
            child = self.runs.store.get_run(playbook, child_id)
            if child is None or child.status == "started":
                # Refused before a run was written (no such definition, a retired one, another input):
                # the task raises the rejection's error.
                rejection = Rejection.of(problem).as_json()
                self._refuse(
                    token,
                    error_of_rejection(rejection, definition_type=definition_type, name=name, task=task),
                )
                return "refused"
        child = self.runs.store.get_run(playbook, child_id)
        if child is None:  # pragma: no cover - written above
            return "refused"
        if child.status == "started":
            if child.parent is None or child.parent.token != token:
                try:
                    self.runs.store.keep_parent_token(playbook, child_id, parent)
                    return "started"
                except StoreConflict:
                    child = self.runs.store.get_run(playbook, child_id) or child  # ended meanwhile
            else:
                return "started"
        self.called_run_ended(playbook, replace(child, parent=parent))
        return "ended"

    def _record_call_started(
        self, playbook: PlaybookRef, run_id: str, child: str, definition_type: str, name: str, task: str
    ) -> None:
        """``call_started`` in the workflow's history, once per called run."""
        existing = self.runs.store.get_run(playbook, child)
        if existing is not None:
            return
        moment = self.runs.runtime.clock.now()
        event = run_event(
            events.CALL_STARTED,
            moment,
            run_id,
            {"run_id": child, "type": definition_type, "name": name, "task": task},
        )
        self.runs.store.record_events(playbook, [event])

    def _refuse(self, token: str, error: WorkflowError) -> None:
        self._engine().fail(token, engine.ERROR_NAME, error.cause())

    def called_run_ended(self, playbook: PlaybookRef, run: Run) -> None:
        """A called run has ended: answer the workflow's task with its output or its error."""
        parent = run.parent
        if parent is None or parent.token is None:
            return
        workflows = self._engine()
        if run.status == "succeeded":
            output = run.output
            if run.omitted_output_size is not None:
                full = self.runs.store.get_run(playbook, run.run_id)
                output = full.output if full is not None else None
            if _size({"output": output}) > MAX_PAYLOAD_BYTES:
                error = runtime_error(
                    f"The output of the {run.type} {run.name!r} is {_size(output):,} bytes as JSON; data "
                    f"between tasks is at most {MAX_PAYLOAD_BYTES:,}.",
                    instance=parent.task,
                )
                workflows.fail(parent.token, engine.ERROR_NAME, error.cause())
                return
            workflows.succeed(parent.token, {"output": output})
            return
        if run.status == "rejected" and run.rejection is not None:
            error = error_of_rejection(
                run.rejection.as_json(), definition_type=run.type, name=run.name, task=parent.task
            )
        else:
            error = error_of_failure(
                f"The run {run.run_id} failed.", definition_type=run.type, name=run.name, task=parent.task
            )
        workflows.fail(parent.token, engine.ERROR_NAME, error.cause())

    # --- the end (the entry) ------------------------------------------------------------------------

    def end(self, payload: Mapping[str, Any]) -> str:
        """Write the run's ending from the machine's end: ``succeeded``, ``rejected`` or ``unchanged``
        (it had ended: cancelled, or this end came twice)."""
        key = RunKey.from_json(payload["run"])
        playbook = PlaybookRef(key.org, key.playbook)
        run = self.runs.store.get_run(playbook, key.run_id)
        if run is None or run.status != "started":
            return "unchanged"
        if "error" in payload:
            ending = self._end(playbook, run, None, rejection_of(WorkflowError.from_json(payload["error"])))
        else:
            output = payload.get("output")
            ending = self._end(playbook, run, output, self._output_problem(playbook, run, output))
        if self._forks(playbook, run):
            # A fork's branches that Step Functions stopped (a competing branch won, another failed, one
            # ended the run) told nothing: the runs they waited for are cancelled now.
            self._cancel_called(playbook, run, PARENT_ENDED)
        return ending

    def _forks(self, playbook: PlaybookRef, run: Run) -> bool:
        """Whether the run's version has a ``fork`` (whose stopped branches may leave called runs)."""
        document = self._run_document(playbook, run)
        if document is None:
            return False
        return _has_key(document.data, "fork")

    def ended(self, payload: Mapping[str, Any]) -> str:
        """The execution ended without its end task: Step Functions failed it (a payload past 256 KiB,
        its history's 25,000 events, its own timeout). A run still started ends ``rejected`` as the
        ``runtime`` error (``workflow-format.md``, "Bounds"), never left started."""
        if not isinstance(payload.get("run"), Mapping):
            return "unchanged"
        key = RunKey.from_json(payload["run"])
        playbook = PlaybookRef(key.org, key.playbook)
        run = self.runs.store.get_run(playbook, key.run_id)
        if run is None or run.status != "started":
            return "unchanged"
        if payload.get("status") == "TIMED_OUT" and self._overran(playbook, run):
            longest = self.runs.runtime.operator.limits.workflow_max_duration
            detail = f"The run passed its longest duration ({longest}, WORKFLOW_MAX_DURATION)."
            ending = self._end(playbook, run, None, Problem("cancelled", detail, kind=OVERRUN))
            self._cancel_called(playbook, run, PARENT_ENDED)
            return ending
        ending = self._end(playbook, run, None, rejection_of(execution_error(payload)))
        if payload.get("status") == "TIMED_OUT":
            self._cancel_called(playbook, run, DEADLINE)  # the document's timeout
        return ending

    def deadline(self, payload: Mapping[str, Any]) -> str:
        """A task's ``timeout`` passed: cancel (kind ``deadline``) the run it called, or — a ``do``,
        ``for``, ``fork`` or ``try`` timed as a whole — every run a task within it called, that is still
        started. What happened: ``cancelled`` or ``unchanged``."""
        key = RunKey.from_json(payload["run"])
        playbook = PlaybookRef(key.org, key.playbook)
        task = str(payload["task"])
        child_id = called_run_id(key.run_id, task, str(payload.get("attempt", "0")))
        outcome = self._cancel(playbook, key.run_id, child_id, DEADLINE)
        within = self._cancel_within(playbook, key.run_id, task, DEADLINE)
        return "cancelled" if "cancelled" in (outcome, within) else "unchanged"

    def stopped(self, payload: Mapping[str, Any]) -> str:
        """A competing fork was won: the runs its stopped branches waited for are cancelled (kind
        ``parent_ended``). What happened: ``cancelled`` or ``unchanged``."""
        key = RunKey.from_json(payload["run"])
        playbook = PlaybookRef(key.org, key.playbook)
        return self._cancel_within(playbook, key.run_id, str(payload["task"]), PARENT_ENDED)

    def _cancel_within(self, playbook: PlaybookRef, run_id: str, task: str, kind: str) -> str:
        """Cancel, with ``kind``, every run a task within ``task`` called that is still started."""
        outcome = "unchanged"
        for called, called_task in self._called_runs(playbook, run_id):
            if (
                called_task.startswith(task + "/")
                and self._cancel(playbook, run_id, called, kind) == "cancelled"
            ):
                outcome = "cancelled"
        return outcome

    def _output_problem(self, playbook: PlaybookRef, run: Run, output: Any) -> Problem | None:
        if _size(output) > MAX_PAYLOAD_BYTES:
            return rejection_of(
                runtime_error(
                    f"The run's output is {_size(output):,} bytes as JSON; it is at most "
                    f"{MAX_PAYLOAD_BYTES:,}."
                )
            )
        document = self._run_document(playbook, run)
        if document is None:
            return None
        if document.output_schema is None:
            return None
        from parley.documents.json_schema import validate_instance

        errors = validate_instance(output, document.output_schema, "/output")
        if not errors:
            return None
        first = errors[0]
        return rejection_of(
            WorkflowError(
                type="https://open-workflow-specification.org/spec/1.0.0/errors/validation",
                status=400,
                title="The run's output does not match output.schema",
                detail=f"{first.pointer}: {first.detail}",
            ),
            errors=list(errors),
        )

    def _end(self, playbook: PlaybookRef, run: Run, output: Any, problem: Problem | None) -> str:
        now = self.runs.runtime.clock.now()
        if problem is None:
            done = replace(run, status="succeeded", output=output, finished_at=format_time(now), input=None)
            event = run_event(events.RUN_SUCCEEDED, now, run.run_id, {"output": output})
        else:
            rejection = Rejection.of(problem)
            done = replace(
                run, status="rejected", rejection=rejection, finished_at=format_time(now), input=None
            )
            event = run_event(events.RUN_REJECTED, now, run.run_id, {"rejection": rejection.as_json()})
        try:
            self.runs.retrying(lambda: self.runs.store.end_run(playbook, done, event))
        except StoreConflict:
            return "unchanged"
        return done.status

    # --- the run's history ---------------------------------------------------------------------------

    def history(self, playbook: PlaybookRef, run: Run) -> list[Event]:
        """The run's events: what the store keeps, and its tasks' read from the execution's history
        (``parley.workflow.history``)."""
        from parley.workflow.compiler import compile_workflow
        from parley.workflow.history import merged, task_events

        kept: list[Event] = []
        after: str | None = None
        while True:
            found = self.runs.store.list_events(
                playbook, run_id=run.run_id, event_type=None, since=None, descending=False,
                limit=MAX_LIMIT, after=after,
            )  # fmt: skip
            kept.extend(found.items)
            if not found.more or not found.items:
                break
            after = found.items[-1].id
        if run.execution is None:
            return kept
        document = self._run_document(playbook, run)
        if document is None:
            return kept
        states = compile_workflow(document.data).states
        history = self._engine().execution_history(run.execution)
        fallback = parse_time(run.started_at)
        return merged(kept, task_events(run.run_id, history, states, fallback))

    # --- cancelling -----------------------------------------------------------------------------------

    def cancelled(self, playbook: PlaybookRef, run: Run, detail: str) -> None:
        """The run was cancelled (``cancel_run``, or the workflow that called it ended): stop its
        execution and cancel every run it waits for, with the kind ``parent_ended``; its listens are
        forgotten."""
        from parley.workflow.listening import RunEvents

        RunEvents(self.runs).forget(playbook, run.run_id)
        if run.execution is not None:
            with contextlib.suppress(Problem):  # an execution out of reach ends at its own end entry
                self._engine().stop_execution(run.execution, "Parley.Cancelled", detail[:1000])
        self._cancel_called(playbook, run, PARENT_ENDED)

    def _cancel_called(self, playbook: PlaybookRef, run: Run, kind: str) -> None:
        """Cancel every run the workflow run waits for, with ``kind``."""
        for child_id, _task in self._called_runs(playbook, run.run_id):
            self._cancel(playbook, run.run_id, child_id, kind)

    def _cancel(self, playbook: PlaybookRef, run_id: str, child_id: str, kind: str) -> str:
        child = self.runs.store.get_run(playbook, child_id)
        if child is None or child.status != "started":
            return "unchanged"
        why = "its task's timeout passed" if kind == DEADLINE else "it ended"
        try:
            self.runs.cancel_run(
                playbook,
                child_id,
                reason=f"The workflow run {run_id} that waited for it no longer does: {why}.",
                cancelled_by=f"workflow:{run_id}",
                kind=kind,
            )
        except Problem:
            return "unchanged"  # it ended meanwhile
        return "cancelled"

    def _called_runs(self, playbook: PlaybookRef, run_id: str) -> list[tuple[str, str]]:
        """Each run the workflow run called, with the task that called it (its ``call_started``)."""
        found: list[tuple[str, str]] = []
        cursor: str | None = None
        while True:
            page = self.runs.list_playbook_events(
                playbook,
                event_type=events.CALL_STARTED,
                run_id=run_id,
                order="asc",
                limit=MAX_LIMIT,
                cursor=cursor,
            )
            found.extend(
                (str(item["data"]["run_id"]), str(item["data"].get("task", ""))) for item in page.items
            )
            cursor = page.next_cursor
            if cursor is None:
                return found


def execution_error(ended: Mapping[str, Any]) -> WorkflowError:
    """The error an execution that failed without its end task ended with: a workflow error raised where
    nothing caught it, an expression that failed, or Step Functions' own bounds."""
    error = str(ended.get("error") or "")
    cause = str(ended.get("cause") or "")
    if error == engine.ERROR_NAME:
        try:
            return WorkflowError.from_json(json.loads(cause))
        except ValueError:
            return runtime_error(cause[:2000])
    if error == engine.EXPRESSION_ERROR:
        return WorkflowError(spec_type("expression"), 400, title="An expression failed", detail=cause[:2000])
    if error == "States.DataLimitExceeded":
        return runtime_error(
            f"The data between its tasks passed {MAX_PAYLOAD_BYTES:,} bytes as JSON (256 KiB)."
        )
    if ended.get("status") == "TIMED_OUT" or error == engine.TIMEOUT_ERROR:
        return WorkflowError(spec_type("timeout"), 408, title="The run passed its longest duration")
    return runtime_error(f"Step Functions ended its execution: {error}{': ' + cause if cause else ''}"[:2000])


def _has_key(value: Any, key: str) -> bool:
    if isinstance(value, dict):
        return key in value or any(_has_key(inner, key) for inner in value.values())
    if isinstance(value, list):
        return any(_has_key(inner, key) for inner in value)
    return False


def _check_payload(value: Any, pointer: str, what: str) -> None:
    size = _size(value)
    if size > MAX_PAYLOAD_BYTES:
        raise invalid_input(
            [
                ErrorEntry(
                    pointer,
                    f"{what} is {size:,} bytes as JSON; it is at most {MAX_PAYLOAD_BYTES:,} (256 KiB).",
                )
            ]
        )


def rejection_of(error: WorkflowError, errors: list[ErrorEntry] | None = None) -> Problem:
    """The run's rejection for an error nothing caught (``workflow-format.md``, "How a run ends")."""
    parts = [error.title or error.type]
    if error.detail:
        parts.append(error.detail)
    detail = ": ".join(parts) + (f" (at {error.instance})" if error.instance else "")
    kind = error.kind
    if error.type == PROBLEMS + "unanswered":
        reason = "unanswered"
    elif error.type in (PROBLEMS + "tools_called", PROBLEMS + "effect_unknown"):
        reason, kind = "conflict", error.type.rpartition("/")[2]
    elif 400 <= error.status <= 499 and error.status not in (408, 429):
        reason = "invalid_input"
    else:
        reason = "unavailable"
    return Problem(reason, detail, kind=kind, because=error.because, errors=errors or [])
