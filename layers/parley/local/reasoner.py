"""The reasoner port on one machine: each reasoning run works in the project's ``reason`` handler
(``parley.executions.reason``), invoked as its own function on a thread of ``parley serve``, as the
api function invokes it asynchronously on AWS; the grant is checked as the stack makes it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from parley.infrastructure.functions import MAY_REASON
from parley.local.functions import require_grant
from parley.ports.waiting import RunKey

LOG = logging.getLogger("parley.local")


class LocalReasoner:
    def __init__(self, invoke: Callable[[str, Any], Any]) -> None:
        self._invoke = invoke
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def start(self, run: RunKey) -> None:
        require_grant(MAY_REASON, "invoke the reason function (lambda:InvokeFunction)")
        thread = threading.Thread(
            target=self._work, args=(run,), name=f"parley-reason-{run.run_id}", daemon=True
        )
        with self._lock:
            self._threads = [alive for alive in self._threads if alive.is_alive()]
            self._threads.append(thread)
        thread.start()

    def _work(self, run: RunKey) -> None:
        try:
            self._invoke("reason", {"run": run.as_json()})
        except Exception:  # the invocation's failure is logged, as Lambda would; the run stays started
            LOG.exception("the reason function failed for run %s", run.run_id)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the runs at work (tests, and a clean stop)."""
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)
