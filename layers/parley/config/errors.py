"""The operator configuration's one error (``http-api.md``, "Operator configuration"): every loading
mistake names the source (file, variable or parameter) and the field."""

from __future__ import annotations


class OperatorConfigError(ValueError):
    """The operator configuration cannot be used; the message names the source and the field."""


__all__ = ["OperatorConfigError"]
