"""The local runtime behind ``parley serve`` (``http-api.md``, "Local server"): the same handlers, AWS
emulated in process (``aws``), API Gateway events made from HTTP (``events``), the manual clock's
routes (``clock_routes``) and the HTTP front (``server``)."""
