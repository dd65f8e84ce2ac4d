"""Dataset-wide content of the benchmark page: leaderboard, robustness curves, composition, sequence table.

Everything here turns the index (``sequences.parquet``) and the results table
(``benchmarks/results.parquet``) into plain JSON-ready dicts and lists; the
page (:mod:`kinhec.report.page`) embeds them and its script draws them.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from kinhec.util import jsonutil
from kinhec.util.errors import DatasetFormatError
from kinhec.io import is_asynchronous
from kinhec.io.schema import TRACKS
from kinhec.solvers.registry import evaluated_names
from kinhec.report.viz.results import RESULTS_FILE, ROBUSTNESS_FACTORS, load_results, parse_level

__all__ = [
    "VALIDATION_FILE",
    "ERROR_METRICS",
    "DESCRIPTORS",
    "COMPOSITION_COLUMNS",
    "read_results",
    "read_validation",
    "validation_from_dict",
    "validation_from_report",
    "solver_order",
    "leaderboard",
    "robustness_curves",
    "composition",
    "sequence_rows",
]

#: Validation report read by the page when present (``kinhec validate DIR --report DIR/validation.json``).
VALIDATION_FILE = "validation.json"

#: Result columns summarised per solver: (column, label).  Oracle and estimated are shown side by side.
ERROR_METRICS = (
    ("X_rot_err_deg", "X rot [deg]"),
    ("X_trans_err_mm", "X trans [mm]"),
    ("Y_rot_err_deg", "Y rot [deg]"),
    ("Y_trans_err_mm", "Y trans [mm]"),
)

#: Index columns drawn as distributions: (column, label, factor to the axis unit).
DESCRIPTORS = (
    ("axis_scatter_lambda2", "rotation-axis spread lambda2", 1.0),
    ("mean_rot_angle_deg", "mean motion angle [deg]", 1.0),
    ("mean_trans_m", "mean motion translation [mm]", 1e3),
    ("translation_cond", "translation condition number", 1.0),
    ("n_camera_frames", "camera frames", 1.0),
    ("n_motions", "keyframe motions", 1.0),
)

#: Index columns whose counts make the composition bars.
COMPOSITION_COLUMNS = ("track", "robot", "family", "configuration", "camera_noise_model", "sync")

# Columns added by the Cramer-Rao helper when they exist: bounds and efficiencies.
_CRLB_RE = re.compile(r"(crlb|efficiency)", re.IGNORECASE)


def _ordered(values, reference) -> list[str]:
    present = list(dict.fromkeys(str(v) for v in values if isinstance(v, str)))
    return [r for r in reference if r in present] + sorted(v for v in present if v not in reference)


def _finite(v) -> float | None:
    """A float for JSON, or None for NaN / inf / missing."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _round(v, digits: int = 4) -> float | None:
    f = _finite(v)
    if f is None or f == 0.0:
        return f
    return round(f, digits - 1 - int(math.floor(math.log10(abs(f)))))


def read_results(root: Path) -> pd.DataFrame | None:
    """``root/benchmarks/results.parquet`` with its columns checked, or None when there is no results file.

    Raises
    ------
    DatasetFormatError
        If the file exists but cannot be read or lacks a needed column.
    """
    path = Path(root) / RESULTS_FILE
    if not path.is_file():
        return None
    df = load_results(path).copy()
    # the index spells sync "sync"/"async" or "synchronous"/"asynchronous": the page uses one spelling
    if "sync" in df.columns:
        df["sync"] = ["asynchronous" if is_asynchronous(v) else "synchronous" for v in df["sync"]]
    df["ok"] = df["ok"].fillna(False).astype(bool)
    return df


def read_validation(path) -> dict:
    """Per-sequence validation status from a report written by ``kinhec validate --report``.

    Parameters
    ----------
    path : str or Path
        The JSON report (:meth:`kinhec.dataset.validate.ValidationReport.to_dict`).

    Returns
    -------
    dict
        ``{"ok": bool, "sample": str, "checked": int, "findings": {sequence_id: [[level, check, message], ...]},
        "folder": [[level, check, message], ...]}``; ``folder`` holds the findings without a sequence.

    Raises
    ------
    DatasetFormatError
        If the file cannot be read or is not a validation report.
    """
    path = Path(path)
    try:
        rep = jsonutil.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetFormatError(f"{path}: cannot read the validation report ({exc})") from None
    if not isinstance(rep, dict) or not isinstance(rep.get("findings"), list) or "ok" not in rep:
        raise DatasetFormatError(f"{path}: expected a kinhec validation report (keys 'ok', 'findings'), got another JSON")
    return validation_from_dict(rep)


