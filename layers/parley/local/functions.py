"""The project's Lambda functions, run in process: what the local executor (the state machine's
interpreter) and the local scheduler invoke instead of deployed functions.

- :class:`LocalFunctions` builds each handler on its first invocation (``build_wait_handler(runtime)``
  and the like, from ``parley.executions.entry``) and calls it with a Lambda-like context.
- :func:`current_function` names the function whose invocation the calling thread is in (``api``
  outside any: the HTTP front), and :func:`require_grant` refuses a port operation the CDK stack does
  not grant that function (``parley.infrastructure.functions``: ``MAY_*``), as IAM would on AWS.
- :func:`routed_lambda_invocations` points moto's simple Lambda backend (``"lambda": {"use_docker":
  False}``), which would echo each payload, at handlers of ours: the result goes back as the function's
  JSON payload, and an exception as a Lambda function error (``errorType``, ``errorMessage``), which the
  state machine's Retry and Catch see as on AWS.
"""

from __future__ import annotations

import json
import logging
import threading
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

from parley.errors import ParleyError

#: A Lambda handler: ``(event, context) -> result``.
Handler = Callable[[Any, Any], Any]
#: What the executor calls for one function: the event in, the result out (exceptions are errors).
Invoke = Callable[[Any], Any]

LOCAL_ACCOUNT: Final = "123456789012"  # moto's default account: what its executor calls with
LOG: Final = logging.getLogger("parley.local")
#: The function a thread works for when it is in no invocation: the HTTP front runs the api function.
API_FUNCTION: Final = "api"

_invocation = threading.local()


def current_function() -> str:
    """The function whose invocation this thread is in (``api`` outside any)."""
    name: str = getattr(_invocation, "function", API_FUNCTION)
    return name


class AccessDenied(ParleyError, PermissionError):
    """A function used a port operation its role is not granted (on AWS: AccessDeniedException)."""


def require_grant(granted: frozenset[str], operation: str) -> None:
    """Refuse ``operation`` unless the current function is among those ``granted`` it."""
    function = current_function()
    if function not in granted:
        allowed = ", ".join(sorted(granted))
        raise AccessDenied(
            f"the {function} function may not {operation}: the stack grants it to {allowed} only"
        )


@dataclass
class LambdaContext:
    """The parts of a Lambda context object the handlers (and powertools) may read."""

    aws_request_id: str
    function_name: str = "parley-api-local"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = f"arn:aws:lambda:us-east-1:{LOCAL_ACCOUNT}:function:parley-api-local"
    log_group_name: str = "/aws/lambda/parley-api-local"
    log_stream_name: str = "local"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000

    @classmethod
    def for_function(cls, name: str) -> LambdaContext:
        function = f"parley-{name}-local"
        return cls(
            aws_request_id=str(uuid.uuid4()),
            function_name=function,
            invoked_function_arn=f"arn:aws:lambda:us-east-1:{LOCAL_ACCOUNT}:function:{function}",
            log_group_name=f"/aws/lambda/{function}",
        )


class LocalFunctions:
    """Handlers by function name (``wait``, ``settle``, ``timer``, ``reason``, ``workflow``, ``mcp``),
    each built on first use."""

    def __init__(self, factories: Mapping[str, Callable[[], Handler]]) -> None:
        self.after_invoke: Callable[[], None] = lambda: None
        self._factories = dict(factories)
        self._handlers: dict[str, Handler] = {}
        self._lock = threading.Lock()

    def handler(self, name: str) -> Handler:
        with self._lock:
            if name not in self._handlers:
                self._handlers[name] = self._factories[name]()
            return self._handlers[name]

    def invoke(self, name: str, event: Any) -> Any:
        """Run function ``name`` on ``event``, as one Lambda invocation (in the calling thread); then
        ``after_invoke`` (the local data's "something may have changed")."""
        handler = self.handler(name)
        outer = getattr(_invocation, "function", None)
        _invocation.function = name
        try:
            return handler(event, LambdaContext.for_function(name))
        finally:
            if outer is None:
                del _invocation.function
            else:
                _invocation.function = outer
            self.after_invoke()


