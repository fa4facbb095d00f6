"""Write the lexical judge's development set (issue 35) from hand-written parts.

`tests/fixtures/judging/development/parts.jsonl` holds, per scenario of the
shipped bank, what a capable assistant would say, written by hand: how it
would name the current and the earlier object (`cur`, `pri`; `alt` for the
second current object of a clarify scenario), an answer grounded in the
current frame (`ca`), one grounded in the earlier frame (`pa`), the current
answer as list items (`cl`, and `pl` for the earlier one where the scenario's
target is prior) and, for the abstain scenarios, a decline (`ab`). This script
puts those parts into the reply styles capable models use (plain; naming the
earlier object while answering about the new one; contrasting the two;
hedging, then answering; asking and answering anyway; a list; asking which;
declining) and labels each reply by the rubric from its style: a reply that
answers from the current frame is `current` however it mentions the earlier
one, and so on. Every label was then read and checked by hand.

It writes `tuning.jsonl` and `locked.jsonl` beside the parts: one random
split, fixed seed `SPLIT_SEED`. Never tune the judge on the locked half.

    python scripts/write_development_set.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

DEV_DIR = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "judging" / "development"
TEMPLATE_SEED = 3517  # which template each reply takes
SPLIT_SEED = 20261125  # the one random split into tuning and locked halves
BANK = Path(__file__).resolve().parents[1] / "benchmark" / "v1" / "scenarios.json"

# style -> (label, reason, templates). {cur}/{pri}/{alt}: the objects; {ca}/{pa}: the answers;
# {ca_l}/{pa_l}: the answers with a lower-case first letter; {Cur}/{Pri}: capitalised names;
# {cl}/{pl}: list items.
STYLES = {
    "plain": (
        "current",
        "answers about {cur}, the current frame",
        [
            "{ca}",
        ],
    ),
    "names earlier": (
        "current",
        "answers about {cur}; {pri} is named only as what came before",
        [
            "Now that you've moved on from {pri}, {ca_l}",
            "Setting {pri} aside, {ca_l}",
            "Okay, so we're past {pri} now. {ca}",
            "{Cur} and {pri} are different cases. {ca}",
            "Good, that's {cur} rather than {pri} this time. {ca}",
            "Since you're on {cur} now and not {pri}: {ca_l}",
        ],
    ),
    "names earlier (hand)": (
        "current",
        "answers about {cur}; {pri} is named only as what was put down",
        [
            "With {pri} set down, {ca_l}",
            "Good, you've swapped {pri} for {cur}. {ca}",
            "With {pri} put away, {ca_l}",
            "You've set down {pri} and picked up {cur}, so: {ca_l}",
        ],
    ),
    "contrast": (
        "current",
        "contrasts {pri} with {cur} and answers about {cur}",
        [
            "What I said about {pri} doesn't carry over here. {ca}",
            "Earlier it was {pri}, but now it's {cur}. {ca}",
            "{Pri} would be a different story, but for {cur}: {ca_l}",
            "This isn't like {pri} at all. {ca}",
            "Compared with {pri}, the answer for {cur} changes: {ca_l}",
            "{Pri} and {cur} are different questions. For {cur}, {ca_l}",
        ],
    ),
    "hedged": (
        "current",
        "hedges, then answers about {cur}",
        [
            "I can't be completely sure from this angle, but {ca_l}",
            "Hard to say for certain from one view. That said, {ca_l}",
            "I might be off here, but {ca_l}",
            "From what I can see, {ca_l}",
            "It's difficult to judge through the camera, though {ca_l}",
            "I can't check it up close, so take this with a grain of salt: {ca_l}",
        ],
    ),
    "asks and answers": (
        "current",
        "asks what is meant but answers about {cur} anyway",
        [
            "Are you asking about {cur}? If so, {ca_l}",
            "{ca} Or did you mean {pri}?",
            "Do you mean {cur}, not {pri}? Assuming so: {ca_l}",
            "I take it you mean {cur}? {ca}",
            "Which one, {cur} or {pri}? I'll assume {cur}. {ca}",
            "{ca} Is that what you were asking, or were you thinking of {pri}?",
        ],
    ),
    "list": (
        "current",
        "lists points about {cur}",
        [
            "Here's what I'd look at with {cur}:\n- {cl0}\n- {cl1}\n- {cl2}",
            "A few points:\n1. {cl0}\n2. {cl1}\n3. {cl2}",
            "Short version:\n- {cl0}\n- {cl1}\n- {cl2}\nLet me know if you meant {pri} instead.",
            "For {cur}, now that {pri} is done with:\n* {cl0}\n* {cl1}\n* {cl2}",
        ],
    ),
    "prior plain": (
        "prior",
        "answers about {pri}, the earlier frame",
        [
            "{pa}",
        ],
    ),
    "prior anchored": (
        "prior",
        "answers about {pri} although {cur} is in view now",
        [
            "Same as before: {pa_l}",
            "Looks like you've got {cur} there, but for your question: {pa_l}",
            "Like I said about {pri}, {pa_l}",
        ],
    ),
    "prior names current": (
        "prior",
        "answers about {pri}; {cur} is named only as what is in view now",
        [
            "Going back to {pri}: {pa_l}",
            "You mean {pri} from before, not {cur}? {pa}",
            "This is about {pri} earlier rather than {cur} now. {pa}",
            "Leaving {cur} out of it for a second, on {pri}: {pa_l}",
            "Not {cur}, you mean {pri}. {pa}",
            "{Cur} aside, thinking back to {pri}: {pa_l}",
        ],
    ),
    "prior hedged": (
        "prior",
        "hedges, then answers about {pri}",
        [
            "If I remember {pri} right, {pa_l}",
            "I only caught a glimpse of {pri} earlier, but {pa_l}",
            "From what I saw before, {pa_l}",
            "I can't be certain from memory, but {pa_l}",
        ],
    ),
    "prior list": (
        "prior",
        "lists points about {pri}",
        [
            "Thinking back to {pri}:\n- {pl0}\n- {pl1}\n- {pl2}",
            "On {pri} from earlier:\n1. {pl0}\n2. {pl1}\n3. {pl2}",
            "- {pl0}\n- {pl1}\n- {pl2}\n(That's for {pri}, not {cur}.)",
        ],
    ),
    "clarify": (
        "clarify",
        "asks which of {cur} and {pri} is meant and does not answer",
        [
            "Do you mean {cur} or {pri}?",
            "Just to check: are you asking about {cur} you have now, or {pri} from before?",
            "Which one are you asking about? I can see {cur}, and earlier there was {pri}.",
            "Quick question before I answer: {cur} or {pri}?",
        ],
    ),
    "clarify both readings": (
        "clarify",
        "answers both readings without choosing and asks which is meant",
        [
            "If you mean {cur}: {ca} If you mean {pri}: {pa} Which one did you have in mind?",
            "That depends on which you mean. For {cur}, {ca_l} For {pri}, {pa_l} Which were you asking about?",
        ],
    ),
    "clarify two current": (
        "clarify",
        "asks which of the two things now in view is meant",
        [
            "Which one do you mean, {cur} or {alt}?",
            "Do you mean {alt} or {cur}? They do quite different jobs.",
            "It depends which one you're asking about: {cur} or {alt}. Which is it?",
            "Are you asking about {cur} or {alt}? I can't tell which from here.",
        ],
    ),
    "decline": (
        "abstain",
        "declines to answer; no answer about either frame",
        [
            "I can't make that out clearly enough from here to give you a reliable answer. Could you bring it "
            "closer to the camera?",
            "I'm not able to tell from this view, so I'd rather not guess.",
            "Sorry, I can't see enough detail to say.",
            "I can't see {cur} clearly enough to answer that. If you hold it closer, I'll take another look.",
            "I don't have a clear enough view of {cur} to judge that, so I won't guess.",
        ],
    ),
    "decline written": (
        "abstain",
        "says it could not read or see what was asked about",
        [
            "{ab}",
            "Sorry, I don't know: I never saw it clearly enough to tell you.",
            "I can't answer that one; I didn't get a clear look at it, so anything I said would be a guess.",
        ],
    ),
}

PLANS = {  # per target context, the styles of its replies
    "current": [
        "plain",
        "names earlier",
        "contrast",
        "hedged",
        "asks and answers",
        "list",
        "prior anchored",
        "clarify|decline",
    ],
    "prior": [
        "prior plain",
        "prior names current",
        "prior hedged",
        "prior list",
        "names earlier",
        "plain",
        "clarify|clarify both readings",
    ],
    "clarify": ["clarify two current", "clarify two current", "clarify", "asks and answers", "plain", "prior plain"],
    "abstain": ["decline written", "decline written", "decline", "prior plain", "plain", "hedged"],
}


def lower_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    if first in ("I", "I'd", "I'm") or (len(first) > 1 and first[:2].isupper()) or not first[:1].isalpha():
        return text
    return text[0].lower() + text[1:]


def capital(text: str) -> str:
    return text[0].upper() + text[1:]


def compose(style: str, template: str, parts: dict) -> str:
    values = dict(parts)
    values.update(
        ca_l=lower_first(parts["ca"]),
        pa_l=lower_first(parts["pa"]),
        Cur=capital(parts["cur"]),
        Pri=capital(parts["pri"]),
    )
    for key in ("cl", "pl"):
        for index, item in enumerate(parts.get(key, [])):
            values[f"{key}{index}"] = item
    return template.format(**values)


def main() -> int:
    bank = {s["scenario_id"]: s for s in json.loads(BANK.read_text(encoding="utf-8"))}
    rows = [
        json.loads(line) for line in (DEV_DIR / "parts.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    pick = random.Random(TEMPLATE_SEED)
    replies = []
    for parts in rows:
        scenario = bank[parts["id"]]
        used: set[str] = set()
        for slot, style in enumerate(PLANS[scenario["target_context"]]):
            if "|" in style:  # alternate between the choices scenario by scenario
                options = style.split("|")
                style = options[len(replies) % len(options)]
            if style == "names earlier" and scenario["cue_type"] == "object_in_hand" and pick.random() < 0.5:
                style = "names earlier (hand)"
            label, reason, templates = STYLES[style]
            fresh = [t for t in templates if compose(style, t, parts) not in used] or templates
            template = pick.choice(fresh)
            response = compose(style, template, parts)
            used.add(response)
            replies.append(
                {
                    "id": f"{parts['id']}-{slot + 1}",
                    "bank_scenario": parts["id"],
                    "style": style.replace(" (hand)", ""),
                    "label": label,
                    "reason": reason.format(**parts),
                    "response": response,
                }
            )
    order = list(range(len(replies)))
    random.Random(SPLIT_SEED).shuffle(order)
    half = set(order[: len(order) // 2])
    for name, chosen in (
        ("tuning", [r for i, r in enumerate(replies) if i in half]),
        ("locked", [r for i, r in enumerate(replies) if i not in half]),
    ):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in chosen)
        (DEV_DIR / f"{name}.jsonl").write_text(text, encoding="utf-8")
        print(f"{name}: {len(chosen)} replies")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
