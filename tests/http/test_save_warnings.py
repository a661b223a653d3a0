"""Mistakes a save warns of (issue 18, points 3 and 5), end to end through a real ``parley serve``: each
document is saved ``201`` with the warning, its line and its pointer, in the definition's ``warnings``;
a retired name's ``409`` does not say to update it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp_servers import unreachable_url
from provider_settings import PROVIDER_SETTINGS
from tool_serving import BASE, WRITER, serving_with

pytestmark = pytest.mark.http

# The playbook acme/campaigns has the server chat; mail serves another playbook; no server is graph.
OPERATOR = f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
tool_servers:
  - {{ name: chat, url: {unreachable_url()}, orgs: [acme], playbooks: [campaigns] }}
  - {{ name: mail, url: {unreachable_url()}, orgs: [acme], playbooks: [other] }}
"""

MISSPELT_FIELD = """\
---
description: Asks the campaign owner to approve a reviewed brief
to: '{{ input.owner }}'
expires: P2D
input:
  schema:
    type: object
    required: [owner, review]
    properties:
      owner: { type: string }
      review: { type: string }
---
The review of your campaign brief is ready:

{{ input.reveiw }}
"""
MISSPELT_KEYWORD = """\
---
to: '{{ input.owner }}'
expires: P2D
input:
  schema:
    type: object
    requried: [owner]
    properties:
      owner: { type: string }
---
Hello {{ input.owner }}
"""
THROUGH_MAIL = """\
---
to: '{{ input.owner }}'
expires: P2D
deliver:
  server: mail
  tool: post_message
  with: { channel: '{{ to }}', text: '{{ message }}' }
input:
  schema: { type: object, properties: { owner: { type: string } } }
---
Hello {{ input.owner }}
"""
REASONING = """\
---
model: anthropic/claude-sonnet-4-5
tools: [graph/search]
input:
  schema:
    type: object
    required: [brief]
    properties:
      brief: { type: string }
---
Review this brief: {{ input.breif }}
"""


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    tmp: Path = tmp_path_factory.mktemp("save-warnings")
    operator = OPERATOR
    with pytest.MonkeyPatch.context() as env:
        for name in PROVIDER_SETTINGS:  # no provider configured, whatever this machine has
            env.delenv(name, raising=False)
        with (
            serving_with(tmp, operator) as url,
            httpx.Client(base_url=url + BASE, headers=WRITER, timeout=30) as http,
        ):
            yield http


def saved(client: httpx.Client, definition_type: str, name: str, source: str) -> list[str]:
    """Save ``source`` (``201``) and the warnings it was saved with, as get_definition shows them too."""
    created = client.post(f"/definitions/{definition_type}", json={"name": name, "source": source})
    assert created.status_code == 201, created.text
    warnings: list[str] = created.json()["warnings"]
    read = client.get(f"/definitions/{definition_type}/{name}")
    assert read.status_code == 200 and read.json()["warnings"] == warnings
    return warnings


def test_a_misspelt_input_field_is_saved_with_a_warning(client: httpx.Client) -> None:
    assert saved(client, "interaction", "misspelt-field", MISSPELT_FIELD) == [
        "Line 15: the message reads 'input.reveiw', which the input schema does not list; did you mean "
        "'input.review'?"
    ]


def test_a_misspelt_schema_keyword_is_saved_with_a_warning(client: httpx.Client) -> None:
    assert saved(client, "interaction", "misspelt-keyword", MISSPELT_KEYWORD) == [
        "Line 7, /input/schema/requried: requried is not a JSON Schema keyword, so nothing checks it; "
        "did you mean required?"
    ]


def test_a_server_of_another_playbook_is_saved_with_a_warning(client: httpx.Client) -> None:
    assert saved(client, "interaction", "through-mail", THROUGH_MAIL) == [
        "Line 5, /deliver/server: no tool server named 'mail' serves this playbook; runs will end "
        "unavailable until the operator adds it"
    ]
    through_chat = THROUGH_MAIL.replace("server: mail", "server: chat")
    updated = client.put("/definitions/interaction/through-mail", json={"source": through_chat})
    assert updated.status_code == 200, updated.text
    assert updated.json()["warnings"] == []


def test_a_reasoning_function_is_saved_with_its_warnings(client: httpx.Client) -> None:
    assert saved(client, "reasoning", "misspelt-reasoning", REASONING) == [
        "Line 2, /model: the provider 'anthropic' of the model 'anthropic/claude-sonnet-4-5' is not "
        "configured on this server; a run ends unavailable (model_not_offered, provider_not_configured) "
        "until the operator configures it. Configured providers: none. Aliases: none.",
        "Line 3, /tools/0: no tool server named 'graph' serves this playbook; runs will end unavailable "
        "until the operator adds it",
        "Line 11: the template reads 'input.breif', which the input schema does not list; did you mean "
        "'input.brief'?",
    ]


def test_a_retired_name_is_taken_without_a_word_of_updating_it(client: httpx.Client) -> None:
    source = MISSPELT_KEYWORD.replace("requried", "required")
    assert saved(client, "interaction", "retired-name", source) == []
    taken = client.post("/definitions/interaction", json={"name": "retired-name", "source": source})
    assert taken.status_code == 409
    assert taken.json()["detail"] == (
        "The name 'retired-name' is taken by an interaction definition of this playbook; names are never "
        "reused. Update it, or choose another name."
    )

    assert client.post("/definitions/interaction/retired-name/retire").status_code == 200
    again = client.post("/definitions/interaction", json={"name": "retired-name", "source": source})

    assert again.status_code == 409
    assert again.json()["detail"] == (
        "The name 'retired-name' belongs to a retired interaction definition of this playbook; names are "
        "never reused, also after a definition is retired, and a retired definition cannot be updated. "
        "Choose another name."
    )
