"""Amazon Bedrock's Converse, through boto3's ``bedrock-runtime`` client (Bedrock API reference,
"Converse"), for ``bedrock``.

The request: ``system=[{text}]``, the user message then the run's turns, ``inferenceConfig`` with
``maxTokens``, ``temperature``, ``topP`` and ``stopSequences``. Converse takes no seed (a warning says so).
A JSON answer is the input of a forced tool, ``answer`` (``toolConfig``, "Call a tool with the Converse
API").

Tools ("Call a tool with the Converse API"): the tools offered go as ``toolConfig.tools``
(``toolSpec: {name, description, inputSchema: {json}}``, the schema unchanged) with ``toolChoice``
``auto``. The ``toolUse`` blocks of the answer (``toolUseId``, ``name``, ``input``) are its calls; its
``provider_state`` is the assistant message's content list, JSON-safe (bytes, such as a
``reasoningContent.redactedContent``, as ``{"$base64": text}``), which the next step decodes and sends back
as the assistant message (``reasoningContent`` with its signature; blank text blocks, which Converse
refuses, left out), then the results as one user message of ``toolResult`` blocks ``{toolUseId, content:
[{text}], status}`` (a blank result as ``(empty result)``). Converse takes ``status`` only from Amazon
Nova and Anthropic Claude (``ToolResultBlock``); for other models an error's text starts ``Error:``
instead. A JSON answer while
tools are offered cannot force ``answer`` (a forced tool excludes the others), so ``answer`` is offered
among the tools with ``toolChoice: {any: {}}`` and a call of ``answer`` is the JSON answer; an ``answer``
called alongside other tools is left for the next step, whose results tell the model so. Converse refuses
``toolUse``/``toolResult`` blocks without a ``toolConfig`` and its ``toolChoice`` has no ``none``: a step
that offers no tools but sends a conversation with calls (the runtime's last step sends none; this keeps
such a request valid) declares the tools called so far, described as no longer available, with
``toolChoice`` ``auto`` — or forces ``answer`` for a JSON answer.

Reasoning goes in ``additionalModelRequestFields``, only where the model family takes it:
``provider_options.reasoningConfig`` as written; else the effort — Amazon Nova 2 as ``reasoningConfig``
``{type: enabled, maxReasoningEffort}`` (low, medium, high; ``none`` disables it); Anthropic's Claude as
the ``anthropic`` adapter sends it (``thinking``, and ``output_config`` for adaptive thinking); OpenAI's
gpt-oss as ``reasoning_effort``. Other models get none, with a warning. Claude cannot think while a tool
call is required (``tool`` or ``any``), nor sample with a temperature while thinking: what is dropped is
named in the warnings.

Finish reasons: ``end_turn`` and ``stop_sequence`` -> stop; ``max_tokens`` and
``model_context_window_exceeded`` -> length; ``content_filtered`` and ``guardrail_intervened`` ->
content_filter, refused; ``tool_use`` -> stop when the answer tool alone wrote the answer, else
tool_calls; ``malformed_model_output`` and ``malformed_tool_use`` -> error. Usage: ``inputTokens``
(uncached), ``cacheReadInputTokens``, ``cacheWriteInputTokens``, ``outputTokens``, ``totalTokens``;
Converse does not count reasoning apart. The response id is the request id; Converse names no model.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from parley.models.providers import anthropic
from parley.models.providers.base import (
    ANSWER_TOOL,
    FinishReason,
    ListedModel,
    ModelAnswer,
    ModelRequest,
    ProviderSettings,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
    capped_warnings,
)
from parley.models.providers.bedrock_runtime import (
    calling_aws,
    list_foundation_models,
    request_id,
    runtime_client,
)
from parley.models.providers.context import CallContext
from parley.models.providers.retrying import Deadline, with_retries
from parley.models.providers.transport import as_int

FINISH_REASONS: Final[Mapping[str, FinishReason]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "content_filtered": "content_filter",
    "guardrail_intervened": "content_filter",
    "malformed_model_output": "error",
    "malformed_tool_use": "error",
}
REFUSING_REASONS: Final = frozenset({"content_filtered", "guardrail_intervened"})
_NOVA_2: Final = re.compile(r"nova-2", re.IGNORECASE)
_CLAUDE: Final = re.compile(r"anthropic\.claude|claude-", re.IGNORECASE)
_GPT_OSS: Final = re.compile(r"gpt-oss", re.IGNORECASE)
#: The models whose ``toolResult`` takes a ``status`` (Converse API reference, ``ToolResultBlock``).
_STATUS_MODELS: Final = re.compile(r"anthropic\.claude|claude-|amazon\.nova|nova-", re.IGNORECASE)
ANSWER_DESCRIPTION: Final = "Write your whole answer as this tool's input."
ANSWER_AMONG_TOOLS: Final = (
    "When you no longer need the other tools, write your whole answer as this tool's input."
)
NO_LONGER_OFFERED: Final = "No longer available: answer from the results you have."
ANSWER_NOT_TAKEN: Final = (
    "The answer was not taken: it was written alongside other tool calls. Call answer alone once you "
    "have what you need."
)
EMPTY_RESULT: Final = "(empty result)"
#: The key of a JSON-safe ``bytes`` value in ``provider_state``: ``{"$base64": text}``.
BYTES_KEY: Final = "$base64"
NOVA_EFFORTS: Final[Mapping[str, str]] = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
}


def _reasoning_fields(request: ModelRequest, warnings: list[str], *, forced_tool: bool) -> dict[str, Any]:
    effort = request.settings.reasoning
    given = request.provider_options.get("reasoningConfig")
    if given is not None:
        if effort is not None:
            warnings.append("the reasoning effort is not sent: provider_options reasoningConfig sets it")
        return {"reasoningConfig": given}
    if effort is None:
        return {}
    model = request.model
    if _NOVA_2.search(model):
        if effort == "none":
            return {"reasoningConfig": {"type": "disabled"}}
        if NOVA_EFFORTS[effort] != effort:
            sent = NOVA_EFFORTS[effort]
            warnings.append(f"reasoning {effort} is sent as maxReasoningEffort {sent}: Nova has no {effort}")
        return {"reasoningConfig": {"type": "enabled", "maxReasoningEffort": NOVA_EFFORTS[effort]}}
    if _CLAUDE.search(model):
        return anthropic.thinking_fields(model, request, warnings, forced_tool=forced_tool)
    if _GPT_OSS.search(model):
        if effort in ("low", "medium", "high"):
            return {"reasoning_effort": effort}
        warnings.append(f"reasoning {effort} is not sent: gpt-oss takes low, medium or high")
        return {}
    warnings.append(f"reasoning is not sent: Converse takes no reasoning effort for {model}")
    return {}


def converse_arguments(request: ModelRequest) -> tuple[dict[str, Any], list[str]]:
    """The keyword arguments of ``converse``, and their warnings."""
    config = request.settings
    warnings: list[str] = []
    tools = tool_config(request)
    forced_tool = tools is not None and "auto" not in tools["toolChoice"]
    additional = _reasoning_fields(request, warnings, forced_tool=forced_tool)
    thinking = additional.get("thinking", {}).get("type") in ("enabled", "adaptive")
    inference: dict[str, Any] = {"maxTokens": config.max_output_tokens}
    if config.temperature is not None and not thinking:
        inference["temperature"] = config.temperature
    if config.top_p is not None and not thinking:
        inference["topP"] = config.top_p
    if config.stop_sequences:
        inference["stopSequences"] = list(config.stop_sequences)
    if config.seed is not None:
        warnings.append("seed is not sent: Bedrock Converse takes no seed")
    for name in request.provider_options:
        if name != "reasoningConfig":
            warnings.append(f"provider option {name} is not sent: Bedrock reads only reasoningConfig")
    arguments: dict[str, Any] = {
        "modelId": request.model,
        "messages": messages(request),
        "inferenceConfig": inference,
    }
    if request.instructions:
        arguments["system"] = [{"text": request.instructions}]
    if additional:
        arguments["additionalModelRequestFields"] = additional
    if tools is not None:
        arguments["toolConfig"] = tools
    return arguments, warnings


def tool_config(request: ModelRequest) -> dict[str, Any] | None:
    """``toolConfig``: the tools offered (``auto``; with ``answer`` and ``any`` for a JSON answer); else
    the forced ``answer`` for a JSON answer; else, when the conversation holds calls, those tools as no
    longer available (Converse refuses toolUse and toolResult blocks without a toolConfig)."""
    json_answer = request.output_format == "json" and request.output_schema is not None
    if request.tools:
        offered = [tool_spec(tool.name, tool.description, tool.input_schema) for tool in request.tools]
        if json_answer:
            answer = tool_spec(ANSWER_TOOL, ANSWER_AMONG_TOOLS, request.output_schema or {})
            return {"tools": [*offered, answer], "toolChoice": {"any": {}}}
        return {"tools": offered, "toolChoice": {"auto": {}}}
    gone = [
        tool_spec(name, NO_LONGER_OFFERED, {"type": "object", "properties": {}})
        for name in _called(request.turns)
    ]
    if json_answer:
        answer = tool_spec(ANSWER_TOOL, ANSWER_DESCRIPTION, request.output_schema or {})
        return {"tools": [*gone, answer], "toolChoice": {"tool": {"name": ANSWER_TOOL}}}
    if gone:
        return {"tools": gone, "toolChoice": {"auto": {}}}
    return None


def tool_spec(name: str, description: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """A ``toolSpec``; an empty description is left out (Converse takes none shorter than 1 character)."""
    spec: dict[str, Any] = {"name": name, "inputSchema": {"json": dict(schema)}}
    if description:
        spec["description"] = description
    return {"toolSpec": spec}


def _called(turns: Iterable[Turn]) -> list[str]:
    """The names of the tools the conversation called, in order, once each, ``answer`` aside."""
    names: dict[str, None] = {}
    for turn in turns:
        if turn.role == "assistant":
            for block in assistant_content(turn):
                use = block.get("toolUse")
                if isinstance(use, Mapping) and isinstance(use.get("name"), str):
                    names[use["name"]] = None
    names.pop(ANSWER_TOOL, None)
    return list(names)


def messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The user's message, then each turn: the model's message as it came, and its calls' results (with
    an error result for an ``answer`` called alongside other tools, which Converse wants answered too)."""
    sent: list[dict[str, Any]] = [{"role": "user", "content": [{"text": request.message}]}]
    status = bool(_STATUS_MODELS.search(request.model))
    answers: list[str] = []
    for turn in request.turns:
        if turn.role == "assistant":
            content = assistant_content(turn)
            sent.append({"role": "assistant", "content": content})
            answers = [
                block["toolUse"]["toolUseId"]
                for block in content
                if isinstance(block.get("toolUse"), Mapping) and block["toolUse"].get("name") == ANSWER_TOOL
            ]
        elif turn.results:
            answered = {result.call_id for result in turn.results}
            not_taken = [
                ToolResult(call_id, ANSWER_TOOL, ANSWER_NOT_TAKEN, is_error=True)
                for call_id in answers
                if call_id not in answered
            ]
            blocks = [tool_result(result, status=status) for result in (*turn.results, *not_taken)]
            sent.append({"role": "user", "content": blocks})
    return sent


