"""The shipped proactive subset (benchmark/v1/proactive.json) and its authoring checks
(benchmark/bank/proactive.py, the check `proactive` of wearsim validate): the shipped set passes, and
the check runs in wearsim validate, the lockfile and the dataset card. Each check failing on a crafted bad
scenario: test_proactive_bank_checks.py."""

import copy
import json
import re
import shutil
import subprocess
import sys
from collections import Counter

import pytest

from benchmark.bank.authoring import mentions
from benchmark.bank.lockfile import LOCK_FILES, write_lock
from benchmark.bank.proactive import SHIPPED_MINIMUMS, proactive_counts, proactive_findings
from benchmark.bank.proactive import leaked_key as _leaked_key
from benchmark.bank.validate import check_lockfile, check_proactive, proactive_rules, validate_bank
from core.proactive_scenario import EVENT_TYPES, PROACTIVE_FILE, load_proactive
from core.scenario import SHIPPED_BANK, load_bank
from tests.paths import FIXTURES

SHIPPED = SHIPPED_BANK / PROACTIVE_FILE
RAW = json.loads(SHIPPED.read_text(encoding="utf-8"))
BANK = load_bank()
BANK_IDS = {s.scenario_id for s in BANK.scenarios}
BANK_DOMAINS = {s.activity_domain for s in BANK.scenarios}
RULES = proactive_rules()


def leaked_key(text, key):
    return _leaked_key(text, key, mentions)


