"""The confirm API: the JSON endpoints under ``/api`` that the confirm page calls (SPEC §10).

:func:`countersign.surfaces.api.app.create_api` builds the FastAPI app; the local server mounts
it at ``/api`` and the ``api`` Lambda wraps it in Mangum. Nothing here imports ``mcp``: the
Lambda that serves this API must start without the MCP SDK (shared/notes/aws.md §11).
"""
