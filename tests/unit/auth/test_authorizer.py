"""The API's JWT authorizer (``parley.authorizer``), with keys made here and the issuer's documents
served by an injected fetch: no network (http-api.md, "Base and auth")."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from parley.authorizer import (
    LEEWAY_SECONDS,
    InvalidToken,
    Jwks,
    JwksUnavailable,
    JwtSettings,
    TokenVerifier,
    allow_policy,
    build_authorizer,
    deny_policy,
    fetch_json,
)

ISSUER = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123"
JWKS_URL = f"{ISSUER}/.well-known/jwks.json"
CLIENT = "5r2kq1example0client"
SUB = "0c9a6e1e-2a4b-4c8e-9d1f-5b7a3e2f1c0d"
METHOD_ARN = (
    "arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/prod/POST/v1/orgs/acme/playbooks/campaigns/runs"
)
SETTINGS = JwtSettings(issuer=ISSUER, audiences=(CLIENT,), jwks_url=JWKS_URL)


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def other_rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def rsa_jwk(key: rsa.RSAPrivateKey, kid: str, alg: str | None = "RS256") -> dict[str, Any]:
    jwk: dict[str, Any] = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    return {**jwk, "kid": kid, "use": "sig", **({"alg": alg} if alg else {})}


class Issuer:
    """The issuer's documents, and a count of fetches."""

    def __init__(self, documents: dict[str, Any]) -> None:
        self.documents = documents
        self.fetched: list[str] = []

    def __call__(self, url: str) -> Any:
        self.fetched.append(url)
        if url not in self.documents:
            raise JwksUnavailable(f"{url}: 404")
        return self.documents[url]


@pytest.fixture
def issuer(rsa_key: rsa.RSAPrivateKey, ec_key: ec.EllipticCurvePrivateKey) -> Issuer:
    ec_jwk = {**json.loads(ECAlgorithm.to_jwk(ec_key.public_key())), "kid": "ec-1", "alg": "ES256"}
    return Issuer({JWKS_URL: {"keys": [rsa_jwk(rsa_key, "rsa-1"), ec_jwk]}})


@pytest.fixture
def verifier(issuer: Issuer) -> TokenVerifier:
    return TokenVerifier(SETTINGS, Jwks(SETTINGS, fetch=issuer).key)


