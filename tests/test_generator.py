"""The generator end to end: recipes, exact ground truth, injected noise statistics, packing.

Checks run on what is stored (the Arrow tables, quaternions and all) wherever
that is what a user of the dataset sees.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

import kinhec
from kinhec.geometry import se3
from kinhec.util.errors import InputError, UnknownNameError
from kinhec.synth.generator import INDEX_COLUMNS_FILLED_BY_WRITER, generate_sequence, simulate
from kinhec.util.jsonutil import dumps, loads
from kinhec.synth.recipe_json import recipe_from_json
from kinhec.synth.recipe import Recipe
from kinhec.models.robots import ROBOT_NAMES, RobotModel, get_robot
from kinhec.io.schema import CAMERA_SCHEMA, INDEX_SCHEMA, ROBOT_SCHEMA, pose_columns

ARMS = [n for n in ROBOT_NAMES if n != "free6d"]


def _poses(table: pa.Table, prefix: str) -> np.ndarray:
    cols = [table.column(c).to_numpy() for c in pose_columns(prefix)]
    p = np.stack(cols[:3], axis=-1)
    q = np.stack(cols[3:], axis=-1)
    out = np.full((table.num_rows, 4, 4), np.nan)
    ok = np.isfinite(q).all(axis=1)
    out[ok] = se3.transform_from_pq(p[ok], q[ok])
    return out


def _row_pose(row: dict, prefix: str) -> np.ndarray:
    v = [row[c] for c in pose_columns(prefix)]
    return se3.transform_from_pq(v[:3], v[3:])


def _same_table(a: pa.Table, b: pa.Table) -> bool:
    """Column-wise equality with NaN == NaN (Arrow's ``equals`` treats NaN as unequal)."""
    if not a.schema.equals(b.schema) or a.num_rows != b.num_rows:
        return False
    for name in a.schema.names:
        x, y = a.column(name), b.column(name)
        if pa.types.is_floating(x.type):
            if not np.array_equal(x.to_numpy(), y.to_numpy(), equal_nan=True):
                return False
        elif not x.equals(y):
            return False
    return True


def _B(T_cam_target, configuration):
    return se3.invert_transform(T_cam_target) if configuration == "eye_in_hand" else T_cam_target


def _true_model(st) -> RobotModel:
    extra = loads(st.index_row["extra_json"])
    nominal = get_robot(st.index_row["robot"])
    if "true_dh" in extra:  # as the published validator builds it: the perturbed DH table over the nominal model
        return RobotModel.from_dict({**nominal.to_published_dict(), **extra["true_dh"]})
    return nominal


def _check_ground_truth(st):
    """A_i X = Y B_i on every camera frame, and FK of the true joints = true flange poses, from the tables."""
    row = st.index_row
    X, Y = _row_pose(row, "X"), _row_pose(row, "Y")
    A = _poses(st.camera, "base_ee_gt")
    B = _B(_poses(st.camera, "cam_target_gt"), row["configuration"])
    rot, trans = se3.pose_error(A @ X, Y @ B)
    assert rot.max() < 1e-7 and trans.max() < 1e-6
    if row["robot"] != "free6d":
        model = _true_model(st)
        q = np.asarray(st.robot.column("q_gt").to_pylist())
        rot, trans = se3.pose_error(model.fk(q), _poses(st.robot, "base_ee_gt"))
        assert rot.max() < 1e-9 and trans.max() < 1e-9
    for table in (st.robot, st.camera):
        for name in table.schema.names:
            if name.endswith("_qw"):
                qw = table.column(name).to_numpy()
                assert np.all(qw[np.isfinite(qw)] >= 0)


# --------------------------------------------------------------------------- #
# recipes
# --------------------------------------------------------------------------- #
def test_recipe_defaults_and_json_round_trip():
    r = Recipe(sequence_id="noise-000003", track="noise", seed=123, configuration="eye_to_hand",
               robot_noise_models=("joint_gaussian", "se3_gaussian"), student_t_dof=3)  # fmt: skip
    assert r.target == "marker_3x3_30mm" and Recipe().target == "checker_9x6_25mm"
    assert r.robot_noise_models == ("se3_gaussian", "joint_gaussian")  # canonical order
    assert r.robot_noise_models_str == "se3_gaussian+joint_gaussian"
    assert r.generator_version == kinhec.__version__
    back = Recipe.from_dict(loads(dumps(r.to_dict())))
    assert back == r
    assert math.isnan(back.pixel_std)  # NaN -> null -> NaN
    assert Recipe.from_dict({"robot_noise_models": "dh_error+joint_gaussian", "robot": "ur5"}).robot_noise_models == (
        "joint_gaussian",
        "dh_error",
    )
    assert Recipe.from_dict({"robot_noise_models": "none"}).robot_noise_models == ()


@pytest.mark.parametrize(
    "kw, err, msg",
    [
        (dict(robot="ur6"), UnknownNameError, "unknown robot 'ur6'"),
        (dict(family="spiral"), UnknownNameError, "unknown family 'spiral'"),
        (dict(camera_noise_model="lidar"), UnknownNameError, "unknown camera_noise_model 'lidar'"),
        (dict(robot_noise_models=("se3_gaussian", "wobble")), UnknownNameError, "unknown robot_noise_models 'wobble'"),
        (dict(track="speed"), UnknownNameError, "unknown track 'speed'"),
        (dict(duration_s=0.0), InputError, r"duration_s: expected a number in \(0"),
        (dict(camera_drop_fraction=1.0, sync="async"), InputError, "camera_drop_fraction: expected a number in"),
        (dict(n_stations=1), InputError, r"n_stations: expected an integer in \[2"),
        (dict(seed=-1), InputError, "seed: expected an integer"),
        (dict(robot="free6d", family="joint_sinusoid"), InputError, "family: expected one of lookat"),
        (dict(robot="ur5e", family="cartesian_cone"), InputError, "reserved for 'free6d'"),
        (dict(robot="free6d", family="lookat", robot_noise_models=("joint_gaussian",)), InputError,
         "robot_noise_models: expected only 'se3_gaussian'"),
        (dict(family="joint_waypoints", sampling_mode="stations", sync="async"), InputError,
         "sync: expected 'synchronous' with sampling_mode"),
        (dict(family="joint_sinusoid", sampling_mode="stations"), InputError,
         "sampling_mode: expected 'continuous' for family 'joint_sinusoid'"),
        (dict(time_offset_s=0.1), InputError, "time_offset_s: expected 0 for a synchronous sequence"),
        (dict(world_frame="vo_origin", configuration="eye_to_hand"), InputError,
         "configuration: expected 'eye_in_hand'"),
        (dict(scale=2.0), InputError, "scale: expected 1 and scale_drift_std 0 unless world_frame"),
        (dict(camera_noise_model="pnp"), InputError, "pixel_std: expected a number >= 0"),
        (dict(camera_noise_model="pnp", pixel_std=0.5, student_t_dof=3.0), InputError, "student_t_dof: expected None"),
        (dict(outlier_fraction=0.1), InputError, "outlier_fraction: expected 0 with outlier_model 'none'"),
        (dict(outlier_model="gross"), InputError, "outlier_model: expected 'none' with outlier_fraction 0"),
        (dict(rot_angle_range_deg=(15.0, 8.0)), InputError, "rot_angle_range_deg: expected low <= high"),
    ],
)
def test_recipe_validation(kw, err, msg):
    with pytest.raises(err, match=msg):
        Recipe(**kw)


def test_recipe_from_dict_refuses_unknown_fields():
    with pytest.raises(UnknownNameError, match="unknown recipe field 'speed'"):
        Recipe.from_dict({"speed": 1.0})
    with pytest.raises(InputError, match="recipe: expected a Recipe or a dict"):
        generate_sequence(42)


# --------------------------------------------------------------------------- #
# exact ground truth on every family x configuration x robot
# --------------------------------------------------------------------------- #
def _families(robot):
    if robot == "free6d":
        return [
            dict(family="lookat", sampling_mode="stations", n_stations=6),
            dict(family="cartesian_cone", sampling_mode="stations", n_waypoints=6, cone_half_angle_deg=20.0),
            dict(family="proposal_sine", duration_s=2.0, camera_rate_hz=15.0),
        ]
    return [
        dict(family="joint_sinusoid", duration_s=2.0, camera_rate_hz=15.0),
        dict(family="joint_waypoints", sampling_mode="stations", n_stations=6),
        dict(family="lookat", sampling_mode="stations", n_stations=6),
    ]


@pytest.mark.parametrize("robot", ROBOT_NAMES)
@pytest.mark.parametrize("configuration", ["eye_in_hand", "eye_to_hand"])
def test_ground_truth_identity_every_family(robot, configuration):
    for i, fam in enumerate(_families(robot)):
        r = Recipe(seed=1000 + i, robot=robot, configuration=configuration, robot_rot_std_rad=1e-3,
                   robot_trans_std_m=1e-3, camera_rot_std_rad=1e-3, camera_trans_std_m=1e-3,
                   camera_trans_std_z_m=3e-3, **fam)  # fmt: skip
        st = generate_sequence(r)
        _check_ground_truth(st)
        if fam["family"] == "lookat":
            assert st.camera.column("visible").to_numpy(zero_copy_only=False).all()
        # the camera stream carries the true flange pose of the robot stream (shared clock)
        assert np.allclose(_poses(st.camera, "base_ee_gt"), _poses(st.robot, "base_ee_gt"), atol=1e-15)


def test_ground_truth_async_monocular_and_dh_error():
    cases = [
        dict(robot="ur10e", family="joint_sinusoid", sync="async", duration_s=3.0, time_offset_s=0.05,
             time_jitter_std_s=0.002, camera_drop_fraction=0.1, n_harmonics=3, speed_fraction=0.35),
        dict(robot="panda", family="joint_waypoints", sync="async", duration_s=4.0, n_stations=4, time_offset_s=-0.02),
        dict(robot="free6d", family="proposal_sine", world_frame="vo_origin", scale=2.0, scale_drift_std=0.002,
             duration_s=3.0, camera_noise_model="vo_drift", vo_drift_rot_std_rad=1e-3, vo_drift_trans_std_m=2e-3),
        dict(robot="puma560", family="joint_waypoints", sampling_mode="stations", n_stations=10,
             robot_noise_models=("dh_error", "joint_gaussian"), dh_len_std_m=1e-3, dh_ang_std_rad=1e-3,
             dh_joint_std_rad=1e-4, joint_std_rad=1e-3),
        dict(robot="iiwa7", family="lookat", sampling_mode="continuous", sync="async", duration_s=5.0, n_stations=4,
             camera_noise_model="pnp", pixel_std=0.5),
    ]  # fmt: skip
    for i, c in enumerate(cases):
        st = generate_sequence(Recipe(seed=77 + i, **c))
        _check_ground_truth(st)


def test_async_streams_and_oracle_pose():
    r = Recipe(seed=5, robot="irb120", family="joint_sinusoid", sync="async", duration_s=4.0, camera_rate_hz=30.0,
               time_offset_s=0.033, time_jitter_std_s=0.002)  # fmt: skip
    g = simulate(r)
    st = generate_sequence(r)
    row = st.index_row
    assert row["robot_rate_hz"] == 250.0 and row["camera_rate_hz"] == 30.0
    assert row["n_robot_frames"] == 1001 and row["n_camera_frames"] == 120
    t_r = st.robot.column("t").to_numpy()
    assert np.allclose(np.diff(t_r), 1 / 250)
    # the flange pose stored at a camera frame is the trajectory at its true instant t_gt
    t_gt = st.camera.column("t_gt").to_numpy()
    T = g.trajectory.flange_poses(t_gt, g.true_robot)
    rot, trans = se3.pose_error(_poses(st.camera, "base_ee_gt"), T)
    assert rot.max() < 1e-9 and trans.max() < 1e-9
    # and it lies between the robot-stream poses around t_gt (the streams describe one motion)
    T_interp = se3.interpolate_poses(t_r, _poses(st.robot, "base_ee_gt"), t_gt)
    _, trans = se3.pose_error(T_interp, T)
    assert trans.max() < 0.5  # [mm] at 250 Hz


def test_robot_table_capped_rate_and_free6d_lists():
    st = generate_sequence(Recipe(seed=3, robot="panda", family="joint_sinusoid", sync="async", duration_s=2.0))
    assert st.index_row["robot_rate_hz"] == 500.0  # 1 kHz controller capped
    assert st.robot.num_rows == 1001
    q = st.robot.column("q_gt").to_pylist()
    assert all(len(v) == 7 for v in q)
    st = generate_sequence(Recipe(seed=3, robot="free6d", family="proposal_sine", duration_s=2.0))
    assert st.index_row["dof"] == 0
    assert all(v == [] for v in st.robot.column("q_gt").to_pylist())
    assert all(v == [] for v in st.robot.column("q_meas").to_pylist())


# --------------------------------------------------------------------------- #
# packing and index
# --------------------------------------------------------------------------- #
def test_tables_and_index_row_follow_the_schema():
    r = Recipe(sequence_id="pnp-000007", track="pnp", level="pixel_std=1", seed=9, robot="ur5e", family="lookat",
               sampling_mode="stations", n_stations=8, camera="vga", target="checker_7x5_20mm",
               camera_noise_model="pnp", pixel_std=1.0, robot_rot_std_rad=2e-4, robot_trans_std_m=1e-4)  # fmt: skip
    st = generate_sequence(r)
    assert st.robot.schema.equals(ROBOT_SCHEMA) and st.camera.schema.equals(CAMERA_SCHEMA)
    row = st.index_row
    expected = [n for n in INDEX_SCHEMA.names if n not in INDEX_COLUMNS_FILLED_BY_WRITER]
    assert list(row) == expected
    schema = pa.schema([INDEX_SCHEMA.field(n) for n in expected])
    table = pa.Table.from_pylist([row], schema=schema)  # types are compatible
    assert table.num_rows == 1
    assert row["generator_version"] == kinhec.__version__ and row["dof"] == 6
    assert row["sequence_id"] == "pnp-000007" and set(st.robot.column("sequence_id").to_pylist()) == {"pnp-000007"}
    assert st.robot.column("frame").to_pylist() == list(range(8))
    # station sequence: no rates, duration of the move-and-dwell path
    assert math.isnan(row["robot_rate_hz"]) and math.isnan(row["camera_rate_hz"])
    assert row["duration_s"] > 0 and row["n_camera_frames"] == row["n_robot_frames"] == 8
    # noise columns: active models carry their values, inactive ones 0 (robot) or NaN (camera)
    assert row["robot_rot_std_rad"] == 2e-4 and row["joint_std_rad"] == 0.0 and row["dh_len_std_m"] == 0.0
    assert math.isnan(row["camera_rot_std_rad"]) and row["pixel_std"] == 1.0 and math.isnan(row["student_t_dof"])
    assert row["robot_noise_models"] == "se3_gaussian"
    # config_json is the published nested recipe; the whole recipe is in extra_json["recipe"]
    config, extra = loads(row["config_json"]), loads(row["extra_json"])
    assert recipe_from_json(config, extra) == r
    assert config["sampling"]["sync"] == "synchronous" and config["camera_noise"]["pixel_std"] == 1.0
    assert extra["camera_K"] == [[525.0, 0.0, 320.0], [0.0, 525.0, 240.0], [0.0, 0.0, 1.0]]
    assert extra["camera_intrinsics"]["fx"] == 525.0 and extra["camera_intrinsics"]["width"] == 640
    assert extra["target"]["cols"] == 7 and extra["trajectory_params"]["family"] == "lookat"
    assert "true_dh" not in extra and "scale_per_frame" not in extra
    # descriptors come from the keyframes stored in extra_json
    assert row["n_motions"] == len(extra["keyframe_indices"]) - 1


def test_same_recipe_same_arrays_different_seed_different_draws():
    kw = dict(robot="panda", family="joint_sinusoid", duration_s=2.0, robot_rot_std_rad=1e-3, robot_trans_std_m=1e-3,
              camera_rot_std_rad=1e-3, camera_trans_std_m=1e-3, camera_trans_std_z_m=1e-3)  # fmt: skip
    a = generate_sequence(Recipe(seed=11, **kw))
    b = generate_sequence(Recipe(seed=11, **kw))
    c = generate_sequence(Recipe(seed=12, **kw))
    assert _same_table(a.robot, b.robot) and _same_table(a.camera, b.camera)
    assert {k: v for k, v in a.index_row.items() if not (isinstance(v, float) and math.isnan(v))} == {
        k: v for k, v in b.index_row.items() if not (isinstance(v, float) and math.isnan(v))
    }
    assert not np.allclose(_row_pose(a.index_row, "X"), _row_pose(c.index_row, "X"))
    assert not a.robot.column("base_ee_gt_px").equals(c.robot.column("base_ee_gt_px"))
    # a different noise level leaves the motion untouched (separate random streams per step)
    d = generate_sequence(Recipe(seed=11, **{**kw, "camera_rot_std_rad": 5e-3}))
    assert _same_table(d.robot, a.robot)
    assert d.camera.column("cam_target_gt_px").equals(a.camera.column("cam_target_gt_px"))
    assert not d.camera.column("cam_target_meas_qx").equals(a.camera.column("cam_target_meas_qx"))


# --------------------------------------------------------------------------- #
# injected noise has the nominal statistics
# --------------------------------------------------------------------------- #
def _long(**kw):
    base = dict(robot="ur5e", family="joint_sinusoid", duration_s=100.0, camera_rate_hz=30.0)  # 3000 frames
    base.update(kw)
    return simulate(Recipe(**base))


def test_robot_flange_twist_noise_statistics():
    g = _long(seed=21, robot_rot_std_rad=0.002, robot_trans_std_m=0.001)
    xi = se3.se3_log(se3.invert_transform(g.T_base_ee_gt) @ g.T_base_ee_meas)
    std = xi.std(axis=0)
    assert np.allclose(std[:3], 0.002, rtol=0.05) and np.allclose(std[3:], 0.001, rtol=0.05)
    assert np.abs(xi.mean(axis=0) / std).max() < 0.1
    assert np.array_equal(g.q_meas_rad, g.q_gt_rad)


def test_camera_anisotropic_noise_statistics():
    g = _long(seed=22, camera_rot_std_rad=0.005, camera_trans_std_m=0.003, camera_trans_std_z_m=0.01)
    Tg, Tm = g.T_cam_target_gt, g.T_cam_target_meas
    dp = Tm[:, :3, 3] - Tg[:, :3, 3]  # camera-frame translation error
    assert np.allclose(dp.std(axis=0), [0.003, 0.003, 0.01], rtol=0.05)
    assert dp[:, 2].std() / dp[:, :2].std() == pytest.approx(10 / 3, rel=0.08)  # depth vs lateral
    w = se3.so3_log(np.swapaxes(Tg[:, :3, :3], 1, 2) @ Tm[:, :3, :3])  # target-frame rotation error
    assert np.allclose(w.std(axis=0), 0.005, rtol=0.05)


def test_student_t_tails_are_heavier():
    gauss = _long(seed=23, camera_trans_std_m=0.003, camera_trans_std_z_m=0.003)
    heavy = _long(seed=23, camera_trans_std_m=0.003, camera_trans_std_z_m=0.003, student_t_dof=3.0)
    eg = (gauss.T_cam_target_meas - gauss.T_cam_target_gt)[:, :3, 3].ravel() / 0.003
    et = (heavy.T_cam_target_meas - heavy.T_cam_target_gt)[:, :3, 3].ravel() / 0.003
    # scale sigma: median |e| = sigma * t3.ppf(0.75) = 0.7649 sigma (0.6745 sigma for the Gaussian)
    assert np.median(np.abs(eg)) == pytest.approx(0.6745, rel=0.05)
    assert np.median(np.abs(et)) == pytest.approx(0.7649, rel=0.05)
    assert (np.abs(et) > 5).mean() > 0.005 and (np.abs(eg) > 5).mean() == 0.0
    # the robot stream stays Gaussian unless asked
    assert np.array_equal(heavy.T_base_ee_meas, heavy.T_base_ee_gt)


def test_joint_encoder_noise_and_dh_error():
    g = simulate(Recipe(seed=24, robot="iiwa14", family="joint_waypoints", sampling_mode="stations", n_stations=400,
                        dwell_range_s=(0.0, 0.0), robot_noise_models=("joint_gaussian",), joint_std_rad=1e-3))  # fmt: skip
    dq = g.q_meas_rad - g.q_gt_rad
    assert np.allclose(dq.std(axis=0), 1e-3, rtol=0.12)  # 400 samples per joint
    nominal = get_robot("iiwa14")
    assert np.allclose(g.T_base_ee_meas, nominal.fk(g.q_meas_rad))
    assert np.allclose(g.T_base_ee_gt, nominal.fk(g.q_gt_rad))

    st = generate_sequence(Recipe(seed=25, robot="ur10e", family="joint_waypoints", sampling_mode="stations",
                                  n_stations=30, robot_noise_models=("dh_error",), dh_len_std_m=1e-3,
                                  dh_ang_std_rad=1e-3, dh_joint_std_rad=1e-4))  # fmt: skip
    true = _true_model(st)
    nominal = get_robot("ur10e")
    assert np.abs(true.a_m - nominal.a_m).max() > 0 and np.abs(true.alpha_rad - nominal.alpha_rad).max() > 0
    q = np.asarray(st.robot.column("q_gt").to_pylist())
    assert np.array_equal(q, np.asarray(st.robot.column("q_meas").to_pylist()))  # encoders are exact here
    # reported poses come from the nominal model: a smooth, systematic, pose-dependent error
    rot, trans = se3.pose_error(_poses(st.robot, "base_ee_meas"), nominal.fk(q))
    assert rot.max() < 1e-9 and trans.max() < 1e-9
    _, err_mm = se3.pose_error(_poses(st.robot, "base_ee_meas"), _poses(st.robot, "base_ee_gt"))
    assert 0.1 < np.median(err_mm) < 20 and err_mm.std() > 0.05


def test_pnp_measurements_only_where_visible():
    g = simulate(Recipe(seed=26, robot="ur5e", family="joint_sinusoid", duration_s=10, camera_noise_model="pnp",
                        pixel_std=0.5))  # fmt: skip
    has = np.isfinite(g.T_cam_target_meas).all(axis=(1, 2))
    assert np.array_equal(has, g.visible) and 0 < g.visible.sum() < g.visible.size
    assert np.all(np.isfinite(g.reproj_rmse_px[has])) and np.all(np.isnan(g.reproj_rmse_px[~has]))
    # per-point 2-D residual RMSE: sigma sqrt(2 (1 - 6 / (2 P))) with 54 points and 6 fitted parameters
    assert np.median(g.reproj_rmse_px[has]) == pytest.approx(0.5 * math.sqrt(2 * (1 - 6 / 108)), rel=0.05)
    dp = (g.T_cam_target_meas - g.T_cam_target_gt)[has, :3, 3]
    assert dp[:, 2].std() > 2 * dp[:, :2].std()  # depth dominated
    # descriptors use the frames with a measurement only
    assert set(g.keyframes.tolist()) <= set(np.flatnonzero(has).tolist())


def test_vo_drift_random_walk_and_no_board():
    g = _long(seed=27, robot="free6d", family="proposal_sine", world_frame="vo_origin", camera_noise_model="vo_drift",
              vo_drift_rot_std_rad=1e-3, vo_drift_trans_std_m=1e-3)  # fmt: skip
    assert np.allclose(g.T_cam_target_gt[0], np.eye(4), atol=1e-12)  # Y is the first camera pose
    assert np.allclose(g.T_cam_target_meas[0], g.T_cam_target_gt[0], atol=1e-12)
    rot, _ = se3.pose_error(g.T_cam_target_meas, g.T_cam_target_gt)
    assert rot[-500:].mean() > 3 * rot[:500].mean()  # the error accumulates
    assert g.visible.all() and np.all(g.n_points == 0)
    assert np.isnan(g.depth_m).all() and np.isnan(g.view_angle_deg).all()


def test_monocular_scale_applies_to_translations_only():
    g = _long(seed=28, world_frame="vo_origin", scale=2.5, scale_drift_std=0.002)
    Tg, Tm = g.T_cam_target_gt, g.T_cam_target_meas
    assert np.allclose(Tm[:, :3, :3], Tg[:, :3, :3], atol=1e-15)
    s = g.scale_per_frame
    assert s[0] == 2.5 and np.std(np.diff(np.log(s))) == pytest.approx(0.002, rel=0.05)
    assert np.allclose(Tm[:, :3, 3], s[:, None] * Tg[:, :3, 3], rtol=1e-12, atol=1e-15)
    st = generate_sequence(Recipe(seed=28, world_frame="vo_origin", scale=0.5, duration_s=2.0))
    spf = loads(st.index_row["extra_json"])["scale_per_frame"]  # constant: the scale column on every frame
    assert spf == [st.index_row["scale"]] * st.index_row["n_camera_frames"]
    assert st.index_row["scale"] == 0.5
    Tg, Tm = _poses(st.camera, "cam_target_gt"), _poses(st.camera, "cam_target_meas")
    assert np.allclose(Tm[:, :3, 3], 0.5 * Tg[:, :3, 3], atol=1e-12)


@pytest.mark.parametrize("model", ["random_pose", "planar_flip", "gross"])
def test_outliers_fraction_and_labels(model):
    g = simulate(Recipe(seed=29, robot="ur5e", family="joint_waypoints", sampling_mode="stations", n_stations=200,
                        dwell_range_s=(0.0, 0.0), camera_rot_std_rad=1e-3, camera_trans_std_m=1e-3,
                        camera_trans_std_z_m=1e-3,
                        outlier_fraction=0.2, outlier_model=model))  # fmt: skip
    assert g.outlier.sum() == 40
    rot, trans = se3.pose_error(g.T_cam_target_meas, g.T_cam_target_gt)
    # inliers carry the nominal noise; outliers are far off (a flip of a near-frontal view can be small)
    assert rot[~g.outlier].max() < 1.0 and trans[~g.outlier].max() < 10.0
    far = (rot > 2.0) | (trans > 20.0)
    assert far[g.outlier].mean() > (0.7 if model == "planar_flip" else 0.95)
    assert not far[~g.outlier].any()


def test_planar_flip_outliers_are_flips_of_the_noisy_measurement():
    """As in the published copy, a flip is the other PnP solution of the *noisy* view: the flipped frames keep the
    camera's translation noise, and their rotation sits near (not at) the flip of the true pose."""
    from kinhec.models.noise import planar_flip

    trans_std = 2e-3
    g = simulate(Recipe(seed=31, robot="ur5e", family="lookat", sampling_mode="stations", n_stations=400,
                        dwell_range_s=(0.0, 0.0), camera_rot_std_rad=1e-3, camera_trans_std_m=trans_std,
                        camera_trans_std_z_m=trans_std,
                        outlier_fraction=0.25, outlier_model="planar_flip"))  # fmt: skip
    o = g.outlier & np.isfinite(g.T_cam_target_meas).all(axis=(1, 2))
    assert o.sum() == 100
    d = g.T_cam_target_meas[o, :3, 3] - g.T_cam_target_gt[o, :3, 3]
    # the position is the measured one: per-axis std of the translation error near the nominal 2 mm
    assert 0.8 * trans_std < d.std(axis=0).mean() < 1.25 * trans_std
    rot, _ = se3.pose_error(g.T_cam_target_meas[o], planar_flip(g.T_cam_target_gt[o]))
    assert 0.01 < np.median(rot) < 1.0  # noise carried through the mirroring, not an exact flip of the truth


def test_planar_flip_needs_a_plane():
    """A visual-odometry origin has no plane: the planar-ambiguity flip is refused there."""
    with pytest.raises(InputError, match="outlier_model.*planar_flip"):
        Recipe(seed=32, robot="ur5", family="joint_waypoints", sampling_mode="stations", n_stations=40,
               world_frame="vo_origin", outlier_fraction=0.3, outlier_model="planar_flip")  # fmt: skip


def test_monocular_outliers_carry_the_scale():
    """With scale 10 a gross outlier is the scaled reference plus a gross error, not an unscaled pose."""
    g = simulate(Recipe(seed=33, robot="ur5e", family="joint_sinusoid", duration_s=10.0, world_frame="vo_origin",
                        scale=10.0, outlier_fraction=0.2, outlier_model="gross"))  # fmt: skip
    assert g.outlier.sum() == round(0.2 * g.outlier.size)
    d_out = np.linalg.norm(g.T_cam_target_meas[g.outlier, :3, 3], axis=1)
    d_ref = 10.0 * np.linalg.norm(g.T_cam_target_gt[g.outlier, :3, 3], axis=1)
    d_metric = np.linalg.norm(g.T_cam_target_gt[g.outlier, :3, 3], axis=1)
    # gross errors are 0.1 m per axis: close to the scaled distance, far from the metric one
    assert np.median(np.abs(d_out - d_ref)) < 0.35 < np.median(np.abs(d_out - d_metric))


def test_visibility_flags_match_the_camera_model():
    from kinhec.models.cameras import get_camera, get_target, visibility

    st = generate_sequence(Recipe(seed=30, robot="ur5e", family="joint_sinusoid", duration_s=4.0))
    vis = visibility(get_camera("hd"), get_target("checker_9x6_25mm"), _poses(st.camera, "cam_target_gt"))
    assert np.array_equal(st.camera.column("visible").to_numpy(zero_copy_only=False), vis.visible)
    assert np.array_equal(st.camera.column("n_points").to_numpy(), vis.n_points)
    assert st.index_row["n_visible_frames"] == int(vis.visible.sum())


def test_cone_half_angle_sets_the_measured_axis_scatter():
    lam = {}
    for half in (0.0, 10.0, 90.0):
        rows = [
            generate_sequence(Recipe(seed=40 + s, robot="free6d", family="cartesian_cone", sampling_mode="stations",
                                     n_waypoints=20, cone_half_angle_deg=half, rot_angle_range_deg=(8.0, 15.0),
                                     robot_rot_std_rad=5e-4, robot_trans_std_m=3e-4)).index_row  # fmt: skip
            for s in range(3)
        ]
        lam[half] = [r["axis_scatter_lambda2"] for r in rows]
        for r in rows:
            assert 8.0 <= r["mean_rot_angle_deg"] <= 15.0 and r["n_motions"] == 19
    assert max(lam[0.0]) < 1e-10
    assert max(lam[0.0]) < min(lam[10.0]) and max(lam[10.0]) < min(lam[90.0])


def test_generated_time_statistics():
    g = simulate(Recipe(seed=31, robot="ur10e", family="joint_sinusoid", sync="async", duration_s=100.0,
                        camera_rate_hz=30.0, time_offset_s=0.1, time_jitter_std_s=0.005,
                        camera_drop_fraction=0.1))  # fmt: skip
    e = g.t_camera_s - g.t_camera_gt_s - 0.1
    assert abs(e.mean()) < 4 * 0.005 / math.sqrt(e.size) and e.std() == pytest.approx(0.005, rel=0.05)
    slots = 3000
    assert abs((slots - e.size) - 300) < 3 * math.sqrt(slots * 0.09)
    assert np.all(np.diff(g.t_camera_s) > 0)


@pytest.mark.heavy
def test_smoke_tier_generates_and_holds_the_identity():
    from kinhec.synth.tiers import expand_tier, load_tier

    for track, recipes in expand_tier(load_tier("smoke")).items():
        for r in recipes:
            st = generate_sequence(r)
            _check_ground_truth(st)
            if r["family"] == "lookat" and r["sampling_mode"] == "stations":
                assert st.index_row["n_visible_frames"] == st.index_row["n_camera_frames"]


def test_single_pass_waypoint_path_lasts_its_own_length():
    from kinhec.synth.generator import index_row

    base = dict(seed=5, robot="ur5e", family="joint_waypoints", sampling_mode="continuous", n_stations=6,
                duration_s=5.0, camera_rate_hz=30.0)  # fmt: skip
    g = simulate(Recipe(**base, single_pass=True))
    traj = g.trajectory
    # one pass: six distinct waypoints, the path's length their segments and dwells summed
    assert traj.knots_q_rad.shape[0] == 6 and np.unique(traj.knots_q_rad, axis=0).shape[0] == 6
    total = float(np.sum(traj.schedule.segment_s) + np.sum(traj.schedule.dwell_s))
    assert traj.duration_s == pytest.approx(total, rel=1e-12) and total > 5.0
    assert g.t_camera_s.size == math.ceil(total * 30.0 - 1e-9)
    assert index_row(g)["duration_s"] == pytest.approx(total, rel=1e-12)
    # without it the same recipe tours the waypoints for the duration asked
    g0 = simulate(Recipe(**base))
    assert g0.trajectory.duration_s == 5.0 and index_row(g0)["duration_s"] == 5.0
    with pytest.raises(InputError, match="single_pass: expected true or false"):
        Recipe(**base, single_pass="yes")
