"""The client's address, the one every per-client limit and log line uses.

Behind a reverse proxy every request's ``REMOTE_ADDR`` is the proxy's: a limit keyed on it
is one limit shared by every client (twenty bad tokens from anyone refused every token user;
four wrong passwords locked an account for everybody). The address the proxy saw is the
last entry it appended to ``X-Forwarded-For``; every entry left of what our own proxies
appended was written by the client and can say anything, so it is never believed.

``settings.TRUSTED_PROXIES`` (config/network.py, from the environment) says which hops are
ours, one of:

- ``0`` (the default): no proxy; ``REMOTE_ADDR`` is the client, ``X-Forwarded-For`` ignored;
- a count ``N``: exactly N proxies in front, each appending one entry; the client is the
  N-th address from the right of ``X-Forwarded-For`` + ``REMOTE_ADDR``;
- networks (``["127.0.0.1/32", "10.0.0.0/8"]``): addresses of our proxies; walking from
  ``REMOTE_ADDR`` leftwards, the first address outside them is the client's. A request that
  reached the app without passing a proxy (its ``REMOTE_ADDR`` not ours) keeps it, whatever
  its header says.

DRF's throttles, the bad-token limit (dashboards/api/auth.py), django-axes
(``AXES_CLIENT_IP_CALLABLE``) and log lines all call ``client_ip``: one rule, one setting.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from django.conf import settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def client_ip(request: Any) -> str:
    """The client's address as text ("unknown" when the server gave none). ``request``: a
    Django HttpRequest or DRF Request (both have ``META``)."""
    meta = request.META
    remote = _address(str(meta.get("REMOTE_ADDR") or ""))
    if remote is None:
        return "unknown"
    trusted = getattr(settings, "TRUSTED_PROXIES", 0)
    if not trusted:
        return str(remote)
    forwarded = str(meta.get("HTTP_X_FORWARDED_FOR") or "")
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    if isinstance(trusted, int):
        return _by_count(hops, remote, trusted)
    return _by_networks(hops, remote, _networks(tuple(trusted)))


def _by_count(hops: list[str], remote: Address, count: int) -> str:
    """The address ``count`` hops left of REMOTE_ADDR; a shorter chain (a request that did
    not pass every proxy) gives its leftmost address that parses, REMOTE_ADDR at worst."""
    found = remote
    for hop in reversed(hops[-count:] if count <= len(hops) else hops):
        address = _address(hop)
        if address is None:  # written by the client, not by a proxy: not believed
            break
        found = address
    return str(found)


def _by_networks(hops: list[str], remote: Address, networks: Sequence[Network]) -> str:
    """The first address, from REMOTE_ADDR leftwards, that is not one of our proxies."""
    found = remote
    for hop in reversed(hops):
        if not _trusted(found, networks):
            break
        address = _address(hop)
        if address is None:  # a proxy of ours forwarded a header it did not write
            break
        found = address
    return str(found)


def _trusted(address: Address, networks: Sequence[Network]) -> bool:
    return any(address.version == n.version and address in n for n in networks)


@lru_cache(maxsize=8)
def _networks(spec: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(item.strip(), strict=False) for item in spec)


def _address(text: str) -> Address | None:
    """An address as a proxy writes it: bare, or IPv6 in brackets, maybe with a port."""
    text = text.strip()
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else text[1:]
    elif text.count(":") == 1:  # IPv4 with a port
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def parse_trusted_proxies(value: str) -> int | list[str]:
    """``TRUSTED_PROXIES`` from the environment: empty or a count, or comma-separated
    addresses and networks (each checked here, so a typo stops the server at start)."""
    value = value.strip()
    if not value:
        return 0
    if value.isdigit():
        return int(value)
    items = [item.strip() for item in value.split(",") if item.strip()]
    for item in items:
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError as exc:
            raise ValueError(
                f"TRUSTED_PROXIES: {item!r} is neither a count nor an address or network "
                "(e.g. 1, or 127.0.0.1,10.0.0.0/8)"
            ) from exc
    return items
