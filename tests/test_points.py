"""``kinhec calibrate --points``: a depth camera's 3D points, its noise model, the fit of X and Y and its sigma.

The truths: the generator's ground truth (noise-free points give X exactly), the noise model's covariance by
hand (the ray direction is an eigenvector), sample covariances of seeded draws, and one-line errors with exit 2.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec.calibrate.points import calibrate_points
from kinhec.cli import main
from kinhec.geometry import se3
from kinhec.models.depth_noise import point_covariance, point_whitening, sample_point_noise
from kinhec.solvers.he_ml_stages import points as hp
from kinhec.synth.point_observations import (generate_point_recording, point_observations_to_json,
                                             read_point_observations, write_point_observations)
from kinhec.vision.targets import parse_target

from helpers.checks import one_line_exit_2

TARGET = "chessboard:9x6:0.025"
P = parse_target(TARGET).points_m
NOISE = (2e-3, 1.5e-3)


def _x_error(X, X_true):
    """The error of ``X`` in the result's parameters: rotation right perturbation, translation in the parent frame."""
    return np.r_[se3.so3_log(X[:3, :3].T @ X_true[:3, :3]), X_true[:3, 3] - X[:3, 3]]


# --------------------------------------------------------------------------- noise model
def test_covariance_has_the_ray_as_eigenvector_by_hand():
    a, b = NOISE
    q = np.array([0.3, -0.2, 1.5])
    z, u = 1.5, q / np.linalg.norm(q)
    v = np.cross(u, [1.0, 0.0, 0.0])
    v /= np.linalg.norm(v)
    w = np.cross(u, v)
    S = point_covariance(q, NOISE)
    np.testing.assert_allclose(S @ u, (a * z * z) ** 2 * u, rtol=1e-12, atol=1e-20)
    np.testing.assert_allclose(S @ v, (b * z) ** 2 * v, rtol=1e-12, atol=1e-20)
    np.testing.assert_allclose(S @ w, (b * z) ** 2 * w, rtol=1e-12, atol=1e-20)
    np.testing.assert_allclose(np.trace(S), (a * z * z) ** 2 + 2 * (b * z) ** 2, rtol=1e-12)
    # on the optical axis: a diagonal covariance, the depth's along z
    np.testing.assert_allclose(point_covariance([0.0, 0.0, 2.0], NOISE),
                               np.diag([(2 * b) ** 2, (2 * b) ** 2, (4 * a) ** 2]), rtol=1e-12)  # fmt: skip
    L = point_whitening(q, NOISE)
    np.testing.assert_allclose(L, L.T, atol=0)
    np.testing.assert_allclose(L @ S @ L, np.eye(3), atol=1e-12)


def test_noise_draws_have_the_model_covariance():
    q = np.array([0.4, 0.1, 1.2])
    d = sample_point_noise(np.random.default_rng(11), np.broadcast_to(q, (40000, 3)), NOISE)
    S = point_covariance(q, NOISE)
    emp = d.T @ d / d.shape[0]
    # every entry within 4 standard errors of a sample covariance (var of s_ij = (S_ii S_jj + S_ij^2) / n)
    se = np.sqrt((np.outer(np.diag(S), np.diag(S)) + S * S) / d.shape[0])
    assert np.all(np.abs(emp - S) < 4 * se), (emp, S)


# --------------------------------------------------------------------------- the fit
@pytest.mark.parametrize("setup", ["eye_in_hand", "eye_to_hand"])
def test_noise_free_points_give_x_and_y_exactly(setup):
    obs, truth = generate_point_recording(setup, P, seed=4, n_views=6, noise=(1e-12, 1e-12))
    res = calibrate_points(obs, point_noise=(1e-3, 1e-3))
    assert np.abs(res.X - truth["X"]).max() < 1e-9 and np.abs(res.Y - truth["Y"]).max() < 1e-9
    assert res.setup == setup and res.n_pairs == 6 and res.determined


