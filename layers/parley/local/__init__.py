"""The local runtime behind ``parley serve`` (``http-api.md``, "Local server"): the same handlers, AWS
emulated in process (``aws``), API Gateway events made from HTTP (``events``), the manual clock's
routes (``clock_routes``) and the HTTP front (``server``).

Offers: :func:`serve` and its :class:`ServeOptions`, and :class:`LocalServer` (a server running in
this process, as tests and the demo use it).

The face is lazy (PEP 562, ``parley.faces``): each name's module is imported on the name's first use, so
importing one module of the package loads no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.faces import lazy_face

if TYPE_CHECKING:
    from parley.local.server import LocalServer, ServeOptions, serve

__all__ = [
    "LocalServer",
    "ServeOptions",
    "serve",
]

if not TYPE_CHECKING:  # type checkers read the names above; a lookup of another is an error
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "server": ("LocalServer", "ServeOptions", "serve"),
        },
    )
