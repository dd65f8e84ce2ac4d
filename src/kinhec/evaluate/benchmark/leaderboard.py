"""The leaderboard (``leaderboard.md``) of a results table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from kinhec import __version__
from kinhec.solvers import registry as _registry
from kinhec.evaluate.benchmark.protocol import SCALE_SOLVER
from kinhec.evaluate.benchmark.summary import (ResultColumns, efficiency_summary, finite_median, ordered_names, string_column,
                                     summarize_results)

def efficiency_markdown(results: pd.DataFrame, solvers=None, *, summary=None) -> str:
    """The efficiency section of the leaderboard (empty string without bound columns)."""
    eff = efficiency_summary(results, solvers) if summary is None else summary
    if not eff:
        return ""
    used = ordered_names([s for per in eff.values() for s in per],
                         _registry.evaluated_names() if solvers is None else list(solvers))  # fmt: skip
    lines = ["## Efficiency (error / Cramér-Rao bound)", "",
             "Median over the sequences of each solver's X error divided by the sequence's Cramér-Rao bound "
             "(rotation / translation, `oracle`); 1 is the best any unbiased solver can do on the same keyframe "
             "pairs. `bound [deg / mm]` is the median bound itself. Where the data have effects the bound does not "
             "model (outliers, DH errors: `in model` < 100 %) a ratio is a comparison, not a limit.", ""]  # fmt: skip
    rows = []
    for track, per in eff.items():
        any_st = next(iter(per.values()))
        r = [track, f"{_f(any_st['X_rot_crlb_deg_median'], 4)} / {_f(any_st['X_trans_crlb_mm_median'], 3)}",
             _f(100.0 * any_st["modelled_fraction"], 0)]  # fmt: skip
        for sv in used:
            st = per.get(sv)
            r.append("-" if st is None else
                     f"{_f(st['X_rot_efficiency_median'], 2)} / {_f(st['X_trans_efficiency_median'], 2)}")  # fmt: skip
        rows.append(r)
    lines += _md_table(["track", "bound [deg / mm]", "in model %"] + [_solver_label(s) for s in used], rows) + [""]
    return "\n".join(lines)


def _f(v, digits: int) -> str:
    if v is None or not np.isfinite(v):
        return "-"
    if abs(v) >= 1e5:
        return f"{v:.3g}"
    return f"{v:.{digits}f}"


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table as lines, in the published leaderboard's layout (``|---|`` separators)."""
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


def _solver_label(name: str) -> str:
    """A solver's name as a table cell; plug-ins (not kinhec baselines) are marked."""
    return name + (" (plug-in)" if _registry.is_plugin(name) else "")


def _level_factors(level: str) -> dict:
    """``"cone=0|rot=8-15"`` -> ``{"cone": "0", "rot": "8-15"}`` (parts without ``=`` ignored)."""
    out = {}
    for part in str(level).split("|"):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _leaderboard_cell(text: str) -> str:
    return text.replace("|", "\\|")


def _level_sort_key(v: str):
    """Numbers in their numeric order (``3, 5, 10, 30``), then words alphabetically."""
    try:
        return (0, float(v), "")
    except ValueError:
        return (1, 0.0, v)


#: How a row without an estimate is judged: (prefix of its ``error``, kind, what it means).
FAILURE_KINDS = (
    ("DegenerateMotionError", "expected",
     "the motion does not determine what the solver estimates, and it says so rather than guess"),
    # a sequence whose keyframes (the protocol's minimum rotation and translation between them) are too few: the
    # solvers' own input check refuses them; 100 of the full tier's 60,000 mixed sequences under oracle pairing
    ("InputError: A, B: expected at least", "expected",
     "the protocol's keyframes leave fewer motions than the solver needs"),
    ("InputError: A_abs, B_abs: expected at least", "expected",
     "the protocol's keyframes leave fewer pose pairs than the solver needs"),
    ("reading failed", "unexpected", "the sequence could not be read"),
    ("", "unexpected", "the solver raised an error or returned no estimate"),
)  # fmt: skip


