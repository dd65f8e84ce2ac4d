"""Cost of a tier per track, measured on a generated folder and extrapolated to the full tier.

On a complete folder (``--data``, e.g. the medium tier) prints, per track:

* sequences, robot and camera frames, bytes on disk of the shards, bytes per frame;
* generation CPU per sequence: every ``--every``-th recipe of the track is generated
  and written as a shard of one sequence into a temporary folder (encoding included),
  timed with ``time.process_time``;
* benchmark CPU per sequence: the first ``--max-sequences`` sequences of each track are
  evaluated by the eleven baselines in this process (``run_unit`` CPU per unit);

then the full tier: its sequence counts per track (from the tier file) times these
per-sequence figures, in core-hours, and its bytes from the frames per sequence of each
track.  Beside them, the published toolkit's figures (11 CPU-s per sequence to generate,
about 7 h on 8 workers to benchmark the full tier, 1.85 CPU-s per sequence for the
baselines on the smoke tier).

Run: ``python benchmarks/bench_scale.py --data data_medium [--every 25] [--max-sequences 40]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from kinhec import io as kio
from kinhec.evaluate.benchmark import run_benchmark
from kinhec.synth.generator import generate_sequence
from kinhec.synth.recipe import Recipe
from kinhec.synth.tiers import expand_tier, load_tier, plan_counts

PUBLISHED_GEN_CPU_S_PER_SEQ = 11.0
PUBLISHED_BENCH_CPU_S_PER_SEQ = 1.85


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--every", type=int, default=25)
    ap.add_argument("--max-sequences", type=int, default=40)
    args = ap.parse_args()
    root = args.data
    info = json.loads((root / "generation_info.json").read_text())
    tier = load_tier(info["tier"])
    man = kio.load_manifest(root)

    # size and frames per track
    size = defaultdict(int)
    for p in list(root.glob("robot/*.parquet")) + list(root.glob("camera/*.parquet")):
        size[p.name.rsplit("-", 1)[0]] += p.stat().st_size
    g = man.groupby("track", sort=False)
    n_seq = g.size().to_dict()
    frames = (g["n_robot_frames"].sum() + g["n_camera_frames"].sum()).to_dict()

    # generation CPU per sequence (generate + write a one-sequence shard)
    gen = defaultdict(list)
    recipes = expand_tier(tier, list(n_seq))
    with tempfile.TemporaryDirectory() as tmp:
        for track, rs in recipes.items():
            for k, r in enumerate(rs[:: args.every]):
                t0 = time.process_time()
                st = generate_sequence(Recipe.from_dict(r))
                kio.write_shard(Path(tmp) / f"{track}{k}", track, 0, [st])
                gen[track].append(time.process_time() - t0)

    # benchmark CPU per sequence, per track
    bench_cpu, bench_n = defaultdict(float), defaultdict(int)

    def on_event(kind, data):
        if kind == "shard":
            o = data["outcome"]
            bench_cpu[o.track] += o.seconds
            bench_n[o.track] += o.n_sequences

    with tempfile.TemporaryDirectory() as tmp:
        run_benchmark(root, out=Path(tmp) / "b", max_sequences=args.max_sequences, workers=1, on_event=on_event)

    full = plan_counts(load_tier("full"))
    print(f"{root} (tier {tier.name}): {len(man):,} sequences, {sum(size.values()) / 1e9:.2f} GB of shards, "
          f"{sum(size.values()) / sum(frames.values()):.1f} B/frame")  # fmt: skip
    print(f"{'track':12s} {'seqs':>6s} {'frames/seq':>10s} {'B/frame':>8s} {'gen CPU s/seq':>13s} "
          f"{'bench CPU s/seq':>15s} {'full seqs':>9s} {'full gen h':>10s} {'full bench h':>12s} {'full GB':>8s}")
    tot = defaultdict(float)
    for track in n_seq:
        fps = frames[track] / n_seq[track]
        bpf = size[track] / frames[track]
        g_s = sum(gen[track]) / len(gen[track])
        b_s = bench_cpu[track] / max(bench_n[track], 1)
        nf = full.get(track, 0)
        row = {"gen": nf * g_s / 3600, "bench": nf * b_s / 3600, "gb": nf * fps * bpf / 1e9, "seqs": nf}
        for k, v in row.items():
            tot[k] += v
        print(f"{track:12s} {n_seq[track]:6d} {fps:10.0f} {bpf:8.1f} {g_s:13.4f} {b_s:15.4f} {nf:9,d} "
              f"{row['gen']:10.3f} {row['bench']:12.3f} {row['gb']:8.1f}")
    print(f"{'full tier':12s} {'':6s} {'':10s} {'':8s} {'':13s} {'':15s} {int(tot['seqs']):9,d} "
          f"{tot['gen']:10.3f} {tot['bench']:12.3f} {tot['gb']:8.1f}")
    print(f"published toolkit, full tier: generation {PUBLISHED_GEN_CPU_S_PER_SEQ * tot['seqs'] / 3600:.0f} core-h "
          f"(11 CPU-s/seq), benchmark ~{7 * 8} core-h (7 h on 8 workers); "
          f"ratios {PUBLISHED_GEN_CPU_S_PER_SEQ * tot['seqs'] / 3600 / tot['gen']:.0f}x and {56 / tot['bench']:.0f}x")


if __name__ == "__main__":
    main()
