"""``parley serve``: the whole API on one machine (``http-api.md``, "Local server").

The same handlers as on AWS, with AWS emulated by moto in this process for the server's life:

- the API handler (``parley.api.app.build_handler``) behind an HTTP front (uvicorn, with timeouts and
  limits: ``parley.local.front``); each request becomes a real API Gateway REST proxy event and the
  handler's result becomes the HTTP answer; the MCP front door's paths (``/mcp``,
  ``/v1/orgs/{org}/playbooks/{playbook}/mcp``) go to the ``mcp`` function's handler
  (``parley.front.handler``) instead, as API Gateway routes them on AWS;
- DynamoDB, with the table of ``parley.infrastructure.table``;
- Step Functions: the run's state machine (the ASL ``cdk deploy`` ships) run by a local interpreter, its
  Lambda tasks run by the project's ``wait``, ``settle`` and ``reason`` handlers (``parley.local.executor``);
- the scheduler port, calling the ``timer`` handler (``parley.local.scheduler``): on time with the real
  clock, under ``POST /_local/clock/advance`` with the manual one.

Under the manual clock, work a request makes due at once (a delivery's first attempt) runs before that
request is answered.

Calls into the API handler are serialized: a Lambda instance serves one event at a time, and
powertools' resolver relies on that. The listings (``GET`` of a playbook's ``runs``, ``events`` and
``interactions``) are the exception (issue 31: one slow request holds no other): they only read, so
each is answered outside the server's lock by a handler of its own thread (as another Lambda instance
would), each of its reads applied alone under the store's lock (``parley.local.aws.moto_lock``, held
per call); a listing never waits for a write in progress, nor holds one.

After each request (and each piece of timed work) the server waits
for the executions it set off to arrive — parked on their token, or ended and settled — so that what a
client reads next already shows the effects, as the advance call promises. The handlers it waits for
run on the executor's worker threads and never take the server's lock, so the wait cannot deadlock.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Final, Literal

from parley.api.problems import internal_problem, problem_result
from parley.clock import Clock, ManualClock, SystemClock
from parley.config import OperatorConfig, load_operator_config, operator_config_from_environment
from parley.errors import Problem
from parley.front.target import is_mcp_path
from parley.listening import listen_failure
from parley.local.clock_routes import answer_clock_route, is_clock_path
from parley.local.data_lock import DataFolderInUse, DataFolderLock
from parley.local.events import HttpReply, api_gateway_event, http_reply
from parley.local.front import FrontLimits, HttpFront, listening_socket
from parley.local.functions import LambdaContext
from parley.local.journal import Journal, JournalFailed
from parley.local.persistence import LocalData, Restored, stored_clock

if TYPE_CHECKING:
    from parley.connections.secrets import ConnectionSecrets

__all__ = ["LambdaContext", "LocalServer", "ServeOptions", "running", "serve"]

#: How to serve on another port, said when the port is in use: a second server needs a data folder of its
#: own too (one server per folder: ``parley.local.data_lock``).
_SERVE_HINT: Final = (
    "parley serve --port 8001 --data .parley-8001 (a second server beside it needs a data folder of its "
    "own, or none with --data none; --port 0 picks a free port)"
)
ClockMode = Literal["real", "manual"]
LOG: Final = logging.getLogger("parley.local")
#: How long a request waits, after a restart, for the restored workflows to run again (a few seconds for
#: hundreds of them); past it, it is answered all the same.
REVIVAL_WAIT_SECONDS: Final = 60.0
#: The listings answered outside the server's lock (see above).
_LISTING: Final = re.compile(r"^/v1/orgs/[^/]+/playbooks/[^/]+/(?:runs|events|interactions)/?$")


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    config: Path | None = None
    clock: ClockMode = "real"
    #: The data folder (``parley.local.persistence``); ``None``: nothing kept past the server's life.
    data: Path | None = None
    #: The HTTP front's timeouts and limits.
    front: FrontLimits = field(default_factory=FrontLimits)
    #: ``--allow-host``: further names the server answers in ``Host`` (``parley.local.request_guard``).
    allow_hosts: tuple[str, ...] = ()


def local_connection_secrets(data: Path | None) -> ConnectionSecrets:
    """Connections' secrets in the data folder, encrypted with the key kept outside it
    (``parley.connections.secrets``); in memory with ``--data none``."""
    from parley.connections.secrets import LocalConnectionSecrets, MemoryConnectionSecrets

    return LocalConnectionSecrets(data) if data is not None else MemoryConnectionSecrets()


class LocalServer:
    """The HTTP front and the emulated AWS services around one runtime. Use :func:`running`."""

    def __init__(self, options: ServeOptions, operator: OperatorConfig) -> None:
        from parley.api.app import build_handler
        from parley.aws.environment import run_wait_from_environment
        from parley.definitions.store import DynamoDefinitionStore
        from parley.local.aws import create_table, local_content_store, local_dynamodb_client
        from parley.local.executor import LocalExecutor
        from parley.local.functions import project_functions
        from parley.local.reasoner import LocalReasoner
        from parley.local.scheduler import LocalScheduler
        from parley.ports.runtime import Runtime

        self.options = options
        manual = options.clock == "manual"
        # The data folder's journal first (recovered, if a crash left it so): it holds the clock's time.
        self.journal = Journal(options.data) if options.data is not None else None
        kept = stored_clock(self.journal) if manual and self.journal is not None else None
        self.clock: Clock = ManualClock(kept) if manual else SystemClock()
        self.data: LocalData | None = None
        self.restored: Restored | None = None
        #: Set once the server stops: a revival still under way starts nothing more.
        self.stopping = threading.Event()
        #: Set once the restored workflows run again and the endings no run took are taken: requests wait
        #: for it (at most REVIVAL_WAIT_SECONDS), so that what a client does after a restart meets them.
        self.revived = threading.Event()
        self.lock = threading.RLock()
        #: Each request thread's own handler for the listings (see above), built on its first listing.
        self._listers = threading.local()
        # Listen first: a port in use fails before anything else is set up.
        self.front = HttpFront(
            listening_socket(options.host, options.port),
            self.answer,
            options.front,
            names=(options.host,),
            allow_hosts=options.allow_hosts,
        )
        try:
            client = local_dynamodb_client()
            table = create_table(client)
            self.runtime = Runtime(
                definitions=DynamoDefinitionStore(client, table),
                clock=self.clock,
                operator=operator,
                content=local_content_store(),
                run_wait_seconds=run_wait_from_environment(os.environ),
                connection_secrets=local_connection_secrets(options.data),
                loopback_connections=True,
            )
            self.functions = project_functions(self.runtime)
            self.scheduler = LocalScheduler(self.clock, lambda work: self.functions.invoke("timer", work))
            # Under the manual clock the wait's backstop follows that clock too (see parley.local.executor).
            self.executor = LocalExecutor(self.functions.invoke, scheduler=self.scheduler if manual else None)
            self.scheduler.after_each = self.settle
            self.runtime.waits = self.executor
            self.runtime.workflows = self.executor
            self.runtime.scheduler = self.scheduler
            self.runtime.due_work.append(self.scheduler)
            self.reasoner = LocalReasoner(self.functions.invoke)
            self.runtime.reasoner = self.reasoner
            # A reasoning run works on its own thread; the call that started it waits for it without
            # holding the server (the condition releases the lock while it waits).
            self._released = threading.Condition(self.lock)
            self.runtime.pause = self._pause
            self.handler = build_handler(self.runtime)
            if options.data is not None:
                self._load_data(options.data, table, client)
        except BaseException:
            self.front.sock.close()
            if hasattr(self, "executor"):
                self.executor.close()
            if self.journal is not None:
                self.journal.close()
            raise

    def _load_data(self, folder: Path, table: str, client: Any) -> None:
        """Put back what the data folder kept, and keep every write from now on: journaled as it is
        made, on disk before the response that reports it (``parley.local.persistence``)."""
        from parley.local.aws import backfill_listing_indexes, moto_lock

        assert self.runtime.content is not None and self.journal is not None
        data = LocalData(
            folder,
            table=table,
            content=self.runtime.content,  # type: ignore[arg-type]
            scheduler=self.scheduler,
            clock_now=self.clock.now,
            lock=moto_lock(),
            journal=self.journal,
        )
        self.restored = data.load()
        backfill_listing_indexes(table)  # (items kept before the listings' indexes: issue 31)
        data.keep(client, self.clock if isinstance(self.clock, ManualClock) else None)
        self.data = data
        self.executor.before_crash = data.durable  # (the crash tests' fault: parley.local.executor)

    def start_background(self) -> None:
        """Once serving: with the real clock run timed work on time from now on (the manual clock waits
        for the advance call)."""
        if self.data is not None and self.restored is not None:
            threading.Thread(target=self._revive, name="parley-revive", daemon=True).start()
        else:
            self.revived.set()
        if not isinstance(self.clock, ManualClock):
            self.scheduler.start(self.lock)

    def _revive(self) -> None:
        """After a restart, first (requests wait for it: :attr:`revived`): every started workflow run's
        execution starts again (the old ones died with the process) and its machine meets the runs it
        called by their ids; a run whose request ended without the run taking it (a step cut off by the
        stop, or data an older version wrote) takes it now, as the backstop would (issue 26). Then, while
        requests are served, every open request's execution starts again, parked on a new token (a run a
        workflow called has none). An answer, an expiry or a cancel that comes first needs none: each
        writes the run's ending itself, and the expiries were kept with the scheduler's work."""
        from parley.ports.waiting import RunKey
        from parley.runs.service import run_service

        runs = run_service(self.runtime)
        workflows: Any = runs.kind("workflow")
        assert self.data is not None
        try:
            started = self.data.started_workflows()
            self._each(
                [(partial(workflows.rearm, p, r), r.run_id) for p, r in started], "run %s cannot go on"
            )
            untaken = self.data.ended_requests_of_started_runs()
            keys = [RunKey(p.org, p.playbook, r.run_id) for p, r in untaken]
            self._each([(partial(runs.settle_run, key, None), key.run_id) for key in keys], "run %s stays")
        finally:
            self.revived.set()
        waiting = self.data.open_requests()
        self._each(
            [(partial(self._wait_again, runs, p, r), r.run_id) for p, r in waiting], "run %s cannot wait"
        )

    @staticmethod
    def _wait_again(runs: Any, playbook: Any, request: Any) -> None:
        run = runs.store.get_run(playbook, request.run_id)
        runs.start_waiting(playbook, request, execution=run is None or run.parent is None)

    def _pause(self, seconds: float) -> None:
        """Wait, releasing the server's lock where this thread holds it (a request's call). A workflow's
        call of a reasoning run waits on an executor's worker thread, which holds no lock: it sleeps."""
        if self._released._is_owned():  # type: ignore[attr-defined]
            self._released.wait(seconds)
        else:
            time.sleep(seconds)

    def _each(self, revivals: list[tuple[Callable[[], Any], str]], failure: str) -> None:
        """Each revival under the server's lock (one that fails does not stop the others), then settle;
        none once the server stops (the next start revives what is left)."""
        for revive, run_id in revivals:
            try:
                with self.lock:
                    if self.stopping.is_set():
                        return
                    revive()
            except Exception:
                LOG.exception(failure, run_id)
        self.settle()

    def close(self) -> None:
        """Stop the timed work and the executions, then commit what they left and close the data folder."""
        with self.lock:  # (a revival or a request under way finishes first)
            self.stopping.set()
        self.scheduler.stop()
        self.executor.close()
        if self.data is not None:
            self.data.close()
        elif self.journal is not None:
            self.journal.close()

    @property
    def url(self) -> str:
        host, port = self.front.address
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}"

    def answer(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes, ip: str
    ) -> HttpReply:
        event = api_gateway_event(method, target, headers, body, source_ip=ip)
        self.revived.wait(REVIVAL_WAIT_SECONDS)  # (after a restart: the workflows run again first)
        if method == "GET" and _LISTING.match(event["path"]):
            return http_reply(self._list(event))
        with self.lock:
            try:
                if isinstance(self.clock, ManualClock) and is_clock_path(event["path"]):
                    result = answer_clock_route(
                        event, self.clock, self.runtime.due_work, self.runtime.operator
                    )
                elif is_mcp_path(event["path"]):  # the MCP front door: its own function, as on AWS
                    result = self.functions.invoke("mcp", event)
                else:
                    context = LambdaContext(aws_request_id=event["requestContext"]["requestId"])
                    result = self.handler(event, context)
            except Exception as exc:  # e.g. due work that failed: still an answer, never a dropped connection
                result = problem_result(internal_problem(exc, path=event["path"]))
            self.settle()
            self._run_work_due_now()
        if self.data is not None:  # every write the answer reports is on disk first (issue 27)
            try:
                self.data.durable()
            except JournalFailed as exc:  # not acknowledged: the client must not take it as kept
                result = problem_result(Problem("unavailable", f"{exc}; what this request did is not kept."))
        return http_reply(result)

    def _list(self, event: dict[str, Any]) -> dict[str, Any]:
        """A listing, outside the server's lock, by this thread's own handler (it writes nothing, so
        there is nothing to settle or keep before its answer)."""
        handler = getattr(self._listers, "handler", None)
        if handler is None:
            from parley.api.app import build_handler

            handler = self._listers.handler = build_handler(self.runtime)
        try:
            context = LambdaContext(aws_request_id=event["requestContext"]["requestId"])
            result: dict[str, Any] = handler(event, context)
        except Exception as exc:  # still an answer, never a dropped connection
            result = problem_result(internal_problem(exc, path=event["path"]))
        return result

    def _run_work_due_now(self) -> None:
        """Under the manual clock, work the request made due at once (a delivery's first attempt) runs
        before the answer, as it would at once on AWS; time still stands still. (The real clock's thread
        runs it on its own.)"""
        if not isinstance(self.clock, ManualClock):
            return
        try:
            for due in self.runtime.due_work:
                due.run_due(self.clock.now())
        except Exception as exc:  # logged where it failed; the request's own answer stands
            LOG.warning("work due at once failed: %s", exc)

    def settle(self) -> None:
        """Let the executions and the agent runs' next steps the request set off arrive (parked, or ended
        and settled) before answering."""
        from parley.local.executor import SettleTimeout

        reasoner = getattr(self, "reasoner", None)
        for round_ in range(2):  # a step may start an execution (its new wait): that one parks too
            try:
                self.executor.settle()
            except SettleTimeout as exc:  # the reply stands; the log says what is stuck
                LOG.warning("%s", exc)
            if reasoner is None or round_:
                return
            working = reasoner.settle(self.executor.settle_within)
            if working:
                LOG.warning("still working after %.0f s: %s", self.executor.settle_within, ", ".join(working))


