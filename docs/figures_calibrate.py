"""The run-derived figures of ``docs/calibrate.md``: ``kinhec calibrate`` on real recordings.

Every block is recomputed from the files that travel with the repository: the Tabb, RWHE-Calib and ETH-ASL
recordings under ``tests/data/realdata`` (sources and licences in its ``SOURCES.toml``) and the corner files
of the regression suite (``regression/observations``).  OpenCV's rows of the Tabb table need ``cv2`` (dev
extra).  Written by ``python docs/build_figures.py``; checked by ``tests/test_doc_figures.py``.
"""

from __future__ import annotations

import json
import tempfile
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
REALDATA = REPO / "tests" / "data" / "realdata"
SUITE = REPO / "regression"
RWHE = ("kuka_1", "kuka_2")
OPENCV_METHODS = ("PARK", "TSAI", "HORAUD", "DANIILIDIS", "ANDREFF")


#: The page's blocks, in page order; those whose figures depend on the OpenCV version installed.
NAMES = ('calibrate.corners', 'calibrate.tabb', 'calibrate.rwhe', 'calibrate.eth-arm', 'calibrate.prime-sense')
OPENCV_BLOCKS = ('calibrate.tabb',)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _park(name: str) -> dict:
    return json.loads((REALDATA / "rwhe_calib" / name / "opencv_reference_calibration.json").read_text())


def _deg_mm(err) -> str:
    return f"{err[0]:.2f}° / {err[1]:.1f} mm"


def _pm(value: float, std: float) -> str:
    """``value ± std`` with the std to one significant digit (two when it starts with 1), the value to the same decimal."""
    if not (std > 0 and np.isfinite(std)):
        return f"{value:.3f}"
    digits = max(int(-np.floor(np.log10(std))), 0)
    digits += int(round(std * 10**digits, 6) < 2)
    return f"{value:.{digits}f} ± {std:.{digits}f}"


def _short(message: str) -> str:
    """An error message with the recordings' folders left out (the page names the files), and of a refused reading
    its verdict and the reading that fits (the reasons in between left out)."""
    message = message.replace(f"{REALDATA}/tabb_ds1/", "").replace("tests/data/realdata/tabb_ds1/", "")
    head, sep, _ = message.partition(" log units)")
    fits = message.rfind("they fit with")
    return f"{head}{sep} … {message[fits:]}" if sep and fits > 0 else message


# --------------------------------------------------------------------------- #
# the computations
# --------------------------------------------------------------------------- #
def corners_results() -> dict:
    """``kinhec calibrate --corners`` on the suite's RWHE-Calib corner files: {name: CalibrationResult}."""
    from kinhec.calibrate import calibrate

    return {name: _quiet(calibrate, corners=SUITE / "observations" / f"{name}.json") for name in RWHE}


def tabb_facts() -> dict:
    """Tabb DS1 by kinhec and by OpenCV's Shah and Li, against Tabb's own result; the two refused inputs."""
    import cv2

    from kinhec import se3
    from kinhec.calibrate import calibrate
    from kinhec.calibrate.readers import read_stream
    from kinhec.errors import KinhecError

    d = REALDATA / "tabb_ds1"
    text = (d / "transformations_rwhe_AA_RPI.txt").read_text().split("Z")
    X_ref = np.array(text[0].split()[1:], dtype=float).reshape(4, 4)  # T_world_base [mm]
    Z_ref = np.array(text[1].split()[1:], dtype=float).reshape(4, 4)  # T_cam_ee [mm]
    X_ref[:3, 3] /= 1000
    Z_ref[:3, 3] /= 1000
    res = _quiet(calibrate, d / "robot_cali.txt", d / "cali.txt", fmt="tabb")
    rows = {"kinhec": (se3.pose_error(res.X, se3.invert_transform(Z_ref)), se3.pose_error(res.Y, se3.invert_transform(X_ref)))}
    h, e = read_stream(d / "robot_cali.txt", "tabb"), read_stream(d / "cali.txt", "tabb")
    cv = "OpenCV " + ".".join(cv2.__version__.split(".")[:2])
    for label, method in ((f"{cv} Shah", cv2.CALIB_ROBOT_WORLD_HAND_EYE_SHAH), (f"{cv} Li", cv2.CALIB_ROBOT_WORLD_HAND_EYE_LI)):
        R_b2w, t_b2w, R_g2c, t_g2c = cv2.calibrateRobotWorldHandEye(
            [T[:3, :3] for T in e.T], [T[:3, 3:] for T in e.T], [T[:3, :3] for T in h.T], [T[:3, 3:] for T in h.T],
            method=method)  # fmt: skip
        Z_cv = se3.transform_from_rotation_translation(R_g2c, t_g2c.ravel() / 1000)
        X_cv = se3.transform_from_rotation_translation(R_b2w, t_b2w.ravel() / 1000)
        rows[label] = (se3.pose_error(Z_cv, Z_ref), se3.pose_error(X_cv, X_ref))
    refused = {}
    for key, kw in (("inverted", {"hand_pose": "base_T_ee"}), ("units", {"units": "m"})):
        try:
            _quiet(calibrate, d / "robot_cali.txt", d / "cali.txt", fmt="tabb", **kw)
            refused[key] = "(accepted)"
        except KinhecError as exc:
            refused[key] = _short(str(exc))
    return {"rows": rows, "n_pairs": res.n_pairs, "n_outliers": len(res.outliers), "std": res.observability,
            "refused": refused, "scale": (res.scale, res.scale_std)}  # fmt: skip


