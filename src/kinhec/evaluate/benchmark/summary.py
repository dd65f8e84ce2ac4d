"""Counts and medians of a results table (``summary.json``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from kinhec.io.schema import TRACKS
from kinhec.solvers import registry as _registry
from kinhec.evaluate.benchmark.protocol import EVAL_SYNCS, is_missing_value

# --------------------------------------------------------------------------- #
# summaries
# --------------------------------------------------------------------------- #
_STAT_COLUMNS = ("X_rot_err_deg", "X_trans_err_mm", "Y_rot_err_deg", "Y_trans_err_mm", "runtime_ms",
                 "scale_err_rel", "n_inliers", "n_motions")  # fmt: skip


def ordered_names(values, reference) -> list:
    """The distinct strings of ``values``: those of ``reference`` in its order, then the others sorted."""
    if isinstance(values, np.ndarray) and values.dtype == object:
        values = [v for v in pd.unique(values) if isinstance(v, str)]  # (first appearance, as below; one C pass)
    else:
        values = list(dict.fromkeys(v for v in values if isinstance(v, str)))
    known = [v for v in reference if v in values]
    return known + sorted(v for v in values if v not in known)


def _num(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def string_column(s: pd.Series) -> np.ndarray:
    """A column as an object array of str, missing values (None, NaN, NA) as ``""``."""
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    names = np.asarray(uniques, dtype=object)
    if pd.api.types.infer_dtype(names, skipna=True) in ("string", "empty"):
        # strings and missing values (the results' text columns): every row points at one of the distinct
        # strings (a few per column but the sequence ids), missing ones (code -1) at the last, ""
        return np.append(names, "")[codes]
    return np.array(["" if is_missing_value(v) else str(v) for v in s.to_numpy(dtype=object)], dtype=object)


def finite_median(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(np.median(x)) if x.size else math.nan


def _mean(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(np.mean(x)) if x.size else math.nan


_ERROR_COLUMNS = ("X_rot_err_deg", "X_trans_err_mm", "Y_rot_err_deg", "Y_trans_err_mm")


class ResultColumns:
    """The columns of a results table as numpy arrays, extracted once."""

    def __init__(self, results: pd.DataFrame) -> None:
        self.ok = results["ok"].to_numpy(dtype=bool, na_value=False)
        self.num = {c: _num(results[c]) for c in _STAT_COLUMNS + ("time_offset_err_ms", "time_offset_peak_corr",
                                                                  "time_offset_runtime_ms")}  # fmt: skip
        self.track = string_column(results["track"])
        self.solver = string_column(results["solver"])
        self.mode = string_column(results["eval_sync"])
        self.level = string_column(results["level"])
        self.sid = string_column(results["sequence_id"])

    def stats(self, idx: np.ndarray, compact: bool = False) -> dict:
        ok = self.ok[idx]
        n = int(idx.size)
        d = {"n": n, "n_ok": int(ok.sum()), "success_rate": float(ok.mean()) if n else math.nan}
        for c in (_ERROR_COLUMNS if compact else _STAT_COLUMNS):
            x = self.num[c][idx][ok]
            d[f"{c}_median"] = finite_median(x)
            if c in _ERROR_COLUMNS and not compact:
                d[f"{c}_mean"] = _mean(x)
        return d

    def clock(self, idx: np.ndarray) -> dict:
        _, first = np.unique(self.sid[idx], return_index=True)
        one = idx[first]
        err = np.abs(self.num["time_offset_err_ms"][one])
        return {
            "n_sequences": int(one.size),
            "abs_err_ms_median": finite_median(err),
            "abs_err_ms_mean": _mean(err),
            "peak_corr_median": finite_median(self.num["time_offset_peak_corr"][one]),
            "runtime_ms_median": finite_median(self.num["time_offset_runtime_ms"][one]),
        }


def _groups(*keys: np.ndarray) -> dict:
    """Row indices per distinct key tuple, in order of first appearance."""
    if keys[0].size == 0:
        return {}
    frame = pd.DataFrame({str(i): k for i, k in enumerate(keys)})
    return {k if isinstance(k, tuple) else (k,): np.asarray(v) for k, v in
            frame.groupby(list(frame.columns), sort=False).indices.items()}  # fmt: skip


def summarize_results(results: pd.DataFrame, solvers=None) -> dict:
    """Counts and medians of a results table (``summary.json`` without its header).

    Returns
    -------
    dict
        ``sequences[track]`` -> number of sequences;
        ``results[track][solver][eval_sync]`` -> ``n``, ``n_ok``,
        ``success_rate``, ``<column>_median`` (errors over the ``ok`` rows,
        runtime, scale error, inliers, motions) and ``<error>_mean``;
        ``levels[track][level][solver]`` -> ``n``, ``n_ok``, ``success_rate``
        and the error medians of the ``oracle`` rows;
        ``clock_offset[track]`` -> the clock-offset estimation, one value per
        sequence (``estimated`` rows); ``efficiency`` -> :func:`efficiency_summary`.
    """
    solver_order = _registry.evaluated_names() if solvers is None else list(solvers)
    out: dict = {"sequences": {}, "results": {}, "levels": {}, "clock_offset": {}, "efficiency": {}}
    if results is None or len(results) == 0:
        return out
    cols = ResultColumns(results)
    by_track = _groups(cols.track)
    for track in ordered_names(cols.track, TRACKS):
        out["sequences"][track] = int(np.unique(cols.sid[by_track[(track,)]]).size)
    by_tsm = _groups(cols.track, cols.solver, cols.mode)
    oracle = np.flatnonzero(cols.mode == "oracle")
    by_tls = _groups(cols.track[oracle], cols.level[oracle], cols.solver[oracle])
    estimated = np.flatnonzero(cols.mode == "estimated")
    by_t_est = _groups(cols.track[estimated])
    tracks = ordered_names(cols.track, TRACKS)
    solvers_seen = ordered_names(cols.solver, solver_order)
    for track in tracks:
        per = {}
        for solver in solvers_seen:
            modes = {m: cols.stats(by_tsm[(track, solver, m)]) for m in EVAL_SYNCS if (track, solver, m) in by_tsm}
            if modes:
                per[solver] = modes
        out["results"][track] = per
        levels: dict = {}
        for (t, level, solver), idx in by_tls.items():
            if t == track:
                levels.setdefault(level, {})[solver] = cols.stats(oracle[idx], compact=True)
        out["levels"][track] = {lv: {s: v[s] for s in solvers_seen if s in v} for lv, v in levels.items()}
        if (track,) in by_t_est:
            out["clock_offset"][track] = cols.clock(estimated[by_t_est[(track,)]])
    out["efficiency"] = efficiency_summary(results, solver_order)
    return out


_EFFICIENCY_COLUMNS = ("X_rot_efficiency", "X_trans_efficiency", "X_rot_crlb_deg", "X_trans_crlb_mm")


def efficiency_summary(results: pd.DataFrame, solvers=None) -> dict:
    """Median efficiency (error / Cramér-Rao bound) per track and solver, ``oracle`` rows.

    Returns
    -------
    dict
        ``[track][solver]`` -> ``n`` (rows with a bound and a finite error),
        ``X_rot_efficiency_median``, ``X_trans_efficiency_median``,
        ``X_rot_crlb_deg_median``, ``X_trans_crlb_mm_median`` and
        ``modelled_fraction`` (share of those rows inside the bound's model).
        Empty for a results table without the bound columns.
    """
    if results is None or len(results) == 0 or not all(c in results.columns for c in _EFFICIENCY_COLUMNS):
        return {}
    solver_order = _registry.evaluated_names() if solvers is None else list(solvers)
    # (columns taken by index: no copy of the frame)
    oracle = np.flatnonzero(string_column(results["eval_sync"]) == "oracle")
    track, solver = string_column(results["track"])[oracle], string_column(results["solver"])[oracle]
    eff = {c: _num(results[c])[oracle] for c in _EFFICIENCY_COLUMNS}
    modelled = results["crlb_modelled"].to_numpy(dtype=object)[oracle]
    finite = np.isfinite(eff["X_rot_efficiency"])
    by_ts = _groups(track[finite], solver[finite])
    rows = np.flatnonzero(finite)
    out: dict = {}
    for t in ordered_names(track, TRACKS):
        per = {}
        for sv in ordered_names(solver[track == t], solver_order):
            if (t, sv) not in by_ts:
                continue
            idx = rows[by_ts[(t, sv)]]
            d = {"n": int(idx.size)}
            for c in _EFFICIENCY_COLUMNS:
                d[f"{c}_median"] = finite_median(eff[c][idx])
            d["modelled_fraction"] = float(np.mean([m is True or m == 1 for m in modelled[idx]]))
            per[sv] = d
        if per:
            out[t] = per
    return out