def validation_from_dict(rep: dict) -> dict:
    """What :func:`read_validation` returns, from the report's dict (``ValidationReport.to_dict()``)."""
    per: dict[str, list] = {}
    folder = []
    for f in rep["findings"]:
        if not isinstance(f, dict):
            continue
        item = [str(f.get("level")), str(f.get("check")), str(f.get("message"))]
        sid = f.get("sequence_id")
        (per.setdefault(str(sid), []) if sid else folder).append(item)
    seqs = rep.get("sequences") or {}
    return {"ok": bool(rep["ok"]), "sample": str(seqs.get("sample", "all")), "checked": seqs.get("checked"),
            "findings": per, "folder": folder}  # fmt: skip


def validation_from_report(report) -> dict:
    """What :func:`read_validation` returns, from a :class:`kinhec.dataset.validate.ValidationReport` object."""
    d = report.to_dict()
    per: dict[str, list] = {}
    folder = []
    for f in d["findings"]:
        item = [f["level"], f["check"], f["message"]]
        (per.setdefault(f["sequence_id"], []) if f["sequence_id"] else folder).append(item)
    return {"ok": d["ok"], "sample": d["sequences"]["sample"], "checked": d["sequences"]["checked"],
            "findings": per, "folder": folder}  # fmt: skip


def solver_order(results: pd.DataFrame) -> list[str]:
    """Solvers of the results in registry order, unknown ones after them (alphabetical)."""
    return _ordered(results["solver"].unique(), evaluated_names())


def _crlb_columns(results: pd.DataFrame) -> list[str]:
    return [c for c in results.columns if _CRLB_RE.search(c) and pd.api.types.is_numeric_dtype(results[c])
            and not pd.api.types.is_bool_dtype(results[c])]  # fmt: skip


def _crlb_label(col: str) -> str:
    """``X_rot_crlb_deg`` -> ``X rot CRLB [deg]``; ``X_trans_efficiency`` -> ``X trans efficiency``."""
    parts = col.split("_")
    unit = parts.pop() if parts[-1] in ("deg", "mm", "m", "rad", "s", "ms") else None
    words = ["CRLB" if p == "crlb" else p for p in parts]
    return " ".join(words) + (f" [{unit}]" if unit else "")


def _is_bound(col: str) -> bool:
    """A Cramér-Rao bound column (``*crlb*``): a property of the sequence, the same for every solver."""
    return "crlb" in col.lower()


def leaderboard(results: pd.DataFrame) -> dict:
    """Per track and solver: counts, success rate and median errors, oracle and estimated side by side.

    Returns
    -------
    dict
        ``{"columns": [{"key", "label", "group"}...], "tracks": {track: [row, ...]}, "crlb": [...],
        "bounds": {track: {"<col>:<mode>": median}}}``; a row maps every column key to a number (None when
        not applicable) plus ``solver``.  Medians are over the runs that returned an estimate (``ok``);
        ``succ`` is that share in percent (oracle rows).  Cramér-Rao columns (``*crlb*``, ``*efficiency*``)
        are summarised when the table has them: the efficiencies (error / bound) per solver, the bounds,
        which depend on the sequence and not on the solver, once per track in ``bounds`` (median over the
        sequences).
    """
    crlb = _crlb_columns(results)
    columns = [{"key": "solver", "label": "solver", "group": ""},
               {"key": "n", "label": "sequences", "group": ""},
               {"key": "succ", "label": "succ. %", "group": ""}]  # fmt: skip
    for col, label in ERROR_METRICS:
        for mode in ("oracle", "estimated"):
            columns.append({"key": f"{col}:{mode}", "label": f"{label} {mode}", "group": label, "mode": mode,
                            "best": True})  # fmt: skip
    for col in crlb:
        if _is_bound(col):
            continue
        for mode in ("oracle", "estimated"):
            label = _crlb_label(col)
            columns.append({"key": f"{col}:{mode}", "label": f"{label} {mode}", "group": label, "mode": mode,
                            "best": True})  # fmt: skip
    columns.append({"key": "runtime_ms", "label": "runtime [ms]", "group": ""})

    stats = [c for c, _ in ERROR_METRICS] + [c for c in crlb if not _is_bound(c)]
    ok = results.loc[results["ok"]]
    med = ok.groupby(["track", "solver", "eval_sync"], sort=False)[stats + ["runtime_ms"]].median()
    counts = results.groupby(["track", "solver", "eval_sync"], sort=False).agg(
        n=("sequence_id", "nunique"), succ=("ok", "mean"))  # fmt: skip
    bound_cols = [c for c in crlb if _is_bound(c)]
    # one bound per (sequence, synchronisation), then its median over the track's sequences
    track_bounds = (results.groupby(["track", "eval_sync", "sequence_id"], sort=False)[bound_cols].median()
                    .groupby(level=[0, 1], sort=False).median() if bound_cols else None)  # fmt: skip
    solvers = solver_order(results)
    tracks: dict[str, list] = {}
    bounds: dict[str, dict] = {}
    for track in _ordered(results["track"].unique(), TRACKS):
        rows = []
        for solver in solvers:
            if (track, solver, "oracle") not in counts.index and (track, solver, "estimated") not in counts.index:
                continue
            base = (track, solver, "oracle") if (track, solver, "oracle") in counts.index else (track, solver, "estimated")
            row = {"solver": solver, "n": int(counts.loc[base, "n"]), "succ": _round(100.0 * counts.loc[base, "succ"])}
            for col in stats:
                for mode in ("oracle", "estimated"):
                    key = (track, solver, mode)
                    row[f"{col}:{mode}"] = _round(med.loc[key, col]) if key in med.index else None
            row["runtime_ms"] = _round(med.loc[base, "runtime_ms"]) if base in med.index else None
            rows.append(row)
        tracks[track] = rows
        if track_bounds is not None:
            b = {}
            for mode in ("oracle", "estimated"):
                if (track, mode) in track_bounds.index:
                    m = track_bounds.loc[(track, mode)]
                    b.update({f"{col}:{mode}": _round(m[col]) for col in bound_cols if np.isfinite(m[col])})
            bounds[track] = b
    present = {c["key"] for c in columns if any(r.get(c["key"]) is not None for rows in tracks.values() for r in rows)}
    columns = [c for c in columns if c["key"] in ("solver", "n", "succ") or c["key"] in present]
    return {"columns": columns, "tracks": tracks, "crlb": crlb, "bounds": bounds}


