"""`wearsim merge`: the run dirs of a sharded run joined into one.

The shards must be one run: their manifests agree on every setting that can
change a result (`runner.RESUME_KEYS` but the shard itself, and the prices
the report uses), they are shards of the same count, no two hold the same
cell, and every record sits in the shard that ran it. Each refusal names the
field (or the cell) and the two dirs. The merged dir holds the shards'
records in the order an unsharded run plans its cells, their kept media
(`audio/`, `frames/`), the manifest with `shard` null and `merged_from`,
and the report, which is the unsharded run's: every number is computed from
the records and the manifest, and both are the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benchmark.kept_media import AUDIO_DIR, FRAMES_DIR
from benchmark.merge.media import copy_kept, read_kept
from benchmark.run.manifest import LEGACY_RESUME_VALUES, RESUME_KEYS, write_manifest
from benchmark.run.outputs import CACHE_LOG, RUN_OUTPUTS
from benchmark.shards import cell_key, manifest_shard, planned_cells, shard_of
from core.records import TrialRecord
from core.safe_files import UnsafePathError, refuse_links, write_atomic

AGREED = tuple(key for key in RESUME_KEYS if key != "shard") + ("prices",)  # what every shard must share


class MergeError(ValueError):
    """The run dirs cannot be merged; the message names the field or the cell, and the dirs."""


@dataclass(frozen=True, kw_only=True)
class Shard:
    path: Path
    manifest: dict
    records: tuple[TrialRecord, ...]

    @property
    def share(self) -> tuple[int, int] | None:
        return manifest_shard(self.manifest)


def _short(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def read_shard(path: Path) -> Shard:
    from benchmark.report import read_manifest
    from benchmark.scoring import load_trials

    path = Path(path)
    if not (path / "manifest.json").is_file():
        raise MergeError(f"{path}: no manifest.json; merge takes the run dirs `wearsim bench --shard` wrote")
    manifest = read_manifest(path)
    transcripts = path / "transcripts.jsonl"
    if (transcripts.exists() or transcripts.is_symlink()) and not transcripts.is_file():
        raise MergeError(
            f"{transcripts}: not a regular file (a FIFO, a device, a folder, or a link to one); "
            "a shard's records cannot be read, so nothing was merged"
        )
    records = load_trials(transcripts).trials if transcripts.is_file() and transcripts.stat().st_size else ()
    return Shard(path=path, manifest=manifest, records=tuple(records))


def check_shards(shards: list[Shard]) -> None:
    """Refuse shards that are not one run, naming the field or the cell."""
    first = shards[0]
    for other in shards[1:]:
        for key in AGREED:
            mine = first.manifest.get(key, LEGACY_RESUME_VALUES.get(key))
            theirs = other.manifest.get(key, LEGACY_RESUME_VALUES.get(key))
            if mine != theirs:
                raise MergeError(
                    f"{other.path} was run with another {key} ({_short(theirs)}) than {first.path} "
                    f"({_short(mine)}): shards of one run share every setting"
                )
    counts = {s.path: s.share[1] if s.share else None for s in shards}
    if len(set(counts.values())) > 1:
        described = ", ".join(
            f"{p}: {'shard ' + str(s.share[0]) + '/' + str(n) if n and s.share else 'not a shard'}"
            for p, n, s in zip(counts, counts.values(), shards)
        )
        raise MergeError(
            f"the dirs are not shards of one split (shard: {described}); merge the N shards of one --shard K/N split"
        )
    seen: dict[tuple[int, int] | None, Path] = {}
    for shard in shards:
        if shard.share is not None and shard.share in seen:
            raise MergeError(
                f"{seen[shard.share]} and {shard.path} are both shard {shard.share[0]}/{shard.share[1]}: they overlap"
            )
        seen[shard.share] = shard.path
    owner: dict[tuple, Path] = {}
    for shard in shards:
        for record in shard.records:
            if shard.share is not None and shard_of(record.cell, shard.share[1]) != shard.share[0]:
                raise MergeError(
                    f"{shard.path}: the record of cell {_cell_text(record)} is not in shard "
                    f"{shard.share[0]}/{shard.share[1]} (was the dir written by another run?)"
                )
            if record.cell in owner:
                raise MergeError(
                    f"{owner[record.cell]} and {shard.path} both hold cell {_cell_text(record)}: the shards overlap"
                )
            owner[record.cell] = shard.path


def _cell_text(record: TrialRecord) -> str:
    return " / ".join(str(part) for part in record.cell)


def missing_shards(shards: list[Shard]) -> list[str]:
    """The shards of the split that were not given ("2/4", ...)."""
    if shards[0].share is None:
        return []
    count = shards[0].share[1]
    given = {s.share[0] for s in shards if s.share is not None}  # (all are, once check_shards passed)
    return [f"{k}/{count}" for k in range(1, count + 1) if k not in given]


def merged_manifest(shards: list[Shard]) -> dict:
    manifest = dict(shards[0].manifest)
    stamps = [stamp for s in shards if isinstance(stamp := s.manifest.get("timestamp_utc"), str)]
    configs = [s.manifest.get("config") for s in shards]  # `--config`: kept when every shard read the same file
    manifest.update(
        shard=None,
        timestamp_utc=min(stamps) if stamps else manifest.get("timestamp_utc"),
        budget_usd=None,
        config=configs[0] if all(c == configs[0] for c in configs) else None,
        merged_from=[
            {
                "run_dir": str(s.path),
                "shard": s.manifest.get("shard"),
                "timestamp_utc": s.manifest.get("timestamp_utc"),
                "runner_git_commit": s.manifest.get("runner_git_commit"),
                "config": s.manifest.get("config"),
            }
            for s in shards
        ],
    )
    return manifest


def ordered_records(shards: list[Shard], manifest: dict) -> list[TrialRecord]:
    """Every shard's records, in the order an unsharded run plans its cells (any others after, by cell)."""
    records = {record.cell: record for shard in shards for record in shard.records}
    order = {cell_key(cell): n for n, cell in enumerate(planned_cells(manifest) or [])}
    return sorted(records.values(), key=lambda r: (order.get(r.cell, len(order)), json.dumps(list(r.cell))))