@pytest.mark.parametrize("setup", ["eye_in_hand", "eye_to_hand"])
def test_fit_against_ground_truth_and_estimated_noise(setup):
    obs, truth = generate_point_recording(setup, P, seed=7, n_views=12, noise=NOISE, target=TARGET)
    res = calibrate_points(obs)
    e = _x_error(res.X, truth["X"])
    assert float(e @ np.linalg.solve(res.cov[:6, :6], e)) < 22.46  # chi-square(6) at 0.999
    pn = res.observability["point_noise"]
    assert pn["estimated"] == "both"
    for est, std, true in ((pn["a_per_m"], pn["a_std"], NOISE[0]), (pn["b_rad"], pn["b_std"], NOISE[1])):
        assert abs(est - true) < 4 * std, (est, std, true)
    # degrees of freedom: the points minus the 12 unknowns' leverage, split along and across the rays
    n = sum(len(p) for p in obs.points_cam)
    assert pn["dof_along_ray"] + pn["dof_across_ray"] == pytest.approx(3 * n - 12, abs=1e-6)


def test_sigma_matches_the_scatter_of_seeded_draws():
    """The same scene, 40 noise draws: the errors of X against the covariance the fit reports (NEES) and the
    predicted covariance from the true Fisher information against the draws' sample covariance."""
    obs, truth = generate_point_recording("eye_in_hand", P, seed=2, n_views=8, noise=NOISE)
    q = truth["points_true"]
    A, Xt, Yt = obs.T_base_ee, truth["X"], truth["Y"]
    rng = np.random.default_rng(123)
    errs, nees = [], []
    for _ in range(40):
        views = hp.pack_points([P] * len(q), q + sample_point_noise(rng, q, NOISE))
        fit = hp.points_ml(A, Xt, Yt, "eye_in_hand", views)
        e = se3.se3_log(se3.invert_transform(fit.X) @ Xt)  # the fit's own parameters (right perturbation)
        errs.append(e)
        nees.append(float(e @ np.linalg.solve(fit.cov[:6, :6], e)))
    # mean of 40 chi-square(6): 6 +- 3 sqrt(12 / 40)
    assert abs(np.mean(nees) - 6.0) < 3 * np.sqrt(12 / 40), np.mean(nees)
    views = hp.pack_points([P] * len(q), q)
    cov = np.linalg.inv(hp.points_information(A, Xt, Yt, "eye_in_hand", views, NOISE))[:6, :6]
    E = np.array(errs)
    # the draws' spread in the predicted covariance's whitened coordinates: trace 6 (80 chi-square(1)-ish terms)
    Lc = np.linalg.cholesky(np.linalg.inv(cov))
    assert 0.65 < np.trace(np.cov((E @ Lc).T, bias=True)) / 6.0 < 1.4


def test_rigid_alignment_recovers_the_pose_and_rejects_collinear_points():
    obs, truth = generate_point_recording("eye_in_hand", P, seed=3, n_views=4, noise=(1e-12, 1e-12))
    C = hp.rigid_alignment(hp.pack_points([P] * 4, obs.points_cam))
    np.testing.assert_allclose(C, truth["C"], atol=1e-9)
    line = np.c_[np.linspace(0, 0.1, 5), np.zeros(5), np.zeros(5)]
    with pytest.raises(Exception, match="view 0: the model points are collinear"):
        hp.rigid_alignment(hp.pack_points([line], [line + [0, 0, 1.0]]))


def test_file_round_trip_and_target_ids(tmp_path):
    obs, truth = generate_point_recording("eye_to_hand", P, seed=9, n_views=5, noise=NOISE, target=TARGET)
    # keep a subset of the points per view, named by id
    keep = [np.arange(0, 54, 1 + i % 3) for i in range(5)]
    doc = point_observations_to_json(obs)
    for v, k in zip(doc["input"]["views"], keep):
        v["obs"]["points_cam"] = [v["obs"]["points_cam"][j] for j in k]
        v["obs"]["ids"] = k.tolist()
    path = tmp_path / "pts.json"
    path.write_text(json.dumps(doc))
    back = read_point_observations(path)
    assert back.target == TARGET and back.mode == "eye_to_hand"
    np.testing.assert_allclose(back.points_cam[2], obs.points_cam[2][keep[2]], rtol=0, atol=0)
    np.testing.assert_allclose(back.T_base_ee, obs.T_base_ee, atol=1e-12)
    # the same points given as points_3d instead of ids: the same fit
    write_point_observations(tmp_path / "p3.json", type(obs)(obs.camera_id, obs.mode, back.points_cam, back.T_base_ee,
                                                            [P[k] for k in keep], [None] * 5, None))  # fmt: skip
    r1, r2 = calibrate_points(path, point_noise=NOISE), calibrate_points(tmp_path / "p3.json", point_noise=NOISE)
    np.testing.assert_allclose(r1.X, r2.X, atol=1e-12)


