"""One deployed function, as Lambda runs it: a process of its own, with the environment the template
gives it, importing ``functions/<name>/handler.py`` and handing it one event at a time (issue 28).

The process reaches AWS (moto's server) over HTTP through ``AWS_ENDPOINT_URL``, and records every
botocore call its code makes, before the call is sent (``before-parameter-build``, registered on
boto3's default session before the handler is imported, so every client the code makes has it): the
service, the operation and the parameters as the code passed them. Each event's answer carries the
calls made while it was handled, so they are attributed to this function.

Time passes as the harness says: each event carries a clock offset, added to the runtime's clock
(``parley.clock.SystemClock``) and to the scheduler adapter's, so that an expiry two days away falls due
without waiting (nothing else of the function is changed).

Run as a script it is the child (the protocol: a JSON line per event on standard input; the answer, a
JSON line on the file descriptor named by its argument, so that whatever the handler prints goes to its
log instead); imported, :class:`FunctionProcess` starts and drives one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[2]


def _plain(value: Any, depth: int = 0) -> Any:
    """Parameters as JSON: bytes as text (a payload is JSON), bodies past 64 KiB shortened."""
    if isinstance(value, (bytes, bytearray)):
        text = bytes(value).decode("utf-8", errors="replace")
        return text if len(text) <= 65536 else f"<{len(text)} bytes>"
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "read"):  # a streamed body
        return "<stream>"
    return str(value)


def _child(answer_fd: int) -> None:  # pragma: no cover - runs in the child process
    import datetime as _datetime

    import boto3

    calls: list[dict[str, Any]] = []
    lock = threading.Lock()

    def record(params: Any, model: Any, **_: Any) -> None:
        call = {
            "service": model.service_model.service_name,
            "operation": model.name,
            "params": _plain(params),
        }
        with lock:
            calls.append(call)

    boto3.setup_default_session()
    assert boto3.DEFAULT_SESSION is not None
    boto3.DEFAULT_SESSION.events.register("before-parameter-build", record)

    # Time passing, as the harness says (an expiry falls due): the runtime's clock moved forward.
    offset = [0.0]
    import parley.clock as clock

    original_now = clock.SystemClock.now

    def moved_now(self: Any) -> Any:
        return original_now(self) + _datetime.timedelta(seconds=offset[0])

    clock.SystemClock.now = moved_now  # type: ignore[method-assign]
    # The scheduler adapter's own clock (is the work due now, within the queue's 15 minutes, or later?).
    import parley.aws.eventbridge as eventbridge

    original_init = eventbridge.EventBridgeScheduler.__init__

    def init_with_clock(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("now", clock.SystemClock().now)
        original_init(self, *args, **kwargs)

    eventbridge.EventBridgeScheduler.__init__ = init_with_clock  # type: ignore[method-assign]

    sys.path.insert(0, os.getcwd())
    import handler  # type: ignore[import-not-found]

    class Context:
        def __init__(self, name: str) -> None:
            self.function_name = name
            self.function_version = "$LATEST"
            self.aws_request_id = "harness"
            self.invoked_function_arn = os.environ.get("HARNESS_FUNCTION_ARN", "")
            self.memory_limit_in_mb = int(os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512"))
            self.log_group_name = f"/aws/lambda/{name}"
            self.log_stream_name = "harness"

        def get_remaining_time_in_millis(self) -> int:
            return 60_000

    answers = os.fdopen(answer_fd, "w", encoding="utf-8")
    for line in sys.stdin:
        message = json.loads(line)
        offset[0] = float(message.get("clock_offset", 0.0))
        with lock:
            calls.clear()
        answer: dict[str, Any]
        try:
            result = handler.handler(
                message["event"], Context(os.environ.get("AWS_LAMBDA_FUNCTION_NAME", ""))
            )
            answer = {"ok": True, "result": _plain(result)}
        except Exception as exc:  # the function failed: Lambda reports the error
            import traceback

            traceback.print_exc()
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        with lock:
            answer["calls"] = list(calls)
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


class FunctionProcess:
    """A function's process (started on the first event); :meth:`invoke` hands it one event."""

    def __init__(self, name: str, environment: dict[str, str], log_path: Path) -> None:
        self.name = name
        self.environment = environment
        self.log_path = log_path
        self._process: subprocess.Popen[str] | None = None
        self._answers: IO[str] | None = None
        self._lock = threading.Lock()

    def _start(self) -> None:
        read_fd, write_fd = os.pipe()
        with self.log_path.open("a", encoding="utf-8") as log:  # the child keeps its own descriptor
            self._process = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), str(write_fd)],
                cwd=str(ROOT / "functions" / self.name),
                env=self.environment,
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=log,
                text=True,
                pass_fds=(write_fd,),
            )
        os.close(write_fd)
        self._answers = os.fdopen(read_fd, "r", encoding="utf-8")

    def invoke(self, event: Any, *, clock_offset: float = 0.0) -> dict[str, Any]:
        """The handler's answer to ``event``: ``ok``, ``result`` or ``error``, and the ``calls`` it made."""
        with self._lock:
            if self._process is None:
                self._start()
            assert self._process is not None and self._process.stdin is not None and self._answers is not None
            self._process.stdin.write(json.dumps({"event": event, "clock_offset": clock_offset}) + "\n")
            self._process.stdin.flush()
            line = self._answers.readline()
            if not line:
                raise RuntimeError(f"the {self.name} function's process died:\n{self.log_tail()}")
            answer: dict[str, Any] = json.loads(line)
            return answer

    def log_tail(self, characters: int = 4000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8")[-characters:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self._process is None:
            return
        assert self._process.stdin is not None
        self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._answers is not None:
            self._answers.close()


if __name__ == "__main__":  # pragma: no cover - the child
    _child(int(sys.argv[1]))
