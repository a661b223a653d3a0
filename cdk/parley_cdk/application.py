"""Build the app: one Parley stack per stage, checked by cdk-nag's AWS Solutions rules.

Context keys: ``stage`` (``dev`` or ``prod``, default ``dev``) and the deployment's options
(``parley_cdk.options``: the token issuer, the principal claim, the tool server secrets, the Bedrock
models the reason function may call, the alarm address, the operator configuration's first value).
Nothing is looked up in an account, so the synth works offline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from aws_cdk import App, Tags, Validations
from cdk_nag import AwsSolutionsChecks

from parley_cdk.options import STAGE_KEY, DeploymentOptions, options_from_context
from parley_cdk.settings import DEFAULT_STAGE, stage_settings
from parley_cdk.stack import ParleyStack

#: The repository root (``cdk/parley_cdk/application.py`` → ``.``): functions, layers, pyproject.
REPOSITORY: Final = Path(__file__).resolve().parents[2]


def stack_name(stage: str) -> str:
    return f"parley-{stage}"


def build(
    app: App,
    stages: Sequence[str] | None = None,
    repository: Path = REPOSITORY,
    environment: Mapping[str, str] | None = None,
    options: DeploymentOptions | None = None,
) -> list[ParleyStack]:
    """Add a stack for each of ``stages`` (default: the ``stage`` context, else ``dev``) to ``app``.

    ``options`` default to the app's context; ``environment`` is added to every function's.
    """
    if stages is None:
        stages = [str(app.node.try_get_context(STAGE_KEY) or DEFAULT_STAGE)]
    if options is None:
        options = options_from_context(app.node.try_get_context)
    stacks = []
    for stage in stages:
        stack = ParleyStack(
            app,
            stack_name(stage),
            settings=stage_settings(stage),
            repository=repository,
            options=options,
            environment=environment,
        )
        Tags.of(stack).add("project", "parley")
        Tags.of(stack).add("stage", stage)
        stacks.append(stack)
    # cdk-nag 3 is a policy-validation plugin: findings not acknowledged (see ``nag``) fail the synth.
    Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))
    return stacks
