"""OAuth as MCP servers do it (``http-api.md``, "Connections", **OAuth**; issue 32, part 4).

A connection whose server answers ``401`` is authorized the way the MCP authorization specification
(2025-06-18) says a client does it, split over two requests of two different callers:

1. :func:`begin_authorization` (``authorize_connection``, a person with a token): the server is called
   without a token and answers ``401`` with ``WWW-Authenticate: Bearer resource_metadata=…`` (else the
   well-known ``/.well-known/oauth-protected-resource`` URLs on its origin are tried), its protected
   resource metadata (RFC 9728) names the authorization server, whose metadata (RFC 8414, with the
   OpenID Connect fallbacks) gives the endpoints; Parley registers itself as a client (RFC 7591) unless
   the secret already holds a registration for that server and redirect URI, makes a PKCE S256 verifier
   and a ``state``, and answers the authorization URL, which carries the ``resource`` (RFC 8707).
2. :func:`finish_authorization` (``GET /v1/oauth/callback``, a browser coming back from the
   authorization server, no token): the ``state`` names the connection and must match the pending
   record kept in the connection's secret — unknown, already used or older than :data:`STATE_SECONDS`
   is refused — then the code is exchanged (with the verifier and the ``resource``) and the tokens are
   kept as the connection's secret; the connection's ``auth`` becomes ``oauth``, its status is left to
   approval.

The pending record (the verifier, the hash of the ``state``, who asked, when it expires) lives in the
connection's secret (:class:`~parley.connections.secrets.ConnectionSecrets`): never in a record, an
event, a log or the data folder in the clear; the ``state`` itself is kept only as its SHA-256. The state
is ``<connection>.<nonce>``: the connection (org and name, base64url) so the callback finds the secret,
and 32 random bytes.

:func:`fresh_oauth_headers` is what a call to the connection sends: ``Authorization: Bearer`` with the
access token, refreshed first when it expires within :data:`REFRESH_MARGIN_SECONDS`. A refresh the
authorization server refuses (unless another use refreshed it meanwhile: the secret then holds a newer
token), or an expired token with no refresh token, makes the connection ``broken`` and raises
:class:`~parley.connections.secrets.SecretUnreadable` (a run then ends with ``connection_broken``).
``parley.connections.credentials.headers_for`` calls it for every ``auth: oauth`` connection it is
given the store of.

The secret's value::

    {"oauth": {client_id, client_secret?, token_endpoint_auth_method, token_endpoint, access_token,
               refresh_token?, expires_at?, scope?, resource, issuer},
     "client": {client_id, client_secret?, token_endpoint_auth_method, issuer, redirect_uri},
     "pending": {state_sha256, code_verifier, principal, expires_at, redirect_uri, url, resource,
                 scope?, token_endpoint, issuer}}

``expires_at`` values are seconds since the epoch. ``client`` keeps the registration so that a second
authorization does not register again.

The mcp package's models (``mcp.shared.auth``) read every document, and its discovery helpers
(``mcp.client.auth.utils``) order the URLs tried; the calls are httpx's, synchronous, bounded, and
redirects are not followed. Every URL fetched is ``https`` (``http`` on a loopback host only).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import re
import secrets as random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote_plus, urlencode, urlsplit

import httpx

from parley.connections.secrets import SecretUnreadable
from parley.errors import Problem

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, ProtectedResourceMetadata

    from parley.connections.model import Connection
    from parley.connections.secrets import ConnectionSecrets
    from parley.connections.store import ConnectionStore

LOG: Final = logging.getLogger("parley.connections.oauth")

#: The route the authorization server sends the browser back to, below the API's base URL.
CALLBACK_PATH: Final = "/v1/oauth/callback"
#: How long a ``state`` waits for its callback.
STATE_SECONDS: Final = 600
#: A token that expires within this long is refreshed before it is sent.
REFRESH_MARGIN_SECONDS: Final = 60
#: How long one call to a server or an authorization server may take.
HTTP_TIMEOUT_SECONDS: Final = 10.0
#: The largest metadata or token document read.
MAX_DOCUMENT_BYTES: Final = 256 * 1024
#: What Parley asks to be registered as (RFC 7591).
CLIENT_NAME: Final = "Parley"
#: The grants Parley uses, and so registers for.
GRANT_TYPES: Final = ("authorization_code", "refresh_token")

_LOOPBACK: Final = frozenset({"127.0.0.1", "localhost", "::1"})
_NO_STORE: Final = {"Cache-Control": "no-store"}
_INITIALIZE: Final = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "parley", "version": "1"},
    },
}


def http_client() -> httpx.Client:
    """The client the flow's calls go through: bounded, no redirects followed."""
    return httpx.Client(timeout=HTTP_TIMEOUT_SECONDS, follow_redirects=False)


