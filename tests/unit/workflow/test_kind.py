"""The workflow type as the registry sees it (``parley.workflow.kind``): a saved document shows its
compiled ``state_machine`` and ``schedule``, names the functions it calls, and what this version does not
run yet is refused with its line, column and pointer."""

from __future__ import annotations

import pytest

from parley.errors import Problem
from parley.workflow.engine import ENTRY_FUNCTION
from parley.workflow.kind import check

SOURCE = """\
document: { dsl: '1.0.3', namespace: a, name: b, version: '1.0.0' }
do:
  - ask:
      call: run_definition
      with: { type: interaction, name: approve-campaign-brief }
  - again:
      call: run_definition
      with: { type: interaction, name: approve-campaign-brief }
  - review:
      call: run_definition
      with: { type: reasoning, name: review-brief }
"""


def test_a_saved_workflow_shows_its_state_machine_and_uses_what_it_calls() -> None:
    checked = check(SOURCE)
    assert checked.media_type == "application/yaml"
    assert checked.shows is not None
    machine = checked.shows["state_machine"]
    assert machine["QueryLanguage"] == "JSONata"
    assert ENTRY_FUNCTION in str(machine)  # the entry's ARN is a placeholder until the machine is made
    assert checked.shows["schedule"] is None
    assert checked.uses == ("interaction/approve-campaign-brief", "reasoning/review-brief")


def test_what_this_version_does_not_run_is_refused_where_it_is_written() -> None:
    source = SOURCE.replace("do:\n", "timeout: { after: '${ \"PT1H\" }' }\ndo:\n", 1)
    with pytest.raises(Problem) as refused:
        check(source)
    assert [entry.detail for entry in refused.value.errors] == [
        "Line 2, column 1, /timeout: "
        "This version of Parley does not run the document's timeout written as an expression yet"
    ]
