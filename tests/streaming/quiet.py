"""A voice-activity fake for session tests that must hear no speech at all."""

from __future__ import annotations


class Quiet:
    """Voice activity that never hears speech."""

    in_speech = False

    async def feed(self, pcm16: bytes, t_ms: int) -> list:
        return []

    async def end_turn(self) -> list:
        return []
