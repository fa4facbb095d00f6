"""The simulated glasses: a session timeline from a scenario and its media, real-time pacing, and the
WebSocket client that streams it to the server."""