def rwhe_facts() -> dict:
    """RWHE-Calib kuka_1/kuka_2 from the robot poses and OpenCV's per-view camera poses, against OpenCV's X."""
    from kinhec import se3
    from kinhec.calibrate import calibrate

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in RWHE:
            ref = _park(name)
            T = np.array([v["T_cam_target"] for v in ref["per_view"]])
            eye = Path(tmp) / f"{name}_cam_T_target.txt"
            eye.write_text("".join(" ".join(repr(v) for v in M.ravel().tolist()) + "\n" for M in T))
            res = _quiet(calibrate, REALDATA / "rwhe_calib" / name / "RobotPosesVec.txt", eye, fmt="rwhe")
            out[name] = {"errors": {m: se3.pose_error(res.X, np.array(ref["opencv_calibrateHandEye"][m]["T_tcp_cam (cam2gripper)"]))
                                    for m in OPENCV_METHODS},
                         "std_deg": res.observability["X_std_max_deg"], "std_mm": res.observability["X_std_max_mm"],
                         "n": res.n_pairs}  # fmt: skip
    return out


def _eth(run: str):
    files = sorted((REALDATA / "ethz_asl" / run).glob("*.csv"))
    return files


def eth_arm_facts() -> dict:
    """ETH-ASL robot_arm_real: the clock offset, X, its sigma, and the residuals at the opposite offset."""
    from kinhec.calibrate import calibrate
    from kinhec.calibrate.calibration import MIN_PEAK_CORR

    files = _eth("robot_arm_real")
    hand = next(f for f in files if "hinge" in f.name)
    eye = next(f for f in files if "target_ir" in f.name)
    res = _quiet(calibrate, hand, eye, fmt="eth", eye_pose="target_T_cam")
    flipped = _quiet(calibrate, hand, eye, fmt="eth", eye_pose="target_T_cam", offset=-0.02)
    med = lambda r: (float(np.median(r.residuals["rot_deg"])), float(np.median(r.residuals["trans_mm"])))  # noqa: E731
    return {"offset_ms": 1e3 * res.time_offset_s, "offset_std_ms": 1e3 * res.time_offset_std_s,
            "peak": res.time_offset_peak_corr, "min_peak": MIN_PEAK_CORR, "t_mm": 1e3 * res.X[:3, 3],
            "std_deg": res.observability["X_std_max_deg"], "std_mm": res.observability["X_std_max_mm"],
            "inflation": float(np.sqrt(res.observability.get("covariance_inflation", 1.0))),
            "n_pairs": res.n_pairs, "n_outliers": len(res.outliers), "median": med(res), "median_flipped": med(flipped)}  # fmt: skip


