"""Held-out accuracy and the work point (kinhec.calibrate.held_out): the first-order leave-one-station-out against
explicit refits, the coverage of its 95 % regions and of the work point's 95 % radius over seeded generated
recordings, the JSON fields, and the command line's --point."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from kinhec.geometry import se3
from kinhec.calibrate import calibrate
from kinhec.calibrate import held_out as ho
from kinhec.calibrate import solve as sv
from kinhec.calibrate.pairing import OrderPairing
from kinhec.calibrate.scale import PRIOR_STD
from kinhec.cli import main
from kinhec.synth.generator import simulate

from helpers.recordings import STATIONS


def _pairing(g, setup):
    """Solver-form pairs of a generated recording (``B = T_target_cam`` eye-in-hand, ``T_cam_marker`` eye-to-hand)
    and the residual domain of its noise (the camera's ``T_cam_target`` / ``T_cam_marker``)."""
    T = g.T_cam_target_meas
    B = se3.invert_transform(T, check=False) if setup == "eye_in_hand" else T
    lines = np.arange(len(T))
    return OrderPairing(g.T_base_ee_meas, B, lines, lines), setup == "eye_in_hand"


def _fit(g, setup):
    pairing, inv = _pairing(g, setup)
    sol = sv.refine(pairing, g.X, g.Y, scale0=1.0, estimate_scale=True, scale_prior_std=PRIOR_STD, reject=False,
                    inverse_domain=inv)
    return pairing, inv, sol


@pytest.mark.parametrize("setup", ["eye_in_hand", "eye_to_hand"])
def test_first_order_leave_one_out_agrees_with_explicit_refits(setup):
    """The deletion formulas against a Levenberg-Marquardt refit without each station (same whitening, same prior):
    every held-out error within 2 % of its norm (plus 1e-3 whitened units), on 12 stations of 1 mrad / 1 mm noise."""
    g = simulate(dict(STATIONS, configuration=setup, seed=3, n_stations=12))
    pairing, inv, sol = _fit(g, setup)
    station = np.arange(len(pairing))
    lo = ho.leave_one_station_out(sol.whitened_jacobian, sol.whitened_residuals, station,
                                  prior_information=sol.prior_information, noise_dof=sol.noise_dof,
                                  noise_model=sol.noise_model)
    prob = sv._Problem(pairing, False, True, inv, PRIOR_STD)
    W = sol.whitening
    st = (sol.X, sol.Y, sol.offset, sol.scale)
    for s in range(len(pairing)):
        keep = np.ones(len(pairing), dtype=bool)
        keep[s] = False
        st_s, _, _ = sv._lm(prob, st, keep, W, max_iter=50)
        only = ~keep
        e_refit = prob.res(st_s, only)[0] @ W.T
        e_first = lo["e"][s]
        assert np.linalg.norm(e_first - e_refit) <= 0.02 * np.linalg.norm(e_refit) + 1e-3, s


def test_a_station_of_several_pairs_is_left_out_as_one():
    """Consecutive pairs of one station: their common leave-out fit, the same as deleting them from the sums."""
    g = simulate(dict(STATIONS, seed=4, n_stations=10))
    pairing, inv, sol = _fit(g, "eye_in_hand")
    G, z = sol.whitened_jacobian, sol.whitened_residuals
    station = np.repeat(np.arange(5), 2)
    lo = ho.leave_one_station_out(G, z, station, prior_information=sol.prior_information, noise_dof=sol.noise_dof)
    H = np.einsum("nkp,nkq->pq", G, G) + sol.prior_information
    for s in range(5):
        sel = station == s
        Hs = H - np.einsum("nkp,nkq->pq", G[sel], G[sel])
        d = np.linalg.solve(Hs, np.einsum("nkp,nk->p", G[sel], z[sel]))
        np.testing.assert_allclose(lo["e"][sel], z[sel] + np.einsum("nkp,p->nk", G[sel], d), rtol=1e-8, atol=1e-10)


def test_stations_of_a_stamped_stream_follow_the_hand():
    """A hand standing still is one station; a move of a keyframe (5 deg or 2 cm) starts the next; no stamps: one
    pair each."""
    A = np.repeat(np.eye(4)[None], 9, axis=0)
    A[3:6, 0, 3] = 0.05  # moved 5 cm
    A[6:, :3, :3] = se3.so3_exp(np.radians([0.0, 0.0, 6.0]))  # turned 6 deg (and back at x = 0)
    np.testing.assert_array_equal(ho.stations(A, np.arange(9.0)), [0, 0, 0, 1, 1, 1, 2, 2, 2])
    np.testing.assert_array_equal(ho.stations(A, None), np.arange(9))


def test_a_stamped_recording_is_held_out_by_station(tmp_path):
    """A continuous 30 Hz recording of 40 s with 2 s dwells at the waypoints it reaches, as TUM files with stamps: its
    pairs are held out a station at a time (at least one per dwell, fewer than half as many stations as pairs, every
    inlier held out), and the figures agree with sigma."""
    g = simulate(dict(STATIONS, sampling_mode="continuous", n_stations=12, camera_rate_hz=30.0,
                      dwell_range_s=(2.0, 2.0), duration_s=40.0, seed=3))
    dwells = int(np.sum(g.trajectory.schedule.arrive_s < g.t_camera_s[-1]))

    def tum(path, t, T):
        q = np.array([se3.quaternion_from_matrix(R, check=False) for R in T[:, :3, :3]])  # w, x, y, z
        np.savetxt(path, np.column_stack([t, T[:, :3, 3], q[:, 1:], q[:, :1]]), fmt="%.12g")

    tum(tmp_path / "hand.tum", g.t_robot_s, g.T_base_ee_meas)
    tum(tmp_path / "eye.tum", g.t_camera_s, g.T_cam_target_meas)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = calibrate(tmp_path / "hand.tum", tmp_path / "eye.tum", setup="eye_in_hand", eye_pose="cam_T_target",
                        offset="none")
    h = res.held_out
    assert h["n_pairs"] == res.n_pairs - len(res.outliers)
    assert dwells >= 3 and dwells <= h["n"] < h["n_pairs"] / 2
    assert h["consistent"] and 0.9 <= h["coverage95"] <= 0.99
    assert h["rms_mm"] == pytest.approx(h["predicted_rms_mm"], rel=0.15)


def test_held_out_regions_cover_95_percent_over_seeded_recordings():
    """50 seeded recordings (12-25 stations, both setups): the share of held-out eye poses inside their 95 %
    regions within 3 binomial standard deviations of 95 % (the pairs of one recording share its noise estimate:
    the band is widened by sqrt(2)); the work point's 95 % radius covers its true error in at least 85 %."""
    inside = total = covered = 0
    n_rec = 50
    for k in range(n_rec):
        setup = ("eye_in_hand", "eye_to_hand")[k % 2]
        g = simulate(dict(STATIONS, configuration=setup, seed=500 + k, n_stations=(12, 18, 25)[k % 3]))
        pairing, _, sol = _fit(g, setup)
        h = ho.assess_solution(sol, pairing.A, None)
        inside += round(h["coverage95"] * h["n_pairs"])
        total += h["n_pairs"]
        T_est, T_true = (sol.Y, g.Y) if setup == "eye_to_hand" else (sol.X, g.X)
        p = ho.default_point(pairing.B, setup, sol.scale)
        pe = ho.point_error(sol.cov, setup, sol.X, sol.Y, p)
        err = np.linalg.norm(T_est[:3, :3] @ p + T_est[:3, 3] - T_true[:3, :3] @ p - T_true[:3, 3])
        covered += err <= pe["point_error_95_mm"] / 1000
    band = 3 * np.sqrt(2 * 0.95 * 0.05 / total)
    assert abs(inside / total - 0.95) <= band, (inside, total)
    assert covered >= 0.85 * n_rec, covered


def test_a_held_out_rms_far_above_its_prediction_is_a_warning():
    """As fitted, no warning and the prediction inside its 95 % interval.  One station that pulls the fit (its
    Jacobian 8 times the others': a pose far from the rest) and disagrees with the rest by 10 sigma per component:
    the fit bends to it, its held-out error is far larger than its residual, and the RMS goes above its 99 %
    bound: the warning names the held-out accuracy.  The noise level itself is estimated from the same residuals:
    stating it three times too small (whitening by 3 W) changes nothing."""
    g = simulate(dict(STATIONS, seed=6))
    pairing, _, sol = _fit(g, "eye_in_hand")
    kw = dict(prior_information=sol.prior_information, noise_dof=sol.noise_dof, noise_model=sol.noise_model)
    st = np.arange(len(pairing))
    G, z = sol.whitened_jacobian.copy(), sol.whitened_residuals.copy()
    good = ho.assess(G, z, sol.whitening, st, **kw)
    assert good["consistent"] and ho.warning(good) is None
    assert good["predicted_interval95_mm"][0] < good["predicted_rms_mm"] < good["predicted_interval95_mm"][1]
    scaled = ho.assess(3 * G, 3 * z, 3 * sol.whitening, st, **dict(kw, prior_information=9 * sol.prior_information))
    assert scaled["rms_mm"] == pytest.approx(good["rms_mm"], rel=1e-9)
    assert scaled["predicted_rms_mm"] == pytest.approx(good["predicted_rms_mm"], rel=1e-9)
    G[0] *= 8.0
    z[0] += 10.0
    H = np.einsum("nkp,nkq->pq", G, G) + sol.prior_information
    z -= np.einsum("nkp,p->nk", G, np.linalg.solve(H, np.einsum("nkp,nk->p", G, z)))  # the fit bends to it
    bad = ho.assess(G, z, sol.whitening, st, **kw)
    assert not bad["consistent"]
    assert bad["rms_mm"] > bad["upper99_mm"] or bad["rms_deg"] > bad["upper99_deg"]
    assert ho.warning(bad).startswith("held-out accuracy: the eye poses of the 25 stations")


def test_radius_95_is_the_95_percent_quantile_of_the_error_length():
    """Isotropic: sqrt(chi2_3 95 %); one axis: sqrt(chi2_1 95 %); a general covariance: the quantile of the length
    of seeded Gaussian draws (200,000, within 1 %)."""
    assert ho.radius_95(np.eye(3) * 4.0) == pytest.approx(2 * np.sqrt(stats.chi2.ppf(0.95, 3)), rel=3e-3)
    assert ho.radius_95(np.diag([1.0, 0.0, 0.0])) == pytest.approx(np.sqrt(stats.chi2.ppf(0.95, 1)), rel=3e-3)
    rng = np.random.default_rng(0)
    M = rng.normal(size=(3, 3)) * [1.0, 0.3, 0.05]
    C = M @ M.T
    e = rng.multivariate_normal(np.zeros(3), C, size=200_000)
    assert ho.radius_95(C) == pytest.approx(np.quantile(np.linalg.norm(e, axis=1), 0.95), rel=0.01)


@pytest.mark.parametrize("setup", ["eye_in_hand", "eye_to_hand"])
def test_point_error_jacobian_matches_finite_differences(setup):
    """The point's 3x3 covariance equals J C J^T with J from central differences of the point's position in the
    base over the perturbations of X (eye-in-hand, through A X) or Y (eye-to-hand)."""
    rng = np.random.default_rng(1)
    X = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(size=3)), rng.normal(size=3) * [0.1, 0.2, 0.05])
    Y = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(size=3)), rng.normal(size=3))
    A = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(size=3)), rng.normal(size=3))[None]
    p = np.array([0.05, -0.1, 0.7])
    L = rng.normal(size=(12, 12)) * np.r_[[1e-3] * 3, [1e-3] * 3, [2e-3] * 3, [5e-3] * 3]
    cov = L @ L.T
    T, k = (Y, 6) if setup == "eye_to_hand" else (X, 0)

    def pos(d):
        Tp = sv.retract(T, d)
        q = Tp[:3, :3] @ p + Tp[:3, 3]
        return q if setup == "eye_to_hand" else A[0, :3, :3] @ q + A[0, :3, 3]

    J = np.zeros((3, 6))
    for j in range(6):
        e = np.zeros(6)
        e[j] = 1e-6
        J[:, j] = (pos(e) - pos(-e)) / 2e-6
    C3 = J @ cov[k:k + 6, k:k + 6] @ J.T
    got = ho.point_error(cov, setup, X, Y, p, A)["point_error_95_mm"]
    assert got == pytest.approx(1000 * ho.radius_95(C3), rel=1e-6)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    g = simulate(dict(STATIONS, seed=8, n_stations=15))
    d = tmp_path_factory.mktemp("held_out")
    np.savetxt(d / "hand.txt", g.T_base_ee_meas.reshape(-1, 16), fmt="%.12g")
    np.savetxt(d / "eye.txt", g.T_cam_target_meas.reshape(-1, 16), fmt="%.12g")
    return d


