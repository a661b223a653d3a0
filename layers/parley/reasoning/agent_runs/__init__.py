"""Agent runs: a reasoning run that calls tools over several steps (``reasoning-format.md``, "Tools"), and
may ask a person (``agent-runs.md``: questions, approvals, tools that ask, progress). Issue 30 made the
tool loop and the asking one package, the loop depending on the asking through an interface.

The loop and what it offers:

- ``loop`` — the steps (``ToolLoop``): each model call with the whole conversation, each call checked,
  recorded, sent and answered, until the model answers without a tool;
- ``before`` — which tools a run has ("Before the model is called"), as ``offered`` tools;
- ``offered`` — a tool offered to the model, and the rule of its approval (plain data);
- ``naming`` (the names the model sees), ``offering`` (what a tool's offer holds, and its schema's
  warnings), ``limits`` ("Limits on calls", and the failures and 429s of "Limits on time and
  failures"), ``results`` (what the model reads of a result, and the cut when it would not fit),
  ``budget`` (the run's input tokens, and which step is the last), ``last_step`` (the calls so far as
  text) and ``endings`` ("When a tool-calling run cannot finish"): pure rules, no I/O;
- ``meta`` — the keys of a call's and a result's ``_meta``.

The asking (``agent-runs.md``):

- ``asking`` — the interface between the loop and the asking (``Asking``, ``AskingLoop``);
- ``asking_a_person`` — the ``Asking`` of a run with ``ask`` ("Turning it on: ``ask``");
- ``questions`` ("Questions: ``request_input``"), ``approvals`` ("Approvals": everything about the
  approval of a frozen call), ``tools_that_ask`` ("A tool that asks"), ``progress`` ("Progress:
  ``report_progress``", and Parley's own activity);
- ``requests`` ("A run that waits": a request opened, the run parked) and ``state`` (the work kept
  while it waits).

Import the modules themselves; this package's ``__init__`` imports nothing.
"""
