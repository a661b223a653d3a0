"""The structured logger of the API, built on first use (it reads its settings from the environment).

Never log a request's headers or body: they carry bearer tokens and content.
"""

from __future__ import annotations

import functools

from aws_lambda_powertools import Logger


@functools.cache
def logger() -> Logger:
    return Logger(service="parley")
