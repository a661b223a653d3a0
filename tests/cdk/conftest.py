"""The CDK app (``cdk/parley_cdk``) is a script folder, not an installed package: import it from there.

``synthesized`` builds one app with both stages and a third stack deployed with every context option
(an existing OIDC issuer, named secrets, Bedrock models, an alarm address, an operator configuration),
and synthesizes it once per test session (per xdist worker; about 10 s and 600 MB), with bundling skipped
(``aws:cdk:bundling-stacks: []``: the layer points at its source folder, pip is not run). The synth runs
the cdk-nag plugin too, so it would already fail on an unacknowledged finding.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
CDK_DIR = HERE.parents[1] / "cdk"

for folder in (CDK_DIR, HERE):  # the app's package, and the template helpers (``cfn``)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
# Read by the jsii node process when aws_cdk is first imported (by the test modules, after this file).
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

#: The options of the third stack (``options``): every context choice made.
OIDC_ISSUER = "https://login.example.com/tenant-7/"
OIDC_AUDIENCES = ("parley-api", "parley-cli")
OIDC_JWKS = "https://login.example.com/tenant-7/keys"
NAMED_SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:chat-token-AbCdEf"
#: A foundation model, and two cross-region inference profiles (a geography's and the global one).
BEDROCK_MODELS = (
    "anthropic.claude-sonnet-4-5-20250929-v1:0",
    "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "global.anthropic.claude-haiku-4-5-20251001-v1:0",
)
OPERATOR_CONFIG = """principals:
  - id: alice@example.com
    grants: [{ org: acme, playbook: campaigns, role: write }]
tool_servers:
  - name: chat
    url: https://chat.example.com/mcp
    orgs: [acme]
    headers: { Authorization: "Bearer {{resolve:secretsmanager:parley/prod/tool-servers/chat}}" }
"""


@dataclass(frozen=True)
class Synthesized:
    #: ``dev``, ``prod`` and ``options`` (dev settings, every context option set).
    stacks: dict[str, Any]
    templates: dict[str, Any]
    #: Error-level messages of each stack artifact (CDK's own, e.g. a failed validation).
    errors: dict[str, list[str]]
    #: The context keys the synth would have to look up in an account (none: the synth is offline).
    missing: list[str]


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    from aws_cdk import App
    from aws_cdk.assertions import Template

    from parley_cdk.application import REPOSITORY, build
    from parley_cdk.options import DeploymentOptions, OidcIssuer
    from parley_cdk.settings import STAGES, stage_settings
    from parley_cdk.stack import ParleyStack

    app = App(
        outdir=str(tmp_path_factory.mktemp("cdk.out")),
        context={"aws:cdk:bundling-stacks": []},
    )
    stacks: dict[str, Any] = {
        stack.settings.name: stack for stack in build(app, stages=STAGES, environment={})
    }
    stacks["options"] = ParleyStack(
        app,
        "parley-options",
        settings=stage_settings("dev"),
        repository=REPOSITORY,
        options=DeploymentOptions(
            oidc=OidcIssuer(issuer=OIDC_ISSUER, audiences=OIDC_AUDIENCES, jwks_uri=OIDC_JWKS),
            principal_claim="email",
            tool_server_secrets=(NAMED_SECRET_ARN, "shared/chat-key", "parley/prod/tool-servers/*"),
            bedrock_models=BEDROCK_MODELS,
            alarm_email="oncall@example.com",
            operator_config=OPERATOR_CONFIG,
        ),
        environment={},
    )
    assembly = app.synth()
    templates, errors = {}, {}
    for name, stack in stacks.items():
        artifact = assembly.get_stack_by_name(stack.stack_name)
        templates[name] = Template.from_json(artifact.template)
        errors[name] = [str(m.entry.data) for m in artifact.messages if m.level.name == "ERROR"]
    # (read from the file: jsii cannot hand the whole manifest object over to Python)
    manifest = json.loads((Path(assembly.directory) / "manifest.json").read_text(encoding="utf-8"))
    missing = [context["key"] for context in manifest.get("missing", [])]
    return Synthesized(stacks=stacks, templates=templates, errors=errors, missing=missing)


@pytest.fixture
def dev(synthesized: Synthesized) -> Any:
    return synthesized.templates["dev"]


@pytest.fixture
def prod(synthesized: Synthesized) -> Any:
    return synthesized.templates["prod"]


@pytest.fixture
def chosen(synthesized: Synthesized) -> Any:
    """The stack deployed with every context option (``conftest.OIDC_ISSUER`` …)."""
    return synthesized.templates["options"]
