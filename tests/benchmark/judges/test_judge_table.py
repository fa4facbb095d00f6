"""The judge table (`benchmark.judges.kinds`): an offline judge is one row, and no code outside the
table spells a kind's name.

The fake kind here, `always-clarify`, lives in a module this test makes (put into `sys.modules`);
adding its row to `JUDGE_KINDS` is all it takes for `--judge-family always-clarify` to resolve
without a key and for `wearsim rescore` to grade a recorded run with it.
"""

from __future__ import annotations

import ast
import json
import sys
import types
from pathlib import Path

import pytest

from benchmark.cli import main
from benchmark.judges.family import CREDENTIAL_VARIABLES, judge_families, open_judge, resolve_judge_family
from benchmark.judges.kinds import JUDGE_KINDS, JudgeKind, is_offline, offline_fallback
from benchmark.judges.lexical import LexicalJudge
from core.judge import JudgeCase, Verdict
from tests.paths import FIXTURES, PACKAGES, ROOT

FAKE = "always-clarify"
FAKE_MODULE = "fake_offline_judge"
TABLE = "benchmark/judges/kinds.py"
RUN = FIXTURES / "transcripts" / "rescore_run"
BANK = FIXTURES / "transcripts" / "bank"


class AlwaysClarify:
    """A judge that asks the user what they mean, whatever the reply."""

    name = family = FAKE

    async def label(self, case: JudgeCase) -> Verdict:
        return Verdict(label="clarify", rationale="it always asks", judge=self.name)


@pytest.fixture
def fake_kind(monkeypatch) -> JudgeKind:
    module = types.ModuleType(FAKE_MODULE)
    module.AlwaysClarify = AlwaysClarify  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, FAKE_MODULE, module)
    kind = JudgeKind(
        name=FAKE,
        publication=False,
        opener=f"{FAKE_MODULE}:AlwaysClarify",
        method="always clarify",
        unlabelled_why="never leaves a reply unlabelled",
        remark_rule="every remark asks the user what they mean",
    )
    monkeypatch.setitem(JUDGE_KINDS, FAKE, kind)
    return kind


def without_keys(monkeypatch) -> None:
    for names in CREDENTIAL_VARIABLES.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)


def test_a_second_offline_kind_resolves_without_credentials(fake_kind):
    assert resolve_judge_family(FAKE, "openai", env={}) == (
        FAKE,
        f"{FAKE} judge requested explicitly (not the publication judge)",
    )
    assert is_offline(FAKE) and is_offline(f" {FAKE.upper()} ") and not is_offline("openai")
    assert judge_families()[-2:] == (offline_fallback(), FAKE)
    assert offline_fallback() != FAKE  # the fallback stays the table's one marked row


async def test_open_judge_opens_the_kind_through_its_rows_opener(fake_kind):
    async with open_judge(FAKE) as judge:
        assert isinstance(judge, AlwaysClarify)
    async with open_judge(offline_fallback()) as judge:
        assert isinstance(judge, LexicalJudge)
        assert judge.name == judge.family == offline_fallback()


def test_rescore_with_a_second_offline_kind(fake_kind, monkeypatch, tmp_path):
    without_keys(monkeypatch)
    monkeypatch.chdir(tmp_path)  # no .env read
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")  # `main` sets it; put back after
    out = tmp_path / "rescored"
    argv = ["rescore", str(RUN), "--judge-family", FAKE, "--scenarios", str(BANK), "--output-dir", str(out)]
    assert main(argv) == 0
    records = [json.loads(line) for line in (out / "transcripts.jsonl").read_text().splitlines()]
    assert len(records) == 4
    assert {r["turn_2_judge_label"] for r in records} == {"clarify"}
    assert {r["turn_2_judge_name"] for r in records} == {FAKE}
    repaired = [r for r in records if r["turn_3_repair_attempted"]]
    assert repaired and {r["turn_3_judge_label"] for r in repaired} == {"clarify"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["judge_family"], manifest["judge_model"], manifest["judge_endpoint"]) == (FAKE, FAKE, None)
    assert manifest["rescore"]["previous_judge_family"] == "gemini"
    findings = (out / "findings.md").read_text()
    assert f"The judge is `{FAKE}` (always clarify, no model). It is not the publication judge" in findings


def kind_names_outside(root: Path) -> list[str]:
    """`path:line: 'name'` for each string in the packages' code that is exactly a judge kind's name,
    outside the table."""
    names = set(JUDGE_KINDS)
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            where = path.relative_to(root).as_posix()
            if where == TABLE:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), where)
            found += [
                f"{where}:{node.lineno}: {node.value!r}"
                for node in ast.walk(tree)
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
            ]
    return found


def test_no_code_outside_the_table_spells_a_judge_kind():
    assert kind_names_outside(ROOT) == []


def test_a_kind_spelled_outside_the_table_is_found(tmp_path):
    kind = offline_fallback()
    (tmp_path / "benchmark").mkdir()
    (tmp_path / "benchmark" / "branchy.py").write_text(
        f'"""Says {kind} in prose, which is not found."""\n'
        f"def no_model(family):\n    return family == {kind!r} or family != '{kind}'\n"
    )
    assert kind_names_outside(tmp_path) == [
        f"benchmark/branchy.py:3: {kind!r}",
        f"benchmark/branchy.py:3: {kind!r}",
    ]
