"""Fisheye corners through ``calibrate --corners``: X's error against the Cramér-Rao bound and against a pinhole.

    python benchmarks/fisheye_corners.py [--n 10] [--seed 0] [--images 0] [--lenses fisheye_120,fisheye_180] [--setups ...]

For each fisheye lens of :data:`kinhec.synth.observations.FISHEYE_LENSES` (a 120 deg and a 180 deg lens on a
1280 x 1024 sensor) and each setup, ``--n`` generated ``pnp`` station recordings (12-20 stations of a UR5e, the
``vga`` camera's scenes, eye-in-hand a 10 x 8 grid of 60 mm, eye-to-hand a 9 x 6 chessboard of 25 mm, robot
flange error 0.1-0.3 mrad / 0.05-0.15 mm) are seen through the lens, mounted turned so that the target lies off
the axis (:func:`kinhec.synth.observations.fisheye_observations_from_recipe`, ``tilt_deg``: 20 deg for the 120 deg
lens, 50 deg for the 180 deg lens), with Gaussian pixel noise at the detector's level
(:data:`~kinhec.synth.observations.DETECTOR_STD_PX`), and calibrated as a user would with the intrinsics
estimated (:func:`kinhec.calibrate.corners.calibrate_corners`, the model stated by the observations).  The same
recordings seen by the scenes' own pinhole camera, with the same pixel noise, are calibrated beside them.

Printed per lens and setup: the RMS error of ``X`` (rotation [deg], translation [mm]) and the Cramér-Rao bound's
RMS at the truth (the Fisher information of every corner, the intrinsics, ``X``, ``Y``, the board scale and every
view's flange twist under the same priors as the bundle; the twists and the rest marginalised), their ratio, the
NEES of ``X`` (``e^T cov^-1 e`` with the reported 6 x 6 covariance: 6 on average when the error bars are right;
also with the bound's covariance), the RMS of the intrinsics' errors over their reported sigma, and the pinhole's
figures on the same recordings.

``--images K``: for each lens and setup, ``K`` recordings with a 9 x 6 chessboard of 25 mm (``--board``: another
chessboard in its place) are also drawn through the lens (:func:`kinhec.vision.render.render_view` with the lens's
intrinsics: blur 0.8 px, sensor noise 2 grey levels), written as PNGs with their hand file, and calibrated as a user
would, ``kinhec calibrate --images DIR --hand FILE --target SPEC --lens fisheye`` (``--lens rational`` for a
rational lens; :func:`kinhec.calibrate.images.calibrate_images`): the chessboard detected in every image, each view
numbered to agree with the hand's motion, the lens's intrinsics estimated; beside it the same views' exact corners
(those the run kept, as its ``--save-corners`` file numbers them) with Gaussian noise of
:data:`~kinhec.synth.observations.DETECTOR_STD_PX`, calibrated through the corner path with the same model
estimated.  Printed: the detected corners' RMS error against the exact ones, and the RMS error of ``X`` from the
images over that from the noisy exact corners.

``--lenses`` (comma-separated, of :data:`TILTS`: ``fisheye_120``, ``fisheye_180``, and ``rational_120``, the lens of
``benchmarks/rational_corners.py``) and ``--setups`` choose the cells.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kinhec.calibrate import scale as sc
from kinhec.calibrate.bundle import DISTORTION_PRIORS
from kinhec.calibrate.corners import calibrate_corners
from kinhec.geometry import se3
from kinhec.models.intrinsics import model_of, pack_views, project
from kinhec.solvers.reprojection import chain_poses
from kinhec.synth.observations import (
    DETECTOR_STD_PX,
    fisheye_observations_from_recipe,
    observations_from_recipe,
    transform_from_pose_json,
)

#: The lenses and the angle [deg] each is turned off the target; ``rational_120`` only with ``--lenses``.
TILTS = {"fisheye_120": 20.0, "fisheye_180": 50.0, "rational_120": 20.0}
LENSES = (("fisheye_120", 20.0), ("fisheye_180", 50.0))
SETUPS = (("eye_in_hand", "grid_10x8_60mm"), ("eye_to_hand", "checker_9x6_25mm"))


def recipe(seed: int, setup: str, target: str, i: int) -> dict:
    rng = np.random.default_rng([seed, i, ("eye_in_hand", "eye_to_hand").index(setup)])
    return dict(sequence_id=f"fe-{setup}-{i}", seed=int(rng.integers(1 << 30)), robot="ur5e", configuration=setup,
                family="lookat", sampling_mode="stations", n_stations=int(rng.integers(12, 21)), camera="vga",
                target=target, camera_noise_model="pnp", pixel_std=DETECTOR_STD_PX,
                robot_noise_models=("se3_gaussian",), robot_rot_std_rad=float(rng.uniform(1e-4, 3e-4)),
                robot_trans_std_m=float(rng.uniform(5e-5, 1.5e-4)))  # fmt: skip


def _x_error(X_est, X_true) -> np.ndarray:
    """Right rotation perturbation [rad] and translation difference in the parent frame [m], as calibrate's cov."""
    d = se3.invert_transform(X_true) @ X_est
    return np.concatenate([se3.so3_log(d[:3, :3]), X_est[:3, 3] - X_true[:3, 3]])


