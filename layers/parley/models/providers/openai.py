"""OpenAI's Responses and Chat Completions APIs, for ``openai``, ``azure`` and the gateways.

- ``openai``: ``{base}/responses`` (OpenAI API reference, "Responses"), or ``{base}/chat/completions``
  with ``OPENAI_API=chat_completions``; ``Authorization: Bearer``; base ``https://api.openai.com/v1``.
- ``azure``: the same bodies on Azure's v1 API, ``{endpoint}/openai/v1/…`` with the ``api-key`` header
  (Azure OpenAI docs, "API version lifecycle": the v1 path needs no dated ``api-version``; the model is
  the deployment's name). ``OPENAI_API_VERSION`` is sent as ``api-version`` only when it names a v1
  version (``preview``, ``latest``); a dated version belongs to the older deployments path, not used here.
- a gateway: Chat Completions at its ``base_url``, ``Authorization: Bearer`` when it has a key, and its
  headers. A JSON answer asks for ``response_format`` ``json_schema`` when the gateway takes structured
  outputs, else ``json_object`` with the schema written into the instructions (the caller checks the
  answer either way). Its allowed provider options go into the body's top level, but never one the
  runtime sets (model, messages, the token limit, the sampling settings, ``response_format``…) nor one
  outside ``allowed_provider_options``: such a field is refused as ``rejected`` before anything is sent.
- a JSON answer without a schema (the caller always gives one today) asks for ``json_object``.

Settings: the Responses API takes no ``seed`` and no ``stop`` (warnings say so). OpenAI's reasoning
models (o-series, gpt-5 except its ``-chat`` models) take no ``temperature`` or ``top_p``, except
gpt-5.1 and later with reasoning ``none``; they are dropped, with a warning. The effort is sent as
named (``reasoning.effort`` or ``reasoning_effort``); a model that does not take it rejects the call,
and the rejection says which models take which efforts.

Provider options: ``textVerbosity`` -> ``text.verbosity`` (Chat: ``verbosity``); ``reasoningMode`` ->
``reasoning.mode`` (Responses only); ``logitBias`` -> ``logit_bias`` (Chat only). What an API does not
take is left out with a warning.

Tools (OpenAI guide "Function calling"; API reference "Responses", "Chat Completions"): each step offers
the tools (Chat: ``tools: [{type: function, function: {name, description, parameters}}]``; Responses:
``tools: [{type: function, name, description, parameters, strict: false}]``), not strict, with
``tool_choice`` and ``parallel_tool_calls`` left to their defaults (auto, parallel calls allowed). A
call's ``arguments`` is a JSON string, parsed to an object (an empty string is no arguments; anything else
that is not an object is kept as ``arguments_text``). The model's message is replayed as it came:

- Chat: its calls are ``message.tool_calls`` (finish ``tool_calls``; a gateway that says ``stop`` beside
  calls is read as ``tool_calls``); ``provider_state`` is the assistant message (``role``, ``content``,
  ``tool_calls`` as received, and a gateway's ``reasoning_content`` or ``reasoning_details`` when it sent
  them), and each result follows as ``{role: tool, tool_call_id, content}``.
- Responses: its calls are the ``function_call`` output items (``call_id``, ``name``, ``arguments``);
  ``provider_state`` is the whole ``output`` (reasoning items included, which the API wants back with the
  calls), replayed as input items, each result following as ``{type: function_call_output, call_id,
  output}``. The runtime keeps no state at OpenAI (``store: false``), so a reasoning model is asked for
  ``include: ["reasoning.encrypted_content"]`` and its reasoning items travel in full; a reasoning item
  without it (a model the adapter did not take for a reasoning model) cannot be found statelessly, so it
  is left out, with the ids of the items beside it. Models that do not reason refuse that ``include``, so
  it goes only to the o-series and gpt-5 (but not its ``-chat`` models), or with a reasoning effort.

Neither API has an error flag on a result: an error's content is sent after the words ``Tool error:``.

Answers: a ``refusal`` content part (``message.refusal`` in Chat) is a refusal; Responses' ``status``
``incomplete`` with ``max_output_tokens`` -> length, with ``content_filter`` -> content_filter; ``failed``
-> error; calls are read only from an answer that finishes as ``tool_calls`` (a call cut off by the
length is no call). Errors: ``context_length_exceeded`` (and 413) -> too_long; Azure's ``content_filter``
and OpenAI's ``invalid_prompt`` refuse the prompt under policy, which is a refused answer, not a failure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from parley.models.providers.base import (
    ANSWER_TOOL,
    FinishReason,
    ListedModel,
    ModelAnswer,
    ModelCallFailed,
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
    RefusedByPolicy,
    as_int,
    error_body,
    post_json,
    refused_answer,
    resolved_credentials,
    send_json,
)

if TYPE_CHECKING:
    import httpx

DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
AZURE_V1_VERSIONS: Final = frozenset({"preview", "latest"})
_REASONING_MODEL: Final = re.compile(r"^(?:o\d+(?:$|-)|gpt-5)", re.IGNORECASE)
_CHAT_MODEL: Final = re.compile(r"-chat(?:$|-)", re.IGNORECASE)
_SAMPLING_WITH_NO_REASONING: Final = re.compile(r"^gpt-5\.(?:[1-9]|\d\d)", re.IGNORECASE)
EFFORT_HINT: Final = (
    "OpenAI's models take different efforts: the o-series low, medium and high; gpt-5 also minimal; "
    "gpt-5.1 and later also none; some later models xhigh; models that do not reason take none at all"
)
#: Body fields a gateway's options may never set: the runtime sets them, or they change what it reads.
RUNTIME_FIELDS: Final = frozenset(
    {
        "model",
        "messages",
        "max_tokens",
        "max_completion_tokens",
        "response_format",
        "temperature",
        "top_p",
        "seed",
        "stop",
        "reasoning_effort",
        "stream",
        "stream_options",
        "n",
        "tools",
        "tool_choice",
    }
)
CHAT_FINISH_REASONS: Final[Mapping[str, FinishReason]] = {
    "stop": "stop",
    "length": "length",
    "content_filter": "content_filter",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
}
INCOMPLETE_REASONS: Final[Mapping[str, FinishReason]] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}
REFUSING_CODES: Final = frozenset({"content_filter", "invalid_prompt", "ResponsibleAIPolicyViolation"})
#: What an error result's content follows: neither API has an error flag on a tool's result.
ERROR_RESULT_PREFIX: Final = "Tool error: "
#: What a gateway's assistant message may carry beside its calls that its API wants back with them
#: (DeepSeek's ``reasoning_content``, OpenRouter's ``reasoning_details``).
CHAT_REASONING_FIELDS: Final = ("reasoning_content", "reasoning_details")
ENCRYPTED_REASONING: Final = "reasoning.encrypted_content"


# --- where ------------------------------------------------------------------------------------------------


def endpoint(settings: ProviderSettings) -> tuple[str, dict[str, str]]:
    """The base URL the paths go under, and the query every call carries."""
    if settings.kind == "azure":
        base = (settings.base_url or "").rstrip("/")
        if base.endswith("/openai"):
            base += "/v1"
        elif not base.endswith("/openai/v1"):
            base += "/openai/v1"
        version = settings.api_version
        return base, ({"api-version": version} if version in AZURE_V1_VERSIONS and version else {})
    return (settings.base_url or DEFAULT_BASE_URL).rstrip("/"), {}


def credentials(settings: ProviderSettings, context: CallContext) -> Credentials:
    if settings.kind == "azure":
        return resolved_credentials(settings, context, key_header="api-key")
    return resolved_credentials(settings, context, key_header=None, bearer=True)


def uses_chat(settings: ProviderSettings) -> bool:
    return settings.kind == "gateway" or settings.api == "chat_completions"


# --- the bodies -------------------------------------------------------------------------------------------


def _sampling(settings: ProviderSettings, request: ModelRequest, warnings: list[str]) -> dict[str, float]:
    """``temperature`` and ``top_p``, unless OpenAI's reasoning model would reject them."""
    config = request.settings
    chosen = {name: value for name, value in (("temperature", config.temperature), ("top_p", config.top_p))}
    sent = {name: value for name, value in chosen.items() if value is not None}
    if settings.kind == "gateway" or not sent or not _REASONING_MODEL.match(request.model):
        return sent
    if _CHAT_MODEL.search(request.model):
        return sent
    if config.reasoning == "none" and _SAMPLING_WITH_NO_REASONING.match(request.model):
        return sent
    for name in sent:
        warnings.append(f"{name} is not sent: OpenAI's reasoning models take none")
    return {}


