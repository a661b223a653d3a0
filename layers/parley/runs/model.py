"""What runs, requests, answers and events are, as ``http-api.md`` ("Runs", "Events") shows them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from parley.errors import ErrorEntry, Problem, capped_errors
from parley.runs.status import RUN_STATUSES as RUN_STATUSES
from parley.runs.status import RunStatus as RunStatus

RequestState = Literal["open", "answered", "expired", "cancelled", "delivered", "undelivered"]
#: How a request's delivery stands (``http-api.md``, "Runs": ``standing``).
Standing = Literal[
    "in_inbox", "to_deliver", "delivering", "delivered", "retrying", "undelivered", "cancelling"
]

#: Kinds answered under a problem type of their own (``interaction-format.md``, "In a workflow":
#: ``effect_unknown`` raises 409 under ``https://on.auto/problems/effect_unknown``), while the run's
#: rejection keeps one of the five reasons a run is rejected for (``http-api.md``, "Runs").
OWN_PROBLEM_KINDS: Final = {"effect_unknown": "conflict", "tools_unfinished": "unavailable"}


@dataclass(frozen=True)
class Rejection:
    """How a run was rejected: ``{reason, kind?, because?, detail, errors?}``; its problem is the
    answer a caller gets (``reason`` names the problem, so ``unanswered`` is ``410``)."""

    reason: str
    detail: str
    kind: str | None = None
    because: str | None = None
    errors: tuple[ErrorEntry, ...] = ()

    @classmethod
    def of(cls, problem: Problem) -> Rejection:
        reason = OWN_PROBLEM_KINDS.get(problem.reason, problem.reason)
        return cls(reason, problem.detail, problem.kind, problem.because, tuple(problem.errors))

    def problem(self) -> Problem:
        errors = list(self.errors)
        reason = self.kind if self.kind in OWN_PROBLEM_KINDS else self.reason
        return Problem(reason, self.detail, kind=self.kind, because=self.because, errors=errors)

    def as_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"reason": self.reason}
        if self.kind is not None:
            shown["kind"] = self.kind
        if self.because is not None:
            shown["because"] = self.because
        shown["detail"] = self.detail
        if self.errors:
            shown["errors"] = [entry.as_json() for entry in self.errors]
        return shown

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Rejection:
        return cls(
            reason=str(data["reason"]),
            detail=str(data["detail"]),
            kind=data.get("kind"),
            because=data.get("because"),
            errors=tuple(ErrorEntry(str(e["pointer"]), str(e["detail"])) for e in data.get("errors") or ()),
        )


@dataclass(frozen=True)
class CalledTool:
    """The tool a run of a function with ``call`` sent its call to (recorded with ``tool_call_started``,
    before the call is sent): a run that called its tool and did not succeed never runs again under its
    id (``reasoning-format.md``, "When a tool-calling run cannot finish")."""

    server: str
    tool: str
    read_only: bool

    def as_json(self) -> dict[str, Any]:
        return {"server": self.server, "tool": self.tool, "read_only": self.read_only}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CalledTool:
        return cls(str(data["server"]), str(data["tool"]), bool(data["read_only"]))


@dataclass(frozen=True)
class Parent:
    """The workflow run whose ``call: run_definition`` task started a run (``workflow-format.md``,
    "Calling a function"): shown as ``{run_id, task}``; ``token`` is the task token the run's ending
    answers, ``depth`` the calls above the run (the workflow's own depth plus one). Neither is shown."""

    run_id: str
    task: str
    token: str | None = None
    depth: int = 1

    def as_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "task": self.task}

    def kept(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "task": self.task, "token": self.token, "depth": self.depth}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Parent:
        token = data.get("token")
        return cls(str(data["run_id"]), str(data["task"]), token, int(data.get("depth", 1)))


