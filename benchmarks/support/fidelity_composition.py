"""How the sequences of a tier are composed, kinhec's index against the published toolkit's, column by column.

Every tier's index (``sequences.parquet``) holds one row per sequence: its robot, world placement
(``Y_p*``, ``Y_q*``), stream rates, durations, frame counts, noise levels and the descriptors of its keyframe
motions.  Both toolkits write the same columns.  This module compares, per track and numeric column, the
values of kinhec's rows with the published toolkit's rows, each pooled over several draws of the same tier
(draw ``k``: the tier's global seed moved by ``k * DRAW_SEED_STEP``, as :mod:`support.fidelity_draws` does),
with the two-sample Kolmogorov-Smirnov statistic: the largest distance between the two empirical
distribution functions.

kinhec's rows need no files: :func:`kinhec_rows` expands the tier's recipes and runs
:func:`kinhec.synth.generator.simulate` and :func:`~kinhec.synth.generator.index_row` on each (a small tier in
a few CPU-seconds).  The published rows come from the published toolkit's own ``sequences.parquet`` and are
stored under ``docs/`` (:func:`write_rows`), so the comparison and its test run without that toolkit.
``benchmarks/fidelity_composition.py`` produces the stored files; ``docs/figures_fidelity.py`` renders them.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd

from kinhec.io.schema import INDEX_SCHEMA, TRACKS
from kinhec.util.errors import InputError

from support.fidelity_draws import DRAW_SEED_STEP, draw_seed

__all__ = [
    "COLUMNS", "KEY_COLUMNS", "KS_FLAG", "P_FLAG", "ks_2samp", "kinhec_rows", "canonical_quaternions",
    "write_rows", "read_rows", "compare", "flagged", "DRAW_SEED_STEP",
]  # fmt: skip

#: Columns that identify a row rather than describe a sequence: ids, seeds and file positions.
_NOT_COMPARED = {"seed", "robot_row_group", "camera_row_group"}
#: The numeric index columns both toolkits write, in index order.
COLUMNS = tuple(
    f.name for f in INDEX_SCHEMA
    if (str(f.type).startswith(("int", "float", "double"))) and f.name not in _NOT_COMPARED
)  # fmt: skip
#: The columns that say which row is which in the stored CSV.
KEY_COLUMNS = ("draw", "sequence_id", "track")
#: A track and column differ when the statistic exceeds ``KS_FLAG`` with a p-value below ``P_FLAG``.
KS_FLAG = 0.15
P_FLAG = 0.01


def ks_2samp(a, b) -> tuple[float, float]:
    """Two-sample Kolmogorov-Smirnov statistic and two-sided p-value of ``a`` against ``b``.

    The statistic is ``max |F_a(x) - F_b(x)|`` over the pooled values (ties count as one step; ``inf`` is a
    value like any other, NaN is an error).  The p-value is that of the one-sample Kolmogorov distribution with
    ``round(n m / (n + m))`` points, as :func:`scipy.stats.ks_2samp` gives it with ``method="asymp"``.
    """
    a = np.sort(np.asarray(a, dtype=np.float64).ravel())
    b = np.sort(np.asarray(b, dtype=np.float64).ravel())
    if a.size == 0 or b.size == 0:
        raise InputError(f"ks_2samp: expected two non-empty samples, got sizes {a.size} and {b.size}")
    if np.isnan(a).any() or np.isnan(b).any():
        raise InputError("ks_2samp: expected samples without NaN, got NaN")
    x = np.concatenate([a, b])
    d = float(np.max(np.abs(np.searchsorted(a, x, side="right") / a.size - np.searchsorted(b, x, side="right") / b.size)))
    from scipy import stats

    n = a.size * b.size / (a.size + b.size)
    return d, float(np.clip(stats.kstwo.sf(d, np.round(n)), 0.0, 1.0))


def canonical_quaternions(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with every ``X_q*`` and ``Y_q*`` quaternion on the ``qw >= 0`` half (``q`` and ``-q`` are one rotation;
    kinhec writes that half, the published toolkit either), so that the columns compare rotations."""
    out = rows.copy()
    for p in ("X", "Y"):
        cols = [f"{p}_q{c}" for c in "wxyz"]
        if set(cols) <= set(out.columns):
            flip = out[f"{p}_qw"].to_numpy(dtype=float) < 0
            out.loc[flip, cols] = -out.loc[flip, cols].to_numpy(dtype=float)
    return out


def kinhec_rows(tier, draws, tracks=None, *, limit: int | None = None) -> pd.DataFrame:
    """kinhec's index rows of ``draws`` of ``tier`` (a :class:`kinhec.synth.tiers.Tier` or a tier name), no files.

    Draw ``k`` is the tier with its global seed moved by ``k * DRAW_SEED_STEP``; ``limit`` keeps the first
    ``limit`` sequences of each track.  Returns :data:`KEY_COLUMNS` and :data:`COLUMNS`.
    """
    from kinhec.synth.generator import index_row, simulate
    from kinhec.synth.tiers import expand_tier, load_tier

    if isinstance(tier, str):
        tier = load_tier(tier)
    out = []
    for k in draws:
        t = dataclasses.replace(tier, config=dict(tier.config, global_seed=draw_seed(tier.global_seed, k)))
        for recipes in expand_tier(t, tracks).values():
            for r in recipes[:limit]:
                row = index_row(simulate(r))
                out.append({"draw": int(k), **{c: row[c] for c in ("sequence_id", "track", *COLUMNS)}})
    return _typed(canonical_quaternions(pd.DataFrame(out, columns=[*KEY_COLUMNS, *COLUMNS])))


