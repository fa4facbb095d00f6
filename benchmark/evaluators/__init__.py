"""Vision evaluators: code validators run as scripts, and LLM judges that see images.

Code validators live in `code-validators/` as standalone scripts (stdlib or
PEP 723 inline dependencies); LLM judge prompt templates in `llm-judges/`.
"""

from pathlib import Path

HERE = Path(__file__).parent
VALIDATORS_DIR = HERE / "code-validators"
JUDGES_DIR = HERE / "llm-judges"
VALIDATORS = {
    "count": "count_validator.py",
    "ocr": "ocr_validator.py",
    "json": "json_validator.py",
    "chart": "chart_validator.py",
}
