"""One session's camera frames past its frame policy (`perception.frame_policy`): which frames the
policy let through, as sent (under the session's camera conditions, size and JPEG quality), the frames
chosen for a turn, and each turn's frame facts.

Frames meet the policy in stream order, as the audio clock reaches them: before each audio chunk is
handled, every frame up to its stream time is offered, with voice activity as it stands then
(`speech:N/M` needs it); at `turn.end` every frame left is offered. Under `end` none is sent as it
comes: at the end of speech the newest frame is picked (the upper bound no streaming client reaches).
Each turn's metrics say which frames the camera offered and which were sent, counted over the stream
times after the previous turn's end of speech up to this one's, and the age of the newest frame sent by
the end of speech. The session (`streaming.session`) routes what passes to its backend.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable

from core.records import FrameFacts
from media_effects.frames import Frame, FrameBuffer, pick_context_frame, select_frame
from perception.frame_policy import FrameGate, FramePolicy, resize_frame
from perception.speech import EarlyTranscript, FinalTranscript
from streaming.wire import SessionConfig

SendFrame = Callable[[int, bytes], Awaitable[None]]  # (stream time, JPEG as sent)


class SessionFrames:
    """The frames the camera offered (`frames`, filled by the session's reader), the policy's gate over
    them, and the frames it sent (`sent`)."""

    def __init__(self, config: SessionConfig, policy: FramePolicy, frames: FrameBuffer, camera_profile=None):
        self.config = config
        self.policy = policy
        self.frames = frames  # as the camera offered them
        self.camera_profile = camera_profile  # the hello's camera conditions: an impairment profile, or None
        self.gate = FrameGate(policy)
        self.sent = FrameBuffer(max_frames=120, max_bytes=frames.max_bytes // 2, budget=frames.budget)
        self.gated_ms: float = float("-inf")  # frames up to this stream time have met the policy
        self._log: list[list] = []  # [t_ms, bytes sent or None] per frame offered, not yet in a turn
        self._sent_ms: deque[int] = deque(maxlen=10_000)  # stream times of the frames sent in turns counted
        self._window_from: int | None = None  # stream time the next turn's frame facts count from

    def start_window(self, t_ms: int) -> None:
        """The first audio chunk (at `t_ms`) arrived: the first turn's frames count from it, or from the
        first frame if that came earlier."""
        if self._window_from is None:
            first = self.frames.frames[0].t_ms if self.frames.frames else t_ms
            self._window_from = min(t_ms, first)

    def take_window(self) -> list[list]:
        """The frames offered since the previous turn was asked, for the turn asked now."""
        window, self._log = self._log, []
        return window

    async def offer(self, upto_ms: float, speaking: Callable[[], bool], send: SendFrame) -> None:
        """Offer the policy every frame not yet offered up to stream time `upto_ms`, in order; each one
        it lets through goes to `send` before the next is offered."""
        waiting = []
        for frame in reversed(self.frames.frames):
            if frame.t_ms <= self.gated_ms:
                break
            if frame.t_ms <= upto_ms:
                waiting.append(frame)
        for frame in reversed(waiting):
            self.gated_ms = frame.t_ms
            in_speech = speaking()
            if self.gate.decodes:
                passed = await asyncio.to_thread(self.gate.offer, frame.t_ms, frame.jpeg, in_speech)
            else:
                passed = self.gate.offer(frame.t_ms, frame.jpeg, in_speech)
            entry = [frame.t_ms, None]
            self._log.append(entry)
            if passed:
                jpeg = await self.as_sent(frame.t_ms, frame.jpeg)
                entry[1] = len(jpeg)
                self.sent.add(frame.t_ms, jpeg)
                await send(frame.t_ms, jpeg)

    async def as_sent(self, t_ms: int, jpeg: bytes) -> bytes:
        """The frame under the session's camera conditions, at its size and JPEG quality."""
        if self.camera_profile is not None and not self.camera_profile.video.is_clean:
            jpeg = await asyncio.to_thread(self.camera_profile.impair_frame, jpeg, t_ms)
        if not (self.config.frame_size or self.config.frame_quality):
            return jpeg
        return await asyncio.to_thread(resize_frame, jpeg, self.config.frame_size, self.config.frame_quality)

    def unsend(self, t_ms: int) -> None:
        """The frame at `t_ms` was dropped before it reached the backend: not counted sent."""
        for entry in reversed(self._log):
            if entry[0] == t_ms and entry[1] is not None:
                entry[1] = None
                return

    async def _send_at_end(self, frames: list[Frame], window: list[list], send: SendFrame) -> list[bytes]:
        """The `end` policy: the frames picked at the end of speech are the ones sent (to the
        backend now, before the turn is answered), and counted in the turn's `window`.
        Returns them as sent."""
        sent = []
        for frame in frames:
            jpeg = await self.as_sent(frame.t_ms, frame.jpeg)
            sent.append(jpeg)
            entry = next((e for e in reversed(window) if e[0] == frame.t_ms), None)
            if entry is None:
                entry = [frame.t_ms, None]
                window.append(entry)
            entry[1] = len(jpeg)
            self.sent.add(frame.t_ms, jpeg)
            await send(frame.t_ms, jpeg)
        return sent

    async def for_turn(
        self, turn: int, final: FinalTranscript | EarlyTranscript, window: list[list], send: SendFrame | None
    ) -> tuple[bytes | None, bytes | None, str | None, str | None]:
        """The turn's frame and (on turn 1) context frame, and the authored camera and context text that
        stand in for them: the text the glasses declared fills a channel whose camera sent no frame at
        all (not one whose policy has not sent a frame yet). Under `end` the frames picked go to `send`;
        with no `send` (a turn foreseen, not asked) nothing is sent or counted."""
        camera_on = self.config.camera and turn <= 2
        fallback = self.config.fallback_camera.get(str(turn)) if camera_on else None
        frame = context_jpeg = fallback_context = None
        if camera_on:
            at_end = self.policy.kind == "end"
            # a snapshot: the reader keeps adding (and dropping) frames
            frames = list(self.frames.frames if at_end else self.sent.frames)
            chosen = await asyncio.to_thread(
                select_frame, frames, final.start_ms, final.end_ms, self.config.frame_selection
            )
            frame = chosen.jpeg if chosen is not None else None
            picked = [chosen] if chosen is not None else []
            if turn == 1:
                earlier = [f for f in frames if f.t_ms < final.start_ms]
                context_jpeg = (
                    await asyncio.to_thread(pick_context_frame, earlier, frame)
                    if (frame is not None and earlier)
                    else None
                )
                picked[:0] = [f for f in earlier if f.jpeg is context_jpeg][:1]
                if context_jpeg is None and not self.frames.before(final.start_ms):  # no frame before the words
                    fallback_context = self.config.fallback_context
            if at_end and picked:
                if send is None:
                    sent = [await self.as_sent(f.t_ms, f.jpeg) for f in picked]
                else:
                    sent = await self._send_at_end(picked, window, send)
                frame, context_jpeg = sent[-1], (sent[0] if len(sent) == 2 else None)
            if frame is None and any(f.t_ms <= final.end_ms for f in self.frames.frames):
                fallback = None  # the camera was on and the policy sent nothing yet: the model saw nothing
        return frame, context_jpeg, fallback, fallback_context

    def facts(self, end_ms: int, window: list[list], gated_ms: float) -> tuple[FrameFacts, float | None]:
        """The turn's frame facts: the frames offered to the policy since the previous turn was
        asked, up to `gated_ms` (those after the end of speech too: a realtime API has them when
        it answers), and the newest frame sent by the end of speech (`end_ms`) with its age."""
        sent = sorted((t, size) for t, size in window if size is not None)
        self._sent_ms.extend(t for t, _ in sent)
        newest = max((t for t in self._sent_ms if t <= end_ms), default=None)
        start = self._window_from if self._window_from is not None else end_ms
        self._window_from = max(end_ms, int(gated_ms)) if window else max(end_ms, start)
        facts = FrameFacts(
            policy=self.policy.name,
            offered=len(window),
            sent=len(sent),
            sent_bytes=sum(size for _, size in sent),
            sent_ms=tuple(t for t, _ in sent),
            window_ms=max(0, self._window_from - start),
            newest_ms=newest,
        )
        return facts, None if newest is None else round((end_ms - newest) / 1000, 3)

    def close(self) -> None:
        """The frames offered and the frames sent: released, and out of the budget, now."""
        self.frames.close()
        self.sent.close()
