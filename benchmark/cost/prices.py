"""What a run costs: the price table and the one rule that prices a reply.

The table is TOML, one table per model id (as given to `--model`, a
judge's model id, or a realtime API's transcription model), holding USD per
million tokens under `TOKEN_KEYS`, USD per minute of audio under
`MINUTE_KEYS` (a transcription model billed by the second), and the
entry's `date` and `source`. `benchmark/cost/prices.toml` ships with the
package; `wearsim bench --prices FILE` adds entries and replaces whole
entries of it. A key left out means that kind of token has no price.

A model id finds its entry by the id itself, then by its `provider:model`
form (`gpt-4o-mini` -> `openai:gpt-4o-mini`); every local model
(`local`, `local:PATH.gguf`) by the `local` entry. No entry: unknown cost.

The pricing rule (`reply_cost`), for one reply's `Usage`:

- each input token is text, audio or image, and cached or not; each output
  token text or audio. Tokens of a known kind are priced at their key's
  price; a kind used with no price makes the cost unknown;
- tokens whose kind the provider did not say (text or image, say) are
  priced only when every price they could fall under is the same (for
  example a model whose text and image input cost alike); otherwise the
  cost is unknown;
- a provider that reports no cached count at all (llama.cpp, vLLM and most
  OpenAI-compatible servers leave `cached_tokens` out) has its input priced
  as not cached: the most it can have cost, as no cached price is above its
  input price. The cost then carries a note (`Cost.notes`) that it is an
  upper bound, which findings repeat. Where a kind's cached price is above
  its input price that is no bound, and the cost is unknown. A reported
  cached total whose split by kind is missing follows the rule above;
- a reply whose usage was not reported has an unknown cost, unless every
  one of the model's prices is 0.

A realtime API's input transcription (`transcription_cost`, for one turn's
`TranscriptionUsage`) is priced by the transcription model's own entry:
its audio and text input tokens and its text output tokens at their keys
(the same rule), and seconds of audio at `audio_minute` / 60. A
transcription whose usage never came has an unknown cost.

Unknown is never 0: `Cost.usd` is None and `Cost.why` says why, and what to
change in the `--prices` file where a price would settle it.
"""

from __future__ import annotations

import datetime
import math
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from candidates.model_ids import parse_model_id, price_key
from core.candidate import TranscriptionUsage, Usage

TOKEN_KEYS = (
    "text_input",
    "text_cached_input",
    "text_output",
    "audio_input",
    "audio_cached_input",
    "audio_output",
    "image_input",
    "image_cached_input",
)  # USD per million tokens
MINUTE_KEYS = ("audio_minute",)  # USD per minute of audio (a transcription billed by duration)
PRICE_KEYS = TOKEN_KEYS + MINUTE_KEYS
INFO_KEYS = ("date", "source")
SHIPPED = Path(__file__).with_name("prices.toml")
MAX_PRICE_FILE_BYTES = 1_000_000
MAX_TEXT = 500  # a date or source longer than this is not one
KINDS = ("text", "audio", "image")
MILLION = 1_000_000


class PriceFileError(ValueError):
    """A price file that cannot be used: names the file, the entry and the field."""

    def __init__(self, path: str, entry: str | None, field_name: str | None, problem: str):
        where = [str(path)]
        if entry is not None:
            where.append(f'entry ["{entry}"]')
        if field_name is not None:
            where.append(f"field '{field_name}'")
        super().__init__(f"{', '.join(where)}: {problem}")


@dataclass(frozen=True, kw_only=True)
class Price:
    """One model's prices: USD per million tokens for the kinds it prices."""

    model: str
    rates: dict[str, float]
    date: str
    source: str

    @property
    def free(self) -> bool:
        """Every kind of token priced at 0, and audio by the minute too where it is priced (a local model)."""
        return all(self.rates.get(key) == 0 for key in TOKEN_KEYS) and all(
            self.rates.get(key, 0) == 0 for key in MINUTE_KEYS
        )

    def to_json(self) -> dict:
        return {
            **{key: self.rates[key] for key in PRICE_KEYS if key in self.rates},
            "date": self.date,
            "source": self.source,
        }


