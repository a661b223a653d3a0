"""The template and the state machines clean (issue 28, item 3).

- ``cfn-lint`` finds no error and no warning in any synthesized stack (dev, prod, and the stack with every
  context option of ``conftest``), with the project's configuration (``.cfnlintrc.yaml``, where each rule
  ignored says why). The templates are written to a folder as ``cdk synth`` writes them, and linted there.
- The run's state machine passes ``asl-validator`` (npm; the Amazon States Language's schema, its
  transitions, paths and ARNs): as ``parley.infrastructure.state_machine`` writes it with the functions'
  ARNs, and as each synthesized stack deploys it, its ``Fn::GetAtt`` tokens resolved to the ARNs
  CloudFormation would give. (The compiled workflows' machines are checked by
  ``tests/unit/workflow/test_asl_validator.py``.)
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest
import yaml
from aws_cdk.assertions import Template
from cfn import properties_of

ROOT: Final = Path(__file__).resolve().parents[2]
CFN_LINT_CONFIG: Final = ROOT / ".cfnlintrc.yaml"
ASL_VALIDATOR: Final = ROOT / "node_modules" / "asl-validator" / "dist" / "bin" / "asl-validator.js"

#: Where the resolved ARNs say the stack is deployed (any account and region would do).
REGION: Final = "eu-west-1"
ACCOUNT: Final = "123456789012"
PSEUDO_PARAMETERS: Final = {
    "AWS::Partition": "aws",
    "AWS::Region": REGION,
    "AWS::AccountId": ACCOUNT,
    "AWS::URLSuffix": "amazonaws.com",
}

pytestmark = pytest.mark.cdk

needs_asl_validator = pytest.mark.skipif(
    not ASL_VALIDATOR.is_file() or shutil.which("node") is None,
    reason="asl-validator (make install) or node is missing",
)


# -- cfn-lint ------------------------------------------------------------------------------------------


def _lint(paths: list[Path]) -> list[str]:
    """cfn-lint's findings in ``paths``, with the project's configuration, one line each."""
    from cfnlint.config import ConfigMixIn
    from cfnlint.runner import Runner

    config = ConfigMixIn(["--config-file", str(CFN_LINT_CONFIG), "--", *map(str, paths)])
    return [
        f"{match.rule.id} {Path(match.filename or '').name}:{match.linenumber} {match.message}"
        for match in Runner(config).run()
    ]


def test_cfn_lint_finds_no_error_and_no_warning_in_any_stack(synthesized: Any, tmp_path: Path) -> None:
    paths = []
    for name, template in synthesized.templates.items():
        path = tmp_path / f"parley-{name}.template.json"
        path.write_text(json.dumps(template.to_json(), indent=1), encoding="utf-8")
        paths.append(path)

    findings = _lint(paths)

    assert len(paths) == 3
    assert not findings, "\n".join(findings)


def test_cfn_lint_finds_what_is_wrong(dev: Template, tmp_path: Path) -> None:
    """The check can fail: a function's memory out of Lambda's range, and a reference to nothing."""
    template = dev.to_json()
    function = next(r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function")
    function["Properties"]["MemorySize"] = 64
    function["Properties"]["Environment"]["Variables"]["PARLEY_NOWHERE"] = {"Ref": "Nowhere"}
    path = tmp_path / "broken.template.json"
    path.write_text(json.dumps(template, indent=1), encoding="utf-8")

    rules = {finding.split()[0] for finding in _lint([path])}

    # E3034: a number out of its range; E1020: a Ref to no resource or parameter.
    assert rules == {"E3034", "E1020"}, rules


def test_each_rule_the_configuration_ignores_says_why() -> None:
    text = CFN_LINT_CONFIG.read_text(encoding="utf-8")
    ignored = yaml.safe_load(text).get("ignore_checks", [])
    lines = text.splitlines()
    for rule in ignored:
        (index,) = [i for i, line in enumerate(lines) if re.fullmatch(rf"\s*-\s*{rule}\s*(#.*)?", line)]
        # The reason is the comment just above the rule's line.
        assert index > 0 and lines[index - 1].lstrip().startswith("#"), f"{rule} is ignored without a why"


# -- asl-validator ---------------------------------------------------------------------------------------


def _validate(tmp_path: Path, definitions: dict[str, dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    """asl-validator's command line over ``definitions`` (each written to ``<name>.asl.json``)."""
    arguments = []
    for name, definition in definitions.items():
        path = tmp_path / f"{name}.asl.json"
        path.write_text(json.dumps(definition, indent=1), encoding="utf-8")
        arguments += ["--json-path", str(path)]
    return subprocess.run(
        ["node", str(ASL_VALIDATOR), *arguments], capture_output=True, text=True, timeout=120, check=False
    )


