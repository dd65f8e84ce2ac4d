"""Shared fixtures: the data the tests read, a generated and benchmarked smoke tier, and calibration results.

Data the tests read comes from two places:

* ``tests/data/`` travels with the repository: small files copied verbatim from public sources, each with
  its source, licence and sha256 in a ``SOURCES.toml`` beside it (``realdata/``: Tabb DS1, RWHE-Calib poses
  and OpenCV reference, the ETH-ASL pose streams; ``published/``: the KinHEC card and a trimmed copy of the
  published smoke folder).  ``tests/test_fixtures.py`` checks the checksums.
* ``shared/`` beside the clone (or beside one of its parents, for a worktree) holds what is too large to
  copy: the whole published smoke copy, the RWHE-Calib images.  Developers and CI have it; a user's clone
  does not.  A test that needs it asks :func:`shared_data`, which skips the test naming the missing data
  (and fails instead when ``KINHEC_REQUIRE_SHARED`` is set, so that a CI run cannot skip it silently).

The tests run in parallel (pytest-xdist, ``pyproject.toml``) with BLAS on one thread per process unless
``OPENBLAS_NUM_THREADS`` (or ``OMP_NUM_THREADS``) is set: two workers whose BLAS each spun two threads on two
cores made some solver tests ten times slower on a loaded machine.  Expensive read-only artefacts (the
generated smoke tier, its benchmark, the drawn figures) are built once per run and shared by the workers
(:func:`built_once`).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Callable

if not ({"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"} & set(os.environ)):
    # before numpy loads its BLAS (read at load time); subprocesses inherit it
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    _PIN_BLAS = True
else:  # an explicit setting is the one to test (e.g. OPENBLAS_NUM_THREADS=2 python -m pytest)
    _PIN_BLAS = False

import numpy as np  # noqa: E402
import pytest  # noqa: E402

if _PIN_BLAS:  # a BLAS loaded before this file (by a plugin) is limited too
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")

import kinhec
from kinhec import se3, solvers
from kinhec.benchmark import run_benchmark
from kinhec.runner import generate_dataset
from kinhec.solvers._common import axis_scatter_lambda2


TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
# the support modules the tests share with the benchmark and docs scripts (``support.bag_writer``, ...), kept in
# benchmarks/support/ and not shipped with kinhec; appended, so that no script of benchmarks/ hides an installed module
if str(REPO / "benchmarks") not in sys.path:
    sys.path.append(str(REPO / "benchmarks"))
#: Real public hand-eye data copied into the repository (SOURCES.toml).
REALDATA = TESTS / "data" / "realdata"
#: Files of the published KinHEC dataset copied into the repository (SOURCES.toml).
PUBLISHED = TESTS / "data" / "published"
#: The published smoke folder without the shards of seven of its eight tracks (every other file verbatim).
PUBLISHED_SMOKE_TRIMMED = PUBLISHED / "smoke"
#: The published card of the full tier (composition, leaderboard).
PUBLISHED_CARD = PUBLISHED / "card_full_000_d083e06558e04aff.txt"


#: A station recording on a UR5e: look-at path, Gaussian robot and camera pose noise (the calibrate tests'
#: generated input; ``n_stations`` and ``seed`` are varied).
STATIONS = dict(sequence_id="noise-000000", track="noise", seed=11, robot="ur5e", configuration="eye_in_hand",
                family="lookat", sampling_mode="stations", n_stations=25, camera="hd",
                robot_noise_models=("se3_gaussian",), robot_rot_std_rad=2e-4, robot_trans_std_m=1e-4,
                camera_noise_model="se3_gaussian", camera_rot_std_rad=1e-3, camera_trans_std_m=3e-4,
                camera_trans_std_z_m=1e-3)  # fmt: skip


#: Node ids of every test this process collected, before ``-k`` / ``-m`` deselect any, and the paths it was asked
#: to collect: the README states how many tests there are, and tests/test_doc_outputs.py checks it when the whole
#: suite is collected.
COLLECTED: list[str] = []
COLLECTED_ARGS: list[str] = []


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items) -> None:
    COLLECTED[:] = [item.nodeid for item in items]
    COLLECTED_ARGS[:] = [str(a) for a in config.args]


def shared_root() -> Path | None:
    """``shared/`` beside the clone or beside the nearest of its parents that has one (None when absent)."""
    return next((p / "shared" for p in REPO.parents if (p / "shared").is_dir()), None)


def shared_data(rel: str, what: str) -> Path:
    """``shared/<rel>``, or skip the calling test naming ``what`` is missing and where it was looked for.

    With the environment variable ``KINHEC_REQUIRE_SHARED`` set, a missing folder fails the test instead.
    """
    root = shared_root()
    path = root / rel if root is not None else None
    if path is None or not path.exists():
        where = path if path is not None else f"shared/{rel} beside {REPO} or its parents"
        msg = f"needs {what}: no {where} (the shared data of developers and CI)"
        if os.environ.get("KINHEC_REQUIRE_SHARED"):
            pytest.fail(msg)
        pytest.skip(msg)
    return path


def built_once(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name`` built by ``build(folder)`` once per test run and shared by every xdist worker.

    Each worker is a process with its own session fixtures; the folder lives in the run's base temporary
    folder, common to the workers, and a file lock makes one worker build it while the others wait.  Tests
    read it; a test that writes copies it first.
    """
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's base temp (each worker has its own folder below it)
    folder = base / f"built-{name}"
    done = base / f"built-{name}.done"
    with FileLock(str(base / f"built-{name}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed in another worker
            folder.mkdir(parents=True)
            build(folder)
            done.touch()
    return folder


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


def _mean_pose(T: np.ndarray) -> np.ndarray:
    """Chordal mean of poses ``(N, 4, 4)``: rotation projected onto SO(3), translation averaged."""
    U, _, Vt = np.linalg.svd(T[:, :3, :3].sum(axis=0))
    R = U @ np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))]) @ Vt
    return se3.transform_from_rotation_translation(R, T[:, :3, 3].mean(axis=0))


