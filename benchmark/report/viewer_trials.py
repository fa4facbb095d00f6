"""The viewer's trial rows: one `<details>` per trial (its judges, code signals, messages as sent, turns
with their provenance, latencies, frames and what the stream kept), the filters above them, and the
scenario frames they show (`Frames`). `benchmark.report.viewer` puts them in the page."""

from __future__ import annotations

import hashlib
import json
from html import escape
from pathlib import Path

from benchmark.faults import fault_of
from benchmark.report import watch_view
from benchmark.report.cost import tokens_text, usd
from benchmark.report.run_files import MAX_FRAME_BYTES, InlineBudget, image_data_uri
from benchmark.report.timeline import RunFiles, stream_turn_html
from benchmark.scoring.summary_view import RunManifest
from core.records import TrialRecord, TurnResult
from core.safe_files import inside
from core.scenario import BankError, Scenario, load_bank

# the media library (the same folder as media_effects.media.MEDIA_ROOT; benchmark/ does not import the simulator)
MEDIA_ROOT = Path(__file__).resolve().parents[2] / "media"
TURN_FRAMES = {1: ("context", "turn_1"), 2: ("turn_2",)}  # frame files shown under each turn
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")
OUTCOMES = ("pass", "miss", "unscored", "error")


def cell_key(record: TrialRecord) -> str:
    return "|".join(str(part) for part in record.cell)


def trial_anchor(record: TrialRecord) -> str:
    """The id of the trial's row in the viewer: stable, and free of characters a URL fragment would escape."""
    return "t-" + hashlib.sha256(cell_key(record).encode("utf-8")).hexdigest()[:12]


def outcome(trial: TrialRecord) -> str:
    if trial.errored:
        return "error"
    if trial.watching is not None:  # a proactive trial: the event caught, or a quiet control left quiet
        return "pass" if trial.watching.passed else "miss"
    if not trial.scored:
        return "unscored"
    return "pass" if trial.passed else "miss"


def open_bank(manifest: RunManifest) -> tuple[dict[str, Scenario], str]:
    """The run's bank (manifest's bank_source when it exists, else the shipped bank) by scenario id."""
    source = manifest.bank_source
    path = Path(source) if source and Path(source).exists() else None
    try:
        bank = load_bank(path)
    except BankError as exc:
        return {}, f"authored text not shown: {exc.problems[0]}"
    return {s.scenario_id: s for s in bank.scenarios}, f"authored text from {bank.source}"


class Frames:
    """Scenario frames, each file read once (under `MAX_FRAME_BYTES`, as its format starts); trial
    rows refer to them by key."""

    def __init__(self, root: Path, budget: InlineBudget | None = None):
        self.root = Path(root)
        self.budget = budget if budget is not None else InlineBudget()  # the page's, shared with its plots
        self.uris: dict[str, str] = {}
        self._keys: dict[Path, str] = {}
        self.refused: list[str] = []

    def key(self, scenario_id: str, name: str) -> str | None:
        if Path(scenario_id).name != scenario_id or scenario_id.startswith("."):
            return None
        for suffix in IMAGE_SUFFIXES:
            path = self.root / scenario_id / f"{name}{suffix}"
            if inside(path, self.root):  # never a linked file from outside the media folder
                if path not in self._keys:
                    uri, refused = image_data_uri(path, self.root, MAX_FRAME_BYTES, "scenario frame", self.budget)
                    if uri is None:
                        self.refused.append(refused or str(path))
                        return None
                    self._keys[path] = f"f{len(self._keys)}"
                    self.uris[self._keys[path]] = uri
                return self._keys[path]
        return None

    def script(self) -> str:
        text = json.dumps(self.uris).replace("</", "<\\/")  # nothing in it can close the script element
        return f'<script id="frames" type="application/json">{text}</script>'


NONE = "none"  # a filter's value for a trial without that axis (no sweep, no profile, no fault)


