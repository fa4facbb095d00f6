"""Decode bombs and hogs: small inputs that claim huge decodes (a JPEG
header of 16384x16384, a WAV at 1 Hz, an hour of FLAC silence, a long
static video) are refused from their headers before anything is decoded;
an endless utterance is cut at the cap; partial transcripts are bounded
and never queue behind (or ahead of) the shared Whisper model's real work.
No test times anything."""

from __future__ import annotations

import asyncio
import struct

import numpy as np
import pytest

from media_effects import frames
from media_effects.audio import SAMPLE_RATE
from media_effects.frames import decode_jpeg, encode_jpeg
from perception import speech
from perception.asr import Transcriber, Transcript
from perception.speech import FinalTranscript, PartialTranscript, SpeechSegmenter
from streaming import wire


def bomb_jpeg(width: int, height: int) -> bytes:
    """A small real JPEG whose start-of-frame header is rewritten to claim `width` x `height`."""
    data = bytearray(encode_jpeg(np.full((16, 16, 3), 90, np.uint8)))
    at = data.index(b"\xff\xc0")
    struct.pack_into(">HH", data, at + 5, height, width)
    return bytes(data)


# ---- frames -----------------------------------------------------------------------------


def test_a_frame_claiming_16384_squared_is_refused_from_its_header_before_any_decode():
    bomb = bomb_jpeg(16384, 16384)
    assert len(bomb) < 1000 and frames.image_size(bomb) == (16384, 16384)
    with pytest.raises(wire.WireError) as refused:
        wire.decode_media(wire.encode_media(wire.KIND_FRAME, 0, bomb))
    assert refused.value.code == "frame_too_large" and "16384x16384" in refused.value.message
    with pytest.raises(ValueError, match="over the limit"):
        decode_jpeg(bomb)  # nothing reaches the decoder, whoever calls it


