"""Whether a stream run's camera text could see: a chat candidate behind a describer that cannot
read its frames is blind, and its numbers measure the text around the camera block, not seeing.

Two ways to know:
- from the manifest, before anything runs (`blind_describer`): the `opencv` and `ocr` describers on
  drawn frames (synthetic: the camera text as a caption; pictograph: a drawn scene) give the same
  few words for every scene ("Mostly white. The view is bright and sharp.");
- from the records (`same_text_trials`): the camera text the describer gave was the same for every
  scene of a trial (a proactive trial's probes over two or more scenes; a Q&A trial's Turn 1 and
  Turn 2 perceived camera blocks), in most of the trials where it could differ.

A realtime API takes the frames itself: no describer, never blind by this test.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.records import TrialRecord
from perception.describer_spec import blind_names


def blind_describer(manifest: dict) -> str | None:
    """Why the run's describer cannot read its frames (one clause), or None."""
    from candidates.model_ids import is_realtime

    describer = manifest.get("describer")
    if manifest.get("via") != "stream" or not describer or not isinstance(describer, str):
        return None
    try:  # a manifest that names no model (or one no longer known) is read as a chat model's
        realtime = is_realtime(str(manifest.get("candidate_model") or ""))
    except ValueError:
        realtime = False
    if realtime:
        return None
    if describer.partition(":")[0] not in blind_names():  # the registry's `blind` describers
        return None
    if manifest.get("pictograph_frames"):
        frames = "pictograph"
    elif manifest.get("synthetic_frames") or manifest.get("proactive"):
        frames = "synthetic"  # a proactive scene has no recording: it is always drawn
    else:
        return None
    return f"the {describer} describer cannot read {frames} frames"


def _same_text(record: TrialRecord) -> bool | None:
    """The describer gave one camera text for every scene of the trial (None: it could not differ)."""
    if record.watching is not None:
        seen: dict[int, set[str]] = {}
        for probe in record.watching.probes:
            if probe.camera is not None and probe.scene is not None:
                seen.setdefault(probe.scene, set()).add(probe.camera)
        if len(seen) < 2:
            return None
        return len(set().union(*seen.values())) == 1
    blocks = [
        t.input.camera_block
        for t in record.turns[:2]
        if t.input is not None and t.input.camera_source == "perceived" and t.input.camera_block
    ]
    return None if len(blocks) < 2 else blocks[0] == blocks[1]


def same_text_trials(trials: Sequence[TrialRecord]) -> tuple[int, int]:
    """(trials whose camera text was the same for every scene, trials where it could differ)."""
    verdicts = [v for v in (_same_text(t) for t in trials) if v is not None]
    return sum(verdicts), len(verdicts)


def blind_camera(trials: Sequence[TrialRecord], manifest: dict) -> dict | None:
    """summary.json's `blind_camera`: `{"reason", "same_text", "trials"}` when the camera text was blind."""
    same, of = same_text_trials(trials)
    described = any(t.input is not None and t.input.camera_source == "perceived" for r in trials for t in r.turns)
    # only a describer that made camera text (a perceived turn, a proactive trial's probes) can have been blind
    reason = blind_describer(manifest) if described or any(r.watching for r in trials) else None
    if reason is None and of and same * 2 > of:
        reason = f"the camera text was the same for every scene in {same} of {of} trials"
    if reason is None:
        return None
    return {"reason": reason, "same_text": same, "trials": of}


def blind_line(block: dict | None) -> str | None:
    """The headline's sentence for a blind run."""
    if not block:
        return None
    return (
        f"Blind camera: {block['reason']}, so the assistant never saw the scene; these numbers measure the "
        "words around the camera block, not seeing (--describer authored reads drawn frames; a model "
        "describer or a realtime API sees them)."
    )
