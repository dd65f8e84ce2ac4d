"""Figures of the baseline results (``benchmarks/results.parquet``): summary, robustness curves, descriptors."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kinhec.util.errors import DatasetFormatError, InputError
from kinhec.io.schema import TRACKS
from kinhec.report.viz import _style

__all__ = [
    "RESULTS_FILE",
    "RESULT_COLUMNS",
    "RobustnessFactor",
    "ROBUSTNESS_FACTORS",
    "load_results",
    "parse_level",
    "robustness_factors",
    "plot_benchmark_summary",
    "plot_robustness",
    "plot_error_vs_descriptors",
    "EFFICIENCY_COLUMNS",
    "has_efficiency",
    "plot_efficiency",
]

#: Location of the results table inside a dataset folder.
RESULTS_FILE = Path("benchmarks") / "results.parquet"

#: Columns the results figures need (a subset of :data:`kinhec.io.schema.RESULTS_SCHEMA`).
RESULT_COLUMNS = ("sequence_id", "track", "level", "solver", "eval_sync", "ok", "X_rot_err_deg", "X_trans_err_mm")

_ERR_FLOOR = 1e-9  # errors are drawn on log axes: exact zeros are lifted to this value


def load_results(path) -> pd.DataFrame:
    """Read a results table (``benchmarks/results.parquet``) and check its columns.

    Parameters
    ----------
    path : str or Path
        The Parquet file, or a dataset folder holding ``benchmarks/results.parquet``.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    DatasetFormatError
        If the file is missing, unreadable, or lacks one of :data:`RESULT_COLUMNS`.
    """
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILE
    if not path.is_file():
        raise DatasetFormatError(f"{path}: no results file (run kinhec benchmark first)")
    try:
        df = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise DatasetFormatError(f"{path}: cannot read the results table ({exc})") from None
    missing = [c for c in RESULT_COLUMNS if c not in df.columns]
    if missing:
        raise DatasetFormatError(f"{path}: expected the results columns {list(RESULT_COLUMNS)}, missing {missing}")
    return df


def _check_results(results) -> pd.DataFrame:
    if not isinstance(results, pd.DataFrame):
        raise InputError(f"results: expected a DataFrame (load_results), got {type(results).__name__}")
    missing = [c for c in RESULT_COLUMNS if c not in results.columns]
    if missing:
        raise InputError(f"results: expected the columns {list(RESULT_COLUMNS)}, got a frame missing {missing}")
    return results


def parse_level(level) -> dict[str, str]:
    """Factors named in a level string: ``"cone=10|rot=8-15|n=20"`` -> ``{"cone": "10", "rot": "8-15", "n": "20"}``.

    Parts without ``=`` (the ``mixed`` track's descriptive levels) map to ``""``.
    Anything that is not a string gives ``{}``.
    """
    if not isinstance(level, str):
        return {}
    out = {}
    for part in level.split("|"):
        part = part.strip()
        if not part:
            continue
        key, sep, value = part.partition("=")
        out[key.strip()] = value.strip() if sep else ""
    return out


@dataclass(frozen=True)
class RobustnessFactor:
    """One robustness curve: the factor ``key`` of the level strings of ``track``.

    Attributes
    ----------
    track : str
        Track whose results are drawn.
    name : str
        Short name used in the file name ``robustness_<track>_<name>.png``.
    key : str
        Key in the level string (``parse_level``).
    label : str
        Axis label with unit.
    factor : float
        Multiplier from the level value to the axis unit (numeric factors).
    categorical : bool
        Named levels (``r2``, ``c3``) instead of numbers.
    eval_sync : str
        Preferred evaluation (``"estimated"`` for the clock offset, else ``"oracle"``).
    info_columns : tuple of (column, factor, unit)
        Index columns whose value per named level annotates the tick labels.
    """

    track: str
    name: str
    key: str
    label: str
    factor: float = 1.0
    categorical: bool = False
    eval_sync: str = "oracle"
    info_columns: tuple = ()

    @property
    def file_name(self) -> str:
        return f"robustness_{self.track}_{self.name}.png"


#: The robustness curves drawn by :func:`kinhec.report.viz.make_figures`, one per swept factor.
ROBUSTNESS_FACTORS: tuple[RobustnessFactor, ...] = (
    RobustnessFactor("noise", "camera", "camera", "camera noise level", categorical=True,
                     info_columns=(("camera_trans_std_m", 1e3, "mm"), ("camera_rot_std_rad", 180 / np.pi, "deg"))),
    RobustnessFactor("noise", "robot", "robot", "robot noise level", categorical=True,
                     info_columns=(("robot_trans_std_m", 1e3, "mm"), ("robot_rot_std_rad", 180 / np.pi, "deg"))),
    RobustnessFactor("motion", "cone", "cone", "cone half-angle of the rotation axes [deg]"),
    RobustnessFactor("temporal", "offset", "offset", "true clock offset [ms]", factor=1e3, eval_sync="estimated"),
    RobustnessFactor("outliers", "fraction", "fraction", "outlier fraction [%]", factor=100.0),
    RobustnessFactor("robot_error", "dh_len", "dh_len_mm", "DH link-length error std [mm]"),
    RobustnessFactor("pnp", "pixel_std", "pixel_std", "pixel noise std [px]"),
)  # fmt: skip


def _natural_key(s: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def _factor_values(results: pd.DataFrame, spec: RobustnessFactor) -> pd.DataFrame:
    """Rows of ``spec.track`` that name ``spec.key``, with a column ``x`` (numeric or level name)."""
    df = results.loc[results["track"].astype(str) == spec.track]
    if df.empty:
        return df.assign(x=pd.Series(dtype=object))
    vals = df["level"].map(lambda s: parse_level(s).get(spec.key))
    df = df.assign(x=vals)
    df = df.loc[df["x"].notna() & (df["x"] != "")]
    if not spec.categorical:
        df = df.assign(x=pd.to_numeric(df["x"], errors="coerce") * spec.factor)
        df = df.loc[np.isfinite(df["x"].to_numpy(dtype=float))]
    return df


def _pick_eval(df: pd.DataFrame, preferred: str) -> tuple[pd.DataFrame, str]:
    ev = df["eval_sync"].astype(str)
    if (ev == preferred).any():
        return df.loc[ev == preferred], preferred
    if (ev == "oracle").any():
        return df.loc[ev == "oracle"], "oracle"
    first = ev.iloc[0] if len(ev) else "oracle"
    return df.loc[ev == first], first


def robustness_factors(results: pd.DataFrame) -> list[RobustnessFactor]:
    """The entries of :data:`ROBUSTNESS_FACTORS` for which ``results`` has rows."""
    results = _check_results(results)
    return [f for f in ROBUSTNESS_FACTORS if not _factor_values(results, f).empty]


def _ok_errors(df: pd.DataFrame) -> pd.DataFrame:
    ok = df["ok"].fillna(False).astype(bool).to_numpy()
    return df.loc[ok]


def _positive(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return np.where(np.isfinite(v), np.maximum(v, _ERR_FLOOR), np.nan)


def _log_if_wide(ax, values, axis: str = "y") -> None:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size >= 2 and v.max() >= 10.0 * v.min():
        _style.log_scale(ax, axis, v)


def _solver_legend(fig_or_ax, solvers, colors, *, bars: bool = False, **kw) -> None:
    style = dict(lw=7.0) if bars else dict(lw=2.0, marker="o", ms=4)
    specs = [(_style.solver_label(s), dict(color=colors[s], **style)) for s in solvers]
    fig_or_ax.legend(handles=_style.legend_handles(specs), title="solver", **kw)


# --------------------------------------------------------------------------- #
# summary per track
# --------------------------------------------------------------------------- #
def plot_benchmark_summary(results: pd.DataFrame, path) -> Path:
    """Per-track summary of the baselines: median X errors and failure rate per solver.

    One group of bars per track (and per evaluation: asynchronous sequences
    also with the estimated clock offset); medians over the runs that
    succeeded.

    Parameters
    ----------
    results : pandas.DataFrame
        The results table (:func:`load_results`).
    path : str or Path
        PNG file to write.

    Returns
    -------
    Path
    """
    df = _check_results(results)
    if df.empty:
        raise InputError("results: expected at least one row, got an empty table")
    solvers = _style.solver_order(df["solver"].astype(str).unique())
    colors = _style.solver_colors(solvers)
    tracks = [t for t in TRACKS if t in set(df["track"].astype(str))]
    tracks += sorted(set(df["track"].astype(str)) - set(tracks))
    groups = []
    for t in tracks:
        sub = df.loc[df["track"].astype(str) == t]
        evs = sub["eval_sync"].astype(str)
        for ev in ["oracle"] + sorted(set(evs) - {"oracle"}):
            g = sub.loc[evs == ev]
            if len(g):
                label = t if ev == "oracle" else f"{t}\n({ev} offset)"
                groups.append((label, g, int(g["sequence_id"].nunique())))

    n_g, n_s = len(groups), len(solvers)
    width = 0.84 / n_s
    med = np.full((3, n_g, n_s), np.nan)
    fails = np.zeros((2, n_g, n_s), dtype=int)  # failed runs, runs
    for i, (_, g, _) in enumerate(groups):
        ok = g["ok"].fillna(False).astype(bool)
        for j, s in enumerate(solvers):
            sel = (g["solver"].astype(str) == s).to_numpy()
            if not sel.any():
                continue
            gs = g.loc[sel & ok.to_numpy()]
            if len(gs):
                med[0, i, j] = np.nanmedian(_positive(gs["X_rot_err_deg"]))
                med[1, i, j] = np.nanmedian(_positive(gs["X_trans_err_mm"]))
            med[2, i, j] = 100.0 * (1.0 - ok.to_numpy()[sel].mean())
            fails[:, i, j] = int((~ok.to_numpy()[sel]).sum()), int(sel.sum())

    with _style.rc_context():
        fig = _style.new_figure(max(12.0, 1.25 * n_g + 4.0), 11.0)
        axes = fig.subplots(3, 1, sharex=True)
        x = np.arange(n_g)
        titles = ("median rotation error of X", "median translation error of X",
                  "failed runs (solver raised or returned no estimate; labels: failed/runs)")  # fmt: skip
        ylabels = ("X rotation error [deg]", "X translation error [mm]", "failed runs [%]")
        for k, ax in enumerate(axes):
            for j, s in enumerate(solvers):
                v = med[k, :, j]
                if k == 2:
                    v = np.where(np.isnan(v), 0.0, v)
                xb = x - 0.42 + (j + 0.5) * width
                ax.bar(xb, v, width=width * 0.95, color=colors[s], label=s)
                if k == 2:
                    for i in np.flatnonzero(fails[0, :, j]):
                        ax.text(xb[i], v[i], f"{fails[0, i, j]}/{fails[1, i, j]}", ha="center", va="bottom",
                                fontsize=6.5, rotation=90)  # fmt: skip
            ax.set_title(titles[k])
            ax.set_ylabel(ylabels[k])
            ax.grid(axis="x", visible=False)
            for b in x[:-1]:
                ax.axvline(b + 0.5, color="#cccccc", lw=0.8)
            if k < 2:
                _log_if_wide(ax, med[k])
        top = np.nanmax(med[2]) if np.isfinite(med[2]).any() else 0.0
        axes[2].set_ylim(0, max(5.0, 1.25 * top))
        if top == 0:
            axes[2].text(0.5, 0.5, "no failed run", transform=axes[2].transAxes, ha="center", va="center",
                         fontsize=11, color="#555555")  # fmt: skip
        axes[2].set_xticks(x, [f"{lab}\n[{n} seq]" for lab, _, n in groups])
        axes[2].set_xlabel("track (oracle clock offset unless noted) [sequences in the group]")
        axes[2].set_xlim(-0.5, n_g - 0.5)
        _solver_legend(fig, solvers, colors, bars=True, loc="outside right upper")
        fig.suptitle(f"Baseline summary per track: {df['sequence_id'].nunique():,} sequences, "
                     f"{len(solvers)} solvers, {len(df):,} runs")  # fmt: skip
        return _style.save(fig, path)


# --------------------------------------------------------------------------- #
# robustness curves
# --------------------------------------------------------------------------- #
def _tick_labels(levels, spec: RobustnessFactor, results: pd.DataFrame, manifest) -> list[str]:
    labels = []
    info = None
    if manifest is not None and spec.info_columns and "sequence_id" in manifest.columns:
        cols = [c for c, _, _ in spec.info_columns if c in manifest.columns]
        if cols:
            lv = results[["sequence_id", "x"]].drop_duplicates("sequence_id")
            info = lv.merge(manifest[["sequence_id"] + cols], on="sequence_id", how="left")
    for lev in levels:
        parts = [str(lev)]
        if info is not None:
            rows = info.loc[info["x"] == lev]
            for col, fac, unit in spec.info_columns:
                if col in rows.columns:
                    v = pd.to_numeric(rows[col], errors="coerce").median()
                    if np.isfinite(v):
                        parts.append(f"{_style.fmt_num(float(v) * fac)} {unit}")
        labels.append("\n".join(parts))
    return labels


def plot_robustness(results: pd.DataFrame, spec: RobustnessFactor, path, *, manifest=None) -> Path:
    """Median X error of every solver against one swept factor of a track.

    Parameters
    ----------
    results : pandas.DataFrame
        The results table (:func:`load_results`).
    spec : RobustnessFactor
        The factor (an entry of :data:`ROBUSTNESS_FACTORS`).
    path : str or Path
        PNG file to write.
    manifest : pandas.DataFrame, optional
        The index; its noise columns annotate named levels (``c3`` -> mm, deg).

    Returns
    -------
    Path

    Raises
    ------
    InputError
        If ``results`` holds no row of the track naming the factor.
    """
    results = _check_results(results)
    if not isinstance(spec, RobustnessFactor):
        raise InputError(f"spec: expected a RobustnessFactor, got {type(spec).__name__}")
    df = _factor_values(results, spec)
    if df.empty:
        raise InputError(f"results: expected rows of track {spec.track!r} with {spec.key!r} in the level, got none")
    df, ev = _pick_eval(df, spec.eval_sync)
    n_seq = int(df["sequence_id"].nunique())
    good = _ok_errors(df)
    solvers = _style.solver_order(df["solver"].astype(str).unique())
    colors = _style.solver_colors(solvers)
    if spec.categorical:
        levels = sorted(set(df["x"].astype(str)), key=_natural_key)
        pos = {lev: i for i, lev in enumerate(levels)}
        xnum = good["x"].astype(str).map(pos).to_numpy(dtype=float)
    else:
        levels = sorted(set(df["x"].astype(float)))
        xnum = good["x"].to_numpy(dtype=float)
    good = good.assign(xn=xnum, rot=_positive(good["X_rot_err_deg"]), trans=_positive(good["X_trans_err_mm"]))
    med = good.groupby(["solver", "xn"], sort=True)[["rot", "trans"]].median()
    q = good.groupby(["solver", "xn"], sort=True)[["rot", "trans"]]
    lo, hi = q.quantile(0.25), q.quantile(0.75)

    temporal = spec.track == "temporal" and "time_offset_err_ms" in df.columns
    single = len(levels) < 2
    with _style.rc_context():
        ncols = 3 if temporal else 2
        fig = _style.new_figure(5.6 * ncols + 2.2, 5.4)
        axes = fig.subplots(1, ncols)
        for k, (col, ylabel, title) in enumerate((
            ("rot", "X rotation error [deg]", "rotation error of X"),
            ("trans", "X translation error [mm]", "translation error of X"),
        )):  # fmt: skip
            ax = axes[k]
            for s in solvers:
                if s not in med.index.get_level_values(0):
                    continue
                m = med.loc[s, col]
                xs = m.index.to_numpy(dtype=float)
                ax.plot(xs, m.to_numpy(), "o-", color=colors[s], lw=1.6, ms=4.5)
                if len(solvers) <= 4:
                    ax.fill_between(xs, lo.loc[s, col].to_numpy(), hi.loc[s, col].to_numpy(), color=colors[s],
                                    alpha=0.12, lw=0)  # fmt: skip
            _log_if_wide(ax, med[col].to_numpy())
            ax.set_ylabel(f"median {ylabel}")
            ax.set_xlabel(spec.label)
            ax.set_title(f"median {title} over the sequences of each level")
            if spec.categorical:
                ax.set_xticks(np.arange(len(levels)), _tick_labels(levels, spec, df, manifest))
                ax.set_xlim(-0.4, len(levels) - 0.6)
            else:
                _style.set_auto_scale(ax, levels, "x")
                if len(levels) <= 10:
                    ax.set_xticks(levels, [_style.fmt_num(v) for v in levels])
        if temporal:
            ax = axes[2]
            seqs = df.drop_duplicates("sequence_id")
            err = np.abs(pd.to_numeric(seqs["time_offset_err_ms"], errors="coerce").to_numpy(dtype=float))
            xs = seqs["x"].to_numpy(dtype=float)
            fin = np.isfinite(err)
            ax.plot(xs[fin], err[fin], ".", color="#999999", ms=5, label="one sequence")
            if fin.any():
                g = pd.DataFrame({"x": xs[fin], "e": err[fin]}).groupby("x")["e"].median()
                ax.plot(g.index, g.to_numpy(), "o-", color="k", lw=1.6, label="median")
            _log_if_wide(ax, err[fin])
            _style.set_auto_scale(ax, levels, "x")
            ax.set_xlabel(spec.label)
            ax.set_ylabel("|estimated - true offset| [ms]")
            ax.set_title("clock-offset estimate (per sequence)")
            ax.legend(loc="upper left")
        _solver_legend(fig, [s for s in solvers if s in med.index.get_level_values(0)], colors,
                       loc="outside right upper")  # fmt: skip
        note = " (a single level in this copy)" if single else ""
        ev_txt = "clock offset estimated from the streams" if ev == "estimated" else f"{ev} evaluation"
        seqs = f"{n_seq} sequence{'' if n_seq == 1 else 's'}"
        fig.suptitle(f"Robustness, track {spec.track}: X error against {spec.label.split(' [')[0]}{note}\n"
                     f"{seqs}, {ev_txt}, medians over the runs that succeeded")  # fmt: skip
        return _style.save(fig, path)


# --------------------------------------------------------------------------- #
# error against the motion descriptors
# --------------------------------------------------------------------------- #
_DESC = (
    ("axis_scatter_lambda2", "rotation-axis scatter λ₂ [-] (below 1e-6 drawn at 1e-6)", 1e-6),
    ("mean_rot_angle_deg", "mean keyframe rotation [deg]", None),
    ("n_motions", "keyframe motions [count]", None),
)
_MAX_POINTS = 20000


def _robust_floor(y: np.ndarray) -> float:
    """Lower limit of a log error axis: a third of the 0.2 % quantile, so single exact hits do not stretch it."""
    y = y[np.isfinite(y) & (y > 0)]
    return float(np.quantile(y, 0.002) / 3.0) if y.size else _ERR_FLOOR


def _binned_medians(x: np.ndarray, y: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Median x and y in each bin of ``edges`` holding at least two points."""
    b = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, edges.size - 2)
    order = np.argsort(b, kind="stable")
    b, x, y = b[order], x[order], y[order]
    cuts = np.flatnonzero(np.diff(b)) + 1
    bx, by = [], []
    for xs, ys in zip(np.split(x, cuts), np.split(y, cuts)):
        if xs.size >= 3:
            bx.append(np.median(xs))
            by.append(np.median(ys))
    return np.asarray(bx), np.asarray(by)


