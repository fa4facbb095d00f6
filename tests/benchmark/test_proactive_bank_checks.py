"""The proactive subset's authoring checks (benchmark/bank/proactive.py): each check fails on a crafted
bad scenario with a message naming the scenario and the field."""

import copy

from benchmark.bank.authoring import mentions
from benchmark.bank.proactive import key_forms
from core.proactive_scenario import PROACTIVE_FILE
from tests.benchmark.test_proactive_bank import BANK_DOMAINS, RAW, edited, findings, leaked_key, only

# each check fails on a crafted bad scenario


def test_an_expected_key_in_a_camera_text_fails_in_any_form(tmp_path):
    def leak(s):
        s["scenes"][2]["camera"] = "The water boils hard under a thick white plume."

    problems, _ = findings(tmp_path, edited("pa-01", leak), shipped=False)
    assert only(problems, "pa-01") == [
        f"{tmp_path / PROACTIVE_FILE}: pa-01: scenes[2] field 'camera' contains expected key 'boil' (in some form): "
        "the remark's words must be inferred, not read off the camera",
        f"{tmp_path / PROACTIVE_FILE}: pa-01: scenes[2] field 'camera' contains expected key 'boiling' (in some "
        "form): the remark's words must be inferred, not read off the camera",
    ]
    # a phrase is matched as a whole, on word boundaries
    assert leaked_key("it has a guard rail", "guard") and not leaked_key("a guardian", "guard")
    assert leaked_key("She put the pasta in.", "put the pasta in")
    assert not leaked_key("put in the pasta", "put the pasta in")
    assert {"boil", "boils", "boiled", "boiling"} <= key_forms("boiling")
    assert mentions("two grapes", "grape")  # plural and singular are benchmark.bank.validate.mentions's own


def test_a_near_spelling_of_a_key_the_judge_would_match_fails(tmp_path):
    def near(s):
        s["scenes"][1]["camera"] += " A sign on the wall says 'Be carefull'."

    problems, _ = findings(tmp_path, edited("pa-02", near), shipped=False)
    assert only(problems, "pa-02") == [
        f"{tmp_path / PROACTIVE_FILE}: pa-02: scenes[1] field 'camera' contains 'carefull', which the lexical judge "
        "matches to expected key 'careful': it would set that key aside in a remark as copied from the camera"
    ]


def test_an_event_scene_that_brings_in_narration_words_fails(tmp_path):
    def narrated(s):
        s["scenes"][1]["camera"] = "The view moves on: " + s["scenes"][1]["camera"]

    problems, warnings = findings(tmp_path, edited("pa-24", narrated))
    assert only(problems, "pa-24") == [
        f"{tmp_path / PROACTIVE_FILE}: pa-24: scenes[1] field 'camera' brings in narration words the scene before "
        "lacks (view): the lexical judge would credit a remark that only narrates the change; drop them or "
        "use them in both scenes"
    ]
    assert findings(tmp_path, edited("pa-24", narrated), shipped=False)[0] == []


def test_an_onset_too_early_fails(tmp_path):
    def early(s):
        s["scenes"][0]["duration_s"], s["scenes"][1]["duration_s"] = 6, 28

    problems, _ = findings(tmp_path, edited("pa-02", early), shipped=False)
    assert only(problems, "pa-02") == [
        f"{tmp_path / PROACTIVE_FILE}: pa-02: field 'event.scene' starts the event at 6 s; the onset must be at "
        "least 10 s into the stream (lengthen the scenes before it)"
    ]


def test_a_window_past_the_stream_or_too_near_its_end_fails(tmp_path):
    def past(s):
        s["event"]["window_s"] = 25  # onset 14 s + 25 s > 34 s of stream: the loader refuses the file

    problems, _ = findings(tmp_path, edited("pa-02", past), shipped=False)
    assert len(problems) == 1 and "pa-02" in problems[0] and "window_s" in problems[0]
    assert "the event's window ends at 39 s, after the stream (34 s)" in problems[0]

    def tight(s):
        s["event"]["window_s"] = 18  # ends at 32 s, 2 s before the stream does

    problems, _ = findings(tmp_path, edited("pa-02", tight), shipped=False)
    assert only(problems, "pa-02") == [
        f"{tmp_path / PROACTIVE_FILE}: pa-02: field 'event.window_s' ends the window at 32 s, 2 s before the stream "
        "ends (34 s); leave at least 5 s after it"
    ]


def test_window_and_stream_lengths_are_the_shipped_sets_rules(tmp_path):
    def short(s):
        s["event"]["window_s"] = 5
        s["scenes"][1]["duration_s"] = 40  # 54 s of stream

    scenarios = edited("pa-02", short)
    problems, warnings = findings(tmp_path, scenarios)
    assert only(problems, "pa-02") == [
        f"{tmp_path / PROACTIVE_FILE}: pa-02: field 'scenes' lasts 54 s; a shipped scenario streams 30 to 45 s",
        f"{tmp_path / PROACTIVE_FILE}: pa-02: field 'event.window_s' is 5 s; a shipped window is 8 to 15 s",
    ]
    problems, warnings = findings(tmp_path, scenarios, shipped=False)
    assert only(problems, "pa-02") == [] and len(only(warnings, "pa-02")) == 2


def test_a_duplicate_id_and_a_three_turn_id_fail(tmp_path):
    scenarios = edited("pq-02", lambda s: s.update(scenario_id="pq-01"))
    problems, _ = findings(tmp_path, scenarios)
    assert (
        f"{tmp_path / PROACTIVE_FILE}: pq-01: field 'scenario_id' is used twice; every scenario_id must be "
        "unique" in problems
    )
    scenarios = edited("pa-03", lambda s: s.update(scenario_id="sc-01"))
    problems, _ = findings(tmp_path, scenarios)
    assert only(problems, "sc-01") == [
        f"{tmp_path / PROACTIVE_FILE}: sc-01: field 'scenario_id' is also a three-turn scenario's id",
        f"{tmp_path / PROACTIVE_FILE}: sc-01: field 'scenario_id' must look like pa-01 on an event",
    ]


