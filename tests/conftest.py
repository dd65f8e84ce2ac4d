"""Shared fixtures: the data the tests read, a generated and benchmarked smoke tier, and calibration results.

Data the tests read comes from two places:

* ``tests/data/`` travels with the repository: small files copied verbatim from public sources, each with
  its source, licence and sha256 in a ``SOURCES.toml`` beside it (``realdata/``: Tabb DS1, RWHE-Calib poses
  and OpenCV reference, the ETH-ASL pose streams; ``published/``: the KinHEC card and a trimmed copy of the
  published smoke folder).  ``tests/test_fixtures.py`` checks the checksums.
* ``shared/`` beside the clone (or beside one of its parents, for a worktree) holds what is too large to
  copy: the whole published smoke copy, the RWHE-Calib images.  Developers and CI have it; a user's clone
  does not.  A test that needs it asks :func:`helpers.paths.shared_data`, which skips the test naming the missing data
  (and fails instead when ``KINHEC_REQUIRE_SHARED`` is set, so that a CI run cannot skip it silently).

The tests run in parallel (pytest-xdist, ``pyproject.toml``) with BLAS on one thread per process unless
``OPENBLAS_NUM_THREADS`` (or ``OMP_NUM_THREADS``) is set: two workers whose BLAS each spun two threads on two
cores made some solver tests ten times slower on a loaded machine.  Expensive read-only artefacts (the
generated smoke tier, its benchmark, the drawn figures) are built once per run and shared by the workers
(:func:`helpers.builds.built_once`).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

if not ({"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"} & set(os.environ)):
    # before numpy loads its BLAS (read at load time); subprocesses inherit it
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    _PIN_BLAS = True
else:  # an explicit setting is the one to test (e.g. OPENBLAS_NUM_THREADS=2 python -m pytest)
    _PIN_BLAS = False

import numpy  # noqa: E402,F401  (loads its BLAS after the setting above)
import pytest  # noqa: E402

if _PIN_BLAS:  # a BLAS loaded before this file (by a plugin) is limited too
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")

from kinhec.evaluate.benchmark import run_benchmark  # noqa: E402
from kinhec.synth.runner import generate_dataset  # noqa: E402

# what the test files share lives in tests/helpers/ (pytest puts tests/ on sys.path before importing this file);
# the names below are the ones this file uses
from helpers.builds import built_once  # noqa: E402
from helpers.collection import COLLECTED, COLLECTED_ARGS  # noqa: E402
from helpers.paths import REPO, shared_data  # noqa: E402

# the support modules the tests share with the benchmark and docs scripts (``support.bag_writer``, ...), kept in
# benchmarks/support/ and not shipped with kinhec; appended, so that no script of benchmarks/ hides an installed module
if str(REPO / "benchmarks") not in sys.path:
    sys.path.append(str(REPO / "benchmarks"))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items) -> None:
    COLLECTED[:] = [item.nodeid for item in items]
    COLLECTED_ARGS[:] = [str(a) for a in config.args]


@pytest.fixture(scope="session")
def smoke_tier(tmp_path_factory) -> Path:
    """The generated smoke tier (46 sequences, no benchmark results), read-only."""

    def build(folder: Path) -> None:
        summary = generate_dataset("smoke", folder / "data", workers=1, progress=False)
        assert summary.ok

    return built_once(tmp_path_factory, "smoke_tier", build) / "data"


@pytest.fixture(scope="session")
def published_smoke_full() -> Path:
    """The whole published smoke copy (every shard), read-only: ``shared/published/smoke``."""
    return shared_data("published/smoke", "the whole published smoke copy (all 46 sequences' shards)")


@pytest.fixture(scope="session")
def corners_results() -> dict:
    """``kinhec calibrate --corners`` on the regression suite's RWHE-Calib corner files (kuka_1, kuka_2), computed
    once per session: the suite's acceptance test and the page of docs/calibrate.md both read them."""
    import warnings

    from kinhec.calibrate import calibrate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: calibrate(corners=REPO / "regression" / "observations" / f"{name}.json") for name in ("kuka_1", "kuka_2")}


@pytest.fixture(scope="session")
def smoke_benchmarked(tmp_path_factory, smoke_tier) -> Path:
    """The smoke tier (46 sequences) with ``benchmarks/results.parquet`` from the baselines, read-only."""

    def build(folder: Path) -> None:
        shutil.copytree(smoke_tier, folder / "data")
        bench = run_benchmark(folder / "data", workers=1)
        assert bench.ok and bench.n_ok > 0

    return built_once(tmp_path_factory, "smoke_benchmarked", build) / "data"
