"""Building the app from its context: the stage and the optional operator configuration."""

from __future__ import annotations

from pathlib import Path

import pytest
from aws_cdk import App

from parley.config import OPERATOR_CONFIG_VARIABLE, OperatorConfigError
from parley_cdk.application import MAX_OPERATOR_CONFIG_BYTES, operator_environment
from parley_cdk.settings import stage_settings

CONFIG = """principals:
  - id: alice
    token: dev-alice
    grants:
      - { org: acme, playbook: campaigns, role: write }
tool_servers: []
"""


def test_without_operator_config_the_functions_get_none() -> None:
    assert operator_environment(App()) == {}


def test_an_operator_config_file_becomes_the_functions_variable(tmp_path: Path) -> None:
    path = tmp_path / "operator.yaml"
    path.write_text(CONFIG)

    environment = operator_environment(App(context={"operator_config": str(path)}))

    assert environment == {OPERATOR_CONFIG_VARIABLE: CONFIG}


def test_a_broken_operator_config_fails_the_synth(tmp_path: Path) -> None:
    path = tmp_path / "operator.yaml"
    path.write_text("principals: 3\n")

    with pytest.raises(OperatorConfigError, match=r"operator\.yaml"):
        operator_environment(App(context={"operator_config": str(path)}))


def test_an_operator_config_too_large_for_lambdas_environment_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "operator.yaml"
    padding = "#" * MAX_OPERATOR_CONFIG_BYTES
    path.write_text(f"{CONFIG}{padding}\n")

    with pytest.raises(ValueError, match="4 KB"):
        operator_environment(App(context={"operator_config": str(path)}))


def test_only_dev_and_prod_are_stages() -> None:
    assert stage_settings("prod").retain_data is True
    assert stage_settings("dev").retain_data is False
    with pytest.raises(ValueError, match="dev, prod"):
        stage_settings("staging")
