"""Parley's CDK app as small constructs: ``data`` (the table), ``compute`` (the layer and every function of
``parley.infrastructure.functions.FUNCTIONS``), ``api`` (the REST API), composed by ``stack`` and built for a
stage by ``application``. The table keys and the function list come from ``parley.infrastructure``, the
same definitions the local runtime reads.
"""
