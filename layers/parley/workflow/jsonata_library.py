"""jsonata-python (``workflow-format.md``, "Expressions"), imported once, with this process's recursion
limit kept as it was.

The library raises ``sys.setrecursionlimit`` to 10,000 when it is imported ("similar to JavaScript"),
which would change every other parser's depth bound in the process (Liquid's checks of a template's
nesting among them) and let deep recursion in worker threads reach the C stack. Parley bounds JSONata's
depth itself (``parley.local.jsonata_eval``: a runaway recursion fails as a stack overflow, an
expression the document check cannot parse is a problem), so the limit goes back to what it was.
Every module of Parley imports jsonata through this one.
"""

from __future__ import annotations

import sys

_LIMIT = sys.getrecursionlimit()

import jsonata  # type: ignore[import-untyped]  # noqa: E402 - after the limit is read
from jsonata.functions import Functions  # type: ignore[import-untyped]  # noqa: E402
from jsonata.jexception import JException  # type: ignore[import-untyped]  # noqa: E402
from jsonata.utils import Utils  # type: ignore[import-untyped]  # noqa: E402

sys.setrecursionlimit(_LIMIT)

__all__ = ["Functions", "JException", "Utils", "jsonata"]
