"""Who is who: workspaces, members and connections (:mod:`.accounts`, :mod:`.members`), sign-in
links and the confirm page's sessions (:mod:`.sessions`), the caller of an MCP request
(:mod:`.principal`), OAuth for agents (:mod:`.oauth`) and passkeys (:mod:`.passkeys`).

Identity stands below the gate: it imports the store, core, settings and logs, never the gate, the
toolkit, a toolset, a surface or the CLI (tests/unit/test_toolkit_layers.py reads it from the
source). What it needs of the gate's desk is :class:`.desk.Desk`. The passkey ceremonies import
py_webauthn only inside the calls that make one, and nothing on the MCP function's path imports
:mod:`.passkeys` (docs/passkeys.md).
"""
