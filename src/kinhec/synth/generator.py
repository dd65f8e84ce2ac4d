"""One benchmark sequence from its recipe: exact ground truth, measurements and the index row.

:func:`generate_sequence` runs the generation pipeline of the dataset card for
one :class:`~kinhec.synth.recipe.Recipe`:

1. hand-eye transform ``X`` (:func:`kinhec.synth.trajectories.sample_hand_eye`);
2. flange trajectory of the recipe's family, continuous in time;
3. world reference ``Y`` (look-at: drawn with the stations; otherwise placed
   where the target is seen most along the motion; monocular: the first
   camera pose);
4. clocks of both streams;
5. exact poses: ``T_base_ee`` at every robot and camera instant (forward
   kinematics of the *true* robot model), and ``T_cam_target`` from ``X``,
   ``Y``: eye-in-hand ``inv(T_base_ee X) Y``, eye-to-hand
   ``inv(Y) T_base_ee X``, so that ``A_i X = Y B_i`` holds on every camera
   frame with ``A_i = T_base_ee`` and ``B_i = inv(T_cam_target)``
   (eye-in-hand) or ``T_cam_target`` (eye-to-hand);
6. robot measurements (``se3_gaussian``, ``joint_gaussian``, ``dh_error``);
7. camera measurements (``se3_gaussian``, ``pnp``, ``vo_drift``);
8. monocular scale (``world_frame = vo_origin`` only);
9. outliers (``round(outlier_fraction * n)`` of the ``n`` frames with a
   measurement; for ``planar_flip`` frames whose reference sits at the camera
   centre, where the flip is undefined, are not eligible);
10. keyframe motion descriptors and the packing into Arrow tables.

Randomness
----------
Every draw comes from ``recipe.seed``.  The seed feeds a
:class:`numpy.random.SeedSequence` whose children drive the steps separately
(hand-eye, trajectory, world, clocks, DH errors, robot noise, camera noise,
scale, outliers), so that changing, say, the camera noise level leaves the
motion of a sequence untouched.  The same recipe always gives identical arrays.

Index conventions
-----------------
* Noise columns of robot models that are not active are 0 (robot models
  combine); the columns of the camera models that are not active are NaN
  (camera models exclude each other): ``camera_rot_std_rad``,
  ``camera_trans_std_m``, ``camera_trans_std_z_m`` carry the ``se3_gaussian``
  standard deviations, or for ``vo_drift`` the per-frame random-walk
  standard deviations (rotation, translation, translation), and are NaN for
  ``pnp``; ``pixel_std`` is NaN unless the model is ``pnp``;
  ``student_t_dof`` is NaN for Gaussian noise.
* ``robot_noise_models`` is the ``+``-joined model list (``"none"`` if empty).
* Station sequences: ``duration_s`` is the instant of the last station (the
  middle of its dwell, the last stamp), as the published index has it, and
  both rate columns are NaN.
* Continuous sequences: ``camera_rate_hz`` is the camera's rate;
  ``robot_rate_hz`` is the robot stream's rate when the streams are
  asynchronous (the controller's rate, capped by the tier) and the robot
  controller's own rate when they are synchronous (the robot stream is then
  read at the camera instants, ``n_robot_frames == n_camera_frames``), as the
  published index has it.
* ``time_offset_s``, ``time_jitter_std_s``, ``camera_drop_fraction`` are the
  recipe's (0 for synchronous sequences).
"""

from __future__ import annotations

import math

import numpy as np

