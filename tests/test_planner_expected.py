"""The planner's expected information over the guesses' uncertainty (kinhec.planner.expected)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.models.cameras import get_camera, get_target, project_points, view_angles_deg
from kinhec.models.robots import get_robot
from kinhec.planner import PlanLimits, Scene, noise_model, plan_poses
from kinhec.planner.candidates import N_GUESS_PERTURBATIONS, perturbed_guesses, sample_candidates
from kinhec.planner.expected import expected_information, scene_information, scene_sigma_curve
from kinhec.planner.model import pose_information, sigma_curve
from kinhec.solvers import pair_model as pm
from kinhec.synth.trajectories import lookat, sample_hand_eye

NOISE = noise_model("pnp", "r1")


@pytest.fixture(scope="module")
def eih():
    """An eye-in-hand scene and flange poses around the board: 300 joint-space draws near a look-at trajectory (close
    views) and the planner's candidates that see the board in every perturbed scene of the default tolerance."""
    rng = np.random.default_rng([4, 30])
    rob, cam, tgt = get_robot("ur5e"), get_camera("hd"), get_target("checker_9x6_25mm")
    X = sample_hand_eye(rng, "eye_in_hand")
    traj, Y, _ = lookat(rob, X, "eye_in_hand", cam, tgt, rng, n_stations=10)
    sc = Scene(rob, "eye_in_hand", cam, tgt, X, Y)
    q = np.repeat(traj.knots_q_rad[:10], 30, axis=0)
    q = q + 0.03 * rng.standard_normal(q.shape)
    far = sample_candidates(sc, np.random.default_rng(6), PlanLimits(min_visible_fraction=1.0), n_views=200)
    assert len(far) > 0
    T_near = rob.fk(q)
    away = T_near[:5] @ se3.transform_from_rotation_translation(se3.so3_exp(np.array([np.pi, 0, 0])), np.zeros(3))
    return sc, np.concatenate([T_near, far.T_base_ee, away])  # the last 5: camera turned away from the board


def _seen_by_hand(sc: Scene, C: np.ndarray, lim: PlanLimits) -> np.ndarray:
    """The view test of the planner written out: every point in front, ``margin_px`` inside the image, the centre at
    0.1-5 m, the board facing the camera within the limit."""
    uv, depth = project_points(sc.camera, C, sc.target.points_m)
    m, w, h = lim.margin_px, sc.camera.width_px, sc.camera.height_px
    inside = (depth > 0) & (uv[..., 0] >= m) & (uv[..., 0] <= w - m) & (uv[..., 1] >= m) & (uv[..., 1] <= h - m)
    z = C[:, 2, 3]
    return inside.all(axis=-1) & (z >= 0.1) & (z <= 5.0) & (view_angles_deg(C) <= lim.max_view_angle_deg)


def _scenes_by_hand(sc: Scene, lim: PlanLimits) -> list:
    """The planner's perturbed scenes, each checked against their definition: X and Y each turned by exactly the
    tolerance's angle and moved by exactly its distance, in their own frames (the twist of inv(T) T')."""
    out = perturbed_guesses(sc, lim)
    assert len(out) == N_GUESS_PERTURBATIONS
    for pair in out:
        for T, Tp in zip((sc.X, sc.Y), pair):
            xi = se3.se3_log(se3.invert_transform(T) @ Tp)
            assert np.isclose(np.linalg.norm(xi[:3]), np.radians(lim.guess_tolerance_deg), rtol=1e-9, atol=1e-12)
            assert np.isclose(np.linalg.norm(xi[3:]), 1e-3 * lim.guess_tolerance_mm, rtol=1e-9, atol=1e-12)
    return out


def test_expected_information_is_the_plain_information_without_tolerance(eih):
    sc, T = eih
    T = T[_seen_by_hand(sc, sc.observed(T), PlanLimits())]  # candidates see the target at the guesses
    plain = pose_information(sc.observed(T), sc.X, sc.configuration, NOISE, sc.camera, sc.target)
    zero = PlanLimits(guess_tolerance_mm=0.0, guess_tolerance_deg=0.0)
    np.testing.assert_array_equal(expected_information(sc, T, NOISE, zero), plain)
    # a vanishing tolerance goes through the averaging over the scenes: the same to first order in the tolerance
    tiny = PlanLimits(guess_tolerance_mm=1e-6, guess_tolerance_deg=1e-7)
    E = expected_information(sc, T, NOISE, tiny)
    rel = np.abs(E - plain).max(axis=(1, 2)) / np.abs(plain).max(axis=(1, 2))
    assert T.shape[0] > 50 and rel.max() < 1e-6, rel.max()


