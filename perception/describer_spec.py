"""The describer registry: every scene describer a command line or a hello may name, checked without
loading one.

`perception.describers.make_describer` builds them (and imports OpenCV and the OCR model); this module
imports nothing heavy, so `wearsim bench` checks `--describer` here first and a name that is none of
them exits 2 before a run dir or a server exists. The server (which it offers by default, which only
when named), the scoring (which are blind on drawn frames), the report (which reads what) and the
`--describer` help all read `DESCRIBERS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from candidates.providers import describers as describing_providers

DRAWN_SOURCES = ("synthetic", "pictograph")  # frames the run draws, as `cannot_read` names them
SERVER_OFFERS = ("default", "opt-in", "operator")


@dataclass(frozen=True, kw_only=True)
class Describer:
    name: str  # as given to --describer (a model describer: `name:MODEL`)
    what: str  # the help text's words for it
    maker: str = ""  # "module:Class" that `make_describer` imports and builds with no arguments ("" for a model)
    default: bool = False  # the describer used when none is named (exactly one entry)
    model: bool = False  # a vision model `name:MODEL`, opened as a candidate (needs that provider's key)
    # the server offers it to every hello (default), only when `wearsim serve --describer NAME` names it
    # (opt-in), or as `NAME:MODEL` named by the operator (operator; it spends the server's key)
    server: str = "default"
    blind: bool = False  # on drawn frames its text is the same for every scene (benchmark/scoring/blind.py)
    reads: tuple[str, ...] = ()  # the drawn frame sources (DRAWN_SOURCES) it reads back
    reads_how: str = ""  # how it reads them, for the report's note ("the text from the frame's comment")
    misses: str = ""  # why it makes nothing of drawn frames it does not read (the report's note)

    def __post_init__(self):
        if self.server not in SERVER_OFFERS or not set(self.reads) <= set(DRAWN_SOURCES):
            raise ValueError(
                f"describer {self.name!r}: server must be one of {', '.join(SERVER_OFFERS)} and "
                f"reads a subset of {', '.join(DRAWN_SOURCES)}"
            )

    @property
    def form(self) -> str:
        return f"{self.name}:MODEL" if self.model else self.name


# None reads a pictograph offline: `opencv` names colours and shapes, not things; `authored` finds no
# comment in it and falls back to `opencv`; `ocr` reads only a screen's own text. A vision model as the
# describer (`openai:MODEL`) looks at either.
DESCRIBERS: dict[str, Describer] = {
    d.name: d
    for d in (
        Describer(
            name="opencv",
            what="colours and shapes, no names",
            maker="perception.describers:OpenCVDescriber",
            default=True,
            blind=True,
            misses="it names colours and shapes, not things",
        ),
        Describer(
            name="authored",
            what="reads synthetic frames back from their JPEG comment",
            maker="perception.describers:AuthoredDescriber",
            reads=("synthetic",),
            reads_how="the text from the frame's comment",
            misses="it finds no written text in them and falls back to opencv's colours and shapes",
        ),
        # offered by the server only when named: OCR takes about 0.7 s of CPU a frame
        Describer(
            name="ocr",
            what="reads the text in the pixels, offline",
            maker="perception.describers:OCRDescriber",
            server="opt-in",
            blind=True,
            reads=("synthetic",),
            misses="it reads only text in the pixels",
        ),
        # a vision model of each provider whose table entry says it describes (`candidates.providers`)
        *(
            Describer(name=p.name, what=p.describer, model=True, server="operator", reads=DRAWN_SOURCES)
            for p in describing_providers()
            if p.describer
        ),
    )
}

# the describer used when none is named: the one entry marked `default`
(DEFAULT_DESCRIBER,) = (d.name for d in DESCRIBERS.values() if d.default)


def local_names() -> tuple[str, ...]:
    """The describers that run here: no key, no network."""
    return tuple(d.name for d in DESCRIBERS.values() if not d.model)


def model_describers() -> tuple[str, ...]:
    """The describers that are a vision model: `PROVIDER:MODEL`."""
    return tuple(d.name for d in DESCRIBERS.values() if d.model)


def offered(how: str) -> tuple[str, ...]:
    """The local describers the server offers `how` ("default" or "opt-in")."""
    return tuple(d.name for d in DESCRIBERS.values() if d.server == how and not d.model)


def blind_names() -> tuple[str, ...]:
    """The describers whose text on drawn frames is the same for every scene."""
    return tuple(d.name for d in DESCRIBERS.values() if d.blind)


def choices() -> str:
    """ "opencv, authored, ocr, openai:MODEL or gemini:MODEL"."""
    forms = [d.form for d in DESCRIBERS.values()]
    return f"{', '.join(forms[:-1])} or {forms[-1]}"


def help_text() -> str:
    """Each describer with what it does, for `--describer` help."""
    return ", ".join(f"{d.form} ({d.what})" for d in DESCRIBERS.values())


def needs_model(spec: str) -> bool:
    """The describer is a vision model, which the caller opens as a candidate (`open_candidate(spec)`)."""
    name, _, model = spec.partition(":")
    entry = DESCRIBERS.get(name)
    return entry is not None and entry.model and bool(model)


def describer_problem(spec: str) -> str | None:
    """None for a describer name `make_describer` takes, else what is wrong with it (one line)."""
    entry = DESCRIBERS.get(spec)
    if (entry is not None and not entry.model) or needs_model(spec):
        return None
    return f"unknown describer {spec!r}: use {choices()}"


def readers(source: str) -> tuple[str, ...]:
    """The offline describers that read frames drawn as `source` back."""
    return tuple(d.name for d in DESCRIBERS.values() if not d.model and source in d.reads)


def cannot_read(spec: str | None, source: str) -> bool:
    """`spec` is an offline describer that makes nothing of frames drawn as `source` (`synthetic`,
    `pictograph`); False for recorded frames and for a vision model."""
    entry = DESCRIBERS.get(spec) if spec else None
    return entry is not None and not entry.model and source in DRAWN_SOURCES and source not in entry.reads