import kinhec
from kinhec import io
from kinhec.geometry import se3
from kinhec.models.cameras import camera_json, get_camera, get_target, target_json, visibility
from kinhec.util.errors import InputError
from kinhec.util.jsonutil import dumps
from kinhec.geometry.motion import motion_descriptors, relative_motions, select_keyframes
from kinhec.models.noise import (
    apply_outliers,
    apply_scale,
    camera_se3_gaussian,
    joint_gaussian,
    robot_se3_gaussian,
    vo_drift,
)
from kinhec.models.pnp import simulate_pnp
from kinhec.synth.recipe import Recipe
from kinhec.synth.recipe_json import config_dict, published_sync, stored_recipe
from kinhec.models.robots import get_robot
from kinhec.io.schema import INDEX_SCHEMA, SequenceTables, pose_columns
from kinhec.synth import trajectories as tj

__all__ = [
    "INDEX_COLUMNS_FILLED_BY_WRITER",
    "GeneratedSequence",
    "as_recipe",
    "simulate",
    "robot_accuracy",
    "generate_sequence",
    "pack",
    "index_row",
    "config_record",
    "extra_record",
    "seed_streams",
]

#: Index columns left for the shard writer.
INDEX_COLUMNS_FILLED_BY_WRITER = ("robot_file", "camera_file", "robot_row_group", "camera_row_group")

_STREAMS = ("hand_eye", "trajectory", "world", "clock", "dh", "robot_noise", "camera_noise", "scale", "outliers")


def as_recipe(recipe) -> Recipe:
    """Accept a :class:`Recipe` or a dict of recipe fields; return a validated Recipe."""
    if isinstance(recipe, Recipe):
        return recipe
    if isinstance(recipe, dict):
        return Recipe.from_dict(recipe)
    raise InputError(f"recipe: expected a Recipe or a dict of recipe fields, got {type(recipe).__name__}")


class GeneratedSequence:
    """All arrays of one generated sequence, before packing (see :func:`simulate`).

    Attributes (shapes: ``Nr`` robot frames, ``Nc`` camera frames)
    -----------------------------------------------------------------
    recipe : Recipe
    X, Y : ndarray, shape (4, 4)
        Ground-truth hand-eye and world transforms.
    t_robot_s : (Nr,)
    q_gt_rad, q_meas_rad : (Nr, dof) or None (free6d)
    T_base_ee_gt, T_base_ee_meas : (Nr, 4, 4)
    t_camera_s, t_camera_gt_s : (Nc,)
    T_base_ee_gt_camera : (Nc, 4, 4)
        True flange pose at each capture instant.
    T_cam_target_gt, T_cam_target_meas : (Nc, 4, 4)
        ``meas`` is NaN where there is no measurement.
    visible, outlier : (Nc,) bool
    n_points : (Nc,) int
    depth_m, view_angle_deg, reproj_rmse_px : (Nc,)
    scale_per_frame : (Nc,) or None
    keyframes : (K,) int
        Camera-frame indices of the keyframes used for the descriptors.
    descriptors : dict
    clocks : kinhec.synth.trajectories.Clocks
    trajectory : kinhec.synth.trajectories.Trajectory
    true_robot : RobotModel
        The model whose kinematics produced the ground truth (perturbed for ``dh_error``).
    info : dict
        Bookkeeping (world placement, look-at search).
    """

    def __init__(self, **kw) -> None:
        self.__dict__.update(kw)


def seed_streams(seed: int) -> dict[str, np.random.Generator]:
    seqs = np.random.SeedSequence(int(seed)).spawn(len(_STREAMS))
    return {name: np.random.default_rng(s) for name, s in zip(_STREAMS, seqs)}


def _path_duration(r: Recipe):
    """The length asked of a waypoint path: None (one pass, as long as it takes) for a ``single_pass`` recipe."""
    return None if r.single_pass else r.duration_s