def axes(trial: TrialRecord) -> dict[str, str]:
    """The values a trial is filtered by (data attributes of its row)."""

    def value(v) -> str:
        return NONE if v is None else str(v)

    # a sweep's policy, else the one in force on the stream (the server's default)
    policy = trial.frame_policy or next((t.frames.policy for t in trial.turns if t.frames.policy), None)
    if trial.watching is not None and policy is None:
        policy = watch_view.DEFAULT_POLICY  # a proactive session's default
    return {
        "condition": trial.condition,
        "cue": trial.cue_type,
        "outcome": outcome(trial),
        "strategy": value(trial.proactive),
        "policy": value(policy),
        "profile": value(getattr(trial, "impairment", None)),
        "gap": value(trial.staleness_ms),
        "fault": value(fault_of(trial)),
    }


FILTERS = (
    ("condition", "condition"),
    ("shift type", "cue"),
    ("outcome", "outcome"),
    ("strategy", "strategy"),
    ("frame policy", "policy"),
    ("profile", "profile"),
    ("gap (ms)", "gap"),
    ("fault", "fault"),
)


def filters_html(trials: list[TrialRecord]) -> str:
    def select(label: str, key: str, values) -> str:
        options = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
        return f'<label>{label} <select data-filter="{key}"><option value="">all</option>{options}</select></label>'

    found = [axes(t) for t in trials]

    def values(key: str) -> list[str]:
        if key == "outcome":
            return list(OUTCOMES)
        seen = {row[key] for row in found}
        return sorted(seen - {NONE}, key=lambda v: (len(v), v) if key == "gap" else v) + (
            [NONE] if NONE in seen else []
        )

    shown = [(label, key) for label, key in FILTERS if key != "strategy" or any(r[key] != NONE for r in found)]
    return (
        '<div class="filters">'
        + "".join(select(label, key, values(key)) for label, key in shown)
        + '<span id="shown" class="note"></span></div>'
    )


# ---------------------------------------------------------------- one trial


def verdicts_html(trial: TrialRecord) -> str:
    rows = [
        ("Turn 2 judge", trial.turn_2_judge, trial.turn_2_previous_judge_label),
        ("Turn 2 ranking judge", trial.turn_2_ranking_judge, None),
        ("Turn 3 judge", trial.turn_3_judge, trial.turn_3_previous_judge_label),
    ]
    out = ["<table><tr><th></th><th>label</th><th>judge</th><th>rationale</th></tr>"]
    for name, verdict, previous in rows:
        if verdict is None:
            continue
        label = verdict.label or f"unscored ({verdict.unscored_reason or 'no reason given'})"
        if previous:
            label += f" (before rescore: {previous})"
        raw = f"<details><summary>raw reply</summary><pre>{escape(verdict.raw)}</pre></details>" if verdict.raw else ""
        out.append(
            f'<tr><th>{name}</th><td class="label">{escape(label)}</td><td>{escape(verdict.judge)}</td>'
            f"<td>{escape(verdict.rationale)}{raw}</td></tr>"
        )
    return "\n".join(out + ["</table>"]) if len(out) > 1 else '<p class="note">No judge verdict recorded.</p>'


def signals_html(signals: dict | None) -> str:
    if not signals:
        return '<p class="note">No code signals recorded.</p>'

    def hit(h) -> str:
        return h if isinstance(h, str) else json.dumps(h, ensure_ascii=False)

    rows = []
    for kind, value in signals.items():
        if isinstance(value, dict):
            parts = [
                f"{name}: " + (", ".join(map(hit, hits)) if isinstance(hits, list) else hit(hits))
                for name, hits in value.items()
                if hits
            ]
            text = "; ".join(parts) or "no hits"
        else:
            text = "none" if value is None else hit(value)
        rows.append(f"<tr><th>{escape(str(kind))}</th><td>{escape(text)}</td></tr>")
    return "<table>" + "".join(rows) + "</table>"


