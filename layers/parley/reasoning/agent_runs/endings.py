"""How a reasoning run that called tools ends when it cannot finish (``reasoning-format.md``, "When a
tool-calling run cannot finish", "Limits on time and failures").

"A tool may change something outside the playbook. So a run that called tools and then could not
finish ends in one of two ways, depending on what it called":

==================================================  =================================  ======
It called                                           Ending                             Status
==================================================  =================================  ======
Only tools their servers mark read-only             ``unavailable``, kind              503
                                                    ``tools_unfinished``
Any tool its server does not mark read-only         ``conflict``, kind                 409
                                                    ``effect_unknown``
==================================================  =================================  ======

"Both endings name, in words, the tools the run called. They keep the ``because`` field of the bound or
failure that stopped the run." "Before its first call, the run ends as plain ``unavailable``."

As for a function with ``call`` (:mod:`parley.interaction.call`), the problem's ``reason`` is the kind
itself (``tools_unfinished``, 503; ``effect_unknown``, 409: each answered under its own problem type),
and the run's rejection records it as ``unavailable`` or ``conflict``
(:data:`parley.runs.model.OWN_PROBLEM_KINDS`).

The ``because`` words of "Limits on time and failures":

======================  ===================================================================
``because``             When
======================  ===================================================================
``server_failed``       The run's fifth server failure
``model_unavailable``   A model call did not answer within its limit
``run_bound``           The whole run did not finish within its bound
``no_answer``           The model called a tool in the last step, made without tools
======================  ===================================================================

A provider's signal that the request is too long ends the run as ``conflict``, kind ``unworkable``,
whatever the run called: :func:`request_too_long`. A run that ended while it worked (cancelled, or ended by
its backstop) ends its work with :class:`RunWorkEnded`, writing nothing more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Literal

from parley.errors import ParleyError, Problem
from parley.runs.model import CalledTool


class RunWorkEnded(ParleyError):
    """The run ended while it worked (cancelled, or ended by its backstop): nothing more is written."""


Because = Literal["server_failed", "model_unavailable", "run_bound", "no_answer"]

#: What each bound or failure says, as the start of a problem's detail.
BECAUSE_WORDS: Final[Mapping[Because, str]] = {
    "server_failed": "The run's tool servers failed 5 times.",
    "model_unavailable": "The model did not answer within its call's limit.",
    "run_bound": "The run did not finish within its bound (10 minutes, or its model call's limit when that "
    "is longer).",
    "no_answer": "The model called a tool in its last step, which is made without tools, instead of "
    "answering.",
}


def because_words(because: Because) -> str:
    """The words of a ``because``, for a detail that has no words of its own."""
    return BECAUSE_WORDS[because]


def cannot_finish(called: Sequence[tuple[str, str, bool] | CalledTool], because: str, detail: str) -> Problem:
    """The ending of a run that called ``called`` (each ``(server, tool, read_only)``, in the order of
    the calls, repeats allowed) and was stopped by ``because``; ``detail`` says what stopped it."""
    tools = [item if isinstance(item, CalledTool) else CalledTool(*item) for item in called]
    detail = detail.rstrip()
    if not tools:
        return Problem("unavailable", f"{detail} No tool was called; try again.", because=because)
    named = _listed([f"{tool.server}/{tool.tool}" for tool in tools])
    changing = _listed([f"{tool.server}/{tool.tool}" for tool in tools if not tool.read_only])
    if not changing:
        marked = "its server marks it" if _count(tools) == 1 else "their servers mark them"
        return Problem(
            "tools_unfinished",
            f"{detail} The run called {named} and did not finish; {marked} read-only, so a "
            "new run under a new run id may do the work again.",
            kind="tools_unfinished",
            because=because,
        )
    verb = "is" if _count([tool for tool in tools if not tool.read_only]) == 1 else "are"
    return Problem(
        "effect_unknown",
        f"{detail} The run called {named} and did not finish; {changing} {verb} not marked read-only, so "
        "the run may have changed something: check the run's history and the external systems before "
        "running the function again under a new run id.",
        kind="effect_unknown",
        because=because,
    )


def request_too_long(signal: str, tool_bytes: int, last_input_tokens: int | None) -> Problem:
    """ "A provider may signal that the request is too long: HTTP 413, or the error code or type
    ``context_length_exceeded`` or ``request_too_large``. The run then ends as ``conflict`` with the kind
    ``unworkable``. Its detail names the signal, how many bytes the tools returned, and the input tokens
    the provider counted for the last step." ``signal`` is one of those, such as ``HTTP 413``."""
    counted = (
        f"the provider counted {last_input_tokens:,} input tokens for the last step"
        if last_input_tokens is not None
        else "the provider did not count the last step's input tokens"
    )
    return Problem(
        "conflict",
        f"The provider signalled that the request is too long ({signal}). The tools returned "
        f"{tool_bytes:,} bytes and {counted}. Ask the tools for less, such as one page of their data.",
        kind="unworkable",
    )


def _count(tools: Sequence[CalledTool]) -> int:
    return len({(tool.server, tool.tool) for tool in tools})


def _listed(names: Sequence[str]) -> str:
    """Each name once, in order: ``a``, ``a and b``, ``a, b and c``."""
    distinct = list(dict.fromkeys(names))
    if len(distinct) <= 1:
        return "".join(distinct)
    return f"{', '.join(distinct[:-1])} and {distinct[-1]}"
