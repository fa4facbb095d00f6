"""Judges: the `Judge` seam, the LLM and lexical judges, code signals and
judge family resolution."""

from benchmark.judges.family import (
    DEFAULT_JUDGE_MODELS,
    JudgeFamilyError,
    judge_model_id,
    open_judge,
    resolve_judge_family,
)
from core.judge import LABELS, Judge, JudgeCase, Verdict

__all__ = [
    "DEFAULT_JUDGE_MODELS",
    "LABELS",
    "Judge",
    "JudgeCase",
    "JudgeFamilyError",
    "Verdict",
    "judge_model_id",
    "open_judge",
    "resolve_judge_family",
]
