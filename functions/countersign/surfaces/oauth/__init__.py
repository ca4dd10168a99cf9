"""The OAuth authorization server on the public origin, beside ``/mcp`` (docs/oauth.md): the HTTP
endpoints (:mod:`.endpoints`) and the MCP SDK provider behind them (:mod:`.provider`)."""
