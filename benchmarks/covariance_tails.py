"""Do ``kinhec calibrate``'s covariances of ``X`` and ``Y`` hold in their tails?  NEES over seeded station recordings.

Usage::

    python benchmarks/covariance_tails.py [--seeds 200] [--first 100] [--stations 25 50 100]
                                          [--setups eye_in_hand eye_to_hand] [--full-noise-dof N] [--jobs 2]

The recordings are the mistake fuzzer's unstamped stations (``benchmarks/mistakes.py``: a UR5e at look-at
stations, robot and camera noise of the generator, 4x4 text files), one per seed, setup and number of stations,
calibrated as the correctly stated, unmodified run of the fuzzer would be (:func:`kinhec.calibrate.calibrate`
on the files it writes).  For each result: the NEES ``e^T inv(C) e`` of ``X``, of ``Y`` (six degrees of freedom
each; ``e = (log(R_est^T R_true), t_true - t_est)``, the perturbation calibrate states its covariance in) and
of both together (12), from the reported covariance ``C``, and the fuzzer's criterion: the rotation error and
the translation distance against 3 times the norm of their standard deviations (``ratio`` > 1 fails it).

An honest covariance gives a mean NEES of 6 (12) and about 1 % and 0.1 % of the results beyond the chi-square
quantiles of 99 % and 99.9 %; a covariance that is right on average but estimated from too few residuals gives
the right mean and a heavy tail.  ``--full-noise-dof N`` sets the residual degrees of freedom from which calibrate
estimates the full 6x6 noise covariance instead of its diagonal (``kinhec.calibrate.solve.FULL_NOISE_DOF``,
20 as shipped) for this measurement only, so the two noise models compare on the same recordings.

BLAS threads are pinned to one per worker.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from honest_sigma import right_error  # noqa: E402  (benchmarks/honest_sigma.py: the error in calibrate's perturbation)

from kinhec.util.distributions import chi2_ppf  # noqa: E402


def one(job: tuple) -> dict:
    """Calibrate one recording (seed, setup, stations, full-model dof) and measure its errors."""
    seed, setup, stations, full_dof = job
    warnings.simplefilter("ignore")
    import mistakes as mk  # (benchmarks/mistakes.py: the recordings and the files the fuzzer writes)

    import kinhec.calibrate.solve as solve
    from kinhec.calibrate import calibrate

    if full_dof is not None:
        solve.FULL_NOISE_DOF = float(full_dof)
    mk.STATIONS["n_stations"] = stations
    name = f"gen_{'eih' if setup == 'eye_in_hand' else 'eth'}_stations_{seed}"
    rec = next(r for r in mk.generated_recordings((seed,)) if r.name == name)
    with tempfile.TemporaryDirectory(prefix="kinhec-tails-") as tmp:
        argv = mk.write_case(mk.make_case(rec, mk.Run(rec.name, (), "stated")), Path(tmp))
        opts = dict(zip((a[2:].replace("-", "_") for a in argv[1::2]), argv[2::2]))
        try:
            res = calibrate(opts.pop("hand"), opts.pop("eye"), **opts)
        except Exception as exc:  # a refusal counts as such, not as an error bar
            return dict(seed=seed, setup=setup, stations=stations, full_dof=full_dof, error=f"{type(exc).__name__}")
    e = np.concatenate([right_error(res.X, rec.X), right_error(res.Y, rec.Y)])
    C = res.cov[:12, :12]
    out = dict(seed=seed, setup=setup, stations=stations, full_dof=full_dof)
    for name, sl in (("X", slice(0, 6)), ("Y", slice(6, 12)), ("XY", slice(0, 12))):
        out[name] = float(e[sl] @ np.linalg.solve(C[sl, sl], e[sl]))
    ratios = []
    for T, Tt, std in ((res.X, rec.X, res.X_std), (res.Y, rec.Y, res.Y_std)):
        ratios.append(mk._within(T, Tt, std)[1])
    out["ratio"] = float(max(ratios))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--first", type=int, default=100, help="first seed (the fuzzer's stored sample uses 11 and 12)")
    ap.add_argument("--stations", type=int, nargs="+", default=[25, 50, 100])
    ap.add_argument("--setups", nargs="+", default=["eye_in_hand", "eye_to_hand"],
                    choices=["eye_in_hand", "eye_to_hand"])
    ap.add_argument("--full-noise-dof", type=float, nargs="+", default=[None],
                    help="FULL_NOISE_DOF values to compare (default: as shipped)")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    jobs = [(s, st, n, f) for f in a.full_noise_dof for st in a.setups for n in a.stations
            for s in range(a.first, a.first + a.seeds)]
    if a.jobs > 1:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(a.jobs) as pool:
            results = pool.map(one, jobs, chunksize=4)
    else:
        results = [one(j) for j in jobs]
    print(f"NEES of calibrate's X and Y over {a.seeds} seeded station recordings per row (seeds {a.first}-"
          f"{a.first + a.seeds - 1}); beyond q99 / q99.9: share of results past chi-square's 99 % / 99.9 % "
          "quantile (1 % / 0.1 % when honest); 3σ fails: the fuzzer's criterion")
    print(f"{'setup':12s} {'stations':>8s} {'full dof':>8s} {'ok':>4s} | "
          + " | ".join(f"{n:>2s}: mean  >q99  >q99.9" for n in ("X", "Y", "XY")) + " | 3σ fails")
    for f in a.full_noise_dof:
        for st in a.setups:
            for n in a.stations:
                rows = [r for r in results if r["setup"] == st and r["stations"] == n and r["full_dof"] == f]
                ok = [r for r in rows if "error" not in r]
                if not ok:
                    print(f"{st:12s} {n:8d} {'as is' if f is None else f'{f:g}':>8s} {0:4d} | (none returned)")
                    continue
                cells = []
                for name, k in (("X", 6), ("Y", 6), ("XY", 12)):
                    v = np.array([r[name] for r in ok])
                    q99, q999 = chi2_ppf(0.99, k), chi2_ppf(0.999, k)
                    cells.append(f"{v.mean():8.2f} {np.mean(v > q99):5.3f} {np.mean(v > q999):6.3f}")
                fails = sum(r["ratio"] > 1.0 for r in ok)
                print(f"{st:12s} {n:8d} {'as is' if f is None else f'{f:g}':>8s} {len(ok):4d} | "
                      + " | ".join(cells) + f" | {fails}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
