"""Operations of ``http-api.md`` "Runs": run_definition, get_run, list_runs, get_run_history,
cancel_run, answer_interaction, list_interactions and send_run_event.

Each is declared once (``parley.api.operation``); the HTTP routes, the MCP tools and the OpenAPI
document are made from these declarations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from parley.api.definitions import CURSOR, LIMIT, NAME, TYPE
from parley.api.operation import Answer, Call, Hints, Operation, Param, Services, page_words
from parley.api.shapes import ANSWER_FACT, EVENT, INTERACTION, RUN, RUN_EVENT_RECEIPT, page_of
from parley.definitions.model import DEFINITION_TYPES
from parley.runs.status import RUN_STATUSES

if TYPE_CHECKING:
    from parley.api.bodies import AnswerBody, CancelBody, RunDefinitionBody, SendRunEventBody

TAG: Final = "Runs"

RUN_ID = Param(
    "run_id", "path", "The run's id, a UUID (run_definition and list_runs give it).", format="uuid"
)
TYPE_FILTER = Param(
    "type",
    "query",
    "Only those of this function type.",
    enum=DEFINITION_TYPES,
    rule="type is interaction, reasoning or workflow.",
)


def run_definition(services: Services, call: Call) -> Answer:
    body: RunDefinitionBody = call.body
    started = services.runs.run_definition(
        call.ref,
        call.values["type"],
        call.values["name"],
        input_value=body.input if "input" in body.model_fields_set else {},
        run_id=body.run_id,
        started_by=call.principal.id,
    )
    return Answer(started.as_json())


def _ran(services: Services, call: Call, body: dict[str, Any]) -> str:
    named = f"The run {body.get('run_id')} of {body.get('name')!r}"
    if body.get("status") == "succeeded":
        return f"{named} succeeded; its output is in output."
    if body.get("status") == "started":
        if body.get("type") == "interaction":
            return f"{named} started and waits for its request's answer (list_interactions shows it)."
        if body.get("type") == "workflow":
            return (
                f"{named} started and waits for the runs it calls (their requests are in "
                "list_interactions; get_run of each shows its parent), or for the events its listen tasks "
                "wait for (send_run_event sends one); get_run shows how it ends."
            )
        return f"{named} started and goes on by itself; get_run shows how it ends."
    return f"{named} is {body.get('status')}."


def get_run(services: Services, call: Call) -> Answer:
    return Answer(services.runs.get_run(call.ref, call.values["run_id"]).as_json())


def _got(services: Services, call: Call, body: dict[str, Any]) -> str:
    status = body.get("status")
    rejection = body.get("rejection") or {}
    why = (
        f" ({rejection.get('reason')}: {rejection.get('detail')})"
        if status == "rejected" and rejection
        else ""
    )
    return f"The run {body.get('run_id')} of {body.get('type')} {body.get('name')!r} is {status}{why}."


def list_runs(services: Services, call: Call) -> Answer:
    page = services.runs.list_runs(
        call.ref,
        definition_type=call.values["type"],
        name=call.values["name"],
        status=call.values["status"],
        limit=call.values["limit"],
        cursor=call.values["cursor"],
    )
    return Answer(page.as_json())


def get_run_history(services: Services, call: Call) -> Answer:
    page = services.runs.get_run_history(
        call.ref, call.values["run_id"], limit=call.values["limit"], cursor=call.values["cursor"]
    )
    return Answer(page.as_json())


def cancel_run(services: Services, call: Call) -> Answer:
    body: CancelBody = call.body
    cancelled = services.runs.cancel_run(
        call.ref, call.values["run_id"], reason=body.reason, cancelled_by=call.principal.id
    )
    return Answer(cancelled.as_json())


def _cancelled(services: Services, call: Call, body: dict[str, Any]) -> str:
    return f"The run {body.get('run_id')} is cancelled: it ended {body.get('status')}."


def answer_interaction(services: Services, call: Call) -> Answer:
    body: AnswerBody = call.body
    fact = services.runs.answer_interaction(
        call.ref,
        call.values["run_id"],
        body.answer,
        claimed_for=body.claimed_for,
        answered_by=call.principal.id,
    )
    return Answer(fact.as_json())


def _answered(services: Services, call: Call, body: dict[str, Any]) -> str:
    try:
        run = services.runs.get_run(call.ref, call.values["run_id"])
    except Exception:  # the answer stands; only the words about the run are missing
        return "The request is answered."
    if run.status == "succeeded":
        return "The request is answered: the run that asked it succeeded."
    if run.status == "started" and run.type == "interaction":
        # Its wait ends now; the ending is written a moment later (the settle function, on AWS).
        return "The request is answered: the run that asked it takes the answer and ends (get_run shows how)."
    if run.status == "started":
        return "The request is answered: the run that asked it goes on with it (get_run shows how it ends)."
    return f"The request is answered: the run that asked it is {run.status}."


def list_interactions(services: Services, call: Call) -> Answer:
    page = services.runs.list_interactions(
        call.ref,
        to=call.values["to"],
        definition_type=call.values["type"],
        function=call.values["function"],
        limit=call.values["limit"],
        cursor=call.values["cursor"],
    )
    return Answer(page.as_json())


def send_run_event(services: Services, call: Call) -> Answer:
    from parley.workflow.listening import RunEvents

    body: SendRunEventBody = call.body
    receipt = RunEvents(services.runs).send(
        call.ref,
        call.values["run_id"],
        event_type=body.type,
        sent_id=body.id,
        source=body.source,
        subject=body.subject,
        data=body.data,
        principal=call.principal.id,
    )
    return Answer(receipt, status=202)


def _sent(services: Services, call: Call, body: dict[str, Any]) -> str:
    return (
        f"The run {body.get('run_id')} took the event as {body.get('event_id')} at "
        f"{body.get('received_at')}: a listen that waits for it goes on with it (get_run_history shows "
        "event_received)."
    )


OPERATIONS: Final = (
    Operation(
        name="run_definition",
        title="Run a definition",
        method="POST",
        route="/definitions/{type}/{name}/run",
        scope="playbook",
        role="write",
        tag=TAG,
        summary="Run a function with an input.",
        description=(
            "Run a function (a definition) with an input. An interaction function's run asks its "
            "request and answers started: it waits for the answer (list_interactions shows the request, "
            "answer_interaction answers it). A reasoning function's run answers once it ends (succeeded "
            "with its output) or, past the run wait, started (get_run shows how it ends). A workflow's run "
            "answers started while it waits (for the runs it calls: get_run shows their parent), or its "
            "ending when nothing waited. Give a run_id "
            "of your own to retry safely: the same id and input answer the recorded result. A rejected "
            "run answers its problem (an input that does not match is 422)."
        ),
        hints=Hints(read_only=False, open_world=True),
        invoke=run_definition,
        summarize=_ran,
        params=(TYPE, NAME),
        body_model="RunDefinitionBody",
        output=RUN,
        problems=(
            "conflict",
            "tools_called",
            "effect_unknown",
            "cancelled",
            "unanswered",
            "invalid_input",
            "unavailable",
            "tools_unfinished",
        ),
    ),
    Operation(
        name="get_run",
        title="Read a run",
        method="GET",
        route="/runs/{run_id}",
        scope="playbook",
        role="read",
        tag=TAG,
        summary="Read one run: its status, output or rejection, and its record.",
        description=(
            "Read one run: whether it started, succeeded (with its output), was rejected (with why) or "
            "failed, and what its type records of it. Use it to see how a run that answered started "
            "goes on, or how it ended."
        ),
        hints=Hints(read_only=True, idempotent=True),
        invoke=get_run,
        summarize=_got,
        params=(RUN_ID,),
        output=RUN,
    ),
    Operation(
        name="list_runs",
        title="List runs",
        method="GET",
        route="/runs",
        scope="playbook",
        role="read",
        tag=TAG,
        summary="List the playbook's runs, newest first.",
        description=(
            "List the playbook's runs, newest first, a page at a time, optionally only those of one "
            "function or status. Use it to find a run you did not keep the id of."
        ),
        hints=Hints(read_only=True, idempotent=True),
        invoke=list_runs,
        summarize=lambda services, call, body: page_words(len(body.get("runs") or []), "run", body),
        params=(
            TYPE_FILTER,
            Param("name", "query", "Only the runs of the definition of this name."),
            Param(
                "status",
                "query",
                "Only the runs with this status.",
                enum=RUN_STATUSES,
                rule=f"status is one of {', '.join(RUN_STATUSES)}.",
            ),
            LIMIT,
            CURSOR,
        ),
        output=page_of("runs", RUN),
    ),
    Operation(
        name="get_run_history",
        title="Read a run's history",
        method="GET",
        route="/runs/{run_id}/history",
        scope="playbook",
        role="read",
        tag=TAG,
        summary="List a run's events in order.",
        description=(
            "List what happened in one run, in order, a page at a time: its request, deliveries, "
            "answers, tool calls and ending. Use it to explain how a run went."
        ),
        hints=Hints(read_only=True, idempotent=True),
        invoke=get_run_history,
        summarize=lambda services, call, body: page_words(len(body.get("events") or []), "event", body),
        params=(RUN_ID, LIMIT, CURSOR),
        output=page_of("events", EVENT),
    ),
    Operation(
        name="cancel_run",
        title="Cancel a run",
        method="POST",
        route="/runs/{run_id}/cancel",
        scope="playbook",
        role="write",
        tag=TAG,
        summary="Cancel a run that goes on: it ends rejected, cancelled.",
        description=(
            "Cancel a run that has not ended: it ends rejected with the reason cancelled, and its open "
            "request is withdrawn. It cannot be undone, so use it only when a person asked. A run that "
            "has ended answers 409."
        ),
        hints=Hints(read_only=False, destructive=True),
        invoke=cancel_run,
        summarize=_cancelled,
        params=(RUN_ID,),
        body_model="CancelBody",
        output=RUN,
        problems=("conflict", "invalid_input", "unavailable"),
    ),
    Operation(
        name="answer_interaction",
        title="Answer a request",
        method="POST",
        route="/runs/{run_id}/answer",
        scope="playbook",
        role="write",
        tag=TAG,
        summary="Answer a run's open request with what a person said.",
        description=(
            "Answer the open request of a run (from list_interactions) with a person's answer or "
            "approval, in the shape of the request's answer_schema. It starts no new run: the run that "
            "asked goes on with the answer. An answer cannot be taken back, so send only what the person "
            "decided; an answer that does not match is 422, a request already answered or expired 409 "
            "or 410."
        ),
        hints=Hints(read_only=False, destructive=True),
        invoke=answer_interaction,
        summarize=_answered,
        params=(RUN_ID,),
        body_model="AnswerBody",
        body_required=True,
        output=ANSWER_FACT,
        problems=("conflict", "unanswered", "invalid_input", "unavailable"),
    ),
    Operation(
        name="list_interactions",
        title="List open requests",
        method="GET",
        route="/interactions",
        scope="playbook",
        role="read",
        tag=TAG,
        summary="List the playbook's open requests, newest first.",
        description=(
            "List the requests that wait for an answer, newest first, a page at a time: who is asked, "
            "the message, when it expires, and the answer_schema an answer must match. Use it to find "
            "what a person can answer or approve, then answer_interaction."
        ),
        hints=Hints(read_only=True, idempotent=True),
        invoke=list_interactions,
        summarize=lambda services, call, body: page_words(
            len(body.get("interactions") or []), "open request", body
        ),
        params=(
            Param("to", "query", "Only the requests to this recipient."),
            TYPE_FILTER,
            Param("function", "query", "Only the requests of the function of this name."),
            LIMIT,
            CURSOR,
        ),
        output=page_of("interactions", INTERACTION),
    ),
    Operation(
        name="send_run_event",
        title="Send an event to a workflow run",
        method="POST",
        route="/runs/{run_id}/events",
        scope="playbook",
        role="write",
        tag=TAG,
        summary="Send an event to a workflow run, for its listen tasks.",
        description=(
            "Send an event (type, optional id, source, subject and data; at most 256 KiB as JSON) to a "
            "workflow run that has not ended: a listen task waiting for it goes on with it, and an event "
            "sent before the listen waits is kept for it (64 at most). Give an id so that sending again "
            "is taken once (202 with the first event_id). A run that has ended, or that is not a "
            "workflow's, answers 409."
        ),
        hints=Hints(read_only=False, idempotent=False),
        invoke=send_run_event,
        summarize=_sent,
        params=(RUN_ID,),
        body_model="SendRunEventBody",
        body_required=True,
        status=202,
        output=RUN_EVENT_RECEIPT,
        problems=("conflict", "invalid_input", "unavailable"),
    ),
)