def test_a_pose_that_loses_the_target_in_k_scenes_counts_its_information_where_it_sees_it(eih):
    sc, T = eih
    lim = PlanLimits()  # 50 mm, 10 deg
    scenes = _scenes_by_hand(sc, lim)
    S = len(scenes)
    C = np.stack([pm.predicted_camera_poses(T, Xs, Ys, sc.configuration) for Xs, Ys in scenes])  # (S, N, 4, 4)
    seen = np.stack([_seen_by_hand(sc, C[s], lim) for s in range(S)])  # (S, N)
    k = S - seen.sum(axis=0)  # scenes in which each pose loses the target
    E = expected_information(sc, T, NOISE, lim)
    # poses seeing the board in all scenes, in some, in none: each checked against the sum written out per scene
    picks = [int(np.flatnonzero(k == 0)[0]), *np.flatnonzero((k > 0) & (k < S))[:3].tolist(), int(np.flatnonzero(k == S)[0])]
    assert len(picks) == 5
    for i in picks:
        ref = np.zeros((12, 12))
        for s in np.flatnonzero(seen[:, i]):
            Xs = scenes[s][0]
            ref += pose_information(C[s, i][None], Xs, sc.configuration, NOISE, sc.camera, sc.target)[0]
        np.testing.assert_allclose(E[i], ref / S, rtol=1e-9, atol=1e-9 * np.abs(ref).max(initial=1.0))
    assert np.all(E[k == S] == 0.0)
    # the (S - k) / S rule: where the information barely changes between the scenes that see the target (a
    # tolerance of 1 mm, 1 deg), it is (S - k) / S times the information at the guesses
    small = PlanLimits(guess_tolerance_mm=1.0, guess_tolerance_deg=1.0, margin_px=60.0)
    scenes = _scenes_by_hand(sc, small)
    seen = np.stack([_seen_by_hand(sc, pm.predicted_camera_poses(T, Xs, Ys, "eye_in_hand"), small) for Xs, Ys in scenes])
    k = S - seen.sum(axis=0)
    part = np.flatnonzero((k > 0) & (k < S))
    assert part.size >= 3
    plain = pose_information(sc.observed(T[part]), sc.X, sc.configuration, NOISE, sc.camera, sc.target)
    E = expected_information(sc, T[part], NOISE, small)
    w = (S - k[part]) / S
    rel = np.abs(E - w[:, None, None] * plain).max(axis=(1, 2)) / np.abs(plain).max(axis=(1, 2))
    assert rel.max() < 0.1, rel


def test_candidates_keep_the_poses_that_see_the_target_in_the_fraction_of_the_scenes(eih):
    sc, _ = eih
    for frac in (1.0, 0.5):
        c = sample_candidates(sc, np.random.default_rng(5), PlanLimits(min_visible_fraction=frac), n_views=300)
        assert len(c) > 0 and c.visible_fraction.min() >= frac
        scenes = _scenes_by_hand(sc, PlanLimits())
        seen = np.stack([_seen_by_hand(sc, pm.predicted_camera_poses(c.T_base_ee, Xs, Ys, "eye_in_hand"), PlanLimits())
                         for Xs, Ys in scenes])  # fmt: skip
        np.testing.assert_array_equal(c.visible_fraction, seen.mean(axis=0))


def test_plans_under_a_tolerance_are_deterministic(eih):
    sc, _ = eih
    Xg, Yg = sc.X @ se3.se3_exp(np.array([0.1, 0, 0, 0.03, 0, 0])), sc.Y @ se3.se3_exp(np.array([0, 0.1, 0, 0, 0.03, 0]))
    a, b = (plan_poses("ur5e", "eye_in_hand", "hd", "checker_9x6_25mm", Xg, Yg, 6, seed=3, n_views=300)
            for _ in range(2))  # fmt: skip
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.sigma_mm, b.sigma_mm)
    # one or two poses leave X undetermined in every scene (the averaged information alone would not say so)
    assert np.isinf(a.sigma_mm[:2]).all() and np.isfinite(a.sigma_mm[-1])
    # the default: seen in at least three quarters of the scenes
    assert min(p["visible_fraction"] for p in a.details["poses"]) >= 0.75
    assert a.details["limits"]["min_visible_fraction"] == 0.75
    for frac in (0.5, 1.0):
        c = plan_poses("ur5e", "eye_in_hand", "hd", "checker_9x6_25mm", Xg, Yg, 6, seed=3, n_views=300,
                       min_visible_fraction=frac)  # fmt: skip
        fr = [p["visible_fraction"] for p in c.details["poses"]]
        assert min(fr) >= frac and c.details["limits"]["min_visible_fraction"] == frac
    assert dataclasses.asdict(PlanLimits())["min_visible_fraction"] == 0.75


