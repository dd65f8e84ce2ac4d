"""Many cameras and targets jointly: accuracy against the joint bound, covariance, certificate, runtime.

Prints the figures of docs/multi.md (run from the repository root, on one core for the runtime)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_multi.py [--scenes 120] [--quick]
        [--outliers 0.15] [--student-t 3]

1. **Accuracy** over ``--scenes`` random scenes (2-8 cameras, 2-16 targets, dense and sparse graphs, both
   set-ups, 4-15 pairs per edge, camera levels c1-c3, robot r1): per unknown the error of the joint fit
   (:func:`kinhec.calibrate.calibrate_multi`) and of every per-pair fit (``he_ml`` on one edge alone) divided
   by the expected median error of the joint Cramér-Rao bound (:func:`kinhec.evaluate.bounds.scene_bound`); the
   joint covariance's NEES per 6-dof unknown; how often the estimate is certified.
2. **Runtime**: 8 cameras x 16 targets x 3,000 pairs (dense), CPU time of ``calibrate_multi`` (median of
   repeats), with the certificate in closed form (default) and with the SDP forced (``certify="sdp"``).
3. **Tightness** of the relaxation (the SDP's bound against the best local solution, SCS) over rotation
   noise levels and graph shapes.
4. **A two-camera rig on one body** (the layout of seed 002: each camera's pose in the mocap world, a mocap
   body): the camera-to-camera transform per camera (composed) and jointly, its error and its sigma.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from kinhec.evaluate import bounds
from kinhec.geometry import se3
from kinhec.synth import scenes
from kinhec.calibrate import calibrate, calibrate_multi
from kinhec.solvers import certificate as ct
from kinhec.solvers.he_ml import he_ml

SEED = 2029


def right_log(T_est, T_true):
    return se3.se3_log(se3.invert_transform(T_true) @ T_est)


def accuracy(n_scenes: int, quick: bool, outliers: float = 0.0, student_t: float | None = None):
    rng = np.random.default_rng(SEED)
    jr, jt, pr, pt, nees, cert, cpu, per_scene = [], [], [], [], [], [], [], []
    for sid in range(n_scenes):
        kw = dict(n_cameras=int(rng.integers(2, 9)), n_targets=int(rng.integers(2, 17)),
                  graph=("dense", "sparse")[sid % 2], configuration=("eye_to_hand", "eye_in_hand")[(sid // 2) % 2],
                  pairs_per_edge=int(rng.integers(4, 16)), camera_noise=("c1", "c2", "c3")[sid % 3], robot_noise="r1",
                  outlier_fraction=outliers, student_t_dof=student_t)  # fmt: skip
        sc = scenes.draw_scene(SEED, sid, **kw)
        t0 = time.process_time()
        res = calibrate_multi(sc.pairs)
        cpu.append(time.process_time() - t0)
        b = bounds.scene_bound(sc)
        cert.append(res.certificate["certified"])
        fit = res.fit
        sj = []
        for kind, truth, est in (("X", sc.X, res.X), ("Y", sc.Y, res.Y)):
            for k in truth:
                e = right_log(est[k], truth[k])
                nees.append(float(e @ np.linalg.solve(fit.cov_of(kind, k), e)))
                er, et = se3.pose_error(est[k], truth[k])
                br, bt = b.median[f"{kind}:{k}"]
                jr.append(er / br)
                jt.append(et / bt)
                sj.append(et / bt)
        edges = list(sc.pairs)
        if quick:
            edges = [edges[i] for i in rng.permutation(len(edges))[:6]]
        for x, y in edges:
            A, B = sc.pairs[(x, y)]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = he_ml(A, B, configuration=sc.configuration, scale=False)
            for kind, k, est in (("X", x, r.X), ("Y", y, r.Y)):
                truth = sc.X[k] if kind == "X" else sc.Y[k]
                er, et = se3.pose_error(est, truth)
                br, bt = b.median[f"{kind}:{k}"]
                pr.append(er / br)
                pt.append(et / bt)
        per_scene.append((kw, sc.n_pairs, float(np.median(sj))))
    nees = np.array(nees)
    extra = (f", random-pose outliers on {outliers:.0%} of every edge's pairs" if outliers else "") + (
        f", Student-t camera noise ({student_t:g} degrees of freedom)" if student_t else "")
    print(f"## 1. Accuracy over {n_scenes} scenes ({len(jr)} unknowns, {len(pr)} per-pair estimates{extra})\n")
    print("| | rotation error / bound | translation error / bound |")
    print("|---|---|---|")
    print(f"| joint (calibrate_multi), median | {np.median(jr):.3f} | {np.median(jt):.3f} |")
    print(f"| per pair (he_ml on one edge), median | {np.median(pr):.3f} | {np.median(pt):.3f} |")
    print(f"\nNEES of the joint covariance per 6-dof unknown: mean {nees.mean():.2f}, median {np.median(nees):.2f} "
          f"(chi2(6): 6.00, 5.35); certified {sum(cert)} of {len(cert)}; CPU per scene median "
          f"{np.median(cpu):.3f} s, max {np.max(cpu):.3f} s\n")  # fmt: skip
    for g in ("dense", "sparse"):
        v = [m for kw, _, m in per_scene if kw["graph"] == g]
        print(f"- {g}: {len(v)} scenes, median of the per-scene median translation error / bound {np.median(v):.3f}")
    print()


def runtime(repeats: int):
    sc = scenes.draw_scene(SEED, 10_000, n_cameras=8, n_targets=16, n_pairs=3000, graph="dense")
    calibrate_multi(scenes.draw_scene(SEED, 10_001, n_cameras=2, n_targets=2).pairs)  # imports
    out = {}
    for certify in ("auto", "sdp"):
        t = []
        for _ in range(repeats):
            t0 = time.process_time()
            res = calibrate_multi(sc.pairs, certify=certify)
            t.append(time.process_time() - t0)
        out[certify] = (float(np.median(t)), res.certificate)
    print("## 2. Runtime: 8 cameras x 16 targets x 3,000 pairs (128 edges), one core\n")
    for certify, (t, c) in out.items():
        print(f"- certify={certify!r}: {t:.2f} s CPU (median of {repeats}); certificate {c['method']}, "
              f"SDP {c['sdp_dim']}x{c['sdp_dim']}, solver {c['solver_time_s']:.2f} s, certified {c['certified']}")
    print()


def tightness(per_cell: int):
    """The relaxation's tightness (SDP with the redundant constraints, SCS) and how often the local solution
    alone is certified in closed form, over rotation noise, pairs per edge and graph shape."""
    from kinhec.solvers.multi_axyb import _rotation_problem, graph_data

    cells = [("dense", 3, 4, 1), ("tree", 3, 4, 1), ("dense", 3, 4, 2), ("tree", 3, 4, 2), ("dense", 3, 4, 6),
             ("tree", 3, 4, 6), ("dense", 8, 16, 6)]  # fmt: skip
    print("## 3. Tightness of the relaxation (rotation problem, unit weights)\n")
    print("SDP tight / draws (in brackets: the local solution certified by the closed form alone)\n")
    print("| rotation noise per axis | " + " | ".join(f"{g} {K}x{M}, {p} pair{'s' if p > 1 else ''}/edge"
                                                   for g, K, M, p in cells) + " |")  # fmt: skip
    print("|---" * (len(cells) + 1) + "|")
    for deg in (1.0, 10.0, 30.0, 45.0, 60.0, 90.0):
        row = []
        for graph, K, M, ppe in cells:
            n = per_cell if K < 8 else max(2, per_cell // 4)
            tight = local = 0
            for k in range(n):
                sc = scenes.draw_scene(SEED + 1, k, n_cameras=K, n_targets=M, graph=graph, pairs_per_edge=ppe,
                                       min_pairs_per_edge=1, camera_noise=(math.radians(deg), 0.001, 0.003),
                                       robot_noise="r0")  # fmt: skip
                d = graph_data(sc.pairs, configuration=sc.configuration)
                prob = _rotation_problem(d, np.ones(d.n))
                local += bool(ct.global_rotations(prob, method="local")[1].tight)
                tight += bool(ct.global_rotations(prob, method="sdp")[1].tight)
            row.append(f"{tight}/{n} ({local})")
        print(f"| {deg:g} deg | " + " | ".join(row) + " |")
    print()


def _tum(path: Path, t, T) -> None:
    q = se3.quaternion_from_matrix(T[:, :3, :3])
    rows = np.column_stack([t, T[:, :3, 3], q[:, 1:], q[:, :1]])
    path.write_text("".join(" ".join(repr(v) for v in r) + "\n" for r in rows.tolist()))


def rig_folder(folder: Path, rng, n=150, body_noise=(0.001, 0.0005), cam_noise=(0.003, 0.002)):
    """Two cameras on one mocap body, laid out as seed 002: gt_poses/camNN_poses.txt (camera-to-world) + body.tum.

    The body walks a 3 x 3 m room (yaw anywhere, +-25 deg of roll and pitch); the cameras sit 0.2 m apart
    looking 40 deg apart; the published world is the mocap world shifted by (0.0039, -0.032, -0.033) m.
    Body poses carry mocap noise (``body_noise``: rad, m per axis, body frame), camera poses their own
    (``cam_noise``), drawn independently per frame.
    """
    t = np.arange(n) / 15.0
    yaw = rng.uniform(-math.pi, math.pi, n)
    tilt = rng.normal(0, math.radians(12), (n, 2))
    R = se3.so3_exp(np.c_[tilt, np.zeros(n)]) @ se3.so3_exp(np.c_[np.zeros((n, 2)), yaw])
    body = se3.transform_from_rotation_translation(R, np.c_[rng.uniform(-1.5, 1.5, (n, 2)), rng.normal(0.4, 0.05, n)])
    X = {"cam01": se3.transform_from_rotation_translation(se3.so3_exp([0.0, math.radians(-20), 0.0]) @ se3.so3_exp([-math.pi / 2, 0, 0]), [0.1, 0.1, 0.05]),
         "cam02": se3.transform_from_rotation_translation(se3.so3_exp([0.0, math.radians(20), 0.0]) @ se3.so3_exp([-math.pi / 2, 0, 0]), [0.1, -0.1, 0.05])}  # fmt: skip
    Y = se3.transform_from_rotation_translation(np.eye(3), [0.0039, -0.032, -0.033])
    (folder / "gt_poses").mkdir(parents=True)
    for name, Xk in X.items():
        world_T_cam = se3.invert_transform(Y) @ body @ Xk
        world_T_cam = world_T_cam @ se3.se3_exp(np.c_[rng.normal(0, cam_noise[0], (n, 3)), rng.normal(0, cam_noise[1], (n, 3))])
        _tum(folder / "gt_poses" / f"{name}_poses.txt", t, world_T_cam)
    body_meas = body @ se3.se3_exp(np.c_[rng.normal(0, body_noise[0], (n, 3)), rng.normal(0, body_noise[1], (n, 3))])
    _tum(folder / "body.tum", t, body_meas)
    return X


def rig(n_draws: int):
    print(f"## 4. Two-camera rig on one body (seed 002's layout), {n_draws} draws, 150 frames per camera\n")
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(n_draws):
            rng = np.random.default_rng([SEED, 4, k])
            folder = Path(tmp) / f"r{k}"
            X = rig_folder(folder, rng)
            Z = se3.invert_transform(X["cam01"]) @ X["cam02"]
            for world in ("per_camera", "auto"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = calibrate(folder / "body.tum", folder, setup="rig", offset="none", rig_world=world)
                Zh = res.rig.cam_T_cam["cam01_T_cam02"]
                s = res.rig.cam_T_cam_std["cam01_T_cam02"]
                z = np.concatenate([se3.so3_log(Zh[:3, :3].T @ Z[:3, :3]), Z[:3, 3] - Zh[:3, 3]])
                rows.setdefault(world, []).append((math.degrees(np.linalg.norm(z[:3])), 1000 * np.linalg.norm(z[3:]),
                                                   math.degrees(np.linalg.norm(s[:3])), 1000 * np.linalg.norm(s[3:]),
                                                   float(np.sum((z / s) ** 2)),
                                                   None if res.rig.joint is None else res.rig.joint["certificate"]["certified"]))  # fmt: skip
    print("| cam01_T_cam02 | rotation error [deg] | its sigma [deg] | translation error [mm] | its sigma [mm] | NEES (6) |")
    print("|---|---|---|---|---|---|")
    for world, label in (("per_camera", "per camera, composed"), ("auto", "jointly (one world)")):
        v = np.array([r[:5] for r in rows[world]])
        print(f"| {label} | {np.median(v[:, 0]):.4f} | {np.median(v[:, 2]):.4f} | {np.median(v[:, 1]):.3f} | "
              f"{np.median(v[:, 3]):.3f} | {np.mean(v[:, 4]):.2f} |")
    cert = [r[5] for r in rows["auto"]]
    print(f"\n(medians of the error norms and of the sigma norms; NEES mean; joint certified {sum(cert)} of {len(cert)})\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", type=int, default=120)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tight-per-cell", type=int, default=8)
    ap.add_argument("--rig-draws", type=int, default=40)
    ap.add_argument("--quick", action="store_true", help="Per-pair fits on six edges per scene only.")
    ap.add_argument("--only", choices=["accuracy", "runtime", "tightness", "rig"], default=None)
    ap.add_argument("--outliers", type=float, default=0.0, help="Accuracy: share of every edge's pairs replaced by "
                    "random-pose outliers (kinhec.models.noise.random_pose_outliers).")
    ap.add_argument("--student-t", type=float, default=None, help="Accuracy: Student-t camera noise with this many "
                    "degrees of freedom.")
    a = ap.parse_args()
    if a.only in (None, "accuracy"):
        accuracy(a.scenes, a.quick, a.outliers, a.student_t)
    if a.only in (None, "runtime"):
        runtime(a.repeats)
    if a.only in (None, "tightness"):
        tightness(a.tight_per_cell)
    if a.only in (None, "rig"):
        rig(a.rig_draws)


if __name__ == "__main__":
    main()
