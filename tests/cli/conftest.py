"""Fixtures of the command line's tests: one ``parley serve --clock manual --data none`` a module, whose
operator configuration gives ``dev-token`` write and ``viewer-token`` read on many playbooks of acme, and
``parley``, the CLI run in process against it on a playbook of the test's own (so that no test sees
another's runs or requests)."""

from __future__ import annotations

import io
import itertools
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from tool_serving import serving_with, writer_and_viewer

from parley.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "definitions"
PLAYBOOKS = [f"cli-{n}" for n in range(60)]
_next = itertools.count()


@dataclass
class Result:
    code: int
    out: str
    err: str


@dataclass
class Cli:
    """``parley ARGS`` in process, against the module's server and the test's playbook."""

    url: str
    playbook: str
    capsys: pytest.CaptureFixture[str]
    monkeypatch: pytest.MonkeyPatch

    def __call__(self, *argv: str, stdin: str | None = None) -> Result:
        self.capsys.readouterr()
        if stdin is not None:
            self.monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main(list(argv))
        captured = self.capsys.readouterr()
        return Result(code, captured.out, captured.err)

    def advance(self, seconds: float) -> None:
        moved = httpx.post(
            self.url + "/_local/clock/advance",
            json={"seconds": seconds},
            headers={"Authorization": "Bearer dev-token"},
        )
        assert moved.status_code == 200, moved.text

    @property
    def env(self) -> dict[str, str]:
        """The environment of a ``parley`` subprocess that reaches the same server and playbook."""
        import os

        return {**os.environ, "PARLEY_URL": self.url, "PARLEY_PLAYBOOK": self.playbook}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("cli-serve")
    with serving_with(tmp, writer_and_viewer(PLAYBOOKS)) as url:
        yield url


@pytest.fixture
def parley(server: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    playbook = PLAYBOOKS[next(_next) % len(PLAYBOOKS)]
    for name in ("PARLEY_TOKEN", "PARLEY_ORG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PARLEY_URL", server)
    monkeypatch.setenv("PARLEY_PLAYBOOK", playbook)
    return Cli(server, playbook, capsys, monkeypatch)
