"""The MCP surface (``/mcp``): the server and its tools, the transport in its two shapes, and the
bearer-token check in front of them.

Imports run one way: :mod:`.server` composes :mod:`.actions` (the toolsets' actions and reads),
:mod:`.confirmations` (the four confirmation tools) and :mod:`.gateway` (upstream tools); those
share :mod:`.common` (making a tool, who calls it, its errors) and :mod:`.elicitation` (asking in the
client), and none imports :mod:`.server` back. :mod:`.transport` serves any ``MCPServer`` behind
:mod:`.auth`.
"""
