"""The one-page figure of a calibration: residuals over time, the clock-offset curve, the axes of X and Y.

matplotlib is imported inside :func:`draw` only (``import kinhec.calibrate``
never loads it); the figure is built on :class:`matplotlib.figure.Figure`
with an Agg canvas, never through pyplot.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["draw"]


def _axes_3d(ax, T, name, length):
    o = T[:3, 3]
    for k, col in enumerate(("#d62728", "#2ca02c", "#1f77b4")):
        d = T[:3, k] * length
        ax.plot([o[0], o[0] + d[0]], [o[1], o[1] + d[1]], [o[2], o[2] + d[2]], color=col, lw=2)
    ax.text(*o, name, fontsize=8)


def draw(result, path) -> Path:
    """Draw ``result`` (a :class:`~kinhec.calibrate.result.CalibrationResult`) to ``path`` (PNG, PDF, SVG).

    Panels: rotation [deg] and translation [mm] residual per pair over time
    (outliers in red), the residual cost against the clock offset (when it
    was estimated), the frames of the parent, of ``X`` and of ``Y``, and the
    numbers (X, its standard deviations, offset, scale, verdict).

    Returns
    -------
    Path
        The file written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = Path(path)
    fig = Figure(figsize=(11.0, 8.5))
    FigureCanvasAgg(fig)
    gs = fig.add_gridspec(3, 2, height_ratios=[1, 1, 1.1], hspace=0.45, wspace=0.25)
    r = result.residuals
    t = np.asarray(r["t_s"], dtype=float)
    t = t - t[0] if t.size else t
    out = np.asarray(r["outlier"], dtype=bool)
    for row, key, unit in ((0, "rot_deg", "rotation residual [deg]"), (1, "trans_mm", "translation residual [mm]")):
        ax = fig.add_subplot(gs[row, 0])
        v = np.asarray(r[key], dtype=float)
        ax.plot(t[~out], v[~out], ".", ms=3, color="#4c72b0", label="inlier")
        if out.any():
            ax.plot(t[out], v[out], "x", ms=4, color="#c44e52", label=f"outlier ({int(out.sum())})")
        ax.set_yscale("log" if np.nanmax(v, initial=0) > 20 * max(np.nanmedian(v), 1e-12) else "linear")
        ax.set_xlabel("time [s]" if result.time_offset_s is not None else "pair")
        ax.set_ylabel(unit)
        ax.legend(fontsize=7, loc="upper right")
    ax = fig.add_subplot(gs[0:2, 1])
    if result.offset_curve is not None:
        c = result.offset_curve
        ax.plot(1000 * np.asarray(c["offset_s"]), c["cost"], "-o", ms=3, color="#55a868")
        ax.axvline(1000 * result.time_offset_s, color="k", lw=1, ls="--")
        ax.set_xlabel("clock offset [ms] (eye stamp = hand time + offset)")
        ax.set_ylabel("mean truncated squared residual")
        ax.set_title(f"offset {1000 * result.time_offset_s:.2f} +- {1000 * (result.time_offset_std_s or 0):.2f} ms",
                     fontsize=9)
    else:
        ax.text(0.5, 0.5, "clock offset not estimated", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
    ax3 = fig.add_subplot(gs[2, 0], projection="3d")
    scale = max(0.05, float(np.linalg.norm(result.X[:3, 3])) * 0.5)
    _axes_3d(ax3, np.eye(4), result.X_name.split("_")[1], scale)
    _axes_3d(ax3, result.X, result.X_name.split("_", 2)[2], scale)
    ax3.set_title(f"X = {result.X_name}", fontsize=9)
    lim = float(np.abs(result.X[:3, 3]).max()) + scale
    for setter in (ax3.set_xlim, ax3.set_ylim, ax3.set_zlim):
        setter(-lim, lim)
    ax = fig.add_subplot(gs[2, 1])
    ax.set_axis_off()
    d = result.to_dict()
    lines = [
        f"{result.X_name}: t = {np.array2string(np.asarray(d['X_t_m']), precision=4)} m",
        f"  q_xyzw = {np.array2string(np.asarray(d['X_quat_xyzw']), precision=5)}",
        f"  std rot {np.array2string(np.degrees(result.X_std[:3]), precision=3)} deg, "
        f"trans {np.array2string(1000 * result.X_std[3:], precision=2)} mm",
        f"{result.Y_name}: t = {np.array2string(np.asarray(d['Y_t_m']), precision=4)} m",
        f"pairs {result.n_pairs}, outliers {len(result.outliers)}, start {result.init_solver}",
        f"lambda2 {result.observability['lambda2']:.3g}, rotation range {result.observability['rot_range_deg']:.1f} deg",
    ]
    if result.scale is not None:
        lines.append(f"scale {result.scale:.5f} +- {result.scale_std:.5f}")
    lines.append("")
    lines.append(result.verdict)
    ax.text(0.0, 1.0, "\n".join(lines), va="top", ha="left", family="monospace", fontsize=8, wrap=True,
            transform=ax.transAxes)
    fig.suptitle(f"kinhec calibrate ({result.setup})", fontsize=11)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path
