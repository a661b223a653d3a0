"""The HTTP edge of the httpx adapters: sending JSON, and turning what goes wrong into
:class:`ModelCallFailed` (the kinds of ``base``'s docstring).

- httpx errors: no connection -> ``unreachable`` (retried), a certificate that does not verify ->
  ``certificate_untrusted``, a timeout after connecting -> ``timed_out`` (each attempt's timeouts are
  the remaining budget, so a timeout means the budget is spent), a broken exchange -> ``unavailable``.
- An HTTP error status: each adapter reads its provider's error body into a :class:`ProviderError`
  (message, code, whether it says "too long" or "bad credentials", a retry delay), and
  :func:`failure_for_status` decides the kind from the status and those flags.

The provider's message is quoted only for ``rejected`` and ``too_long``, cut to 300 characters, with
every credential replaced by ``[secret]``. Hosts are named without their userinfo.
"""

from __future__ import annotations

import json
import math
import ssl
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from parley.errors import ParleyError
from parley.models.providers.base import (
    ModelAnswer,
    ModelCallFailed,
    ProviderSettings,
    Usage,
    capped_warnings,
)
from parley.models.providers.context import CallContext

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx

    from parley.models.providers.retrying import Deadline

#: The provider's own words, when quoted, are cut to this many characters.
QUOTED_CHARACTERS: Final = 300
SECRET_SHOWN: Final = "[secret]"
#: Secrets shorter than this are not scrubbed: they would turn ordinary words into "[secret]".
MIN_SCRUBBED_LENGTH: Final = 4
#: Connecting never takes more than this of the budget, so a dead host leaves time for a retry.
CONNECT_SECONDS: Final = 10.0

STATUS_MEANINGS: Final[Mapping[int, str]] = {
    400: "it rejected the request",
    401: "it rejected the credentials",
    402: "it asks for payment (the account's credit or quota is spent)",
    403: "it refused these credentials access",
    404: "it does not know the model or the route",
    408: "it timed out waiting for the request",
    409: "it reported a conflict",
    413: "the request is too large for it",
    422: "it could not process the request",
    429: "it limits the rate of requests",
    500: "it failed with an internal error",
    502: "it cannot serve now (bad gateway)",
    503: "it cannot serve now",
    504: "it did not answer in time (gateway timeout)",
    529: "it is overloaded",
}


@dataclass(frozen=True)
class Secrets:
    """The values sent as credentials, to keep out of every detail."""

    values: tuple[str, ...] = ()

    def scrub(self, text: str) -> str:
        for value in sorted({v for v in self.values if len(v) >= MIN_SCRUBBED_LENGTH}, key=len, reverse=True):
            text = text.replace(value, SECRET_SHOWN)
        return text


@dataclass(frozen=True)
class Credentials:
    """The headers that carry a provider's credentials, resolved, and the secrets among them."""

    headers: dict[str, str]
    secrets: Secrets


def resolved_credentials(
    settings: ProviderSettings, context: CallContext, *, key_header: str | None, bearer: bool = False
) -> Credentials:
    """The API key (under ``key_header``, or as ``Authorization: Bearer`` when ``bearer``) and the
    configured headers, each resolved at send time."""
    headers: dict[str, str] = {}
    secrets: list[str] = []
    if settings.api_key is not None:
        key = context.resolve(settings.api_key.get_secret_value())
        secrets.append(key)
        if bearer:
            headers["Authorization"] = f"Bearer {key}"
        elif key_header is not None:
            headers[key_header] = key
    for name, value in settings.headers.items():
        resolved = context.resolve(value.get_secret_value())
        headers[name] = resolved
        secrets.append(resolved)
        scheme, _, token = resolved.partition(" ")
        if token and scheme.lower() in ("bearer", "basic"):
            secrets.append(token)
    return Credentials(headers, Secrets(tuple(secrets)))


class RefusedByPolicy(ParleyError):
    """Raised by an adapter's error reader when the provider answered an error that refuses the content
    under its policy (Azure's ``content_filter``, OpenAI's ``invalid_prompt``): the adapter turns it into a
    refused :class:`~parley.models.providers.base.ModelAnswer`, since the run ends as a refusal,
    not as a failed call."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def refused_answer(refusal: RefusedByPolicy, warnings: list[str]) -> ModelAnswer:
    """The answer of a call the provider refused with an error: no text, no usage."""
    return ModelAnswer(
        text="",
        finish_reason="content_filter",
        raw_finish_reason=refusal.code,
        usage=Usage(),
        response_id=None,
        model_answered=None,
        warnings=capped_warnings(warnings),
        refused=True,
    )


@dataclass(frozen=True)
class ProviderError:
    """What an adapter reads from its provider's error body."""

    message: str | None = None
    code: str | None = None
    too_long: bool = False
    credentials: bool = False
    retry_after_seconds: float | None = None
    hint: str | None = None


def host_of(url: str) -> str:
    return urlsplit(url).hostname or "the provider"