def _build_trajectory(r: Recipe, robot, X, camera, target, rng):
    """Step 2 (and step 3 for look-at): the trajectory of the recipe's family, its ``Y`` if drawn, and info."""
    common = dict(speed_fraction=r.speed_fraction)
    fam = r.family
    if fam == "joint_sinusoid":
        return tj.joint_sinusoid(robot, rng, duration_s=r.duration_s, subset=r.subset, n_harmonics=r.n_harmonics,
                                 frequency_range_hz=r.frequency_range_hz, **common), None, {}  # fmt: skip
    if fam == "joint_waypoints":
        traj = tj.joint_waypoints(robot, rng, n_waypoints=r.n_stations, dwell_range_s=r.dwell_range_s,
                                  sampling_mode=r.sampling_mode, duration_s=_path_duration(r), **common)  # fmt: skip
        return traj, None, {}
    if fam == "lookat":
        traj, Y, info = tj.lookat(robot, X, r.configuration, camera, target, rng, n_stations=r.n_stations,
                                  dwell_range_s=r.dwell_range_s, sampling_mode=r.sampling_mode, duration_s=_path_duration(r),
                                  **common)  # fmt: skip
        return traj, Y, {"lookat": {"n_candidates": info.n_candidates, "n_reachable": info.n_reachable,
                                    "n_world_tries": info.n_world_tries}}  # fmt: skip
    if fam == "cartesian_cone":
        return tj.cartesian_cone(robot, rng, cone_half_angle_deg=r.cone_half_angle_deg,
                                 rot_angle_range_deg=r.rot_angle_range_deg, n_waypoints=r.n_waypoints,
                                 trans_range_m=r.trans_range_m, dwell_range_s=r.dwell_range_s,
                                 sampling_mode=r.sampling_mode,
                                 duration_s=r.duration_s, **common), None, {}  # fmt: skip
    # proposal_sine
    traj = tj.proposal_sine(robot, rng, duration_s=r.duration_s, sampling_mode=r.sampling_mode)
    return traj, None, {}


def _observed(T_base_ee, X, Y, configuration: str) -> np.ndarray:
    if configuration == "eye_in_hand":
        return se3.invert_transform(T_base_ee @ X, check=False) @ Y
    return se3.invert_transform(Y, check=False) @ T_base_ee @ X


