"""Anthropic's Messages API, directly (``anthropic``), on Vertex AI (``vertex-anthropic``, rawPredict)
and on Bedrock (``bedrock-anthropic``, InvokeModel). The three share the body and the answer.

The body (Messages API reference, "Create a Message"): ``system``, one user message, ``max_tokens``,
``temperature``, ``top_p``, ``stop_sequences``. Anthropic takes no seed (a warning says so).

Reasoning (Anthropic docs, "Extended thinking", "Adaptive thinking", "Effort"):

- Claude 4.6 and later think adaptively: an effort is sent as ``thinking: {type: adaptive}`` with
  ``output_config: {effort}`` — ``minimal`` as ``low``, and ``xhigh`` as ``xhigh`` from 4.7 on, ``max``
  on 4.6. Older models take a thinking budget: ``minimal`` and ``low`` 1,024 tokens, ``medium`` 4,096,
  ``high`` 16,384, ``xhigh`` 32,000, capped below ``max_tokens``; a ``max_tokens`` that leaves no room
  for the 1,024-token minimum sends no thinking. ``none`` sends no thinking.
- ``provider_options.thinking`` (``type``, ``budgetTokens``, ``display``) wins over the effort's
  thinking; it is sent as ``type``, ``budget_tokens`` and ``display``.
- While thinking, Anthropic takes no ``temperature`` and no ``top_p``: they are dropped, with a warning.

A JSON answer is the input of a forced tool, ``answer``, whose ``input_schema`` is the output schema
(Anthropic docs, "Tool use", "Forcing tool use"). Anthropic refuses thinking while a tool is forced, so a
JSON answer is written without thinking (a warning says so).

Tools (Anthropic docs, "Tool use", "Extended thinking with tool use"): the tools offered are sent as
``tools: [{name, description, input_schema}]`` with ``tool_choice: {type: auto}``; the model's
``tool_use`` blocks are its calls (:class:`ToolCall`, ``input`` as the arguments). Its message's whole
``content`` list (text, ``thinking`` with its ``signature``, ``redacted_thinking``, ``tool_use``) is the
answer's ``provider_state``, replayed unchanged as the assistant message of the next step, since a
thinking block must come back exactly as it was signed; the results follow as one user message of
``tool_result`` blocks (``tool_use_id``, ``content``, and ``is_error: true`` for an error). A JSON answer
with tools offers ``answer`` among them with ``tool_choice: {type: any}`` (the answer tool cannot be forced
while other tools are offered): the model calls real tools or ``answer``, and an ``answer`` call ends the
step as the JSON answer (any call beside it is dropped, with a warning). A step with no tools offered
sends no ``tools`` and no ``tool_choice`` even when the conversation holds ``tool_use`` and
``tool_result`` blocks: Anthropic has required no tool definitions for them since 27 February 2025 (API
release notes, which also added ``tool_choice: {type: none}``); a JSON answer then forces ``answer`` as
without tools.

Finish reasons: ``end_turn`` and ``stop_sequence`` -> stop; ``max_tokens`` and
``model_context_window_exceeded`` -> length; ``tool_use`` -> stop when the answer tool wrote
the answer, else tool_calls (the only finish that carries ``tool_calls``); ``refusal`` ->
content_filter, refused; ``pause_turn`` and others -> other.
Usage: ``input_tokens`` is already uncached; ``output_tokens`` includes any thinking, which Anthropic
does not count apart (so reasoning is unknown).

Errors: 413 and ``request_too_large``, and a 400 whose message says the prompt is too long (Anthropic
says so in words only, "Errors") -> too_long; otherwise as ``transport`` decides from the status.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from parley.models.providers.base import (
    ANSWER_TOOL,
    FinishReason,
    ListedModel,
    ModelAnswer,
    ModelRequest,
    ProviderSettings,
    ToolCall,
    ToolResult,
    ToolSpec,
    Turn,
    Usage,
    capped_warnings,
)
from parley.models.providers.context import CallContext
from parley.models.providers.retrying import Deadline, with_retries
from parley.models.providers.transport import (
    Credentials,
    ProviderError,
    Secrets,
    as_int,
    error_body,
    known_sum,
    post_json,
    resolved_credentials,
    send_json,
)

if TYPE_CHECKING:
    import httpx

DEFAULT_BASE_URL: Final = "https://api.anthropic.com"
API_VERSION: Final = "2023-06-01"
BEDROCK_VERSION: Final = "bedrock-2023-05-31"
VERTEX_VERSION: Final = "vertex-2023-10-16"

EFFORT_BUDGETS: Final[Mapping[str, int]] = {
    "minimal": 1024,
    "low": 1024,
    "medium": 4096,
    "high": 16384,
    "xhigh": 32000,
}
MIN_THINKING_BUDGET: Final = 1024
#: The first versions that think adaptively, and that take the effort ``xhigh``.
ADAPTIVE_FROM: Final = (4, 6)
XHIGH_FROM: Final = (4, 7)
_VERSION: Final = re.compile(r"claude-(?:[a-z]+-)?(\d+)(?:[-.](\d{1,2}))?(?!\d)")

FINISH_REASONS: Final[Mapping[str, FinishReason]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    "pause_turn": "other",
}
TOO_LONG_WORDS: Final = ("prompt is too long", "exceed context limit", "too many tokens")
ANSWER_DESCRIPTION: Final = "Write your whole answer as this tool's input."
ANSWER_AMONG_TOOLS_DESCRIPTION: Final = (
    "Call this tool to give your answer, once you need no other tool: write your whole answer as its input."
)


# --- the body ---------------------------------------------------------------------------------------------


def model_version(model: str) -> tuple[int, int] | None:
    """Claude's version from a model id (``claude-sonnet-4-5``, ``us.anthropic.claude-3-7-sonnet…``,
    ``claude-opus-4-6@…``); ``None`` when the id names none."""
    match = _VERSION.search(model)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


def thinking_fields(
    model: str, request: ModelRequest, warnings: list[str], *, forced_tool: bool
) -> dict[str, Any]:
    """``thinking`` and ``output_config`` for the effort and ``provider_options.thinking``."""
    settings = request.settings
    fields: dict[str, Any] = {}
    version = model_version(model)
    adaptive = version is not None and version >= ADAPTIVE_FROM
    effort = settings.reasoning
    if effort is not None and effort != "none":
        if adaptive:
            fields["output_config"] = {"effort": _adaptive_effort(effort, version, warnings)}
            fields["thinking"] = {"type": "adaptive"}
        else:
            budget = _budget(effort, settings.max_output_tokens, warnings)
            if budget is not None:
                fields["thinking"] = {"type": "enabled", "budget_tokens": budget}
    given = request.provider_options.get("thinking")
    if isinstance(given, Mapping):
        if "thinking" in fields and not adaptive:
            warnings.append(
                "the reasoning effort is not sent as a thinking budget: provider_options thinking sets it"
            )
        fields["thinking"] = _thinking_option(given)
    thinks = fields.get("thinking", {}).get("type") in ("enabled", "adaptive")
    if thinks and forced_tool:
        del fields["thinking"]
        warnings.append(
            "thinking is not sent: Anthropic models cannot think while they write a JSON answer as a tool"
        )
    elif thinks:
        for name in ("temperature", "top_p"):
            if getattr(settings, name) is not None:
                warnings.append(f"{name} is not sent: Anthropic models take none while they think")
    return fields


def _adaptive_effort(effort: str, version: tuple[int, int] | None, warnings: list[str]) -> str:
    if effort == "minimal":
        warnings.append("reasoning minimal is sent as effort low: Anthropic has no lower effort")
        return "low"
    if effort == "xhigh" and (version is None or version < XHIGH_FROM):
        warnings.append("reasoning xhigh is sent as effort max: this Claude model has no xhigh")
        return "max"
    return effort


def _budget(effort: str, max_tokens: int, warnings: list[str]) -> int | None:
    budget = EFFORT_BUDGETS[effort]
    ceiling = max_tokens - 1
    if ceiling < MIN_THINKING_BUDGET:
        warnings.append(
            f"reasoning is not sent: max_output_tokens {max_tokens} leaves no room for Anthropic's "
            f"{MIN_THINKING_BUDGET}-token minimum thinking budget"
        )
        return None
    if budget > ceiling:
        warnings.append(
            f"the thinking budget for reasoning {effort} is cut to {ceiling} tokens, below max_output_tokens"
        )
        return ceiling
    return budget


def _thinking_option(given: Mapping[str, Any]) -> dict[str, Any]:
    names = {"type": "type", "budgetTokens": "budget_tokens", "display": "display"}
    return {names[key]: value for key, value in given.items() if key in names}


def messages_body(request: ModelRequest) -> tuple[dict[str, Any], list[str]]:
    """The Messages body without ``model`` (Bedrock and Vertex take it in the URL), and its warnings."""
    settings = request.settings
    warnings: list[str] = []
    json_answer = request.output_format == "json" and request.output_schema is not None
    body: dict[str, Any] = {
        "max_tokens": settings.max_output_tokens,
        "messages": [{"role": "user", "content": request.message}, *conversation(request.turns)],
    }
    if request.instructions:
        body["system"] = request.instructions
    # A JSON answer forces a tool call (the answer tool alone, or any tool), which rules out thinking.
    thinking = thinking_fields(request.model, request, warnings, forced_tool=json_answer)
    thinks = thinking.get("thinking", {}).get("type") in ("enabled", "adaptive")
    if not thinks:
        if settings.temperature is not None:
            body["temperature"] = settings.temperature
        if settings.top_p is not None:
            body["top_p"] = settings.top_p
    if settings.stop_sequences:
        body["stop_sequences"] = list(settings.stop_sequences)
    if settings.seed is not None:
        warnings.append("seed is not sent: Anthropic models take no seed")
    for name in request.provider_options:
        if name != "thinking":
            warnings.append(f"provider option {name} is not sent: Anthropic models read only thinking")
    body.update(thinking)
    tools = [tool_definition(spec) for spec in request.tools]
    if json_answer:
        tools.append(
            {
                "name": ANSWER_TOOL,
                "description": ANSWER_AMONG_TOOLS_DESCRIPTION if request.tools else ANSWER_DESCRIPTION,
                "input_schema": dict(request.output_schema or {}),
            }
        )
        body["tools"] = tools
        body["tool_choice"] = {"type": "any"} if request.tools else {"type": "tool", "name": ANSWER_TOOL}
    elif tools:
        body["tools"] = tools
        body["tool_choice"] = {"type": "auto"}
    return body, warnings


def tool_definition(spec: ToolSpec) -> dict[str, Any]:
    """A tool as Messages takes it; a tool without a description is sent without one."""
    tool: dict[str, Any] = {"name": spec.name}
    if spec.description:
        tool["description"] = spec.description
    tool["input_schema"] = dict(spec.input_schema)
    return tool


def conversation(turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """The messages after the first user message: each assistant message as it came (its
    ``provider_state``), each turn of results as one user message of ``tool_result`` blocks."""
    messages: list[dict[str, Any]] = []
    for turn in turns:
        if turn.role == "assistant":
            messages.append({"role": "assistant", "content": _assistant_content(turn)})
        else:
            messages.append({"role": "user", "content": [_tool_result(result) for result in turn.results]})
    return messages


def _assistant_content(turn: Turn) -> list[Any]:
    """The blocks the model wrote, unchanged; rebuilt from the text and the calls only for a turn kept
    without them (which can carry no thinking)."""
    if isinstance(turn.provider_state, list):
        return list(turn.provider_state)
    content: list[Any] = []
    if turn.text:
        content.append({"type": "text", "text": turn.text})
    content.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.arguments or {})}
        for call in turn.tool_calls
    )
    return content


def _tool_result(result: ToolResult) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.call_id}
    if result.content:
        block["content"] = result.content
    if result.is_error:
        block["is_error"] = True
    return block


# --- the answer -------------------------------------------------------------------------------------------


def read_answer(
    answer: Mapping[str, Any], warnings: list[str], *, response_id: str | None = None
) -> ModelAnswer:
    """A Messages response as a :class:`ModelAnswer`; ``response_id`` replaces the message id (Bedrock)."""
    texts: list[str] = []
    tool_input: Any = None
    answered = False
    calls: list[ToolCall] = []
    content = answer.get("content")
    blocks: list[Any] = content if isinstance(content, list) else []
    for block in blocks:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "tool_use":
            if block.get("name") == ANSWER_TOOL:
                if not answered:
                    answered, tool_input = True, block.get("input")
            else:
                calls.append(_tool_call(block))
    raw = answer.get("stop_reason")
    raw_reason = raw if isinstance(raw, str) else None
    finish: FinishReason
    if raw_reason == "tool_use":
        finish = "stop" if answered else "tool_calls"
    else:
        finish = FINISH_REASONS.get(raw_reason or "", "other")
    if answered and calls:
        names = ", ".join(dict.fromkeys(call.name for call in calls))
        warnings.append(
            f"the model called {names} beside its answer: the answer ends the run, the calls are not made"
        )
    if finish != "tool_calls":
        calls = []
    text = json.dumps(tool_input, ensure_ascii=False) if answered else "".join(texts)
    model = answer.get("model")
    own_id = answer.get("id")
    return ModelAnswer(
        text=text,
        finish_reason=finish,
        raw_finish_reason=raw_reason,
        usage=read_usage(answer.get("usage")),
        response_id=response_id if response_id is not None else own_id if isinstance(own_id, str) else None,
        model_answered=model if isinstance(model, str) else None,
        warnings=capped_warnings(warnings),
        refused=raw_reason == "refusal",
        tool_calls=tuple(calls),
        provider_state=list(blocks) if calls else None,
    )


def _tool_call(block: Mapping[str, Any]) -> ToolCall:
    """A ``tool_use`` block: its ``input`` is the arguments (always an object, as Anthropic documents;
    anything else is kept as text for the caller to refuse)."""
    given = block.get("input")
    call_id, name = block.get("id"), block.get("name")
    arguments = dict(given) if isinstance(given, Mapping) else None
    return ToolCall(
        id=call_id if isinstance(call_id, str) else "",
        name=name if isinstance(name, str) else "",
        arguments=arguments,
        arguments_text=None if arguments is not None else json.dumps(given, ensure_ascii=False),
    )


def read_usage(usage: Any) -> Usage:
    if not isinstance(usage, Mapping):
        return Usage()
    uncached = as_int(usage.get("input_tokens"))
    read = as_int(usage.get("cache_read_input_tokens"))
    write = as_int(usage.get("cache_creation_input_tokens"))
    output = as_int(usage.get("output_tokens"))
    return Usage(
        input_uncached=uncached,
        input_cache_read=read,
        input_cache_write=write,
        output_text=output,
        output_reasoning=None,
        total=known_sum([uncached, read, write, output]),
    )


def read_error(response: httpx.Response) -> ProviderError:
    """Anthropic's ``{"type": "error", "error": {"type", "message"}}``, or Google's ``{"error":
    {"code", "message", "status"}}`` in front of Vertex."""
    error = error_body(response).get("error")
    if not isinstance(error, Mapping):
        return ProviderError()
    message = error.get("message") if isinstance(error.get("message"), str) else None
    code = error.get("type") or error.get("status")
    lowered = (message or "").lower()
    too_long = code == "request_too_large" or any(words in lowered for words in TOO_LONG_WORDS)
    return ProviderError(message=message, code=str(code) if code else None, too_long=too_long)


# --- the calls --------------------------------------------------------------------------------------------


def call(settings: ProviderSettings, request: ModelRequest, context: CallContext) -> ModelAnswer:
    if settings.kind == "bedrock-anthropic":
        return _call_bedrock(settings, request, context)
    body, warnings = messages_body(request)
    deadline = Deadline.after(request.timeout_seconds, context.clock)
    if settings.kind == "vertex-anthropic":
        from parley.models.providers.vertex_auth import access_token, publisher_model_url

        url = publisher_model_url(settings, "anthropic", request.model, "rawPredict")
        body["anthropic_version"] = VERTEX_VERSION
        token = access_token(settings, context)
        credentials = Credentials({"Authorization": f"Bearer {token}"}, Secrets((token,)))
        headers = {}
    else:
        base = (settings.base_url or DEFAULT_BASE_URL).rstrip("/")
        url = f"{base}/v1/messages"
        body = {"model": request.model, **body}
        credentials = _credentials(settings, context)
        headers = {"anthropic-version": API_VERSION}
    answer = post_json(
        context,
        deadline,
        url,
        provider=settings.provider,
        credentials=credentials,
        body=body,
        read_error=read_error,
        headers=headers,
    )
    return read_answer(answer, warnings)


def _credentials(settings: ProviderSettings, context: CallContext) -> Credentials:
    """``x-api-key``; an ``ANTHROPIC_AUTH_TOKEN`` arrives as an ``Authorization`` header."""
    return resolved_credentials(settings, context, key_header="x-api-key")


def _call_bedrock(settings: ProviderSettings, request: ModelRequest, context: CallContext) -> ModelAnswer:
    from parley.models.providers.bedrock_runtime import calling_aws, request_id, runtime_client

    body, warnings = messages_body(request)
    body = {"anthropic_version": BEDROCK_VERSION, **body}
    deadline = Deadline.after(request.timeout_seconds, context.clock)
    client = runtime_client(settings, context, request.timeout_seconds)
    payload = json.dumps(body).encode()

    def attempt(remaining: float) -> dict[str, Any]:
        response = calling_aws(
            settings.provider,
            lambda: client.invoke_model(
                modelId=request.model, body=payload, contentType="application/json", accept="application/json"
            ),
        )
        answer = json.loads(response["body"].read())
        return {"answer": answer, "request_id": request_id(response)}

    result = with_retries(attempt, provider=settings.provider, deadline=deadline, sleep=context.sleep)
    return read_answer(result["answer"], warnings, response_id=result["request_id"])


# --- the list of models -----------------------------------------------------------------------------------


def list_models(
    settings: ProviderSettings, context: CallContext, timeout_seconds: float
) -> list[ListedModel]:
    """Anthropic's ``GET /v1/models``, page after page ("Models API"); on Bedrock, its Anthropic
    foundation models; Vertex lists no publisher models in its v1 API, so nothing for ``vertex-anthropic``."""
    if settings.kind == "bedrock-anthropic":
        from parley.models.providers.bedrock_runtime import list_foundation_models

        return list_foundation_models(settings, context, timeout_seconds)
    if settings.kind == "vertex-anthropic":
        return []
    base = (settings.base_url or DEFAULT_BASE_URL).rstrip("/")
    credentials = _credentials(settings, context)
    headers = {**credentials.headers, "anthropic-version": API_VERSION}
    deadline = Deadline.after(timeout_seconds, context.clock)
    listed: list[ListedModel] = []
    params: dict[str, str] = {"limit": "1000"}
    with context.http_client() as http:

        def read_page(remaining: float) -> dict[str, Any]:
            return send_json(
                http,
                "GET",
                f"{base}/v1/models",
                provider=settings.provider,
                remaining=remaining,
                headers=headers,
                params=params,
                read_error=read_error,
                secrets=credentials.secrets,
            )

        while True:
            page = with_retries(read_page, provider=settings.provider, deadline=deadline, sleep=context.sleep)
            listed.extend(_listed(entry) for entry in page.get("data") or [] if isinstance(entry, Mapping))
            last = page.get("last_id")
            if not page.get("has_more") or not isinstance(last, str):
                return [entry for entry in listed if entry.id]
            params = {"limit": "1000", "after_id": last}


def _listed(entry: Mapping[str, Any]) -> ListedModel:
    name = entry.get("display_name")
    return ListedModel(
        id=str(entry.get("id") or ""),
        created=_epoch(entry.get("created_at")),
        owned_by="anthropic",
        name=name if isinstance(name, str) else None,
        context_window=as_int(entry.get("max_input_tokens")),
        max_tokens=as_int(entry.get("max_tokens")),
    )


def _epoch(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None