def plot_error_vs_descriptors(results: pd.DataFrame, path) -> Path:
    """X error of the solvers against the motion descriptors of the sequences.

    Grey dots are single runs (all solvers, all tracks, oracle evaluation);
    lines are the per-solver medians in bins of the descriptor.

    Parameters
    ----------
    results : pandas.DataFrame
        The results table (:func:`load_results`).
    path : str or Path
        PNG file to write.

    Returns
    -------
    Path
    """
    df = _check_results(results)
    desc = [d for d in _DESC if d[0] in df.columns]
    if not desc:
        raise InputError(f"results: expected descriptor columns {[d[0] for d in _DESC]}, got none")
    df, ev = _pick_eval(df, "oracle")
    good = _ok_errors(df)
    solvers = _style.solver_order(good["solver"].astype(str).unique())
    colors = _style.solver_colors(solvers)
    stride = max(1, int(np.ceil(len(good) / _MAX_POINTS)))
    solver_col = good["solver"].astype(str).to_numpy()
    with _style.rc_context():
        fig = _style.new_figure(5.0 * len(desc) + 2.4, 9.0)
        axes = np.atleast_2d(fig.subplots(2, len(desc), squeeze=False))
        for c, (col, label, floor) in enumerate(desc):
            x_all = pd.to_numeric(good[col], errors="coerce").to_numpy(dtype=float)
            if floor is not None:
                x_all = np.maximum(x_all, floor)
            for r, (ecol, ylabel) in enumerate((("X_rot_err_deg", "X rotation error [deg]"),
                                                ("X_trans_err_mm", "X translation error [mm]"))):  # fmt: skip
                ax = axes[r, c]
                y_all = _positive(good[ecol])
                fin = np.isfinite(x_all) & np.isfinite(y_all)
                y_lo = _robust_floor(y_all[fin])
                hidden = int((y_all[fin] < y_lo).sum())
                note = f"; {hidden} below the axis" if hidden else ""
                ax.plot(x_all[fin][::stride], y_all[fin][::stride], ".", color="#b0b0b0", ms=3, alpha=0.6,
                        label=f"single runs (all solvers{note})")  # fmt: skip
                xv = np.unique(x_all[fin])
                log_x = xv.size >= 2 and xv.min() > 0 and xv.max() >= 10 * xv.min()
                if xv.size >= 2:
                    n_bins = int(np.clip(xv.size // 5, 2, 12))
                    if log_x:
                        edges = np.geomspace(xv.min(), xv.max() * (1 + 1e-9), n_bins + 1)
                    else:
                        edges = np.linspace(xv.min(), xv.max() * (1 + 1e-9) + 1e-12, n_bins + 1)
                    for s in solvers:
                        sel = fin & (solver_col == s)
                        if sel.sum() < 2:
                            continue
                        bx, by = _binned_medians(x_all[sel], y_all[sel], edges)
                        ax.plot(bx, by, "o-", color=colors[s], lw=1.5, ms=3.5)
                if log_x:
                    _style.log_scale(ax, "x", xv)
                _log_if_wide(ax, y_all[fin][y_all[fin] >= y_lo])
                if ax.get_yscale() == "log":
                    ax.set_ylim(bottom=y_lo)
                ax.legend(loc="upper right", fontsize=7)
                ax.set_xlabel(label)
                ax.set_ylabel(ylabel)
                ax.set_title(f"{ylabel.split(' [')[0]} vs {col}")
        _solver_legend(fig, solvers, colors, loc="outside right upper")
        fig.suptitle(f"X error against the motion descriptors: {good['sequence_id'].nunique():,} sequences, "
                     f"{ev} evaluation; lines: per-solver medians in bins of the descriptor")  # fmt: skip
        return _style.save(fig, path)


# --------------------------------------------------------------------------- #
# efficiency against the Cramér-Rao bound
# --------------------------------------------------------------------------- #
#: Columns the efficiency figure needs (the bound columns of :mod:`kinhec.evaluate.benchmark`).
EFFICIENCY_COLUMNS = ("X_rot_efficiency", "X_trans_efficiency", "crlb_modelled")


def has_efficiency(results: pd.DataFrame) -> bool:
    """True when ``results`` carries the Cramér-Rao bound columns with at least one finite efficiency."""
    return all(c in results.columns for c in EFFICIENCY_COLUMNS) and bool(
        np.isfinite(pd.to_numeric(results["X_rot_efficiency"], errors="coerce")).any()
    )


def plot_efficiency(results: pd.DataFrame, path) -> Path:
    """Median efficiency (X error / Cramér-Rao bound) per track and solver, rotation and translation.

    One group of bars per track (``oracle`` rows), one bar per solver; the
    dashed line at 1 is the bound.  Tracks whose sequences are partly outside
    the bound's model (outliers, DH errors) are marked with ``*`` in their
    label: there a ratio compares solvers but is not a limit.

    Parameters
    ----------
    results : pandas.DataFrame
        The results table with the bound columns (:func:`has_efficiency`).
    path : str or Path
        PNG file to write.

    Returns
    -------
    Path

    Raises
    ------
    InputError
        If the table lacks the bound columns or has no finite efficiency.
    """
    df = _check_results(results)
    if not has_efficiency(df):
        raise InputError("results: expected the bound columns X_rot_efficiency, X_trans_efficiency, crlb_modelled "
                         "with finite values (run kinhec benchmark with this version)")  # fmt: skip
    df = _ok_errors(df.loc[df["eval_sync"].astype(str) == "oracle"])
    solvers = _style.solver_order(df["solver"].astype(str).unique())
    colors = _style.solver_colors(solvers)
    present = set(df["track"].astype(str))
    tracks = [t for t in TRACKS if t in present] + sorted(present - set(TRACKS))
    n_t, n_s = len(tracks), len(solvers)
    med = np.full((2, n_t, n_s), np.nan)
    labels = []
    for i, t in enumerate(tracks):
        sub = df.loc[df["track"].astype(str) == t]
        modelled = sub["crlb_modelled"].fillna(False).astype(bool).mean()
        labels.append(f"{t}{'' if modelled == 1.0 else ' *'}\n[{sub['sequence_id'].nunique()} seq]")
        for j, s in enumerate(solvers):
            g = sub.loc[sub["solver"].astype(str) == s]
            for k, c in enumerate(("X_rot_efficiency", "X_trans_efficiency")):
                v = pd.to_numeric(g[c], errors="coerce").to_numpy(dtype=float)
                v = v[np.isfinite(v)]
                if v.size:
                    med[k, i, j] = max(float(np.median(v)), _ERR_FLOOR)
    width = 0.84 / max(n_s, 1)
    with _style.rc_context():
        fig = _style.new_figure(max(12.0, 1.25 * n_t + 4.0), 8.0)
        axes = fig.subplots(2, 1, sharex=True)
        x = np.arange(n_t)
        for k, ax in enumerate(axes):
            for j, s in enumerate(solvers):
                ax.bar(x - 0.42 + (j + 0.5) * width, med[k, :, j], width=width * 0.95, color=colors[s], label=s)
            ax.axhline(1.0, color="#333333", ls="--", lw=1.0)
            ax.set_ylabel(("rotation" if k == 0 else "translation") + " error / bound")
            ax.set_title(f"median efficiency of the X {'rotation' if k == 0 else 'translation'} "
                         "(1 = Cramér-Rao bound of the same keyframe pairs)")  # fmt: skip
            ax.grid(axis="x", visible=False)
            for b in x[:-1]:
                ax.axvline(b + 0.5, color="#cccccc", lw=0.8)
            _log_if_wide(ax, np.r_[med[k].ravel(), 1.0])
        axes[1].set_xticks(x, labels)
        axes[1].set_xlabel("track (* = partly outside the bound's model: outliers, DH errors)")
        axes[1].set_xlim(-0.5, n_t - 0.5)
        _solver_legend(fig, solvers, colors, bars=True, loc="outside right upper")
        fig.suptitle("Efficiency of every solver against the per-sequence Cramér-Rao bound (oracle)")
        return _style.save(fig, path)
