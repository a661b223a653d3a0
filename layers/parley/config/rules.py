"""What the sections of the operator configuration check alike: the deployed configuration holds no secret
(each is a Secrets Manager reference), and a list names each thing once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from parley.reading import Reading
from parley.secret import Secret

#: The prefix of a header value that takes its secret from Secrets Manager (``parley.tools.servers``).
SECRET_REFERENCE_PREFIX: Final = "{{resolve:secretsmanager:"


def on_aws(reading: Reading) -> bool:
    """Whether the configuration being read is the deployed one (``parse_operator_config(…, aws=True)``)."""
    return reading.context.get("aws") is True


def is_secret_reference(value: Secret) -> bool:
    return SECRET_REFERENCE_PREFIX in value.get_secret_value()


def store_only(what: str) -> str:
    return (
        f"on AWS {what} takes its secret from Secrets Manager, as "
        "{{resolve:secretsmanager:<name or ARN>}} (the configuration holds no secret)"
    )


def refuse_duplicates(values: Iterable[object], what: str) -> None:
    seen: set[object] = set()
    for value in values:
        if value in seen:
            shown = "/".join(value) if isinstance(value, tuple) else value
            raise ValueError(f"duplicate {what} {shown!r}")
        seen.add(value)
