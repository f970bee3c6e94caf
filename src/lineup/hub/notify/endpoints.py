"""Which push endpoints the hub will post to. The endpoint is chosen by whoever subscribes, so
without a check the hub would post (and wait, and report back) wherever a signed-in person
points it: its own admin ports, the cloud's metadata service, the office network.

Two rules, both pure:

* the endpoint is ``https`` on a browser vendor's push service or a host the operator listed
  (``LINEUP_PUSH_HOSTS``) — checked when a device subscribes and again before every send;
* the address a host name resolves to is public (:func:`public_address`) — checked by the
  HTTP client's resolver at connect time (``push.GuardedResolver``), so a name that resolves
  to a public address when checked and a private one when used gets nowhere. Hosts the
  operator listed are exempt: a self-hosted push service may well live on a private network.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

KNOWN_PUSH_SERVICES: tuple[str, ...] = (
    "fcm.googleapis.com",  # Chrome, Edge on Android, most Chromium browsers
    "*.push.services.mozilla.com",  # Firefox
    "*.push.apple.com",  # Safari
    "*.notify.windows.com",  # Edge on Windows (WNS)
)

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class EndpointRefused(ValueError):
    """Why an endpoint is refused, in words for the person who subscribed."""


def _normal_host(host: str) -> str:
    return host.strip().lower().removeprefix("[").removesuffix("]")


def host_matches(host: str, pattern: str) -> bool:
    """``pattern`` is a host name or address, or ``*.domain`` for any name under ``domain``."""
    host, pattern = _normal_host(host), _normal_host(pattern)
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
    return host == pattern


def public_address(address: str) -> bool:
    """True for an address on the public internet: not private, loopback, link-local,
    shared (CGNAT), unspecified, reserved or multicast — also when an IPv4 address hides in
    an IPv6 one (mapped, 6to4, Teredo, NAT64)."""
    try:
        ip = ipaddress.ip_address(_normal_host(address).split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        embedded: list[ipaddress.IPv4Address] = []
        if ip.ipv4_mapped is not None:
            embedded.append(ip.ipv4_mapped)
        if ip.sixtofour is not None:
            embedded.append(ip.sixtofour)
        if ip.teredo is not None:
            embedded += list(ip.teredo)
        if ip in _NAT64:
            embedded.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        if any(not public_address(str(v4)) for v4 in embedded):
            return False
    return bool(ip.is_global) and not ip.is_multicast


@dataclass(frozen=True, slots=True)
class PushPolicy:
    operator_hosts: tuple[str, ...] = ()
    allow_http: bool = False
    """``http`` only to operator-listed hosts (a local push service in tests and benches)."""

    def operator_listed(self, host: str) -> bool:
        return any(host_matches(host, pattern) for pattern in self.operator_hosts)

    def check(self, endpoint: str) -> str:
        """The endpoint's host if the hub may post to it; else :class:`EndpointRefused`."""
        try:
            url = urlsplit(endpoint)
            port = url.port
        except ValueError:
            raise EndpointRefused("A push endpoint must be a URL.") from None
        host = url.hostname or ""
        if not host:
            raise EndpointRefused("A push endpoint needs a host.")
        if url.username is not None or url.password is not None:
            raise EndpointRefused("A push endpoint must not carry a user name or password.")
        listed = self.operator_listed(host)
        if url.scheme != "https" and not (url.scheme == "http" and self.allow_http and listed):
            raise EndpointRefused("A push endpoint must be an https URL.")
        if listed:
            return host
        known = any(host_matches(host, pattern) for pattern in KNOWN_PUSH_SERVICES)
        if not known or port not in (None, 443):
            raise EndpointRefused(
                "A push endpoint must be a browser's push service (Google, Mozilla, Apple or "
                "Microsoft) or one this hub's operator allowed in LINEUP_PUSH_HOSTS."
            )
        return host
