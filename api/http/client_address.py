"""One trust boundary for client addresses: X-Forwarded-For is believed only as far as configured proxies wrote it.

The rate limit, the access log and everything else read the client from `scope["client"]`, which this layer sets
once, outermost, under any ASGI server (uvicorn's own proxy-header handling is off, so there is no second rule).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from litestar.types import ASGIApp, Receive, Scope, Send

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Networks so wide that trusting them would let any client choose its own address (and rate-limit bucket).
_EVERYONE = ("*", "0.0.0.0/0", "::/0")


class TrustError(ValueError):
    """A trusted-proxy entry that is not an address or network, or that would trust everyone."""


def trusted_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """The proxies' addresses and CIDR networks, parsed; `*` and /0 networks are refused."""
    networks = []
    for entry in entries:
        if entry in _EVERYONE:
            raise TrustError(
                f"{entry!r} would trust every client to name its own address; list the proxies' addresses or networks"
            )
        try:
            network = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise TrustError(f"{entry!r} is not an IP address or CIDR network") from None
        if network.prefixlen == 0:
            raise TrustError(f"{entry!r} would trust every client to name its own address")
        networks.append(network)
    return tuple(networks)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("["):  # [v6]:port
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:  # v4:port
        text = text.partition(":")[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


class TrustedProxies:
    """Answers who the client is, given the peer address and the X-Forwarded-For entries."""

    def __init__(self, networks: tuple[Network, ...]) -> None:
        self._networks = networks

    def trusts(self, host: str) -> bool:
        address = _address(host)
        return address is not None and any(address in network for network in self._networks)

    def client(self, peer: str, forwarded_for: list[str]) -> str:
        """The rightmost address not written by a trusted proxy: every entry left of it is the client's own word."""
        if not self.trusts(peer):
            return peer
        entries = [entry.strip() for value in forwarded_for for entry in value.split(",") if entry.strip()]
        for entry in reversed(entries):
            if not self.trusts(entry):
                address = _address(entry)
                # A malformed entry is where the trusted chain ends; it is not an address to key anything on.
                return str(address) if address is not None else peer
        # Every hop is a trusted proxy: the leftmost is as far as the chain goes.
        leftmost = _address(entries[0]) if entries else None
        return str(leftmost) if leftmost is not None else peer


class ClientAddress:
    """Sets `scope["client"]` (and the scheme) from trusted proxies' headers; outermost, before anything logs."""

    def __init__(self, app: ASGIApp, proxies: TrustedProxies) -> None:
        self._app = app
        self._proxies = proxies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (peer := scope.get("client")) and self._proxies.trusts(peer[0]):
            forwarded_for = []
            proto = None
            for name, value in scope["headers"]:
                if name == b"x-forwarded-for":
                    forwarded_for.append(value.decode("latin-1"))
                elif name == b"x-forwarded-proto":
                    proto = value.decode("latin-1").split(",")[-1].strip().lower()
            if forwarded_for:
                scope["client"] = (self._proxies.client(peer[0], forwarded_for), 0)
            if proto in ("http", "https"):
                scope["scheme"] = proto
        await self._app(scope, receive, send)
