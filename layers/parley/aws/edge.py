"""Translating botocore errors at the edge of the Step Functions and EventBridge Scheduler adapters.

Both ports are called at least once (Lambda and Scheduler retry), so an adapter names the error codes
that mean "already done" (``ignore``); overload and outages become ``503 unavailable``; anything else
propagates and becomes ``500 internal`` at the API.
"""

from __future__ import annotations

from collections.abc import Iterator, Set
from contextlib import contextmanager

from parley.errors import Problem


@contextmanager
def translated(service: str, action: str, *, ignore: Set[str], unavailable: Set[str]) -> Iterator[None]:
    """Run an AWS call of ``service`` ("Step Functions", "The scheduler") that does ``action``."""
    from botocore.exceptions import ClientError, ConnectionError, HTTPClientError

    try:
        yield
    except ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if code in ignore:
            return
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if code in unavailable or (isinstance(status, int) and status >= 500):
            raise Problem(
                "unavailable", f"{service} is busy: could not {action}; try again shortly."
            ) from exc
        raise
    except (ConnectionError, HTTPClientError) as exc:  # timeouts and refused connections included
        raise Problem("unavailable", f"{service} is out of reach: could not {action}.") from exc