def project_functions(runtime: Any) -> LocalFunctions:
    """The project's functions around ``runtime`` (``parley.executions.entry``, imported when first used)."""

    def factory(module: str, builder: str) -> Callable[[], Handler]:
        def build() -> Handler:
            import importlib

            handler: Handler = getattr(importlib.import_module(module), builder)(runtime)
            return handler

        return build

    entry = "parley.executions.entry"
    return LocalFunctions(
        {
            "wait": factory(entry, "build_wait_handler"),
            "settle": factory(entry, "build_settle_handler"),
            "timer": factory(entry, "build_timer_handler"),
            "reason": factory("parley.executions.reason", "build_reason_handler"),
            "workflow": factory("parley.executions.workflow", "build_workflow_handler"),
            # The MCP front door (the local server's /mcp paths): its grants are checked as its own.
            "mcp": factory("parley.front.handler", "build_mcp_handler"),
        }
    )


def function_name_of(name_or_arn: str) -> str:
    """``arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]`` → ``<name>``."""
    if name_or_arn.startswith("arn:"):
        parts = name_or_arn.split(":")
        return parts[6] if len(parts) > 6 else name_or_arn
    return name_or_arn.split(":", 1)[0]


class _Routes:
    """The patched ``LambdaSimpleBackend.invoke``: routes by function name, else moto's own echo."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.routes: dict[str, Invoke] = {}
        self.patch: Any = None
        self.original: Callable[..., bytes | str | None] | None = None

    def invoke(
        self, backend: Any, function_name: str, qualifier: Any, body: Any, headers: Any, response_headers: Any
    ) -> bytes | str | None:
        with self.lock:
            route = self.routes.get(function_name_of(function_name))
            original = self.original
        if route is None:
            if original is None:  # pragma: no cover - only while the patch is being removed
                return None
            result: bytes | str | None = original(
                backend, function_name, qualifier, body, headers, response_headers
            )
            return result
        try:
            event = json.loads(body) if body else {}
            return json.dumps(route(event)).encode("utf-8")
        except Exception as exc:  # the function failed: a Lambda function error, as on AWS
            LOG.exception("local function %s failed", function_name_of(function_name))
            response_headers["x-amz-function-error"] = "Unhandled"
            error = {
                "errorType": type(exc).__name__,
                "errorMessage": str(exc),
                "stackTrace": traceback.format_tb(exc.__traceback__),
            }
            return json.dumps(error).encode("utf-8")


_ROUTES: Final = _Routes()


@contextmanager
def routed_lambda_invocations(routes: Mapping[str, Invoke]) -> Iterator[None]:
    """While open, moto's Lambda invocations of the functions named in ``routes`` run those callables.

    Names must be unique among the open routings (each local runtime suffixes its own). The patch of
    moto's backend is shared by every open routing and removed with the last.
    """
    from unittest import mock

    from moto.awslambda_simple.models import LambdaSimpleBackend

    def patched(
        backend: Any, function_name: str, qualifier: Any, body: Any, headers: Any, response_headers: Any
    ) -> bytes | str | None:
        return _ROUTES.invoke(backend, function_name, qualifier, body, headers, response_headers)

    with _ROUTES.lock:
        taken = set(routes) & set(_ROUTES.routes)
        if taken:
            raise ValueError(f"functions already routed: {sorted(taken)}")
        if _ROUTES.patch is None:
            _ROUTES.original = LambdaSimpleBackend.invoke
            _ROUTES.patch = mock.patch.object(LambdaSimpleBackend, "invoke", patched)
            _ROUTES.patch.start()
        _ROUTES.routes.update(routes)
    try:
        yield
    finally:
        with _ROUTES.lock:
            for name in routes:
                _ROUTES.routes.pop(name, None)
            if not _ROUTES.routes and _ROUTES.patch is not None:
                _ROUTES.patch.stop()
                _ROUTES.patch = _ROUTES.original = None
