"""Build the proxy validation report of two runs and write it to a directory.

`build_proxy_report(run_a, run_b)` returns the whole report as a JSON-ready
dict; `write_proxy_report(report, output_dir)` writes proxy_report.json,
proxy_report.md, the plots and the self-contained proxy_report.html, all
rendered from that dict.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmark.proxy import channels, pairing
from benchmark.proxy.pairing import ProxyReportError, Run
from benchmark.proxy.plots import PLOT_FILES
from core.safe_files import refuse_links, write_atomic
from core.scenario import Bank

REPORT_VERSION = 1
OUTPUTS = ("proxy_report.json", "proxy_report.md", "proxy_report.html", *PLOT_FILES.values())


def _bank_for(a: Run, b: Run, scenarios: str | Path | None) -> tuple[Bank | None, dict]:
    """The bank whose authored text the perceived channels are measured against.

    `scenarios` if given; else the first of the bank B recorded as its source,
    the one A recorded, and the shipped bank whose scenarios file hashes to
    the runs' recorded scenarios_sha256 (any that loads, when none is
    recorded). A bank with another hash is not used (refused, when it was
    asked for): its authored text is not what the runs played.
    """
    from benchmark.run.manifest import sha256_file
    from core.scenario import SHIPPED_BANK, BankError, load_bank

    recorded = b.manifest.get("scenarios_sha256") or a.manifest.get("scenarios_sha256")
    tried = []
    sources = [scenarios] if scenarios else [b.manifest.get("bank_source"), a.manifest.get("bank_source"), SHIPPED_BANK]
    for source in dict.fromkeys(str(s) for s in sources if s):
        try:
            bank = load_bank(source)
        except (BankError, OSError) as exc:
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if scenarios:
                raise ProxyReportError(f"--scenarios {scenarios}: {message}") from exc
            tried.append(f"{source}: {message}")
            continue
        actual = sha256_file(bank.files.get("scenarios"))
        if recorded and actual != recorded:
            if scenarios:
                raise ProxyReportError(
                    f"--scenarios {scenarios}: scenarios_sha256 {actual} differs from the runs' {recorded}"
                )
            tried.append(f"{source}: scenarios_sha256 {actual}, not the runs' {recorded}")
            continue
        note = "hash matches the runs' manifests" if recorded else "hash not checked: the manifests record none"
        return bank, {"source": str(bank.source), "used": True, "scenarios_sha256": actual, "note": note}
    return None, {
        "source": None,
        "used": False,
        "note": "no bank with the runs' authored text (" + "; ".join(tried) + "); pass --scenarios",
    }


def build_proxy_report(
    run_a: str | Path, run_b: str | Path, *, condition: str | None = None, scenarios: str | Path | None = None
) -> dict:
    """Compare run A (usually the text proxy) with run B (usually the simulated glasses)."""
    a, b = pairing.load_run("A", run_a), pairing.load_run("B", run_b)
    bank_check = pairing.check_bank_hashes(a, b)
    name, why = pairing.choose_condition(a, b, condition)
    counts = pairing.cell_counts(a, b, name)
    pairs = pairing.scored_pairs(a, b, name)
    bank, bank_text = _bank_for(a, b, scenarios)
    runs = {run.label: [t for t in run.trials.trials if t.condition == name] for run in (a, b)}
    return {
        "report": "proxy_report",
        "report_version": REPORT_VERSION,
        "question": "How much does the benchmark's Turn 2 score move when the model gets perceived media "
        "(Whisper transcripts, scene descriptions from frames) instead of the authored text proxy, "
        "and which channel moves it?",
        "runs": {"A": a.describe(), "B": b.describe()},
        "bank_check": bank_check,
        "authored_text": bank_text,
        "condition": name,
        "condition_reason": why,
        "cells": counts,
        "headline": pairing.headline(a, b, name, counts),
        "by_cue_type": pairing.breakdown(pairs, lambda t: t.cue_type),
        "by_target_class": pairing.breakdown(pairs, lambda t: t.target_context, pairing.class_order()),
        "channels": {label: channels.run_channels(trials, bank) for label, trials in runs.items()},
        "attribution": channels.attribute(pairs),
    }


def write_proxy_report(report: dict, output_dir: str | Path) -> dict[str, Path]:
    """Write every output file; return them by name."""
    from benchmark.proxy.html import render_html
    from benchmark.proxy.plots import draw_plots
    from benchmark.proxy.render import render_markdown

    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    refuse_links(out, OUTPUTS)
    plots = draw_plots(report, out)
    files = {
        "json": out / "proxy_report.json",
        "markdown": out / "proxy_report.md",
        "html": out / "proxy_report.html",
        **plots,
    }
    write_atomic(files["json"], json.dumps(report, indent=2, ensure_ascii=False) + "\n", out)
    write_atomic(files["markdown"], render_markdown(report, {k: v.name for k, v in plots.items()}), out)
    write_atomic(files["html"], render_html(report, plots), out)
    return files