def callback_url(base_url: str) -> str:
    """The redirect URI: the API's own base URL (``https://host/stage``) and :data:`CALLBACK_PATH`."""
    return base_url.rstrip("/") + CALLBACK_PATH


# --- discovery -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Discovered:
    """What the server and its authorization server say of themselves."""

    resource: str
    authorization_server: OAuthMetadata
    scope: str | None


def discover(url: str, http: httpx.Client) -> Discovered:
    """Follow the server's ``401`` to its authorization server's metadata; a problem (``409`` when the
    server does not ask for OAuth or its authorization server lacks what Parley needs, ``503`` when a
    document cannot be had) otherwise."""
    from mcp.client.auth.utils import (
        build_oauth_authorization_server_metadata_discovery_urls,
        build_protected_resource_metadata_discovery_urls,
        get_client_metadata_scopes,
    )
    from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
    from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url

    first = _call(
        http,
        "POST",
        url,
        url,
        json=_INITIALIZE,
        headers={"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"},
    )
    if first.status_code != 401:
        raise Problem(
            "conflict",
            f"The server at {url} answered {first.status_code} without a token: it does not ask for OAuth "
            "authorization, so there is nothing to authorize.",
        )
    challenge = first.headers.get("www-authenticate", "")
    metadata_url = _challenge_field(challenge, "resource_metadata")
    protected: ProtectedResourceMetadata | None = None
    for candidate in build_protected_resource_metadata_discovery_urls(metadata_url, url):
        protected = _document(http, candidate, url, ProtectedResourceMetadata)
        if protected is not None:
            break
    if protected is None:
        raise Problem(
            "unavailable",
            f"The server at {url} asks for authorization but serves no protected resource metadata "
            "(RFC 9728) at the URL its WWW-Authenticate names or at /.well-known/oauth-protected-resource.",
        )
    resource = resource_url_from_server_url(url)
    if not check_resource_allowed(resource, str(protected.resource)):
        raise Problem(
            "unavailable",
            f"The protected resource metadata of {url} is for another resource ({protected.resource}).",
        )
    issuer = str(protected.authorization_servers[0])
    found: OAuthMetadata | None = None
    for candidate in build_oauth_authorization_server_metadata_discovery_urls(issuer, url):
        found = _document(http, candidate, url, OAuthMetadata)
        if found is not None:
            break
    if found is None:
        raise Problem(
            "unavailable",
            f"The authorization server {issuer} of {url} serves no metadata (RFC 8414 or OpenID Connect "
            "discovery).",
        )
    if "S256" not in (found.code_challenge_methods_supported or []):
        raise Problem(
            "conflict",
            f"The authorization server {issuer} does not support PKCE with S256, which the MCP "
            "authorization specification requires.",
        )
    scope = get_client_metadata_scopes(
        _challenge_field(challenge, "scope"), protected, found, list(GRANT_TYPES)
    )
    return Discovered(resource=resource, authorization_server=found, scope=scope)


def _challenge_field(challenge: str, name: str) -> str | None:
    match = re.search(rf'{name}=(?:"([^"]+)"|([^\s,]+))', challenge)
    return (match.group(1) or match.group(2)) if match else None


