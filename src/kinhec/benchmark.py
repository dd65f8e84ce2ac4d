"""The benchmark: every registered solver on every sequence of a dataset, under one protocol.

Protocol (version :data:`PROTOCOL_VERSION`; every constant is also written to
``protocol.json``)
---------------------------------------------------------------------------------

For each sequence and each evaluation synchronisation ``eval_sync``:

1. **Pairing.**  ``oracle`` (every sequence): synchronous streams are paired
   row by row; for asynchronous ones the *measured* robot stream is
   interpolated (SLERP / linear) at the camera stamps shifted by the
   ground-truth clock offset, ``t - time_offset_s``.  ``estimated``
   (asynchronous sequences only): the offset is first estimated from the
   measured streams by :func:`kinhec.solvers.estimate_time_offset`
   (angular-speed cross-correlation, settings :data:`TIME_OFFSET_SETTINGS`)
   and the streams are paired at ``t - estimate``.  The estimated results keep
   the sequences where the correlation finds no peak (the estimator then
   returns 0 with ``time_offset_peak_corr = 0``); filter on
   ``time_offset_peak_corr`` before quoting a clock-offset accuracy.
   Frames without a camera measurement, or outside the robot stream, are
   dropped (see :meth:`kinhec.io.Sequence.axyb_poses`).
2. **Keyframes** on the paired flange poses: at least
   :data:`~kinhec.motion.KEYFRAME_MIN_ROT_DEG` deg or
   :data:`~kinhec.motion.KEYFRAME_MIN_TRANS_M` m apart, at most
   :data:`~kinhec.motion.KEYFRAME_MAX`; every paired frame when fewer than
   three survive (:func:`kinhec.motion.select_keyframes`).
3. **Solvers.**  ``A X = X B`` entries of the registry receive the motions
   between consecutive keyframes, ``A = inv(A_i) A_j``, ``B = inv(B_i) B_j``;
   ``A X = Y B`` entries receive the absolute keyframe pairs.
   Every solver runs on every sequence, as the published protocol does:
   ``andreff_scale`` too (on a metric sequence it estimates a scale near 1),
   and the scale-free solvers on monocular sequences (they then fail on the
   translation, which is what the monocular track shows).
   The pixel solvers (:data:`kinhec.solvers.registry.PIXEL_SOLVERS`:
   ``reprojection``) run where the target corners can be rebuilt
   (:func:`pixels_available`): the ``pnp`` track, camera model ``pnp``, synchronous streams and
   kinhec's recipe in ``extra_json``.  The pixels are not stored;
   :func:`kinhec.observations.recipe_pixels` re-simulates them exactly as the
   generator drew them.  Such a solver receives the same keyframes, the
   measured flange poses there and the detected corners of those frames, with
   the intrinsics of the camera preset held fixed (the PnP behind the pose
   solvers' camera poses used them too).  Its rows carry every column of the
   others (``Y_*`` included, ``n_motions`` = views); a sequence without
   pixels gets no row of it, so the rows of a copy written by the published
   toolkit are the published ones.  A pose solver with a pixel entry
   (``SolverSpec.run_pixels``: ``he_ml``) gets the same pixels as well on
   those sequences, and the poses only everywhere else.
4. **Scores.**  Geodesic rotation error [deg] and Euclidean translation error
   [mm] of ``X`` (and ``Y``) against the metric ground truth
   (:func:`kinhec.se3.pose_error`); wall time of the solver call alone
   [ms] (for a pixel solver, rebuilding the pixels is not counted); the clock-offset error ``(estimate - truth)`` [ms]; for
   ``andreff_scale`` the scale estimate and its relative error
   ``|s_est - s_true| / s_true``.

A solver that raises gets a row with ``ok = False`` and ``error =
"ExcType: message"``; so does one that returns a non-finite ``X`` or ``Y``.
A :class:`~kinhec.solvers.DegenerateMotionWarning` keeps ``ok = True`` and
is noted in ``error``.  A sequence that cannot be read, paired or (for
``estimated``) time-aligned gives ``ok = False`` rows for every solver, so
``results.parquet`` always holds sequences x solvers x eval_sync rows (a pixel solver: on the
sequences with pixels).  A pixel solver (or ``he_ml`` there) whose pixels cannot be rebuilt, or whose
rebuilt poses are not the stored ones, gets ``ok = False`` rows saying so.

Columns that do not apply are NaN: the three ``time_offset_*`` estimation
columns and ``time_offset_err_ms`` on ``oracle`` rows (the pairing used the
true offset; nothing was estimated), ``Y_*`` for ``A X = X B`` solvers, ``scale_*`` for
every solver but ``andreff_scale`` (and ``he_ml`` where it finds a monocular
scale), ``n_inliers`` for every solver but ``ransac_park_martin`` and
``he_ml``.  ``n_motions`` counts the relative motions given to an
``A X = X B`` solver and the absolute pairs given to an ``A X = Y B`` solver.

After the published columns come the Cramér-Rao bound of the sequence
(``X_rot_crlb_deg``, ``X_trans_crlb_mm``: expected median errors of an
efficient estimator on the same keyframe pairs, :mod:`kinhec.bounds`), each
row's efficiency (``X_*_efficiency`` = error / bound) and ``crlb_modelled``
(False for outliers and DH errors, which the bound does not model); see
:func:`add_bound_columns`.  The pixel solvers' rows carry the same bound: it
uses the first-order PnP covariance of the corners' noise, so to first order
the pose pairs hold what the pixels tell about ``X`` and ``Y``.

Outputs (in ``DATA/benchmarks/`` unless ``out`` says otherwise)
--------------------------------------------------------------
``results.parquet`` / ``results.csv`` (:data:`kinhec.schema.RESULTS_SCHEMA`,
sorted by ``sequence_id``, ``eval_sync``, ``solver``), ``leaderboard.md``
(medians per track, per synchronisation and per factor level),
``summary.json`` (the same figures as JSON) and ``protocol.json``.

Running and resuming
--------------------
A shard of the dataset (the sequences of one ``robot_file``) is the unit of
work, run on the executors of ``kinhec generate``
(:mod:`kinhec.executors`: in this process for one worker, a local process
pool, or Dask).  Each finished unit is written atomically to
``.kinhec/benchmark/<run fingerprint>/<track>-<shard>.parquet`` (scratch,
never published; :mod:`kinhec.fingerprint`) with a unit fingerprint
(protocol version, kinhec version and a digest of its sources, solvers,
synchronisations, the shard's sequences and files); a re-run skips every part whose fingerprint still
matches and recomputes the others.  A run with ``solvers``, ``sync``,
``tracks`` or ``max_sequences`` narrower than everything is a subset run: its
outputs go to ``<out>/subsets/<run fingerprint>/`` and a full run's results
are never replaced.  Every writer of a folder takes its one lock
(:mod:`kinhec.locking`).  ``Ctrl+C`` cancels the units not started, lets the
running ones finish and returns without writing the outputs (a second
``Ctrl+C`` stops the running ones at once); the next run resumes.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import math
import os
import platform
import re
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kinhec import __version__, jsonutil, se3
from kinhec import bounds as _bounds
from kinhec import io as kio
from kinhec.io.index import read_index_column
from kinhec.blas import single_threaded_blas
from kinhec.errors import InputError, UnknownNameError
from kinhec.executors import EXECUTORS, drain_after_interrupt, make_executor
from kinhec.fingerprint import run_fingerprint, run_folders, source_digest
from kinhec.locking import refuse_if_in_use, writer_lock
from kinhec.fsutil import atomic_write, atomic_write_text
from kinhec.provenance import FINGERPRINT_KEY, data_fingerprint
from kinhec.motion import KEYFRAME_MAX, KEYFRAME_MIN_ROT_DEG, KEYFRAME_MIN_TRANS_M
from kinhec.schema import COMPRESSION, RESULTS_SCHEMA, TRACKS
from kinhec.solvers import DegenerateMotionWarning, estimate_time_offset
from kinhec.solvers import ransac as _ransac_mod
from kinhec.solvers import refine as _refine_mod
from kinhec.solvers import registry as _registry
from kinhec.solvers import time_offset as _time_offset_mod

__all__ = [
    "PROTOCOL_VERSION",
    "EVAL_SYNCS",
    "TIME_OFFSET_SETTINGS",
    "RESULTS_DIR",
    "BenchmarkTask",
    "UnitOutcome",
    "BenchmarkSummary",
    "run_benchmark",
    "run_unit",
    "evaluate_sequence",
    "is_monocular",
    "pixels_available",
    "protocol_info",
    "summarize_results",
    "leaderboard_markdown",
    "add_bound_columns",
    "efficiency_summary",
]

#: Version of the evaluation protocol; parts computed under another version are recomputed.
PROTOCOL_VERSION = "1"
#: Evaluation synchronisations: ground-truth clock offset, and estimated offset (asynchronous sequences only).
EVAL_SYNCS = ("oracle", "estimated")
#: Settings of :func:`kinhec.solvers.estimate_time_offset` in the ``estimated`` mode
#: (``grid_dt_s = None``: a quarter of the median camera period).
TIME_OFFSET_SETTINGS = {"max_offset_s": 0.5, "grid_dt_s": None, "min_overlap": 0.5}
#: Folder of the outputs inside the dataset folder (default of ``out``).
RESULTS_DIR = "benchmarks"
#: Parquet key-value metadata key of a part (JSON: fingerprint and sequence ids).
PART_METADATA_KEY = "kinhec.benchmark"
#: The solver that estimates the camera-translation scale (it runs on every sequence).
SCALE_SOLVER = "andreff_scale"
#: Kind of the solvers on pixels (:data:`kinhec.solvers.registry.PIXEL_SOLVERS`).
PIXEL_KIND = "pixels"

RESULTS_FILE = "results.parquet"
RESULTS_CSV_FILE = "results.csv"
LEADERBOARD_FILE = "leaderboard.md"
SUMMARY_FILE = "summary.json"
PROTOCOL_FILE = "protocol.json"
_LOG_NAME = "benchmark.log"

# index columns copied to every result row, by kind
_META_STR = ("sequence_id", "track", "level", "robot", "configuration", "family", "sampling_mode", "sync",
             "camera_noise_model", "robot_noise_models")  # fmt: skip
_META_FLOAT = ("outlier_fraction", "scale", "time_offset_s", "axis_scatter_lambda2", "mean_rot_angle_deg")
_META_INT = ("n_camera_frames",)
_RECIPE_COLUMNS = ("config_json", "extra_json")


# --------------------------------------------------------------------------- #
# argument checks
# --------------------------------------------------------------------------- #
def _names(value, what: str) -> list[str]:
    """A list of names from a string or an iterable of strings, duplicates removed (order kept)."""
    if isinstance(value, str):
        value = [value]
    try:
        items = list(value)
    except TypeError:
        raise InputError(f"{what}: expected a name or a list of names, got {type(value).__name__}") from None
    out = []
    for v in items:
        if not isinstance(v, str):
            raise InputError(f"{what}: expected names (strings), got {v!r}")
        if v not in out:
            out.append(v)
    if not out:
        raise InputError(f"{what}: expected at least one name, got none")
    return out


def _check_solvers(solvers) -> list[str]:
    """Solver names (pose, pixel and plug-in) in leaderboard order; unknown names raise :class:`UnknownNameError`."""
    known = _registry.evaluated_names()
    if solvers is None:
        return known
    wanted = _names(solvers, "solvers")
    for name in wanted:
        if name not in known:
            raise UnknownNameError("solver", name, known)
    return [n for n in known if n in wanted]


def _check_tracks(tracks) -> list[str] | None:
    if tracks is None:
        return None
    wanted = _names(tracks, "tracks")
    for t in wanted:
        if t not in TRACKS:
            raise UnknownNameError("track", t, TRACKS)
    return [t for t in TRACKS if t in wanted]


def _check_sync(sync) -> list[str]:
    wanted = _names(sync, "sync")
    for s in wanted:
        if s not in EVAL_SYNCS:
            raise UnknownNameError("sync mode", s, EVAL_SYNCS)
    return [s for s in EVAL_SYNCS if s in wanted]


def _check_count(value, name: str, *, allow_none: bool) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name}: expected an integer >= 1{' or None' if allow_none else ''}, got {value!r}")
    return int(value)


# --------------------------------------------------------------------------- #
# one sequence
# --------------------------------------------------------------------------- #
def _missing(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and math.isnan(v))


def is_monocular(info) -> bool:
    """True for a monocular (visual-odometry) sequence: ``world_frame == "vo_origin"`` or ``scale != 1``.

    ``info`` is an index row (dict or pandas Series).
    """
    if info.get("world_frame") == "vo_origin":
        return True
    s = info.get("scale")
    return not _missing(s) and float(s) != 1.0


def _meta(info) -> dict:
    """The index columns copied to every result row of a sequence."""
    out = {}
    for c in _META_STR:
        v = info.get(c)
        out[c] = None if _missing(v) else str(v)
    for c in _META_FLOAT:
        v = info.get(c)
        try:
            out[c] = math.nan if _missing(v) else float(v)
        except (TypeError, ValueError):
            out[c] = math.nan
    for c in _META_INT:
        v = info.get(c)
        try:
            out[c] = None if _missing(v) else int(v)
        except (TypeError, ValueError):
            out[c] = None
    return out


def _row(meta: dict, eval_sync: str, solver: str, timing: dict) -> dict:
    row = dict(meta)
    row.update(
        eval_sync=eval_sync, solver=solver, ok=False, error="", runtime_ms=math.nan, n_motions=None,
        X_rot_err_deg=math.nan, X_trans_err_mm=math.nan, scale_est=math.nan, scale_err_rel=math.nan,
        n_inliers=math.nan, Y_rot_err_deg=math.nan, Y_trans_err_mm=math.nan,
    )  # fmt: skip
    row.update(_NO_BOUND)
    row.update(timing)
    return row


# --------------------------------------------------------------------------- #
# Cramér-Rao bound columns (after the published ones)
# --------------------------------------------------------------------------- #
_NO_BOUND = {"X_rot_crlb_deg": math.nan, "X_trans_crlb_mm": math.nan, "X_rot_efficiency": math.nan,
             "X_trans_efficiency": math.nan, "crlb_modelled": None}  # fmt: skip


def add_bound_columns(rows: list[dict], seq, time_offset, keyframes=None) -> None:
    """Fill the bound columns of one sequence's rows of one synchronisation (in place).

    ``X_rot_crlb_deg`` / ``X_trans_crlb_mm``: expected median errors of an
    efficient estimator on the protocol's keyframe pairs
    (:func:`kinhec.bounds.sequence_bound`); ``X_*_efficiency``: the row's
    error divided by the bound (NaN for failed rows, and where the bound is
    infinite: degenerate motion); ``crlb_modelled``: False
    where outliers or DH errors put the data outside the bound's model.  A
    sequence whose bound cannot be computed keeps NaN.  ``keyframes``: the
    indices the solvers' pairs came from (selected again when omitted).
    """
    try:
        b = _bounds.sequence_bound(seq, time_offset=time_offset, keyframes=keyframes)
    except Exception:  # a bound is an annotation: a sequence without one keeps NaN, the run goes on
        return
    for row in rows:
        row["X_rot_crlb_deg"], row["X_trans_crlb_mm"] = b.X_rot_deg, b.X_trans_mm
        row["crlb_modelled"] = bool(b.modelled)
        if row["ok"]:
            for err, bound, col in ((row["X_rot_err_deg"], b.X_rot_deg, "X_rot_efficiency"),
                                    (row["X_trans_err_mm"], b.X_trans_mm, "X_trans_efficiency")):  # fmt: skip
                # no ratio where the motion leaves that part of X undetermined (infinite bound)
                row[col] = err / bound if 0 < bound < math.inf else math.nan


def _error_text(exc: BaseException) -> str:
    msg = str(exc).strip().replace("\n", " ")
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _modes(info, syncs) -> list[str]:
    modes = ["oracle"] if "oracle" in syncs else []
    if "estimated" in syncs and kio.is_asynchronous(info.get("sync")):
        modes.append("estimated")
    return modes


def _solvers_for(info, specs) -> list:
    """The solvers of a sequence's rows.

    Every pose solver runs on every sequence (the published protocol),
    ``andreff_scale`` included; a pixel solver only where the pixels can be
    rebuilt (:func:`pixels_available`).
    """
    pixels = None
    out = []
    for spec in specs:
        if spec.kind == PIXEL_KIND:
            if pixels is None:
                pixels = pixels_available(info)
            if not pixels:
                continue
        out.append(spec)
    return out


def _stored_recipe(info):
    """The kinhec recipe in an index row's ``extra_json`` (a dict), or None."""
    text = info.get("extra_json")
    if _missing(text) or not isinstance(text, str) or '"recipe"' not in text:
        return None
    try:
        extra = jsonutil.loads(text)
    except Exception:  # an unreadable extra_json: no recipe, hence no pixels
        return None
    recipe = extra.get("recipe") if isinstance(extra, dict) else None
    return recipe if isinstance(recipe, dict) else None


