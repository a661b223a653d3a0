"""How a model reference becomes a provider and a model id (``http-api.md``, "Model providers").

A reference is resolved in order: an alias (exact, else the longest wildcard prefix, one hop); split at
the first ``/`` (the provider, and the model id sent unchanged); ``allowed`` (the reference as written or
as the alias made it); the provider configured. This module does the first three and words the two
rejections of the last two (``reasoning-format.md``, "How a run ends", "What the rejections say"); which
providers are configured is the caller's to say.

One hop only: what an alias gives is never looked up again, so ``a: b/x`` and ``b/*: a/*`` cannot loop,
and the operator reads the whole path of a reference from one line of the configuration.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from parley.config import ModelsConfig
from parley.errors import ParleyError, Problem

#: The run's ending for a model the runtime will not call (``reasoning-format.md``, "How a run ends").
MODEL_NOT_OFFERED: Final = "model_not_offered"
MODEL_NOT_ALLOWED: Final = "model_not_allowed"
PROVIDER_NOT_CONFIGURED: Final = "provider_not_configured"


@dataclass(frozen=True)
class Resolved:
    """A reference as ``requested``, as ``resolved`` through the aliases (the same when none applied), and
    the ``resolved`` one split into its ``provider`` and the ``model_id`` the provider is sent."""

    requested: str
    resolved: str
    provider: str
    model_id: str


class UnknownModelReference(ParleyError, ValueError):
    """A reference that is not ``provider/model`` once the aliases have been applied (such as ``fast``
    when no alias ``fast`` is configured); the message names the reference and the aliases."""

    def __init__(self, reference: str, aliases: Mapping[str, str]) -> None:
        self.reference = reference
        super().__init__(
            f"The model {reference!r} is neither provider/model (such as anthropic/claude-sonnet-4-5) nor "
            f"one of the aliases: {_aliases_text(aliases)}."
        )


def apply_alias(reference: str, aliases: Mapping[str, str]) -> str:
    """``reference`` through the aliases, one hop: an exact alias, else the wildcard alias of the longest
    prefix (``anthropic/*: bedrock-anthropic/us.anthropic.*`` turns ``anthropic/claude-x`` into
    ``bedrock-anthropic/us.anthropic.claude-x``), else the reference unchanged."""
    exact = aliases.get(reference)
    if exact is not None and not reference.endswith("*"):
        return exact
    best: tuple[str, str] | None = None
    for key, target in aliases.items():
        if not key.endswith("*"):
            continue
        prefix = key[:-1]
        if _matches_prefix(reference, prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, target)
    if best is None:
        return reference
    prefix, target = best
    return target[:-1] + reference[len(prefix) :]


def resolve_reference(reference: str, models: ModelsConfig) -> Resolved:
    """The reference resolved through ``models.aliases`` and split at the first ``/``.

    Raises :class:`UnknownModelReference` when the result has no provider or no model id. Whether the
    model is allowed is :func:`is_allowed`'s question, asked of both ``requested`` and ``resolved``.
    """
    resolved = apply_alias(reference, models.aliases)
    provider, slash, model_id = resolved.partition("/")
    if not slash or not provider or not model_id:
        raise UnknownModelReference(reference, models.aliases)
    return Resolved(requested=reference, resolved=resolved, provider=provider, model_id=model_id)


def is_allowed(requested: str, resolved: str, models: ModelsConfig) -> bool:
    """Whether the operator's ``allowed`` admits the reference as written or as the alias made it: an
    entry equal to either, or a ``prefix*`` entry (``anthropic/*``) that either starts with. Without
    ``allowed``, every model is allowed."""
    if models.allowed is None:
        return True
    return any(matches(entry, requested) or matches(entry, resolved) for entry in models.allowed)


def matches(entry: str, reference: str) -> bool:
    """Whether an ``allowed`` entry (a reference, or a prefix ending in ``*``) admits ``reference``."""
    if entry.endswith("*"):
        return _matches_prefix(reference, entry[:-1])
    return entry == reference


def _matches_prefix(reference: str, prefix: str) -> bool:
    # A wildcard stands for at least one character: ``anthropic/*`` is a prefix of models, and
    # ``anthropic/`` itself names none.
    return len(reference) > len(prefix) and reference.startswith(prefix)


# --- the rejections ----------------------------------------------------------------------------


def not_allowed_detail(requested: str, resolved: str) -> str:
    """The ``detail`` of a ``model_not_allowed`` ending: the model as written (and as the alias made it),
    and that the operator does not offer it here. It names no setting."""
    shown = repr(requested) if resolved == requested else f"{requested!r} (resolved to {resolved!r})"
    return (
        f"The model {shown} is not among the models offered here; nothing was sent to it. "
        "Choose another model, or ask the operator to offer this one."
    )


def not_configured_detail(provider: str, configured: Iterable[str], aliases: Mapping[str, str]) -> str:
    """The ``detail`` of a ``provider_not_configured`` ending: the provider, the configured providers and
    the aliases, without naming a setting (an environment variable or a key of the configuration)."""
    names = sorted(set(configured))
    offered = ", ".join(names) if names else "none"
    return (
        f"The provider {provider!r} is not configured here. Configured providers: {offered}. "
        f"Aliases: {_aliases_text(aliases)}."
    )


def model_not_allowed(requested: str, resolved: str) -> Problem:
    """The run's ending for a model outside the operator's ``allowed``: ``unavailable``, kind
    ``model_not_offered``, because ``model_not_allowed`` (503)."""
    return Problem(
        "unavailable",
        not_allowed_detail(requested, resolved),
        kind=MODEL_NOT_OFFERED,
        because=MODEL_NOT_ALLOWED,
    )


def provider_not_configured(provider: str, configured: Iterable[str], aliases: Mapping[str, str]) -> Problem:
    """The run's ending for a provider that is not configured: ``unavailable`` (503); when other providers
    are configured, kind ``model_not_offered`` and because ``provider_not_configured``."""
    names = sorted(set(configured))
    detail = not_configured_detail(provider, names, aliases)
    if not names:
        return Problem("unavailable", detail)
    return Problem("unavailable", detail, kind=MODEL_NOT_OFFERED, because=PROVIDER_NOT_CONFIGURED)


def _aliases_text(aliases: Mapping[str, str]) -> str:
    if not aliases:
        return "none"
    return ", ".join(f"{key} → {target}" for key, target in sorted(aliases.items()))
