"""How far calibrate's error on the generator's machines is from the constrained Cramér-Rao bound, and why.

Usage::

    python benchmarks/machines_efficiency.py [--n 50] [--seeds 0] [--machines scara_ls6,...]
                                             [--setups eye_in_hand,eye_to_hand] [--json OUT.json]
                                             [--domain auto|camera|inverse] [--data FOLDER]
                                             [--from-json ROWS.json]

The recordings are those of :mod:`benchmarks.machines_acceptance` (``kinhec generate-machines``, ``--n`` per machine
and set-up, for every seed of ``--seeds``); only those whose camera poses are ``se3_gaussian`` are taken (the PnP
ones have their own, measured, loss: no covariance per pose).  Each is exported as TUM files and calibrated with the
clock offset stated (0, the generator's) and ``X.tz`` stated at its truth, as there.  On the same pose pairs (the
measured flange stream interpolated at the camera stamps, as calibrate pairs them) six fits of the 11 free
components are made (the first four a Gauss-Newton from the truth to convergence), so that the loss can be put
where it is:

* ``oracle``: every pair weighed by its true covariance (camera and robot noise, encoder noise through the
  manipulator Jacobian, the interpolation between two samples: :func:`kinhec.evaluate.bounds.sequence_pair_noise`),
  the scale held at 1 -- the efficient estimator the bound describes;
* ``oracle+scale``: the same with the scale estimated under calibrate's prior (``log s ~ N(0, 0.5 %^2)``);
* ``true weight``: one covariance for all pairs, the mean of their true ones in the camera frame, the scale under
  the prior (what weighing every pair alike costs);
* ``one weight``: one full 6x6 covariance for all pairs, in the camera frame, estimated from the residuals and
  iterated with the fit (the form of calibrate's noise model; calibrate itself takes the diagonal below 20 degrees
  of freedom), the scale under the prior;
* ``he_ml`` (:func:`kinhec.solvers.he_ml.he_ml`, ``scale=False``): its variance components estimated from the
  residuals, and given at the recording's true levels (``noise=``); it takes no stated component, so its ``X`` is
  moved along the bound's open direction to the true ``X.tz`` (the other components of ``X`` do not move).

``--domain`` holds calibrate's residual domain (:func:`kinhec.calibrate.solve.choose_domain`) to the pose as the
camera measures it or to its inverse, to measure what its choice costs.

Every error of ``X`` (rotation [deg], translation [mm]) is divided by the median of the bound of its own recording
(:func:`kinhec.evaluate.bounds.median_errors` of the constrained covariance); the median of these ratios over a
cell is 1 for an efficient estimator up to the sampling spread of the cell's ``n`` recordings.  That spread is
printed twice: the 95 % range of the median ratio under the bound itself (errors drawn from each recording's own
constrained covariance, 4000 cells), and a bootstrap 95 % interval of the observed median.  Also printed: the
share of recordings with a ratio above 1 (a sign test: 0.5 under the bound), the mean Mahalanobis distance of the
``X`` translation error under the bound (2 under the bound: ``X.tz`` stated leaves two components), the bound with
the scale a nuisance under the prior over the bound, the encoder noise's share of the robot noise, and the splits by
motion (sinusoid: 600 pairs, waypoints: 20) and by robot level.  Only figures are printed; nothing is asserted.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machines_acceptance import bound_open, error_vector, run, stated_components  # noqa: E402
from kinhec import io  # noqa: E402
from kinhec.calibrate import scale, solve  # noqa: E402
from kinhec.calibrate.reduced_dof import COMPONENTS  # noqa: E402
from kinhec.dataset.export import export_sequence  # noqa: E402
from kinhec.evaluate import bounds  # noqa: E402
from kinhec.geometry import se3  # noqa: E402
from kinhec.models.robots import MACHINE_NAMES, get_robot  # noqa: E402
from kinhec.solvers import pair_model as pm  # noqa: E402
from kinhec.solvers.he_ml import NOISE_KEYS, he_ml  # noqa: E402
from kinhec.synth.machines import generate_machine_dataset  # noqa: E402

#: Draws of a whole cell behind the spread of its median ratio under the bound, and of the bootstrap.
N_CELLS = 4000
#: Seed of those draws.
DRAW_SEED = 7


def _to_parent(J: np.ndarray, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Jacobians (n, 6, 12) in right perturbations -> calibrate's parameters (translations in the parent frame)."""
    Mt = np.eye(12)
    Mt[3:6, 3:6], Mt[9:12, 9:12] = X[:3, :3].T, Y[:3, :3].T
    return J @ Mt


