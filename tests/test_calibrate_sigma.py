"""Error bars that hold: the eye-translation scale, intrinsics marginalised on ``--corners``, correlated residuals,
the outlier gate that does not collapse, degenerate motions refused, and the reported sigma over generated
recordings (a small version of ``benchmarks/honest_sigma.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from kinhec import io as kio
from kinhec.geometry import se3
from kinhec.calibrate import calibrate
from kinhec.calibrate import solve as sv
from kinhec.calibrate import uncertainty as unc
from kinhec.calibrate.pairing import OrderPairing
from kinhec.cli import main
from kinhec.synth.generator import generate_sequence, simulate
from kinhec.synth.observations import ObservationSet, observations_from_recipe, transform_from_pose_json, write_observations
from kinhec.synth.recipe import Recipe
from kinhec.synth.tiers import expand_track, load_tier

from support.camera_bias import apply_board_scale

REPO = Path(__file__).resolve().parents[1]

#: 99.9 % quantile of chi-square with 6 degrees of freedom.
CHI2_6_999 = float(stats.chi2.ppf(0.999, 6))

#: What the generated files hold, stated: kinhec's targets face the camera and stand 0.4-0.8 m from the base, so
#: neither the setup (eye-in-hand with T_cam_target rows is eye-to-hand with T_marker_cam rows) nor the hand's
#: direction (both files inverted exchange X and Y) is told apart by what is physically possible, and a default is
#: not a statement (kinhec.calibrate.reading_choice).
STATED = dict(setup="eye_in_hand", hand_pose="base_T_ee")


def right_error(T_est, T_true):
    """Error in the parametrisation of the reported covariance: right rotation [rad], translation [m]."""
    return np.concatenate([se3.so3_log(T_est[:3, :3].T @ T_true[:3, :3]), T_true[:3, 3] - T_est[:3, 3]])


def nees6(res, X_true) -> float:
    e = right_error(res.X, X_true)
    return float(e @ np.linalg.solve(res.cov[:6, :6], e))


def _rows(path, T):
    path.write_text("".join(" ".join(repr(v) for v in M.ravel().tolist()) + "\n" for M in T))
    return path


def _tum(path, t, T):
    q = se3.quaternion_from_matrix(T[:, :3, :3])
    rows = np.column_stack([t, T[:, :3, 3], q[:, 1:], q[:, :1]])
    path.write_text("".join(" ".join(repr(v) for v in r) + "\n" for r in rows.tolist()))
    return path


STATIONS = dict(sequence_id="noise-000000", track="noise", seed=11, robot="ur5e", configuration="eye_in_hand",
                family="lookat", sampling_mode="stations", n_stations=25, camera="hd",
                robot_noise_models=("se3_gaussian",), robot_rot_std_rad=2e-4, robot_trans_std_m=1e-4,
                camera_noise_model="se3_gaussian", camera_rot_std_rad=1e-3, camera_trans_std_m=3e-4,
                camera_trans_std_z_m=1e-3)  # fmt: skip


# --------------------------------------------------------------------------- #
# the pieces
# --------------------------------------------------------------------------- #
def test_studentised_gate_keeps_clean_pairs_and_rejects_a_gross_one():
    """With a 6x6 covariance from 14 degrees of freedom, clean pairs are not outliers (chi-square at 99.99 % calls
    some of them so); a gross one is."""
    rng = np.random.default_rng(0)
    false_chi2 = 0
    for _ in range(20):
        r = rng.standard_normal((17, 6)) @ np.diag([1, 2, 1, 3, 1, 1.5])
        nu = 17 - 3.0
        S = r.T @ r / nu
        W = np.linalg.cholesky(np.linalg.inv(S)).T
        z = r @ W.T
        G = 0.1 * rng.standard_normal((17, 6, 12))
        assert unc.gate(z, G, np.ones(17, dtype=bool), nu).all()
        false_chi2 += int(((z * z).sum(axis=1) > sv.CHI2_6_9999).sum())
    assert false_chi2 == 0  # the inliers' own distances are bounded by nu: the danger is the excluded ones
    r[3] = 30 * np.array([1, 2, 1, 3, 1, 1.5])
    inl = np.ones(17, dtype=bool)
    inl[3] = False
    S = r[inl].T @ r[inl] / (16 - 2.0)
    z = r @ np.linalg.cholesky(np.linalg.inv(S))
    out = unc.gate(z, G, inl, 14.0)
    assert not out[3] and out[inl].all()
    # an excluded clean pair comes back (its predictive distance is Hotelling's, not chi-square's)
    inl[3], r[3] = False, rng.standard_normal(6) * 2.5
    z = r @ np.linalg.cholesky(np.linalg.inv(S))
    assert unc.gate(z, G, inl, 14.0)[3]


def test_autocorrelation_time_of_ar1_sequences():
    rng = np.random.default_rng(1)
    for rho in (0.0, 0.5, 0.9):
        e = rng.standard_normal((20000, 3))
        x = np.empty_like(e)
        x[0] = e[0]
        for i in range(1, len(e)):
            x[i] = rho * x[i - 1] + e[i]
        tau = unc.autocorrelation_time(x)
        expected = (1 + rho) / (1 - rho)
        assert np.all(np.abs(tau / expected - 1) < 0.2), (rho, tau, expected)


def test_pose_jacobian_matches_finite_differences():
    """The analytic Jacobian of the residuals (X, Y, and the scale on the predicted translation) in both domains."""
    rng = np.random.default_rng(2)
    n = 7
    A = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.8, (n, 3))), rng.normal(0, 0.4, (n, 3)))
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -0.5, 1.1]), [0.05, -0.02, 0.11])
    Y = se3.transform_from_rotation_translation(se3.so3_exp([1.0, 0.2, -0.4]), [0.6, 0.1, -0.3])
    B = se3.invert_transform(Y) @ A @ X @ se3.se3_exp(rng.normal(0, 1e-5, (n, 6)))
    B[:, :3, 3] *= 1.3
    pairing = OrderPairing(A, B, np.arange(n), np.arange(n))
    for inverse in (True, False):
        prob = sv._Problem(pairing, False, True, inverse, 0.005)
        st = (X, Y, None, 1.27)
        mask = np.ones(n, dtype=bool)
        J = prob.jac(st, mask)
        h = 1e-6
        for k in range(prob.P):
            p = np.zeros(prob.P)
            p[k] = h
            num = (prob.res(prob.apply(st, p), mask) - prob.res(prob.apply(st, -p), mask)) / (2 * h)
            # the analytic Jacobian linearises log(exp(a) E) ~ log E + a: exact at E = I, close at small residuals
            assert np.allclose(J[:, :, k], num, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(num).max())), (inverse, k)


# --------------------------------------------------------------------------- #
# the scale of the eye translations
# --------------------------------------------------------------------------- #
def test_a_board_printed_one_percent_large_is_found_and_explained(tmp_path):
    """40 look-at stations determine the scale of the eye translations to about 0.2 %: a board printed 1 % large is
    found (the scale within 3 sigma of 1/1.01, sigma below 0.3 %) and the warning names the board.  (Half a percent
    is 2-3 sigma here: found on some scenes, not on others.)  Look-at stations reached by IK one from the other, as
    published, keep closer together than stations solved apart, so they determine the scale less well: 25 of them
    gave 0.14-0.28 % over nine scenes (seeds 1-8 and this one) and found the 1 % board on six, this scene not among
    them; 40 give 0.17-0.28 % and find it on seven, this one among them."""
    g = simulate(Recipe.from_dict(dict(STATIONS, n_stations=40)))
    T = apply_board_scale(g.T_cam_target_meas, 1.01)
    ok = np.isfinite(T).all(axis=(1, 2))
    res = calibrate(_rows(tmp_path / "hand.txt", g.T_base_ee_meas[ok]), _rows(tmp_path / "eye.txt", T[ok]), fmt="rwhe",
                    **STATED)
    assert res.determined and res.observability["scale"]["determined"]
    assert abs(res.scale - 1 / 1.01) < 3 * res.scale_std and res.scale_std < 0.003, (res.scale, res.scale_std)
    assert any("% shorter than the robot's" in w and "board is likely" in w and "larger than stated" in w
               for w in res.warnings), res.warnings
    assert nees6(res, g.X) < CHI2_6_999
    d = res.to_dict()
    assert d["sigma"]["scale"]["value"] == pytest.approx(res.scale) and d["sigma"]["scale"]["mode"] == "metric"


def test_a_scale_the_robot_cannot_see_keeps_its_prior(tmp_path):
    """Robot translations of a few millimetres do not determine the scale: its 0.5 % prior is counted, and said."""
    rng = np.random.default_rng(3)
    n = 30
    A = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.4, (n, 3))),
                                                np.array([0.5, 0.0, 0.4]) + rng.normal(0, 0.002, (n, 3)))  # fmt: skip
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.1, -0.2, 1.4]), [0.0, 0.0, 0.002])
    Y = se3.transform_from_rotation_translation(se3.so3_exp([3.0, 0.1, 0.0]), [0.5, 0.0, -0.2])
    C = se3.invert_transform(A @ X) @ Y @ se3.se3_exp(np.c_[rng.normal(0, 1e-3, (n, 3)), rng.normal(0, 3e-4, (n, 3))])
    res = calibrate(_rows(tmp_path / "h.txt", A), _rows(tmp_path / "e.txt", C), fmt="rwhe", intrinsics_std="0,0",
                    **STATED)
    rep = res.observability["scale"]
    assert not rep["determined"] and rep["data_std"] > 0.005
    assert 0.004 < res.scale_std < 0.0075 and abs(res.scale - 1) < 0.01
    assert any("determine the scale of the eye translations only to" in n_ and "uncertainty of 0.5 %" in n_
               for n_ in res.notes), res.notes


def test_corners_with_a_board_half_a_percent_off_and_intrinsics_off(tmp_path):
    """The issue's 7 mm along the optical axis at z ~ 10: a board 0.5 % larger than stated and intrinsics off by a
    usual amount.  ``he_ml``'s pixel stage (intrinsics as given, board as stated) is 5-10 sigma off; ``--corners``,
    which refines both and marginalises them, lands within its error bars and finds the board's scale."""
    from kinhec.calibrate.corners import solve_corners
    from kinhec.models.intrinsics import calibrate_camera, pack_views

    recipe = dict(sequence_id="c", seed=5, robot="ur5e", configuration="eye_in_hand", family="lookat",
                  sampling_mode="stations", n_stations=20, camera="hd", target="checker_9x6_25mm",
                  camera_noise_model="pnp", pixel_std=0.5, robot_noise_models=("se3_gaussian",),
                  robot_rot_std_rad=2e-4, robot_trans_std_m=1e-4)  # fmt: skip
    obs, truth = observations_from_recipe(recipe)
    obs = ObservationSet(obs.camera_id, obs.image_size, obs.mode, [p / 1.005 for p in obs.points_3d], obs.points_2d,
                         obs.T_base_ee)  # fmt: skip
    path = write_observations(tmp_path / "obs.json", obs)
    p = truth["parameters"]
    k = [p["fx"] * 1.003, p["fy"] * 1.003, p["cx"] + 1.5, p["cy"] - 1.0]
    X_true = transform_from_pose_json(truth["poses"]["X"])
    res = calibrate(corners=path, intrinsics=k)
    assert res.determined and nees6(res, X_true) < CHI2_6_999
    assert abs(res.scale - 1 / 1.005) < 3 * res.scale_std and res.observability["scale"]["determined"]
    assert set(res.to_dict()["sigma"]["intrinsics"]) == {"fx", "fy", "cx", "cy"}
    # the fixed-intrinsics, stated-board fit on the same pixels
    cam = calibrate_camera(pack_views(obs.points_3d, obs.points_2d), obs.image_size, intrinsics=np.array(k + [0.0] * 5))
    h = solve_corners(obs, cam)
    e = right_error(h.X, X_true)
    T = np.eye(6)
    T[3:, 3:] = h.X[:3, :3]  # he_ml's translation perturbation is in X's frame
    C = T @ h.cov[:6, :6] @ T.T
    assert np.max(np.abs(e[3:]) / np.sqrt(np.diag(C)[3:])) > 5.0


