"""The outlier gate with few pairs (kinhec.calibrate.uncertainty.gate_diagonal): gross outliers among 6-8 clean
stations are found, clean stations kept, X right -- before, the full-covariance gate could not judge below 7
degrees of freedom, kept every pair, and the labels alternated until X ended 24-116 mm off."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from kinhec.geometry import se3
from kinhec.calibrate import calibrate
from kinhec.calibrate import uncertainty as unc
from kinhec.synth.generator import simulate

from helpers.recordings import STATIONS as STATIONS_25

CHI2_6_999 = float(stats.chi2.ppf(0.999, 6))

STATIONS = dict(STATIONS_25, n_stations=10)


def _draw(n_clean: int, seed: int, tmp_path):
    """``n_clean`` clean stations and 2 gross outliers (10 deg, 5 cm) at seeded rows, written as 4x4 rows."""
    g = simulate(dict(STATIONS, seed=100 + seed, n_stations=n_clean + 2))
    A, T = g.T_base_ee_meas.copy(), g.T_cam_target_meas.copy()
    rng = np.random.default_rng(seed)
    bad = rng.choice(len(A), 2, replace=False)
    for i in bad:
        E = se3.transform_from_rotation_translation(se3.so3_exp(np.radians(10) * rng.normal(size=3)),
                                                    0.05 * rng.normal(size=3))  # fmt: skip
        T[i] = E @ T[i]
    hand, eye = tmp_path / f"hand{seed}.txt", tmp_path / f"eye{seed}.txt"
    np.savetxt(hand, A.reshape(-1, 16), fmt="%.12g")
    np.savetxt(eye, T.reshape(-1, 16), fmt="%.12g")
    return g, hand, eye, set(bad.tolist())


@pytest.mark.parametrize("n_clean", [8, 6])
def test_gross_outliers_among_few_stations(tmp_path, n_clean):
    clean_lost = gross_kept = 0
    for seed in range(6):
        g, hand, eye, bad = _draw(n_clean, seed, tmp_path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = calibrate(hand, eye, fmt="rwhe", eye_pose="cam_T_target", setup="eye_in_hand")
        out = set(res.outliers)
        clean_lost += len(out - bad)
        gross_kept += len(bad - out)
        assert res.determined
        e = np.concatenate([se3.so3_log(res.X[:3, :3].T @ g.X[:3, :3]), g.X[:3, 3] - res.X[:3, 3]])
        assert e @ np.linalg.solve(res.cov[:6, :6], e) < CHI2_6_999
    assert gross_kept == 0
    assert clean_lost <= 1  # of 36-48 clean stations


def test_gate_diagonal_judges_each_component():
    rng = np.random.default_rng(1)
    n, P = 12, 13
    scale = np.array([1e-3, 2e-3, 1e-3, 5e-4, 5e-4, 1e-3])
    lost = 0
    for _ in range(30):
        r = rng.standard_normal((n, 6)) * scale
        G = rng.standard_normal((n, 6, P)) * 0.05
        inl = np.ones(n, dtype=bool)
        nu = n - P / 6.0
        lost += int((~unc.gate_diagonal(r, G, inl, nu)).sum())
        r[0, 3] += 30 * scale[3]  # one component of one pair gross
        labels = unc.gate_diagonal(r, G, inl, nu)
        assert not labels[0]
        inl2 = labels.copy()
        assert not unc.gate_diagonal(r, G, inl2, nu)[0]  # an excluded gross pair stays out
    assert lost <= 3  # of 360 clean pairs, at a 99.99 % gate
    # nothing can be judged from two degrees of freedom: the labels stay as they are
    some = np.array([True, False] + [True] * (n - 2))
    np.testing.assert_array_equal(unc.gate_diagonal(r, G, some, 2.0), some)


def _clean(n: int, seed: int, tmp_path):
    g = simulate(dict(STATIONS, seed=200 + seed, n_stations=n))
    hand, eye = tmp_path / f"hand_c{seed}.txt", tmp_path / f"eye_c{seed}.txt"
    np.savetxt(hand, g.T_base_ee_meas.reshape(-1, 16), fmt="%.12g")
    np.savetxt(eye, g.T_cam_target_meas.reshape(-1, 16), fmt="%.12g")
    return g, hand, eye


def test_five_clean_stations_keep_every_pair_and_three_are_refused(tmp_path):
    """With 5 clean stations the first labels used to keep the 3 closest pairs, which left the fit nothing to
    estimate the noise from (it interpolated them); now every pair is kept and X is within its error bars.  Three
    stations leave under one pair's worth of residuals after X and Y: refused, with the reason."""
    for seed in range(4):
        g, hand, eye = _clean(5, seed, tmp_path)
        res = calibrate(hand, eye, fmt="rwhe", eye_pose="cam_T_target", setup="eye_in_hand")
        assert res.outliers == [] and res.observability["n_inliers"] == 5
        assert res.determined and res.observability["noise_dof"] >= 2.0
        e = np.concatenate([se3.so3_log(res.X[:3, :3].T @ g.X[:3, :3]), g.X[:3, 3] - res.X[:3, 3]])
        assert e @ np.linalg.solve(res.cov[:6, :6], e) < CHI2_6_999
    g, hand, eye = _clean(3, 0, tmp_path)
    # (3 pairs are too few to check how the files were written: every direction is stated)
    res = calibrate(hand, eye, fmt="rwhe", eye_pose="cam_T_target", setup="eye_in_hand", hand_pose="base_T_ee")
    assert not res.determined
    assert any("pairs' worth of residuals" in w and "record more stations" in w for w in res.warnings), res.warnings


