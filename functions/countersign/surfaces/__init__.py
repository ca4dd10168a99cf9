"""Surfaces: MCP, the confirmation API, and the ASGI/Lambda wiring around them."""
