"""The card's column documentation: unit and meaning of every column of the index and of the two streams."""

from __future__ import annotations

from kinhec.io.schema import POSE_SUFFIXES

__all__ = ["INDEX_COLUMN_DOCS", "ROBOT_COLUMN_DOCS", "CAMERA_COLUMN_DOCS", "column_rows"]

#: Documentation of the index columns; pose prefixes (``X``, ``Y``) stand for their seven columns.
INDEX_COLUMN_DOCS: dict[str, tuple[str, str]] = {
    "sequence_id": ("-", "Identifier `<track>-<6 digits>`, unique in the copy."),
    "track": ("-", "Track the sequence belongs to (`noise`, `motion`, `temporal`, `outliers`, `monocular`, "
              "`robot_error`, `pnp`, `mixed`)."),
    "level": ("-", "The factor levels the track sweeps, as `name=value` pairs joined by `|` (for `mixed`: family, "
              "camera model and `async` when the clocks differ)."),
    "seed": ("-", "Seed of the sequence's own random generator, derived from the tier's global seed and the id."),
    "robot": ("-", "Kinematic model of the manipulator, or `free6d` for the free-floating end effector."),
    "dof": ("-", "Number of joints (0 for `free6d`)."),
    "configuration": ("-", "`eye_in_hand` (camera on the flange) or `eye_to_hand` (static camera, marker on the "
                      "flange)."),
    "family": ("-", "Trajectory family (`joint_sinusoid`, `joint_waypoints`, `lookat`, `cartesian_cone`, "
               "`proposal_sine`)."),
    "world_frame": ("-", "What the camera observes: `target` (a physical board or flange marker) or `vo_origin` "
                    "(the first camera pose of a visual-odometry frame)."),
    "camera": ("-", "Camera preset (resolution and focal length, see `cameras_targets.json`)."),
    "target": ("-", "Calibration-target preset seen by the camera (see `cameras_targets.json`)."),
    "sampling_mode": ("-", "`continuous` (frames along a moving trajectory) or `stations` (one frame per dwell of "
                      "a move-and-stop trajectory)."),
    "sync": ("-", "`synchronous`: one clock and row-aligned streams; `asynchronous`: separate clocks, rates, offset "
                  "and jitter."),
    "duration_s": ("s", "Length of the trajectory."),
    "robot_rate_hz": ("Hz", "Robot-stream rate of an asynchronous sequence; the robot controller's rate for a "
                             "synchronous one, whose robot stream is read at the camera instants (NaN for station "
                             "sequences)."),
    "camera_rate_hz": ("Hz", "Camera-stream rate (NaN for station sequences)."),
    "n_robot_frames": ("-", "Rows of the sequence in its robot shard."),
    "n_camera_frames": ("-", "Rows of the sequence in its camera shard."),
    "n_visible_frames": ("-", "Camera frames in which the target is visible."),
    "n_outlier_frames": ("-", "Camera frames whose measurement was replaced by an outlier."),
    "time_offset_s": ("s", "True clock offset: a camera frame taken at robot time `t_gt` is stamped "
                      "`t_gt + time_offset_s` (+ jitter)."),
    "time_jitter_std_s": ("s", "Standard deviation of the Gaussian jitter of the camera stamps."),
    "camera_drop_fraction": ("-", "Fraction of camera frames dropped from the stream."),
    "scale": ("-", "Factor applied to the camera translations (1 = metric; monocular sequences differ)."),
    "scale_drift_std": ("-", "Per-frame standard deviation of the multiplicative random walk of the scale."),
    "robot_noise_models": ("-", "Active robot measurement models joined by `+` (`se3_gaussian`, `joint_gaussian`, "
                           "`dh_error`)."),
    "robot_rot_std_rad": ("rad", "Rotation standard deviation of the flange-frame twist noise."),
    "robot_trans_std_m": ("m", "Translation standard deviation of the flange-frame twist noise."),
    "joint_std_rad": ("rad", "Standard deviation of the joint-encoder noise."),
    "dh_len_std_m": ("m", "Standard deviation of the errors on the DH lengths `a`, `d` of the true robot."),
    "dh_ang_std_rad": ("rad", "Standard deviation of the errors on the DH angles `alpha`, `theta` offset."),
    "camera_noise_model": ("-", "Camera measurement model (`se3_gaussian`, `pnp`, `vo_drift`)."),
    "camera_rot_std_rad": ("rad", "Rotation standard deviation of the camera measurement (target frame)."),
    "camera_trans_std_m": ("m", "Lateral (x, y) translation standard deviation, camera frame."),
    "camera_trans_std_z_m": ("m", "Translation standard deviation along the optical axis (z)."),
    "pixel_std": ("px", "Pixel noise of the `pnp` model."),
    "student_t_dof": ("-", "Degrees of freedom of the Student-t noise; NaN means Gaussian. With Student-t noise the "
                      "camera std columns hold the scale of the distribution: the standard deviation is "
                      "sqrt(nu / (nu - 2)) times larger (1.73x at nu = 3)."),
    "outlier_fraction": ("-", "Requested fraction of camera measurements replaced by outliers."),
    "outlier_model": ("-", "`none`, `random_pose`, `planar_flip` or `gross`."),
    "X": ("m, -", "Ground-truth hand-eye transform: `T_ee_cam` (eye-in-hand) or `T_ee_marker` (eye-to-hand); "
          "position and unit quaternion (w, x, y, z), w >= 0."),
    "Y": ("m, -", "Ground-truth robot-world transform: `T_base_world` (eye-in-hand) or `T_base_cam` "
          "(eye-to-hand); position and unit quaternion (w, x, y, z), w >= 0."),
    "n_motions": ("-", "Keyframe motions from which the descriptors were computed."),
    "axis_scatter_lambda2": ("-", "Second eigenvalue of the angle-weighted scatter matrix of the flange rotation "
                             "axes (0: all axes parallel, the rotation of X is unobservable; 1/3: isotropic)."),
    "axis_scatter_lambda3": ("-", "Third (smallest) eigenvalue of the same matrix."),
    "mean_rot_angle_deg": ("deg", "Mean rotation angle of the keyframe motions."),
    "max_rot_angle_deg": ("deg", "Largest rotation angle of the keyframe motions."),
    "mean_trans_m": ("m", "Mean translation of the keyframe motions."),
    "translation_cond": ("-", "Condition number of the stacked `R_A - I` blocks (infinite for pure "
                         "translations); scale free, read it with `mean_rot_angle_deg`."),
    "robot_file": ("-", "Robot shard of the sequence, relative to the folder."),
    "camera_file": ("-", "Camera shard of the sequence, relative to the folder."),
    "robot_row_group": ("-", "Row group of the sequence in `robot_file`."),
    "camera_row_group": ("-", "Row group of the sequence in `camera_file`."),
    "generator_version": ("-", "kinhec version that generated the sequence."),
    "config_json": ("-", "The generation recipe as nested JSON, in the published key set (Parquet only; see "
                         "docs/format.md)."),
    "extra_json": ("-", "Generated details as JSON: true DH parameters (m, rad), per-frame scale, trajectory "
                   "parameters, keyframe indices, camera intrinsics, target geometry, then kinhec's whole recipe "
                   "and clock details (Parquet only)."),
}  # fmt: skip

