"""The operator configuration on AWS: an SSM parameter the operator changes without redeploying, read
by the functions at most once a minute (http-api.md, "Operator configuration"; ``parley.config``)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from parley.config import (
    OPERATOR_CONFIG_MAX_AGE_SECONDS,
    LiveOperatorConfig,
    OperatorConfig,
    OperatorConfigError,
    OperatorConfigParameter,
    parse_operator_config,
)

NAME = "/parley/dev/operator-config"
FIRST = """
principals:
  - id: 0c9a6e1e-2a4b-4c8e-9d1f-5b7a3e2f1c0d
    grants: [{ org: acme, playbook: campaigns, role: write }]
tool_servers:
  - name: chat
    url: https://chat.example.com/mcp
    orgs: [acme]
    headers: { Authorization: "Bearer {{resolve:secretsmanager:parley/dev/tool-servers/chat}}" }
"""
SECOND = """
principals:
  - id: 0c9a6e1e-2a4b-4c8e-9d1f-5b7a3e2f1c0d
    grants: [{ org: acme, playbook: campaigns, role: read }]
  - id: maria
    grants: [{ org: acme, playbook: launches, role: write }]
limits: { interaction_open_requests: 5 }
"""


@pytest.fixture
def ssm() -> Iterator[Any]:
    import boto3
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("ssm", region_name="us-east-1")
        client.put_parameter(Name=NAME, Value=FIRST, Type="String")
        yield client


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Counting:
    """An SSM client that counts its calls."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.calls = 0

    def get_parameter(self, **arguments: Any) -> Any:
        self.calls += 1
        return self.client.get_parameter(**arguments)


def roles(config: OperatorConfig) -> dict[str, Any]:
    return {p.id: {(g.org, g.playbook): g.role for g in p.grants} for p in config.principals}


def test_the_parameter_is_read_and_kept_for_a_minute(ssm: Any) -> None:
    clock, counting = Clock(), Counting(ssm)
    source = OperatorConfigParameter(counting, NAME, environ={}, monotonic=clock)

    first = source()
    ssm.put_parameter(Name=NAME, Value=SECOND, Type="String", Overwrite=True)
    clock.now += OPERATOR_CONFIG_MAX_AGE_SECONDS - 1

    assert source() is first
    assert counting.calls == 1
    assert [s.name for s in first.tool_servers] == ["chat"]


def test_a_change_is_seen_once_the_minute_has_passed(ssm: Any) -> None:
    clock = Clock()
    source = OperatorConfigParameter(ssm, NAME, environ={}, monotonic=clock)
    source()
    ssm.put_parameter(Name=NAME, Value=SECOND, Type="String", Overwrite=True)
    clock.now += OPERATOR_CONFIG_MAX_AGE_SECONDS

    config = source()

    assert roles(config) == {
        "0c9a6e1e-2a4b-4c8e-9d1f-5b7a3e2f1c0d": {("acme", "campaigns"): "read"},
        "maria": {("acme", "launches"): "write"},
    }
    assert config.limits.interaction_open_requests == 5


def test_an_unchanged_version_is_not_parsed_again(ssm: Any) -> None:
    clock = Clock()
    source = OperatorConfigParameter(ssm, NAME, environ={}, monotonic=clock)
    first = source()
    clock.now += 10 * OPERATOR_CONFIG_MAX_AGE_SECONDS

    assert source() is first


def test_the_environment_variable_wins_over_the_parameters_limit(ssm: Any) -> None:
    ssm.put_parameter(Name=NAME, Value=SECOND, Type="String", Overwrite=True)
    source = OperatorConfigParameter(ssm, NAME, environ={"INTERACTION_OPEN_REQUESTS": "7"})

    assert source().limits.interaction_open_requests == 7


@pytest.mark.parametrize(
    ("broken", "why"),
    [
        ("principals: [\n", "not valid YAML"),
        ("principals: [{id: a, token: dev-token}]", "a token is for the local server only"),
        (
            "tool_servers: [{name: c, url: 'https://x', orgs: [a], headers: {X-Key: sk-live-123456}}]",
            "takes its secret from Secrets Manager",
        ),
    ],
)
def test_a_broken_edit_keeps_the_last_good_configuration_and_says_why(
    ssm: Any, caplog: pytest.LogCaptureFixture, broken: str, why: str
) -> None:
    clock = Clock()
    source = OperatorConfigParameter(ssm, NAME, environ={}, monotonic=clock)
    good = source()
    ssm.put_parameter(Name=NAME, Value=broken, Type="String", Overwrite=True)
    clock.now += OPERATOR_CONFIG_MAX_AGE_SECONDS

    with caplog.at_level(logging.WARNING, logger="parley.config"):
        assert source() is good

    (record,) = caplog.records
    assert "Kept the last good operator configuration" in record.getMessage()
    assert why in record.getMessage()
    assert "dev-token" not in record.getMessage() and "sk-live-123456" not in record.getMessage()
    # Tried again a minute later, and taken once it is fixed.
    ssm.put_parameter(Name=NAME, Value=SECOND, Type="String", Overwrite=True)
    clock.now += OPERATOR_CONFIG_MAX_AGE_SECONDS
    assert "maria" in roles(source())