#: Tracks whose pnp sequences get the pixel solvers' rows.
PIXEL_TRACKS = ("pnp",)


def pixels_available(info) -> bool:
    """True where the benchmark runs the pixel solvers on a sequence's rebuilt pixels.

    The sequence belongs to the ``pnp`` track (:data:`PIXEL_TRACKS`), its camera
    model is ``pnp``, the streams are synchronous (one robot pose per camera
    frame) and ``extra_json`` holds kinhec's recipe (copies written by the
    published toolkit carry none).  ``info`` is an index row.  The ``mixed``
    track's pnp sequences are left out: with up to 200 keyframes the pixel
    solver costs seconds per sequence there, and their robot errors (joint
    noise, DH errors), which the solver takes as exact, are the pose solvers'
    domain.
    """
    if str(info.get("track")) not in PIXEL_TRACKS:
        return False
    if str(info.get("camera_noise_model")) != "pnp" or kio.is_asynchronous(info.get("sync")):
        return False
    return _stored_recipe(info) is not None


def _estimate_offset(seq):
    """``(estimate, runtime_ms)`` on the measured streams of an asynchronous sequence."""
    robot, camera = seq.robot, seq.camera
    r_ok = np.isfinite(robot.T_base_ee_meas).all(axis=(1, 2)) & np.isfinite(robot.t)
    c_ok = camera.has_measurement & np.isfinite(camera.t)
    args = (robot.t[r_ok], robot.T_base_ee_meas[r_ok], camera.t[c_ok], camera.T_cam_target_meas[c_ok])
    with warnings.catch_warnings():
        # no peak: the estimator says so with peak_corr = 0, which is recorded
        warnings.simplefilter("ignore", DegenerateMotionWarning)
        t0 = time.perf_counter()
        est = estimate_time_offset(*args, **TIME_OFFSET_SETTINGS)
        runtime_ms = 1000.0 * (time.perf_counter() - t0)
    return est, runtime_ms


def _solver_input(seq, time_offset):
    """Keyframe pairs for ``A X = Y B``, consecutive keyframe motions for ``A X = X B``, and the keyframes."""
    Ak, Bk, idx = seq.axyb_keyframe_poses(
        KEYFRAME_MIN_ROT_DEG, KEYFRAME_MIN_TRANS_M, KEYFRAME_MAX, time_offset=time_offset, return_index=True
    )
    if Ak.shape[0] < 2:
        A = B = np.zeros((0, 4, 4))
    else:
        A = se3.invert_transform(Ak[:-1], check=False) @ Ak[1:]
        B = se3.invert_transform(Bk[:-1], check=False) @ Bk[1:]
    return {"axxb": (A, B), "axyb": (Ak, Bk), "keyframes": idx}


