"""`wearsim bench --subset proactive`: selecting the proactive scenarios and checking the flags
that go with them, before anything starts (each problem one line naming the flag)."""

from __future__ import annotations

import dataclasses

from core.proactive_scenario import PROACTIVE_FILE, SUBSET, load_proactive


def proactive_bank(bank, ids: list[str] | None, limit: int | None):
    """The bank narrowed to its proactive scenarios (`proactive.json` beside its scenarios.json), then
    to `ids` and `limit`. Raises `BankError` (unreadable file) or KeyError (unknown ids)."""
    from core.scenario import BankError

    path = bank.source / PROACTIVE_FILE if bank.source.is_dir() else bank.source.parent / PROACTIVE_FILE
    if not path.exists():
        raise BankError([f"{path}: missing; the bank {bank.source} has no proactive subset"])
    scenarios = load_proactive(path)
    if ids:
        known = {s.scenario_id for s in scenarios}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise KeyError(f"--ids: no proactive scenario {', '.join(unknown)} in {path}")
        scenarios = tuple(s for s in scenarios if s.scenario_id in ids)
    if limit is not None:
        scenarios = scenarios[:limit]
    return dataclasses.replace(bank, scenarios=scenarios, subset=SUBSET, files={**bank.files, "proactive": path})


def proactive_strategies(
    args, model_id: str, policies: tuple[str, ...], staleness: tuple, impairments: tuple
) -> tuple[tuple[str, ...], str | None]:
    """(the strategies to run, None) or ((), the problem) for `--subset proactive` and `--proactive`."""
    from candidates.model_ids import is_realtime
    from streaming.proactive import parse_strategies

    if args.subset != SUBSET:
        return (), ("--proactive needs --subset proactive (the proactive scenarios)" if args.proactive else None)
    if args.via != "stream":
        return (), "--subset proactive needs --via stream: proactive trials are played by the simulated glasses"
    try:
        strategies = tuple(s.name for s in parse_strategies(args.proactive or "change"))
    except ValueError as exc:
        return (), f"--proactive: {exc}"
    if "native" in strategies and not is_realtime(model_id):
        return (
            (),
            f"--proactive native needs a realtime API (--model openai-realtime:M or gemini-live:M); "
            f"{model_id} is a chat model, which never speaks unasked: use change or every:N",
        )
    if "end" in policies:
        return (
            (),
            "--frame-policy end sends no frame until the user speaks; proactive trials need a policy "
            "that streams (fps:1, speech:1/0.5, change:0.02)",
        )
    if staleness or impairments or args.no_camera:
        return (), "--staleness, --impair and --no-camera do not apply to proactive trials"
    if args.speed is not None and args.speed != 1.0:
        return (), "--speed: proactive trials always play in real time (their timing is what they measure)"
    return strategies, None


def timelines(bank) -> dict:
    """The proactive scenarios' scene specs (`--pictograph-frames`), as `unknown_pictures` reads specs: a
    `SceneSpec` each, its scenes named by index. Raises `SceneError` naming every one missing or invalid."""
    from core.scenes import SceneError, SceneSpec, read_timeline, scene_dir

    specs, problems = {}, []
    for scenario in bank.scenarios:
        try:
            scenes = read_timeline(scene_dir(bank), scenario.scenario_id, len(scenario.scenes))
        except SceneError as exc:
            problems += exc.problems
            continue
        specs[scenario.scenario_id] = SceneSpec(
            scenario_id=scenario.scenario_id, scenes={str(i): s for i, s in enumerate(scenes)}, answer_objects={}
        )
    if problems:
        raise SceneError(problems)
    return specs
