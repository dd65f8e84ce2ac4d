"""Held-out pixels (and eye poses) of ``--corners`` calibrations over generated recordings: does ``coverage95_px`` hold?

    python benchmarks/held_out_pixels.py [--n 200] [--seed 0] [--refits 0]

Each recording is a ``pnp`` station sequence of the generator
(:func:`kinhec.synth.observations.observations_from_recipe`: the target's
corners projected with the true poses plus Gaussian pixel noise, the robot
poses as measured with a flange-twist error), drawn in turn eye-in-hand and
eye-to-hand, 12-25 stations, one of the generator's cameras and targets, pixel
noise 0.3-1 px, robot error none or 0.1-0.5 mrad / 0.05-0.3 mm, and
calibrated as a user would (:func:`kinhec.calibrate.corners.calibrate_corners`),
half with the intrinsics estimated from the views and half with the true ones
given (refined under their prior).  Printed: over the held-out views of every
recording, the share inside their 95 % regions (``coverage95_px``, pooled and
by cell), the held-out RMS over its prediction, the held-out warnings, and the
CPU time of the held-out step against the whole calibration.

``--refits K``: on the first ``K`` recordings, every view is also left out by
running :func:`kinhec.calibrate.bundle.refine_bundle` again without it
(noise levels re-estimated), and the first-order held-out RMS is compared with
the refits'.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kinhec.calibrate import held_out_pixels as hp
from kinhec.calibrate.corners import calibrate_corners
from kinhec.synth.observations import observations_from_recipe

CAMERAS = ("vga", "hd", "fhd")
TARGETS = ("checker_7x5_20mm", "checker_9x6_25mm", "marker_3x3_30mm", "grid_10x8_60mm")


def recipe(seed: int, i: int) -> tuple[dict, bool]:
    """The ``i``-th recording's recipe and whether its intrinsics are given."""
    rng = np.random.default_rng([seed, i])
    robot = rng.random() < 0.75
    r = dict(sequence_id=f"hp-{i}", seed=int(rng.integers(1 << 30)), robot="ur5e",
             configuration=("eye_in_hand", "eye_to_hand")[i % 2], family="lookat", sampling_mode="stations",
             n_stations=int(rng.integers(12, 26)), camera=CAMERAS[i % 3], target=TARGETS[(i // 2) % 4],
             camera_noise_model="pnp", pixel_std=float(rng.uniform(0.3, 1.0)),
             robot_noise_models=("se3_gaussian",) if robot else (),
             robot_rot_std_rad=float(rng.uniform(1e-4, 5e-4)) if robot else 0.0,
             robot_trans_std_m=float(rng.uniform(5e-5, 3e-4)) if robot else 0.0)  # fmt: skip
    return r, bool((i // 4) % 2)


def refit_rms(obs, res, k_given: bool, poses: bool = False):
    """Held-out RMS [px] by refitting the bundle without each view (the first-order figure's reference).

    ``poses``: also the held-out eye poses' RMS [mm, deg], the view's pose from its own corners by OpenCV's
    ``solvePnP`` (iterative, from the prediction) with the refit's intrinsics and board scale, against the chain's
    prediction: returns ``(px, mm, deg)``.
    """
    from kinhec.calibrate import scale as sc
    from kinhec.calibrate.bundle import DISTORTION_PRIOR, INTRINSICS_PRIOR, refine_bundle
    from kinhec.models.intrinsics import pack_views, project
    from kinhec.solvers.reprojection import chain_poses

    ki = np.asarray(res.inputs["intrinsics_refined"])
    inl = np.setdiff1d(np.arange(obs.n_views), res.outliers)
    sq, n, rho = 0.0, 0, []
    std = res.observability["robot_std_rad_m"]
    for v in inl:
        keep = inl[inl != v]
        views = pack_views([obs.points_3d[i] for i in keep], [obs.points_2d[i] for i in keep])
        if k_given:
            f, c = INTRINSICS_PRIOR["focal_rel"], INTRINSICS_PRIOR["principal_point_rel_f"]
            kw = dict(free_intrinsics=(0, 1, 2, 3), intrinsics_prior_std=np.array([f * ki[0], f * ki[1], c * ki[0],
                      c * ki[1]]), intrinsics_prior_mean=np.asarray(res.inputs["intrinsics"])[:4])  # fmt: skip
        else:
            kw = dict(free_intrinsics=tuple(range(9)), intrinsics_prior_std=np.concatenate([[np.inf] * 4,
                      DISTORTION_PRIOR]), intrinsics_prior_mean=np.concatenate([ki[:4], np.zeros(5)]))  # fmt: skip
        fit = refine_bundle(views, obs.T_base_ee[keep], res.X, res.Y, ki, obs.mode,
                            pixel_std=res.observability["pixel_std_px"], robot_std=(std[0], std[1]),
                            board_prior_std=sc.PRIOR_STD, **kw)  # fmt: skip
        C = chain_poses(obs.T_base_ee[v : v + 1], fit.X, fit.Y, obs.mode)
        C[:, :3, 3] /= fit.board_scale
        uv = project(fit.intrinsics, C, obs.points_3d[v][None])[0]  # the board as stated (generated: its true size)
        e = uv - obs.points_2d[v]
        sq += float(np.sum(e * e))
        n += e.shape[0]
        if poses:
            rho.append(_pnp_error(obs, v, fit))
    px = float(np.sqrt(sq / n)) if n else None
    if not poses:
        return px
    rho = np.asarray(rho)
    return (px, 1000.0 * float(np.sqrt(np.mean(np.sum(rho[:, 3:] ** 2, axis=1)))),
            float(np.degrees(np.sqrt(np.mean(np.sum(rho[:, :3] ** 2, axis=1))))))


def _pnp_error(obs, v: int, fit) -> np.ndarray:
    """``log(inv(C_pred) C_pnp)`` of view ``v`` under a refit without it [rad, m]."""
    import cv2

    from kinhec.geometry import se3
    from kinhec.solvers.reprojection import chain_poses

    C = chain_poses(obs.T_base_ee[v : v + 1], fit.X, fit.Y, obs.mode)[0]
    k = np.asarray(fit.intrinsics, dtype=np.float64)
    K = np.array([[k[0], 0.0, k[2]], [0.0, k[1], k[3]], [0.0, 0.0, 1.0]])
    rvec, _ = cv2.Rodrigues(C[:3, :3])
    ok, rvec, tvec = cv2.solvePnP(fit.board_scale * np.asarray(obs.points_3d[v], dtype=np.float64),
                                  np.asarray(obs.points_2d[v], dtype=np.float64), K, k[4:9], rvec.copy(),
                                  C[:3, 3].copy(), useExtrinsicGuess=True, flags=cv2.SOLVEPNP_ITERATIVE)  # fmt: skip
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = cv2.Rodrigues(rvec)[0], tvec.ravel()
    return se3.se3_log(se3.invert_transform(C) @ T)


def _by_cell(rows, cells):
    """``(name, rows)`` of every cell that holds a recording."""
    for name, sel in cells:
        rs = [r for r in rows if sel(r)]
        if rs:
            yield name, rs


def _spread(rs, key: str) -> str:
    """Median and 5-95 % range of ``key`` over the rows."""
    q = np.percentile([r[key] for r in rs], [50, 5, 95])
    return f"{q[0]:.3f} ({q[1]:.3f}-{q[2]:.3f})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--refits", type=int, default=0)
    a = ap.parse_args(argv)
    rows = []
    cpu_held, cpu_all = 0.0, 0.0
    orig = hp.leave_one_view_out
    spent, last = [], []

    def timed(system, maps=None):
        t0 = time.process_time()
        out = orig(system, maps)
        spent.append(time.process_time() - t0)
        last[:] = [out]
        return out

    hp.leave_one_view_out = timed
    for i in range(a.n):
        r, given = recipe(a.seed, i)
        obs, truth = observations_from_recipe(r)
        k = [truth["parameters"][n] for n in ("fx", "fy", "cx", "cy")] if given else None
        t0 = time.process_time()
        try:
            res = calibrate_corners(obs, intrinsics=k)
        except Exception as exc:  # noqa: BLE001 -- a recording the corners do not determine is counted, not fatal
            print(f"{i}: {type(exc).__name__}: {exc}")
            continue
        cpu_all += time.process_time() - t0
        cpu_held += spent[-1] if spent else 0.0
        h = res.held_out
        if not h:
            continue
        row = dict(i=i, setup=r["configuration"], given=given, robot=bool(r["robot_noise_models"]), n=h["n"],
                   inside=round(h["coverage95_px"] * h["n"]), ratio=h["rms_px"] / h["predicted_rms_px"],
                   warn=not h["consistent"], inside_pose=round(h["coverage95"] * h["n"]),
                   ratio_mm=h["rms_mm"] / h["predicted_rms_mm"], ratio_deg=h["rms_deg"] / h["predicted_rms_deg"])  # fmt: skip
        lo = last[0]  # the chi-square on the views' corners (computed, not reported: see the module)
        row["inside_d2"] = int(np.sum((lo["d2"] <= lo["q95"])[lo["ok"]]))
        if i < a.refits:
            px, mm, deg = refit_rms(obs, res, given, poses=True)
            row["refit"], row["refit_mm"], row["refit_deg"] = px / h["rms_px"], mm / h["rms_mm"], deg / h["rms_deg"]
        rows.append(row)
    cells = [("all", lambda r: True), ("eye-in-hand", lambda r: r["setup"] == "eye_in_hand"),
             ("eye-to-hand", lambda r: r["setup"] == "eye_to_hand"), ("intrinsics estimated", lambda r: not r["given"]),
             ("intrinsics given", lambda r: r["given"]), ("robot error", lambda r: r["robot"]),
             ("no robot error", lambda r: not r["robot"])]  # fmt: skip
    print(f"{len(rows)} / {a.n} recordings with a held-out assessment (seed {a.seed})")
    print("| cell | recordings | views inside their 95 % regions (`coverage95_px`) | the same by the chi-square on "
          "their corners | held-out RMS / predicted (median, 5-95 %) | warnings |")
    print("|---|---|---|---|---|---|")
    for name, rs in _by_cell(rows, cells):
        inside, n = sum(r["inside"] for r in rs), sum(r["n"] for r in rs)
        d2 = sum(r["inside_d2"] for r in rs)
        print(f"| {name} | {len(rs)} | {inside} / {n} = {100 * inside / n:.1f} % | {100 * d2 / n:.1f} % "
              f"| {_spread(rs, 'ratio')} | {sum(r['warn'] for r in rs)} / {len(rs)} |")
    print("\nThe same views as eye poses (`coverage95`, `rms_mm`, `rms_deg`):\n")
    print("| cell | views inside their 95 % regions (`coverage95`) | RMS / predicted, mm (median, 5-95 %) | "
          "RMS / predicted, deg (median, 5-95 %) |")
    print("|---|---|---|---|")
    for name, rs in _by_cell(rows, cells):
        inside, n = sum(r["inside_pose"] for r in rs), sum(r["n"] for r in rs)
        print(f"| {name} | {inside} / {n} = {100 * inside / n:.1f} % | {_spread(rs, 'ratio_mm')} "
              f"| {_spread(rs, 'ratio_deg')} |")
    for key, what in (("refit", "held-out RMS [px]"), ("refit_mm", "eye poses [mm]"), ("refit_deg", "eye poses [deg]")):
        ref = [r[key] for r in rows if key in r]
        if ref:
            print(f"refits over first order, {what}: median {np.median(ref):.4f}, range {min(ref):.4f}-{max(ref):.4f} "
                  f"({len(ref)} recordings)")
    print(f"CPU: held-out step {cpu_held:.1f} s of {cpu_all:.1f} s of calibration ({100 * cpu_held / max(cpu_all, 1e-9):.1f} %), "
          f"{1000 * cpu_held / max(len(rows), 1):.0f} ms per recording")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
