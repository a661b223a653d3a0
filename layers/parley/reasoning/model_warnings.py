"""The save-time warning about a reasoning function's model (issue 29, item 4): a function whose model
this server would not call is still saved — the operator may yet configure the provider, and every run
decides again (``reasoning-format.md``, "How a document is checked": saving calls no model) — but its
definition's ``warnings`` say so at once, rather than its first run.

The checks are the run's own (``parley.reasoning.offer``), in the run's order, on what the server knows
when the document is saved: the reference through the aliases (one hop), the operator's ``allowed``, and
whether the provider is configured (the operator configuration's ``models``, and the providers' settings
in the environment, as :func:`~parley.models.listing.configured_providers` finds them — what
``list_models`` shows). A warning names the configured providers and the aliases, as the run's rejection
does, and never a setting's name or value (nor the ``allowed`` list, which the rejection does not name).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from parley.config import ModelsConfig
from parley.documents.front_matter import read_document
from parley.documents.problems import DocumentProblems, DocumentWarning
from parley.errors import Problem
from parley.models import UnknownModelReference, is_allowed, resolve_reference

if TYPE_CHECKING:
    from parley.ports.runtime import Runtime

__all__ = ["ModelsInUse", "model_warning", "model_warnings_here"]


@dataclass(frozen=True)
class ModelsInUse:
    """What decides whether a model would be called here: the operator configuration's ``models`` and the
    environment the providers' settings are read from."""

    config: ModelsConfig
    environ: Mapping[str, str]


def model_warnings_here(runtime: Runtime, source: str) -> list[DocumentWarning]:
    """The warning about the ``model`` of ``source`` (a reasoning document that passed its check) on the
    server ``runtime`` serves: its operator configuration's ``models`` now, and the environment a run reads
    the providers' settings from (``runtime.environ``, else the process's)."""
    try:
        _, front_matter, lines = read_document(source, DocumentProblems())
    except Problem:
        return []
    reference = front_matter.get("model") if isinstance(front_matter, dict) else None
    if not isinstance(reference, str):
        return []
    environ = os.environ if runtime.environ is None else runtime.environ
    warning = model_warning(reference, ModelsInUse(runtime.operator.models, environ))
    return [] if warning is None else [DocumentWarning(lines.line_of("/model"), "/model", warning)]


def model_warning(reference: str, models: ModelsInUse) -> str | None:
    """Why a run of a function whose ``model`` is ``reference`` would end before calling it on this
    server, as the text of a warning; ``None`` when it would be called (or when the reference is not a
    model reference at all, which the document's check refuses)."""
    from parley.models import configured_providers

    config = models.config
    try:
        resolved = resolve_reference(reference, config)
    except UnknownModelReference:  # not provider/model: the document's check says so
        return None
    via = "" if resolved.resolved == reference else f" (the alias makes it {resolved.resolved!r})"
    if not is_allowed(reference, resolved.resolved, config):
        return (
            f"the model {reference!r}{via} is not among the models offered on this server; a run ends "
            "unavailable (model_not_offered, model_not_allowed) unless the operator offers it"
        )
    configured = configured_providers(config, models.environ)
    if resolved.provider in configured:
        return None
    return (
        f"the provider {resolved.provider!r} of the model {reference!r}{via} is not configured on this "
        "server; a run ends unavailable (model_not_offered, provider_not_configured) until the operator "
        f"configures it. Configured providers: {', '.join(sorted(configured)) or 'none'}. "
        f"Aliases: {_aliases(config.aliases)}."
    )


def _aliases(aliases: Mapping[str, str]) -> str:
    if not aliases:
        return "none"
    return ", ".join(f"{key} → {target}" for key, target in sorted(aliases.items()))
