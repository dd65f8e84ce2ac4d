"""The run-derived figures of ``docs/calibrate.md``: ``kinhec calibrate`` on real recordings.

Every block is recomputed from the files that travel with the repository: the Tabb, RWHE-Calib and ETH-ASL
recordings under ``tests/data/realdata`` (sources and licences in its ``SOURCES.toml``) and the corner files
of the regression suite (``regression/observations``).  OpenCV's rows of the Tabb table need ``cv2`` (dev
extra).  The mistake fuzzer's table is written from its stored output (``docs/mistakes.run.json``, from
``python benchmarks/mistakes.py --json docs/mistakes.run.json``), not re-run: the whole catalogue takes about a
quarter of an hour of CPU.  Written by ``python docs/build_figures.py``; checked by ``tests/test_doc_figures.py``.
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
NAMES = ('calibrate.mistakes', 'calibrate.one-axis', 'calibrate.corners', 'calibrate.tabb', 'calibrate.rwhe', 'calibrate.eth-arm',
         'calibrate.prime-sense')
#: The stored output of ``python benchmarks/mistakes.py --json`` (the mistake fuzzer's runs and table).
MISTAKES = HERE / "mistakes.run.json"
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

    from kinhec.geometry import se3
    from kinhec.calibrate import calibrate
    from kinhec.calibrate.readers import read_stream
    from kinhec.util.errors import KinhecError

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


def _x_std(res) -> tuple[float, float]:
    return res.observability["X_std_max_deg"], res.observability["X_std_max_mm"]


def rwhe_facts() -> dict:
    """RWHE-Calib kuka_1/kuka_2 from the robot poses and OpenCV's per-view camera poses, against OpenCV's X; the same
    with the intrinsics taken as exact (``intrinsics_std=(0, 0)``) and with the scale held at 1."""
    from kinhec.geometry import se3
    from kinhec.calibrate import calibrate

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in RWHE:
            ref = _park(name)
            T = np.array([v["T_cam_target"] for v in ref["per_view"]])
            eye = Path(tmp) / f"{name}_cam_T_target.txt"
            eye.write_text("".join(" ".join(repr(v) for v in M.ravel().tolist()) + "\n" for M in T))
            hand = REALDATA / "rwhe_calib" / name / "RobotPosesVec.txt"
            res = _quiet(calibrate, hand, eye, fmt="rwhe")
            exact = _quiet(calibrate, hand, eye, fmt="rwhe", intrinsics_std=(0, 0))
            held = _quiet(calibrate, hand, eye, fmt="rwhe", scale="fixed")
            opencv = {m: np.array(ref["opencv_calibrateHandEye"][m]["T_tcp_cam (cam2gripper)"]) for m in OPENCV_METHODS}
            axis = res.X[:3, 2]  # the optical axis in the flange frame
            out[name] = {"errors": {m: se3.pose_error(res.X, X_cv) for m, X_cv in opencv.items()},
                         "std": _x_std(res), "std_exact": _x_std(exact), "n": res.n_pairs,
                         "scale": res.scale, "scale_data_std": res.observability["scale"]["data_std"],
                         "depth_stretch": res.observability["eye_bias"]["prior_std"]["depth_stretch"],
                         "distance_m": float(np.median(np.linalg.norm(T[:, :3, 3], axis=1))),
                         "scale_moves_mm": 1e3 * float((res.X[:3, 3] - held.X[:3, 3]) @ axis),
                         "park_mm": se3.pose_error(res.X, opencv["PARK"])[1],
                         "park_held_mm": se3.pose_error(held.X, opencv["PARK"])[1]}  # fmt: skip
    return out


def _eth(run: str):
    files = sorted((REALDATA / "ethz_asl" / run).glob("*.csv"))
    return files


def _refusal(fn, *args, **kwargs) -> str:
    """The message a run that must stop stops with (a RuntimeError when it does not stop)."""
    from kinhec.util.errors import KinhecError

    try:
        _quiet(fn, *args, **kwargs)
    except KinhecError as exc:
        return str(exc)
    raise RuntimeError(f"expected {kwargs} to stop the run, it was accepted")


def eth_arm_facts() -> dict:
    """ETH-ASL robot_arm_real: the readings the firewall ranks, the clock offset, X, its sigma (with and without
    the inflation for correlated residuals), the offset curve and the residuals at the opposite offset."""
    import re

    from kinhec.calibrate import calibrate
    from kinhec.calibrate import conventions as cv
    from kinhec.calibrate.pairing import MIN_PEAK_CORR
    from kinhec.calibrate.readers import read_stream

    files = _eth("robot_arm_real")
    hand = next(f for f in files if "hinge" in f.name)
    eye = next(f for f in files if "target_ir" in f.name)
    res = _quiet(calibrate, hand, eye, fmt="eth")
    flipped = _quiet(calibrate, hand, eye, fmt="eth", offset=-0.02)
    med = lambda r: (float(np.median(r.residuals["rot_deg"])), float(np.median(r.residuals["trans_mm"])))  # noqa: E731
    conv = res.inputs["conventions"]
    ranking = conv["ranking"]
    best = ranking[0]
    # the eye poses read the other way, everything else as the reading used: how well does the motion fit?
    stated = {o.split()[0]: o.split()[1] for o in best["reading"] if o.startswith("--") and len(o.split()) == 2}
    other_eye = "cam_T_target" if stated["--eye-pose"] == "target_T_cam" else "target_T_cam"
    msg = _refusal(calibrate, hand, eye, fmt="eth", eye_pose=other_eye, hand_pose=stated["--hand-pose"],
                   setup=stated["--setup"], quat_order=stated["--quat-order"], units=stated["--units"])
    fit = re.search(r"the motion fits X to (\S+) deg / (\S+) mm", msg)
    if fit is None:
        raise RuntimeError(f"no fit in the message of --eye-pose {other_eye}: {msg}")
    other_hand = "ee_T_base" if stated["--hand-pose"] == "base_T_ee" else "base_T_ee"
    hand_msg = _refusal(calibrate, hand, eye, fmt="eth", hand_pose=other_hand)
    # the claim the eye file's name makes about its frames
    eye_s = read_stream(eye, "eth")
    named = [c for c in cv.file_claims(eye_s) if c.attribute == "frames" and c.source == "name"]
    o = res.observability
    factors = np.array(o["covariance_inflation_X"])
    added = np.array(o["eye_bias"]["X_std_added"])  # the intrinsics' systematic error (a consider covariance)
    noise_var = np.maximum(res.X_std**2 - added**2, 0.0) / factors  # the fit's own part, before the inflation
    return {"offset_ms": 1e3 * res.time_offset_s, "offset_std_ms": 1e3 * res.time_offset_std_s,
            "peak": res.time_offset_peak_corr, "min_peak": MIN_PEAK_CORR,
            "scanned": any("comes from a scan of the pose fit" in n for n in res.notes),
            "t_mm": 1e3 * res.X[:3, 3], "std": _x_std(res), "n_pairs": res.n_pairs, "n_outliers": len(res.outliers),
            "scale": (res.scale, res.scale_std), "median": med(res), "median_flipped": med(flipped),
            "ranking": ranking, "other_eye": other_eye,
            "other_eye_fit": fit.groups(), "other_hand": other_hand,
            "hand_refused": _short(hand_msg.split(": ", 1)[1]),  # without the files' names and lines
            "name_claim": [(c.value, c.why) for c in named], "eye_rate_hz": eye_s.rate_hz,
            "tau": o["autocorrelation_time"], "effective_pairs": o["effective_pairs"], "drift": o["drift"],
            "inflation": o["covariance_inflation"],
            "std_uninflated": (float(np.degrees(np.sqrt(noise_var[:3] + added[:3] ** 2)).max()),
                               1e3 * float(np.sqrt(noise_var[3:] + added[3:] ** 2).max())),
            "std_noise": (float(np.degrees(np.sqrt(noise_var[:3])).max()), 1e3 * float(np.sqrt(noise_var[3:]).max())),
            "curve": _curve_facts(res)}  # fmt: skip


def _curve_facts(res) -> dict:
    """The offset curve of a run: its local minima, where the lowest lies from the estimate [ms], the step [ms] and
    how many times higher the cost is one step to either side of the lowest point."""
    cost = np.array(res.offset_curve["cost"])
    offs = np.array(res.offset_curve["offset_s"])
    k = int(np.argmin(cost))
    minima = int(((cost[1:-1] < cost[:-2]) & (cost[1:-1] < cost[2:])).sum())
    rise = float(min(cost[k - 1], cost[k + 1]) / cost[k]) if 0 < k < len(cost) - 1 else float("nan")
    return {"minima": minima, "lowest_ms": 1e3 * (offs[k] - res.time_offset_s),
            "step_ms": 1e3 * float(np.median(np.diff(offs))), "rise": rise}  # fmt: skip


def prime_sense_facts() -> dict:
    """ETH-ASL prime_sense_1/2: offsets, scales, X translations and their sigmas (also with the scale held at 1),
    and the difference of the two runs against its sigma."""
    from kinhec.calibrate import calibrate

    runs, held = {}, {}
    for run in ("prime_sense_1", "prime_sense_2"):
        files = _eth(run)
        hand = next(f for f in files if "vicon" in f.name)
        eye = next(f for f in files if "camera" in f.name)
        runs[run] = _quiet(calibrate, hand, eye, fmt="eth")
        held[run] = _quiet(calibrate, hand, eye, fmt="eth", scale="fixed")
    repeated = []
    for r in runs.values():
        n = [int(t.split(" repeated time stamp")[0].rsplit(" ", 1)[-1]) for t in r.notes if "repeated time stamp" in t]
        repeated.append(sum(n))
    r1, r2 = runs.values()
    # the translations of X differ by d; its standard deviation along d from the two runs' covariances
    d = r2.X[:3, 3] - r1.X[:3, 3]
    u = d / np.linalg.norm(d)
    d_std = float(np.sqrt(u @ (r1.cov[3:6, 3:6] + r2.cov[3:6, 3:6]) @ u))
    return {"names": list(runs), "offsets_ms": [1e3 * r.time_offset_s for r in runs.values()],
            "offset_std_ms": [1e3 * r.time_offset_std_s for r in runs.values()],
            "scale": [(r.scale, r.scale_std) for r in runs.values()],
            "scale_warned": [any("eye translations are" in w for w in r.warnings) for r in runs.values()],
            "t_mm": [1e3 * r.X[:3, 3] for r in runs.values()], "std_mm": [_x_std(r)[1] for r in runs.values()],
            "t_held_mm": [1e3 * r.X[:3, 3] for r in held.values()], "std_held_mm": [_x_std(r)[1] for r in held.values()],
            "repeated": repeated, "difference_mm": 1e3 * float(np.linalg.norm(d)), "difference_z": float(np.linalg.norm(d) / d_std)}  # fmt: skip


# --------------------------------------------------------------------------- #
# the blocks
# --------------------------------------------------------------------------- #
def render_corners(results: dict) -> str:
    from kinhec.geometry import se3

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


def _num(value: float, fmt: str) -> str:
    """A number for the prose, negative with the typographic minus."""
    return format(value, fmt).replace("-", "−")


def _mm3(t) -> str:
    return "(" + ", ".join(_num(v, ".1f") for v in t) + ") mm"


def _and(values: list[str], unit: str = "") -> str:
    """``"a"`` or ``"a and b"`` (``"a each"`` when all are the same), with the unit after the last."""
    if len(values) > 1 and len(set(values)) == 1:
        return f"{values[0]}{unit} each"
    return " and ".join(values) + unit


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
    names = list(f)
    std = " and ".join(f"{f[n]['std'][0]:.3f}° / {f[n]['std'][1]:.1f} mm ({n})" for n in names)
    exact = " and ".join(f"{f[n]['std_exact'][0]:.3f}° / {f[n]['std_exact'][1]:.2f} mm" for n in names)
    # the run whose sigma owes most to the intrinsics illustrates it
    k = max(names, key=lambda n: 1 - (f[n]["std_exact"][1] / f[n]["std"][1]) ** 2)
    d = f[k]
    text = (f"kinhec's σ is {std}; with `--intrinsics-std 0,0` (the intrinsics behind OpenCV's poses taken as exact) "
            f"{'they are' if len(names) > 1 else 'it is'} {exact}, the noise and the scale alone. The rest is the "
            f"assumed uncertainty of those intrinsics: {100 * d['depth_stretch']:.1f} % of the focal length is "
            f"{1e3 * d['depth_stretch'] * d['distance_m']:.1f} mm of depth at {k}'s {d['distance_m']:.2f} m from the "
            "board. The scale of the eye translations (± from the data alone): "
            + ", ".join(f"{n} {_pm(f[n]['scale'], f[n]['scale_data_std'])}" for n in names) + ".")
    # the run whose X the scale moves most
    k = max(names, key=lambda n: abs(f[n]["scale_moves_mm"]))
    d = f[k]
    dev = d["scale"] - 1
    away = "away from" if d["park_mm"] > d["park_held_mm"] else "towards"
    text += (f" {k}'s camera sees its robot move {100 * abs(dev):.1f} % {'farther' if dev > 0 else 'less far'} than "
             f"it does ({abs(dev) / d['scale_data_std']:.1f}σ), which moves `X` {abs(d['scale_moves_mm']):.1f} mm "
             f"along the optical axis {away} OpenCV's solvers (they take the board as stated; with the scale held at "
             f"1, `X` is {d['park_held_mm']:.2f} mm from Park).")
    for name, m, tr in far:
        text += f" OpenCV's {m.capitalize()} is {tr:.0f} mm off on {name}."
    return "\n".join(lines + ["", text]) + "\n"


def _reading_words(reading: list[str], ref: list[str]) -> str:
    """What sets ``reading`` apart from ``ref`` (options of the firewall's ranking), in words."""
    diff = [o for o in reading if o not in ref]
    if diff == ["--hand and --eye exchanged"]:
        return "the two files exchanged"
    if diff and diff[0].startswith("--hand-pose ") and not any("exchanged" in o for o in diff):
        return "the hand inverted"
    return "`" + " ".join(diff) + "`"


def render_eth_arm(f: dict) -> str:
    rank = f["ranking"]
    best = rank[0]
    eye_pose = next(o.split()[1] for o in best["reading"] if o.startswith("--eye-pose"))
    hand_pose = next(o.split()[1] for o in best["reading"] if o.startswith("--hand-pose"))
    # the same eye poses with the hand inverted (no files exchanged): X and Y exchange
    inv = next((x for x in rank if f"--eye-pose {eye_pose}" in x["reading"] and f"--hand-pose {hand_pose}" not in
                x["reading"] and not any("exchanged" in o for o in x["reading"])), None)
    frames = {"target_T_cam": ("target", "cam"), "cam_T_target": ("cam", "target")}[eye_pose]
    name = ""
    for value, why in f["name_claim"]:
        words = why.rsplit("(", 1)[-1].rstrip(")")
        name = (f"its name says so (`…_{words}`, ROS's `parent_child`), and " if tuple(value) == frames
                else f"against its name (`…_{words}`), ")
    rot, tr = f["other_eye_fit"]
    holds = "the camera in the target frame" if eye_pose == "target_T_cam" else "the target in the camera frame"
    text = (f"The eye file holds {holds} (`{eye_pose}`): {name}read the other way (`--eye-pose {f['other_eye']}`) "
            f"the motion fits `X` only to {rot}° / {tr} mm, against {best['fit_deg_mm'][0]:.2f}° / "
            f"{best['fit_deg_mm'][1]:.1f} mm.")
    ahead = (f"the convention check ranks it first (`inputs.conventions` in the JSON), "
             f"{best['score'] - rank[1]['score']:.1f} log units ahead of the next reading "
             f"({_reading_words(rank[1]['reading'], best['reading'])})")
    if inv is not None:
        same = inv["fit_deg_mm"] == best["fit_deg_mm"]
        text += (f" Inverting the hand poses instead fits {'exactly as well (`X` and `Y` exchange)' if same else 'about as well'}"
                 f", but only the eye poses read as `{eye_pose}` put the camera near the flange "
                 f"({1e3 * best['X_t_m']:.0f} mm against {1e3 * inv['X_t_m']:.0f} mm): {ahead}"
                 + (f" and {best['score'] - inv['score']:.1f} ahead of the hand inverted" if inv is not rank[1] else ""))
    else:
        text += f" {ahead[0].upper()}{ahead[1:]}"
    parts = [text + f", and `--hand-pose {f['other_hand']}` stops with `{f['hand_refused']}`."]
    if f["scanned"]:
        coarse = (f"The angular speeds of the two streams hardly correlate (peak {f['peak']:.2f}, below "
                  f"{f['min_peak']}), so the coarse offset comes from the pose-fit scan")
    else:
        coarse = (f"The angular speeds of the two streams correlate well (peak {f['peak']:.3f}), so the coarse offset "
                  "comes from their correlation")
    late = "camera stamps late" if f["offset_ms"] > 0 else "camera stamps early"
    parts.append(
        f"{coarse}, and the joint refinement gives **offset {_num(f['offset_ms'], '+.1f')} ± "
        f"{f['offset_std_ms']:.1f} ms** ({late}), X translation {_mm3(f['t_mm'])}, σ {f['std'][0]:.2f}° / {f['std'][1]:.1f} mm, "
        f"{f['n_outliers']} of {f['n_pairs']} pairs outliers, scale {_pm(*f['scale'])}.")
    if f["inflation"] > 1:
        parts.append(
            f"The residuals of this {f['eye_rate_hz']:.0f} Hz stream stay correlated over about {f['tau']:.0f} frames "
            f"(the PnP's pose-dependent errors along the arm's path; {f['effective_pairs']:.1f} independent stretches"
            f"{', flagged `drift`' if f['drift'] else ''}), which multiplies the variance of `X` by up to "
            f"{f['inflation']:.0f} (the σ by {np.sqrt(f['inflation']):.0f}): before the correlation counted, the σ "
            f"were {f['std_uninflated'][0]:.3f}° / {f['std_uninflated'][1]:.1f} mm ({f['std_noise'][0]:.4f}° / "
            f"{f['std_noise'][1]:.2f} mm from the noise, the rest the intrinsics' systematic error).")
    c = f["curve"]
    if abs(c["lowest_ms"]) < 0.5 * c["step_ms"]:
        shape = ("a single minimum there" if c["minima"] == 1 else f"{c['minima']} local minima, the lowest there")
        parts.append(f"The offset curve in the figure has {shape}, its cost {c['rise']:.1f} times as high one step "
                     f"({c['step_ms']:.0f} ms) to either side.")
    else:
        parts.append(f"The offset curve in the figure is lowest {_num(c['lowest_ms'], '+.0f')} ms from the estimate.")
    readme = -20.0  # the shared README's quick check: "near -0.02 s"
    (r, t), (rf, tf) = f["median"], f["median_flipped"]
    if np.sign(readme) != np.sign(f["offset_ms"]):
        size = "about the same magnitude" if 0.5 < abs(f["offset_ms"] / readme) < 2 else "another magnitude"
        parts.append(f'The shared README\'s quick check quotes "near −0.02 s": {size} with the opposite sign.')
    else:
        parts.append('The shared README\'s quick check quotes "near −0.02 s".')
    decides = ("decides between the two" if rf > r and tf > t else "favours −20 ms" if rf < r and tf < t
               else "hardly tells the two apart")
    parts.append(f"The pose fit {decides}: with the offset fixed at −20 ms (`--offset -0.02`) the median residuals are "
                 f"{rf:.2f}° / {tf:.1f} mm, against {r:.2f}° / {t:.1f} mm at {_num(f['offset_ms'], '+.0f')} ms.")
    return parts[0] + "\n\n" + " ".join(parts[1:]) + "\n"


def render_prime_sense(f: dict) -> str:
    (o1, o2), (s1, s2) = f["offsets_ms"], f["offset_std_ms"]
    scales = [s for s, _ in f["scale"]]
    pct = [f"{100 * abs(s - 1):.1f} %" for s in scales]
    if all(s < 1 for s in scales) or all(s > 1 for s in scales):
        move = f"Both camera streams move {' and '.join(pct)} {'less' if scales[0] < 1 else 'more'} than the Vicon body"
    else:
        move = "The camera streams move " + " and ".join(f"{p} {'less' if s < 1 else 'more'}" for p, s in zip(pct, scales)) + \
               " than the Vicon body"
    warned = f["scale_warned"]
    warn = ("a warning each" if all(warned) else "no warning" if not any(warned) else
            "a warning for " + " and ".join(n for n, w in zip(f["names"], warned) if w))
    within = "within" if f["difference_z"] <= 3 else "beyond"
    return (
        f"The Vicon files repeat a few stamps ({f['repeated'][0]} and {f['repeated'][1]}); they are dropped and "
        f"reported. Offsets {_num(o1, '+.1f')} ± {s1:.1f} ms and {_num(o2, '+.1f')} ± {s2:.1f} ms. {move} (scale "
        f"{' and '.join(_pm(*s) for s in f['scale'])}: {warn}); for those scales `X` translates by "
        f"{' and '.join(_mm3(t) for t in f['t_mm'])}, σ {_and([f'{m:.1f}' for m in f['std_mm']], ' mm')} (with the "
        f"scale held at 1 they were {' and '.join(_mm3(t) for t in f['t_held_mm'])}, σ "
        f"{_and([f'{m:.1f}' for m in f['std_held_mm']], ' mm')}). The two runs differ by {f['difference_mm']:.1f} mm, "
        f"{f['difference_z']:.1f}σ of their difference ({within} 3σ).\n"
    )


def render_mistakes(doc: dict) -> str:
    """The mistake fuzzer's table from its stored ``--json`` output (``benchmarks/mistakes.py``)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("mistakes", REPO / "benchmarks" / "mistakes.py")
    mk = sys.modules.get("mistakes") or importlib.util.module_from_spec(spec)
    if "mistakes" not in sys.modules:
        sys.modules["mistakes"] = mk
        spec.loader.exec_module(mk)
    s, n_all = doc["summary"], doc["runs_in_catalogue"]
    n = s["total"]["runs"]
    recs = doc["recordings"]
    n_real = sum(r["kind"] == "real" for r in recs)
    scope = (f"All {n} runs" if n == n_all else
             f"A sample of {n} of the {n_all} runs (`--sample {doc['sample']} --seed {doc['seed']}`: that many runs "
             f"with mistakes drawn, and every unmodified one; the whole catalogue is yet to be run and stored)")
    if doc.get("only"):
        scope += f", runs with `{doc['only']}` only"
    out = [f"{scope}, on {len(recs)} recordings ({n_real} real: {', '.join(r['name'] for r in recs if r['kind'] == 'real')}; "
           f"{len(recs) - n_real} generated), {s['cpu_s_total']:.0f} s of CPU (median {s['cpu_s_per_run_median']:.2f} s "
           "per run). Each row counts the runs that include the mistake (a pair counts in both rows); \"refused, "
           "unstated\" is the share refused among the runs without the user's statements.", "", mk.table(s), ""]
    out += [line[0].upper() + line[1:] + "." for line in mk.acceptance(s)]
    wrong = [r for r in doc["runs"] if r["outcome"] == "wrong"]
    if wrong:
        shown = wrong[:12]
        out += ["", "The exit-0 wrong answers" + (f" (the first {len(shown)} of {len(wrong)})" if len(wrong) > len(shown)
                                                  else "") + ", each reproduced by `python benchmarks/mistakes.py "
                "--write 'RECORDING|MISTAKE+MISTAKE|STATED' DIR` and the command it prints:", "", "| run (recording, mistakes, statements) | what was wrong |",
                "|---|---|"]
        out += [f"| `{r['recording']}`, {' + '.join(f'`{m}`' for m in r['mistakes']) or 'unmodified'}, {r['mode']} | "
                f"{r['why']} |" for r in shown]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- #
# a machine that turns about one axis: a generated SCARA recording
# --------------------------------------------------------------------------- #
#: The SCARA recording of the page: seed and stations of ``helpers.recordings.one_axis_recording``.
ONE_AXIS_SEED, ONE_AXIS_STATIONS = 7, 20
ONE_AXIS_RUN = ["calibrate", "--hand", "scara_hand.txt", "--eye", "scara_eye.txt", "--setup", "eye_in_hand"]


def one_axis_runs() -> dict:
    """``kinhec calibrate`` on a generated SCARA recording (camera on the flange, 20 stations): without an option,
    with ``--known X.tz=0.080`` (the truth) and with ``--partial``; exit codes, printed lines and the truth."""
    import os
    import sys

    from click.testing import CliRunner

    from kinhec.cli import main

    sys.path.insert(0, str(REPO / "tests"))
    try:
        from helpers.recordings import one_axis_recording, write_matrices
    finally:
        sys.path.remove(str(REPO / "tests"))
    A, C, X, Y = one_axis_recording(np.random.default_rng(ONE_AXIS_SEED), "scara", "eye_in_hand", ONE_AXIS_STATIONS)
    out, cwd = {"X": X, "Y": Y}, os.getcwd()
    with tempfile.TemporaryDirectory(prefix="kinhec_one_axis_doc_") as tmp:
        try:
            os.chdir(tmp)
            write_matrices(Path("scara_hand.txt"), A)
            write_matrices(Path("scara_eye.txt"), C)
            for key, extra in (("refused", []), ("known", ["--known", "X.tz=0.080"]), ("partial", ["--partial"])):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = CliRunner().invoke(main, ONE_AXIS_RUN + extra)
                out[key] = (r.exit_code, r.stdout, r.stderr, extra)
        finally:
            os.chdir(cwd)
    return out


def render_one_axis(runs: dict) -> str:
    """The three runs as console output: the refusal's error line; the stated run's and the partial run's ``X``,
    ``Y``, standard deviations, the note on the axis and the verdict (the other lines elided)."""
    lines = []
    keep = ("T_ee_cam", "   ", "  quat", "  std", "T_base_target", "pairs:", "undetermined", "note: the hand rotates",
            "X determined", "X and Y determined")
    for key in ("refused", "known", "partial"):
        code, stdout, stderr, extra = runs[key]
        lines.append("$ kinhec " + " ".join(ONE_AXIS_RUN + extra))
        if key == "refused":
            lines += [s for s in stderr.rstrip("\n").split("\n") if s]
            lines.append(f"(exit {code})")
            continue
        shown = [s for s in stdout.rstrip("\n").split("\n") if s.startswith(keep)]
        lines += shown
        lines.append(f"... (exit {code})")
    return "```\n" + "\n".join(lines) + "\n```\n"


def mistakes_facts(path: Path = MISTAKES) -> dict:
    return json.loads(Path(path).read_text())


def blocks(corners: dict | None = None) -> dict[str, str]:
    """Every block of the page, recomputed (``corners``: results of :func:`corners_results`, if at hand)."""
    return {
        "calibrate.mistakes": render_mistakes(mistakes_facts()),
        "calibrate.one-axis": render_one_axis(one_axis_runs()),
        "calibrate.corners": render_corners(corners if corners is not None else corners_results()),
        "calibrate.tabb": render_tabb(tabb_facts()),
        "calibrate.rwhe": render_rwhe(rwhe_facts()),
        "calibrate.eth-arm": render_eth_arm(eth_arm_facts()),
        "calibrate.prime-sense": render_prime_sense(prime_sense_facts()),
    }
