"""findings.md's sweep sections: staleness, frame policy and impairment profile. Each cell is read as
`benchmark.scoring.metrics` writes it (a dict per gap, policy or profile)."""

from __future__ import annotations

from benchmark.report.frame_source import PICTOGRAPH_NOTE
from benchmark.report.text_format import cell_text, seconds, table
from benchmark.scoring.summary_view import RunSummary

NO_FRAMES_WARNING = (
    "No Turn 2 of this sweep sent a camera frame, so the gap cannot change what the model saw: "
    "differences between gaps are noise or speech timing, not staleness. Record frames "
    "(`wearsim serve --record`) or add --synthetic-frames."
)


def staleness_without_frames(run: RunSummary) -> bool:
    """A staleness sweep none of whose Turn 2s sent a frame (older summaries, without the count: False)."""
    rows = [row for gaps in run.by_staleness.values() for row in gaps.values()]
    return bool(rows) and all("with_frames" in row for row in rows) and not any(row["with_frames"] for row in rows)


def _frames_note(run: RunSummary, synthetic: str) -> list[str]:
    """What the frames of a sweep were, when they were drawn: `synthetic`, the note for synthetic frames."""
    if run.manifest.synthetic_frames:
        return [synthetic, ""]
    if run.manifest.pictograph_frames:
        return [PICTOGRAPH_NOTE, ""]
    return []


def staleness_section(run: RunSummary) -> list[str]:
    sweep = run.by_staleness
    if not sweep:
        return []
    lines = [
        "## Staleness sweep",
        "",
        "Turn 2 speech began this many ms after the scene changed (the first Turn 2 frame). Accuracy is "
        "Turn 2 accuracy over all target contexts; 'answered from the earlier scene' is the share of scored "
        "replies labelled `prior` among trials whose target is not `prior`. 95% Wilson intervals.",
        "",
    ]
    lines += _frames_note(
        run,
        "Frames without a recording were synthetic: the authored camera text drawn on a "
        f"plain frame (describer `{run.manifest.describer}`). With the `authored` describer "
        "the assistant sees the text proxy, so only frame timing can move these numbers; a "
        "vision model reading drawn text measures plumbing and timing, not perception.",
    )
    if staleness_without_frames(run):
        lines += [f"**{NO_FRAMES_WARNING}**", ""]
    for condition, gaps in sweep.items():
        ages = any(row.get("frame_age_p50_s") is not None for row in gaps.values())
        rows = [
            [
                f"{gap} ms",
                cell_text(row["accuracy"]),
                cell_text(row["earlier_scene"]),
                *([seconds(row.get("frame_age_p50_s"))] if ages else []),
                str(row["trials"]),
            ]
            for gap, row in gaps.items()
        ]
        header = [
            "gap",
            "Turn 2 accuracy",
            "answered from the earlier scene",
            *(["newest frame's age at the end of speech (median)"] if ages else []),
            "trials",
        ]
        lines += [f"### {condition}", "", *table(header, rows), ""]
    return lines + ["Plot: `plots/staleness.png`.", ""]


POLICY_NOTES = {
    "end": "the newest frame at the end of speech: it sees the moment the question ended, which no "
    "client streaming ahead of the question can; an upper bound",
    "fps": "a fixed rate (Google's Live API console sends about 0.5 a second; pipecat's realtime services at most 1)",
    "speech": "one rate while the user speaks and another otherwise (LiveKit Agents: 1 and 0.3)",
    "change": "a frame when the picture changed, up to a maximum rate",
}
POLICY_HEADER = [
    "policy",
    "Turn 2 accuracy",
    "answered from the earlier scene",
    "stale frame",
    "frame age p50",
    "frame age p95",
    "frames / turn",
    "KB / turn",
    "frames / min",
    "trials",
]


def _policy_row(name: str, cells: dict) -> list[str]:
    kb = cells.get("bytes_sent_per_turn")
    return [
        name,
        cell_text(cells["accuracy"]),
        cell_text(cells["earlier_scene"]),
        cell_text(cells["stale_frame_rate"]) if cells.get("stale_frame_rate") else "n/a",
        seconds(cells.get("frame_age_p50_s")),
        seconds(cells.get("frame_age_p95_s")),
        "n/a" if cells.get("frames_sent_per_turn") is None else f"{cells['frames_sent_per_turn']:.1f}",
        "n/a" if kb is None else f"{kb / 1000:.1f}",
        "n/a" if cells.get("frames_per_minute") is None else f"{cells['frames_per_minute']:.1f}",
        str(cells["trials"]),
    ]


