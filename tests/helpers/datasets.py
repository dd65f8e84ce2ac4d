"""A small dataset built by hand, without kinhec's generator: tables assembled column by column (scipy for the
quaternions), ground truth chosen so that ``A_i X = Y B_i`` holds exactly, written with :func:`kinhec.io.write_shard`
and :func:`kinhec.io.write_index` (the io, encoding, export and resume tests read it)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
from scipy.spatial.transform import Rotation

from kinhec import io as kio
from kinhec.geometry import se3
from kinhec.io.schema import CAMERA_SCHEMA, INDEX_SCHEMA, ROBOT_SCHEMA, SequenceTables, pose_columns

ASYNC_OFFSET_S = 0.05
ROBOT_RATE_HZ = 500.0
# smooth flange motion of the asynchronous sequences: p(t) = c + a sin(w t + phi), rotvec(t) = r sin(w t)
MOTION_W = 2 * np.pi * 0.5
MOTION_A_M = np.array([0.20, 0.15, 0.10])
MOTION_ROT_RAD = np.array([0.6, -0.4, 0.5])


def _pose(R, p):
    T = np.zeros(np.broadcast_shapes(np.shape(R)[:-2], np.shape(p)[:-1]) + (4, 4))
    T[..., :3, :3] = R
    T[..., :3, 3] = p
    T[..., 3, 3] = 1.0
    return T


def inverse_pose(T):
    Rt = np.swapaxes(T[..., :3, :3], -1, -2)
    return _pose(Rt, -np.einsum("...ij,...j->...i", Rt, T[..., :3, 3]))


def _pose_cols(prefix, T):
    """Seven columns of poses (N, 4, 4); quaternion (w, x, y, z) with w >= 0, NaN rows stay NaN."""
    n = T.shape[0]
    ok = np.isfinite(T).all(axis=(1, 2))
    q = np.full((n, 4), np.nan)
    p = np.full((n, 3), np.nan)
    if ok.any():
        qq = Rotation.from_matrix(T[ok, :3, :3]).as_quat(scalar_first=True)
        qq[qq[:, 0] < 0] *= -1
        q[ok] = qq
        p[ok] = T[ok, :3, 3]
    names = pose_columns(prefix)
    return {names[i]: (p[:, i] if i < 3 else q[:, i - 3]).tolist() for i in range(7)}


def _robot_tbl(sid, t, Tg, Tm, qg, qm):
    n = len(t)
    cols = {
        "sequence_id": [sid] * n,
        "frame": list(range(n)),
        "t": list(map(float, t)),
        "q_meas": [list(map(float, r)) for r in qm],
        "q_gt": [list(map(float, r)) for r in qg],
    }
    cols.update(_pose_cols("base_ee_gt", Tg))
    cols.update(_pose_cols("base_ee_meas", Tm))
    return pa.table(cols, schema=ROBOT_SCHEMA)


def _camera_tbl(sid, t, t_gt, Tb, Tg, Tm, visible, outlier, n_points, depth, angle, rmse):
    m = len(t)
    cols = {"sequence_id": [sid] * m, "frame": list(range(m)), "t": list(map(float, t)), "t_gt": list(map(float, t_gt))}
    cols.update(_pose_cols("base_ee_gt", Tb))
    cols.update(_pose_cols("cam_target_gt", Tg))
    cols.update(_pose_cols("cam_target_meas", Tm))
    cols.update(
        visible=list(map(bool, visible)),
        outlier=list(map(bool, outlier)),
        n_points=list(map(int, n_points)),
        depth_m=list(map(float, depth)),
        view_angle_deg=list(map(float, angle)),
        reproj_rmse_px=list(map(float, rmse)),
    )
    return pa.table(cols, schema=CAMERA_SCHEMA)


def _index_row(sid, track, configuration, sync, X, Y, *, dof, robot, n_robot, n_camera, offset=0.0, **over):
    row = {f.name: (float("nan") if pa.types.is_floating(f.type) else None) for f in INDEX_SCHEMA}
    for k in kio.LOCATION_COLUMNS:
        del row[k]
    qX = Rotation.from_matrix(X[:3, :3]).as_quat(scalar_first=True)
    qY = Rotation.from_matrix(Y[:3, :3]).as_quat(scalar_first=True)
    qX *= np.sign(qX[0])
    qY *= np.sign(qY[0])
    row.update(
        sequence_id=sid,
        track=track,
        level="fixture",
        seed=12345,
        robot=robot,
        dof=dof,
        configuration=configuration,
        family="joint_sinusoid",
        world_frame="target",
        camera="hd",
        target="checker_9x6_25mm",
        sampling_mode="continuous",
        sync=sync,
        duration_s=4.0,
        n_robot_frames=n_robot,
        n_camera_frames=n_camera,
        n_visible_frames=n_camera,
        n_outlier_frames=0,
        time_offset_s=offset,
        time_jitter_std_s=0.0,
        camera_drop_fraction=0.0,
        scale=1.0,
        scale_drift_std=0.0,
        robot_noise_models="se3_gaussian",
        camera_noise_model="se3_gaussian",
        outlier_fraction=0.0,
        outlier_model="none",
        n_motions=10,
        translation_cond=float("inf"),  # must survive the round trips
        generator_version="test",
        config_json=json.dumps({"sequence_id": sid, "nested": {"list": [1, 2, 3]}}),
        extra_json=json.dumps({"keyframes": [0, 3, 7]}),
    )
    row.update({f"X_{k}": float(v) for k, v in zip(("px", "py", "pz"), X[:3, 3])})
    row.update({f"X_{k}": float(v) for k, v in zip(("qw", "qx", "qy", "qz"), qX)})
    row.update({f"Y_{k}": float(v) for k, v in zip(("px", "py", "pz"), Y[:3, 3])})
    row.update({f"Y_{k}": float(v) for k, v in zip(("qw", "qx", "qy", "qz"), qY)})
    row.update(over)
    return row


def _camera_poses(configuration, A, X, Y):
    """T_cam_target such that A X = Y B with B = inv(T_cam_target) (eye-in-hand) or T_cam_target (eye-to-hand)."""
    B = inverse_pose(Y) @ A @ X
    return inverse_pose(B) if configuration == "eye_in_hand" else B


def _noisy(rng, T, rot_std, trans_std):
    xi = np.concatenate([rng.normal(0, rot_std, (len(T), 3)), rng.normal(0, trans_std, (len(T), 3))], axis=1)
    return se3.perturb_right(T, xi)


def smooth_flange(t):
    """Analytic flange trajectory T_base_ee(t) of the asynchronous sequences, shape (N, 4, 4)."""
    t = np.asarray(t, dtype=float)
    p = np.array([0.5, 0.0, 0.4]) + MOTION_A_M * np.sin(MOTION_W * t[:, None] + np.array([0.0, 1.0, 2.0]))
    R = Rotation.from_rotvec(MOTION_ROT_RAD * np.sin(MOTION_W * t)[:, None]).as_matrix()
    return _pose(R, p)


def build_sequences(exact: bool, seed: int = 7):
    """The fixture's sequences as SequenceTables, plus the arrays they were built from.

    ``exact=True`` gives measurements equal to the ground truth (except the
    NaN frames of the pnp-like sequence).
    """
    rng = np.random.default_rng(seed)
    out, truth = [], {}

    def rand_pose():
        return _pose(Rotation.random(random_state=rng.integers(1 << 31)).as_matrix(), rng.normal(0, 0.3, 3))

    def add(sid, track, configuration, sync, *, t_robot, A_gt, q, t_cam, t_gt, A_cam, offset=0.0, invisible=None):
        X, Y = rand_pose(), rand_pose()
        n, m = len(t_robot), len(t_cam)
        A_meas = A_gt if exact else _noisy(rng, A_gt, 1e-3, 1e-3)
        Tct_gt = _camera_poses(configuration, A_cam, X, Y)
        Tct_meas = Tct_gt.copy() if exact else _noisy(rng, Tct_gt, 2e-3, 2e-3)
        visible = np.ones(m, bool)
        if invisible is not None:
            visible[invisible] = False
            Tct_meas[invisible] = np.nan
        q_gt = q
        q_meas = q if exact else q + rng.normal(0, 1e-4, q.shape)
        n_points = np.where(visible, 54, 0)
        depth = rng.uniform(0.3, 1.0, m)
        angle = rng.uniform(0, 60, m)
        rmse = np.where(visible, rng.uniform(0.1, 0.5, m), np.nan)
        robot = _robot_tbl(sid, t_robot, A_gt, A_meas, q_gt, q_meas)
        camera = _camera_tbl(sid, t_cam, t_gt, A_cam, Tct_gt, Tct_meas, visible, np.zeros(m, bool), n_points, depth, angle, rmse)
        dof = q.shape[1]
        row = _index_row(
            sid, track, configuration, sync, X, Y, dof=dof, robot="ur5e" if dof else "free6d",
            n_robot=n, n_camera=m, offset=offset, n_visible_frames=int(visible.sum()),
        )
        out.append(SequenceTables(row, robot, camera))
        truth[sid] = dict(
            X=X, Y=Y, t_robot=np.asarray(t_robot, float), A_gt=A_gt, A_meas=A_meas, q_gt=q_gt, q_meas=q_meas,
            t_cam=np.asarray(t_cam, float), t_gt=np.asarray(t_gt, float), A_cam=A_cam, Tct_gt=Tct_gt,
            Tct_meas=Tct_meas, visible=visible, n_points=n_points, depth=depth, angle=angle, rmse=rmse,
            configuration=configuration, offset=offset,
        )

    # synchronous, stations-like: large random motions, frame-aligned rows, 6 joints
    for k, configuration in enumerate(("eye_in_hand", "eye_to_hand")):
        n = 30
        t = np.arange(n) * 0.1
        A = np.stack([rand_pose() for _ in range(n)])
        q = rng.uniform(-3, 3, (n, 6))
        add(f"noise-00000{k}", "noise", configuration, "sync", t_robot=t, A_gt=A, q=q, t_cam=t, t_gt=t, A_cam=A)

    # asynchronous, 500 Hz smooth robot stream, 30 Hz camera with a random phase
    t_r = np.arange(0, 4.0 + 1e-9, 1 / ROBOT_RATE_HZ)
    A_r = smooth_flange(t_r)
    q_r = np.column_stack([np.sin(MOTION_W * t_r + j) for j in range(7)])
    t_gt = 0.0123 + np.arange(0, 3.9, 1 / 30.0)
    add(
        "temporal-000000", "temporal", "eye_in_hand", "async", t_robot=t_r, A_gt=A_r, q=q_r,
        t_cam=t_gt + ASYNC_OFFSET_S, t_gt=t_gt, A_cam=smooth_flange(t_gt), offset=ASYNC_OFFSET_S,
    )
    # asynchronous, camera instants on robot samples (every 16th), eye-to-hand: pairing is exact
    t_gt2 = t_r[5:-20:16]
    add(
        "temporal-000001", "temporal", "eye_to_hand", "async", t_robot=t_r, A_gt=A_r, q=q_r,
        t_cam=t_gt2 + ASYNC_OFFSET_S, t_gt=t_gt2, A_cam=A_r[5:-20:16], offset=ASYNC_OFFSET_S,
    )

    # free-floating 6-DoF: empty joint lists
    n = 25
    t = np.arange(n) / 10
    A = np.stack([rand_pose() for _ in range(n)])
    add("motion-000000", "motion", "eye_in_hand", "sync", t_robot=t, A_gt=A, q=np.zeros((n, 0)), t_cam=t, t_gt=t, A_cam=A)

    # pnp-like: measurements only on visible frames
    n = 20
    t = np.arange(n) / 10
    A = np.stack([rand_pose() for _ in range(n)])
    add(
        "pnp-000000", "pnp", "eye_in_hand", "sync", t_robot=t, A_gt=A, q=rng.uniform(-2, 2, (n, 6)),
        t_cam=t, t_gt=t, A_cam=A, invisible=[1, 4, 5, 13, 19],
    )
    return out, truth


def write_dataset(root, exact: bool):
    """Write the fixture with kinhec.io; returns the truth dict."""
    seqs, truth = build_sequences(exact)
    by_id = {s.index_row["sequence_id"]: s for s in seqs}
    rows = []
    rows += kio.write_shard(root, "temporal", 0, [by_id["temporal-000000"], by_id["temporal-000001"]])
    rows += kio.write_shard(root, "noise", 0, [by_id["noise-000000"], by_id["noise-000001"]])
    rows += kio.write_shard(root, "motion", 3, [by_id["motion-000000"]])
    rows += kio.write_shard(root, "pnp", 0, [by_id["pnp-000000"]])
    kio.write_index(root, rows)
    return truth
