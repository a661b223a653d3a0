"""The workflow type (``workflow-format.md``): Open Workflow Specification documents compiled to Step
Functions state machines in the JSONata query language.

- ``document``: checking a document when it is saved (YAML with lines, the DSL's JSON Schema, Parley's
  refusals, names that must exist, every expression parsed);
- ``expressions``: what is an expression, where, and which variables its place may read;
- ``compiler``: a checked document becomes the ASL of its state machine;
- ``engine``: what a compiled machine and Parley's workflow entry say to each other (the execution's
  input, the entry's payloads, the one error name every workflow error travels under);
- ``errors``: the workflow's errors, and a called run's ending as one of them;
- ``overview``: the Mermaid flowchart and the functions a workflow calls;
- ``kind``, ``running``: the type as the run lifecycle sees it.
"""
