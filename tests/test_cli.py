"""Command-line smoke tests: every command has --help, errors are one line with exit status 1."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kinhec import __version__
from kinhec.cli import main


@pytest.fixture()
def runner():
    return CliRunner()


def test_version(runner):
    res = runner.invoke(main, ["--version"])
    assert res.exit_code == 0
    assert __version__ in res.output


def test_every_command_has_help(runner):
    res = runner.invoke(main, ["--help"])
    assert res.exit_code == 0
    commands = list(main.commands)
    assert {"info", "plan", "generate", "index"} <= set(commands)
    for name in commands:
        r = runner.invoke(main, [name, "--help"])
        assert r.exit_code == 0, (name, r.output)
        assert "Usage:" in r.output


def test_plan_prints_counts(runner):
    res = runner.invoke(main, ["plan", "--tier", "full"])
    assert res.exit_code == 0, res.output
    assert "77,628" in res.output and "60,000" in res.output
    res = runner.invoke(main, ["plan", "--tier", "small", "--tracks", "noise", "--tracks", "pnp"])
    assert res.exit_code == 0
    assert "168" in res.output  # 144 + 24


def test_known_error_is_one_line_and_exit_2(runner):
    res = runner.invoke(main, ["plan", "--tier", "huge"])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1
    assert lines[0].startswith("kinhec plan: error: unknown tier 'huge'") and "smoke" in lines[0]


# every command that reads a dataset folder, given one that does not exist
_MISSING_FOLDER = [["benchmark", "{x}"], ["visualize", "{x}"], ["report", "{x}"], ["card", "{x}"], ["index", "{x}"],
                   ["export", "{x}", "noise-000000"], ["validate", "{x}"], ["clean", "--root", "{x}"]]  # fmt: skip


@pytest.mark.parametrize("args", _MISSING_FOLDER, ids=lambda a: a[0])
def test_a_missing_folder_is_one_line_and_exit_2_in_every_command(runner, tmp_path, args):
    missing = str(tmp_path / "no_such_folder")
    res = runner.invoke(main, [a.format(x=missing) for a in args])
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert res.exit_code == 2, res.output
    assert len(lines) == 1 and lines[0].startswith(f"kinhec {args[0]}: error: ") and "no_such_folder" in lines[0], lines
    assert "Usage:" not in res.output and "Traceback" not in res.output


def test_usage_errors_and_known_problems_share_one_style(runner, tmp_path):
    res = runner.invoke(main, ["benchmark", str(tmp_path), "--no-such-option"])
    assert res.exit_code == 2 and res.output.strip().splitlines() == [
        "kinhec benchmark: error: No such option '--no-such-option' (see kinhec benchmark --help)"], res.output
    res = runner.invoke(main, ["no-such-command"])
    assert res.exit_code == 2 and res.output.strip().startswith("kinhec: error: No such command 'no-such-command'")
    # a dataset folder that is not one: bad input too
    res = runner.invoke(main, ["benchmark", str(tmp_path)])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output


def test_benchmark_help_counts_the_solvers_once(runner):
    text = " ".join(runner.invoke(main, ["benchmark", "--help"]).output.split())
    assert "kinhec's thirteen solvers, that is the twelve pose solvers on every sequence and reprojection on the " \
           "sequences with pixels, and every plug-in" in text  # fmt: skip


def test_debug_shows_the_exception(runner):
    from kinhec.util.errors import UnknownNameError

    res = runner.invoke(main, ["--debug", "plan", "--tier", "huge"])
    assert res.exit_code != 0
    assert isinstance(res.exception, UnknownNameError)


def test_info_json_lists_registries(runner):
    res = runner.invoke(main, ["info", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert len(data["robots"]) == 14
    assert {c["name"] for c in data["cameras"]} == {"vga", "hd", "fhd", "industrial_5mp"}
    assert len(data["targets"]) == 5
    assert data["tiers"]["full"]["total"] == 77628
    res = runner.invoke(main, ["info"])
    assert res.exit_code == 0
    assert "irb120" in res.output and "industrial_5mp" in res.output


@pytest.mark.parametrize(
    "args, match",
    [
        (["generate", "--tier", "smoke", "--out", "x", "--limit", "0"], "expected an integer >= 1"),
        (["generate", "--tier", "smoke", "--out", "x", "--workers", "-2"], "expected an integer >= 1"),
        (["generate", "--tier", "smoke", "--out", "x", "--tracks", "bogus"], "unknown track 'bogus'"),
    ],
)
def test_bad_generate_arguments_are_errors(runner, tmp_path, monkeypatch, args, match):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(main, args)
    assert res.exit_code != 0
    assert match in res.output
    assert not (tmp_path / "x").exists()  # nothing is created for a rejected command


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny generated dataset, made through the command line."""
    root = tmp_path_factory.mktemp("cli") / "data"
    res = CliRunner().invoke(main, ["generate", "--tier", "smoke", "--out", str(root), "--limit", "1", "--workers", "1", "-q"])
    assert res.exit_code == 0, res.output
    return root