# --------------------------------------------------------------------------- the command line
def _run(*args):
    return CliRunner().invoke(main, ["calibrate", *map(str, args)])


@pytest.fixture
def doc():
    obs, truth = generate_point_recording("eye_in_hand", P, seed=1, n_views=5, noise=NOISE, target=TARGET)
    return point_observations_to_json(obs), truth


def test_cli_writes_the_corner_paths_keys(doc, tmp_path):
    d, truth = doc
    path, out = tmp_path / "p.json", tmp_path / "r.json"
    path.write_text(json.dumps(d))
    r = _run("--points", path, "--json", out)
    assert r.exit_code == 0, r.output
    res = json.loads(out.read_text())
    for key in ("X", "Y", "X_std", "Y_std", "X_name", "Y_name", "n_pairs", "outliers", "observability", "verdict"):
        assert key in res, key
    assert res["observability"]["determined"] is True and res["n_pairs"] == 5
    e = _x_error(np.array(res["X"]), truth["X"])
    assert np.all(np.abs(e) < 5 * np.array(res["X_std"]))


def _bad(tmp_path, d, name="bad.json"):
    path = tmp_path / name
    path.write_text(json.dumps(d))
    return path


def test_cli_wrong_shape_names_file_and_view(doc, tmp_path):
    d, _ = doc
    d["input"]["views"][2]["obs"]["points_cam"] = [[0.1, 0.2]] * 54
    path = _bad(tmp_path, d)
    one_line_exit_2(_run("--points", path), str(path), "$.input.views[2].obs.points_cam", "[x, y, z]")


def test_cli_view_with_fewer_than_3_points(doc, tmp_path):
    d, _ = doc
    v = d["input"]["views"][1]["obs"]
    v["points_cam"], v["ids"] = v["points_cam"][:2], [0, 1]
    path = _bad(tmp_path, d)
    one_line_exit_2(_run("--points", path), str(path), "view 1", "at least 3 points, got 2")


def test_cli_negative_depth(doc, tmp_path):
    d, _ = doc
    d["input"]["views"][3]["obs"]["points_cam"][4][2] = -0.5
    path = _bad(tmp_path, d)
    one_line_exit_2(_run("--points", path), str(path), "view 3", "point 4", "positive depth")


def test_cli_option_errors(doc, tmp_path):
    d, _ = doc
    path = _bad(tmp_path, d, "ok.json")
    one_line_exit_2(_run("--points", path, "--point-noise", "0.002,-1"), "point_noise", "A, B > 0")
    one_line_exit_2(_run("--points", path, "--hand", path), "points:", "expected no hand")
    one_line_exit_2(_run("--hand", path, "--eye", path, "--point-noise", "1,1"), "point_noise", "--points")
    one_line_exit_2(_run("--points", path, "--target", "chessboard:8x6:0.025"), "names the target")
    del d["target"]
    path = _bad(tmp_path, d, "no_target.json")
    one_line_exit_2(_run("--points", path), str(path), "view 0", "points_3d")


def test_common_scale_only_keeps_the_ratio_and_finds_the_level():
    """``estimate="scale"``: the levels started at 3x the truth with the true ratio come back to the truth within
    their reported sigma; ``"none"`` keeps them as given."""
    obs, truth = generate_point_recording("eye_to_hand", P, seed=21, n_views=10, noise=NOISE)
    views = hp.pack_points([P] * obs.n_views, obs.points_cam)
    start = (3 * NOISE[0], 3 * NOISE[1])
    fit = hp.points_ml(obs.T_base_ee, truth["X"], truth["Y"], "eye_to_hand", views, noise=start, estimate="scale")
    assert fit.noise[0] / fit.noise[1] == pytest.approx(NOISE[0] / NOISE[1], rel=1e-12)
    assert abs(fit.noise[0] - NOISE[0]) < 4 * fit.noise_std[0]
    held = hp.points_ml(obs.T_base_ee, truth["X"], truth["Y"], "eye_to_hand", views, noise=start)
    assert held.noise == start and held.estimate == "none"
    # the covariance scales with the variance: 9x at levels 3x the fitted ones
    np.testing.assert_allclose(held.cov, 9 * np.linalg.inv(hp.points_information(
        obs.T_base_ee, held.X, held.Y, "eye_to_hand", views, NOISE)), rtol=1e-9)
