"""Where the tests find the project, whatever folder of tests/ they sit in."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
ARTIFACTS = TESTS / "artifacts"
# the shipped packages, lowest layer first (tests/project/test_imports.py holds what each may import)
PACKAGES = ("core", "candidates", "media_effects", "perception", "streaming", "simulator", "benchmark")
