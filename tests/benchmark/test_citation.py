"""Issue 50: CITATION.cff is a valid Citation File Format 1.2.0 file (its schema's required keys and types,
checked here without the network) that cites the software and the bank at their current versions, and
every findings.md ends with a "Cite as" line naming the wearsim version, the bank with its lockfile's
SHA-256, the judge and the run."""

from __future__ import annotations

import hashlib
import re
import tomllib

import yaml

from benchmark import BENCHMARK_VERSION
from tests.paths import ROOT

LOCK = ROOT / "benchmark" / "v1" / "MANIFEST.lock.json"
# CFF 1.2.0 (schema.json): the keys a file may have at its top level, and the ones it must
TOP_KEYS = {
    "abstract",
    "authors",
    "cff-version",
    "commit",
    "contact",
    "date-released",
    "doi",
    "identifiers",
    "keywords",
    "license",
    "license-url",
    "message",
    "preferred-citation",
    "references",
    "repository",
    "repository-artifact",
    "repository-code",
    "title",
    "type",
    "url",
    "version",
}
REQUIRED = {"cff-version", "message", "title", "authors"}
REFERENCE_REQUIRED = {"authors", "title", "type"}
REFERENCE_TYPES = {
    "art",
    "article",
    "audiovisual",
    "bill",
    "blog",
    "book",
    "catalogue",
    "conference",
    "conference-paper",
    "data",
    "database",
    "dictionary",
    "edited-work",
    "encyclopedia",
    "film-broadcast",
    "generic",
    "government-document",
    "grant",
    "hearing",
    "historical-work",
    "legal-case",
    "legal-rule",
    "magazine-article",
    "manual",
    "map",
    "multimedia",
    "music",
    "newspaper-article",
    "pamphlet",
    "patent",
    "personal-communication",
    "proceedings",
    "report",
    "serial",
    "slides",
    "software",
    "software-code",
    "software-container",
    "software-executable",
    "software-virtual-machine",
    "sound-recording",
    "standard",
    "statute",
    "thesis",
    "unpublished",
    "video",
    "website",
}
PERSON_KEYS = {
    "family-names",
    "given-names",
    "name-particle",
    "name-suffix",
    "affiliation",
    "address",
    "city",
    "country",
    "email",
    "fax",
    "orcid",
    "post-code",
    "region",
    "tel",
    "website",
    "alias",
}
ENTITY_KEYS = {
    "name",
    "address",
    "city",
    "country",
    "email",
    "date-end",
    "date-start",
    "fax",
    "location",
    "orcid",
    "post-code",
    "region",
    "tel",
    "website",
    "alias",
}


def nonempty_string(value) -> bool:
    return isinstance(value, str) and value.strip() != ""


def author_problems(authors, where: str) -> list[str]:
    if not isinstance(authors, list) or not authors:
        return [f"{where}: authors must be a list of at least one person or entity"]
    problems = []
    for n, author in enumerate(authors):
        if not isinstance(author, dict) or not author:
            problems.append(f"{where}: author {n} is not a person or entity object")
        elif "name" in author:  # an entity: `name` is required
            problems += [f"{where}: author {n}: {k} is not an entity key" for k in set(author) - ENTITY_KEYS]
            problems += [] if nonempty_string(author["name"]) else [f"{where}: author {n}: empty name"]
        else:
            problems += [f"{where}: author {n}: {k} is not a person key" for k in set(author) - PERSON_KEYS]
        problems += [
            f"{where}: author {n}: {k} is not a string"
            for k, v in (author or {}).items()
            if isinstance(author, dict) and not isinstance(v, str)
        ]
    return problems


def cff_problems(data) -> list[str]:
    """What makes `data` (a parsed CITATION.cff) invalid under the CFF 1.2.0 schema, for the keys used here."""
    if not isinstance(data, dict):
        return ["the file is not a YAML mapping"]
    problems = [f"missing required key {k}" for k in sorted(REQUIRED - set(data))]
    problems += [f"{k} is not a CFF 1.2.0 key" for k in sorted(set(data) - TOP_KEYS)]
    if data.get("cff-version") != "1.2.0":
        problems.append(f"cff-version must be the string 1.2.0, not {data.get('cff-version')!r}")
    problems += [
        f"{k} must be a non-empty string"
        for k in ("message", "title", "abstract", "license")
        if k in data and not nonempty_string(data[k])
    ]
    if "version" in data and not isinstance(data["version"], (str, int, float)):
        problems.append("version must be a string or a number")
    if "type" in data and data["type"] not in ("software", "dataset"):
        problems.append("type must be software or dataset")
    if "keywords" in data and not (isinstance(data["keywords"], list) and all(map(nonempty_string, data["keywords"]))):
        problems.append("keywords must be a list of strings")
    problems += author_problems(data.get("authors"), "authors")
    references = data.get("references", [])
    if not isinstance(references, list):
        return problems + ["references must be a list"]
    for n, ref in enumerate(references):
        where = f"references[{n}]"
        if not isinstance(ref, dict):
            problems.append(f"{where} is not a mapping")
            continue
        problems += [f"{where}: missing required key {k}" for k in sorted(REFERENCE_REQUIRED - set(ref))]
        if ref.get("type") not in REFERENCE_TYPES:
            problems.append(f"{where}: type {ref.get('type')!r} is not a CFF reference type")
        problems += [f"{where}: title must be a non-empty string"] if not nonempty_string(ref.get("title")) else []
        problems += author_problems(ref.get("authors"), where)
    return problems