@contextlib.contextmanager
def running(
    options: ServeOptions, operator: OperatorConfig, announce: Callable[[LocalServer], None] | None = None
) -> Iterator[LocalServer]:
    """A started server, with moto active for its life; stopped on exit. ``announce`` runs once the
    server listens and before it answers (so what it prints comes before any request's log line)."""
    from parley.local.executor import local_aws

    with local_aws():
        server = LocalServer(options, operator)
        if announce is not None:
            announce(server)
        server.front.start()
        server.start_background()
        try:
            yield server
        finally:
            server.front.stop()
            server.close()


def serve(options: ServeOptions) -> int:
    """Run the local server until SIGTERM or Ctrl-C; returns the exit code (0 on a clean stop)."""
    started = time.monotonic()
    try:
        if options.config is not None:
            operator = load_operator_config(options.config)
        else:
            operator = operator_config_from_environment()
    except ValueError as exc:
        print(f"parley serve: {exc}", file=sys.stderr)
        return 2
    if options.data is not None and options.data.exists() and not options.data.is_dir():
        print(
            f"parley serve: --data {options.data} is a file; name a folder, or pass --data none",
            file=sys.stderr,
        )
        return 2
    if not operator.principals:
        print(
            "parley serve: no principals are configured, so every call answers 401; "
            "pass --config FILE (see examples/operator.yaml)",
            file=sys.stderr,
        )
    lock = DataFolderLock(options.data) if options.data is not None else None
    if lock is not None:
        try:
            lock.acquire()
        except DataFolderInUse as exc:
            print(f"parley serve: {exc}", file=sys.stderr)
            return 1
        except OSError as exc:
            print(f"parley serve: cannot use the data folder {options.data}/: {exc}", file=sys.stderr)
            return 2
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        with contextlib.ExitStack() as stack:
            if lock is not None:
                stack.callback(lock.release)  # the last thing undone: after the data is saved
            config = str(options.config) if options.config else "none"

            def announce(server: LocalServer) -> None:
                if lock is not None:
                    lock.listening(*server.front.address)
                print(
                    f"Parley is serving {server.url} (clock: {options.clock}, config: {config}, "
                    f"data: {_data_words(options.data, server.restored)}, "
                    f"ready in {time.monotonic() - started:.1f} s). "
                    f"{_inbox_words(server.url, operator)} Ctrl-C stops it.",
                    flush=True,
                )

            try:
                stack.enter_context(running(options, operator, announce))
            except ValueError as exc:  # a data folder this version cannot read (parley.local.journal)
                print(f"parley serve: {exc}", file=sys.stderr)
                return 2
            except OSError as exc:
                print(
                    f"parley serve: {listen_failure(options.host, options.port, exc, _SERVE_HINT)}",
                    file=sys.stderr,
                )
                return 1
            while not stop.wait(0.2):
                pass
        print(_stopped_words(options.data), flush=True)  # once the data folder is closed
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def _data_words(folder: Path | None, restored: Restored | None) -> str:
    """Where the server keeps its data, for the start-up line."""
    if folder is None:
        return "none, forgotten when it stops"
    if restored is None:
        return f"{folder}/ (new)"
    return (
        f"{folder}/ ({restored.items:,} items, {restored.objects:,} objects, {restored.schedules:,} schedules"
        f" and {restored.journal_pages:,} journal pages restored in {restored.seconds:.2f} s;"
        " every write on disk before its answer)"
    )


#: The token of the example configurations (``examples/operator*.yaml``): the one token the start-up line
#: may print, since it is published in the repository; any other is a secret of whoever configured it.
EXAMPLE_TOKEN: Final = "dev-token"


def _inbox_words(url: str, operator: OperatorConfig) -> str:
    """Where the inbox is and how to sign in to it, for the start-up line (issue 29): the example token
    when a principal of the configuration has it (the one published in ``examples/``); otherwise no token
    is printed, only where to find one."""
    inbox = f"The inbox: {url}/inbox"
    with_tokens = [principal for principal in operator.principals if principal.token]
    example = next(
        (p for p in with_tokens if p.token is not None and p.token.get_secret_value() == EXAMPLE_TOKEN), None
    )
    if example is not None:
        return f"{inbox}, sign in with the token {EXAMPLE_TOKEN} (the principal {example.id})."
    if with_tokens:
        return f"{inbox}, sign in with a principal's token from the configuration."
    return f"{inbox} (no principal has a token, so nobody can sign in)."


def _stopped_words(folder: Path | None) -> str:
    """The last line of a clean stop."""
    if folder is None:
        return "Parley stopped; its data is forgotten (--data none)."
    return f"Parley stopped; everything is saved in {folder}/."
