"""Perception with real inputs made here: espeak-ng speech through the real
Whisper model, synthetic frames through the opencv describer, and the VLM
describers against local servers that check the request shape."""

import asyncio
import base64
import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import cv2
import numpy as np
import pytest

from candidates import open_candidate
from candidates.openai_chat import OpenAIChatCandidate
from core.records import authored_turn_input
from core.scenario import load_bank
from media_effects.audio import decode_audio, float_to_pcm16
from media_effects.frames import Frame, encode_jpeg, pick_context_frame, select_frame
from perception.asr import Transcriber
from perception.describers import ModelDescriber, describe_pixels, make_describer
from perception.quality import object_names_in_camera_block, word_error_rate
from perception.speech import FinalTranscript, SpeechSegmenter, SpeechStarted
from perception.turn_input import assemble_turn_input
from tests.fake_openai import FakeOpenAI

BANK = load_bank()
# mean word error rate of tiny.en on espeak-ng speech of bank sentences;
# measured 0.34 on this set (robotic voice, short deictic questions)
MAX_MEAN_WER = 0.45
WER_SCENARIOS = ("sc-01", "sc-05", "sc-13", "sc-21", "sc-27", "sc-33", "sc-43", "sc-47")


@pytest.fixture(scope="module")
def transcriber():
    return Transcriber()


def speak(text: str, path: Path) -> np.ndarray:
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(path), text], check=True)
    return decode_audio(path)


@pytest.mark.whisper
def test_bank_speech_through_real_whisper_within_wer(transcriber, tmp_path):
    rates = []
    for sid in WER_SCENARIOS:
        s = BANK.get(sid)
        for i, text in enumerate((s.turn_1_user, s.turn_2_user)):
            transcript = transcriber.transcribe_sync(speak(text, tmp_path / f"{sid}-{i}.wav"))
            assert transcript.audio_seconds > 0.5 and transcript.decode_seconds > 0
            rates.append(word_error_rate(text, transcript.text))
    assert sum(rates) / len(rates) <= MAX_MEAN_WER, rates


def test_word_error_rate():
    assert word_error_rate("is it done", "is it done") == 0.0
    assert word_error_rate("is it done", "it's done") == pytest.approx(2 / 3)
    assert word_error_rate("same question for this", "same question this one") == pytest.approx(2 / 4)