def quoted(message: str | None, secrets: Secrets) -> str:
    if not message:
        return ""
    text = " ".join(secrets.scrub(message).split())
    if len(text) > QUOTED_CHARACTERS:
        text = text[: QUOTED_CHARACTERS - 1] + "…"
    return f': "{text}"'


def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """``retry-after-ms`` (OpenAI), else ``Retry-After`` as delay-seconds or an HTTP date (RFC 9110)."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            value = float(milliseconds)
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value / 1000
    text = (headers.get("retry-after") or "").strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - (now or datetime.now(UTC))).total_seconds())


def failure_for_status(
    provider: str,
    status: int,
    error: ProviderError,
    *,
    secrets: Secrets,
    retry_after: float | None = None,
) -> ModelCallFailed:
    """The failure an HTTP error status means, given what the error body said."""
    meaning = STATUS_MEANINGS.get(status) or (
        "it cannot serve now" if status >= 500 else "it rejected the request"
    )
    head = f"{provider} answered HTTP {status}"
    wait = retry_after if retry_after is not None else error.retry_after_seconds
    if error.too_long or status == 413:
        detail = f"{head}: the request is too long for the model{quoted(error.message, secrets)}"
        return ModelCallFailed("too_long", provider, detail, status=status)
    if error.credentials or status in (401, 403):
        return ModelCallFailed("credentials_rejected", provider, f"{head}: {meaning}", status=status)
    if status == 429:
        after = f"; it asks to wait {wait:g} seconds" if wait is not None else ""
        return ModelCallFailed(
            "rate_limited", provider, f"{head}: {meaning}{after}", status=status, retry_after_seconds=wait
        )
    if status in (402, 408, 409) or status >= 500:
        return ModelCallFailed(
            "unavailable", provider, f"{head}: {meaning}", status=status, retry_after_seconds=wait
        )
    hint = f" ({error.hint})" if error.hint else ""
    detail = f"{head}: {meaning}{quoted(error.message, secrets)}{hint}"
    return ModelCallFailed("rejected", provider, detail, status=status)


def caused_by_certificate(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ssl.SSLCertVerificationError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def transport_failure(provider: str, url: str, exc: Exception) -> ModelCallFailed:
    """The failure an httpx exception means (no HTTP status: nothing was answered)."""
    import httpx

    host = host_of(url)
    if caused_by_certificate(exc):
        detail = f"the certificate of {provider} ({host}) is not trusted; the operator must act"
        return ModelCallFailed("certificate_untrusted", provider, detail)
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return ModelCallFailed("unreachable", provider, f"{provider} ({host}) cannot be reached")
    if isinstance(exc, httpx.TimeoutException):
        return ModelCallFailed("timed_out", provider, f"{provider} ({host}) did not answer in time")
    return ModelCallFailed(
        "unavailable", provider, f"the exchange with {provider} ({host}) broke off before it answered"
    )


def send_json(
    http: httpx.Client,
    method: str,
    url: str,
    *,
    provider: str,
    remaining: float,
    headers: Mapping[str, str],
    body: Mapping[str, Any] | None = None,
    params: Mapping[str, str] | None = None,
    read_error: Callable[[httpx.Response], ProviderError],
    secrets: Secrets,
) -> dict[str, Any]:
    """One HTTP exchange; the JSON object answered, or :class:`ModelCallFailed`."""
    import httpx

    timeout = httpx.Timeout(remaining, connect=min(CONNECT_SECONDS, remaining))
    try:
        response = http.request(
            method,
            url,
            headers={**headers, "content-type": "application/json"} if body is not None else dict(headers),
            content=json.dumps(body).encode() if body is not None else None,
            params=dict(params) if params else None,
            timeout=timeout,
        )
    except httpx.HTTPError as exc:
        raise transport_failure(provider, url, exc) from exc
    if response.is_success:
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            detail = f"{provider} answered HTTP {response.status_code} with a body that is not a JSON object"
            raise ModelCallFailed("unavailable", provider, detail, status=response.status_code)
        return answer
    raise failure_for_status(
        provider,
        response.status_code,
        read_error(response),
        secrets=secrets,
        retry_after=retry_after_seconds(response.headers),
    )


def error_body(response: httpx.Response) -> Mapping[str, Any]:
    """The error body as a JSON object, or an empty one."""
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, Mapping) else {}


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def known_sum(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def post_json(
    context: CallContext,
    deadline: Deadline,
    url: str,
    *,
    provider: str,
    credentials: Credentials,
    body: Mapping[str, Any],
    read_error: Callable[[httpx.Response], ProviderError],
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A model call's POST of JSON, retried within ``deadline`` (``parley.models.providers.
    retrying``) on the context's HTTP client; the JSON object answered, or :class:`ModelCallFailed`."""
    from parley.models.providers.retrying import with_retries

    sent = {**credentials.headers, **(headers or {})}
    with context.http_client() as http:
        return with_retries(
            lambda remaining: send_json(
                http,
                "POST",
                url,
                provider=provider,
                remaining=remaining,
                headers=sent,
                body=body,
                params=params,
                read_error=read_error,
                secrets=credentials.secrets,
            ),
            provider=provider,
            deadline=deadline,
            sleep=context.sleep,
        )
