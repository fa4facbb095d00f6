"""Vision evaluators: the spec's scenarios with their exact figures, through
the script interface, plus the cases the spec's own examples get wrong."""

import asyncio
import json
import subprocess
import sys

import pytest

from benchmark.evaluators import VALIDATORS, VALIDATORS_DIR
from benchmark.evaluators.judges import JudgeTemplateError, VisionCase, judge_case, render, weighted_score
from benchmark.evaluators.runner import run_validator
from tests.fake_openai import FakeOpenAI
from tests.paths import FIXTURES

FIXTURES = FIXTURES / "evaluators"


def script(name, data, *, via_stdin=True):
    path = VALIDATORS_DIR / VALIDATORS[name]
    args = [sys.executable, str(path)] + ([] if via_stdin else [json.dumps(data)])
    done = subprocess.run(
        args, input=json.dumps(data) if via_stdin else None, capture_output=True, text=True, timeout=60
    )
    result = json.loads(done.stdout)
    assert done.returncode == (0 if result["passed"] else 1)
    assert done.stderr == ""
    return result


def test_count_exact_and_partial():
    assert script("count", {"output": "5 bottles", "expected_output": "5 bottles"})["score"] == 1.0
    partial = script("count", {"output": "5 bottles, 3 cans", "expected_output": "5 bottles, 8 cans"}, via_stdin=False)
    assert partial["score"] == 0.5 and partial["passed"] is False
    assert partial["details"]["objects"]["can"] == {"expected": 8, "found": 3, "match": False}
    assert script("count", {"output": "5 objects", "expected_output": "5 objects"})["passed"] is True


def test_count_number_words_and_a_dozen():
    result = script(
        "count", {"output": "I can see five bottles and a dozen eggs.", "expected_output": "5 bottles, 12 eggs"}
    )
    assert result["score"] == 1.0


def test_count_that_belongs_to_another_object_or_stray_number_does_not_match():
    assert (
        script("count", {"output": "There are 3 bottles and 5 cans.", "expected_output": "5 bottles"})["score"] == 0.0
    )
    assert script("count", {"output": "Shelf 5 holds some bottles.", "expected_output": "5 bottles"})["score"] == 0.0


def test_ocr_exact_and_keywords():
    exact = script("ocr", {"output": "Project Proposal Q1 2026", "expected_output": "Project Proposal Q1 2026"})
    assert exact["score"] > 0.9 and exact["details"]["character_error_rate"] == 0.0
    keywords = script(
        "ocr",
        {
            "output": "The plan covers budget and timeline.",
            "expected_output": "The plan covers budget, timeline and deliverables.",
            "keywords": "budget, timeline, deliverables",
        },
    )
    assert keywords["details"]["keyword_recall"] == pytest.approx(2 / 3, abs=1e-4)
    assert keywords["details"]["keywords_missing"] == ["deliverables"]
    assert keywords["score"] == pytest.approx((keywords["details"]["similarity"] + 2 / 3) / 2, abs=1e-3)


def test_json_missing_keys_and_types():
    result = script(
        "json",
        {
            "output": '{"objects": ["cup"], "count": "3"}',
            "expected_output": json.dumps({"objects": [], "count": 1, "scene": "desk"}),
        },
    )
    assert result["details"]["missing_keys"] == ["scene"]
    assert result["details"]["type_errors"] == [{"key": "count", "expected": "number", "found": "string"}]
    assert result["score"] == pytest.approx(1 / 3, abs=1e-4)


def test_json_in_a_code_fence_and_schema():
    schema = {
        "type": "object",
        "required": ["objects", "count"],
        "properties": {"objects": {"type": "array"}, "count": {"type": "integer"}},
    }
    fenced = 'Here you go:\n```json\n{"objects": ["mug", "pen"], "count": 2}\n```'
    assert script("json", {"output": fenced, "expected_output": "", "schema": schema})["score"] == 1.0
    missing = script("json", {"output": '{"objects": []}', "expected_output": "", "schema": schema})
    assert missing["details"]["missing_keys"] == ["count"] and missing["score"] == 0.5


