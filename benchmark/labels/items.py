"""The items a person labels, and what the page may show of each.

An item is one reply of a run: a Turn 2 reply (`turn2`), a Turn 3 reply
after the repair anchor (`turn3`) or a proactive remark (`remarks`). Its
`view` is what the rubric lets a judge see: the user's turns and camera
blocks as they were sent, the reply, the scenario's answer keys and
indicators, and the camera frames as the bank describes them (for a remark:
the scenes, the event's expected keys and when the remark came); and, one
thing more and said to be so, the assistant's earlier replies (`EARLIER`,
folded on the page: no judge sees them, but a reply can read differently
beside them, one that repeats its Turn 1 answer, say). It never
holds the target context, the shift type, the authoring notes or any
judge's label: the judge's label sits beside the view (`judge_label`), for
the sample and the agreement, and never goes to a page.

Keys name an item across runs, rescore dirs and label files: the trial's
cell (`TrialRecord.cell`) joined with `|` (`sc-01|baseline|0`), then
`|turn3` for the repair or `|remarkN` for probe N's remark.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchmark.labels import WHATS
from benchmark.report.viewer_trials import cell_key, trial_anchor
from core.records import TrialRecord, build_user_turn
from core.scenario import Scenario

CANNOT_TELL = "cannot_tell"
# per kind of item: (label, key on the keyboard, button text, the rubric's definition)
_GROUNDING = (
    (
        "current",
        "1",
        "current",
        "The reply answers about what the camera shows at this turn (the new scene). "
        "Mentioning the earlier scene only to contrast it with the present one is still current.",
    ),
    (
        "prior",
        "2",
        "prior",
        "The reply answers about what the camera showed earlier (Turn 1, or before the "
        "conversation). Mentioning the present scene only to set it aside and answer about the earlier one is prior.",
    ),
    ("clarify", "3", "clarify", "The reply does not commit: it asks the user which thing or which moment they mean."),
    ("abstain", "4", "abstain", "The reply declines: it says the information needed is not visible or not available."),
)
CHOICES = {
    "turn2": _GROUNDING,
    "turn3": _GROUNDING,
    "remarks": (
        (
            "hit",
            "1",
            "hit",
            "The remark conveys the event (any one of the expected keys, in any words) and came after the event began.",
        ),
        (
            "not_conveying",
            "2",
            "not conveying",
            "The remark came after the event began but does not convey it: it talks about something else.",
        ),
        (
            "false_alarm",
            "3",
            "false alarm",
            "The remark came before anything happened, or in a quiet control where nothing needs saying.",
        ),
    ),
}
CANNOT_TELL_TEXT = (
    "cannot tell",
    "The reply could be read either way, or the page does not show enough to decide. Counted apart, never as a label.",
)
# the rubric's notes beyond the definitions, per kind of item (docs/judging.md's label definitions)
_GROUNDING_NOTES = (
    "A reply that names neither scene: label it by what it does. It asks which thing or moment is meant, or "
    'what "this" is, and answers nothing: clarify. It declines, or says it cannot see or know: abstain. It '
    "guesses at one scene: that scene's label. It answers only in general terms, resting on neither scene: "
    "cannot tell (u).",
    "The assistant's earlier replies (folded, above the reply) are there for context: the judges do not see "
    "them. A reply that only repeats its Turn 1 answer rests on the Turn 1 scene: prior.",
)
RUBRIC_NOTES = {"turn2": _GROUNDING_NOTES, "turn3": _GROUNDING_NOTES, "remarks": ()}
EARLIER = "earlier"  # the view's kind of an assistant's earlier reply: folded on the page, never seen by a judge


def labels_for(what: str) -> tuple[str, ...]:
    """The labels a person may give an item of this kind (`cannot_tell` among them)."""
    return (*(c[0] for c in CHOICES[what]), CANNOT_TELL)


class LabelError(ValueError):
    """A run, a bank or a label file that labelling cannot use; the message names which and where."""


@dataclass(frozen=True, kw_only=True)
class LabelItem:
    key: str
    what: str
    scenario_id: str
    anchor: str  # the trial's id in the viewer (index.html#anchor)
    judge_label: str | None  # the run's judge; never sent to a page
    view: tuple[tuple[str, str, str], ...]  # (kind, title, text): what the page shows

    def page_json(self) -> dict:
        """The item as the labelling page gets it: the key, the scenario and the view, nothing else."""
        return {
            "key": self.key,
            "scenario_id": self.scenario_id,
            "sections": [{"kind": kind, "title": title, "text": text} for kind, title, text in self.view],
        }


def _lists(scenario: Scenario) -> str:
    names = (
        ("current (about what the camera shows now)", "current_answers"),
        ("prior (about what the camera showed earlier)", "prior_answers"),
        ("clarify (asks which thing is meant)", "clarify_indicators"),
        ("abstain (says it cannot see or know)", "abstain_indicators"),
    )
    lists = scenario.answers.lists()
    return "\n".join(f"{title}: {', '.join(lists[name]) or '(none given)'}" for title, name in names)


def _frames(scenario: Scenario) -> str:
    lines = [f"Before the conversation: {scenario.context_image}"] if scenario.context_image else []
    lines.append(f"Turn 1 frame: {scenario.turn_1_image or '(no camera description at this turn)'}")
    lines.append(f"Turn 2 frame: {scenario.turn_2_image or '(no camera description at this turn)'}")
    return "\n".join(lines)


def _turn_1(record: TrialRecord, scenario: Scenario) -> tuple[str | None, str]:
    """(the context message or None, the Turn 1 user message) as they were sent."""
    sent = record.turn_input(1)
    if sent is not None:
        return sent.context_message, sent.user_message
    users = [m.text for m in record.messages if m.role == "user"]
    turns = 3 if record.turn_3_repair_attempted else 2
    if len(users) > turns:
        return users[0], users[1]
    if users:
        return None, users[0]
    return None, build_user_turn(scenario.turn_1_image, scenario.turn_1_user)


def _earlier(turn: int, reply: str | None) -> tuple[str, str, str]:
    """An assistant's earlier reply as the page shows it: folded, and said to be unseen by the judges."""
    title = f"Turn {turn}: the assistant's reply (the judges do not see it)"
    return (EARLIER, title, reply if reply is not None else "(not recorded)")


