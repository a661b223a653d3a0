"""``parley`` as a client of a Parley server (issue 29, item 1): save, run, list the inbox, answer,
list and show runs, follow a run's events and send it events, over the HTTP API of ``http-api.md``;
and (issue 32) list, add, show, approve, authorize and remove the org's connections (``connections``).

It is a plain HTTP client (``httpx``) and imports nothing of the runtime, so it works against the local
server and a deployed stage alike. ``parser`` declares the commands (``argparse`` only, so that
``parley --help`` stays quick); ``commands`` does them through ``connection``, and ``printing`` shows
what came back: tables and timelines for people, JSON for scripts, problems with their line and
pointer, and the exit codes of ``exits``.
"""
