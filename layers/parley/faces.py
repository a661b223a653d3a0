"""A package's face, loaded lazily (PEP 562; issue 30, "One face per package").

A package's ``__init__`` says in its docstring what the package offers and exports it (``__all__``), as
temporalio's ``worker/__init__.py`` does. Importing every module a face names would load, with the first
import of any module of the package, what a function's cold start does not need (Liquid, JSON Schema,
pydantic, the MCP package; ``tests/unit/layout/test_cold_imports.py``). So a face names each export's
module here and imports it on the first use of the name: ``from parley.runs import RunService`` loads
``parley.runs.service`` then, and ``import parley.runs.events`` loads nothing more than before. Type
checkers read the same names from the face's ``if TYPE_CHECKING:`` imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_face(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the package ``package`` whose face exports, from each of
    its modules (``exports``: module name relative to the package -> names), those names."""
    where = {name: f"{package}.{module}" for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # the next use finds it without this function
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__


__all__ = ["lazy_face"]