def test_the_reported_error_is_the_median_over_the_scenes_of_the_bound_in_each(eih):
    sc, T = eih
    lim = PlanLimits(min_visible_fraction=0.5)
    T = T[290:305]  # close views, some seen in only part of the scenes, and far ones
    info_s = scene_information(sc, T, NOISE, lim)
    np.testing.assert_array_equal(info_s.mean(axis=0), expected_information(sc, T, NOISE, lim))
    F0 = 1e-2 * np.eye(12)
    got = scene_sigma_curve(info_s, F0)
    # the bound of kinhec.planner.model.sigma_curve, scene by scene, then the median
    ref = [sigma_curve(F, F0) for F in info_s]
    for k in ("trans_rms_mm", "rot_rms_deg"):
        want = np.median(np.stack([c[k] for c in ref]), axis=0)
        assert np.array_equal(np.isinf(got[k]), np.isinf(want))
        # two poses under the weak prior are ill-conditioned: the two computations part in the 7th digit there
        np.testing.assert_allclose(got[k][np.isfinite(want)], want[np.isfinite(want)], rtol=1e-5)
    # without the prior the first two poses leave X undetermined in every scene
    assert np.isinf(scene_sigma_curve(info_s)["trans_rms_mm"][:2]).all()


def test_cli_min_visible_fraction(tmp_path):
    from click.testing import CliRunner

    from kinhec.cli import main

    base = ["plan-poses", "--robot", "ur5e", "--setup", "eye_in_hand", "--camera", "hd", "--target", "checker_9x6_25mm",
            "--X-guess", "0,0.05,0.08,0,0,0,1", "--Y-guess", "0.45,0.1,0,0,0,0,1", "--n", "3",
            "--out", str(tmp_path / "p.csv")]  # fmt: skip
    r = CliRunner().invoke(main, base + ["--min-visible-fraction", "1.5"])
    assert r.exit_code == 2 and "min_visible_fraction: expected a number in [0.0, 1.0], got 1.5" in r.output, r.output
    r = CliRunner().invoke(main, base + ["--min-visible-fraction", "1"])
    assert r.exit_code == 0, r.output
    import json

    d = json.loads((tmp_path / "p.json").read_text())
    assert d["limits"]["min_visible_fraction"] == 1.0 and [p["visible_fraction"] for p in d["poses"]] == [1.0] * 3
    assert "never lose the target first" in r.output


def _spd(rng, scale):
    A = rng.standard_normal((12, 12))
    return scale * (A @ A.T + 12 * np.eye(12))


def _trace_x_t(F):
    """Mean squared translation error of X from the explicit inverse (the reference of the criterion)."""
    return float(np.trace(np.linalg.inv(F)[3:6, 3:6]))


def test_poses_are_chosen_by_the_expected_error_over_the_scenes_not_that_of_the_expected_information():
    from kinhec.planner.design import prior_information, select_poses

    rng = np.random.default_rng(11)
    F, G = _spd(rng, 1e4), _spd(rng, 1e4)
    F0 = prior_information()
    # two scenes; candidate 0 sees the target in scene 0 only, with twice the information, candidate 1 in both with
    # 0.9 times it, candidate 2 is a second view, seen in both
    info_s = np.zeros((2, 3, 12, 12))
    info_s[0, 0] = 2 * F
    info_s[:, 1] = 0.9 * F
    info_s[:, 2] = G
    # the expected information favours candidate 0 (2F / 2 = F > 0.9 F) ...
    E = info_s.mean(axis=0)
    assert _trace_x_t(F0 + E[0] + E[2]) < _trace_x_t(F0 + E[1] + E[2])
    assert sorted(select_poses(E, 2, F0)[0].tolist()) == [0, 2]
    # ... the expected error over the scenes the view that is never lost: scene 1 without candidate 0 has G alone
    mean_err = {c: np.mean([_trace_x_t(F0 + info_s[s, c] + G) for s in range(2)]) for c in (0, 1)}
    assert mean_err[1] < mean_err[0]
    chosen, greedy_f = select_poses(info_s, 2, F0)
    assert sorted(chosen.tolist()) == [1, 2]
    # the first greedy step's criterion is the mean over the scenes of each scene's error, by the explicit inverse
    first = [np.mean([_trace_x_t(F0 + info_s[s, c]) for s in range(2)]) for c in range(3)]
    assert greedy_f[0] == pytest.approx(min(first), rel=1e-9)


def test_one_scene_chooses_as_the_information_itself():
    from kinhec.planner.design import prior_information, select_poses

    rng = np.random.default_rng(12)
    info = np.stack([_spd(rng, 10.0 ** rng.uniform(2, 4)) for _ in range(15)])
    F0 = prior_information()
    a, fa = select_poses(info, 5, F0)
    b, fb = select_poses(info[None], 5, F0)
    np.testing.assert_array_equal(a, b)
    assert fa == fb
