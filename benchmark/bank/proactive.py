"""The authoring checks of the proactive subset (`benchmark/v1/proactive.json`).

`proactive_findings` returns (problems, warnings), each naming the file, the
scenario and the field; `benchmark.bank.validate.check_proactive` wraps them as
the check `proactive` of `wearsim validate`, run when a v1 bank's directory
holds `proactive.json` (the shipped bank must). The loader
(`core.proactive_scenario.load_proactive`) checks the schema; a file it refuses
gives its problems here and nothing else is checked.

As for the three-turn bank (docs/scenario_authoring_rules.md, "Proactive
scenarios"), a rule that keeps the trial fair fails on any set: unique ids
that no three-turn item uses; no expected key in any camera text, in any
form, nor a near spelling the lexical judge would match; the event's onset
at least `MIN_ONSET_S` into the stream and at least `MIN_TAIL_S` of stream
after its window; consecutive scenes that differ and scenarios that are not
near copies. The authoring rules fail on the shipped set and are warnings
elsewhere: camera text of 1-3 sentences that names no listed object and
narrates no absence, an event scene that brings in no `NARRATION` word;
3-8 lower-case expected keys, none a generic word of the bank's stoplist or
a bare number; a `notes` sentence; the window and stream lengths; the
bank's domain names; ids `pa-NN` / `pq-NN`. The shipped set's counts
(`SHIPPED_MINIMUMS`, the share of events with an opening line) are checked
on it alone.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from core.nouns import object_nouns_in
from core.proactive_scenario import EVENT_TYPES, PROACTIVE_FILE, ProactiveScenario, load_proactive
from core.scenario import BankError

MIN_ONSET_S = 10.0  # the event's scene starts at least this long after the stream does
MIN_TAIL_S = 5.0  # stream left after the event's window ends (a late remark can still be heard)
SHIPPED_WINDOW_S = (8.0, 15.0)  # window_s on the shipped set (the loader allows 4-30 s)
SHIPPED_STREAM_S = (30.0, 45.0)  # stream length on the shipped set (the loader asks for at least 30 s)
CAMERA_SENTENCES = (1, 3)  # sentences per scene's camera text
EXPECTED_KEYS = (3, 8)  # expected keys per event
MAX_TEXT_CHARS = 2000
SCENE_SIMILARITY = 0.9  # consecutive scenes' camera texts this similar (difflib over words) are one scene
SCENARIO_SIMILARITY = 0.75  # two scenarios' camera texts this similar are near copies (as check 6)
ID_PATTERNS = {"event": re.compile(r"^pa-\d{2,}$"), "quiet": re.compile(r"^pq-\d{2,}$")}
# the shipped set: at least these many
SHIPPED_MINIMUMS = {"event": 28, "quiet": 14, "event_domains": 7, "per_event_type": 5}
# the share of events with an opening user line on the shipped set ("about a third")
SHIPPED_OPENING_SHARE = (0.25, 0.45)

_WORD = re.compile(r"[a-z0-9']+")
# words a remark can use about any scene change ("I notice the view changed"): the lexical judge's frame rule
# (a reply with no answer word is about the frame whose description shares more of its words) would credit such
# a remark as conveying the event if the event's scene brought one of them in
NARRATION = (
    "view",
    "glance",
    "glanced",
    "gaze",
    "move",
    "moved",
    "moving",
    "turn",
    "head",
    "walk",
    "leave",
    "leaves",
    "leaving",
    "appear",
    "notice",
    "noticed",
    "show",
    "showing",
    "change",
    "changed",
    "changes",
    "scene",
    "scenes",
    "moment",
    "something",
    "frame",
    "frames",
)


@dataclass(frozen=True, kw_only=True)
class TextRules:
    """The three-turn bank's text rules these checks reuse. `benchmark.bank.validate` passes its own
    (`proactive_rules()`), as it passes `mentions` to the scene-spec checks: this module does not import it."""

    mentions: Callable[[str, str], bool]  # a token, or its plural or singular, as whole words
    sentences: Callable[[str], list[str]]  # a camera text's sentences
    absence: re.Pattern  # a camera text narrating what is not there
    is_generic: Callable[[str], bool]  # a stoplisted answer token or a bare number


def key_forms(key: str) -> set[str]:
    """A one-word key and its regular verb forms ("boil": "boils", "boiling", "boiled"; "boiling": "boil" ...),
    so a camera text cannot say the key in another form. Plural and singular are `mentions`'s own."""
    key = key.strip().lower()
    if " " in key or not key.isalpha():
        return {key}
    stems = {key}
    for suffix in ("ing", "ed", "es", "s"):
        if key.endswith(suffix) and len(key) - len(suffix) >= 3:
            stem = key[: -len(suffix)]
            stems |= {stem, stem + "e"}
            if len(stem) >= 4 and stem[-1] == stem[-2]:  # "running" -> "run"
                stems.add(stem[:-1])
    forms = set()
    for stem in stems:
        forms |= {stem, stem + "s", stem + "ed", stem + "ing", stem + "d"}
        if stem.endswith("e"):
            forms.add(stem[:-1] + "ing")
    return {f for f in forms if len(f) >= 3} | {key}


