"""Parley's reference, as Markdown pages a person or an agent reads.

The six pages (``interaction-format.md``, ``reasoning-format.md``, ``agent-runs.md``,
``output-shapes.md``, ``workflow-format.md`` and ``http-api.md``) say what Parley does: the fields of each
function and workflow document with their bounds, how a run ends, the events it records, and every
HTTP route. The MCP front door serves them as resources (``guide://interaction-format``, …); read one with
``importlib.resources.files("parley.reference").joinpath("agent-runs.md").read_text(encoding="utf-8")``.

There is one copy of the text: the files here are relative symbolic links to ``docs/reference/``, where
GitHub renders them and the README links them. Copying the package (the Lambda layer's bundling, a
wheel) copies the pages themselves.
"""
