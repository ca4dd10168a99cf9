"""An upstream MCP server as the workspace stores it: one document of kind ``upstream`` per server,
named by its prefix. Written only through held requests (:mod:`.manage`), read by every call.

The document holds where the server is (an https URL, or locally a command), its sealed
credential, and the approved snapshot of its tools: each tool's definition as it was listed when
a person approved it, the sha256 of that definition (the pin), the class it runs under, and its
witness reads. A tool whose live definition no longer matches its pin does not run.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ...core.addresses import refused_address
from ...toolkit import ActionContext, ActionError

KIND = "upstream"
SEPARATOR = "__"
NAME_RULE = re.compile(r"^[a-z][a-z0-9]{0,15}$")
CLASSES = ("read", "held", "client")
REMOVED = "removed"


def tool_digest(definition: dict[str, Any]) -> str:
    """The pin of one tool definition (its JSON as the upstream lists it, keys sorted)."""
    return hashlib.sha256(json.dumps(definition, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def class_from_annotations(definition: dict[str, Any]) -> str:
    """``read`` for a tool that says it only reads; ``client`` for an idempotent tool that says it
    destroys nothing; ``held`` for everything else (a destructive tool, or one that says nothing)."""
    hints = definition.get("annotations") or {}
    if hints.get("readOnlyHint") is True:
        return "read"
    if hints.get("destructiveHint") is False and hints.get("idempotentHint") is True:
        return "client"
    return "held"


@dataclass(frozen=True)
class Witness:
    """A read made before the write, whose answer is part of what the person approves."""

    tool: str
    arguments: dict[str, str]  # read's argument -> the write's argument it is taken from

    def to_dict(self) -> dict:
        return {"tool": self.tool, "arguments": dict(self.arguments)}


@dataclass(frozen=True)
class Pin:
    definition: dict[str, Any]
    digest: str
    cls: str  # read | held | client (the owner's choice, else from the annotations)
    witness: tuple[Witness, ...] = ()

    @property
    def title(self) -> str:
        hints = self.definition.get("annotations") or {}
        return str(self.definition.get("title") or hints.get("title") or self.definition["name"])


@dataclass(frozen=True)
class Upstream:
    workspace_id: str
    name: str
    url: str | None
    command: tuple[str, ...]
    sealed: str | None
    tools: dict[str, Pin] = field(default_factory=dict)
    version: int = 0

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def where(self) -> str:
        return self.url or " ".join(self.command)

    def to_data(self) -> dict[str, Any]:
        return {
            "name": self.name, "url": self.url, "command": list(self.command), "sealed": self.sealed,
            "tools": {n: {"definition": p.definition, "digest": p.digest, "class": p.cls,
                          "witness": [w.to_dict() for w in p.witness]} for n, p in self.tools.items()},
        }

    @classmethod
    def from_data(cls, workspace_id: str, data: dict[str, Any], version: int) -> Upstream:
        tools = {n: Pin(t["definition"], t["digest"], t["class"],
                        tuple(Witness(w["tool"], dict(w["arguments"])) for w in t.get("witness", [])))
                 for n, t in data.get("tools", {}).items()}
        return cls(workspace_id, data["name"], data.get("url"), tuple(data.get("command") or ()), data.get("sealed"),
                   tools, version)


def removed(name: str) -> dict[str, Any]:
    """What a removed upstream's document becomes: kept, so that its version goes on counting and
    adding it again is a request of its own (not one answered with the card of its first add)."""
    return {"name": name, REMOVED: True}


def stored(ctx: ActionContext, name: str) -> tuple[Upstream | None, int]:
    """``name``'s upstream (None if there is none, or it was removed), and the version of its
    document, live or removed (0: there never was one), in one read."""
    doc = ctx.store.get_doc(ctx.workspace_id, KIND, name)
    if doc is None:
        return None, 0
    live = None if doc.data.get(REMOVED) else Upstream.from_data(ctx.workspace_id, doc.data, doc.version)
    return live, doc.version


def load(ctx: ActionContext, name: str) -> Upstream | None:
    return stored(ctx, name)[0]


def load_all(ctx: ActionContext) -> list[Upstream]:
    docs = ctx.store.list_docs(ctx.workspace_id, KIND)
    return [Upstream.from_data(ctx.workspace_id, d.data, d.version) for d in docs if not d.data.get(REMOVED)]


def split_tool(name: str) -> tuple[str, str] | None:
    """``fs__write_file`` -> (``fs``, ``write_file``); None for a name that is no upstream tool's."""
    prefix, sep, tool = name.partition(SEPARATOR)
    if not sep or not tool or not NAME_RULE.fullmatch(prefix):
        return None
    return prefix, tool


# -- where an upstream may be --------------------------------------------------------------------------


def check_url(url: str, *, allow_private: bool, what: str = "an upstream",
              example: str = "https://mcp.example.com/mcp",
              credentials: str = "put credentials in --header, not in the URL") -> str:
    """An upstream URL is https on a public address. With ``allow_private`` (the explicit setting
    ``COUNTERSIGN_UPSTREAM_PRIVATE``) it may also be http and private or loopback. Webhook
    endpoints are held to the same rule (``what``, ``example`` and ``credentials`` word its refusals)."""
    parts = urlsplit(url)  # (which drops tabs and line breaks: they are refused here first)
    if not url.isprintable() or any(c.isspace() for c in url) or parts.scheme not in ("https", "http") \
            or not parts.hostname:
        raise ActionError(f"url: {what} is an http(s) URL such as {example}.", field="url")
    if parts.username or parts.password:
        raise ActionError(f"url: {credentials}.", field="url")
    if allow_private:
        return url
    if parts.scheme != "https":
        raise ActionError(f"url: {what} must be https (plain http only with COUNTERSIGN_UPSTREAM_PRIVATE).",
                          field="url")
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 443, proto=socket.IPPROTO_TCP)
    except OSError:
        raise ActionError(f"url: the host {parts.hostname} does not resolve.", field="url") from None
    if any(refused_address(str(info[4][0])) for info in infos):
        raise ActionError("url: the host resolves to a private or reserved address; set "
                          "COUNTERSIGN_UPSTREAM_PRIVATE=1 to allow one.", field="url")
    return url
