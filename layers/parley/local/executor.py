"""Waiting runs on one machine: moto's Step Functions executor runs the state machine of
``parley.infrastructure.state_machine`` (the ASL ``cdk deploy`` ships), its Lambda tasks routed to the
project's ``wait``, ``settle`` and ``reason`` handlers in process (``parley.local.functions``).

:class:`LocalExecutor` is the local ``Waits``: the real ``StepFunctionsWaits``
(``parley.aws.stepfunctions``) on a moto client, plus the bookkeeping the local server needs to answer
only once the effects of a call have happened (``http-api.md``, "Local server": the advance call
"returns once all the work that fell due … and its effects has run"):

- every execution it starts is watched until its wait handler has run (the token is kept, or the run
  settled by then);
- every execution it signals (``succeed``/``fail``, by any caller, the wait handler included) is watched
  until it leaves ``RUNNING``, i.e. until the settle step has written the run's ending, or until it has
  parked again: a reasoning run resumed after its wait (the ``reason`` function) may open another
  request, and its execution loops back to the wait, whose handler then keeps a new token.

Like IAM on AWS, it refuses a start or a SendTask call from a function the stack does not grant it to
(``parley.local.functions.require_grant``).

:meth:`LocalExecutor.settle` waits for both, at most ``settle_within`` seconds. It holds no lock of the
server while it waits, and the handlers it waits for take none: they run on moto's threads and use the
table through its own per-request lock only.

The backstop: on AWS the wait task's own timeout (``expires`` plus a minute) ends a wait whose expiry
schedule was lost. moto's timeouts run in real time, which under the manual clock would end waits while
the clock stands still; so with a manual clock the executor gives moto the longest timeout and puts the
backstop in the local scheduler instead, which times the task out (``States.Timeout``) at the clock's
time, as AWS would. Each wait has its own: a later ``start`` of the run (the reason function starts the
run's execution for each request it opens; on AWS the start then finds the execution exists) and a
resumption that waits again (``{"outcome": "waiting", "timeout_seconds": N}``, whose ``N`` moto is not
given either) schedule it again, from the clock's now.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from parley.infrastructure.functions import MAY_END_WAITS, MAY_START_RUNS
from parley.infrastructure.state_machine import (
    MAX_TIMEOUT_SECONDS,
    WAITING_OUTCOME,
    state_machine_json,
)
from parley.local.aws import LOCAL_REGION, local_session
from parley.local.functions import LOCAL_ACCOUNT, require_grant, routed_lambda_invocations
from parley.ports.waiting import RunKey

if TYPE_CHECKING:
    from moto.core.config import DefaultConfig

    from parley.aws.stepfunctions import StepFunctionsWaits
    from parley.local.scheduler import LocalScheduler

#: moto in process with its ASL executor on, and Lambda without Docker (so invocations can be routed).
MOTO_CONFIG: Final[DefaultConfig] = {
    "stepfunctions": {"execute_state_machine": True},
    "lambda": {"use_docker": False},
}
#: moto's executor logs every caught task failure (an expiry, a cancel) at ERROR with its whole state.
QUIET_LOGGERS: Final = ("moto.stepfunctions.parser",)
LOCAL_ROLE_ARN: Final = f"arn:aws:iam::{LOCAL_ACCOUNT}:role/parley-local-runs"
#: The error of a wait task that ran past its timeout (what AWS's Catch sees).
TIMEOUT_ERROR: Final = "States.Timeout"
#: Creating the state machine loads moto's ASL parser (about 2 s): done in the background (``prepare``).
READY_WITHIN: Final = 60.0
SETTLE_WITHIN: Final = 10.0
RELEASE_WITHIN: Final = 2.0
_POLL_SECONDS: Final = 0.005


@contextlib.contextmanager
def local_aws() -> Iterator[None]:
    """moto in process for the block: DynamoDB, Step Functions executing ASL, Lambda without Docker."""
    from moto import mock_aws

    loggers = [logging.getLogger(name) for name in QUIET_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        with mock_aws(config=MOTO_CONFIG):
            yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


class SettleTimeout(RuntimeError):
    """Executions did not reach where they were going within the bound."""


@dataclass
class _Execution:
    """What the executor knows of one run's execution; ``parked`` and ``ending`` are of its current
    wait (its ``token``), and start over when the execution waits again."""

    run: RunKey
    token: str | None = None
    #: The wait handler has run: the execution is parked on its token (or on its way to settle).
    parked: bool = False
    #: The wait is over (a SendTask call on its token, or the wait handler failed): it will leave
    #: RUNNING, or wait again (a new token).
    ending: bool = False
    #: How many waits it has begun (the wait handler's calls).
    waits: int = 0


class LocalExecutor:
    """The local ``Waits``. ``invoke(name, event)`` runs the function ``wait``, ``settle`` or ``reason``.

    Use under :func:`local_aws`; :meth:`close` when done. ``scheduler`` (the manual clock's) takes the
    backstop; without it, moto's own real-time timeout is the backstop.
    """

    def __init__(
        self,
        invoke: Callable[[str, Any], Any],
        *,
        scheduler: LocalScheduler | None = None,
        settle_within: float = SETTLE_WITHIN,
    ) -> None:
        self._invoke = invoke
        self._scheduler = scheduler
        self.settle_within = settle_within
        suffix = uuid.uuid4().hex[:8]
        self.state_machine_name = f"parley-runs-{suffix}"
        self.wait_function = f"parley-wait-{suffix}"
        self.settle_function = f"parley-settle-{suffix}"
        self.reason_function = f"parley-reason-{suffix}"
        self._client: Any = None  # made with the state machine, in the background
        self._changed = threading.Condition()
        self._executions: dict[str, _Execution] = {}
        self._tokens: dict[str, str] = {}
        self._watched: set[str] = set()
        self._adapter: StepFunctionsWaits | None = None
        self._setup_error: BaseException | None = None
        self._ready = threading.Event()
        self._exit = contextlib.ExitStack()
        self._exit.enter_context(
            routed_lambda_invocations(
                {
                    self.wait_function: self._run_wait,
                    self.settle_function: self._run_settle,
                    self.reason_function: self._run_reason,
                }
            )
        )
        self._setup = threading.Thread(
            target=self._create_state_machine, name="parley-executor-setup", daemon=True
        )
        self._setup_started = False

    def prepare(self) -> None:
        """Create the state machine in the background now (else on the first start): loading moto's
        ASL parser takes about 2 s, which ``parley serve`` spends after it says it is ready."""
        with self._changed:
            if self._setup_started:
                return
            self._setup_started = True
        self._setup.start()

    # -- setup -----------------------------------------------------------------------------------------

    @staticmethod
    def function_arn(name: str) -> str:
        return f"arn:aws:lambda:{LOCAL_REGION}:{LOCAL_ACCOUNT}:function:{name}"

    def _create_state_machine(self) -> None:
        from parley.aws.stepfunctions import StepFunctionsWaits

        try:
            self._client = local_session().client("stepfunctions")
            definition = state_machine_json(
                self.function_arn(self.wait_function),
                self.function_arn(self.settle_function),
                self.function_arn(self.reason_function),
            )
            created = self._client.create_state_machine(
                name=self.state_machine_name, definition=definition, roleArn=LOCAL_ROLE_ARN, type="STANDARD"
            )
            self._adapter = StepFunctionsWaits(self._client, created["stateMachineArn"])
        except BaseException as exc:  # told to whoever waits for the state machine
            self._setup_error = exc
        finally:
            self._ready.set()

    @property
    def client(self) -> Any:
        """The moto Step Functions client (once the state machine exists)."""
        self.adapter  # noqa: B018 - waits for the setup
        return self._client

    @property
    def adapter(self) -> StepFunctionsWaits:
        """The Step Functions adapter, once the state machine exists (waits for it)."""
        self.prepare()
        if not self._ready.wait(READY_WITHIN):
            raise SettleTimeout(f"the local state machine was not created within {READY_WITHIN:.0f} s")
        if self._adapter is None:
            raise RuntimeError("the local state machine could not be created") from self._setup_error
        return self._adapter

    # -- the Waits port --------------------------------------------------------------------------------

    def start(self, run: RunKey, *, timeout_seconds: int) -> None:
        """Start the run's execution; a second start of a run is harmless (on AWS
        ``ExecutionAlreadyExists``, which the adapter ignores), and under the manual clock schedules the
        backstop again, ``timeout_seconds`` from now, while the execution runs."""
        require_grant(MAY_START_RUNS, "start a run's execution (states:StartExecution)")
        adapter = self.adapter
        arn = adapter.execution_arn(run)
        with self._changed:
            known = arn in self._executions
            if not known:
                self._executions[arn] = _Execution(run)
            # Watched until it parks (again) or ends; one that did either by now has arrived at once.
            self._watched.add(arn)
            self._changed.notify_all()
        if self._scheduler is None:
            adapter.start(run, timeout_seconds=timeout_seconds)
            return
        adapter.start(run, timeout_seconds=MAX_TIMEOUT_SECONDS)
        if known and self.status(arn) != "RUNNING":
            return  # it ended: no wait left to back up
        self._schedule_backstop(arn, run, timeout_seconds)

    def _schedule_backstop(self, arn: str, run: RunKey, timeout_seconds: float) -> None:
        """The manual clock's backstop of the execution's (next) wait, replacing the one pending."""
        assert self._scheduler is not None
        name = self._backstop_name(run)
        self._scheduler.forget(name)
        self._scheduler.call_later(name, timeout_seconds, lambda: self._time_out(arn))

    def succeed(self, token: str, output: Mapping[str, Any]) -> None:
        require_grant(MAY_END_WAITS, "end a wait (states:SendTaskSuccess)")
        self.adapter.succeed(token, output)
        self._ending(token)

    def fail(self, token: str, error: str, cause: str) -> None:
        require_grant(MAY_END_WAITS, "end a wait (states:SendTaskFailure)")
        self.adapter.fail(token, error, cause)
        self._ending(token)

    def _ending(self, token: str) -> None:
        with self._changed:
            arn = self._tokens.get(token)
            if arn is None:
                return
            execution = self._executions[arn]
            # A spent token (the execution has begun a later wait by now) ends nothing: its execution is
            # only watched until that wait has parked.
            if execution.token == token:
                execution.ending = True
            self._watched.add(arn)
            self._changed.notify_all()

    def _time_out(self, arn: str) -> None:
        """The backstop under the manual clock: the wait task's timeout, at the clock's time. A
        SendTaskFailure cannot name ``States.Timeout`` (no caller may use the ``States.`` prefix), so the
        task's callback is told it timed out, which moto reports as ``States.Timeout`` as AWS would."""
        from moto.stepfunctions.parser.asl.eval.callback.callback import CallbackOutcomeTimedOut

        with self._changed:
            token = self._executions[arn].token
        if token is None or self.status(arn) != "RUNNING":
            return
        for endpoint in _callback_endpoints(arn):
            if endpoint.callback_id == token:
                endpoint.notify(CallbackOutcomeTimedOut(callback_id=token))
                self._ending(token)

    # -- the routed Lambda functions ---------------------------------------------------------------------

    def _run_wait(self, event: Any) -> Any:
        run = RunKey.from_json(event["run"])
        arn = self.adapter.execution_arn(run)
        token = str(event["token"])
        with self._changed:
            execution = self._executions.setdefault(arn, _Execution(run))
            # A new wait (the first, or one after a resumption): its own token, not parked, not ending.
            # The tokens of earlier waits stay mapped, so that a late signal on one finds the execution.
            execution.token = token
            execution.parked = False
            execution.ending = False
            execution.waits += 1
            self._tokens[token] = arn
        failed = True
        try:
            result = self._invoke("wait", event)
            failed = False
            return result
        finally:
            with self._changed:
                execution.parked = True
                execution.ending = execution.ending or failed  # the Catch takes it to settle
                self._changed.notify_all()

    def _run_settle(self, event: Any) -> Any:
        return self._invoke("settle", event)

    def _run_reason(self, event: Any) -> Any:
        """The resumption: the reason function, synchronously. Under the manual clock a step that waits
        again gets its backstop in the local scheduler, and moto the longest timeout (as ``start``)."""
        result = self._invoke("reason", event)
        if self._scheduler is None or not _waits_again(result):
            return result
        run = RunKey.from_json(event["run"])
        self._schedule_backstop(self.adapter.execution_arn(run), run, float(result["timeout_seconds"]))
        return {**result, "timeout_seconds": MAX_TIMEOUT_SECONDS}

    # -- settling ---------------------------------------------------------------------------------------

    def status(self, execution_arn: str) -> str:
        if self._client is None:
            return "UNKNOWN"
        try:
            return str(self._client.describe_execution(executionArn=execution_arn)["status"])
        except Exception:  # not (or no longer) known to moto: nothing to wait for
            return "UNKNOWN"

    def settle(self, timeout: float | None = None) -> None:
        """Return once every started execution has parked and every signalled one has ended or parked
        again (on a new token: a resumed run that opened another request).

        Raises :class:`SettleTimeout` after ``timeout`` (default ``settle_within``) seconds; what did not
        settle by then is no longer waited for (a settle step that keeps failing retries for an hour).
        """
        deadline = time.monotonic() + (self.settle_within if timeout is None else timeout)
        while True:
            with self._changed:
                watched = {arn: self._executions[arn] for arn in self._watched}
            if not watched:
                return
            done = {arn for arn, execution in watched.items() if self._arrived(arn, execution)}
            with self._changed:
                self._watched -= done
                if not self._watched:
                    return
                if time.monotonic() >= deadline:
                    stuck = sorted(self._watched)
                    self._watched.clear()
                    raise SettleTimeout(f"runs' executions did not settle in time: {', '.join(stuck)}")
                self._changed.wait(_POLL_SECONDS)

    def _arrived(self, arn: str, execution: _Execution) -> bool:
        with self._changed:
            parked, ending = execution.parked, execution.ending
        if parked and not ending:
            return True
        if self.status(arn) == "RUNNING":
            return False
        if self._scheduler is not None:  # ended: its backstop has nothing left to do
            self._scheduler.forget(self._backstop_name(execution.run))
        return True

    @staticmethod
    def _backstop_name(run: RunKey) -> str:
        return f"backstop-{run.execution_name}"

    # -- closing ----------------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop routing this executor's functions and release the threads of executions still waiting."""
        self._exit.close()
        if self._setup_started:
            self._setup.join(READY_WITHIN)
        with self._changed:
            known = list(self._executions)
        waiting = [arn for arn in known if self.status(arn) == "RUNNING"]
        for arn in waiting:
            _release(self._client, arn)
        # Their threads end on their own: wait a little, so none touches moto after it is gone.
        deadline = time.monotonic() + RELEASE_WITHIN
        while waiting and time.monotonic() < deadline:
            waiting = [arn for arn in waiting if self.status(arn) == "RUNNING"]
            time.sleep(_POLL_SECONDS)


def _waits_again(result: Any) -> bool:
    """The reason function's answer says the run waits again, for ``timeout_seconds``."""
    return (
        isinstance(result, Mapping)
        and result.get("outcome") == WAITING_OUTCOME
        and isinstance(result.get("timeout_seconds"), int | float)
        and not isinstance(result.get("timeout_seconds"), bool)
    )


def _callback_endpoints(execution_arn: str) -> list[Any]:
    """The task-token callbacks an execution waits on, from moto's executor (no API shows them)."""
    from moto.stepfunctions.parser.models import stepfunctions_parser_backends

    backend = stepfunctions_parser_backends[LOCAL_ACCOUNT][LOCAL_REGION]
    for execution in backend._get_executions():
        if execution.exec_arn == execution_arn and execution.exec_worker is not None:
            return list(execution.exec_worker.env.callback_pool_manager._pool.values())
    return []


def _release(client: Any, execution_arn: str) -> None:
    """Stop a waiting execution and wake its threads (moto's stop leaves them waiting for the token)."""
    with contextlib.suppress(Exception):
        client.stop_execution(executionArn=execution_arn)
    with contextlib.suppress(Exception):
        for endpoint in _callback_endpoints(execution_arn):
            endpoint.interrupt_all()
