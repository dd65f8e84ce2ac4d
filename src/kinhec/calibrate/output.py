"""The forms a user pastes into a robot stack: OpenCV YAML, ROS static transform, URDF origin, ROS 2 launch file.

All take poses ``T_parent_child`` (4x4, metres): the child frame's pose in the
parent frame, which is what ``static_transform_publisher`` and a URDF joint
``<origin>`` expect (parent = the joint's parent link).

Which transform a robot stack publishes (:func:`ros_transforms`): the sensor's
mount, ``X = T_ee_cam`` eye-in-hand and for every camera of a rig,
``Y = T_base_cam`` eye-to-hand; the other one (the target in the base, the
marker on the flange) is offered but not published, since the target or marker
frame usually has a parent already (the detector's).  Frame names are the
recording's when it names them (ROS bags, ``inputs["frames"]``), else kinhec's
(``ee``, ``cam``, ...).  When the camera frame hangs below a static subtree in
the recording (a driver's ``camera_link`` -> ``camera_optical``), the root of
that subtree is published instead, so that no frame gets a second parent.
"""

from __future__ import annotations

import json
import re

import numpy as np

from kinhec import __version__
from kinhec.geometry import se3

__all__ = ["quat_xyzw", "opencv_yaml", "ros_static_transform", "urdf_origin", "rpy_from_matrix", "ros_transforms", "ros2_launch"]


def quat_xyzw(T: np.ndarray) -> list[float]:
    """Quaternion ``[qx, qy, qz, qw]`` (scalar last, ``qw >= 0``) of the rotation of ``T``."""
    q = se3.quaternion_from_matrix(T[:3, :3], check=False)  # w, x, y, z with w >= 0
    return [float(q[1]), float(q[2]), float(q[3]), float(q[0])]


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
    if k is not None and len(k) in (9, 12):  # a calibration from corners or images: the camera too (a pinhole, or
        # OpenCV's rational model with its eight coefficients)
        lines += _cv_matrix("camera_matrix", [[k[0], 0.0, k[2]], [0.0, k[1], k[3]], [0.0, 0.0, 1.0]])
        lines += _cv_matrix("distortion_coefficients", [k[4:]])
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


def _frames(result) -> dict:
    """``{"X": [parent, child], "Y": [...], "mount": ...}``: the recording's names, else kinhec's."""
    given = (result.inputs or {}).get("frames") if isinstance(result.inputs, dict) else None
    if given:
        return given
    out = {"X": result.X_name.split("_", 2)[1:], "Y": None, "mount": None}
    if result.Y is not None:
        out["Y"] = result.Y_name.split("_", 2)[1:]
    return out


def _entry(T, parent, child, label, publish, mount=None) -> dict:
    note = ""
    if mount:
        top, T_top_cam = mount["frame"], np.asarray(mount["T_frame_sensor"], dtype=float)
        note = (f"{child} hangs below {top} in the recording (static transforms): {top} is published, so that "
                f"{child} keeps its one parent")
        T = np.asarray(T) @ se3.invert_transform(T_top_cam, check=False)
        child = top
    return {"T": np.asarray(T, dtype=float), "parent": str(parent), "child": str(child), "label": label,
            "publish": publish, "note": note}


def ros_transforms(result) -> list[dict]:
    """The static transforms of a :class:`~kinhec.calibrate.result.CalibrationResult` for a robot stack.

    Returns
    -------
    list of dict
        ``T`` (``T_parent_child``, 4x4, metres), ``parent``, ``child``,
        ``label`` (``X`` or ``Y`` and its name), ``publish`` (True for the
        sensor's mount, False for the other transform) and ``note`` (why the
        child differs from the camera frame, when it does).
    """
    if result.rig is not None:
        out = []
        given = (result.inputs or {}).get("camera_frames") or {}
        for k, r in result.rig.per_camera.items():
            f = given.get(k) or _frames(r)
            parent, child = f["X"][0], (f["X"][1] if k in given else k)
            X = result.rig.X.get(k, r.X)  # the rig's X: the joint fit's when the cameras were solved jointly
            out.append(_entry(X, parent, child, f"X of {k} ({r.X_name})", True, f.get("mount")))
        first = {}
        for e in out:  # cameras joined by static transforms in the recording (a stereo driver) reach one frame
            k = (e["parent"], e["child"])
            if k in first:
                rot, tr = se3.pose_error(e["T"], first[k]["T"])
                e["publish"] = False
                e["note"] = (f"{e['note']}; " if e["note"] else "") + (
                    f"{e['child']} is published once, from {first[k]['label']}; this camera puts it "
                    f"{float(rot):.3g} deg / {float(tr):.3g} mm away")
            else:
                first[k] = e
        return out
    f = _frames(result)
    X = (result.X, *f["X"], f"X ({result.X_name})")
    Y = (result.Y, *(f["Y"] or ("", "")), f"Y ({result.Y_name})")
    sensor, other = (Y, X) if result.setup == "eye_to_hand" else (X, Y)
    out = [_entry(*sensor, True, f.get("mount"))]
    if other[0] is not None:
        out.append(_entry(*other, False))
    return out


