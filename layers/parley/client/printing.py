"""How the client shows what came back: tables and timelines for people, JSON for scripts, and
problems (``http-api.md``, "Problems") with their line and pointer.

A document's problem (``pointer: /source``, ``detail`` "Line 4, /config/temperature: Expected number")
is printed as a compiler prints one, ``FILE:4: /config/temperature: Expected number``, so an editor can
jump to it; any other problem as ``POINTER: DETAIL``. Times are the server's, in UTC, to the second.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TextIO

CELL_MAX: Final = 60
SUMMARY_MAX: Final = 110
_LINE: Final = re.compile(r"^Line (\d+)(?:, column (\d+))?(?:, |: )(.*)$", re.DOTALL)


def out(text: str = "") -> None:
    print(text, file=sys.stdout)


def err(text: str) -> None:
    print(text, file=sys.stderr)


def dump_json(value: Any, stream: TextIO | None = None, *, line: bool = False) -> None:
    """``value`` as JSON: indented, or on one line (``line``: JSON Lines, one value a line)."""
    text = (
        json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        if line
        else json.dumps(value, ensure_ascii=False, indent=2)
    )
    print(text, file=stream or sys.stdout, flush=True)


def compact(value: Any, limit: int = SUMMARY_MAX) -> str:
    """``value`` as JSON on one line, cut with ``…`` past ``limit`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return clip(text, limit)


def clip(text: str, limit: int = CELL_MAX) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def when(at: Any) -> str:
    """``2026-10-17T10:18:42.000Z`` as ``2026-10-17 10:18:42``."""
    if not isinstance(at, str) or not at:
        return "-"
    return at.replace("T", " ")[:19]


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
    """Rows under their headers, in columns two spaces apart (the last one not padded)."""
    shown = [list(headers), *([str(cell) for cell in row] for row in rows)]
    widths = [max(len(row[i]) for row in shown) for i in range(len(headers))]
    for row in shown:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        out("  ".join([*cells, row[-1]]).rstrip())


def page_of(
    page: Mapping[str, Any],
    key: str,
    *,
    as_json: bool,
    quiet: bool,
    empty: str,
    headers: Sequence[str],
    row: Callable[[Mapping[str, Any]], Sequence[str]],
    more: str,
) -> None:
    """A page of a listing as every listing command prints it: the server's JSON (``--json``), the run
    ids (``-q``), or a table of ``row`` for each item (``empty`` when none), then the command that reads
    the next page (``more`` and its cursor), on stderr so that the table stays clean for pipes."""
    found = page.get(key) or []
    if as_json:
        dump_json(page)
        return
    if quiet:
        for each in found:
            out(str(each.get("run_id")))
        return
    if not found:
        out(empty)
        return
    table(headers, (row(each) for each in found))
    if page.get("next_cursor"):
        err(f"More: {more} --cursor {page['next_cursor']}")


def fields(pairs: Iterable[tuple[str, str | None]]) -> None:
    """``Label  value`` lines, the values aligned; pairs whose value is ``None`` are left out."""
    kept = [(label, value) for label, value in pairs if value is not None]
    width = max((len(label) for label, _ in kept), default=0)
    for label, value in kept:
        out(f"{label.ljust(width)}  {value}")


def indented(text: str, by: str = "  ") -> str:
    return "\n".join(by + line if line else line for line in text.splitlines())


def output_text(output: Any) -> str:
    """A run's output for people: text as it is, anything else as indented JSON."""
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False, indent=2)


def record_summary(record: Any) -> str:
    """A reasoning run's record in a line (``reasoning-format.md``, "What a run records"): the model as
    requested and as it answered, why it stopped, the tokens and the time; other records by their keys."""
    if not isinstance(record, Mapping):
        return "kept with the run"
    parts: list[str] = []
    model = record.get("model")
    if isinstance(model, Mapping):
        answered = model.get("answered")
        named = str(model.get("requested"))
        parts.append(named + (f" (answered as {answered})" if answered and answered != named else ""))
    if record.get("finish_reason"):
        parts.append(f"finished: {record['finish_reason']}")
    usage = record.get("usage")
    if isinstance(usage, Mapping) and usage.get("total") is not None:
        parts.append(f"{usage['total']:,} tokens")
    if record.get("duration_ms") is not None:
        parts.append(f"{record['duration_ms']:,} ms")
    return ", ".join(parts) if parts else "kept with the run: " + ", ".join(str(key) for key in record)


# --- problems ----------------------------------------------------------------------------------------


def problem_lines(
    problem: Mapping[str, Any], status: int | None = None, source: str | None = None
) -> list[str]:
    """A problem document as lines for people: its title, status and reason, why (``kind``,
    ``because``), then each entry of ``errors`` with its line (for ``/source``, with ``source``, the
    file it came from) and pointer; the ``detail`` when there are no entries."""
    title = str(problem.get("title") or "Problem")
    reason = problem.get("reason")
    code = problem.get("status", status)
    head = f"{title} ({code} {reason})" if reason else f"{title} ({code})"
    why = [f"{key}: {problem[key]}" for key in ("kind", "because") if problem.get(key)]
    if why:
        head += " — " + ", ".join(why)
    lines = [head]
    errors = [entry for entry in problem.get("errors") or () if isinstance(entry, Mapping)]
    if not errors and problem.get("detail"):
        lines.append(f"  {problem['detail']}")
    for entry in errors:
        lines.append("  " + error_line(entry, source))
    if problem.get("instance"):
        lines.append(f"  instance: {problem['instance']}")
    return lines


def error_line(entry: Mapping[str, Any], source: str | None = None) -> str:
    pointer = str(entry.get("pointer") or "")
    detail = str(entry.get("detail") or "")
    found = _LINE.match(detail)
    if found:
        line, column, rest = found.groups()
        where = f"{source or pointer.lstrip('/') or 'source'}:{line}" + (f":{column}" if column else "")
        return f"{where}: {rest}"
    return f"{pointer}: {detail}" if pointer else detail


def print_problem(problem: Mapping[str, Any], status: int | None = None, source: str | None = None) -> None:
    for line in problem_lines(problem, status, source):
        err(line)


# --- runs and their events ---------------------------------------------------------------------------


def function_of(run: Mapping[str, Any]) -> str:
    version = run.get("definition_version")
    return f"{run.get('type')} {run.get('name')}" + (f", version {version}" if version else "")


def rejection_lines(rejection: Mapping[str, Any]) -> list[str]:
    why = ", ".join(f"{key} {rejection[key]}" for key in ("kind", "because") if rejection.get(key))
    lines = [f"{rejection.get('reason')}" + (f" ({why})" if why else "") + f": {rejection.get('detail', '')}"]
    lines += [
        "  " + error_line(entry) for entry in rejection.get("errors") or () if isinstance(entry, Mapping)
    ]
    return lines


def event_line(event: Mapping[str, Any], width: int = 22) -> str:
    summary = event_summary(event)
    head = f"{when(event.get('at'))}  {str(event.get('type')).ljust(width)}"
    return f"{head}  {summary}".rstrip()


def event_summary(event: Mapping[str, Any]) -> str:
    """An event in a few words: its data's telling parts, else its data as compact JSON."""
    data = event.get("data")
    if not isinstance(data, Mapping):
        return "" if data is None else compact(data)
    kind = event.get("type")
    parts: list[str] = []
    if kind in ("interaction_requested",):
        parts.append(f"to {data.get('to')}")
        delivery = data.get("delivery")
        if isinstance(delivery, Mapping):
            parts.append(f"through {delivery.get('server')}/{delivery.get('tool')}")
        else:
            parts.append("in the inbox")
        if data.get("expires_at"):
            parts.append(f"until {when(data['expires_at'])}")
        if data.get("takes_answer") is False:
            parts.append("a notification")
        return ", ".join(parts)
    if kind == "request_answered":
        by = f"by {data.get('answered_by')}"
        if data.get("claimed_for"):
            by += f" for {data['claimed_for']}"
        return f"{by}: {compact(data.get('answer'))}"
    if kind == "run_succeeded":
        return f"output: {compact(data.get('output'))}"
    if kind == "run_rejected" and isinstance(data.get("rejection"), Mapping):
        return clip(rejection_lines(data["rejection"])[0], SUMMARY_MAX)
    if kind == "call_started":
        return f"{data.get('type')} {data.get('name')}, run {data.get('run_id')} ({data.get('task')})"
    if kind in ("task_started", "task_completed") and "task" in data:
        return str(data["task"])
    if kind == "event_received":
        return f"{data.get('type')} from {data.get('source')}: {compact(data.get('data'))}"
    if kind == "activity_updated" and "message" in data:
        return clip(str(data["message"]), SUMMARY_MAX)
    if kind == "approval_requested":
        return clip(f"{data.get('server')}/{data.get('tool')}: {data.get('confirmation')}", SUMMARY_MAX)
    if kind == "input_requested" and "prompt" in data:
        return clip(f"{data.get('kind')}: {data.get('prompt')}", SUMMARY_MAX)
    if "server" in data and "tool" in data:
        rest = {key: value for key, value in data.items() if key not in ("server", "tool")}
        return clip(f"{data['server']}/{data['tool']} {compact(rest)}", SUMMARY_MAX)
    if "detail" in data:
        return clip(str(data["detail"]), SUMMARY_MAX)
    return compact(dict(data)) if data else ""