def crb_x(obs, k_true, X, Y, pixel_std: float, robot_std) -> np.ndarray:
    """The Cramér-Rao bound (6, 6) of ``X`` at the truth: ``X``'s block of the inverse Fisher information of the
    bundle's model (every intrinsic free under the bundle's distortion prior, ``log b`` under its prior, every
    view's flange twist under the robot's error), linearised at the measured flange poses."""
    views = pack_views(obs.points_3d, obs.points_2d)
    A = obs.T_base_ee
    N, nk = A.shape[0], k_true.size
    dprior = DISTORTION_PRIORS[model_of(k_true)]
    sig = np.array([robot_std[0]] * 3 + [robot_std[1]] * 3)

    def pixels(t):
        k = k_true + t[:nk]
        Xp = X @ se3.se3_exp_unchecked(t[nk : nk + 6])
        Yp = Y @ se3.se3_exp_unchecked(t[nk + 6 : nk + 12])
        xi = t[nk + 13 :].reshape(N, 6)
        C = chain_poses(A @ se3.se3_exp_unchecked(xi), Xp, Yp, obs.mode)
        C[:, :3, 3] /= np.exp(t[nk + 12])
        return project(k, C, views.points_3d)[views.mask].ravel() / pixel_std

    n = nk + 13 + 6 * N
    h = np.full(n, 1e-6)
    h[:4] = 1e-4
    J = np.empty((2 * int(views.mask.sum()), n))
    for j in range(n):  # central differences
        e = np.zeros(n)
        e[j] = h[j]
        J[:, j] = (pixels(e) - pixels(-e)) / (2 * h[j])
    F = J.T @ J
    prior = np.zeros(n)
    prior[4:nk] = 1.0 / dprior**2
    prior[nk + 12] = 1.0 / sc.PRIOR_STD**2
    prior[nk + 13 :] = np.tile(1.0 / sig**2, N)
    F += np.diag(prior)
    cov = np.linalg.inv(F)[nk : nk + 6, nk : nk + 6]
    T = np.eye(6)
    T[3:, 3:] = X[:3, :3]  # translation perturbation into the parent frame
    return T @ cov @ T.T


def one(obs, k_true, X_true, Y_true, r) -> dict:
    t = time.process_time()
    res = calibrate_corners(obs)
    cpu = time.process_time() - t
    e = _x_error(res.X, X_true)
    cov = res.cov[:6, :6]
    crb = crb_x(obs, k_true, X_true, Y_true, DETECTOR_STD_PX, (r["robot_rot_std_rad"], r["robot_trans_std_m"]))
    k = np.asarray(res.inputs["intrinsics_refined"])
    k_std = np.array(list(res.observability["intrinsics_std"].values()))
    return {"e": e, "nees": float(e @ np.linalg.solve(cov, e)), "nees_crb": float(e @ np.linalg.solve(crb, e)),
            "crb_rot": float(np.trace(crb[:3, :3])), "crb_trans": float(np.trace(crb[3:, 3:])),
            "z_k": (k - k_true) / k_std, "cpu": cpu, "n_out": len(res.outliers)}  # fmt: skip


def _summary(rows) -> tuple:
    e = np.array([r["e"] for r in rows])
    rot = np.degrees(np.sqrt(np.mean(np.sum(e[:, :3] ** 2, axis=1))))
    tr = 1e3 * np.sqrt(np.mean(np.sum(e[:, 3:] ** 2, axis=1)))
    crot = np.degrees(np.sqrt(np.mean([r["crb_rot"] for r in rows])))
    ctr = 1e3 * np.sqrt(np.mean([r["crb_trans"] for r in rows]))
    return rot, tr, crot, ctr


def _write_recording(folder, images_, T_base_ee) -> tuple:
    """The images as PNGs and the hand file (a row-major 4x4 per line [m]) that ``calibrate --images`` reads."""
    import cv2

    from pathlib import Path

    folder = Path(folder)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    for j, img in enumerate(images_):
        cv2.imwrite(str(folder / "images" / f"{j:04d}.png"), img)
    hand = folder / "hand_poses.txt"
    hand.write_text("".join(" ".join(f"{v:.12g}" for v in T.ravel()) + "\n" for T in T_base_ee))
    return folder / "images", hand