def assistant_content(turn: Turn) -> list[dict[str, Any]]:
    """The model's message from ``provider_state``, decoded, without blank text blocks; else rebuilt from
    the text and the calls (without the reasoning, which only the state holds)."""
    state = turn.provider_state
    if isinstance(state, list):
        return [
            block if "toolUse" in block else from_json_safe(block)
            for block in state
            if isinstance(block, dict) and not _blank_text(block)
        ]
    content: list[dict[str, Any]] = [{"text": turn.text}] if turn.text.strip() else []
    for call in turn.tool_calls:
        use = {"toolUseId": call.id, "name": call.name, "input": dict(call.arguments or {})}
        content.append({"toolUse": use})
    return content


def _blank_text(block: Mapping[str, Any]) -> bool:
    text = block.get("text")
    return isinstance(text, str) and not text.strip() and len(block) == 1


def tool_result(result: ToolResult, *, status: bool) -> dict[str, Any]:
    """A ``toolResult`` block: the text (never blank), with ``status`` where the model takes it."""
    text = result.content if result.content.strip() else EMPTY_RESULT
    block: dict[str, Any] = {"toolUseId": result.call_id, "content": [{"text": text}]}
    if status:
        block["status"] = "error" if result.is_error else "success"
    elif result.is_error:
        block["content"] = [{"text": f"Error: {text}"}]
    return {"toolResult": block}


