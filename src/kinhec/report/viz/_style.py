"""Shared look of the kinhec figures: figure factory, colours, axis scales, 3D helpers.

matplotlib is imported inside the functions only, so that importing this
module (and ``import kinhec``) never loads it.  Figures are built on
:class:`matplotlib.figure.Figure` with an Agg canvas, never through pyplot:
no global figure registry, no interactive backend, nothing to close.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kinhec.util import palette
from kinhec.util.optional import require

#: Resolution of the PNG files [dots per inch].
DPI = 120
#: what needs matplotlib, in the message when it is missing
_PURPOSE = "drawing the figures"

#: The colours are those of :mod:`kinhec.util.palette`, shared with the HTML pages.
SOLVER_COLORS = palette.SOLVER_COLORS
TRACK_COLORS = palette.TRACK_COLORS
XYZ_COLORS = palette.XYZ_COLORS
GT_COLOR = palette.GT_COLOR
MEAS_COLOR = palette.MEAS_COLOR

_RC = {
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.labelsize": 9.0,
    "legend.fontsize": 8.0,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "figure.titlesize": 12.0,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "legend.framealpha": 0.85,
    "savefig.facecolor": "white",
    "figure.facecolor": "white",
}


solver_colors = palette.solver_colors


def solver_label(name: str) -> str:
    """Legend label of a solver: plug-ins (names that are not kinhec baselines) are marked ``(plug-in)``."""
    return name if name in SOLVER_COLORS else f"{name} (plug-in)"


def solver_order(names) -> list[str]:
    """Solver names in leaderboard order (the baselines first, others sorted after them)."""
    names = set(names)
    known = [n for n in SOLVER_COLORS if n in names]
    return known + sorted(names - set(known))


def rc_context():
    """Context manager applying the kinhec figure style (fonts, grid)."""
    return require("matplotlib", _PURPOSE).rc_context(_RC)


def new_figure(width_in: float, height_in: float, *, constrained: bool = True):
    """A :class:`~matplotlib.figure.Figure` with an Agg canvas.

    ``constrained=False`` leaves the layout to the caller (``subplots_adjust``):
    the constrained layout costs a full extra drawing pass, which is slow for
    3D axes whose margins are fixed anyway.
    """
    FigureCanvasAgg = require("matplotlib.backends.backend_agg", _PURPOSE).FigureCanvasAgg
    Figure = require("matplotlib.figure", _PURPOSE).Figure

    fig = Figure(figsize=(width_in, height_in), dpi=DPI, layout="constrained" if constrained else None)
    FigureCanvasAgg(fig)
    return fig


def save(fig, path) -> Path:
    """Write ``fig`` as a PNG to ``path`` (folders created) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, format="png")
    return path


def log_scale(ax, axis: str = "y", values=None, *, linthresh: float | None = None) -> None:
    """Log (or symlog, with ``linthresh``) scale on one axis, without minor ticks (they are slow to lay out).

    When ``values`` span less than about two decades, ticks at 1, 2 and 5
    times the powers of ten get plain labels, so that the axis never shows a
    single label.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    a = ax.xaxis if axis == "x" else ax.yaxis
    setter = ax.set_xscale if axis == "x" else ax.set_yscale
    if linthresh is not None:
        setter("symlog", linthresh=linthresh, linscale=0.5)
    else:
        setter("log")
    a.set_minor_locator(NullLocator())
    a.set_major_formatter(FuncFormatter(lambda x, _pos: fmt_num(x)))  # plain text: no mathtext parsing
    if values is None or linthresh is not None:
        return
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size and v.max() < 300.0 * v.min():
        a.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))


def set_auto_scale(ax, values, axis: str = "x", *, decades: float = 1.0) -> str:
    """Log (or symlog with zeros) scale when the positive values span at least ``decades`` decades.

    Returns the scale chosen (``"linear"``, ``"log"`` or ``"symlog"``).
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    pos = v[v > 0]
    if pos.size < 2 or v.min() < 0 or pos.max() < 10.0**decades * pos.min():
        return "linear"
    if (v == 0).any():
        log_scale(ax, axis, linthresh=float(pos.min()))
        lim = (-0.25 * float(pos.min()), 1.25 * float(pos.max()))
        (ax.set_xlim if axis == "x" else ax.set_ylim)(*lim)
        return "symlog"
    log_scale(ax, axis, pos)
    return "log"