# one-sentence remarks a person would make at each event, written for this test: the lexical judge must find
# each conveys the event (it hits an expected key), and remarks that only narrate a change must not
NATURAL_REMARKS = {
    "pa-01": [
        "The water's boiling now, you can add the pasta.",
        "Your pasta water is at a rolling boil.",
        "Heads up, the big pot is ready for the pasta.",
    ],
    "pa-02": [
        "Stop, the saw's lower guard is taped up, that's dangerous.",
        "Careful, the blade guard is pinned open with tape.",
        "That blade is fully exposed, please don't cut like that.",
    ],
    "pa-03": [
        "Watch out, the toddler is reaching for the pan handle!",
        "Turn that handle in, the little one can grab it.",
        "Careful, your kid could pull the hot pan down.",
    ],
    "pa-04": [
        "Stop! Don't mix bleach with that ammonia cleaner, it makes toxic gas.",
        "Careful, bleach and ammonia together give off poisonous fumes.",
        "That will release chlorine gas, please don't pour it in.",
    ],
    "pa-05": [
        "Look out, that car door is opening!",
        "Watch out, door opening ahead on the right.",
        "Brake, someone's opening their door into the lane.",
    ],
    "pa-06": [
        "That ladder looks unstable, the foot is on loose wood.",
        "Careful, your ladder is wobbly, come down and reset it.",
        "The ladder isn't on level ground, it could tip and you could fall.",
    ],
    "pa-07": [
        "Your soldering iron is resting on its cable and melting it.",
        "Careful, the iron is burning through the cord.",
        "There's smoke, the hot tip is on the power cable.",
    ],
    "pa-08": [
        "Stop the dog, grapes are toxic to dogs!",
        "Don't let him eat those grapes.",
        "Your dog's going for the grapes, they're poisonous for him.",
    ],
    "pa-09": [
        "You said a double batch, so that should be 500 g of flour, not 250.",
        "That's only the single amount of flour, you need twice as much.",
        "For a double batch you need 500 grams.",
    ],
    "pa-10": [
        "That side panel is on backwards, the white side should face in.",
        "Hold on, you've put that panel the wrong way round.",
        "The finished side should be on the inside, flip it.",
    ],
    "pa-11": [
        "There's a red sock in with the whites, it'll turn them pink.",
        "Take the red sock out before it dyes everything.",
        "Wait, a red sock went in with that white load.",
    ],
    "pa-12": [
        "The recipe says 180, but you've set it to 250, that's too hot.",
        "You set the oven to 250, you wanted 180 degrees.",
        "That temperature is too high, turn it down to 180.",
    ],
    "pa-13": [
        "Your quick release is still open, close it before you ride.",
        "The front wheel lever isn't closed, the wheel could come off.",
        "Don't forget to close the skewer on the front wheel.",
    ],
    "pa-14": [
        "Don't put ice on a burn, keep it under cool running water.",
        "Ice can damage the skin, go back to cool water.",
        "Better to keep cooling it under running water than use ice.",
    ],
    "pa-15": [
        "That feed needs diluting, it says 10 ml in 5 litres of water.",
        "You're pouring it neat, mix it with water first or it can burn the roots.",
        "That's undiluted, it's too strong for the plants.",
    ],
    "pa-16": [
        "Wait, that's going to the whole company, not just Dana.",
        "Careful, you picked the company-wide list, that's 412 people.",
        "That will send the salaries to everyone.",
    ],
    "pa-17": [
        "Your bus is here, the 38 just pulled in.",
        "The 38 is arriving now.",
        "There's your bus, time to get on.",
    ],
    "pa-18": [
        "Your flight is boarding now, head to gate B12.",
        "TP1351 has started boarding, you should go now.",
        "Hurry, your Lisbon flight is boarding.",
    ],
    "pa-19": [
        "The loaf looks golden now, it's ready to come out.",
        "Your bread looks done, take it out.",
        "The crust has browned nicely, it's ready.",
    ],
    "pa-20": [
        "That's a minute, you can stop.",
        "Time's up, you've done your minute.",
        "You've hit 60 seconds, well done.",
    ],
    "pa-21": [
        "Your design review meeting has started, it's 11.",
        "You should join your 11 o'clock call now.",
        "You're running late for the design review with Priya and Tom.",
    ],
    "pa-22": [
        "Your dough has doubled, it's ready to shape.",
        "The dough has risen to twice the size.",
        "Looks like the dough is proofed now.",
    ],
    "pa-23": [
        "You left your passport in the tray!",
        "Go back, your passport is still at security.",
        "Don't forget your passport, it's in the bin behind you.",
    ],
    "pa-24": [
        "You forgot your water bottle.",
        "You left your bottle on the bench.",
        "Your drink is still on the bench, go back for it.",
    ],
    "pa-25": [
        "You left your badge on the copier.",
        "Your ID card is still in the copier.",
        "Don't forget your lanyard, it's on the copier.",
    ],
    "pa-26": [
        "You left the tap running.",
        "The hose is still on, turn it off.",
        "Turn off the outside tap, it's flooding the patio.",
    ],
    "pa-27": [
        "You left the hob on.",
        "The burner is still on with nothing on it.",
        "Turn off the stove, the gas is still lit.",
    ],
    "pa-28": [
        "You left your pump on the kerb!",
        "Your pump is behind you on the road.",
        "Go back, you forgot your pump.",
    ],
    "pa-29": [
        "You left your other load in the dryer.",
        "Your clothes are still in the other machine.",
        "You forgot your jeans and towels in the dryer.",
    ],
}
NARRATING = (
    "I can see your hands moving.",
    "I notice the view changed.",
    "Looks like you moved to a new spot.",
    "Something just changed in the scene.",
    "I see you are heading somewhere.",
    "You turned around.",
)


def wearsim(*args):
    return subprocess.run([sys.executable, "-m", "benchmark", *args], capture_output=True, text=True, timeout=120)


def findings(tmp_path, scenarios, *, shipped=True):
    """(problems, warnings) of a proactive.json holding `scenarios`, checked as the shipped set (or not)."""
    (tmp_path / PROACTIVE_FILE).write_text(json.dumps(scenarios), encoding="utf-8")
    return proactive_findings(tmp_path, RULES, shipped=shipped, bank_ids=BANK_IDS, bank_domains=BANK_DOMAINS)