#: Documentation of the robot-stream columns.
ROBOT_COLUMN_DOCS: dict[str, tuple[str, str]] = {
    "sequence_id": ("-", "Sequence the row belongs to."),
    "frame": ("-", "Frame number, from 0, within the sequence."),
    "t": ("s", "Time stamp on the robot clock, the reference clock."),
    "q_meas": ("rad", "Joint positions as the encoders report them (noisy under `joint_gaussian`); empty list "
               "for `free6d`."),
    "q_gt": ("rad", "True joint positions; empty list for `free6d`."),
    "base_ee_gt": ("m, -", "True flange pose `T_base_ee`: position and unit quaternion (w, x, y, z)."),
    "base_ee_meas": ("m, -", "Flange pose as the robot reports it (twist noise, encoder noise propagated through "
                     "the kinematics, or a systematic DH model error)."),
}  # fmt: skip

#: Documentation of the camera-stream columns.
CAMERA_COLUMN_DOCS: dict[str, tuple[str, str]] = {
    "sequence_id": ("-", "Sequence the row belongs to."),
    "frame": ("-", "Frame number, from 0, within the sequence."),
    "t": ("s", "Time stamp on the camera clock: `t_gt + time_offset_s` + jitter."),
    "t_gt": ("s", "True instant of the capture on the robot clock."),
    "base_ee_gt": ("m, -", "True flange pose at `t_gt` (synchronisation oracle)."),
    "cam_target_gt": ("m, -", "True pose `T_cam_target` of the observed reference in the camera frame."),
    "cam_target_meas": ("m, -", "Measured `T_cam_target`; NaN where there is no measurement (e.g. target out "
                        "of view under the `pnp` model)."),
    "visible": ("-", "The target is visible according to the camera and target model."),
    "outlier": ("-", "The measurement of this frame was replaced by an outlier."),
    "n_points": ("-", "Target points projected inside the image."),
    "depth_m": ("m", "Depth of the target centre along the optical axis."),
    "view_angle_deg": ("deg", "Angle between the target normal and the line of sight."),
    "reproj_rmse_px": ("px", "Reprojection RMSE of the PnP estimate (`pnp` model only, NaN otherwise)."),
}  # fmt: skip


def column_rows(schema, docs: dict) -> list[list[str]]:
    """Table rows (column, unit, meaning) of ``schema``; a pose's seven columns share one row."""
    rows, seen = [], set()
    names = list(schema.names)
    for name in names:
        if name in seen:
            continue
        prefix = None
        for p in docs:
            cols = [f"{p}_{s}" for s in POSE_SUFFIXES]
            if name == cols[0] and all(c in names for c in cols):
                prefix = p
        if prefix is not None:
            cols = [f"{prefix}_{s}" for s in POSE_SUFFIXES]
            seen.update(cols)
            unit, text = docs[prefix]
            rows.append([", ".join(f"`{c}`" for c in cols), unit, text])
            continue
        seen.add(name)
        unit, text = docs.get(name, ("-", "(undocumented)"))
        rows.append([f"`{name}`", unit, text])
    return rows
