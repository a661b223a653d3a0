"""``parley answer`` of an agent run's requests (``agent-runs.md``): a choice asked by its labels, a form
question by question, against ``parley serve`` whose gateway ``demo``
is the demo model (which asks what its message writes, ``request_input {…}``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tool_serving import serving_with, writer_and_viewer

from parley.demo.model import DemoModelOptions, running

pytestmark = pytest.mark.http

Cli = Any
PLAYBOOKS = [f"cli-{n}" for n in range(60)]

HEAD = "---\ndescription: {}\nmodel: demo/echo\nask: {{ to: maria, expires: P2D }}\n---\n"
CHOICE = {
    "kind": "choice",
    "prompt": "Where does it launch?",
    "options": [{"id": "email", "label": "The newsletter", "recommended": True},
                {"id": "chat", "label": "The team chat"}],
    "allow_custom": True,
}  # fmt: skip
FORM_QUESTION = {
    "kind": "form",
    "prompt": "The launch",
    "questions": [
        {"id": "date", "kind": "text", "prompt": "Which day?"},
        {"id": "channels", "kind": "choice", "prompt": "Where?", "multiple": True,
         "options": [{"id": "email", "label": "Email"}, {"id": "chat", "label": "Chat"}]},
        {"id": "notes", "kind": "text", "prompt": "Anything else?", "required": False},
    ],
}  # fmt: skip
#: The demo model calls the tool its message names, with the JSON written after it.
CHOOSE = HEAD.format("Asks for the launch's channel") + f"Ask with request_input {json.dumps(CHOICE)}\n"
FORM = HEAD.format("Asks for the launch's day") + f"Ask with request_input {json.dumps(FORM_QUESTION)}\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The module's server: the playbooks of ``conftest.py`` and the demo model as the gateway demo."""
    tmp = tmp_path_factory.mktemp("cli-agent")
    with running(DemoModelOptions(port=0)) as model:
        models = ["models:", "  gateways:", f"    - {{ name: demo, base_url: {model.openai_base_url}, "
                  "structured_outputs: true }"]  # fmt: skip
        with serving_with(tmp, writer_and_viewer(PLAYBOOKS, *models)) as url:
            yield url


def saved_and_asked(parley: Cli, tmp_path: Path, name: str, source: str) -> str:
    document = tmp_path / f"{name}.md"
    document.write_text(source)
    assert parley("save", str(document), "-q").code == 0
    started = parley("run", name, "--json")
    assert started.code == 0, started.err
    run_id: str = json.loads(started.out)["run_id"]
    assert parley("inbox", "-q").out.split() == [run_id]
    return run_id


def test_a_choice_is_asked_by_its_labels_and_the_run_goes_on(parley: Cli, tmp_path: Path) -> None:
    run_id = saved_and_asked(parley, tmp_path, "choose-channel", CHOOSE)
    answered = parley("answer", run_id, "-i", stdin="3\n2\n\n")
    assert answered.code == 0, answered.err
    assert "  1) The newsletter (recommended)\n  2) The team chat\n" in answered.err
    assert "Type a number from 1 to 2." in answered.err
    assert f'Answered run {run_id} as dev: {{"selected": ["chat"]}}' in answered.out
    shown = parley("show", run_id).out
    assert "input_requested         choice: Where does it launch?" in shown
    assert 'request_answered        by dev: {"selected": ["chat"]}' in shown


def test_a_form_is_asked_question_by_question(parley: Cli, tmp_path: Path) -> None:
    run_id = saved_and_asked(parley, tmp_path, "launch-form", FORM)
    answered = parley("answer", run_id, "-i", "--json", stdin="2026-05-04\n2,1\n\n\n")
    assert answered.code == 0, answered.err
    fact = json.loads(answered.out)
    assert fact["answer"] == {"answers": {"date": "2026-05-04", "channels": {"selected": ["chat", "email"]}}}
    assert "Anything else? (optional)" in answered.err
