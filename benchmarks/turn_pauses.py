"""Premature turn ends on utterances with pauses inside them: the cost of the
end-of-turn model (issue 36).

    .venv/bin/python benchmarks/turn_pauses.py [--silence-ms 600,1500] [--limit N] [--text [--at-once 3]]

Each of the bank's Turn 1 and Turn 2 lines is spoken by espeak-ng
(`media_effects/tts.py`, SSML) as one utterance with a pause after its middle
word (an SSML break of 400-800 ms, seeded by the line): on even lines the
words before the pause end with a filler ("um"), on odd lines they stop
mid-clause. Each
clip (300 ms of silence, the halves with the pause, 2 s of silence) is fed in
20 ms chunks to `perception.speech.SpeechSegmenter`, once with the fixed
silence only (before) and once with the end-of-turn model asked after 200 ms
of silence (after), for each fixed silence given. A premature end is a turn
ended before the second half began. The same lines unpaused give how often
the model ended the turn and the silence waited.

For the silence and the end-of-turn model Whisper is not run: the stub
transcriber below returns an empty text at once, since which rule ends a turn
depends on voice activity and that model only. The text end of turn
(`end_of_turn: "text"`, `perception.turn_text`) reads the early transcript, so
it is measured with the real Whisper at real-time pace (`--text`, under the
longest fixed silence given, `--at-once` lines played together): a turn ends
when the early decode is done and its words read as finished, so how soon
depends on how fast Whisper decodes here. Writes
benchmarks/results/turn_pauses.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.scenario import load_bank  # noqa: E402
from media_effects.audio import SAMPLE_RATE, decode_audio, float_to_pcm16  # noqa: E402
from media_effects.tts import synthesize  # noqa: E402
from perception.asr import Transcriber, Transcript  # noqa: E402
from perception.speech import FinalTranscript, SpeechSegmenter, VoiceActivity  # noqa: E402
from perception.turn_end import shared_model  # noqa: E402
from perception.turn_text import ends_the_turn  # noqa: E402

LEAD_S, TAIL_S = 0.3, 2.0
PAUSE_MS = (400, 800)
CHUNK = 320  # samples: 20 ms, as the glasses send


class NoDecode:
    """A transcriber that decodes nothing: only when a turn ends matters here."""

    async def transcribe(self, audio):
        return Transcript(text="", segments=(), audio_seconds=len(audio) / SAMPLE_RATE, decode_seconds=0.0)

    async def transcribe_if_idle(self, audio):
        return None


def voiced(audio: np.ndarray) -> np.ndarray:
    """The clip without the silence espeak-ng puts around it."""
    loud = np.nonzero(np.abs(audio) > 0.01)[0]
    return audio[loud[0] : loud[-1] + 1] if len(loud) else audio


def bank_lines(limit: int = 0) -> list[str]:
    """The bank's Turn 1 and Turn 2 lines, scenario by scenario; only the first `limit` (0: all)."""
    lines = [text for s in load_bank().select("bank").scenarios for text in (s.turn_1_user, s.turn_2_user)]
    return lines[:limit] if limit else lines


def speak(text: str, folder: Path, *, voice: str = "en-us", rate: int = 150) -> np.ndarray:
    return voiced(decode_audio(synthesize(text, folder / "line.wav", voice=voice, rate=rate, root=folder)))


