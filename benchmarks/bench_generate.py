"""CPU cost of generating one sequence, per track, and over a tier's mix.

Usage::

    python benchmarks/bench_generate.py                 # typical recipe of every track
    python benchmarks/bench_generate.py --tier small    # plus the average over the small tier
    python benchmarks/bench_generate.py --tier medium --every 20   # every 20th sequence of a tier
    python benchmarks/bench_generate.py --profile lookat_stations  # cProfile of one case

Prints CPU seconds per sequence (``time.process_time``, single thread),
averaged over ``--repeats`` seeds after one warm-up call.  Figures only: no
thresholds are asserted here.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import pstats
import sys
import time

from kinhec.synth.generator import generate_sequence
from kinhec.synth.recipe import Recipe

R2 = dict(robot_rot_std_rad=0.0005, robot_trans_std_m=0.0003)
C2 = dict(camera_rot_std_rad=0.002, camera_trans_std_m=0.001, camera_trans_std_z_m=0.003)

#: Typical recipes of every track (full-tier settings).
CASES: dict[str, dict] = {
    "noise_continuous": dict(track="noise", robot="ur5e", family="joint_sinusoid", duration_s=20.0, **R2, **C2),
    "noise_lookat_stations": dict(track="noise", robot="panda", family="lookat", sampling_mode="stations",
                                  n_stations=20, **R2, **C2),
    "noise_lookat_eye_to_hand": dict(track="noise", robot="iiwa14", configuration="eye_to_hand", family="lookat",
                                     sampling_mode="stations", n_stations=20, **R2, **C2),
    "motion_cone": dict(track="motion", robot="free6d", family="cartesian_cone", sampling_mode="stations",
                        n_waypoints=20, n_stations=20, cone_half_angle_deg=10.0, rot_angle_range_deg=(8.0, 15.0),
                        **R2, **C2),
    "motion_subset_parallel": dict(track="motion", robot="ur10e", family="joint_sinusoid", subset="parallel",
                                   duration_s=20.0, **R2, **C2),
    "motion_n_poses_100": dict(track="motion", robot="iiwa14", family="lookat", sampling_mode="stations",
                               n_stations=100, **R2, **C2),
    "temporal_async": dict(track="temporal", robot="ur10e", family="joint_sinusoid", sync="async", duration_s=10.0,
                           camera_rate_hz=60.0, time_offset_s=0.05, time_jitter_std_s=0.002,
                           camera_drop_fraction=0.1, n_harmonics=3, speed_fraction=0.35, **R2, **C2),
    "outliers_flip_t3": dict(track="outliers", robot="irb120", family="joint_waypoints", sampling_mode="stations",
                             n_stations=30, outlier_fraction=0.2, outlier_model="planar_flip", student_t_dof=3.0,
                             **R2, **C2),
    "monocular_se3": dict(track="monocular", robot="ur5e", family="joint_sinusoid", world_frame="vo_origin",
                          scale=2.0, scale_drift_std=0.002, duration_s=20.0, **R2, **C2),
    "monocular_vo_drift": dict(track="monocular", robot="free6d", family="proposal_sine", world_frame="vo_origin",
                               scale=0.5, duration_s=20.0, camera_noise_model="vo_drift",
                               vo_drift_rot_std_rad=0.001, vo_drift_trans_std_m=0.002, **R2),
    "robot_error_dh": dict(track="robot_error", robot="puma560", family="joint_waypoints", sampling_mode="stations",
                           n_stations=30, robot_noise_models=("dh_error",), dh_len_std_m=0.001,
                           dh_ang_std_rad=0.0017, dh_joint_std_rad=0.0001, **C2),
    "pnp_fhd_grid": dict(track="pnp", robot="ur5e", family="lookat", sampling_mode="stations", n_stations=25,
                         camera="fhd", target="grid_10x8_60mm", camera_noise_model="pnp", pixel_std=0.5,
                         robot_rot_std_rad=0.0002, robot_trans_std_m=0.0001),
    "mixed_long_pnp_async": dict(track="mixed", robot="panda", family="joint_sinusoid", sync="async", duration_s=30.0,
                                 camera_rate_hz=60.0, time_offset_s=0.1, time_jitter_std_s=0.002,
                                 camera_noise_model="pnp", pixel_std=1.0, outlier_fraction=0.1,
                                 outlier_model="random_pose", robot_noise_models=("se3_gaussian", "joint_gaussian"),
                                 joint_std_rad=0.0005, **R2),
}  # fmt: skip


def _cpu(recipe) -> tuple[float, object]:
    t0 = time.process_time()
    st = generate_sequence(recipe)
    return time.process_time() - t0, st


def bench_cases(repeats: int) -> None:
    generate_sequence(Recipe(seed=0, **CASES["noise_lookat_stations"]))  # warm-up (imports, caches)
    print(f"{'case':28s} {'CPU s/seq':>10s} {'robot rows':>10s} {'camera rows':>11s}")
    for name, kw in CASES.items():
        tot = 0.0
        for s in range(repeats):
            dt, st = _cpu(Recipe(seed=1000 + s, **kw))
            tot += dt
        print(f"{name:28s} {tot / repeats:10.4f} {st.robot.num_rows:10d} {st.camera.num_rows:11d}")


def bench_tier(tier_name: str, every: int) -> None:
    from kinhec.synth.tiers import expand_tier, load_tier

    recipes = expand_tier(load_tier(tier_name))
    generate_sequence(next(iter(recipes.values()))[0])  # warm-up
    per = collections.defaultdict(list)
    for track, rs in recipes.items():
        for r in rs[::every]:
            dt, _ = _cpu(r)
            per[track].append(dt)
    n = sum(len(v) for v in per.values())
    tot = sum(sum(v) for v in per.values())
    print(f"\ntier {tier_name} (every {every}th sequence): {n} sequences")
    for track, v in per.items():
        print(f"  {track:12s} n={len(v):5d}  mean {sum(v) / len(v):.4f}  max {max(v):.4f} CPU s/seq")
    # the tier's own mix: weight each track by its share of the tier
    counts = {t: len(rs) for t, rs in recipes.items()}
    weighted = sum(counts[t] * (sum(v) / len(v)) for t, v in per.items()) / sum(counts.values())
    print(f"  {'all':12s} n={n:5d}  mean {tot / n:.4f} CPU s/seq (sampled), {weighted:.4f} weighted by track size")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="seeds per typical recipe (default 5)")
    ap.add_argument("--tier", default=None, help="also time a tier's mix (smoke, small, medium, full or a YAML)")
    ap.add_argument("--every", type=int, default=1, help="with --tier: time every k-th sequence of each track")
    ap.add_argument("--profile", default=None, choices=sorted(CASES), help="cProfile one typical recipe")
    args = ap.parse_args(argv)
    if args.profile:
        generate_sequence(Recipe(seed=0, **CASES[args.profile]))
        prof = cProfile.Profile()
        prof.enable()
        for s in range(args.repeats):
            generate_sequence(Recipe(seed=1000 + s, **CASES[args.profile]))
        prof.disable()
        pstats.Stats(prof, stream=sys.stdout).sort_stats("cumulative").print_stats(30)
        return 0
    bench_cases(args.repeats)
    if args.tier:
        bench_tier(args.tier, max(args.every, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