def simulate(recipe) -> GeneratedSequence:
    """Run steps 1-10 for ``recipe`` (a :class:`Recipe` or a dict) and return every array.

    :func:`generate_sequence` packs the result into the on-disk tables; this
    function is the one to call for numerical work on a sequence that is never
    written.
    """
    r = as_recipe(recipe)
    rngs = seed_streams(r.seed)
    models = r.robot_noise_models
    nominal = get_robot(r.robot)
    if "dh_error" in models:
        true_robot = nominal.perturbed(rngs["dh"], r.dh_len_std_m, r.dh_ang_std_rad, r.dh_joint_std_rad)
    else:
        true_robot = nominal
    camera = get_camera(r.camera)
    target = get_target(r.target)
    info: dict = {}

    # 1-2 (and 3 for look-at)
    X = tj.sample_hand_eye(rngs["hand_eye"], r.configuration)
    traj, Y, traj_info = _build_trajectory(r, true_robot, X, camera, target, rngs["trajectory"])
    info.update(traj_info)

    # 4 clocks
    clocks = tj.make_clocks(
        rngs["clock"], sampling_mode=r.sampling_mode, sync=r.sync,
        duration_s=traj.duration_s if r.single_pass else r.duration_s,
        camera_rate_hz=r.camera_rate_hz, robot_rate_hz=min(nominal.control_rate_hz, r.robot_rate_cap_hz),
        time_offset_s=r.time_offset_s, time_jitter_std_s=r.time_jitter_std_s,
        camera_drop_fraction=r.camera_drop_fraction, station_times_s=traj.station_times_s,
    )  # fmt: skip

    # 5 exact poses
    t_r, t_c = clocks.t_robot_s, clocks.t_camera_gt_s
    if traj.is_cartesian:
        q_gt = None
        T_r = traj.cartesian_poses(t_r)
    else:
        q_gt = traj.joint_positions(t_r)
        T_r = true_robot.fk(q_gt)
    T_c = T_r if clocks.same_clock else traj.flange_poses(t_c, true_robot)

    # 3 world reference for the other families / monocular
    if r.world_frame == "vo_origin":
        Y = T_c[0] @ X
    elif Y is None:
        n_c = T_c.shape[0]
        idx = np.unique(np.round(np.linspace(0, n_c - 1, min(tj.N_WORLD_FRAMES, n_c))).astype(np.int64))
        Y, info["world"] = tj.place_world(T_c[idx], X, r.configuration, camera, target, rngs["world"])
    T_ctg = _observed(T_c, X, Y, r.configuration)
    n_c = T_ctg.shape[0]

    if r.world_frame == "target":
        vis = visibility(camera, target, T_ctg, check=False)
        visible, n_points, depth_m, view_deg = vis.visible, vis.n_points, vis.depth_m, vis.view_angle_deg
    else:
        visible = np.ones(n_c, dtype=bool)
        n_points = np.zeros(n_c, dtype=np.int64)
        depth_m = np.full(n_c, np.nan)
        view_deg = np.full(n_c, np.nan)

    # 6 robot measurements
    rng = rngs["robot_noise"]
    if q_gt is None:
        q_meas = None
        T_r_meas = T_r.copy()
    else:
        q_meas = joint_gaussian(q_gt, r.joint_std_rad, rng) if "joint_gaussian" in models else q_gt.copy()
        if "joint_gaussian" in models or "dh_error" in models:
            T_r_meas = nominal.fk(q_meas)
        else:
            T_r_meas = T_r.copy()
    if "se3_gaussian" in models:
        T_r_meas = robot_se3_gaussian(T_r_meas, r.robot_rot_std_rad, r.robot_trans_std_m, rng,
                                      student_t_dof=r.robot_student_t_dof, check=False)  # fmt: skip

    # 7 camera measurements
    rng = rngs["camera_noise"]
    reproj = np.full(n_c, np.nan)
    if r.camera_noise_model == "se3_gaussian":
        T_meas = camera_se3_gaussian(T_ctg, r.camera_rot_std_rad, r.camera_trans_std_m, r.camera_trans_std_z_m, rng,
                                     student_t_dof=r.student_t_dof, check=False)  # fmt: skip
    elif r.camera_noise_model == "vo_drift":
        T_vo_cam = se3.invert_transform(T_ctg, check=False)
        T_meas = se3.invert_transform(
            vo_drift(T_vo_cam, r.vo_drift_rot_std_rad, r.vo_drift_trans_std_m, rng, student_t_dof=r.student_t_dof),
            check=False,
        )
    else:  # pnp
        res = simulate_pnp(camera, target, T_ctg, r.pixel_std, rng, available=visible)
        T_meas = res.T_cam_target
        reproj = np.asarray(res.rmse_px, dtype=np.float64)

    # 8 monocular scale
    scale_per_frame = None
    if r.world_frame == "vo_origin":
        T_meas, scale_per_frame = apply_scale(T_meas, r.scale, r.scale_drift_std, rngs["scale"])

    # 9 outliers
    has_meas = np.isfinite(T_meas).all(axis=(1, 2))
    if r.outlier_fraction > 0:
        candidates = has_meas
        # an outlier is built from the frame's noisy (and scaled) measurement, as in the published copy: a
        # planar-ambiguity flip is the other PnP solution of the same noisy view, so it keeps the view's noise
        # (its rotation noise grows through the mirroring) and a gross error comes on top of the sensor noise
        T_ref = np.where(has_meas[:, None, None], T_meas, T_ctg)
        T_meas, outlier = apply_outliers(T_meas, T_ref, r.outlier_model, r.outlier_fraction, rngs["outliers"],
                                         available=candidates)  # fmt: skip
    else:
        outlier = np.zeros(n_c, dtype=bool)

    # 10 descriptors of the keyframe motions of the ground-truth pairs that carry a measurement
    avail = np.flatnonzero(has_meas)
    if avail.size >= 2:
        keyframes = avail[select_keyframes(T_c[avail], check=False)]
        descriptors = motion_descriptors(relative_motions(T_c[keyframes]))
    else:
        keyframes = avail
        descriptors = motion_descriptors(np.zeros((0, 4, 4)))

    return GeneratedSequence(
        recipe=r, X=X, Y=Y, t_robot_s=t_r, q_gt_rad=q_gt, q_meas_rad=q_meas, T_base_ee_gt=T_r,
        T_base_ee_meas=T_r_meas, t_camera_s=clocks.t_camera_s, t_camera_gt_s=t_c, T_base_ee_gt_camera=T_c,
        T_cam_target_gt=T_ctg, T_cam_target_meas=T_meas, visible=np.asarray(visible, dtype=bool), outlier=outlier,
        n_points=np.asarray(n_points), depth_m=np.asarray(depth_m, dtype=np.float64),
        view_angle_deg=np.asarray(view_deg, dtype=np.float64), reproj_rmse_px=reproj,
        scale_per_frame=scale_per_frame, keyframes=np.asarray(keyframes, dtype=np.int64), descriptors=descriptors,
        clocks=clocks, trajectory=traj, true_robot=true_robot, info=info,
    )  # fmt: skip


