"""wearsim benchmark: scenarios, protocol, candidates, judges, scoring, reports."""

BENCHMARK_VERSION = "v1"
SCHEMA_REVISION = 1
