"""Do kinhec calibrate's error bars hold?  |e|^2 / trace(Sigma) and ellipsoid coverage over generated recordings.

Usage::

    python benchmarks/honest_sigma.py [--per-track 32] [--corners 100] [--seed 0] [--paths pose,corners]
                                      [--robot-accuracy none|stated|DEG,MM]

Recordings come from the ``small`` tier's tracks (a seeded sample of each
track's recipes, every track), calibrated as a user would: the pose path
writes the measured streams as TUM files with stamps (or, for a synchronous
sequence drawn so, as row-ordered 4x4 text without stamps) and runs
:func:`kinhec.calibrate.calibrate`; the ``--corners`` path writes the
generated pixels of a ``pnp`` re-run of the recipe (stations, one view per
robot pose) as an observation file and runs ``calibrate(corners=...)``.

Each recording is drawn in one of four variants (uniformly, seeded by its index):
``clean``; ``board`` (the printed board is ``1 + 0.005 z`` times its stated
size: eye translations divided by it); ``intrinsics`` (the intrinsics used to
get the camera poses, or given with ``--intrinsics`` on the corners path, are
off: focal length by ``0.3 %`` (1 sigma), principal point by ``1 px`` (1
sigma) per axis); ``both``.  On the corners path, ``clean`` and ``board`` let
kinhec estimate the intrinsics from the views, ``intrinsics`` and ``both``
give them, off.  A monocular (visual-odometry) recording has no board and no
metric scale: it is always ``clean``.  The rows ``dh_error`` and
``no dh_error`` split the recordings by whether the robot's kinematic model is
off (the ``robot_error`` track and part of ``mixed``): the part of such an
error that is constant in the flange frame is absorbed by ``X`` and seen by no
residual.  ``--robot-accuracy stated`` gives calibrate each recording's own
robot accuracy (:func:`kinhec.synth.generator.robot_accuracy`: the RMS rotation and distance of
the true flange poses from the nominal model's over the recording; zero
without a kinematic error), as a user who knows the robot's absolute accuracy
would; ``none`` (default) counts none; ``DEG,MM`` one level for all.

Per recording judged determined: the error ``e`` of ``X`` against the truth
in the parametrisation of the reported covariance (rotation: right
perturbation [rad]; translation: difference [m]), ``|e|^2 / trace(Sigma)``
per block (1 on average for honest error bars), the block NEES (chi-square
with 3 dof) and the joint NEES (6 dof).  The table gives, per path and
variant, the number of recordings (determined / all), the mean
``|e|^2 / trace`` of the rotation and translation blocks, and the share
inside the 95 % ellipsoid per block (3 dof) and jointly (6 dof).

Every draw is seeded (``--seed``, the recording's index); the run is
deterministic.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from kinhec.geometry import se3  # noqa: E402
from kinhec.util.errors import KinhecError  # noqa: E402
from kinhec.synth.tiers import expand_tier, load_tier  # noqa: E402
from kinhec.io.tracks import TRACKS  # noqa: E402

from support.camera_bias import apply_board_scale, intrinsics_bias  # noqa: E402

VARIANTS = ("clean", "board", "intrinsics", "both")
#: Board size error (1 sigma, relative).
BOARD_STD = 0.005
#: Focal length error (1 sigma, relative) and principal point error (1 sigma per axis) [px].
FOCAL_STD = 0.003
PP_STD_PX = 1.0


def right_error(T_est, T_true):
    """Error of ``T_est`` in the parametrisation of the reported covariance: right rotation, translation."""
    return np.concatenate([se3.so3_log(T_est[:3, :3].T @ T_true[:3, :3]), T_true[:3, 3] - T_est[:3, 3]])


def draws(seed: int, index: int, variant: str):
    """``(board_scale, f_scale, dc_px)`` of a recording."""
    rng = np.random.default_rng([seed, index])
    z = rng.standard_normal(4)
    k = 1.0 + BOARD_STD * z[0] if variant in ("board", "both") else 1.0
    if variant in ("intrinsics", "both"):
        return k, 1.0 + FOCAL_STD * z[1], PP_STD_PX * z[2:4]
    return k, 1.0, np.zeros(2)


def _write_tum(path, t, T):
    q = se3.quaternion_from_matrix(T[:, :3, :3])
    rows = np.column_stack([t, T[:, :3, 3], q[:, 1:], q[:, :1]])
    np.savetxt(path, rows, fmt="%.10f")


def _write_rows(path, T):
    np.savetxt(path, T.reshape(len(T), 16), fmt="%.12g")


def pose_recording(recipe: dict, folder: Path, seed: int, index: int, variant: str):
    """Write one recording's streams; return ``(calibrate kwargs, truth X, info)``."""
    from kinhec.synth.generator import robot_accuracy, simulate

    g = simulate(recipe)
    r = g.recipe
    T = g.T_cam_target_meas.copy()
    k, fs, dc = draws(seed, index, variant)
    metric = r.world_frame == "target"
    if not metric:
        k, fs, dc = 1.0, 1.0, np.zeros(2)
    if fs != 1.0 or np.any(dc):
        D = intrinsics_bias(r.camera, r.target, g.T_cam_target_gt, fs, dc)
        T = D @ T
    if k != 1.0:
        T = apply_board_scale(T, k)
    ok = np.isfinite(T).all(axis=(1, 2))
    rng = np.random.default_rng([seed, index, 1])
    unstamped = g.clocks.same_clock and rng.random() < 0.4
    hand, eye = folder / "hand.txt", folder / "eye.txt"
    if unstamped:
        _write_rows(hand, g.T_base_ee_meas[ok])
        _write_rows(eye, T[ok])
        kw = dict(fmt="rwhe")
    else:
        _write_tum(hand, g.t_robot_s, g.T_base_ee_meas)
        _write_tum(eye, g.t_camera_s[ok], T[ok])
        kw = dict(fmt="tum")
    kw.update(setup=r.configuration, eye_pose="cam_T_target", scale=not metric)
    return (hand, eye), kw, g.X, dict(stamped=not unstamped, board_scale=k, f_scale=fs, dc=dc.tolist(),
                                      accuracy=robot_accuracy(g))