# --------------------------------------------------------------------------- #
# correlated residuals: the same inflation for stamped and row-ordered pairs
# --------------------------------------------------------------------------- #
def _ar1(rng, n, rho, std):
    e = rng.standard_normal((n, 6)) * std
    x = np.empty_like(e)
    x[0] = e[0] / np.sqrt(1 - rho**2)
    for i in range(1, n):
        x[i] = rho * x[i - 1] + e[i]
    return x * np.sqrt(1 - rho**2)


@pytest.mark.parametrize("rho", [0.0, 0.9])
def test_correlated_residuals_inflate_stamped_and_row_ordered_pairs_alike(tmp_path, rho):
    # the camera's noise only (a robot's flange noise seen through a lever arm varies from pose to pose, which the
    # sandwich part of the inflation counts too)
    recipe = dict(STATIONS, family="joint_sinusoid", sampling_mode="continuous", duration_s=10.0, camera_rate_hz=20.0,
                  camera_noise_model="se3_gaussian", camera_rot_std_rad=0.0, camera_trans_std_m=0.0,
                  camera_trans_std_z_m=0.0, robot_rot_std_rad=0.0, robot_trans_std_m=0.0)  # fmt: skip
    g = simulate(Recipe.from_dict(recipe))
    rng = np.random.default_rng(4)
    noise = _ar1(rng, len(g.T_cam_target_gt), rho, np.array([1e-3] * 3 + [5e-4] * 3))
    T = se3.se3_exp(noise) @ g.T_cam_target_gt
    stamped = calibrate(_tum(tmp_path / "h.tum", g.t_robot_s, g.T_base_ee_meas), _tum(tmp_path / "e.tum", g.t_camera_s, T),
                        fmt="tum", offset="none", intrinsics_std="0,0", **STATED)  # fmt: skip
    rows = calibrate(_rows(tmp_path / "h.txt", g.T_base_ee_meas), _rows(tmp_path / "e.txt", T), fmt="rwhe",
                     intrinsics_std="0,0", **STATED)  # fmt: skip
    a, b = stamped.observability, rows.observability
    assert a["covariance_inflation_X"] == pytest.approx(b["covariance_inflation_X"], rel=1e-6)
    assert np.allclose(stamped.X_std, rows.X_std, rtol=1e-6)
    if rho == 0.0:
        assert a["covariance_inflation"] < 1.6 and a["residual_lag1_corr"] < 0.2
    else:
        assert a["covariance_inflation"] > 4.0 and a["residual_lag1_corr"] > 0.6
        assert any("correlate from pair to pair" in n for n in rows.notes)