#: Largest disagreement [deg, mm] between a rebuilt measured pose and the stored one before the pixels are refused.
PIXEL_CHECK_TOL = (1e-4, 1e-3)


def _pixel_input(seq, inputs):
    """``(T_base_ee, PixelViews)`` at the protocol's keyframes of a synchronous ``pnp`` sequence.

    The pixels are re-simulated from the recipe (:func:`kinhec.observations.recipe_pixels`);
    the robot poses are the stored measured ones (those the pose solvers get), and the intrinsics
    those of the camera preset, held fixed (the generator's PnP used them too).  The rebuilt
    measured poses must be the stored ones at every keyframe, else the pixels are not those of
    the sequence and :class:`~kinhec.errors.InputError` says so.
    """
    from kinhec.observations import recipe_pixels

    recipe = _stored_recipe(seq.info)
    if recipe is None:
        raise InputError(f"sequence {seq.sequence_id!r}: no kinhec recipe in extra_json, the pixels cannot be rebuilt")
    A, _ = inputs["axyb"]
    idx = inputs["keyframes"]
    px = recipe_pixels(recipe)
    n = px.uv_px.shape[0]
    if n != len(seq.camera) or (idx.size and idx.max() >= n):
        raise InputError(f"sequence {seq.sequence_id!r}: the recipe rebuilds {n} camera frames, the sequence has "
                         f"{len(seq.camera)}")  # fmt: skip
    rot_r, tr_r = se3.pose_error(px.T_base_ee_meas[idx], A)
    rot_c, tr_c = se3.pose_error(px.T_cam_target_meas[idx], seq.camera.T_cam_target_meas[idx])
    worst = (float(np.max(np.r_[rot_r, rot_c], initial=0.0)), float(np.max(np.r_[tr_r, tr_c], initial=0.0)))
    if not (worst[0] <= PIXEL_CHECK_TOL[0] and worst[1] <= PIXEL_CHECK_TOL[1]):
        raise InputError(f"sequence {seq.sequence_id!r}: the recipe's measured poses differ from the stored ones by "
                         f"up to {worst[0]:.3g} deg / {worst[1]:.3g} mm; the pixels are not those of the sequence")  # fmt: skip
    # the stored PnP poses came from these pixels and intrinsics: they start the solve (no free-pose fit)
    start = seq.camera.T_cam_target_meas[idx]
    return A, px.pixel_views(idx, start)


def _finite_pose(T) -> np.ndarray | None:
    """``T`` as a (4, 4) float array when it is one and finite, else None."""
    if T is None:
        return None
    try:
        a = np.asarray(T, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if a.shape != (4, 4) or not np.isfinite(a).all():
        return None
    return a


def _run_solvers(seq, specs, inputs, scale_true: float, meta: dict, mode: str, timing: dict) -> list[dict]:
    rows = []
    X_est = np.full((len(specs), 4, 4), np.nan)
    Y_est = np.full((len(specs), 4, 4), np.nan)
    for k, spec in enumerate(specs):
        row = _row(meta, mode, spec.name, timing)
        # a pose solver that also takes the pixels (he_ml) gets them wherever the pixel solvers do
        with_pixels = spec.run_pixels is not None and pixels_available(seq.info)
        wants_pixels = spec.kind == PIXEL_KIND or with_pixels
        if wants_pixels and PIXEL_KIND not in inputs:
            try:
                inputs[PIXEL_KIND] = _pixel_input(seq, inputs)
            except Exception as exc:  # every pixel solver of the sequence gets the reason
                inputs[PIXEL_KIND] = exc
        if wants_pixels and isinstance(inputs[PIXEL_KIND], BaseException):
            row["error"] = "pixels could not be rebuilt: " + _error_text(inputs[PIXEL_KIND])
            rows.append(row)
            continue
        A, B = inputs[spec.kind]
        run = functools.partial(spec.run_pixels, views=inputs[PIXEL_KIND][1]) if with_pixels else spec.run
        row["n_motions"] = int(A.shape[0])
        note = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            try:
                res = _registry.normalise_result(run(A, B), spec.kind, spec.name)
            except Exception as exc:  # recorded; the run goes on
                res, note = None, _error_text(exc)
            row["runtime_ms"] = 1000.0 * (time.perf_counter() - t0)
        with_y = spec.kind in _WITH_Y
        if res is not None:
            X = _finite_pose(res.X)
            Y = _finite_pose(res.Y) if with_y else None
            if X is None or (with_y and Y is None):
                which = "X" if X is None else "Y"
                note = f"NonFiniteEstimate: expected a finite 4x4 {which}, got NaN/inf entries or another shape"
            else:
                row["ok"] = True
                X_est[k] = X
                if Y is not None:
                    Y_est[k] = Y
                if res.scale is not None:
                    s = float(res.scale)
                    row["scale_est"] = s
                    row["scale_err_rel"] = abs(s - scale_true) / scale_true if scale_true > 0 else math.nan
                if res.n_inliers is not None:
                    row["n_inliers"] = float(res.n_inliers)
                warned = [w for w in caught if issubclass(w.category, DegenerateMotionWarning)]
                if warned:
                    note = f"{warned[0].category.__name__}: {warned[0].message}"
        row["error"] = note or ""
        rows.append(row)
    if rows:
        xr, xt = se3.pose_error(X_est, seq.X)
        yr, yt = se3.pose_error(Y_est, seq.Y)
        for k, row in enumerate(rows):
            row["X_rot_err_deg"], row["X_trans_err_mm"] = float(xr[k]), float(xt[k])
            if specs[k].kind in _WITH_Y:
                row["Y_rot_err_deg"], row["Y_trans_err_mm"] = float(yr[k]), float(yt[k])
    return rows


#: Kinds of solvers that return ``Y`` too.
_WITH_Y = ("axyb", "pixels")

_NAN_TIMING = {"time_offset_runtime_ms": math.nan, "time_offset_peak_corr": math.nan, "time_offset_est_s": math.nan}


def _failed_rows(info, specs, syncs, message: str) -> list[dict]:
    meta = _meta(info)
    rows = []
    for mode in _modes(info, syncs):
        timing = dict(_NAN_TIMING, time_offset_err_ms=math.nan)
        for spec in _solvers_for(info, specs):
            row = _row(meta, mode, spec.name, timing)
            row["error"] = message
            rows.append(row)
    return rows


def _evaluate(seq, specs, syncs) -> list[dict]:
    info = seq.info
    meta = _meta(info)
    here = _solvers_for(info, specs)
    scale_true = seq.scale
    rows: list[dict] = []
    for mode in _modes(info, syncs):
        if mode == "oracle":
            offset = None
            timing = dict(_NAN_TIMING, time_offset_err_ms=math.nan)  # as published: no estimate, no error
        else:
            try:
                est, rt_ms = _estimate_offset(seq)
            except Exception as exc:
                msg = "clock-offset estimation failed: " + _error_text(exc)
                timing = dict(_NAN_TIMING, time_offset_err_ms=math.nan)
                for spec in here:
                    row = _row(meta, mode, spec.name, timing)
                    row["error"] = msg
                    rows.append(row)
                continue
            offset = float(est.offset_s)
            timing = {
                "time_offset_err_ms": 1000.0 * (offset - seq.time_offset),
                "time_offset_runtime_ms": rt_ms,
                "time_offset_peak_corr": float(est.peak_corr),
                "time_offset_est_s": offset,
            }
        try:
            inputs = _solver_input(seq, offset)
        except Exception as exc:
            msg = "pairing failed: " + _error_text(exc)
            for spec in here:
                row = _row(meta, mode, spec.name, timing)
                row["error"] = msg
                rows.append(row)
            continue
        mode_rows = _run_solvers(seq, here, inputs, scale_true, meta, mode, timing)
        add_bound_columns(mode_rows, seq, offset, inputs["keyframes"])
        rows.extend(mode_rows)
    return rows


def evaluate_sequence(seq, solvers=None, sync=EVAL_SYNCS) -> pd.DataFrame:
    """Run the protocol on one loaded sequence.

    Parameters
    ----------
    seq : kinhec.io.Sequence
        A sequence from :func:`kinhec.io.load_sequence` or
        :func:`kinhec.io.iter_sequences`.
    solvers : iterable of str, optional
        Solver names (default: all; a pixel solver only where
        :func:`pixels_available`, with the recipe in ``seq.info["extra_json"]``).
    sync : iterable of str
        Evaluation synchronisations, a subset of :data:`EVAL_SYNCS`
        (``estimated`` applies to asynchronous sequences only).

    Returns
    -------
    pandas.DataFrame
        One row per solver and synchronisation, with the columns of
        :data:`kinhec.schema.RESULTS_SCHEMA`.

    Raises
    ------
    UnknownNameError
        For an unknown solver or synchronisation name.
    """
    names = _check_solvers(solvers)
    syncs = _check_sync(sync)
    specs = [_registry.evaluated_spec(n) for n in names]
    return _results_table(_evaluate(seq, specs, syncs)).to_pandas()


def _results_table(rows: list[dict]) -> pa.Table:
    cols = {f.name: [r[f.name] for r in rows] for f in RESULTS_SCHEMA}
    return pa.Table.from_pydict(cols, schema=RESULTS_SCHEMA)


# --------------------------------------------------------------------------- #
# one unit of work (a shard)
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class BenchmarkTask:
    """One shard to evaluate.

    Attributes
    ----------
    root : str
        Dataset folder.
    part_path : str
        Where the unit's rows go (written atomically).
    unit : str
        ``<track>-<shard>`` (the stem of the shard file).
    track : str
    shard_index : int
    records : tuple of dict
        The index rows of the sequences to evaluate, in order.
    solvers : tuple of str
    sync : tuple of str
    fingerprint : str
        Written into the part's metadata; a part is reused only when it matches.
    solver_modules : tuple of str
        Modules registering plug-in solvers, imported by a worker that lacks them.
    """

    root: str
    part_path: str
    unit: str
    track: str
    shard_index: int
    records: tuple
    solvers: tuple
    sync: tuple
    fingerprint: str
    solver_modules: tuple = ()

    @property
    def sequence_ids(self) -> list[str]:
        return [r["sequence_id"] for r in self.records]


@dataclass
class UnitOutcome:
    """What a worker reports for a unit (same fields as the generator's shard outcome, plus ``unit``, ``n_rows``)."""

    track: str
    shard_index: int
    n_sequences: int
    ok: bool
    seconds: float = 0.0
    unit: str = ""
    n_rows: int = 0
    n_failed_rows: int = 0
    failed_sequence: str | None = None
    error: str | None = None
    traceback: str | None = None


def _loaded(root: str, records: tuple):
    """Yield ``(index row, Sequence or exception)``; one unreadable sequence does not stop the others."""
    man = pd.DataFrame.from_records(list(records))
    k = 0
    it = kio.iter_sequences(root, man)
    while k < len(records):
        try:
            seq = next(it)
        except StopIteration:
            return
        except Exception as exc:  # the iterator is finished: load the rest one by one
            yield records[k], exc
            for rec in records[k + 1 :]:
                try:
                    one = kio.load_sequence(root, rec["sequence_id"], man)
                except Exception as exc2:
                    one = exc2
                yield rec, one
            return
        yield records[k], seq
        k += 1


def run_unit(task: BenchmarkTask) -> UnitOutcome:
    """Evaluate one shard and write its part file; never raises (failures come back in the outcome).

    The solvers run with BLAS on one thread (:func:`kinhec.blas.single_threaded_blas`): the rows then do not
    depend on ``OPENBLAS_NUM_THREADS``, and parallel workers do not oversubscribe the cores.
    """
    t0 = time.process_time()
    current = None
    try:
        if any(n not in _registry.evaluated_names() for n in task.solvers):  # a fresh worker: import the plug-ins
            _registry.load_plugins(task.solver_modules)
        specs = [_registry.evaluated_spec(n) for n in task.solvers]
        rows: list[dict] = []
        with single_threaded_blas():
            for rec, seq in _loaded(task.root, task.records):
                current = rec.get("sequence_id")
                if isinstance(seq, BaseException):
                    rows.extend(_failed_rows(rec, specs, task.sync, "reading failed: " + _error_text(seq)))
                else:
                    rows.extend(_evaluate(seq, specs, task.sync))
        current = None
        table = _results_table(rows)
        meta = {PART_METADATA_KEY: jsonutil.dumps({"fingerprint": task.fingerprint, "sequence_ids": task.sequence_ids})}
        _write_parquet_atomic(Path(task.part_path), table.replace_schema_metadata(meta))
        n_failed = sum(1 for r in rows if not r["ok"])
        return UnitOutcome(task.track, task.shard_index, len(task.records), True, time.process_time() - t0,
                           unit=task.unit, n_rows=len(rows), n_failed_rows=n_failed)  # fmt: skip
    except Exception as exc:  # reported to the parent, which logs the traceback and goes on
        return UnitOutcome(
            task.track, task.shard_index, len(task.records), False, time.process_time() - t0, unit=task.unit,
            failed_sequence=current, error=_error_text(exc), traceback=traceback.format_exc(),
        )  # fmt: skip


def _write_parquet_atomic(path: Path, table: pa.Table) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda tmp: pq.write_table(table, tmp, compression=COMPRESSION))


