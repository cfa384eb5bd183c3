"""The client's address, behind reverse proxies we trust and no one else's.

Behind a reverse proxy every request comes from the proxy's address, so the log-in lockout
(django-axes) and the throttles would lock out or slow down everyone at once. The proxy puts
the real client into `X-Forwarded-For`, but any client can send that header too: it is believed
only when the connection itself comes from a proxy listed in `TRUSTED_PROXIES` (CIDRs), and then
only as far as the chain of trusted proxies goes — the rightmost address that is *not* a trusted
proxy is the client. With no `TRUSTED_PROXIES` (the default) the header is ignored entirely.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import Any

from django.conf import settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def _networks(spec: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(item, strict=False) for item in spec)


def parse_networks(items: list[str] | tuple[str, ...]) -> tuple[Network, ...]:
    """`TRUSTED_PROXIES` as networks; a bad entry raises ValueError (at start-up, in settings)."""
    return _networks(tuple(items))


def _trusted(address: str, networks: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def client_ip(request: Any) -> str:
    """The address of the client that made `request` (django-axes and the throttles use it)."""
    remote = (request.META.get("REMOTE_ADDR") or "").strip()
    networks = parse_networks(tuple(getattr(settings, "TRUSTED_PROXIES", ())))
    if not networks or not _trusted(remote, networks):
        return remote
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, networks):
            try:
                return str(ipaddress.ip_address(hop))
            except ValueError:
                return remote  # garbage from the client's side of the chain: use what we know
    return hops[0] if hops else remote