def paused_line(
    text: str, index: int, folder: Path, *, voice: str = "en-us", rate: int = 150
) -> tuple[np.ndarray, int, str, int]:
    """(clip, sample where the speech resumes, kind, pause ms) of one line spoken with a pause in
    it: one espeak-ng utterance with an SSML break, so the words before the pause keep the
    intonation of a line that goes on."""
    words = [escape(w) for w in text.split()]
    cut = max(1, len(words) // 2)
    kind = "filler" if index % 2 == 0 else "mid-clause"
    pause_ms = random.Random(f"{index}:{text}").randint(*PAUSE_MS)
    marked = " ".join(
        words[:cut] + (["um"] if kind == "filler" else []) + [f'<break time="{pause_ms}ms"/>'] + words[cut:]
    )
    speech = voiced(
        decode_audio(synthesize(marked, folder / "line.wav", voice=voice, rate=rate, root=folder, markup=True))
    )
    loud = np.nonzero(np.abs(speech) > 0.01)[0]
    gaps = np.diff(loud)
    resume = int(loud[int(np.argmax(gaps)) + 1])  # the first sound after the longest quiet stretch: the pause
    lead = np.zeros(int(LEAD_S * SAMPLE_RATE), np.float32)
    clip = np.concatenate([lead, speech, np.zeros(int(TAIL_S * SAMPLE_RATE), np.float32)])
    return clip, len(lead) + resume, kind, pause_ms


async def paced_turn_ends(audio: np.ndarray, segmenter: SpeechSegmenter) -> list[FinalTranscript]:
    """As `turn_ends`, a chunk every 20 ms of wall time, as the glasses send."""
    loop = asyncio.get_running_loop()
    pcm, finals, start = float_to_pcm16(audio), [], loop.time()
    for i in range(0, len(pcm), CHUNK * 2):
        await asyncio.sleep(max(0.0, start + i / 32 / 1000 - loop.time()))
        finals += [e for e in await segmenter.feed(pcm[i : i + CHUNK * 2], i // 32) if isinstance(e, FinalTranscript)]
    return finals


async def text_rows(clips: list, silence: int, vad: VoiceActivity, at_once: int) -> list[dict]:
    """Each (paused clip, resume sample, whole clip) under the text end of turn, `at_once` lines at a time."""
    transcriber, gate = Transcriber(), asyncio.Semaphore(at_once)

    async def one(clip, resume, whole) -> dict:
        async with gate:
            paused = await paced_turn_ends(
                clip, SpeechSegmenter(transcriber, silence_ms=silence, vad=vad, text_turn=ends_the_turn)
            )
            plain = await paced_turn_ends(
                whole, SpeechSegmenter(transcriber, silence_ms=silence, vad=vad, text_turn=ends_the_turn)
            )
        return {
            "premature": bool(paused) and paused[0].end_ms * SAMPLE_RATE // 1000 < resume,
            "paused_rules": [f.ended_by for f in paused],
            "paused_first_text": paused[0].text if paused else None,
            "whole_rule": plain[0].ended_by if plain else None,
            "whole_silence_ms": plain[0].silence_ms if plain else None,
            "whole_text": plain[0].text if plain else None,
        }

    await asyncio.to_thread(transcriber.transcribe_batch_sync, [np.zeros(SAMPLE_RATE, np.float32)])  # load it
    return list(await asyncio.gather(*(one(*c) for c in clips)))


async def turn_ends(audio: np.ndarray, segmenter: SpeechSegmenter) -> list[FinalTranscript]:
    pcm, finals = float_to_pcm16(audio), []
    for i in range(0, len(pcm), CHUNK * 2):
        finals += [e for e in await segmenter.feed(pcm[i : i + CHUNK * 2], i // 32) if isinstance(e, FinalTranscript)]
    return finals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--silence-ms", default="600,1500", help="the fixed silences to compare under")
    parser.add_argument("--limit", type=int, default=0, help="only the first N lines (0: all)")
    parser.add_argument("--text", action="store_true", help="also the text end of turn, with Whisper, in real time")
    parser.add_argument("--at-once", type=int, default=3, help="lines played together under --text")
    parser.add_argument("--output", default="benchmarks/results/turn_pauses.json")
    args = parser.parse_args()
    lines = bank_lines(args.limit)
    silences = [int(x) for x in args.silence_ms.split(",")]
    vad, model = VoiceActivity(), shared_model()
    transcriber = NoDecode()
    rows, clips = [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for index, text in enumerate(lines):
            clip, resume, kind, pause_ms = paused_line(text, index, folder)
            whole = np.concatenate(
                [
                    np.zeros(int(LEAD_S * SAMPLE_RATE), np.float32),
                    speak(text, folder),
                    np.zeros(int(TAIL_S * SAMPLE_RATE), np.float32),
                ]
            )
            row = {"line": text, "kind": kind, "pause_ms": pause_ms}
            for silence in silences:
                for rule, turn_model in (("before", None), ("after", model)):
                    paused = asyncio.run(
                        turn_ends(
                            clip, SpeechSegmenter(transcriber, silence_ms=silence, vad=vad, turn_model=turn_model)
                        )
                    )
                    plain = asyncio.run(
                        turn_ends(
                            whole, SpeechSegmenter(transcriber, silence_ms=silence, vad=vad, turn_model=turn_model)
                        )
                    )
                    row[f"{rule}_{silence}"] = {
                        "premature": bool(paused) and paused[0].end_ms * SAMPLE_RATE // 1000 < resume,
                        "paused_rules": [f.ended_by for f in paused],
                        "whole_rule": plain[0].ended_by if plain else None,
                        "whole_silence_ms": plain[0].silence_ms if plain else None,
                    }
            rows.append(row)
            clips.append((clip, resume, whole))
            print(json.dumps(row), file=sys.stderr)
    rules = ["before", "after"]
    if args.text:
        rules.append("text")
        print(f"the text end of turn: {len(clips)} lines in real time, {args.at_once} at once ...", file=sys.stderr)
        for row, facts in zip(rows, asyncio.run(text_rows(clips, max(silences), vad, args.at_once))):
            row[f"text_{max(silences)}"] = facts
    summary = {}
    for silence in silences:
        for rule in rules:
            if f"{rule}_{silence}" not in rows[0]:
                continue
            facts = [r[f"{rule}_{silence}"] for r in rows]
            waited = [f["whole_silence_ms"] for f in facts if f["whole_silence_ms"] is not None]
            summary[f"{rule}_{silence}"] = {
                "premature_pct": round(100 * sum(f["premature"] for f in facts) / len(facts), 1),
                "premature_by_kind": {
                    kind: sum(f["premature"] for f, r in zip(facts, rows) if r["kind"] == kind)
                    for kind in ("filler", "mid-clause")
                },
                "whole_lines_ended_early_pct": round(
                    100 * sum(f["whole_rule"] in ("model", "text") for f in facts) / len(facts), 1
                ),
                "whole_lines_silence_waited_ms_p50": float(np.percentile(waited, 50)) if waited else None,
            }
        for rule in rules[1:]:
            if f"{rule}_{silence}" in summary:
                summary[f"difference_{rule}_{silence}_points"] = round(
                    summary[f"{rule}_{silence}"]["premature_pct"] - summary[f"before_{silence}"]["premature_pct"], 1
                )
    out = {
        "command": f"python benchmarks/turn_pauses.py --silence-ms {args.silence_ms}"
        + (f" --limit {args.limit}" if args.limit else "")
        + (f" --text --at-once {args.at_once}" if args.text else ""),
        "lines": len(rows),
        "summary": summary,
        "rows": rows,
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({"lines": len(rows), "summary": summary}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