# --------------------------------------------------------------------------- #
# gate_diagonal's two quantiles, on one residual component of a model with one unknown (a mean): every pair's
# leverage is 1/m (m inliers), the component's degrees of freedom m - 1
# --------------------------------------------------------------------------- #
def _one_component(r) -> tuple[np.ndarray, np.ndarray]:
    r = np.asarray(r, dtype=float)[:, None]
    return r, np.ones((len(r), 1, 1))


def test_gate_diagonal_keeps_an_inlier_between_the_two_quantiles():
    # An inlier is judged by its externally studentised residual t = r^2 / ((1 - h) s_(i)^2), s_(i)^2 the variance
    # of the others (F(1, nu - 1)), at a tail INLIER_LEVEL_RATIO times smaller than the gate's.
    m = 10
    nu, h = m - 1.0, 1.0 / m
    tail = 1.0 - unc.GATE_LEVEL
    q_gate = stats.f.ppf(1.0 - tail, 1, nu - 1)
    q_inlier = stats.f.ppf(1.0 - tail / unc.INLIER_LEVEL_RATIO, 1, nu - 1)
    others = np.random.default_rng(4).standard_normal(m - 1)
    rss_o = float(others @ others)

    def residual_for(t):  # the last pair's residual whose studentised value is t (RSS = rss_o + r^2)
        return np.sqrt(t * rss_o / (nu - 1) / (1 / (1 - h) + t * h / ((1 - h) * (nu - 1))))

    for t, kept in ((np.sqrt(q_gate * q_inlier), True), (1.5 * q_inlier, False), (0.5 * q_gate, True)):
        r, G = _one_component(np.r_[others, residual_for(t)])
        s2 = (float(r[:, 0] @ r[:, 0]) - r[-1, 0] ** 2 / (1 - h)) / (nu - 1)  # leave-one-out variance
        assert r[-1, 0] ** 2 / ((1 - h) * s2) == pytest.approx(t, rel=1e-9)  # the construction itself
        labels = unc.gate_diagonal(r, G, np.ones(m, bool), nu)
        assert labels[-1] == kept, t
        assert labels[:-1].all()


def test_gate_diagonal_judges_an_excluded_pair_by_its_predictive_distribution():
    # An excluded pair's residual e is a prediction from the inliers' fit: var(e) = sigma^2 (1 + h), independent of
    # the inliers' variance estimate s^2 (nu degrees of freedom), so e^2 / (s^2 (1 + h)) ~ F(1, nu).
    m = 5
    nu, h = m - 1.0, 1.0 / m
    q = stats.f.ppf(unc.GATE_LEVEL, 1, nu)
    inl = np.r_[np.ones(m, bool), False]
    clean = np.random.default_rng(9).standard_normal(m)
    s2 = float(clean @ clean) / nu
    for t, kept in ((0.9 * q, True), (1.1 * q, False)):
        r, G = _one_component(np.r_[clean, np.sqrt(t * s2 * (1 + h))])
        labels = unc.gate_diagonal(r, G, inl, nu)
        assert labels[-1] == kept, t
        assert labels[:-1].all()


def test_gate_diagonal_readmits_clean_excluded_pairs_at_its_level():
    # Seeded straight-line fits from 6 inliers (nu = 4) and one fresh clean pair set aside: at a gate of level 0.8
    # the fresh pair is re-admitted 80 % of the time (binomial std 0.0073 over 3000 draws).
    rng = np.random.default_rng(17)
    n_draws, m, level = 3000, 6, 0.8
    back = 0
    for _ in range(n_draws):
        x = rng.uniform(-1.0, 1.0, m + 1)
        D = np.column_stack([np.ones(m + 1), x])
        y = rng.standard_normal(m + 1)
        theta = np.linalg.lstsq(D[:m], y[:m], rcond=None)[0]
        r = (y - D @ theta)[:, None]
        labels = unc.gate_diagonal(r, D[:, None, :], np.r_[np.ones(m, bool), False], m - 2.0, level=level)
        back += int(labels[-1])
    assert abs(back / n_draws - level) < 4 * np.sqrt(level * (1 - level) / n_draws)