def describe_failed_rows(results: pd.DataFrame, limit: int = 3) -> list[str]:
    """One line per kind of row without an estimate (``ok`` false): how many, which, and whether expected.

    Parameters
    ----------
    results : pandas.DataFrame
        A results table (``results.parquet``).
    limit : int
        Rows named per kind; the others are counted.

    Returns
    -------
    list of str
        Empty when every row has an estimate, e.g. ``["1 row without an estimate, expected (the motion does not
        determine ...): andreff_scale on motion-000000 (cone=0|rot=8-15|n=10, oracle): DegenerateMotionError:
        ..."]``.
    """
    if results is None or len(results) == 0:
        return []
    bad = results.loc[~results["ok"].to_numpy(dtype=bool, na_value=False)]
    lines = []
    taken = np.zeros(len(bad), dtype=bool)
    errors = string_column(bad["error"]) if "error" in bad.columns else np.full(len(bad), "", dtype=object)
    for prefix, kind, meaning in FAILURE_KINDS:
        mine = np.array([(not t) and e.startswith(prefix) for e, t in zip(errors, taken)], dtype=bool)
        taken |= mine
        n = int(mine.sum())
        if not n:
            continue
        rows = bad.loc[mine].head(limit)
        named = "; ".join(f"{r.solver} on {r.sequence_id} ({r.level}, {r.eval_sync}): "
                          f"{str(r.error)[:160] if isinstance(r.error, str) and r.error else 'no message'}"
                          for r in rows.itertuples())  # fmt: skip
        more = f"; {n - limit} more in the error column of results.parquet" if n > limit else ""
        lines.append(f"{n} row{'s' if n != 1 else ''} without an estimate, {kind} ({meaning}): {named}{more}")
    return lines