def test_chart_currency_within_15_percent_and_percentages_exact():
    assert script("chart", {"output": "Q4: $2.4M", "expected_output": "$2.4M"})["score"] == 1.0
    assert script("chart", {"output": "Q4 came in at 2,400,000", "expected_output": "$2.4M"})["score"] == 1.0
    assert script("chart", {"output": "about 2.6 million dollars", "expected_output": "$2.4M"})["score"] == 1.0
    assert script("chart", {"output": "Q4: $2.9M", "expected_output": "$2.4M"})["score"] == 0.0  # 21% off
    assert script("chart", {"output": "Q4: €2.4M", "expected_output": "$2.4M"})["score"] == 0.0  # other currency
    assert script("chart", {"output": "58% growth", "expected_output": "58%"})["score"] == 1.0
    assert script("chart", {"output": "58.5% growth", "expected_output": "58%"})["score"] == 0.0
    assert script("chart", {"output": "on 1 Mar 2024", "expected_output": "2024-03-01"})["score"] == 1.0


@pytest.mark.parametrize("name", sorted(VALIDATORS))
def test_bad_json_in_gives_status_error_not_a_traceback(name):
    path = VALIDATORS_DIR / VALIDATORS[name]
    done = subprocess.run([sys.executable, str(path)], input="{not json", capture_output=True, text=True, timeout=60)
    result = json.loads(done.stdout)
    assert done.returncode == 1 and result["status"] == "error" and "bad input" in result["details"]["reason"]
    assert "Traceback" not in done.stderr


@pytest.mark.clock
def test_runner_kills_a_validator_that_runs_too_long(tmp_path):
    sleeper = tmp_path / "slow_validator.py"
    sleeper.write_text("import time\ntime.sleep(60)\n")
    result = run_validator(str(sleeper), {"output": "", "expected_output": ""}, timeout=1.0)
    assert result["status"] == "error" and result["details"]["reason"] == "timeout"
    assert run_validator("count", {"output": "5 bottles", "expected_output": "5 bottles"})["score"] == 1.0


def test_render_replaces_every_placeholder_and_rejects_unknown():
    values = {
        "input": "Describe",
        "output": "A red disc",
        "expected_output": "red circle",
        "image_reference": "img",
        "image_references": "image 1",
    }
    assert render("{{input}} / {{ output }} / {{image_reference}}", values) == "Describe / A red disc / img"
    with pytest.raises(JudgeTemplateError, match="unknown placeholder"):
        render("{{input}} {{colour}}", values)


def test_weighted_score_is_computed_in_code():
    score, missing = weighted_score(
        "image-description", {"visual_accuracy": 10, "completeness": 5, "clarity": 10, "relevance": 0}
    )
    assert score == pytest.approx(0.4 + 0.15 + 0.2 + 0.0) and missing == []


def test_llm_judge_sends_the_image_and_weighs_dimension_scores():
    reply = json.dumps(
        {
            "scores": {"visual_accuracy": 8, "completeness": 6, "clarity": 9, "relevance": 10},
            "overall": 1.0,
            "hallucinations": ["three people"],
            "missing_elements": ["blue block"],
        }
    )
    case = VisionCase(
        input="Describe the picture",
        output="A red ball and three people.",
        expected_output="A red disc and a blue block.",
        images=(FIXTURES / "shapes.png",),
    )

    async def go(url):
        from candidates import open_candidate

        async with open_candidate("openai:vision-judge", base_url=url) as model:
            return await judge_case("image-description", case, model)

    with FakeOpenAI(reply=reply) as server:
        result = asyncio.run(go(server.base_url))
    content = server.requests[0]["messages"][-1]["content"]
    images = [part for part in content if part["type"] == "image_url"]
    assert len(images) == 1 and images[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "shapes.png" in content[0]["text"] and "{{" not in content[0]["text"]
    assert result["score"] == pytest.approx(0.4 * 0.8 + 0.3 * 0.6 + 0.2 * 0.9 + 0.1 * 1.0)  # not the model's 1.0
    assert result["details"]["hallucinations"] == ["three people"]
    assert result["details"]["missing_elements"] == ["blue block"]


def test_wearsim_eval_prints_table_and_summary(tmp_path):
    data = tmp_path / "cases.jsonl"
    data.write_text(
        json.dumps({"output": "5 bottles", "expected_output": "5 bottles"})
        + "\n"
        + json.dumps({"output": "5 bottles, 3 cans", "expected_output": "5 bottles, 8 cans"})
        + "\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "benchmark", "eval", "--evaluator", "count", "--data", str(data)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout[done.stdout.index("{") :])
    assert summary == {
        "evaluator": "count",
        "cases": 2,
        "processed": 2,
        "errors": 0,
        "skipped": 0,
        "passed": 1,
        "mean_score": 0.75,
    }
