"""The names of what a run writes into its dir besides the report."""

from __future__ import annotations

from benchmark.cost.budget import BUDGET_FILE
from benchmark.kept_media import AUDIO_DIR, FRAMES_DIR  # spoken replies and kept media share audio/

LOCK_NAME = ".lock"
MANIFEST = "manifest.json"
TRANSCRIPTS = "transcripts.jsonl"
CACHE_LOG = "cache_log.jsonl"  # per cell: which replies came from the response cache
# a run dir holding a link under any of these names is refused
RUN_OUTPUTS = (LOCK_NAME, MANIFEST, TRANSCRIPTS, CACHE_LOG, AUDIO_DIR, FRAMES_DIR, "logs", BUDGET_FILE)