def _instructions_with_schema(request: ModelRequest) -> str | None:
    """A gateway without structured outputs is told the schema in words."""
    schema = json.dumps(request.output_schema, ensure_ascii=False, separators=(",", ":"))
    told = f"Answer with one JSON object, and nothing else, that matches this JSON Schema:\n{schema}"
    return f"{request.instructions}\n\n{told}" if request.instructions else told


def responses_body(settings: ProviderSettings, request: ModelRequest) -> tuple[dict[str, Any], list[str]]:
    config = request.settings
    options = request.provider_options
    warnings: list[str] = []
    body: dict[str, Any] = {
        "model": request.model,
        "input": [{"role": "user", "content": request.message}, *responses_turns(request.turns)],
        "max_output_tokens": config.max_output_tokens,
        "store": False,
    }
    if request.instructions:
        body["instructions"] = request.instructions
    if request.tools:
        body["tools"] = [_responses_tool(spec) for spec in request.tools]
    if (request.tools or request.turns) and _reasons(request):
        body["include"] = [ENCRYPTED_REASONING]
    body.update(_sampling(settings, request, warnings))
    if config.seed is not None:
        warnings.append("seed is not sent: the OpenAI Responses API takes no seed")
    if config.stop_sequences:
        warnings.append("stop_sequences are not sent: the OpenAI Responses API takes no stop sequences")
    reasoning: dict[str, Any] = {}
    if config.reasoning is not None:
        reasoning["effort"] = config.reasoning
    if "reasoningMode" in options:
        reasoning["mode"] = options["reasoningMode"]
    if reasoning:
        body["reasoning"] = reasoning
    text: dict[str, Any] = {}
    if request.output_format == "json":
        text["format"] = (
            {
                "type": "json_schema",
                "name": ANSWER_TOOL,
                "schema": dict(request.output_schema),
                "strict": True,
            }
            if request.output_schema is not None
            else {"type": "json_object"}
        )
    if "textVerbosity" in options:
        text["verbosity"] = options["textVerbosity"]
    if text:
        body["text"] = text
    if "logitBias" in options:
        warnings.append("logitBias is not sent: the OpenAI Responses API takes no logit bias")
    _unknown_options(options, {"reasoningMode", "textVerbosity", "logitBias"}, warnings)
    return body, warnings


