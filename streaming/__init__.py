"""The streaming server: the wire protocol codec, the FastAPI app, the per-connection session and the
backends it routes to, the live page and recording studio."""
