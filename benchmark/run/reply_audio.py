"""Spoken replies (`--output audio`) and proactive remarks saved as WAVs under `RUN_DIR/audio/`, each
record then naming its files; a write that fails raises `TranscriptWriteError`."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from benchmark.run.errors import write_failed
from benchmark.run.outputs import AUDIO_DIR
from core.records import TrialRecord


def _file_name(name: str) -> str:
    """A bank's id or condition name as a file name, never a path."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "_"


def save_reply_audio(run_dir: Path, record: TrialRecord) -> TrialRecord:
    """The record with each spoken reply saved as a WAV under RUN_DIR/audio/
    (the reply then names the file) and its voice-to-voice time measured on
    that audio: the first reply audio plus the audio's leading silence (the
    voice activity model finds the first speech)."""
    from core.candidate import REPLY_AUDIO_RATE
    from media_effects.audio import write_wav
    from perception.speech import speech_onset_s

    gap = "" if record.staleness_ms is None else f"-s{record.staleness_ms}"
    gap += "" if record.frame_policy is None else f"-{_file_name(record.frame_policy.replace(':', '-'))}"
    gap += "" if record.impairment is None else f"-{_file_name(record.impairment)}"
    gap += "" if record.proactive is None else f"-{_file_name(record.proactive.replace(':', '-'))}"
    if record.watching is not None and record.watching.audio:
        record = record.replace(watching=save_remark_audio(run_dir, record, gap))
    turns = []
    for turn in record.turns:
        reply = turn.reply
        if reply.audio:
            name = (
                Path(AUDIO_DIR)
                / _file_name(record.condition)
                / f"{_file_name(record.scenario_id)}-t{record.trial}{gap}-turn{turn.turn}.wav"
            )
            try:
                write_wav(run_dir / name, reply.audio, REPLY_AUDIO_RATE, root=run_dir)
            except OSError as exc:
                raise write_failed(run_dir / name, exc) from None
            onset = speech_onset_s(reply.audio, REPLY_AUDIO_RATE)
            voice = None if onset is None or reply.first_audio_s is None else reply.first_audio_s + onset
            reply = replace(reply, audio=b"", audio_file=name.as_posix(), first_voice_s=voice)
        turns.append(replace(turn, reply=reply))
    return record.replace(turns=tuple(turns))


def save_remark_audio(run_dir: Path, record: TrialRecord, gap: str):
    """The proactive record's spoken remarks saved as WAVs under RUN_DIR/audio/; each probe then
    names its file. Returns the new `Watching`."""
    from core.candidate import REPLY_AUDIO_RATE
    from media_effects.audio import write_wav

    watching = record.watching
    if watching is None:  # (the caller saves a proactive record's remarks only)
        raise ValueError(f"{record.scenario_id}: not a proactive record")
    files = {}
    for n, pcm in watching.audio:
        name = (
            Path(AUDIO_DIR)
            / _file_name(record.condition)
            / f"{_file_name(record.scenario_id)}-t{record.trial}{gap}-remark{n}.wav"
        )
        try:
            write_wav(run_dir / name, pcm, REPLY_AUDIO_RATE, root=run_dir)
        except OSError as exc:
            raise write_failed(run_dir / name, exc) from None
        files[n] = name.as_posix()
    probes = tuple(replace(p, audio_file=files.get(p.n, p.audio_file)) for p in watching.probes)
    return watching.replace(probes=probes, audio=())
