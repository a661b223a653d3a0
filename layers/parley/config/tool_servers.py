"""``tool_servers`` (``http-api.md``, "Operator configuration"; ``agent-runs.md``, "Turning it on: ``ask``"):
the streamable-HTTP MCP servers the runtime may call, for which orgs and playbooks, and the tools of each
that wait for a person's approval before each call.

An approval's ``confirmation`` is a Liquid template over ``arguments``, checked when the configuration
is loaded as a function's confirmation is. The template engine sits above the configuration (issue 30:
the configuration is the foundation), so the check is named here by module path
(:data:`CONFIRMATION_CHECK`) and imported when a configuration holds a confirmation, as the lifecycle
reaches the function types (``parley.runs.kinds``); the problems found, and when, are those of before.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, cast
from urllib.parse import urlsplit

from parley.config.principals import identifier
from parley.config.rules import SECRET_REFERENCE_PREFIX, on_aws, refuse_duplicates
from parley.reading import (
    Reading,
    bounded_text,
    flag,
    items,
    mapping,
    optional,
    reads,
    record,
    secret,
    text,
    then,
)
from parley.secret import Secret

_SERVER_NAME: Final = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
#: A tool's name, as MCP allows it (``parley.documents.asking`` reads the functions' tool names with it).
TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{1,128}")
#: The check of a confirmation's template (module, function): ``function(template)`` gives each problem
#: as ``(line, message)``, none when the template reads only ``arguments`` with the filters a
#: confirmation may use.
CONFIRMATION_CHECK: Final = ("parley.documents.asking", "confirmation_problems")

ConfirmationCheck = Callable[[str], list[tuple[int, str]]]


def _server_name(value: str) -> str:
    if not _SERVER_NAME.match(value):
        raise ValueError("a tool server name is 1 to 32 of a-z, 0-9 and '-', starting with a letter")
    return value


def _tool_name(value: str) -> str:
    if "/" in value:
        raise ValueError(
            f"{value!r}: write the tool's name alone, without a server: it is a tool of this server"
        )
    if not TOOL_NAME.fullmatch(value):
        raise ValueError("a tool name is 1 to 128 of A-Z, a-z, 0-9, '_', '.' and '-'")
    return value


server_name = then(text, _server_name)
tool_name = then(text, _tool_name)


def _confirmation_check() -> ConfirmationCheck:
    module, function = CONFIRMATION_CHECK
    return cast(ConfirmationCheck, getattr(importlib.import_module(module), function))


def _a_template_over_arguments(confirmation: str) -> str:
    if not confirmation.strip():
        raise ValueError("a confirmation is the text the person approves; it cannot be empty")
    found = _confirmation_check()(confirmation)
    if found:
        raise ValueError("; ".join(f"line {line} of the template: {message}" for line, message in found))
    return confirmation


@dataclass(frozen=True)
class ToolApproval:
    """One entry of a tool server's ``approve`` (``agent-runs.md``, "Turning it on: ``ask``"): a tool of
    this server that waits for a person's approval before each call, whatever the function says.

    Exactly one of ``confirmation`` (a Liquid template over ``arguments``, the call's validated arguments,
    checked as a function's confirmation is) and ``preview`` (another tool of this server, called with the
    same arguments, whose text is the confirmation).
    """

    tool: str = field(metadata=reads(tool_name))
    confirmation: str | None = field(
        default=None, metadata=reads(optional(then(text, _a_template_over_arguments)))
    )
    preview: str | None = field(default=None, metadata=reads(optional(tool_name)))

    def checked(self) -> None:
        """Exactly one of confirmation and preview, and a preview that is another tool."""
        if (self.confirmation is None) == (self.preview is None):
            raise ValueError(
                f"approval of {self.tool!r}: write exactly one of confirmation (a template over arguments) "
                "and preview (a tool of this server)"
            )
        if self.preview == self.tool:
            raise ValueError(
                f"approval of {self.tool!r}: preview names the tool itself; name another, read-only tool "
                "of this server"
            )


def _one_approval_per_tool(approve: tuple[ToolApproval, ...]) -> tuple[ToolApproval, ...]:
    refuse_duplicates((entry.tool for entry in approve), "approval of tool")
    return approve


def _secrets_from_the_store_on_aws(headers: dict[str, Secret], reading: Reading) -> dict[str, Secret]:
    if on_aws(reading):
        for name, value in headers.items():
            if SECRET_REFERENCE_PREFIX not in value.get_secret_value():
                raise ValueError(
                    f"header {name!r}: on AWS a header takes its secret from Secrets Manager, "
                    "as {{resolve:secretsmanager:<name or ARN>}} (the configuration holds no secret)"
                )
    return headers


def _some_orgs(orgs: tuple[str, ...]) -> tuple[str, ...]:
    if not orgs:
        raise ValueError("a tool server serves at least one org")
    return orgs


def _tool_server_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("a tool server url is an http:// or https:// URL with a host")
    return url


@dataclass(frozen=True)
class ToolServer:
    """A streamable-HTTP MCP server the runtime may call for the orgs (and playbooks) it serves.

    ``approve`` lists the tools of this server that wait for a person's approval before each call; a
    function cannot waive them.
    """

    name: str = field(metadata=reads(server_name))
    url: str = field(metadata=reads(then(text, _tool_server_url)))
    orgs: tuple[str, ...] = field(metadata=reads(then(items(identifier), _some_orgs)))
    playbooks: tuple[str, ...] | None = field(default=None, metadata=reads(optional(items(identifier))))
    allowed: tuple[str, ...] | None = field(default=None, metadata=reads(optional(items(bounded_text(1)))))
    record_content: bool = field(default=True, metadata=reads(flag))
    headers: dict[str, Secret] = field(
        default_factory=dict, metadata=reads(mapping(secret), _secrets_from_the_store_on_aws)
    )
    approve: tuple[ToolApproval, ...] = field(
        default=(), metadata=reads(then(items(record(ToolApproval)), _one_approval_per_tool))
    )

    def serves(self, org: str, playbook: str) -> bool:
        """Whether a playbook may use this server."""
        return org in self.orgs and (self.playbooks is None or playbook in self.playbooks)


def distinct_servers(servers: tuple[ToolServer, ...]) -> tuple[ToolServer, ...]:
    refuse_duplicates((s.name for s in servers), "tool server name")
    return servers


__all__ = [
    "CONFIRMATION_CHECK",
    "TOOL_NAME",
    "ConfirmationCheck",
    "ToolApproval",
    "ToolServer",
    "distinct_servers",
    "server_name",
    "tool_name",
]
