"""Column names and Arrow types of every table kinhec writes or reads.

These are the on-disk contract with the published KinHEC copy: names, order
and types are fixed (``sequences.parquet``, ``robot/*.parquet``,
``camera/*.parquet``, ``benchmarks/results.parquet``).  Poses are stored as
a position ``*_px, *_py, *_pz`` [m] and a unit quaternion
``*_qw, *_qx, *_qy, *_qz`` with ``qw >= 0``.
"""

from __future__ import annotations

import pyarrow as pa

POSE_SUFFIXES = ("px", "py", "pz", "qw", "qx", "qy", "qz")


def pose_columns(prefix: str) -> list[str]:
    """The seven column names of a stored pose, e.g. ``pose_columns("X")`` -> ``X_px ... X_qz``."""
    return [f"{prefix}_{s}" for s in POSE_SUFFIXES]


def _pose_fields(prefix: str) -> list[pa.Field]:
    return [pa.field(c, pa.float64()) for c in pose_columns(prefix)]


INDEX_SCHEMA = pa.schema(
    [
        pa.field("sequence_id", pa.string()),
        pa.field("track", pa.string()),
        pa.field("level", pa.string()),
        pa.field("seed", pa.int64()),
        pa.field("robot", pa.string()),
        pa.field("dof", pa.int8()),
        pa.field("configuration", pa.string()),
        pa.field("family", pa.string()),
        pa.field("world_frame", pa.string()),
        pa.field("camera", pa.string()),
        pa.field("target", pa.string()),
        pa.field("sampling_mode", pa.string()),
        pa.field("sync", pa.string()),
        pa.field("duration_s", pa.float64()),
        pa.field("robot_rate_hz", pa.float64()),
        pa.field("camera_rate_hz", pa.float64()),
        pa.field("n_robot_frames", pa.int32()),
        pa.field("n_camera_frames", pa.int32()),
        pa.field("n_visible_frames", pa.int32()),
        pa.field("n_outlier_frames", pa.int32()),
        pa.field("time_offset_s", pa.float64()),
        pa.field("time_jitter_std_s", pa.float64()),
        pa.field("camera_drop_fraction", pa.float64()),
        pa.field("scale", pa.float64()),
        pa.field("scale_drift_std", pa.float64()),
        pa.field("robot_noise_models", pa.string()),
        pa.field("robot_rot_std_rad", pa.float64()),
        pa.field("robot_trans_std_m", pa.float64()),
        pa.field("joint_std_rad", pa.float64()),
        pa.field("dh_len_std_m", pa.float64()),
        pa.field("dh_ang_std_rad", pa.float64()),
        pa.field("camera_noise_model", pa.string()),
        pa.field("camera_rot_std_rad", pa.float64()),
        pa.field("camera_trans_std_m", pa.float64()),
        pa.field("camera_trans_std_z_m", pa.float64()),
        pa.field("pixel_std", pa.float64()),
        pa.field("student_t_dof", pa.float64()),
        pa.field("outlier_fraction", pa.float64()),
        pa.field("outlier_model", pa.string()),
        *_pose_fields("X"),
        *_pose_fields("Y"),
        pa.field("n_motions", pa.int32()),
        pa.field("axis_scatter_lambda2", pa.float64()),
        pa.field("axis_scatter_lambda3", pa.float64()),
        pa.field("mean_rot_angle_deg", pa.float64()),
        pa.field("max_rot_angle_deg", pa.float64()),
        pa.field("mean_trans_m", pa.float64()),
        pa.field("translation_cond", pa.float64()),
        pa.field("robot_file", pa.string()),
        pa.field("camera_file", pa.string()),
        pa.field("robot_row_group", pa.int32()),
        pa.field("camera_row_group", pa.int32()),
        pa.field("generator_version", pa.string()),
        pa.field("config_json", pa.string()),
        pa.field("extra_json", pa.string()),
    ]
)

#: Columns of ``sequences.csv``: the index without the two JSON columns.
INDEX_CSV_COLUMNS = [n for n in INDEX_SCHEMA.names if n not in ("config_json", "extra_json")]

ROBOT_SCHEMA = pa.schema(
    [
        pa.field("sequence_id", pa.string()),
        pa.field("frame", pa.int32()),
        pa.field("t", pa.float64()),
        pa.field("q_meas", pa.list_(pa.float64())),
        pa.field("q_gt", pa.list_(pa.float64())),
        *_pose_fields("base_ee_gt"),
        *_pose_fields("base_ee_meas"),
    ]
)