def leaderboard_markdown(results: pd.DataFrame, solvers=None, dataset: str | None = None, *, summary=None) -> str:
    """The leaderboard (Markdown) of a results table, laid out as the published KinHEC leaderboard.

    One section per track (alphabetical).  A track with asynchronous
    sequences has a table per synchronisation (``estimated`` then ``oracle``,
    the estimated one followed by the clock-offset estimation error); the
    others one ``oracle`` table.  Each table lists, per solver (sorted by
    median X translation error), the number of sequences, the success rate
    (fraction), the median and mean X rotation [deg] and translation [mm]
    errors, the medians of ``Y`` (``A X = Y B`` solvers), the means of the X
    errors (after the medians: a few degenerate sequences can dominate them)
    and the median runtime [ms].  The monocular track adds the median
    relative scale error of ``andreff_scale``.  Then, per factor named in the
    ``level`` column (``key=value`` parts), the median X translation and
    rotation errors per value and solver over the sequences of that factor's
    sweep only (``oracle``).  Rows without an estimate are listed at the end
    (:func:`describe_failed_rows`).
    """
    solver_order = _registry.evaluated_names() if solvers is None else list(solvers)
    summ = summarize_results(results, solver_order) if summary is None else summary
    res = summ["results"]
    lines = [
        "# KinHEC baseline leaderboard",
        "",
        "Median errors of X (rotation in degrees, translation in millimetres) per track, against the metric ground "
        "truth; solvers sorted by median translation error.  `succ.` = fraction of sequences for which the solver "
        "returned a finite estimate.  Asynchronous sequences are evaluated twice: with the true clock offset "
        "(`oracle`) and with the offset estimated from the streams (`estimated`).  The medians come first; the "
        "means after them can be dominated by a few degenerate sequences (e.g. a motion about one axis).  The "
        "tables per factor hold only the sequences of that factor's sweep."
        + (f"  Dataset `{dataset}`, kinhec {__version__}." if dataset else ""),
        "",
    ]
    if not res:
        lines.append("No results.")
        return "\n".join(lines) + "\n"
    plugins = sorted({s for per in res.values() for s in per if _registry.is_plugin(s)})
    if plugins:
        lines += [f"Marked (plug-in): {', '.join(f'`{s}`' for s in plugins)}, solvers registered by the user "
                  "(`kinhec.solvers.register`), evaluated under the same protocol as the kinhec baselines.", ""]  # fmt: skip
    cols = ResultColumns(results) if results is not None and len(results) else None
    # the medians lead; the means follow them, apart: a few degenerate sequences (a motion about one axis) can
    # dominate a mean by orders of magnitude
    header = ["solver", "n", "succ.", "X rot median [deg]", "X trans median [mm]", "Y rot median [deg]",
              "Y trans median [mm]", "X rot mean [deg]", "X trans mean [mm]", "runtime median [ms]"]  # fmt: skip

    def solver_rows(per, mode):
        items = [(s, m[mode]) for s, m in per.items() if mode in m]
        key = lambda it: (not np.isfinite(it[1]["X_trans_err_mm_median"]), it[1]["X_trans_err_mm_median"])  # noqa: E731
        items = sorted(items, key=lambda it: (key(it)[0], key(it)[1] if not key(it)[0] else 0.0))
        return [[_solver_label(s), str(st["n"]), _f(st["success_rate"], 2), _f(st["X_rot_err_deg_median"], 3),
                 _f(st["X_trans_err_mm_median"], 3), _f(st["Y_rot_err_deg_median"], 3), _f(st["Y_trans_err_mm_median"], 3),
                 _f(st["X_rot_err_deg_mean"], 3), _f(st["X_trans_err_mm_mean"], 3), _f(st["runtime_ms_median"], 1)]
                for s, st in items]  # fmt: skip

    for track in sorted(res):
        per = res[track]
        lines += [f"## Track `{track}`"]
        modes = [m for m in ("estimated", "oracle") if any(m in v for v in per.values())]
        if modes == ["oracle"]:
            lines += _md_table(header, solver_rows(per, "oracle"))
        else:
            for m in modes:
                lines += ["", f"### synchronisation: {m}", ""] + _md_table(header, solver_rows(per, m))
                if m == "estimated" and cols is not None:
                    idx = np.flatnonzero((cols.track == track) & (cols.mode == "estimated"))
                    _, first = np.unique(cols.sid[idx], return_index=True)
                    err = np.abs(cols.num["time_offset_err_ms"][idx[first]])
                    err = err[np.isfinite(err)]
                    if err.size:
                        lines += ["", f"Time-offset estimation error (angular-speed cross-correlation) over {err.size} "
                                      f"sequences: median {_f(float(np.median(err)), 2)} ms, mean "
                                      f"{_f(float(np.mean(err)), 2)} ms, 90th percentile "
                                      f"{_f(float(np.percentile(err, 90)), 2)} ms."]  # fmt: skip
        lines += [""]
        scale = per.get(SCALE_SOLVER, {}).get("oracle")
        if track == "monocular" and scale is not None and np.isfinite(scale.get("scale_err_rel_median", math.nan)):
            lines += [f"Relative scale error of `{SCALE_SOLVER}`: median {scale['scale_err_rel_median']:.4f}.", ""]
        if cols is None:
            continue
        idx = np.flatnonzero((cols.track == track) & (cols.mode == "oracle") & cols.ok)
        codes, uniq = pd.factorize(cols.level[idx])  # each distinct level parsed once
        parsed = [_level_factors(lv) for lv in uniq]
        factors = [parsed[i] for i in codes]
        keys = list(dict.fromkeys(k for f in factors for k in f))
        names = sorted(set(cols.solver[idx]))
        for k in keys:
            has = np.array([k in f for f in factors], dtype=bool)  # the sequences of this factor's sweep only
            sweep = idx[has]
            labels = np.array([f[k] for f in factors if k in f], dtype=object)
            values = sorted(set(labels), key=_level_sort_key)
            if len(values) < 2:
                continue
            for col, what in (("X_trans_err_mm", "Median X translation error [mm]"),
                              ("X_rot_err_deg", "Median X rotation error [deg]")):  # fmt: skip
                rows = []
                for v in values:
                    sel = sweep[labels == v]
                    r = [_leaderboard_cell(v)]
                    for name in names:
                        x = cols.num[col][sel[cols.solver[sel] == name]]
                        r.append(_f(finite_median(x), 3))
                    rows.append(r)
                n_seq = int(np.unique(cols.sid[sweep]).size)
                lines += [f"### {what} versus `{k}` (oracle synchronisation, other factors marginalised)", "",
                          f"The {n_seq} sequences of the `{k}` sweep only.", ""]  # fmt: skip
                lines += _md_table(["level"] + [_solver_label(n) for n in names], rows) + [""]
    eff = efficiency_markdown(results, solver_order, summary=summ.get("efficiency"))
    if eff:
        lines += [eff]
    failures = describe_failed_rows(results, limit=20)
    if failures:
        lines += ["## Rows without an estimate", ""] + [f"* {ln}" for ln in failures] + [""]
    return "\n".join(lines).rstrip("\n") + "\n"
