"""Time of `kinhec suite check` per entry (verify + re-solve + compare), wall and CPU, and of the intrinsics stage.

Run: python benchmarks/bench_suite.py [--only ID ...]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from kinhec.models.intrinsics import calibrate_camera, pack_views
from kinhec.synth.observations import read_observations
from kinhec.evaluate.suite import check

ROOT = Path(__file__).resolve().parents[1] / "regression"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    cpu = {}
    t0, c0 = time.perf_counter(), time.process_time()
    last = [c0]

    def on_done(r):
        now = time.process_time()
        cpu[r.id] = now - last[0]
        last[0] = now

    reports = check(ROOT, only=args.only, progress=on_done)
    total, total_cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"{'entry':24s} {'status':6s} {'wall s':>8s} {'cpu s':>8s}")
    for r in reports:
        print(f"{r.id:24s} {'PASS' if r.ok else 'FAIL':6s} {r.seconds:8.2f} {cpu[r.id]:8.2f}")
    print(f"{'total':24s} {'':6s} {total:8.2f} {total_cpu:8.2f}")
    obs = read_observations(ROOT / "observations" / "kuka_1.json")
    views = pack_views(obs.points_3d, obs.points_2d)
    t0, c0 = time.perf_counter(), time.process_time()
    calibrate_camera(views, obs.image_size)
    print(f"kuka_1 intrinsics (Zhang + joint refinement of 9 + 6x30 parameters, {views.n_points} corners): "
          f"{time.perf_counter() - t0:.2f} s wall, {time.process_time() - c0:.2f} s cpu")


if __name__ == "__main__":
    main()