@dataclass(frozen=True)
class Run:
    """A run of a definition. ``output`` is set once it succeeded, ``rejection`` once it was rejected.

    ``input_digest`` (the input's canonical JSON, hashed), ``attempt`` and ``called`` (the tool a run
    of a function with ``call`` sent its call to) serve the rules of retrying under a run id; they are
    not shown.
    """

    run_id: str
    type: str
    name: str
    definition_version: int
    status: RunStatus
    started_at: str
    started_by: str
    input_digest: str
    attempt: int = 1
    takes_answer: bool = False
    output: Any = None
    rejection: Rejection | None = None
    finished_at: str | None = None
    called: CalledTool | None = None
    #: Set in lists for an output kept in the content store: a list shows it as ``{"size": n}``.
    omitted_output_size: int | None = None
    #: What the type records of the run (a reasoning run's model call, ``reasoning-format.md``, "What a
    #: run records"), shown by ``get_run`` only; ``None`` for a type that keeps none, and in lists.
    record: dict[str, Any] | None = None
    #: The input, kept for a type whose run goes on in another function (a reasoning run's ``reason``
    #: function reads it); never shown. ``None`` when not kept, and in lists.
    input: Any = None
    #: The tools a run of a function with ``tools`` called, in order, each recorded before its call was
    #: sent; ``()`` before its first call; ``None`` for a function without tools (the rules of retrying
    #: under a run id: ``reasoning-format.md``, "When a tool-calling run cannot finish").
    calls: tuple[CalledTool, ...] | None = None
    #: A started run that waits for a person (``agent-runs.md``, "A run that waits"): ``{"for": "input" |
    #: "approval", "since", "expires_at"}``, read with the run by ``get_run`` only.
    waiting: dict[str, Any] | None = None
    #: The workflow run that called this one (``http-api.md``, "Runs": ``parent``).
    parent: Parent | None = None
    #: A workflow run's execution (its ARN); never shown.
    execution: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The run as ``get_run`` shows it, with its ``record`` where its type keeps one (a list reads
        runs without it)."""
        shown: dict[str, Any] = {
            "run_id": self.run_id,
            "type": self.type,
            "name": self.name,
            "definition_version": self.definition_version,
            "status": self.status,
        }
        if self.status == "succeeded":
            shown["output"] = (
                self.output if self.omitted_output_size is None else {"size": self.omitted_output_size}
            )
        if self.rejection is not None:
            shown["rejection"] = self.rejection.as_json()
        shown["started_at"] = self.started_at
        shown["started_by"] = self.started_by
        if self.waiting is not None:
            shown["waiting"] = self.waiting
        if self.finished_at is not None:
            shown["finished_at"] = self.finished_at
        if self.parent is not None:
            shown["parent"] = self.parent.as_json()
        if self.omitted_output_size is not None:
            shown["omitted"] = ["output"]
        if self.record is not None:
            shown["record"] = self.record
        return shown


@dataclass(frozen=True)
class AnswerFact:
    """``request_answered``, as ``answer_interaction`` returns it; ``answer_id`` is its event's id."""

    run_id: str
    answer_id: str
    answer: Any
    claimed_for: str | None
    answered_by: str
    answered_at: str

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "answer_id": self.answer_id,
            "answer": self.answer,
            "claimed_for": self.claimed_for,
            "answered_by": self.answered_by,
            "answered_at": self.answered_at,
        }


@dataclass(frozen=True)
class Delivery:
    """How a request is sent through a tool (``deliver``): the tool, the arguments rendered once when the
    request was asked (every attempt sends the same), and the ``sent`` pointers into the tool's answer."""

    server: str
    tool: str
    arguments: Any
    arguments_size: int
    sent_pointers: dict[str, str] | None = None
    #: The function's ``replies`` block and ``reply`` rule as written (``None``: it reads no replies).
    replies: dict[str, Any] | None = None
    reply: Any = None

    def as_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "tool": self.tool,
            "arguments": self.arguments,
            "arguments_size": self.arguments_size,
            "sent_pointers": self.sent_pointers,
            "replies": self.replies,
            "reply": self.reply,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Delivery:
        return cls(
            server=str(data["server"]),
            tool=str(data["tool"]),
            arguments=data["arguments"],
            arguments_size=int(data["arguments_size"]),
            sent_pointers=data.get("sent_pointers"),
            replies=data.get("replies"),
            reply=data.get("reply"),
        )


