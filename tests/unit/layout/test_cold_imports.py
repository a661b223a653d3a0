"""What a function's cold start loads: building a runtime and the handlers that only wait, settle and
time work never loads the document checkers (YAML, JSON Schema, Liquid), the reasoning type or the
models; those load with the first event that needs them (``make bench`` measures the rest)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "liquid",
    "jsonschema",
    "yaml",
    "parley.reasoning",
    "parley.models",
    "parley.documents.save_warnings",
    "httpx",
)

LOADED = """
import json, sys
import parley.aws.environment, parley.ports.runtime, parley.runs.service, parley.executions.entry
print(json.dumps(sorted(sys.modules)))
"""


@pytest.fixture(scope="module")
def loaded() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", LOADED], capture_output=True, text=True, check=True, timeout=60
    )
    modules: list[str] = json.loads(out.stdout)
    return modules


@pytest.mark.parametrize("heavy", HEAVY)
def test_the_runtime_and_the_execution_handlers_load_no_checker(heavy: str, loaded: list[str]) -> None:
    assert not [name for name in loaded if name == heavy or name.startswith(heavy + ".")]
