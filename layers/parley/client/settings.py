"""Where the client sends its requests, and as whom: ``--url``, ``--token``, ``--org``, ``--playbook``,
else ``PARLEY_URL``, ``PARLEY_TOKEN``, ``PARLEY_ORG``, ``PARLEY_PLAYBOOK``, else the local server of
``make serve`` and the example configuration (``examples/operator.yaml``: the token ``dev-token`` writes
the playbook ``campaigns`` of the org ``acme``).

The example token is a default only for a server on this machine: it is no secret, but a deployed
stage never takes it, so a remote URL without a token goes without one and its ``401`` says how to give
one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, urlsplit

DEFAULT_URL: Final = "http://127.0.0.1:8000"
EXAMPLE_TOKEN: Final = "dev-token"
EXAMPLE_ORG: Final = "acme"
EXAMPLE_PLAYBOOK: Final = "campaigns"
LOCAL_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class Settings:
    url: str
    token: str | None
    org: str
    playbook: str
    #: Where the token came from, for the hint of a 401: "--token", "PARLEY_TOKEN", "the example token".
    token_from: str

    @property
    def playbook_path(self) -> str:
        """The base of the playbook's routes, ``/v1/orgs/{org}/playbooks/{playbook}``."""
        return f"/v1/orgs/{quote(self.org, safe='')}/playbooks/{quote(self.playbook, safe='')}"


def is_local(url: str) -> bool:
    return (urlsplit(url).hostname or "") in LOCAL_HOSTS


def settings_from(
    url: str | None,
    token: str | None,
    org: str | None,
    playbook: str | None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """The settings from the options given (``None`` when left out), then the environment, then the
    defaults. An empty environment variable counts as unset."""
    env = os.environ if environ is None else environ
    chosen_url = (url or env.get("PARLEY_URL") or DEFAULT_URL).rstrip("/")
    if token:
        chosen_token, token_from = token, "--token"
    elif env.get("PARLEY_TOKEN"):
        chosen_token, token_from = env["PARLEY_TOKEN"], "PARLEY_TOKEN"
    elif is_local(chosen_url):
        chosen_token, token_from = EXAMPLE_TOKEN, "the example token"
    else:
        chosen_token, token_from = None, "no token"
    return Settings(
        url=chosen_url,
        token=chosen_token,
        org=org or env.get("PARLEY_ORG") or EXAMPLE_ORG,
        playbook=playbook or env.get("PARLEY_PLAYBOOK") or EXAMPLE_PLAYBOOK,
        token_from=token_from,
    )