def json_safe(value: Any) -> Any:
    """``value`` with each ``bytes`` as ``{"$base64": text}``, and tuples as lists."""
    if isinstance(value, bytes | bytearray):
        return {BYTES_KEY: base64.b64encode(value).decode("ascii")}
    if isinstance(value, Mapping):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value


def from_json_safe(value: Any) -> Any:
    """The reverse of :func:`json_safe`."""
    if isinstance(value, Mapping):
        if set(value) == {BYTES_KEY} and isinstance(value[BYTES_KEY], str):
            return base64.b64decode(value[BYTES_KEY])
        return {key: from_json_safe(item) for key, item in value.items()}
    if isinstance(value, list):
        return [from_json_safe(item) for item in value]
    return value


def read_answer(response: Mapping[str, Any], warnings: list[str]) -> ModelAnswer:
    output = response.get("output")
    message = output.get("message") if isinstance(output, Mapping) else None
    blocks = message.get("content") if isinstance(message, Mapping) else None
    texts: list[str] = []
    tool_input: Any = None
    calls: list[ToolCall] = []
    for block in blocks or []:
        if not isinstance(block, Mapping):
            continue
        if isinstance(block.get("text"), str):
            texts.append(block["text"])
        use = block.get("toolUse")
        if isinstance(use, Mapping):
            if use.get("name") != ANSWER_TOOL:
                calls.append(read_call(use))
            elif tool_input is None:
                tool_input = use.get("input")
    raw = response.get("stopReason")
    raw_reason = raw if isinstance(raw, str) else None
    finish: FinishReason
    if raw_reason == "tool_use":
        finish = "tool_calls" if calls or tool_input is None else "stop"
    else:
        finish = FINISH_REASONS.get(raw_reason or "", "other")
    answered = tool_input is not None and not calls
    return ModelAnswer(
        text=json.dumps(tool_input, ensure_ascii=False) if answered else "".join(texts),
        finish_reason=finish,
        raw_finish_reason=raw_reason,
        usage=read_usage(response.get("usage")),
        response_id=request_id(response),
        model_answered=None,
        warnings=capped_warnings(warnings),
        refused=raw_reason in REFUSING_REASONS,
        tool_calls=tuple(calls),
        provider_state=json_safe(blocks) if isinstance(blocks, list) else None,
    )