def claims(**changes: Any) -> dict[str, Any]:
    now = int(time.time())
    base = {
        "sub": SUB,
        "iss": ISSUER,
        "client_id": CLIENT,
        "token_use": "access",
        "iat": now,
        "exp": now + 3600,
        "username": "maria",
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


Sign = Callable[..., str]


@pytest.fixture
def sign(rsa_key: rsa.RSAPrivateKey) -> Sign:
    def signed(key: Any = None, kid: str = "rsa-1", algorithm: str = "RS256", **changes: Any) -> str:
        return jwt.encode(claims(**changes), key or rsa_key, algorithm=algorithm, headers={"kid": kid})

    return signed


def unsigned(header: dict[str, Any], payload: dict[str, Any], signature: bytes = b"") -> str:
    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    return ".".join([part(json.dumps(header).encode()), part(json.dumps(payload).encode()), part(signature)])


# --- what is accepted -----------------------------------------------------------------------------------


def test_a_valid_access_token_names_its_subject(verifier: TokenVerifier, sign: Sign) -> None:
    assert verifier.principal(sign()) == SUB


def test_an_id_token_names_the_client_in_aud(verifier: TokenVerifier, sign: Sign) -> None:
    assert verifier.principal(sign(client_id=None, aud=CLIENT, token_use="id")) == SUB
    assert verifier.principal(sign(client_id=None, aud=["another", CLIENT])) == SUB


def test_an_ec_key_and_its_algorithm(verifier: TokenVerifier, sign: Sign, ec_key: Any) -> None:
    assert verifier.principal(sign(key=ec_key, kid="ec-1", algorithm="ES256")) == SUB


def test_the_principal_claim_is_configurable(issuer: Issuer, sign: Sign) -> None:
    settings = JwtSettings(issuer=ISSUER, audiences=(CLIENT,), principal_claim="username", jwks_url=JWKS_URL)

    assert TokenVerifier(settings, Jwks(settings, fetch=issuer).key).principal(sign()) == "maria"


def test_clocks_may_disagree_by_the_leeway(verifier: TokenVerifier, sign: Sign) -> None:
    now = int(time.time())

    assert verifier.principal(sign(exp=now - LEEWAY_SECONDS + 5)) == SUB
    assert verifier.principal(sign(nbf=now + LEEWAY_SECONDS - 5)) == SUB


# --- what is refused ------------------------------------------------------------------------------------


def refused(verifier: TokenVerifier, token: str) -> str:
    with pytest.raises(InvalidToken) as caught:
        verifier.principal(token)
    return str(caught.value)


def test_an_expired_token(verifier: TokenVerifier, sign: Sign) -> None:
    assert refused(verifier, sign(exp=int(time.time()) - LEEWAY_SECONDS - 5)) == "the token has expired"


def test_a_token_not_valid_yet(verifier: TokenVerifier, sign: Sign) -> None:
    assert "not valid yet" in refused(verifier, sign(nbf=int(time.time()) + 600))


def test_a_token_without_expiry(verifier: TokenVerifier, sign: Sign) -> None:
    assert refused(verifier, sign(exp=None)) == "the token has no exp claim"


@pytest.mark.parametrize(
    "other", [ISSUER + "x", "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Other"]
)
def test_a_token_of_another_issuer(verifier: TokenVerifier, sign: Sign, other: str) -> None:
    assert refused(verifier, sign(iss=other)) == "the token is of another issuer"


@pytest.mark.parametrize(
    "changes",
    [
        {"client_id": "another-client"},
        {"client_id": None},
        {"client_id": None, "aud": "another-client"},
        # aud wins over client_id: a token for another audience does not get in through client_id.
        {"aud": "another-client"},
        {"client_id": None, "aud": []},
    ],
)
def test_a_token_for_another_audience(verifier: TokenVerifier, sign: Sign, changes: dict[str, Any]) -> None:
    assert refused(verifier, sign(**changes)) == "the token is for another audience"


def test_a_token_signed_by_another_key_under_a_known_kid(
    verifier: TokenVerifier, sign: Sign, other_rsa_key: Any
) -> None:
    assert refused(verifier, sign(key=other_rsa_key)) == "the signature does not verify"


def test_a_token_whose_payload_was_changed_after_signing(verifier: TokenVerifier, sign: Sign) -> None:
    header, _, signature = sign().split(".")
    forged = base64.urlsafe_b64encode(json.dumps(claims(sub="admin")).encode()).rstrip(b"=").decode()

    assert refused(verifier, f"{header}.{forged}.{signature}") == "the signature does not verify"


@pytest.mark.parametrize("alg", ["none", "None", "NONE"])
def test_an_unsigned_token_alg_none(verifier: TokenVerifier, alg: str) -> None:
    token = unsigned({"alg": alg, "kid": "rsa-1", "typ": "JWT"}, claims())

    assert refused(verifier, token) == f"the algorithm {alg!r} is not accepted"


def test_an_hmac_token_keyed_with_the_public_key(verifier: TokenVerifier, rsa_key: Any) -> None:
    # The classic confusion: HS256 "signed" with the issuer's public key, which anyone can fetch.
    from cryptography.hazmat.primitives import serialization

    public_pem = rsa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    import hashlib
    import hmac

    header = {"alg": "HS256", "kid": "rsa-1", "typ": "JWT"}
    body = unsigned(header, claims()).rsplit(".", 1)[0]
    mac = hmac.new(public_pem, body.encode(), hashlib.sha256).digest()
    token = unsigned(header, claims(), mac)

    assert refused(verifier, token) == "the algorithm 'HS256' is not accepted"


def test_a_key_used_with_another_algorithm_than_its_own(verifier: TokenVerifier, sign: Sign) -> None:
    assert refused(verifier, sign(algorithm="RS512")) == "the key is for another algorithm"


@pytest.mark.parametrize("token", ["", "dev-token", "a.b.c", "eyJhbGciOiJSUzI1NiJ9..", "...."])
def test_what_is_not_a_jwt(verifier: TokenVerifier, token: str) -> None:
    assert refused(verifier, token) in (
        "not a JWT",
        "the algorithm 'RS256' is not accepted",
        "the token names no key (kid)",
    )


def test_a_token_naming_no_key_or_an_unknown_one(verifier: TokenVerifier, sign: Sign, rsa_key: Any) -> None:
    no_kid = jwt.encode(claims(), rsa_key, algorithm="RS256")

    assert refused(verifier, no_kid) == "the token names no key (kid)"
    assert refused(verifier, sign(kid="made-up")) == "no key of the issuer has this kid"


@pytest.mark.parametrize("sub", [None, "", "x" * 129])
def test_a_principal_claim_that_cannot_name_a_principal(
    verifier: TokenVerifier, sign: Sign, sub: Any
) -> None:
    assert refused(verifier, sign(sub=sub)) == "the sub claim is not a string of 1 to 128"


@pytest.mark.parametrize("sub", [42, ["a"]])
def test_a_subject_that_is_no_string(verifier: TokenVerifier, sign: Sign, sub: Any) -> None:
    assert refused(verifier, sign(sub=sub)) == "the token cannot be verified"


# --- the issuer's keys ----------------------------------------------------------------------------------


def test_keys_are_fetched_once_then_kept(issuer: Issuer, sign: Sign) -> None:
    verifier = TokenVerifier(SETTINGS, Jwks(SETTINGS, fetch=issuer).key)
    for _ in range(5):
        verifier.principal(sign())

    assert issuer.fetched == [JWKS_URL]


def test_a_rotated_key_is_fetched_but_made_up_kids_do_not_hammer_the_issuer(
    issuer: Issuer, sign: Sign, other_rsa_key: Any
) -> None:
    now = [1000.0]
    keys = Jwks(SETTINGS, fetch=issuer, monotonic=lambda: now[0])
    verifier = TokenVerifier(SETTINGS, keys.key)
    verifier.principal(sign())

    for _ in range(10):  # within the minute: no fetch for an unknown kid
        refused(verifier, sign(kid="made-up"))
    assert len(issuer.fetched) == 1

    issuer.documents[JWKS_URL]["keys"].append(rsa_jwk(other_rsa_key, "rsa-2"))
    now[0] += 61
    assert verifier.principal(sign(key=other_rsa_key, kid="rsa-2")) == SUB
    assert len(issuer.fetched) == 2


def test_keys_are_read_again_after_an_hour(issuer: Issuer, sign: Sign) -> None:
    now = [0.0]
    verifier = TokenVerifier(SETTINGS, Jwks(SETTINGS, fetch=issuer, monotonic=lambda: now[0]).key)
    verifier.principal(sign())
    issuer.documents[JWKS_URL] = {"keys": []}  # the key was withdrawn
    now[0] += 3600

    assert refused(verifier, sign()) == "no key of the issuer has this kid"


def test_oidc_discovery_finds_the_keys(issuer: Issuer, sign: Sign) -> None:
    settings = JwtSettings(issuer=ISSUER, audiences=(CLIENT,))
    issuer.documents[f"{ISSUER}/.well-known/openid-configuration"] = {"issuer": ISSUER, "jwks_uri": JWKS_URL}

    assert TokenVerifier(settings, Jwks(settings, fetch=issuer).key).principal(sign()) == SUB
    assert issuer.fetched == [f"{ISSUER}/.well-known/openid-configuration", JWKS_URL]


@pytest.mark.parametrize(
    "discovery",
    [
        {"issuer": "https://evil.example.com", "jwks_uri": JWKS_URL},
        {"issuer": ISSUER, "jwks_uri": "http://insecure.example.com/keys"},
        {"issuer": ISSUER},
    ],
)
def test_a_discovery_document_that_cannot_be_trusted(issuer: Issuer, sign: Sign, discovery: Any) -> None:
    settings = JwtSettings(issuer=ISSUER, audiences=(CLIENT,))
    issuer.documents[f"{ISSUER}/.well-known/openid-configuration"] = discovery

    with pytest.raises((JwksUnavailable, ValueError)):
        TokenVerifier(settings, Jwks(settings, fetch=issuer).key).principal(sign())


def test_keys_of_other_uses_or_unknown_types_are_left_out(rsa_key: Any, sign: Sign) -> None:
    issuer = Issuer(
        {
            JWKS_URL: {
                "keys": [
                    {**rsa_jwk(rsa_key, "rsa-1"), "use": "enc"},
                    {"kid": "odd", "kty": "XYZ"},
                    {"kid": "rsa-1", "kty": "oct", "k": "c2VjcmV0"},
                    "not a key",
                ]
            }
        }
    )
    verifier = TokenVerifier(SETTINGS, Jwks(SETTINGS, fetch=issuer).key)

    assert refused(verifier, sign()) == "no key of the issuer has this kid"


def test_fetching_refuses_plain_http() -> None:
    with pytest.raises(ValueError, match="https://"):
        fetch_json("http://example.com/keys")


# --- settings -------------------------------------------------------------------------------------------


def test_settings_from_the_environment() -> None:
    settings = JwtSettings.from_environment(
        {
            "PARLEY_JWT_ISSUER": ISSUER,
            "PARLEY_JWT_AUDIENCE": f"{CLIENT}, cli",
            "PARLEY_JWT_PRINCIPAL_CLAIM": "",
        }
    )

    assert settings == JwtSettings(issuer=ISSUER, audiences=(CLIENT, "cli"), principal_claim="sub")


@pytest.mark.parametrize(
    "environ",
    [
        {},
        {"PARLEY_JWT_ISSUER": ISSUER},
        {"PARLEY_JWT_ISSUER": "http://login.example.com", "PARLEY_JWT_AUDIENCE": "a"},
        {"PARLEY_JWT_ISSUER": ISSUER, "PARLEY_JWT_AUDIENCE": "a", "PARLEY_JWT_JWKS_URL": "http://x/keys"},
    ],
)
def test_settings_that_would_accept_the_wrong_tokens_are_refused(environ: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="PARLEY_JWT_ISSUER"):
        JwtSettings.from_environment(environ)


# --- the Lambda handler ---------------------------------------------------------------------------------


@pytest.fixture
def logged() -> list[str]:
    return []


@pytest.fixture
def authorizer(verifier: TokenVerifier, logged: list[str]) -> Iterator[Callable[[Any], dict[str, Any]]]:
    handler = build_authorizer(verifier, log=logged.append)
    yield lambda header: handler(
        {"type": "TOKEN", "authorizationToken": header, "methodArn": METHOD_ARN}, None
    )


def test_a_valid_token_allows_the_whole_stage_for_its_principal(
    authorizer: Callable[[Any], dict[str, Any]], sign: Sign
) -> None:
    answer = authorizer(f"Bearer {sign()}")

    assert answer == {
        "principalId": SUB,
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Action": "execute-api:Invoke",
                    "Effect": "Allow",
                    "Resource": "arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/prod/*",
                }
            ],
        },
    }
    assert authorizer(f"bearer   {sign()}")["principalId"] == SUB


