"""Parley: a serverless runtime for functions that ask people and systems, and functions that reason.

The package is the one core shipped as the Lambda layer. Dependencies point one way:
``api`` (handlers) → ``definitions``/``documents``/``templates`` (logic) → ports (``store``) ← adapters
(DynamoDB, and the local twins in ``local``). Nothing here has side effects at import.
"""

__version__ = "0.1.0"
