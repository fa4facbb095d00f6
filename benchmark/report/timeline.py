"""One stream turn in the viewer: what the assistant saw and heard, on the glasses' stream clock.

- a timeline strip: the frames actually sent, as the thumbnails the run kept
  (`FrameFacts.thumbnails`), each at its stream time; the glasses' speech as
  a band; marks for the scene change (the turn's own first frame), the end
  of speech the server heard, the first reply text and the reply's end (those
  two are the server's latencies from the end of speech, seconds of wall
  clock: on a run paced in real time they fall on the stream clock too),
  each mark's label on a line of its own (marks close together stay readable);
- the glasses' speech and the spoken reply, playable (`<audio>` of the WAVs
  in the run dir: the page stays one folder that opens from disk), a playhead
  following the speech on the strip;
- the transcript the assistant got against the line the glasses spoke, with
  its word error rate (`core.words`), and the API's own transcript where
  it gave one.

Files are linked by a path relative to the page, and only when they are
regular files inside the run dir (`safe_files.inside`).
"""

from __future__ import annotations

import os
from html import escape
from pathlib import Path
from urllib.parse import quote

from core.records import TurnResult
from core.safe_files import inside
from core.words import word_error_rate

MARKS = (
    ("scene", "scene change"),
    ("speech-end", "end of speech"),
    ("first-token", "first reply text"),
    ("reply-end", "reply done"),
)


class RunFiles:
    """The run dir's kept media as links from the page's folder."""

    def __init__(self, run_dir: Path, page_dir: Path):
        self.run_dir, self.page_dir = Path(run_dir), Path(page_dir)

    def link(self, name: str | None) -> str | None:
        if not name:
            return None
        relative = Path(name)
        if relative.is_absolute() or ".." in relative.parts:
            return None
        path = self.run_dir / relative
        if not inside(path, self.run_dir):
            return None
        return quote(Path(os.path.relpath(path, self.page_dir)).as_posix())


def turn_marks(result: TurnResult) -> dict[str, int]:
    """Stream time (ms) of each mark the turn can place."""
    glasses, metrics = result.glasses, result.metrics
    marks = {}
    if glasses.scene_ms is not None:
        marks["scene"] = glasses.scene_ms
    end = glasses.speech_end_ms
    if end is not None:
        marks["speech-end"] = end
        if metrics.first_token is not None:
            marks["first-token"] = end + round(1000 * metrics.first_token)
        if metrics.reply_done is not None:
            marks["reply-end"] = end + round(1000 * metrics.reply_done)
    return marks


def _span(result: TurnResult, marks: dict[str, int]) -> tuple[int, int] | None:
    times = [*marks.values(), *(t for t, _ in result.frames.thumbnails)]
    if result.glasses.start_ms is not None:
        times.append(result.glasses.start_ms)
    if not times:
        return None
    low, high = min(times), max(times)
    return low, max(high, low + 1000)


def timeline_html(result: TurnResult, files: RunFiles) -> str:
    """The turn's strip, or "" when the record holds no stream times (the text proxy, older runs)."""
    marks = turn_marks(result)
    span = _span(result, marks)
    if span is None:
        return ""
    low, high = span
    width = high - low

    def share(t_ms: int) -> float:
        return (t_ms - low) / width

    def left(t_ms: int) -> str:
        return f"{100 * share(t_ms):.2f}%"

    parts = []
    glasses = result.glasses
    if glasses.start_ms is not None and glasses.speech_end_ms is not None:
        begin = glasses.start_ms + (glasses.lead_ms or 0)
        parts.append(
            f'<span class="band-speech" style="left:{left(begin)};'
            f'width:{100 * max(0, glasses.speech_end_ms - begin) / width:.2f}%" title="the glasses speak">'
            "</span>"
        )
    for n, (t_ms, name) in enumerate(result.frames.thumbnails):
        link = files.link(name)
        if link is None:
            continue
        parts.append(
            f'<img class="thumb" loading="lazy" src="{escape(link)}" data-t-ms="{t_ms}" '
            f'style="left:{left(t_ms)};top:{4 + 50 * (n % 2)}px" alt="frame sent at {t_ms} ms" '
            f'title="frame sent at {(t_ms - low) / 1000:.2f} s">'
        )
    labels = []  # after every mark, so no mark's line crosses another's label
    for key, name in MARKS:
        if key in marks:
            flip = " flip" if share(marks[key]) > 0.7 else ""  # its label on the left, inside the strip
            parts.append(
                f'<span class="mark mark-{key}" style="left:{left(marks[key])}" data-t-ms="{marks[key]}"></span>'
            )
            labels.append(
                f'<span class="mark-label label-{key}{flip}" style="left:{left(marks[key])}">'
                f"{escape(name)} at {(marks[key] - low) / 1000:.2f} s</span>"
            )
    parts += labels
    start = glasses.start_ms if glasses.start_ms is not None else low
    parts.append(f'<span class="playhead" hidden data-start-ms="{start}"></span>')
    sent = result.frames.sent or 0
    kept = len(result.frames.thumbnails)
    note = (
        f"{sent} frame(s) sent under {escape(result.frames.policy or '-')}"
        + (f", {kept} kept" if sent != kept else "")
        + f"; the marks are seconds from the strip's left edge (stream time {low} ms), not latencies: in the "
        "facts below, speech_end_to_* count from the end of speech, first token and reply latency from the "
        "request to the model"
    )
    return (
        f'<div class="timeline" data-low-ms="{low}" data-high-ms="{high}"><div class="track">{"".join(parts)}'
        f'</div></div><p class="note">{note}</p>'
    )


