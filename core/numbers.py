"""Numbers typed by a user (`every:5`, `fps:0.5`, `change:0.02/2`): a strict grammar, not Python's.

`float()` takes far more than a person means: `1_0`, `1e3`, `inf`, `nan`,
digits of other scripts ("٥"), surrounding spaces. A number here is ASCII
digits with at most one decimal point (`5`, `0.5`, `.5`, `5.`), nothing else.
"""

from __future__ import annotations

import re

NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)", re.ASCII)


def strict_number(text: str) -> float | None:
    """The number `text` spells in the grammar above, or None."""
    return float(text) if isinstance(text, str) and NUMBER.fullmatch(text) else None