def function_arn(name: str) -> str:
    return f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}"


def resolve(value: Any, resources: dict[str, Any]) -> Any:
    """``value`` with the intrinsics a state machine's definition holds resolved as CloudFormation would:
    ``Fn::Join``, ``Ref`` to a pseudo parameter, ``Fn::GetAtt`` of a named function's ARN."""
    if isinstance(value, list):
        return [resolve(item, resources) for item in value]
    if not isinstance(value, dict):
        return value
    if list(value) == ["Fn::Join"]:
        separator, parts = value["Fn::Join"]
        return separator.join(resolve(part, resources) for part in parts)
    if list(value) == ["Ref"] and value["Ref"] in PSEUDO_PARAMETERS:
        return PSEUDO_PARAMETERS[value["Ref"]]
    if list(value) == ["Fn::GetAtt"]:
        logical_id, attribute = value["Fn::GetAtt"]
        found = resources[logical_id]
        if found["Type"] == "AWS::Lambda::Function" and attribute == "Arn":
            return function_arn(resolve(found["Properties"]["FunctionName"], resources))
    raise AssertionError(f"an intrinsic a state machine should not hold: {json.dumps(value)[:200]}")


def deployed_definition(template: Template) -> dict[str, Any]:
    """The run's state machine of a synthesized stack, as Step Functions would receive it."""
    resources = template.to_json()["Resources"]
    text = resolve(properties_of(template, "AWS::StepFunctions::StateMachine")["DefinitionString"], resources)
    definition: dict[str, Any] = json.loads(text)
    return definition


@needs_asl_validator
def test_the_runs_state_machine_is_valid_asl_as_written_and_as_deployed(
    synthesized: Any, tmp_path: Path
) -> None:
    from parley.infrastructure.state_machine import state_machine_definition

    written = state_machine_definition(function_arn("parley-dev-wait"), function_arn("parley-dev-settle"))
    definitions = {"written": written}
    for name, template in synthesized.templates.items():
        definitions[name] = deployed_definition(template)

    done = _validate(tmp_path, definitions)

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("is valid") == 4, done.stdout
    # The deployed machine names the stage's own functions, resolved (no token left).
    assert definitions["prod"] == state_machine_definition(
        function_arn("parley-prod-wait"), function_arn("parley-prod-settle")
    )


@needs_asl_validator
def test_asl_validator_refuses_a_broken_state_machine(tmp_path: Path) -> None:
    """The check can fail: a Catch whose Next goes nowhere, and a Resource that is no ARN."""
    from parley.infrastructure.state_machine import SETTLE_ENDING_STATE, WAIT_STATE, state_machine_definition

    lost = state_machine_definition(function_arn("w"), function_arn("s"))
    lost["States"][WAIT_STATE]["Catch"][0]["Next"] = "Nowhere"
    no_arn = state_machine_definition(function_arn("w"), function_arn("s"))
    no_arn["States"][SETTLE_ENDING_STATE]["Resource"] = "lambda:invoke"

    done = _validate(tmp_path, {"lost": lost, "no-arn": no_arn})

    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "Missing 'StartAt'|'Next'|'Default' target: Nowhere" in output
    assert "/States/Settle the ending/Resource is invalid" in output
    assert len(re.findall(r'State machine definition ".*" is invalid:', output)) == 2, output
