"""Gemini's ``generateContent``, on the Gemini API (``google``) and on Vertex AI (``vertex``).

- ``google``: ``POST https://generativelanguage.googleapis.com/v1beta/models/{model}:generateContent``
  with the ``x-goog-api-key`` header (Gemini API reference, "Generating content").
- ``vertex``: the same body at ``…/v1/projects/{project}/locations/{location}/publishers/google/models/
  {model}:generateContent`` with a google-auth bearer token (``vertex_auth``).

The body: ``systemInstruction``, one user turn in ``contents``, and ``generationConfig`` with
``maxOutputTokens``, ``temperature``, ``topP``, ``seed``, ``stopSequences``; a JSON answer asks for
``responseMimeType: application/json`` with the schema as ``responseJsonSchema`` (Gemini docs,
"Structured output": JSON Schema, not the older OpenAPI subset of ``responseSchema``).

Reasoning (Gemini docs, "Thinking"): Gemini 3 takes ``thinkingLevel`` — the effort as named, ``none`` as
``minimal`` (it cannot stop thinking) and ``xhigh`` as ``high``, with warnings. Other models take
``thinkingBudget``: ``none`` 0 (on 2.5 Pro, which cannot stop thinking, its least, 128), ``minimal`` 512,
``low`` 1,024, ``medium`` 8,192, ``high`` 24,576, ``xhigh`` 32,768 (24,576 on models other than Pro, their
most). ``provider_options.thinkingConfig`` is sent as written, instead. ``safetySettings`` is sent as
written; ``threshold`` sets that threshold for every harm category ``safetySettings`` leaves out.

Tools (Gemini docs, "Function calling"): the tools offered go as ``tools: [{functionDeclarations: [{name,
description, parametersJsonSchema}]}]`` — the JSON Schema field, so each input schema goes unchanged (not
the OpenAPI subset of ``parameters``) — with ``toolConfig.functionCallingConfig.mode`` ``AUTO``. The
candidate's ``functionCall`` parts (``name``, ``args``, ``id`` when Gemini gives one) become the answer's
calls; a call without an id gets ``call_<step>_<n>`` (the step's number in the run, the call's in the
answer), which is never sent back. The answer's ``provider_state`` is the candidate's ``content`` as it
came, every part with its ``thoughtSignature``: the next step sends it back unchanged as the ``model``
turn, then the results as one ``user`` turn of ``functionResponse`` parts ``{name, id (only for a call
Gemini gave an id), response: {output: text}}`` (``{error: text}`` for an error), the keys
``FunctionResponse.response`` documents. A JSON answer and function calling together are accepted only by
Gemini 3 ("Structured outputs with tools"); older models reject them ("Function calling with a response
mime type: 'application/json' is unsupported"), so for those a step that offers tools asks for no JSON
(a warning says so) and only the run's last step, without tools, asks for it with the schema.

Finish reasons: ``STOP`` -> stop (tool_calls when the candidate calls functions); ``MAX_TOKENS`` ->
length; ``SAFETY``, ``PROHIBITED_CONTENT``, ``BLOCKLIST``, ``SPII`` and ``IMAGE_SAFETY`` -> content_filter
and refused; ``RECITATION`` -> content_filter (not a refusal: the model stopped quoting);
``MALFORMED_FUNCTION_CALL`` -> error; others -> other. A prompt blocked outright
(``promptFeedback.blockReason``, no candidate) is refused.

Errors: ``API_KEY_INVALID`` comes as HTTP 400 but means the credentials; an ``INVALID_ARGUMENT`` that
says the input has too many tokens -> too_long (Gemini says so in words only); a 429's
``google.rpc.RetryInfo.retryDelay`` gives the seconds to wait.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from parley.models.providers.base import (
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
    post_json,
    resolved_credentials,
    send_json,
)

if TYPE_CHECKING:
    import httpx

DEFAULT_BASE_URL: Final = "https://generativelanguage.googleapis.com"
THINKING_BUDGETS: Final[Mapping[str, int]] = {
    "none": 0,
    "minimal": 512,
    "low": 1024,
    "medium": 8192,
    "high": 24576,
    "xhigh": 32768,
}
MOST_BUDGET_PRO: Final = 32768
MOST_BUDGET: Final = 24576
LEAST_BUDGET_PRO: Final = 128
HARM_CATEGORIES: Final = (
    "HARM_CATEGORY_HARASSMENT",
    "HARM_CATEGORY_HATE_SPEECH",
    "HARM_CATEGORY_SEXUALLY_EXPLICIT",
    "HARM_CATEGORY_DANGEROUS_CONTENT",
)
FINISH_REASONS: Final[Mapping[str, FinishReason]] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "BLOCKLIST": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "MALFORMED_FUNCTION_CALL": "error",
}
REFUSING_REASONS: Final = frozenset({"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY"})
CREDENTIAL_REASONS: Final = frozenset({"API_KEY_INVALID", "API_KEY_EXPIRED"})
TOO_LONG_WORDS: Final = ("exceeds the maximum number of tokens", "input token count", "too long")
_VERSION: Final = re.compile(r"gemini-(\d+)(?:\.(\d+))?")
_DELAY: Final = re.compile(r"^(\d+(?:\.\d+)?)s$")
#: The id made for a call Gemini gave none: ``call_<step>_<n>``.
_MADE_ID: Final = re.compile(r"^call_\d+_\d+$")


# --- the body ---------------------------------------------------------------------------------------------


def _version(model: str) -> tuple[int, int] | None:
    match = _VERSION.search(model)
    return (int(match.group(1)), int(match.group(2) or 0)) if match else None


def thinking_config(model: str, effort: str, warnings: list[str]) -> dict[str, Any] | None:
    version = _version(model)
    if version is not None and version >= (3, 0):
        if effort == "none":
            warnings.append("reasoning none is sent as thinkingLevel minimal: Gemini 3 models always think")
            return {"thinkingLevel": "minimal"}
        if effort == "xhigh":
            warnings.append("reasoning xhigh is sent as thinkingLevel high: Gemini has no higher level")
            return {"thinkingLevel": "high"}
        return {"thinkingLevel": effort}
    if version is not None and version < (2, 5):
        warnings.append(f"reasoning is not sent: {model} does not think")
        return None
    pro = "-pro" in model
    budget = THINKING_BUDGETS[effort]
    if budget == 0 and pro:
        warnings.append(
            f"reasoning none is sent as the least thinking budget, {LEAST_BUDGET_PRO}: {model} thinks"
        )
        budget = LEAST_BUDGET_PRO
    most = MOST_BUDGET_PRO if pro else MOST_BUDGET
    if budget > most:
        warnings.append(f"the thinking budget for reasoning {effort} is cut to {most}, the most {model} has")
        budget = most
    return {"thinkingBudget": budget}


def _safety_settings(options: Mapping[str, Any]) -> list[Any] | None:
    given = options.get("safetySettings")
    settings: list[Any] = list(given) if isinstance(given, list) else []
    threshold = options.get("threshold")
    if threshold is not None:
        named = {entry.get("category") for entry in settings if isinstance(entry, Mapping)}
        settings += [{"category": c, "threshold": threshold} for c in HARM_CATEGORIES if c not in named]
    return settings or None


def json_with_tools(model: str) -> bool:
    """Whether the model answers in JSON while it may call functions: Gemini 3 and later."""
    version = _version(model)
    return version is not None and version >= (3, 0)


def declaration(tool: ToolSpec) -> dict[str, Any]:
    schema = dict(tool.input_schema)
    return {"name": tool.name, "description": tool.description, "parametersJsonSchema": schema}


def contents(request: ModelRequest) -> list[dict[str, Any]]:
    """The user's message, then each turn: the model's content as it came, and its calls' results."""
    sent: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": request.message}]}]
    given_ids: set[str] = set()
    for turn in request.turns:
        if turn.role == "assistant":
            content = model_content(turn)
            given_ids = {
                part["functionCall"]["id"]
                for part in content["parts"]
                if isinstance(part, Mapping)
                and isinstance(part.get("functionCall"), Mapping)
                and isinstance(part["functionCall"].get("id"), str)
            }
            sent.append(content)
        elif turn.results:
            sent.append(
                {"role": "user", "parts": [function_response(result, given_ids) for result in turn.results]}
            )
    return sent