def _node_lines(e: dict) -> list[str]:
    x, y, z = (float(v) for v in e["T"][:3, 3])
    qx, qy, qz, qw = quat_xyzw(e["T"])
    name = re.sub(r"\W", "_", f"kinhec_{e['parent']}_to_{e['child']}")
    q = json.dumps  # a double-quoted Python string literal
    args = [("--x", x), ("--y", y), ("--z", z), ("--qx", qx), ("--qy", qy), ("--qz", qz), ("--qw", qw)]
    return [
        "Node(",
        '    package="tf2_ros",',
        '    executable="static_transform_publisher",',
        f"    name={q(name)},",
        "    arguments=[",
        *(f"        {q(k)}, {q(_g(v))}," for k, v in args),
        f'        "--frame-id", {q(e["parent"])}, "--child-frame-id", {q(e["child"])},',
        "    ],",
        "),",
    ]


def ros2_launch(result) -> str:
    """A ROS 2 launch file (Python) publishing the result with ``tf2_ros static_transform_publisher``.

    One node per published transform of :func:`ros_transforms`, with the
    flag arguments of ROS 2 Humble and later (``--x --y --z --qx --qy --qz
    --qw --frame-id --child-frame-id``; the positional form is deprecated
    there); the transform that is not published is written as a commented-out
    node.  Numbers carry 17 significant digits.

    Returns
    -------
    str
        The file's text (``ros2 launch FILE`` runs it).
    """
    entries = ros_transforms(result)
    sd = np.concatenate([np.degrees(result.X_std[:3]), 1000 * result.X_std[3:]])
    head = [
        f'"""Hand-eye calibration by kinhec {__version__}: static transforms for tf2 (ROS 2 Humble and later).',
        "",
        f"Setup {result.setup}; {result.n_pairs} pairs, {len(result.outliers)} outlier(s).",
        f"X = {result.X_name}: 1 sigma rotation [deg] {' '.join(f'{v:.3g}' for v in sd[:3])}, translation [mm] "
        f"{' '.join(f'{v:.3g}' for v in sd[3:])}.",
    ]
    if result.time_offset_s is not None:
        std = f" +- {1000 * result.time_offset_std_s:.3g}" if result.time_offset_std_s is not None else " (fixed)"
        head.append(f"Clock offset {1000 * result.time_offset_s:.4g}{std} ms (eye stamp = hand time + offset).")
    inputs = result.inputs if isinstance(result.inputs, dict) else {}
    if inputs.get("hand") or inputs.get("eye"):
        head.append(f"From {inputs.get('hand')} and {', '.join(map(str, inputs.get('eye') or []))}.")
    for e in entries:
        if e["note"]:
            head.append(f"{e['label']}: {e['note']}.")
    head += ["", "Run: ros2 launch THIS_FILE", '"""', "", "from launch import LaunchDescription",
             "from launch_ros.actions import Node", "", "", "def generate_launch_description():",
             "    return LaunchDescription(["]
    body = []
    for e in entries:
        body.append(f"        # {e['label']}: {e['parent']} -> {e['child']}")
        if e["publish"]:
            body += [f"        {line}" for line in _node_lines(e)]
        else:
            body.append("        # not published (its child frame usually has a parent already); uncomment to use:")
            body += [f"        # {line}" for line in _node_lines(e)]
    return "\n".join(head + body + ["    ])", ""])