def corners_recipe(recipe: dict, rng) -> dict | None:
    """The recipe as a ``pnp`` station sequence (one view per robot pose), or None when it cannot be one."""
    from kinhec.synth.recipe import Recipe

    d = dict(recipe)
    if d.get("world_frame") != "target":
        return None
    d.update(camera_noise_model="pnp", pixel_std=float(rng.choice([0.2, 0.5, 1.0])), sync="sync",
             sampling_mode="stations", outlier_fraction=0.0, outlier_model="none", student_t_dof=None,
             camera_rot_std_rad=0.0, camera_trans_std_m=0.0, camera_trans_std_z_m=0.0)  # fmt: skip
    if d["family"] == "joint_sinusoid":
        d["family"] = "joint_waypoints"
    d["n_stations"] = int(min(max(d.get("n_stations", 20), 12), 30))
    d["n_waypoints"] = int(min(max(d.get("n_waypoints", 10), 12), 30))
    try:
        return Recipe.from_dict(d).to_dict()
    except KinhecError:
        return None


def corners_recording(recipe: dict, folder: Path, seed: int, index: int, variant: str):
    """Write one recording's observation file; return ``(calibrate kwargs, truth X, info)`` or None."""
    from kinhec.synth.observations import ObservationSet, observations_from_recipe, write_observations

    obs, truth = observations_from_recipe(recipe)
    if obs.n_views < 6:
        return None
    k, fs, dc = draws(seed, index, variant)
    if k != 1.0:  # the file states a board 1/k of the true one
        obs = ObservationSet(obs.camera_id, obs.image_size, obs.mode, [p / k for p in obs.points_3d], obs.points_2d,
                             obs.T_base_ee)  # fmt: skip
    path = write_observations(folder / "obs.json", obs)
    kw = dict(corners=path)
    if variant in ("intrinsics", "both"):
        p = truth["parameters"]
        kw["intrinsics"] = [p["fx"] * fs, p["fy"] * fs, p["cx"] + dc[0], p["cy"] + dc[1]]
    from kinhec.synth.observations import transform_from_pose_json

    from kinhec.synth.generator import robot_accuracy, simulate

    return kw, transform_from_pose_json(truth["poses"]["X"]), dict(board_scale=k, f_scale=fs, dc=dc.tolist(),
                                                                   n_views=obs.n_views,
                                                                   accuracy=robot_accuracy(simulate(recipe)))


