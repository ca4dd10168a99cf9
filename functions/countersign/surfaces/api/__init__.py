"""The confirm API: the JSON endpoints under ``/api`` that the confirm page calls (docs/security.md).

:func:`countersign.surfaces.api.app.create_api` builds the FastAPI app; the local server mounts
it at ``/api`` and the ``api`` Lambda wraps it in Mangum. Nothing here imports ``mcp``: the
Lambda that serves this API must start without the MCP SDK, whose import alone takes well over
a second of a cold start.
"""
