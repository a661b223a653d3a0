"""Routes registered once, so that a path the API knows under other methods answers 405 with ``Allow``
(powertools answers 404 for any method it has no route for)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, TypeVar

from aws_lambda_powertools.event_handler import APIGatewayRestResolver

#: Every route is relative to this base (``http-api.md``, "Base and auth").
PLAYBOOK_BASE: Final = "/v1/orgs/<org>/playbooks/<playbook>"
#: The base of the routes relative to an org, not a playbook (``http-api.md``, "Models").
ORG_BASE: Final = "/v1/orgs/<org>"

Handler = TypeVar("Handler", bound=Callable[..., Any])


class Routes:
    """Registers routes on the resolver and remembers which methods each path takes."""

    def __init__(self, app: APIGatewayRestResolver) -> None:
        self.app = app
        self._rules: list[tuple[str, str]] = []
        # Compiled on the first 404 or 405, not with every function's first event.
        self._patterns: list[tuple[re.Pattern[str], str]] | None = None

    def add(self, method: str, rule: str) -> Callable[[Handler], Handler]:
        """Register the decorated function for ``method`` on ``rule``; a GET also answers HEAD (RFC 9110)."""
        methods = [method.upper(), *(["HEAD"] if method.upper() == "GET" else [])]
        self._rules.extend((rule, m) for m in methods)
        self._patterns = None
        register: Callable[[Handler], Handler] = self.app.route(rule, methods)
        return register

    def allowed_methods(self, path: str) -> list[str]:
        """The methods some route takes on ``path``, in a stable order (none: no such path)."""
        if self._patterns is None:
            self._patterns = [
                (re.compile("^" + re.sub(r"<\w+>", "[^/]+", rule) + "/*$"), method)
                for rule, method in self._rules
            ]
        methods = {method for pattern, method in self._patterns if pattern.match(path)}
        return sorted(methods)