@dataclass(frozen=True, kw_only=True)
class Cost:
    """USD, or None (unknown) with the reasons; `notes`: how a known figure is no more than a bound."""

    usd: float | None
    why: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def __add__(self, other: Cost) -> Cost:
        why = tuple(dict.fromkeys(self.why + other.why))
        notes = tuple(dict.fromkeys(self.notes + other.notes))
        if self.usd is None or other.usd is None:
            return Cost(usd=None, why=why, notes=notes)
        return Cost(usd=self.usd + other.usd, why=why, notes=notes)


NOTHING = Cost(usd=0.0)


def _entry(path: str, name: Any, data: Any) -> Price:
    """One table of a price file, checked; `PriceFileError` names file, entry and field."""
    if not isinstance(name, str) or not name.strip() or len(name) > 300:
        raise PriceFileError(path, str(name)[:60], None, "an entry's name must be a model id")
    try:
        parse_model_id(name)
    except ValueError as exc:
        raise PriceFileError(path, name, None, f"not a model id: {exc}") from None
    if not isinstance(data, dict):
        raise PriceFileError(
            path, name, None, f'must be a table of prices (write ["{name}"] and the prices under it), got a value'
        )
    rates: dict[str, float] = {}
    for key, value in data.items():
        if key in INFO_KEYS:
            continue
        if key not in PRICE_KEYS:
            raise PriceFileError(
                path, name, str(key)[:60], f"unknown key; the keys are {', '.join(PRICE_KEYS + INFO_KEYS)}"
            )
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            unit = "minute of audio" if key in MINUTE_KEYS else "million tokens"
            raise PriceFileError(path, name, key, f"must be a number of USD per {unit}, got {str(value)[:40]!r}")
        if not math.isfinite(value) or value < 0:
            raise PriceFileError(path, name, key, f"must be a finite price, 0 or more, got {value}")
        rates[key] = float(value)
    info = {}
    for key in INFO_KEYS:
        value = data.get(key)
        if isinstance(value, (datetime.date, datetime.datetime)):  # TOML's own date type
            value = value.isoformat()
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT:
            shown = "missing" if value is None else f"got {str(value)[:40]!r}"
            raise PriceFileError(
                path,
                name,
                key,
                f"every entry needs its {key} (when the price was read, and "
                f"where) as text of at most {MAX_TEXT} characters; {shown}",
            )
        info[key] = value.strip()
    return Price(model=name, rates=rates, date=info["date"], source=info["source"])


def _where_toml_failed(text: str, message: str) -> tuple[str | None, str | None]:
    """The entry and the key on the line a TOML error names (Python 3.11's message says `at line N`)."""
    found = re.search(r"line (\d+)", message)
    if not found:
        return None, None
    lines = text.splitlines()
    number = min(int(found.group(1)), len(lines))
    entry = None
    for line in lines[:number]:
        header = re.match(r"\s*\[+\s*(\"[^\"]*\"|'[^']*'|[^\]]*?)\s*\]+", line)
        if header:
            entry = header.group(1).strip("\"'")
    key = re.match(r"\s*(\"[^\"]*\"|'[^']*'|[A-Za-z0-9_.-]+)\s*=", lines[number - 1]) if lines else None
    return entry, key.group(1).strip("\"'") if key else None


