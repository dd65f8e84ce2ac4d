"""3D scene of a sequence in the robot base frame: arm, flange path, camera frustums, observed reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kinhec.models.cameras import get_camera, get_target
from kinhec.util.errors import InputError, KinhecError
from kinhec.io import Sequence
from kinhec.models.robots import get_robot
from kinhec.report.viz import _style

__all__ = ["plot_scene", "board_outline", "add_polygon", "transform_points"]

_ARM_COLOR = "#555555"
_PATH_COLOR = "#4c72b0"
_CAM_COLOR = "#8c2d8c"
_REF_COLOR = "#e69f00"


def check_sequence(seq, name: str = "seq") -> Sequence:
    """Raise unless ``seq`` is a loaded :class:`kinhec.io.Sequence`."""
    if not isinstance(seq, Sequence):
        raise InputError(f"{name}: expected a kinhec.io.Sequence (load_sequence), got {type(seq).__name__}")
    return seq


def _evenly(idx: np.ndarray, k: int) -> np.ndarray:
    if idx.size <= k:
        return idx
    return idx[np.unique(np.round(np.linspace(0, idx.size - 1, k)).astype(int))]


def camera_geometry(seq: Sequence) -> tuple[float, float, float]:
    """``(width_px, height_px, f_px)`` of the sequence's camera (preset, else the recipe)."""
    try:
        cam = get_camera(str(seq.info.get("camera")))
        return float(cam.width_px), float(cam.height_px), float(cam.f_px)
    except KinhecError:
        c = seq.extra.get("camera_intrinsics") or {}
        return float(c.get("width", 1280)), float(c.get("height", 720)), float(c.get("fx", 920))


def target_points(seq: Sequence) -> tuple[np.ndarray, float]:
    """Target points ``(P, 3)`` [m] in the target frame and the point pitch [m] (preset, else the recipe)."""
    try:
        tgt = get_target(str(seq.info.get("target")))
        return tgt.points_m, float(tgt.pitch_m)
    except KinhecError:
        t = seq.extra.get("target") or {}
        cols, rows, pitch = int(t.get("cols", 2)), int(t.get("rows", 2)), float(t.get("spacing_m", 0.04))
        x = (np.arange(cols) - 0.5 * (cols - 1)) * pitch
        y = (0.5 * (rows - 1) - np.arange(rows)) * pitch
        X, Y = np.meshgrid(x, y)
        return np.stack([X.ravel(), Y.ravel(), np.zeros(X.size)], axis=-1), pitch


def board_outline(points: np.ndarray, pitch: float) -> np.ndarray:
    lo = points[:, :2].min(axis=0) - 0.5 * pitch
    hi = points[:, :2].max(axis=0) + 0.5 * pitch
    return np.array([[lo[0], lo[1], 0.0], [hi[0], lo[1], 0.0], [hi[0], hi[1], 0.0], [lo[0], hi[1], 0.0]])


