"""Infrastructure written once and read by both the CDK app and the local runtime.

Offers: the one table (``TABLE``, ``TABLE_NAME_VARIABLE``), the functions and what each may do
(``FUNCTIONS``, :class:`FunctionDefinition`, :func:`function_named`), and the run state machine
(:func:`state_machine_definition`, :func:`execution_input`).

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.infrastructure.functions import FUNCTIONS, FunctionDefinition, function_named
    from parley.infrastructure.state_machine import execution_input, state_machine_definition
    from parley.infrastructure.table import TABLE, TABLE_NAME_VARIABLE

__all__ = [
    "FUNCTIONS",
    "TABLE",
    "TABLE_NAME_VARIABLE",
    "FunctionDefinition",
    "execution_input",
    "function_named",
    "state_machine_definition",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "table": ("TABLE", "TABLE_NAME_VARIABLE"),
            "functions": ("FUNCTIONS", "FunctionDefinition", "function_named"),
            "state_machine": ("execution_input", "state_machine_definition"),
        },
    )
