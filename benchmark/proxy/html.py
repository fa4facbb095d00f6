"""The proxy report as one self-contained HTML file: inline CSS, plots as
base64 data URIs, every text escaped, nothing fetched from the network."""

from __future__ import annotations

from html import escape
from pathlib import Path

from benchmark.proxy.render import blocks
from benchmark.report.run_files import MAX_PLOT_BYTES, RunFileRefused, image_data_uri

CSS = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2937; margin: 0;
       background: #f9fafb; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 26px; margin-bottom: 4px; }
h2 { font-size: 20px; margin-top: 36px; border-bottom: 1px solid #e5e7eb; padding-bottom: 4px; }
h3 { font-size: 16px; margin-top: 24px; }
table { border-collapse: collapse; margin: 12px 0; font-size: 13px; width: 100%; }
th, td { border: 1px solid #e5e7eb; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f4f6; }
tr:nth-child(even) td { background: #fafafa; }
figure { margin: 16px 0; }
figure img { max-width: 100%; border: 1px solid #e5e7eb; }
figcaption { font-size: 13px; color: #4b5563; }
p.headline { font-size: 17px; padding: 12px 16px; background: #eff6ff; border-left: 4px solid #2b6cb0; }
p.headline.warning { background: #fef2f2; border-left-color: #b91c1c; }
"""


def _data_uri(path: Path) -> str:
    """A plot this report drew, read as any run dir's plot is (a PNG under the plot cap)."""
    uri, refused = image_data_uri(Path(path), Path(path).parent, MAX_PLOT_BYTES, "plot")
    if uri is None:
        raise RunFileRefused(refused)
    return uri


def render_html(report: dict, plots: dict[str, Path]) -> str:
    head = report["headline"]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape('Proxy validation report: ' + report['condition'])}</title>",
        f"<style>{CSS}</style></head><body><main>",
    ]
    for block in blocks(report):
        kind = block[0]
        if kind in ("h1", "h2", "h3"):
            parts.append(f"<{kind}>{escape(block[1])}</{kind}>")
        elif kind == "p":
            css = ""
            if block[1] == head["text"]:
                css = ' class="headline"' if head["is_measurement"] else ' class="headline warning"'
            parts.append(f"<p{css}>{escape(block[1])}</p>")
        elif kind == "list":
            parts.append("<ul>" + "".join(f"<li>{escape(item)}</li>" for item in block[1]) + "</ul>")
        elif kind == "table":
            header = "".join(f"<th>{escape(str(h))}</th>" for h in block[1])
            body = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row) + "</tr>" for row in block[2])
            parts.append(f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>")
        elif kind == "img" and block[1] in plots:
            parts.append(
                f'<figure><img src="{_data_uri(plots[block[1]])}" alt="{escape(block[2])}">'
                f"<figcaption>{escape(block[2])}</figcaption></figure>"
            )
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"