def robot_accuracy(g: GeneratedSequence) -> tuple[float, float]:
    """A generated sequence's robot accuracy ``(deg, mm)``: the RMS rotation and distance of its true flange poses
    from the nominal kinematic model's over the robot stream (0 without ``dh_error`` or with Cartesian motion) --
    what ``kinhec calibrate --robot-accuracy`` takes."""
    if g.q_gt_rad is None or "dh_error" not in g.recipe.robot_noise_models:
        return 0.0, 0.0
    D = se3.invert_transform(get_robot(g.recipe.robot).fk(g.q_gt_rad), check=False) @ g.T_base_ee_gt
    ang = np.linalg.norm(se3.so3_log(D[:, :3, :3], check=False), axis=1)
    return float(np.degrees(np.sqrt(np.mean(ang**2)))), float(1e3 * np.sqrt(np.mean(np.sum(D[:, :3, 3] ** 2, axis=1))))


# --------------------------------------------------------------------------- #
# packing
# --------------------------------------------------------------------------- #
def _pose_record(T: np.ndarray) -> dict:
    p, q = se3.pq_from_transform(T, check=False)
    return dict(zip(("px", "py", "pz", "qw", "qx", "qy", "qz"), [float(v) for v in (*p, *q)]))


def _sequence_duration(g: GeneratedSequence) -> float:
    """Length [s] of a continuous sequence: the recipe's, or its path's for a ``single_pass`` recipe."""
    return float(g.trajectory.duration_s if g.recipe.single_pass else g.recipe.duration_s)


def _robot_rate(g: GeneratedSequence) -> float:
    """The index's ``robot_rate_hz``: NaN at stations, the stream's rate when asynchronous, else the controller's."""
    if g.recipe.sampling_mode == "stations" or not g.clocks.same_clock:
        return float(g.clocks.robot_rate_hz)
    return float(g.true_robot.control_rate_hz)


def _nan_if(cond: bool, value: float) -> float:
    return float(value) if cond else math.nan


def generate_sequence(recipe) -> SequenceTables:
    """Generate one sequence and pack it as stored (index row, robot table, camera table).

    Parameters
    ----------
    recipe : Recipe or dict
        The sequence's recipe (a dict is validated through :meth:`Recipe.from_dict`).

    Returns
    -------
    SequenceTables
        ``index_row``: every :data:`kinhec.io.schema.INDEX_SCHEMA` column except
        ``robot_file``, ``camera_file``, ``robot_row_group`` and
        ``camera_row_group`` (filled by the shard writer); ``robot`` and
        ``camera``: Arrow tables with exactly :data:`~kinhec.io.schema.ROBOT_SCHEMA`
        and :data:`~kinhec.io.schema.CAMERA_SCHEMA` (quaternions with ``qw >= 0``).

    Raises
    ------
    InputError, UnknownNameError
        For an invalid recipe.
    ConvergenceError
        When a look-at recipe finds no reachable stations with the target in view.
    """
    g = simulate(recipe)
    return pack(g)


