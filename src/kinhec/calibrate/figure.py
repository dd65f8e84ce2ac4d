"""The one-page figure of a calibration: residuals over time, the clock-offset curve, the axes of X and Y.

matplotlib is imported inside :func:`draw` only (``import kinhec.calibrate``
never loads it); the figure is built on :class:`matplotlib.figure.Figure`
with an Agg canvas, never through pyplot.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from kinhec.util import palette
from kinhec.util.optional import require

__all__ = ["draw", "build", "summary_lines"]

#: Font size [pt] of the summary text and the width of one monospace character in font sizes.
_TEXT_PT = 8.0
_CHAR_EM = 0.61
#: Smallest font size [pt] the summary shrinks to before it leaves lines out, and matplotlib's line spacing [em].
_MIN_TEXT_PT = 5.5
_LINE_EM = 1.2


def _axes_3d(ax, T, name, length):
    o = T[:3, 3]
    for k, col in enumerate(palette.XYZ_COLORS):
        d = T[:3, k] * length
        ax.plot([o[0], o[0] + d[0]], [o[1], o[1] + d[1]], [o[2], o[2] + d[2]], color=col, lw=2)
    ax.text(*o, name, fontsize=8)


def _vec(v, digits: int) -> str:
    """``[a, b, c]`` with ``digits`` decimals, never in exponent form."""
    return "[" + ", ".join(f"{float(x):.{digits}f}" for x in np.asarray(v, dtype=float).ravel()) + "]"


def summary_lines(result, width: int) -> list[str]:
    """The numbers of the figure's text panel, wrapped to ``width`` characters.

    ``X`` (translation [m], quaternion x, y, z, w, 1-sigma), ``Y``, the clock offset and the scale when
    estimated, the pairs and outliers, the observability figures and the verdict.
    """
    d = result.to_dict()
    obs = result.observability
    lines = [
        f"{result.X_name} (X): t = {_vec(d['X_t_m'], 4)} m",
        f"  quaternion (x, y, z, w) = {_vec(d['X_quat_xyzw'], 5)}",
        f"  1-sigma: rotation {_vec(np.degrees(result.X_std[:3]), 3)} deg, "
        f"translation {_vec(1000 * result.X_std[3:], 2)} mm",
    ]
    if result.Y is not None:
        lines.append(f"{result.Y_name} (Y): t = {_vec(d['Y_t_m'], 4)} m")
    if result.time_offset_s is not None:
        std = f" +- {1000 * result.time_offset_std_s:.2f}" if result.time_offset_std_s is not None else " (fixed)"
        lines.append(f"clock offset {1000 * result.time_offset_s:.2f}{std} ms (eye stamp = hand time + offset)")
    if result.scale is not None:
        lines.append(f"scale {result.scale:.5f} +- {result.scale_std:.5f}")
    lines.append(f"pairs {result.n_pairs}, outliers {len(result.outliers)}, initial estimate from {result.init_solver}")
    if "lambda2" in obs and "rot_range_deg" in obs:
        lines.append(f"rotation-axis spread lambda2 {obs['lambda2']:.3g}, rotation range {obs['rot_range_deg']:.1f} deg")
    lines.append("")
    lines.append(result.verdict)
    for w in result.warnings:
        lines.append(f"warning: {w}")
    out = []
    for line in lines:
        out += textwrap.wrap(line, width=width, subsequent_indent="    ", break_long_words=True) or [""]
    return out


def _fit_text(result, width_pt: float, height_pt: float) -> tuple[float, list[str]]:
    """Font size [pt] and lines of the summary that fit a panel of ``width_pt`` x ``height_pt`` (known before
    drawing, from the figure's size): as many monospace characters as the panel is wide; the font shrinks down to
    :data:`_MIN_TEXT_PT` while the lines are too many for its height; below, the last lines give way to a line
    saying how many were left out (they are all in the JSON and on screen)."""
    pt = _TEXT_PT
    while True:
        lines = summary_lines(result, max(int(width_pt / (_CHAR_EM * pt)) - 1, 30))
        fit = int(height_pt / (_LINE_EM * pt))
        if len(lines) <= fit or pt <= _MIN_TEXT_PT:
            break
        pt = max(pt - 0.5, _MIN_TEXT_PT)
    if len(lines) > fit:
        cut = len(lines) - fit + 1
        lines = lines[: fit - 1] + [f"... {cut} more lines (the JSON and the screen report have them all)"]
    return pt, lines


def draw(result, path) -> Path:
    """Draw ``result`` (a :class:`~kinhec.calibrate.result.CalibrationResult`) to ``path`` (PNG, PDF, SVG).

    Returns
    -------
    Path
        The file written (the figure of :func:`build`).
    """
    path = Path(path)
    fig = build(result)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


def build(result):
    """The one-page :class:`matplotlib.figure.Figure` of ``result`` (Agg canvas, not saved).

    Panels: rotation [deg] and translation [mm] residual per pair over time
    (seconds since the first pair; the pair index when the files have no time
    stamps; outliers in red), the residual cost against the clock offset (when
    it was estimated), the frames of the parent and of ``X``, and the numbers
    (:func:`summary_lines`, wrapped to the panel so that no line runs off the
    page).
    """
    FigureCanvasAgg = require("matplotlib.backends.backend_agg", "the calibration figure").FigureCanvasAgg
    Figure = require("matplotlib.figure", "the calibration figure").Figure

    fig = Figure(figsize=(11.0, 8.5))
    FigureCanvasAgg(fig)
    gs = fig.add_gridspec(3, 2, height_ratios=[1, 1, 1.25], hspace=0.45, wspace=0.25, left=0.08, right=0.95,
                          top=0.92, bottom=0.05)  # fmt: skip
    r = result.residuals
    stamped = result.time_offset_s is not None
    t = np.asarray(r["t_s"], dtype=float)
    t = (t - t[0] if t.size else t) if stamped else np.arange(t.size, dtype=float)
    out = np.asarray(r["outlier"], dtype=bool)
    for row, key, unit in ((0, "rot_deg", "rotation residual [deg]"), (1, "trans_mm", "translation residual [mm]")):
        ax = fig.add_subplot(gs[row, 0])
        v = np.asarray(r[key], dtype=float)
        ax.plot(t[~out], v[~out], ".", ms=3, color=palette.INLIER_COLOR, label="inlier")
        if out.any():
            ax.plot(t[out], v[out], "x", ms=4, color=palette.OUTLIER_COLOR, label=f"outlier ({int(out.sum())})")
        ax.set_yscale("log" if np.nanmax(v, initial=0) > 20 * max(np.nanmedian(v), 1e-12) else "linear")
        ax.set_xlabel("time since the first pair [s]" if stamped else "pair (recording order; no time stamps)")
        ax.set_ylabel(unit)
        ax.legend(fontsize=7, loc="best")
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
        ax.text(0.5, 0.5, "clock offset not estimated" + ("" if stamped else " (the files have no time stamps)"),
                ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
    ax3 = fig.add_subplot(gs[2, 0], projection="3d")
    scale = max(0.05, float(np.linalg.norm(result.X[:3, 3])) * 0.5)
    _axes_3d(ax3, np.eye(4), result.X_name.split("_")[1], scale)
    _axes_3d(ax3, result.X, result.X_name.split("_", 2)[2], scale)
    ax3.set_title(f"X = {result.X_name} (axes x red, y green, z blue)", fontsize=9)
    lim = float(np.abs(result.X[:3, 3]).max()) + scale
    for setter in (ax3.set_xlim, ax3.set_ylim, ax3.set_zlim):
        setter(-lim, lim)
    ax = fig.add_subplot(gs[2, 1])
    ax.set_axis_off()
    pt, lines = _fit_text(result, ax.get_position().width * fig.get_figwidth() * 72.0,
                          ax.get_position().height * fig.get_figheight() * 72.0)
    ax.text(0.0, 1.0, "\n".join(lines), va="top", ha="left", family="monospace", fontsize=pt,
            transform=ax.transAxes)  # fmt: skip
    fig.suptitle(f"kinhec calibrate ({result.setup})", fontsize=11)
    return fig
