"""Lambda entry points. Each module builds what it needs once, at import (one cold start), and
imports only its own dependencies: the ``api`` function never imports the MCP SDK, and the
``notifier`` (the table's stream) and ``sweeper`` (every minute) import neither the SDK nor a web
framework."""
