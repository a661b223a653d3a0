"""Retries within the call's budget, and what the HTTP edge makes of failures before any answer."""

from __future__ import annotations

import ssl
from datetime import UTC, datetime

import httpx
import pytest
from pydantic import SecretStr
from unit.models.providers.provider_doubles import Exchange, FakeClock, call, failure_of, model_request

from parley.models.providers import ModelCallFailed, ProviderSettings
from parley.models.providers.retrying import Deadline, is_retried, with_retries
from parley.models.providers.transport import retry_after_seconds

OPENAI = ProviderSettings("openai", "openai", api_key=SecretStr("sk-test-0123456789"))
ANSWER = {"status": "completed", "output": [], "usage": None}


def failing(
    kind: str = "unavailable", status: int | None = 503, after: float | None = None
) -> ModelCallFailed:
    return ModelCallFailed(kind, "openai", "it failed", status=status, retry_after_seconds=after)  # type: ignore[arg-type]


class Attempts:
    def __init__(self, *outcomes: ModelCallFailed | str, clock: FakeClock, takes: float = 0.0) -> None:
        self.outcomes = list(outcomes)
        self.remaining: list[float] = []
        self.clock = clock
        self.takes = takes

    def __call__(self, remaining: float) -> str:
        self.remaining.append(remaining)
        self.clock.now += self.takes
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, ModelCallFailed):
            raise outcome
        return outcome


@pytest.mark.parametrize(
    ("status", "retried"),
    [
        (408, True),
        (409, True),
        (429, True),
        (500, True),
        (503, True),
        (529, True),
        (400, False),
        (401, False),
        (404, False),
    ],
)
def test_which_statuses_are_retried(status: int, retried: bool) -> None:
    assert is_retried(failing(status=status)) is retried


def test_no_connection_is_retried_and_a_timeout_is_not() -> None:
    assert is_retried(failing("unreachable", None))
    assert not is_retried(failing("timed_out", None))
    assert not is_retried(failing("certificate_untrusted", None))


def test_at_most_two_retries_then_the_last_failure() -> None:
    clock = FakeClock()
    last = failing(status=502)
    attempts = Attempts(failing(), failing(), last, "never", clock=clock)

    with pytest.raises(ModelCallFailed) as raised:
        with_retries(attempts, provider="openai", deadline=Deadline.after(60, clock), sleep=clock.sleep)

    assert raised.value is last
    assert clock.waits == [0.5, 1.0]
    assert len(attempts.remaining) == 3


def test_each_attempt_gets_what_is_left_of_the_budget() -> None:
    clock = FakeClock()
    attempts = Attempts(failing(after=2), "ok", clock=clock, takes=10)

    assert (
        with_retries(attempts, provider="openai", deadline=Deadline.after(60, clock), sleep=clock.sleep)
        == "ok"
    )

    assert attempts.remaining == [60, 48]
    assert clock.waits == [2]


def test_a_retry_after_that_does_not_fit_ends_the_call_at_once() -> None:
    # Retrying sooner than the provider asked would only meet the same answer.
    clock = FakeClock()
    rate_limited = failing("rate_limited", 429, after=100)
    attempts = Attempts(rate_limited, "ok", clock=clock)

    with pytest.raises(ModelCallFailed) as raised:
        with_retries(attempts, provider="openai", deadline=Deadline.after(30, clock), sleep=clock.sleep)

    assert raised.value is rate_limited
    assert clock.waits == []


def test_no_retry_past_the_budget() -> None:
    clock = FakeClock()
    rate_limited = failing("rate_limited", 429, after=100)
    attempts = Attempts(rate_limited, "never", clock=clock, takes=29.8)

    with pytest.raises(ModelCallFailed) as raised:
        with_retries(attempts, provider="openai", deadline=Deadline.after(30, clock), sleep=clock.sleep)

    assert raised.value is rate_limited
    assert clock.waits == []


def test_a_failure_that_leaves_no_budget_for_another_attempt_ends_the_call() -> None:
    clock = FakeClock()
    attempts = Attempts(failing(after=0), "never", clock=clock, takes=31)

    with pytest.raises(ModelCallFailed) as raised:
        with_retries(attempts, provider="openai", deadline=Deadline.after(30, clock), sleep=clock.sleep)

    assert raised.value.kind == "unavailable"
    assert clock.waits == []