def _allowed(url: str, server_url: str) -> bool:
    """``https``, or ``http`` on a loopback host (as the connection's own URL may be locally)."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return True
    host = (parts.hostname or "").lower()
    return parts.scheme == "http" and host in _LOOPBACK and (urlsplit(server_url).hostname or "") in _LOOPBACK


def _call(http: httpx.Client, method: str, url: str, server_url: str, **kwargs: Any) -> httpx.Response:
    if not _allowed(url, server_url):
        raise Problem(
            "unavailable", f"{url} is not an https URL: Parley sends OAuth requests over https only."
        )
    try:
        with http.stream(method, url, **kwargs) as response:
            body = b""
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT_BYTES:
                    raise Problem("unavailable", f"{url} answered more than {MAX_DOCUMENT_BYTES:,} bytes.")
            return httpx.Response(response.status_code, headers=response.headers, content=body)
    except httpx.HTTPError as exc:
        raise Problem("unavailable", f"{url} could not be reached ({type(exc).__name__}).") from None


def _document(http: httpx.Client, url: str, server_url: str, model: type[Any]) -> Any:
    """The document at ``url`` read as ``model``; ``None`` when it is not there (the next is tried)."""
    from pydantic import ValidationError

    response = _call(http, "GET", url, server_url, headers={"Accept": "application/json"})
    if response.status_code >= 500:
        raise Problem("unavailable", f"{url} answered {response.status_code}.")
    if response.status_code != 200:
        return None
    try:
        return model.model_validate_json(response.content)
    except ValidationError:
        return None


# --- the client's registration ---------------------------------------------------------------------------


def registered_client(
    found: Discovered, kept: Mapping[str, Any] | None, redirect_uri: str, url: str, http: httpx.Client
) -> dict[str, Any]:
    """The client Parley is at the authorization server: the one ``kept`` when it was registered there
    for ``redirect_uri``, else a new registration (RFC 7591)."""
    issuer = str(found.authorization_server.issuer)
    if (
        isinstance(kept, Mapping)
        and kept.get("issuer") == issuer
        and kept.get("redirect_uri") == redirect_uri
        and isinstance(kept.get("client_id"), str)
    ):
        return dict(kept)
    endpoint = found.authorization_server.registration_endpoint
    if endpoint is None:
        raise Problem(
            "conflict",
            f"The authorization server {issuer} offers no dynamic client registration (RFC 7591), and "
            "Parley has no client there.",
        )
    information = _register(str(endpoint), found, redirect_uri, url, http)
    client: dict[str, Any] = {
        "client_id": information.client_id,
        "token_endpoint_auth_method": information.token_endpoint_auth_method
        or ("client_secret_basic" if information.client_secret else "none"),
        "issuer": issuer,
        "redirect_uri": redirect_uri,
    }
    if information.client_secret:
        client["client_secret"] = information.client_secret
    return client


def _register(
    endpoint: str, found: Discovered, redirect_uri: str, url: str, http: httpx.Client
) -> OAuthClientInformationFull:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata
    from pydantic import AnyUrl, ValidationError

    metadata = OAuthClientMetadata(
        redirect_uris=[AnyUrl(redirect_uri)],
        token_endpoint_auth_method="client_secret_post",
        grant_types=list(GRANT_TYPES),
        response_types=["code"],
        client_name=CLIENT_NAME,
        scope=found.scope,
        application_type="web",
    )
    response = _call(
        http, "POST", endpoint, url, json=metadata.model_dump(by_alias=True, mode="json", exclude_none=True)
    )
    if response.status_code not in (200, 201):
        raise Problem(
            "unavailable", f"The authorization server refused to register Parley ({response.status_code})."
        )
    try:
        body = json.loads(response.content)
        if isinstance(body, dict):
            body.pop("issuer", None)
        return OAuthClientInformationFull.model_validate(body)
    except (ValueError, ValidationError):
        raise Problem("unavailable", "The authorization server's registration answer is not one.") from None


# --- the two halves of the flow ----------------------------------------------------------------------------


def begin_authorization(
    connection: Connection,
    principal: str,
    secrets: ConnectionSecrets,
    redirect_uri: str,
    now: datetime,
    http: httpx.Client,
) -> str:
    """The authorization URL the person opens; the pending record is kept in the connection's secret
    (any earlier one is replaced)."""
    found = discover(connection.url, http)
    kept = _kept(connection, secrets)
    client = registered_client(found, kept.get("client"), redirect_uri, connection.url, http)
    verifier = _urlsafe(random.token_bytes(48))
    challenge = _urlsafe(hashlib.sha256(verifier.encode("ascii")).digest())
    state = _state_of(connection.org, connection.name)
    metadata = found.authorization_server
    pending: dict[str, Any] = {
        "state_sha256": _digest(state),
        "code_verifier": verifier,
        "principal": principal,
        "expires_at": int(now.timestamp()) + STATE_SECONDS,
        "redirect_uri": redirect_uri,
        "url": connection.url,
        "resource": found.resource,
        "token_endpoint": str(metadata.token_endpoint),
        "issuer": str(metadata.issuer),
        "iss_required": bool(metadata.authorization_response_iss_parameter_supported),
    }
    if found.scope:
        pending["scope"] = found.scope
    secrets.put(connection.org, connection.name, {**kept, "client": client, "pending": pending})
    query = {
        "response_type": "code",
        "client_id": client["client_id"],
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": found.resource,
    }
    if found.scope:
        query["scope"] = found.scope
    endpoint = str(metadata.authorization_endpoint)
    LOG.info(
        "OAuth authorization of connection %s/%s started by %s", connection.org, connection.name, principal
    )
    return endpoint + ("&" if urlsplit(endpoint).query else "?") + urlencode(query)


@dataclass(frozen=True)
class Finished:
    """The connection the callback authorized, and who asked."""

    connection: Connection
    principal: str


def finish_authorization(
    state: str | None,
    code: str | None,
    error: str | None,
    *,
    caller: str | None,
    secrets: ConnectionSecrets,
    store: ConnectionStore,
    now: datetime,
    http: httpx.Client,
    iss: str | None = None,
) -> Finished:
    """Exchange ``code`` for tokens and keep them; ``400 bad_request`` for a ``state`` that is unknown,
    used or expired, or an ``iss`` (RFC 9207) that is not the authorization server's; ``403`` when
    ``caller`` (a bearer token the callback carried) is not who asked."""
    if not state:
        raise Problem("bad_request", "The callback carries no state: open the authorization URL again.")
    org, name = _connection_of(state)
    connection = store.get(org, name)
    if connection is None:
        raise _unknown_state()
    try:
        kept = secrets.read(org, name)
    except SecretUnreadable:
        raise _unknown_state() from None
    pending = kept.get("pending")
    if not isinstance(pending, Mapping) or not hmac.compare_digest(
        str(pending.get("state_sha256", "")), _digest(state)
    ):
        raise _unknown_state()
    if caller is not None and caller != pending.get("principal"):
        raise Problem(
            "forbidden",
            "This authorization was started by someone else: its state is bound to the person who asked.",
        )
    rest = {key: value for key, value in kept.items() if key != "pending"}
    secrets.put(org, name, rest)  # used once, whatever follows
    if int(pending.get("expires_at", 0)) <= now.timestamp():
        raise Problem(
            "bad_request",
            f"This authorization expired (a state waits {STATE_SECONDS // 60} minutes): authorize the "
            "connection again.",
        )
    if error:
        raise Problem(
            "bad_request",
            f"The authorization server did not authorize the connection ({_plain(error)}): authorize it "
            "again to retry.",
        )
    if not code:
        raise Problem("bad_request", "The callback carries no code: authorize the connection again.")
    if pending.get("url") != connection.url:
        raise _unknown_state()
    if (iss is not None and iss != pending.get("issuer")) or (iss is None and pending.get("iss_required")):
        raise Problem(
            "bad_request",
            "The callback does not come from the authorization server the authorization was sent to "
            "(its iss): authorize the connection again.",
        )
    client = rest.get("client")
    if not isinstance(client, Mapping):
        raise _unknown_state()
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": str(pending["redirect_uri"]),
        "code_verifier": str(pending["code_verifier"]),
        "resource": str(pending["resource"]),
    }
    token = _token_request(str(pending["token_endpoint"]), form, client, connection.url, http)
    if token is None:
        raise Problem(
            "bad_request",
            "The authorization server refused the code (it may have expired or been used): authorize "
            "the connection again.",
        )
    oauth = _kept_token(token, client, pending, now)
    secrets.put(org, name, {**rest, "oauth": oauth})
    updated = store.set_auth(org, name, "oauth")
    principal = str(pending.get("principal"))
    LOG.info("OAuth authorization of connection %s/%s kept for %s", org, name, principal)
    return Finished(updated, principal)


def _kept(connection: Connection, secrets: ConnectionSecrets) -> dict[str, Any]:
    """What the connection's secret holds now (nothing yet for ``auth: none``)."""
    if connection.auth == "headers":
        raise Problem(
            "conflict",
            f"The connection {connection.name!r} sends headers the person gave; remove it and add it "
            "again without headers to authorize it through OAuth.",
        )
    try:
        return dict(secrets.read(connection.org, connection.name))
    except SecretUnreadable:
        return {}