def _part_is_current(path: Path, fingerprint: str, sequence_ids: list[str]) -> bool:
    if not path.is_file():
        return False
    try:
        md = pq.read_metadata(path)
        kv = md.metadata or {}
        text = kv.get(PART_METADATA_KEY.encode())
        if text is None or not md.schema.to_arrow_schema().equals(RESULTS_SCHEMA, check_metadata=False):
            return False
        info = jsonutil.loads(text.decode())
    except Exception:  # unreadable or foreign file: recompute
        return False
    return isinstance(info, dict) and info.get("fingerprint") == fingerprint and info.get("sequence_ids") == sequence_ids


# --------------------------------------------------------------------------- #
# planning
# --------------------------------------------------------------------------- #
_UNIT_RE = re.compile(r"^(?P<track>.+)-(?P<shard>\d+)$")


def _file_stat(root: Path, rel) -> list:
    if not isinstance(rel, str):
        return [None, None]
    try:
        st = (root / rel).stat()
    except OSError:
        return [rel, None]
    return [rel, st.st_size]


def _fingerprint(root: Path, records: list[dict], solvers, syncs) -> str:
    """Options and data a part depends on, as one JSON string."""
    seq_keys = [
        [r.get("sequence_id"), r.get("seed"), r.get("generator_version"), r.get("robot_row_group"),
         r.get("camera_row_group")] + [r.get(c) for c in _POSE_TRUTH]
        for r in records
    ]  # fmt: skip
    digest = hashlib.sha256(jsonutil.dumps(seq_keys).encode()).hexdigest()[:16]
    first = records[0] if records else {}
    fp = {
        "protocol_version": PROTOCOL_VERSION,
        "kinhec_version": __version__,
        "kinhec_sources": source_digest(),
        "solvers": list(solvers),
        "sync": list(syncs),
        "sequences": digest,
        "files": [_file_stat(root, first.get("robot_file")), _file_stat(root, first.get("camera_file"))],
    }
    plugins = {n: _plugin_identity(n) for n in solvers if _registry.is_plugin(n)}
    if plugins:  # a plug-in whose code moved or was replaced is evaluated again
        fp["plugins"] = plugins
    return jsonutil.dumps(fp, sort_keys=True)


_POSE_TRUTH = [f"{p}_{c}" for p in ("X", "Y") for c in ("px", "py", "pz", "qw", "qx", "qy", "qz")]


def _plugin_identity(name: str) -> str:
    spec = _registry.SOLVERS.get(name)
    fn = getattr(getattr(spec, "run", None), "__wrapped__", None)
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"


def _plan(root: Path, manifest: pd.DataFrame, parts: Path, solvers, syncs, solver_modules=()) -> list[BenchmarkTask]:
    """One task per shard (``robot_file``) of the selected sequences, in index order."""
    tasks = []
    files = manifest["robot_file"].astype(object).where(manifest["robot_file"].notna(), None)
    records = manifest.to_dict("records")
    groups: dict = {}
    for rec, f in zip(records, files):
        groups.setdefault(f if isinstance(f, str) else f"?{rec.get('track')}", []).append(rec)
    used = set()
    for n, (f, recs) in enumerate(groups.items()):
        stem = Path(f).stem if not f.startswith("?") else f"{f[1:]}-nofile"
        m = _UNIT_RE.match(stem)
        track = str(recs[0].get("track"))
        shard_index = int(m.group("shard")) if m else n
        unit = re.sub(r"[^A-Za-z0-9_.-]", "_", stem)
        while unit in used:
            unit += "_"
        used.add(unit)
        tasks.append(
            BenchmarkTask(
                root=str(root), part_path=str(parts / f"{unit}.parquet"), unit=unit, track=track,
                shard_index=shard_index, records=tuple(recs), solvers=tuple(solvers), sync=tuple(syncs),
                fingerprint=_fingerprint(root, recs, solvers, syncs), solver_modules=tuple(solver_modules),
            )
        )  # fmt: skip
    return tasks


def _slim_index(root: Path, pixels: bool) -> pd.DataFrame:
    """The index without the generation recipes, which keeps the run's memory and its tasks small.

    The recipe columns are not read at all (about 0.5 GB of JSON text on the full tier).  With a pixel
    solver to run, ``extra_json`` is read for the rows of a pixel track with a pnp camera only (the others
    cannot qualify, :func:`pixels_available`), and the rows whose pixels can be rebuilt keep it cut down
    to ``{"recipe": ...}``; every other row has None there.
    """
    out = kio.load_manifest(root, without=_RECIPE_COLUMNS)
    if pixels:
        extra = np.full(len(out), None, dtype=object)
        maybe = np.flatnonzero(out["track"].astype(str).isin(PIXEL_TRACKS).to_numpy()
                               & (out["camera_noise_model"].astype(str) == "pnp").to_numpy())  # fmt: skip
        if maybe.size:
            texts = read_index_column(root, "extra_json", out["sequence_id"].iloc[maybe], PIXEL_TRACKS)
            for i, r in zip(maybe, out.iloc[maybe].to_dict("records")):
                r["extra_json"] = texts.get(r["sequence_id"])
                if pixels_available(r):
                    extra[i] = jsonutil.dumps({"recipe": _stored_recipe(r)})
        out["extra_json"] = extra
    return out


def _select(manifest: pd.DataFrame, tracks, max_sequences) -> pd.DataFrame:
    man = manifest
    if tracks is not None:
        present = list(dict.fromkeys(man["track"].dropna().astype(str)))
        absent = [t for t in tracks if t not in present]
        if absent:
            raise InputError(
                f"tracks: expected tracks present in the dataset ({', '.join(present) or 'none'}), "
                f"got {', '.join(absent)} without any sequence"
            )
        man = man.loc[man["track"].isin(tracks).to_numpy()]
    if max_sequences is not None:
        man = man.groupby("track", sort=False, dropna=False).head(max_sequences)
    return man


