"""Figures of one sequence over time: the two streams, the injected errors, the PnP image plane, the clock offset."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kinhec.geometry import se3
from kinhec.models.cameras import CameraPreset, project_points
from kinhec.util.errors import InputError, KinhecError
from kinhec.io import Sequence
from kinhec.solvers import estimate_time_offset
from kinhec.report.viz import _style
from kinhec.report.viz.scene import camera_geometry, check_sequence, target_points

__all__ = ["plot_streams", "plot_errors", "plot_pnp_image", "plot_time_offset"]

_MAX_MARKERS = 600


def _num(info, key: str) -> float:
    v = info.get(key)
    try:
        v = float(v)
    except (TypeError, ValueError):
        return float("nan")
    return v


def _rotvec_deg(R_ref: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Rotation vectors [deg] of ``R_ref^T R``; ``R`` (N, 3, 3), ``R_ref`` (3, 3) or (N, 3, 3); NaN rows stay NaN."""
    out = np.full(R.shape[:-2] + (3,), np.nan)
    ok = np.isfinite(R).all(axis=(-2, -1))
    if R_ref.ndim == 3:
        ok &= np.isfinite(R_ref).all(axis=(-2, -1))
    if ok.any():
        ref = R_ref[ok] if R_ref.ndim == 3 else R_ref
        out[ok] = np.degrees(se3.so3_log(np.swapaxes(ref, -1, -2) @ R[ok], check=False))
    return out


def _thin(n: int) -> np.ndarray:
    """Row indices, at most ``_MAX_MARKERS`` evenly spread, for marker plots of long streams."""
    return np.arange(n) if n <= _MAX_MARKERS else np.unique(np.linspace(0, n - 1, _MAX_MARKERS).astype(int))


def _describe(seq: Sequence) -> str:
    cfg = "eye-in-hand" if seq.configuration == "eye_in_hand" else "eye-to-hand"
    return (f"{seq.info.get('robot')}, {cfg}, {seq.info.get('family')} ({seq.info.get('sampling_mode')}), "
            f"level {seq.info.get('level')}")  # fmt: skip


def _shade_missing(ax, t: np.ndarray, missing: np.ndarray) -> bool:
    if t.size == 0 or not missing.any():
        return False
    ax.fill_between(t, 0, 1, where=missing, step="mid", transform=ax.get_xaxis_transform(),
                    color="#999999", alpha=0.18, lw=0)  # fmt: skip
    return True


# --------------------------------------------------------------------------- #
# the two streams over time
# --------------------------------------------------------------------------- #
def _stream_panel(ax, t, gt, meas, *, marker_rows, outlier=None, style_gt="-") -> None:
    for k in range(3):
        c = _style.XYZ_COLORS[k]
        ax.plot(t, gt[:, k], style_gt, color=c, lw=1.3)
        r = marker_rows
        ax.plot(t[r], meas[r, k], ".", color=c, ms=3.0, alpha=0.75)
        if outlier is not None and outlier.any():
            ax.plot(t[outlier], meas[outlier, k], "x", color="k", ms=6, mew=1.3)


