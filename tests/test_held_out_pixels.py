"""Held-out pixels of ``--corners``: every view left out in turn (:mod:`kinhec.calibrate.held_out_pixels`)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec.calibrate import held_out as ho
from kinhec.calibrate.corners import calibrate_corners
from kinhec.cli import main
from kinhec.report.calibration import write_calibration_report
from kinhec.synth.observations import observations_from_recipe, write_observations

from helpers.paths import REPO


def _bench():
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import held_out_pixels as bench
    finally:
        sys.path.pop(0)
    return bench


def _recipe(**kw):
    r = dict(sequence_id="hp", seed=3, robot="ur5e", configuration="eye_in_hand", family="lookat",
             sampling_mode="stations", n_stations=12, camera="hd", target="checker_7x5_20mm", camera_noise_model="pnp",
             pixel_std=0.5, robot_noise_models=("se3_gaussian",), robot_rot_std_rad=3e-4, robot_trans_std_m=1e-4)  # fmt: skip
    r.update(kw)
    return r


def test_noise_free_corners_are_predicted_exactly():
    obs, _ = observations_from_recipe(_recipe(pixel_std=0.0, robot_noise_models=(), robot_rot_std_rad=0.0,
                                              robot_trans_std_m=0.0))  # fmt: skip
    h = calibrate_corners(obs).held_out
    assert h["n"] == 12 and h["n_corners"] == 12 * 35
    assert h["rms_px"] < 1e-6 and h["consistent"]


def test_first_order_matches_refits_without_each_view():
    """The deletion formulas against :func:`kinhec.calibrate.bundle.refine_bundle` run again without each view
    (its noise levels re-estimated): the held-out RMS within 1 %."""
    obs, truth = observations_from_recipe(_recipe(configuration="eye_to_hand", target="marker_3x3_30mm", seed=8))
    res = calibrate_corners(obs)
    ratio = _bench().refit_rms(obs, res, False) / res.held_out["rms_px"]
    assert abs(ratio - 1.0) < 0.01, ratio


def test_coverage_over_generated_recordings():
    """Ten recordings of ``benchmarks/held_out_pixels.py`` (both setups, intrinsics estimated and given, with and
    without robot error): the held-out views inside their 95 % regions within 3 binomial standard deviations
    (times sqrt(2)) of 95 %, and the held-out RMS within 10 % of its prediction in each."""
    bench = _bench()
    inside = n = 0
    for i in range(10):
        r, given = bench.recipe(0, i)
        obs, truth = observations_from_recipe(r)
        k = [truth["parameters"][m] for m in ("fx", "fy", "cx", "cy")] if given else None
        h = calibrate_corners(obs, intrinsics=k).held_out
        inside += round(h["coverage95_px"] * h["n"])
        n += h["n"]
        assert 0.9 < h["rms_px"] / h["predicted_rms_px"] < 1.1, (i, h)
        lo, hi = h["predicted_interval95_px"]
        assert lo < h["predicted_rms_px"] < hi and h["upper99_px"] > hi
    sd = np.sqrt(0.95 * 0.05 / n) * np.sqrt(2.0)
    assert abs(inside / n - 0.95) < 3 * sd, (inside, n)


def test_the_json_the_summary_the_verdict_and_the_page_show_it(tmp_path):
    obs, _ = observations_from_recipe(_recipe())
    path = write_observations(tmp_path / "obs.json", obs)
    out = tmp_path / "calib.json"
    page = tmp_path / "calib.html"
    run = CliRunner().invoke(main, ["calibrate", "--corners", str(path), "--json", str(out)])
    assert run.exit_code == 0, run.output
    d = json.loads(out.read_text())
    h = d["held_out"]
    assert {"n", "rms_px", "predicted_rms_px", "predicted_interval95_px", "upper99_px", "coverage95_px",
            "consistent", "method"} <= set(h)  # fmt: skip
    assert "rms_mm" not in h  # the eye poses of a corner calibration are not held out in mm
    assert f"held-out accuracy ({h['n']} views left out one at a time): corners predicted to" in run.output
    assert f"Held-out views {h['rms_px']:.3g} px RMS (sigma predicts {h['predicted_rms_px']:.3g} px)" in d["verdict"]
    write_calibration_report(d, page)
    assert b"held-out views, RMS of their corners [px]" in page.read_bytes()


def test_a_held_out_error_far_above_its_prediction_is_a_warning_that_names_it():
    held = {"n": 20, "rms_px": 2.0, "predicted_rms_px": 1.0, "upper99_px": 1.3, "consistent": False,
            "predicted_interval95_px": [0.8, 1.2], "coverage95_px": 0.5}  # fmt: skip
    w = ho.warning(held)
    assert w.startswith("held-out accuracy: the corners of the 20 views") and "2 px RMS against a 99 % bound of 1.3 px" in w
    assert ho.warning(dict(held, consistent=True)) is None


@pytest.mark.parametrize("name", ["kuka_2"])
def test_a_real_recording_has_its_held_out_pixels(name):
    h = calibrate_corners(REPO / "regression" / "observations" / f"{name}.json").held_out
    assert h["n"] == 28 and h["predicted_rms_px"] > 0.5 and 0.0 <= h["coverage95_px"] <= 1.0
