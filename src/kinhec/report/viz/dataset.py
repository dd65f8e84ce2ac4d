"""Dataset-wide figures: composition of a copy and the manipulator models at home."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from kinhec.util import palette
from kinhec.util.errors import InputError
from kinhec.models.robots import ROBOT_NAMES, get_robot
from kinhec.io.schema import TRACKS
from kinhec.report.viz import _style

__all__ = ["plot_dataset_overview", "plot_robots_home"]

_CONFIG_COLORS = palette.CONFIG_COLORS


def _check_manifest(manifest, needed) -> pd.DataFrame:
    if not isinstance(manifest, pd.DataFrame):
        raise InputError(f"manifest: expected the DataFrame of load_manifest, got {type(manifest).__name__}")
    missing = [c for c in needed if c not in manifest.columns]
    if missing:
        raise InputError(f"manifest: expected the index columns {list(needed)}, got a frame missing {missing}")
    if len(manifest) == 0:
        raise InputError("manifest: expected at least one sequence, got an empty index")
    return manifest


def _ordered(values, order) -> list[str]:
    present = list(dict.fromkeys(str(v) for v in values))
    return [o for o in order if o in present] + sorted(v for v in present if v not in order)


def _stacked_bars(ax, man: pd.DataFrame, column: str, order, *, horizontal: bool, title: str, label: str) -> None:
    cats = _ordered(man[column], order)
    configs = _ordered(man["configuration"], list(_CONFIG_COLORS))
    counts = pd.crosstab(man[column].astype(str), man["configuration"].astype(str)).reindex(
        index=cats, columns=configs, fill_value=0
    )
    pos = np.arange(len(cats))
    base = np.zeros(len(cats))
    for cfg in configs:
        v = counts[cfg].to_numpy(dtype=float)
        color = _CONFIG_COLORS.get(cfg, "#999999")
        if horizontal:
            ax.barh(pos, v, left=base, color=color, label=cfg.replace("_", "-"), height=0.75)
        else:
            ax.bar(pos, v, bottom=base, color=color, label=cfg.replace("_", "-"), width=0.75)
        base += v
    for p, total in zip(pos, base):
        if horizontal:
            ax.text(total, p, f" {int(total):,}", va="center", ha="left", fontsize=7)
        else:
            ax.text(p, total, f"{int(total):,}", va="bottom", ha="center", fontsize=7)
    if horizontal:
        ax.set_yticks(pos, cats)
        ax.invert_yaxis()
        ax.set_xlabel("sequences [count]")
        ax.set_ylabel(label)
        ax.set_xlim(0, base.max() * 1.18)
        ax.grid(axis="y", visible=False)
    else:
        ax.set_xticks(pos, cats, rotation=35, ha="right")
        ax.set_ylabel("sequences [count]")
        ax.set_xlabel(label)
        ax.set_ylim(0, base.max() * 1.15)
        ax.grid(axis="x", visible=False)
    ax.set_title(title)


# descriptor column, axis label, log bins
_DESCRIPTORS = (
    ("axis_scatter_lambda2", "rotation-axis scatter", "λ₂ [-] (0 = parallel, 1/3 = isotropic)", False),
    ("mean_rot_angle_deg", "rotation magnitude", "mean keyframe rotation [deg]", False),
    ("mean_trans_m", "translation magnitude", "mean keyframe translation [m]", True),
    ("n_motions", "number of motions", "keyframe motions [count]", True),
    ("translation_cond", "translation conditioning", "condition number [-] (inf drawn at right edge)", True),
)


def _descriptor_hist(ax, man: pd.DataFrame, column: str, title: str, label: str, log: bool, tracks) -> None:
    v_all = pd.to_numeric(man[column], errors="coerce").to_numpy(dtype=float)
    big = np.isposinf(v_all)
    fin = np.isfinite(v_all)
    ok = fin & (v_all > 0) if log else fin
    if not ok.any():
        ax.text(0.5, 0.5, "no finite values", transform=ax.transAxes, ha="center", va="center")
        edges = np.linspace(0, 1, 11)
    elif log:
        lo, hi = v_all[ok].min(), v_all[ok].max()
        lo = max(lo, float(np.quantile(v_all[ok], 0.01)) / 10.0)  # a stray tiny value does not stretch the axis
        if (v_all[ok] < lo).any():
            label += " (smaller values in the first bin)"
        if hi <= lo * 1.01:
            lo, hi = lo / 1.5, hi * 1.5
        edges = np.geomspace(lo, hi, 26)
        _style.log_scale(ax, "x", [lo, hi])
    else:
        lo, hi = v_all[ok].min(), v_all[ok].max()
        if hi <= lo:
            lo, hi = lo - 0.5, hi + 0.5
        edges = np.linspace(lo, hi, 26)
    trk = man["track"].astype(str).to_numpy()
    base = np.zeros(edges.size - 1)
    for t in tracks:  # stacked histogram as filled stairs (one artist per track)
        sel = trk == t
        counts, _ = np.histogram(np.clip(v_all[sel & ok], edges[0], edges[-1]), bins=edges)
        counts[-1] += int(big[sel].sum())  # infinite values (pure translations) in the last bin
        if counts.any():
            ax.stairs(base + counts, edges, baseline=base, fill=True, color=_style.TRACK_COLORS.get(t, "#999999"),
                      label=t)  # fmt: skip
        base = base + counts
    ax.set_xlim(edges[0], edges[-1])
    ax.set_ylim(0, max(base.max(), 1) * 1.08)
    ax.set_xlabel(label)
    ax.set_ylabel("sequences [count]")
    ax.set_title(f"{title} ({column})")


def plot_dataset_overview(manifest: pd.DataFrame, path, *, title: str | None = None) -> Path:
    """Composition of a dataset copy and the distributions of the motion descriptors.

    Parameters
    ----------
    manifest : pandas.DataFrame
        The index (:func:`kinhec.io.load_manifest`).
    path : str or Path
        PNG file to write.
    title : str, optional
        Figure title (default: counts of sequences and frames).

    Returns
    -------
    Path
        ``path``.
    """
    needed = ("track", "robot", "configuration", "family", "camera_noise_model", "n_robot_frames",
              "n_camera_frames") + tuple(d[0] for d in _DESCRIPTORS)  # fmt: skip
    man = _check_manifest(manifest, needed)
    tracks = _ordered(man["track"], TRACKS)
    if title is None:
        title = (
            f"Dataset composition: {len(man):,} sequences, "
            f"{int(man['n_robot_frames'].sum()):,} robot-stream and {int(man['n_camera_frames'].sum()):,} "
            "camera-stream frames"
        )
    with _style.rc_context():
        fig = _style.new_figure(18.0, 9.5)
        sub_top, sub_bottom = fig.subfigures(2, 1, hspace=0.02)
        top = sub_top.subplots(1, 4, width_ratios=[1.0, 1.0, 1.1, 1.0])
        bottom = sub_bottom.subplots(1, 5)
        _stacked_bars(top[0], man, "track", TRACKS, horizontal=False, title="sequences per track", label="track")
        _stacked_bars(top[1], man, "robot", ROBOT_NAMES, horizontal=True, title="sequences per robot", label="robot")
        _stacked_bars(top[2], man, "family", (), horizontal=True, title="sequences per trajectory family",
                      label="trajectory family")  # fmt: skip
        _stacked_bars(top[3], man, "camera_noise_model", (), horizontal=True,
                      title="sequences per camera noise model", label="camera noise model")  # fmt: skip
        configs = _ordered(man["configuration"], list(_CONFIG_COLORS))
        sub_top.legend(
            handles=_style.legend_handles(
                [(c.replace("_", "-"), dict(color=_CONFIG_COLORS.get(c, "#999999"), lw=8)) for c in configs]
            ),
            title="configuration", loc="outside right upper",
        )  # fmt: skip
        sub_top.suptitle("Composition", fontsize=10.5, fontweight="bold")
        for ax, (col, sub, label, log) in zip(bottom, _DESCRIPTORS):
            _descriptor_hist(ax, man, col, sub, label, log, tracks)
        sub_bottom.legend(
            handles=_style.legend_handles(
                [(t, dict(color=_style.TRACK_COLORS.get(t, "#999999"), lw=8)) for t in tracks]
            ),
            title="track", loc="outside right upper",
        )  # fmt: skip
        sub_bottom.suptitle("Motion descriptors of the keyframe motions", fontsize=10.5, fontweight="bold")
        fig.suptitle(title)
        return _style.save(fig, path)


def plot_robots_home(path, *, robots=None) -> Path:
    """The manipulator models at their home configurations (stick figures of the DH frames).

    Parameters
    ----------
    path : str or Path
        PNG file to write.
    robots : sequence of str, optional
        Models to draw (default: every arm of :data:`kinhec.models.robots.ROBOT_NAMES`;
        the free-floating ``free6d`` has no chain and is skipped).

    Returns
    -------
    Path
    """
    names = [n for n in ROBOT_NAMES if not get_robot(n).is_free] if robots is None else list(robots)
    for n in names:
        if get_robot(n).is_free:
            raise InputError(f"robots: expected arms with a kinematic chain, got the free-floating {n!r}")
    if not names:
        raise InputError("robots: expected at least one robot name, got none")
    ncols = min(5, len(names))
    nrows = int(np.ceil(len(names) / ncols))
    with _style.rc_context():
        height_in = 3.3 * nrows + 1.0
        fig = _style.new_figure(3.4 * ncols, height_in, constrained=False)
        fig.subplots_adjust(left=0.01, right=0.99, bottom=0.55 / height_in, top=1.0 - 0.75 / height_in,
                            wspace=0.05, hspace=0.12)  # fmt: skip
        for i, name in enumerate(names):
            robot = get_robot(name)
            F = robot.joint_frames(robot.home_q_rad)
            p = F[:, :3, 3]
            ax = fig.add_subplot(nrows, ncols, i + 1, projection="3d")
            ax.plot(p[:, 0], p[:, 1], p[:, 2], color="#555555", lw=3.0, solid_capstyle="round")
            ax.scatter(p[:-1, 0], p[:-1, 1], p[:-1, 2], color="#f28e2b", s=18, depthshade=False, zorder=3)
            scale = max(float(np.ptp(p, axis=0).max()), 0.2)
            _style.draw_triad(ax, np.eye(4), 0.18 * scale, lw=1.2, alpha=0.6)
            _style.draw_triad(ax, F[-1], 0.15 * scale, lw=1.8)
            ground = np.array([[-0.15, -0.15, 0.0], [0.15, 0.15, 0.0]]) * scale
            _style.box_aspect_3d(ax, np.vstack([p, ground]), pad=0.08)
            ax.view_init(elev=20, azim=-55)
            ax.set_title(f"{name} ({robot.dof} joints, {robot.convention} DH)", fontsize=9)
            ax.set_xlabel("x [m]", labelpad=-6)
            ax.set_ylabel("y [m]", labelpad=-6)
            ax.set_zlabel("z [m]", labelpad=-6)
            ax.tick_params(labelsize=6, pad=-2)
            _style.few_ticks_3d(ax, 4)
        handles = _style.legend_handles(
            [
                ("links (DH frame origins)", dict(color="#555555", lw=3)),
                ("joints", dict(color="#f28e2b", marker="o", ls="none")),
                ("flange / base x axis", dict(color=_style.XYZ_COLORS[0], lw=1.8)),
                ("flange / base y axis", dict(color=_style.XYZ_COLORS[1], lw=1.8)),
                ("flange / base z axis", dict(color=_style.XYZ_COLORS[2], lw=1.8)),
            ]
        )
        fig.legend(handles=handles, loc="lower center", ncols=5)
        fig.suptitle("Manipulator models at their home configurations (robot base frame)")
        return _style.save(fig, path)