def plot_streams(seq: Sequence, path) -> Path:
    """The robot and the camera stream of a sequence over time, each on its own clock.

    Top: flange pose ``T_base_ee`` against the robot-clock stamps; bottom:
    ``T_cam_target`` against the camera-clock stamps.  Positions [m] and
    rotations (rotation vector relative to the first true pose [deg]); lines
    are the ground truth, dots the measurements.

    Parameters
    ----------
    seq : kinhec.io.Sequence
    path : str or Path
        PNG file to write.

    Returns
    -------
    Path
    """
    seq = check_sequence(seq)
    rb, cm = seq.robot, seq.camera
    with _style.rc_context():
        fig = _style.new_figure(14.0, 8.5)
        axes = fig.subplots(2, 2, sharex="row")
        station = str(seq.info.get("sampling_mode")) == "stations"
        gstyle = ".-" if station else "-"

        rows = _thin(len(rb))
        _stream_panel(axes[0, 0], rb.t, rb.T_base_ee_gt[:, :3, 3], rb.T_base_ee_meas[:, :3, 3], marker_rows=rows,
                      style_gt=gstyle)  # fmt: skip
        if len(rb):
            R0 = rb.T_base_ee_gt[0, :3, :3]
            _stream_panel(axes[0, 1], rb.t, _rotvec_deg(R0, rb.T_base_ee_gt[:, :3, :3]),
                          _rotvec_deg(R0, rb.T_base_ee_meas[:, :3, :3]), marker_rows=rows, style_gt=gstyle)  # fmt: skip
        rate = _num(seq.info, "robot_rate_hz")
        # a synchronous sequence's robot_rate_hz is its controller's rate; its stream holds the camera instants
        rate_txt = f", {rate:g} Hz" if np.isfinite(rate) and str(seq.info.get("sync")) == "asynchronous" else ""
        axes[0, 0].set_title(f"robot stream: flange position in the base frame ({len(rb)} frames{rate_txt})")
        axes[0, 1].set_title("robot stream: flange rotation relative to the first true pose")

        has = cm.has_measurement
        rows = _thin(len(cm))
        out = cm.outlier & has
        scale_note = ""
        if abs(seq.scale - 1.0) > 1e-12:
            scale_note = f"; measured translation carries the monocular scale {seq.scale:g}"
        _stream_panel(axes[1, 0], cm.t, cm.T_cam_target_gt[:, :3, 3], cm.T_cam_target_meas[:, :3, 3],
                      marker_rows=rows, outlier=out, style_gt=gstyle)  # fmt: skip
        if len(cm):
            R0 = cm.T_cam_target_gt[0, :3, :3]
            _stream_panel(axes[1, 1], cm.t, _rotvec_deg(R0, cm.T_cam_target_gt[:, :3, :3]),
                          _rotvec_deg(R0, cm.T_cam_target_meas[:, :3, :3]), marker_rows=rows, outlier=out,
                          style_gt=gstyle)  # fmt: skip
        shaded = False
        for ax in axes[1]:
            shaded = _shade_missing(ax, cm.t, ~has | ~cm.visible) or shaded
        rate = _num(seq.info, "camera_rate_hz")
        rate_txt = f", {rate:g} Hz" if np.isfinite(rate) else ""
        axes[1, 0].set_title(f"camera stream: reference position in the camera frame ({len(cm)} frames{rate_txt})"
                             + ("" if not scale_note else "\n" + scale_note[2:]))  # fmt: skip
        axes[1, 1].set_title("camera stream: reference rotation relative to the first true pose")

        for ax in axes[0]:
            ax.set_xlabel("robot-clock time stamp t [s]")
        for ax in axes[1]:
            ax.set_xlabel("camera-clock time stamp t [s]")
        axes[0, 0].set_ylabel("position p_base_ee [m]")
        axes[0, 1].set_ylabel("rotation vector [deg]")
        axes[1, 0].set_ylabel("position p_cam_target [m]")
        axes[1, 1].set_ylabel("rotation vector [deg]")

        specs = [(f"{a} component", dict(color=c, lw=2)) for a, c in zip("xyz", _style.XYZ_COLORS)]
        specs += [("ground truth", dict(color="k", lw=1.3, ls="-")),
                  ("measurement", dict(color="k", marker=".", ls="none", ms=6))]  # fmt: skip
        if out.any():
            specs.append((f"outlier measurement ({int(out.sum())} frames)", dict(color="k", marker="x", ls="none")))
        if shaded:
            specs.append(("target not visible (visible = False) or no measurement",
                          dict(color="#999999", lw=8, alpha=0.35)))  # fmt: skip
        fig.legend(handles=_style.legend_handles(specs), loc="outside lower center", ncols=len(specs))
        clocks = "shared clock"
        if not seq.is_synchronous:
            clocks = f"asynchronous clocks, true offset {seq.time_offset * 1e3:g} ms"
        fig.suptitle(f"Streams of {seq.sequence_id} ({clocks})\n{_describe(seq)}")
        return _style.save(fig, path)


