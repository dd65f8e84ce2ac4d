"""Custom tier: write a tier YAML derived from a shipped one, plan it, generate it and use it.

Usage::

    python examples/11_custom_tier.py [DATA] [--out DIR] [--workers N]

A tier is a YAML file listing the factor levels of every track.  This script
starts from the shipped tier that produced DATA (``generation_info.json``;
``smoke`` if DATA has none), keeps two tracks with a small design of its own
(look-at stations on one arm at two camera noise levels; PnP at two pixel
noise levels), writes it as ``my_tier.yaml``, checks the planned counts,
generates the sequences into ``DIR/data_custom`` (a temporary folder unless
``--out`` is given) and calibrates them.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

from kinhec import KinhecError, iter_sequences, load_manifest, solvers
from kinhec.geometry import se3
from kinhec.synth import tiers
from kinhec.synth.runner import generate_dataset


def custom_config(base: dict) -> dict:
    cfg = copy.deepcopy(base)
    cfg["tier"] = "my_tier"
    cfg["description"] = "Look-at stations on a Panda at two camera noise levels, and PnP at two pixel noise levels."
    cfg["shard_size"] = 4
    noise = copy.deepcopy(base["tracks"]["noise"])
    noise.update(
        robots=["panda"],
        configurations=["eye_in_hand"],
        families=[{"family": "lookat", "mode": "stations", "n_stations": 8}],
        robot_levels=["r1"],
        camera_levels=["c1", "c3"],
        repeats=2,
    )
    pnp = copy.deepcopy(base["tracks"]["pnp"])
    pnp.update(robots=["ur5e"], configurations=["eye_in_hand"], pixel_std=[0.25, 1.0], n_stations=8, repeats=2)
    cfg["tracks"] = {"noise": noise, "pnp": pnp}
    return cfg


def run(data: str, out: Path, workers: int) -> None:
    info_path = Path(data) / "generation_info.json"
    base_name = json.loads(info_path.read_text()).get("tier", "smoke") if info_path.is_file() else "smoke"
    if base_name not in tiers.TIER_NAMES:
        base_name = "smoke"
    base = tiers.load_tier(base_name)  # the shipped YAML, validated
    path = out / "my_tier.yaml"
    path.write_text(yaml.safe_dump(custom_config(base.config), sort_keys=False))
    tier = tiers.load_tier(path)  # validated like any tier: a bad key or level raises InputError
    counts = tiers.plan_counts(tier)
    print(f"tier {tier.name!r} derived from {base_name!r}, written to {path}")
    print(f"planned: {counts} ({sum(counts.values())} sequences)")

    folder = out / "data_custom"
    summary = generate_dataset(path, folder, workers=workers, progress=False)
    if not summary.ok:
        raise SystemExit(f"generation failed: {[f.error for f in summary.failed]}")
    print(f"generated {summary.written_sequences} sequences in {summary.wall_s:.1f} s into {folder}")

    man = load_manifest(folder)
    if len(man) != sum(counts.values()):
        raise SystemExit(f"expected {sum(counts.values())} sequences in the index, got {len(man)}")
    rows = []
    for seq in iter_sequences(folder, man):
        A_abs, B_abs = seq.axyb_keyframe_poses()
        rows.append((seq.track, seq.info.level, *se3.pose_error(solvers.shah(A_abs, B_abs)[0], seq.X)))
    for track, level in sorted({(r[0], r[1]) for r in rows}):
        errs = np.array([(r[2], r[3]) for r in rows if r[0] == track and r[1] == level])
        print(f"  {track:<6}{level:<52} n={len(errs)}  median X error {np.median(errs[:, 0]):.4f} deg, "
              f"{np.median(errs[:, 1]):.3f} mm")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default="data", help="dataset folder whose tier serves as template (default: data)")
    ap.add_argument("--out", help="folder for my_tier.yaml and data_custom/ (default: a temporary folder)")
    ap.add_argument("--workers", type=int, default=1, help="worker processes (default: 1)")
    args = ap.parse_args()
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        run(args.data, out, args.workers)
    else:
        with tempfile.TemporaryDirectory(prefix="kinhec_custom_") as tmp:
            run(args.data, Path(tmp), args.workers)


if __name__ == "__main__":
    try:
        main()
    except KinhecError as exc:  # bad folder, unknown sequence id, ...: one line, exit status 1
        sys.exit(f"error: {exc}")
