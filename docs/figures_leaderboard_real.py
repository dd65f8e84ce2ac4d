"""The figures of ``docs/leaderboard_real.md``: every method on every real recording, by held-out prediction.

Rendered from the stored run ``docs/leaderboard_real.run.json`` of ``benchmarks/leaderboard_real.py`` (which
re-measures it, a few minutes), so that the page can be checked without recomputing it:

* ``leaderboard_real.summary``: the run (versions, CPU time) and the leaders of every recording;
* ``leaderboard_real.overview``: one row per method, its held-out translation RMS and rank on every recording, by
  mean rank;
* ``leaderboard_real.recordings``: one table per recording, every figure of the run;
* ``leaderboard_real.mount``: ``X`` of the two PrimeSense runs of one rig, method by method.

Written by ``python docs/build_figures.py``; checked by ``tests/test_doc_figures.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUN = HERE / "leaderboard_real.run.json"

#: The page's blocks, in page order; those whose figures depend on the OpenCV version installed (none: every
#: figure comes from the stored run, which names its OpenCV).
NAMES = ("leaderboard_real.summary", "leaderboard_real.overview", "leaderboard_real.recordings",
         "leaderboard_real.mount")  # fmt: skip
OPENCV_BLOCKS = ()


def _f(v, sig: int = 3) -> str:
    """``v`` to ``sig`` significant digits, trailing zeros kept, no exponent; ``-`` for a missing value."""
    if v is None or not math.isfinite(v):
        return "-"
    if v == 0:
        return "0"
    decimals = max(0, sig - 1 - math.floor(math.log10(abs(v))))
    return f"{v:,.{decimals}f}"


def _m(name: str) -> str:
    return f"`{name}`"


def ranking(rec: dict) -> list[tuple[int | None, str]]:
    """``(rank, method)`` by held-out translation RMS; a method that failed on some station comes after the
    others, unranked."""
    rows = rec["methods"]
    ok = sorted((m for m in rows if rows[m]["n_failed"] == 0 and rows[m]["rms_mm"] is not None),
                key=lambda m: (rows[m]["rms_mm"], rows[m]["rms_deg"]))  # fmt: skip
    rest = [m for m in rows if m not in ok]
    return [(i + 1, m) for i, m in enumerate(ok)] + [(None, m) for m in rest]


def _cpu(run: dict) -> str:
    cpu = run["cpu_s"]
    return f"{cpu / 60:.1f} CPU-min" if cpu >= 120 else f"{cpu:.0f} CPU-s"


def render_summary(run: dict) -> str:
    recs = run["recordings"]
    cv = f"OpenCV {run['opencv_version']}" if run.get("opencv_version") else "without OpenCV"
    lines = [f"Run: kinhec {run['kinhec_version']}, {cv}, NumPy {run['numpy_version']}; {len(run['methods'])} methods on "
             f"{len(recs)} recordings ({sum(r['n_stations'] for r in recs.values()):,} stations, each left out once) "
             f"in {_cpu(run)} (process CPU time).", "", "Leaders by held-out translation RMS (rotation RMS beside):", ""]  # fmt: skip
    for name, rec in recs.items():
        order = [m for r, m in ranking(rec) if r is not None]
        top = ", ".join(f"{_m(m)} {_f(rec['methods'][m]['rms_mm'])} mm / {_f(rec['methods'][m]['rms_deg'])} deg"
                        for m in order[:3])  # fmt: skip
        last = order[-1]
        failed = [m for r, m in ranking(rec) if r is None]
        tail = f"; last {_m(last)} {_f(rec['methods'][last]['rms_mm'])} mm"
        if failed:
            tail += "; failed: " + ", ".join(f"{_m(m)} ({rec['methods'][m]['n_failed']} of {rec['n_stations']} stations)"
                                             for m in failed)  # fmt: skip
        lines += [f"* **{name}** ({rec['n_stations']} stations): {top}{tail}.", ""]
    return "\n".join(lines)


def render_overview(run: dict) -> str:
    recs = run["recordings"]
    names = list(recs)
    ranks = {name: {m: r for r, m in ranking(rec)} for name, rec in recs.items()}

    def mean_rank(m):
        r = [ranks[n].get(m) for n in names]
        r = [x if x is not None else len(recs[n]["methods"]) for n, x in zip(names, r)]  # a failure ranks last
        return sum(r) / len(r)

    methods = sorted(run["methods"], key=lambda m: (mean_rank(m), run["methods"].index(m)))
    head = "| method | " + " | ".join(names) + " | mean rank |"
    out = [head, "|---|" + "---:|" * (len(names) + 1)]
    for m in methods:
        cells = []
        for n in names:
            row = recs[n]["methods"][m]
            r = ranks[n][m]
            cells.append(f"{_f(row['rms_mm'])} ({r})" if r is not None else f"failed ({row['n_failed']})")
        out.append(f"| {_m(m)} | " + " | ".join(cells) + f" | {mean_rank(m):.1f} |")
    return ("Held-out translation RMS [mm] of the eye poses and its rank (1 = best) per recording; a method that "
            "failed on a station counts as last there.\n\n" + "\n".join(out) + "\n")


def render_recordings(run: dict) -> str:
    parts = []
    for name, rec in run["recordings"].items():
        frame = {"cam_T_target": "`T_cam_target` (the target in the camera)",
                 "target_T_cam": "`T_target_cam` (the camera in the target frame)"}[rec["domain"]]
        other = {"cam_T_target": "`T_target_cam`", "target_T_cam": "`T_cam_target`"}[rec["domain"]]
        parts.append(f"### {name}\n\n{rec['description']}. {rec['n_stations']} stations (from {rec['n_pairs_raw']} "
                     f"pairs); errors of {frame}, the other direction's translation errors those of {other}.\n")  # fmt: skip
        t = ["| rank | method | held-out RMS [mm] | held-out RMS [deg] | median [mm] | 90 % [mm] | other direction RMS "
             "[mm] | in-sample RMS [mm] | in-sample RMS [deg] |", "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        notes = []
        for r, m in ranking(rec):
            row = rec["methods"][m]
            if r is None:
                notes.append(f"{_m(m)} failed on {row['n_failed']} of {rec['n_stations']} stations "
                             f"({row['failures'][0].split(': ', 1)[1] if row['failures'] else '?'})")  # fmt: skip
            t.append(f"| {r if r is not None else '-'} | {_m(m)} | {_f(row['rms_mm'])} | {_f(row['rms_deg'])} | "
                     f"{_f(row['median_mm'])} | {_f(row['p90_mm'])} | {_f(row['rms_mm_other'])} | "
                     f"{_f(row.get('fit_rms_mm'))} | "
                     f"{_f(row.get('fit_rms_deg'))} |")  # fmt: skip
        parts.append("\n".join(t) + "\n")
        if notes:
            parts.append("Failed: " + "; ".join(notes) + ".\n")
    return "\n".join(parts)


def render_mount(run: dict) -> str:
    out = []
    for pair in run["same_mount"]:
        a, b = pair["a"], pair["b"]
        out.append(f"`X` from the whole of {a} against `X` from the whole of {b} ({pair['source']}); z = the "
                   "difference over the combined sigma along it, for the methods that state a covariance.\n")  # fmt: skip
        t = ["| method | rotation [deg] | translation [mm] | rotation z | translation z |", "|---|---:|---:|---:|---:|"]
        rows = pair["methods"]
        for m in sorted(rows, key=lambda m: (rows[m]["d_mm"] is None, rows[m]["d_mm"] or 0.0)):
            d = rows[m]
            t.append(f"| {_m(m)} | {_f(d['d_deg'])} | {_f(d['d_mm'])} | {_f(d['z_deg'], 2)} | {_f(d['z_mm'], 2)} |")
        out.append("\n".join(t) + "\n")
    return "\n".join(out)


def blocks(run_path: Path = RUN) -> dict[str, str]:
    run = json.loads(Path(run_path).read_text(encoding="utf-8"))
    return {"leaderboard_real.summary": render_summary(run), "leaderboard_real.overview": render_overview(run),
            "leaderboard_real.recordings": render_recordings(run), "leaderboard_real.mount": render_mount(run)}
