"""What a model call takes and gives, whatever the provider (reasoning-format.md, "How a run works").

An adapter builds its provider's request from a :class:`ModelRequest` and the configured
:class:`ProviderSettings`, and reads the answer into a :class:`ModelAnswer`, or raises
:class:`ModelCallFailed`. The caller maps a failure's ``kind`` to the run's ending ("How a run ends")::

    ModelCallFailed.kind   when                                              the run's ending
      rejected               400/404/422 about the model, schema or a setting  conflict, unworkable
      too_long               the provider signals the request is too long      conflict, unworkable
      credentials_rejected   401/403 (Gemini: 400 API_KEY_INVALID)             unavailable, with the status
      rate_limited           429                                               unavailable, with the seconds
                                                                               when the provider said them
      unreachable            could not connect                                 unavailable
      timed_out              the call's budget ran out                         unavailable
      unavailable            5xx, 529 overloaded, 402, 408, 409                unavailable
      certificate_untrusted  the TLS certificate did not verify                unavailable: the operator
                                                                               must act

``detail`` names the provider, the HTTP status and what it means. It quotes the provider's own message
only for ``rejected`` and ``too_long`` (cut to 300 characters and scrubbed of the credentials); it never
holds a credential or a header.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from parley.errors import ParleyError
from parley.secret import Secret

Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]
FinishReason = Literal["stop", "length", "content_filter", "tool_calls", "error", "other"]
ProviderKind = Literal[
    "anthropic",
    "openai",
    "azure",
    "google",
    "vertex",
    "vertex-anthropic",
    "bedrock",
    "bedrock-anthropic",
    "gateway",
]
FailureKind = Literal[
    "credentials_rejected",
    "rate_limited",
    "unreachable",
    "timed_out",
    "unavailable",
    "rejected",
    "too_long",
    "certificate_untrusted",
]

#: A record keeps at most this many warnings ("What a run records").
MAX_WARNINGS: Final = 20
#: The name of the forced tool whose input is a JSON answer, for providers without native structured output.
ANSWER_TOOL: Final = "answer"


@dataclass(frozen=True)
class Settings:
    """The function's ``config``, with ``max_output_tokens`` already defaulted (1,024) by the caller."""

    max_output_tokens: int
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    stop_sequences: tuple[str, ...] | None = None
    reasoning: Effort | None = None


@dataclass(frozen=True)
class ProviderSettings:
    """What a configured provider needs (``settings.provider_settings`` reads it). Secrets stay
    :class:`~parley.secret.Secret` until the adapter sends them."""

    provider: str
    kind: ProviderKind
    api_key: Secret | None = None
    base_url: str | None = None
    headers: Mapping[str, Secret] = field(default_factory=dict)
    api: Literal["responses", "chat_completions"] = "responses"
    api_version: str | None = None
    project: str | None = None
    location: str | None = None
    region: str | None = None
    structured_outputs: bool = False
    allowed_provider_options: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model (``reasoning-format.md``, "What the model sees"): its model-facing
    name (``server__tool``), its description (cut to 4 KiB) and its input schema, sent unchanged (not as
    strict structured output)."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for: the model's own ``id`` for it, the tool's model-facing ``name``, and
    its ``arguments`` (the JSON object the model wrote). ``arguments_text`` holds what the model wrote
    when it was not a JSON object (``arguments`` is then ``None``): the caller refuses such a call."""

    id: str
    name: str
    arguments: Mapping[str, Any] | None
    arguments_text: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """What the model is given back for one of its calls: ``content`` is the text it reads (a tool's
    text, its structured content as JSON, a placeholder, or why the call was refused); ``is_error`` for a
    result the server marked ``isError``, a failed call or a refused one."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class Turn:
    """One message of a run's conversation after its first user message, in order: the model's
    (``assistant``: its text and its calls, with ``provider_state`` — what the adapter needs to send the
    message back exactly, such as Anthropic's content blocks with their thinking signatures, the
    Responses API's output items, or Gemini's parts) or the results of that message's calls
    (``tool``)."""

    role: Literal["assistant", "tool"]
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    results: tuple[ToolResult, ...] = ()
    provider_state: Any = None