def transform_points(T: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Points ``p`` (P, 3) under poses ``T`` (N, 4, 4) -> (N, P, 3)."""
    return p @ T[:, :3, :3].transpose(0, 2, 1) + T[:, None, :3, 3]


def plot_scene(seq: Sequence, path, *, n_cameras: int = 12) -> Path:
    """A sequence in the robot base frame: arm, flange path, camera frustums and the observed reference.

    Eye-in-hand: the camera rides on the flange (``T_base_cam = T_base_ee X``)
    and looks at the static reference ``Y = T_base_world`` (calibration board,
    or the visual-odometry origin of monocular sequences).  Eye-to-hand: the
    camera is static at ``Y = T_base_cam`` and looks at the marker on the
    flange (``T_base_marker = T_base_ee X``).  Everything is drawn from the
    ground truth.

    Parameters
    ----------
    seq : kinhec.io.Sequence
        The sequence.
    path : str or Path
        PNG file to write.
    n_cameras : int
        Camera frames drawn (evenly spread over the frames with the target in view).

    Returns
    -------
    Path
    """
    seq = check_sequence(seq)
    sid = seq.sequence_id
    robot_name = str(seq.info.get("robot"))
    eye_in_hand = seq.configuration == "eye_in_hand"
    vo = str(seq.info.get("world_frame")) == "vo_origin"
    w_px, h_px, f_px = camera_geometry(seq)
    pts_target, pitch = target_points(seq)

    flange = seq.robot.T_base_ee_gt[:, :3, 3]
    cam = seq.camera
    seen = np.flatnonzero(cam.visible | cam.has_measurement)
    if seen.size == 0:
        seen = np.arange(len(cam))
    sel = _evenly(seen, n_cameras)
    T_base_ee_sel = cam.T_base_ee_gt[sel]
    cloud = [flange, np.zeros((1, 3))]

    with _style.rc_context():
        fig = _style.new_figure(10.0, 8.0, constrained=False)
        fig.subplots_adjust(left=0.0, right=0.97, bottom=0.0, top=0.93)
        ax = fig.add_subplot(projection="3d")

        # arm at a few configurations (first solid, the others ghosted)
        try:
            robot = get_robot(robot_name)
        except KinhecError:
            robot = None
        arm_drawn = False
        if robot is not None and not robot.is_free and seq.robot.dof == robot.dof and len(seq.robot):
            rows = np.unique(np.round(np.linspace(0, len(seq.robot) - 1, 3)).astype(int))
            F = robot.joint_frames(seq.robot.q_gt[rows])[:, :, :3, 3]
            for k, p in enumerate(F):
                ax.plot(p[:, 0], p[:, 1], p[:, 2], color=_ARM_COLOR, lw=3.5 if k == 0 else 2.0,
                        alpha=0.95 if k == 0 else 0.3, solid_capstyle="round")  # fmt: skip
                ax.scatter(p[:-1, 0], p[:-1, 1], p[:-1, 2], color="#f28e2b", s=14 if k == 0 else 6,
                           alpha=1.0 if k == 0 else 0.35, depthshade=False)  # fmt: skip
            cloud.append(F.reshape(-1, 3))
            arm_drawn = True

        stations = str(seq.info.get("sampling_mode")) == "stations"
        if stations:  # the stream holds the dwell instants only: no path in between
            ax.plot(flange[:, 0], flange[:, 1], flange[:, 2], "o--", color=_PATH_COLOR, lw=0.8, ms=4)
        else:
            ax.plot(flange[:, 0], flange[:, 1], flange[:, 2], color=_PATH_COLOR, lw=1.5)
        extent = float(np.ptp(np.vstack(cloud), axis=0).max()) if len(flange) > 1 else 0.5
        extent = max(extent, 0.2)

        # camera(s) and the observed reference
        if eye_in_hand:
            T_base_cam = T_base_ee_sel @ seq.X
            depth = float(np.clip(0.1 * extent, 0.03, 0.15))
            if vo:
                _style.draw_triad(ax, seq.Y, 0.12 * extent, lw=2.5)
                ref_pts = seq.Y[None, :3, 3]
                ref_center = seq.Y[:3, 3]
            else:
                corners = transform_points(seq.Y[None], board_outline(pts_target, pitch))[0]
                add_polygon(ax, corners, _REF_COLOR)
                bp = transform_points(seq.Y[None], pts_target)[0]
                ax.scatter(bp[:, 0], bp[:, 1], bp[:, 2], color="k", s=2, depthshade=False)
                ref_pts = corners
                ref_center = seq.Y[:3, 3]
            sight_from = T_base_cam[:, :3, 3]
            sight_to = np.broadcast_to(ref_center, sight_from.shape)
        else:
            T_base_cam = seq.Y[None]
            centre = flange.mean(axis=0) if len(flange) else seq.Y[:3, 3] + seq.Y[:3, 2]
            depth = float(np.clip(0.3 * np.linalg.norm(centre - seq.Y[:3, 3]), 0.05, 0.4))
            T_base_marker = T_base_ee_sel @ seq.X
            outline = transform_points(T_base_marker, board_outline(pts_target, pitch))
            for c in outline:
                add_polygon(ax, c, _REF_COLOR)
            ref_pts = outline.reshape(-1, 3)
            sight_to = T_base_marker[:, :3, 3]
            sight_from = np.broadcast_to(seq.Y[:3, 3], sight_to.shape)
        seg = _style.frustum_segments(T_base_cam, w_px, h_px, f_px, depth)
        ax.plot(*_style.polyline_nan(seg), color=_CAM_COLOR, lw=1.0)
        if not eye_in_hand:
            _style.draw_triad(ax, T_base_cam, 0.6 * depth, lw=1.2)
        vis = cam.visible[sel] & (not (vo and eye_in_hand))  # a VO origin is not observed like a board
        if vis.any():
            los = np.stack([sight_from[vis], sight_to[vis]], axis=1)
            ax.plot(*_style.polyline_nan(los), color=_CAM_COLOR, lw=0.6, ls=":", alpha=0.6)
        _style.draw_triad(ax, np.eye(4), 0.15 * extent, lw=2.0)
        _style.draw_triad(ax, T_base_ee_sel, 0.05 * extent, lw=0.8, alpha=0.7)

        cloud += [seg.reshape(-1, 3), ref_pts.reshape(-1, 3)]
        _style.box_aspect_3d(ax, np.vstack(cloud), pad=0.04, zoom=0.9)
        _style.few_ticks_3d(ax, 6)
        ax.view_init(elev=22, azim=-60)
        ax.set_xlabel("x (base) [m]")
        ax.set_ylabel("y (base) [m]")
        ax.set_zlabel("z (base) [m]")

        if eye_in_hand:
            ref_label = "VO origin (world frame)" if vo else f"calibration board ({seq.info.get('target')})"
            cam_label = f"camera frustums on the flange ({len(sel)} frames)"
        else:
            ref_label = f"marker on the flange ({seq.info.get('target')}, {len(sel)} frames)"
            cam_label = "static camera frustum"
        specs = []
        if arm_drawn:
            specs.append((f"arm {robot_name} (first frame; later frames faded)", dict(color=_ARM_COLOR, lw=3)))
        if stations:
            specs.append((f"flange at the {len(flange)} stations (in capture order)",
                          dict(color=_PATH_COLOR, lw=0.8, ls="--", marker="o", ms=4)))  # fmt: skip
        else:
            specs.append((f"flange path ({len(flange)} robot frames)", dict(color=_PATH_COLOR, lw=1.5)))
        specs += [
            (cam_label, dict(color=_CAM_COLOR, lw=1.0)),
        ]
        if vis.any():
            specs.append(("line of sight (target visible)", dict(color=_CAM_COLOR, lw=0.8, ls=":")))
        if vo and eye_in_hand:
            specs.append((ref_label, dict(color="k", lw=2.5)))
        else:
            specs.append((ref_label, dict(color=_REF_COLOR, lw=6, alpha=0.6)))
        frames = "base, flange" if eye_in_hand else "base, flange, camera"
        specs += [(f"{a} axis of {frames} frames", dict(color=c, lw=1.5))
                  for a, c in zip("xyz", _style.XYZ_COLORS)]  # fmt: skip
        ax.legend(handles=_style.legend_handles(specs), loc="upper left", fontsize=7.5)
        cfg = "eye-in-hand" if eye_in_hand else "eye-to-hand"
        ax.set_title(
            f"Scene of {sid} in the robot base frame\n{robot_name}, {cfg}, {seq.info.get('family')} "
            f"({seq.info.get('sampling_mode')}), level {seq.info.get('level')}"
        )
        return _style.save(fig, path)


def add_polygon(ax, corners: np.ndarray, color: str) -> None:
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    ax.add_collection3d(Poly3DCollection([corners], facecolor=color, edgecolor="k", linewidths=0.6, alpha=0.55))
