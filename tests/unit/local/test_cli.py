from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from parley.cli import build_parser, main


def test_help_names_serve(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])

    assert exited.value.code == 0
    assert "serve" in capsys.readouterr().out


def test_serve_options_and_defaults() -> None:
    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port, args.config, args.clock) == ("127.0.0.1", 8000, None, "real")

    args = build_parser().parse_args(
        ["serve", "--host", "0.0.0.0", "--port", "9000", "--config", "x.yaml", "--clock", "manual"]
    )
    assert (args.host, args.port, args.config, args.clock) == ("0.0.0.0", 9000, Path("x.yaml"), "manual")


def test_a_bad_clock_or_no_command_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--clock", "sundial"])
    assert exited.value.code == 2
    with pytest.raises(SystemExit) as exited:
        main([])
    assert exited.value.code == 2


def test_a_bad_config_file_stops_serve_with_its_message(tmp_path: Path) -> None:
    config = tmp_path / "operator.yaml"
    config.write_text("principals: [{id: a}]\n", encoding="utf-8")

    done = subprocess.run(
        [sys.executable, "-m", "parley.cli", "serve", "--port", "0", "--config", str(config)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    assert done.returncode == 2
    assert f"{config}: principals[0].token: Field required" in done.stderr