def test_json_fields_present_and_consistent(files):
    """``held_out`` and ``point_error_95_mm`` in the JSON; the counts, shares and intervals agree with each other and
    with the result; the verdict quotes the held-out RMS; the default point is the target's mean in the camera."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = calibrate(files / "hand.txt", files / "eye.txt", fmt="rwhe", setup="eye_in_hand", eye_pose="cam_T_target")
    d = json.loads(json.dumps(res.to_dict()))
    h = d["held_out"]
    for key in ("n", "rms_mm", "rms_deg", "predicted_rms_mm", "predicted_rms_deg", "coverage95"):
        assert isinstance(h[key], (int, float)) and np.isfinite(h[key]), key
    assert h["n"] == h["n_pairs"] == d["n_pairs"] - len(d["outliers"])  # unstamped: one pair per station
    assert 0.0 <= h["coverage95"] <= 1.0
    assert h["predicted_interval95_mm"][0] < h["predicted_rms_mm"] < h["predicted_interval95_mm"][1] < h["upper99_mm"]
    assert h["consistent"] == (h["rms_mm"] <= h["upper99_mm"] and h["rms_deg"] <= h["upper99_deg"])
    assert f"Held-out eye poses {h['rms_mm']:.3g} mm" in d["verdict"]
    assert d["point_error_95_mm"] == d["point_error"]["point_error_95_mm"] > 0
    T = np.loadtxt(files / "eye.txt").reshape(-1, 4, 4)
    np.testing.assert_allclose(d["point_error"]["point_cam_m"], T[:, :3, 3].mean(axis=0) / d["scale"], rtol=1e-9)
    # a point farther from the camera's origin along the line of sight: X's rotation error counts more
    assert res.point_error([0.0, 0.0, 3.0])["point_error_95_mm"] > d["point_error_95_mm"]


def test_cli_point_sets_the_work_point(files, tmp_path):
    out = tmp_path / "r.json"
    r = CliRunner().invoke(main, ["calibrate", "--hand", str(files / "hand.txt"), "--eye", str(files / "eye.txt"),
                                  "--format", "rwhe", "--setup", "eye_in_hand", "--eye-pose", "cam_T_target", "--point", "0, 0, 0.5",
                                  "--json", str(out)])
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    assert d["point_error"]["point_cam_m"] == [0.0, 0.0, 0.5]
    assert "work point (0, 0, 0.5) m in the camera" in r.output
    assert "held-out accuracy (15 stations" in r.output


@pytest.mark.parametrize("bad", ["0,a,1", "0,1", "1,2,3,4", "nan,0,1", ""])
def test_cli_point_errors_exit_2_with_one_line(files, bad):
    r = CliRunner().invoke(main, ["calibrate", "--hand", str(files / "hand.txt"), "--eye", str(files / "eye.txt"),
                                  "--point", bad])
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kinhec calibrate: error: point: expected"), r.stderr
    assert "Traceback" not in r.output + r.stderr