def images(seed: int, lens: str, tilt: float, setup: str, n: int, board: str | None = None) -> None:
    """The ``--images`` part for one lens and setup (see the module doc); ``board`` another chessboard drawn where
    the recordings' 9 x 6 chessboard of 25 mm is (its spec, as ``calibrate --images`` takes it)."""
    import tempfile

    from kinhec.calibrate.images import LENSES as LENS_NAMES
    from kinhec.calibrate.images import calibrate_images
    from kinhec.synth.generator import as_recipe, simulate
    from kinhec.synth.observations import FISHEYE_LENSES, RATIONAL_LENSES, ObservationSet, read_observations
    from kinhec.util.errors import KinhecError
    from kinhec.vision.render import RenderSettings, render_view
    from kinhec.vision.targets import parse_target, target_for_preset

    L = {**FISHEYE_LENSES, **RATIONAL_LENSES}[lens]
    k = np.asarray(L.intrinsics, dtype=np.float64)
    model = model_of(k)
    lens_opt = {v: n for n, v in LENS_NAMES.items()}[model]
    t = target_for_preset("checker_9x6_25mm") if board is None else parse_target(board)
    a = np.radians(tilt)
    M = np.eye(4)
    M[1:3, 1:3] = [[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]
    err_img, err_ex, det_rms, n_views, n_found, n_flipped, n_false, cpu_render, cpu_cal = [], [], [], 0, 0, 0, 0, 0.0, 0.0
    failed, n_drawn = [], 0
    for i in range(n):
        r = recipe(seed, setup, "checker_9x6_25mm", 100 + i)
        g = simulate(as_recipe(r))
        T_ct = M @ g.T_cam_target_gt @ t.T_centred_target
        if setup == "eye_in_hand":
            X = g.X @ np.linalg.inv(M)
        else:
            X = g.X @ t.T_centred_target
        c0 = time.process_time()
        imgs = [render_view(t, k, L.image_size, T_ct[j], np.random.default_rng([r["seed"], j]),
                            RenderSettings(blur_px=0.8, noise_dn=2.0)) for j in range(T_ct.shape[0])]  # fmt: skip
        cpu_render += time.process_time() - c0
        n_drawn += len(imgs)
        with tempfile.TemporaryDirectory(prefix="kinhec-lens-") as tmp:
            folder, hand = _write_recording(tmp, imgs, g.T_base_ee_meas)
            c0 = time.process_time()
            try:  # as a user would: kinhec calibrate --images DIR --hand FILE --target SPEC --lens LENS
                res = calibrate_images(folder, hand, t.spec, setup=setup, lens=lens_opt, workers=1,
                                       save_corners=f"{tmp}/corners.json")  # fmt: skip
            except KinhecError as exc:
                failed.append(f"recording {i} ({len(imgs)} images): {exc}")
                continue
            finally:
                cpu_cal += time.process_time() - c0
            obs = read_observations(f"{tmp}/corners.json")
        used = [int(u["image"].split(".")[0]) for u in res.inputs["images"]["used"]]
        n_views += len(imgs)  # the images of the recordings calibrated
        n_found += len(used)
        exact = [project(k, T_ct[j][None], p)[0] for j, p in zip(used, obs.points_3d)]
        # the detector's accuracy: against the exact corners of the numbering nearer the truth (a recording numbered
        # from the other end throughout is the same camera; X eye-in-hand does not see it)
        for d, e in zip(obs.points_2d, exact):
            flip = np.sum((d[::-1] - e) ** 2) < np.sum((d - e) ** 2)
            diff = d[::-1] - e if flip else d - e
            if np.abs(diff).max() > 5.0:  # a false detection (e.g. a board cut by the image's edge): counted apart
                n_false += 1
                continue
            n_flipped += int(flip)
            det_rms.extend(diff.ravel())
        rng = np.random.default_rng([r["seed"], 0xE])
        noisy = [e + DETECTOR_STD_PX * rng.standard_normal(e.shape) for e in exact]
        obs_ex = ObservationSet("cam0", obs.image_size, setup, obs.points_3d, noisy, obs.T_base_ee,
                                distortion_model=model)  # fmt: skip
        err_img.append(_x_error(res.X, X))
        err_ex.append(_x_error(calibrate_corners(obs_ex).X, X))
    ei, ee = np.array(err_img).reshape(-1, 6), np.array(err_ex).reshape(-1, 6)
    rms = [(np.degrees(np.sqrt(np.mean(np.sum(e[:, :3] ** 2, axis=1)))), 1e3 * np.sqrt(np.mean(np.sum(e[:, 3:] ** 2,
                                                                                                   axis=1))))
           for e in (ei, ee)]  # fmt: skip
    for f in failed:
        print(f"  left out: {f}")
    print(f"  images of {t.spec} through calibrate --images --lens {lens_opt} ({len(ei)} recordings, chessboard found "
          f"and kept in {n_found} of {n_views} images; CPU {cpu_render / max(n_drawn, 1):.2f} s per image to draw, "
          f"{cpu_cal / max(n, 1):.1f} s per recording to detect and calibrate): detected corners "
          f"{np.sqrt(np.mean(np.square(det_rms))):.4f} px RMS from the exact ones ({n_flipped} views numbered from "
          f"the board's other end than the truth, {n_false} false detections more than 5 px off left out of that "
          "figure); X error from the images "
          f"{rms[0][0]:.4f} deg / {rms[0][1]:.3f} mm, from the exact corners + {DETECTOR_STD_PX} px noise "
          f"{rms[1][0]:.4f} deg / {rms[1][1]:.3f} mm, ratio {rms[0][0] / rms[1][0]:.2f} / {rms[0][1] / rms[1][1]:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10, help="recordings per lens and setup (0: only --images)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--images", type=int, default=0, help="recordings per lens and setup drawn as images")
    ap.add_argument("--board", default=None, help="with --images: another chessboard to draw (e.g. chessboard:9x6:0.04)")
    ap.add_argument("--lenses", default="fisheye_120,fisheye_180",
                    help=f"lenses, comma-separated, of {', '.join(TILTS)} (each turned by its own angle)")
    ap.add_argument("--setups", default="eye_in_hand,eye_to_hand", help="setups, comma-separated")
    a = ap.parse_args()
    lenses = [(n, TILTS[n]) for n in a.lenses.split(",")]
    setups = [s for s in SETUPS if s[0] in a.setups.split(",")]
    print(f"fisheye corners: {a.n} recordings per lens and setup, pixel noise {DETECTOR_STD_PX} px, intrinsics "
          "estimated; X error RMS (rotation deg / translation mm) against the Cramer-Rao bound's RMS")  # fmt: skip
    for lens, tilt in lenses:
        for setup, target in setups:
            if a.n <= 0:
                print(f"\n{lens} (target {tilt:.0f} deg off the axis), {setup}:")
                images(a.seed, lens, tilt, setup, a.images, a.board)
                continue
            fe, ph = [], []
            for i in range(a.n):
                r = recipe(a.seed, setup, target, i)
                obs, truth = fisheye_observations_from_recipe(r, lens, tilt_deg=tilt)
                X, Y = (transform_from_pose_json(truth["poses"][n]) for n in "XY")
                fe.append(one(obs, np.array(list(truth["parameters"].values())), X, Y, r))
                pobs, ptruth = observations_from_recipe(r)
                pX, pY = (transform_from_pose_json(ptruth["poses"][n]) for n in "XY")
                ph.append(one(pobs, np.array(list(ptruth["parameters"].values())), pX, pY, r))
            rot, tr, crot, ctr = _summary(fe)
            prot, ptr, pcrot, pctr = _summary(ph)
            z = np.array([r["z_k"] for r in fe])
            print(f"\n{lens} (target {tilt:.0f} deg off the axis), {setup}, {target}:")
            print(f"  fisheye: X error {rot:.4f} deg / {tr:.3f} mm, bound {crot:.4f} deg / {ctr:.3f} mm, ratio "
                  f"{rot / crot:.2f} / {tr / ctr:.2f}; NEES mean {np.mean([r['nees'] for r in fe]):.2f} (reported cov), "
                  f"{np.mean([r['nees_crb'] for r in fe]):.2f} (bound); outlier views {sum(r['n_out'] for r in fe)}; "
                  f"CPU {np.mean([r['cpu'] for r in fe]):.2f} s per recording")  # fmt: skip
            print("  fisheye intrinsics, RMS of error / sigma: "
                  + ", ".join(f"{n} {v:.2f}" for n, v in zip(("fx", "fy", "cx", "cy", "k1", "k2", "k3", "k4"),
                                                             np.sqrt(np.mean(z**2, axis=0)))))  # fmt: skip
            print(f"  pinhole (vga, same recordings): X error {prot:.4f} deg / {ptr:.3f} mm, bound {pcrot:.4f} deg / "
                  f"{pctr:.3f} mm, ratio {prot / pcrot:.2f} / {ptr / pctr:.2f}; NEES mean "
                  f"{np.mean([r['nees'] for r in ph]):.2f}; fisheye over pinhole error {rot / prot:.2f} / {tr / ptr:.2f}")
            nees = " ".join(f"{r['nees']:.1f}" for r in fe)
            print(f"    per-recording NEES (fisheye): {nees}")
            if a.images:
                images(a.seed, lens, tilt, setup, a.images, a.board)


if __name__ == "__main__":
    main()
