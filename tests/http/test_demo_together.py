"""``make demo`` (``python -m parley.demo.together``): Parley, the demo chat and the demo model from one
command, and one Ctrl-C stopping all three; and the local server's start-up line, which names the inbox
and how to sign in to it without printing a token that is not the example's (issue 29, items 3 and 5)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from mcp_servers import free_port

pytestmark = pytest.mark.http

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = ROOT / "Makefile"


def start_lines(process: subprocess.Popen[str], count: int) -> list[str]:
    assert process.stdout is not None
    lines = [process.stdout.readline() for _ in range(count)]
    assert all(lines), (lines, process.stdout.read() if process.poll() is not None else "")
    return lines


def test_make_demo_runs_the_three_from_the_demo_configuration() -> None:
    target = re.search(r"^demo: .*\n\t(.*)$", MAKEFILE.read_text(encoding="utf-8"), flags=re.MULTILINE)

    assert target is not None
    assert "-m parley.demo.together" in target.group(1)
    assert "--config examples/operator-demo.yaml" in target.group(1)


def test_one_command_serves_all_three_and_one_ctrl_c_stops_them(tmp_path: Path) -> None:
    port = free_port()
    config = str(ROOT / "examples" / "operator-demo.yaml")
    command = [sys.executable, "-m", "parley.demo.together", "--port", str(port), "--chat-port", "0",
               "--model-port", "0", "--data", "none", "--config", config]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        chat_line, model_line, parley_line = start_lines(process, 3)
        chat = re.search(r"The demo chat is serving (http://\S+) ", chat_line)
        model = re.search(r"The demo model is serving (http://\S+) ", model_line)
        assert chat is not None and model is not None, (chat_line, model_line)
        assert parley_line.startswith(f"Parley is serving http://127.0.0.1:{port} "), parley_line
        assert (
            f"The inbox: http://127.0.0.1:{port}/inbox, sign in with the token dev-token (the principal dev)."
            in parley_line
        )
        assert httpx.get(chat.group(1) + "/api/channels").status_code == 200
        assert httpx.get(model.group(1) + "/v1/models").status_code == 200
        assert httpx.get(f"http://127.0.0.1:{port}/inbox").status_code == 200

        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=30)
        assert process.stdout is not None
        rest = process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        assert process.stdout is not None
        process.stdout.close()
    assert code == 0, rest
    assert rest.splitlines()[-2:] == [
        "Parley stopped; its data is forgotten (--data none).",
        "The demo chat and the demo model stopped.",
    ], rest
    assert "Traceback" not in rest
    with pytest.raises(httpx.TransportError):
        httpx.get(chat.group(1) + "/api/channels", timeout=2)


def test_a_port_in_use_stops_nothing_half_started(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        taken = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "parley.demo.together", "--chat-port", "0", "--model-port", str(taken),
             "--port", "0", "--data", "none"],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip

    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("parley demo-model: "), done.stderr
    assert "Traceback" not in done.stderr


def serve_first_line(tmp_path: Path, operator: str) -> str:
    config = tmp_path / "operator.yaml"
    config.write_text(operator, encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "parley.cli",
        "serve",
        "--port",
        "0",
        "--config",
        str(config),
        "--data",
        "none",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        (line,) = start_lines(process, 1)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        assert process.stdout is not None
        process.stdout.close()
    return line


def test_the_start_up_line_prints_no_token_but_the_examples(tmp_path: Path) -> None:
    line = serve_first_line(
        tmp_path,
        "principals:\n"
        "  - id: ops\n"
        "    token: s3cret-ops-7731\n"
        "    grants: [{ org: acme, playbook: campaigns, role: write }]\n",
    )

    assert re.search(r"The inbox: http://127\.0\.0\.1:\d+/inbox, sign in with a principal's token from", line)
    assert "s3cret-ops-7731" not in line and "Ctrl-C stops it." in line


def test_the_start_up_line_with_the_example_configuration(tmp_path: Path) -> None:
    line = serve_first_line(tmp_path, (ROOT / "examples" / "operator.yaml").read_text(encoding="utf-8"))

    assert "sign in with the token dev-token (the principal dev)." in line
    assert "viewer-token" not in line
