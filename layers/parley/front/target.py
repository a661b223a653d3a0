"""Where an MCP endpoint is: ``/mcp``, or one playbook's ``/v1/orgs/{org}/playbooks/{playbook}/mcp``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

#: The endpoint of every playbook (its tools take ``org`` and ``playbook``).
MCP_PATH: Final = "/mcp"
_SCOPED: Final = re.compile(r"^/v1/orgs/([^/]+)/playbooks/([^/]+)/mcp/?$")


@dataclass(frozen=True)
class Target:
    """An endpoint: ``/mcp`` (neither set) or one playbook's."""

    org: str | None = None
    playbook: str | None = None
    #: The API's base URL as the caller reached it (``parley.api.origin``), for the operations that
    #: send a browser back to the API (``authorize_connection``).
    base_url: str | None = None

    @property
    def scoped(self) -> bool:
        return self.playbook is not None


def mcp_target(path: str) -> Target | None:
    """The endpoint at ``path``: ``/mcp`` or a playbook's; ``None`` for any other path."""
    if path in (MCP_PATH, MCP_PATH + "/"):
        return Target()
    found = _SCOPED.match(path)
    if found is None:
        return None
    return Target(org=found.group(1), playbook=found.group(2))


def is_mcp_path(path: str) -> bool:
    return mcp_target(path) is not None
