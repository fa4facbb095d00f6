"""What the findings' headline adds when a stream run's camera text was blind (its describer could not
read its frames), or when its camera blocks were mostly the scenario's
written text: the turns where no frame reached the assistant (no recording, synthetic or pictograph
frame existed for them, or none was sent), so the authored camera text stood in for perception.
Counted from the records' provenance (summary.json `perception.sources.camera`)."""

from __future__ import annotations

from benchmark.scoring.summary_view import RunSummary


def written_camera_turns(run: RunSummary) -> tuple[int, int] | None:
    """(camera turns whose block was the authored text, camera turns) of a stream run, else None. A camera
    turn is one with a camera block: Turn 1 or 2 of a played cell (the camera is off on Turn 3), the
    turns the Frames line counts too."""
    data = run.perception
    if data is None or not data.turns:
        return None
    camera = data.sources.get("camera") or {}
    return int(camera.get("authored", 0)), sum(int(n) for source, n in camera.items() if source != "none")


def camera_text_note(run: RunSummary) -> str | None:
    """The sentences: the camera text was blind (`benchmark.scoring.blind`), or the camera block was the
    written text in most turns (more than half)."""
    from benchmark.scoring.blind import blind_line

    notes = [note for note in (blind_line(run.blind_camera), _written_note(run)) if note]
    return " ".join(notes) or None


def _written_note(run: RunSummary) -> str | None:
    counts = written_camera_turns(run)
    if counts is None or counts[0] * 2 <= counts[1]:
        return None
    written, turns = counts
    return (
        f"In {written} of the {turns} camera turns (Turns 1 and 2 of each played cell) no frame reached the "
        "assistant, so it got the scenario's written description of the scene instead: this number measures "
        f"the glasses' camera only in the other {turns - written}."
    )
