"""Figures and statements of README.md and docs/*.md that come from runs but are not written by
``docs/build_figures.py``: each is checked here against what the code gives (counts, frames, conventions).

Timings that depend on the machine are stated on the pages with their conditions; what of them is reproducible
(how many tests, sequences, views) is checked here.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from kinhec.models.cameras import get_target
from kinhec.vision.targets import target_for_preset

from helpers.collection import COLLECTED, COLLECTED_ARGS
from helpers.doc_pages import DOCS, build_figures, console_mismatches
from helpers.paths import REPO, TESTS

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_console_excerpts_are_compared_line_by_line():
    printed = "a 0.1234\nb 2\nnote: x\nc 3 4 5\nd 7"
    assert console_mismatches("a 0.123\n...\nc 3 4 ...\nd 7", printed) == []
    assert console_mismatches("a 0.123\nc 3 4 5\nd 7", printed)  # b is not a note: only '...' skips it
    assert console_mismatches("a 0.125\n...\nd 7", printed)  # more than one unit of the last digit
    assert console_mismatches("a 0.123\n...\nd 9", printed)  # a line that is not printed


def test_planner_page_states_the_frame_that_images_give():
    """docs/planner.md: ``--images`` gives ``Y`` in the printed target's frame (a chessboard's: OpenCV's, corner 0 at
    the origin, z into the board), and ``Y @ inv(T_centred_target)`` moves it to the preset's centred frame."""
    page = (DOCS / "planner.md").read_text(encoding="utf-8")
    assert "as `kinhec calibrate --images` with the same target does" not in page
    assert "`Y @ inv(T)` eye-in-hand or `X @ inv(T)` eye-to-hand" in page
    preset = "checker_9x6_25mm"
    board = target_for_preset(preset)
    T = board.T_centred_target  # the printed board's frame in the preset's
    assert np.allclose(board.points_m[0], 0.0)  # corner 0 at the origin of the detector's frame
    assert np.allclose(np.diag(T[:3, :3]), [1.0, -1.0, -1.0])  # z into the board, against the preset's z
    in_preset = board.points_m @ T[:3, :3].T + T[:3, 3]
    assert np.allclose(in_preset, get_target(preset).points_m, atol=1e-12)
    rng = np.random.default_rng(3)
    from kinhec.geometry import se3

    Y_preset = se3.random_poses(rng, 1)[0]  # T_base_centred
    Y_images = Y_preset @ T  # T_base_board, what --images reports (kinhec render's truth.json: Y @ T_centred_target)
    assert np.allclose(Y_images @ np.linalg.inv(T), Y_preset, atol=1e-12)
    # a board point seen through either Y lands at the same place in the base
    p = np.r_[board.points_m[7], 1.0]
    assert np.allclose(Y_images @ p, Y_preset @ np.r_[in_preset[7], 1.0], atol=1e-12)


def _whole_suite_collected() -> bool:
    return bool(COLLECTED_ARGS) and all(Path(REPO, a).resolve() in (TESTS, REPO) for a in COLLECTED_ARGS)


def test_readme_states_how_many_tests_there_are():
    """README.md: "every test in `tests/` (about N)", within 5 % of what the whole suite collects (checked when the
    whole suite is collected, as ``python -m pytest`` does)."""
    if not _whole_suite_collected():
        pytest.skip(f"the README's test count is checked when the whole suite is collected, not {COLLECTED_ARGS}")
    stated = int(re.search(r"every\s+test\s+in\s+`tests/`\s+\(about\s+([\d,]+)", README).group(1).replace(",", ""))
    assert abs(len(COLLECTED) - stated) <= 0.05 * stated, \
        f"README.md says about {stated} tests, {len(COLLECTED)} collected"  # fmt: skip


def test_readme_counts_are_the_code_s():
    """README.md's counts: sequences per tier, the smoke tier in the quick start, robots, published baselines."""
    from kinhec.models import robots
    from kinhec.synth import tiers
    from kinhec.solvers import registry

    flat = " ".join(README.split())  # the wrapping of the lines does not matter
    total = {t: sum(tiers.plan_counts(tiers.load_tier(t)).values()) for t in ("smoke", "small", "medium", "full")}
    assert f"kinhec plan` prints the counts ({total['smoke']} / {total['small']:,} / {total['medium']:,} / " \
           f"{total['full']:,})" in flat  # fmt: skip
    assert f"# sequences per track: {total['full']:,} in total" in flat
    assert f"generate the smoke tier ({total['smoke']} sequences" in flat
    assert f"the {len(robots.ROBOT_NAMES) - 1} manipulator models" in flat and robots.ROBOT_NAMES[-1] == "free6d"
    words = {11: "eleven", 12: "twelve", 13: "thirteen"}
    assert registry.BASELINES[-1] == "he_ml"
    assert f"the {words[len(registry.BASELINES) - 1]} published baselines, kinhec's maximum-likelihood `he_ml`" in flat


def _stored(entry: str, who: str) -> dict:
    import json

    return json.loads((REPO / "regression" / "results" / entry / f"{who}.json").read_text())["statistics"]


