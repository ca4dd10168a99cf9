"""The gate: every held write goes through :func:`countersign.gate.ask.ask`.

Toolsets import from :mod:`countersign.gate.actions` (the public action API) only.
"""