def chat_body(settings: ProviderSettings, request: ModelRequest) -> tuple[dict[str, Any], list[str]]:
    config = request.settings
    options = request.provider_options
    warnings: list[str] = []
    gateway = settings.kind == "gateway"
    schema_in_words = gateway and not settings.structured_outputs
    native_schema = (
        request.output_format == "json" and request.output_schema is not None and not schema_in_words
    )
    instructions = request.instructions
    if request.output_format == "json" and request.output_schema is not None and schema_in_words:
        instructions = _instructions_with_schema(request)
    messages: list[dict[str, Any]] = []
    if instructions:
        messages.append({"role": "system", "content": instructions})
    messages.append({"role": "user", "content": request.message})
    messages.extend(chat_turns(request.turns))
    body: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "max_completion_tokens": config.max_output_tokens,
    }
    if request.tools:
        body["tools"] = [_chat_tool(spec) for spec in request.tools]
    body.update(_sampling(settings, request, warnings))
    if config.seed is not None:
        body["seed"] = config.seed
    if config.stop_sequences:
        body["stop"] = list(config.stop_sequences)
    if config.reasoning is not None:
        body["reasoning_effort"] = config.reasoning
    if native_schema:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": ANSWER_TOOL, "schema": dict(request.output_schema or {}), "strict": True},
        }
    elif request.output_format == "json":
        body["response_format"] = {"type": "json_object"}
    if gateway:
        body.update(_gateway_options(settings, options))
        return body, warnings
    if "textVerbosity" in options:
        body["verbosity"] = options["textVerbosity"]
    if "logitBias" in options:
        body["logit_bias"] = options["logitBias"]
    if "reasoningMode" in options:
        warnings.append(
            "reasoningMode is not sent: Chat Completions takes no reasoning mode; use the Responses API"
        )
    _unknown_options(options, {"reasoningMode", "textVerbosity", "logitBias"}, warnings)
    return body, warnings


