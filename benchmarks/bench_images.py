"""What detection costs: hand-eye from rendered images against the same calibration on the exact corners.

Usage::

    nice python benchmarks/bench_images.py [--out DIR] [--stations 15] [--camera hd] [--quick]
    python benchmarks/bench_images.py --cost [bench_detect.py's options]

A set of synchronous pnp sequences (both setups, every target kind, two
levels of blur and noise, two robots: 24 sequences; ``--quick``: the first
robot only) is generated from recipes with seeds from one global seed and
the sequence ids, rendered (:func:`kinhec.vision.render.render_sequence`) and
calibrated three ways, all with the true intrinsics given and the same
solver (``kinhec calibrate --corners``' he_ml on the pixels):

* ``images``: the target detected in the rendered images (``--images``);
* ``exact``: the exact projected corners of the same views (noise-free; the
  robot's pose noise is then the only error);
* ``exact+noise``: the exact corners plus Gaussian noise of the standard
  deviation the detector's corners actually have on that sequence (measured
  against the exact ones), seeded from the sequence.

It prints per sequence the views used, the error of the corners the calibration used,
the X errors (rotation [deg], translation [mm]) of the three, and the medians
over the set with the ratios ``images / exact`` and ``images / exact+noise``.
The rendered folders are kept in ``--out`` (resumed when run again).

``--cost`` prints what ``calibrate --images`` costs on the RWHE-Calib kuka_1
images instead (CPU and wall of detection and calibration with 1 and more
workers, the fast path's corners, a wrong board size refused):
``benchmarks/bench_detect.py``, which it runs.
"""

from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from kinhec.geometry import se3  # noqa: E402
from kinhec.calibrate import calibrate  # noqa: E402
from kinhec.calibrate.images import write_corners  # noqa: E402
from kinhec.synth.observations import ObservationSet, read_observations  # noqa: E402
from kinhec.synth.tiers import sequence_seed  # noqa: E402
from kinhec.vision.render import RenderSettings, render_sequence  # noqa: E402

GLOBAL_SEED = 2028
#: (setup, target preset, printed target or None for the preset's own)
CASES = [
    ("eye_in_hand", "checker_9x6_25mm", None),
    ("eye_in_hand", "grid_10x8_60mm", None),
    ("eye_in_hand", "grid_10x8_60mm", "aprilgrid:5x4:0.08:0.3"),
    ("eye_to_hand", "marker_3x3_30mm", "chessboard:5x4:0.016"),
    ("eye_to_hand", "marker_3x3_30mm", "charuco:4x4:0.04:0.03:DICT_4X4_50"),
    ("eye_to_hand", "marker_2x2_40mm", "aprilgrid:2x2:0.04:0.3"),
]
LEVELS = {
    "mild": RenderSettings(blur_px=0.6, noise_dn=1.5, lighting=0.3),
    "strong": RenderSettings(blur_px=1.2, noise_dn=4.0, lighting=0.5, motion_blur_px=1.5),
}
ROBOTS = ("ur5e", "panda")


def recipe(sid: str, robot: str, setup: str, preset: str, camera: str, stations: int) -> dict:
    return dict(sequence_id=sid, seed=sequence_seed(GLOBAL_SEED, sid), robot=robot, configuration=setup,
                family="lookat", sampling_mode="stations", n_stations=stations, camera=camera, target=preset,
                camera_noise_model="pnp", pixel_std=0.25, robot_noise_models=("se3_gaussian",),
                robot_rot_std_rad=2e-4, robot_trans_std_m=1e-4)  # fmt: skip


def corner_errors(saved: Path, exact_path: Path) -> np.ndarray:
    """Distances [px] of the corners a calibration used (its ``--save-corners`` file) from the exact ones."""
    exact = {v["meta"]["image"]: v["obs"] for v in json.loads(exact_path.read_text())["input"]["views"]}
    out = []
    for v in json.loads(saved.read_text())["input"]["views"]:
        ref = exact.get(v["meta"]["image"])
        if ref is None:
            continue
        key = {tuple(np.round(p, 9)): uv for p, uv in zip(ref["points_3d"], np.array(ref["points_2d"]))}
        for p, uv in zip(v["obs"]["points_3d"], np.array(v["obs"]["points_2d"])):
            k = tuple(np.round(p, 9))
            if k in key:
                out.append(np.linalg.norm(uv - key[k]))
    return np.array(out)


