"""wearsim benchmark: scenarios, protocol, candidates, judges, scoring, reports."""

BENCHMARK_VERSION = "v1.1"
SCHEMA_REVISION = 2