def _natural_key(s: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def robustness_curves(results: pd.DataFrame, manifest: pd.DataFrame) -> dict:
    """Median error per level of every swept factor (:data:`kinhec.report.viz.results.ROBUSTNESS_FACTORS`).

    Returns
    -------
    dict
        ``{track: [curve, ...]}``; a curve is ``{"name", "label", "eval_sync", "categorical", "x": [...],
        "ticks": [...], "solvers": {solver: {"rot": [...], "trans": [...], "rot_q1": [...], "rot_q3": [...],
        "trans_q1": [...], "trans_q3": [...], "n": [...]}}}`` with the median and quartiles of the X errors
        over the successful runs at each level (None where a solver has none).
    """
    out: dict[str, list] = {}
    solvers = solver_order(results)
    info = manifest.set_index(manifest["sequence_id"].astype(str))
    for spec in ROBUSTNESS_FACTORS:
        df = results.loc[results["track"].astype(str) == spec.track]
        if df.empty:
            continue
        x = df["level"].map(lambda s: parse_level(s).get(spec.key))
        df = df.assign(x=x).loc[x.notna() & (x != "")]
        if not spec.categorical:
            df = df.assign(x=pd.to_numeric(df["x"], errors="coerce") * spec.factor)
            df = df.loc[np.isfinite(df["x"].to_numpy(dtype=float))]
        ev = df["eval_sync"].astype(str)
        mode = spec.eval_sync if (ev == spec.eval_sync).any() else "oracle"
        df = df.loc[ev == mode]
        if df.empty:
            continue
        levels = sorted(df["x"].unique(), key=_natural_key if spec.categorical else float)
        ticks = [str(v) if spec.categorical else f"{v:g}" for v in levels]
        if spec.categorical and spec.info_columns:
            for i, lv in enumerate(levels):
                ids = df.loc[df["x"] == lv, "sequence_id"].astype(str).unique()
                parts = []
                for col, factor, unit in spec.info_columns:
                    if col in info.columns:
                        v = pd.to_numeric(info.loc[info.index.intersection(ids), col], errors="coerce").median()
                        if np.isfinite(v):
                            parts.append(f"{v * factor:.3g} {unit}")
                if parts:
                    ticks[i] = f"{lv} ({', '.join(parts)})"
        ok = df.loc[df["ok"]]
        q = ok.groupby(["solver", "x"])[["X_rot_err_deg", "X_trans_err_mm"]].quantile([0.25, 0.5, 0.75])
        n = df.groupby(["solver", "x"])["sequence_id"].nunique()
        per = {}
        for solver in solvers:
            if solver not in set(df["solver"]):
                continue
            d = {k: [] for k in ("rot", "trans", "rot_q1", "rot_q3", "trans_q1", "trans_q3", "n")}
            for lv in levels:
                for key, col in (("rot", "X_rot_err_deg"), ("trans", "X_trans_err_mm")):
                    for suffix, p in (("", 0.5), ("_q1", 0.25), ("_q3", 0.75)):
                        k = (solver, lv, p)
                        d[key + suffix].append(_round(q.loc[k, col]) if k in q.index else None)
                d["n"].append(int(n.get((solver, lv), 0)))
            per[solver] = d
        out.setdefault(spec.track, []).append({
            "name": spec.name, "label": spec.label, "eval_sync": mode, "categorical": bool(spec.categorical),
            "x": [str(v) if spec.categorical else float(v) for v in levels], "ticks": ticks, "solvers": per,
        })  # fmt: skip
    return out


def composition(manifest: pd.DataFrame) -> dict:
    """Counts of the index per composition column (split by configuration) and the descriptor values.

    Returns
    -------
    dict
        ``{"counts": {column: {"categories": [...], "by_config": {configuration: [counts]}}},
        "descriptors": [{"column", "label", "values": {configuration: [...]}}]}``.
    """
    man = manifest.copy()
    man["sync"] = ["asynchronous" if is_asynchronous(v) else "synchronous" for v in man["sync"]]
    configs = _ordered(man["configuration"].astype(str).unique(), ["eye_in_hand", "eye_to_hand"])
    counts = {}
    for col in COMPOSITION_COLUMNS:
        if col not in man.columns:
            continue
        cats = _ordered(man[col].astype(str).unique(), TRACKS if col == "track" else [])
        tab = pd.crosstab(man[col].astype(str), man["configuration"].astype(str)).reindex(
            index=cats, columns=configs, fill_value=0)  # fmt: skip
        counts[col] = {"categories": cats, "by_config": {c: [int(v) for v in tab[c]] for c in configs}}
    descriptors = []
    for col, label, factor in DESCRIPTORS:
        if col not in man.columns:
            continue
        vals = {}
        for c in configs:
            v = pd.to_numeric(man.loc[man["configuration"].astype(str) == c, col], errors="coerce").to_numpy(float)
            v = v[np.isfinite(v)] * factor
            vals[c] = [_round(x, 4) for x in v]
        descriptors.append({"column": col, "label": label, "values": vals})
    return {"counts": counts, "descriptors": descriptors}


def _status(sid: str, validation: dict | None) -> tuple[str, list]:
    if validation is None:
        return "not validated", []
    found = validation["findings"].get(sid, [])
    errors = sum(1 for f in found if f[0] == "error")
    if errors:
        return f"failed ({errors} error{'s' if errors != 1 else ''})", found
    if validation["sample"] != "all" and not found:
        return "not in the validated sample", []
    warnings = len(found)
    return ("passed" if not warnings else f"passed ({warnings} warning{'s' if warnings != 1 else ''})"), found


def sequence_rows(manifest: pd.DataFrame, results: pd.DataFrame | None, validation: dict | None) -> list[dict]:
    """One row per sequence for the sequence table, with every solver's result on it.

    Returns
    -------
    list of dict
        ``id, track, level, robot, configuration, family, sync, camera_model`` (strings), ``best``
        (solver with the smallest X rotation error, oracle), ``best_rot`` / ``median_rot`` [deg] and
        ``median_trans`` [mm] over the solvers, ``status`` and ``findings`` (validation) and
        ``results``: ``[solver, eval_sync, ok, X rot, X trans, Y rot, Y trans, error message]`` rows.
    """
    per_seq: dict[str, list] = {}
    if results is not None and len(results):
        cols = ["sequence_id", "solver", "eval_sync", "ok", "X_rot_err_deg", "X_trans_err_mm",
                "Y_rot_err_deg", "Y_trans_err_mm"]  # fmt: skip
        sub = results[cols + (["error"] if "error" in results.columns else [])]
        for rec in sub.itertuples(index=False):
            err = getattr(rec, "error", None)
            per_seq.setdefault(str(rec.sequence_id), []).append([
                str(rec.solver), str(rec.eval_sync), bool(rec.ok), _round(rec.X_rot_err_deg),
                _round(rec.X_trans_err_mm), _round(rec.Y_rot_err_deg), _round(rec.Y_trans_err_mm),
                err if isinstance(err, str) and err else None,
            ])  # fmt: skip
    rows = []
    for rec in manifest.to_dict("records"):
        sid = str(rec["sequence_id"])
        res = per_seq.get(sid, [])
        oracle = [r for r in res if r[1] == "oracle" and r[2] and r[3] is not None]
        best = min(oracle, key=lambda r: r[3]) if oracle else None
        status, findings = _status(sid, validation)
        rows.append({
            "id": sid, "track": str(rec["track"]), "level": str(rec["level"]), "robot": str(rec["robot"]),
            "configuration": str(rec["configuration"]), "family": str(rec["family"]),
            "sync": "asynchronous" if is_asynchronous(rec["sync"]) else "synchronous",
            "camera_model": str(rec.get("camera_noise_model")),
            "best": best[0] if best else None, "best_rot": best[3] if best else None,
            "median_rot": _round(np.median([r[3] for r in oracle])) if oracle else None,
            "median_trans": _round(np.median([r[4] for r in oracle if r[4] is not None])) if oracle else None,
            "status": status, "findings": findings[:20], "results": res,
        })  # fmt: skip
    return rows