def messages_html(trial: TrialRecord) -> str:
    out = []
    if trial.system_prompt:
        out.append(f"<details><summary>system prompt</summary><pre>{escape(trial.system_prompt)}</pre></details>")
    for message in trial.messages:
        out.append(
            f'<div class="msg {escape(message.role)}"><span class="role">{escape(message.role)}</span>'
            f"<pre>{escape(message.text)}</pre></div>"
        )
    if not trial.messages:
        replies = [
            ("Turn 1 reply", trial.turn_1_response),
            ("Turn 2 reply", trial.turn_2_response),
            ("Turn 3 reply", trial.turn_3_response),
        ]
        shown = [
            f'<div class="msg assistant"><span class="role">{n}</span><pre>{escape(t)}</pre></div>'
            for n, t in replies
            if t
        ]
        if shown:
            out += ['<p class="note">No messages recorded; the replies:</p>', *shown]
        elif trial.watching is not None:
            out.append(
                '<p class="note">A proactive trial asks no questions: what the assistant said, and when, is '
                "under What the assistant watched.</p>"
            )
        else:
            out.append('<p class="note">No messages and no replies were recorded for this trial.</p>')
    return "\n".join(out)


def authored(scenario: Scenario, turn: int, repair_style: str) -> dict[str, str | None]:
    if turn == 1:
        return {"speech": scenario.turn_1_user, "camera": scenario.turn_1_image, "context": scenario.context_image}
    if turn == 2:
        return {"speech": scenario.turn_2_user, "camera": scenario.turn_2_image}
    return {"speech": scenario.repair_anchor(repair_style)}


def turn_facts(result: TurnResult) -> dict[str, str]:
    """Provenance per channel, reply timings and tokens, the stream's latencies and what the glasses played."""
    i, reply = result.input, result.reply
    facts = {
        "camera source": i.camera_source or "none",
        "speech source": i.speech_source or "none",
        "context source": i.context_source or "none",
        "reply latency (from the request to the model)": f"{reply.latency_s:.2f} s",
        "first token (from the request to the model)": "-"
        if reply.first_token_s is None
        else f"{reply.first_token_s:.2f} s",
        "tokens in/out": f"{reply.usage.input_tokens}/{reply.usage.output_tokens}"
        if reply.usage.reported
        else "unknown",
        "tokens by modality": tokens_text(reply.usage.to_json())
        if reply.usage.reported
        else "unknown (the provider did not report usage)",
    }
    facts.update(
        {
            k: "-" if v is None else f"{v:.3f} s" if isinstance(v, float) else str(v)
            for k, v in result.metrics.to_json().items()
        }
    )
    facts.update({k: str(v) for k, v in result.glasses.to_json().items()})
    return facts


def differences_html(result: TurnResult, scenario: Scenario, repair_style: str) -> str:
    """Each perceived channel next to the scenario's authored text, where they differ."""
    i = result.input
    sent = {
        "speech": (i.speech, i.speech_source),
        "camera": (i.camera_block, i.camera_source),
        "context": (i.context_block, i.context_source),
    }
    out = []
    for channel, text in authored(scenario, result.turn, repair_style).items():
        heard, source = sent[channel]
        if source == "perceived" and (heard or "").strip() != (text or "").strip():
            out.append(
                f'<div class="diff"><div><b>Turn {result.turn} {channel}, perceived</b>'
                f"<pre>{escape(heard or '')}</pre></div><div><b>Turn {result.turn} {channel}, authored</b>"
                f"<pre>{escape(text or '(none)')}</pre></div></div>"
            )
    return "\n".join(out)


