"""Statistical fidelity: kinhec's leaderboard medians beside the published card's.

The published dataset card lists, per track and baseline solver, the median
rotation error of ``X`` [deg] and the median translation error of ``X`` [mm]
over its full tier (``oracle`` synchronisation).  This module reads that table
from the card's text, computes the same medians from a kinhec
``results.parquet`` and lays the two side by side with their ratios
(kinhec / published), so that ``docs/fidelity.md`` is regenerated from data
(``python benchmarks/fidelity.py RESULTS``) rather than typed.

A ratio counts as *within bounds* in ``[RATIO_LOW, RATIO_HIGH]``; a track
shows a *systematic shift* when the geometric mean of its ratios over the
solvers (one per error kind) is beyond ``SHIFT`` (or below ``1 / SHIFT``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from kinhec.util.errors import InputError

#: Bounds of an acceptable kinhec / published ratio of a median.
RATIO_LOW, RATIO_HIGH = 0.5, 2.0
#: Geometric-mean ratio of a track beyond which (or below whose inverse) the shift is called systematic.
SHIFT = 1.25
#: Solvers whose ratios are shown but left out of the bounds check and the shift, with the reason.
EXCLUDED = {
    "li_kronecker": "published as a copy of shah (identical medians on every track); kinhec's is the Kronecker "
    "solution of Li et al. with translations from the joint linear system (docs/solvers.md)",
}
_ERRORS = (("rot", "X_rot_err_deg", "rotation [deg]"), ("trans", "X_trans_err_mm", "translation [mm]"))


def read_card_leaderboard(path: str | Path) -> pd.DataFrame:
    """The leaderboard of a dataset card (text or Markdown).

    Parameters
    ----------
    path : str or Path
        The card: the table starts at a header row whose first cell is
        ``track`` followed by solver names, cells separated by tabs or ``|``;
        each following row is ``<track>`` and ``<rot> / <trans>`` per solver.

    Returns
    -------
    DataFrame
        Index ``(track, solver)`` in card order; columns ``rot`` (median
        rotation error of X, deg) and ``trans`` (median translation error of
        X, mm).

    Raises
    ------
    InputError
        When the file has no such table.
    """
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()

    def cells(line: str) -> list[str]:
        parts = line.strip().strip("|").split("|") if "|" in line else line.split("\t")
        return [c.strip().strip("`") for c in parts]

    rows = []
    for k, line in enumerate(lines):
        head = cells(line)
        if len(head) > 2 and head[0] == "track" and "park_martin" in head:
            for body in lines[k + 1 :]:
                c = cells(body)
                if set("".join(c)) <= set("-: "):
                    continue  # Markdown separator row
                if len(c) != len(head) or not all("/" in x for x in c[1:]):
                    break
                for solver, cell in zip(head[1:], c[1:]):
                    rot, trans = (float(x.replace(",", "")) for x in cell.split("/"))
                    rows.append((c[0], solver, rot, trans))
            break
    if not rows:
        raise InputError(f"{path}: expected a leaderboard table (a 'track' header row of solver names), found none")
    return pd.DataFrame(rows, columns=["track", "solver", "rot", "trans"]).set_index(["track", "solver"])


_COMPOSITION_LABELS = {
    "Configurations": "configuration",
    "Trajectory families": "family",
    "Camera noise models": "camera_noise_model",
}


def read_card_composition(path: str | Path) -> dict[str, dict[str, int]]:
    """The composition a dataset card states: sequences per robot, configuration, family and camera model.

    Parameters
    ----------
    path : str or Path
        The card: a ``robot | sequences`` table, and a line
        ``Configurations: a: n, ... Trajectory families: ... Camera noise models: ...``.

    Returns
    -------
    dict
        ``{"robot": {...}, "configuration": {...}, "family": {...}, "camera_noise_model": {...}}``,
        each mapping a value to its number of sequences (index column names as keys).

    Raises
    ------
    InputError
        When one of the four is missing.
    """
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    out: dict[str, dict[str, int]] = {}
    for k, line in enumerate(lines):
        head = [c.strip().strip("`") for c in re.split(r"\t|\|", line.strip().strip("|"))]
        if head[:2] == ["robot", "sequences"] and "robot" not in out:
            robots = {}
            for body in lines[k + 1 :]:
                c = [x.strip().strip("`") for x in re.split(r"\t|\|", body.strip().strip("|"))]
                if len(c) == 2 and set(c[1]) <= set("-: "):
                    continue
                if len(c) != 2 or not re.fullmatch(r"[\d,]+", c[1]):
                    break
                robots[c[0]] = int(c[1].replace(",", ""))
            out["robot"] = robots
        if line.lstrip().startswith("Configurations:"):
            labels = "|".join(map(re.escape, _COMPOSITION_LABELS))
            for label, body in re.findall(rf"({labels}):(.*?)(?=(?:{labels}):|$)", line):
                pairs = re.findall(r"`?([A-Za-z0-9_]+)`?: ([\d,]*\d)", body)
                out[_COMPOSITION_LABELS[label]] = {n: int(v.replace(",", "")) for n, v in pairs}
    missing = [k for k in ("robot", *_COMPOSITION_LABELS.values()) if not out.get(k)]
    if missing:
        raise InputError(f"{path}: expected the card's composition ({', '.join(missing)}), found none")
    return out


def results_medians(results: pd.DataFrame, eval_sync: str = "oracle") -> pd.DataFrame:
    """Median errors of ``X`` per track and solver from a ``results.parquet`` table.

    Parameters
    ----------
    results : DataFrame
        Rows of ``kinhec benchmark`` (columns ``track``, ``solver``,
        ``eval_sync``, ``ok``, ``X_rot_err_deg``, ``X_trans_err_mm``).
    eval_sync : str
        Synchronisation whose rows count (the card's table is ``oracle``).

    Returns
    -------
    DataFrame
        Index ``(track, solver)``; columns ``rot`` [deg], ``trans`` [mm] (medians
        over the rows with ``ok``, as the leaderboard), ``n`` (those rows),
        ``n_rows`` (all rows), and ``rot_worst``, ``trans_worst`` (medians over
        all rows, a row without a result counted as an infinite error).
    """
    need = {"track", "solver", "eval_sync", "ok", "X_rot_err_deg", "X_trans_err_mm"}
    missing = sorted(need - set(results.columns))
    if missing:
        raise InputError(f"results table: expected columns {sorted(need)}, missing {missing}")
    every = results[results["eval_sync"] == eval_sync].copy()
    ok = every["ok"].astype(bool)
    g = every[ok].groupby(["track", "solver"], sort=False)
    out = pd.DataFrame({"rot": g["X_rot_err_deg"].median(), "trans": g["X_trans_err_mm"].median(), "n": g.size()})
    # the same medians with every row that gave no result counted as unsolved (an infinite error)
    for col, name in (("X_rot_err_deg", "rot_worst"), ("X_trans_err_mm", "trans_worst")):
        every[col] = np.where(ok, every[col].to_numpy(dtype=float), np.inf)
    ga = every.groupby(["track", "solver"], sort=False)
    out["rot_worst"] = ga["X_rot_err_deg"].median()
    out["trans_worst"] = ga["X_trans_err_mm"].median()
    out["n_rows"] = ga.size()
    return out


def compare(card: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """Card and kinhec medians side by side, in card order, with ``ratio_rot`` and ``ratio_trans`` (ours / card)."""
    t = card.join(ours.rename(columns={"rot": "rot_ours", "trans": "trans_ours"}), how="left")
    t = t.rename(columns={"rot": "rot_card", "trans": "trans_card"})
    for k in ("rot", "trans"):
        t[f"ratio_{k}"] = t[f"{k}_ours"] / t[f"{k}_card"]
    t["checked"] = ~t.index.get_level_values("solver").isin(list(EXCLUDED))
    return t


def track_shifts(table: pd.DataFrame) -> pd.DataFrame:
    """Geometric-mean ratio per track and error kind over the checked solvers, and whether it is a shift."""
    t = table[table["checked"]]
    out = {}
    for k in ("rot", "trans"):
        out[f"gmean_{k}"] = t.groupby(level="track", sort=False)[f"ratio_{k}"].apply(
            lambda x: float(np.exp(np.log(x.dropna()).mean())) if x.notna().any() else math.nan
        )
    s = pd.DataFrame(out)
    for k in ("rot", "trans"):
        g = s[f"gmean_{k}"]
        s[f"shift_{k}"] = (g > SHIFT) | (g < 1.0 / SHIFT)
    return s


def worst_ratio(table: pd.DataFrame) -> tuple[float, tuple[str, str, str]]:
    """The checked ratio farthest from 1 (in log scale), and where it is ``(track, solver, kind)``."""
    best = (1.0, ("", "", ""))
    for (track, solver), row in table[table["checked"]].iterrows():
        for k in ("rot", "trans"):
            x = row[f"ratio_{k}"]
            if np.isfinite(x) and abs(math.log(x)) > abs(math.log(best[0])):
                best = (float(x), (track, solver, k))
    return best


def format_value(x: float, digits: int) -> str:
    return "-" if not np.isfinite(x) else f"{x:.{digits}f}"


def render_markdown(table: pd.DataFrame, *, title_ours: str, title_card: str) -> str:
    """The comparison as Markdown: a summary, one table per track, and the per-track shifts.

    Ratios outside ``[RATIO_LOW, RATIO_HIGH]`` are bold; solvers in
    :data:`EXCLUDED` are in italics and not counted.
    """
    shifts = track_shifts(table)
    chk = table[table["checked"]]
    ratios = chk[["ratio_rot", "ratio_trans"]].to_numpy().ravel()
    ratios = ratios[np.isfinite(ratios)]
    inside = int(((ratios >= RATIO_LOW) & (ratios <= RATIO_HIGH)).sum())
    w, (wt, ws, wk) = worst_ratio(table)
    out = [
        f"Kinhec: {title_ours}. Published: {title_card}.",
        "",
        f"- {inside} of {ratios.size} track x solver medians (rotation and translation of `X`, "
        f"`oracle` synchronisation) within {RATIO_LOW}-{RATIO_HIGH}x the published ones "
        f"({', '.join(f'`{s}`' for s in EXCLUDED)} aside, see below).",
        f"- Worst ratio: {w:.2f} (`{wt}`, `{ws}`, {'rotation' if wk == 'rot' else 'translation'}).",
        "",
        "## Per track",
        "",
        "Ratio = kinhec / published; a median is over the rows with a result (`ok`), as in the leaderboard.",
        "",
    ]
    for track in table.index.get_level_values("track").unique():
        sh = shifts.loc[track] if track in shifts.index else None
        out += [f"### `{track}`", ""]
        if sh is not None:
            out += [
                f"Geometric-mean ratio over the solvers: rotation {format_value(sh['gmean_rot'], 2)}, translation "
                f"{format_value(sh['gmean_trans'], 2)}"
                + (" (systematic shift)" if bool(sh["shift_rot"]) or bool(sh["shift_trans"]) else "")
                + ".",
                "",
            ]
        out += [
            "| solver | rot. published [deg] | rot. kinhec [deg] | ratio | trans. published [mm] "
            "| trans. kinhec [mm] | ratio | ok / rows |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for solver, row in table.loc[track].iterrows():
            def ratio(k):
                s = format_value(row[f"ratio_{k}"], 2)
                bad = np.isfinite(row[f"ratio_{k}"]) and not RATIO_LOW <= row[f"ratio_{k}"] <= RATIO_HIGH
                return f"**{s}**" if bad and row["checked"] else s

            name = f"`{solver}`" if row["checked"] else f"*`{solver}`*"
            n = "-" if not np.isfinite(row.get("n", np.nan)) else f"{int(row['n']):,} / {int(row['n_rows']):,}"
            out.append(
                f"| {name} | {format_value(row['rot_card'], 3)} | {format_value(row['rot_ours'], 3)} | {ratio('rot')} "
                f"| {format_value(row['trans_card'], 2)} | {format_value(row['trans_ours'], 2)} | {ratio('trans')} "
                f"| {n} |"
            )
        out.append("")
    failed = table[(table["n"] < table["n_rows"]) & table["checked"]]
    if len(failed):
        out += [
            "## Medians with the failures counted",
            "",
            "The leaderboard's medians are over the sequences where a solver returned a result.  Where a "
            "solver gave none on some sequences, the same medians with those sequences counted as unsolved "
            "(an infinite error):",
            "",
            "| track | solver | ok / rows | rot. ratio | rot. ratio, failures counted | trans. ratio "
            "| trans. ratio, failures counted |",
            "|---|---|---|---|---|---|---|",
        ]
        for (track, solver), row in failed.iterrows():
            out.append(
                f"| `{track}` | `{solver}` | {int(row['n']):,} / {int(row['n_rows']):,} "
                f"| {format_value(row['ratio_rot'], 2)} "
                f"| {format_value(row['rot_worst'] / row['rot_card'], 2)} | {format_value(row['ratio_trans'], 2)} "
                f"| {format_value(row['trans_worst'] / row['trans_card'], 2)} |"
            )
        out.append("")
    out += ["## Left out of the bounds check", ""]
    out += [f"- `{s}`: {why}." for s, why in EXCLUDED.items()]
    out.append("")
    return "\n".join(out)


def same_data(ours: pd.DataFrame, published: pd.DataFrame, *, eval_sync: str = "oracle",
              identical_rtol: float = 1e-4) -> pd.DataFrame:  # fmt: skip
    """Both toolkits' solvers on the same sequences: per solver and track, how far kinhec's errors are from the published.

    ``ours`` and ``published`` are ``results.parquet`` tables of one copy of the
    data (the published copy, benchmarked by kinhec and by the published
    toolkit).  A ratio far from 1 here is a difference of the solvers, since
    the data are the same; a ratio far from 1 in :func:`compare` but near 1
    here points at the data.

    Returns
    -------
    DataFrame
        Index ``(solver, track)`` plus ``(solver, "all")``; columns ``n`` (rows
        where both have a finite, non-zero error), ``identical`` (share of those
        rows where both errors agree to ``identical_rtol``), ``gm_rot`` and
        ``gm_trans`` (geometric means of kinhec / published per row).
    """
    key = ["sequence_id", "solver", "eval_sync"]
    cols = key + ["track", "ok", "X_rot_err_deg", "X_trans_err_mm"]
    for name, t in (("ours", ours), ("published", published)):
        missing = sorted(set(cols) - set(t.columns))
        if missing:
            raise InputError(f"same_data: the {name} results lack columns {missing}")
    m = ours[cols].merge(published[cols].drop(columns="track"), on=key, suffixes=("", "_pub"))
    m = m[(m["eval_sync"] == eval_sync) & m["ok"].astype(bool) & m["ok_pub"].astype(bool)]
    rows = []
    groups = list(m.groupby(["solver", "track"], sort=True)) + [((k, "all"), v) for k, v in m.groupby("solver")]
    for (solver, track), g in groups:
        r = {"solver": solver, "track": track}
        both = np.ones(len(g), dtype=bool)
        for _, col, _ in _ERRORS:
            a, b = g[col].to_numpy(float), g[col + "_pub"].to_numpy(float)
            both &= np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0)
        r["n"] = int(both.sum())
        same = np.ones(int(both.sum()), dtype=bool)
        for k, col, _ in _ERRORS:
            a, b = g[col].to_numpy(float)[both], g[col + "_pub"].to_numpy(float)[both]
            r[f"gm_{k}"] = float(np.exp(np.mean(np.log(a / b)))) if a.size else math.nan
            same &= np.abs(a - b) <= identical_rtol * np.abs(b)
        r["identical"] = float(same.mean()) if same.size else math.nan
        rows.append(r)
    return pd.DataFrame(rows).set_index(["solver", "track"])


def render_same_data(table: pd.DataFrame, *, tracks=("monocular",), title: str = "") -> str:
    """Markdown table of :func:`same_data`: every solver over all tracks, and over each of ``tracks``."""
    head = "| solver | rows | identical | rot. kinhec / published | trans. kinhec / published |"
    lines = [title, "", head, "|---|---|---|---|---|"] if title else [head, "|---|---|---|---|---|"]
    for track in ("all", *tracks):
        sub = table.xs(track, level="track") if track in table.index.get_level_values("track") else None
        if sub is None:
            continue
        label = "every track" if track == "all" else f"`{track}` only"
        lines.append(f"| *{label}* | | | | |")
        for solver, r in sub.iterrows():
            lines.append(f"| `{solver}` | {int(r['n'])} | {r['identical']:.0%} | {format_value(r['gm_rot'], 3)} | "
                         f"{format_value(r['gm_trans'], 3)} |")  # fmt: skip
    return "\n".join(lines) + "\n"


#: Markers around the sections of the page that can be rewritten on their own (no medium-tier run).
SMALL_BEGIN, SMALL_END = "<!-- small-tier:begin -->", "<!-- small-tier:end -->"
SAME_BEGIN, SAME_END = "<!-- same-data:begin -->", "<!-- same-data:end -->"


def write_medians(medians: pd.DataFrame, path: str | Path) -> Path:
    """Store :func:`results_medians` as CSV (``track, solver, rot, trans, n, n_rows``; the published side of a tier)."""
    return write_table(medians[["rot", "trans", "n", "n_rows"]].reset_index(), path)


def write_table(table: pd.DataFrame, path: str | Path) -> Path:
    """``table`` (its columns, no index) as the CSV the stored comparisons use: six significant digits, ``\\n``."""
    path = Path(path)
    table.to_csv(path, index=False, float_format="%.6g", lineterminator="\n")
    return path


def read_table(path: str | Path, what: str, columns: list[str], index) -> pd.DataFrame:
    """A stored CSV with ``columns`` (checked: a missing file or column is an :class:`InputError` naming it)."""
    path = Path(path)
    try:
        t = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: expected a CSV of {what}, got {exc}") from None
    missing = sorted(set(columns) - set(t.columns))
    if missing:
        raise InputError(f"{path}: expected the columns {', '.join(columns)}; missing {missing}")
    return t.set_index(index)


def read_medians(path: str | Path) -> pd.DataFrame:
    """Read :func:`write_medians`'s CSV: index ``(track, solver)``, columns ``rot`` [deg], ``trans`` [mm], ``n``, ``n_rows``.

    Raises
    ------
    InputError
        The file is missing or lacks a column (the message names it).
    """
    return read_table(path, "medians (track, solver, rot, trans, n, n_rows)",
                      ["track", "solver", "rot", "trans", "n", "n_rows"], ["track", "solver"])


def small_tier_table(ours: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """kinhec's medians on its small tier beside the published toolkit's on its own small tier.

    Parameters
    ----------
    ours : DataFrame
        kinhec's ``results.parquet`` of the small tier.
    published : DataFrame
        :func:`read_medians` of the published toolkit's results on the small tier it generated.

    Returns
    -------
    DataFrame
        :func:`compare` with the published medians in the card's place (``rot_card``, ``trans_card``: published;
        ``ratio_*``: kinhec / published), the published row order, ``n`` and ``n_rows`` kinhec's.
    """
    return compare(published[["rot", "trans"]], results_medians(ours))


def render_small_tier(table: pd.DataFrame, *, focus: str = "andreff_scale") -> str:
    """Markdown of :func:`small_tier_table`: ``focus``'s medians per track, then every ratio (solver x track)."""
    tracks = list(dict.fromkeys(table.index.get_level_values("track")))
    chk = table[table["checked"]]
    ratios = chk[["ratio_rot", "ratio_trans"]].to_numpy().ravel()
    ratios = ratios[np.isfinite(ratios)]
    inside = int(((ratios >= RATIO_LOW) & (ratios <= RATIO_HIGH)).sum())
    w, (wt, ws, wk) = worst_ratio(table)
    out = [f"{inside} of {ratios.size} track x solver medians within {RATIO_LOW}-{RATIO_HIGH}x the published ones "
           f"({', '.join(f'`{s}`' for s in EXCLUDED)} aside); worst ratio {w:.2f} (`{wt}`, `{ws}`, "
           f"{'rotation' if wk == 'rot' else 'translation'}).", "",
           f"`{focus}`, median translation error of `X` [mm] (`oracle`):", "",
           "| track | published | kinhec | ratio |", "|---|---|---|---|"]  # fmt: skip
    for track in tracks:
        if (track, focus) in table.index:
            r = table.loc[(track, focus)]
            out.append(f"| `{track}` | {format_value(r['trans_card'], 2)} | {format_value(r['trans_ours'], 2)} "
                       f"| {format_value(r['ratio_trans'], 2)} |")
    out += ["", "Every solver, ratio kinhec / published of the median rotation / translation error of `X`:", "",
            "| solver | " + " | ".join(f"`{t}`" for t in tracks) + " |", "|---|" + "---|" * len(tracks)]
    for solver in dict.fromkeys(table.index.get_level_values("solver")):
        cells = []
        for track in tracks:
            if (track, solver) not in table.index:
                cells.append("-")
                continue
            r = table.loc[(track, solver)]
            parts = []
            for k in ("rot", "trans"):
                x = r[f"ratio_{k}"]
                txt = format_value(x, 2)
                parts.append(f"**{txt}**" if r["checked"] and np.isfinite(x) and not RATIO_LOW <= x <= RATIO_HIGH else txt)
            cells.append(" / ".join(parts))
        name = f"`{solver}`" if solver not in EXCLUDED else f"*`{solver}`*"
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def replace_section(page: str, body: str, begin: str = SMALL_BEGIN, end: str = SMALL_END) -> str:
    """``page`` with the text between the markers ``begin`` and ``end`` replaced by ``body``."""
    if begin not in page or end not in page:
        raise InputError(f"fidelity page: expected the markers {begin} and {end}, found none")
    head, rest = page.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body.rstrip()}\n{end}{tail}"