def leaked_key(text: str, key: str, mentions: Callable[[str, str], bool]) -> bool:
    """The key, in any of its forms, occurs in `text` as whole words (`mentions`:
    `benchmark.bank.authoring.mentions`)."""
    return any(mentions(text, form) for form in key_forms(key))


def judge_matches(text: str, keys: Iterable[str]) -> list[tuple[str, str]]:
    """(key, words of `text`) for each key the lexical judge finds in `text` (on word boundaries or as a near
    spelling, `benchmark.judges.signals`); the judge treats such a key in a remark as copied from the camera."""
    from benchmark.judges.signals import code_signals
    from core.scenario import AnswerKey

    signals = code_signals(
        text, AnswerKey(current_answers=tuple(keys), prior_answers=(), clarify_indicators=(), abstain_indicators=())
    )
    found = [(key, key) for key in signals["word_boundary"]["current_answers"]]
    return found + [(hit["token"], hit["matched"]) for hit in signals["fuzzy"]["current_answers"]]


def narration_brought_in(before: str, after: str) -> list[str]:
    """The `NARRATION` words (as the lexical judge stems them) that `after` holds and `before` does not."""
    from benchmark.judges.evidence import content_stems

    return sorted((content_stems(after) - content_stems(before)) & content_stems(" ".join(NARRATION)))


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _ratio(a: list[str], b: list[str]) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() if a or b else 1.0


def _by_count(values: Iterable[str]) -> dict[str, int]:
    """Each value's count, the most common first (ties by name)."""
    return dict(sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0])))


def proactive_counts(scenarios: Iterable[ProactiveScenario]) -> dict:
    """Tallies of a proactive set: kinds, event types, domains (events and quiet controls apart), opening
    lines, stream lengths."""
    scenarios = list(scenarios)
    events = [s for s in scenarios if s.kind == "event"]
    quiet = [s for s in scenarios if s.kind == "quiet"]
    streams = [s.stream_ms / 1000 for s in scenarios]
    return {
        "scenarios": len(scenarios),
        "kind": {"event": len(events), "quiet": len(quiet)},
        "event_type": {t: sum(s.event_type == t for s in events) for t in EVENT_TYPES},
        "event_domains": _by_count(s.activity_domain for s in events),
        "quiet_domains": _by_count(s.activity_domain for s in quiet),
        "events_with_opening_user": sum(s.opening_user is not None for s in events),
        "quiet_with_opening_user": sum(s.opening_user is not None for s in quiet),
        "stream_s": {"min": min(streams, default=0), "max": max(streams, default=0), "total": round(sum(streams), 1)},
        "window_s": sorted({s.event.window_s for s in events if s.event is not None}),  # (every event's)
    }