def fmt_num(x: float) -> str:
    """Short readable number with 3 significant digits (``0.05``, ``1``, ``2e-4``, ``1.5e5``)."""
    x = float(x)
    if not np.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e4:
        text = f"{x:.3g}"
        return f"{x:.0f}" if "e" in text else text
    mant, _, exp = f"{x:.2e}".partition("e")
    return f"{float(mant):g}e{int(exp)}"


def box_aspect_3d(ax, points, pad: float = 0.05, zoom: float = 1.0) -> None:
    """Equal scaling on the three axes of a 3D ``ax`` around ``points`` (M, 3) [m]."""
    p = np.asarray(points, dtype=float).reshape(-1, 3)
    p = p[np.isfinite(p).all(axis=1)]
    lo, hi = p.min(axis=0), p.max(axis=0)
    span = np.maximum(hi - lo, 0.05 * max(float((hi - lo).max()), 1e-3))
    lo, hi = lo - pad * span.max(), hi + pad * span.max()
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_zlim(lo[2], hi[2])
    ax.set_box_aspect(hi - lo, zoom=zoom)


def few_ticks_3d(ax, n: int = 4) -> None:
    """At most ``n`` major ticks on each axis of a 3D ``ax``."""
    from matplotlib.ticker import MaxNLocator

    for a in (ax.xaxis, ax.yaxis, ax.zaxis):
        a.set_major_locator(MaxNLocator(n))


def draw_triad(ax, T, length: float, *, lw: float = 1.5, alpha: float = 1.0) -> None:
    """Draw the x, y, z axes of the frame(s) ``T`` (4, 4) or (N, 4, 4) in red, green, blue."""
    T = np.asarray(T, dtype=float).reshape(-1, 4, 4)
    o = T[:, :3, 3]
    for k in range(3):
        e = o + length * T[:, :3, k]
        seg = np.stack([o, e], axis=1)  # (N, 2, 3)
        xs = np.concatenate([seg[:, :, 0], np.full((len(o), 1), np.nan)], axis=1).ravel()
        ys = np.concatenate([seg[:, :, 1], np.full((len(o), 1), np.nan)], axis=1).ravel()
        zs = np.concatenate([seg[:, :, 2], np.full((len(o), 1), np.nan)], axis=1).ravel()
        ax.plot(xs, ys, zs, color=XYZ_COLORS[k], lw=lw, alpha=alpha)


def frustum_segments(T_base_cam, width_px: float, height_px: float, f_px: float, depth_m: float) -> np.ndarray:
    """Line segments of pinhole frustums: ``(N * 8, 2, 3)`` points in the base frame [m].

    ``T_base_cam`` (N, 4, 4) are camera (OpenCV optical frame) poses; each
    frustum has its apex at the optical centre and its far rectangle at
    ``depth_m`` along the optical axis.
    """
    T = np.asarray(T_base_cam, dtype=float).reshape(-1, 4, 4)
    hw, hh = 0.5 * width_px / f_px * depth_m, 0.5 * height_px / f_px * depth_m
    corners = np.array([[-hw, -hh, depth_m], [hw, -hh, depth_m], [hw, hh, depth_m], [-hw, hh, depth_m]])
    c = corners @ T[:, :3, :3].transpose(0, 2, 1) + T[:, None, :3, 3]  # (N, 4, 3)
    apex = np.broadcast_to(T[:, None, :3, 3], c.shape)
    rim = np.stack([c, np.roll(c, -1, axis=1)], axis=2)  # (N, 4, 2, 3)
    rays = np.stack([apex, c], axis=2)
    return np.concatenate([rays, rim], axis=1).reshape(-1, 2, 3)


def polyline_nan(segments) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x, y, z arrays of segments ``(K, 2, 3)`` separated by NaN, for one ``ax.plot`` call."""
    s = np.asarray(segments, dtype=float)
    pad = np.full((s.shape[0], 1, 3), np.nan)
    p = np.concatenate([s, pad], axis=1).reshape(-1, 3)
    return p[:, 0], p[:, 1], p[:, 2]


def legend_handles(specs):
    """Proxy artists for a legend: ``specs`` is a list of (label, kwargs of Line2D)."""
    from matplotlib.lines import Line2D

    return [Line2D([], [], label=label, **kw) for label, kw in specs]