def read_call(use: Mapping[str, Any]) -> ToolCall:
    """A ``toolUse`` block's call: its ``input`` as the arguments when it is a JSON object."""
    given = use.get("input")
    text = given if isinstance(given, str) else json.dumps(given, ensure_ascii=False)
    return ToolCall(
        id=str(use.get("toolUseId") or ""),
        name=str(use.get("name") or ""),
        arguments=given if isinstance(given, dict) else None,
        arguments_text=None if isinstance(given, dict) else text,
    )


def read_usage(usage: Any) -> Usage:
    if not isinstance(usage, Mapping):
        return Usage()
    return Usage(
        input_uncached=as_int(usage.get("inputTokens")),
        input_cache_read=as_int(usage.get("cacheReadInputTokens")),
        input_cache_write=as_int(usage.get("cacheWriteInputTokens")),
        output_text=as_int(usage.get("outputTokens")),
        output_reasoning=None,
        total=as_int(usage.get("totalTokens")),
    )


def call(settings: ProviderSettings, request: ModelRequest, context: CallContext) -> ModelAnswer:
    arguments, warnings = converse_arguments(request)
    deadline = Deadline.after(request.timeout_seconds, context.clock)
    client = runtime_client(settings, context, request.timeout_seconds)
    response: dict[str, Any] = with_retries(
        lambda remaining: calling_aws(settings.provider, lambda: client.converse(**arguments)),
        provider=settings.provider,
        deadline=deadline,
        sleep=context.sleep,
    )
    return read_answer(response, warnings)


def list_models(
    settings: ProviderSettings, context: CallContext, timeout_seconds: float
) -> list[ListedModel]:
    """``ListFoundationModels`` of the ``bedrock`` client, text models only (``bedrock_runtime``, which
    ``bedrock-anthropic`` lists through too)."""
    return list_foundation_models(settings, context, timeout_seconds)
