"""Lambda entry for the HTTP API (API Gateway REST proxy events); the routes live in ``parley.api.app``."""

from parley.api.app import handle

handler = handle