def model_content(turn: Turn) -> dict[str, Any]:
    """The model's turn: its ``content`` from ``provider_state``, unchanged; else rebuilt from the text and
    the calls (without thought signatures, which only the content holds)."""
    state = turn.provider_state
    if isinstance(state, Mapping) and isinstance(state.get("parts"), list):
        return {**state, "role": "model"}
    parts: list[dict[str, Any]] = [{"text": turn.text}] if turn.text else []
    for call in turn.tool_calls:
        function_call: dict[str, Any] = {"name": call.name, "args": dict(call.arguments or {})}
        if not _MADE_ID.match(call.id):
            function_call["id"] = call.id
        parts.append({"functionCall": function_call})
    return {"role": "model", "parts": parts}


def function_response(result: ToolResult, given_ids: set[str]) -> dict[str, Any]:
    """A ``functionResponse`` part; the id only when Gemini gave the call one."""
    response: dict[str, Any] = {"name": result.name}
    if result.call_id in given_ids:
        response["id"] = result.call_id
    response["response"] = {"error": result.content} if result.is_error else {"output": result.content}
    return {"functionResponse": response}


def content_body(request: ModelRequest) -> tuple[dict[str, Any], list[str]]:
    config = request.settings
    options = request.provider_options
    warnings: list[str] = []
    generation: dict[str, Any] = {"maxOutputTokens": config.max_output_tokens}
    for name, value in (
        ("temperature", config.temperature),
        ("topP", config.top_p),
        ("seed", config.seed),
    ):
        if value is not None:
            generation[name] = value
    if config.stop_sequences:
        generation["stopSequences"] = list(config.stop_sequences)
    if request.output_format == "json" and request.tools and not json_with_tools(request.model):
        warnings.append(
            f"the answer is not asked for as JSON while tools are offered: {request.model} cannot call "
            "functions and answer in JSON at once (Gemini 3 can); the last step, without tools, asks for it"
        )
    elif request.output_format == "json":
        generation["responseMimeType"] = "application/json"
        if request.output_schema is not None:
            generation["responseJsonSchema"] = dict(request.output_schema)
    given = options.get("thinkingConfig")
    if isinstance(given, Mapping):
        generation["thinkingConfig"] = dict(given)
        if config.reasoning is not None:
            warnings.append("the reasoning effort is not sent: provider_options thinkingConfig sets it")
    elif config.reasoning is not None:
        thinking = thinking_config(request.model, config.reasoning, warnings)
        if thinking is not None:
            generation["thinkingConfig"] = thinking
    body: dict[str, Any] = {"contents": contents(request), "generationConfig": generation}
    if request.instructions:
        body["systemInstruction"] = {"parts": [{"text": request.instructions}]}
    if request.tools:
        body["tools"] = [{"functionDeclarations": [declaration(tool) for tool in request.tools]}]
        body["toolConfig"] = {"functionCallingConfig": {"mode": "AUTO"}}
    safety = _safety_settings(options)
    if safety is not None:
        body["safetySettings"] = safety
    for name in options:
        if name not in ("thinkingConfig", "safetySettings", "threshold"):
            warnings.append(
                f"provider option {name} is not sent: Gemini takes thinkingConfig and safety settings"
            )
    return body, warnings


