"""What compiled code would save in ``he_ml``'s restricted variance components: a measurement, not a feature.

Usage::

    pip install numba        # in a scratch environment: numba is not a dependency of kinhec
    python benchmarks/bench_compiled_components.py COPY [--repeats 3]

``COPY`` is a dataset folder (a copy of ``../shared/published/smoke`` or a
generated tier).  ``he_ml`` spends a large part of its time estimating its variance
components (:func:`kinhec.solvers.he_ml_stages.variance_components.restricted_components`):
Newton steps on a restricted likelihood whose every evaluation is a handful of
numpy calls on (n, 6, 6) stacks, so per-call overhead, not arithmetic, sets its
cost.  This script replaces the three functions of one likelihood evaluation
(``sigma``, ``whitener`` and ``_weighted_fit``) by loops compiled with numba,
keeping their signatures, so the iteration itself is the project's own; the
step's score and information (``_information``) stay in numpy, where batched BLAS is
already as fast as a compiled loop.  It prints

* numba's import and compile times (what every new worker process would pay);
* per evaluation of the likelihood, numpy against compiled, over the calls of
  one pass over ``COPY``, and the largest relative difference of the estimated
  components (round-off only: the same algorithm);
* ``he_ml``'s CPU over ``COPY`` (every sequence, in one process) with each, the
  time inside the variance components, and what ``he_ml`` would cost with them
  free: the bound that compiling this stage alone cannot beat.

BLAS is pinned to one thread before numpy is imported.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import contextlib  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from kinhec.solvers.he_ml_stages import variance_components as vc  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _phases import phase_breakdown  # noqa: E402  (benchmarks/_phases.py)


def _compiled():
    """The three compiled replacements (by the names they replace) and numba's import and compile seconds."""
    t0 = time.perf_counter()
    import numba

    t_import = time.perf_counter() - t0

    @numba.njit
    def sigma_c(theta, Q):
        k, n = Q.shape[0], Q.shape[1]
        S = np.zeros((n, 6, 6))
        for i in range(n):
            for c in range(k):
                t = theta[c]
                for u in range(6):
                    for v in range(6):
                        S[i, u, v] += t * Q[c, i, u, v]
            for u in range(6):
                S[i, u, u] += 1e-16
        return S

    @numba.njit
    def whitener_c(S):
        # per pair: Cholesky factor L, its inverse by forward substitution, W = inv(L)^T inv(L), log det S
        n = S.shape[0]
        Linv = np.zeros((n, 6, 6))
        W = np.empty((n, 6, 6))
        logdet = np.empty(n)
        L = np.zeros((6, 6))
        for i in range(n):
            for u in range(6):
                for v in range(u + 1):
                    s = S[i, u, v]
                    for m in range(v):
                        s -= L[u, m] * L[v, m]
                    if u == v:
                        if not s > 0.0:
                            raise np.linalg.LinAlgError("Matrix is not positive definite")
                        L[u, u] = math.sqrt(s)
                    else:
                        L[u, v] = s / L[v, v]
            ld = 0.0
            for u in range(6):
                d = 1.0 / L[u, u]
                for v in range(u):
                    s = 0.0
                    for m in range(v, u):
                        s += L[u, m] * Linv[i, m, v]
                    Linv[i, u, v] = -d * s
                Linv[i, u, u] = d
                ld -= 2.0 * math.log(d)
            logdet[i] = ld
            for u in range(6):
                for v in range(6):
                    s = 0.0
                    for m in range(max(u, v), 6):
                        s += Linv[i, m, u] * Linv[i, m, v]
                    W[i, u, v] = s
        return Linv, W, logdet

    @numba.njit
    def fit_c(r, W, w, J):
        # WJ, H = sum w J^T W J and the gradient sum w (W J)^T r, pair by pair
        n, p = J.shape[0], J.shape[2]
        WJ = np.empty((n, 6, p))
        H = np.zeros((p, p))
        g = np.zeros(p)
        for i in range(n):
            for u in range(6):
                for c in range(p):
                    s = 0.0
                    for m in range(6):
                        s += W[i, u, m] * J[i, m, c]
                    WJ[i, u, c] = s
            for c in range(p):
                for e in range(p):
                    s = 0.0
                    for m in range(6):
                        s += J[i, m, c] * WJ[i, m, e]
                    H[c, e] += w[i] * s
                s = 0.0
                for m in range(6):
                    s += r[i, m] * WJ[i, m, c]
                g[c] += w[i] * s
        return WJ, 0.5 * (H + H.T), g

    def weighted_fit(r, W, w, J):
        WJ, H, g = fit_c(np.ascontiguousarray(r), W, w, np.ascontiguousarray(J))
        step, logdet_h, Vk, evk = vc.pseudo_step(H, g)
        return r - J @ step, logdet_h, (w, WJ, Vk, evk)

    def sigma(theta, Q):
        return sigma_c(np.ascontiguousarray(theta, dtype=np.float64), Q)

    # compile on a small problem
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    Q = np.ascontiguousarray(np.broadcast_to(np.eye(6), (2, 3, 6, 6)))
    _, W, _ = whitener_c(sigma(np.ones(2), Q))
    weighted_fit(rng.normal(size=(3, 6)), W, np.ones(3), rng.normal(size=(3, 6, 12)))
    t_compile = time.perf_counter() - t0
    return {"sigma": sigma, "whitener": whitener_c, "_weighted_fit": weighted_fit}, t_import, t_compile


