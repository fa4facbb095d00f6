"""LLM judges that see images.

A template from `llm-judges/` is rendered with the case (every placeholder
replaced, an unknown one is an error), sent with the image(s) as image
content to a vision-capable model through the candidate adapters, and the
model's per-dimension scores (0-10) are combined in code with the spec's
weights. The model's own overall opinion is never used as the score.

A case without an image is `skipped` with the reason (an image judge never
grades blind), and a failed call to the judge model (an HTTP error, a
timeout after the retries) is that case's `error` with the reason: the run
goes on with the next case.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from benchmark.evaluators import JUDGES_DIR
from core.candidate import Candidate, GenerationConfig, Image, Message

PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
WEIGHTS = {
    "image-description": {"visual_accuracy": 0.40, "completeness": 0.30, "clarity": 0.20, "relevance": 0.10},
    "activity": {"activity_identification": 0.35, "accuracy": 0.35, "detail_level": 0.20, "inference_quality": 0.10},
    "comparison": {"change_detection": 0.40, "spatial_precision": 0.25, "completeness": 0.20, "clarity": 0.15},
    "reasoning": {
        "logical_correctness": 0.40,
        "visual_understanding": 0.30,
        "problem_solving": 0.20,
        "explanation": 0.10,
    },
    "structured-output": {
        "json_validity": 0.30,
        "schema_compliance": 0.35,
        "data_accuracy": 0.25,
        "completeness": 0.10,
    },
    "quality-assessment": {
        "technical_completeness": 0.30,
        "compositional_analysis": 0.25,
        "aesthetic_evaluation": 0.20,
        "overall_judgment": 0.15,
        "professional_tone": 0.10,
    },
}
MIME = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".webp": "image/webp", ".gif": "image/gif"}
SYSTEM = "You are a strict grader of answers about images. Reply with one JSON object."
CONFIG = GenerationConfig(temperature=0.0, max_tokens=500, json_mode=True)
PASS_THRESHOLD = 0.7


class JudgeTemplateError(ValueError):
    pass


@dataclass(frozen=True, kw_only=True)
class VisionCase:
    input: str
    output: str
    expected_output: str
    images: tuple[Path, ...]


def template_path(name: str) -> Path:
    path = JUDGES_DIR / f"{name}-judge.md"
    if name not in WEIGHTS or not path.exists():
        raise JudgeTemplateError(f"no LLM judge {name!r} (known: {', '.join(WEIGHTS)})")
    return path


def render(template: str, values: dict[str, str]) -> str:
    unknown = sorted({m.group(1) for m in PLACEHOLDER.finditer(template)} - set(values))
    if unknown:
        raise JudgeTemplateError(f"unknown placeholder(s) in template: {', '.join(unknown)}")
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def case_values(case: VisionCase) -> dict[str, str]:
    names = [p.name for p in case.images]
    return {
        "input": case.input,
        "output": case.output,
        "expected_output": case.expected_output,
        "image_reference": f"the attached image '{names[0]}'" if names else "(no image attached)",
        "image_references": ", ".join(f"image {i + 1}: '{n}'" for i, n in enumerate(names)) or "(none)",
    }


def load_image(path: Path) -> Image:
    mime = MIME.get(path.suffix.lower())
    if mime is None:
        raise JudgeTemplateError(f"{path}: not an image type a judge model takes ({', '.join(MIME)})")
    return Image(data=path.read_bytes(), mime_type=mime, name=path.name)


def weighted_score(name: str, scores: dict) -> tuple[float, list[str]]:
    """Overall 0..1 from 0-10 dimension scores; a missing dimension counts 0 and is listed."""
    missing = []
    total = 0.0
    for dimension, weight in WEIGHTS[name].items():
        value = scores.get(dimension)
        if not isinstance(value, (int, float)):
            missing.append(dimension)
            continue
        total += weight * min(max(float(value), 0.0), 10.0) / 10.0
    return round(total, 4), missing


def _parse(text: str) -> dict:
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    if not match:
        raise ValueError("no JSON object in the judge's reply")
    data = json.loads(match.group(0))
    if not isinstance(data.get("scores"), dict):
        raise ValueError("the judge's reply has no 'scores' object")
    return data


def skipped(reason: str) -> dict:
    return {"status": "skipped", "score": 0.0, "passed": False, "details": {"reason": reason}}


def errored(reason: str, **details) -> dict:
    return {"status": "error", "score": 0.0, "passed": False, "details": {"reason": reason, **details}}


async def judge_case(name: str, case: VisionCase, model: Candidate) -> dict:
    """The standard result: {"status", "score", "passed", "details"}."""
    prompt = render(template_path(name).read_text(encoding="utf-8"), case_values(case))
    if not case.images:
        return skipped(
            f"no image in the case: the {name} judge grades answers about images and never judges "
            'blind (give "image" or "images")'
        )
    try:
        images = tuple(load_image(p) for p in case.images)
    except OSError as exc:
        return errored(f"cannot read the image: {exc.strerror or exc} ({Path(exc.filename or '').name})")
    try:
        reply = await model.respond([Message(role="user", text=prompt, images=images)], SYSTEM, CONFIG)
    except Exception as exc:  # the model call failed (HTTP error, timeout after retries): this case only
        return errored(f"judge model call failed: {exc}"[:500], judge_model=model.model_id)
    try:
        data = _parse(reply.text)
    except (ValueError, json.JSONDecodeError) as exc:
        return {
            "status": "error",
            "score": 0.0,
            "passed": False,
            "details": {"reason": f"unreadable judge reply: {exc}", "raw": reply.text[:1000]},
        }
    score, missing = weighted_score(name, data["scores"])
    return {
        "status": "processed",
        "score": score,
        "passed": score >= PASS_THRESHOLD and not missing,
        "details": {
            "dimension_scores": data["scores"],
            "weights": WEIGHTS[name],
            "missing_dimensions": missing,
            "hallucinations": data.get("hallucinations", []),
            "missing_elements": data.get("missing_elements", []),
            "rationale": data.get("rationale", ""),
            "judge_model": model.model_id,
        },
    }
