"""The forms a user pastes into a robot stack: OpenCV YAML, ROS static transform, URDF origin.

All take poses ``T_parent_child`` (4x4, metres): the child frame's pose in the
parent frame, which is what ``static_transform_publisher`` and a URDF joint
``<origin>`` expect (parent = the joint's parent link).
"""

from __future__ import annotations

import numpy as np

from kinhec.calibrate.result import quat_xyzw

__all__ = ["opencv_yaml", "ros_static_transform", "urdf_origin", "rpy_from_matrix"]


def _g(v: float) -> str:
    return f"{float(v):.17g}"


def _cv_matrix(name: str, M) -> list[str]:
    M = np.atleast_2d(np.asarray(M, dtype=float))
    data = ", ".join(_g(v) for v in M.ravel())
    return [f"{name}: !!opencv-matrix", f"   rows: {M.shape[0]}", f"   cols: {M.shape[1]}", "   dt: d",
            f"   data: [ {data} ]"]


def opencv_yaml(result) -> str:
    """``cv::FileStorage`` YAML of a :class:`~kinhec.calibrate.result.CalibrationResult`.

    Holds ``X`` and ``Y`` under their names (e.g. ``T_ee_cam``), their standard
    deviations (rotation [rad], translation [m]), the clock offset [s] and scale,
    for a rig every camera->camera transform, and for a calibration from corners
    or images the camera's ``camera_matrix`` and ``distortion_coefficients``
    (``k1 k2 p1 p2 k3``, OpenCV's names and order).
    """
    lines = ["%YAML:1.0", "---"]
    lines += _cv_matrix(result.X_name, result.X)
    lines += _cv_matrix(result.X_name + "_std", result.X_std)
    if result.Y is not None:
        lines += _cv_matrix(result.Y_name, result.Y)
        lines += _cv_matrix(result.Y_name + "_std", result.Y_std)
    if result.time_offset_s is not None:
        lines.append(f"time_offset_s: {_g(result.time_offset_s)}")
    if result.scale is not None:
        lines.append(f"scale: {_g(result.scale)}")
    lines.append(f"n_pairs: {int(result.n_pairs)}")
    k = result.inputs.get("intrinsics")
    if k is not None and len(k) == 9:  # a calibration from corners or images: the camera too
        lines += _cv_matrix("camera_matrix", [[k[0], 0.0, k[2]], [0.0, k[1], k[3]], [0.0, 0.0, 1.0]])
        lines += _cv_matrix("distortion_coefficients", [k[4:9]])
    if result.rig is not None:
        for k, T in result.rig.cam_T_cam.items():
            lines += _cv_matrix(k, T)
    return "\n".join(lines) + "\n"


def ros_static_transform(T, parent: str, child: str) -> str:
    """ROS 2 ``static_transform_publisher`` command publishing ``T_parent_child``.

    Returns one line (``ros2 run tf2_ros static_transform_publisher --x ... --frame-id parent
    --child-frame-id child``); the ROS 1 argument order ``x y z qx qy qz qw parent child`` follows
    from the same numbers.
    """
    x, y, z = (float(v) for v in np.asarray(T)[:3, 3])
    qx, qy, qz, qw = quat_xyzw(np.asarray(T))
    return (f"ros2 run tf2_ros static_transform_publisher --x {x:.9g} --y {y:.9g} --z {z:.9g} "
            f"--qx {qx:.9g} --qy {qy:.9g} --qz {qz:.9g} --qw {qw:.9g} --frame-id {parent} --child-frame-id {child}")


def rpy_from_matrix(R) -> tuple[float, float, float]:
    """URDF roll, pitch, yaw [rad]: ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (fixed axes x, y, z)."""
    R = np.asarray(R, dtype=float)
    pitch = float(np.arcsin(np.clip(-R[2, 0], -1.0, 1.0)))
    if abs(R[2, 0]) < 1 - 1e-12:
        roll = float(np.arctan2(R[2, 1], R[2, 2]))
        yaw = float(np.arctan2(R[1, 0], R[0, 0]))
    else:  # gimbal lock: put everything in yaw
        roll = 0.0
        yaw = float(np.arctan2(-R[0, 1], R[1, 1]))
    return roll, pitch, yaw


def urdf_origin(T) -> str:
    """``<origin xyz="x y z" rpy="roll pitch yaw"/>`` of ``T_parent_child`` (metres, radians)."""
    T = np.asarray(T, dtype=float)
    r, p, y = rpy_from_matrix(T[:3, :3])
    x, yy, z = T[:3, 3]
    return f'<origin xyz="{x:.9g} {yy:.9g} {z:.9g}" rpy="{r:.9g} {p:.9g} {y:.9g}"/>'
