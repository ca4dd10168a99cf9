"""countersign: a hosted MCP server whose writes wait for a person."""

__version__ = "0.1.0"