def _gateway_options(settings: ProviderSettings, options: Mapping[str, Any]) -> Mapping[str, Any]:
    """The options as body fields, refused when the runtime sets the field or the operator did not
    allow it (the caller filters by the allowed list first; this keeps the body safe all the same)."""
    provider = settings.provider
    runtime = sorted(name for name in options if name in RUNTIME_FIELDS)
    if runtime:
        detail = (
            f"the provider options {', '.join(runtime)} are not sent to {provider}: the runtime sets them"
        )
        raise ModelCallFailed("rejected", provider, detail)
    outside = sorted(name for name in options if name not in settings.allowed_provider_options)
    if outside:
        names = ", ".join(outside)
        detail = f"the provider options {names} are not sent: the gateway {provider} does not allow them"
        raise ModelCallFailed("rejected", provider, detail)
    return options


def _unknown_options(options: Mapping[str, Any], known: set[str], warnings: list[str]) -> None:
    for name in options:
        if name not in known:
            warnings.append(f"provider option {name} is not sent: this adapter does not read it")


# --- tools and the conversation ---------------------------------------------------------------------------


def _reasons(request: ModelRequest) -> bool:
    """Whether the model is taken for a reasoning model, which alone takes encrypted reasoning."""
    named = bool(_REASONING_MODEL.match(request.model)) and not _CHAT_MODEL.search(request.model)
    return named or request.settings.reasoning is not None


def _described(spec: ToolSpec, tool: dict[str, Any]) -> dict[str, Any]:
    if spec.description:
        tool["description"] = spec.description
    tool["parameters"] = dict(spec.input_schema)
    return tool


def _chat_tool(spec: ToolSpec) -> dict[str, Any]:
    return {"type": "function", "function": _described(spec, {"name": spec.name})}


def _responses_tool(spec: ToolSpec) -> dict[str, Any]:
    return {"type": "function", **_described(spec, {"name": spec.name}), "strict": False}


def _result_text(result: ToolResult) -> str:
    return f"{ERROR_RESULT_PREFIX}{result.content}" if result.is_error else result.content


def _arguments_text(call: ToolCall) -> str:
    if call.arguments is not None:
        return json.dumps(call.arguments, ensure_ascii=False)
    return call.arguments_text or ""


def chat_turns(turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """The messages after the first user message: each assistant message as it came, each result as a
    ``tool`` message."""
    messages: list[dict[str, Any]] = []
    for turn in turns:
        if turn.role == "assistant":
            messages.append(_chat_assistant(turn))
            continue
        messages.extend(
            {"role": "tool", "tool_call_id": result.call_id, "content": _result_text(result)}
            for result in turn.results
        )
    return messages


def _chat_assistant(turn: Turn) -> dict[str, Any]:
    if isinstance(turn.provider_state, Mapping):
        return dict(turn.provider_state)
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": _arguments_text(call)},
            }
            for call in turn.tool_calls
        ]
    return message


def responses_turns(turns: Sequence[Turn]) -> list[Any]:
    """The input items after the first user message: each response's output items, then a
    ``function_call_output`` for each result."""
    items: list[Any] = []
    for turn in turns:
        if turn.role == "assistant":
            items.extend(_responses_output(turn))
            continue
        items.extend(
            {"type": "function_call_output", "call_id": result.call_id, "output": _result_text(result)}
            for result in turn.results
        )
    return items


def _responses_output(turn: Turn) -> list[Any]:
    if not isinstance(turn.provider_state, list):
        built: list[Any] = []
        if turn.text:
            built.append({"role": "assistant", "content": turn.text})
        built.extend(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": _arguments_text(call),
            }
            for call in turn.tool_calls
        )
        return built
    output: list[Any] = list(turn.provider_state)
    unfound = any(
        isinstance(item, Mapping) and item.get("type") == "reasoning" and not item.get("encrypted_content")
        for item in output
    )
    if not unfound:
        return output
    # With store false the API cannot look a reasoning item up by its id, and it wants an item that names
    # an id beside the reasoning item that came with it: both are left out.
    return [
        {key: value for key, value in item.items() if key != "id"} if isinstance(item, Mapping) else item
        for item in output
        if not (isinstance(item, Mapping) and item.get("type") == "reasoning")
    ]


