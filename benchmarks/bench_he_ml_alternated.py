"""CPU per ``he_ml`` call on a generated folder's pairs, two versions of kinhec alternated call by call in one process.

Usage::

    python benchmarks/bench_he_ml_alternated.py OLD_SRC NEW_SRC [FOLDER] [--passes 9]

``OLD_SRC`` and ``NEW_SRC`` are the ``src`` folders of two checkouts (e.g. ``git worktree add /tmp/old HEAD~1``).
The pairs are the ones ``kinhec benchmark`` hands ``he_ml`` on every sequence of ``FOLDER`` (default: the
published smoke copy next to the repository), taken with ``NEW_SRC``'s pairing (the benchmark's solver input,
every synchronisation).  Both versions are then imported into the same process (each keeps its own modules) and
called in turn on every pair set, the order swapped from one set to the next, ``--passes`` times after a warm-up
pass; a call's CPU time is ``time.process_time`` around it, BLAS on one thread.  Prints the median per-call figure
of each version over the passes and the ratio new / old per pass: the machine's load moves both alike, so the
ratio holds where the milliseconds do not.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

_REPO = Path(__file__).resolve().parents[1]


def _default_folder() -> Path:
    for p in _REPO.parents:
        if (p / "shared" / "published" / "smoke").is_dir():
            return p / "shared" / "published" / "smoke"
    return _REPO.parent / "shared" / "published" / "smoke"


def _import_he_ml(src: Path):
    """``he_ml`` of the kinhec under ``src`` (the kinhec modules imported before are set aside, not reused)."""
    for name in [m for m in sys.modules if m == "kinhec" or m.startswith("kinhec.")]:
        del sys.modules[name]
    sys.path.insert(0, str(src))
    try:
        import kinhec.solvers.he_ml  # noqa: F401

        mod = sys.modules["kinhec.solvers.he_ml"]
    finally:
        sys.path.remove(str(src))
    if not Path(mod.__file__).resolve().is_relative_to(src.resolve()):
        sys.exit(f"{src}: kinhec was imported from {mod.__file__} instead (is kinhec installed as a package?)")
    return mod.he_ml


def _pairs(src: Path, folder: Path) -> list:
    """``(A, B, kwargs)`` of every ``he_ml`` call of the benchmark on ``folder`` (``src``'s benchmark code)."""
    _import_he_ml(src)
    from kinhec import io as kio
    from kinhec.evaluate.benchmark import sequence as bm

    out = []
    for seq in kio.iter_sequences(folder, kio.load_manifest(folder)):
        offsets = [None]
        if kio.is_asynchronous(seq.info.get("sync")):
            offsets.append(float(bm._estimate_offset(seq)[0].offset_s))
        for off in offsets:
            inputs = bm._solver_input(seq, off)
            A, B = inputs["axyb"][:2]
            out.append((np.array(A), np.array(B)))
    return out


def _call(fn, A, B) -> float:
    t0 = time.process_time()
    try:
        fn(A, B)
    except Exception:  # a call that fails costs time too
        pass
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path, help="src folder of the old version")
    ap.add_argument("new", type=Path, help="src folder of the new version")
    ap.add_argument("folder", nargs="?", type=Path, default=_default_folder(), help="a generated folder")
    ap.add_argument("--passes", type=int, default=9)
    args = ap.parse_args()
    import scipy.linalg  # noqa: F401  (the first-use imports, shared, out of the timings)
    import scipy.optimize  # noqa: F401
    import scipy.special  # noqa: F401

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = _pairs(args.new, args.folder)
        new = _import_he_ml(args.new)
        old = _import_he_ml(args.old)
        for A, B in pairs:  # warm-up
            _call(old, A, B)
            _call(new, A, B)
        t_old, t_new = np.zeros(args.passes), np.zeros(args.passes)
        for p in range(args.passes):
            for j, (A, B) in enumerate(pairs):
                if (p + j) % 2:
                    t_old[p] += _call(old, A, B)
                    t_new[p] += _call(new, A, B)
                else:
                    t_new[p] += _call(new, A, B)
                    t_old[p] += _call(old, A, B)
    t_old *= 1000.0 / len(pairs)
    t_new *= 1000.0 / len(pairs)
    ratio = t_new / t_old
    print(f"{args.folder}: {len(pairs)} he_ml calls, {args.passes} passes, one BLAS thread")
    print(f"old {np.median(t_old):.2f} ms per call (passes {t_old.min():.2f}-{t_old.max():.2f}), "
          f"new {np.median(t_new):.2f} (passes {t_new.min():.2f}-{t_new.max():.2f})")
    print(f"new / old per pass: median {np.median(ratio):.3f} ({ratio.min():.3f}-{ratio.max():.3f})")


if __name__ == "__main__":
    main()