def _kept_token(
    token: Mapping[str, Any], client: Mapping[str, Any], pending: Mapping[str, Any], now: datetime
) -> dict[str, Any]:
    oauth: dict[str, Any] = {
        "client_id": client["client_id"],
        "token_endpoint_auth_method": client.get("token_endpoint_auth_method", "none"),
        "token_endpoint": pending["token_endpoint"],
        "issuer": pending.get("issuer"),
        "resource": pending["resource"],
        "access_token": token["access_token"],
    }
    if client.get("client_secret"):
        oauth["client_secret"] = client["client_secret"]
    for key in ("refresh_token", "scope"):
        if token.get(key):
            oauth[key] = token[key]
    if token.get("expires_in") is not None:
        oauth["expires_at"] = int(now.timestamp()) + int(token["expires_in"])
    return oauth


def _token_request(
    endpoint: str, form: dict[str, str], client: Mapping[str, Any], url: str, http: httpx.Client
) -> dict[str, Any] | None:
    """The token endpoint's answer (RFC 6749 §5.1) as a dict; ``None`` when it refused the grant
    (``400``/``401``: ``invalid_grant`` and the like); ``503`` when it could not be had."""
    from mcp.shared.auth import OAuthToken
    from pydantic import ValidationError

    headers = {"Accept": "application/json"}
    method = client.get("token_endpoint_auth_method")
    form = {**form, "client_id": str(client["client_id"])}
    secret = client.get("client_secret")
    if isinstance(secret, str) and secret:
        if method == "client_secret_basic":
            pair = f"{_form_quote(str(client['client_id']))}:{_form_quote(secret)}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        else:
            form["client_secret"] = secret
    response = _call(http, "POST", endpoint, url, data=form, headers=headers)
    if response.status_code in (400, 401):
        return None
    if response.status_code != 200:
        raise Problem("unavailable", f"The token endpoint answered {response.status_code}.")
    try:
        token = OAuthToken.model_validate_json(response.content)
    except ValidationError:
        raise Problem("unavailable", "The token endpoint's answer is not a token.") from None
    return token.model_dump(exclude_none=True)


