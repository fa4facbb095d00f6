"""Which requests may drive the server: the Host and Origin checks.

A browser lets any page it shows open a WebSocket to any address and send a
"simple" cross-origin POST (`text/plain`, `no-cors`) without asking anyone;
and a page can reach a loopback server under a DNS name its author controls
(DNS rebinding), which makes the page's origin look like the server's own.
Without these checks any web page the operator visits could open
`/v1/session` (spending the operator's API keys) or save into the studio.

- Host: every request and WebSocket handshake must name this server: an IP
  address (a rebinding page's Host is its author's DNS name, never an
  address), `localhost`, or a name in `allowed_hosts` (the name the server
  was bound to, the hosts of the allowed origins).
- Origin: a WebSocket handshake, and any request but GET, HEAD and OPTIONS,
  is accepted when its Origin is the server's own (`http(s)://` + the
  request's checked Host) or one in `allowed_origins` (`wearsim serve
  --allow-origin`). Browsers always send an Origin on these; a request
  without one (the simulated glasses, curl) is accepted from a loopback
  client, or anywhere when the server requires a token (which it then checks).

A refused request gets HTTP 403 (400 for a bad Host) with a one-line JSON
error, a refused WebSocket the same response instead of the handshake.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from urllib.parse import urlsplit

log = logging.getLogger("wearsim.server")

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def normal_origin(origin: str) -> str:
    """`scheme://host[:port]` in lower case, or ValueError naming what is wrong (a user, a path, a
    query, a fragment or a port that is no number from 1 to 65535 included)."""
    text = origin.strip().rstrip("/").lower()
    problem = ValueError(f"origin {origin[:80]!r} must look like http://host:port or https://host")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise problem from None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query or parts.fragment:
        raise problem
    if "@" in parts.netloc or (port is not None and not 1 <= port <= 65535) or parts.netloc.endswith(":"):
        raise problem
    return text


def origin_host(origin: str) -> str:
    """The host of an origin as `normal_origin` gives it (`http://glasses.example:9000` ->
    `glasses.example`): the name a request to this server may then carry as its Host."""
    return str(urlsplit(normal_origin(origin)).hostname)


def host_name(host: str) -> str | None:
    """The name or address in a Host header (no port, no brackets), or None when it has none."""
    try:
        return urlsplit("//" + host).hostname
    except ValueError:
        return None


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _is_loopback(client) -> bool:
    try:
        address = ipaddress.ip_address(client[0]) if client else None
    except ValueError:
        return False
    address = getattr(address, "ipv4_mapped", None) or address  # ::ffff:127.0.0.1 is loopback too
    return address is not None and address.is_loopback


class OriginCheck:
    """ASGI middleware applying the rules above to every HTTP request and WebSocket handshake."""

    def __init__(
        self,
        app,
        *,
        allowed_origins: tuple[str, ...] = (),
        allowed_hosts: tuple[str, ...] = (),
        token_required: bool = False,
    ):
        self.app = app
        self.allowed_origins = {normal_origin(o) for o in allowed_origins}
        self.allowed_hosts = {h.lower() for h in allowed_hosts} | {"localhost"}
        self.allowed_hosts |= {origin_host(o) for o in self.allowed_origins}
        self.token_required = token_required

    def refusal(self, scope) -> tuple[int, str] | None:
        """(status, reason) when the request may not go on, else None."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        host = headers.get("host", "")
        name = host_name(host)
        if not name or not (_is_address(name) or name in self.allowed_hosts):
            return 400, (
                f"Host {host[:80]!r} is not a name of this server (use its address or localhost, "
                "or start it with --allow-origin for a page on another name)"
            )
        if scope["type"] == "http" and scope.get("method", "GET") in SAFE_METHODS:
            return None
        origin = headers.get("origin")
        if origin is None:
            if _is_loopback(scope.get("client")) or self.token_required:
                return None
            return 403, "a request without an Origin is accepted only from this machine or with a token"
        scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
        if origin.strip().rstrip("/").lower() in {f"{scheme}://{host.lower()}", *self.allowed_origins}:
            return None
        return 403, (
            f"origin {origin[:80]!r} may not use this server (its own pages may; the operator can "
            "allow another with wearsim serve --allow-origin)"
        )

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        refused = self.refusal(scope)
        if refused is None:
            return await self.app(scope, receive, send)
        status, reason = refused
        log.warning("refused %s %s: %s", scope["type"], scope.get("path", ""), reason)
        body = json.dumps({"error": reason}).encode("utf-8")
        start = {
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode("ascii"))],
        }
        if scope["type"] == "http":
            await send({"type": "http.response.start", **start})
            await send({"type": "http.response.body", "body": body})
        elif (await receive())["type"] != "websocket.connect":
            return
        elif "websocket.http.response" in (scope.get("extensions") or {}):
            await send({"type": "websocket.http.response.start", **start})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008})  # the server answers 403 to the handshake