def frame_policy_section(run: RunSummary) -> list[str]:
    sweep = run.by_frame_policy
    if not sweep:
        return []
    policies = list(dict.fromkeys(p for per in sweep.values() for p in per))
    kinds = list(dict.fromkeys(p.split(":")[0] for p in policies))
    lines = [
        "## Frame policy",
        "",
        "Which camera frames reached the assistant. One cell per policy: "
        + "; ".join(f"`{kind}`: {POLICY_NOTES[kind]}" for kind in kinds if kind in POLICY_NOTES)
        + ".",
        "",
        "'Stale frame' is the share of Turn 2 questions whose newest frame sent by the end of speech "
        "still showed the earlier scene (the glasses know which scene each frame shows); 'answered from "
        "the earlier scene' is the share of scored replies labelled `prior` among trials whose target is "
        "not `prior`. Frame age is the newest sent frame's age at the end of Turn 2's speech. Frames and "
        "KB per turn count Turns 1 and 2 (the camera is off on Turn 3). 95% Wilson intervals.",
        "",
    ]
    lines += _frames_note(
        run,
        "Frames without a recording were synthetic (the authored camera text drawn on a "
        f"plain frame, describer `{run.manifest.describer}`): only which frame arrived, and "
        "when, can move these numbers.",
    )
    for condition, per in sweep.items():
        lines += [
            f"### {condition}",
            "",
            *table(POLICY_HEADER, [_policy_row(f"`{p}`", cells) for p, cells in per.items()]),
            "",
        ]
        gaps = [
            (p, gap, cells) for p, per_policy in per.items() for gap, cells in (per_policy.get("by_gap") or {}).items()
        ]
        if len({gap for _, gap, _ in gaps}) > 1:
            lines += [
                f"Per Turn 2 gap (speech began this many ms after the scene changed), {condition}:",
                "",
                *table(
                    ["policy", "gap", *POLICY_HEADER[1:]],
                    [[f"`{p}`", f"{gap} ms", *_policy_row(p, cells)[1:]] for p, gap, cells in gaps],
                ),
                "",
            ]
    return lines + ["Plot: `plots/frame_policy.png` (accuracy and stale-frame rate against frames sent a minute).", ""]


def _number(value, form: str = "{:.3f}") -> str:
    return "n/a" if value is None else form.format(value)


def _against_clean(against: dict | None) -> str:
    if not against or not against["pairs"]:
        return "n/a"
    if against["ci_low"] is None:
        return f"{100 * against['difference']:+.1f} pts, {against['pairs']} pairs"
    return (
        f"{100 * against['difference']:+.1f} pts [{100 * against['ci_low']:+.1f}, "
        f"{100 * against['ci_high']:+.1f}], p = {against['p_value']:.3g}, {against['pairs']} pairs"
    )


def impairment_section(run: RunSummary) -> list[str]:
    sweep = run.by_impairment
    if not sweep:
        return []
    manifest = run.manifest
    seed = manifest.impairment_seed or 0  # older manifests recorded none: the default, 0
    lines = [
        "## Real-world conditions (impairment profiles)",
        "",
        "The simulated glasses played each cell under an impairment profile (media_effects/impairments.toml, "
        "docs/impairments.md): noise and reverb on the audio, blur, darkness, shake and occlusion on the "
        f"frames, latency, loss and a bandwidth cap on the uplink; seed {seed}. "
        "Word error rate: the transcript the assistant got against the line the glasses spoke (mean over "
        "turns). Camera similarity: the share of the authored camera text's words found in the described "
        f"camera block (mean over turns with a described frame; describer `{manifest.describer}`). "
        "Against clean: each impaired cell paired with the same clean cell (scored in both), Turn 2 "
        "accuracy difference with a paired bootstrap interval over scenarios and an exact McNemar test.",
        "",
    ]
    if manifest.describer == "authored":
        lines += [
            "The `authored` describer reads a synthetic frame's text from its JPEG comment, which no "
            "video impairment touches: use `--describer ocr` to let blur and darkness reach the camera "
            "block.",
            "",
        ]
    for condition, rows in sweep.items():
        body = [
            [
                f"`{profile}`",
                cell_text(row["accuracy"]),
                _number(row["word_error_rate"]),
                _number(row["camera_similarity"]),
                seconds(row["reply_done_p50_s"]),
                _number(row["audio_chunks_lost_per_trial"], "{:.1f}"),
                _number(row["frames_lost_per_trial"], "{:.1f}"),
                _against_clean(row.get("against_clean")),
                str(row["trials"]),
            ]
            for profile, row in rows.items()
        ]
        lines += [
            f"### {condition}",
            "",
            *table(
                [
                    "profile",
                    "Turn 2 accuracy",
                    "word error rate",
                    "camera similarity",
                    "reply done p50",
                    "audio chunks lost / trial",
                    "frames lost / trial",
                    "Turn 2 against clean",
                    "trials",
                ],
                body,
            ),
            "",
        ]
    return lines