# --- the answer -------------------------------------------------------------------------------------------


def read_answer(answer: Mapping[str, Any], warnings: list[str], *, step: int = 1) -> ModelAnswer:
    """The answer of the run's ``step``-th call (it numbers the ids made for calls Gemini gave none)."""
    candidates = answer.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    candidate = first if isinstance(first, Mapping) else None
    usage = read_usage(answer.get("usageMetadata"))
    response_id = _text(answer.get("responseId"))
    model = _text(answer.get("modelVersion"))
    if candidate is None:
        feedback = answer.get("promptFeedback")
        blocked = _text(feedback.get("blockReason")) if isinstance(feedback, Mapping) else None
        return ModelAnswer(
            text="",
            finish_reason="content_filter" if blocked else "other",
            raw_finish_reason=blocked,
            usage=usage,
            response_id=response_id,
            model_answered=model,
            warnings=capped_warnings(warnings),
            refused=blocked is not None,
        )
    content = candidate.get("content")
    parts = content.get("parts") if isinstance(content, Mapping) else None
    texts = [
        part["text"]
        for part in parts or []
        if isinstance(part, Mapping) and isinstance(part.get("text"), str) and not part.get("thought")
    ]
    calls = read_calls(parts if isinstance(parts, list) else [], step)
    raw = _text(candidate.get("finishReason"))
    finish: FinishReason = FINISH_REASONS.get(raw or "", "other")
    if finish == "stop" and calls:
        finish = "tool_calls"
    return ModelAnswer(
        text="".join(texts),
        finish_reason=finish,
        raw_finish_reason=raw,
        usage=usage,
        response_id=response_id,
        model_answered=model,
        warnings=capped_warnings(warnings),
        refused=raw in REFUSING_REASONS,
        tool_calls=calls,
        provider_state=dict(content) if isinstance(content, Mapping) else None,
    )


def read_calls(parts: Sequence[Any], step: int) -> tuple[ToolCall, ...]:
    """The ``functionCall`` parts, in order: ``args`` is the arguments (``{}`` when Gemini leaves it
    out); an id is made for a call without one."""
    calls: list[ToolCall] = []
    for part in parts:
        call = part.get("functionCall") if isinstance(part, Mapping) else None
        if not isinstance(call, Mapping):
            continue
        given = call.get("id")
        made = f"call_{step}_{len(calls) + 1}"
        args = call.get("args", {})
        calls.append(
            ToolCall(
                id=given if isinstance(given, str) and given else made,
                name=str(call.get("name") or ""),
                arguments=args if isinstance(args, dict) else None,
                arguments_text=None if isinstance(args, dict) else json.dumps(args, ensure_ascii=False),
            )
        )
    return tuple(calls)