def test_generate_validate_index_card_export_on_a_tiny_dataset(runner, tiny, tmp_path):
    res = runner.invoke(main, ["validate", str(tiny), "-q", "--report", str(tmp_path / "rep.json")])
    assert res.exit_code == 0, res.output
    assert "OK" in res.output
    assert json.loads((tmp_path / "rep.json").read_text())["ok"] is True
    (tiny / "sequences.csv").unlink()
    res = runner.invoke(main, ["index", str(tiny)])
    assert res.exit_code == 0 and "8 sequences" in res.output
    assert (tiny / "sequences.csv").exists()
    res = runner.invoke(main, ["card", str(tiny), "--hf-repo", "someone/kinhec-smoke"])
    assert res.exit_code == 0, res.output
    assert "someone/kinhec-smoke" in (tiny / "README.md").read_text()
    res = runner.invoke(main, ["export", str(tiny), "pnp-000000", "--format", "tum", "--out", str(tmp_path / "tum")])
    assert res.exit_code == 0, res.output
    assert len(list((tmp_path / "tum").glob("*.tum"))) == 4
    res = runner.invoke(main, ["export", str(tiny), "pnp-999999"])
    assert res.exit_code == 2 and "pnp-999999" in res.output


def test_validate_reports_a_broken_folder_with_exit_1(runner, tiny, tmp_path):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(tiny, broken)
    (broken / "robots.json").unlink()
    res = runner.invoke(main, ["validate", str(broken), "-q"])
    assert res.exit_code == 1
    assert "robots.json" in res.output
    empty = tmp_path / "empty"
    empty.mkdir()
    res = runner.invoke(main, ["validate", str(empty)])  # a folder that is no dataset at all: bad input
    assert res.exit_code == 2
    assert len([ln for ln in res.output.splitlines() if ln.strip()]) == 1


def test_clean_dry_run_removes_nothing_and_refuses_non_datasets(runner, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "kinhec"\n')
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "notdata").mkdir()
    res = runner.invoke(main, ["clean", "--root", str(tmp_path), "-n"])
    assert res.exit_code == 0 and "would remove: __pycache__" in res.output
    assert (tmp_path / "__pycache__").exists()
    res = runner.invoke(main, ["clean", "--root", str(tmp_path), "--data", str(tmp_path / "notdata"), "-y"])
    assert res.exit_code == 1 and "refused" in res.output
    assert (tmp_path / "notdata").exists()
    res = runner.invoke(main, ["clean", "--root", str(tmp_path)])
    assert res.exit_code == 0 and not (tmp_path / "__pycache__").exists()


def test_benchmark_command_on_a_tiny_dataset(runner, tiny):
    res = runner.invoke(main, ["benchmark", str(tiny), "-q", "--solvers", "park_martin", "--solvers", "shah",
                               "--sync", "oracle"])  # fmt: skip
    assert res.exit_code == 0, res.output
    (sub,) = (tiny / "benchmarks" / "subsets").iterdir()  # a subset run: its own folder
    board = (sub / "leaderboard.md").read_text()
    assert "\n| park_martin | " in board and "\n| shah | " in board and "tsai_lenz" not in board
    res = runner.invoke(main, ["benchmark", str(tiny), "--sync", "exact"])
    assert res.exit_code == 2 and "oracle" in res.output and "estimated" in res.output


def test_index_refuses_a_folder_without_shards(runner, tmp_path):
    res = runner.invoke(main, ["index", str(tmp_path)])
    assert res.exit_code == 2 and "robot/ and camera/" in res.output
    assert not (tmp_path / "sequences.parquet").exists()  # nothing written into a folder that is not a dataset


def test_multi_value_options_take_several_words_and_commas(runner):
    res = runner.invoke(main, ["plan", "--tier", "small", "--tracks", "noise", "pnp"])
    assert res.exit_code == 0, res.output
    assert "168" in res.output  # 144 + 24
    res = runner.invoke(main, ["plan", "--tier", "small", "--tracks", "noise,temporal", "--tracks", "pnp"])
    assert res.exit_code == 0 and "216" in res.output  # 144 + 48 + 24


def test_os_errors_are_one_line(runner, tiny):
    res = runner.invoke(main, ["export", str(tiny), "pnp-000000", "--out", "/proc/kinhec-cannot-write"])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "/proc/kinhec-cannot-write" in lines[0]


def test_calibrate_docs_name_every_option(runner):
    """docs/calibrate.md, or a page it links (bags.md, images.md, ...), names every option of kinhec calibrate."""
    import re
    from pathlib import Path

    docs = Path(__file__).resolve().parents[1] / "docs"
    doc = (docs / "calibrate.md").read_text()
    doc += "".join((docs / name).read_text() for name in set(re.findall(r"\(([a-z_]+\.md)\)", doc))
                   if (docs / name).is_file())  # fmt: skip
    help_text = runner.invoke(main, ["calibrate", "--help"]).output
    options = set(re.findall(r"^\s+(--[a-z][a-z-]*)", help_text, re.M)) - {"--help"}
    assert {"--report", "--figure", "--json"} <= options
    missing = sorted(o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", doc))
    assert not missing, f"docs/calibrate.md does not mention {missing}"
