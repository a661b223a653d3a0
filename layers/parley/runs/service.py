"""The run lifecycle every function type shares (``http-api.md``, "Runs"; the format pages' "How a run
ends"), knowing no type: a type is reached through the registry (``parley.runs.kinds``).

``run_definition``: the run id (a caller's UUID, else a new one) and the rules of retrying under it
(same id, same definition and input: a ``started`` or ``succeeded`` run answered as recorded — a
started one re-arms its wait, which is idempotent, so a retry repairs a start cut short; a rejection as
``invalid_input``, ``unanswered`` (``410``) or ``cancelled`` answers its recorded problem; after
``conflict``, ``unavailable`` or ``failed`` the definition runs again, replacing the recorded attempt
under a condition; a run that called tools and did not succeed never runs again: ``409 tools_called``;
same id, other definition or input: ``409``). Then the active definition is read (a retired one is
``409``) and its type runs it. Every rejection is recorded on the run (:meth:`RunService.rejected`) and
answered with its problem.

The rest lives in a module each: ``answering`` (answering a request), ``endings`` (cancel, expiry,
park, settle), ``waiting`` (a run's wait started), ``reading`` (runs, requests and events read and
listed), ``retries`` (retrying under a run id), ``store`` (the table's items and conditions).
"""

from __future__ import annotations

import functools
import logging
import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, TypeVar

from parley.clock import format_time, parse_time
from parley.definitions.model import PlaybookRef
from parley.definitions.service import require_type
from parley.dynamo import StoreContention
from parley.errors import Problem
from parley.ports.waiting import Scheduler, Waits
from parley.runs import answering, endings, events, reading, retries, waiting
from parley.runs.events import run_event
from parley.runs.ids import input_digest, normalized_run_id
from parley.runs.kinds import CALLER_TYPE, FunctionKind, RunStart, kind_module
from parley.runs.listing import DEFAULT_LIMIT, MAX_LIMIT
from parley.runs.model import Event, Parent, Rejection, Run
from parley.runs.store import DynamoRunStore, RunTaken

if TYPE_CHECKING:
    from parley.ports.runtime import Runtime

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "RunService", "run_service", "runs_store_for"]

LOG: Final = logging.getLogger("parley.runs")
#: How often a write that met a concurrent one (same run id, a busy counter) is tried again.
WRITE_ATTEMPTS: Final = 8

Result = TypeVar("Result")