def _copy_media(shards: list[Shard], out: Path, records: list[TrialRecord]) -> tuple[int, list[str]]:
    """The kept frames and speech and the spoken replies the records name, copied from the shard that
    wrote them when each is what a kept frame or WAV can be (`merge_media.read_kept`). Returns how many
    were copied and each refusal ("SHARD/NAME: why")."""
    wanted: set[tuple[tuple, str]] = set()  # (cell, name)
    for record in records:
        for turn in record.turns:
            names = [turn.reply.audio_file, turn.glasses.speech_file, *(name for _, name in turn.frames.thumbnails)]
            wanted.update((record.cell, name) for name in names if name)
        if record.watching is not None:  # a proactive trial's frames and spoken remarks
            names = [*(name for _, name in record.watching.thumbnails), *(p.audio_file for p in record.watching.probes)]
            wanted.update((record.cell, name) for name in names if name)
    source = {record.cell: shard.path for shard in shards for record in shard.records}
    copied, refused = 0, []
    for cell, name in sorted(wanted, key=lambda pair: pair[1]):
        relative = Path(name)
        if relative.is_absolute() or ".." in relative.parts or relative.parts[0] not in (AUDIO_DIR, FRAMES_DIR):
            refused.append(f"{source[cell]}: {name!r}: not a name under {AUDIO_DIR}/ or {FRAMES_DIR}/")
            continue
        problem = copy_kept(source[cell] / relative, source[cell], out / relative, out)
        if problem:
            refused.append(f"{source[cell] / relative}: {problem}")
        else:
            copied += 1
    return copied, refused


def merge_runs(paths: list[Path], out: Path) -> dict:
    """Check the shards, write the merged run dir, write its report; returns what was merged."""
    from benchmark.report import REPORT_OUTPUTS, write_report

    if not paths:
        raise MergeError("name the shards' run dirs, e.g. wearsim merge runs/s1 runs/s2 --output-dir runs/all")
    out = Path(out)
    if any(Path(p).resolve() == out.resolve() for p in paths):
        raise MergeError(f"--output-dir {out} is one of the shards; choose a new dir")
    shards = [read_shard(Path(p)) for p in paths]
    check_shards(shards)
    if (out / "transcripts.jsonl").exists() or (out / "manifest.json").exists():
        raise MergeError(f"{out} already holds a run; choose a new --output-dir")
    out.mkdir(parents=True, exist_ok=True)
    try:
        refuse_links(out, (*RUN_OUTPUTS, *REPORT_OUTPUTS))
    except UnsafePathError as exc:
        raise MergeError(str(exc)) from None
    manifest = merged_manifest(shards)
    records = ordered_records(shards, manifest)
    copied, refused = _copy_media(shards, out, records)
    write_atomic(out / "transcripts.jsonl", "".join(record.to_line() for record in records), out, sync=True)
    logs = []
    for shard in shards:  # the response-cache logs, each bounded as the media are
        if (shard.path / CACHE_LOG).exists() or (shard.path / CACHE_LOG).is_symlink():
            data, problem = read_kept(shard.path / CACHE_LOG, shard.path)
            if data is None:
                refused.append(f"{shard.path / CACHE_LOG}: {problem}")
            else:
                logs.append(data.decode("utf-8", "replace"))
    if logs:
        write_atomic(out / CACHE_LOG, "".join(logs), out)
    write_manifest(out / "manifest.json", manifest)
    summary = write_report(out)
    return {
        "shards": len(shards),
        "records": len(records),
        "media_files": copied,
        "refused": refused,
        "missing": missing_shards(shards),
        "summary": summary,
    }


__all__ = ["MergeError", "merge_runs", "check_shards", "read_shard"]