def evaluate(res, X_true) -> dict:
    e = right_error(res.X, X_true)
    C = res.cov[:6, :6]
    out = {"determined": bool(res.determined)}
    for name, s in (("rot", slice(0, 3)), ("trans", slice(3, 6))):
        Cb = C[s, s]
        out[f"ratio_{name}"] = float(e[s] @ e[s] / np.trace(Cb))
        out[f"nees_{name}"] = float(e[s] @ np.linalg.pinv(Cb) @ e[s])
    out["nees_6"] = float(e @ np.linalg.pinv(C) @ e)
    out["err_deg"] = float(np.degrees(np.linalg.norm(e[:3])))
    out["err_mm"] = float(1000 * np.linalg.norm(e[3:]))
    out["std_deg"] = float(np.degrees(np.sqrt(np.trace(C[:3, :3]))))
    out["std_mm"] = float(1000 * np.sqrt(np.trace(C[3:, 3:])))
    o = res.observability
    out["inflation"] = float(o.get("covariance_inflation") or 1.0)
    out["tau_X"] = float(max(o.get("autocorrelation_time_X") or [1.0]))
    out["lag1"] = float(o.get("residual_lag1_corr") or 0.0)
    return out


def variant_of(seed: int, index: int, recipe: dict) -> str:
    """The variant of a recording (``clean`` for a monocular one)."""
    if recipe.get("world_frame") != "target":
        return "clean"
    return VARIANTS[int(np.random.default_rng([seed, index, 2]).integers(len(VARIANTS)))]


def _accuracy(option, info):
    if option in (None, "none"):
        return None
    return info["accuracy"] if option == "stated" else option


def run(path: str, items, seed: int, log, intrinsics_std=None, robot_accuracy=None) -> list[dict]:
    from kinhec.calibrate import calibrate

    rows = []
    for index, (track, recipe) in items:
        variant = variant_of(seed, index, recipe)
        row = dict(path=path, track=track, sequence=recipe["sequence_id"], variant=variant,
                   dh_error="dh_error" in (recipe.get("robot_noise_models") or ()))  # fmt: skip
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            t0 = time.process_time()
            try:
                if path == "pose":
                    files, kw, X_true, info = pose_recording(recipe, folder, seed, index, variant)
                    if intrinsics_std is not None:
                        kw["intrinsics_std"] = intrinsics_std
                    kw["robot_accuracy"] = _accuracy(robot_accuracy, info)
                    call = lambda: calibrate(*files, **kw)  # noqa: E731
                else:
                    made = corners_recording(recipe, folder, seed, index, variant)
                    if made is None:
                        continue
                    kw, X_true, info = made
                    kw["robot_accuracy"] = _accuracy(robot_accuracy, info)
                    call = lambda: calibrate(**kw)  # noqa: E731
                row.update(info)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = call()
                row.update(evaluate(res, X_true))
            except KinhecError as exc:
                row.update(determined=False, refused=str(exc)[:120])
            row["cpu_s"] = time.process_time() - t0
        rows.append(row)
        log(row)
    return rows