def proactive_findings(
    directory: Path,
    rules: TextRules,
    *,
    shipped: bool = False,
    bank_ids: Iterable[str] = (),
    bank_domains: Iterable[str] = (),
) -> tuple[list[str], list[str]]:
    """(problems, warnings) of `directory`'s proactive.json. `rules`: the bank's text rules
    (`benchmark.bank.validate.proactive_rules()`); `bank_ids`: the three-turn bank's scenario ids (a proactive id
    must not reuse one); `bank_domains`: its activity domains (a proactive scenario's domain should be one of
    them)."""
    path = Path(directory) / PROACTIVE_FILE
    problems: list[str] = []
    warnings: list[str] = []

    def flag(message: str) -> None:  # an authoring rule: a problem on the shipped set, a warning elsewhere
        (problems if shipped else warnings).append(message)

    try:
        scenarios = load_proactive(path)
    except BankError as exc:
        return list(exc.problems), warnings
    bank_ids, bank_domains = set(bank_ids), set(bank_domains)  # a repeated id: the loader refused the file
    for s in scenarios:
        where = f"{path}: {s.scenario_id}"
        if s.scenario_id in bank_ids:
            problems.append(f"{where}: field 'scenario_id' is also a three-turn scenario's id")
        if not ID_PATTERNS[s.kind].match(s.scenario_id):
            flag(
                f"{where}: field 'scenario_id' must look like {'pa-01' if s.kind == 'event' else 'pq-01'} "
                f"on {'an event' if s.kind == 'event' else 'a quiet control'}"
            )
        if bank_domains and s.activity_domain not in bank_domains:
            flag(
                f"{where}: field 'activity_domain' {s.activity_domain!r} is none of the bank's domains "
                f"({', '.join(sorted(bank_domains))})"
            )
        if not s.notes.strip():
            flag(
                f"{where}: field 'notes' is empty; say in one sentence what a correct remark says "
                "(or why nothing needs saying)"
            )
        for name, value in (("opening_user", s.opening_user or ""), ("notes", s.notes)):
            if len(value) > MAX_TEXT_CHARS:
                problems.append(
                    f"{where}: field '{name}' is {len(value):,} characters; the limit is {MAX_TEXT_CHARS:,}"
                )
        _check_scenes(s, where, rules, problems, flag)
        _check_timing(s, where, problems, flag)
        if s.event is not None:
            _check_expected(s, where, rules, problems, flag)
    _check_copies(scenarios, path, problems)
    if shipped:
        _check_shipped_counts(scenarios, path, problems)
    return problems, warnings


def _check_scenes(s: ProactiveScenario, where: str, rules: TextRules, problems: list[str], flag) -> None:
    low, high = CAMERA_SENTENCES
    for index, scene in enumerate(s.scenes):
        at = f"{where}: scenes[{index}] field 'camera'"
        if len(scene.camera) > MAX_TEXT_CHARS:
            problems.append(f"{at} is {len(scene.camera):,} characters; the limit is {MAX_TEXT_CHARS:,}")
            continue
        n = len(rules.sentences(scene.camera))
        if not low <= n <= high:
            flag(f"{at} has {n} sentence{'s' if n != 1 else ''}; a scene's camera text has {low} to {high}")
        for noun in object_nouns_in(scene.camera):
            flag(f"{at} names an object: {noun!r} (describe its shape, material, colour and place)")
        match = rules.absence.search(scene.camera)
        if match:
            flag(f"{at} narrates an absence ({match.group(0)!r}); describe what the camera shows")
        if s.event is not None:
            leaked = [key for key in s.event.expected if leaked_key(scene.camera, key, rules.mentions)]
            for key in leaked:
                problems.append(
                    f"{at} contains expected key {key!r} (in some form): the remark's words "
                    "must be inferred, not read off the camera"
                )
            for key, matched in judge_matches(scene.camera, s.event.expected):
                if key not in leaked:
                    problems.append(
                        f"{at} contains {matched!r}, which the lexical judge matches to expected key "
                        f"{key!r}: it would set that key aside in a remark as copied from the camera"
                    )
        if index and s.event is not None and index == s.event.scene:
            brought = narration_brought_in(s.scenes[index - 1].camera, scene.camera)
            if brought:
                flag(
                    f"{at} brings in narration words the scene before lacks ({', '.join(brought)}): the lexical "
                    "judge would credit a remark that only narrates the change; drop them or use them in both scenes"
                )
        if index:
            ratio = _ratio(_words(s.scenes[index - 1].camera), _words(scene.camera))
            if ratio >= SCENE_SIMILARITY:
                problems.append(
                    f"{at} is near-identical to scenes[{index - 1}] (similarity {ratio:.2f}): "
                    "a scene change must show in its text"
                )


