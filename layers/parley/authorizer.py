"""The API's JWT authorizer (``http-api.md``, "Base and auth": "On AWS the token is a JWT checked by
the API's authorizer").

API Gateway calls it (a ``TOKEN`` Lambda authorizer) with the request's ``Authorization`` header before
any route runs, and keeps its answer for a few minutes per token. It accepts a token only when:

- it is a JWS signed with an asymmetric algorithm (:data:`ALGORITHMS`: never ``none``, never an HMAC,
  whose "key" would be public) by a key of the issuer's JWKS, chosen by ``kid`` and of that algorithm;
- ``iss`` is the configured issuer, ``exp`` is in the future and ``nbf`` (if any) in the past, with
  :data:`LEEWAY_SECONDS` for clocks that disagree;
- ``aud`` names a configured audience, or, for tokens without ``aud`` (Cognito's access tokens),
  ``client_id`` does;
- the principal claim (``sub`` unless configured) is a string of 1 to 128 characters.

It then allows the whole API stage for that principal, with the claim as ``principalId``: the api
function finds the principal's grants by that id in the operator configuration (``parley.auth``).
Any other token gets a policy that denies the whole stage, which API Gateway answers with its
``ACCESS_DENIED`` response, shaped by the stack as the ``unauthenticated`` problem (``401``,
``WWW-Authenticate: Bearer``). A refusal is an answer, not an error: the function's errors alarm stays
for real failures (an issuer whose keys cannot be read fails the call: API Gateway answers 500). No
``Authorization`` header at all, or one that is no bearer JWT, never reaches the function: API Gateway
answers 401 itself. The reason of a refusal is logged; the token never is.

Cognito is an OIDC issuer too, so the same code serves the user pool the stack creates and an
existing issuer given as context (``cdk/parley_cdk/auth.py``). Its settings come from the environment:
:data:`ISSUER_VARIABLE`, :data:`AUDIENCE_VARIABLE` (comma-separated), :data:`PRINCIPAL_CLAIM_VARIABLE`
and optionally :data:`JWKS_URL_VARIABLE` (else OIDC discovery finds it).
"""

from __future__ import annotations

import functools
import json
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from parley.auth import bearer_token
from parley.errors import ParleyError

if TYPE_CHECKING:
    from jwt import PyJWK


@dataclass(frozen=True)
class SigningKey:
    """One key of the issuer's JWKS, with the algorithm the JWKS declares for it (if it does)."""

    jwk: PyJWK
    algorithm: str | None


ISSUER_VARIABLE: Final = "PARLEY_JWT_ISSUER"
AUDIENCE_VARIABLE: Final = "PARLEY_JWT_AUDIENCE"
PRINCIPAL_CLAIM_VARIABLE: Final = "PARLEY_JWT_PRINCIPAL_CLAIM"
JWKS_URL_VARIABLE: Final = "PARLEY_JWT_JWKS_URL"
DEFAULT_PRINCIPAL_CLAIM: Final = "sub"

#: Asymmetric signatures only: the verifying key is public, so an HMAC "signed" with it proves nothing.
ALGORITHMS: Final = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
LEEWAY_SECONDS: Final = 30
#: The issuer's keys are read again after this long, and at once (but at most once a minute) for a
#: ``kid`` not seen yet: a rotated key is picked up, a stream of made-up ``kid`` values costs nothing.
JWKS_MAX_AGE_SECONDS: Final = 3600.0
JWKS_REFETCH_AFTER_SECONDS: Final = 60.0
FETCH_TIMEOUT_SECONDS: Final = 3.0
MAX_DOCUMENT_BYTES: Final = 512 * 1024
#: What ``principalId`` may hold: the operator configuration's principal ids are 1 to 128 characters.
MAX_PRINCIPAL_LENGTH: Final = 128
#: The ``principalId`` of a refused token's policy (the policy denies everything; the name is never used).
REFUSED_PRINCIPAL: Final = "unauthenticated"


class InvalidToken(ParleyError):
    """Why a token was refused (for the log: it never holds the token)."""


class JwksUnavailable(ParleyError):
    """The issuer's keys cannot be read (the authorizer fails: API Gateway answers 500, not 401)."""


