"""Small-tier fidelity over several draws of the same tier: medians per draw and pooled, both toolkits.

A small tier holds 150 ``mixed`` and 56 ``outliers`` sequences.  On those two
tracks the median error of ``X`` sits where solved and unsolved sequences meet
(outliers, unknown scales), so it moves with the share of hard sequences a
draw happens to contain.  One draw of each toolkit is then not enough to tell
a difference of the generators from the luck of the draw: the published
toolkit's own small tiers, drawn with other global seeds, differ from each
other by more than 2x on the mixed track (``docs/fidelity.md``).

This module compares *draws*: the small tier generated again with the global
seed moved by ``k * DRAW_SEED_STEP`` (draw 0 is the shipped tier), its medians
per draw and its medians pooled over the draws' sequences, which estimate
the population's medians with the sampling noise of several hundred
sequences.  ``benchmarks/fidelity_draws.py`` produces the stored tables and
rewrites the section of ``docs/fidelity.md``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from kinhec.util.errors import InputError
from kinhec.evaluate.fidelity import EXCLUDED, RATIO_HIGH, RATIO_LOW, format_value, read_table, results_medians, write_table

#: Tracks whose small-tier medians are compared over several draws.
DRAW_TRACKS = ("mixed", "outliers")
#: Draw ``k`` is the tier with its global seed moved by ``k`` times this.
DRAW_SEED_STEP = 1000
#: The label of the pooled medians in the ``draw`` column.
POOLED = "pooled"
DRAWS_BEGIN, DRAWS_END = "<!-- small-draws:begin -->", "<!-- small-draws:end -->"
_COLUMNS = ["track", "solver", "draw", "rot", "trans", "n"]


def draw_seed(global_seed: int, draw: int) -> int:
    """The global seed of draw ``draw`` of a tier whose own global seed is ``global_seed``."""
    if isinstance(draw, bool) or not isinstance(draw, (int, np.integer)) or draw < 0:
        raise InputError(f"draw: expected an integer >= 0, got {draw!r}")
    return int(global_seed) + int(draw) * DRAW_SEED_STEP


def _medians(results: pd.DataFrame, label: str, tracks, eval_sync: str) -> pd.DataFrame:
    m = results_medians(results, eval_sync)
    m = m[m.index.get_level_values("track").isin(tracks)][["rot", "trans", "n"]].sort_index().reset_index()
    m.insert(2, "draw", label)
    return m


def draw_medians(results_by_draw: Mapping[int, pd.DataFrame], *, tracks=DRAW_TRACKS,
                 eval_sync: str = "oracle") -> pd.DataFrame:  # fmt: skip
    """Median errors of ``X`` per track, solver and draw, and pooled over the draws.

    Parameters
    ----------
    results_by_draw : mapping draw -> DataFrame
        Each draw's benchmark rows (``results.parquet``: ``track``, ``solver``, ``eval_sync``, ``ok``,
        ``X_rot_err_deg``, ``X_trans_err_mm``); several runs of one draw may be concatenated.
    tracks : iterable of str
        The tracks to keep.
    eval_sync : str
        Synchronisation whose rows count.

    Returns
    -------
    DataFrame
        Columns ``track``, ``solver``, ``draw`` (the draw as a string, or :data:`POOLED`), ``rot`` [deg],
        ``trans`` [mm] (medians over the rows with a result) and ``n`` (those rows).  The pooled medians are
        over the rows of every draw together, not a median of the draws' medians.
    """
    if not results_by_draw:
        raise InputError("draws: expected the results of at least one draw, got none")
    tracks = tuple(tracks)
    per = {int(k): v for k, v in sorted(results_by_draw.items())}
    parts = [_medians(v, str(k), tracks, eval_sync) for k, v in per.items()]
    parts.append(_medians(pd.concat(per.values(), ignore_index=True), POOLED, tracks, eval_sync))
    return pd.concat(parts, ignore_index=True)[_COLUMNS]


def write_draws(table: pd.DataFrame, path: str | Path) -> Path:
    """Store :func:`draw_medians` as CSV."""
    return write_table(table[_COLUMNS], path)


def read_draws(path: str | Path) -> pd.DataFrame:
    """Read :func:`write_draws`'s CSV (``draw`` as strings).

    Raises
    ------
    InputError
        The file is missing or lacks a column (the message names it).
    """
    t = read_table(path, "medians per draw (track, solver, draw, rot, trans, n)", _COLUMNS, "track").reset_index()
    t["draw"] = t["draw"].astype(str)
    return t[_COLUMNS]


def _draw_ids(t: pd.DataFrame) -> list[str]:
    return sorted({d for d in t["draw"] if d != POOLED}, key=int)


def draws_table(ours: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Both toolkits' draws side by side, per track and solver (the published solvers).

    Returns
    -------
    DataFrame
        Index ``(track, solver)``; for ``k`` in ``rot``, ``trans``: ``{k}_pub_lo``, ``{k}_pub_hi`` (the range
        of the published draws' medians), ``{k}_pub`` (published pooled), ``{k}_ours_lo``, ``{k}_ours_hi``,
        ``{k}_ours`` (kinhec's), ``ratio_{k}`` (pooled kinhec / pooled published); ``n_pub``, ``n_ours``
        (pooled rows) and ``checked`` (False for :data:`kinhec.evaluate.fidelity.EXCLUDED` solvers).
    """
    out = {}
    for who, t in (("pub", published), ("ours", ours)):
        per = t[t["draw"] != POOLED].groupby(["track", "solver"])
        pooled = t[t["draw"] == POOLED].set_index(["track", "solver"])
        for k in ("rot", "trans"):
            out[f"{k}_{who}_lo"] = per[k].min()
            out[f"{k}_{who}_hi"] = per[k].max()
            out[f"{k}_{who}"] = pooled[k]
        out[f"n_{who}"] = pooled["n"]
    table = pd.DataFrame(out)
    keys = published[published["draw"] == POOLED].set_index(["track", "solver"]).index
    table = table.reindex(keys)
    for k in ("rot", "trans"):
        table[f"ratio_{k}"] = table[f"{k}_ours"] / table[f"{k}_pub"]
    table["checked"] = ~table.index.get_level_values("solver").isin(list(EXCLUDED))
    return table