def test_an_attempt_starting_past_the_deadline_is_timed_out() -> None:
    clock = FakeClock()
    deadline = Deadline.after(30, clock)
    clock.now += 31
    with pytest.raises(ModelCallFailed) as raised:
        with_retries(Attempts("never", clock=clock), provider="openai", deadline=deadline, sleep=clock.sleep)
    assert raised.value.kind == "timed_out"
    assert raised.value.detail == "openai did not answer within the call's 30 seconds"


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "Wed, 21 Oct 2026 07:28:30 GMT"}, 30.0),
        ({"retry-after": "Wed, 21 Oct 2026 07:27:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-3"}, None),
        ({}, None),
    ],
)
def test_retry_after_in_its_forms(headers: dict[str, str], seconds: float | None) -> None:
    now = datetime(2026, 10, 21, 7, 28, 0, tzinfo=UTC)
    assert retry_after_seconds(headers, now) == seconds


# --- failures before any answer ----------------------------------------------------------------------------


def test_no_connection_is_retried_then_unreachable() -> None:
    exchange = Exchange()
    for _ in range(3):
        exchange.fail(httpx.ConnectError("[Errno 111] Connection refused"))
    clock = FakeClock()

    failure = failure_of(OPENAI, model_request("gpt-4.1"), exchange, clock)

    assert failure.kind == "unreachable"
    assert failure.detail == "openai (api.openai.com) cannot be reached"
    assert len(exchange.requests) == 3
    assert clock.waits == [0.5, 1.0]


def test_a_connection_that_comes_back_answers() -> None:
    exchange = Exchange()
    exchange.fail(httpx.ConnectTimeout("timed out"))
    exchange.answer(body=ANSWER)
    answer = call(OPENAI, model_request("gpt-4.1"), exchange)
    assert answer.finish_reason == "stop"


def test_an_untrusted_certificate_says_the_operator_must_act() -> None:
    exchange = Exchange()
    cause = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    try:
        raise httpx.ConnectError("certificate verify failed") from cause
    except httpx.ConnectError as error:
        exchange.fail(error)

    failure = failure_of(OPENAI, model_request("gpt-4.1"), exchange)

    assert failure.kind == "certificate_untrusted"
    assert "the operator must act" in failure.detail
    assert len(exchange.requests) == 1


def test_a_read_timeout_is_timed_out_without_a_retry() -> None:
    exchange = Exchange()
    exchange.fail(httpx.ReadTimeout("read timed out"))
    failure = failure_of(OPENAI, model_request("gpt-4.1"), exchange)
    assert failure.kind == "timed_out"
    assert len(exchange.requests) == 1


def test_a_broken_exchange_is_unavailable() -> None:
    exchange = Exchange()
    exchange.fail(httpx.RemoteProtocolError("Server disconnected without sending a response."))
    failure = failure_of(OPENAI, model_request("gpt-4.1"), exchange)
    assert (failure.kind, failure.status) == ("unavailable", None)


def test_the_timeouts_sent_are_the_remaining_budget() -> None:
    seen: list[dict[str, float | None]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.extensions["timeout"])
        return httpx.Response(200, json=ANSWER)

    clock = FakeClock()
    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        from parley.models.providers import call_model

        call_model(
            OPENAI, model_request("gpt-4.1", timeout_seconds=42.0), http=http, sleep=clock.sleep, clock=clock
        )

    assert seen == [{"connect": 10.0, "read": 42.0, "write": 42.0, "pool": 42.0}]


def test_the_userinfo_of_a_base_url_is_never_named() -> None:
    exchange = Exchange()
    for _ in range(3):
        exchange.fail(httpx.ConnectError("refused"))
    settings = ProviderSettings("internal", "gateway", base_url="https://user:hunter2-password@gw.example/v1")
    failure = failure_of(settings, model_request("m"), exchange)
    assert "hunter2" not in failure.detail
    assert "gw.example" in failure.detail