@pytest.mark.parametrize("header", [None, "", "Bearer", "Basic dXNlcjpwYXNz", "Bearer not-a-jwt"])
def test_no_or_an_invalid_token_is_denied_the_whole_stage(
    authorizer: Callable[[Any], dict[str, Any]], logged: list[str], header: str | None
) -> None:
    answer = authorizer(header)

    # API Gateway answers a Deny with its ACCESS_DENIED response, which the stack makes the 401
    # unauthenticated problem; a refusal is an answer, so the function's errors alarm stays quiet.
    assert answer == {
        "principalId": "unauthenticated",
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Action": "execute-api:Invoke",
                    "Effect": "Deny",
                    "Resource": "arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/prod/*",
                }
            ],
        },
    }
    assert answer == deny_policy(METHOD_ARN)
    assert len(logged) == 1 and logged[0].startswith("Refused a token: ")


def test_the_log_says_why_and_never_shows_the_token(
    authorizer: Callable[[Any], dict[str, Any]], logged: list[str], sign: Sign
) -> None:
    token = sign(exp=int(time.time()) - 3600)

    assert authorizer(f"Bearer {token}")["policyDocument"]["Statement"][0]["Effect"] == "Deny"
    assert logged == ["Refused a token: the token has expired"]
    for part in token.split("."):
        assert part not in logged[0]