def test_a_parameter_that_cannot_be_read_keeps_the_last_good_configuration(ssm: Any) -> None:
    clock = Clock()
    source = OperatorConfigParameter(ssm, NAME, environ={}, monotonic=clock)
    good = source()
    ssm.delete_parameter(Name=NAME)
    clock.now += OPERATOR_CONFIG_MAX_AGE_SECONDS

    assert source() is good


def test_without_a_first_good_read_there_is_no_configuration(ssm: Any) -> None:
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError):
        OperatorConfigParameter(ssm, "/parley/dev/missing", environ={})()
    ssm.put_parameter(Name=NAME, Value="principals: 3", Type="String", Overwrite=True)
    with pytest.raises(OperatorConfigError, match=f"SSM parameter {NAME}: principals"):
        OperatorConfigParameter(ssm, NAME, environ={})()


def test_a_live_configuration_follows_its_source() -> None:
    current = [parse_operator_config(FIRST, "first", environ={}, aws=True)]
    live = LiveOperatorConfig.following(lambda: current[0])

    assert isinstance(live, OperatorConfig)
    assert roles(live) == {"0c9a6e1e-2a4b-4c8e-9d1f-5b7a3e2f1c0d": {("acme", "campaigns"): "write"}}
    current[0] = parse_operator_config(SECOND, "second", environ={}, aws=True)

    assert live.principal_named("maria").role_on("acme", "launches") == "write"
    assert live.principal_named("0c9a6e1e-2a4b-4c8e-9d1f-5b7a3e2f1c0d").role_on("acme", "campaigns") == "read"
    assert live.tool_servers == ()
    assert live.limits.interaction_open_requests == 5
    assert "maria" in repr(live)


def test_a_live_configuration_reads_its_source_when_first_used() -> None:
    reads: list[int] = []

    def source() -> OperatorConfig:
        reads.append(1)
        return parse_operator_config(FIRST, "first", environ={}, aws=True)

    live = LiveOperatorConfig(source)
    assert reads == []  # an event that needs no configuration never reads it
    assert [p.id for p in live.principals] == ["0c9a6e1e-2a4b-4c8e-9d1f-5b7a3e2f1c0d"]
    assert reads == [1]
    LiveOperatorConfig.following(source)
    assert reads == [1, 1]  # following reads at once, so a broken source fails there


def test_the_deployed_runtime_reads_a_broken_parameter_only_when_it_is_used(
    ssm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from parley.aws import environment as runtime_module

    ssm.put_parameter(Name=NAME, Value="principals: 3", Type="String", Overwrite=True)
    monkeypatch.setattr(runtime_module, "lazy_client", lambda service: ssm)
    config = runtime_module.operator_from_environment({"PARLEY_OPERATOR_CONFIG_PARAMETER": NAME})

    with pytest.raises(OperatorConfigError, match=f"SSM parameter {NAME}: principals"):
        config.principal_named("anyone")


def test_the_deployed_runtime_follows_the_parameter(ssm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from parley.aws import environment as runtime_module

    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setattr(runtime_module, "lazy_client", lambda service: ssm)
    config = runtime_module.operator_from_environment(
        {"PARLEY_OPERATOR_CONFIG_PARAMETER": NAME, "PARLEY_OPERATOR_CONFIG": "principals: 3"}
    )

    assert isinstance(config, LiveOperatorConfig)
    assert [p.id for p in config.principals] == ["0c9a6e1e-2a4b-4c8e-9d1f-5b7a3e2f1c0d"]


def test_without_the_parameter_the_runtime_reads_the_variable_as_before() -> None:
    from parley.aws.environment import operator_from_environment

    config = operator_from_environment({"PARLEY_OPERATOR_CONFIG": "principals: [{id: a, token: t}]"})

    assert not isinstance(config, LiveOperatorConfig)
    assert [p.id for p in config.principals] == ["a"]