def load_price_file(path: Path | str) -> dict[str, Price]:
    """Read and check a price file; `PriceFileError` names the file, the entry and the field."""
    path = Path(path)
    shown = str(path)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_PRICE_FILE_BYTES + 1)
    except OSError as exc:
        raise PriceFileError(shown, None, None, f"cannot read it: {exc.strerror or exc}") from None
    if len(raw) > MAX_PRICE_FILE_BYTES:
        raise PriceFileError(shown, None, None, f"larger than {MAX_PRICE_FILE_BYTES:,} bytes; not a price table")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PriceFileError(shown, None, None, "not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        entry, key = _where_toml_failed(text, str(exc))
        hint = ""
        if entry and ":" in entry and f'"{entry}"' not in text and f"'{entry}'" not in text:
            hint = f' (a model id holds ":": quote the table name, ["{entry}"])'
        raise PriceFileError(
            shown, entry or "(before the first table)", key or "(unknown)", f"not valid TOML: {exc}{hint}"
        ) from None
    return {name: _entry(shown, name, value) for name, value in data.items()}


class PriceTable:
    """Prices by model id; `origin` says where they came from (for the manifest and reports)."""

    def __init__(self, entries: dict[str, Price], origin: str):
        self.entries = entries
        self.origin = origin

    def get(self, model_id: str | None) -> Price | None:
        if not model_id:
            return None
        if model_id in self.entries:
            return self.entries[model_id]
        try:
            return self.entries.get(price_key(model_id))
        except ValueError:
            return None

    def for_manifest(self, model_ids: Iterable[str | None]) -> dict:
        """The prices of the models a run asks, by model id (null: no price), for `manifest.json`."""
        out = {}
        for model_id in dict.fromkeys(m for m in model_ids if m):
            price = self.get(model_id)
            out[model_id] = None if price is None else price.to_json()
        return out


def price_table(extra: Path | str | None = None) -> PriceTable:
    """The shipped table, with `extra`'s entries added (an entry of both: `extra`'s whole entry)."""
    entries = load_price_file(SHIPPED)
    if extra is None:
        return PriceTable(entries, "the shipped table (benchmark/cost/prices.toml)")
    return PriceTable(
        {**entries, **load_price_file(extra)}, f"the shipped table (benchmark/cost/prices.toml) and {extra}"
    )


def table_from_manifest(manifest: dict) -> tuple[PriceTable, list[str]]:
    """The prices a run recorded (`manifest["prices"]`), else the shipped table; and the problems of
    recorded entries that could not be read (those models are left without a price)."""
    recorded = manifest.get("prices")
    if not isinstance(recorded, dict):
        return price_table(), []
    entries, problems = {}, []
    for model_id, data in recorded.items():
        if data is None:
            continue
        try:
            entries[model_id] = _entry("manifest.json prices", model_id, data)
        except PriceFileError as exc:
            problems.append(str(exc))
    return PriceTable(entries, "the run's manifest"), problems


def _priced(
    cells: list[tuple[int | None, str]], total: int, rates: dict[str, float], direction: str, model: str
) -> Cost:
    """Tokens in `cells` (count or None, price key) that add up to `total`, priced by the rule above."""
    usd, known, open_keys = 0.0, 0, []
    for count, key in cells:
        if count is None:
            open_keys.append(key)
            continue
        known += count
        if count:
            if key not in rates:
                return Cost(
                    usd=None,
                    why=(
                        f"{model}: {key.replace('_', ' ')} tokens have no price (add {key} to its "
                        "entry in the --prices file)",
                    ),
                )
            usd += count * rates[key]
    rest = total - known
    if rest < 0:
        return Cost(usd=None, why=(f"{model}: the reply's {direction} token counts do not add up",))
    if rest and open_keys:
        prices = {rates.get(key) for key in open_keys}
        price = prices.pop() if len(prices) == 1 else None
        if price is None:
            return Cost(
                usd=None,
                why=(
                    f"{model}: {direction} tokens of an unknown kind (the provider did not split "
                    f"them), and the {' / '.join(open_keys)} prices differ or are missing (give "
                    "them one price in the --prices file to price such replies)",
                ),
            )
        usd += rest * price
    elif rest:  # every part known but they do not make the total
        return Cost(usd=None, why=(f"{model}: the reply's {direction} token counts do not add up",))
    return Cost(usd=usd / MILLION)


def reply_cost(usage: Usage | None, price: Price | None, model: str) -> Cost:
    """What one reply of `model` cost under `price` (None: no price for the model)."""
    if price is None:
        return Cost(usd=None, why=(f"no price for {model}",))
    if price.free:
        return NOTHING
    if usage is None or not usage.reported:
        return Cost(
            usd=None,
            why=(
                f"{model}: a reply's usage was not reported (the provider gave no token counts, "
                "so no price file can price it: run without --budget)",
            ),
        )
    u = usage.completed()
    notes: tuple[str, ...] = ()
    if u.cached_input_tokens is None and u.input_tokens:  # the provider said nothing of a cache
        dearer = [
            kind
            for kind in KINDS
            if price.rates.get(f"{kind}_cached_input", 0.0) > price.rates.get(f"{kind}_input", math.inf)
            and getattr(u, f"input_{kind}_tokens") != 0
        ]
        if dearer:
            return Cost(
                usd=None,
                why=(
                    f"{model}: the provider did not say which input was cached, and its "
                    f"{dearer[0]}_cached_input price is above its {dearer[0]}_input price, so pricing "
                    "it as not cached is no upper bound (fix the entry in the --prices file)",
                ),
            )
        u = replace(u, cached_input_tokens=0).completed()
        notes = (f"{model}: the provider did not say which input was cached; priced as not cached, an upper bound",)
    cells: list[tuple[int | None, str]] = []
    for kind in KINDS:
        given, cached = getattr(u, f"input_{kind}_tokens"), getattr(u, f"cached_{kind}_tokens")
        cells.append((cached, f"{kind}_cached_input"))
        cells.append((None if given is None or cached is None else given - cached, f"{kind}_input"))
    if any(count is not None and count < 0 for count, _ in cells):
        return Cost(usd=None, why=(f"{model}: the reply's cached tokens exceed its input tokens",))
    spent = _priced(cells, u.input_tokens, price.rates, "input", model)
    spent += _priced(
        [(u.output_text_tokens, "text_output"), (u.output_audio_tokens, "audio_output")],
        u.output_tokens,
        price.rates,
        "output",
        model,
    )
    return Cost(usd=spent.usd, why=spent.why, notes=notes)


def transcription_cost(usage: TranscriptionUsage | None, price: Price | None, model: str) -> Cost:
    """What one turn's input transcription cost under `price` (the transcription model's entry;
    None: no price). No transcription costs nothing."""
    if usage is None:
        return NOTHING
    if price is None:
        return Cost(usd=None, why=(f"no price for {model} (the realtime API's input transcription)",))
    if price.free:
        return NOTHING
    if not usage.reported:
        return Cost(usd=None, why=(f"{model}: an input transcription's usage was not reported",))
    cost = NOTHING
    if usage.input_tokens or usage.output_tokens:
        cost += _priced(
            [(usage.input_audio_tokens, "audio_input"), (usage.input_text_tokens, "text_input")],
            usage.input_tokens,
            price.rates,
            "input",
            model,
        )
        cost += _priced([(usage.output_tokens, "text_output")], usage.output_tokens, price.rates, "output", model)
    if usage.seconds:
        if "audio_minute" not in price.rates:
            return cost + Cost(usd=None, why=(f"{model}: audio by the minute (audio minute) has no price",))
        cost += Cost(usd=usage.seconds / 60 * price.rates["audio_minute"])
    return cost


def usage_cost(usage: Usage | TranscriptionUsage | None, price: Price | None, model: str) -> Cost:
    """A reply's or a transcription's cost: the rule that fits what was counted."""
    if isinstance(usage, TranscriptionUsage):
        return transcription_cost(usage, price, model)
    return reply_cost(usage, price, model)


@dataclass(kw_only=True)
class Spend:
    """Spend added up as replies (and input transcriptions) arrive (`wearsim bench --budget`):
    cached replies cost nothing again. `unknown` holds why a cost could not be known."""

    table: PriceTable
    usd: float = 0.0
    unknown: list[str] = field(default_factory=list)

    def add(self, model: str, usage: Usage | TranscriptionUsage | None, cached: bool = False) -> None:
        if cached:
            return
        cost = usage_cost(usage, self.table.get(model), model)
        if cost.usd is None:
            self.unknown += [why for why in cost.why if why not in self.unknown]
        else:
            self.usd += cost.usd
