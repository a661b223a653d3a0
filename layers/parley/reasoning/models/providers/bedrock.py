"""Amazon Bedrock's Converse, through boto3's ``bedrock-runtime`` client (Bedrock API reference,
"Converse"), for ``bedrock``.

The request: ``system=[{text}]``, one user message, ``inferenceConfig`` with ``maxTokens``,
``temperature``, ``topP`` and ``stopSequences``. Converse takes no seed (a warning says so). A JSON answer
is the input of a forced tool, ``answer`` (``toolConfig``, "Call a tool with the Converse API").

Reasoning goes in ``additionalModelRequestFields``, only where the model family takes it:
``provider_options.reasoningConfig`` as written; else the effort — Amazon Nova 2 as ``reasoningConfig``
``{type: enabled, maxReasoningEffort}`` (low, medium, high; ``none`` disables it); Anthropic's Claude as
the ``anthropic`` adapter sends it (``thinking``, and ``output_config`` for adaptive thinking); OpenAI's
gpt-oss as ``reasoning_effort``. Other models get none, with a warning. Claude cannot think while a tool
is forced, nor sample with a temperature while thinking: what is dropped is named in the warnings.

Finish reasons: ``end_turn`` and ``stop_sequence`` -> stop; ``max_tokens`` and
``model_context_window_exceeded`` -> length; ``content_filtered`` and ``guardrail_intervened`` ->
content_filter, refused; ``tool_use`` -> stop when the forced answer tool wrote the answer, else
tool_calls; ``malformed_model_output`` and ``malformed_tool_use`` -> error. Usage: ``inputTokens``
(uncached), ``cacheReadInputTokens``, ``cacheWriteInputTokens``, ``outputTokens``, ``totalTokens``;
Converse does not count reasoning apart. The response id is the request id; Converse names no model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from parley.reasoning.models.providers import anthropic
from parley.reasoning.models.providers.base import (
    ANSWER_TOOL,
    FinishReason,
    ListedModel,
    ModelAnswer,
    ModelRequest,
    ProviderSettings,
    Usage,
    capped_warnings,
)
from parley.reasoning.models.providers.bedrock_runtime import (
    calling_aws,
    control_client,
    request_id,
    runtime_client,
)
from parley.reasoning.models.providers.context import CallContext
from parley.reasoning.models.providers.retrying import Deadline, with_retries
from parley.reasoning.models.providers.transport import as_int

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
    forced_tool = request.output_format == "json" and request.output_schema is not None
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
        "messages": [{"role": "user", "content": [{"text": request.message}]}],
        "inferenceConfig": inference,
    }
    if request.instructions:
        arguments["system"] = [{"text": request.instructions}]
    if additional:
        arguments["additionalModelRequestFields"] = additional
    if forced_tool:
        arguments["toolConfig"] = {
            "tools": [
                {
                    "toolSpec": {
                        "name": ANSWER_TOOL,
                        "description": "Write your whole answer as this tool's input.",
                        "inputSchema": {"json": dict(request.output_schema or {})},
                    }
                }
            ],
            "toolChoice": {"tool": {"name": ANSWER_TOOL}},
        }
    return arguments, warnings


def read_answer(response: Mapping[str, Any], warnings: list[str]) -> ModelAnswer:
    output = response.get("output")
    message = output.get("message") if isinstance(output, Mapping) else None
    blocks = message.get("content") if isinstance(message, Mapping) else None
    texts: list[str] = []
    tool_input: Any = None
    other_tool = False
    for block in blocks or []:
        if not isinstance(block, Mapping):
            continue
        if isinstance(block.get("text"), str):
            texts.append(block["text"])
        use = block.get("toolUse")
        if isinstance(use, Mapping):
            if use.get("name") == ANSWER_TOOL and tool_input is None:
                tool_input = use.get("input")
            else:
                other_tool = True
    raw = response.get("stopReason")
    raw_reason = raw if isinstance(raw, str) else None
    finish: FinishReason
    if raw_reason == "tool_use":
        finish = "tool_calls" if other_tool or tool_input is None else "stop"
    else:
        finish = FINISH_REASONS.get(raw_reason or "", "other")
    return ModelAnswer(
        text=json.dumps(tool_input, ensure_ascii=False) if tool_input is not None else "".join(texts),
        finish_reason=finish,
        raw_finish_reason=raw_reason,
        usage=read_usage(response.get("usage")),
        response_id=request_id(response),
        model_answered=None,
        warnings=capped_warnings(warnings),
        refused=raw_reason in REFUSING_REASONS,
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
    """``ListFoundationModels`` of the ``bedrock`` client, text models only; for ``bedrock-anthropic``,
    Anthropic's. Inference profiles (``us.anthropic.…``) are not listed."""
    client = control_client(settings, context, timeout_seconds)
    deadline = Deadline.after(timeout_seconds, context.clock)
    response: dict[str, Any] = with_retries(
        lambda remaining: calling_aws(
            settings.provider, lambda: client.list_foundation_models(byOutputModality="TEXT")
        ),
        provider=settings.provider,
        deadline=deadline,
        sleep=context.sleep,
    )
    listed: list[ListedModel] = []
    for summary in response.get("modelSummaries") or []:
        if not isinstance(summary, Mapping) or not isinstance(summary.get("modelId"), str):
            continue
        owner = summary.get("providerName")
        if settings.kind == "bedrock-anthropic" and str(owner).lower() != "anthropic":
            continue
        name = summary.get("modelName")
        listed.append(
            ListedModel(
                id=summary["modelId"],
                created=None,
                owned_by=owner if isinstance(owner, str) else "bedrock",
                name=name if isinstance(name, str) else None,
            )
        )
    return listed
