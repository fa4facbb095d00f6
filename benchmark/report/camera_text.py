"""What the findings' headline adds when a stream run's camera text was blind (its describer could not
read its frames), or when its camera blocks were mostly the scenario's
written text: the turns where no frame reached the assistant (no recording, synthetic or pictograph
frame existed for them, or none was sent), so the authored camera text stood in for perception.
Counted from the records' provenance (summary.json `perception.sources.camera`)."""

from __future__ import annotations


def written_camera_turns(summary: dict) -> tuple[int, int] | None:
    """(turns whose camera block was the authored text, turns played) of a stream run, else None."""
    data = summary.get("perception")
    if not data or not data.get("turns"):
        return None
    return int((data.get("sources", {}).get("camera") or {}).get("authored", 0)), int(data["turns"])


def camera_text_note(summary: dict) -> str | None:
    """The sentences: the camera text was blind (`benchmark.scoring.blind`), or the camera block was the
    written text in most turns (more than half)."""
    from benchmark.scoring.blind import blind_line

    notes = [note for note in (blind_line(summary.get("blind_camera")), _written_note(summary)) if note]
    return " ".join(notes) or None


def _written_note(summary: dict) -> str | None:
    counts = written_camera_turns(summary)
    if counts is None or counts[0] * 2 <= counts[1]:
        return None
    authored, turns = counts
    return (
        f"Mostly the text proxy's camera: the camera block was the scenario's written text in {authored} "
        f"of {turns} turns (no frame reached the assistant in them: no recording exists for them, or none "
        "was sent), so this number measures perception's camera only in the rest."
    )
