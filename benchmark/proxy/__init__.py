"""The proxy validation report: how far the benchmark's score moves when the
model gets perceived media instead of the authored text proxy, and which
input channel moves it.

- `pairing`: reads both runs, refuses different banks, pairs trials by
  (scenario, condition, trial) and measures B - A (headline, by shift type,
  by target class).
- `channels`: per run, where each channel came from, the word error rate of
  perceived speech, perceived camera blocks against the authored ones, the
  attribution of flips to channels, and stream latencies.
- `report`: `build_proxy_report` and `write_proxy_report`.
- `render`, `html`, `plots`: proxy_report.md, proxy_report.html, the PNGs.
"""

from benchmark.proxy.pairing import ProxyReportError
from benchmark.proxy.report import build_proxy_report, write_proxy_report

__all__ = ["ProxyReportError", "build_proxy_report", "write_proxy_report"]