def test_readme_and_regression_page_quote_the_suite_s_stored_results():
    """The chain RMS figures of README.md and docs/regression.md are the regression suite's reference results
    (``kinhec suite check`` re-solves every entry against them)."""
    build = build_figures()
    rms = {e: _stored(e, "kinhec")["rms_px"] for e in ("kuka_1", "kuka_2", "kuka_1_prior", "kuka_2_prior")}
    park = {e: _stored(e, "opencv")["rms_px"] for e in ("kuka_1", "kuka_2")}
    m = re.search(r"RMS through the whole chain is (\S+) / (\S+) px with the robot\s+poses as measured \(OpenCV's "
                  r"Park chain: (\S+) / (\S+) px\) and (\S+) / (\S+) px", README)  # fmt: skip
    fresh = " ".join(str(v) for v in (rms["kuka_1"], rms["kuka_2"], park["kuka_1"], park["kuka_2"], rms["kuka_1_prior"],
                                      rms["kuka_2_prior"]))  # fmt: skip
    assert m is not None and build.mismatches(" ".join(m.groups()), fresh) == []
    page = (DOCS / "regression.md").read_text(encoding="utf-8")
    m = re.search(r"The RMS through the whole chain is (\S+) px and (\S+) px, below\s+the (\S+) px / (\S+) px of "
                  r"OpenCV's Park chain", page)  # fmt: skip
    assert m is not None and build.mismatches(" ".join(m.groups()), f"{rms['kuka_1']} {rms['kuka_2']} {park['kuka_1']} "
                                              f"{park['kuka_2']}") == []  # fmt: skip
    for entry, arm in (("kuka_1", "kuka_1"), ("kuka_2", "kuka_2")):
        row = re.search(rf"\| {entry} \(poses exact\) \| [^|]+ \| (\S+) \| (\S+) \|", page)
        assert build.mismatches(" ".join(row.groups()), f"{rms[entry]} {park[arm]}") == [], entry


def _mb(pattern: str) -> float:
    return float(re.search(pattern, README).group(1))


def test_readme_report_sizes_are_the_pages_sizes(smoke_benchmarked, tmp_path):
    """README.md's sizes of the report pages: the packed and unpacked plotly.js, the smoke tier's benchmark page
    and the calibration page of a temporal smoke sequence (the times beside them are measurements in a browser,
    stated with their conditions)."""
    import kinhec
    from helpers.calibration_result import calibration_result
    from kinhec.report import build_benchmark_report, write_calibration_report
    from kinhec.report.page import _packed_plotly, plotly_source

    build = build_figures()

    def same(stated: str, value: float) -> bool:
        return not build.mismatches(stated, f"{value:.6f}")

    assert same(re.search(r"stored\s+as\s+bytes,\s+([\d.]+) MB", README).group(1), len(_packed_plotly()) / 1e6)
    unpacked = re.search(r"mostly\s+running\s+the\s+([\d.]+)\s+MB\s+of\s+plotly.js", README).group(1)
    assert same(unpacked, len(plotly_source()) / 1e6)
    page = build_benchmark_report(smoke_benchmarked, tmp_path / "r.html")
    assert same(re.search(r"smoke\s+tier's\s+page:\s+([\d.]+)\s+MB", README).group(1), page.stat().st_size / 1e6)
    seq = kinhec.load_sequence(smoke_benchmarked, "temporal-000001")
    res = calibration_result(seq, np.random.default_rng(3), estimate_offset=True)
    m = re.search(r"([\d.]+)\s+MB\s+for\s+a\s+temporal\s+smoke\s+sequence\s+\((\d+)\s+pairs", README)
    cal = write_calibration_report(res, tmp_path / "c.html")
    assert same(m.group(1), cal.stat().st_size / 1e6) and int(m.group(2)) == res["n_pairs"], \
        (cal.stat().st_size, res["n_pairs"])  # fmt: skip


def test_regression_page_table_is_what_its_script_prints(capsys):
    """docs/regression.md's table "Nor does the other reading": ``python docs/kuka_2_x_offset.py --stored-only``
    prints its first two columns from the stored results."""
    spec = importlib.util.spec_from_file_location("kuka_2_x_offset", DOCS / "kuka_2_x_offset.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.stored_chains()
    printed = dict(re.findall(r"^  (\w+): (X \S+ deg / \S+ mm from Park, chain RMS \S+ px)$", capsys.readouterr().out,
                              re.M))  # fmt: skip
    page = (DOCS / "regression.md").read_text(encoding="utf-8")
    build = build_figures()
    for entry in ("kuka_1", "kuka_1_prior", "kuka_2", "kuka_2_prior"):
        label = f"{entry} (poses exact)" if "prior" not in entry else f"{entry}, evaluated on measured poses"
        deg, mm, rms = re.search(rf"^\| {re.escape(label)} \| (\S+), (\S+) \| (\S+) \|", page, re.M).groups()
        shown = f"X {deg} deg / {mm} mm from Park, chain RMS {rms} px"
        assert build.mismatches(shown, printed[entry]) == [], (entry, shown, printed[entry])
