"""Is anything listening at an endpoint? One TCP connection, before a run
spends time on cells that could only fail: "nothing is listening at
127.0.0.1:8000 (connection refused)". Only endpoints the user named are
checked (a `--base-url`, a `--server`); a provider's default endpoint is
left to the first request."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}


def reach_problem(url: str, timeout: float = 3.0) -> str | None:
    """None when a TCP connection to the URL's host and port succeeds; otherwise
    one line saying what happened (never the URL's path, query or credentials)."""
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port or DEFAULT_PORTS.get(parts.scheme)
    except ValueError as exc:
        return f"{url.split('?')[0]!r} is not a URL ({exc})"
    if not host or not port:
        return f"{url.split('?')[0]!r} is not a URL with a host (e.g. http://127.0.0.1:8000/v1)"
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except ConnectionRefusedError:
        return f"nothing is listening at {shown} (connection refused)"
    except TimeoutError:
        return f"{shown} did not answer within {timeout:g} s"
    except socket.gaierror:
        return f"cannot resolve the host {host!r}"
    except OSError as exc:
        return f"cannot reach {shown}: {exc.strerror or type(exc).__name__}"