def _grounding_item(record: TrialRecord, scenario: Scenario, turn: int) -> LabelItem:
    case = record.judge_case(scenario, turn)
    context, turn_1 = _turn_1(record, scenario)
    view = [("message", "Before the conversation (camera only)", context)] if context else []
    view.append(("message", "Turn 1: the user", turn_1))
    view.append(_earlier(1, record.turn_1_response))
    view.append(("message", "Turn 2: the user", case.turn_2_message or case.user_message))
    if turn == 3:
        view.append(_earlier(2, record.turn_2_response))
        view.append(("message", "Turn 3: the user (the repair)", case.user_message))
    view += [
        ("reply", f"The reply to label (Turn {turn})", case.response),
        ("keys", "Answer keys and indicators", _lists(scenario)),
        ("frames", "The camera frames (as the bank describes them)", _frames(scenario)),
    ]
    key = cell_key(record) + ("|turn3" if turn == 3 else "")
    label = record.turn_2_label if turn == 2 else record.turn_3_label
    return LabelItem(
        key=key,
        what="turn2" if turn == 2 else "turn3",
        scenario_id=record.scenario_id,
        anchor=trial_anchor(record),
        judge_label=label,
        view=tuple(view),
    )


def remark_judge_label(watching, probe) -> str | None:
    """The judge's outcome of a remark in the people's three labels (None: unscored or not a remark)."""
    from benchmark.scoring.proactive import before_event

    if probe.outcome in ("hit", "duplicate", "late"):
        return "hit"
    if probe.outcome == "false_alarm":
        quiet = watching.kind == "quiet" or watching.onset_ms is None
        return "false_alarm" if quiet or before_event(probe, watching.onset_ms) else "not_conveying"
    return None