# --------------------------------------------------------------------------- #
# degenerate motion: small-tier motion-000014 refused, motion-000023 not collapsed
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def small_motion(tmp_path_factory):
    root = tmp_path_factory.mktemp("motion")
    recipes = {r["sequence_id"]: r for r in expand_track(load_tier("small"), "motion")}
    tables = [generate_sequence(Recipe.from_dict(recipes[s])) for s in ("motion-000014", "motion-000023")]
    kio.write_index(root, kio.write_shard(root, "motion", 0, tables))
    return root


def test_small_tier_motion_14_is_refused(small_motion):
    """Rotation axes within 2 deg of one direction, 20 stations: reported 'determined' to 0.055 deg / 0.22 mm with a
    true error of 2.1 deg / 185 mm when the gate labelled 12 of 17 clean pairs outliers.  Now every pair is kept
    and the translation along the axis is seen to be undetermined."""
    seq = kio.load_sequence(small_motion, "motion-000014")
    res = calibrate(dataset=small_motion, sequence="motion-000014", force=True)
    assert not res.outliers and not res.determined
    assert any("poorly determined" in w or "one axis" in w for w in res.warnings)
    r = CliRunner().invoke(main, ["calibrate", "--dataset", str(small_motion), "--sequence", "motion-000014"])
    assert r.exit_code == 2 and "not determined" in r.output
    e = right_error(res.X, seq.X)
    assert np.linalg.norm(e[3:]) < 4 * np.linalg.norm(res.X_std[3:])  # the error bars themselves hold