def edited(scenario_id, change):
    """The shipped scenarios with `change(scenario)` applied to one of them (a deep copy)."""
    scenarios = copy.deepcopy(RAW)
    change(next(s for s in scenarios if s["scenario_id"] == scenario_id))
    return scenarios


def only(problems, scenario_id):
    return [p for p in problems if f": {scenario_id}:" in p]


# the shipped set


def test_the_shipped_set_loads_and_passes_every_check():
    scenarios = load_proactive(SHIPPED)
    assert len(scenarios) == len(RAW)
    problems, warnings = proactive_findings(
        SHIPPED_BANK, RULES, shipped=True, bank_ids=BANK_IDS, bank_domains=BANK_DOMAINS
    )
    assert problems == [] and warnings == []
    checks = {c.name: c for c in validate_bank(BANK)}
    assert checks["proactive"].ok and checks["proactive"].warnings == []
    assert checks["lockfile"].ok


def test_the_shipped_set_has_its_counts():
    scenarios = load_proactive(SHIPPED)
    c = proactive_counts(scenarios)
    assert c["kind"]["event"] >= SHIPPED_MINIMUMS["event"] >= 28
    assert c["kind"]["quiet"] >= SHIPPED_MINIMUMS["quiet"] >= 14
    assert len(c["event_domains"]) >= SHIPPED_MINIMUMS["event_domains"] >= 7
    assert all(c["event_type"][t] >= SHIPPED_MINIMUMS["per_event_type"] >= 5 for t in EVENT_TYPES)
    assert 0.25 <= c["events_with_opening_user"] / c["kind"]["event"] <= 0.45  # about a third
    events = [s for s in scenarios if s.kind == "event"]
    assert [s.scenario_id for s in events] == [f"pa-{n:02d}" for n in range(1, len(events) + 1)]
    quiet = [s for s in scenarios if s.kind == "quiet"]
    assert [s.scenario_id for s in quiet] == [f"pq-{n:02d}" for n in range(1, len(quiet) + 1)]
    for s in scenarios:
        assert 2 <= len(s.scenes) <= 4 and 30_000 <= s.stream_ms <= 45_000, s.scenario_id
        assert s.activity_domain in BANK_DOMAINS, s.scenario_id
        if s.event is not None:
            assert s.onset_ms >= 10_000 and 8 <= s.event.window_s <= 15, s.scenario_id
            assert s.stream_ms - s.window_end_ms >= 5_000, s.scenario_id
            assert 3 <= len(s.event.expected) <= 8, s.scenario_id
            for scene in s.scenes:  # the camera never says what a correct remark says
                assert not any(leaked_key(scene.camera, key) for key in s.event.expected), s.scenario_id


def test_the_judge_scenario_of_each_event_is_built():
    for s in load_proactive(SHIPPED):
        if s.event is None:
            continue
        judged = s.judge_scenario()
        # the scene reaches the judge in the judged message, never as a frame a remark could echo its way past
        assert judged.turn_1_image is None and judged.turn_2_image is None
        assert judged.answers.current_answers == s.event.expected


def _lexical(scenario, remark):
    from benchmark.judges.lexical import LexicalJudge
    from core.judge import JudgeCase
    from core.records import build_probe_message

    case = JudgeCase(
        scenario=scenario.judge_scenario(),
        turn=2,
        user_message=build_probe_message(scenario.scenes[scenario.event.scene].camera),
        response=remark,
        turn_1_speech=scenario.opening_user or "",
        context_sent=False,
    )
    return LexicalJudge().label_now(case).label


def test_natural_remarks_convey_each_event_and_narration_does_not():
    events = {s.scenario_id: s for s in load_proactive(SHIPPED) if s.kind == "event"}
    assert set(NATURAL_REMARKS) == set(events)
    missed = [
        (sid, r) for sid, remarks in NATURAL_REMARKS.items() for r in remarks if _lexical(events[sid], r) != "current"
    ]
    assert missed == []
    credited = [(sid, r) for sid, s in events.items() for r in NARRATING if _lexical(s, r) == "current"]
    assert credited == []


