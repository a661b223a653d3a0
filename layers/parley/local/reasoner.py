"""The reasoner port on one machine: each reasoning run works in the project's ``reason`` handler
(``parley.executions.reason``), invoked as its own function on a thread of ``parley serve``, as the
api function invokes it asynchronously on AWS; the grant is checked as the stack makes it.

An agent run's next step after its request ended (``resume``) is one such invocation too. The server
lets those under way arrive before it answers the request that set them off (:meth:`LocalReasoner.settle`),
as it lets executions arrive: so that an answer's ``200`` is followed by a run that has taken it, as a
test against ``--clock manual`` expects, and as the run's execution's resumption step used to give."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from parley.infrastructure.functions import MAY_REASON
from parley.local.functions import require_grant
from parley.ports.waiting import RunKey

LOG = logging.getLogger("parley.local")


class LocalReasoner:
    def __init__(self, invoke: Callable[[str, Any], Any]) -> None:
        self._invoke = invoke
        self._resuming: set[threading.Thread] = set()
        self._lock = threading.Lock()

    def start(self, run: RunKey, *, resume: bool = False) -> None:
        require_grant(MAY_REASON, "invoke the reason function (lambda:InvokeFunction)")
        event: dict[str, Any] = {"run": run.as_json()}
        if resume:
            event["resume"] = True
        # A daemon thread: stopping the server does not wait for a model call (as an invocation that is
        # cut off, the run's backstop ends it).
        thread = threading.Thread(
            target=self._work, args=(run, event), name=f"parley-reason-{run.run_id}", daemon=True
        )
        if resume:
            with self._lock:
                self._resuming.add(thread)
        thread.start()

    def settle(self, within: float) -> list[str]:
        """Wait (at most ``within`` seconds in all) for the resumptions under way; the names of those
        still working after it."""
        deadline = time.monotonic() + within
        with self._lock:
            threads = list(self._resuming)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            return sorted(t.name for t in self._resuming)

    def _work(self, run: RunKey, event: dict[str, Any]) -> None:
        try:
            self._invoke("reason", event)
        except Exception:  # the invocation's failure is logged, as Lambda would; the run stays started
            LOG.exception("the reason function failed for run %s", run.run_id)
        finally:
            with self._lock:
                self._resuming.discard(threading.current_thread())
