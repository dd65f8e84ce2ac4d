"""Real-data leaderboard: every hand-eye method on every real recording kept in the repository, ranked by
held-out prediction of the eye poses.

Usage::

    python benchmarks/leaderboard_real.py                      # writes docs/leaderboard_real.run.json
    python benchmarks/leaderboard_real.py --recordings kuka_1,kuka_2 --out /tmp/run.json

Real data has no ground truth, so a method is judged by how well it predicts what it did not see.  Each
recording is a list of *stations* (one robot pose each, one pair per station; see :func:`load_recordings`).
Leave one station out, fit ``X`` and ``Y`` on the others, predict the left-out eye pose from its hand pose
(``B = inv(Y) A X``, eye-in-hand, ``A = T_base_ee``, ``B = T_target_cam``; the translation times the method's
camera scale where it estimates one) and measure the error against the measured eye pose in the direction the
recording states it (``T_cam_target`` for a board seen by PnP, ``T_target_cam`` for the ETH streams): the
rotation angle [deg] and the translation's length [mm]; the translation's error in the other direction is
reported beside (a rotation error moves the two by different lever arms, and ``kinhec calibrate``'s own held-out
figure uses the direction whose noise model fits best).  Each method's row is the RMS over the stations.

Methods:

* every baseline of the solver registry (:data:`kinhec.solvers.BASELINES`): the ``A X = X B`` solvers on the
  relative motions between consecutive training stations, the ``A X = Y B`` solvers on the absolute pairs;
* OpenCV's ``cv2.calibrateHandEye`` (TSAI, PARK, HORAUD, ANDREFF, DANIILIDIS) and
  ``cv2.calibrateRobotWorldHandEye`` (SHAH, LI), when ``cv2`` is installed (dev extra);
* ``kinhec calibrate`` (:func:`kinhec.calibrate.calibrate`, its whole pipeline with the outlier handling) on
  the training pairs written as unstamped pose files.

A method that returns ``X`` only (the ``A X = X B`` solvers, OpenCV's hand-eye methods) gets ``Y`` in closed
form from ``X`` and the training pairs: the mean of ``A_i X inv(B_i)``, its rotation by the chordal mean (the
sum of the rotation matrices projected onto SO(3)) and its translation by the arithmetic mean
(:func:`y_from_x`).

Same mount: the ETH-ASL ``prime_sense_1`` and ``prime_sense_2`` runs are two recordings of one rig
(``regression/suite.toml``: "second PrimeSense recording of the same rig"); each method's ``X`` from the whole
of each run is compared, in mm / deg and, for the methods that state a covariance (``he_ml``, ``kinhec
calibrate``), in units of the combined sigma along the difference.

Nothing is random: the registry's RANSAC and ``he_ml`` draw from fixed seeds.  The run's CPU time is printed
and stored.  ``docs/build_figures.py`` writes ``docs/leaderboard_real.md`` from the stored JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kinhec.geometry import se3

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "realdata"
OUT = REPO / "docs" / "leaderboard_real.run.json"

#: OpenCV's methods by the name of their row.
CV_HAND_EYE = ("TSAI", "PARK", "HORAUD", "ANDREFF", "DANIILIDIS")
CV_ROBOT_WORLD = ("SHAH", "LI")
CALIBRATE = "kinhec calibrate"

#: Recordings, in page order.
RECORDING_NAMES = ("tabb_ds1", "kuka_1", "kuka_2", "robot_arm_real", "prime_sense_1", "prime_sense_2")

#: Pairs of recordings of the same mount, with what the sources say.
SAME_MOUNT = (
    ("prime_sense_1", "prime_sense_2",
     "regression/suite.toml: ethz_prime_sense_2 is the \"second PrimeSense recording of the same rig\""),
)


# --------------------------------------------------------------------------- #
# recordings
# --------------------------------------------------------------------------- #
@dataclass
class Recording:
    """One real recording as stations: ``A`` (n, 4, 4) ``T_base_ee`` [m], ``B`` (n, 4, 4) ``T_target_cam`` [m].

    ``domain``: the direction the recording states its eye poses in (``cam_T_target`` or ``target_T_cam``), in
    which the held-out errors are measured.
    """

    name: str
    A: np.ndarray
    B: np.ndarray
    domain: str
    description: str
    source: str
    n_pairs_raw: int
    info: dict = field(default_factory=dict)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _tabb() -> Recording:
    from kinhec.calibrate.readers import read_stream

    h = read_stream(DATA / "tabb_ds1" / "robot_cali.txt", "tabb")  # T_ee_base [mm]
    e = read_stream(DATA / "tabb_ds1" / "cali.txt", "tabb")  # T_cam_target [mm]
    A = se3.invert_transform(h.T)
    C = np.array(e.T, dtype=np.float64)
    A[:, :3, 3] /= 1000.0
    C[:, :3, 3] /= 1000.0
    return Recording("tabb_ds1", A, se3.invert_transform(C), "cam_T_target",
                     "Tabb DS1: 88 robot poses, camera poses as published (PnP of a chessboard)",
                     "tests/data/realdata/tabb_ds1 (robot_cali.txt, cali.txt)", len(A))  # fmt: skip


def _rwhe(name: str) -> Recording:
    folder = DATA / "rwhe_calib" / name
    A = np.loadtxt(folder / "RobotPosesVec.txt").reshape(-1, 4, 4)  # T_base_tcp [m]
    ref = json.loads((folder / "opencv_reference_calibration.json").read_text())
    C = np.array([v["T_cam_target"] for v in ref["per_view"]], dtype=np.float64)
    return Recording(name, A, se3.invert_transform(C), "cam_T_target",
                     f"RWHE-Calib {name}: KUKA arm, {len(A)} views; camera poses by OpenCV's PnP with its intrinsics "
                     "from the same corners (opencv_reference_calibration.json)",
                     f"tests/data/realdata/rwhe_calib/{name}", len(A))  # fmt: skip


#: Most stations kept of a continuous recording (every k-th of them): OpenCV's hand-eye methods use every pair of
#: poses, so one fit on n stations costs n^2, and the leave-one-out n^3.
MAX_STATIONS = 100
_ORDINAL = {2: "second", 3: "third", 4: "fourth", 5: "fifth"}

_ETH = {"robot_arm_real": ("hinge", "target_ir"), "prime_sense_1": ("vicon", "camera"),
        "prime_sense_2": ("vicon", "camera")}  # fmt: skip


def _eth(name: str) -> Recording:
    from kinhec.calibrate import calibrate
    from kinhec.calibrate.held_out import stations

    files = sorted((DATA / "ethz_asl" / name).glob("*.csv"))
    h, e = _ETH[name]
    res = _quiet(calibrate, next(f for f in files if h in f.name), next(f for f in files if e in f.name), fmt="eth",
                 eye_pose="target_T_cam")  # fmt: skip
    A, B = res.pairs
    t = np.asarray(res.residuals["t_s"], dtype=np.float64)
    st = stations(A, t)
    first = np.flatnonzero(np.r_[True, np.diff(st) > 0])  # the first pair of every station
    stride = -(-len(first) // MAX_STATIONS)
    keep = first[::stride]
    every = "every station" if stride == 1 else f"every {_ORDINAL.get(stride, f'{stride}th')} station"
    return Recording(name, A[keep], B[keep], "target_T_cam",
                     f"ETH-ASL {name}: continuous hand and camera-in-target streams; paired by interpolating the "
                     f"hand at the eye stamps with the clock offset kinhec calibrate estimates on the whole recording "
                     f"({1000 * res.time_offset_s:.1f} ms), then the first pair of {every} (of {len(first)})",
                     f"tests/data/realdata/ethz_asl/{name}", len(A),
                     {"offset_ms": 1000 * res.time_offset_s, "stations_all": len(first), "stride": stride})  # fmt: skip


def load_recordings(names=RECORDING_NAMES) -> list[Recording]:
    """The recordings as stations.

    Unstamped pose files (Tabb DS1, RWHE-Calib) give one station per pair.  The ETH-ASL streams are paired by
    ``kinhec calibrate`` at the clock offset it estimates on the whole recording, and grouped into stations as its
    held-out accuracy groups them (:func:`kinhec.calibrate.held_out.stations`: a new station when the hand has
    turned 5 deg or moved 20 mm from the current one's first pose); the first pair of every station is kept, of
    every k-th station when there are more than :data:`MAX_STATIONS`.
    """
    load = {"tabb_ds1": _tabb, "kuka_1": lambda: _rwhe("kuka_1"), "kuka_2": lambda: _rwhe("kuka_2")}
    return [load[n]() if n in load else _eth(n) for n in names]


# --------------------------------------------------------------------------- #
# fits
# --------------------------------------------------------------------------- #
def chordal_mean(R: np.ndarray) -> np.ndarray:
    """The chordal L2 mean of rotations ``(n, 3, 3)``: their sum projected onto SO(3) (SVD)."""
    U, _, Vt = np.linalg.svd(R.sum(axis=0))
    D = np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))])
    return U @ D @ Vt


def y_from_x(A: np.ndarray, B: np.ndarray, X: np.ndarray, scale: float | None = None) -> np.ndarray:
    """``Y`` of ``A_i X = Y B_i`` from ``X``: the mean of ``A_i X inv(B_i)`` (rotation by the chordal mean,
    translation by the arithmetic mean).  With ``scale`` (eye = scale x metric) the eye translations are divided
    by it first."""
    Bm = np.array(B, dtype=np.float64, copy=True)
    if scale is not None:
        Bm[:, :3, 3] /= scale
    M = A @ X @ se3.invert_transform(Bm, check=False)
    return se3.transform_from_rotation_translation(chordal_mean(M[:, :3, :3]), M[:, :3, 3].mean(axis=0))


def motions(T: np.ndarray) -> np.ndarray:
    """Relative motions ``inv(T_k) T_{k+1}`` between consecutive poses."""
    return se3.invert_transform(T[:-1], check=False) @ T[1:]


@dataclass
class Fit:
    X: np.ndarray
    Y: np.ndarray
    scale: float | None = None
    cov_X: np.ndarray | None = None  # (6, 6): rotation [rad] in X's frame, translation [m] in its parent frame


def method_names(opencv: bool | None = None) -> list[str]:
    """Every method of the leaderboard: the registry's baselines, OpenCV's (when ``cv2`` imports), ``kinhec
    calibrate``."""
    from kinhec.solvers import BASELINES

    if opencv is None:
        try:
            import cv2  # noqa: F401

            opencv = True
        except ImportError:
            opencv = False
    cv = [f"opencv {m}" for m in CV_HAND_EYE + CV_ROBOT_WORLD] if opencv else []
    return [*BASELINES, *cv, CALIBRATE]


def _cv_fit(method: str, A: np.ndarray, B: np.ndarray) -> Fit:
    import cv2

    C = se3.invert_transform(B, check=False)  # T_cam_target = target2cam
    if method in CV_HAND_EYE:
        R, t = cv2.calibrateHandEye([a[:3, :3] for a in A], [a[:3, 3:4] for a in A],  # gripper2base = T_base_ee
                                    [c[:3, :3] for c in C], [c[:3, 3:4] for c in C],
                                    method=getattr(cv2, f"CALIB_HAND_EYE_{method}"))  # fmt: skip
        X = se3.transform_from_rotation_translation(np.asarray(R), np.ravel(t))  # cam2gripper = T_ee_cam
        return Fit(X, y_from_x(A, B, X))
    Ai = se3.invert_transform(A, check=False)  # base2gripper
    R_bw, t_bw, R_gc, t_gc = cv2.calibrateRobotWorldHandEye(
        [c[:3, :3] for c in C], [c[:3, 3:4] for c in C], [a[:3, :3] for a in Ai], [a[:3, 3:4] for a in Ai],
        method=getattr(cv2, f"CALIB_ROBOT_WORLD_HAND_EYE_{method}"))  # fmt: skip
    X = se3.invert_transform(se3.transform_from_rotation_translation(np.asarray(R_gc), np.ravel(t_gc)), check=False)
    Y = se3.invert_transform(se3.transform_from_rotation_translation(np.asarray(R_bw), np.ravel(t_bw)), check=False)
    return Fit(X, Y)  # gripper2cam = inv(X), base2world = inv(Y)


def _rows(T: np.ndarray) -> str:
    return "".join(" ".join(repr(v) for v in M.ravel().tolist()) + "\n" for M in T)


def _calibrate_fit(A: np.ndarray, B: np.ndarray, domain: str, tmp: Path) -> Fit:
    from kinhec.calibrate import calibrate

    hand, eye = tmp / "hand_base_T_ee.txt", tmp / f"eye_{domain}.txt"
    hand.write_text(_rows(A))
    eye.write_text(_rows(B if domain == "target_T_cam" else se3.invert_transform(B, check=False)))
    res = _quiet(calibrate, hand, eye, fmt="rwhe", setup="eye_in_hand", hand_pose="base_T_ee", eye_pose=domain,
                 units="m")  # fmt: skip
    return Fit(res.X, res.Y, res.scale, np.diag(np.asarray(res.X_std, dtype=np.float64) ** 2))


def fit(method: str, A: np.ndarray, B: np.ndarray, domain: str = "cam_T_target", *, tmp: Path | None = None,
        covariance: bool = False) -> Fit:  # fmt: skip
    """``X``, ``Y`` (and the scale) of ``method`` from the pairs ``A`` (``T_base_ee``), ``B`` (``T_target_cam``).

    ``covariance``: also ``cov_X`` where the method states one (``he_ml``: its covariance; ``kinhec calibrate``:
    its standard deviations).
    """
    if method == CALIBRATE:
        if tmp is None:
            with tempfile.TemporaryDirectory() as t:
                return _calibrate_fit(A, B, domain, Path(t))
        return _calibrate_fit(A, B, domain, tmp)
    if method.startswith("opencv "):
        return _cv_fit(method.split(" ", 1)[1], A, B)
    if method == "he_ml" and covariance:
        from kinhec.solvers.he_ml import he_ml

        r = _quiet(he_ml, A, B)
        cov = np.array(r.cov_X, dtype=np.float64)
        Rx = r.X[:3, :3]  # right perturbation X exp(dx): the translation moves by R_X v in the parent frame
        cov[3:, 3:] = Rx @ cov[3:, 3:] @ Rx.T
        cov[:3, 3:] = cov[:3, 3:] @ Rx.T
        cov[3:, :3] = cov[:3, 3:].T
        return Fit(r.X, r.Y, r.scale, cov)
    from kinhec.solvers import get_solver

    spec = get_solver(method)
    if spec.kind == "axyb":
        r = _quiet(spec.run, A, B)
        return Fit(r.X, r.Y, r.scale)
    r = _quiet(spec.run, motions(A), motions(B))
    return Fit(r.X, y_from_x(A, B, r.X, r.scale), r.scale)


# --------------------------------------------------------------------------- #
# held-out prediction
# --------------------------------------------------------------------------- #
def prediction_errors(A: np.ndarray, B: np.ndarray, X: np.ndarray, Y: np.ndarray, scale=None,
                      domain: str = "cam_T_target") -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Errors of the eye poses predicted from the hand poses: rotation [deg], translation [mm], per pair.

    ``X``, ``Y``, ``scale`` may be stacked ``(n, 4, 4)``, ``(n,)`` (one fit per pair) or single.  The predicted
    ``T_target_cam = inv(Y) A X`` (its translation times ``scale``) is compared with the measured one in
    ``domain``: as it is (``target_T_cam``) or inverted (``cam_T_target``).
    """
    P = se3.invert_transform(np.asarray(Y, dtype=np.float64), check=False) @ A @ np.asarray(X, dtype=np.float64)
    if scale is not None:
        P = P.copy()
        P[..., :3, 3] *= np.asarray(scale, dtype=np.float64)[..., None]
    M = np.asarray(B, dtype=np.float64)
    if domain == "cam_T_target":
        P, M = se3.invert_transform(P, check=False), se3.invert_transform(M, check=False)
    elif domain != "target_T_cam":
        raise ValueError(f"domain: expected cam_T_target or target_T_cam, got {domain!r}")
    D = P[..., :3, :3] @ np.swapaxes(M[..., :3, :3], -1, -2)
    sin = 0.5 * np.linalg.norm(np.stack([D[..., 2, 1] - D[..., 1, 2], D[..., 0, 2] - D[..., 2, 0],
                                         D[..., 1, 0] - D[..., 0, 1]], axis=-1), axis=-1)  # fmt: skip
    rot = np.degrees(np.arctan2(sin, 0.5 * (np.trace(D, axis1=-2, axis2=-1) - 1.0)))  # exact near 0 and 180 deg
    trans = 1000.0 * np.linalg.norm(P[..., :3, 3] - M[..., :3, 3], axis=-1)
    return rot, trans


#: The other direction of an eye pose, in which the translation errors are reported beside.
OTHER = {"cam_T_target": "target_T_cam", "target_T_cam": "cam_T_target"}


def held_out(method: str, A: np.ndarray, B: np.ndarray, domain: str = "cam_T_target") -> dict:
    """Leave-one-station-out errors of ``method`` (one pair per station): ``rot_deg``, ``trans_mm`` (n,) in
    ``domain`` and ``trans_mm_other`` in the other direction (the rotation's angle is the same), NaN where the fit
    failed, and ``failures`` (the messages)."""
    n = len(A)
    X, Y = np.full((n, 4, 4), np.nan), np.full((n, 4, 4), np.nan)
    s = np.ones(n)
    failures = []
    keep = np.ones(n, dtype=bool)
    with tempfile.TemporaryDirectory(prefix="kinhec_board_") as tmp:
        for i in range(n):
            keep[i] = False
            try:
                f = fit(method, A[keep], B[keep], domain, tmp=Path(tmp))
                if np.all(np.isfinite(f.X)) and np.all(np.isfinite(f.Y)):
                    X[i], Y[i], s[i] = f.X, f.Y, 1.0 if f.scale is None else f.scale
                else:
                    failures.append(f"station {i}: non-finite estimate")
            except Exception as exc:  # a method that fails on a fold is a finding, not a crash
                failures.append(f"station {i}: {type(exc).__name__}: {exc}"[:200])
            keep[i] = True
    rot, trans = prediction_errors(A, B, X, Y, s, domain)
    _, other = prediction_errors(A, B, X, Y, s, OTHER[domain])
    return {"rot_deg": rot, "trans_mm": trans, "trans_mm_other": other, "failures": failures}


def _rms(v: np.ndarray) -> float:
    v = v[np.isfinite(v)]
    return float(np.sqrt(np.mean(v**2))) if v.size else float("nan")


def _r(v, digits: int = 6):
    """Rounded for the JSON (significant digits), NaN as None."""
    a = np.asarray(v, dtype=np.float64)
    out = np.vectorize(lambda x: None if not np.isfinite(x) else float(f"{x:.{digits}g}"), otypes=[object])(a)
    return out.tolist()


def evaluate(rec: Recording, methods: list[str]) -> dict:
    """Every method on one recording: held-out RMS, median and 90th percentile, the in-sample fit, ``X``."""
    rows = {}
    for m in methods:
        t0 = time.process_time()
        h = held_out(m, rec.A, rec.B, rec.domain)
        cpu = time.process_time() - t0
        try:
            full = fit(m, rec.A, rec.B, rec.domain, covariance=True)
            fr, ft = prediction_errors(rec.A, rec.B, full.X, full.Y, full.scale, rec.domain)
            _, fo = prediction_errors(rec.A, rec.B, full.X, full.Y, full.scale, OTHER[rec.domain])
            fitted = {"fit_rms_deg": _r(_rms(fr)), "fit_rms_mm": _r(_rms(ft)), "fit_rms_mm_other": _r(_rms(fo)),
                      "X": _r(full.X, 10),
                      "Y": _r(full.Y, 10), "scale": None if full.scale is None else _r(full.scale, 10),
                      "cov_X": None if full.cov_X is None else _r(full.cov_X, 6)}  # fmt: skip
        except Exception as exc:
            fitted = {"fit_error": f"{type(exc).__name__}: {exc}"[:200]}
        rot, tr = h["rot_deg"], h["trans_mm"]
        ok = np.isfinite(tr)
        rows[m] = {"rms_deg": _r(_rms(rot)), "rms_mm": _r(_rms(tr)), "rms_mm_other": _r(_rms(h["trans_mm_other"])),
                   "median_deg": _r(np.median(rot[ok])) if ok.any() else None,
                   "median_mm": _r(np.median(tr[ok])) if ok.any() else None,
                   "p90_mm": _r(np.percentile(tr[ok], 90)) if ok.any() else None,
                   "n_failed": len(h["failures"]), "failures": h["failures"][:5], "cpu_s": round(cpu, 2),
                   **fitted, "rot_deg": _r(rot, 5), "trans_mm": _r(tr, 5),
                   "trans_mm_other": _r(h["trans_mm_other"], 5)}  # fmt: skip
        print(f"  {m:20s} {_rms(tr):>10.4g} mm {_rms(rot):>8.4g} deg RMS held out "
              f"({len(h['failures'])} failed, {cpu:.1f} CPU-s)", flush=True)
    return {"description": rec.description, "source": rec.source, "domain": rec.domain,
            "other_domain": OTHER[rec.domain], "n_stations": len(rec.A),
            "n_pairs_raw": rec.n_pairs_raw, **rec.info, "methods": rows}  # fmt: skip


def agreement(a: dict, b: dict) -> dict:
    """``X`` of one method from two recordings of one mount: the difference (deg, mm) and, with both covariances,
    the difference over the combined sigma along it (rotation in the first ``X``'s frame, translation in the
    flange frame)."""
    if "X" not in a or "X" not in b:
        return {"d_deg": None, "d_mm": None, "z_deg": None, "z_mm": None}
    Xa, Xb = np.array(a["X"], dtype=np.float64), np.array(b["X"], dtype=np.float64)
    d_rot = se3.so3_log(Xa[:3, :3].T @ Xb[:3, :3], check=False)
    d_t = Xb[:3, 3] - Xa[:3, 3]
    out = {"d_deg": _r(np.degrees(np.linalg.norm(d_rot))), "d_mm": _r(1000 * np.linalg.norm(d_t)),
           "z_deg": None, "z_mm": None}  # fmt: skip
    if a.get("cov_X") is not None and b.get("cov_X") is not None:
        C = np.array(a["cov_X"], dtype=np.float64) + np.array(b["cov_X"], dtype=np.float64)
        for key, d, sl in (("z_deg", d_rot, slice(0, 3)), ("z_mm", d_t, slice(3, 6))):
            u = d / np.linalg.norm(d)
            out[key] = _r(np.linalg.norm(d) / np.sqrt(u @ C[sl, sl] @ u), 4)
    return out


def run(names=RECORDING_NAMES, methods=None) -> dict:
    """The leaderboard's stored run (see the module documentation)."""
    import platform

    import kinhec

    t0 = time.process_time()
    methods = methods or method_names()
    try:
        import cv2

        cv_version = cv2.__version__
    except ImportError:
        cv_version = None
    recs = {}
    for rec in load_recordings(names):
        print(f"{rec.name}: {len(rec.A)} stations", flush=True)
        recs[rec.name] = evaluate(rec, methods)
    mounts = []
    for a, b, source in SAME_MOUNT:
        if a in recs and b in recs:
            mounts.append({"a": a, "b": b, "source": source,
                           "methods": {m: agreement(recs[a]["methods"][m], recs[b]["methods"][m]) for m in methods}})
    cpu = time.process_time() - t0
    print(f"CPU time: {cpu:.1f} s")
    return {"kinhec_version": kinhec.__version__, "opencv_version": cv_version, "numpy_version": np.__version__,
            "machine": platform.machine(), "cpu_s": round(cpu, 1), "methods": methods, "recordings": recs,
            "same_mount": mounts}  # fmt: skip


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recordings", default=None, help=f"comma-separated among {', '.join(RECORDING_NAMES)}")
    ap.add_argument("--methods", default=None, help="comma-separated method names (default: all)")
    ap.add_argument("--out", type=Path, default=OUT, help="the stored run (JSON)")
    a = ap.parse_args(argv)
    names = tuple(a.recordings.split(",")) if a.recordings else RECORDING_NAMES
    doc = run(names, a.methods.split(",") if a.methods else None)
    a.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"written {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