# --- refresh, at use ----------------------------------------------------------------------------------------


def fresh_oauth_headers(
    connection: Connection,
    secrets: ConnectionSecrets,
    store: ConnectionStore,
    now: datetime,
    http: httpx.Client | None = None,
) -> dict[str, str]:
    """``Authorization: Bearer <access token>`` for a call to ``connection`` (``auth: oauth``), refreshed
    first when it expires within :data:`REFRESH_MARGIN_SECONDS`. A refresh refused, or an expired token
    with no refresh token, makes the connection ``broken`` and raises :class:`SecretUnreadable`; an
    authorization server that cannot be reached leaves it as it is and raises the same (the call fails
    now, the next use tries again)."""
    value = secrets.read(connection.org, connection.name)
    oauth = value.get("oauth")
    if not isinstance(oauth, Mapping) or not isinstance(oauth.get("access_token"), str):
        raise SecretUnreadable(
            f"The connection {connection.name!r} holds no OAuth access token; authorize it "
            "(authorize_connection), or remove it and add it again."
        )
    expires_at = oauth.get("expires_at")
    if not isinstance(expires_at, int | float) or expires_at - REFRESH_MARGIN_SECONDS > now.timestamp():
        return {"Authorization": f"Bearer {oauth['access_token']}"}
    refreshed = _refreshed(connection, oauth, now, http)
    if refreshed is None:
        meanwhile = _refreshed_elsewhere(connection, secrets, oauth, now)
        if meanwhile is not None:
            return {"Authorization": f"Bearer {meanwhile}"}
        store.set_status(connection.org, connection.name, "broken")
        LOG.warning(
            "The OAuth token of connection %s/%s could not be refreshed: the connection is broken",
            connection.org,
            connection.name,
        )
        raise SecretUnreadable(
            f"The OAuth token of the connection {connection.name!r} expired and the authorization server "
            "refused to refresh it: remove the connection and add it again."
        )
    secrets.put(connection.org, connection.name, {**value, "oauth": refreshed})
    return {"Authorization": f"Bearer {refreshed['access_token']}"}