def _update(X, Y, p):
    """``X``, ``Y`` moved by calibrate's parameters ``p`` (12,): ``R exp(phi)``, ``t + d``."""
    X2, Y2 = X.copy(), Y.copy()
    X2[:3, :3] = X[:3, :3] @ se3.so3_exp(p[0:3])
    X2[:3, 3] = X[:3, 3] + p[3:6]
    Y2[:3, :3] = Y[:3, :3] @ se3.so3_exp(p[6:9])
    Y2[:3, 3] = Y[:3, 3] + p[9:12]
    return X2, Y2


def gauss_newton(A, C_meas, X0, Y0, setup, free, Sigma=None, scale_prior=None, iters=12, common=None):
    """``X``, ``Y`` by Gauss-Newton on the camera errors, the components outside ``free`` held at ``X0``, ``Y0``.

    ``Sigma`` (n, 6, 6): the pairs' covariances of ``rho`` (target-frame twist of ``C``); None: one full 6x6
    covariance in the camera frame, estimated from the residuals at every iteration (its degrees of freedom
    corrected for the parameters), or ``common`` (6, 6) when given.  ``scale_prior``: the standard deviation of
    ``log s``'s prior (None: ``s = 1``).
    Also returns ``log s`` over its standard deviation (None without the scale).
    """
    X, Y, ls = X0.copy(), Y0.copy(), 0.0
    n = A.shape[0]
    for _ in range(iters):
        C_pred = pm.predicted_camera_poses(A, X, Y, setup)
        C_pred[:, :3, 3] *= np.exp(ls)
        r = pm.residuals(C_meas, C_pred)
        J, _ = pm.pair_jacobians(C_pred, X, setup, robot=False)
        J = _to_parent(J, X, Y)[:, :, free]
        if scale_prior is not None:
            J = np.concatenate([J, pm.scale_jacobian(C_pred)[:, :, None]], axis=2)
        if Sigma is None:  # rotate residuals and Jacobians into the camera frame, one covariance for all pairs
            D = np.zeros((n, 6, 6))
            D[:, :3, :3] = D[:, 3:, 3:] = C_pred[:, :3, :3]
            rc, Jc = np.einsum("nij,nj->ni", D, r), D @ J
            S = rc.T @ rc / max(n - J.shape[2] / 6.0, 1.0) if common is None else common
            W = np.broadcast_to(np.linalg.inv(S), (n, 6, 6))
            r, J = rc, Jc
        else:
            W = np.linalg.inv(Sigma)
        H = np.einsum("nip,nij,njq->pq", J, W, J)
        g = np.einsum("nip,nij,nj->p", J, W, r)
        if scale_prior is not None:
            H[-1, -1] += 1.0 / scale_prior**2
            g[-1] -= ls / scale_prior**2
        step = np.linalg.solve(H, g)
        p = np.zeros(12)
        p[free] = step[: free.size]
        X, Y = _update(X, Y, p)
        if scale_prior is not None:
            ls += step[-1]
        if np.max(np.abs(step[: free.size])) < 1e-12:
            break
    z = ls / np.sqrt(np.linalg.inv(H)[-1, -1]) if scale_prior is not None else None
    return X, Y, z


def _x_errors(X_est, X):
    e = np.r_[se3.so3_log(X_est[:3, :3].T @ X[:3, :3]), X[:3, 3] - X_est[:3, 3]]
    return [float(np.degrees(np.linalg.norm(e[:3]))), float(1000 * np.linalg.norm(e[3:]))], e


def encoder_share(seq, idx) -> float:
    """The encoder noise's share of the trace of the robot's flange-twist covariance (translation block) at ``idx``."""
    js = float(seq.info.get("joint_std_rad") or 0.0)
    if js <= 0:
        return 0.0
    robot = get_robot(str(seq.info["robot"]))
    q = seq.robot.q_gt[np.clip(np.searchsorted(seq.robot.t, seq.camera.t[idx]), 0, len(seq.robot) - 1)]
    Jb = robot.jacobian(q)
    R = robot.fk(q)[:, :3, :3]
    Jv = np.swapaxes(R, -1, -2) @ Jb[:, 3:]
    enc = js**2 * np.einsum("nij,nij->n", Jv, Jv)
    se = 3 * float(seq.info["robot_trans_std_m"]) ** 2
    return float(np.median(enc / (enc + se)))


