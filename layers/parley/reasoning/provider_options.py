"""Provider options (``reasoning-format.md``, "Provider options" and "Options for a gateway").

``provider_options`` passes options to one provider under the namespace it reads. Only options that shape
how the model reasons or writes its answer are offered, and only once they are reviewed and listed in
:data:`OFFERED`: an option a provider adds later is refused until then. Saving checks the names (and the
names inside ``thinking``); the provider checks the values when a run calls it.

Everything else is refused with its reason (:data:`NEVER_OFFERED`): what the front matter sets, credentials
and attribution, state stored on the operator's account, routing and service tiers, headers and betas,
tools, raw request fields, provider-managed conversation state, output the runtime does not read, and
what changes how the runtime sends the prompt. Each would let a function reach past its document: spend
or store on the operator's account, send what the runtime did not check, or undo a setting the runtime
guarantees.

A namespace shaped like a gateway's name is saved as it is: which gateways exist is configuration, so its
fields are checked when a run calls the gateway (:func:`gateway_options`), and a namespace nothing
configured reads rejects the run (:func:`unread_namespaces`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from parley.documents.pointers import join_pointer
from parley.errors import Problem

_OPENAI: Final = frozenset({"textVerbosity", "reasoningMode", "logitBias"})
_GOOGLE: Final = frozenset({"thinkingConfig", "safetySettings", "threshold"})
_BEDROCK: Final = frozenset({"reasoningConfig"})

#: The table's "Offered" column: each provider namespace and the options it offers.
OFFERED: Final[Mapping[str, frozenset[str]]] = {
    "anthropic": frozenset({"thinking"}),
    "openai": _OPENAI,
    "azure": _OPENAI,
    "google": _GOOGLE,
    "vertex": _GOOGLE,
    "googleVertex": _GOOGLE | {"thinking"},
    "amazonBedrock": _BEDROCK,
    "bedrock": _BEDROCK,
}
#: The names ``thinking`` may hold, under ``anthropic`` and ``googleVertex``.
THINKING_NAMES: Final = ("type", "budgetTokens", "display")
#: A gateway's namespace: a lowercase letter, then up to 31 letters, digits and hyphens.
GATEWAY_NAMESPACE: Final = re.compile(r"[a-z][a-zA-Z0-9-]{0,31}")
#: The namespace every gateway reads ``user`` from.
OPENAI_COMPATIBLE: Final = "openaiCompatible"

#: The table's "Read for models of" column: which namespaces each provider kind reads, in order; a
#: namespace in a group after ``|`` is read only when none of the group before it holds options.
_READS: Final[Mapping[str, tuple[tuple[str, ...], ...]]] = {
    "anthropic": (("anthropic",),),
    "openai": (("openai",),),
    "azure": (("azure",), ("openai",)),
    "google": (("google",),),
    "vertex": (("vertex", "googleVertex"), ("google",)),
    "vertex-anthropic": (("anthropic",), ("googleVertex",)),
    "bedrock": (("amazonBedrock",), ("bedrock",)),
    "bedrock-anthropic": (("anthropic",), ("bedrock",)),
}
# vertex-anthropic and bedrock-anthropic read both of their namespaces whatever they hold.
_READS_ALL: Final = frozenset({"vertex-anthropic", "bedrock-anthropic"})

# --- what is never offered, and why ----------------------------------------------------------------------

_FRONT_MATTER: Final = "the front matter sets it"
_CREDENTIALS: Final = "credentials, endpoints and attribution are the operator's, not a function's"
_STORED: Final = "it stores or reuses state on the operator's account"
_ROUTING: Final = "routing, fallbacks, capacity and service tiers are the operator's"
_HEADERS: Final = "request headers and betas are the runtime's to send"
_TOOLS: Final = "a function names its tools in tools, and the runtime sends them"
_RAW: Final = "raw request fields would reach the provider unchecked"
_CONVERSATION: Final = "the runtime manages the run's conversation"
_UNREAD_OUTPUT: Final = "the runtime does not read that output"
_PROMPT: Final = "it changes how the runtime sends the prompt"

_NEVER: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    (
        _FRONT_MATTER,
        (
            "effort",
            "reasoningEffort",
            "reasoning",
            "maxTokens",
            "maxOutputTokens",
            "maxCompletionTokens",
            "temperature",
            "topP",
            "seed",
            "stopSequences",
            "stop",
            "structuredOutputs",
            "structuredOutputMode",
            "strictJsonSchema",
            "strict",
            "responseFormat",
            "responseMimeType",
            "responseSchema",
            "responseJsonSchema",
            "outputFormat",
        ),
    ),
    (
        _CREDENTIALS,
        (
            "user",
            "metadata",
            "labels",
            "safetyIdentifier",
            "apiKey",
            "authToken",
            "credentials",
            "accessKeyId",
            "secretAccessKey",
            "sessionToken",
            "baseURL",
            "endpoint",
            "project",
            "location",
        ),
    ),
    (
        _STORED,
        (
            "store",
            "previousResponseId",
            "conversation",
            "container",
            "cacheControl",
            "cachedContent",
            "cachePoint",
            "promptCacheKey",
            "promptCacheRetention",
            "background",
        ),
    ),
    (
        _ROUTING,
        (
            "serviceTier",
            "performanceConfig",
            "fallbacks",
            "models",
            "route",
            "routing",
            "provider",
            "priority",
            "region",
        ),
    ),
    (_HEADERS, ("anthropicBeta", "betas", "headers", "extraHeaders")),
    (
        _TOOLS,
        (
            "mcpServers",
            "tools",
            "toolChoice",
            "parallelToolCalls",
            "disableParallelToolUse",
            "toolStreaming",
            "useSearchGrounding",
            "dynamicRetrievalConfig",
            "retrievalConfig",
        ),
    ),
    (
        _RAW,
        (
            "additionalModelRequestFields",
            "additionalModelResponseFieldPaths",
            "prediction",
            "extraBody",
            "body",
        ),
    ),
    (_CONVERSATION, ("truncation", "contextManagement")),
    (
        _UNREAD_OUTPUT,
        ("logprobs", "topLogprobs", "reasoningSummary", "include", "responseModalities", "audioTimestamp"),
    ),
    (_PROMPT, ("systemMessageMode", "forceReasoning", "instructions", "sendReasoning")),
)
#: Every option refused for every provider, with its reason.
NEVER_OFFERED: Final[Mapping[str, str]] = {name: reason for reason, names in _NEVER for name in names}

#: Body fields the runtime sets on a gateway's request: no operator may allow a function to set them.
RUNTIME_FIELDS: Final = frozenset(
    {
        "model",
        "messages",
        "temperature",
        "top_p",
        "seed",
        "stop",
        "max_tokens",
        "max_completion_tokens",
        "response_format",
        "reasoning_effort",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "stream",
        "stream_options",
        "n",
    }
)


# --- saving ----------------------------------------------------------------------------------------------


def check_provider_options(value: Any, pointer: str = "/provider_options") -> list[tuple[str, str]]:
    """Every problem of ``provider_options`` when a document is saved, as ``(pointer, message)``."""
    if not isinstance(value, dict):
        return [(pointer, "Expected a mapping of namespaces, such as anthropic, each holding its options")]
    return list(_problems(value, pointer))


def _problems(value: dict[str, Any], pointer: str) -> Iterator[tuple[str, str]]:
    for namespace, options in value.items():
        at = join_pointer(pointer, namespace)
        offered = OFFERED.get(namespace)
        if offered is None and GATEWAY_NAMESPACE.fullmatch(namespace) is None:
            yield (
                at,
                f"{namespace} is not offered: a namespace is a provider's, such as anthropic, or a "
                "gateway's name, a lowercase letter then up to 31 letters, digits and hyphens",
            )
            continue
        if not isinstance(options, dict):
            yield at, f"Expected a mapping of the options under {namespace}"
            continue
        if offered is None:
            continue  # a gateway's: checked against its allowed_provider_options when a run calls it
        for name, option in options.items():
            option_at = join_pointer(at, name)
            reason = _refusal(namespace, name, offered)
            if reason is not None:
                yield option_at, f"{name} is not offered: {reason}"
            elif name == "thinking":
                yield from _thinking(option, option_at)


def _refusal(namespace: str, name: str, offered: frozenset[str]) -> str | None:
    if name in offered:
        return None
    if name in NEVER_OFFERED:
        return NEVER_OFFERED[name]
    return (
        "an option is offered only once it is reviewed and listed; "
        f"{namespace} offers {_words(sorted(offered))}"
    )


def _thinking(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    if not isinstance(value, dict):
        yield pointer, f"Expected a mapping of {_words(THINKING_NAMES)}"
        return
    for name in value:
        if name not in THINKING_NAMES:
            yield (
                join_pointer(pointer, name),
                f"{name} is not offered: thinking takes only {_words(THINKING_NAMES)}",
            )


def _words(names: Iterable[str]) -> str:
    listed = list(names)
    return listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]


# --- running ---------------------------------------------------------------------------------------------


def camel_case(name: str) -> str:
    """A gateway's name in camel case: ``my-gateway`` is ``myGateway``."""
    head, *rest = name.split("-")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def namespaces_read(provider_kind: str, provider_name: str, provider_options: Mapping[str, Any]) -> list[str]:
    """The namespaces a model of ``provider_kind`` reads, in order, given the options the function sets.

    ``provider_kind`` is one of the built-in providers (``anthropic``, ``bedrock-anthropic``, …) or
    ``gateway``, whose ``provider_name`` is the gateway's name.
    """
    if provider_kind == "gateway":
        return list(dict.fromkeys((provider_name, camel_case(provider_name), OPENAI_COMPATIBLE)))
    groups = _READS.get(provider_kind)
    if groups is None:
        raise ValueError(f"no provider kind is called {provider_kind!r}")
    if provider_kind in _READS_ALL:
        return [namespace for group in groups for namespace in group]
    for group in groups:
        if any(_has_options(provider_options, namespace) for namespace in group):
            return list(group)
    return list(groups[-1])


