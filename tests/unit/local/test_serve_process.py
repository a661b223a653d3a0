"""``parley serve`` as a process, with the executor and the scheduler: it starts fast and stops cleanly on
SIGTERM while runs wait on their tokens."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.http

OPERATOR = (
    "principals: [{id: dev, token: dev-token, grants: [{org: acme, playbook: campaigns, role: write}]}]\n"
)
WRITER = {"Authorization": "Bearer dev-token"}
RUNS = "/v1/orgs/acme/playbooks/campaigns"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_serve_starts_fast_and_stops_on_sigterm_while_runs_wait(tmp_path: Path, example_source: str) -> None:
    config = tmp_path / "operator.yaml"
    config.write_text(OPERATOR, encoding="utf-8")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "parley.cli",
            "serve",
            "--clock",
            "manual",
            "--port",
            str(port),
            "--config",
            str(config),
            "--data",
            "none",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
    )
    try:
        assert process.stdout is not None
        first_line = process.stdout.readline()
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30, headers=WRITER) as http:
            saved = http.post(
                f"{RUNS}/definitions/interaction", json={"name": "approve", "source": example_source}
            )
            runs = [
                http.post(
                    f"{RUNS}/definitions/interaction/approve/run",
                    json={"input": {"owner": "maria@example.com", "review": "fine"}},
                )
                for _ in range(3)
            ]
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=60)  # a generous wait: runs that held the stop would never end
        output = first_line + process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()

    assert first_line.startswith(f"Parley is serving http://127.0.0.1:{port} (clock: manual"), output
    # How fast it starts is a benchmark's matter, not an assertion here.
    assert saved.status_code == 201, saved.text
    assert [r.status_code for r in runs] == [200, 200, 200], [r.text for r in runs]
    assert code == 0, output
    assert "Traceback" not in output


def test_a_port_in_use_names_the_way_out(tmp_path: Path) -> None:
    import socket

    config = tmp_path / "operator.yaml"
    config.write_text(OPERATOR, encoding="utf-8")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "parley.cli", "serve", "--port", str(port), "--config", str(config),
             "--data", "none"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip

    assert done.returncode == 1
    assert done.stderr.startswith(f"parley serve: port {port} on 127.0.0.1 is in use")
    # A second server on the same data folder is refused (issue 27): the way out names both.
    assert "--port 8001 --data" in done.stderr and "--data none" in done.stderr
