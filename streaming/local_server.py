"""Run the streaming server in-process, on a free loopback port, in a thread."""

from __future__ import annotations

import contextlib
import threading
import time

import httpx
import uvicorn

from streaming.app import ServerSettings, create_app


@contextlib.contextmanager
def running_server(settings: ServerSettings | None = None, *, port: int = 0, startup_timeout: float = 300.0):
    from benchmark.candidates.local import free_port

    port = port or free_port()
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning",
                            ws_max_size=2_000_000)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + startup_timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if not thread.is_alive():
            raise RuntimeError("the streaming server stopped while starting")
        time.sleep(0.1)
    else:
        server.should_exit = True
        raise RuntimeError("the streaming server did not start")
    try:
        yield f"ws://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
