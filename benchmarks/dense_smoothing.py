"""``kinhec calibrate`` on noisy dense robot streams, with and without the denser stream smoothed before pairing.

Usage::

    python benchmarks/dense_smoothing.py DATA [--n 80] [--jobs 2]
        [--query "track=='mixed' and sync=='asynchronous' and robot_rate_hz>=250 and robot_rot_std_rad>=0.0005"]

``DATA`` is a generated dataset (the figures in docs/calibrate.md come from the full tier, ``kinhec generate
--tier full``; ``--limit 600`` of it holds 29 such sequences).  ``--n`` sequences matching ``--query`` (evenly spread
over the matches) are exported as a user has them (``kinhec export --format tum``) and calibrated with their set-up
stated, twice: as calibrate runs (the denser stream smoothed, :mod:`kinhec.calibrate.dense_smoothing`) and with
the smoothing switched off.  For each, over the runs that return a determined answer: the clock offset's error over
its standard deviation (root mean square, and how many beyond 3), the NEES of ``X`` (6 dof: mean, and how many beyond
chi2_6's 99.9 % quantile) and the median translation error of ``X`` -- for all of them and for those without
kinematic (``dh_error``) robot errors, which calibrate does not count unless told (``--robot-accuracy``).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from kinhec import io  # noqa: E402
from kinhec.calibrate import calibrate  # noqa: E402
from kinhec.calibrate import pairing as pr  # noqa: E402
from kinhec.dataset.export import export_sequence  # noqa: E402
from kinhec.geometry import se3  # noqa: E402
from kinhec.util.errors import KinhecError  # noqa: E402

#: 99.9 % quantile of the chi-square distribution with 6 degrees of freedom.
CHI2_6_999 = 22.4577
QUERY = "track=='mixed' and sync=='asynchronous' and robot_rate_hz>=250 and robot_rot_std_rad>=0.0005"


def _run(hand, eye, seq, smooth: bool) -> dict:
    pr.TimePairing.__init__.__kwdefaults__["smooth"] = smooth
    try:
        res = calibrate(hand, eye, setup=seq.configuration)
    except KinhecError as exc:
        return {"error": str(exc)[-160:]}
    e = np.r_[se3.so3_log(res.X[:3, :3].T @ seq.X[:3, :3]), seq.X[:3, 3] - res.X[:3, 3]]
    out = {"determined": bool(res.determined), "nees": float(e @ np.linalg.solve(res.cov[:6, :6], e)),
           "X_mm": float(1000 * np.linalg.norm(e[3:]))}
    if res.time_offset_std_s:
        out["offset_z"] = float((res.time_offset_s - seq.time_offset) / res.time_offset_std_s)
    return out


def one(args) -> dict:
    root, sid = args
    warnings.simplefilter("ignore")
    seq = io.load_sequence(root, sid)
    with tempfile.TemporaryDirectory() as tmp:
        files = export_sequence(root, sid, "tum", Path(tmp))
        hand = next(p for p in files if p.name.endswith("_base_ee_meas.tum"))
        eye = next(p for p in files if p.name.endswith("_meas.tum") and p != hand)
        row = {"sid": sid, "dh_error": "dh_error" in str(seq.info["robot_noise_models"])}
        row["smoothed"], row["raw"] = _run(hand, eye, seq, True), _run(hand, eye, seq, False)
    return row


def _summary(rows: list, key: str) -> str:
    runs = [r[key] for r in rows]
    det = [x for x in runs if x.get("determined")]
    z = np.array([x["offset_z"] for x in det if "offset_z" in x])
    nees = np.array([x["nees"] for x in det])
    if not det:
        return f"{len(runs)} runs, none determined"
    return (f"{len(det)}/{len(runs)} determined, {sum('error' in x for x in runs)} refused; offset z RMS "
            f"{np.sqrt(np.mean(z**2)):.2f} ({int((np.abs(z) > 3).sum())} beyond 3); NEES mean {nees.mean():.2f} "
            f"({int((nees > CHI2_6_999).sum())} beyond {CHI2_6_999:g}); median X error "
            f"{np.median([x['X_mm'] for x in det]):.3f} mm")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--n", type=int, default=80)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--query", default=QUERY)
    args = ap.parse_args()
    man = io.load_manifest(args.data).query(args.query)
    if man.empty:
        raise SystemExit(f"{args.data}: no sequence matches {args.query!r}")
    ids = list(man.sequence_id.iloc[:: max(1, len(man) // args.n)][: args.n])
    with ProcessPoolExecutor(args.jobs) as ex:
        rows = list(ex.map(one, [(args.data, s) for s in ids]))
    print(f"{len(rows)} sequences of {args.data} ({args.query})")
    for label, sub in (("all", rows), ("without dh_error", [r for r in rows if not r["dh_error"]])):
        print(f"{label} ({len(sub)}):")
        print(f"  smoothed: {_summary(sub, 'smoothed')}")
        print(f"  raw:      {_summary(sub, 'raw')}")


if __name__ == "__main__":
    main()
