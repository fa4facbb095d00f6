"""Issue 50: the README a newcomer reads first: its two commands come first and unchanged, every document
is in its list, no issue numbers or change notes (those are CHANGELOG.md's), "publication judge" is
defined where it is first used, and it says how to cite a result."""

from __future__ import annotations

import re

from tests.paths import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
MAIN_JOB = "bash scripts/setup.sh && .venv/bin/wearsim bench --via stream --conditions baseline --output-dir runs/first"
TESTS = "bash scripts/setup.sh --test && bash scripts/check.sh"


def code_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.startswith("    ") and line.strip()]


def section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end >= 0 else None]


def test_the_two_commands_come_first_and_unchanged():
    assert code_lines(README)[:2] == [MAIN_JOB, TESTS]
    assert README.index("## Two commands") < README.index("## What the numbers mean")


def test_every_document_is_in_the_list():
    listed = section("Documents")
    docs = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))
    missing = [doc for doc in [*docs, "CHANGELOG.md", "CITATION.cff"] if f"`{doc}`" not in listed]
    assert not missing, missing
    assert (ROOT / "CHANGELOG.md").is_file()


def test_no_issue_numbers_or_change_notes_in_the_readme():
    assert not re.search(r"\bissues? #?\d+", README, re.IGNORECASE)
    assert "CHANGELOG.md" in README
    assert "0.190 instead of 0.212" not in README and "0.212 to\n  0.190" in (ROOT / "CHANGELOG.md").read_text()


def test_publication_judge_is_defined_where_first_used():
    first = README.index("publication judge")
    paragraph = README[README.rfind("\n\n", 0, first) : README.find("\n\n", first)]
    assert "**The publication judge** is" in paragraph and "another model family than the" in paragraph


def test_the_readme_says_how_to_cite_a_result():
    citing = section("Citing results")
    assert "`CITATION.cff`" in citing and "Cite as: wearsim" in citing and "lock sha256" in citing


def test_the_proactive_example_is_limited_and_says_its_time():
    [line] = [line for line in README.splitlines() if "--frame-policy fps:1,change:0.02 --conditions baseline" in line]
    assert "--limit 6" in line and "3.7 min of real-time stream per strategy" in line


def test_the_quick_tier_line_names_the_set_up_it_needs():
    """Issue 60, item 1: after the main job's set-up alone, `pytest -m quick` failed with No module named
    pytest; the quick tier's line installs what it needs, as the Tests line does."""
    [line] = [line for line in code_lines(README) if "-m quick" in line]
    assert line.startswith("bash scripts/setup.sh --test && ")
