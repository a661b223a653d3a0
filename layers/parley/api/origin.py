"""The API's own base URL, as the caller reached it: what the OAuth redirect URI is made of
(``http-api.md``, "Connections", OAuth: ``<base>/v1/oauth/callback``).

- ``PARLEY_PUBLIC_URL``, when the operator sets it (a custom domain, a proxy in front): used as it is;
- on API Gateway's own domain (``<id>.execute-api.<region>.amazonaws.com``): ``https://<host>/<stage>``;
- otherwise (a custom domain without a base path, ``parley serve``): the request's ``Host``, with the
  scheme ``X-Forwarded-Proto`` names, else ``http`` (``parley serve`` answers only a ``Host`` that names
  it: ``parley.local.request_guard``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final

PUBLIC_URL_VARIABLE: Final = "PARLEY_PUBLIC_URL"


def api_base_url(event: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> str | None:
    """``https://host/stage`` (no trailing ``/``) for a REST proxy event; ``None`` without a host."""
    configured = (os.environ if environ is None else environ).get(PUBLIC_URL_VARIABLE, "").strip()
    if configured:
        return configured.rstrip("/")
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    context = event.get("requestContext")
    context = context if isinstance(context, Mapping) else {}
    host = headers.get("host") or str(context.get("domainName") or "")
    if not host or any(c in host for c in "/\\@?#") or any(ord(c) <= 32 for c in host):
        return None
    stage = str(context.get("stage") or "")
    if ".execute-api." in host:
        return f"https://{host}/{stage}" if stage else f"https://{host}"
    scheme = headers.get("x-forwarded-proto", "http").split(",")[0].strip().lower()
    return f"{scheme if scheme in ('http', 'https') else 'http'}://{host}"
