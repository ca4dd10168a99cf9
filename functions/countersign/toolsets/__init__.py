"""Reference toolsets that ship with the gate: one package per toolset, each exporting ``TOOLSET``."""