def turns_html(
    trial: TrialRecord, scenario: Scenario | None, frames: Frames, repair_style: str, files: RunFiles | None = None
) -> str:
    facts = {t.turn: turn_facts(t) for t in trial.turns}
    names = list(dict.fromkeys(name for per in facts.values() for name in per))
    head = "".join(f"<th>Turn {turn}</th>" for turn in facts)
    rows = "".join(
        f"<tr><th>{escape(str(name))}</th>"
        + "".join(f"<td>{escape(per.get(name, '-'))}</td>" for per in facts.values())
        + "</tr>"
        for name in names
    )
    out = [f"<table><tr><th></th>{head}</tr>{rows}</table>"]
    if scenario is None:
        if trial.watching is None:  # a proactive scenario has no authored turn text to compare
            out.append('<p class="note">Scenario not in the bank: authored text not shown.</p>')
    else:
        out += [differences_html(t, scenario, repair_style) for t in trial.turns]
    keys = [
        ("context frame" if name == "context" else f"Turn {turn} frame", frames.key(trial.scenario_id, name))
        for turn in facts
        for name in TURN_FRAMES.get(turn, ())
    ]
    images = "".join(
        f'<figure><img data-frame="{k}" alt="{escape(n)}"><figcaption>{escape(n)}</figcaption></figure>'
        for n, k in keys
        if k
    )
    streamed = [stream_turn_html(t, files) for t in trial.turns] if files is not None else []
    streamed = [block for block in streamed if block]
    return "\n".join(
        out
        + ([f'<div class="frames">{images}</div>'] if images else [])
        + (["<h3>What the assistant saw and heard</h3>", *streamed] if streamed else [])
    )


def trial_html(
    trial: TrialRecord,
    bank: dict[str, Scenario],
    frames: Frames,
    repair_style: str,
    prices=None,
    files: RunFiles | None = None,
) -> str:
    result = outcome(trial)
    label = trial.turn_2_label or "unscored"
    if trial.watching is not None:
        label = f"{len(trial.watching.remarks)} remark(s), {trial.watching.count('false_alarm')} false alarm(s)"
    row = axes(trial)
    sweep = "".join(
        f" · {name} {escape(row[key])}"
        for name, key in (
            ("strategy", "strategy"),
            ("policy", "policy"),
            ("gap", "gap"),
            ("profile", "profile"),
            ("fault", "fault"),
        )
        if row[key] != NONE
    )
    head = (
        f'<span class="badge o-{result}">{result}</span>{escape(trial.scenario_id)} · {escape(trial.condition)}'
        f" · trial {trial.trial} · {escape(trial.cue_type)} · target {escape(trial.target_context)}"
        f" · judge {escape(label)}{sweep}"
    )
    wall = "-" if trial.wall_s is None else f"{trial.wall_s:.1f} s"
    facts = (
        f"difficulty {trial.difficulty_tier}, domain {trial.activity_domain or '-'}, via {trial.via or '-'}, "
        f"candidate {trial.candidate_model or '-'}, wall {wall}"
    )
    if prices is not None and not trial.errored:
        from benchmark.scoring.cost import candidate_cost, judge_cost

        facts += (
            f", cost: candidate {usd(candidate_cost(trial, prices).usd)}, judge {usd(judge_cost(trial, prices).usd)}"
        )
    body = [f'<p class="note">{escape(facts)}</p>']
    if trial.error:
        body.append(f'<p class="o-error"><b>error:</b> {escape(trial.error)}</p>')
    if trial.watching is not None:
        body += ["<h3>What the assistant watched</h3>", watch_view.watching_html(trial.watching, files)]
    else:
        body += [
            "<h3>Judges</h3>",
            verdicts_html(trial),
            "<h3>Code signals (Turn 2)</h3>",
            signals_html(trial.turn_2_code_signals),
        ]
    body += ["<h3>Messages as sent</h3>", messages_html(trial)]
    if trial.turns:
        scenario = bank.get(trial.scenario_id)
        body += ["<h3>Turns</h3>", turns_html(trial, scenario, frames, repair_style, files)]
    data = "".join(f' data-{key}="{escape(value)}"' for key, value in row.items())
    return (
        f'<details class="trial" id="{trial_anchor(trial)}"{data}><summary>{head}</summary>\n'
        + "\n".join(body)
        + "\n</details>"
    )
