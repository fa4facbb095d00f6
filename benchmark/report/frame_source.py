"""Where a run's camera frames came from, as findings.md (under the headline, and in the Perception
section), the viewer and `wearsim simulate` say it: `pictograph`, `synthetic`, `recorded` or `none`,
counted over the camera turns (summary.json `perception.frames`, from each turn's
`glasses.frames_source`); and, when the scene describer was given drawn frames it cannot read (no
offline describer reads a pictograph), that it could not and what reads them instead."""

from __future__ import annotations

from benchmark.scoring.summary_view import RunSummary
from candidates.providers import realtime_models
from perception.describer_spec import DESCRIBERS, cannot_read, readers

SOURCES = ("pictograph", "synthetic", "recorded", "none")
WHAT = {
    "pictograph": "each turn's scene spec drawn as pictures, no caption",
    "synthetic": "the scenario's camera text drawn on a grey card",
    "recorded": "recordings from the media folder",
    "none": "no frame of its own: the camera block was the scenario's written text",
}
MODEL_READERS = (
    f"a model that sees them: a realtime API (`--model {realtime_models()[0][0]}`) "
    "or a vision model as the describer (`--describer openai:MODEL`)"
)


def readers_text(source: str) -> str:
    """What reads frames drawn as `source`: the registry's offline readers, or (none) a model that sees them."""
    names = readers(source)
    if not names:
        return MODEL_READERS
    said = [
        f"`--describer {name}`" + (f" ({DESCRIBERS[name].reads_how})" if DESCRIBERS[name].reads_how else "")
        for name in names
    ]
    return " or ".join(said)


PICTOGRAPH_NOTE = (
    "Frames without a recording were pictographs: each turn's scene spec drawn as pictures "
    "(objects, hands, setting; no caption), so the assistant had to see what changed, not read it."
)


def frame_counts(run: RunSummary) -> dict[str, int]:
    """Camera turns per frame source; a summary without the count (older, or a proactive run) says it
    through the manifest's flags, a text-proxy run has none."""
    manifest, perception = run.manifest, run.perception
    counts = perception.frames if perception is not None else None
    if counts is not None:
        return {source: int(counts[source]) for source in SOURCES if counts.get(source)}
    stream = manifest.via == "stream" or perception is not None
    if stream and (manifest.pictograph_frames or manifest.synthetic_frames):
        return {"pictograph" if manifest.pictograph_frames else "synthetic": 0}  # 0: not counted
    return {} if stream else {"none": 0}


def frame_source(run: RunSummary) -> str:
    """The run's frame source: the kind most of its camera turns had frames of, else `none`."""
    seen = {k: v for k, v in frame_counts(run).items() if k != "none"}
    return max(seen, key=lambda k: (seen[k], k == "pictograph")) if seen else "none"


def frame_source_text(run: RunSummary) -> str | None:
    """ "Frames: pictograph in 94 of 100 camera turns (...), recorded in 6." and the describer note."""
    counts = frame_counts(run)
    if not counts:
        return None
    main, turns = frame_source(run), sum(counts.values())
    if turns:
        rest = [f"{source} in {n}" for source, n in counts.items() if source != main]
        text = (
            f"Frames: {main} in {counts.get(main, 0)} of {turns} camera turns ({WHAT[main]})"
            + (", " + ", ".join(rest) if rest else "")
            + " (a camera turn: Turn 1 or 2 of a played cell; the camera is off on Turn 3)."
        )
    elif main == "none":
        text = "Frames: none (the text proxy: every camera block was the scenario's written text)."
    else:  # a summary made before the count: the manifest's flag
        text = f"Frames: {main} ({WHAT[main]})."
    note = describer_note(run)
    return f"{text} {note}" if note else text


def describer_note(run: RunSummary) -> str | None:
    """When a scene describer was given drawn frames it cannot read: which, why, and what reads them."""
    described = (run.perception.sources.get("camera") or {}).get("perceived") if run.perception else None
    describer, counts = run.manifest.describer, frame_counts(run)
    unread = [s for s in ("pictograph", "synthetic") if s in counts and cannot_read(describer, s)]
    if not unread or not described or describer is None:
        return None
    return " ".join(unreadable_note(describer, source) for source in unread)


def before_run_note(describer: str | None, source: str | None, model_id: str) -> str | None:
    """What `wearsim bench` and `wearsim simulate` say before they play drawn frames (`source`) to a chat
    model behind a describer that cannot read them; None when it can, or a realtime model sees the frames."""
    from candidates.model_ids import is_realtime

    if not source or describer is None or is_realtime(model_id) or not cannot_read(describer, source):
        return None
    return f"note: {unreadable_note(describer, source)}"


def unreadable_note(describer: str, source: str) -> str:
    return (
        f"The `{describer}` describer cannot read {source} frames ({DESCRIBERS[describer].misses}), so the "
        f"camera blocks made of them do not say what the frames show; {source} frames are meant for "
        f"{readers_text(source)}."
    )


def perceived_label(run: RunSummary) -> str:
    """The Perception table's name for a channel made by perception: Whisper, or the describer."""
    describer = run.manifest.describer
    return f"perceived (Whisper; describer `{describer}`)" if describer else "perceived (Whisper, describer)"


def frame_table(run: RunSummary, table) -> list[str]:
    """The Perception section's count of camera turns per frame source (`table`: findings' table helper)."""
    counts = (run.perception.frames if run.perception else None) or {}
    if not counts:
        return []
    rows = [[f"`{source}`", WHAT[source], str(counts.get(source, 0))] for source in SOURCES]
    return [
        "Where the camera turns' frames came from (Turns 1 and 2):",
        "",
        *table(["frames", "what they are", "turns"], rows),
        "",
    ]