def test_small_tier_motion_23_keeps_its_clean_pairs(small_motion):
    """17 clean stations: 8 were labelled outliers by the chi-square gate with a covariance from the survivors."""
    seq = kio.load_sequence(small_motion, "motion-000023")
    res = calibrate(dataset=small_motion, sequence="motion-000023")
    assert res.determined and not res.outliers
    assert nees6(res, seq.X) < CHI2_6_999


# --------------------------------------------------------------------------- #
# sigma of every estimated quantity on the screen and in the JSON
# --------------------------------------------------------------------------- #
def test_every_estimated_quantity_has_its_sigma(tmp_path):
    recipe = dict(STATIONS, sync="async", sampling_mode="continuous", family="joint_sinusoid", duration_s=8.0,
                  time_offset_s=0.04)  # fmt: skip
    g = simulate(Recipe.from_dict(recipe))
    ok = np.isfinite(g.T_cam_target_meas).all(axis=(1, 2))
    h, e = _tum(tmp_path / "h.tum", g.t_robot_s, g.T_base_ee_meas), _tum(tmp_path / "e.tum", g.t_camera_s[ok],
                                                                           g.T_cam_target_meas[ok])  # fmt: skip
    out = tmp_path / "r.json"
    r = CliRunner().invoke(main, ["calibrate", "--hand", str(h), "--eye", str(e), "--format", "tum", "--json", str(out),
                                        "--setup", "eye_in_hand", "--hand-pose", "base_T_ee"])
    assert r.exit_code == 0, r.output
    sg = json.loads(out.read_text())["sigma"]
    assert all(len(sg[k]["rot_deg"]) == 3 and len(sg[k]["trans_mm"]) == 3 for k in ("X", "Y"))
    assert sg["time_offset_ms"]["std"] > 0 and sg["scale"]["std"] > 0
    assert len(sg["noise"]["residual_deg_mm"]) == 6 and all(v > 0 for v in sg["noise"]["std"])
    for text in ("std of Y", "scale of the eye translations", "noise (residual std"):
        assert text in r.output, text


