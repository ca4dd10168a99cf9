"""The local server (``countersign serve``): one process, one origin.

:mod:`.app` composes it (``/mcp``, ``/api``, OAuth and the confirm page, with the upkeep);
:mod:`.routing` routes by path; :mod:`.loopback` guards ``/mcp`` against DNS rebinding and other
origins; :mod:`.page` serves ``web/`` with its security headers; :mod:`.run` runs it under uvicorn;
:mod:`.demo` seeds the data of ``serve --demo``.
"""
