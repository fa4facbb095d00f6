"""A server session keeps the audio's stream clock: a chunk the uplink lost
becomes silence of its length, for voice activity and for the backend."""

from __future__ import annotations

import asyncio

from streaming import wire
from streaming.backends import MediaBackend
from streaming.session import Session


class Heard:
    """Voice activity that records what it was fed."""

    in_speech = False

    def __init__(self):
        self.fed: list[tuple[int, int]] = []

    async def feed(self, pcm16: bytes, t_ms: int) -> list:
        self.fed.append((t_ms, len(pcm16)))
        return []

    async def end_turn(self) -> list:
        return []


def test_a_lost_chunk_becomes_silence_of_its_length_and_short_jitter_or_a_long_pause_does_not():
    class Backend(MediaBackend):
        async def audio(self, pcm16):
            self.got.append(len(pcm16))

        async def frame(self, t_ms, jpeg):
            return None

        async def aclose(self):
            return None

    async def go():
        heard, backend = Heard(), Backend()
        backend.got = []
        session = Session(wire.SessionConfig(camera=False), heard, backend, send=None)
        worker = asyncio.create_task(session.run())
        chunk = bytes(640)  # 20 ms
        for t in (0, 20, 80, 110, 10_000):  # 40 ms lost after 20; 10 ms jitter at 110; a 9.9 s pause
            await session.on_media(wire.Media(kind=wire.KIND_AUDIO, t_ms=t, payload=chunk))
        while session.busy:
            await asyncio.sleep(0.01)
        worker.cancel()
        return heard.fed, backend.got, session.audio_gaps_ms

    fed, got, gaps = asyncio.run(go())
    assert fed == [(0, 640), (20, 640), (40, 1280), (80, 640), (110, 640), (10_000, 640)]
    assert got == [640, 640, 1280, 640, 640, 640]
    assert gaps == [(40, 40)]
