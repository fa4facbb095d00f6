"""Vision evaluators, issue 12: validators run with `uv run` (the fallback
recorded), OCR against the best matching window, JSON `expected_output` as an
object, image judges skipping cases without an image and keeping an HTTP
error to its own case."""

import asyncio
import json
import subprocess
import sys

import pytest

from benchmark.evaluators import VALIDATORS, VALIDATORS_DIR
from benchmark.evaluators.judges import VisionCase, judge_case
from benchmark.evaluators.runner import find_uv, run_validator
from tests.http_fake import HTTPFake, QuietHandler
from tests.paths import FIXTURES, ROOT

FIXTURES = FIXTURES / "evaluators"
SCORES = json.dumps({"scores": {"visual_accuracy": 8, "completeness": 6, "clarity": 9, "relevance": 10}})


def test_validators_declare_stdlib_only_inline_metadata():
    for name in VALIDATORS.values():
        head = (VALIDATORS_DIR / name).read_text().split("# ///", 2)[1]
        assert "# dependencies = []" in head, name


def test_validators_run_with_uv_and_the_result_says_so():
    uv = find_uv()
    assert uv, "uv is installed by the project's set-up (pyproject.toml)"
    result = run_validator("count", {"output": "5 bottles", "expected_output": "5 bottles"})
    assert result["score"] == 1.0
    assert result["details"]["runner"] == {"via": "uv", "command": ["uv", "run", "--script", "count_validator.py"]}


def test_without_uv_the_current_interpreter_runs_it_and_that_is_recorded():
    result = run_validator("count", {"output": "5 bottles", "expected_output": "5 bottles"}, uv=None)
    assert result["score"] == 1.0
    runner = result["details"]["runner"]
    assert runner["via"] == "python" and "uv not found" in runner["reason"]


@pytest.mark.clock
def test_a_validator_under_uv_is_killed_at_the_timeout(tmp_path):
    sleeper = tmp_path / "slow_validator.py"
    sleeper.write_text("# /// script\n# dependencies = []\n# ///\nimport time\ntime.sleep(60)\n")
    result = run_validator(str(sleeper), {"output": "", "expected_output": ""}, timeout=2.0)
    assert result["status"] == "error" and result["details"]["reason"] == "timeout"
    assert result["details"]["runner"]["via"] == "uv"


@pytest.mark.parametrize("runner", ["uv", "python"])
def test_ocr_finds_the_extraction_inside_a_sentence(runner):
    data = {"output": "The slide reads: Project Proposal Q1 2026", "expected_output": "Project Proposal Q1 2026"}
    result = run_validator("ocr", data, uv=True if runner == "uv" else None)
    assert result["score"] > 0.9 and result["passed"] is True
    details = result["details"]
    assert details["best_window"] == "project proposal q1 2026"
    assert details["character_error_rate"] == 0.0
    assert details["whole_output_similarity"] < 0.9  # the whole sentence alone would not have passed


def test_ocr_window_still_counts_misreadings_and_unrelated_text_fails():
    misread = run_validator(
        "ocr",
        {"output": "It says 'Project Proposa1 Q1 2O26' at the top.", "expected_output": "Project Proposal Q1 2026"},
    )
    assert 0.8 < misread["score"] < 1.0 and misread["details"]["character_error_rate"] == pytest.approx(
        2 / 24, abs=1e-3
    )
    unrelated = run_validator(
        "ocr", {"output": "A photo of a cat on a sofa next to a lamp.", "expected_output": "Project Proposal Q1 2026"}
    )
    assert unrelated["score"] < 0.5 and unrelated["passed"] is False


@pytest.mark.parametrize("runner", ["uv", "python"])
def test_json_expected_output_as_an_object(runner):
    data = {
        "output": 'Found: {"objects": ["cup", "pen"], "count": 2}',
        "expected_output": {"objects": [], "count": 0, "scene": "desk"},
    }
    result = run_validator("json", data, uv=True if runner == "uv" else None)
    assert result["status"] == "processed", result
    assert result["details"]["missing_keys"] == ["scene"] and result["score"] == pytest.approx(2 / 3, abs=1e-4)
    as_string = run_validator(
        "json", {**data, "expected_output": json.dumps(data["expected_output"])}, uv=True if runner == "uv" else None
    )
    assert as_string["score"] == result["score"]