def pack(g: GeneratedSequence) -> SequenceTables:
    """Pack a :class:`GeneratedSequence` into the on-disk tables (see :func:`generate_sequence`)."""
    sid = g.recipe.sequence_id
    robot = io.robot_table(
        sid, g.t_robot_s, g.T_base_ee_gt, g.T_base_ee_meas, g.q_gt_rad, g.q_meas_rad, check=False
    )
    camera = io.camera_table(
        sid, g.t_camera_s, g.t_camera_gt_s, g.T_base_ee_gt_camera, g.T_cam_target_gt, g.T_cam_target_meas,
        visible=g.visible, outlier=g.outlier, n_points=g.n_points, depth_m=g.depth_m,
        view_angle_deg=g.view_angle_deg, reproj_rmse_px=g.reproj_rmse_px, check=False,
    )  # fmt: skip
    return SequenceTables(index_row(g), robot, camera)


def index_row(g: GeneratedSequence) -> dict:
    """The index row of a generated sequence (every column but the four file locations)."""
    r = g.recipe
    models = r.robot_noise_models
    stations = r.sampling_mode == "stations"
    cam = r.camera_noise_model
    if cam == "se3_gaussian":
        cam_std = (r.camera_rot_std_rad, r.camera_trans_std_m, r.camera_trans_std_z_m)
    elif cam == "vo_drift":
        cam_std = (r.vo_drift_rot_std_rad, r.vo_drift_trans_std_m, r.vo_drift_trans_std_m)
    else:
        cam_std = (math.nan, math.nan, math.nan)
    row = {
        "sequence_id": r.sequence_id,
        "track": r.track,
        "level": r.level,
        "seed": int(r.seed),
        "robot": r.robot,
        "dof": int(g.true_robot.dof),
        "configuration": r.configuration,
        "family": r.family,
        "world_frame": r.world_frame,
        "camera": r.camera,
        "target": r.target,
        "sampling_mode": r.sampling_mode,
        "sync": published_sync(r.sync),
        "duration_s": float(g.t_robot_s[-1] if stations else _sequence_duration(g)),
        "robot_rate_hz": _robot_rate(g),
        "camera_rate_hz": float(g.clocks.camera_rate_hz),
        "n_robot_frames": int(g.t_robot_s.size),
        "n_camera_frames": int(g.t_camera_s.size),
        "n_visible_frames": int(g.visible.sum()),
        "n_outlier_frames": int(g.outlier.sum()),
        "time_offset_s": float(r.time_offset_s),
        "time_jitter_std_s": float(r.time_jitter_std_s),
        "camera_drop_fraction": float(r.camera_drop_fraction),
        "scale": float(r.scale),
        "scale_drift_std": float(r.scale_drift_std),
        "robot_noise_models": r.robot_noise_models_str,
        "robot_rot_std_rad": float(r.robot_rot_std_rad) if "se3_gaussian" in models else 0.0,
        "robot_trans_std_m": float(r.robot_trans_std_m) if "se3_gaussian" in models else 0.0,
        "joint_std_rad": float(r.joint_std_rad) if "joint_gaussian" in models else 0.0,
        "dh_len_std_m": float(r.dh_len_std_m) if "dh_error" in models else 0.0,
        "dh_ang_std_rad": float(r.dh_ang_std_rad) if "dh_error" in models else 0.0,
        "camera_noise_model": cam,
        "camera_rot_std_rad": float(cam_std[0]),
        "camera_trans_std_m": float(cam_std[1]),
        "camera_trans_std_z_m": float(cam_std[2]),
        "pixel_std": _nan_if(cam == "pnp", r.pixel_std),
        "student_t_dof": math.nan if r.student_t_dof is None or cam == "pnp" else float(r.student_t_dof),
        "outlier_fraction": float(r.outlier_fraction),
        "outlier_model": r.outlier_model,
    }
    for prefix, T in (("X", g.X), ("Y", g.Y)):
        rec = _pose_record(T)
        for col, key in zip(pose_columns(prefix), ("px", "py", "pz", "qw", "qx", "qy", "qz")):
            row[col] = rec[key]
    d = g.descriptors
    row.update(
        n_motions=int(d["n_motions"]),
        axis_scatter_lambda2=float(d["axis_scatter_lambda2"]),
        axis_scatter_lambda3=float(d["axis_scatter_lambda3"]),
        mean_rot_angle_deg=float(d["mean_rot_angle_deg"]),
        max_rot_angle_deg=float(d["max_rot_angle_deg"]),
        mean_trans_m=float(d["mean_trans_m"]),
        translation_cond=float(d["translation_cond"]),
        generator_version=kinhec.__version__,
        config_json=dumps(config_record(g), sort_keys=True),
        extra_json=dumps(extra_record(g)),
    )
    # keep the schema's column order
    return {name: row[name] for name in INDEX_SCHEMA.names if name not in INDEX_COLUMNS_FILLED_BY_WRITER}