def test_too_few_quiet_controls_fail_on_the_shipped_set_only(tmp_path):
    scenarios = [s for s in RAW if s["kind"] == "event"] + [s for s in RAW if s["kind"] == "quiet"][:13]
    problems, _ = findings(tmp_path, scenarios)
    assert problems == [
        f"{tmp_path / PROACTIVE_FILE}: shipped proactive set: 13 quiet scenarios (field 'kind'), expected at least 14"
    ]
    assert findings(tmp_path, scenarios, shipped=False) == ([], [])


def test_too_few_of_an_event_type_or_domains_fail_on_the_shipped_set(tmp_path):
    scenarios = [s for s in RAW if s["event_type"] != "left_behind"]
    problems, _ = findings(tmp_path, scenarios)
    assert any("0 events of event_type 'left_behind' (field 'event_type'), expected at least 5" in p for p in problems)
    assert any("(field 'kind'), expected at least 28" in p for p in problems)
    narrow = copy.deepcopy(RAW)
    for s in narrow:
        if s["kind"] == "event":
            s["activity_domain"] = "cooking"
    problems, _ = findings(tmp_path, narrow)
    assert problems == [
        f"{tmp_path / PROACTIVE_FILE}: shipped proactive set: events span 1 activity domains "
        "(field 'activity_domain'), expected at least 7"
    ]


def test_an_unknown_field_and_a_bad_kind_fail_as_load_errors(tmp_path):
    problems, _ = findings(tmp_path, edited("pa-05", lambda s: s.update(colour="red")))
    assert len(problems) == 1
    assert problems[0].startswith(f"{tmp_path / PROACTIVE_FILE}: pa-05: unknown field 'colour'")
    problems, _ = findings(tmp_path, edited("pq-03", lambda s: s.update(kind="surprise")))
    assert problems == [f"{tmp_path / PROACTIVE_FILE}: pq-03: field 'kind' must be one of event, quiet, got 'surprise'"]


def test_a_named_object_fails_on_the_shipped_set_and_warns_elsewhere(tmp_path):
    def named(s):
        s["scenes"][0]["camera"] = "A steel pot of water sits on the back ring."

    scenarios = edited("pa-01", named)
    message = (
        f"{tmp_path / PROACTIVE_FILE}: pa-01: scenes[0] field 'camera' names an object: 'pot' "
        "(describe its shape, material, colour and place)"
    )
    problems, warnings = findings(tmp_path, scenarios)
    assert only(problems, "pa-01") == [message] and warnings == []
    problems, warnings = findings(tmp_path, scenarios, shipped=False)
    assert problems == [] and warnings == [message]


def test_camera_sentences_absences_and_near_identical_scenes(tmp_path):
    def same(s):
        s["scenes"][1]["camera"] = s["scenes"][0]["camera"]

    problems, _ = findings(tmp_path, edited("pq-03", same))
    assert only(problems, "pq-03") == [
        f"{tmp_path / PROACTIVE_FILE}: pq-03: scenes[1] field 'camera' is near-identical to scenes[0] (similarity "
        "1.00): a scene change must show in its text"
    ]

    def wordy(s):
        s["scenes"][0]["camera"] = (
            "One grey wall. Two grey walls. Three. Four grey walls, and nothing of the garden is visible."
        )

    problems, _ = findings(tmp_path, edited("pq-04", wordy))
    assert only(problems, "pq-04") == [
        f"{tmp_path / PROACTIVE_FILE}: pq-04: scenes[0] field 'camera' has 4 sentences; a scene's camera text has 1 "
        "to 3",
        f"{tmp_path / PROACTIVE_FILE}: pq-04: scenes[0] field 'camera' narrates an absence ('nothing of'); describe "
        "what the camera shows",
    ]


def test_expected_keys_notes_and_domains_are_authoring_rules(tmp_path):
    def sloppy(s):
        s["event"]["expected"] = ["Guard", "guard", "ready"]
        s["notes"] = ""
        s["activity_domain"] = "tree surgery"

    problems, _ = findings(tmp_path, edited("pa-02", sloppy))
    where = f"{tmp_path / PROACTIVE_FILE}: pa-02"
    assert only(problems, "pa-02") == [
        f"{where}: field 'activity_domain' 'tree surgery' is none of the bank's domains "
        f"({', '.join(sorted(BANK_DOMAINS))})",
        f"{where}: field 'notes' is empty; say in one sentence what a correct remark says (or why nothing needs "
        "saying)",
        f"{where}: field 'event.expected' lists 'guard' 2 times",
        f"{where}: field 'event.expected' key 'Guard' must be lower-case",
        f"{where}: field 'event.expected' key 'ready' is a generic word or a bare number that fires on unrelated "
        "remarks (the bank's stoplist); write the phrase a warning uses (\"it's ready\")",
    ]


def test_near_copies_across_scenarios_fail(tmp_path):
    scenarios = copy.deepcopy(RAW)
    twin = copy.deepcopy(next(s for s in scenarios if s["scenario_id"] == "pq-01"))
    twin["scenario_id"] = "pq-99"
    problems, _ = findings(tmp_path, scenarios + [twin])
    assert f"{tmp_path / PROACTIVE_FILE}: pq-01 ~ pq-99: field 'scenes' camera text similarity 1.00" in problems