def _check_timing(s: ProactiveScenario, where: str, problems: list[str], flag) -> None:
    stream_s = s.stream_ms / 1000
    low, high = SHIPPED_STREAM_S
    if not low <= stream_s <= high:
        flag(f"{where}: field 'scenes' lasts {stream_s:g} s; a shipped scenario streams {low:g} to {high:g} s")
    onset_ms, end_ms = s.onset_ms, s.window_end_ms
    if s.event is None or onset_ms is None or end_ms is None:  # (a quiet scenario: all three are None)
        return
    onset_s, end_s = onset_ms / 1000, end_ms / 1000
    if onset_s < MIN_ONSET_S:
        problems.append(
            f"{where}: field 'event.scene' starts the event at {onset_s:g} s; the onset must be at "
            f"least {MIN_ONSET_S:g} s into the stream (lengthen the scenes before it)"
        )
    if stream_s - end_s < MIN_TAIL_S:
        problems.append(
            f"{where}: field 'event.window_s' ends the window at {end_s:g} s, {stream_s - end_s:g} s "
            f"before the stream ends ({stream_s:g} s); leave at least {MIN_TAIL_S:g} s after it"
        )
    wlow, whigh = SHIPPED_WINDOW_S
    if not wlow <= s.event.window_s <= whigh:
        flag(f"{where}: field 'event.window_s' is {s.event.window_s:g} s; a shipped window is {wlow:g} to {whigh:g} s")


def _check_expected(s: ProactiveScenario, where: str, rules: TextRules, problems: list[str], flag) -> None:
    if s.event is None:  # (the caller checks an event's keys only)
        return
    keys = s.event.expected
    low, high = EXPECTED_KEYS
    if not low <= len(keys) <= high:
        flag(f"{where}: field 'event.expected' has {len(keys)} keys; an event has {low} to {high}")
    for key, n in Counter(k.lower() for k in keys).items():
        if n > 1:
            flag(f"{where}: field 'event.expected' lists {key!r} {n} times")
    for key in keys:
        if rules.is_generic(key):
            flag(
                f"{where}: field 'event.expected' key {key!r} is a generic word or a bare number that fires on "
                "unrelated remarks (the bank's stoplist); write the phrase a warning uses (\"it's ready\")"
            )
        if key != key.lower():
            flag(f"{where}: field 'event.expected' key {key!r} must be lower-case")
        if len(key) > 80:
            problems.append(f"{where}: field 'event.expected' key {key[:40]!r}... is longer than 80 characters")


def _check_copies(scenarios, path: Path, problems: list[str]) -> None:
    """Two scenarios whose camera texts, taken together, are near copies (the bank's check 6 rule)."""
    texts = [(s.scenario_id, _words(" ".join(scene.camera[:MAX_TEXT_CHARS] for scene in s.scenes))) for s in scenarios]
    for i, (sid_b, b) in enumerate(texts):
        for sid_a, a in texts[:i]:
            ca, cb = Counter(a), Counter(b)
            if not a or not b or 2 * sum((ca & cb).values()) / (len(a) + len(b)) < SCENARIO_SIMILARITY:
                continue
            ratio = _ratio(a, b)
            if ratio >= SCENARIO_SIMILARITY:
                problems.append(f"{path}: {sid_a} ~ {sid_b}: field 'scenes' camera text similarity {ratio:.2f}")
                break


def _check_shipped_counts(scenarios, path: Path, problems: list[str]) -> None:
    c = proactive_counts(scenarios)
    where = f"{path}: shipped proactive set"
    for kind in ("event", "quiet"):
        if c["kind"][kind] < SHIPPED_MINIMUMS[kind]:
            problems.append(
                f"{where}: {c['kind'][kind]} {kind} scenarios (field 'kind'), expected at least "
                f"{SHIPPED_MINIMUMS[kind]}"
            )
    if len(c["event_domains"]) < SHIPPED_MINIMUMS["event_domains"]:
        problems.append(
            f"{where}: events span {len(c['event_domains'])} activity domains (field "
            f"'activity_domain'), expected at least {SHIPPED_MINIMUMS['event_domains']}"
        )
    for event_type, n in c["event_type"].items():
        if n < SHIPPED_MINIMUMS["per_event_type"]:
            problems.append(
                f"{where}: {n} events of event_type {event_type!r} (field 'event_type'), expected at "
                f"least {SHIPPED_MINIMUMS['per_event_type']}"
            )
    events = c["kind"]["event"]
    low, high = SHIPPED_OPENING_SHARE
    if events and not low <= c["events_with_opening_user"] / events <= high:
        problems.append(
            f"{where}: {c['events_with_opening_user']} of {events} events have an opening line "
            f"(field 'opening_user'), expected about a third ({low:.0%} to {high:.0%})"
        )