@dataclass(frozen=True)
class JwtSettings:
    """Whose tokens the API accepts."""

    issuer: str
    audiences: tuple[str, ...]
    principal_claim: str = DEFAULT_PRINCIPAL_CLAIM
    #: The issuer's JWKS; ``None``: found by OIDC discovery (``<issuer>/.well-known/openid-configuration``).
    jwks_url: str | None = None

    def __post_init__(self) -> None:
        _require_https(self.issuer, "the issuer")
        if self.jwks_url is not None:
            _require_https(self.jwks_url, "the JWKS URL")
        if not self.audiences or not all(self.audiences):
            raise ValueError("at least one audience (an OIDC client id) is needed")
        if not self.principal_claim:
            raise ValueError("the principal claim cannot be empty")

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> JwtSettings:
        audiences = tuple(a.strip() for a in environ.get(AUDIENCE_VARIABLE, "").split(",") if a.strip())
        try:
            return cls(
                issuer=environ.get(ISSUER_VARIABLE, ""),
                audiences=audiences,
                principal_claim=environ.get(PRINCIPAL_CLAIM_VARIABLE) or DEFAULT_PRINCIPAL_CLAIM,
                jwks_url=environ.get(JWKS_URL_VARIABLE) or None,
            )
        except ValueError as exc:
            raise ValueError(f"${ISSUER_VARIABLE}, ${AUDIENCE_VARIABLE}: {exc}") from exc


def _require_https(url: str, what: str) -> None:
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise ValueError(f"{what} is an https:// URL, not {url!r}")


FetchJson = Callable[[str], Any]


def fetch_json(url: str) -> Any:
    """GET ``url`` (https only) as JSON, in :data:`FETCH_TIMEOUT_SECONDS` and :data:`MAX_DOCUMENT_BYTES`."""
    _require_https(url, "a key document")
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_SECONDS) as response:
            raw = response.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as exc:
        raise JwksUnavailable(f"{url}: {exc}") from exc
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise JwksUnavailable(f"{url}: the document is larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise JwksUnavailable(f"{url}: not JSON") from exc


class Jwks:
    """The issuer's signing keys by ``kid``, fetched on first use and kept (see the constants)."""

    def __init__(
        self,
        settings: JwtSettings,
        fetch: FetchJson = fetch_json,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self._fetch = fetch
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._keys: dict[str, SigningKey] = {}
        self._fetched_at: float | None = None
        self._jwks_url = settings.jwks_url

    def key(self, kid: str) -> SigningKey:
        """The key ``kid``; :class:`InvalidToken` when the issuer has none such."""
        with self._lock:
            now = self._monotonic()
            stale = self._fetched_at is None or now - self._fetched_at >= JWKS_MAX_AGE_SECONDS
            unknown_may_refetch = (
                kid not in self._keys
                and self._fetched_at is not None
                and now - self._fetched_at >= JWKS_REFETCH_AFTER_SECONDS
            )
            if stale or unknown_may_refetch:
                self._keys = self._load()
                self._fetched_at = now
            found = self._keys.get(kid)
        if found is None:
            raise InvalidToken("no key of the issuer has this kid")
        return found

    def _load(self) -> dict[str, SigningKey]:
        from jwt import PyJWK, PyJWTError

        document = self._fetch(self._url())
        entries = document.get("keys") if isinstance(document, dict) else None
        if not isinstance(entries, list):
            raise JwksUnavailable("the JWKS has no keys array")
        keys: dict[str, SigningKey] = {}
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("kid"), str):
                continue
            # Signing keys only, and never a symmetric one (its "key" would be in the JWKS for all to read).
            if entry.get("use", "sig") != "sig" or entry.get("kty") == "oct":
                continue
            try:
                declared = entry.get("alg")
                keys[entry["kid"]] = SigningKey(PyJWK(entry), declared if isinstance(declared, str) else None)
            except PyJWTError:
                continue  # a key type this library cannot use: tokens signed with it are refused
        return keys

    def _url(self) -> str:
        if self._jwks_url is None:
            issuer = self._settings.issuer
            discovery = self._fetch(issuer.rstrip("/") + "/.well-known/openid-configuration")
            if not isinstance(discovery, dict) or discovery.get("issuer") != issuer:
                raise JwksUnavailable("the issuer's OIDC discovery document names another issuer")
            url = discovery.get("jwks_uri")
            if not isinstance(url, str):
                raise JwksUnavailable("the issuer's OIDC discovery document has no jwks_uri")
            _require_https(url, "the JWKS URL")
            self._jwks_url = url
        return self._jwks_url


KeyOf = Callable[[str], SigningKey]


class TokenVerifier:
    """Checks a JWT against :class:`JwtSettings` and names its principal (see the module's docstring)."""

    def __init__(self, settings: JwtSettings, key_of: KeyOf) -> None:
        self._settings = settings
        self._key_of = key_of

    def principal(self, token: str) -> str:
        """The token's principal; :class:`InvalidToken` saying why when it is not accepted."""
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise InvalidToken("not a JWT") from None
        algorithm = header.get("alg")
        if algorithm not in ALGORITHMS:
            raise InvalidToken(f"the algorithm {str(algorithm)[:16]!r} is not accepted")
        kid = header.get("kid")
        if not isinstance(kid, str):
            raise InvalidToken("the token names no key (kid)")
        key = self._key_of(kid)
        if key.algorithm is not None and key.algorithm != algorithm:
            raise InvalidToken("the key is for another algorithm")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.jwk.key,
                algorithms=[algorithm],
                issuer=self._settings.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss"], "verify_aud": False},
            )
        except jwt.ExpiredSignatureError:
            raise InvalidToken("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise InvalidToken("the token is not valid yet (nbf or iat)") from None
        except jwt.InvalidIssuerError:
            raise InvalidToken("the token is of another issuer") from None
        except jwt.InvalidSignatureError:
            raise InvalidToken("the signature does not verify") from None
        except jwt.MissingRequiredClaimError as exc:
            raise InvalidToken(f"the token has no {exc.claim} claim") from None
        except (jwt.PyJWTError, ValueError, TypeError):
            raise InvalidToken("the token cannot be verified") from None
        self._check_audience(claims)
        principal = claims.get(self._settings.principal_claim)
        if not isinstance(principal, str) or not 1 <= len(principal) <= MAX_PRINCIPAL_LENGTH:
            raise InvalidToken(
                f"the {self._settings.principal_claim} claim is not a string of 1 to {MAX_PRINCIPAL_LENGTH}"
            )
        return principal

    def _check_audience(self, claims: Mapping[str, Any]) -> None:
        audience = claims.get("aud")
        if audience is None:
            # Cognito's access tokens carry the app client in client_id, not aud.
            named: list[Any] = [claims.get("client_id")]
        else:
            named = audience if isinstance(audience, list) else [audience]
        if not any(isinstance(a, str) and a in self._settings.audiences for a in named):
            raise InvalidToken("the token is for another audience")


def allow_policy(principal: str, method_arn: str) -> dict[str, Any]:
    """The authorizer's answer: ``principal`` may invoke every method of the stage.

    API Gateway keeps this answer per token for the authorizer's TTL and applies it to any route the
    token is then used on, so it names the whole stage (``…/<api>/<stage>/*``), not the one method
    that asked: what the principal may do is the api function's decision (``parley.auth``).
    """
    return _policy(principal, "Allow", method_arn)


def deny_policy(method_arn: str) -> dict[str, Any]:
    """The answer for a refused token: nothing of the stage (kept per token for the TTL, too)."""
    return _policy(REFUSED_PRINCIPAL, "Deny", method_arn)


def _policy(principal: str, effect: str, method_arn: str) -> dict[str, Any]:
    api, _, rest = method_arn.partition("/")
    stage = rest.split("/", 1)[0]
    if not api.startswith("arn:") or not stage:
        raise ValueError(f"not an execute-api method ARN: {method_arn!r}")
    return {
        "principalId": principal,
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [{"Action": "execute-api:Invoke", "Effect": effect, "Resource": f"{api}/{stage}/*"}],
        },
    }