def test_json_schema_without_jsonschema_uses_the_builtin_subset():
    script = VALIDATORS_DIR / VALIDATORS["json"]
    schema = {
        "type": "object",
        "required": ["objects", "count"],
        "properties": {
            "objects": {"type": "array", "items": {"type": "string"}},
            "count": {"type": "integer", "minimum": 0},
        },
    }
    code = (
        "import sys, json, runpy; sys.modules['jsonschema'] = None; "
        f"m = runpy.run_path({str(script)!r}); "
        "print(json.dumps(m['validate'](sys.argv[1], '', schema=json.loads(sys.argv[2]))))"
    )
    good = json.loads(
        subprocess.run(
            [sys.executable, "-c", code, '{"objects": ["mug"], "count": 1}', json.dumps(schema)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert good["score"] == 1.0 and good["details"]["schema_engine"] == "builtin subset"
    bad = json.loads(
        subprocess.run(
            [sys.executable, "-c", code, '{"objects": [3], "count": -1.5}', json.dumps(schema)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert bad["score"] == 0.0 and {e["key"] for e in bad["details"]["type_errors"]} == {"objects.0", "count"}
    missing = json.loads(
        subprocess.run(
            [sys.executable, "-c", code, '{"objects": []}', json.dumps(schema)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert missing["details"]["missing_keys"] == ["count"] and missing["score"] == 0.5


# ---- LLM image judges ----------------------------------------------------------------------


class FlakyJudgeServer(HTTPFake):
    """OpenAI-compatible: answers 400 to the requests whose number is in `fail`, scores to the others."""

    def __init__(self, fail=()):
        self.fail, self.requests = set(fail), []
        owner = self

        class Handler(QuietHandler):
            def do_POST(self):
                owner.requests.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                if len(owner.requests) in owner.fail:
                    self.send_json(400, {"error": {"message": "image too large for this model"}})
                else:
                    self.send_json(
                        200,
                        {
                            "id": "x",
                            "object": "chat.completion",
                            "created": 0,
                            "model": "m",
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": SCORES},
                                }
                            ],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                        },
                    )

        super().__init__(Handler)


def test_a_case_without_an_image_is_skipped_not_judged_blind():
    async def go(url):
        from candidates import open_candidate

        async with open_candidate("openai:vision", base_url=url) as model:
            return await judge_case(
                "image-description",
                VisionCase(input="Describe", output="A red disc.", expected_output="red disc", images=()),
                model,
            )

    with FlakyJudgeServer() as server:
        result = asyncio.run(go(server.base_url))
    assert result["status"] == "skipped" and "no image" in result["details"]["reason"]
    assert server.requests == []


@pytest.mark.clock
def test_wearsim_eval_keeps_an_http_error_to_its_case_and_goes_on(tmp_path):
    image = FIXTURES / "shapes.png"
    data = tmp_path / "cases.jsonl"
    lines = [
        {"output": "A red disc.", "expected_output": "red disc", "image": str(image)},
        {"output": "A blue block.", "expected_output": "blue block", "image": str(image)},
        {"output": "No picture here.", "expected_output": "anything"},
        {"output": "A red disc.", "expected_output": {"shape": "disc"}, "images": [str(image)]},
    ]
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with FlakyJudgeServer(fail={2}) as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark",
                "eval",
                "--evaluator",
                "image-description",
                "--data",
                str(data),
                "--judge-model",
                "openai:vision",
                "--judge-base-url",
                server.base_url,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        )
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == 3  # the case without an image never reached the judge
    summary = json.loads(done.stdout[done.stdout.index("{") :])
    assert summary == {
        "evaluator": "image-description",
        "cases": 4,
        "processed": 2,
        "errors": 1,
        "skipped": 1,
        "passed": 2,
        "mean_score": pytest.approx(0.4 * 0.8 + 0.3 * 0.6 + 0.2 * 0.9 + 0.1),
    }
    table = done.stdout.splitlines()
    assert "HTTP 400: image too large for this model" in table[2]
    assert "skipped" in table[3] and "no image" in table[3]
    assert '"shape": "disc"' in server.requests[-1]["messages"][-1]["content"][0]["text"]
