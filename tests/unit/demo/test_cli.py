"""``parley demo-chat`` and ``parley demo-chat reply`` on the command line."""

from __future__ import annotations

import socket

import pytest

from parley.cli import build_parser, main
from parley.demo.reply import chat_url
from parley.demo.server import DemoChatOptions, running


def test_demo_chat_options_and_defaults() -> None:
    args = build_parser().parse_args(["demo-chat"])
    assert (args.command, args.host, args.port, args.demo_command) == ("demo-chat", "127.0.0.1", 9001, None)

    args = build_parser().parse_args(["demo-chat", "--port", "0"])
    assert args.port == 0


def test_reply_options() -> None:
    args = build_parser().parse_args(
        [
            "demo-chat",
            "reply",
            "--channel",
            "maria",
            "--thread",
            "1.000001",
            "--user",
            "maria",
            "approve, looks good",
        ]
    )

    assert args.demo_command == "reply"
    assert (args.url, args.channel, args.thread, args.user, args.text) == (
        None, "maria", "1.000001", "maria", "approve, looks good"
    )  # fmt: skip
    assert chat_url(args.url, args.host, args.reply_port or args.port) == "http://127.0.0.1:9001"


def test_reply_needs_a_channel_a_user_and_words(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["demo-chat", "reply", "--user", "maria", "approve"])
    assert exited.value.code == 2
    assert "--channel" in capsys.readouterr().err


def test_reply_posts_in_the_thread(capsys: pytest.CaptureFixture[str]) -> None:
    with running(DemoChatOptions(port=0)) as demo:
        sent = demo.chat.post("maria", "parley", "Here is the draft")

        code = main(["demo-chat", "reply", "--url", demo.url, "--channel", "maria", "--thread", sent.ts,
                     "--user", "maria", "approve, looks good"])  # fmt: skip

        messages = demo.chat.messages("maria")
    assert code == 0
    assert [(m.user, m.text, m.thread_ts) for m in messages] == [
        ("parley", "Here is the draft", None), ("maria", "approve, looks good", sent.ts)
    ]  # fmt: skip
    assert capsys.readouterr().out == f"Posted {messages[1].ts} as maria in #maria, thread {sent.ts}.\n"


def test_reply_says_why_it_was_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with running(DemoChatOptions(port=0)) as demo:
        code = main(["demo-chat", "reply", "--url", demo.url, "--channel", "maria", "--thread", "1.000001",
                     "--user", "maria", "approve"])  # fmt: skip

    assert code == 1
    assert capsys.readouterr().err == (
        "parley demo-chat reply: the demo chat refused the reply (404): there is no channel 'maria' "
        "(channels: none yet); post_message creates one\n"
    )


def test_reply_to_no_server_says_where_it_looked(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"

    code = main(["demo-chat", "reply", "--url", url, "--channel", "maria", "--user", "maria", "hi"])

    assert code == 1
    assert capsys.readouterr().err.startswith(f"parley demo-chat reply: no demo chat answers at {url}: ")


@pytest.mark.parametrize("where", ["before", "after"])
def test_reply_honours_port_given_to_demo_chat_or_to_reply(
    where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``parley demo-chat --port N reply …`` and ``parley demo-chat reply --port N …`` reach the chat on N
    (issue 29)."""
    with running(DemoChatOptions(port=0)) as demo:
        port = ["--port", str(demo.port)]
        words = ["--channel", "maria", "--user", "maria", "hi"]
        argv = (
            ["demo-chat", *port, "reply", *words]
            if where == "before"
            else ["demo-chat", "reply", *port, *words]
        )

        code = main(argv)

        messages = demo.chat.messages("maria")
    assert code == 0, capsys.readouterr().err
    assert [(m.user, m.text) for m in messages] == [("maria", "hi")]


def test_the_url_wins_over_the_port() -> None:
    assert chat_url("http://127.0.0.1:9100", "127.0.0.1", 9002) == "http://127.0.0.1:9100"
    assert chat_url(None, "::1", 9002) == "http://[::1]:9002"
