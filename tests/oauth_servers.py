"""An OAuth-protected MCP server for tests: mcp's ``MCPServer`` over streamable HTTP (stateless, JSON
responses) that is also its own authorization server (``mcp.server.auth``: the protected-resource
metadata, the authorization server's metadata, dynamic client registration, ``/authorize`` and
``/token``), served by uvicorn on 127.0.0.1 in a thread of the test process.

The authorization server is :class:`MemoryAuthorization`, an ``OAuthAuthorizationServerProvider`` kept
in memory whose ``/authorize`` approves at once: it redirects the browser straight back to the client's
redirect URI with a code, as a person who signs in and allows would. What it saw and how to make it
refuse:

- ``registered``: the clients registered (RFC 7591), in order;
- ``authorize_resources`` / ``token_resources``: the ``resource`` (RFC 8707) of each authorization and
  token request;
- ``refreshes``: how many refreshes it granted; ``refuse_refresh = True`` refuses the next ones with
  ``400 invalid_grant``;
- ``expires_in``: the lifetime it gives access tokens (seconds);
- ``issued``: every access and refresh token it issued (a test searches responses and logs for them).

Every MCP request needs a valid access token (``401`` with ``WWW-Authenticate: Bearer
resource_metadata=…`` otherwise; with ``plain_challenge = True`` only ``Bearer``, so a client falls back
to the well-known URL); a refreshed token replaces the one it was refreshed from. Its one tool:
``notes(topic)`` (read-only).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp.types import ToolAnnotations
from mcp_servers import free_port, serving_in_a_thread

SCOPE = "notes"


class MemoryAuthorization:
    """An in-memory authorization server that approves every authorization request at once."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.registered: list[OAuthClientInformationFull] = []
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.authorize_resources: list[str | None] = []
        self.token_resources: list[str | None] = []
        self.code_challenges: list[str] = []
        self.issued: list[str] = []
        self.refreshes = 0
        self.refuse_refresh = False
        self.expires_in = 3600

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info
        self.registered.append(client_info)

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(24)
        self.authorize_resources.append(params.resource)
        self.code_challenges.append(params.code_challenge)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="person-at-the-server",
        )
        self.issued.append(code)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        self.token_resources.append(authorization_code.resource)
        return self._tokens(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        if self.refuse_refresh:
            return None  # the token endpoint answers 400 invalid_grant
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]
        for token, access in list(self.access.items()):
            if access.client_id == client.client_id:
                del self.access[token]  # the refreshed token replaces the old one
        self.refreshes += 1
        self.token_resources.append(refresh_token.resource)
        return self._tokens(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _tokens(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = "at-" + secrets.token_urlsafe(24), "rt-" + secrets.token_urlsafe(24)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + self.expires_in,
            resource=resource,
            subject="person-at-the-server",
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh,
            client_id=client_id,
            scopes=scopes,
            resource=resource,
            subject="person-at-the-server",
        )
        self.issued.extend([access, refresh])
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.expires_in,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )


class OAuthToolServer:
    """The server's state, its URL (``…/mcp``) and its authorization server."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.origin = f"http://127.0.0.1:{port}"
        self.url = self.origin + "/mcp"
        self.authorization = MemoryAuthorization()
        self.mcp: MCPServer[Any] = MCPServer(
            "notes",
            auth_server_provider=self.authorization,
            auth=AuthSettings(
                issuer_url=self.origin,  # type: ignore[arg-type]
                resource_server_url=self.url,  # type: ignore[arg-type]
                client_registration_options=ClientRegistrationOptions(
                    enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
                ),
                required_scopes=[SCOPE],
                validate_token_resource=True,
            ),
        )

        @self.mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
        def notes(topic: str) -> str:
            """The notes on a topic."""
            return f"Notes on {topic}: none yet."

        self.plain_challenge = False
        self._inner = self.mcp.streamable_http_app(
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(allowed_hosts=[f"127.0.0.1:{port}"]),
        )

    async def app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """The mcp package's app; with :attr:`plain_challenge`, a ``401`` names no metadata URL."""
        if scope["type"] != "http" or not self.plain_challenge:
            await self._inner(scope, receive, send)
            return

        async def plain(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                headers = [(k, v) for k, v in message["headers"] if k.lower() != b"www-authenticate"]
                message = {**message, "headers": [*headers, (b"www-authenticate", b"Bearer")]}
            await send(message)

        await self._inner(scope, receive, plain)


@contextmanager
def running_oauth_server() -> Iterator[OAuthToolServer]:
    """An :class:`OAuthToolServer` listening on a free port of 127.0.0.1 for the block."""
    port = free_port()
    state = OAuthToolServer(port)
    with serving_in_a_thread(state.app, port, "test OAuth MCP server"):
        yield state