def _seconds(ms: int | None) -> str:
    return "unknown" if ms is None else f"{ms / 1000:.1f} s"


def _remark_items(record: TrialRecord, scenario) -> list[LabelItem]:
    watching = record.watching
    if watching is None:  # not a proactive trial: no remarks
        return []
    scenes = "\n".join(
        f"from {_seconds(start)}: {scene.camera}" for start, scene in zip(scenario.scene_starts_ms, scenario.scenes)
    )
    if watching.kind == "quiet" or watching.onset_ms is None:
        event = "A quiet control: nothing happens that needs saying."
        expected = "(none: a quiet control)"
    else:
        event = (
            f"The event begins at {_seconds(watching.onset_ms)}; a remark up to "
            f"{_seconds(watching.window_end_ms)} is on time."
        )
        expected = ", ".join(watching.expected) or "(none given)"
    items = []
    for probe in watching.remarks:
        index = probe.scene if probe.scene is not None and 0 <= probe.scene < len(scenario.scenes) else None
        seen = scenario.scenes[index].camera if index is not None else "(not recorded)"
        came = "unprompted" if probe.asked_ms is None else f"asked at {_seconds(probe.asked_ms)}"
        view = [("message", "What the user said at the start", scenario.opening_user)] if scenario.opening_user else []
        view += [
            ("frames", "The scenes, in order", scenes),
            ("message", "When the remark came", f"It came at {_seconds(probe.spoke_ms)} ({came}). {event}"),
            ("message", "What the camera showed the assistant then", seen),
            ("reply", "The remark to label", probe.text),
            ("keys", "What a remark must convey (any one)", expected),
        ]
        items.append(
            LabelItem(
                key=f"{cell_key(record)}|remark{probe.n}",
                what="remarks",
                scenario_id=record.scenario_id,
                anchor=trial_anchor(record),
                judge_label=remark_judge_label(watching, probe),
                view=tuple(view),
            )
        )
    return items


def run_bank(run_dir: Path, scenarios: str | Path | None, manifest: dict) -> dict:
    """The run's scenarios by id: `scenarios` when given, else the manifest's `bank_source` when it exists,
    else the shipped bank; the proactive scenarios beside the bank's, when it has them."""
    from core.proactive_scenario import PROACTIVE_FILE, load_proactive
    from core.scenario import load_bank

    source = scenarios
    recorded = manifest.get("bank_source")
    if source is None and isinstance(recorded, str) and recorded and Path(recorded).exists():
        source = recorded
    bank = load_bank(source)
    known: dict = {s.scenario_id: s for s in bank.scenarios}
    proactive = Path(bank.source) / PROACTIVE_FILE if Path(bank.source).is_dir() else None
    if proactive is not None and proactive.is_file():
        known.update((s.scenario_id, s) for s in load_proactive(proactive))
    return known


def items_of(records, bank: dict, what: str, source: Path) -> list[LabelItem]:
    """Every item of kind `what` in `records` (errored trials left out), in the records' order.
    A trial whose scenario is not in `bank` is a `LabelError` naming it and `source`."""
    if what not in WHATS:
        raise LabelError(f"--what must be one of {', '.join(WHATS)}, got {what!r}")
    missing = sorted({r.scenario_id for r in records} - set(bank))
    if missing:
        raise LabelError(
            f"{source}: scenario ids not in the bank: {', '.join(missing[:10])} (give the run's bank with --scenarios)"
        )
    items: list[LabelItem] = []
    for record in records:
        if record.errored:
            continue
        scenario = bank[record.scenario_id]
        if what == "remarks":
            if record.watching is not None:
                items += _remark_items(record, scenario)
        elif record.watching is None:
            if what == "turn2" and record.turn_2_response is not None:
                items.append(_grounding_item(record, scenario, 2))
            elif what == "turn3" and record.turn_3_repair_attempted and record.turn_3_response is not None:
                items.append(_grounding_item(record, scenario, 3))
    return items