def audio_html(result: TurnResult, files: RunFiles) -> str:
    players = []
    for kind, name, label in (
        ("speech", result.glasses.speech_file, "the glasses' speech"),
        ("reply", result.reply.audio_file, "the spoken reply"),
    ):
        link = files.link(name)
        if link is not None:
            players.append(
                f'<label class="player">{label} <audio class="{kind}-audio" controls preload="metadata" '
                f'src="{escape(link)}"></audio></label>'
            )
    return f'<div class="players">{"".join(players)}</div>' if players else ""


def transcript_html(result: TurnResult) -> str:
    """The transcript the assistant got, and the API's own, against the line the glasses spoke."""
    script = result.glasses.script
    if not script or result.input.speech_source not in ("perceived", "media"):
        return ""
    rows = [("the line spoken (script)", script, "")]
    rows.append(
        ("transcript the assistant got", result.input.speech, f"{word_error_rate(script, result.input.speech):.2f}")
    )
    if result.reply.heard:
        rows.append(
            ("the API's own transcript", result.reply.heard, f"{word_error_rate(script, result.reply.heard):.2f}")
        )
    body = "".join(
        f"<tr><th>{escape(name)}</th><td>{escape(text)}</td><td>{escape(wer)}</td></tr>" for name, text, wer in rows
    )
    return f'<table class="transcript"><tr><th></th><th>text</th><th>word error rate</th></tr>{body}</table>'


def stream_turn_html(result: TurnResult, files: RunFiles) -> str:
    """Everything the viewer shows of one stream turn's media, or "" on the text proxy."""
    blocks = [timeline_html(result, files), audio_html(result, files), transcript_html(result)]
    if not any(blocks):
        return ""
    return f'<div class="stream-turn"><h4>Turn {result.turn}</h4>{"".join(blocks)}</div>'


STYLE = """
.stream-turn{margin:.6rem 0 1rem}
.timeline{position:relative;height:180px;background:#f6f8fb;border:1px solid #ccd;border-radius:4px;
margin:.3rem 0} .timeline .track{position:absolute;left:48px;right:48px;top:0;bottom:0}
.timeline .thumb{position:absolute;width:80px;transform:translateX(-40px);border:1px solid #556;z-index:1}
.timeline .thumb:hover{width:160px;transform:translateX(-80px);z-index:5}
.band-speech{position:absolute;bottom:0;height:12px;background:#90b4d8}
.mark{position:absolute;top:0;bottom:0;width:0;border-left:2px solid #333;z-index:2}
.mark-scene{border-color:#2f855a} .mark-speech-end{border-color:#2b6cb0} .mark-first-token{border-color:#b7791f}
.mark-reply-end{border-color:#c53030}
/* each mark's label on a line of its own and above every mark's line, so close marks never print over
   each other; right of its mark, or left of it (flip) in the last 30% of the strip */
.mark-label{position:absolute;bottom:14px;margin-left:4px;font-size:11px;line-height:15px;white-space:nowrap;
background:#fffe;padding:0 2px;z-index:3}
.label-speech-end{bottom:31px} .label-first-token{bottom:48px} .label-reply-end{bottom:65px}
.mark-label.flip{transform:translateX(-100%);margin-left:-2px}
.playhead{position:absolute;top:0;bottom:0;width:0;border-left:2px dashed #000;z-index:4}
.players{display:flex;gap:1rem;flex-wrap:wrap;align-items:center} .player{font-size:13px}
"""

SCRIPT = """
document.querySelectorAll('audio.speech-audio').forEach(audio => {  // a playhead follows the speech
  const strip = audio.closest('.stream-turn').querySelector('.timeline');
  if (!strip) return;
  const track = strip.querySelector('.track');
  const head = track.querySelector('.playhead');
  const low = +strip.dataset.lowMs, high = +strip.dataset.highMs, start = +head.dataset.startMs;
  audio.addEventListener('timeupdate', () => {
    head.hidden = false;
    head.style.left = (100 * (start + 1000 * audio.currentTime - low) / (high - low)) + '%';
  });
});
"""