def spread_between_draws(t: pd.DataFrame, track: str, solvers=None) -> tuple[int, int, float]:
    """How far one toolkit's draws lie from each other on ``track``.

    Returns ``(outside, pairs, worst)``: of the ratios of one draw's median to another's (every pair of draws,
    every solver of ``solvers`` or every solver but the excluded ones, rotation and translation), how many lie
    outside ``[RATIO_LOW, RATIO_HIGH]``, how many there are, and the largest ratio (>= 1).
    """
    per = t[(t["draw"] != POOLED) & (t["track"] == track)]
    if solvers is None:
        solvers = [s for s in per["solver"].unique() if s not in EXCLUDED]
    per = per[per["solver"].isin(list(solvers))].set_index(["solver", "draw"])
    outside = pairs = 0
    worst = 1.0
    for a, b in itertools.combinations(_draw_ids(t), 2):
        for k in ("rot", "trans"):
            x = per.xs(a, level="draw")[k]
            y = per.xs(b, level="draw")[k].reindex(x.index)
            r = (x / y).to_numpy(dtype=float)
            r = r[np.isfinite(r) & (r > 0)]
            outside += int(((r < RATIO_LOW) | (r > RATIO_HIGH)).sum())
            pairs += r.size
            if r.size:
                worst = max(worst, float(np.max(np.maximum(r, 1.0 / r))))
    return outside, pairs, worst


def render_draws(ours: pd.DataFrame, published: pd.DataFrame) -> str:
    """Markdown of :func:`draws_table`, with the spread of each toolkit's draws."""
    table = draws_table(ours, published)
    pub_ids, our_ids = _draw_ids(published), _draw_ids(ours)
    chk = table[table["checked"]]
    ratios = chk[["ratio_rot", "ratio_trans"]].to_numpy(dtype=float).ravel()
    ratios = ratios[np.isfinite(ratios)]
    inside = int(((ratios >= RATIO_LOW) & (ratios <= RATIO_HIGH)).sum())
    lines = [f"Published draws {', '.join(pub_ids)}, kinhec draws {', '.join(our_ids)} (draw `k`: the small tier with "
             f"its global seed + {DRAW_SEED_STEP:,} `k`; 0 is the shipped one).  Pooled over the draws, {inside} of "
             f"{ratios.size} kinhec / published medians are within {RATIO_LOW}-{RATIO_HIGH}x "
             f"({', '.join(f'`{s}`' for s in EXCLUDED)} aside; worst "
             f"{format_value(float(ratios[np.argmax(np.abs(np.log(ratios)))]), 2) if ratios.size else '-'}).", ""]
    for track in dict.fromkeys(table.index.get_level_values("track")):
        po, pp, pw = spread_between_draws(published, track)
        oo, op, ow = spread_between_draws(ours, track)
        sub = table.xs(track, level="track")
        lines += [f"`{track}` ({int(sub['n_pub'].max()):,} published and {int(sub['n_ours'].max()):,} kinhec sequences "
                  f"pooled).  One published draw against another: {po} of {pp} median ratios outside "
                  f"{RATIO_LOW}-{RATIO_HIGH}x, the largest {format_value(pw, 2)}x; kinhec's draws: {oo} of {op}, the largest "
                  f"{format_value(ow, 2)}x.", "",
                  "| solver | rot. published draws [deg] | pooled | rot. kinhec draws | pooled | ratio "
                  "| trans. published draws [mm] | pooled | trans. kinhec draws | pooled | ratio |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for solver, r in sub.iterrows():
            cells = []
            for k, d in (("rot", 3), ("trans", 1)):
                x = r[f"ratio_{k}"]
                txt = format_value(x, 2)
                if r["checked"] and np.isfinite(x) and not RATIO_LOW <= x <= RATIO_HIGH:
                    txt = f"**{txt}**"
                cells += [f"{format_value(r[f'{k}_pub_lo'], d)}-{format_value(r[f'{k}_pub_hi'], d)}", format_value(r[f"{k}_pub"], d),
                          f"{format_value(r[f'{k}_ours_lo'], d)}-{format_value(r[f'{k}_ours_hi'], d)}", format_value(r[f"{k}_ours"], d), txt]
            name = f"`{solver}`" if r["checked"] else f"*`{solver}`*"
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