def _typed(rows: pd.DataFrame) -> pd.DataFrame:
    rows = rows.copy()
    rows["draw"] = rows["draw"].astype(np.int64)
    for c in COLUMNS:
        rows[c] = rows[c].astype(np.float64)
    return rows


def published_rows(index: pd.DataFrame, draw: int) -> pd.DataFrame:
    """The comparable part of a published ``sequences.parquet`` (its draw ``draw``): :data:`KEY_COLUMNS`, :data:`COLUMNS`."""
    missing = sorted(set(("sequence_id", "track", *COLUMNS)) - set(index.columns))
    if missing:
        raise InputError(f"index: expected the columns of sequences.parquet; missing {missing}")
    rows = index[["sequence_id", "track", *COLUMNS]].copy()
    rows.insert(0, "draw", int(draw))
    return _typed(canonical_quaternions(rows))


def write_rows(rows: pd.DataFrame, path: str | Path) -> Path:
    """Store index rows (:data:`KEY_COLUMNS` and :data:`COLUMNS`) as CSV: ten significant digits, ``\\n``."""
    path = Path(path)
    rows = rows.sort_values(["draw", "track", "sequence_id"], kind="stable")
    rows[[*KEY_COLUMNS, *COLUMNS]].to_csv(path, index=False, float_format="%.10g", lineterminator="\n")
    return path


def read_rows(path: str | Path) -> pd.DataFrame:
    """Read :func:`write_rows`'s CSV.

    Raises
    ------
    InputError
        The file is missing or lacks a column (the message names them).
    """
    path = Path(path)
    try:
        rows = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: expected a CSV of index rows (draw, sequence_id, track, ...), got {exc}") from None
    missing = [c for c in (*KEY_COLUMNS, *COLUMNS) if c not in rows.columns]
    if missing:
        raise InputError(f"{path}: expected the index columns {', '.join(KEY_COLUMNS)} and the numeric ones; missing {missing}")
    return _typed(rows[[*KEY_COLUMNS, *COLUMNS]])


def _quantiles(v: np.ndarray) -> tuple[float, float, float]:
    if v.size == 0:
        return math.nan, math.nan, math.nan
    with np.errstate(invalid="ignore"):
        q = np.quantile(v, [0.05, 0.5, 0.95])
    q[np.isnan(q)] = np.inf  # between two infinite values (a condition number of a degenerate motion set)
    return float(q[0]), float(q[1]), float(q[2])


def compare(ours: pd.DataFrame, published: pd.DataFrame, *, columns=COLUMNS) -> pd.DataFrame:
    """Per track and column: the KS statistic and p-value of kinhec's values against the published ones.

    NaN values (a column that does not apply to a sequence, such as a rate of a station sequence) are left out of
    both samples; their shares are reported.  A column that is NaN on every row of one side and not of the other
    gets a statistic of 1 and a p-value of 0 (the two indexes give it different meanings).

    Returns
    -------
    DataFrame
        Index ``(track, column)``; ``ks``, ``p``, ``n_ours``, ``n_pub`` (non-NaN values), ``nan_ours``,
        ``nan_pub`` (NaN shares), ``q05_ours``, ``median_ours``, ``q95_ours`` and the same for ``pub``.
    """
    rec = []
    seen = dict.fromkeys([*published["track"], *ours["track"]])
    for track in [t for t in TRACKS if t in seen] + sorted(t for t in seen if t not in TRACKS):
        o_t, p_t = ours[ours["track"] == track], published[published["track"] == track]
        if o_t.empty or p_t.empty:
            continue
        for col in columns:
            o_all, p_all = o_t[col].to_numpy(dtype=float), p_t[col].to_numpy(dtype=float)
            o, p = o_all[~np.isnan(o_all)], p_all[~np.isnan(p_all)]
            if o.size and p.size:
                ks, pv = ks_2samp(o, p)
            elif o.size or p.size:
                ks, pv = 1.0, 0.0
            else:
                ks, pv = 0.0, 1.0
            row = dict(track=track, column=col, ks=ks, p=pv, n_ours=o.size, n_pub=p.size,
                       nan_ours=1.0 - o.size / o_all.size, nan_pub=1.0 - p.size / p_all.size)  # fmt: skip
            for who, v in (("ours", o), ("pub", p)):
                row[f"q05_{who}"], row[f"median_{who}"], row[f"q95_{who}"] = _quantiles(v)
            rec.append(row)
    return pd.DataFrame(rec).set_index(["track", "column"])


def flagged(table: pd.DataFrame, ks: float = KS_FLAG, p: float = P_FLAG) -> pd.DataFrame:
    """The rows of :func:`compare` whose statistic exceeds ``ks`` with a p-value below ``p``."""
    return table[(table["ks"] > ks) & (table["p"] < p)]
