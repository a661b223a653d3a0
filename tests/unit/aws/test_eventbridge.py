"""The EventBridge Scheduler adapter: names, at-expressions, and the calls against moto's Scheduler
(which stores schedules and never fires them), with botocore's stubber for the errors moto does not make."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from hypothesis import given
from hypothesis import strategies as st

from parley.aws.eventbridge import (
    MAX_EVENT_AGE_SECONDS,
    MAX_RETRY_ATTEMPTS,
    EventBridgeScheduler,
    at_expression,
    schedule_name,
)
from parley.errors import Problem

ALLOWED = re.compile(r"^[0-9A-Za-z_.-]{1,64}$")
GROUP = "parley-test-timers"
TARGET = "arn:aws:lambda:us-east-1:123456789012:function:parley-test-timer"
ROLE = "arn:aws:iam::123456789012:role/parley-test-scheduler"
WORK = {"work": "expire", "run": {"org": "acme", "playbook": "campaigns", "run_id": "r-1"}}
AT = datetime(2026, 10, 19, 10, 18, 42, 123000, tzinfo=UTC)


def _client() -> Any:
    return boto3.client(
        "scheduler", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    )


@pytest.fixture
def moto_scheduler() -> Iterator[tuple[Any, EventBridgeScheduler]]:
    from moto import mock_aws

    with mock_aws():
        client = _client()
        client.create_schedule_group(Name=GROUP)
        yield client, EventBridgeScheduler(client, GROUP, TARGET, ROLE)


# -- names ------------------------------------------------------------------------------------------


def test_a_name_eventbridge_takes_is_kept() -> None:
    name = "expire-7f1c1a8e-3f3b-4c63-9a40-0b4b3bfcd2a1"
    assert schedule_name(name) == name
    assert schedule_name("a" * 64) == "a" * 64


def test_a_long_or_unsafe_name_is_cut_and_keeps_a_digest_of_the_whole() -> None:
    long = "expire-" + "acme/campaigns/" * 10 + "r-1"
    other = "expire-" + "acme/campaigns/" * 10 + "r-2"

    assert ALLOWED.match(schedule_name(long))
    assert schedule_name(long).startswith("expire-acme-campaigns-")
    assert schedule_name(long) == schedule_name(long)
    assert schedule_name(long) != schedule_name(other)
    assert ALLOWED.match(schedule_name("expire run #1"))
    assert schedule_name("expire run #1") != schedule_name("expire run !1")
    assert ALLOWED.match(schedule_name("日本語"))


@given(st.text(min_size=1, max_size=300))
def test_every_name_becomes_an_allowed_one(name: str) -> None:
    safe = schedule_name(name)

    assert ALLOWED.match(safe), safe
    assert safe == schedule_name(name)


@given(st.text(min_size=1, max_size=120), st.text(min_size=1, max_size=120))
def test_different_names_stay_different(first: str, second: str) -> None:
    if first != second:
        assert schedule_name(first) != schedule_name(second)


# -- at(...) ----------------------------------------------------------------------------------------


def test_the_time_rounds_up_to_the_next_second_in_utc() -> None:
    assert at_expression(AT) == "at(2026-10-19T10:18:43)"
    assert at_expression(AT.replace(microsecond=0)) == "at(2026-10-19T10:18:42)"
    assert at_expression(datetime(2026, 12, 31, 23, 59, 59, 1, tzinfo=UTC)) == "at(2027-01-01T00:00:00)"
    in_paris = datetime(2026, 10, 19, 12, 18, 42, tzinfo=timezone(timedelta(hours=2)))
    assert at_expression(in_paris) == "at(2026-10-19T10:18:42)"


def test_a_time_without_a_zone_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone"):
        at_expression(datetime(2026, 10, 19, 10, 18, 42))


# -- the calls ------------------------------------------------------------------------------------------


def test_schedule_creates_a_one_time_schedule_that_calls_the_timer_with_the_work(
    moto_scheduler: tuple[Any, EventBridgeScheduler],
) -> None:
    client, scheduler = moto_scheduler

    scheduler.schedule("expire-r-1", AT, WORK)

    schedule = client.get_schedule(Name="expire-r-1", GroupName=GROUP)
    assert schedule["ScheduleExpression"] == "at(2026-10-19T10:18:43)"
    assert schedule["ScheduleExpressionTimezone"] == "UTC"
    assert schedule["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert schedule["ActionAfterCompletion"] == "DELETE"
    assert schedule["State"] == "ENABLED"
    target = schedule["Target"]
    assert (target["Arn"], target["RoleArn"]) == (TARGET, ROLE)
    assert json.loads(target["Input"]) == WORK
    assert target["RetryPolicy"] == {
        "MaximumEventAgeInSeconds": MAX_EVENT_AGE_SECONDS,
        "MaximumRetryAttempts": MAX_RETRY_ATTEMPTS,
    }


def test_scheduling_a_name_twice_is_harmless_and_keeps_the_first(
    moto_scheduler: tuple[Any, EventBridgeScheduler],
) -> None:
    client, scheduler = moto_scheduler

    scheduler.schedule("expire-r-1", AT, WORK)
    scheduler.schedule("expire-r-1", AT + timedelta(hours=1), WORK)

    schedules = client.list_schedules(GroupName=GROUP)["Schedules"]
    assert [s["Name"] for s in schedules] == ["expire-r-1"]
    assert client.get_schedule(Name="expire-r-1", GroupName=GROUP)["ScheduleExpression"].endswith("10:18:43)")


def test_cancel_deletes_and_cancelling_what_is_gone_is_harmless(
    moto_scheduler: tuple[Any, EventBridgeScheduler],
) -> None:
    client, scheduler = moto_scheduler
    scheduler.schedule("expire-r-1", AT, WORK)

    scheduler.cancel("expire-r-1")
    scheduler.cancel("expire-r-1")
    scheduler.cancel("never-made")

    assert client.list_schedules(GroupName=GROUP)["Schedules"] == []


def test_a_long_name_is_scheduled_and_cancelled_under_the_same_safe_name(
    moto_scheduler: tuple[Any, EventBridgeScheduler],
) -> None:
    client, scheduler = moto_scheduler
    name = "expire-acme-campaigns-" + "7f1c1a8e-3f3b-4c63-9a40-0b4b3bfcd2a1" * 2

    scheduler.schedule(name, AT, WORK)
    assert [s["Name"] for s in client.list_schedules(GroupName=GROUP)["Schedules"]] == [schedule_name(name)]
    scheduler.cancel(name)
    assert client.list_schedules(GroupName=GROUP)["Schedules"] == []


@pytest.mark.parametrize(
    ("code", "status"),
    [("ThrottlingException", 400), ("ServiceQuotaExceededException", 402), ("InternalServerException", 500)],
)
def test_overload_is_unavailable(code: str, status: int) -> None:
    client = _client()
    stub = Stubber(client)
    stub.add_client_error("create_schedule", service_error_code=code, http_status_code=status)

    with stub, pytest.raises(Problem) as raised:
        EventBridgeScheduler(client, GROUP, TARGET, ROLE).schedule("expire-r-1", AT, WORK)

    assert raised.value.reason == "unavailable"


def test_a_refused_schedule_is_a_bug_and_propagates() -> None:
    from botocore.exceptions import ClientError

    client = _client()
    stub = Stubber(client)
    stub.add_client_error("create_schedule", service_error_code="ValidationException", http_status_code=400)

    with stub, pytest.raises(ClientError):
        EventBridgeScheduler(client, GROUP, TARGET, ROLE).schedule("expire-r-1", AT, WORK)


# -- work due now, and dead letters -----------------------------------------------------------------------


class _Functions:
    """A Lambda client that records asynchronous invocations."""

    def __init__(self) -> None:
        self.invoked: list[dict[str, Any]] = []

    def invoke(self, **arguments: Any) -> dict[str, Any]:
        self.invoked.append(arguments)
        return {"StatusCode": 202}


def test_work_due_now_invokes_the_timer_directly_and_makes_no_schedule() -> None:
    from moto import mock_aws

    with mock_aws():
        client = _client()
        client.create_schedule_group(Name=GROUP)
        functions = _Functions()
        scheduler = EventBridgeScheduler(client, GROUP, TARGET, ROLE, functions=functions, now=lambda: AT)  # type: ignore[arg-type]

        scheduler.schedule("deliver-r-1-1", AT, WORK)
        scheduler.schedule("deliver-r-1-2", AT + timedelta(minutes=1), WORK)

        assert len(functions.invoked) == 1
        invoked = functions.invoked[0]
        assert (invoked["FunctionName"], invoked["InvocationType"]) == (TARGET, "Event")
        assert json.loads(invoked["Payload"]) == WORK
        names = [s["Name"] for s in client.list_schedules(GroupName=GROUP)["Schedules"]]
        assert names == ["deliver-r-1-2"]


def test_a_schedule_names_its_dead_letter_queue() -> None:
    from moto import mock_aws

    queue = "arn:aws:sqs:us-east-1:123456789012:parley-test-schedules-dlq"
    with mock_aws():
        client = _client()
        client.create_schedule_group(Name=GROUP)
        EventBridgeScheduler(client, GROUP, TARGET, ROLE, dead_letter_arn=queue).schedule(
            "expire-r-1", AT, WORK
        )
        target = client.get_schedule(Name="expire-r-1", GroupName=GROUP)["Target"]
        assert target["DeadLetterConfig"] == {"Arn": queue}


def test_work_due_within_15_minutes_goes_to_the_timer_queue_with_its_delay() -> None:
    from moto import mock_aws

    with mock_aws():
        client = _client()
        client.create_schedule_group(Name=GROUP)
        sqs = boto3.client(
            "sqs", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
        )
        url = sqs.create_queue(QueueName="parley-test-timer")["QueueUrl"]
        scheduler = EventBridgeScheduler(
            client,
            GROUP,
            TARGET,
            ROLE,
            functions=_Functions(),
            queue=sqs,
            queue_url=url,
            now=lambda: AT,  # type: ignore[arg-type]
        )

        scheduler.schedule("read-c-1", AT + timedelta(seconds=5), WORK)
        scheduler.schedule("deliver-r-1-5", AT + timedelta(minutes=15), WORK)
        scheduler.schedule("expire-r-1", AT + timedelta(minutes=16), WORK)

        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        assert attributes["ApproximateNumberOfMessagesDelayed"] == "2"
        names = [s["Name"] for s in client.list_schedules(GroupName=GROUP)["Schedules"]]
        assert names == ["expire-r-1"]


def test_the_timer_takes_a_batch_from_the_queue_and_reports_the_records_that_failed() -> None:
    from parley.executions.entry import build_timer_handler

    handler = build_timer_handler(None)  # type: ignore[arg-type]
    batch = {
        "Records": [
            {"messageId": "m-1", "body": json.dumps({"work": "unknown", "run": WORK["run"]})},
            {"messageId": "m-2", "body": "not json"},
        ]
    }
    assert handler(batch, None) == {
        "batchItemFailures": [{"itemIdentifier": "m-1"}, {"itemIdentifier": "m-2"}]
    }