@dataclass(frozen=True)
class ModelRequest:
    """One model call: the rendered prompt, the settings, the output format and the chosen options.

    ``provider_options`` holds the options of the namespace the caller chose for this provider (for a
    gateway: the allowed top-level body fields). ``timeout_seconds`` is the whole call's budget, retries
    included (60 s plus 25 ms for each token of ``max_output_tokens``; the caller computes it).
    """

    model: str
    instructions: str | None
    message: str
    settings: Settings
    output_format: Literal["text", "json"]
    output_schema: Mapping[str, Any] | None
    provider_options: Mapping[str, Any]
    timeout_seconds: float
    #: The conversation after ``message`` (a run that calls tools: each step adds the model's message
    #: and its calls' results).
    turns: tuple[Turn, ...] = ()
    #: The tools offered this step; none on a run's last step (and for a function without ``tools``).
    tools: tuple[ToolSpec, ...] = ()


@dataclass(frozen=True)
class Usage:
    """Tokens of one call; ``None`` where the provider did not say.

    ``input_uncached`` excludes the cache reads and writes. ``output_text`` and ``output_reasoning`` do not
    overlap: where a provider does not split its output, ``output_text`` holds all of it and
    ``output_reasoning`` is ``None``.
    """

    input_uncached: int | None = None
    input_cache_read: int | None = None
    input_cache_write: int | None = None
    output_text: int | None = None
    output_reasoning: int | None = None
    total: int | None = None

    def as_record(self) -> dict[str, Any]:
        return {
            "input": {
                "uncached": self.input_uncached,
                "cache_read": self.input_cache_read,
                "cache_write": self.input_cache_write,
            },
            "output": {"text": self.output_text, "reasoning": self.output_reasoning},
            "total": self.total,
        }


@dataclass(frozen=True)
class ModelAnswer:
    """The model's answer. For ``json`` output, ``text`` is the JSON as the model wrote it (or the forced
    tool's input, serialized): the caller parses and checks it."""

    text: str
    finish_reason: FinishReason
    raw_finish_reason: str | None
    usage: Usage
    response_id: str | None
    model_answered: str | None
    warnings: tuple[str, ...]
    refused: bool = False
    #: The calls the model asked for (``finish_reason`` ``tool_calls``), in its order.
    tool_calls: tuple[ToolCall, ...] = ()
    #: What the adapter needs to send this message back in the next step (see :class:`Turn`).
    provider_state: Any = None


@dataclass(frozen=True)
class ListedModel:
    """One entry of a provider's list of models (http-api.md, "Models")."""

    id: str
    created: int | None
    owned_by: str
    name: str | None = None
    context_window: int | None = None
    max_tokens: int | None = None


class ModelCallFailed(ParleyError):
    """A model call that gave no answer; see the module's docstring for the kinds and their endings."""

    def __init__(
        self,
        kind: FailureKind,
        provider: str,
        detail: str,
        *,
        status: int | None = None,
        retry_after_seconds: float | None = None,
    ) -> None:
        super().__init__(detail)
        self.kind: FailureKind = kind
        self.provider = provider
        self.detail = detail
        self.status = status
        self.retry_after_seconds = retry_after_seconds

    def __repr__(self) -> str:
        return (
            f"ModelCallFailed(kind={self.kind!r}, provider={self.provider!r}, status={self.status!r}, "
            f"retry_after_seconds={self.retry_after_seconds!r}, detail={self.detail!r})"
        )


def capped_warnings(warnings: list[str]) -> tuple[str, ...]:
    """Distinct warnings in order, at most :data:`MAX_WARNINGS`."""
    return tuple(dict.fromkeys(warnings))[:MAX_WARNINGS]
