"""One BLAS thread where a result is stored and compared later, and the name of the BLAS that computed it.

OpenBLAS splits a matrix product over its threads in blocks that depend on
the thread count, so the last bits of a product (and of everything computed
from it) follow ``OPENBLAS_NUM_THREADS``.  Results that are stored and
compared with a later run -- the regression suite's reference results
(:mod:`kinhec.evaluate.suite`), the benchmark's result rows (:mod:`kinhec.evaluate.benchmark`)
-- are computed inside :func:`single_threaded_blas`, so on one machine they do
not depend on the thread setting (and parallel workers do not oversubscribe
the cores).

Across CPUs and BLAS builds the kernels themselves differ (OpenBLAS picks
one per CPU, e.g. ``Haswell`` or ``SkylakeX``; ``OPENBLAS_CORETYPE`` forces
one), and no thread setting makes two kernels round alike.  A stored result
therefore records :func:`blas_signature`; a comparison demands equal bits
only where the signature matches and otherwise compares at a stated
tolerance.

numpy and scipy each carry their own OpenBLAS; both are limited
(``threadpoolctl`` finds every BLAS loaded in the process, so scipy's is
loaded first).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from kinhec.util.optional import require

__all__ = ["single_threaded_blas", "blas_signature"]


def _load_blas_libraries() -> None:
    import numpy  # noqa: F401  (numpy's OpenBLAS)
    import scipy.linalg  # noqa: F401  (scipy's OpenBLAS, loaded with scipy.linalg)


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Run the ``with`` block with every loaded BLAS on one thread (restored afterwards)."""
    threadpool_limits = require("threadpoolctl", "running with BLAS on one thread").threadpool_limits

    _load_blas_libraries()
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def blas_signature() -> str:
    """numpy's and scipy's versions and their BLAS libraries with the kernel each uses.

    For example ``"numpy 2.4.6, scipy 1.17.1; openblas 0.3.30 SkylakeX; openblas 0.3.31 SkylakeX"``.  Two runs
    whose signatures are equal and whose BLAS ran on one thread give bit-identical products; with different
    signatures the last bits may differ (numpy's own vectorised loops differ between versions too).
    """
    import numpy
    import scipy
    threadpool_info = require("threadpoolctl", "naming the BLAS libraries").threadpool_info

    _load_blas_libraries()
    libs = sorted({f"{d.get('internal_api', '?')} {d.get('version') or '?'} {d.get('architecture') or '?'}"
                   for d in threadpool_info() if d.get("user_api") == "blas"})  # fmt: skip
    return "; ".join([f"numpy {numpy.__version__}, scipy {scipy.__version__}"] + (libs or ["no BLAS found"]))