# --------------------------------------------------------------------------- #
# the run
# --------------------------------------------------------------------------- #
@dataclass
class BenchmarkSummary:
    """What :func:`run_benchmark` did.

    Attributes
    ----------
    root, out : Path
        Dataset folder and output folder.
    solvers, tracks, sync : list of str
        What was evaluated (``tracks``: the tracks of the selected sequences).
    planned_sequences, planned_units : int
        Selected sequences and the shards (units) they live in.
    skipped_units, computed_units : int
        Units whose part was already current, and units computed now.
    n_rows, n_ok : int
        Rows of ``results.parquet`` and those with ``ok``.
    unreadable : list of str
        Sequences that could not be read (their rows say ``reading failed``); the run is not ``ok``.
    failed : list of UnitOutcome
        Units that could not be evaluated (their sequences are missing from the results).
    interrupted : bool
        ``Ctrl+C``: the outputs were not written; run again to resume.
    wall_s, cpu_s : float
        Wall time of the run and CPU time spent in the units computed now.
    files : dict
        Paths of the written outputs (``results``, ``results_csv``,
        ``leaderboard``, ``summary``, ``protocol``).
    results : pandas.DataFrame or None
        The results table as written.
    log_path : Path or None
        Tracebacks of failed units.
    fingerprint : str
        :func:`kinhec.fingerprint.run_fingerprint` of the run.
    subset : bool
        True unless every solver, synchronisation and sequence was evaluated;
        a subset run writes into ``<benchmark folder>/subsets/<fingerprint>``.
    parts_dir : Path or None
        Scratch folder of the run's per-shard parts.
    aborted : bool
        A second ``Ctrl+C``: running units were stopped at once.
    """

    root: Path
    out: Path
    solvers: list = field(default_factory=list)
    tracks: list = field(default_factory=list)
    sync: list = field(default_factory=list)
    planned_sequences: int = 0
    planned_units: int = 0
    skipped_units: int = 0
    computed_units: int = 0
    n_rows: int = 0
    n_ok: int = 0
    unreadable: list = field(default_factory=list)
    failed: list = field(default_factory=list)
    interrupted: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    files: dict = field(default_factory=dict)
    results: pd.DataFrame | None = None
    log_path: Path | None = None
    fingerprint: str = ""
    subset: bool = False
    parts_dir: Path | None = None
    aborted: bool = False

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted and not self.unreadable


def run_benchmark(
    root,
    *,
    out=None,
    solvers: Iterable[str] | None = None,
    tracks: Iterable[str] | None = None,
    max_sequences: int | None = None,
    sync: Iterable[str] = EVAL_SYNCS,
    workers: int | None = 1,
    executor: str = "local",
    scheduler: str | None = None,
    on_event: Callable[[str, dict], None] | None = None,
    solver_modules: Iterable[str] = (),
) -> BenchmarkSummary:
    """Run (or resume) the benchmark on a dataset folder and write its outputs.

    Parameters
    ----------
    root : str or Path
        Dataset folder (``sequences.parquet`` and the shards).
    out : str or Path, optional
        Output folder (default ``root/benchmarks``).
    solvers : iterable of str, optional
        Solver names (default: every solver: the eleven published
        baselines, ``he_ml``, the pixel solver ``reprojection`` (on the
        sequences whose pixels can be rebuilt) and the plug-ins).
    solver_modules : iterable of str
        Modules (or ``.py`` files) registering plug-in solvers, imported first;
        the ``kinhec.solvers`` entry points are loaded too
        (:func:`kinhec.solvers.load_plugins`).
    tracks : iterable of str, optional
        Only these tracks (default: every sequence of the index).  A track
        without any sequence in the dataset is an error.
    max_sequences : int, optional
        The first ``max_sequences`` sequences (index order) of each track.
    sync : iterable of str
        ``"oracle"`` and / or ``"estimated"``.
    workers : int
        Parallel workers (``None``: number of cores).  One local worker runs
        in this process.
    executor : {"local", "dask"}
        Local processes, or Dask (``scheduler`` address, or a LocalCluster).
    scheduler : str, optional
        Address of a Dask scheduler (implies ``executor="dask"``).
    on_event : callable, optional
        ``on_event(kind, data)`` for a progress display: ``"start"``
        (``planned``, ``done`` sequences, ``todo_shards``), ``"shard"``
        (``outcome``: a :class:`UnitOutcome`), ``"interrupt"`` (``running``),
        ``"write"`` (outputs being written), ``"end"`` (``summary``).

    Returns
    -------
    BenchmarkSummary
        ``summary.ok`` is False if a unit failed or the run was interrupted.

    Raises
    ------
    UnknownNameError
        For an unknown solver, track or synchronisation name (the message lists the valid ones).
    InputError
        For other bad arguments, or a folder another benchmark run is writing.
    DatasetFormatError
        If ``root`` is not a dataset folder or its index cannot be read.
    """
    if isinstance(solver_modules, str):
        solver_modules = [solver_modules]
    solver_modules = list(solver_modules or ())
    _registry.load_plugins(solver_modules)
    solver_list = _check_solvers(solvers)
    # plug-ins registered by an importable module are imported again by workers that lack them
    solver_modules += [m for n in solver_list if _registry.is_plugin(n)
                       for m in [_registry.SOLVERS[n].module] if m and m != "__main__" and m not in solver_modules]  # fmt: skip
    track_list = _check_tracks(tracks)
    sync_list = _check_sync(sync)
    max_sequences = _check_count(max_sequences, "max_sequences", allow_none=True)
    if workers is None:
        workers = os.cpu_count() or 1
    workers = _check_count(workers, "workers", allow_none=False)
    if executor not in EXECUTORS:
        raise InputError(f"executor: expected one of {', '.join(EXECUTORS)}, got {executor!r}")
    if scheduler:
        executor = "dask"
    if on_event is not None and not callable(on_event):
        raise InputError(f"on_event: expected a callable on_event(kind, data), got {type(on_event).__name__}")
    emit = on_event or (lambda kind, data: None)

    try:
        root = Path(root)
    except TypeError:
        raise InputError(f"root: expected a folder path, got {type(root).__name__}") from None
    refuse_if_in_use(root, "benchmark")  # a folder being generated: say so (its writer lock is taken below)
    manifest = _slim_index(root, any(_registry.uses_pixels(n) for n in solver_list))
    selected = _select(manifest, track_list, max_sequences)
    bench_dir = root / RESULTS_DIR if out is None else Path(out)
    if bench_dir.exists() and not bench_dir.is_dir():
        raise InputError(f"out: expected a folder, got the file {bench_dir}")
    # a subset run (other solvers, syncs or sequences) gets its own folder and never replaces a full run
    full = solver_list == _registry.evaluated_names() and sync_list == list(EVAL_SYNCS) and len(selected) == len(manifest)
    fingerprint = run_fingerprint(solvers=solver_list, sync=sync_list, sequence_ids=list(selected["sequence_id"]),
                                  protocol_version=PROTOCOL_VERSION, kinhec_version=__version__)  # fmt: skip
    where = run_folders(root, bench_dir, fingerprint, full=full)
    out = where["out"]

    t_wall = time.perf_counter()
    summary = BenchmarkSummary(root=root, out=out, solvers=solver_list, sync=sync_list,
                               tracks=list(dict.fromkeys(selected["track"].astype(str))),
                               fingerprint=fingerprint, subset=not full, parts_dir=where["parts"])  # fmt: skip
    parts = where["parts"]
    with writer_lock(where["lock_root"]):
        parts.mkdir(parents=True, exist_ok=True)
        for p in parts.glob("*.tmp"):
            p.unlink(missing_ok=True)
        # the tasks carry absolute paths: a Dask worker resolves a relative one in its own working directory
        tasks = _plan(root.resolve(), selected, parts.resolve(), solver_list, sync_list, solver_modules)
        summary.planned_sequences = len(selected)
        summary.planned_units = len(tasks)
        summary.log_path = parts / _LOG_NAME
        todo = [t for t in tasks if not _part_is_current(Path(t.part_path), t.fingerprint, t.sequence_ids)]
        summary.skipped_units = len(tasks) - len(todo)
        done = summary.planned_sequences - sum(len(t.records) for t in todo)
        emit("start", {"planned": summary.planned_sequences, "done": done, "todo_shards": len(todo)})
        if todo:
            _run_tasks(todo, workers, executor, scheduler, summary, emit)
        if not summary.interrupted:
            emit("write", {"out": out})
            failed = {o.unit for o in summary.failed}
            table = _assemble([Path(t.part_path) for t in tasks if t.unit not in failed])
            summary.files, summary.results = _write_outputs(out, table, summary)
            summary.n_rows = table.num_rows
            summary.n_ok = int(np.count_nonzero(table.column("ok").to_numpy(zero_copy_only=False)))
            err = summary.results["error"].fillna("")
            summary.unreadable = sorted(set(summary.results.loc[err.str.startswith("reading failed"), "sequence_id"]))
    summary.wall_s = time.perf_counter() - t_wall
    emit("end", {"summary": summary})
    return summary


def _run_tasks(todo, workers, executor, scheduler, summary: BenchmarkSummary, emit) -> None:
    ex = make_executor(run_unit, executor, workers, scheduler, inline_single=True)
    pending = list(reversed(todo))
    running: dict = {}
    try:  # Dask: every worker must read the dataset and write the part files where this process reads them
        ex.require_folder(summary.root)
        ex.require_folder(summary.parts_dir, scratch=summary.parts_dir)
    except BaseException:
        ex.shutdown()
        raise

    def record(outcome: UnitOutcome) -> None:
        summary.cpu_s += outcome.seconds
        if outcome.ok:
            summary.computed_units += 1
        else:
            summary.failed.append(outcome)
            with open(summary.log_path, "a") as log:
                log.write(f"--- unit {outcome.unit} failed at {time.ctime()}\nsequence: {outcome.failed_sequence}\n"
                          f"{outcome.traceback}\n")  # fmt: skip
        emit("shard", {"outcome": outcome})

    try:
        try:
            while pending or running:
                while pending and len(running) < 2 * ex.capacity:
                    task = pending.pop()
                    running[ex.submit(task)] = task
                if not running:
                    break
                for fut in ex.wait_any(list(running), timeout=0.5):
                    task = running.pop(fut)
                    try:
                        outcome = fut.result()
                    except Exception as exc:  # a worker process died, or the cluster lost the task
                        outcome = UnitOutcome(task.track, task.shard_index, len(task.records), False, unit=task.unit,
                                              error=_error_text(exc), traceback=traceback.format_exc())  # fmt: skip
                    if outcome.ok and not Path(task.part_path).is_file():  # a worker writing a folder of its own
                        outcome = UnitOutcome(task.track, task.shard_index, len(task.records), False, unit=task.unit,
                                              error=f"a worker reported {task.part_path} written, but it is not there: "
                                                    "the Dask workers must share this folder's file system")  # fmt: skip
                    record(outcome)
        except KeyboardInterrupt:
            pending.clear()

            def finished(outcome) -> None:
                if outcome.ok:
                    summary.cpu_s += outcome.seconds
                    summary.computed_units += 1
                emit("shard", {"outcome": outcome})

            # the units already running finish (workers ignore SIGINT); a second Ctrl+C aborts them
            drain_after_interrupt(ex, running, summary, emit, finished)
    finally:
        ex.shutdown()


