"""Build the app: one Parley stack per stage, checked by cdk-nag's AWS Solutions rules.

Context keys: ``stage`` (``dev`` or ``prod``, default ``dev``) and ``operator_config`` (optional path of
an operator configuration file, http-api.md "Operator configuration"). The file's text becomes the
functions' ``PARLEY_OPERATOR_CONFIG``, which is how the core reads it on AWS until a JWT authorizer replaces
token principals; its tokens therefore end up in the template, so use it for a dev stage only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from aws_cdk import App, Tags, Validations
from cdk_nag import AwsSolutionsChecks

from parley.config import OPERATOR_CONFIG_VARIABLE, load_operator_config
from parley_cdk.settings import DEFAULT_STAGE, stage_settings
from parley_cdk.stack import ParleyStack

#: The repository root (``cdk/parley_cdk/application.py`` → ``.``): functions, layers, pyproject.
REPOSITORY: Final = Path(__file__).resolve().parents[2]

STAGE_CONTEXT_KEY: Final = "stage"
OPERATOR_CONFIG_CONTEXT_KEY: Final = "operator_config"
#: Lambda allows 4 KB of environment in all; leave room for the other variables.
MAX_OPERATOR_CONFIG_BYTES: Final = 3072


def stack_name(stage: str) -> str:
    return f"parley-{stage}"


def operator_environment(app: App) -> dict[str, str]:
    """``PARLEY_OPERATOR_CONFIG`` from the ``operator_config`` context's file, checked now; else nothing."""
    path = app.node.try_get_context(OPERATOR_CONFIG_CONTEXT_KEY)
    if not path:
        return {}
    load_operator_config(path, environ={})  # a broken file fails the synth with the loader's message
    text = Path(path).read_text(encoding="utf-8")
    if len(text.encode()) > MAX_OPERATOR_CONFIG_BYTES:
        raise ValueError(
            f"{path}: an operator configuration in the environment may take {MAX_OPERATOR_CONFIG_BYTES} "
            "bytes at most (Lambda's limit is 4 KB for all variables)"
        )
    return {OPERATOR_CONFIG_VARIABLE: text}


def build(
    app: App,
    stages: Sequence[str] | None = None,
    repository: Path = REPOSITORY,
    environment: Mapping[str, str] | None = None,
) -> list[ParleyStack]:
    """Add a stack for each of ``stages`` (default: the ``stage`` context, else ``dev``) to ``app``.

    ``environment`` is added to every function's (default: from the ``operator_config`` context).
    """
    if stages is None:
        stages = [str(app.node.try_get_context(STAGE_CONTEXT_KEY) or DEFAULT_STAGE)]
    if environment is None:
        environment = operator_environment(app)
    stacks = []
    for stage in stages:
        stack = ParleyStack(
            app,
            stack_name(stage),
            settings=stage_settings(stage),
            repository=repository,
            environment=environment,
        )
        Tags.of(stack).add("project", "parley")
        Tags.of(stack).add("stage", stage)
        stacks.append(stack)
    # cdk-nag 3 is a policy-validation plugin: findings not acknowledged (see ``nag``) fail the synth.
    Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))
    return stacks
