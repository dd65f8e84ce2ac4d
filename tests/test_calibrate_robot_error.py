"""The robot's absolute accuracy as a consider covariance (kinhec.calibrate.robot_error).

A kinematic-model error of the robot moves X by what no residual shows; stated with ``robot_accuracy``, it is in
X's covariance.  Checked on generated recordings whose robot model carries DH errors, against the true X.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from kinhec.geometry import se3
from kinhec.calibrate import calibrate
from kinhec.calibrate import robot_error as re_
from kinhec.cli import main
from kinhec.util.errors import InputError
from kinhec.synth.generator import robot_accuracy, simulate

CHI2_6_999 = float(stats.chi2.ppf(0.999, 6))

DH = dict(sequence_id="robot_error-000000", track="robot_error", seed=12, robot="ur5e", configuration="eye_in_hand",
          family="lookat", sampling_mode="stations", n_stations=25, camera="hd",
          robot_noise_models=("dh_error", "se3_gaussian"), robot_rot_std_rad=2e-4, robot_trans_std_m=1e-4,
          dh_len_std_m=1e-3, dh_ang_std_rad=math.radians(0.1), sync="sync",
          camera_noise_model="se3_gaussian", camera_rot_std_rad=1e-3, camera_trans_std_m=3e-4)  # fmt: skip


def _right_error(T_est, T_true):
    return np.concatenate([se3.so3_log(T_est[:3, :3].T @ T_true[:3, :3]), T_true[:3, 3] - T_est[:3, 3]])


@pytest.fixture(scope="module", params=[("eye_in_hand", 12), ("eye_to_hand", 14)], ids=["eih", "eth"])
def dh_recording(request, tmp_path_factory):
    conf, seed = request.param
    g = simulate(dict(DH, configuration=conf, seed=seed))
    d = tmp_path_factory.mktemp(f"dh_{conf}")
    hand, eye = d / "hand.txt", d / "eye.txt"
    np.savetxt(hand, g.T_base_ee_meas.reshape(-1, 16), fmt="%.12g")
    np.savetxt(eye, g.T_cam_target_meas.reshape(-1, 16), fmt="%.12g")
    kw = dict(fmt="rwhe", setup=conf, eye_pose="cam_T_target")
    return g, (hand, eye), kw


def test_dh_error_is_outside_the_default_sigma_and_inside_the_stated_one(dh_recording):
    g, files, kw = dh_recording
    level = robot_accuracy(g)
    assert level[1] > 1.0  # the robot's model is millimetres off
    plain = calibrate(*files, **kw)
    stated = calibrate(*files, robot_accuracy=level, **kw)
    assert plain.determined and stated.determined
    e = _right_error(plain.X, g.X)
    nees_plain = float(e @ np.linalg.solve(plain.cov[:6, :6], e))
    assert nees_plain > CHI2_6_999  # no residual shows the kinematic error: the fit's sigma misses it
    # the estimate is the same; only its covariance counts the stated accuracy
    np.testing.assert_array_equal(stated.X, plain.X)
    e = _right_error(stated.X, g.X)
    nees_stated = float(e @ np.linalg.solve(stated.cov[:6, :6], e))
    assert nees_stated < CHI2_6_999
    assert np.all(stated.X_std >= plain.X_std) and np.all(stated.Y_std >= plain.Y_std)
    added = stated.observability["robot_accuracy"]
    assert added["rot_deg"] == pytest.approx(level[0]) and added["trans_mm"] == pytest.approx(level[1])
    # the verdict is about the motion, not about the robot's model
    assert stated.observability["determined"] == plain.observability["determined"]


def test_default_counts_nothing_and_says_so(dh_recording):
    g, files, kw = dh_recording
    plain = calibrate(*files, **kw)
    zero = calibrate(*files, robot_accuracy="0,0", **kw)
    np.testing.assert_array_equal(plain.cov, zero.cov)
    np.testing.assert_array_equal(plain.X_std, np.sqrt(np.maximum(np.diag(plain.cov[:6, :6]), 0.0)))
    assert plain.observability["robot_accuracy"] is None
    assert any("absolute accuracy" in n and "--robot-accuracy" in n for n in plain.notes)
    assert json.loads(json.dumps(plain.to_dict(), default=str))["observability"]["robot_accuracy"] is None


def test_sensitivity_is_the_derivative_of_a_constant_error():
    """``d(phi, d) / d(w, v)`` of ``T -> E(w, v) T`` at 0, against central differences."""
    rng = np.random.default_rng(3)
    T = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(size=3)), rng.normal(size=3))

    def params(x):
        E = se3.transform_from_rotation_translation(se3.so3_exp(x[:3]), x[3:])
        Tp = E @ T
        return np.concatenate([se3.so3_log(T[:3, :3].T @ Tp[:3, :3]), Tp[:3, 3] - T[:3, 3]])

    h = 1e-6
    J = np.column_stack([(params(h * np.eye(6)[k]) - params(-h * np.eye(6)[k])) / (2 * h) for k in range(6)])
    np.testing.assert_allclose(re_.sensitivity(T), J, atol=1e-8)
    C = re_.consider_cov(T, (0.1, 0.5))
    w = np.radians(0.1) ** 2 / 3
    np.testing.assert_allclose(np.trace(C[:3, :3]), 3 * w, rtol=1e-12)  # a rotation of R keeps its size


@pytest.mark.parametrize("bad", ["0.1", "a,b", "-1,2", "1,2,3", (0.1, float("nan"))])
def test_bad_levels_name_the_option(bad):
    with pytest.raises(InputError, match="robot_accuracy: expected two numbers"):
        re_.parse(bad)


def test_cli_reports_the_level_and_refuses_a_bad_one(dh_recording, tmp_path):
    g, (hand, eye), kw = dh_recording
    args = ["calibrate", "--hand", str(hand), "--eye", str(eye), "--format", "rwhe", "--setup", kw["setup"],
            "--eye-pose", "cam_T_target"]  # fmt: skip
    out = tmp_path / "r.json"
    r = CliRunner().invoke(main, args + ["--robot-accuracy", "0.2,2", "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "stated accuracy (0.2 deg, 2 mm RMS)" in r.output
    assert json.loads(out.read_text())["observability"]["robot_accuracy"]["trans_mm"] == 2.0
    r = CliRunner().invoke(main, args + ["--robot-accuracy", "0.2"])
    assert r.exit_code == 2 and "robot_accuracy: expected two numbers" in r.output


def test_a_rig_is_refused_with_a_level(tmp_path):
    with pytest.raises(InputError, match="robot_accuracy: counted for one camera"):
        calibrate(tmp_path / "hand.txt", [tmp_path / "a.txt", tmp_path / "b.txt"], setup="rig",
                  robot_accuracy=(0.1, 1.0))


def _pose(rng):
    T = np.eye(4)
    T[:3, :3] = se3.so3_exp(rng.normal(size=3))
    T[:3, 3] = rng.normal(scale=0.3, size=3)
    return T


def test_consider_cov_of_a_pure_translation_level_is_one_third_of_it_per_axis_in_metres():
    # 1 mm RMS over three axes: each axis carries (1e-3 m)^2 / 3; no rotation level, so no lever arm either.
    T = _pose(np.random.default_rng(3))
    C = re_.consider_cov(T, (0.0, 1.0))
    np.testing.assert_allclose(C[3:, 3:], np.eye(3) * 1e-6 / 3.0, rtol=1e-12, atol=0.0)
    np.testing.assert_allclose(C[:3, :], 0.0, atol=0.0)
    # 0.5 deg RMS: the rotation block is R^T (rad^2 / 3) R = (rad^2 / 3) I.
    C = re_.consider_cov(T, (0.5, 0.0))
    np.testing.assert_allclose(C[:3, :3], np.eye(3) * math.radians(0.5) ** 2 / 3.0, rtol=1e-12, atol=1e-20)


def test_apply_enlarges_the_full_covariance_and_the_standard_deviations_alike():
    from types import SimpleNamespace

    rng = np.random.default_rng(11)
    L = rng.normal(scale=1e-3, size=(12, 12))
    cov = L @ L.T
    res = SimpleNamespace(X=_pose(rng), Y=_pose(rng), cov=cov.copy(), X_std=np.sqrt(np.diag(cov)[:6]),
                          Y_std=np.sqrt(np.diag(cov)[6:12]), observability={}, notes=[])
    re_.apply(res, (0.05, 0.3))
    np.testing.assert_allclose(np.sqrt(np.diag(res.cov)[:6]), res.X_std, rtol=1e-12)
    np.testing.assert_allclose(np.sqrt(np.diag(res.cov)[6:12]), res.Y_std, rtol=1e-12)
    # and both blocks grew by exactly the consider covariance of their own transform
    np.testing.assert_allclose(res.cov[:6, :6] - cov[:6, :6], re_.consider_cov(res.X, (0.05, 0.3)), atol=1e-18)
    np.testing.assert_allclose(res.cov[6:12, 6:12] - cov[6:12, 6:12], re_.consider_cov(res.Y, (0.05, 0.3)),
                               atol=1e-18)
    np.testing.assert_array_equal(res.cov[:6, 6:12], cov[:6, 6:12])