# --------------------------------------------------------------------------- #
# outputs
# --------------------------------------------------------------------------- #
def _assemble(paths: list[Path]) -> pa.Table:
    """The parts as one table, sorted by sequence, synchronisation and solver.

    The rows are put in order one column at a time, each source column dropped once taken, so that the
    sorted copy never coexists with the whole unsorted table (the full tier's ``mixed`` track: 856k rows).
    """
    tables = [pq.read_table(p).replace_schema_metadata(None) for p in paths if p.is_file()]
    table = pa.concat_tables(tables) if tables else RESULTS_SCHEMA.empty_table()
    del tables
    table = table.cast(RESULTS_SCHEMA)
    pa.default_memory_pool().release_unused()  # (the parts' decoding buffers, before the sorted copy)
    if not table.num_rows:
        return table
    order = pc.sort_indices(table, sort_keys=[("sequence_id", "ascending"), ("eval_sync", "ascending"),
                                              ("solver", "ascending")])  # fmt: skip
    columns = []
    for name in RESULTS_SCHEMA.names:
        columns.append(table.column(name).take(order).combine_chunks())
        table = table.drop_columns([name])
    table = pa.Table.from_arrays(columns, schema=RESULTS_SCHEMA)
    pa.default_memory_pool().release_unused()
    return table


def _write_outputs(out: Path, table: pa.Table, summary: BenchmarkSummary) -> tuple[dict, pd.DataFrame]:
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "results": out / RESULTS_FILE,
        "results_csv": out / RESULTS_CSV_FILE,
        "leaderboard": out / LEADERBOARD_FILE,
        "summary": out / SUMMARY_FILE,
        "protocol": out / PROTOCOL_FILE,
    }
    fp = data_fingerprint(summary.root)  # ties the results to the data they were computed on
    meta = {FINGERPRINT_KEY: fp.encode()} if fp else None
    _write_parquet_atomic(files["results"], table.replace_schema_metadata(meta) if meta else table)
    _write_csv(files["results_csv"], table)  # (its frame, with nullable integers, is freed before the next)
    results = table.to_pandas()
    dataset = summary.root.resolve().name or str(summary.root)
    summ = summarize_results(results, solvers=summary.solvers)
    atomic_write_text(files["leaderboard"],
                leaderboard_markdown(results, solvers=summary.solvers, dataset=dataset, summary=summ))  # fmt: skip
    summ = {
        "kinhec_version": __version__,
        "protocol_version": PROTOCOL_VERSION,
        "dataset": str(summary.root),
        "n_sequences": int(sum(summ["sequences"].values())),
        "n_rows": int(len(results)),
        "n_ok": int(results["ok"].sum()),
        "solvers": summary.solvers,
        "tracks": summary.tracks,
        "eval_sync": summary.sync,
        "fingerprint": summary.fingerprint,
        "subset": summary.subset,
        "failed_units": [o.unit for o in summary.failed],
        **summ,
    }
    jsonutil.dump(summ, files["summary"], indent=2)
    jsonutil.dump(protocol_info(summary.solvers, summary.sync), files["protocol"], indent=2)
    return files, results




def _write_csv(path: Path, table: pa.Table) -> None:
    """``results.csv``: integer columns with missing values written as integers (nullable ``Int64``)."""
    df = table.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    atomic_write(path, lambda tmp: df.to_csv(tmp, index=False, lineterminator="\n"))
    del df
    pa.default_memory_pool().release_unused()


def _defaults(fn) -> dict:
    """Keyword defaults of ``fn`` (the settings the registry runs it with)."""
    return {k: p.default for k, p in inspect.signature(fn).parameters.items() if p.default is not inspect.Parameter.empty}


def protocol_info(solvers=None, sync=EVAL_SYNCS) -> dict:
    """Every constant of the protocol, the solvers evaluated and the library versions (``protocol.json``)."""
    import scipy

    names = _check_solvers(solvers)
    syncs = _check_sync(sync)
    return {
        "protocol_version": PROTOCOL_VERSION,
        "eval_sync": {
            "modes": syncs,
            "oracle": "every sequence; synchronous: streams paired row by row; asynchronous: measured robot stream "
                      "interpolated (SLERP on rotations, linear on translations) at camera t - time_offset_s "
                      "(ground truth); the time_offset_* columns NaN",
            "estimated": "asynchronous sequences only; the same interpolation at camera t - estimate, the estimate "
                         "from estimate_time_offset on the measured streams; sequences without a correlation peak "
                         "are kept (offset 0, time_offset_peak_corr 0)",
        },  # fmt: skip
        "frames": "camera frames with a finite measurement and inside the robot stream's time range",
        "keyframes": {
            "min_rot_deg": KEYFRAME_MIN_ROT_DEG,
            "min_trans_m": KEYFRAME_MIN_TRANS_M,
            "max_keyframes": KEYFRAME_MAX,
            "fallback": "every paired frame when fewer than 3 keyframes survive",
            "selected_on": "the paired measured flange poses T_base_ee",
        },
        "solver_input": {
            "axxb": "consecutive keyframe motions A = inv(A_i) A_j, B = inv(B_i) B_j",
            "axyb": "absolute keyframe pairs A_i = T_base_ee, B_i = inv(T_cam_target) (eye-in-hand) or "
                    "T_cam_target (eye-to-hand)",
            "pixels": "the target corners of the same keyframes, re-simulated from the recipe in extra_json, with "
                      "the measured robot poses A_i",
            "n_motions": "motions given to an axxb solver; pairs given to an axyb solver; views given to a pixel "
                         "solver",
        },  # fmt: skip
        "pixel_solvers": {
            "runs_on": "sequences with camera_noise_model 'pnp', synchronous streams and kinhec's recipe in "
                       "extra_json (the pixels are not stored; copies without a recipe get no row); oracle pairing",
            "views": "the keyframes of the pose solvers; the points a detector reports (inside the image with the "
                     "visibility margin), with the pixel noise the generator drew",
            "intrinsics": "the camera preset's (fx = fy = f_px, cx, cy, no distortion), held fixed, as in the "
                          "generator's PnP",
            "robot_poses": "as measured, not refined",
            "loss": "Huber on each pixel coordinate, threshold 1.5 px",
            "check": f"the recipe's measured poses equal the stored ones at every keyframe (within "
                     f"{PIXEL_CHECK_TOL[0]} deg / {PIXEL_CHECK_TOL[1]} mm), else ok = False",
        },  # fmt: skip
        "monocular": {
            "rule": "world_frame == 'vo_origin' or scale != 1",
            "scale_solver": SCALE_SOLVER,
            "scale_solver_runs_on": "every sequence",
            "other_solvers": "run unchanged on monocular sequences",
        },
        "metrics": {
            "X_rot_err_deg": "geodesic angle of inv(R_true) R_est [deg]",
            "X_trans_err_mm": "Euclidean distance of the translations [mm], against the metric ground truth",
            "Y_rot_err_deg / Y_trans_err_mm": "the same for Y (axyb and pixel solvers)",
            "runtime_ms": "wall time of the solver call alone (time.perf_counter), input checks included",
            "time_offset_err_ms": "(estimated - true offset) * 1000",
            "scale_err_rel": "|s_est - s_true| / s_true (andreff_scale)",
            "ok": "the solver returned a finite X (and Y) without raising",
        },
        "time_offset": {
            "method": "normalised cross-correlation of the angular speeds of the two measured streams",
            "citation": _time_offset_mod.CITATION,
            **TIME_OFFSET_SETTINGS,
            "grid_dt_s_default": "a quarter of the median camera period",
        },
        "ransac": {
            **{k: v for k, v in _defaults(_ransac_mod.ransac_axxb).items()},
            **_registry.RANSAC_SETTINGS,
            "seed": f"numpy.random.default_rng({_ransac_mod.RANSAC_SEED}) on every call (kinhec.solvers.ransac.RANSAC_SEED)",
        },
        "lm_refinement": {
            "max_nfev": _defaults(_refine_mod.refine_lm).get("max_nfev"),
            "cost": _defaults(_refine_mod.refine_lm).get("cost"),
        },
        "solvers": [
            {"name": n, "kind": spec.kind, "returns": spec.returns, "citation": spec.citation,
             "description": spec.description, **({"plugin": True, "module": spec.module} if _registry.is_plugin(n) else {}),
             **({"pixels": "also the pixels where the pixel solvers run"} if spec.run_pixels is not None else {})}
            for n in names for spec in [_registry.evaluated_spec(n)]
        ],  # fmt: skip
        "versions": {
            "kinhec": __version__,
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "pandas": pd.__version__,
            "pyarrow": pa.__version__,
            "python": platform.python_version(),
        },
    }


# --------------------------------------------------------------------------- #
# summaries and the leaderboard
# --------------------------------------------------------------------------- #
_STAT_COLUMNS = ("X_rot_err_deg", "X_trans_err_mm", "Y_rot_err_deg", "Y_trans_err_mm", "runtime_ms",
                 "scale_err_rel", "n_inliers", "n_motions")  # fmt: skip