def _refreshed_elsewhere(
    connection: Connection, secrets: ConnectionSecrets, used: Mapping[str, Any], now: datetime
) -> str | None:
    """The access token another use kept while this one refreshed with the same refresh token (an
    authorization server that rotates refresh tokens refuses the second refresh): not a broken
    connection."""
    try:
        oauth = secrets.read(connection.org, connection.name).get("oauth")
    except SecretUnreadable:
        return None
    if not isinstance(oauth, Mapping) or oauth.get("refresh_token") == used.get("refresh_token"):
        return None
    token, expires_at = oauth.get("access_token"), oauth.get("expires_at")
    if not isinstance(token, str) or not token:
        return None
    if isinstance(expires_at, int | float) and expires_at - REFRESH_MARGIN_SECONDS <= now.timestamp():
        return None
    return token


def _refreshed(
    connection: Connection, oauth: Mapping[str, Any], now: datetime, http: httpx.Client | None
) -> dict[str, Any] | None:
    """The token after a refresh; ``None`` when it cannot be refreshed (the connection is broken)."""
    refresh_token = oauth.get("refresh_token")
    if not isinstance(refresh_token, str) or not refresh_token:
        return None
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "resource": str(oauth["resource"])}
    if oauth.get("scope"):
        form["scope"] = str(oauth["scope"])
    client = http or http_client()
    try:
        token = _token_request(str(oauth["token_endpoint"]), form, oauth, connection.url, client)
    except Problem as problem:
        raise SecretUnreadable(
            f"The OAuth token of the connection {connection.name!r} expired and could not be refreshed "
            f"now: {problem.detail}"
        ) from None
    finally:
        if http is None:
            client.close()
    if token is None:
        return None
    fresh = {key: value for key, value in oauth.items() if key not in ("access_token", "expires_at")}
    fresh["access_token"] = token["access_token"]
    if token.get("refresh_token"):
        fresh["refresh_token"] = token["refresh_token"]
    if token.get("scope"):
        fresh["scope"] = token["scope"]
    if token.get("expires_in") is not None:
        fresh["expires_at"] = int(now.timestamp()) + int(token["expires_in"])
    return fresh


# --- the state ----------------------------------------------------------------------------------------------


def _state_of(org: str, name: str) -> str:
    named = _urlsafe(json.dumps([org, name], separators=(",", ":")).encode("utf-8"))
    return f"{named}.{_urlsafe(random.token_bytes(32))}"


def _connection_of(state: str) -> tuple[str, str]:
    named, dot, nonce = state.partition(".")
    try:
        if not dot or not nonce or len(state) > 1024:
            raise ValueError(state)
        value = json.loads(base64.urlsafe_b64decode(named + "=" * (-len(named) % 4)))
        if (
            isinstance(value, list)
            and len(value) == 2
            and all(isinstance(part, str) and part for part in value)
        ):
            return value[0], value[1]
    except ValueError:
        pass
    raise _unknown_state()


def _unknown_state() -> Problem:
    return Problem(
        "bad_request",
        "This authorization is unknown, was already used or has expired: authorize the connection again.",
    )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _urlsafe(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _form_quote(text: str) -> str:
    return quote_plus(text)


def _plain(text: str) -> str:
    """An error code from a query string, shown only when it is a plain OAuth error code."""
    return text if re.fullmatch(r"[a-z_]{1,64}", text) else "an error"