def fill_template(template: str, body: str) -> str:
    """Insert ``body`` at the ``<!-- TABLES -->`` marker of ``template``."""
    if "<!-- TABLES -->" not in template:
        raise InputError("fidelity template: expected a '<!-- TABLES -->' marker, found none")
    return template.replace("<!-- TABLES -->", body.rstrip("\n"))


# --------------------------------------------------------------------------- #
# mixed track: the distributions of the drawn parameters, both generators
# --------------------------------------------------------------------------- #
MIXED_BEGIN, MIXED_END = "<!-- mixed-params:begin -->", "<!-- mixed-params:end -->"
#: Parameters of the mixed track compared between two generators: (name, the camera model whose sequences
#: carry it or None for the track's sequences that have it, unit).
MIXED_VALUE_PARAMETERS = (
    ("se3_gaussian rotation std", "se3_gaussian", "mrad"),
    ("se3_gaussian lateral translation std", "se3_gaussian", "mm"),
    ("se3_gaussian along-axis / lateral", "se3_gaussian", "ratio"),
    ("vo_drift rotation std", "vo_drift", "mrad"),
    ("vo_drift translation std", "vo_drift", "mm"),
    ("pnp pixel std", "pnp", "px"),
    ("unknown monocular scale", None, "-"),
    ("outlier fraction", None, "-"),
    ("robot se3_gaussian rotation std", "se3_gaussian", "mrad"),
    ("robot se3_gaussian translation std", "se3_gaussian", "mm"),
    ("robot joint_gaussian std", "joint_gaussian", "mrad"),
    ("robot dh_error length std", "dh_error", "mm"),
    ("robot dh_error angle std", "dh_error", "deg"),
)
#: The flags of :func:`mixed_parameters` and their labels in :func:`mixed_parameter_quantiles`.
MIXED_FLAGS = (
    ("outliers", "share with outliers"), ("student_t", "share with Student-t camera noise"),
    ("vo_drift", "share vo_drift"), ("pnp", "share pnp"), ("vo_origin", "share vo_origin"),
    ("unknown_scale", "share with an unknown scale"), ("robot_se3", "share with robot se3_gaussian"),
    ("robot_joint", "share with robot joint_gaussian"), ("robot_dh", "share with robot dh_error"),
    ("robot_exact", "share with an exact robot (none)"),
)
_QUANTILES = (0.0, 0.25, 0.5, 0.75, 1.0)
_QCOLS = ("min", "q25", "median", "q75", "max")


