"""``parley demo-chat reply``: answer in a demo chat thread from the terminal, as a user one names.

It posts to the demo server's ``POST /api/reply``, as the page does; the standard library is enough."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ReplyOptions:
    url: str
    channel: str
    thread: str | None
    user: str
    text: str


def chat_url(url: str | None, host: str, port: int) -> str:
    """The demo chat the reply goes to: ``--url`` when given, else the chat on ``--host`` and ``--port``
    (``parley demo-chat --port 9002 reply …`` and ``parley demo-chat reply --port 9002 …`` alike; issue
    29)."""
    if url:
        return url
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def post_reply(options: ReplyOptions, timeout: float = 10.0) -> dict[str, Any]:
    """Post the reply; the server's answer ``{channel, ts, thread_ts}``. ``RuntimeError`` says why not."""
    body = {"channel": options.channel, "user": options.user, "text": options.text}
    if options.thread is not None:
        body["thread"] = options.thread
    request = urllib.request.Request(
        options.url.rstrip("/") + "/api/reply",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer
    except urllib.error.HTTPError as exc:
        try:
            reason = json.loads(exc.read()).get("error") or exc.reason
        except ValueError:
            reason = exc.reason
        raise RuntimeError(f"the demo chat refused the reply ({exc.code}): {reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise RuntimeError(f"no demo chat answers at {options.url}: {reason}") from None


def reply(options: ReplyOptions) -> int:
    try:
        answer = post_reply(options)
    except RuntimeError as exc:
        print(f"parley demo-chat reply: {exc}", file=sys.stderr)
        return 1
    where = f"thread {answer['thread_ts']}" if answer.get("thread_ts") else "the channel"
    print(f"Posted {answer['ts']} as {options.user} in #{answer['channel']}, {where}.")
    return 0
