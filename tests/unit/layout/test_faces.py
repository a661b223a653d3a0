"""One face per package (issue 30): each package's ``__init__`` says in its docstring what it offers and
exports it (``__all__``), as temporalio's ``worker/__init__.py`` does; every exported name resolves; and
a lazy face (``parley.faces``, PEP 562) imports nothing of its package until a name is used, so a
function's cold start loads no more than before."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from types import ModuleType

import pytest

FACES = (
    "runs",
    "definitions",
    "documents",
    "templates",
    "ports",
    "aws",
    "interaction",
    "workflow",
    "tools",
    "api",
    "front",
    "local",
    "executions",
    "infrastructure",
    "config",
    "models",
    "reasoning",
    "connections",
)
#: Faces that import their modules at once: every part is light (the configuration is read on a
#: function's first event anyway; the models' adapters load only when a call names their provider).
EAGER = ("config", "models")


def _face(package: str) -> ModuleType:
    return importlib.import_module(f"parley.{package}")


@pytest.mark.parametrize("package", FACES)
def test_each_package_says_what_it_offers_and_exports_it(package: str) -> None:
    face = _face(package)
    assert (face.__doc__ and "Offers" in face.__doc__) or (package in EAGER and face.__doc__)
    exported = face.__all__
    assert exported and len(set(exported)) == len(exported)
    for name in exported:
        assert getattr(face, name) is not None, name
        assert name in dir(face), name


@pytest.mark.parametrize("package", FACES)
def test_a_name_the_face_does_not_offer_is_an_attribute_error(package: str) -> None:
    with pytest.raises(AttributeError):
        _face(package).no_such_name  # noqa: B018


def test_a_module_of_a_package_is_still_imported_from_the_face() -> None:
    from parley.runs import events
    from parley.templates import render

    assert events.__name__ == "parley.runs.events"
    assert render.__name__ == "parley.templates.render"


LOADED = """
import json, sys
import parley.{package}
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize("package", [package for package in FACES if package not in EAGER])
def test_a_lazy_face_imports_nothing_of_its_package(package: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", LOADED.format(package=package)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    loaded = json.loads(out.stdout)
    assert [name for name in loaded if name.startswith(f"parley.{package}.")] == []