AuthorizerHandler = Callable[[Mapping[str, Any], Any], dict[str, Any]]


def build_authorizer(verifier: TokenVerifier, log: Callable[[str], None] | None = None) -> AuthorizerHandler:
    """The Lambda handler of a ``TOKEN`` authorizer around ``verifier``; ``log`` gets refusal reasons."""

    def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        method_arn = str(event.get("methodArn", ""))
        header = event.get("authorizationToken")
        token = bearer_token(header if isinstance(header, str) else None)
        try:
            if token is None:
                raise InvalidToken("no bearer token")
            principal = verifier.principal(token)
        except InvalidToken as exc:
            (log or _log_refusal)(f"Refused a token: {exc}")
            return deny_policy(method_arn)
        return allow_policy(principal, method_arn)

    return handler


def _log_refusal(message: str) -> None:
    from parley.api.log import logger

    logger().info(message)


@functools.cache
def _default_authorizer() -> AuthorizerHandler:
    import os

    settings = JwtSettings.from_environment(os.environ)
    return build_authorizer(TokenVerifier(settings, Jwks(settings, fetch=fetch_json).key))


def handle(event: dict[str, Any], context: object) -> dict[str, Any]:
    """The Lambda entry of the ``authorizer`` function."""
    return _default_authorizer()(event, context)