def test_shrunk_noise_keeps_the_variances_and_shrinks_correlations_by_their_sampling_error():
    """Schafer and Strimmer's weight, computed here pair by pair: near 1 for independent components from few pairs,
    near 0 for strongly correlated ones from many; the variances are kept and the result stays positive definite."""
    rng = np.random.default_rng(4)

    def weight(R, S):
        sd = np.sqrt(np.diag(S))
        m = len(R)
        num = den = 0.0
        for i in range(6):
            for j in range(6):
                if i != j:
                    w = R[:, i] * R[:, j] / (sd[i] * sd[j])
                    num += m / (m - 1.0) ** 3 * float(((w - w.mean()) ** 2).sum())
                    den += (S[i, j] / (sd[i] * sd[j])) ** 2
        return min(max(num / den, 0.0), 1.0)

    R = rng.normal(size=(25, 6)) * np.array([1e-3, 1e-3, 1e-3, 3e-4, 3e-4, 1e-3])
    S = R.T @ R / 23.0
    S_shrunk, lam = unc.shrunk_noise(R, S)
    assert lam == pytest.approx(weight(R, S), rel=1e-12) and lam > 0.6
    assert np.allclose(np.diag(S_shrunk), np.diag(S), rtol=1e-15)
    off = ~np.eye(6, dtype=bool)
    assert np.allclose(S_shrunk[off], (1.0 - lam) * S[off], rtol=1e-12)
    L = np.linalg.cholesky(np.array([[1.0, 0.9, 0, 0, 0, 0], [0.9, 1.0, 0, 0, 0, 0], [0, 0, 1.0, 0, 0, -0.8],
                                     [0, 0, 0, 1.0, 0, 0], [0, 0, 0, 0, 1.0, 0], [0, 0, -0.8, 0, 0, 1.0]]))
    R = rng.normal(size=(2000, 6)) @ L.T
    S = R.T @ R / 1990.0
    S_shrunk, lam = unc.shrunk_noise(R, S)
    assert lam == pytest.approx(weight(R, S), rel=1e-12) and lam < 0.01
    assert np.linalg.eigvalsh(S_shrunk).min() > 0


