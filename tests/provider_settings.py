"""The environment variables that configure the built-in model providers (``http-api.md``, "Model
providers"; the AWS ones are left out of a test server's environment by ``tool_serving``), for tests whose
answer depends on which providers are configured, whatever this machine's environment holds."""

from __future__ import annotations

from typing import Final

PROVIDER_SETTINGS: Final = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_RESOURCE_NAME",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_CLOUD_PROJECT",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)
