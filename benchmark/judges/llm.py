"""The LLM judge: renders the judge prompt, asks a model, reads the verdict."""

from __future__ import annotations

from benchmark.judges.prompt import judge_retry_message, judge_system_prompt, render_judge_prompt
from benchmark.judges.verdict import VerdictParseError, parse_verdict
from core.candidate import Candidate, GenerationConfig, Message
from core.judge import JudgeCase, Verdict

JUDGE_CONFIG = GenerationConfig(temperature=0.0, max_tokens=300, json_mode=True)
RETRY_SEPARATOR = "\n\n--- retry ---\n\n"


class LLMJudge:
    """`Judge` backed by any `Candidate`-shaped model.

    An unreadable reply (no JSON, unknown label) is retried once with a short
    follow-up naming the problem; if the second reply is unreadable too, the
    verdict is unscored with the reason. Errors of the model call itself
    (network, quota) propagate: the runner records the cell as an error.
    """

    def __init__(
        self, model: Candidate, *, family: str, name: str | None = None, config: GenerationConfig = JUDGE_CONFIG
    ):
        self.model = model
        self.family = family
        self.name = name or model.model_id
        self.config = config

    def for_cell(self, cell) -> LLMJudge:
        """This judge asking for one run cell (a `candidates.cache.CellCache`): a model behind the response
        cache logs its replies to the cell; any other model is asked as it is."""
        bind = getattr(self.model, "for_cell", None)
        if bind is None:
            return self
        return LLMJudge(bind(cell), family=self.family, name=self.name, config=self.config)

    async def label(self, case: JudgeCase) -> Verdict:
        prompt = render_judge_prompt(case)
        system = judge_system_prompt()
        messages = [Message(role="user", text=prompt)]
        raws: list[str] = []
        reason = ""
        usage = None
        for _ in range(2):
            reply = await self.model.respond(messages, system, self.config)
            raws.append(reply.text)
            usage = reply.usage if usage is None else usage + reply.usage
            try:
                label, rationale = parse_verdict(reply.text)
            except VerdictParseError as exc:
                reason = str(exc)
                messages = messages + [
                    Message(role="assistant", text=reply.text or "(empty reply)"),
                    Message(role="user", text=judge_retry_message(reason)),
                ]
                continue
            return Verdict(
                label=label,
                rationale=rationale,
                judge=self.name,
                prompt=prompt,
                raw=RETRY_SEPARATOR.join(raws),
                cached=reply.cached,
                usage=usage,
            )
        return Verdict(
            label=None,
            rationale="",
            judge=self.name,
            unscored_reason=f"judge reply unreadable after one retry: {reason}",
            prompt=prompt,
            raw=RETRY_SEPARATOR.join(raws),
            cached=reply.cached,
            usage=usage,
        )