def read_usage(metadata: Any) -> Usage:
    """``promptTokenCount`` includes the cached tokens; ``candidatesTokenCount`` leaves out the thoughts.
    Gemini counts no cache writes."""
    if not isinstance(metadata, Mapping):
        return Usage()
    prompt = as_int(metadata.get("promptTokenCount"))
    cached = as_int(metadata.get("cachedContentTokenCount"))
    return Usage(
        input_uncached=prompt - cached if prompt is not None and cached is not None else prompt,
        input_cache_read=cached if cached is not None else (0 if prompt is not None else None),
        input_cache_write=None,
        output_text=as_int(metadata.get("candidatesTokenCount")),
        output_reasoning=as_int(metadata.get("thoughtsTokenCount")),
        total=as_int(metadata.get("totalTokenCount")),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def read_error(response: httpx.Response) -> ProviderError:
    """``{"error": {"code", "message", "status", "details": [ErrorInfo, RetryInfo, …]}}``."""
    error = error_body(response).get("error")
    if not isinstance(error, Mapping):
        return ProviderError()
    message = _text(error.get("message"))
    status = _text(error.get("status"))
    credentials = False
    delay: float | None = None
    for detail in error.get("details") or []:
        if not isinstance(detail, Mapping):
            continue
        kind = str(detail.get("@type") or "")
        if kind.endswith("google.rpc.ErrorInfo") and detail.get("reason") in CREDENTIAL_REASONS:
            credentials = True
        elif kind.endswith("google.rpc.RetryInfo"):
            match = _DELAY.match(str(detail.get("retryDelay") or ""))
            delay = float(match.group(1)) if match else None
    lowered = (message or "").lower()
    too_long = status == "INVALID_ARGUMENT" and any(words in lowered for words in TOO_LONG_WORDS)
    return ProviderError(
        message=message, code=status, too_long=too_long, credentials=credentials, retry_after_seconds=delay
    )


# --- the calls --------------------------------------------------------------------------------------------


def _where(settings: ProviderSettings, model: str, context: CallContext) -> tuple[str, Credentials]:
    if settings.kind == "vertex":
        from parley.models.providers.vertex_auth import access_token, publisher_model_url

        token = access_token(settings, context)
        url = publisher_model_url(settings, "google", model, "generateContent")
        return url, Credentials({"Authorization": f"Bearer {token}"}, Secrets((token,)))
    base = (settings.base_url or DEFAULT_BASE_URL).rstrip("/")
    path = model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
    return f"{base}/v1beta/{path}:generateContent", resolved_credentials(
        settings, context, key_header="x-goog-api-key"
    )


def call(settings: ProviderSettings, request: ModelRequest, context: CallContext) -> ModelAnswer:
    body, warnings = content_body(request)
    url, sent_with = _where(settings, request.model, context)
    deadline = Deadline.after(request.timeout_seconds, context.clock)
    answer = post_json(
        context,
        deadline,
        url,
        provider=settings.provider,
        credentials=sent_with,
        body=body,
        read_error=read_error,
    )
    step = 1 + sum(turn.role == "assistant" for turn in request.turns)
    return read_answer(answer, warnings, step=step)


def list_models(
    settings: ProviderSettings, context: CallContext, timeout_seconds: float
) -> list[ListedModel]:
    """The Gemini API's ``models.list``, page after page, keeping the models that generate content.
    Vertex lists no publisher models in its v1 API, so nothing for ``vertex``."""
    if settings.kind == "vertex":
        return []
    base = (settings.base_url or DEFAULT_BASE_URL).rstrip("/")
    sent_with = resolved_credentials(settings, context, key_header="x-goog-api-key")
    deadline = Deadline.after(timeout_seconds, context.clock)
    listed: list[ListedModel] = []
    params: dict[str, str] = {"pageSize": "1000"}
    with context.http_client() as http:

        def read_page(remaining: float) -> dict[str, Any]:
            return send_json(
                http,
                "GET",
                f"{base}/v1beta/models",
                provider=settings.provider,
                remaining=remaining,
                headers=sent_with.headers,
                params=params,
                read_error=read_error,
                secrets=sent_with.secrets,
            )

        while True:
            page = with_retries(read_page, provider=settings.provider, deadline=deadline, sleep=context.sleep)
            for entry in page.get("models") or []:
                if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
                    methods = entry.get("supportedGenerationMethods")
                    if isinstance(methods, list) and "generateContent" not in methods:
                        continue
                    listed.append(
                        ListedModel(
                            id=entry["name"].removeprefix("models/"),
                            created=None,
                            owned_by="google",
                            name=_text(entry.get("displayName")),
                            context_window=as_int(entry.get("inputTokenLimit")),
                            max_tokens=as_int(entry.get("outputTokenLimit")),
                        )
                    )
            token = page.get("nextPageToken")
            if not isinstance(token, str) or not token:
                return listed
            params = {"pageSize": "1000", "pageToken": token}