def mixed_parameters(rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """The drawn values of every :data:`MIXED_VALUE_PARAMETERS` entry and the flags of the mixed-track sequences.

    ``rows`` is a ``sequences.parquet`` index (either toolkit; other tracks are dropped) or a frame of
    kinhec recipes (``kinhec.synth.tiers.expand_track(tier, "mixed")``): the columns ``camera_noise_model``,
    ``camera_rot_std_rad``, ``camera_trans_std_m``, ``camera_trans_std_z_m``, ``pixel_std``, ``student_t_dof``,
    ``outlier_fraction``, ``scale``, ``world_frame`` and the robot's ``robot_noise_models`` (a ``+``-joined
    string or a tuple), ``robot_rot_std_rad``, ``robot_trans_std_m``, ``joint_std_rad``, ``dh_len_std_m``,
    ``dh_ang_std_rad`` (a recipe may leave out the levels of an inactive model).  Values are in the units of
    the table (mrad, mm, px, deg); the flags (:data:`MIXED_FLAGS`) are booleans over the sequences.

    Raises
    ------
    InputError
        A column is missing (the message names it) or no row is of the mixed track.
    """
    need = ["camera_noise_model", "camera_rot_std_rad", "camera_trans_std_m", "camera_trans_std_z_m", "pixel_std",
            "student_t_dof", "outlier_fraction", "scale", "world_frame"]  # fmt: skip
    missing = [c for c in need if c not in rows.columns]
    if missing:
        raise InputError(f"mixed parameters: expected the columns {need}; missing {missing}")
    if "track" in rows.columns:
        rows = rows[rows["track"] == "mixed"]
    if rows.empty:
        raise InputError("mixed parameters: expected rows of the mixed track, got none")
    if "robot_noise_models" not in rows.columns:
        raise InputError(f"mixed parameters: expected the columns {need + ['robot_noise_models']}; "
                         "missing ['robot_noise_models']")  # fmt: skip
    model = rows["camera_noise_model"].to_numpy()
    num = {c: pd.to_numeric(rows[c], errors="coerce").to_numpy(dtype=float) for c in need if c not in
           ("camera_noise_model", "world_frame")}  # fmt: skip
    robot_cols = ("robot_rot_std_rad", "robot_trans_std_m", "joint_std_rad", "dh_len_std_m", "dh_ang_std_rad")
    for c in robot_cols:
        v = rows[c] if c in rows.columns else pd.Series(0.0, index=rows.index)
        num[c] = pd.to_numeric(v, errors="coerce").fillna(0.0).to_numpy(dtype=float)
    models = [set(m.split("+")) if isinstance(m, str) else set(m) for m in rows["robot_noise_models"]]
    r_se3 = np.array(["se3_gaussian" in m for m in models], dtype=bool)
    r_joint = np.array(["joint_gaussian" in m for m in models], dtype=bool)
    r_dh = np.array(["dh_error" in m for m in models], dtype=bool)
    se3_, vo, pnp = model == "se3_gaussian", model == "vo_drift", model == "pnp"
    outl = num["outlier_fraction"] > 0
    scaled = num["scale"] != 1.0
    return {
        "se3_gaussian rotation std": 1e3 * num["camera_rot_std_rad"][se3_],
        "se3_gaussian lateral translation std": 1e3 * num["camera_trans_std_m"][se3_],
        "se3_gaussian along-axis / lateral": num["camera_trans_std_z_m"][se3_] / num["camera_trans_std_m"][se3_],
        "vo_drift rotation std": 1e3 * num["camera_rot_std_rad"][vo],
        "vo_drift translation std": 1e3 * num["camera_trans_std_m"][vo],
        "pnp pixel std": num["pixel_std"][pnp],
        "unknown monocular scale": num["scale"][scaled],
        "outlier fraction": num["outlier_fraction"][outl],
        "robot se3_gaussian rotation std": 1e3 * num["robot_rot_std_rad"][r_se3],
        "robot se3_gaussian translation std": 1e3 * num["robot_trans_std_m"][r_se3],
        "robot joint_gaussian std": 1e3 * num["joint_std_rad"][r_joint],
        "robot dh_error length std": 1e3 * num["dh_len_std_m"][r_dh],
        "robot dh_error angle std": np.degrees(num["dh_ang_std_rad"][r_dh]),
        "robot_se3": r_se3,
        "robot_joint": r_joint,
        "robot_dh": r_dh,
        "robot_exact": ~(r_se3 | r_joint | r_dh),
        "outliers": outl,
        "student_t": np.isfinite(num["student_t_dof"]) & ~pnp,
        "unknown_scale": scaled,
        "vo_origin": rows["world_frame"].to_numpy() == "vo_origin",
        "vo_drift": vo,
        "pnp": pnp,
    }


def mixed_parameter_quantiles(rows: pd.DataFrame) -> pd.DataFrame:
    """Quantiles of :func:`mixed_parameters`: one row per parameter (``n``, ``min``, ``q25``, ``median``, ``q75``,
    ``max``) and one per flag (``n`` = sequences, ``share``), indexed by ``parameter``."""
    p = mixed_parameters(rows)
    out = []
    for name, _, _ in MIXED_VALUE_PARAMETERS:
        v = p[name]
        q = np.quantile(v, _QUANTILES) if v.size else np.full(len(_QUANTILES), np.nan)
        out.append({"parameter": name, "n": int(v.size), "share": np.nan, **dict(zip(_QCOLS, q))})
    n = p["outliers"].size
    for flag, label in MIXED_FLAGS:
        out.append({"parameter": label, "n": int(n), "share": float(p[flag].mean()), **dict.fromkeys(_QCOLS, np.nan)})
    out.append({"parameter": "unknown scale among vo_origin", "n": int(p["vo_origin"].sum()),
                "share": float(p["unknown_scale"][p["vo_origin"]].mean()) if p["vo_origin"].any() else np.nan,
                **dict.fromkeys(_QCOLS, np.nan)})  # fmt: skip
    return pd.DataFrame(out).set_index("parameter")


def write_mixed_quantiles(table: pd.DataFrame, path: str | Path) -> Path:
    """Store :func:`mixed_parameter_quantiles` as CSV (the published side of the comparison)."""
    return write_table(table.reset_index(), path)


def read_mixed_quantiles(path: str | Path) -> pd.DataFrame:
    """Read :func:`write_mixed_quantiles`'s CSV, indexed by ``parameter``.

    Raises
    ------
    InputError
        The file is missing or lacks a column (the message names it).
    """
    return read_table(path, "mixed-track parameter quantiles", ["parameter", "n", "share", *_QCOLS], "parameter")


def _g(x: float) -> str:
    return "-" if not np.isfinite(x) else (f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}")


def render_mixed_parameters(ours: pd.DataFrame, published: pd.DataFrame) -> str:
    """Markdown of two :func:`mixed_parameter_quantiles` tables, kinhec's beside the published ones."""
    units = {name: unit for name, _, unit in MIXED_VALUE_PARAMETERS}
    out = ["| parameter | unit | toolkit | n | min | q25 | median | q75 | max |", "|---|---|---|---|---|---|---|---|---|"]
    for name in units:
        for who, t in (("published", published), ("kinhec", ours)):
            r = t.loc[name]
            out.append(f"| {name if who == 'published' else ''} | {units[name] if who == 'published' else ''} | {who} | "
                       f"{int(r['n'])} | " + " | ".join(_g(float(r[c])) for c in _QCOLS) + " |")
    out += ["", "| share | published | kinhec |", "|---|---|---|"]
    for name in [p for p in published.index if p not in units]:
        a, b = published.loc[name], ours.loc[name]
        out.append(f"| {name} | {a['share']:.1%} ({int(round(a['share'] * a['n']))} of {int(a['n'])}) | "
                   f"{b['share']:.1%} ({int(round(b['share'] * b['n']))} of {int(b['n'])}) |")
    return "\n".join(out) + "\n"