def config_record(g: GeneratedSequence) -> dict:
    """Content of ``config_json``: the recipe in the published nested form (:func:`kinhec.synth.recipe_json.config_dict`)."""
    r = g.recipe
    joints = None
    if r.family == "joint_sinusoid":
        joints = g.trajectory.to_dict().get("excited_joints")
    robot_rate = g.clocks.robot_rate_hz if published_sync(r.sync) == "asynchronous" else None
    return config_dict(r, robot_rate_hz=robot_rate, joints=joints)


def extra_record(g: GeneratedSequence) -> dict:
    """Content of ``extra_json``: the published keys first, then kinhec's own.

    Published keys (docs/format.md): ``true_dh`` (``dh_error`` sequences only:
    the perturbed ``a, d`` [m], ``alpha, theta_offset`` [rad]),
    ``scale_per_frame`` (sequences with a scale: the scale of every camera
    frame), ``trajectory_params`` (the family's parameters,
    :meth:`Trajectory.to_dict`), ``keyframe_indices`` (camera-frame indices
    behind the descriptors), ``camera_intrinsics`` and ``target`` (the presets
    as in ``cameras_targets.json``).  kinhec's own keys follow: ``recipe``
    (the whole :class:`Recipe`, :func:`kinhec.synth.recipe_json.stored_recipe`),
    ``clock`` (rates, phase, dropped frames), ``camera_K`` (3x3 intrinsic
    matrix [px]) and the bookkeeping of the world placement (``world``) or of
    the look-at search (``lookat``).
    """
    r = g.recipe
    cam = get_camera(r.camera)
    out = {}
    if "dh_error" in r.robot_noise_models:
        out["true_dh"] = g.true_robot.dh_published()
    if r.scale != 1.0 or r.scale_drift_std > 0:
        n_c = g.t_camera_s.size
        spf = g.scale_per_frame if g.scale_per_frame is not None else r.scale
        out["scale_per_frame"] = np.broadcast_to(np.asarray(spf, dtype=np.float64), (n_c,)).tolist()
    out["trajectory_params"] = g.trajectory.to_dict()
    out["keyframe_indices"] = g.keyframes
    out["camera_intrinsics"] = camera_json(cam)
    out["target"] = target_json(r.target)
    out["recipe"] = stored_recipe(r)
    out["clock"] = g.clocks.to_dict()
    out["camera_K"] = cam.K
    out.update(g.info)
    return out
