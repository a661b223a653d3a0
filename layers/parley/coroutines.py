"""Running a coroutine to its end from synchronous code: the handlers are synchronous (Lambda, the local
server's threads), while the mcp package's client and server are asynchronous."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(work: Callable[[], Coroutine[Any, Any, T]], *, thread_name: str = "parley-sync") -> T:
    """Run ``work()`` on a private event loop: here, or on a thread of its own (``thread_name``) when this
    thread runs a loop already (a test under an async framework), and return its result or raise its
    error."""
    import asyncio
    import threading

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work())
    outcome: dict[str, Any] = {}

    def worker() -> None:
        try:
            outcome["value"] = asyncio.run(work())
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=worker, name=thread_name)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value
