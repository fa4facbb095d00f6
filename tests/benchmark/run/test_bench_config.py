"""`wearsim bench --config FILE.toml`: flags read from a TOML file, named as in `--help`; the command line
wins over the file; a file that cannot be used is one line naming it (and the key) with exit status 2;
and `--help` shows the flags in groups, the glasses group being the one list of the flags that need
`--via stream`."""

from __future__ import annotations

import hashlib
import json

import pytest

from benchmark import cli
from tests.fake_openai import FakeOpenAI

# ten flags, each kind of value: strings, arrays for comma lists, whole numbers, a number, a choice, true
TEN = """\
model = "openai:fake"
base-url = "{base_url}"
judge-family = "lexical"
conditions = ["baseline", "track_current_frame"]
ids = ["sc-01", "sc-02"]
trials = 2
max-tokens = 120
temperature = 0.5
repair-style = "deictic"
no-camera = true
"""
SAME_ON_THE_COMMAND_LINE = [
    "--model",
    "openai:fake",
    "--base-url",
    "{base_url}",
    "--judge-family",
    "lexical",
    "--conditions",
    "baseline,track_current_frame",
    "--ids",
    "sc-01,sc-02",
    "--trials",
    "2",
    "--max-tokens",
    "120",
    "--temperature",
    "0.5",
    "--repair-style",
    "deictic",
    "--no-camera",
]
# what legitimately differs between two runs of the same settings
DIFFERS = ("timestamp_utc", "config")


def parse(argv: list[str]):
    """The namespace `wearsim ARGV` runs with, as `cli.main` makes it (the file read under the command line)."""
    parser = cli.build_parser()
    args = parser.parse_args(argv)
    return args.settle(parser, argv, args)


def refused(capsys, argv: list[str]) -> str:
    """The one error line of a `wearsim` command that exits 2 while reading its flags."""
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --config ") and len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.slow
def test_ten_flags_from_a_file_make_the_manifest_the_same_flags_make(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "")
    with FakeOpenAI(reply="The cross-tip screwdriver you hold now fits.") as server:
        config = tmp_path / "run.toml"
        config.write_text(TEN.format(base_url=server.base_url))
        flags = [f.format(base_url=server.base_url) for f in SAME_ON_THE_COMMAND_LINE]
        assert cli.main(["bench", *flags, "--output-dir", str(tmp_path / "flags")]) == 0
        assert cli.main(["bench", "--config", str(config), "--output-dir", str(tmp_path / "file")]) == 0
    from_flags, from_file = (json.loads((tmp_path / run / "manifest.json").read_text()) for run in ("flags", "file"))
    assert from_flags["config"] is None
    assert from_file["config"] == {
        "path": str(config.resolve()),
        "sha256": hashlib.sha256(config.read_bytes()).hexdigest(),
        "overridden_by_flags": [],
    }
    assert {k: v for k, v in from_file.items() if k not in DIFFERS} == {
        k: v for k, v in from_flags.items() if k not in DIFFERS
    }
    assert from_file["trials"] == 2 and from_file["max_tokens"] == 120 and from_file["temperature"] == 0.5
    assert from_file["scenario_ids"] == ["sc-01", "sc-02"] and from_file["camera_injection"] is False
    assert from_file["conditions"] == ["baseline", "track_current_frame"] and from_file["repair_style"] == "deictic"
    cells = [len((tmp_path / run / "transcripts.jsonl").read_text().splitlines()) for run in ("flags", "file")]
    assert cells == [8, 8]  # 2 conditions x 2 scenarios x 2 trials, each run


def test_a_flag_on_the_command_line_wins_over_the_file_even_at_its_default(tmp_path, capsys):
    config = tmp_path / "run.toml"
    config.write_text(
        'trials = 3\nmax-tokens = 120\nvia = "stream"\nsynthetic-frames = true\nstaleness = [0, 250]\ncache = "all"\n'
    )
    args = parse(["bench", "--config", str(config), "--trials", "1", "--via", "direct"])
    assert args.trials == 1 and args.via == "direct"  # given on the command line, at their defaults
    assert args.max_tokens == 120 and args.synthetic_frames is True and args.staleness == "0,250"
    assert args.cache == "all"
    assert args.config_file["sha256"] == hashlib.sha256(config.read_bytes()).hexdigest()
    assert args.config_file["overridden_by_flags"] == ["trials", "via"]  # recorded in the manifest
    said = capsys.readouterr().err
    assert f"read 6 setting(s) from --config {config}; the command line overrode trials, via" in said
    plain = parse(["bench", "--trials", "3"])  # without --config: nothing read, nothing recorded
    assert plain.max_tokens == 300 and plain.config_file is None


