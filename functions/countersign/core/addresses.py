"""Which network addresses a fetch made on someone else's say must never reach: a client's
metadata document (OAuth) and an upstream MCP server (the gateway) are on the internet, not on
this machine, its network or the cloud's metadata service."""

from __future__ import annotations

import ipaddress


def refused_address(address: str) -> bool:
    """Whether an address is one a fetch must never reach from the internet side."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        # an IPv4 address carried inside (mapped, 6to4, Teredo's client) is judged as itself
        inner = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if inner is not None and refused_address(str(inner)):
            return True
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
    return (not ip.is_global or ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast
            or ip.is_reserved or ip.is_unspecified)
