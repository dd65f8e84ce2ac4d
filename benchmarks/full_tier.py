"""Generate and benchmark the full tier for real, track by track, and record what each track costs.

Usage::

    nice -n 10 python benchmarks/full_tier.py generate  --data /work/fulltier [--workers 2]
    nice -n 10 python benchmarks/full_tier.py benchmark --data /work/fulltier [--workers 2]
    nice -n 10 python benchmarks/full_tier.py benchmark --data /work/fulltier --tracks mixed --max-sequences 400
    python benchmarks/full_tier.py report --data /work/fulltier

Each phase runs the ordinary commands, one track at a time (smallest first,
``mixed`` last), under ``/usr/bin/time``:

* ``kinhec generate --tier full --out DATA --tracks TRACK --workers W -q``;
* ``kinhec benchmark DATA --tracks TRACK --workers W --out DATA-bench -q`` (a
  subset run per track: its results go to ``DATA-bench/subsets/<fingerprint>/``;
  the output folder outside the dataset has its own writer lock, so a track's
  benchmark can run while ``generate`` still writes the next tracks).

For every track it appends one line to ``DATA.log.jsonl`` (beside the folder,
not in it): wall time, CPU time (user + system of the command and all its
worker processes), the peak resident memory of the largest process, and the
bytes the track added on disk (its shards, or its benchmark outputs).  A track
already in the log is skipped, and the commands themselves resume (finished
shards and benchmark parts are kept), so an interrupted phase is continued by
running the same command again.  With ``--max-sequences N`` the benchmark
phase evaluates the first N sequences of each track only (a sample, logged as
``benchmark-sample``: the per-sequence cost of a track before its whole run).
``report`` prints the tables of ``docs/performance.md`` (the latest record of each
track, so ``--again`` re-measures a track), and where the benchmark results are
there, the seconds each solver took per track.

The machine is shared: CPU time is the figure to compare, wall time depends on
the load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

#: Tracks in the order they run (the smallest first: a first look at every track before the long one).
ORDER = ("monocular", "robot_error", "outliers", "temporal", "pnp", "motion", "noise", "mixed")


def _kinhec() -> str:
    exe = shutil.which("kinhec") or str(Path(sys.executable).parent / "kinhec")
    return exe


def _bytes(paths) -> int:
    total = 0
    for p in paths:
        if p.is_file():
            total += p.stat().st_size
        elif p.is_dir():
            total += sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    return total


def _log_path(data: Path) -> Path:
    return data.parent / (data.name + ".log.jsonl")


def _done(log: Path) -> set:
    if not log.is_file():
        return set()
    return {(r["phase"], r["track"]) for r in map(json.loads, log.read_text().splitlines()) if r.get("ok")}


def _timed(cmd: list[str]) -> dict:
    """Run ``cmd`` under /usr/bin/time: exit code, wall [s], CPU [s], peak RSS [MB]."""
    fmt = "KINHEC_TIME %e %U %S %M"
    t0 = time.time()
    proc = subprocess.run(["/usr/bin/time", "-f", fmt, *cmd], stderr=subprocess.PIPE, text=True)
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("KINHEC_TIME")]
    other = [ln for ln in proc.stderr.splitlines() if not ln.startswith("KINHEC_TIME")]
    if other:
        sys.stderr.write("\n".join(other[-20:]) + "\n")
    if not line:
        return {"rc": proc.returncode, "wall_s": time.time() - t0}
    e, u, s, m = line[-1].split()[1:]
    return {"rc": proc.returncode, "wall_s": float(e), "cpu_s": float(u) + float(s), "peak_rss_mb": int(m) / 1024.0}


def run_phase(phase: str, data: Path, workers: int, tracks, max_sequences: int | None = None,
              again: bool = False) -> None:  # fmt: skip
    log = _log_path(data)
    done = set() if again else _done(log)
    kind = phase if max_sequences is None else f"{phase}-sample"
    for track in tracks:
        if (kind, track) in done:
            print(f"{phase} {track}: already in {log}")
            continue
        if phase == "generate":
            cmd = [_kinhec(), "generate", "--tier", "full", "--out", str(data), "--tracks", track,
                   "--workers", str(workers), "-q"]  # fmt: skip
            where = lambda: [*data.glob(f"robot/{track}-*.parquet"), *data.glob(f"camera/{track}-*.parquet")]  # noqa: E731
        else:
            out = data.parent / (data.name + "-bench")
            cmd = [_kinhec(), "benchmark", str(data), "--tracks", track, "--workers", str(workers), "--out", str(out),
                   "-q"]  # fmt: skip
            if max_sequences is not None:
                cmd += ["--max-sequences", str(max_sequences)]
            where = lambda: [out]  # noqa: E731
        before = _bytes(where())
        print(f"{phase} {track}: {' '.join(cmd)}", flush=True)
        rec = _timed(cmd)
        rec.update(phase=kind, track=track, max_sequences=max_sequences, workers=workers, ok=rec["rc"] == 0, bytes=_bytes(where()) - before,
                   when=time.strftime("%Y-%m-%d %H:%M:%S"), load=os.getloadavg())  # fmt: skip
        with open(log, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(f"{phase} {track}: {json.dumps(rec)}", flush=True)
        if not rec["ok"]:
            sys.exit(f"{kind} {track} failed (exit {rec['rc']}); run the same command again to resume")


def report(data: Path) -> None:
    import pandas as pd

    log = _log_path(data)
    rows = [json.loads(ln) for ln in log.read_text().splitlines()] if log.is_file() else []
    counts = pd.read_parquet(data / "sequences.parquet", columns=["track"]).track.value_counts()
    for phase in ("generate", "benchmark", "benchmark-sample"):
        latest = {r["track"]: r for r in rows if r["phase"] == phase and r.get("ok")}  # a re-measure replaces
        sel = [latest[t] for t in ORDER if t in latest]
        if not sel:
            continue
        print(f"\n{phase}\n\n| track | sequences | CPU [s] | CPU per sequence [ms] | wall [s] | peak memory [MB] | bytes |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        tot = {"n": 0, "cpu": 0.0, "wall": 0.0, "bytes": 0, "rss": 0.0}
        for r in sel:
            n = int(counts.get(r["track"], 0))
            if r.get("max_sequences"):
                n = min(n, int(r["max_sequences"]))
            print(f"| {r['track']} | {n:,} | {r['cpu_s']:,.0f} | {1000 * r['cpu_s'] / max(n, 1):.1f} | "
                  f"{r['wall_s']:,.0f} | {r['peak_rss_mb']:,.0f} | {r['bytes'] / 1e9:.2f} GB |")  # fmt: skip
            tot["n"] += n
            tot["cpu"] += r["cpu_s"]
            tot["wall"] += r["wall_s"]
            tot["bytes"] += r["bytes"]
            tot["rss"] = max(tot["rss"], r["peak_rss_mb"])
        print(f"| total | {tot['n']:,} | {tot['cpu']:,.0f} ({tot['cpu'] / 3600:.2f} core-h) | "
              f"{1000 * tot['cpu'] / max(tot['n'], 1):.1f} | {tot['wall']:,.0f} | {tot['rss']:,.0f} | "
              f"{tot['bytes'] / 1e9:.2f} GB |")  # fmt: skip
    solver_table(data.parent / (data.name + "-bench"))


def solver_table(bench: Path) -> None:
    """Where the benchmark's time went, per solver and track: the ``runtime_ms`` the results record per call.

    Wall time of each call inside a unit, BLAS on one thread, so on an otherwise idle worker it is CPU time; the
    clock-offset estimate is its own row (``time_offset_runtime_ms``, once per asynchronous sequence).  Reading,
    pairing and the bound columns are not in it: the rest of a track's CPU above.
    """
    import pandas as pd

    files = sorted(bench.glob("subsets/*/results.parquet"))
    if not files:
        return
    cols = ["sequence_id", "track", "solver", "eval_sync", "runtime_ms", "time_offset_runtime_ms"]
    res = pd.concat([pd.read_parquet(f, columns=cols) for f in files], ignore_index=True)
    per = res.groupby(["solver", "track"]).runtime_ms.sum().unstack(fill_value=0.0) / 1000.0
    offset = res[res.eval_sync == "estimated"].drop_duplicates("sequence_id")
    per.loc["clock offset"] = offset.groupby("track").time_offset_runtime_ms.sum() / 1000.0
    per = per.fillna(0.0)
    per["all"] = per.sum(axis=1)
    per = per.sort_values("all", ascending=False)
    tracks = [t for t in ORDER if t in per.columns]
    total = per["all"].sum()
    print("\nbenchmark: seconds per solver and track (sum of runtime_ms), share of the whole\n")
    print("| solver | " + " | ".join(tracks) + " | all | share |")
    print("|---|" + "---:|" * (len(tracks) + 2))
    for name, row in per.iterrows():
        cells = " | ".join(f"{row[t]:,.0f}" for t in tracks)
        print(f"| `{name}` | {cells} | {row['all']:,.0f} | {100 * row['all'] / total:.0f} % |")
    cells = " | ".join(f"{per[t].sum():,.0f}" for t in tracks)
    print(f"| all | {cells} | {total:,.0f} ({total / 3600:.2f} core-h) | 100 % |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("phase", choices=("generate", "benchmark", "report"))
    ap.add_argument("--data", required=True, type=Path, help="the full tier's folder (outside the repository)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--tracks", nargs="*", default=list(ORDER))
    ap.add_argument("--max-sequences", type=int, default=None, help="benchmark: the first N sequences of each track")
    ap.add_argument("--again", action="store_true",
                    help="run the tracks even if the log has them (a re-measure; the report keeps the latest)")
    a = ap.parse_args()
    data = a.data.resolve()
    if a.phase == "report":
        report(data)
    else:
        run_phase(a.phase, data, a.workers, a.tracks, a.max_sequences, a.again)


if __name__ == "__main__":
    main()