def test_real_frames_up_to_the_pixel_limit_pass_and_their_size_is_read_exactly():
    small = encode_jpeg(np.zeros((48, 64, 3), np.uint8))
    assert frames.image_size(small) == (64, 48) and frames.pixel_refusal(small) is None
    assert wire.decode_media(wire.encode_media(wire.KIND_FRAME, 5, small)).payload == small
    assert frames.pixel_refusal(bomb_jpeg(4096, 2160)) is None and 4096 * 2160 <= frames.MAX_FRAME_PIXELS
    assert frames.pixel_refusal(bomb_jpeg(4097, 2160)) is not None
    # progressive JPEGs (SOF2) and PNGs are read too; a header without a size is left to the decoder
    import cv2

    ok, png = cv2.imencode(".png", np.zeros((30, 40, 3), np.uint8))
    assert ok and frames.image_size(png.tobytes()) == (40, 30)
    ok, progressive = cv2.imencode(".jpg", np.zeros((30, 40, 3), np.uint8), [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    assert ok and frames.image_size(progressive.tobytes()) == (40, 30)
    assert frames.image_size(b"\xff\xd8" + bytes(100)) is None


def test_a_session_answers_a_frame_bomb_with_an_error_and_keeps_nothing(server_url):
    import httpx
    import websockets

    async def go():
        async with websockets.connect(server_url + "/v1/session", max_size=None) as ws:
            await ws.send(wire.hello(None, wire.SessionConfig(backend="openai:fake")))
            assert wire.decode_event(await ws.recv()).type == "ready"
            await ws.send(wire.encode_media(wire.KIND_FRAME, 0, bomb_jpeg(16384, 16384)))
            event = wire.decode_event(await ws.recv())
            health = httpx.get(server_url.replace("ws://", "http://") + "/healthz").json()
            await ws.send(wire.encode_message("session.end"))
            return event, health

    event, health = asyncio.run(go())
    assert event.type == "error" and event.code == "frame_too_large" and "16384x16384" in event.message
    assert health["frame_bytes"] == 0


# ---- speech -----------------------------------------------------------------------------


class AlwaysSpeech:
    """A voice detector that hears speech in every window."""

    def stream(self):
        return self

    def probability(self, window) -> float:
        return 1.0


class CountingTranscriber:
    """Records the seconds of audio of each decode; `busy` as told."""

    def __init__(self, busy: bool = False):
        self.finals: list[float] = []
        self.partials: list[float] = []
        self.busy = busy

    async def transcribe(self, audio) -> Transcript:
        self.finals.append(len(audio) / SAMPLE_RATE)
        return Transcript(text="words", segments=(), audio_seconds=len(audio) / SAMPLE_RATE, decode_seconds=0.0)

    async def transcribe_if_idle(self, audio) -> Transcript | None:
        if self.busy:
            return None
        self.partials.append(len(audio) / SAMPLE_RATE)
        return Transcript(text="words", segments=(), audio_seconds=len(audio) / SAMPLE_RATE, decode_seconds=0.0)


def _feed(segmenter, seconds: float, chunk_ms: int = 100):
    async def go():
        events, chunk = [], bytes(SAMPLE_RATE * chunk_ms // 1000 * 2)
        for t in range(0, int(seconds * 1000), chunk_ms):
            events += await segmenter.feed(chunk, t)
        return events

    return asyncio.run(go())


def test_continuous_speech_is_cut_at_the_cap_while_it_goes_on():
    asr = CountingTranscriber()
    events = _feed(SpeechSegmenter(asr, vad=AlwaysSpeech(), max_utterance_s=30.0), 70)
    finals = [e for e in events if isinstance(e, FinalTranscript)]
    assert len(finals) == 2  # at 30 s and 60 s of speech; the last 10 s are still open
    assert all(seconds <= 30.032 + speech.PRE_ROLL_MS / 1000 for seconds in asr.finals), asr.finals  # cap + pre-roll
    assert (
        finals[0].end_ms <= finals[1].start_ms and finals[1].end_ms - finals[1].start_ms <= 30_000 + 32
    )  # one 32 ms window


def test_partial_transcripts_decode_only_the_last_seconds(monkeypatch):
    monkeypatch.setattr(speech, "PARTIAL_MIN_INTERVAL_S", 0.0, raising=False)  # stream time alone paces them
    asr = CountingTranscriber()
    events = _feed(SpeechSegmenter(asr, vad=AlwaysSpeech(), partials=True, max_utterance_s=30.0), 20)
    assert len([e for e in events if isinstance(e, PartialTranscript)]) >= 15
    assert max(asr.partials) <= speech.PARTIAL_WINDOW_S  # not the whole utterance each time
    assert sum(asr.partials) <= 20 * speech.PARTIAL_WINDOW_S


def test_partial_transcripts_are_skipped_while_whisper_is_busy(monkeypatch):
    monkeypatch.setattr(speech, "PARTIAL_MIN_INTERVAL_S", 0.0, raising=False)
    asr = CountingTranscriber(busy=True)
    events = _feed(SpeechSegmenter(asr, vad=AlwaysSpeech(), partials=True), 10)
    assert asr.partials == [] and not any(isinstance(e, PartialTranscript) for e in events)


@pytest.mark.parametrize("workers", [1, 2])
def test_whisper_turns_go_first_come_first_served(monkeypatch, workers):
    """Callers waiting for the model's decoders get one in the order they asked; a cancelled waiter gives up
    its place."""
    import threading

    taken, release = [], threading.Event()

    def fake_batch(self, clips):  # the async callers' decodes go out in batches (perception.asr)
        taken.extend(int(audio[0]) for audio in clips)
        release.wait(10)  # each decoder holds the model until everyone is queued
        return [Transcript(text="", segments=(), audio_seconds=0.0, decode_seconds=0.0) for _ in clips]

    monkeypatch.setattr(Transcriber, "transcribe_batch_sync", fake_batch)
    transcriber = Transcriber("unused-model", workers=workers)

    async def go():
        tasks = []
        for caller in range(5):
            tasks.append(asyncio.create_task(transcriber.transcribe(np.full(4, caller, np.float32))))
            await asyncio.sleep(0)
        assert transcriber.busy and await transcriber.transcribe_if_idle(np.zeros(4, np.float32)) is None
        for _ in range(1000):  # every decoder has taken its first caller (in its thread)
            if len(taken) == workers:
                break
            await asyncio.sleep(0.01)
        tasks[2].cancel()
        await asyncio.sleep(0)
        release.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        return transcriber.busy

    assert asyncio.run(go()) is False
    assert taken == [0, 1, 3, 4]


# ---- recordings (wearsim media import and the studio's POST /v1/record) -------------------


def _wav(path, rate: int, seconds: float):
    import wave

    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(bytes(int(rate * seconds) * 2))
    return path


def _encode(path, *, audio_codec=None, rate=16000, seconds=1.0, video=None):
    """A file PyAV writes: silence in `audio_codec`, and/or `video` (width, height, fps) of one grey picture."""
    import av

    with av.open(str(path), "w") as out:
        if video is not None:
            width, height, fps = video
            stream = out.add_stream("libvpx", rate=fps)
            stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
            picture = av.VideoFrame.from_ndarray(np.full((height, width, 3), 99, np.uint8), format="rgb24")
            for _ in range(int(seconds * fps)):
                out.mux(stream.encode(picture))
            out.mux(stream.encode())
        if audio_codec is not None:
            stream = out.add_stream(audio_codec, rate=rate)
            stream.layout = "mono"
            step = 4096
            for start in range(0, int(rate * seconds), step):
                frame = av.AudioFrame.from_ndarray(np.zeros((1, step), np.int16), format="s16", layout="mono")
                frame.sample_rate, frame.pts = rate, start
                out.mux(stream.encode(frame))
            out.mux(stream.encode())
    return path


@pytest.mark.parametrize(
    "make, limit",
    [
        (lambda d: _wav(d / "low.wav", 4000, 1.0), "4000 Hz"),  # the 1 Hz bomb's kind, cheap to try
        (lambda d: _encode(d / "long.flac", audio_codec="flac", seconds=75), "75 s"),
        (lambda d: _encode(d / "long.webm", video=(64, 48, 2), seconds=75), "75 s"),
        (lambda d: _encode(d / "big.webm", video=(2048, 1152, 2), seconds=1), "2048x1152"),
    ],
    ids=["wav-rate", "flac-length", "webm-length", "webm-size"],
)
def test_a_recording_over_a_steps_limits_is_refused_from_its_header(tmp_path, make, limit):
    from media_effects.media_library import import_recording

    source = make(tmp_path)
    with pytest.raises(ValueError) as refused:
        import_recording(tmp_path / "media", "sc-01", "turn_1", source)
    assert (
        type(refused.value).__name__ == "MediaLimit"
        and limit in str(refused.value)
        and str(tmp_path) not in str(refused.value)
    )
    assert not (tmp_path / "media" / "sc-01").exists()


def test_an_endless_webm_without_a_duration_is_counted_and_cut_while_decoding(tmp_path, monkeypatch):
    """A browser's WebM says no duration: the frames are counted as they are decoded."""
    from media_effects import media_library

    source = _encode(tmp_path / "take.webm", video=(64, 48, 10), seconds=3)
    monkeypatch.setattr(media_library, "probe_recording", lambda path: None, raising=False)  # the header says nothing
    monkeypatch.setattr(media_library, "MAX_VIDEO_FRAMES", 20, raising=False)
    with pytest.raises(ValueError, match="more than 20 video frames"):
        media_library.import_recording(tmp_path / "media", "sc-01", "context", source)


def test_the_studio_answers_a_recording_over_the_limits_with_413_and_no_server_path(tmp_path):
    import httpx

    from streaming.local_server import running_server
    from streaming.server_settings import ServerSettings

    body = _encode(tmp_path / "hour.flac", audio_codec="flac", seconds=75).read_bytes()
    record_dir = tmp_path / "studio"
    with running_server(ServerSettings(record_dir=record_dir)) as url:
        http = url.replace("ws://", "http://")
        answer = httpx.post(
            f"{http}/v1/record?scenario=sc-01&step=turn_1",
            content=body,
            timeout=120,
            headers={"Origin": http, "Content-Type": "video/webm"},
        )
    assert answer.status_code == 413, answer.text
    message = answer.json()["error"]
    assert "75 s" in message and str(tmp_path) not in message and "/" not in message.split(":", 1)[1]
    assert not (record_dir / "sc-01").exists()


# ---- slow HTTP clients ------------------------------------------------------------------


def _open_then_stall(port: int, count: int) -> list:
    """`count` connections that each finish one request, then send one byte of the next and stop,
    from two loopback addresses in turn (each address stays under its own share of connections,
    `MAX_HTTP_PER_CLIENT`, so what is tested is the server's total and its deadlines)."""
    import socket

    sockets = []
    for i in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(f"127.0.0.{2 + i % 2}", 0))
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        reply = b""
        while not reply.rstrip().endswith(b"}"):
            piece = sock.recv(4096)
            assert piece, reply  # closed early (a 503 once the server counted every connection as full)
            reply += piece
        assert reply.startswith(b"HTTP/1.1 200"), reply
        sock.sendall(b"G")
        sockets.append(sock)
    return sockets


@pytest.mark.whisper
def test_stalled_keep_alive_connections_neither_fill_the_server_nor_stay(monkeypatch):
    import httpx

    from streaming.local_server import running_server

    monkeypatch.setattr("streaming.local_server.HANDSHAKE_TIMEOUT_S", 1.0)
    with running_server() as url:
        http = url.replace("ws://", "http://")
        port = int(http.rsplit(":", 1)[1])
        sockets = _open_then_stall(port, 70)  # more than the 64 connections WebSockets may hold
        try:
            for path in ("/", "/v1/info", "/healthz"):
                assert httpx.get(http + path, timeout=30).status_code == 200, path
            for sock in sockets:  # each is dropped once its next request's headers are overdue
                assert sock.recv(1) == b""
        finally:
            for sock in sockets:
                sock.close()


@pytest.mark.whisper
def test_a_slow_recording_body_gets_408_and_lets_go(tmp_path, monkeypatch):
    import socket

    from streaming import web_routes
    from streaming.local_server import running_server
    from streaming.server_settings import ServerSettings

    monkeypatch.setattr(web_routes, "RECORD_GAP_TIMEOUT_S", 0.5, raising=False)
    with running_server(ServerSettings(record_dir=tmp_path / "studio")) as url:
        http = url.replace("ws://", "http://")
        sock = socket.create_connection(("127.0.0.1", int(http.rsplit(":", 1)[1])), timeout=60)
        sock.sendall(
            b"POST /v1/record?scenario=sc-01&step=turn_1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: video/webm\r\nContent-Length: 100000\r\n\r\n" + bytes(10)
        )
        reply = b""
        while chunk := sock.recv(4096):  # the head and the body may come in separate segments
            reply += chunk
        sock.close()
    assert reply.startswith(b"HTTP/1.1 408") and b"did not arrive in time" in reply