def _has_options(provider_options: Mapping[str, Any], namespace: str) -> bool:
    options = provider_options.get(namespace)
    return isinstance(options, Mapping) and bool(options)


def options_for(
    provider_kind: str, provider_name: str, provider_options: Mapping[str, Any]
) -> Mapping[str, Any]:
    """The options a model of ``provider_kind`` receives: its namespaces' options, merged in the order
    :func:`namespaces_read` gives (a name set under two of them takes the later one's value).

    For a gateway, use :func:`gateway_options`, which also holds them to what the gateway allows.
    """
    if provider_kind == "gateway":
        return gateway_options(provider_name, None, provider_options)
    merged: dict[str, Any] = {}
    for namespace in namespaces_read(provider_kind, provider_name, provider_options):
        options = provider_options.get(namespace)
        if isinstance(options, Mapping):
            merged.update(options)
    return merged


def gateway_options(
    gateway_name: str, allowed: Iterable[str] | None, provider_options: Mapping[str, Any]
) -> Mapping[str, Any]:
    """The top-level body fields a function sets for the gateway ``gateway_name``.

    They are the fields under its name and under its camel-case form, and ``user`` under
    ``openaiCompatible``. With ``allowed`` (the gateway's ``allowed_provider_options``), every field must
    be in it and none may be one the runtime sets; otherwise the run is refused as ``conflict``,
    ``unworkable``, naming the fields, before the gateway is called. ``allowed=None`` skips that check.
    """
    fields: dict[str, Any] = {}
    sources: dict[str, str] = {}
    refused: list[str] = []
    for namespace in dict.fromkeys((gateway_name, camel_case(gateway_name))):
        options = provider_options.get(namespace)
        if not isinstance(options, Mapping):
            continue
        for name, value in options.items():
            if name in fields and fields[name] != value:
                refused.append(f"{name} is set under both {sources[name]} and {namespace}")
            fields[name], sources[name] = value, namespace
    compatible = provider_options.get(OPENAI_COMPATIBLE)
    if isinstance(compatible, Mapping):
        for name, value in compatible.items():
            if name != "user":
                refused.append(f"{OPENAI_COMPATIBLE}.{name} is not read: a gateway reads only user there")
            elif "user" not in fields:
                fields["user"], sources["user"] = value, OPENAI_COMPATIBLE
    if allowed is not None:
        permitted = frozenset(allowed) - RUNTIME_FIELDS
        for name in fields:
            if name in RUNTIME_FIELDS:
                refused.append(f"{name} is set by the runtime")
            elif name not in permitted:
                refused.append(f"the gateway {gateway_name} does not allow {name}")
    if refused:
        raise Problem(
            "conflict",
            "The provider options cannot be sent: "
            + "; ".join(dict.fromkeys(refused))
            + ". The gateway's operator lists the fields a function may set in allowed_provider_options.",
            kind="unworkable",
        )
    return fields


def unread_namespaces(provider_options: Mapping[str, Any], configured_names: Iterable[str]) -> list[str]:
    """The namespaces of ``provider_options`` that no configured provider or gateway reads, in order.

    ``configured_names`` are the configured providers (by their built-in names, such as ``anthropic`` or
    ``bedrock-anthropic``) and gateways (by their names). A run whose function sets one is refused as
    ``conflict``, ``unworkable``, before any provider is called. A namespace that holds no options has
    nothing to be read, so it is never one of them.
    """
    read: set[str] = set()
    for name in configured_names:
        kind = name if name in _READS else "gateway"
        read.update(namespaces_read(kind, name, provider_options))
    return [
        namespace
        for namespace in provider_options
        if namespace not in read and _has_options(provider_options, namespace)
    ]
