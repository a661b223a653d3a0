"""HTTP requests as API Gateway REST proxy events (payload format 1.0), and results back.

The local server hands the API handler the same event API Gateway would for the deployed API's
``/v1/{proxy+}`` resource, so the handler cannot tell the two apart.
"""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlsplit

API_BASE: Final = "/v1"


@dataclass(frozen=True)
class HttpReply:
    status: int
    headers: list[tuple[str, str]]
    body: bytes


def api_gateway_event(
    method: str,
    target: str,
    headers: Iterable[tuple[str, str]],
    body: bytes,
    *,
    source_ip: str = "127.0.0.1",
    stage: str = "local",
    request_id: str | None = None,
) -> dict[str, Any]:
    """The REST proxy event for one request; ``target`` is the request line's path and query."""
    parts = urlsplit(target)
    path = unquote(parts.path) or "/"
    single: dict[str, str] = {}
    multi: dict[str, list[str]] = {}
    for name, value in headers:
        single[name] = value
        multi.setdefault(name, []).append(value)
    query_single: dict[str, str] = {}
    query_multi: dict[str, list[str]] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        query_single[name] = value
        query_multi.setdefault(name, []).append(value)
    text: str | None
    encoded = False
    if not body:
        text = None
    else:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text, encoded = base64.b64encode(body).decode("ascii"), True
    # The deployed API has one Lambda proxy resource, /v1/{proxy+} (cdk/parley_cdk/api.py). Other paths
    # never reach the function on AWS; locally they do, and answer 404 like any unknown route.
    if path.startswith(f"{API_BASE}/"):
        resource, proxy = f"{API_BASE}/{{proxy+}}", path[len(API_BASE) + 1 :]
    else:
        resource, proxy = "/{proxy+}", path.lstrip("/")
    now = time.time()
    user_agent = next((v for k, v in single.items() if k.lower() == "user-agent"), None)
    host = next((v for k, v in single.items() if k.lower() == "host"), "localhost")
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method.upper(),
        "headers": single or None,
        "multiValueHeaders": multi or None,
        "queryStringParameters": query_single or None,
        "multiValueQueryStringParameters": query_multi or None,
        "pathParameters": {"proxy": proxy},
        "stageVariables": None,
        "requestContext": {
            "resourceId": "local",
            "resourcePath": resource,
            "httpMethod": method.upper(),
            "extendedRequestId": request_id or str(uuid.uuid4()),
            "requestTime": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "path": f"/{stage}{path}",
            "accountId": "000000000000",
            "protocol": "HTTP/1.1",
            "stage": stage,
            "domainPrefix": host.split(".")[0],
            "requestTimeEpoch": int(now * 1000),
            "requestId": request_id or str(uuid.uuid4()),
            "identity": {
                "cognitoIdentityPoolId": None,
                "accountId": None,
                "cognitoIdentityId": None,
                "caller": None,
                "sourceIp": source_ip,
                "principalOrgId": None,
                "accessKey": None,
                "cognitoAuthenticationType": None,
                "cognitoAuthenticationProvider": None,
                "userArn": None,
                "userAgent": user_agent,
                "user": None,
            },
            "domainName": host,
            "apiId": "local",
        },
        "body": text,
        "isBase64Encoded": encoded,
    }


def http_reply(result: dict[str, Any]) -> HttpReply:
    """The HTTP answer for a REST proxy result (``headers`` and ``multiValueHeaders`` merged)."""
    headers: list[tuple[str, str]] = []
    multi = result.get("multiValueHeaders") or {}
    for name, values in multi.items():
        headers.extend((name, str(value)) for value in values)
    seen = {name.lower() for name in multi}
    for name, value in (result.get("headers") or {}).items():
        if name.lower() not in seen:
            headers.append((name, str(value)))
    raw = result.get("body") or ""
    body = base64.b64decode(raw) if result.get("isBase64Encoded") else str(raw).encode("utf-8")
    return HttpReply(status=int(result.get("statusCode", 500)), headers=headers, body=body)