def test_the_full_noise_models_error_bars_hold_in_their_tails(tmp_path):
    """Station recordings with about 23 degrees of freedom for the full noise model's 21 entries (25 stations,
    eye-in-hand, 60 seeds): the NEES of ``Y`` (the unknown that is not the camera's mount) averages near 6 and at
    most one result is past chi-square's 99.9 % quantile.  With the inverse
    normal matrix alone (no sandwich) the mean was 8.0 and 3.5 % were past it (``benchmarks/covariance_tails.py``:
    a draw of the noise covariance too small in one direction made ``Y``'s error bars too small there)."""
    nees, kinds = [], set()
    for seed in range(300, 360):
        g = simulate(dict(STATIONS, seed=seed))
        ok = np.isfinite(g.T_cam_target_meas).all(axis=(1, 2))
        hand, eye = _rows(tmp_path / "h.txt", g.T_base_ee_meas[ok]), _rows(tmp_path / "e.txt", g.T_cam_target_meas[ok])
        res = calibrate(hand, eye, fmt="rwhe", eye_pose="cam_T_target", **STATED)
        kinds.add(res.observability.get("noise_model"))
        e = right_error(res.Y, g.Y)
        nees.append(float(e @ np.linalg.solve(res.cov[6:12, 6:12], e)))
    nees = np.array(nees)
    assert kinds == {"full"}, kinds
    assert 4.5 < nees.mean() < 7.0, nees.mean()
    assert (nees > stats.chi2.ppf(0.999, 6)).sum() <= 1, np.sort(nees)[-5:]


# --------------------------------------------------------------------------- #
# honest sigma over generated recordings (benchmarks/honest_sigma.py, small)
# --------------------------------------------------------------------------- #
def test_reported_sigma_holds_over_generated_recordings():
    """About 30 recordings of the small tier's tracks (seed 1; a board 0.5 % off and intrinsics off in some; robots
    with kinematic errors and drifting visual odometry left out: see docs/calibrate.md), on the pose path and on
    ``--corners``: the summed NEES of the rotation and of the translation of X lie within the two-sided 99.8 %
    interval of chi-square with 3 dof per recording."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import honest_sigma as hs
    finally:
        sys.path.pop(0)
    for path, n in (("pose", 4), ("corners", 10)):
        # the recordings of the draw that qualify; on --corners the first n of a draw of 16
        items = [(i, (t, r)) for i, (t, r) in hs.items_for(path, n, 16, 1)
                 if "dh_error" not in (r.get("robot_noise_models") or ()) and t != "monocular"]  # fmt: skip
        if path == "corners":
            items = items[:n]
        rows = [r for r in hs.run(path, items, 1, lambda r: None) if r.get("determined") and "nees_rot" in r]
        assert len(rows) >= 8, (path, len(rows))
        lo, hi = stats.chi2.ppf([0.001, 0.999], 3 * len(rows))
        for block in ("rot", "trans"):
            total = sum(r[f"nees_{block}"] for r in rows)
            assert lo < total < hi, (path, block, len(rows), total, lo, hi)
