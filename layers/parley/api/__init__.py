"""The HTTP API (``http-api.md``) on API Gateway REST proxy events, through powertools' resolver.

``app`` builds the resolver and the Lambda entry ``handle``; ``problems`` is the one place that turns
errors into RFC 9457 responses; ``requests`` reads bodies and queries; ``definitions`` holds the
definition routes.
"""
