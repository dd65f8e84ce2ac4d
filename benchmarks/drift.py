"""``kinhec check`` on recordings whose mount is knocked or drifts: detection, attribution, delay, false alarms.

Generated recordings (the calibrate tests' station recording, ``STATIONS`` of ``tests/helpers/recordings.py``: UR5e,
eye-in-hand, look-at stations, Gaussian robot and camera pose noise) of ``--n-cal + --n-check`` stations, each
seeded by its index: ``kinhec.calibrate.calibrate`` on the first ``--n-cal`` stations, its JSON read back as
``kinhec check`` reads it, then the test (:func:`kinhec.calibrate.check.consistency`) on the other
``--n-check`` stations

* as recorded (false alarms);
* with ``X`` or ``Y`` knocked (:func:`kinhec.synth.drift.with_mount_change`) from the first checked station on: a
  rotation about, or a translation along, one axis drawn per recording, of 1, 2, 4, 8 standard deviations of the
  stored calibration (its ``X_std`` / ``Y_std`` of that component) and of 0.2, 1, 5 mm / 0.02, 0.2, 1 deg;
* knocked by 4 sigma after ``--delay-after`` clean stations, tested on the first ``k`` checked stations for
  growing ``k``: the delay is the number of knocked stations until the first rejection (each look at ``alpha``);
* drifting linearly over the checked stations to 8 sigma (a slow drift).

With ``--real`` also the real recordings of ``tests/data/realdata`` split in halves (first half calibrated,
second half checked): RWHE kuka_1 / kuka_2, Tabb DS1, ETH-ASL robot_arm_real.

    python benchmarks/drift.py --recordings 100 [--n-cal 25 --n-check 25] [--real] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from kinhec.geometry import se3  # noqa: E402
from kinhec.calibrate import calibrate  # noqa: E402
from kinhec.calibrate import check as ck  # noqa: E402
from kinhec.synth.drift import with_mount_change  # noqa: E402
from kinhec.synth.generator import simulate  # noqa: E402

SIGMAS = (1, 2, 4, 8)
ABS = {"rot": (np.radians(0.02), np.radians(0.2), np.radians(1.0)), "trans": (2e-4, 1e-3, 5e-3)}
KINDS = [("X", "rot"), ("X", "trans"), ("Y", "rot"), ("Y", "trans")]


def _stations():
    from helpers.recordings import STATIONS

    return STATIONS


def _write(path, T):
    np.savetxt(path, T.reshape(-1, 16), fmt="%.12g")


def _test(stored, A, T_cam_target, alpha):
    B = se3.invert_transform(T_cam_target, check=False)
    r, J = ck.residuals_and_jacobian(A, B, stored.X, stored.Y, stored.scale, stored.inverse_domain)
    return ck.consistency(r, J, stored.cov, stored.noise_std, stored.noise_dof, alpha, stored.tau)


def one_recording(seed: int, n_cal: int, n_check: int, alpha: float, delay_after: int, tmp: Path) -> dict:
    g = simulate(dict(_stations(), seed=10_000 + seed, n_stations=n_cal + n_check))
    A, T = g.T_base_ee_meas, g.T_cam_target_meas
    _write(tmp / "h.txt", A[:n_cal])
    _write(tmp / "e.txt", T[:n_cal])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = calibrate(tmp / "h.txt", tmp / "e.txt", fmt="rwhe", eye_pose="cam_T_target", setup="eye_in_hand")
    res.write_json(tmp / "c.json")
    stored = ck.load_calibration(tmp / "c.json")
    stored_std = {"X": res.X_std, "Y": res.Y_std}
    out = {"seed": seed, "determined": bool(res.determined), "clean": None, "steps": [], "delay": [], "drift": []}
    c = _test(stored, A[n_cal:], T[n_cal:], alpha)
    out["clean"] = {"rejected": not c.consistent, "p": c.p_value}
    rng = np.random.default_rng(seed)
    for which, part in KINDS:
        axis = int(rng.integers(3))
        k = axis + (0 if part == "rot" else 3)
        sig = float(stored_std[which][k])
        sizes = [("sigma", s, s * sig) for s in SIGMAS] + [("abs", a, a) for a in ABS[part]]
        for unit, label, size in sizes:
            d = np.zeros(6)
            d[k] = size
            mc = with_mount_change(g, start=n_cal, **{f"d{which}": d})
            c = _test(stored, A[n_cal:], mc.T_cam_target_meas[n_cal:], alpha)
            blk = c.changed.get(which) or {}
            est = blk.get("rot_deg" if part == "rot" else "trans_mm")
            est_std = blk.get("rot_std_deg" if part == "rot" else "trans_std_mm")
            true = np.degrees(size) if part == "rot" else 1000 * size
            out["steps"].append({"which": which, "part": part, "unit": unit, "label": label, "size": size,
                                 "sigma_stored": sig, "detected": not c.consistent, "named": c.named,
                                 "est": None if est is None else est[axis], "est_std": None if est_std is None else est_std[axis],
                                 "true": true})  # fmt: skip
        # a knock of 4 sigma after delay_after clean stations: delay in stations until the first rejection
        d = np.zeros(6)
        d[k] = 4 * sig
        mc = with_mount_change(g, start=n_cal + delay_after, **{f"d{which}": d})
        first = None
        for m in range(delay_after + 1, n_check + 1):
            c = _test(stored, A[n_cal:n_cal + m], mc.T_cam_target_meas[n_cal:n_cal + m], alpha)
            if not c.consistent:
                first = m - delay_after
                break
        out["delay"].append({"which": which, "part": part, "delay": first})
        # a slow drift to 8 sigma over the checked stations
        d[k] = 8 * sig
        mc = with_mount_change(g, start=n_cal, ramp_frames=n_check, **{f"d{which}": d})
        c = _test(stored, A[n_cal:], mc.T_cam_target_meas[n_cal:], alpha)
        out["drift"].append({"which": which, "part": part, "detected": not c.consistent, "named": c.named})
    return out


def summarise(rows: list, alpha: float) -> dict:
    n = len(rows)
    fa = sum(r["clean"]["rejected"] for r in rows)
    summ = {"recordings": n, "alpha": alpha, "false_alarms": fa, "false_alarm_rate": fa / max(n, 1), "steps": {},
            "delay": {}, "drift": {}}  # fmt: skip
    for which, part in KINDS:
        for unit, labels in (("sigma", SIGMAS), ("abs", ABS[part])):
            for label in labels:
                s = [x for r in rows for x in r["steps"] if (x["which"], x["part"], x["unit"], x["label"]) == (which, part, unit, label)]
                det = [x for x in s if x["detected"]]
                right = sum(x["named"] == which for x in det)
                z = [abs(x["est"] - x["true"]) / x["est_std"] for x in s if x["est"] is not None and x["est_std"]]
                key = f"{which} {part} " + (f"{label} sigma" if unit == "sigma" else
                                            (f"{np.degrees(label):g} deg" if part == "rot" else f"{1000 * label:g} mm"))
                summ["steps"][key] = {"n": len(s), "detected": len(det), "named_right": right,
                                      "median_size": float(np.median([x["true"] for x in s])),
                                      "within_1sigma": float(np.mean(np.array(z) < 1)) if z else None}  # fmt: skip
        dl = [x["delay"] for r in rows for x in r["delay"] if (x["which"], x["part"]) == (which, part)]
        found = [v for v in dl if v is not None]
        summ["delay"][f"{which} {part}"] = {"n": len(dl), "found": len(found),
                                            "median": float(np.median(found)) if found else None,
                                            "p90": float(np.percentile(found, 90)) if found else None}  # fmt: skip
        dr = [x for r in rows for x in r["drift"] if (x["which"], x["part"]) == (which, part)]
        summ["drift"][f"{which} {part}"] = {"n": len(dr), "detected": sum(x["detected"] for x in dr),
                                            "named_right": sum(x["detected"] and x["named"] == which for x in dr)}
    return summ


# --------------------------------------------------------------------------- #
# real recordings split in halves
# --------------------------------------------------------------------------- #
def _real_halves(tmp: Path):
    from helpers.paths import REALDATA as DATA

    from kinhec.calibrate.readers import read_stream

    out = []
    for name in ("kuka_1", "kuka_2"):
        ref = json.loads((DATA / "rwhe_calib" / name / "opencv_reference_calibration.json").read_text())
        E = np.array([v["T_cam_target"] for v in ref["per_view"]], dtype=float)
        H = read_stream(DATA / "rwhe_calib" / name / "RobotPosesVec.txt", "rwhe").T
        out.append((name, H, E, dict(fmt="rwhe", hand_pose="base_T_ee", eye_pose="cam_T_target", setup="eye_in_hand")))
    h = read_stream(DATA / "tabb_ds1" / "robot_cali.txt", "tabb")
    e = read_stream(DATA / "tabb_ds1" / "cali.txt", "tabb")
    H = se3.invert_transform(h.T, check=False)
    H[:, :3, 3] /= 1000
    E = e.T.copy()
    E[:, :3, 3] /= 1000
    out.append(("tabb_ds1", H, E, dict(fmt="rwhe", hand_pose="base_T_ee", eye_pose="cam_T_target", setup="eye_in_hand")))
    rows = []
    for name, H, E, kw in out:
        m = len(H) // 2
        for part, sl in (("1", slice(0, m)), ("2", slice(m, None))):
            _write(tmp / f"{name}_h{part}.txt", H[sl])
            _write(tmp / f"{name}_e{part}.txt", E[sl])
        rows.append((name, tmp / f"{name}_h1.txt", tmp / f"{name}_e1.txt", tmp / f"{name}_h2.txt",
                     tmp / f"{name}_e2.txt", kw))  # fmt: skip
    eth = DATA / "ethz_asl" / "robot_arm_real"
    hf = next(eth.glob("*hinge.csv"))
    ef = next(eth.glob("*target_ir.csv"))
    th = np.loadtxt(hf, delimiter=",", usecols=0)
    te = np.loadtxt(ef, delimiter=",", usecols=0)
    mid = te[len(te) // 2]
    for f, t, tag in ((hf, th, "h"), (ef, te, "e")):
        lines = f.read_text().splitlines()
        (tmp / f"eth_{tag}1.csv").write_text("\n".join(l for l, s in zip(lines, t) if s < mid) + "\n")
        (tmp / f"eth_{tag}2.csv").write_text("\n".join(l for l, s in zip(lines, t) if s >= mid) + "\n")
    rows.append(("eth_robot_arm_real", tmp / "eth_h1.csv", tmp / "eth_e1.csv", tmp / "eth_h2.csv", tmp / "eth_e2.csv",
                 dict(fmt="eth", eye_pose="target_T_cam", setup="eye_in_hand")))  # fmt: skip
    return rows


def real(alpha: float, tmp: Path) -> list:
    res = []
    for name, h1, e1, h2, e2, kw in _real_halves(tmp):
        t0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cal = calibrate(h1, e1, **kw)
        cal.write_json(tmp / f"{name}.json")
        try:
            c, stored, _ = ck.check(tmp / f"{name}.json", h2, e2, alpha=alpha)
        except Exception as exc:  # noqa: BLE001 -- reported, not hidden
            res.append({"name": name, "error": str(exc)})
            continue
        res.append({"name": name, "n_cal": cal.n_pairs, "n_check": c.n_pairs, "consistent": c.consistent,
                    "p_value": c.p_value, "named": c.named, "tau": stored.tau, "stat": c.stat,
                    "X_change_deg_mm": [c.changed["X"].get("angle_deg"), c.changed["X"].get("distance_mm")],
                    "Y_change_deg_mm": [c.changed["Y"].get("angle_deg"), c.changed["Y"].get("distance_mm")],
                    "cpu_s": time.process_time() - t0})  # fmt: skip
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recordings", type=int, default=50)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--n-cal", type=int, default=25)
    ap.add_argument("--n-check", type=int, default=25)
    ap.add_argument("--delay-after", type=int, default=5)
    ap.add_argument("--alpha", type=float, default=0.01)
    ap.add_argument("--real", action="store_true")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    rows = []
    t0 = time.process_time()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for s in range(a.first_seed, a.first_seed + a.recordings):
            rows.append(one_recording(s, a.n_cal, a.n_check, a.alpha, a.delay_after, tmp))
        summ = summarise(rows, a.alpha)
        summ.update(n_cal=a.n_cal, n_check=a.n_check, delay_after=a.delay_after, first_seed=a.first_seed,
                    cpu_s=time.process_time() - t0)  # fmt: skip
        if a.real:
            summ["real"] = real(a.alpha, tmp)
    print(json.dumps(summ, indent=1))
    if a.json:
        Path(a.json).write_text(json.dumps({"summary": summ, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
