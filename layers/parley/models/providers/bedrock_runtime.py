"""The AWS edge shared by ``bedrock`` (Converse) and ``bedrock-anthropic`` (InvokeModel): clients made
on first need, botocore's errors turned into :class:`ModelCallFailed`, and the list of foundation models
both adapters read (``ListFoundationModels``), kept here so that neither adapter imports the other for it.

The clients make one attempt each: ``retries={"total_max_attempts": 1}`` (botocore's ``max_attempts``
counts retries, so ``max_attempts: 1`` would still retry once). ``retrying`` does the retries, within
the call's budget, as for the httpx adapters. Errors are told apart by their code (Bedrock
Runtime API reference, "Errors" of Converse and InvokeModel); the one exception is a
``ValidationException`` whose message says the input is too long, which Bedrock signals no other way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

from parley.models.providers.base import FailureKind, ListedModel, ModelCallFailed, ProviderSettings
from parley.models.providers.context import CallContext
from parley.models.providers.retrying import Deadline, with_retries
from parley.models.providers.transport import (
    CONNECT_SECONDS,
    Secrets,
    caused_by_certificate,
    quoted,
)

T = TypeVar("T")

#: Bedrock's error codes: the failure kind, and the status AWS answers them with.
ERROR_CODES: Final[Mapping[str, tuple[FailureKind, int]]] = {
    "ThrottlingException": ("rate_limited", 429),
    "ServiceQuotaExceededException": ("rate_limited", 400),
    "AccessDeniedException": ("credentials_rejected", 403),
    "UnrecognizedClientException": ("credentials_rejected", 403),
    "InvalidSignatureException": ("credentials_rejected", 403),
    "ExpiredTokenException": ("credentials_rejected", 403),
    "ValidationException": ("rejected", 400),
    "ResourceNotFoundException": ("rejected", 404),
    "ModelTimeoutException": ("unavailable", 408),
    "ModelNotReadyException": ("unavailable", 429),
    "ServiceUnavailableException": ("unavailable", 503),
    "InternalServerException": ("unavailable", 500),
    "ModelErrorException": ("unavailable", 424),
}
TOO_LONG_WORDS: Final = ("too long", "too many input tokens", "context window", "context length")
CODE_MEANINGS: Final[Mapping[str, str]] = {
    "rate_limited": "it limits the rate of requests",
    "credentials_rejected": "it refused the function's AWS credentials access to the model",
    "rejected": "it rejected the request",
    "unavailable": "it cannot serve now",
}


def runtime_client(settings: ProviderSettings, context: CallContext, seconds: float) -> Any:
    """The ``bedrock-runtime`` client given, or a new one that reads for at most ``seconds``."""
    if context.bedrock_client is not None:
        return context.bedrock_client
    return _client("bedrock-runtime", settings, seconds)


def control_client(settings: ProviderSettings, context: CallContext, seconds: float) -> Any:
    """The ``bedrock`` client (ListFoundationModels) given, or a new one."""
    if context.bedrock_client is not None:
        return context.bedrock_client
    return _client("bedrock", settings, seconds)


def _client(service: str, settings: ProviderSettings, seconds: float) -> Any:
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"total_max_attempts": 1, "mode": "standard"},
        read_timeout=max(1, int(seconds + 0.999)),
        connect_timeout=min(CONNECT_SECONDS, max(1.0, seconds)),
    )
    return boto3.client(service, region_name=settings.region, config=config)  # type: ignore[call-overload]


def calling_aws(provider: str, call: Callable[[], T]) -> T:
    """``call()``, with botocore's errors turned into :class:`ModelCallFailed`."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        return call()
    except ClientError as exc:
        raise client_failure(provider, exc.response) from exc
    except BotoCoreError as exc:
        raise botocore_failure(provider, exc) from exc


def client_failure(provider: str, response: Mapping[str, Any]) -> ModelCallFailed:
    error = response.get("Error") or {}
    code = str(error.get("Code") or "")
    message = str(error.get("Message") or "")
    metadata_status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    known = ERROR_CODES.get(code)
    kind: FailureKind
    if known is not None:
        kind, status = known
    else:
        status = metadata_status if isinstance(metadata_status, int) else 0
        kind = "unavailable" if status >= 500 else "rejected"
    head = f"{provider} answered HTTP {status} ({code or 'an error'})" if status else f"{provider} failed"
    if kind == "rejected" and any(words in message.lower() for words in TOO_LONG_WORDS):
        return ModelCallFailed(
            "too_long",
            provider,
            f"{head}: the input is too long for the model{quoted(message, Secrets())}",
            status=status,
        )
    if kind == "rejected":
        return ModelCallFailed(
            "rejected",
            provider,
            f"{head}: it rejected the request{quoted(message, Secrets())}",
            status=status,
        )
    return ModelCallFailed(kind, provider, f"{head}: {CODE_MEANINGS[kind]}", status=status)


def botocore_failure(provider: str, exc: Exception) -> ModelCallFailed:
    from botocore import exceptions as aws

    if isinstance(exc, aws.SSLError) or caused_by_certificate(exc):
        detail = f"the certificate of {provider} is not trusted; the operator must act"
        return ModelCallFailed("certificate_untrusted", provider, detail)
    if isinstance(exc, aws.ReadTimeoutError):
        return ModelCallFailed("timed_out", provider, f"{provider} did not answer in time")
    if isinstance(exc, aws.EndpointConnectionError | aws.ConnectTimeoutError):
        return ModelCallFailed("unreachable", provider, f"{provider} cannot be reached")
    if isinstance(exc, aws.NoCredentialsError | aws.PartialCredentialsError | aws.CredentialRetrievalError):
        return ModelCallFailed(
            "credentials_rejected", provider, f"no AWS credentials were found for {provider}"
        )
    return ModelCallFailed("unavailable", provider, f"the call to {provider} failed before it answered")


def request_id(response: Mapping[str, Any]) -> str | None:
    value = (response.get("ResponseMetadata") or {}).get("RequestId")
    return value if isinstance(value, str) else None


def list_foundation_models(
    settings: ProviderSettings, context: CallContext, timeout_seconds: float
) -> list[ListedModel]:
    """``ListFoundationModels`` of the ``bedrock`` client, text models only; for ``bedrock-anthropic``,
    Anthropic's. Inference profiles (``us.anthropic.…``) are not listed."""
    client = control_client(settings, context, timeout_seconds)
    deadline = Deadline.after(timeout_seconds, context.clock)
    response: dict[str, Any] = with_retries(
        lambda remaining: calling_aws(
            settings.provider, lambda: client.list_foundation_models(byOutputModality="TEXT")
        ),
        provider=settings.provider,
        deadline=deadline,
        sleep=context.sleep,
    )
    listed: list[ListedModel] = []
    for summary in response.get("modelSummaries") or []:
        if not isinstance(summary, Mapping) or not isinstance(summary.get("modelId"), str):
            continue
        owner = summary.get("providerName")
        if settings.kind == "bedrock-anthropic" and str(owner).lower() != "anthropic":
            continue
        name = summary.get("modelName")
        listed.append(
            ListedModel(
                id=summary["modelId"],
                created=None,
                owned_by=owner if isinstance(owner, str) else "bedrock",
                name=name if isinstance(name, str) else None,
            )
        )
    return listed