def calibration_result(seq, rng: np.random.Generator, *, estimate_offset: bool, n_boot: int = 30) -> dict:
    """A calibration result following the contract of ``kinhec calibrate --json``, computed from ``seq``.

    Clock offset from the angular speeds (when ``estimate_offset``), ``X`` by RANSAC Park-Martin on the
    keyframe motions, ``Y`` as the chordal mean of ``A_i X inv(B_i)``, per-pair residuals of
    ``A_i X = Y B_i`` (outliers: beyond five times the median residual), and 1-sigma uncertainties by
    bootstrapping the inlier motions.  Eye-in-hand sequences only.
    """
    assert seq.configuration == "eye_in_hand"
    offset_curve, offset, offset_std = None, None, None
    if estimate_offset:
        est = solvers.estimate_time_offset(seq.robot.t, seq.robot.T_base_ee_meas, seq.camera.t[seq.camera.has_measurement],
                                           seq.camera.T_cam_target_meas[seq.camera.has_measurement])  # fmt: skip
        offset, offset_std = float(est.offset_s), float(est.grid_dt_s) / np.sqrt(12.0)
        ok = np.isfinite(est.corr)
        offset_curve = {"offset_s": est.lags_s[ok].tolist(), "cost": (1.0 - est.corr[ok]).tolist()}
    A, B = seq.axxb_motions(time_offset=offset)
    rr = solvers.ransac_axxb(A, B, rng)
    X = rr.X
    A_abs, B_abs, idx = seq.axyb_poses(time_offset=offset, return_index=True)
    Y = _mean_pose(A_abs @ X @ se3.invert_transform(B_abs))
    rot_deg, trans_mm = se3.pose_error(A_abs @ X, Y @ B_abs)
    outlier = (rot_deg > 5.0 * np.median(rot_deg)) | (trans_mm > 5.0 * np.median(trans_mm))
    inl = np.flatnonzero(rr.inliers)
    boots = []
    for _ in range(n_boot):
        pick = rng.choice(inl, size=inl.size, replace=True)
        Xb = solvers.park_martin(A[pick], B[pick])
        d = se3.invert_transform(X) @ Xb
        boots.append(np.concatenate([se3.so3_log(d[:3, :3]), Xb[:3, 3] - X[:3, 3]]))
    X_std = np.std(boots, axis=0, ddof=1)
    w = se3.so3_log(A[:, :3, :3])
    rot_range = float(np.degrees(np.linalg.norm(w, axis=1).max()))
    trans_range = float(np.ptp(A_abs[:, :3, 3], axis=0).max())
    M = np.vstack([np.eye(3) - a[:3, :3] for a in A])
    sv = np.linalg.svd(M, compute_uv=False)
    lam2 = axis_scatter_lambda2(w)
    determined = lam2 > solvers.NEAR_DEGENERATE_LAMBDA2
    warnings = [] if determined else ["the rotation axes of the motions are nearly parallel: X is not fully determined"]
    if outlier.any():
        warnings.append(f"{int(outlier.sum())} pairs have residuals beyond five times the median and are marked as outliers")
    verdict = (f"X is determined to about {np.degrees(np.linalg.norm(X_std[:3])):.2g} deg and "
               f"{1e3 * np.linalg.norm(X_std[3:]):.2g} mm (1 sigma) from {len(idx)} pairs"
               + (f"; camera stamps read the robot time plus {1e3 * offset:.1f} ms" if offset is not None else "")
               + ("." if determined else ", but the motion does not determine it well."))  # fmt: skip
    q_x = se3.quaternion_from_matrix(X[:3, :3])
    q_y = se3.quaternion_from_matrix(Y[:3, :3])
    return {
        "kinhec_version": kinhec.__version__,
        "setup": "eye_in_hand",
        "inputs": {"hand": f"{seq.sequence_id}/robot", "eye": [f"{seq.sequence_id}/camera"], "format": "tum",
                   "hand_pose": "base_T_ee", "eye_pose": "cam_T_target", "units": "m"},  # fmt: skip
        "X": X.tolist(), "X_name": "T_ee_cam",
        "X_quat_xyzw": [q_x[1], q_x[2], q_x[3], q_x[0]], "X_t_m": X[:3, 3].tolist(),
        "Y": Y.tolist(), "Y_name": "T_base_target",
        "Y_quat_xyzw": [q_y[1], q_y[2], q_y[3], q_y[0]], "Y_t_m": Y[:3, 3].tolist(),
        "time_offset_s": offset, "time_offset_std_s": offset_std,
        "scale": None, "scale_std": None,
        "X_std": X_std.tolist(), "Y_std": None,
        "n_pairs": int(len(idx)),
        "outliers": np.flatnonzero(outlier).tolist(),
        "observability": {"lambda2": lam2, "rot_range_deg": rot_range, "trans_range_m": trans_range,
                          "condition": float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf"), "determined": bool(determined)},
        "warnings": warnings,
        "verdict": verdict,
        "residuals": {"t_s": seq.camera.t[idx].tolist(), "rot_deg": rot_deg.tolist(), "trans_mm": trans_mm.tolist(),
                      "outlier": outlier.tolist()},  # fmt: skip
        "offset_curve": offset_curve,
        "rig": None,
    }  # fmt: skip
