"""How long a resumed ``kinhec generate`` takes to decide which shards are done.

On a complete dataset folder (default: generates the small tier into a
temporary folder first), times

* planning: loading the tier and listing the shard tasks with their ids
  (``plan_shard_ids``; the recipes are expanded only for shards still to do),
  beside the full expansion (``plan_shards``) a resume used to pay;
* the completeness check of every shard, from the Parquet footers only (row-group
  statistics of ``sequence_id``, as ``shard_status`` does now), and the same check
  reading every ``sequence_id`` column (as it did before);
* planning of the full tier (no data needed),

then extrapolates the check to the full tier by row groups (the footers grow
with the number of sequences per shard).  Times are CPU seconds of this
process (the work is single-threaded and the footers are in the page cache
after a run); the wall time of each check is printed too.

Run: ``python benchmarks/bench_resume.py [--data FOLDER --tier small]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from kinhec import io as kio
from kinhec.synth import runner
from kinhec.io import shards as kio_impl
from kinhec.synth.tiers import load_tier


def _check_all(root: Path, tasks) -> tuple[float, int]:
    """CPU seconds of checking every shard (wall time on a shared machine mostly measures the others' load)."""
    t0, w0 = time.process_time(), time.perf_counter()
    done = sum(runner._shard_done(root, t) for t in tasks)
    print(f"    ({time.perf_counter() - w0:.3f} s wall)")
    return time.process_time() - t0, done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="complete dataset folder of --tier")
    ap.add_argument("--tier", default="small")
    args = ap.parse_args()
    tmp = None
    root = args.data
    if root is None:
        tmp = tempfile.TemporaryDirectory()
        root = Path(tmp.name) / args.tier
        print(f"generating tier {args.tier} into {root} ...")
        runner.generate_dataset(args.tier, root, workers=2)
    tier = load_tier(args.tier)
    t0 = time.perf_counter()
    tasks, counts = runner.plan_shard_ids(tier, root)
    t_plan = time.perf_counter() - t0
    kio.shard_status(root, tasks[0].track, tasks[0].shard_index, tasks[0].sequence_ids)  # imports, warm caches
    n_seq = sum(counts.values())
    t_cold, done = _check_all(root, tasks)  # the first pass may read footers from disk
    assert done == len(tasks), f"{root}: only {done} of {len(tasks)} shards complete"
    t_new, _ = _check_all(root, tasks)

    # shard_status looks the helper up in its own module, so patch it there
    original = kio_impl.row_groups_hold_ids
    kio_impl.row_groups_hold_ids = lambda md, expected: None  # force reading the id columns
    try:
        t_old, done_old = _check_all(root, tasks)
    finally:
        kio_impl.row_groups_hold_ids = original
    assert done_old == done

    full = load_tier("full")
    t0 = time.perf_counter()
    full_tasks, full_counts = runner.plan_shard_ids(full, root)
    t_plan_full = time.perf_counter() - t0
    t0 = time.perf_counter()
    runner.plan_shards(full, root)
    t_expand_full = time.perf_counter() - t0
    n_full = sum(full_counts.values())
    scale = n_full / n_seq
    print(f"tier {args.tier}: {n_seq:,} sequences in {len(tasks)} shards")
    print(f"  plan (ids only):                 {t_plan:8.3f} s")
    print(f"  check, footers only, first pass: {t_cold:8.3f} s  ({1e3 * t_cold / n_seq:.3f} ms per sequence)")
    print(f"  check, footers only (now):       {t_new:8.3f} s  ({1e3 * t_new / n_seq:.3f} ms per sequence)")
    print(f"  check, reading sequence_id:      {t_old:8.3f} s  ({1e3 * t_old / n_seq:.3f} ms per sequence)")
    print(f"full tier: {n_full:,} sequences in {len(full_tasks)} shards (x{scale:.0f} the sequences)")
    print(f"  plan, ids only (measured):       {t_plan_full:8.3f} s")
    print(f"  plan, every recipe (before):     {t_expand_full:8.3f} s")
    print(f"  check, footers only (extrap.):   {t_new * scale:8.1f} s  (first pass: {t_cold * scale:.1f} s)")
    print(f"  check, reading ids (extrap.):    {t_old * scale:8.1f} s")
    print(f"  resume decision before:          {t_expand_full + t_old * scale:8.1f} s")
    print(f"  resume decision (plan + check):  {t_plan_full + t_new * scale:8.1f} s  (target <= 5 s)")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