def _tool_call(call_id: Any, name: Any, arguments: Any) -> ToolCall:
    """A call whose ``arguments`` is a JSON string (an object from some gateways): an object is the
    arguments, an empty string none, anything else is kept as text."""
    ident = call_id if isinstance(call_id, str) else ""
    called = name if isinstance(name, str) else ""
    if isinstance(arguments, Mapping):
        return ToolCall(ident, called, dict(arguments))
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    if not text.strip():
        return ToolCall(ident, called, {})
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return ToolCall(ident, called, parsed)
    return ToolCall(ident, called, None, arguments_text=text)


# --- the answers ------------------------------------------------------------------------------------------


def read_responses(answer: Mapping[str, Any], warnings: list[str]) -> ModelAnswer:
    texts: list[str] = []
    refusal = False
    calls: list[ToolCall] = []
    given = answer.get("output")
    output: list[Any] = given if isinstance(given, list) else []
    for item in output:
        if not isinstance(item, Mapping):
            continue
        if item.get("type") == "function_call":
            calls.append(_tool_call(item.get("call_id"), item.get("name"), item.get("arguments")))
        if item.get("type") != "message":
            continue
        for part in item.get("content") or []:
            if not isinstance(part, Mapping):
                continue
            if part.get("type") == "output_text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif part.get("type") == "refusal":
                refusal = True
    status = answer.get("status") if isinstance(answer.get("status"), str) else None
    incomplete = answer.get("incomplete_details")
    reason = incomplete.get("reason") if isinstance(incomplete, Mapping) else None
    raw = reason if status == "incomplete" and isinstance(reason, str) else status
    finish: FinishReason
    if refusal:
        finish = "content_filter"
    elif status == "completed":
        finish = "tool_calls" if calls else "stop"
    elif status == "incomplete":
        finish = INCOMPLETE_REASONS.get(str(reason), "other")
    elif status == "failed":
        finish = "error"
    else:
        finish = "other"
    return ModelAnswer(
        text="".join(texts),
        finish_reason=finish,
        raw_finish_reason=raw,
        usage=_usage(answer.get("usage"), "input_tokens", "output_tokens"),
        response_id=_text(answer.get("id")),
        model_answered=_text(answer.get("model")),
        warnings=capped_warnings(warnings),
        refused=refusal,
        tool_calls=tuple(calls) if finish == "tool_calls" else (),
        provider_state=list(output) if finish == "tool_calls" and calls else None,
    )


def read_chat(answer: Mapping[str, Any], warnings: list[str]) -> ModelAnswer:
    choices = answer.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    choice: Mapping[str, Any] = first if isinstance(first, Mapping) else {}
    given = choice.get("message")
    message: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    refusal = isinstance(message.get("refusal"), str) and bool(message["refusal"])
    raw = _text(choice.get("finish_reason"))
    finish: FinishReason = "content_filter" if refusal else CHAT_FINISH_REASONS.get(raw or "", "other")
    given_calls = message.get("tool_calls")
    sent_calls: list[Any] = given_calls if isinstance(given_calls, list) else []
    calls = [
        _tool_call(call.get("id"), function.get("name"), function.get("arguments"))
        for call in sent_calls
        if isinstance(call, Mapping)
        and call.get("type", "function") == "function"
        and isinstance(function := call.get("function"), Mapping)
    ]
    if calls and finish in ("stop", "other"):
        finish = "tool_calls"
    if finish != "tool_calls":
        calls = []
    content = message.get("content")
    state: dict[str, Any] | None = None
    if calls:
        state = {"role": "assistant", "content": content, "tool_calls": sent_calls}
        state.update({name: message[name] for name in CHAT_REASONING_FIELDS if message.get(name)})
    return ModelAnswer(
        text=content if isinstance(content, str) else "",
        finish_reason=finish,
        raw_finish_reason=raw,
        usage=_usage(answer.get("usage"), "prompt_tokens", "completion_tokens"),
        response_id=_text(answer.get("id")),
        model_answered=_text(answer.get("model")),
        warnings=capped_warnings(warnings),
        refused=refusal,
        tool_calls=tuple(calls),
        provider_state=state,
    )