@dataclass(frozen=True)
class Request:
    """An interaction run's request: open until it is answered, expires or is cancelled.

    ``answer_schema`` is the function's ``output.schema`` as it stood when the request was asked;
    ``token`` is the task token of the run's waiting execution, once it has parked.
    """

    run_id: str
    type: str
    function: str
    version: int
    to: str
    answerer: str
    message: str
    takes_answer: bool
    requested_at: str
    expires_at: str
    answer_schema: Any
    state: RequestState = "open"
    token: str | None = None
    fact: AnswerFact | None = None
    ended_at: str | None = None
    #: Set for a request sent through a tool; ``attempts`` counts those started, ``attempt_started_at``
    #: is when the latest started, ``sent`` what the message was delivered as (``conversation``, ``id``).
    delivery: Delivery | None = None
    attempts: int = 0
    standing: Standing = "in_inbox"
    attempt_started_at: str | None = None
    sent: dict[str, str] | None = None
    #: For a request whose replies are read: the conversation's key, and its refused replies and
    #: tellings so far.
    conversation: str | None = None
    reply_refusals: int = 0
    tellings: int = 0
    #: What an agent run asks (``agent-runs.md``): ``{"question": {...}}`` or ``{"approval": {server, tool,
    #: arguments}}``, shown beside the request in ``list_interactions``; ``None`` for other requests.
    asked: dict[str, Any] | None = None
    #: Which of its run's requests this is (an agent run asks again and again; every other run once): its
    #: wait's execution is named after it (``RunKey.wait_execution_name``).
    number: int = 1

    @property
    def waiting_for(self) -> str:
        """What the run waits for while this request is open: ``approval`` or ``input``."""
        return "approval" if self.asked is not None and "approval" in self.asked else "input"

    def as_listed(self) -> dict[str, Any]:
        """The request as ``list_interactions`` shows it (``http-api.md``, "Runs").

        Requests in the inbox: no delivery, no attempts, no conversation read, standing ``in_inbox``.
        """
        delivery = (
            None if self.delivery is None else {"server": self.delivery.server, "tool": self.delivery.tool}
        )
        return {
            "run_id": self.run_id,
            "type": self.type,
            "function": self.function,
            "version": self.version,
            "to": self.to,
            "delivery": delivery,
            "message": self.message,
            "takes_answer": self.takes_answer,
            "requested_at": self.requested_at,
            "expires_at": self.expires_at,
            "attempts": self.attempts,
            "standing": self.standing,
            "answer_schema": self.answer_schema,
            "conversation": self.conversation,
            "answerer": self.answerer if self.conversation is not None else None,
            "reply_refusals": self.reply_refusals,
            **(self.asked or {}),
        }


@dataclass(frozen=True)
class Event:
    """One fact of a playbook's history: ``{id, type, at, run_id?, data}``."""

    id: str
    type: str
    at: str
    run_id: str | None
    data: dict[str, Any]
    #: Content fields a list already shows as their size (data kept in the content store).
    omitted: tuple[str, ...] = ()


@dataclass(frozen=True)
class Page:
    """One page of a list: its items as JSON, and the cursor to the next (``None`` on the last)."""

    key: str
    items: tuple[dict[str, Any], ...]
    next_cursor: str | None
    #: DynamoDB's ``ScannedCount`` summed over the queries of the page (``make bench`` reads it).
    scanned: int = field(default=0, compare=False)

    def as_json(self) -> dict[str, Any]:
        return {self.key: list(self.items), "next_cursor": self.next_cursor}


def invalid_input(errors: list[ErrorEntry]) -> Problem:
    """``422 invalid_input`` naming the first problem, with every one (capped) in ``errors``."""
    capped = capped_errors(errors)
    first = capped[0]
    more = len(errors) - 1
    detail = f"{first.pointer}: {first.detail}" + (f" (and {more} more)" if more > 0 else "")
    return Problem("invalid_input", detail, errors=capped)