def _stream(segmenter, audio, chunk_samples=320):
    async def go():
        pcm, events = float_to_pcm16(audio), []
        for i in range(0, len(pcm), chunk_samples * 2):
            events += await segmenter.feed(pcm[i : i + chunk_samples * 2], i // 32)
        return events

    return asyncio.run(go())


def test_two_utterances_with_silence_give_exactly_two_finals(transcriber, tmp_path):
    first = speak("Am I holding this right for these?", tmp_path / "a.wav")
    second = speak("Same question for this.", tmp_path / "b.wav")
    silence = np.zeros(16000, np.float32)
    audio = np.concatenate([silence[:8000], first, silence, silence, second, silence, silence])  # 2 s: past SILENCE_MS
    events = _stream(SpeechSegmenter(transcriber), audio)
    finals = [e for e in events if isinstance(e, FinalTranscript)]
    starts = [e for e in events if isinstance(e, SpeechStarted)]
    assert len(finals) == 2 and len(starts) == 2
    assert word_error_rate("Am I holding this right for these?", finals[0].text) <= 0.5
    assert word_error_rate("Same question for this.", finals[1].text) <= 0.5
    assert 300 <= finals[0].start_ms <= 800 and finals[0].end_ms < finals[1].start_ms
    second_starts_ms = (8000 + len(first) + 32000) / 16
    assert abs(finals[1].start_ms - second_starts_ms) < 400


def test_turn_end_hint_closes_the_utterance_early(transcriber, tmp_path):
    speech = speak("How long will this take?", tmp_path / "c.wav")
    segmenter = SpeechSegmenter(transcriber, silence_ms=5000)
    events = _stream(segmenter, np.concatenate([np.zeros(4000, np.float32), speech]))
    assert not any(isinstance(e, FinalTranscript) for e in events)
    final = asyncio.run(segmenter.end_turn())
    assert len(final) == 1 and "long" in final[0].text.lower()
    assert asyncio.run(segmenter.end_turn()) == []


def _canvas():
    return np.full((240, 320, 3), 255, np.uint8)


def test_opencv_describer_names_colours_and_positions():
    image = _canvas()
    cv2.circle(image, (55, 120), 40, (0, 0, 230), -1)  # red, left
    cv2.rectangle(image, (230, 15), (305, 75), (230, 80, 20), -1)  # blue, top right
    text = describe_pixels(image)
    assert text.startswith("Mostly white")
    assert "red round shape on the left" in text
    assert "blue rectangular shape at the top right" in text
    assert object_names_in_camera_block(text) == []


def test_warm_and_cool_greys_are_grey_and_real_browns_stay_brown():
    from perception.describers import colour_name

    for bgr in ((110, 125, 150), (120, 128, 140), (150, 140, 125), (128, 128, 128)):  # warm, cool and plain greys
        assert colour_name(bgr) == "grey", bgr
    for bgr in ((40, 75, 130), (30, 60, 100), (60, 100, 140)):  # wood, leather, cardboard
        assert colour_name(bgr) == "brown", bgr
    assert colour_name((180, 150, 240)) == "pink" and colour_name((40, 140, 230)) == "orange"


def test_opencv_describer_elongated_brightness_and_motion():
    dark = np.full((240, 320, 3), 25, np.uint8)
    cv2.rectangle(dark, (20, 110), (300, 125), (0, 200, 230), -1)  # yellow bar across the middle
    text = describe_pixels(dark)
    assert "yellow elongated shape in the centre" in text and "dim" in text
    before = _canvas()
    after = before.copy()
    cv2.circle(after, (280, 200), 25, (0, 160, 0), -1)
    assert "moved since the last frame, mostly at the bottom right" in describe_pixels(after, before)
    assert "Nothing moved" in describe_pixels(before, before)


def _jpeg(colour, blur=False):
    image = np.full((120, 160, 3), colour, np.uint8)
    cv2.putText(image, "x", (40, 80), cv2.FONT_HERSHEY_SIMPLEX, 2, (0, 0, 0), 3)
    if blur:
        image = cv2.GaussianBlur(image, (21, 21), 8)
    return encode_jpeg(image)


def test_frame_selection_end_and_sharpest():
    frames = [
        Frame(t_ms=100, jpeg=_jpeg((200, 200, 200), blur=True)),
        Frame(t_ms=300, jpeg=_jpeg((200, 200, 200))),
        Frame(t_ms=500, jpeg=_jpeg((200, 200, 200), blur=True)),
        Frame(t_ms=900, jpeg=_jpeg((10, 10, 10))),
    ]
    assert select_frame(frames, 0, 600).t_ms == 500
    assert select_frame(frames, 0, 600, mode="sharpest").t_ms == 300
    assert select_frame(frames, 0, 50) is None


def test_context_frame_only_when_it_differs():
    turn = _jpeg((30, 160, 30))
    same = Frame(t_ms=100, jpeg=_jpeg((30, 160, 30)))
    different = Frame(t_ms=50, jpeg=_jpeg((200, 40, 40)))
    assert pick_context_frame([same], turn) is None
    assert pick_context_frame([different, same], turn) == different.jpeg


def test_fallback_and_provenance():
    recall = BANK.get("sc-47")
    authored = assemble_turn_input(authored_turn_input(recall, 1))
    assert (authored.camera_block, authored.speech) == (recall.turn_1_image, recall.turn_1_user)
    assert (authored.camera_source, authored.speech_source) == ("authored", "authored")
    assert authored.context_block == recall.context_image and authored.context_source == "authored"
    mixed = assemble_turn_input(
        authored_turn_input(recall, 2), perceived_speech="did i put enough in", perceived_camera=None
    )
    assert mixed.speech_source == "perceived" and mixed.camera_source == "authored"
    assert mixed.camera_block == recall.turn_2_image and mixed.context_block is None
    seen = assemble_turn_input(
        authored_turn_input(recall, 1), perceived_camera="Mostly grey.", perceived_context="Mostly blue."
    )
    assert (seen.camera_source, seen.context_source) == ("perceived", "perceived")
    assert seen.messages() == ["[Camera: Mostly blue.]", f"[Camera: Mostly grey.]\n{recall.turn_1_user}"]
    repair = assemble_turn_input(
        authored_turn_input(BANK.get("sc-38"), 3, repair_style="deictic"), perceived_camera="a frame nobody asked for"
    )
    assert repair.speech == BANK.get("sc-38").turn_3_repair_anchor and repair.camera_block is None
    empty = assemble_turn_input(authored_turn_input(BANK.get("sc-01"), 2), perceived_speech="   ")
    assert empty.speech_source == "authored"
    stripped = assemble_turn_input(authored_turn_input(recall, 1, camera=False))
    assert (
        stripped.camera_source is None
        and stripped.context_block is None
        and stripped.messages() == [recall.turn_1_user]
    )


def test_openai_describer_sends_a_data_uri_and_caches(tmp_path):
    jpeg = _jpeg((30, 30, 200))
    with FakeOpenAI(reply="A flat blue square with a dark mark at its centre.") as server:

        async def twice():
            async with open_candidate("openai:vision", base_url=server.base_url) as model:
                describer = make_describer("openai:vision", model=model, cache_dir=tmp_path)
                return await describer.describe(jpeg), await describer.describe(jpeg)

        first, second = asyncio.run(twice())
    content = server.requests[0]["messages"][0]["content"]
    assert content[1]["image_url"]["url"] == "data:image/jpeg;base64," + base64.b64encode(jpeg).decode()
    assert "Never name any object" in content[0]["text"]
    assert (first.cached, second.cached) == (False, True) and len(server.requests) == 1
    assert second.text == first.text == "A flat blue square with a dark mark at its centre."
    natural = make_describer(
        "openai:vision",
        model=OpenAIChatCandidate("vision", base_url="http://127.0.0.1:9/v1"),
        style="natural",
        cache_dir=tmp_path,
    )
    assert isinstance(natural, ModelDescriber) and "naming the objects" in natural.prompt
    with pytest.raises(ValueError, match="open_candidate"):
        make_describer("openai:vision")


def test_gemini_describer_sends_inline_bytes(tmp_path, monkeypatch):
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            seen.append((self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
            chunk = json.dumps(
                {
                    "candidates": [
                        {"content": {"role": "model", "parts": [{"text": "A green disc."}]}, "finishReason": "STOP"}
                    ]
                }
            )
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(f"data: {chunk}\r\n\r\n".encode())

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    jpeg = _jpeg((30, 160, 30))
    try:

        async def once():
            async with open_candidate(
                "gemini:gemini-2.5-flash", base_url=f"http://127.0.0.1:{server.server_port}"
            ) as model:
                return await make_describer("gemini:gemini-2.5-flash", model=model, cache_dir=tmp_path).describe(jpeg)

        result = asyncio.run(once())
    finally:
        server.shutdown()
    path, body = seen[0]
    assert path.startswith("/v1beta/models/gemini-2.5-flash:streamGenerateContent")  # the chat adapter's request
    parts = body["contents"][0]["parts"]
    inline = [p for p in parts if "inlineData" in p or "inline_data" in p]
    data = inline[0].get("inlineData") or inline[0].get("inline_data")
    assert (
        base64.urlsafe_b64decode(data["data"]) == jpeg
        and (data.get("mimeType") or data.get("mime_type")) == "image/jpeg"
    )
    assert result.text == "A green disc." and result.describer == "gemini"