# the hook in wearsim validate, the lockfile, the card


def test_validate_bank_runs_the_check_on_a_bank_directory_with_proactive_json(tmp_path):
    bank_dir = tmp_path / "v1"
    shutil.copytree(SHIPPED_BANK, bank_dir)
    checks = {c.name: c for c in validate_bank(load_bank(bank_dir))}
    assert checks["proactive"].ok and checks["lockfile"].ok
    broken = edited("pa-02", lambda s: s["event"].update(window_s=25))
    (bank_dir / PROACTIVE_FILE).write_text(json.dumps(broken), encoding="utf-8")
    checks = {c.name: c for c in validate_bank(load_bank(bank_dir))}
    assert not checks["proactive"].ok and any("pa-02" in p for p in checks["proactive"].problems)
    assert any("proactive_sha256 drifted" in p for p in checks["lockfile"].problems)  # proactive.json is locked
    write_lock(bank_dir)
    assert check_lockfile(bank_dir).ok
    (bank_dir / PROACTIVE_FILE).unlink()  # another bank need not have one; the shipped bank must
    assert "proactive" not in {c.name for c in validate_bank(load_bank(bank_dir))}
    missing = check_proactive(load_bank(bank_dir), shipped=True)
    assert missing.problems == [f"{bank_dir / PROACTIVE_FILE}: missing"]
    assert LOCK_FILES["proactive_sha256"] == PROACTIVE_FILE


@pytest.mark.slow
def test_wearsim_validate_subset_proactive():
    out = wearsim("validate", "--json", "--subset", "proactive")
    report = json.loads(out.stdout)
    assert out.returncode == 0, out.stdout + out.stderr
    assert [c["name"] for c in report["checks"]] == ["proactive", "lockfile"]
    kinds = Counter(s["kind"] for s in RAW)
    assert report["counts"]["kind"] == {"event": kinds["event"], "quiet": kinds["quiet"]}
    text = wearsim("validate", "--subset", "proactive")
    assert text.returncode == 0
    assert f"{len(RAW)} proactive scenarios" in text.stdout and "ok   proactive" in text.stdout
    whole = json.loads(wearsim("validate", "--json").stdout)
    assert whole["ok"] and whole["proactive_counts"]["kind"] == report["counts"]["kind"]
    jsonl = wearsim("validate", "--subset", "proactive", str(FIXTURES / "banks" / "external.jsonl"))
    assert jsonl.returncode == 2 and "needs a v1 bank directory" in jsonl.stderr
    bad = wearsim("validate", "--subset", "nonsense")
    assert bad.returncode == 2 and "known subsets are bank, contrast, proactive" in bad.stderr


def test_the_dataset_card_gives_the_proactive_counts():
    card = (SHIPPED_BANK / "dataset_card.md").read_text(encoding="utf-8")
    section = card[card.index("## Proactive subset") :]
    section = section[: section.index("\n## ", 1)] if "\n## " in section[1:] else section
    c = proactive_counts(load_proactive(SHIPPED))
    assert f"{c['kind']['event']} event scenarios and {c['kind']['quiet']} quiet controls" in section
    for event_type, n in c["event_type"].items():
        assert re.search(rf"^\| {event_type} \| {n} \|", section, re.MULTILINE), event_type
    for domain, n in c["event_domains"].items():
        assert re.search(rf"^\| {domain} \| {n} \| {c['quiet_domains'].get(domain, 0)} \|", section, re.MULTILINE), (
            domain
        )
    for domain, n in c["quiet_domains"].items():
        assert re.search(rf"^\| {domain} \| {c['event_domains'].get(domain, 0)} \| {n} \|", section, re.MULTILINE), (
            domain
        )
