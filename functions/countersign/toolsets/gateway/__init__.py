"""The ``gateway`` toolset: upstream MCP servers behind the gate (docs/gateway.md).

Its actions are the upstream changes (filed by the CLI or the Settings page) and, resolved by
name, every approved upstream tool of the calling workspace (``server__tool``). It has no tools of
its own for the agent: the MCP surface lists each workspace's upstream tools
(:mod:`countersign.surfaces.mcp.gateway`).
"""

from __future__ import annotations

from typing import Any

from ...toolkit import Toolset
from .action import action_for
from .env import GatewayEnv
from .manage import MANAGE
from .seal import Sealer


def bound(keys: list[bytes], settings: Any) -> Toolset:
    env = GatewayEnv(Sealer(keys), settings)
    actions = [type(cls.__name__, (cls,), {"env": env})() for cls in MANAGE]
    toolset = Toolset(name="gateway", actions=actions, resolve=lambda name: action_for(name, env))
    return toolset


TOOLSET = Toolset(name="gateway", bind=bound)