CAMERA_SCHEMA = pa.schema(
    [
        pa.field("sequence_id", pa.string()),
        pa.field("frame", pa.int32()),
        pa.field("t", pa.float64()),
        pa.field("t_gt", pa.float64()),
        *_pose_fields("base_ee_gt"),
        *_pose_fields("cam_target_gt"),
        *_pose_fields("cam_target_meas"),
        pa.field("visible", pa.bool_()),
        pa.field("outlier", pa.bool_()),
        pa.field("n_points", pa.int16()),
        pa.field("depth_m", pa.float64()),
        pa.field("view_angle_deg", pa.float64()),
        pa.field("reproj_rmse_px", pa.float64()),
    ]
)

RESULTS_SCHEMA = pa.schema(
    [
        pa.field("sequence_id", pa.large_string()),
        pa.field("track", pa.large_string()),
        pa.field("level", pa.large_string()),
        pa.field("robot", pa.large_string()),
        pa.field("configuration", pa.large_string()),
        pa.field("family", pa.large_string()),
        pa.field("sampling_mode", pa.large_string()),
        pa.field("sync", pa.large_string()),
        pa.field("camera_noise_model", pa.large_string()),
        pa.field("robot_noise_models", pa.large_string()),
        pa.field("outlier_fraction", pa.float64()),
        pa.field("scale", pa.float64()),
        pa.field("time_offset_s", pa.float64()),
        pa.field("n_camera_frames", pa.int64()),
        pa.field("axis_scatter_lambda2", pa.float64()),
        pa.field("mean_rot_angle_deg", pa.float64()),
        pa.field("eval_sync", pa.large_string()),
        pa.field("time_offset_err_ms", pa.float64()),
        pa.field("solver", pa.large_string()),
        pa.field("ok", pa.bool_()),
        pa.field("error", pa.large_string()),
        pa.field("runtime_ms", pa.float64()),
        pa.field("n_motions", pa.int64()),
        pa.field("X_rot_err_deg", pa.float64()),
        pa.field("X_trans_err_mm", pa.float64()),
        pa.field("scale_est", pa.float64()),
        pa.field("scale_err_rel", pa.float64()),
        pa.field("n_inliers", pa.float64()),
        pa.field("Y_rot_err_deg", pa.float64()),
        pa.field("Y_trans_err_mm", pa.float64()),
        pa.field("time_offset_runtime_ms", pa.float64()),
        pa.field("time_offset_peak_corr", pa.float64()),
        pa.field("time_offset_est_s", pa.float64()),
    ]
)

#: Columns after the published ones: the Cramér-Rao bound of the sequence's keyframe pairs
#: (:mod:`kinhec.evaluate.bounds`, expected median errors of X) and each solver's efficiency (error / bound);
#: ``crlb_modelled`` is False where the data have effects outside the bound's model (outliers, DH errors).
RESULTS_BOUND_FIELDS = (
    pa.field("X_rot_crlb_deg", pa.float64()),
    pa.field("X_trans_crlb_mm", pa.float64()),
    pa.field("X_rot_efficiency", pa.float64()),
    pa.field("X_trans_efficiency", pa.float64()),
    pa.field("crlb_modelled", pa.bool_()),
)
for _f in RESULTS_BOUND_FIELDS:
    RESULTS_SCHEMA = RESULTS_SCHEMA.append(_f)
del _f

#: Parquet compression used for every table.
COMPRESSION = "zstd"

from kinhec.io.tracks import TRACKS, sequence_id, shard_name  # noqa: E402,F401  (light module, re-exported)
CONFIGURATIONS = ("eye_in_hand", "eye_to_hand")
FAMILIES = ("joint_sinusoid", "joint_waypoints", "lookat", "cartesian_cone", "proposal_sine")
SAMPLING_MODES = ("continuous", "stations")
ROBOT_NOISE_MODELS = ("se3_gaussian", "joint_gaussian", "dh_error")
CAMERA_NOISE_MODELS = ("se3_gaussian", "pnp", "vo_drift")
OUTLIER_MODELS = ("none", "random_pose", "planar_flip", "gross")
WORLD_FRAMES = ("target", "vo_origin")


class SequenceTables:
    """One generated sequence as it is stored: its index row and its two stream tables.

    Attributes
    ----------
    index_row : dict
        One value per column of :data:`INDEX_SCHEMA` (the file-location columns
        ``robot_file``, ``camera_file``, ``robot_row_group``,
        ``camera_row_group`` are filled in by the writer).
    robot : pyarrow.Table
        Rows of the robot stream, schema :data:`ROBOT_SCHEMA`.
    camera : pyarrow.Table
        Rows of the camera stream, schema :data:`CAMERA_SCHEMA`.
    """

    __slots__ = ("index_row", "robot", "camera")

    def __init__(self, index_row: dict, robot: pa.Table, camera: pa.Table) -> None:
        self.index_row = index_row
        self.robot = robot
        self.camera = camera

    def __repr__(self) -> str:
        return (
            f"SequenceTables({self.index_row.get('sequence_id')!r}, robot={self.robot.num_rows} rows, "
            f"camera={self.camera.num_rows} rows)"
        )
