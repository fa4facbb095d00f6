"""The line every plot that shows a score carries under its title: which candidate was scored and by which
judge, so a bar pasted into a slide still says whose number it is (and that the bundled model is a
stand-in, and the lexical judge not the publication judge). Read from the summary's manifest alone."""

from __future__ import annotations

from benchmark.judges.kinds import offline_kind
from benchmark.scoring.summary_view import RunManifest
from candidates.providers import bundled_model_id

STAND_IN = bundled_model_id()  # the bundled 135M-parameter model: there so every part runs without a key


def run_caption(manifest: RunManifest) -> str:
    """ "candidate local (stand-in model); judge lexical (not the publication judge)"; a field the manifest
    lacks is said to be not recorded."""
    candidate = manifest.candidate_model or "not recorded"
    judge = manifest.judge_model or manifest.judge_family or "not recorded"
    if candidate == STAND_IN:
        candidate += " (stand-in model)"
    if kind := offline_kind(judge):
        judge += kind.caveat
    return f"candidate {candidate}; judge {judge}"
