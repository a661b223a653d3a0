"""One ``parley serve`` per data folder (issue 27, item 2; ``parley.local.data_lock``): a second server
on the same folder refuses to start and names the first; a lock left by a killed server does not block."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from mcp_servers import free_port

from parley.local.data_lock import LOCK_FILE, DataFolderInUse, DataFolderLock

OPERATOR = (
    "principals: [{id: dev, token: dev-token, grants: [{org: acme, playbook: campaigns, role: write}]}]\n"
)
READY_WITHIN = 30.0


def serve_command(config: Path, data: Path | str, port: int) -> list[str]:
    return [sys.executable, "-m", "parley.cli", "serve", "--clock", "manual", "--port", str(port),
            "--config", str(config), "--data", str(data)]  # fmt: skip


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}


@contextmanager
def started(config: Path, data: Path, log: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A ``parley serve`` keeping ``data``, once it answers; killed (not stopped) on exit if still up."""
    port = free_port()
    with log.open("ab") as sink:
        process = subprocess.Popen(
            serve_command(config, data, port), stdout=sink, stderr=subprocess.STDOUT, env=environment()
        )
    began = time.monotonic()
    try:
        while True:
            assert process.poll() is None, log.read_text()
            try:
                httpx.get(f"http://127.0.0.1:{port}/_local/clock", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() - began < READY_WITHIN, log.read_text()
                time.sleep(0.05)
        yield process, port
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=15)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "operator.yaml"
    path.write_text(OPERATOR, encoding="utf-8")
    return path


def test_a_second_server_on_the_same_folder_refuses_to_start_and_names_the_first(
    tmp_path: Path, config: Path
) -> None:
    data = tmp_path / "data"
    with started(config, data, tmp_path / "first.log") as (first, port):
        holder = json.loads((data / LOCK_FILE).read_text(encoding="utf-8"))
        assert (holder["pid"], holder["port"]) == (first.pid, port)

        second = subprocess.run(
            serve_command(config, data, free_port()),
            capture_output=True, text=True, timeout=60, env=environment(),
        )  # fmt: skip

        assert second.returncode == 1, second.stderr
        assert f"data folder {data}/ is in use" in second.stderr
        assert f"process {first.pid}" in second.stderr and f"port {port}" in second.stderr
        assert "--data DIR" in second.stderr and "--data none" in second.stderr
        assert "Traceback" not in second.stderr
        # The first one goes on serving, its folder untouched.
        assert httpx.get(f"http://127.0.0.1:{port}/_local/clock", timeout=10).status_code == 200
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=15) == 0


def test_the_same_port_and_folder_is_refused_for_the_folder_first(tmp_path: Path, config: Path) -> None:
    data = tmp_path / "data"
    with started(config, data, tmp_path / "first.log") as (first, port):
        second = subprocess.run(
            serve_command(config, data, port), capture_output=True, text=True, timeout=60, env=environment()
        )
    assert second.returncode == 1
    assert "is in use by another parley serve" in second.stderr and f"process {first.pid}" in second.stderr


def test_a_lock_left_by_a_killed_server_does_not_block(tmp_path: Path, config: Path) -> None:
    data = tmp_path / "data"
    with started(config, data, tmp_path / "first.log") as (first, _):
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=15)
    assert (data / LOCK_FILE).exists()  # the file stays; the kernel released its lock

    with started(config, data, tmp_path / "second.log") as (second, port):
        holder = json.loads((data / LOCK_FILE).read_text(encoding="utf-8"))
        assert (holder["pid"], holder["port"]) == (second.pid, port)
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=15) == 0


def test_servers_on_other_folders_start_beside_it(tmp_path: Path, config: Path) -> None:
    with (
        started(config, tmp_path / "one", tmp_path / "one.log") as (one, one_port),
        started(config, tmp_path / "two", tmp_path / "two.log") as (two, two_port),
    ):
        for port in (one_port, two_port):
            assert httpx.get(f"http://127.0.0.1:{port}/_local/clock", timeout=10).status_code == 200
        assert one.poll() is None and two.poll() is None


def test_the_lock_in_process(tmp_path: Path) -> None:
    """A second open of the lock file conflicts even within one process (``flock`` locks an open file);
    once released, the folder can be taken again."""
    folder = tmp_path / "made" / "on demand"
    with DataFolderLock(folder) as held:
        held.listening("127.0.0.1", 8123)
        with pytest.raises(DataFolderInUse) as refused:
            DataFolderLock(folder).acquire()
        assert (refused.value.holder.pid, refused.value.holder.port) == (os.getpid(), 8123)
        assert str(folder) in str(refused.value)
    with DataFolderLock(folder):
        pass


def test_a_lock_file_that_says_nothing_useful_is_still_a_lock(tmp_path: Path) -> None:
    with DataFolderLock(tmp_path) as held:
        assert held._file is not None
        held._file.seek(0)
        held._file.truncate()
        held._file.write("not json")
        held._file.flush()
        with pytest.raises(DataFolderInUse, match="another process"):
            DataFolderLock(tmp_path).acquire()
