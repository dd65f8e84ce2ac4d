"""Acceptance of ``kinhec calibrate`` on generated SCARA, palletiser and gantry recordings (one turning axis).

Usage::

    python benchmarks/machines_acceptance.py [--n 50] [--seed 0] [--machines scara_ls6,...] [--offset0 none|stations|all]
                                             [--json OUT.json] [--from-json OUT.json]

The recordings are those of ``kinhec generate-machines`` (:func:`kinhec.synth.machines.generate_machine_dataset`,
``--n`` per machine and set-up, eye-in-hand and eye-to-hand), written to a temporary folder and each exported as a
user has it (``kinhec export DATA ID --format tum``: the measured flange poses and the measured camera poses, TUM
files that name their frames and set-up).  Each pair of files goes through :func:`kinhec.calibrate.calibrate` three
times, with ``intrinsics_std="0,0"`` (the recordings hold no intrinsics error, so none is counted):

1. without an option: the result must not be determined (``kinhec calibrate`` then stops with exit 2) and name
   the undetermined components (``observability["undetermined"]``, the components the refusal names); the names
   are compared with those of the bound -- the null space
   (:func:`kinhec.evaluate.bounds.null_directions`) of the Fisher information of the noise-free recording
   (:func:`kinhec.evaluate.bounds.sequence_information` over the frames the files hold, in calibrate's parameters),
   a component named when the null space moves it by a tenth of the largest move in units of the information's
   diagonal, calibrate's own rule.  A run that returns is a *confident answer*;
2. ``known`` = the components the bound leaves open (one translation per open direction, ``X``'s first) at their
   true values: the median rotation and translation error of ``X`` against the median of the Cramér-Rao bound
   with those components fixed (:func:`kinhec.evaluate.bounds.constrained_covariance`,
   :func:`~kinhec.evaluate.bounds.median_errors`), and the NEES of the free components under the covariance
   calibrate reports (its mean is the number of free components when the covariance is right);
3. ``partial=True``: the share of the components it measures (finite, non-zero sigma) whose truth lies within
   1.96 sigma.

Prints one line per machine and set-up, and the CPU seconds per calibration.  The errors are also compared with the
bound of a fit that estimates the clock offset and the scale (calibrate's nuisances) and, for PnP poses, with what a
fit that weighs every pair by one covariance can reach (:func:`common_weight_covariance`); ``--offset0`` states the
clock offset (the generator's, 0) for some recordings.  A run with the open component stated that calibrate itself
calls not determined is counted apart.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from kinhec import io  # noqa: E402
from kinhec.calibrate import calibrate, scale  # noqa: E402
from kinhec.calibrate.reduced_dof import COMPONENTS, NAME_SHARE  # noqa: E402
from kinhec.dataset.export import export_sequence  # noqa: E402
from kinhec.evaluate import bounds  # noqa: E402
from kinhec.geometry import se3  # noqa: E402
from kinhec.models.robots import MACHINE_NAMES  # noqa: E402
from kinhec.synth.machines import generate_machine_dataset  # noqa: E402
from kinhec.util.errors import InputError  # noqa: E402

Z95 = 1.959963984540054


def bound_open(F: np.ndarray) -> tuple[np.ndarray, list]:
    """The null space (k, 12) of the information ``F`` (calibrate's parameters) and the components it moves."""
    null = bounds.null_directions(F)
    if not null.shape[0]:
        return null, []
    d = np.sqrt(np.clip(np.diag(F), 1e-300, None))
    s = null * d[None, :]  # in units of the information's diagonal
    s /= np.linalg.norm(s, axis=1, keepdims=True)
    reach = np.sqrt(np.sum(s**2, axis=0))
    return null, [COMPONENTS[i] for i in np.flatnonzero(reach >= NAME_SHARE * reach.max())]


def stated_components(null: np.ndarray) -> list:
    """One translation per open direction (``X``'s first, each group by the size of its move), as ``--partial``."""
    chosen = []
    tol = NAME_SHARE * float(np.abs(null).max())
    for group in ((3, 4, 5), (9, 10, 11)):
        for i in sorted(group, key=lambda i: -float(np.abs(null[:, i]).max())):
            if len(chosen) < null.shape[0] and np.linalg.matrix_rank(null[:, chosen + [i]], tol=tol) == len(chosen) + 1:
                chosen.append(i)
    return chosen


def common_weight_covariance(seq, X, Y, free) -> np.ndarray:
    """The covariance (12, 12) of the free components for a fit that weighs every pair by one noise covariance.

    kinhec calibrate reads poses without a covariance per pose and models the noise by one covariance for all pairs
    (estimated from the residuals, in the frame each pose was measured in: the camera's).  Where the true noise
    differs from pair to pair (PnP: its depth and view angle) that fit is not efficient; its covariance is the
    sandwich ``H^-1 (sum J_i^T W Sigma_i W J_i) H^-1``, ``H = sum J_i^T W J_i``, ``W`` the inverse of the mean
    ``Sigma_i`` -- what such a fit can reach, against the bound that knows each pair's covariance.
    """
    J, S, C = bounds.sequence_pair_noise(seq)
    M = np.eye(12)  # right perturbations -> calibrate's parameters (translations in the parent frame)
    M[3:6, 3:6], M[9:12, 9:12] = X[:3, :3], Y[:3, :3]
    D = np.zeros((len(C), 6, 6))  # the camera error in the camera frame, as calibrate compares the poses
    D[:, :3, :3] = D[:, 3:, 3:] = C[:, :3, :3]
    Jc = (D @ J @ M.T)[:, :, free]
    Sc = D @ S @ np.swapaxes(D, 1, 2)
    W = np.linalg.inv(Sc.mean(axis=0))
    H = np.einsum("nip,ij,njq->pq", Jc, W, Jc)
    Bm = np.einsum("nip,ij,njk,kl,nlq->pq", Jc, W, Sc, W, Jc)
    Hi = np.linalg.inv(H)
    out = np.zeros((12, 12))
    out[np.ix_(free, free)] = Hi @ Bm @ Hi
    return out


def error_vector(res, X, Y) -> np.ndarray:
    """The estimate's error in calibrate's parameters (rotation in the transform's frame, translation in its parent)."""
    return np.r_[se3.so3_log(res.X[:3, :3].T @ X[:3, :3]), X[:3, 3] - res.X[:3, 3],
                 se3.so3_log(res.Y[:3, :3].T @ Y[:3, :3]), Y[:3, 3] - res.Y[:3, 3]]


def run(hand, eye, setup, **kw):
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = calibrate(str(hand), str(eye), setup=setup, intrinsics_std="0,0", **kw)
        except InputError as exc:
            return None, str(exc), time.process_time() - t0
    return res, None, time.process_time() - t0


def recording(root: Path, sid: str, out: Path, offset0: str = "none") -> dict:
    seq = io.load_sequence(root, sid)
    stated = offset0 == "all" or (offset0 == "stations" and seq.info["sampling_mode"] == "stations")
    kw = {"offset": 0.0} if stated else {}
    X, Y, setup = seq.X, seq.Y, seq.configuration
    files = export_sequence(root, sid, "tum", out)
    hand = next(p for p in files if p.name.endswith("_base_ee_meas.tum"))
    eye = next(p for p in files if p.name.endswith("_meas.tum") and p != hand)
    row = {"sequence_id": sid, "machine": seq.info["robot"], "setup": setup, "family": seq.info["family"],
           "camera_noise": seq.info["camera_noise_model"], "n_frames": int(seq.camera.has_measurement.sum()),
           "cpu": []}
    res, err, cpu = run(hand, eye, setup, **kw)
    row["cpu"].append(cpu)
    if row["n_frames"] < 3:  # no bound, and calibrate must refuse the files
        row.update(too_few=True, confident=res is not None and bool(res.determined), agree=res is None,
                   refusal=err[-300:] if err else None)
        return row
    F = bounds.parent_frame_information(bounds.sequence_information(seq), X, Y)
    null, named_bound = bound_open(F)
    row.update(bound_open=named_bound, k=int(null.shape[0]))
    od = (res.observability or {}).get("open_directions") or {} if res is not None else {}
    row["information_ratio"] = od.get("information_ratio")
    row["determined_ratio_min"] = od.get("determined_information_ratio_min")
    row["lambda2"] = od.get("lambda2")
    d = np.sqrt(np.clip(np.diag(F), 1e-300, None))
    w = np.linalg.eigvalsh(F / np.outer(d, d))
    row["bound_ratios"] = (w[:3] / w[-1]).tolist()
    # the CLI's exit 2: an input refused, or a result that is not determined (kinhec calibrate stops unless --force)
    row["confident"] = res is not None and bool(res.determined)
    named = None if res is None else (res.observability or {}).get("undetermined")
    row["named"] = sorted(named, key=COMPONENTS.index) if named else None
    row["refusal"] = err[-300:] if err else None
    row["agree"] = row["named"] == named_bound
    if not null.shape[0]:
        return row
    known_idx = stated_components(null)
    row["stated"] = [COMPONENTS[i] for i in known_idx]
    free = np.setdiff1d(np.arange(12), known_idx)
    cov, unident = bounds.constrained_covariance(F, known_idx)
    row["bound_X_deg_mm"] = list(bounds.median_errors(cov[:6, :6])) if not (unident[0] or unident[1]) else None
    # the bound of a fit that, like calibrate's, estimates the clock offset (when not stated) and the scale
    Fn = bounds.parent_frame_information(bounds.sequence_information(
        seq, offset_unknown="offset" not in kw, scale_prior_std=scale.PRIOR_STD), X, Y)  # fmt: skip
    cov_n, unident_n = bounds.constrained_covariance(Fn, known_idx)
    row["bound_nuisance_X_deg_mm"] = (list(bounds.median_errors(cov_n[:6, :6]))
                                      if not (unident_n[0] or unident_n[1]) else None)  # fmt: skip
    if not (unident[0] or unident[1]):
        row["common_X_deg_mm"] = list(bounds.median_errors(common_weight_covariance(seq, X, Y, free)[:6, :6]))
    truth = np.r_[np.zeros(3), X[:3, 3], np.zeros(3), Y[:3, 3]]
    if len(known_idx) == null.shape[0]:
        res, err, cpu = run(hand, eye, setup, known={COMPONENTS[i]: float(truth[i]) for i in known_idx}, **kw)
        row["cpu"].append(cpu)
        row["known_error"] = None if res is not None else err[-300:]
        row["known_determined"] = res is not None and bool(res.determined)
        if row["known_determined"]:
            e = error_vector(res, X, Y)
            row["X_err_deg_mm"] = [float(np.degrees(np.linalg.norm(e[:3]))), float(1000 * np.linalg.norm(e[3:6]))]
            P = np.asarray(res.cov)[:12, :12][np.ix_(free, free)]
            row["nees"] = float(e[free] @ np.linalg.solve(P, e[free]))
            Pb = cov[np.ix_(free, free)]
            row["nees_bound"] = float(e[free] @ np.linalg.lstsq(Pb, e[free], rcond=None)[0])
            row["free_dof"] = int(free.size)
    res, err, cpu = run(hand, eye, setup, partial=True, **kw)
    row["cpu"].append(cpu)
    row["partial_error"] = None if res is not None else err[-300:]
    if res is not None:
        e = error_vector(res, X, Y)
        s = np.r_[res.X_std, res.Y_std]
        ok = np.isfinite(s) & (s > 0)
        row["partial_z"] = [float(v) if o else None for v, o in zip(e / np.where(ok, s, 1.0), ok)]
    return row


def _ratios(rows: list, key: str, values: bool = False) -> str:
    """Median error of ``X`` over the median bound ``key`` (rotation, translation), with the medians if ``values``."""
    if not rows:
        return "-"
    E, B = np.array([r["X_err_deg_mm"] for r in rows]), np.array([r[key] for r in rows])
    e, b = np.median(E, axis=0), np.median(B, axis=0)
    q = np.median(E / B, axis=0)  # the median of each recording's ratio: the recordings' bounds differ tenfold
    if values:
        return (f"rot {e[0]:.4f} / {b[0]:.4f} deg = {e[0] / b[0]:.2f}, trans {e[1]:.3f} / {b[1]:.3f} mm = "
                f"{e[1] / b[1]:.2f} (per recording {q[0]:.2f}, {q[1]:.2f})")
    return f"{e[0] / b[0]:.2f} / {e[1] / b[1]:.2f} ({len(rows)}; per recording {q[0]:.2f} / {q[1]:.2f})"


def summary(rows: list) -> str:
    few = sum(bool(r.get("too_few")) for r in rows)
    conf = sum(r["confident"] for r in rows)
    rows = [r for r in rows if not r.get("too_few")]
    n = len(rows)
    agree = sum(r["agree"] for r in rows)
    known = [r for r in rows if r.get("X_err_deg_mm") and r.get("bound_X_deg_mm")]
    stopped = sum(1 for r in rows if "known_determined" in r and not r["known_determined"])
    parts = [f"named = bound {agree}/{n}, confident {conf}" + (f" ({few} with < 3 pose pairs refused)" if few else "")]
    if known:
        nees = np.array([r["nees"] for r in known])
        dof = np.mean([r["free_dof"] for r in known])
        parts.append(f"known ({len(known)}{f', {stopped} not determined' if stopped else ''}): X {_ratios(known, 'bound_X_deg_mm', True)}; camera poses "
                     f"se3_gaussian {_ratios([r for r in known if r['camera_noise'] != 'pnp'], 'bound_X_deg_mm')} "
                     f"(offset and scale estimated "
                     f"{_ratios([r for r in known if r['camera_noise'] != 'pnp'], 'bound_nuisance_X_deg_mm')}), "
                     f"PnP {_ratios([r for r in known if r['camera_noise'] == 'pnp'], 'bound_X_deg_mm')} (one weight "
                     f"for all pairs {_ratios([r for r in known if r['camera_noise'] == 'pnp'], 'common_X_deg_mm')}); "
                     f"offset and scale estimated {_ratios(known, 'bound_nuisance_X_deg_mm')}; NEES mean "
                     f"{nees.mean():.1f} (median {np.median(nees):.1f}, {dof:.0f} free)")
    z = [v for r in rows for v in (r.get("partial_z") or []) if v is not None]
    if z:
        parts.append(f"--partial covers {100 * np.mean(np.abs(z) < Z95):.1f} % of {len(z)}")
    return "; ".join(parts)


def pooled(rows: list, seed: int = 0) -> list[str]:
    """Every cell together, per kind of camera pose: the median of the recordings' own error ratios and its interval.

    The ratio is ``X``'s error over the median error of the bound of a fit that estimates what calibrate estimates
    (the clock offset when not stated, the board's scale under its prior), rotation and translation; the interval is
    a bootstrap over the recordings (2,000 resamples, seeded).
    """
    rng = np.random.default_rng(seed)
    lines = []
    known = [r for r in rows if r.get("X_err_deg_mm") and r.get("bound_nuisance_X_deg_mm")]
    for label, sel in (("se3_gaussian", [r for r in known if r["camera_noise"] != "pnp"]),
                       ("PnP", [r for r in known if r["camera_noise"] == "pnp"])):  # fmt: skip
        if not sel:
            continue
        q = np.array([r["X_err_deg_mm"] for r in sel]) / np.array([r["bound_nuisance_X_deg_mm"] for r in sel])
        boot = np.median(q[rng.integers(0, len(q), (2000, len(q)))], axis=1)
        lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
        m = np.median(q, axis=0)
        lines.append(f"all cells, camera poses {label} ({len(sel)}): X error over the bound with offset and scale "
                     f"estimated, median per recording: rotation {m[0]:.3f} [{lo[0]:.3f}, {hi[0]:.3f}], translation "
                     f"{m[1]:.3f} [{lo[1]:.3f}, {hi[1]:.3f}] (95 % bootstrap)")  # fmt: skip
    nees = [r["nees"] for r in known if r.get("nees") is not None]
    if nees:
        lines.append(f"all cells: NEES mean {np.mean(nees):.2f} over {len(nees)} recordings "
                     f"({np.mean([r['free_dof'] for r in known]):.0f} free components)")  # fmt: skip
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=50, help="recordings per machine and set-up")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--machines", default=",".join(MACHINE_NAMES))
    ap.add_argument("--json", type=Path, default=None, help="write the per-recording rows here")
    ap.add_argument("--offset0", choices=("none", "stations", "all"), default="none",
                    help="state the clock offset (0, the generator's) for no recording, for the joint-waypoint ones "
                         "(whose streams hold the stations only) or for all")
    ap.add_argument("--from-json", type=Path, default=None,
                    help="print the tables of the rows a previous run wrote with --json (nothing is calibrated)")
    args = ap.parse_args()
    machines = [m for m in args.machines.split(",") if m]
    if args.from_json:
        rows = json.loads(args.from_json.read_text())
        machines = [m for m in machines if any(r["machine"] == m for r in rows)]
    else:
        rows = []
        with tempfile.TemporaryDirectory(prefix="kinhec_machines_") as tmp:
            root = Path(tmp) / "data"
            generate_machine_dataset(root, machines, args.n, seed=args.seed)
            for sid in io.rebuild_index(root)["sequence_id"].tolist():
                rows.append(recording(root, sid, Path(tmp) / "files", args.offset0))
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
    cpu = [c for r in rows for c in r["cpu"]]
    for machine in machines:
        for setup in ("eye_in_hand", "eye_to_hand"):
            cell = [r for r in rows if r["machine"] == machine and r["setup"] == setup]
            if cell:
                print(f"{machine:18s} {setup:11s} {summary(cell)}")
    for line in pooled(rows):
        print(line)
    print(f"{len(rows)} recordings, {np.mean(cpu):.2f} CPU-s per calibration")


if __name__ == "__main__":
    main()