def test_an_issuer_that_cannot_be_reached_is_a_failure_not_a_refusal(sign: Sign) -> None:
    down = Issuer({})
    handler = build_authorizer(TokenVerifier(SETTINGS, Jwks(SETTINGS, fetch=down).key), log=lambda _: None)

    # Not a refusal: API Gateway answers 500, and the function's errors alarm fires.
    with pytest.raises(JwksUnavailable):
        handler({"authorizationToken": f"Bearer {sign()}", "methodArn": METHOD_ARN}, None)


@pytest.mark.parametrize("arn", ["", "arn:aws:execute-api:eu-west-1:1:api", "nonsense/prod/GET/"])
def test_a_method_arn_that_is_not_one(arn: str) -> None:
    with pytest.raises(ValueError, match="execute-api"):
        allow_policy(SUB, arn)


def test_the_lambda_entry_reads_its_settings_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, issuer: Issuer, sign: Sign
) -> None:
    from parley import authorizer as module

    monkeypatch.setenv("PARLEY_JWT_ISSUER", ISSUER)
    monkeypatch.setenv("PARLEY_JWT_AUDIENCE", CLIENT)
    monkeypatch.setenv("PARLEY_JWT_JWKS_URL", JWKS_URL)
    monkeypatch.setattr(module, "fetch_json", issuer)
    module._default_authorizer.cache_clear()
    try:
        answer = module.handle({"authorizationToken": f"Bearer {sign()}", "methodArn": METHOD_ARN}, None)
    finally:
        module._default_authorizer.cache_clear()

    assert answer["principalId"] == SUB