def prime_sense_facts() -> dict:
    """ETH-ASL prime_sense_1/2: offsets, X translations and their sigmas, and the difference of the two runs."""
    from kinhec import se3
    from kinhec.calibrate import calibrate

    runs = {}
    for run in ("prime_sense_1", "prime_sense_2"):
        files = _eth(run)
        hand = next(f for f in files if "vicon" in f.name)
        eye = next(f for f in files if "camera" in f.name)
        runs[run] = _quiet(calibrate, hand, eye, fmt="eth", eye_pose="target_T_cam")
    r1, r2 = runs.values()
    repeated = []
    for r in (r1, r2):
        n = [int(t.split(" repeated time stamp")[0].rsplit(" ", 1)[-1]) for t in r.notes if "repeated time stamp" in t]
        repeated.append(sum(n))
    # each component of the difference against the two runs' sigmas combined
    d = se3.se3_log(se3.invert_transform(r1.X) @ r2.X)
    z = np.abs(d) / np.sqrt(r1.X_std**2 + r2.X_std**2)
    return {"offsets_ms": [1e3 * r.time_offset_s for r in (r1, r2)],
            "offset_std_ms": [1e3 * r.time_offset_std_s for r in (r1, r2)],
            "t_mm": [1e3 * r.X[:3, 3] for r in (r1, r2)], "std_mm": [r.observability["X_std_max_mm"] for r in (r1, r2)],
            "repeated": repeated, "difference": se3.pose_error(r1.X, r2.X), "max_z": float(z.max())}  # fmt: skip