def citation() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def test_citation_cff_is_valid_cff_1_2():
    assert cff_problems(citation()) == []


def test_the_schema_check_catches_what_the_schema_refuses():
    good = citation()
    assert cff_problems({k: v for k, v in good.items() if k != "authors"}) == [
        "missing required key authors",
        "authors: authors must be a list of at least one person or entity",
    ]
    assert cff_problems({**good, "cff-version": 1.2}) == ["cff-version must be the string 1.2.0, not 1.2"]
    assert cff_problems({**good, "bank": "v1.1"}) == ["bank is not a CFF 1.2.0 key"]
    assert cff_problems({**good, "references": [{"title": "x", "type": "dataset", "authors": [{"name": "a"}]}]}) == [
        "references[0]: type 'dataset' is not a CFF reference type"
    ]
    assert cff_problems({**good, "authors": [{"name": "a", "orcid": 5}]}) == [
        "authors: author 0: orcid is not a string"
    ]


def test_citation_cff_cites_the_software_and_the_bank_at_their_current_versions():
    data = citation()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert data["type"] == "software" and str(data["version"]) == pyproject["version"]
    assert data["license"] == pyproject["license"]  # an SPDX expression in both
    [bank] = [ref for ref in data["references"] if ref["type"] == "data"]
    assert bank["version"] == BENCHMARK_VERSION and "MANIFEST.lock.json" in bank["abstract"]
    assert "Cite as" in data["message"]


def summary(**manifest):
    from pathlib import Path as P

    from benchmark.scoring import build_summary
    from benchmark.scoring.summary_view import RunSummary
    from benchmark.scoring.trials import TrialSet
    from core.judge import Verdict
    from core.records import TrialRecord

    record = TrialRecord(
        scenario_id="sc-01",
        condition="baseline",
        trial=0,
        target_context="current",
        cue_type="object_in_hand",
        turn_2_judge=Verdict(label="current", rationale="", judge="t"),
    )
    return RunSummary.from_json(build_summary(TrialSet(trials=(record,), source=P("t.jsonl")), manifest))


def test_findings_end_with_a_cite_line_naming_the_lock_hash():
    from benchmark.report.findings import render_findings

    lock = hashlib.sha256(LOCK.read_bytes()).hexdigest()
    text = render_findings(
        summary(
            wearsim_version="0.1.0",
            benchmark_version="v1.1",
            bank_lock_sha256=lock,
            judge_family="openai",
            judge_model="openai:gpt-4o-mini",
            judge_prompt_version="1.2",
            timestamp_utc="2026-11-27T07:00:00+00:00",
            runner_git_commit="25bffc2" + "0" * 33,
            candidate_model="local",
            via="stream",
        )
    )
    assert text.rstrip().splitlines()[-1] == (
        f"Cite as: wearsim 0.1.0, bank v1.1 (lock sha256 {lock}), judge openai `openai:gpt-4o-mini` (prompt 1.2), "
        "run 2026-11-27T07:00:00+00:00 at commit 25bffc200000, candidate `local` via stream."
    )


def test_a_run_made_before_the_lock_was_recorded_says_so_rather_than_guess():
    from benchmark.report.findings import render_findings

    last = (
        render_findings(
            summary(
                benchmark_version="v1.1",
                judge_family="lexical",
                judge_model="lexical",
                candidate_model="local",
                via="direct",
            )
        )
        .rstrip()
        .splitlines()[-1]
    )
    assert last.startswith("Cite as: wearsim not recorded, bank v1.1 (lock sha256 not recorded), judge lexical, run ")


def test_a_run_records_the_lock_hash_and_the_version_it_cites(tmp_path):
    from benchmark.run.manifest import build_manifest
    from benchmark.run.settings import CandidateSettings, JudgeSettings, RunSettings
    from core.scenario import load_bank

    settings = RunSettings(
        candidate=CandidateSettings(model_id="local"),
        judge=JudgeSettings(family="lexical", family_resolution="explicit"),
        conditions=("baseline",),
    )
    manifest = build_manifest(load_bank(), settings)
    assert manifest["bank_lock_sha256"] == hashlib.sha256(LOCK.read_bytes()).hexdigest()
    assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["wearsim_version"] or "")