def recording(root: Path, sid: str, out: Path, domain: str = "auto") -> dict | None:
    seq = io.load_sequence(root, sid)
    if seq.info["camera_noise_model"] != "se3_gaussian":
        return None
    X, Y, setup = seq.X, seq.Y, seq.configuration
    k = int(sid.split("-")[1])
    row = {"sequence_id": sid, "machine": seq.info["robot"], "setup": setup, "family": seq.info["family"],
           "robot_rot_std_rad": float(seq.info["robot_rot_std_rad"]), "encoder": float(seq.info["joint_std_rad"]) > 0,
           "k": k}  # fmt: skip
    A, B, idx = seq.axyb_poses(time_offset=0.0, return_index=True)
    C_meas = pm.camera_poses(B, setup)
    row["n_pairs"] = int(idx.size)
    F = bounds.parent_frame_information(bounds.sequence_information(seq, frames=idx), X, Y)
    null, _ = bound_open(F)
    known_idx = stated_components(null)
    free = np.setdiff1d(np.arange(12), known_idx)
    cov, unident = bounds.constrained_covariance(F, known_idx)
    if unident[0] or unident[1] or [COMPONENTS[i] for i in known_idx] != ["X.tz"]:
        return None
    row["bound"] = list(bounds.median_errors(cov[:6, :6]))
    row["bound_trans_eig"] = np.clip(np.linalg.eigvalsh(cov[3:6, 3:6]), 0, None).tolist()
    row["bound_rot_eig"] = np.clip(np.linalg.eigvalsh(cov[0:3, 0:3]), 0, None).tolist()
    Fs = bounds.parent_frame_information(bounds.sequence_information(seq, frames=idx,
                                                                     scale_prior_std=scale.PRIOR_STD), X, Y)
    cov_s, _ = bounds.constrained_covariance(Fs, known_idx)
    row["bound_scale"] = list(bounds.median_errors(cov_s[:6, :6]))
    row["encoder_share"] = encoder_share(seq, idx)
    _, Sigma, C_true = bounds.sequence_pair_noise(seq, frames=idx)
    covX = np.linalg.pinv(cov[3:6, 3:6], rcond=1e-9)
    covXs = np.linalg.pinv(cov_s[3:6, 3:6], rcond=1e-9)
    D = np.zeros((idx.size, 6, 6))  # the pairs' covariances in the camera frame, and their mean
    D[:, :3, :3] = D[:, 3:, 3:] = C_true[:, :3, :3]
    mean_cov = np.mean(D @ Sigma @ np.swapaxes(D, 1, 2), axis=0)
    for name, kw in (("oracle", dict(Sigma=Sigma)), ("oracle_scale", dict(Sigma=Sigma, scale_prior=scale.PRIOR_STD)),
                     ("true_weight", dict(common=mean_cov, scale_prior=scale.PRIOR_STD)),
                     ("one_weight", dict(scale_prior=scale.PRIOR_STD))):
        Xe, _, z = gauss_newton(A, C_meas, X, Y, setup, free, **kw)
        row[name], e = _x_errors(Xe, X)
        row[name + "_scale_z"] = z
        row[name + "_maha"] = float(e[3:] @ covX @ e[3:])
        row[name + "_maha_scale"] = float(e[3:] @ covXs @ e[3:])
    # he_ml itself (no stated component: it fits the open direction to what the noise leaves it), moved along the
    # bound's open direction to the stated X.tz; noise levels estimated, and given at their true values
    direction = null[0] / null[0][known_idx[0]]
    levels = {key: float(seq.info[key]) for key in NOISE_KEYS}
    for name, kw in (("he_ml", {}), ("he_ml_true_noise", {"noise": levels})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = he_ml(A, B, configuration=setup, scale=False, **kw)
        Xe, _ = _update(fit.X, fit.Y, direction * (X[2, 3] - fit.X[2, 3]))
        row[name], e = _x_errors(Xe, X)
        row[name + "_maha"] = float(e[3:] @ covX @ e[3:])
        row[name + "_maha_scale"] = float(e[3:] @ covXs @ e[3:])
    # calibrate on the exported files, offset and X.tz stated
    files = export_sequence(root, sid, "tum", out)
    hand = next(p for p in files if p.name.endswith("_base_ee_meas.tum"))
    eye = next(p for p in files if p.name.endswith("_meas.tum") and p != hand)
    truth = np.r_[np.zeros(3), X[:3, 3], np.zeros(3), Y[:3, 3]]
    choose = solve.choose_domain
    if domain != "auto":  # the residuals compared as the pose the camera measures (T_cam_target), or its inverse
        solve.choose_domain = lambda *a, **k: (domain == "camera") == (setup == "eye_in_hand")
    try:
        res, err, _ = run(hand, eye, setup, offset=0.0, known={COMPONENTS[i]: float(truth[i]) for i in known_idx})
    finally:
        solve.choose_domain = choose
    if res is None or not res.determined:
        row["calibrate"] = None
        return row
    e = error_vector(res, X, Y)
    row["calibrate"] = [float(np.degrees(np.linalg.norm(e[:3]))), float(1000 * np.linalg.norm(e[3:6]))]
    row["calibrate_maha"] = float(e[3:6] @ covX @ e[3:6])
    row["calibrate_maha_scale"] = float(e[3:6] @ covXs @ e[3:6])
    row["calibrate_n_pairs"] = int(res.n_pairs)
    row["calibrate_outliers"] = len(res.outliers or [])
    return row


def _null_medians(rows, rng) -> np.ndarray:
    """Medians (N_CELLS, 2) of the per-recording ratio of cells drawn from each recording's own bound."""
    out = np.empty((N_CELLS, 2))
    for j, key in enumerate(("bound_rot_eig", "bound_trans_eig")):
        w = np.array([r[key] for r in rows])  # (n, 3)
        z = rng.standard_normal((N_CELLS, len(rows), 3)) ** 2
        ref = np.array([r["bound"][j] for r in rows])  # the median errors [deg, mm]
        unit = np.degrees(1.0) if j == 0 else 1000.0
        q = np.sqrt(np.einsum("cnk,nk->cn", z, w)) * unit / ref
        out[:, j] = np.median(q, axis=1)
    return out


def cell_summary(rows: list, rng) -> list:
    keys = [k for k in ("calibrate", "oracle", "oracle_scale", "true_weight", "one_weight", "he_ml", "he_ml_true_noise")
            if all(k in r for r in rows)]
    rows = [r for r in rows if r.get("calibrate") is not None]
    if not rows:
        return ["no recording"]
    B = np.array([r["bound"] for r in rows])
    out = []
    null = _null_medians(rows, rng)
    lo, hi = np.percentile(null, [2.5, 97.5], axis=0)
    n20 = sum(r["n_pairs"] <= 20 for r in rows)
    out.append(f"{len(rows)} recordings ({n20} of 20 waypoints, {len(rows) - n20} of ~600 sinusoid frames); under the "
               f"bound the median ratio falls in rot {lo[0]:.2f}-{hi[0]:.2f}, trans {lo[1]:.2f}-{hi[1]:.2f} (95 %); "
               f"bound with the scale under its prior / bound: trans "
               f"{np.median(np.array([r['bound_scale'][1] for r in rows]) / B[:, 1]):.3f}; encoder share of the "
               f"robot's translation noise {max(r['encoder_share'] for r in rows):.4f} at most")  # fmt: skip
    for key in keys:
        E = np.array([r[key] for r in rows])
        q = E / B
        idx = rng.integers(0, len(rows), (N_CELLS, len(rows)))
        bl, bh = np.percentile(np.median(q[idx], axis=1), [2.5, 97.5], axis=0)
        maha = np.mean([r[key + "_maha"] for r in rows])
        maha_s = np.mean([r.get(key + "_maha_scale", np.nan) for r in rows])
        out.append(f"  {key:12s} per recording rot {np.median(q[:, 0]):.2f} [{bl[0]:.2f}, {bh[0]:.2f}], trans "
                   f"{np.median(q[:, 1]):.2f} [{bl[1]:.2f}, {bh[1]:.2f}]; above 1: {np.mean(q[:, 1] > 1):.2f}; "
                   f"median of errors / of bounds {np.median(E[:, 1]) / np.median(B[:, 1]):.2f}; "
                   f"Mahalanobis (trans) mean {maha:.2f}, under the bound with the scale {maha_s:.2f}")  # fmt: skip
    qc = np.array([r["calibrate"][1] for r in rows]) / np.array([r["oracle"][1] for r in rows])
    out.append(f"  calibrate / oracle, translation: median {np.median(qc):.2f}, 10-90 % {np.percentile(qc, 10):.2f}-"
               f"{np.percentile(qc, 90):.2f}; outliers set aside by calibrate in "
               f"{sum(r['calibrate_outliers'] > 0 for r in rows)} recordings")  # fmt: skip
    if all(r.get("oracle_scale_scale_z") is not None for r in rows):
        z = np.array([r["oracle_scale_scale_z"] for r in rows])
        out.append(f"  the scale of oracle+scale, log s over its standard deviation: mean {z.mean():+.2f}, RMS "
                   f"{np.sqrt(np.mean(z**2)):.2f} (0 and 1 when the model holds)")  # fmt: skip
    for name, sel in (("sinusoid", lambda r: r["n_pairs"] > 20), ("waypoints", lambda r: r["n_pairs"] <= 20),
                      ("robot 0.2 mrad", lambda r: r["robot_rot_std_rad"] < 3e-4),
                      ("robot 0.5 mrad", lambda r: 3e-4 <= r["robot_rot_std_rad"] < 1e-3),
                      ("robot 2 mrad + encoder", lambda r: r["encoder"])):
        sub = [r for r in rows if sel(r)]
        if sub:
            qs = ", ".join(f"{k} {np.median([r[k][1] / r['bound'][1] for r in sub]):.2f} "
                           f"({np.sqrt(np.mean([(r[k][1] / r['bound'][1]) ** 2 for r in sub])):.2f}, "
                           f"{np.mean([r[k + '_maha'] for r in sub]):.2f})" for k in keys)
            out.append(f"    {name:23s} {len(sub):3d}: trans per recording (RMS, Mahalanobis) {qs}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=50, help="recordings per machine and set-up")
    ap.add_argument("--seeds", default="0", help="comma-separated global seeds")
    ap.add_argument("--machines", default=",".join(MACHINE_NAMES))
    ap.add_argument("--setups", default="eye_in_hand,eye_to_hand")
    ap.add_argument("--json", type=Path, default=None, help="write the per-recording rows here")
    ap.add_argument("--from-json", type=Path, default=None, help="summarise rows written by --json instead")
    ap.add_argument("--domain", choices=("auto", "camera", "inverse"), default="auto",
                    help="calibrate's residual domain: its own choice, or held to the pose as the camera measures "
                         "it (T_cam_target) or to its inverse")
    ap.add_argument("--data", type=Path, default=None,
                    help="a folder of kinhec generate-machines recordings to take instead of generating them")
    args = ap.parse_args()
    machines = [m for m in args.machines.split(",") if m]
    setups = [s for s in args.setups.split(",") if s]
    if args.from_json:
        rows = json.loads(args.from_json.read_text())
    else:
        rows = []
        for seed in (int(s) for s in args.seeds.split(",")) if args.data is None else [None]:
            with tempfile.TemporaryDirectory(prefix="kinhec_machines_") as tmp:
                root = args.data or Path(tmp) / "data"
                if args.data is None:
                    generate_machine_dataset(root, machines, args.n, seed=seed)
                index = io.rebuild_index(root)
                for sid, machine, setup in index[["sequence_id", "robot", "configuration"]].itertuples(index=False):
                    if setup in setups and machine in machines:
                        row = recording(root, sid, Path(tmp) / "files", args.domain)
                        if row is not None:
                            rows.append(dict(row, seed=seed))
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
    rng = np.random.default_rng(DRAW_SEED)
    for machine in machines:
        for setup in setups:
            cell = [r for r in rows if r["machine"] == machine and r["setup"] == setup]
            if cell:
                print(f"{machine} {setup}:")
                for line in cell_summary(cell, rng):
                    print("  " + line)


if __name__ == "__main__":
    main()