def _usage(usage: Any, input_name: str, output_name: str) -> Usage:
    """Both APIs count cached input inside the input and reasoning inside the output; the record keeps
    them apart."""
    if not isinstance(usage, Mapping):
        return Usage()
    prefix = input_name.removesuffix("_tokens")
    output_prefix = output_name.removesuffix("_tokens")
    details_in = usage.get(f"{prefix}_tokens_details")
    details_out = usage.get(f"{output_prefix}_tokens_details")
    total_input = as_int(usage.get(input_name))
    cached = as_int(details_in.get("cached_tokens")) if isinstance(details_in, Mapping) else None
    total_output = as_int(usage.get(output_name))
    reasoning = as_int(details_out.get("reasoning_tokens")) if isinstance(details_out, Mapping) else None
    return Usage(
        input_uncached=total_input - cached
        if total_input is not None and cached is not None
        else total_input,
        input_cache_read=cached,
        input_cache_write=None,
        output_text=total_output - reasoning
        if total_output is not None and reasoning is not None
        else total_output,
        output_reasoning=reasoning,
        total=as_int(usage.get("total_tokens")),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def read_error(response: httpx.Response) -> ProviderError:
    """``{"error": {"message", "type", "param", "code"}}`` (Azure adds ``innererror``)."""
    error = error_body(response).get("error")
    if not isinstance(error, Mapping):
        return ProviderError()
    message = _text(error.get("message"))
    code = _text(error.get("code")) or _text(error.get("type"))
    inner = error.get("innererror")
    inner_code = _text(inner.get("code")) if isinstance(inner, Mapping) else None
    if response.status_code == 400 and (code in REFUSING_CODES or inner_code in REFUSING_CODES):
        raise RefusedByPolicy(inner_code or code or "content_filter")
    param = _text(error.get("param")) or ""
    effort = param.startswith("reasoning") or "reasoning" in (message or "").lower()
    return ProviderError(
        message=message,
        code=code,
        too_long=code in ("context_length_exceeded", "request_too_large"),
        hint=EFFORT_HINT if effort else None,
    )


# --- the call ---------------------------------------------------------------------------------------------


def call(settings: ProviderSettings, request: ModelRequest, context: CallContext) -> ModelAnswer:
    chat = uses_chat(settings)
    body, warnings = chat_body(settings, request) if chat else responses_body(settings, request)
    base, params = endpoint(settings)
    url = f"{base}/chat/completions" if chat else f"{base}/responses"
    sent_with = credentials(settings, context)
    deadline = Deadline.after(request.timeout_seconds, context.clock)
    try:
        answer = post_json(
            context,
            deadline,
            url,
            provider=settings.provider,
            credentials=sent_with,
            body=body,
            read_error=read_error,
            params=params,
        )
    except RefusedByPolicy as refusal:
        return refused_answer(refusal, warnings)
    return read_chat(answer, warnings) if chat else read_responses(answer, warnings)


def list_models(
    settings: ProviderSettings, context: CallContext, timeout_seconds: float
) -> list[ListedModel]:
    """``GET {base}/models`` ("Models", "List models"): ``{data: [{id, created, owned_by}]}``."""
    base, params = endpoint(settings)
    sent_with = credentials(settings, context)
    deadline = Deadline.after(timeout_seconds, context.clock)
    with context.http_client() as http:
        page = with_retries(
            lambda remaining: send_json(
                http,
                "GET",
                f"{base}/models",
                provider=settings.provider,
                remaining=remaining,
                headers=sent_with.headers,
                params=params,
                read_error=read_error,
                secrets=sent_with.secrets,
            ),
            provider=settings.provider,
            deadline=deadline,
            sleep=context.sleep,
        )
    listed: list[ListedModel] = []
    for entry in page.get("data") or []:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str):
            continue
        owner = entry.get("owned_by")
        listed.append(
            ListedModel(
                id=entry["id"],
                created=as_int(entry.get("created")) or as_int(entry.get("created_at")),
                owned_by=owner if isinstance(owner, str) else settings.provider,
                name=_text(entry.get("name")),
                context_window=as_int(entry.get("context_window")) or as_int(entry.get("context_length")),
                max_tokens=as_int(entry.get("max_tokens")) or as_int(entry.get("max_output_tokens")),
            )
        )
    return listed