@contextlib.contextmanager
def _patched(**fns):
    """Inside the block, the functions of :mod:`~kinhec.solvers.he_ml_stages.variance_components` named by ``fns``
    replaced by them."""
    saved = {name: getattr(vc, name) for name in fns}
    for name, f in fns.items():
        setattr(vc, name, f)
    try:
        yield
    finally:
        for name, f in saved.items():
            setattr(vc, name, f)


def _record_calls(copy: Path) -> list:
    """The arguments of every ``restricted_components`` call of one pass over ``copy``."""
    calls = []
    original = vc.restricted_components

    def recording(*args, **kwargs):
        calls.append((args, kwargs))
        return original(*args, **kwargs)

    with _patched(restricted_components=recording):
        phase_breakdown(copy)
    return calls


def _he_ml_pass(copy: Path) -> tuple[float, float]:
    """``he_ml``'s CPU seconds over ``copy`` and the CPU inside ``restricted_components`` (one process)."""
    inside = [0.0]
    original = vc.restricted_components

    def timed(*args, **kwargs):
        t0 = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            inside[0] += time.process_time() - t0

    with _patched(restricted_components=timed):
        total = phase_breakdown(copy)["per_solver"]["he_ml"]
    return total, inside[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("copy", type=Path, help="a dataset folder (e.g. a copy of the published smoke tier)")
    ap.add_argument("--repeats", type=int, default=3, help="passes per variant; the best is reported")
    args = ap.parse_args()
    try:
        fns, t_import, t_compile = _compiled()
    except ImportError:
        sys.exit("numba is not installed: pip install numba in a scratch environment (it is not a kinhec dependency)")
    warnings.simplefilter("ignore")
    print(f"numba: import {t_import:.2f} s, compile {t_compile:.2f} s (paid once per process)")

    calls = _record_calls(args.copy)
    evals = [0]
    counting = vc.sigma

    def count(theta, Q):
        evals[0] += 1
        return counting(theta, Q)

    with _patched(sigma=count):
        reference = [vc.restricted_components(*a, **kw) for a, kw in calls]
    with _patched(**fns):
        compiled = [vc.restricted_components(*a, **kw) for a, kw in calls]
    worst = max(float(np.max(np.abs(c - r) / np.abs(r))) for c, r in zip(compiled, reference))
    n_pairs = [a[0].shape[0] for a, _ in calls]
    print(f"{len(calls)} calls of restricted_components ({evals[0]} likelihood evaluations, "
          f"{np.median(n_pairs):.0f} pairs median, {max(n_pairs)} at most); "
          f"largest relative difference of the components: {worst:.1e}")

    def best_of(fn):
        best = math.inf
        for _ in range(args.repeats):
            t0 = time.process_time()
            fn()
            best = min(best, time.process_time() - t0)
        return best

    def one_eval(a):
        r, Q, w, theta, J = a[:5]
        Q = np.ascontiguousarray(Q)
        _, W, _ = vc.whitener(vc.sigma(theta, Q))
        vc._weighted_fit(r, W, w, J)

    rows = []
    for name, patch in (("numpy", {}), ("compiled", fns)):
        with _patched(**patch):  # numpy: nothing replaced
            t_eval = best_of(lambda: [one_eval(a) for a, _ in calls]) / len(calls)
            t_calls = best_of(lambda: [vc.restricted_components(*a, **kw) for a, kw in calls])
            he, inside = min((_he_ml_pass(args.copy) for _ in range(args.repeats)), key=lambda x: x[0])
        rows.append((name, t_eval, t_calls, he, inside))
    print()
    print("| variant | one evaluation (sigma, whitener, weighted fit) | restricted_components, all calls "
          "| he_ml over COPY | inside restricted_components | he_ml with them free |")
    print("|---|---|---|---|---|---|")
    for name, t_eval, t_calls, he, inside in rows:
        print(f"| {name} | {1e6 * t_eval:.0f} us | {t_calls:.3f} s | {he:.3f} s | {inside:.3f} s "
              f"({100 * inside / he:.0f} %) | {he - inside:.3f} s |")
    base, comp = rows[0][3], rows[1][3]
    print(f"\nhe_ml: {base:.3f} -> {comp:.3f} CPU-s ({100 * (1 - comp / base):.0f} % less) with the compiled "
          f"evaluation, before numba's {t_import:.2f} s import per process; at most "
          f"{100 * rows[0][4] / base:.0f} % less with the variance components free")


if __name__ == "__main__":
    main()
