"""`wearsim probe MODEL`: one short live session against a realtime API, to see
which of the behaviours the adapters rely on (docs/protocol.md, "Provider
behaviour") the real service shows today.

The session is the glasses' in miniature: a camera frame of a bank scenario,
its Turn 1 question spoken by espeak-ng and streamed at the pace of speech,
the reply read to its end; then the Turn 2 question, talked over as soon as
the reply starts (barge-in), and for a spoken OpenAI reply the heard part
truncated; then the sight check: the pictograph frame of the scenario's
Turn 2 scene and "What am I holding?" spoken, and which of the held
objects' names the reply says (only a model that looked at the frame can
name them: no word of the session names them). What was seen is printed as
checks, and every message sent and received goes to a trace file to attach
to a bug report (`benchmark.probe.trace`: media as its size, never its
bytes, and no API key, nor any 8 characters of one, anywhere in it).
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmark.probe.trace import Trace
from candidates.model_ids import parse_model_id
from candidates.realtime import open_realtime_session
from core.candidate import DEFAULT_MAX_TOKENS, GenerationConfig, Reply, Usage
from core.scenario import Scenario
from core.scenes import Scene

SYSTEM = "You are a wearable assistant. The user's camera frames come as images. Answer in one short sentence."
CHUNK_MS = 20
REPLY_TIMEOUT_S = 60.0
SIGHT_QUESTION = "What am I holding?"
SIGHT_SCENE = "turn_2"  # the scene the sight check shows; no word of the probe's session names its objects


@dataclass(kw_only=True)
class Check:
    ok: bool | None  # None: seen, neither good nor bad
    what: str

    def line(self) -> str:
        return f"  {'ok ' if self.ok else '-- ' if self.ok is None else 'NO '} {self.what}"


def spoken(text: str, rate: int) -> bytes:
    """`text` spoken by espeak-ng, PCM16 mono at `rate`."""
    from media_effects.audio import decode_audio, float_to_pcm16, resample_pcm16
    from media_effects.tts import synthesize

    with tempfile.TemporaryDirectory() as tmp:
        path = synthesize(text, Path(tmp) / "line.wav", root=Path(tmp))
        return resample_pcm16(float_to_pcm16(decode_audio(path)), 16000, rate)


async def _speak(session, pcm16: bytes) -> None:
    """Stream speech at its own pace, as glasses would, with half a second of silence after it; the
    session is told the speech starts, as the glasses' voice activity would tell it."""
    size = session.input_rate * 2 * CHUNK_MS // 1000
    audio = pcm16 + b"\x00\x00" * (session.input_rate // 2)
    await session.speech_started()
    deadline = time.monotonic()
    for start in range(0, len(audio), size):
        await session.send_audio(audio[start : start + size])
        deadline += CHUNK_MS / 1000
        await asyncio.sleep(max(0.0, deadline - time.monotonic()))


async def run_probe(
    model_id: str,
    scenario: Scenario,
    sight: Scene | None,
    *,
    base_url: str | None,
    output: str,
    trace: Trace,
    say: Callable[[str], None],
) -> list[Check]:
    """The probe session, every message going to `trace` (kept when the session fails); `sight`:
    the scene of the sight check (None: the scenario has no scene spec). `say` gets progress
    lines. Raises what opening the session, or any turn, raises."""
    from media_effects.synthetic import synthetic_frame

    session = await open_realtime_session(
        model_id,
        SYSTEM,
        base_url=base_url,
        output=output,
        streaming_input=True,
        config=GenerationConfig(max_tokens=DEFAULT_MAX_TOKENS),
        trace=trace,
    )
    checks: list[Check] = []
    try:
        say(f"connected; Turn 1 of {scenario.scenario_id}: a camera frame, then {scenario.turn_1_user!r} spoken")
        await session.send_user(None, (synthetic_frame(scenario.turn_1_image or scenario.turn_1_user),))
        await _speak(session, spoken(scenario.turn_1_user, session.input_rate))
        first = await asyncio.wait_for(session.respond(audio_turn=True), REPLY_TIMEOUT_S)
        checks += _first_reply(first, output, trace)
        say(f"Turn 2: {scenario.turn_2_user!r} spoken, then talked over when the reply starts")
        second, truncated = await _barge_in(session, spoken(scenario.turn_2_user, session.input_rate))
        checks.append(
            Check(
                ok=second.interrupted,
                what="barge-in: the reply was cut off when the user talked over it"
                if second.interrupted
                else "barge-in: the reply ran to its end although cut",
            )
        )
        if truncated is not None:
            checks.append(Check(ok=None, what=f"truncation sent for the spoken reply at {truncated} ms"))
        checks.append(await _sight_check(session, sight, trace, say))
    finally:
        await session.aclose()
    return checks + _session_facts(trace)


def held_names(scene: Scene) -> list[str]:
    """What the sight check's reply should name: the objects the hands hold (else touch)."""
    ids = [h.holds for h in scene.hands if h.holds] or [h.touches for h in scene.hands if h.touches]
    return [o.name for i in ids if (o := scene.object(i)) is not None]


def names_said(reply: str, names: list[str]) -> list[str]:
    """The names whose head word (the last: "claw hammer" -> hammer) the reply says, a plural too."""
    return [name for name in names if re.search(rf"\b{re.escape(name.split()[-1].lower())}(s|es)?\b", reply.lower())]


async def _sight_check(session, scene: Scene | None, trace: Trace, say: Callable[[str], None]) -> Check:
    """A pictograph frame and a spoken question only the frame answers; the result goes in the trace."""
    from media_effects.pictograph import pictograph_frame

    if scene is None:
        return Check(ok=None, what="sight: not checked (the scenario has no scene spec to draw a pictograph from)")
    names = held_names(scene)
    say(f"sight check: a pictograph frame ({', '.join(names)} in hand), then {SIGHT_QUESTION!r} spoken")
    await session.send_user(None, (pictograph_frame(scene),))
    await _speak(session, spoken(SIGHT_QUESTION, session.input_rate))
    reply = await asyncio.wait_for(session.respond(audio_turn=True), REPLY_TIMEOUT_S)
    named = names_said(reply.text, names)
    trace("check", {"sight": {"expected": names, "named": named, "reply": reply.text}})
    if named:
        return Check(
            ok=True,
            what=f"sight: the reply names {', '.join(named)} (in hand: {', '.join(names)}): "
            f"the API looked at the frame",
        )
    return Check(ok=False, what=f"sight: the reply names none of {', '.join(names)}: {reply.text[:100]!r}")


async def _barge_in(session, speech: bytes) -> tuple[Reply, int | None]:
    await _speak(session, speech)
    started = asyncio.Event()
    answer = asyncio.create_task(
        session.respond(audio_turn=True, on_delta=lambda _: started.set(), on_audio=lambda _: started.set())
    )
    waiting = asyncio.create_task(started.wait())
    await asyncio.wait({answer, waiting}, timeout=REPLY_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    if not answer.done():
        await session.interrupt()
    reply = await asyncio.wait_for(answer, REPLY_TIMEOUT_S)
    if reply.item is None or not reply.audio:
        return reply, None
    heard_ms = min(300, len(reply.audio) * 1000 // (2 * 24000))
    await session.truncate(reply.item, heard_ms)
    return reply, heard_ms


def _first_reply(reply: Reply, output: str, trace: Trace) -> list[Check]:
    checks = [
        Check(
            ok=bool(reply.text),
            what=f"reply to the spoken question: {reply.text[:100]!r}"
            + (
                f" (first text {reply.first_token_s:.2f} s after the turn ended)"
                if reply.first_token_s is not None
                else ""
            ),
        )
    ]
    if output == "audio":
        checks.append(
            Check(
                ok=bool(reply.audio),
                what=f"spoken reply: {len(reply.audio) / 48000:.1f} s of audio"
                + (
                    f", first audio {reply.first_audio_s:.2f} s after the turn ended"
                    if reply.first_audio_s is not None
                    else ""
                ),
            )
        )
    checks.append(Check(ok=reply.heard is not None, what=_transcript_timing(reply, trace)))
    if reply.incomplete:
        checks.append(Check(ok=False, what=f"the reply was cut short: {reply.incomplete}"))
    checks.append(Check(ok=reply.usage.input_tokens > 0, what="usage by modality: " + _usage_line(reply.usage)))
    return checks


def _transcript_timing(reply: Reply, trace: Trace) -> str:
    if reply.heard is None:
        return "input transcript: none came for this turn"
    seen = trace.received()
    heard = [t for t, kind in seen if "input_audio_transcription.completed" in kind or "input_transcription" in kind]
    done = [t for t, kind in seen if kind == "response.done" or "turn_complete" in kind]
    when = ""
    if heard and done:
        gap = heard[0] - done[0]
        when = f", {abs(gap):.2f} s {'after' if gap > 0 else 'before'} the reply's end"
    return f"input transcript: {reply.heard[:80]!r}{when}"


def _usage_line(usage: Usage) -> str:
    parts = {
        "in text": usage.input_text_tokens,
        "in audio": usage.input_audio_tokens,
        "in image": usage.input_image_tokens,
        "cached": usage.cached_input_tokens,
        "out text": usage.output_text_tokens,
        "out audio": usage.output_audio_tokens,
    }
    return ", ".join(f"{name} {'unknown' if count is None else count}" for name, count in parts.items())


def _session_facts(trace: Trace) -> list[Check]:
    """What the message order shows: the kinds of events in order, errors, and for Gemini
    compression, resumption and goAway."""
    kinds = [kind for _, kind in trace.received()]
    counts = dict.fromkeys(kinds, 0)  # in the order each kind first came
    for kind in kinds:
        counts[kind] += 1
    checks = [
        Check(
            ok=None,
            what="events received (in the order each first came): "
            + ", ".join(kind + (f" x{n}" if n > 1 else "") for kind, n in counts.items()),
        )
    ]
    errors = [
        line["message"]
        for line in trace.lines
        if line["direction"] == "received"
        and (
            line["message"].get("type") == "error" or (line["message"].get("response") or {}).get("status") == "failed"
        )
    ]
    checks.append(
        Check(
            ok=not errors,
            what=f"error events or failed responses: {len(errors)}"
            + (f" (first: {json.dumps(errors[0])[:200]})" if errors else ""),
        )
    )
    setups = [
        line["message"]["setup (as configured)"] for line in trace.lines if "setup (as configured)" in line["message"]
    ]
    if setups:
        checks.append(
            Check(
                ok=all("context_window_compression" in s for s in setups),
                what="every setup asked for context window compression",
            )
        )
        checks.append(
            Check(
                ok=None,
                what=f"resumption handles given: {sum('session_resumption_update' in k for k in kinds)}"
                f"; goAway: {sum('go_away' in k for k in kinds)}",
            )
        )
    return checks


def trace_path(model_id: str) -> Path:
    provider, model = parse_model_id(model_id)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path(f"probe-{provider}-{model.replace('/', '_')}-{stamp}.jsonl")
