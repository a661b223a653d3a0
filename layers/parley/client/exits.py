"""The exit codes of the client commands, which scripts test (issue 29: "exit codes that scripts can
test"); ``parley --help`` and ``docs/cli.md`` list them."""

from __future__ import annotations

from typing import Final

OK: Final = 0
#: The server refused the request: it answered with a problem document (4xx, or 5xx).
PROBLEM: Final = 1
#: The command line cannot be used: an unknown option, a file that cannot be read, JSON that does not
#: parse, a name that more than one type holds. Nothing was sent. (argparse's own code for usage.)
USAGE: Final = 2
#: No Parley server answered at the URL: refused, timed out, or answered with something not Parley's.
UNREACHABLE: Final = 3
#: A run ended ``rejected`` or ``failed``: ``run`` (a run rejected at once, or with ``--wait``) and
#: ``events --follow``.
RUN_ENDED_BADLY: Final = 4
#: ``--wait`` or ``--follow`` with ``--timeout``: the run was still going when the time was up.
STILL_RUNNING: Final = 5
#: Interrupted (Ctrl-C); a run being followed goes on.
INTERRUPTED: Final = 130

DESCRIPTION: Final = """\
exit codes:
  0    done
  1    the server refused the request (its problem is printed: status, reason, line and pointer)
  2    the command line cannot be used (options, files, JSON); nothing was sent
  3    no Parley server answers at the URL
  4    the run ended rejected or failed (run, run --wait, events --follow)
  5    the run was still going when --timeout passed (run --wait, events --follow)
  130  interrupted (Ctrl-C); a run goes on without you"""


class CommandError(Exception):
    """A command that cannot go on, with the exit code to end with and a message for people."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
