"""The benchmark: the bank (v1/), its validator, the Turn 1/2/3 protocol, judges, scoring, reports, the runner
and the `wearsim` command."""

BENCHMARK_VERSION = "v1.1"
SCHEMA_REVISION = 2


def package_version() -> str | None:
    """The installed wearsim package's version (pyproject.toml's), None when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("wearsim")
    except PackageNotFoundError:
        return None
