"""Executions that hold waiting runs: the Step Functions adapter of ``parley.runs.ports.Waits``
(``stepfunctions``). Locally the same adapter runs on moto's executor (``parley.local.workflows``)."""