def run_one(out: Path, sid: str, rec: dict, target, settings: RenderSettings) -> dict:
    t0 = time.process_time()
    r = render_sequence(rec, out / sid, target=target, settings=settings)
    t_render = time.process_time() - t0
    truth = json.loads(r.truth.read_text())
    k = [truth["intrinsics"][n] for n in ("fx", "fy", "cx", "cy", "k1", "k2", "p1", "p2", "k3")]
    X = np.array(truth["X"])
    row = {"id": sid, "setup": rec["configuration"], "target": r.target.spec, "n_images": len(r.images),
           "render_cpu_s": t_render}  # fmt: skip
    t0 = time.process_time()
    saved = out / sid / "detected_corners.json"
    saved.unlink(missing_ok=True)
    try:
        res = calibrate(hand=r.hand, images=r.out / "images", target=r.target, setup=rec["configuration"], intrinsics=k,
                        save_corners=saved)  # fmt: skip
        row["images"] = se3.pose_error(res.X, X)
        row["n_used"] = res.n_pairs
    except Exception as exc:  # noqa: BLE001 - a failed calibration is a result here
        row["images"], row["n_used"], row["error"] = (np.nan, np.nan), 0, str(exc)[:120]
    row["detect_calib_cpu_s"] = time.process_time() - t0
    exact = read_observations(r.exact)
    row["exact"] = se3.pose_error(calibrate(corners=r.exact, intrinsics=k).X, X)
    err = corner_errors(saved, r.exact) if saved.exists() else np.array([])
    row["corner_rms_px"] = float(np.sqrt(np.mean(err**2))) if err.size else np.nan
    sigma = row["corner_rms_px"] / np.sqrt(2.0) if err.size else 0.1  # per axis
    rng = np.random.default_rng([rec["seed"], 7])
    noisy = ObservationSet(exact.camera_id, exact.image_size, exact.mode, exact.points_3d,
                           [p + sigma * rng.standard_normal(p.shape) for p in exact.points_2d], exact.T_base_ee)  # fmt: skip
    path = write_corners(out / sid / "exact_noisy.json", noisy, [f"view{i}" for i in range(exact.n_views)])
    row["exact+noise"] = se3.pose_error(calibrate(corners=path, intrinsics=k).X, X)
    row["n_exact"] = exact.n_views
    return row


def summarise(rows: list) -> None:
    """Medians over the sequences and the ratios of the images' X errors to the references'."""
    ei, ee, en = (np.array([r[k] for r in rows]) for k in ("images", "exact", "exact+noise"))
    for name, e in (("images", ei), ("exact", ee), ("exact+noise", en)):
        print(f"median X error {name:12s}: {np.median(e[:, 0]):.4f} deg, {np.median(e[:, 1]):.3f} mm")
    for label, ref in (("exact", ee), ("exact+noise", en)):
        print(f"images / {label:12s}: ratio of medians {np.median(ei[:, 0]) / np.median(ref[:, 0]):.2f} (rot), "
              f"{np.median(ei[:, 1]) / np.median(ref[:, 1]):.2f} (trans); median of ratios "
              f"{np.median(ei[:, 0] / ref[:, 0]):.2f} (rot), {np.median(ei[:, 1] / ref[:, 1]):.2f} (trans)")
    for setup in ("eye_in_hand", "eye_to_hand"):
        sel = [r for r in rows if r["setup"] == setup]
        a_, b_, c_ = (np.array([r[k] for r in sel]) for k in ("images", "exact", "exact+noise"))
        print(f"{setup} ({len(sel)}): images / exact ratio of medians {np.median(a_[:, 0]) / np.median(b_[:, 0]):.2f} "
              f"(rot), {np.median(a_[:, 1]) / np.median(b_[:, 1]):.2f} (trans); images / exact+noise "
              f"{np.median(a_[:, 0]) / np.median(c_[:, 0]):.2f} (rot), {np.median(a_[:, 1]) / np.median(c_[:, 1]):.2f} "
              f"(trans); corner error median {np.median([r['corner_rms_px'] for r in sel]):.3f} px")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--cost" in argv:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import bench_detect

        return bench_detect.main([v for v in argv if v != "--cost"])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None, help="Folder of the rendered sequences (default: a temporary one).")
    ap.add_argument("--stations", type=int, default=15)
    ap.add_argument("--camera", default="hd")
    ap.add_argument("--quick", action="store_true", help="One robot only (12 sequences).")
    a = ap.parse_args(argv)
    out = a.out or Path(tempfile.mkdtemp(prefix="kinhec_bench_images_"))
    rows = []
    robots = ROBOTS[:1] if a.quick else ROBOTS
    n = 0
    for robot in robots:
        for level, settings in LEVELS.items():
            for setup, preset, target in CASES:
                sid = f"pnp-{n:06d}"
                n += 1
                rec = recipe(sid, robot, setup, preset, a.camera, a.stations)
                row = run_one(out, sid, rec, target, settings)
                row["level"], row["robot"] = level, robot
                rows.append(row)
                f = lambda e: f"{e[0]:7.4f} deg {e[1]:7.3f} mm"  # noqa: E731
                print(f"{sid} {robot:5s} {setup:11s} {level:6s} {row['target']:38s} used {row['n_used']:>2}/"
                      f"{row['n_images']} (exact {row['n_exact']:>2}) corners {row['corner_rms_px']:.3f} px | "
                      f"images {f(row['images'])} | exact {f(row['exact'])} | exact+noise {f(row['exact+noise'])}"
                      f" | cpu render {row['render_cpu_s']:.1f} s, detect+calibrate {row['detect_calib_cpu_s']:.1f} s"
                      + (f" | {row['error']}" if "error" in row else ""), flush=True)  # fmt: skip
    failed = [r["id"] for r in rows if "error" in r]
    print(f"\n{len(rows)} sequences in {out}; {len(rows) - len(failed)} calibrated from the images"
          + (f", failed: {', '.join(failed)} (left out of the medians below)" if failed else ""))
    (out / "results.json").write_text(json.dumps(rows, indent=1, default=float))
    summarise([r for r in rows if "error" not in r])
    return 0


if __name__ == "__main__":
    sys.exit(main())