def summary(rows: list[dict]) -> list[dict]:
    q3, q6 = stats.chi2.ppf(0.95, 3), stats.chi2.ppf(0.95, 6)
    out = []
    groups = {}
    for r in rows:
        groups.setdefault((r["path"], r["variant"]), []).append(r)
        groups.setdefault((r["path"], "dh_error" if r.get("dh_error") else "no dh_error"), []).append(r)
        groups.setdefault((r["path"], "all"), []).append(r)
    order = VARIANTS + ("no dh_error", "dh_error", "all")
    for (path, variant), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], order.index(kv[0][1]))):
        det = [r for r in rs if r.get("determined") and "ratio_rot" in r]
        if not det:
            continue
        a = {k: np.array([r[k] for r in det]) for k in ("ratio_rot", "ratio_trans", "nees_rot", "nees_trans", "nees_6")}
        out.append(dict(path=path, variant=variant, n=len(rs), determined=len(det),
                        ratio_rot=float(a["ratio_rot"].mean()), ratio_trans=float(a["ratio_trans"].mean()),
                        median_ratio_rot=float(np.median(a["ratio_rot"])),
                        median_ratio_trans=float(np.median(a["ratio_trans"])),
                        cover_rot=float(np.mean(a["nees_rot"] <= q3)), cover_trans=float(np.mean(a["nees_trans"] <= q3)),
                        cover_6=float(np.mean(a["nees_6"] <= q6)), max_nees_6=float(a["nees_6"].max())))  # fmt: skip
    return out


def print_table(summ: list[dict]) -> None:
    print("| path | variant | determined / all | mean |e|^2/tr rot | trans | median rot | trans | "
          "95 % cover rot (3 dof) | trans (3 dof) | joint (6 dof) | max NEES |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for s in summ:
        print(f"| {s['path']} | {s['variant']} | {s['determined']} / {s['n']} | {s['ratio_rot']:.2f} | "
              f"{s['ratio_trans']:.2f} | {s['median_ratio_rot']:.2f} | {s['median_ratio_trans']:.2f} | "
              f"{100 * s['cover_rot']:.0f} % | {100 * s['cover_trans']:.0f} % | {100 * s['cover_6']:.0f} % | "
              f"{s['max_nees_6']:.3g} |")


def items_for(path: str, per_track: int, n_corners: int, seed: int):
    tier = load_tier("small")
    recipes = expand_tier(tier)
    rng = np.random.default_rng(seed)
    out = []
    if path == "pose":
        for track in TRACKS:
            rs = recipes[track]
            pick = np.sort(rng.choice(len(rs), size=min(per_track, len(rs)), replace=False))
            out += [(track, rs[i]) for i in pick]
    else:
        pool = [(track, r) for track in TRACKS for r in recipes[track]]
        order = rng.permutation(len(pool))
        for i in order:
            if len(out) >= n_corners:
                break
            track, r = pool[i]
            cr = corners_recipe(r, rng)
            if cr is not None:
                out.append((track, cr))
    return list(enumerate(out))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-track", type=int, default=32, help="pose path: recordings per track")
    ap.add_argument("--corners", type=int, default=100, help="corners path: recordings")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--paths", default="pose,corners")
    ap.add_argument("--json", type=Path, help="write every row here")
    ap.add_argument("--intrinsics-std", default=None, metavar="FOCAL,PP",
                    help="pose path: the intrinsics uncertainty kinhec assumes (default its own; 0,0 assumes exact)")
    ap.add_argument("--robot-accuracy", default="none", metavar="none|stated|DEG,MM",
                    help="the robot accuracy given to calibrate: none, each recording's own, or one level")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every recording")
    args = ap.parse_args(argv)
    acc = args.robot_accuracy if args.robot_accuracy in ("none", "stated") else [
        float(v) for v in args.robot_accuracy.split(",")]
    rows = []

    def log(row):
        if args.verbose:
            keys = ("path", "track", "sequence", "variant", "determined", "err_deg", "err_mm", "std_deg", "std_mm",
                    "ratio_rot", "ratio_trans", "cpu_s", "refused")
            print(" ".join(f"{k}={row[k]:.4g}" if isinstance(row.get(k), float) else f"{k}={row.get(k)}"
                           for k in keys if k in row), flush=True)  # fmt: skip

    for path in args.paths.split(","):
        items = items_for(path, args.per_track, args.corners, args.seed)
        rows += run(path, items, args.seed, log, args.intrinsics_std if path == "pose" else None, acc)
    summ = summary(rows)
    print_table(summ)
    cpu = sum(r["cpu_s"] for r in rows)
    print(f"\n{len(rows)} recordings, {cpu:.0f} s CPU")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "summary": summ}, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
