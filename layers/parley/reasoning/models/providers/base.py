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

from pydantic import SecretStr

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
    :class:`~pydantic.SecretStr` until the adapter sends them."""

    provider: str
    kind: ProviderKind
    api_key: SecretStr | None = None
    base_url: str | None = None
    headers: Mapping[str, SecretStr] = field(default_factory=dict)
    api: Literal["responses", "chat_completions"] = "responses"
    api_version: str | None = None
    project: str | None = None
    location: str | None = None
    region: str | None = None
    structured_outputs: bool = False
    allowed_provider_options: tuple[str, ...] = ()


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


@dataclass(frozen=True)
class ListedModel:
    """One entry of a provider's list of models (http-api.md, "Models")."""

    id: str
    created: int | None
    owned_by: str
    name: str | None = None
    context_window: int | None = None
    max_tokens: int | None = None


class ModelCallFailed(Exception):
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
