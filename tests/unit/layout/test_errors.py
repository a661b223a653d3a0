"""One root for the runtime's errors (issue 30, ``parley.errors``): every exception class of the package
derives from :class:`~parley.errors.ParleyError`, and the errors collected in ``parley.errors`` are the
same classes under the names of the modules that raised them before.

Left out: private classes (``_Stop``: a module's own way out of a loop, never seen outside it), the
template engine's own errors (they derive from Liquid's, which its machinery catches), and the client
(``parley.client``), which imports nothing of the runtime."""

from __future__ import annotations

import ast
import builtins
import importlib
from pathlib import Path

import pytest

import parley
from parley.errors import ParleyError

PACKAGE = Path(parley.__file__).parent
#: Packages whose exceptions keep a root of their own.
OWN_ROOT = ("client/",)
#: The names the errors had before they were collected in ``parley.errors``.
FORMER_PLACES = {
    "parley.dynamo": ("StoreConflict", "StoreContention"),
    "parley.ports.content": ("ContentMissing",),
    "parley.ports.tools": ("ToolNotOffered", "ToolServerFailure"),
    "parley.tools.servers": ("SecretUnavailable",),
    "parley.templates.render": ("RenderFailure",),
    "parley.config": ("OperatorConfigError",),
}


def _builtin_exception(name: str) -> bool:
    value = getattr(builtins, name, None)
    return isinstance(value, type) and issubclass(value, BaseException)


def exceptions_without_the_root() -> list[str]:
    """``file:class`` for each public class that derives from a built-in exception but not the root."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = str(path.relative_to(PACKAGE))
        if relative.startswith(OWN_ROOT):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_") or node.name == "ParleyError":
                continue
            bases = [ast.unparse(base) for base in node.bases]
            if any(_builtin_exception(base) for base in bases) and "ParleyError" not in bases:
                found.append(f"{relative}:{node.name}")
    return found


def test_every_exception_of_the_runtime_derives_from_the_root() -> None:
    assert exceptions_without_the_root() == []


@pytest.mark.parametrize("module", sorted(FORMER_PLACES))
def test_the_collected_errors_keep_their_former_names(module: str) -> None:
    import parley.errors

    loaded = importlib.import_module(module)
    for name in FORMER_PLACES[module]:
        assert getattr(loaded, name) is getattr(parley.errors, name)
        assert issubclass(getattr(loaded, name), ParleyError)


def test_an_error_that_was_a_value_error_still_is() -> None:
    from parley.errors import ContentMissing, OperatorConfigError

    assert issubclass(OperatorConfigError, ValueError)
    assert issubclass(ContentMissing, RuntimeError)
