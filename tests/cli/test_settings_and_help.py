"""The command line's settings, help, exit codes for a server that is not there or not Parley, and a
token that is not valid (issue 29, item 1: "the server, token, org and playbook from --url, --token,
--org, --playbook or PARLEY_*, defaulting to the local server and the example configuration's")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_servers import free_port

from parley.cli import main
from parley.client.connection import Connection
from parley.client.exits import UNREACHABLE, CommandError
from parley.client.settings import settings_from

PARLEY = str(Path(sys.executable).parent / "parley")
Cli = Any


def test_options_win_over_the_environment_which_wins_over_the_example() -> None:
    example = settings_from(None, None, None, None, environ={})
    assert (example.url, example.token, example.org, example.playbook) == (
        "http://127.0.0.1:8000", "dev-token", "acme", "campaigns",
    )  # fmt: skip
    env = {"PARLEY_URL": "http://localhost:8001/", "PARLEY_TOKEN": "t-env", "PARLEY_ORG": "globex",
           "PARLEY_PLAYBOOK": "launches"}  # fmt: skip
    from_env = settings_from(None, None, None, None, environ=env)
    assert (from_env.url, from_env.token, from_env.org, from_env.playbook) == (
        "http://localhost:8001", "t-env", "globex", "launches",
    )  # fmt: skip
    given = settings_from("https://api.example.com/prod", "t-opt", "o", "p", environ=env)
    assert (given.url, given.token, given.org, given.playbook) == (
        "https://api.example.com/prod",
        "t-opt",
        "o",
        "p",
    )
    assert given.playbook_path == "/v1/orgs/o/playbooks/p"


def test_the_example_token_goes_only_to_a_server_on_this_machine() -> None:
    remote = settings_from("https://api.example.com/prod", None, None, None, environ={})
    assert remote.token is None and remote.token_from == "no token"
    assert settings_from("http://[::1]:8000", None, None, None, environ={}).token == "dev-token"


def test_help_lists_the_commands_and_the_exit_codes() -> None:
    shown = subprocess.run([PARLEY, "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0
    for command in ("serve", "save", "run", "inbox", "answer", "runs", "show", "events", "send-event"):
        assert f"    {command}" in shown.stdout
    assert "exit codes:" in shown.stdout and "4    the run ended rejected or failed" in shown.stdout
    version = subprocess.run([PARLEY, "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("parley ")
    run_help = subprocess.run([PARLEY, "run", "--help"], capture_output=True, text=True, timeout=60).stdout
    assert "--wait" in run_help and "PARLEY_URL" in run_help and "exit codes:" in run_help


def test_help_imports_no_http_client_nor_yaml() -> None:
    script = (
        "import sys\n"
        "from parley.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('httpx', 'yaml', 'boto3', 'moto') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run"])
    assert exited.value.code == 2
    assert "NAME" in capsys.readouterr().err


def test_no_server_at_the_url_exits_3(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PARLEY_URL", raising=False)
    code = main(["runs", "--url", f"http://127.0.0.1:{free_port()}"])
    assert code == 3
    err = capsys.readouterr().err
    assert "parley runs: Nothing answers at http://127.0.0.1:" in err and "make serve" in err


def test_an_answer_that_is_not_parleys_is_not_taken_for_one() -> None:
    page = httpx.MockTransport(lambda request: httpx.Response(404, text="<html>Not here</html>"))
    settings = settings_from("http://127.0.0.1:9", None, None, None, environ={})
    with Connection(settings, page) as connection, pytest.raises(CommandError) as refused:
        connection.get("/runs")
    assert refused.value.code == UNREACHABLE and "is it a Parley server?" in refused.value.message


@pytest.mark.http
def test_a_token_that_is_not_valid_says_how_to_give_one(parley: Cli) -> None:
    refused = parley("runs", "--token", "not-a-token")
    assert refused.code == 1
    assert "Unauthenticated (401 unauthenticated)" in refused.err
    assert "The token (--token) is not valid at" in refused.err and "PARLEY_TOKEN" in refused.err


@pytest.mark.http
def test_a_reader_may_list_but_not_write(parley: Cli) -> None:
    assert parley("runs", "--token", "viewer-token").code == 0
    brief = Path(__file__).resolve().parents[2] / "examples" / "definitions" / "approve-campaign-brief.md"
    refused = parley("save", str(brief), "--token", "viewer-token")
    assert refused.code == 1 and "(403 forbidden)" in refused.err


@pytest.mark.http
def test_a_playbook_the_token_cannot_read_is_named(parley: Cli) -> None:
    missing = parley("inbox", "--playbook", "elsewhere")
    assert missing.code == 1 and "(404 not_found)" in missing.err
    assert "the playbook elsewhere: --org, --playbook" in missing.err


def test_the_page_of_the_command_line_names_every_command_and_exit_code() -> None:
    from parley.client import exits
    from parley.client.parser import COMMANDS

    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    for command in COMMANDS:
        assert f"### `parley {command}" in page, command
    for code in (exits.OK, exits.PROBLEM, exits.USAGE, exits.UNREACHABLE, exits.RUN_ENDED_BADLY,
                 exits.STILL_RUNNING, exits.INTERRUPTED):  # fmt: skip
        assert f"| `{code}` |" in page and f"  {code}".ljust(7) in exits.DESCRIPTION, code
