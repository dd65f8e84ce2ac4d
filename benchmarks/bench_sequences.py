"""Where the benchmark's CPU sits, sequence by sequence: per track, per solver and per phase.

Usage::

    python benchmarks/bench_sequences.py [FOLDER] [--top 10] [--threads 1]

One process runs the benchmark's units over every sequence of ``FOLDER`` (default: the published smoke
copy next to the repository) the way ``kinhec benchmark`` does (reading, clock offset, pairing and
keyframes, every pose solver on each synchronisation, the Cramér-Rao bound columns; the pixel solver is
left out, as in ``_phases.phase_breakdown``), with BLAS on ``--threads`` threads (the benchmark's units use
one), and prints, in CPU milliseconds (``time.process_time``):

* per track: the sequences, the mean CPU per sequence and each phase's and the costliest solvers' share;
* per solver and track: the mean CPU per sequence;
* the ``--top`` costliest sequences with their frames and their costliest solver.

The libraries the solvers import on first use (``scipy.linalg``, ``scipy.optimize``, ``scipy.special``) are
imported before the pass and their CPU printed apart, so that they do not land on the first sequence.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

from _phases import phase_breakdown  # benchmarks/_phases.py

_REPO = Path(__file__).resolve().parents[1]
_PHASES = ["read", "clock offset", "pair + keyframes", "solvers", "bound columns"]


def _default_folder() -> Path:
    for p in _REPO.parents:
        if (p / "shared" / "published" / "smoke").is_dir():
            return p / "shared" / "published" / "smoke"
    return _REPO.parent / "shared" / "published" / "smoke"


def _ms(x: float) -> str:
    return f"{1000 * x:.1f}"


def _table(header: list[str], rows: list[list[str]]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", type=Path, default=_default_folder(), help="a generated folder")
    ap.add_argument("--top", type=int, default=10, help="how many of the costliest sequences to list")
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (the benchmark's units use 1)")
    args = ap.parse_args()
    if not (args.folder / "sequences.parquet").is_file():
        sys.exit(f"{args.folder}: not a generated folder (expected sequences.parquet in it)")
    from threadpoolctl import threadpool_limits

    t0 = time.process_time()
    import kinhec.evaluate.benchmark  # noqa: F401  (with pandas and pyarrow)

    t_kinhec = time.process_time() - t0
    t0 = time.process_time()
    with threadpool_limits(limits=args.threads, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = phase_breakdown(args.folder, per_sequence=True)
    total = time.process_time() - t0 - res["phases"]["first-use imports (scipy)"]
    rows = res["sequences"]
    solvers = [s for s, c in res["calls"].items() if c]
    print(f"{args.folder}: {res['n']} sequences, {total:.2f} CPU-s over the sequences (BLAS threads "
          f"{args.threads}); imports before the pass: kinhec.evaluate.benchmark (with pandas, pyarrow) {t_kinhec:.2f} CPU-s, "
          f"scipy.linalg/optimize/special {res['phases']['first-use imports (scipy)']:.2f} CPU-s\n")  # fmt: skip

    tracks = sorted({r["track"] for r in rows}, key=lambda t: -sum(r["solvers"] for r in rows if r["track"] == t))
    by_track = {t: [r for r in rows if r["track"] == t] for t in tracks}
    top_solvers = sorted(solvers, key=lambda s: -res["per_solver"][s])[:4]

    print("Per track: mean CPU per sequence [ms] and the phases' and the costliest solvers' shares")
    hdr = ["track", "sequences", "evaluations", "frames (median)", "CPU per sequence", "CPU total [s]"]
    hdr += _PHASES + [f"`{s}`" for s in top_solvers]
    out = []
    for t, rs in [*by_track.items(), ("all", rows)]:
        cpu = [sum(r[p] for p in _PHASES) for r in rs]
        line = [t, str(len(rs)), str(sum(r["evaluations"] for r in rs))]
        line += [f"{statistics.median(r['n_camera_frames'] or 0 for r in rs):.0f}", _ms(statistics.mean(cpu))]
        line += [f"{sum(cpu):.2f}"]
        line += [f"{100 * sum(r[p] for r in rs) / sum(cpu):.0f} %" for p in _PHASES]
        line += [f"{100 * sum(r[s] for r in rs) / sum(cpu):.0f} %" for s in top_solvers]
        out.append(line)
    _table(hdr, out)

    print("Per solver and track: mean CPU per sequence [ms] (both synchronisations where there are two)")
    out = []
    for s in sorted(solvers, key=lambda s: -res["per_solver"][s]):
        line = [f"`{s}`"] + [_ms(statistics.mean(r[s] for r in rs)) for rs in by_track.values()]
        line += [_ms(statistics.mean(r[s] for r in rows)), f"{res['per_solver'][s]:.2f}"]
        out.append(line)
    for p in _PHASES:
        if p != "solvers":
            line = [p] + [_ms(statistics.mean(r[p] for r in rs)) for rs in by_track.values()]
            out.append(line + [_ms(statistics.mean(r[p] for r in rows)), f"{res['phases'][p]:.2f}"])
    _table(["solver / phase", *tracks, "all", "total [s]"], out)

    print(f"The {args.top} costliest sequences [ms]")
    out = []
    for r in sorted(rows, key=lambda r: -sum(r[p] for p in _PHASES))[: args.top]:
        worst = max(solvers, key=lambda s: r[s])
        out.append([str(r["sequence_id"]), str(r["track"]), str(r["sync"]), str(r["n_camera_frames"]),
                    _ms(sum(r[p] for p in _PHASES)), _ms(r["solvers"]), f"`{worst}` {_ms(r[worst])}",
                    _ms(r["read"]), _ms(r["bound columns"])])  # fmt: skip
    _table(["sequence", "track", "sync", "camera frames", "CPU", "solvers", "costliest solver", "read",
            "bound columns"], out)  # fmt: skip


if __name__ == "__main__":
    main()
