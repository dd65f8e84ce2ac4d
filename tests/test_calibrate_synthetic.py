"""``kinhec.calibrate`` on data with a known truth: kinhec sequences exported as TUM, a 3-camera rig, and the
consistency of the reported standard deviations over many seeds."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec import io as kio
from kinhec import se3
from kinhec.calibrate import calibrate
from kinhec.export import export_sequence
from kinhec.generator import generate_sequence
from kinhec.recipe import Recipe

NOISE = dict(robot_noise_models=("se3_gaussian",), camera_noise_model="se3_gaussian", robot_rot_std_rad=2e-4,
             robot_trans_std_m=2e-4, camera_rot_std_rad=1e-3, camera_trans_std_m=1e-3, camera_trans_std_z_m=2e-3)


def exported(root, k, **kw):
    """A kinhec sequence written as a dataset and exported as TUM: (Sequence, hand file, eye file)."""
    recipe = dict(sequence_id=f"noise-{k:06d}", track="noise", level="test", seed=300 + k, robot="ur5e",
                  configuration="eye_in_hand", family="joint_sinusoid", camera="hd", sampling_mode="continuous",
                  duration_s=12.0, camera_rate_hz=30.0, **NOISE)  # fmt: skip
    recipe.update(kw)
    tables = generate_sequence(Recipe.from_dict(recipe))
    kio.write_index(root, kio.write_shard(root, "noise", k, [tables]))
    sid = recipe["sequence_id"]
    export_sequence(root, sid, "tum", root / "tum")
    seq = kio.load_sequence(root, sid)
    # kinhec's TUM export writes the moving body in the fixed frame: the camera in the target frame (eye-in-hand),
    # the marker in the camera frame (eye-to-hand); calibrate is told which (EYE_POSE)
    eye = "target_cam" if seq.configuration == "eye_in_hand" else "cam_marker"
    return seq, root / "tum" / f"{sid}_base_ee_meas.tum", root / "tum" / f"{sid}_{eye}_meas.tum"


#: ``eye_pose`` of the exported eye file, per configuration.
EYE_POSE = {"eye_in_hand": "target_T_cam", "eye_to_hand": "cam_T_target"}


def right_error(T_est, T_true):
    """Error of ``T_est`` in the parametrisation of the reported std: rotation in its frame, translation."""
    return np.concatenate([se3.so3_log(T_est[:3, :3].T @ T_true[:3, :3]), T_true[:3, 3] - T_est[:3, 3]])


def within_3_sigma(T_est, T_true, std, k=3.0):
    z = np.abs(right_error(T_est, T_true)) / std
    assert z.max() < k, z
    return z


@pytest.mark.parametrize("case", [
    dict(),
    dict(configuration="eye_to_hand"),
    dict(sync="async", time_offset_s=0.05, time_jitter_std_s=0.001, camera_drop_fraction=0.1),
    dict(configuration="eye_to_hand", sync="async", time_offset_s=-0.07),
])  # fmt: skip
def test_kinhec_sequence_exported_as_tum(tmp_path, case):
    seq, hand, eye = exported(tmp_path, 0, **case)
    res = calibrate(hand, eye, setup=seq.configuration, fmt="tum", eye_pose=EYE_POSE[seq.configuration])
    assert res.determined and not res.outliers
    within_3_sigma(res.X, seq.X, res.X_std)
    within_3_sigma(res.Y, seq.Y, res.Y_std)
    assert abs(res.time_offset_s - seq.time_offset) < 3 * res.time_offset_std_s + 1e-4  # jitter-free: ~1e-5 s
    # the same through the kinhec reader, and on the command line
    res2 = calibrate(dataset=tmp_path, sequence=seq.sequence_id)
    assert res2.setup == seq.configuration
    within_3_sigma(res2.X, seq.X, res2.X_std)
    if not case:
        from click.testing import CliRunner

        from kinhec.cli import main

        out = tmp_path / "r.json"
        r = CliRunner().invoke(main, ["calibrate", "--dataset", str(tmp_path), "--sequence", seq.sequence_id,
                                      "--json", str(out)])
        assert r.exit_code == 0, r.output
        r = CliRunner().invoke(main, ["calibrate", "--format", "kinhec", "--hand", str(tmp_path), "--eye",
                                      seq.sequence_id])
        assert r.exit_code == 0, r.output


def test_monocular_scale(tmp_path):
    seq, hand, eye = exported(tmp_path, 1, world_frame="vo_origin", scale=0.4)
    res = calibrate(hand, eye, setup="eye_in_hand", scale=True, eye_pose="target_T_cam")
    assert res.determined
    assert abs(res.scale - 0.4) < 3 * res.scale_std
    within_3_sigma(res.X, seq.X, res.X_std)
    without = calibrate(hand, eye, setup="eye_in_hand", eye_pose="target_T_cam")
    assert any("--scale" in w for w in without.warnings)


# --------------------------------------------------------------------------- #
# a 3-camera rig in the layout of a mocap rig folder (gt_poses/camNN_poses.txt)
# --------------------------------------------------------------------------- #
def _tum(path, t, T):
    q = se3.quaternion_from_matrix(T[:, :3, :3])
    rows = np.column_stack([t, T[:, :3, 3], q[:, 1:], q[:, :1]])
    path.write_text("".join(" ".join(repr(v) for v in r) + "\n" for r in rows.tolist()))


def rig(tmp_path, rng, n=80, cams=3):
    t = np.arange(n) / 10.0
    body = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.6, (n, 3))), rng.normal(0, 0.5, (n, 3)))
    X = {f"cam{k + 1:02d}": se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 1.0, 3)),
                                                                     rng.normal(0, 0.15, 3)) for k in range(cams)}
    Y = se3.transform_from_rotation_translation(se3.so3_exp([0.0, 0.0, 0.3]), [0.004, -0.03, -0.03])
    (tmp_path / "gt_poses").mkdir()
    for name, Xk in X.items():
        world_T_cam = se3.invert_transform(Y) @ body @ Xk  # camera-to-world in the mocap world
        # mocap-like noise: orientation error of the body, position error in the world
        world_T_cam[:, :3, :3] = world_T_cam[:, :3, :3] @ se3.so3_exp(rng.normal(0, 2e-3, (n, 3)))
        world_T_cam[:, :3, 3] += rng.normal(0, 2e-3, (n, 3))
        _tum(tmp_path / "gt_poses" / f"{name}_poses.txt", t, world_T_cam)
    _tum(tmp_path / "body.tum", t, body)
    return X


def test_three_camera_rig(tmp_path):
    X = rig(tmp_path, np.random.default_rng(3))
    res = calibrate(tmp_path / "body.tum", tmp_path, setup="rig", offset="none")
    assert res.rig is not None and res.rig.cameras == ["cam01", "cam02", "cam03"]
    assert res.inputs["eye_pose"] == "target_T_cam"  # set by the rig layout
    for name in X:
        within_3_sigma(res.rig.X[name], X[name], res.rig.X_std[name])
    for key, Z in res.rig.cam_T_cam.items():
        a, b = key.split("_T_")
        within_3_sigma(Z, se3.invert_transform(X[a]) @ X[b], res.rig.cam_T_cam_std[key])
    d = res.to_dict()
    assert set(d["rig"]["cam_T_cam"]) == {"cam01_T_cam02", "cam01_T_cam03", "cam02_T_cam03"}
    one = calibrate(tmp_path / "body.tum", f"{tmp_path}:cam02", offset="none")
    assert np.allclose(one.X, res.rig.per_camera["cam02"].X, atol=1e-9)  # the rig's own fit of that camera
    assert res.rig.joint is not None and res.rig.joint["world"] == "shared"  # one world: solved jointly


# --------------------------------------------------------------------------- #
# sigma consistency: normalised squared errors average to their dimension
# --------------------------------------------------------------------------- #
@pytest.mark.heavy
def test_reported_sigma_is_consistent(tmp_path):
    nees_x, nees_y, nees_cc = [], [], []
    for seed in range(40):
        rng = np.random.default_rng(1000 + seed)
        folder = tmp_path / f"r{seed}"
        folder.mkdir()
        X = rig(folder, rng, n=30, cams=2)
        res = calibrate(folder / "body.tum", folder, setup="rig", offset="none", solver="park_martin")
        c1 = res.rig.per_camera["cam01"]
        e = right_error(c1.X, X["cam01"])
        nees_x.append(e @ np.linalg.solve(c1.cov[:6, :6], e))
        Ytrue = se3.transform_from_rotation_translation(se3.so3_exp([0.0, 0.0, 0.3]), [0.004, -0.03, -0.03])
        e = right_error(c1.Y, Ytrue)
        nees_y.append(e @ np.linalg.solve(c1.cov[6:12, 6:12], e))
        z = right_error(res.rig.cam_T_cam["cam01_T_cam02"], se3.invert_transform(X["cam01"]) @ X["cam02"])
        nees_cc.append(np.sum((z / res.rig.cam_T_cam_std["cam01_T_cam02"]) ** 2))
    # expected 6 each (chi-square with 6 degrees of freedom: the mean of 40 lies within 6 +- 1.3 at 3 sigma)
    for v in (nees_x, nees_y, nees_cc):
        assert 4.5 < np.mean(v) < 7.7, np.mean(v)


@pytest.mark.heavy
def test_offset_and_scale_sigma_consistency(tmp_path):
    z_off, z_s = [], []
    for k in range(10):
        seq, hand, eye = exported(tmp_path / f"s{k}", 10 + k, world_frame="vo_origin", scale=0.7, sync="async",
                                  time_offset_s=0.03, duration_s=6.0)
        res = calibrate(hand, eye, scale=True, eye_pose="target_T_cam")
        z_off.append((res.time_offset_s - seq.time_offset) / res.time_offset_std_s)
        z_s.append((res.scale - 0.7) / res.scale_std)
    assert 0.3 < np.mean(np.square(z_off)) < 2.5, z_off
    assert 0.3 < np.mean(np.square(z_s)) < 2.5, z_s


def test_rig_without_a_body_stream_uses_the_first_camera(tmp_path):
    """Seed-002 layout alone (no body poses): camera->camera transforms from the cameras' world poses."""
    X = rig(tmp_path, np.random.default_rng(4))
    res = calibrate(None, tmp_path, setup="rig", offset="none")
    assert res.rig.cameras == ["cam01", "cam02", "cam03"]
    assert res.X_name == "T_cam01_cam02"
    for key, Z in res.rig.cam_T_cam.items():
        a, b = key.split("_T_")
        # 18 components: the largest of 18 |z| exceeds 3 in 5 % of draws of a consistent estimate, 3.5 in 0.8 %
        within_3_sigma(Z, se3.invert_transform(X[a]) @ X[b], res.rig.cam_T_cam_std[key], k=3.5)
    with pytest.raises(Exception, match="hand"):
        calibrate(None, f"{tmp_path}:cam01")