# --------------------------------------------------------------------------- #
# the blocks
# --------------------------------------------------------------------------- #
def render_corners(results: dict) -> str:
    from kinhec import se3

    lines = ["| | X from OpenCV's Park | scale of the eye translations | robot errors (estimated) | pixel noise | 1 sigma of X |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for name, r in results.items():
        park = np.array(_park(name)["opencv_calibrateHandEye"]["PARK"]["T_tcp_cam (cam2gripper)"])
        rot, tr = se3.pose_error(r.X, park)
        rob = r.observability["robot_std_rad_m"]
        out = len(r.outliers)
        views = f"{r.n_pairs} views" + (f", {out} outlier{'s' if out > 1 else ''}" if out else "")
        lines.append(f"| {name} ({views}) | {rot:.2f} deg / {tr:.1f} mm | {_pm(r.scale, r.scale_std)} "
                     f"| {1e3 * rob[0]:.2f} mrad / {1e3 * rob[1]:.2f} mm "
                     f"| {r.observability['pixel_std_px']:.3f} px | {r.observability['X_std_max_deg']:.3f} deg / "
                     f"{r.observability['X_std_max_mm']:.2f} mm |")  # fmt: skip
    return "\n".join(lines) + "\n"


def render_tabb(f: dict) -> str:
    n_out = f["n_outliers"]
    words = {0: "None", 1: "One", 2: "Two", 3: "Three"}
    lines = [
        f"The format sets `--hand-pose ee_T_base`, `--eye-pose cam_T_target` and `--units mm`. "
        f"{words.get(n_out, str(n_out))} of the {f['n_pairs']} pairs {'is' if n_out == 1 else 'are'} labelled "
        "outliers. Against Tabb's own result (`X = T_world_base`, `Z = T_cam_ee`; kinhec's `X = inv(Z)`,",
        "`Y = inv(X_Tabb)`):",
        "",
        "| | hand-eye | world |",
        "|---|---|---|",
    ]
    for label, (he, world) in f["rows"].items():
        sigma = (f" (σ {f['std']['X_std_max_deg']:.2f}° / {f['std']['X_std_max_mm']:.1f} mm)" if label == "kinhec" else "")
        lines.append(f"| {label} | {_deg_mm(he)}{sigma} | {_deg_mm(world)} |")
    o = f["std"]
    if o.get("drift"):
        lines += ["", f"The residuals of consecutive stations correlate (the arm's position-dependent errors along its path: "
                      f"{o['effective_pairs']:.1f} independent stretches in {o['n_inliers']} pairs, flagged `drift`), which "
                      f"inflates the σ of `X` (the variance by up to {o['covariance_inflation']:.1f}), and the scale of the "
                      f"eye translations comes out {_pm(*f['scale'])}."]  # fmt: skip
    else:
        lines += ["", f"The scale of the eye translations comes out {_pm(*f['scale'])}."]
    lines += ["Giving the robot file as `--hand-pose base_T_ee` stops with", f"`{f['refused']['inverted']}`;",
              f"`--units m` stops with `{f['refused']['units']}`."]  # fmt: skip
    return "\n".join(lines) + "\n"


def render_rwhe(f: dict) -> str:
    lines = ["| | " + " | ".join(m.capitalize() for m in OPENCV_METHODS) + " |", "|---|---|---|---|---|---|"]
    far = []
    for name, d in f.items():
        cells = []
        for m in OPENCV_METHODS:
            rot, tr = d["errors"][m]
            cell = f"{rot:.2f}° / {tr:.2f} mm" if tr < 10 else f"{rot:.2f}° / **{tr:.1f} mm**"
            if tr >= 10:
                far.append((name, m, tr))
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    std_deg = max(d["std_deg"] for d in f.values())
    mm = sorted(d["std_mm"] for d in f.values())
    lines += ["", f"kinhec's σ is {std_deg:.3f}° / {mm[0]:.2f}–{mm[-1]:.2f} mm."]
    for name, m, tr in far:
        lines[-1] += f" OpenCV's {m.capitalize()} is {tr:.0f} mm off on {name}; kinhec agrees with the other four there."
    return "\n".join(lines) + "\n"


def render_eth_arm(f: dict) -> str:
    tx, ty, tz = f["t_mm"]
    late = "camera stamps late" if f["offset_ms"] > 0 else "camera stamps early"
    if f["peak"] is not None and f["peak"] >= f["min_peak"]:
        coarse = (f"The angular speeds of the two streams correlate well (peak {f['peak']:.3f}), so the coarse offset "
                  "comes from their correlation")  # fmt: skip
    else:
        coarse = (f"The angular speeds of the noisy PnP rotations hardly correlate (peak {f['peak']:.2f}), so the "
                  "coarse offset comes from the pose-fit scan")  # fmt: skip
    (r, t), (rf, tf) = f["median"], f["median_flipped"]
    return (
        f"The eye file holds the camera in the target frame (`target_T_cam`). {coarse}, and the joint refinement "
        f"gives **offset {f['offset_ms']:+.1f} ± {f['offset_std_ms']:.1f} ms** ({late}), X translation "
        f"({tx:.1f}, {ty:.1f}, {tz:.1f}) mm, σ {f['std_deg']:.3f}° / {f['std_mm']:.2f} mm (inflated "
        f"{f['inflation']:.1f}x for correlated residuals), {f['n_outliers']} of {f['n_pairs']} pairs outliers. With the "
        f"offset fixed at −20 ms (`--offset -0.02`, the sign of the shared README's quick check) the median residuals "
        f"are {rf:.2f}° / {tf:.1f} mm, against {r:.2f}° / {t:.1f} mm at the estimate.\n"
    )


def render_prime_sense(f: dict) -> str:
    (o1, o2), (s1, s2) = f["offsets_ms"], f["offset_std_ms"]
    (t1, t2), (m1, m2) = f["t_mm"], f["std_mm"]
    rot, tr = f["difference"]
    within = "within" if f["max_z"] <= 3.0 else "not within"
    fmt = lambda t: f"({t[0]:.1f}, {t[1]:.1f}, {t[2]:.1f}) mm"  # noqa: E731
    return (
        f"The Vicon files repeat a few stamps ({f['repeated'][0]} and {f['repeated'][1]}); they are dropped and "
        f"reported. Offsets {o1:+.1f} ± {s1:.1f} ms and {o2:+.1f} ± {s2:.1f} ms; X translations {fmt(t1)} and "
        f"{fmt(t2)}, σ {m1:.1f} and {m2:.1f} mm. The two runs differ by {rot:.2f}° / {tr:.1f} mm, {within} 3σ of each "
        f"other component by component (largest {f['max_z']:.1f}σ).\n"
    )


def blocks(corners: dict | None = None) -> dict[str, str]:
    """Every block of the page, recomputed (``corners``: results of :func:`corners_results`, if at hand)."""
    return {
        "calibrate.corners": render_corners(corners if corners is not None else corners_results()),
        "calibrate.tabb": render_tabb(tabb_facts()),
        "calibrate.rwhe": render_rwhe(rwhe_facts()),
        "calibrate.eth-arm": render_eth_arm(eth_arm_facts()),
        "calibrate.prime-sense": render_prime_sense(prime_sense_facts()),
    }