def test_an_unknown_key_exits_2_naming_the_key_and_the_file_and_the_flag_meant(tmp_path, capsys):
    config = tmp_path / "run.toml"
    config.write_text('judge-family = "lexical"\nmax_tokens = 120\n')
    err = refused(capsys, ["bench", "--config", str(config)])
    assert str(config) in err and "unknown key 'max_tokens'" in err and "did you mean 'max-tokens'?" in err
    config.write_text("[glasses]\nsynthetic-frames = true\n")  # flat keys only
    err = refused(capsys, ["bench", "--config", str(config)])
    assert "unknown key 'glasses' is a table" in err
    config.write_text('config = "other.toml"\n')
    assert "config cannot be set in the file" in refused(capsys, ["bench", "--config", str(config)])


@pytest.mark.parametrize(
    "line, words",
    [
        ('trials = "two"', 'trials = "two": expected a whole number'),
        ("max-tokens = true", "max-tokens = true: expected a whole number"),
        ('temperature = "warm"', 'temperature = "warm": expected a number'),
        ("no-camera = 1", "no-camera = 1: expected true or false"),
        ('via = "glasses"', 'via = "glasses": expected one of "direct", "stream"'),
        ('model = ["a", "b"]', 'model = ["a", "b"]: expected a string'),
        ("ids = [true]", 'ids = [true]: expected a string or an array, e.g. "ID,..."'),
    ],
)
def test_a_wrong_type_exits_2_naming_the_key(tmp_path, capsys, line, words):
    config = tmp_path / "run.toml"
    config.write_text(line + "\n")
    err = refused(capsys, ["bench", "--config", str(config)])
    assert words in err and str(config) in err


def test_a_missing_or_invalid_file_exits_2_naming_it(tmp_path, capsys):
    missing = tmp_path / "nowhere.toml"
    assert f"--config {missing}: no such file" in refused(capsys, ["bench", "--config", str(missing)])
    broken = tmp_path / "broken.toml"
    broken.write_text("trials = \n")
    assert f"--config {broken}: not valid TOML" in refused(capsys, ["bench", "--config", str(broken)])
    assert not (tmp_path / "run").exists()


def test_glasses_flags_from_the_file_need_the_stream_too(tmp_path, capsys):
    """The refusal is derived from the glasses group: every flag in it, wherever it was given."""
    config = tmp_path / "run.toml"
    config.write_text("frame-size = 320\n")
    assert (
        cli.main(
            ["bench", "--config", str(config), "--server", "ws://127.0.0.1:1", "--output-dir", str(tmp_path / "run")]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "--server, --frame-size: the glasses' flags need --via stream" in err
    assert not (tmp_path / "run").exists()
    stream_only = {flag for flag, _, _ in parse(["bench"]).stream_only}
    assert {"--synthetic-frames", "--describer", "--staleness", "--impair-seed", "--speed"} <= stream_only
    assert not stream_only & {"--via", "--model", "--subset", "--trials", "--cache"}


def test_help_shows_the_groups_and_the_config_format(capsys):
    with pytest.raises(SystemExit):
        cli.main(["bench", "--help"])
    out = capsys.readouterr().out
    titles = [
        line[:-1] for line in out.splitlines() if line in ("candidate:", "judge:", "bank:", "glasses:", "cost:", "run:")
    ]
    assert titles == ["candidate", "judge", "bank", "glasses", "cost", "run"]
    glasses = out[out.index("\nglasses:\n") : out.index("\ncost:\n")]
    assert "needs --via stream" in " ".join(glasses.split()) and "--pictograph-frames" in glasses
    assert "--budget" in out[out.index("\ncost:\n") : out.index("\nrun:\n")]
    flat = " ".join(out.split())
    assert "--config FILE.toml" in flat and "named as in this help without the leading --" in flat
    assert "flags on the command line win over the file" in flat