# --------------------------------------------------------------------------- #
# injected measurement errors
# --------------------------------------------------------------------------- #
def _robot_errors(seq: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """Flange-frame error of the reported pose: rotation [deg] and translation [mm], each (N, 3)."""
    T_gt, T_meas = seq.robot.T_base_ee_gt, seq.robot.T_base_ee_meas
    ok = np.isfinite(T_meas).all(axis=(1, 2))
    rot = np.full((len(T_gt), 3), np.nan)
    trans = np.full((len(T_gt), 3), np.nan)
    if ok.any():
        E = se3.invert_transform(T_gt[ok], check=False) @ T_meas[ok]  # T_meas = T_gt E
        rot[ok] = np.degrees(se3.so3_log(E[:, :3, :3], check=False))
        trans[ok] = 1e3 * E[:, :3, 3]
    return rot, trans


def _camera_scale(seq: Sequence) -> np.ndarray:
    n = len(seq.camera)
    s = seq.extra.get("scale_per_frame") if isinstance(seq.extra, dict) else None
    if s is not None:
        s = np.asarray(s, dtype=float).ravel()
        if s.shape == (n,) and np.isfinite(s).all() and (s > 0).all():
            return s
    return np.full(n, seq.scale)


def _camera_errors(seq: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """Camera-measurement error: rotation in the target frame [deg] and translation in the camera frame [mm]."""
    cm = seq.camera
    rot = _rotvec_deg(cm.T_cam_target_gt[:, :3, :3], cm.T_cam_target_meas[:, :3, :3])
    trans = 1e3 * (cm.T_cam_target_meas[:, :3, 3] / _camera_scale(seq)[:, None] - cm.T_cam_target_gt[:, :3, 3])
    return rot, trans


def _err_panel(ax, t, err, unit, *, exclude=None, nominal=None, station=False) -> None:
    """Components of an error over time, robust y-limits, outliers clipped to the frame."""
    err = np.asarray(err, dtype=float)
    inl = np.isfinite(err).all(axis=1)
    if exclude is not None:
        inl &= ~exclude
    style = ".-" if station or inl.sum() < 80 else "-"
    for k in range(3):
        v = err[inl, k]
        sd = float(np.std(v)) if v.size > 1 else float("nan")
        ax.plot(t[inl], v, style, color=_style.XYZ_COLORS[k], lw=0.9, ms=3,
                label=f"{'xyz'[k]}: std {sd:.3g} {unit}")  # fmt: skip
    vals = err[inl]
    lim = float(np.nanmax(np.abs(vals))) if vals.size else 1.0
    if nominal is not None:
        for sd, label, color in nominal:
            if np.isfinite(sd) and sd > 0:
                ax.axhline(sd, color=color, ls="--", lw=1.0, label=label)
                ax.axhline(-sd, color=color, ls="--", lw=1.0)
                lim = max(lim, 1.05 * sd)
    lim = 1.15 * lim if lim > 0 else 1.0
    if exclude is not None and (exclude & np.isfinite(err).all(axis=1)).any():
        o = exclude & np.isfinite(err).all(axis=1)
        for k in range(3):
            ax.plot(t[o], np.clip(err[o, k], -lim * 0.97, lim * 0.97), "x", color=_style.XYZ_COLORS[k], ms=6, mew=1.3,
                    label=f"outlier ({int(o.sum())} frames, clipped)" if k == 0 else None)  # fmt: skip
    ax.set_ylim(-lim, lim)
    ax.axhline(0.0, color="k", lw=0.6)
    ax.legend(loc="upper right", fontsize=7, ncols=2)


def plot_errors(seq: Sequence, path) -> Path:
    """The measurement errors injected into a sequence, per component.

    Robot: error of the reported flange pose in the flange frame,
    ``E = inv(T_gt) T_meas`` (rotation vector [deg], translation [mm]);
    encoder errors per joint [deg] when the joint readings are noisy.
    Camera: rotation error in the target frame (``R_gt^T R_meas``) [deg]
    and translation error in the camera frame (monocular sequences: after
    dividing by the true scale) [mm].  Dashed lines are the nominal
    standard deviations of the sequence's noise level; outliers are
    excluded from the statistics and drawn clipped.

    Parameters
    ----------
    seq : kinhec.io.Sequence
    path : str or Path
        PNG file to write.

    Returns
    -------
    Path
    """
    seq = check_sequence(seq)
    info, rb, cm = seq.info, seq.robot, seq.camera
    station = str(info.get("sampling_mode")) == "stations"
    dq = rb.q_meas - rb.q_gt if rb.dof else np.zeros((len(rb), 0))
    joint_row = rb.dof > 0 and np.nanmax(np.abs(dq), initial=0.0) > 0
    nrows = 3 if joint_row else 2
    with _style.rc_context():
        fig = _style.new_figure(14.0, 4.0 * nrows + 0.8)
        axes = fig.subplots(nrows, 2)
        r_rot, r_tr = _robot_errors(seq)
        robot_models = str(info.get("robot_noise_models"))
        se3_robot = "se3_gaussian" in robot_models
        rs, ts = _num(info, "robot_rot_std_rad"), _num(info, "robot_trans_std_m")
        _err_panel(axes[0, 0], rb.t, r_rot, "deg", station=station,
                   nominal=[(np.degrees(rs) if se3_robot else np.nan, "nominal ±1σ", "#444444")])  # fmt: skip
        _err_panel(axes[0, 1], rb.t, r_tr, "mm", station=station,
                   nominal=[(1e3 * ts if se3_robot else np.nan, "nominal ±1σ", "#444444")])  # fmt: skip
        axes[0, 0].set_title(f"robot: flange rotation error (flange frame), noise models {robot_models}")
        axes[0, 1].set_title("robot: flange translation error (flange frame)")
        for ax in axes[0]:
            ax.set_xlabel("robot-clock time stamp t [s]")
        axes[0, 0].set_ylabel("rotation vector of inv(T_gt) T_meas [deg]")
        axes[0, 1].set_ylabel("translation of inv(T_gt) T_meas [mm]")

        c_rot, c_tr = _camera_errors(seq)
        model = str(info.get("camera_noise_model"))
        gauss = model == "se3_gaussian"
        cr, ct, ctz = (_num(info, k) for k in ("camera_rot_std_rad", "camera_trans_std_m", "camera_trans_std_z_m"))
        out = cm.outlier
        _err_panel(axes[1, 0], cm.t, c_rot, "deg", exclude=out, station=station,
                   nominal=[(np.degrees(cr) if gauss else np.nan, "nominal ±1σ", "#444444")])  # fmt: skip
        nominal = [(1e3 * ct if gauss else np.nan, "nominal ±1σ lateral (x, y)", "#444444"),
                   (1e3 * ctz if gauss else np.nan, "nominal ±1σ depth (z)", _style.XYZ_COLORS[2])]  # fmt: skip
        _err_panel(axes[1, 1], cm.t, c_tr, "mm", exclude=out, station=station, nominal=nominal)
        extra = ""
        if model == "pnp":
            extra = f", pixel noise {_style.fmt_num(_num(info, 'pixel_std'))} px + PnP"
        tdof = _num(info, "student_t_dof")
        if np.isfinite(tdof) and tdof > 0:
            extra += f", Student-t dof {tdof:g}"
        axes[1, 0].set_title(f"camera: reference rotation error (target frame), model {model}{extra}")
        scale_txt = " after removing the monocular scale" if abs(seq.scale - 1.0) > 1e-12 else ""
        axes[1, 1].set_title(f"camera: reference translation error (camera frame){scale_txt}")
        for ax in axes[1]:
            ax.set_xlabel("camera-clock time stamp t [s]")
        axes[1, 0].set_ylabel("rotation vector of R_gt^T R_meas [deg]")
        axes[1, 1].set_ylabel("p_meas - p_gt [mm]")

        if joint_row:
            ax = axes[2, 0]
            dq_deg = np.degrees(dq)
            style = ".-" if station else "-"
            cmap_colors = _joint_colors(rb.dof)
            for j in range(rb.dof):
                v = dq_deg[:, j]
                ax.plot(rb.t, v, style, lw=0.8, ms=3, color=cmap_colors[j],
                        label=f"joint {j + 1}: std {float(np.nanstd(v)):.3g} deg")  # fmt: skip
            js = _num(info, "joint_std_rad")
            if np.isfinite(js) and js > 0:
                ax.axhline(np.degrees(js), color="#444444", ls="--", lw=1.0, label="nominal ±1σ")
                ax.axhline(-np.degrees(js), color="#444444", ls="--", lw=1.0)
            ax.axhline(0.0, color="k", lw=0.6)
            ax.set_title("robot: encoder error q_meas - q_gt")
            ax.set_xlabel("robot-clock time stamp t [s]")
            ax.set_ylabel("joint error [deg]")
            ax.legend(loc="upper right", fontsize=7, ncols=2)
            ax2 = axes[2, 1]
            ax2.hist(dq_deg[np.isfinite(dq_deg).all(axis=1)].ravel(), bins=30, color="#4c72b0",
                     label=f"all joints ({rb.dof} x {len(rb)} readings)")  # fmt: skip
            ax2.set_title("robot: distribution of the encoder errors")
            ax2.set_xlabel("joint error [deg]")
            ax2.set_ylabel("readings [count]")
            ax2.legend(loc="upper right", fontsize=7)
        fig.suptitle(f"Injected measurement errors of {seq.sequence_id}\n{_describe(seq)}")
        return _style.save(fig, path)


def _joint_colors(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


# --------------------------------------------------------------------------- #
# PnP: the image plane
# --------------------------------------------------------------------------- #
def _camera_preset(seq: Sequence) -> CameraPreset:
    w, h, f = camera_geometry(seq)
    return CameraPreset(str(seq.info.get("camera")), int(w), int(h), f, w / 2.0, h / 2.0, "")


def plot_pnp_image(seq: Sequence, path, *, max_frames: int = 6) -> Path:
    """The target points in the image plane, projected with the true and with the measured pose.

    Parameters
    ----------
    seq : kinhec.io.Sequence
        Typically a ``pnp`` sequence, whose measured ``T_cam_target`` comes
        from PnP on noisy pixel coordinates.
    path : str or Path
        PNG file to write.
    max_frames : int
        Frames drawn in the image plane (evenly spread over the measured ones).

    Returns
    -------
    Path

    Raises
    ------
    InputError
        If the sequence has no camera frame with a measurement.
    """
    seq = check_sequence(seq)
    cm = seq.camera
    cam = _camera_preset(seq)
    pts, _ = target_points(seq)
    idx = np.flatnonzero(cm.has_measurement & np.isfinite(cm.T_cam_target_gt).all(axis=(1, 2)))
    if idx.size == 0:
        raise InputError(f"seq: expected a sequence with camera measurements, {seq.sequence_id!r} has none")
    uv_gt, _ = project_points(cam, cm.T_cam_target_gt[idx], pts)
    uv_meas, _ = project_points(cam, cm.T_cam_target_meas[idx], pts)
    d = uv_meas - uv_gt  # (K, P, 2)
    dist = np.linalg.norm(d, axis=-1)
    rms_frame = np.sqrt(np.nanmean(dist**2, axis=1))
    pix = _num(seq.info, "pixel_std")
    shown = idx if idx.size <= max_frames else idx[np.unique(np.linspace(0, idx.size - 1, max_frames).astype(int))]
    pos = np.searchsorted(idx, shown)
    outline = _outline_indices(pts)
    with _style.rc_context():
        from matplotlib import colormaps
        from matplotlib.patches import Circle, Rectangle

        fig = _style.new_figure(15.0, 6.2)
        axd = fig.subplot_mosaic([["img", "img", "res", "rms"]], width_ratios=[1, 1, 0.9, 1.0])
        ax = axd["img"]
        cmap = colormaps["viridis"]
        ax.add_patch(Rectangle((0, 0), cam.width_px, cam.height_px, fill=False, ec="k", lw=1.2))
        for n, (k, frame) in enumerate(zip(pos, shown)):
            c = cmap(n / max(len(shown) - 1, 1))
            ring = uv_gt[k, outline]
            ax.plot(ring[:, 0], ring[:, 1], "-", color=c, lw=0.8, alpha=0.8)
            ax.plot(uv_gt[k, :, 0], uv_gt[k, :, 1], "o", mfc="none", mec=c, ms=5, mew=0.9)
            ax.plot(uv_meas[k, :, 0], uv_meas[k, :, 1], "+", color=c, ms=5, mew=0.9)
        ax.set_xlim(-0.03 * cam.width_px, 1.03 * cam.width_px)
        ax.set_ylim(1.03 * cam.height_px, -0.03 * cam.height_px)  # image v axis points down
        ax.set_aspect("equal")
        ax.set_xlabel("u [px]")
        ax.set_ylabel("v [px]")
        ax.set_title(f"image plane of camera {cam.name} ({cam.width_px} x {cam.height_px} px, f = {cam.f_px:g} px), "
                     f"{len(shown)} of {idx.size} frames")  # fmt: skip
        ax.legend(handles=_style.legend_handles([
            ("image border", dict(color="k", lw=1.2)),
            ("target points projected with the true pose", dict(marker="o", mfc="none", mec="#444444", ls="none")),
            ("... with the measured (PnP) pose", dict(marker="+", color="#444444", ls="none")),
            ("target outline (true pose); colour = frame, early dark to late yellow", dict(color=cmap(0.5), lw=1)),
        ]), loc="upper center", bbox_to_anchor=(0.5, -0.13), ncols=2, fontsize=7)  # fmt: skip

        ax = axd["res"]
        dd = d.reshape(-1, 2)
        dd = dd[np.isfinite(dd).all(axis=1)]
        ax.plot(dd[:, 0], dd[:, 1], ".", color="#4c72b0", ms=2.5, alpha=0.6,
                label=f"per point ({dd.shape[0]} points)")  # fmt: skip
        rms = float(np.sqrt(np.mean(np.sum(dd**2, axis=1)))) if dd.size else float("nan")
        lim = max(float(np.abs(dd).max()) if dd.size else 1.0, pix if np.isfinite(pix) else 0.0) * 1.15
        if np.isfinite(rms):
            ax.add_patch(Circle((0, 0), rms, fill=False, ec="#4c72b0", lw=1.4, label=f"RMS {rms:.3g} px"))
        if np.isfinite(pix) and pix > 0:
            ax.add_patch(Circle((0, 0), pix, fill=False, ec="#c44e52", ls="--", lw=1.4,
                                label=f"pixel noise σ {pix:g} px (per axis)"))  # fmt: skip
        ax.set_xlim(-lim, lim)
        ax.set_ylim(lim, -lim)
        ax.set_aspect("equal")
        ax.set_xlabel("Δu (measured - true) [px]")
        ax.set_ylabel("Δv (measured - true) [px]")
        ax.set_title("reprojection difference of the measured pose")
        ax.legend(loc="upper right", fontsize=7)

        ax = axd["rms"]
        ax.plot(cm.t[idx], rms_frame, "o-", color="#4c72b0", ms=4, lw=1, label="RMS difference measured vs true pose")
        rr = cm.reproj_rmse_px[idx]
        if np.isfinite(rr).any():
            ax.plot(cm.t[idx], rr, "s-", color="#dd8452", ms=4, lw=1, label="PnP reprojection RMSE (stream column)")
        if np.isfinite(pix) and pix > 0:
            ax.axhline(pix, color="#c44e52", ls="--", lw=1.2, label=f"pixel noise σ {pix:g} px (per axis)")
        ax.set_ylim(bottom=0)
        ax.set_xlabel("camera-clock time stamp t [s]")
        ax.set_ylabel("RMS over the target points [px]")
        ax.set_title("per frame")
        ax.legend(loc="center right", fontsize=7)
        fig.suptitle(f"PnP measurement model of {seq.sequence_id}: target {seq.info.get('target')} "
                     f"({pts.shape[0]} points)\n{_describe(seq)}")  # fmt: skip
        return _style.save(fig, path)


def _outline_indices(points: np.ndarray) -> np.ndarray:
    """Indices of the corner points of a planar grid target, as a closed ring (for drawing its outline)."""
    xy = points[:, :2]
    c = xy.mean(axis=0)
    corners = []
    for sx, sy in ((-1, 1), (1, 1), (1, -1), (-1, -1)):
        corners.append(int(np.argmax(sx * (xy[:, 0] - c[0]) + sy * (xy[:, 1] - c[1]))))
    return np.array(corners + corners[:1])


# --------------------------------------------------------------------------- #
# clock offset
# --------------------------------------------------------------------------- #
def _angular_speed_pairs(t: np.ndarray, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Angular speed [deg/s] between consecutive frames, at the midpoints of the stamps."""
    ang = se3.rotation_angle(np.swapaxes(R[:-1], -1, -2) @ R[1:], check=False)
    return 0.5 * (t[:-1] + t[1:]), np.degrees(ang / np.diff(t))


def _robot_speed(t: np.ndarray, T: np.ndarray, window_s: float, step_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Robot angular speed [deg/s] as a central difference over ``window_s`` (same smoothing as the camera)."""
    half = 0.5 * window_s
    g = np.arange(t[0] + half, t[-1] - half, step_s)
    if g.size == 0:
        return g, g
    P = se3.interpolate_poses(t, T, np.concatenate([g - half, g + half]), out_of_range="clip")
    n = g.size
    ang = se3.rotation_angle(np.swapaxes(P[:n, :3, :3], -1, -2) @ P[n:, :3, :3], check=False)
    return g, np.degrees(ang / window_s)


def plot_time_offset(seq: Sequence, path, *, max_offset_s: float = 0.5) -> Path:
    """Angular speed of the two streams before and after the clock-offset estimate.

    The offset is estimated with :func:`kinhec.solvers.estimate_time_offset`
    from the measured streams (robot ``T_base_ee`` and camera
    ``T_cam_target``); the camera stamps are then shifted by the estimate.

    Parameters
    ----------
    seq : kinhec.io.Sequence
        Typically an asynchronous sequence (``temporal`` track).
    path : str or Path
        PNG file to write.
    max_offset_s : float
        Largest offset searched [s].

    Returns
    -------
    Path

    Raises
    ------
    InputError
        Too few measured camera frames, or streams that do not overlap.
    """
    seq = check_sequence(seq)
    rb, cm = seq.robot, seq.camera
    m = cm.has_measurement & np.isfinite(cm.t)
    okr = np.isfinite(rb.T_base_ee_meas).all(axis=(1, 2)) & np.isfinite(rb.t)
    if m.sum() < 3 or okr.sum() < 3:
        raise InputError(f"seq: expected at least 3 measured frames in both streams of {seq.sequence_id!r}, "
                         f"got {int(okr.sum())} robot and {int(m.sum())} camera frames")  # fmt: skip
    tr, Tr = rb.t[okr], rb.T_base_ee_meas[okr]
    tc, Tc = cm.t[m], cm.T_cam_target_meas[m]
    try:
        est = estimate_time_offset(tr, Tr, tc, Tc, max_offset_s=max_offset_s)
    except KinhecError as exc:
        raise InputError(f"seq: cannot estimate the clock offset of {seq.sequence_id!r}: {exc}") from None
    period = float(np.median(np.diff(tc)))
    t_cam_mid, w_cam = _angular_speed_pairs(tc, Tc[:, :3, :3])
    t_rob, w_rob = _robot_speed(tr, Tr, period, period / 4.0)
    true_off = seq.time_offset
    off = est.offset_s

    # zoom window: where the robot speed changes fastest, wide enough to see the shift
    span = float(tr[-1] - tr[0])
    width = min(span, max(1.0, 25.0 * max(abs(true_off), abs(off))))
    if w_rob.size > 2:
        slope = np.abs(np.gradient(w_rob, t_rob))
        k = int(np.nanargmax(np.convolve(slope, np.ones(9) / 9, mode="same")))
        centre = float(t_rob[k])
    else:
        centre = float(tr[0] + 0.5 * span)
    lo = float(np.clip(centre - 0.5 * width, tr[0], max(tr[0], tr[-1] - width)))
    hi = lo + width

    with _style.rc_context():
        fig = _style.new_figure(14.0, 10.0)
        axd = fig.subplot_mosaic([["all", "all"], ["before", "after"], ["corr", "corr"]], height_ratios=[1, 1.1, 0.9])
        robot_kw = dict(color="#4c72b0", lw=1.3, label="robot stream (robot clock)")
        for key, shift, what in (("all", 0.0, "raw camera stamps"), ("before", 0.0, "raw camera stamps"),
                                 ("after", off, f"camera stamps - estimate ({off * 1e3:.2f} ms)")):  # fmt: skip
            ax = axd[key]
            ax.plot(t_rob, w_rob, **robot_kw)
            ax.plot(t_cam_mid - shift, w_cam, "o-", color="#dd8452", ms=3 if key != "all" else 1.5, lw=0.9,
                    label=f"camera stream ({what})")  # fmt: skip
            ax.set_xlabel("time on the robot clock [s]" if shift else "time stamp on each stream's own clock [s]")
            ax.set_ylabel("angular speed [deg/s]")
            if key != "all":
                ax.set_xlim(lo, hi)
            ax.legend(loc="upper right", fontsize=7.5)
        axd["all"].axvspan(lo, hi, color="#999999", alpha=0.15, label="zoomed window")
        axd["all"].legend(loc="upper right", fontsize=7.5)
        axd["all"].set_title("whole sequence, before alignment")
        axd["before"].set_title(f"before: camera stamps as recorded (zoom {width:.2g} s)")
        axd["after"].set_title(f"after: camera stamps shifted by the estimated offset (zoom {width:.2g} s)")
        ax = axd["corr"]
        ax.plot(est.lags_s * 1e3, est.corr, color="#55a868", lw=1.4, label="normalised cross-correlation")
        ax.axvline(off * 1e3, color="#dd8452", lw=1.5, label=f"estimate {off * 1e3:.2f} ms (peak {est.peak_corr:.3f})")
        ax.axvline(true_off * 1e3, color="k", ls="--", lw=1.2, label=f"ground truth {true_off * 1e3:.2f} ms")
        ax.set_xlabel("candidate offset (camera stamp - robot time) [ms]")
        ax.set_ylabel("correlation [-]")
        ax.set_title("cross-correlation of the angular speeds over the searched offsets")
        ax.legend(loc="lower right", fontsize=7.5)
        fig.suptitle(
            f"Clock offset of {seq.sequence_id}: true {true_off * 1e3:.2f} ms, estimated {off * 1e3:.2f} ms "
            f"(error {(off - true_off) * 1e3:+.2f} ms)\n{_describe(seq)}"
        )
        return _style.save(fig, path)