class RunService:
    """The lifecycle of runs of every type: run, answer, end and read them.

    The ports come from ``runtime`` when they are used, so a runtime completed after the service was
    built (the local server wires its executor last) is seen. Each type is bound to the service once,
    on first use (:meth:`kind`).
    """

    write_attempts: Final = WRITE_ATTEMPTS

    def __init__(self, runtime: Runtime, store: DynamoRunStore | None = None) -> None:
        self._runtime = runtime
        self._given_store = store
        self._kinds: dict[str, FunctionKind] = {}
        self._kinds_lock = threading.Lock()

    @property
    def runtime(self) -> Runtime:
        return self._runtime

    @functools.cached_property
    def store(self) -> DynamoRunStore:
        """The store: the one given, else one sharing the definitions' table (built on first use). It
        tells the caller's type of the endings of runs a workflow called (:meth:`_called_run_ended`)."""
        store = self._given_store or runs_store_for(self._runtime)
        store.ended = self._called_run_ended
        return store

    def _called_run_ended(self, playbook: PlaybookRef, run: Run) -> None:
        """A run a workflow called has ended: its ending answers the workflow's task token. The ending is
        written whatever happens here; a token that cannot be answered now is answered when the engine
        performs the call again (the entry finds the run ended)."""
        try:
            caller: Any = self.kind(CALLER_TYPE)
            caller.called_run_ended(playbook, run)
        except Exception:
            LOG.exception("the ending of run %s could not answer the workflow that called it", run.run_id)

    def kind(self, definition_type: str) -> FunctionKind:
        """The type ``definition_type`` bound to this lifecycle (through the registry)."""
        with self._kinds_lock:
            bound = self._kinds.get(definition_type)
            if bound is None:
                bound = kind_module(definition_type).bind(self)
                self._kinds[definition_type] = bound
            return bound

    # --- running ---------------------------------------------------------------------------------

    def run_definition(
        self,
        playbook: PlaybookRef,
        definition_type: str,
        name: str,
        *,
        input_value: Any,
        run_id: str | None,
        started_by: str,
        parent: Parent | None = None,
    ) -> Run:
        """Run the function; the run (``started`` or ``succeeded``), or its rejection as a problem.
        ``parent``: the workflow's call that starts it (``workflow-format.md``, "Calling a function")."""
        require_type(definition_type)
        supplied = run_id is not None
        run_id = normalized_run_id(run_id) if run_id is not None else str(uuid.uuid4())
        digest = input_digest(input_value)
        for attempt in range(WRITE_ATTEMPTS):
            replacing: int | None = None
            existing = self.store.get_run(playbook, run_id) if supplied or attempt else None
            if existing is not None:
                recorded = retries.recorded(self, playbook, existing, definition_type, name, digest)
                if recorded is not None:
                    return recorded
                replacing = existing.attempt
            try:
                return self._start(
                    playbook,
                    definition_type,
                    name,
                    input_value,
                    run_id,
                    started_by,
                    digest,
                    replacing,
                    parent,
                )
            except RunTaken:
                continue  # another call under the same id wrote first: read what it wrote
            except StoreContention:
                self.back_off(attempt)
        raise Problem(
            "unavailable", "Too many runs are starting at once in this playbook; try again shortly."
        )

    def _start(
        self,
        playbook: PlaybookRef,
        definition_type: str,
        name: str,
        input_value: Any,
        run_id: str,
        started_by: str,
        digest: str,
        replacing: int | None,
        parent: Parent | None,
    ) -> Run:
        definition = self._runtime.definitions.get(playbook, definition_type, name)
        if definition is None:
            raise Problem("not_found", f"This playbook has no {definition_type} definition named {name!r}.")
        moment = self._runtime.clock.now()
        run = Run(
            run_id=run_id,
            type=definition_type,
            name=name,
            definition_version=definition.version,
            status="started",
            started_at=format_time(moment),
            started_by=started_by,
            input_digest=digest,
            attempt=(replacing or 0) + 1,
            parent=parent,
        )
        if definition.status == "retired":
            retired = Problem(
                "conflict",
                f"The {definition_type} definition {name!r} is retired; a retired definition does not run.",
            )
            raise self.rejected(playbook, run, retired, replacing) from None
        start = RunStart(playbook, definition, run, input_value, replacing, moment)
        return self.kind(definition_type).run(start)

    def rejected(
        self,
        playbook: PlaybookRef,
        run: Run,
        problem: Problem,
        replacing: int | None,
        *,
        before: list[Event] | None = None,
    ) -> Problem:
        """Record ``problem`` as the run's rejection (``before`` it: what the run did, then
        ``run_rejected``) and return it to raise."""
        rejection = Rejection.of(problem)
        ended = replace(run, status="rejected", rejection=rejection, finished_at=run.started_at)
        event = run_event(
            events.RUN_REJECTED, parse_time(run.started_at), run.run_id, {"rejection": rejection.as_json()}
        )
        self.store.record_run(playbook, ended, [*(before or []), event], replacing=replacing)
        return problem

    # --- waiting, answering, endings and reads: each in its module, a method here ----------------

    start_waiting = waiting.start_waiting
    abandoned = waiting.abandoned

    answer_interaction = answering.answer_interaction
    answer_by_reply = answering.answer_by_reply
    cancel_run = endings.cancel_run
    expire_request = endings.expire_request
    after_ending = endings.after_ending
    park_request = endings.park_request
    settle_run = endings.settle_run
    get_run = reading.get_run
    list_runs = reading.list_runs
    list_interactions = reading.list_interactions
    get_run_history = reading.get_run_history
    list_playbook_events = reading.list_playbook_events
    get_event = reading.get_event

    # --- writing ---------------------------------------------------------------------------------

    def retrying(self, work: Callable[[], Result]) -> Result:
        """``work``, tried again (with jittered back-off) while another transaction holds its items."""
        for attempt in range(WRITE_ATTEMPTS - 1):
            try:
                return work()
            except StoreContention:
                self.back_off(attempt)
        return work()

    @staticmethod
    def back_off(attempt: int) -> None:
        time.sleep(random.uniform(0, 0.01 * 2**attempt))  # jitter, not a secret

    def ports(self) -> tuple[Waits, Scheduler]:
        waits, scheduler = self._runtime.waits, self._runtime.scheduler
        if waits is None or scheduler is None:
            raise Problem("unavailable", "This runtime has no way to wait for answers.")
        return waits, scheduler


def run_service(runtime: Runtime) -> RunService:
    """The service over ``runtime``; its store is built on first use (see :func:`runs_store_for`)."""
    return RunService(runtime)


def runs_store_for(runtime: Runtime) -> DynamoRunStore:
    """Runs live in the definitions' table, so their store shares its client and table (a runtime whose
    definitions are not kept in DynamoDB cannot run functions)."""
    from parley.definitions.store import DynamoDefinitionStore

    definitions = runtime.definitions
    if not isinstance(definitions, DynamoDefinitionStore):
        raise TypeError("runs are kept in the table of a DynamoDefinitionStore")
    return DynamoRunStore(definitions.client, definitions.table_name, runtime.content)