def _ordered(values, reference) -> list:
    """The distinct strings of ``values``: those of ``reference`` in its order, then the others sorted."""
    if isinstance(values, np.ndarray) and values.dtype == object:
        values = [v for v in pd.unique(values) if isinstance(v, str)]  # (first appearance, as below; one C pass)
    else:
        values = list(dict.fromkeys(v for v in values if isinstance(v, str)))
    known = [v for v in reference if v in values]
    return known + sorted(v for v in values if v not in known)


def _num(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def _strings(s: pd.Series) -> np.ndarray:
    """A column as an object array of str, missing values (None, NaN, NA) as ``""``."""
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    names = np.asarray(uniques, dtype=object)
    if pd.api.types.infer_dtype(names, skipna=True) in ("string", "empty"):
        # strings and missing values (the results' text columns): every row points at one of the distinct
        # strings (a few per column but the sequence ids), missing ones (code -1) at the last, ""
        return np.append(names, "")[codes]
    return np.array(["" if _missing(v) else str(v) for v in s.to_numpy(dtype=object)], dtype=object)


def _median(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(np.median(x)) if x.size else math.nan


def _mean(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(np.mean(x)) if x.size else math.nan


_ERROR_COLUMNS = ("X_rot_err_deg", "X_trans_err_mm", "Y_rot_err_deg", "Y_trans_err_mm")


class _Columns:
    """The columns of a results table as numpy arrays, extracted once."""

    def __init__(self, results: pd.DataFrame) -> None:
        self.ok = results["ok"].to_numpy(dtype=bool, na_value=False)
        self.num = {c: _num(results[c]) for c in _STAT_COLUMNS + ("time_offset_err_ms", "time_offset_peak_corr",
                                                                  "time_offset_runtime_ms")}  # fmt: skip
        self.track = _strings(results["track"])
        self.solver = _strings(results["solver"])
        self.mode = _strings(results["eval_sync"])
        self.level = _strings(results["level"])
        self.sid = _strings(results["sequence_id"])

    def stats(self, idx: np.ndarray, compact: bool = False) -> dict:
        ok = self.ok[idx]
        n = int(idx.size)
        d = {"n": n, "n_ok": int(ok.sum()), "success_rate": float(ok.mean()) if n else math.nan}
        for c in (_ERROR_COLUMNS if compact else _STAT_COLUMNS):
            x = self.num[c][idx][ok]
            d[f"{c}_median"] = _median(x)
            if c in _ERROR_COLUMNS and not compact:
                d[f"{c}_mean"] = _mean(x)
        return d

    def clock(self, idx: np.ndarray) -> dict:
        _, first = np.unique(self.sid[idx], return_index=True)
        one = idx[first]
        err = np.abs(self.num["time_offset_err_ms"][one])
        return {
            "n_sequences": int(one.size),
            "abs_err_ms_median": _median(err),
            "abs_err_ms_mean": _mean(err),
            "peak_corr_median": _median(self.num["time_offset_peak_corr"][one]),
            "runtime_ms_median": _median(self.num["time_offset_runtime_ms"][one]),
        }


def _groups(*keys: np.ndarray) -> dict:
    """Row indices per distinct key tuple, in order of first appearance."""
    if keys[0].size == 0:
        return {}
    frame = pd.DataFrame({str(i): k for i, k in enumerate(keys)})
    return {k if isinstance(k, tuple) else (k,): np.asarray(v) for k, v in
            frame.groupby(list(frame.columns), sort=False).indices.items()}  # fmt: skip


def summarize_results(results: pd.DataFrame, solvers=None) -> dict:
    """Counts and medians of a results table (``summary.json`` without its header).

    Returns
    -------
    dict
        ``sequences[track]`` -> number of sequences;
        ``results[track][solver][eval_sync]`` -> ``n``, ``n_ok``,
        ``success_rate``, ``<column>_median`` (errors over the ``ok`` rows,
        runtime, scale error, inliers, motions) and ``<error>_mean``;
        ``levels[track][level][solver]`` -> ``n``, ``n_ok``, ``success_rate``
        and the error medians of the ``oracle`` rows;
        ``clock_offset[track]`` -> the clock-offset estimation, one value per
        sequence (``estimated`` rows); ``efficiency`` -> :func:`efficiency_summary`.
    """
    solver_order = _registry.evaluated_names() if solvers is None else list(solvers)
    out: dict = {"sequences": {}, "results": {}, "levels": {}, "clock_offset": {}, "efficiency": {}}
    if results is None or len(results) == 0:
        return out
    cols = _Columns(results)
    by_track = _groups(cols.track)
    for track in _ordered(cols.track, TRACKS):
        out["sequences"][track] = int(np.unique(cols.sid[by_track[(track,)]]).size)
    by_tsm = _groups(cols.track, cols.solver, cols.mode)
    oracle = np.flatnonzero(cols.mode == "oracle")
    by_tls = _groups(cols.track[oracle], cols.level[oracle], cols.solver[oracle])
    estimated = np.flatnonzero(cols.mode == "estimated")
    by_t_est = _groups(cols.track[estimated])
    tracks = _ordered(cols.track, TRACKS)
    solvers_seen = _ordered(cols.solver, solver_order)
    for track in tracks:
        per = {}
        for solver in solvers_seen:
            modes = {m: cols.stats(by_tsm[(track, solver, m)]) for m in EVAL_SYNCS if (track, solver, m) in by_tsm}
            if modes:
                per[solver] = modes
        out["results"][track] = per
        levels: dict = {}
        for (t, level, solver), idx in by_tls.items():
            if t == track:
                levels.setdefault(level, {})[solver] = cols.stats(oracle[idx], compact=True)
        out["levels"][track] = {lv: {s: v[s] for s in solvers_seen if s in v} for lv, v in levels.items()}
        if (track,) in by_t_est:
            out["clock_offset"][track] = cols.clock(estimated[by_t_est[(track,)]])
    out["efficiency"] = efficiency_summary(results, solver_order)
    return out


_EFFICIENCY_COLUMNS = ("X_rot_efficiency", "X_trans_efficiency", "X_rot_crlb_deg", "X_trans_crlb_mm")


def efficiency_summary(results: pd.DataFrame, solvers=None) -> dict:
    """Median efficiency (error / Cramér-Rao bound) per track and solver, ``oracle`` rows.

    Returns
    -------
    dict
        ``[track][solver]`` -> ``n`` (rows with a bound and a finite error),
        ``X_rot_efficiency_median``, ``X_trans_efficiency_median``,
        ``X_rot_crlb_deg_median``, ``X_trans_crlb_mm_median`` and
        ``modelled_fraction`` (share of those rows inside the bound's model).
        Empty for a results table without the bound columns.
    """
    if results is None or len(results) == 0 or not all(c in results.columns for c in _EFFICIENCY_COLUMNS):
        return {}
    solver_order = _registry.evaluated_names() if solvers is None else list(solvers)
    oracle = np.flatnonzero(_strings(results["eval_sync"]) == "oracle")  # (columns taken by index: no copy of the frame)
    track, solver = _strings(results["track"])[oracle], _strings(results["solver"])[oracle]
    eff = {c: _num(results[c])[oracle] for c in _EFFICIENCY_COLUMNS}
    modelled = results["crlb_modelled"].to_numpy(dtype=object)[oracle]
    finite = np.isfinite(eff["X_rot_efficiency"])
    by_ts = _groups(track[finite], solver[finite])
    rows = np.flatnonzero(finite)
    out: dict = {}
    for t in _ordered(track, TRACKS):
        per = {}
        for sv in _ordered(solver[track == t], solver_order):
            if (t, sv) not in by_ts:
                continue
            idx = rows[by_ts[(t, sv)]]
            d = {"n": int(idx.size)}
            for c in _EFFICIENCY_COLUMNS:
                d[f"{c}_median"] = _median(eff[c][idx])
            d["modelled_fraction"] = float(np.mean([m is True or m == 1 for m in modelled[idx]]))
            per[sv] = d
        if per:
            out[t] = per
    return out


def efficiency_markdown(results: pd.DataFrame, solvers=None, *, summary=None) -> str:
    """The efficiency section of the leaderboard (empty string without bound columns)."""
    eff = efficiency_summary(results, solvers) if summary is None else summary
    if not eff:
        return ""
    used = _ordered([s for per in eff.values() for s in per],
                    _registry.evaluated_names() if solvers is None else list(solvers))  # fmt: skip
    lines = ["## Efficiency (error / Cramér-Rao bound)", "",
             "Median over the sequences of each solver's X error divided by the sequence's Cramér-Rao bound "
             "(rotation / translation, `oracle`); 1 is the best any unbiased solver can do on the same keyframe "
             "pairs. `bound [deg / mm]` is the median bound itself. Where the data have effects the bound does not "
             "model (outliers, DH errors: `in model` < 100 %) a ratio is a comparison, not a limit.", ""]  # fmt: skip
    rows = []
    for track, per in eff.items():
        any_st = next(iter(per.values()))
        r = [track, f"{_f(any_st['X_rot_crlb_deg_median'], 4)} / {_f(any_st['X_trans_crlb_mm_median'], 3)}",
             _f(100.0 * any_st["modelled_fraction"], 0)]  # fmt: skip
        for sv in used:
            st = per.get(sv)
            r.append("-" if st is None else
                     f"{_f(st['X_rot_efficiency_median'], 2)} / {_f(st['X_trans_efficiency_median'], 2)}")  # fmt: skip
        rows.append(r)
    lines += _md_table(["track", "bound [deg / mm]", "in model %"] + [_solver_label(s) for s in used], rows) + [""]
    return "\n".join(lines)


def _f(v, digits: int) -> str:
    if v is None or not np.isfinite(v):
        return "-"
    if abs(v) >= 1e5:
        return f"{v:.3g}"
    return f"{v:.{digits}f}"


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table as lines, in the published leaderboard's layout (``|---|`` separators)."""
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


def _solver_label(name: str) -> str:
    """A solver's name as a table cell; plug-ins (not kinhec baselines) are marked."""
    return name + (" (plug-in)" if _registry.is_plugin(name) else "")


def _level_factors(level: str) -> dict:
    """``"cone=0|rot=8-15"`` -> ``{"cone": "0", "rot": "8-15"}`` (parts without ``=`` ignored)."""
    out = {}
    for part in str(level).split("|"):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _leaderboard_cell(text: str) -> str:
    return text.replace("|", "\\|")


def _level_sort_key(v: str):
    """Numbers in their numeric order (``3, 5, 10, 30``), then words alphabetically."""
    try:
        return (0, float(v), "")
    except ValueError:
        return (1, 0.0, v)


#: How a row without an estimate is judged: (prefix of its ``error``, kind, what it means).
FAILURE_KINDS = (
    ("DegenerateMotionError", "expected",
     "the motion does not determine what the solver estimates, and it says so rather than guess"),
    ("reading failed", "unexpected", "the sequence could not be read"),
    ("", "unexpected", "the solver raised an error or returned no estimate"),
)  # fmt: skip


def describe_failed_rows(results: pd.DataFrame, limit: int = 3) -> list[str]:
    """One line per kind of row without an estimate (``ok`` false): how many, which, and whether expected.

    Parameters
    ----------
    results : pandas.DataFrame
        A results table (``results.parquet``).
    limit : int
        Rows named per kind; the others are counted.

    Returns
    -------
    list of str
        Empty when every row has an estimate, e.g. ``["1 row without an estimate, expected (the motion does not
        determine ...): andreff_scale on motion-000000 (cone=0|rot=8-15|n=10, oracle): DegenerateMotionError:
        ..."]``.
    """
    if results is None or len(results) == 0:
        return []
    bad = results.loc[~results["ok"].to_numpy(dtype=bool, na_value=False)]
    lines = []
    taken = np.zeros(len(bad), dtype=bool)
    errors = _strings(bad["error"]) if "error" in bad.columns else np.full(len(bad), "", dtype=object)
    for prefix, kind, meaning in FAILURE_KINDS:
        mine = np.array([(not t) and e.startswith(prefix) for e, t in zip(errors, taken)], dtype=bool)
        taken |= mine
        n = int(mine.sum())
        if not n:
            continue
        rows = bad.loc[mine].head(limit)
        named = "; ".join(f"{r.solver} on {r.sequence_id} ({r.level}, {r.eval_sync}): "
                          f"{str(r.error)[:160] if isinstance(r.error, str) and r.error else 'no message'}"
                          for r in rows.itertuples())  # fmt: skip
        more = f"; {n - limit} more in the error column of results.parquet" if n > limit else ""
        lines.append(f"{n} row{'s' if n != 1 else ''} without an estimate, {kind} ({meaning}): {named}{more}")
    return lines


def leaderboard_markdown(results: pd.DataFrame, solvers=None, dataset: str | None = None, *, summary=None) -> str:
    """The leaderboard (Markdown) of a results table, laid out as the published KinHEC leaderboard.

    One section per track (alphabetical).  A track with asynchronous
    sequences has a table per synchronisation (``estimated`` then ``oracle``,
    the estimated one followed by the clock-offset estimation error); the
    others one ``oracle`` table.  Each table lists, per solver (sorted by
    median X translation error), the number of sequences, the success rate
    (fraction), the median and mean X rotation [deg] and translation [mm]
    errors, the medians of ``Y`` (``A X = Y B`` solvers), the means of the X
    errors (after the medians: a few degenerate sequences can dominate them)
    and the median runtime [ms].  The monocular track adds the median
    relative scale error of ``andreff_scale``.  Then, per factor named in the
    ``level`` column (``key=value`` parts), the median X translation and
    rotation errors per value and solver over the sequences of that factor's
    sweep only (``oracle``).  Rows without an estimate are listed at the end
    (:func:`describe_failed_rows`).
    """
    solver_order = _registry.evaluated_names() if solvers is None else list(solvers)
    summ = summarize_results(results, solver_order) if summary is None else summary
    res = summ["results"]
    lines = [
        "# KinHEC baseline leaderboard",
        "",
        "Median errors of X (rotation in degrees, translation in millimetres) per track, against the metric ground "
        "truth; solvers sorted by median translation error.  `succ.` = fraction of sequences for which the solver "
        "returned a finite estimate.  Asynchronous sequences are evaluated twice: with the true clock offset "
        "(`oracle`) and with the offset estimated from the streams (`estimated`).  The medians come first; the "
        "means after them can be dominated by a few degenerate sequences (e.g. a motion about one axis).  The "
        "tables per factor hold only the sequences of that factor's sweep."
        + (f"  Dataset `{dataset}`, kinhec {__version__}." if dataset else ""),
        "",
    ]
    if not res:
        lines.append("No results.")
        return "\n".join(lines) + "\n"
    plugins = sorted({s for per in res.values() for s in per if _registry.is_plugin(s)})
    if plugins:
        lines += [f"Marked (plug-in): {', '.join(f'`{s}`' for s in plugins)}, solvers registered by the user "
                  "(`kinhec.solvers.register`), evaluated under the same protocol as the kinhec baselines.", ""]  # fmt: skip
    cols = _Columns(results) if results is not None and len(results) else None
    # the medians lead; the means follow them, apart: a few degenerate sequences (a motion about one axis) can
    # dominate a mean by orders of magnitude
    header = ["solver", "n", "succ.", "X rot median [deg]", "X trans median [mm]", "Y rot median [deg]",
              "Y trans median [mm]", "X rot mean [deg]", "X trans mean [mm]", "runtime median [ms]"]  # fmt: skip

    def solver_rows(per, mode):
        items = [(s, m[mode]) for s, m in per.items() if mode in m]
        key = lambda it: (not np.isfinite(it[1]["X_trans_err_mm_median"]), it[1]["X_trans_err_mm_median"])  # noqa: E731
        items = sorted(items, key=lambda it: (key(it)[0], key(it)[1] if not key(it)[0] else 0.0))
        return [[_solver_label(s), str(st["n"]), _f(st["success_rate"], 2), _f(st["X_rot_err_deg_median"], 3),
                 _f(st["X_trans_err_mm_median"], 3), _f(st["Y_rot_err_deg_median"], 3), _f(st["Y_trans_err_mm_median"], 3),
                 _f(st["X_rot_err_deg_mean"], 3), _f(st["X_trans_err_mm_mean"], 3), _f(st["runtime_ms_median"], 1)]
                for s, st in items]  # fmt: skip

    for track in sorted(res):
        per = res[track]
        lines += [f"## Track `{track}`"]
        modes = [m for m in ("estimated", "oracle") if any(m in v for v in per.values())]
        if modes == ["oracle"]:
            lines += _md_table(header, solver_rows(per, "oracle"))
        else:
            for m in modes:
                lines += ["", f"### synchronisation: {m}", ""] + _md_table(header, solver_rows(per, m))
                if m == "estimated" and cols is not None:
                    idx = np.flatnonzero((cols.track == track) & (cols.mode == "estimated"))
                    _, first = np.unique(cols.sid[idx], return_index=True)
                    err = np.abs(cols.num["time_offset_err_ms"][idx[first]])
                    err = err[np.isfinite(err)]
                    if err.size:
                        lines += ["", f"Time-offset estimation error (angular-speed cross-correlation) over {err.size} "
                                      f"sequences: median {_f(float(np.median(err)), 2)} ms, mean "
                                      f"{_f(float(np.mean(err)), 2)} ms, 90th percentile "
                                      f"{_f(float(np.percentile(err, 90)), 2)} ms."]  # fmt: skip
        lines += [""]
        scale = per.get(SCALE_SOLVER, {}).get("oracle")
        if track == "monocular" and scale is not None and np.isfinite(scale.get("scale_err_rel_median", math.nan)):
            lines += [f"Relative scale error of `{SCALE_SOLVER}`: median {scale['scale_err_rel_median']:.4f}.", ""]
        if cols is None:
            continue
        idx = np.flatnonzero((cols.track == track) & (cols.mode == "oracle") & cols.ok)
        codes, uniq = pd.factorize(cols.level[idx])  # each distinct level parsed once
        parsed = [_level_factors(lv) for lv in uniq]
        factors = [parsed[i] for i in codes]
        keys = list(dict.fromkeys(k for f in factors for k in f))
        names = sorted(set(cols.solver[idx]))
        for k in keys:
            has = np.array([k in f for f in factors], dtype=bool)  # the sequences of this factor's sweep only
            sweep = idx[has]
            labels = np.array([f[k] for f in factors if k in f], dtype=object)
            values = sorted(set(labels), key=_level_sort_key)
            if len(values) < 2:
                continue
            for col, what in (("X_trans_err_mm", "Median X translation error [mm]"),
                              ("X_rot_err_deg", "Median X rotation error [deg]")):  # fmt: skip
                rows = []
                for v in values:
                    sel = sweep[labels == v]
                    r = [_leaderboard_cell(v)]
                    for name in names:
                        x = cols.num[col][sel[cols.solver[sel] == name]]
                        r.append(_f(_median(x), 3))
                    rows.append(r)
                n_seq = int(np.unique(cols.sid[sweep]).size)
                lines += [f"### {what} versus `{k}` (oracle synchronisation, other factors marginalised)", "",
                          f"The {n_seq} sequences of the `{k}` sweep only.", ""]  # fmt: skip
                lines += _md_table(["level"] + [_solver_label(n) for n in names], rows) + [""]
    eff = efficiency_markdown(results, solver_order, summary=summ.get("efficiency"))
    if eff:
        lines += [eff]
    failures = describe_failed_rows(results, limit=20)
    if failures:
        lines += ["## Rows without an estimate", ""] + [f"* {ln}" for ln in failures] + [""]
    return "\n".join(lines).rstrip("\n") + "\n"
