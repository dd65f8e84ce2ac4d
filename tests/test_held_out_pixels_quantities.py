"""The held-out pixels' quantities (:mod:`kinhec.calibrate.held_out_pixels`) against independent formulas: the
scaled chi-square's quantiles against scipy's chi-square, and the 95 % interval, the 99 % bound, the predicted
RMS and the views' regions of :func:`assess_views` recomputed from the per-view traces."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from kinhec.calibrate import corners as corners_mod
from kinhec.calibrate import held_out as ho
from kinhec.calibrate import held_out_pixels as hp
from kinhec.synth.observations import observations_from_recipe


@pytest.mark.parametrize("k, c", [(3.0, 1.0), (17.5, 0.37), (240.0, 2.5)])
def test_scaled_chi2_is_a_chi_square_of_k_degrees_of_freedom_scaled_by_c(k, c):
    # c chi2_k has mean c k and variance 2 c^2 k: Satterthwaite's match must give back k and c exactly
    levels = [0.025, 0.5, 0.95, 0.99]
    got = hp._scaled_chi2(c * k, 2.0 * c * c * k, levels)
    assert np.allclose(got, c * stats.chi2.ppf(levels, k), rtol=1e-10, atol=0)


def _system(monkeypatch, with_chain: bool = False):
    seen = {}
    real = corners_mod.assess_views

    def spy(system, intrinsics_estimated, chain=None):
        seen["system"], seen["chain"] = system, chain
        return real(system, intrinsics_estimated, chain)

    monkeypatch.setattr(corners_mod, "assess_views", spy)
    recipe = dict(sequence_id="hpq", seed=5, robot="ur5e", configuration="eye_in_hand", family="lookat",
                  sampling_mode="stations", n_stations=10, camera="hd", target="checker_7x5_20mm",
                  camera_noise_model="pnp", pixel_std=0.5, robot_noise_models=("se3_gaussian",),
                  robot_rot_std_rad=3e-4, robot_trans_std_m=1e-4)  # fmt: skip
    obs, _ = observations_from_recipe(recipe)
    held = corners_mod.calibrate_corners(obs).held_out
    if with_chain:
        return seen["system"], held, seen["chain"]
    return seen["system"], held


def test_assess_views_interval_bound_and_regions_from_the_views_traces(monkeypatch):
    system, held = _system(monkeypatch)
    lo = hp.leave_one_view_out(system)
    ok = lo["ok"]
    assert ok.all() and held["n"] == ok.sum() == 10
    s = system.pixel_std
    n_pts = lo["m"][ok].sum()
    assert n_pts == held["n_corners"] == 10 * 35
    # the held-out RMS per corner and its prediction
    sq = sum(float(e @ e) for e in lo["e"])
    assert held["rms_px"] == pytest.approx(s * np.sqrt(sq / n_pts), rel=1e-12)
    mean, var = lo["trace"].sum(), 2.0 * lo["trace2"].sum()
    assert held["predicted_rms_px"] == pytest.approx(s * np.sqrt(mean / n_pts), rel=1e-12)
    # the sum of squares as c chi2_k with c k = mean, 2 c^2 k = var: two-sided 95 % interval, one-sided 99 % bound
    c, k = var / (2.0 * mean), 2.0 * mean * mean / var
    rms = lambda q: s * np.sqrt(c * stats.chi2.ppf(q, k) / n_pts)  # noqa: E731
    assert held["predicted_interval95_px"] == pytest.approx([rms(0.025), rms(0.975)], rel=1e-9)
    assert held["upper99_px"] == pytest.approx(rms(ho.WARN_LEVEL), rel=1e-9)
    # each view's 95 % region of its sum of squared errors, and the share of views inside
    cv, kv = 2.0 * lo["trace2"] / (2.0 * lo["trace"]), 2.0 * lo["trace"] ** 2 / (2.0 * lo["trace2"])
    assert np.allclose(lo["q95_ss"], cv * stats.chi2.ppf(0.95, kv), rtol=1e-9, atol=0)
    assert held["coverage95_px"] == pytest.approx(np.mean(lo["ss"] <= lo["q95_ss"]), abs=0)


def test_assess_views_eye_pose_figures_from_the_views_errors_and_covariances(monkeypatch):
    system, held, chain = _system(monkeypatch, with_chain=True)
    lo = hp.leave_one_view_out(system, hp.pose_maps(*chain))
    rho, C = lo["rho"], lo["rho_cov"]
    assert np.allclose(C, np.transpose(C, (0, 2, 1)), rtol=0, atol=1e-12 * np.abs(C).max())
    assert (np.linalg.eigvalsh(C) > 0).all()
    n = rho.shape[0]
    for name, sl, unit in (("mm", slice(3, 6), 1000.0), ("deg", slice(0, 3), 180.0 / np.pi)):
        assert held[f"rms_{name}"] == pytest.approx(unit * np.sqrt(np.sum(rho[:, sl] ** 2) / n), rel=1e-12)
        tr = np.array([np.trace(c[sl, sl]) for c in C])
        tr2 = np.array([np.trace(c[sl, sl] @ c[sl, sl]) for c in C])
        assert held[f"predicted_rms_{name}"] == pytest.approx(unit * np.sqrt(tr.sum() / n), rel=1e-12)
        c, k = tr2.sum() / tr.sum(), tr.sum() ** 2 / tr2.sum()  # the sum of squares as c chi2_k
        rms = lambda q: unit * np.sqrt(c * stats.chi2.ppf(q, k) / n)  # noqa: E731
        assert held[f"predicted_interval95_{name}"] == pytest.approx([rms(0.025), rms(0.975)], rel=1e-9)
        assert held[f"upper99_{name}"] == pytest.approx(rms(ho.WARN_LEVEL), rel=1e-9)
    d2 = [float(r @ np.linalg.inv(c) @ r) for r, c in zip(rho, C)]
    assert held["coverage95"] == pytest.approx(np.mean(np.array(d2) <= stats.chi2.ppf(0.95, 6)), abs=0)
