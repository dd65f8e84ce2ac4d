"""One sequence under the benchmark's protocol: pairing, the solvers, the bound columns, the result rows."""

from __future__ import annotations

import functools
import math
import time
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa

from kinhec.geometry import se3
from kinhec.util import jsonutil
from kinhec.evaluate import bounds as _bounds
from kinhec import io as kio
from kinhec.util.errors import InputError
from kinhec.geometry.motion import KEYFRAME_MAX, KEYFRAME_MIN_ROT_DEG, KEYFRAME_MIN_TRANS_M
from kinhec.io.schema import RESULTS_SCHEMA
from kinhec.solvers import DegenerateMotionWarning, estimate_time_offset, validated_stacks
from kinhec.solvers import registry as _registry
from kinhec.evaluate.benchmark.protocol import (EVAL_SYNCS, META_FLOAT, META_INT, META_STR, PIXEL_CHECK_TOL, PIXEL_KIND,
                                      PIXEL_TRACKS, TIME_OFFSET_SETTINGS, check_solvers, check_sync, is_missing_value)

# --------------------------------------------------------------------------- #
# one sequence
# --------------------------------------------------------------------------- #
def is_monocular(info) -> bool:
    """True for a monocular (visual-odometry) sequence: ``world_frame == "vo_origin"`` or ``scale != 1``.

    ``info`` is an index row (dict or pandas Series).
    """
    if info.get("world_frame") == "vo_origin":
        return True
    s = info.get("scale")
    return not is_missing_value(s) and float(s) != 1.0


def _meta(info) -> dict:
    """The index columns copied to every result row of a sequence."""
    out = {}
    for c in META_STR:
        v = info.get(c)
        out[c] = None if is_missing_value(v) else str(v)
    for c in META_FLOAT:
        v = info.get(c)
        try:
            out[c] = math.nan if is_missing_value(v) else float(v)
        except (TypeError, ValueError):
            out[c] = math.nan
    for c in META_INT:
        v = info.get(c)
        try:
            out[c] = None if is_missing_value(v) else int(v)
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
    (:func:`kinhec.evaluate.bounds.sequence_bound`); ``X_*_efficiency``: the row's
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


def error_text(exc: BaseException) -> str:
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


def stored_recipe(info):
    """The kinhec recipe in an index row's ``extra_json`` (a dict), or None."""
    text = info.get("extra_json")
    if is_missing_value(text) or not isinstance(text, str) or '"recipe"' not in text:
        return None
    try:
        extra = jsonutil.loads(text)
    except Exception:  # an unreadable extra_json: no recipe, hence no pixels
        return None
    recipe = extra.get("recipe") if isinstance(extra, dict) else None
    return recipe if isinstance(recipe, dict) else None


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
    return stored_recipe(info) is not None


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


def _pixel_input(seq, inputs):
    """``(T_base_ee, PixelViews)`` at the protocol's keyframes of a synchronous ``pnp`` sequence.

    The pixels are re-simulated from the recipe (:func:`kinhec.synth.observations.recipe_pixels`);
    the robot poses are the stored measured ones (those the pose solvers get), and the intrinsics
    those of the camera preset, held fixed (the generator's PnP used them too).  The rebuilt
    measured poses must be the stored ones at every keyframe, else the pixels are not those of
    the sequence and :class:`~kinhec.util.errors.InputError` says so.
    """
    from kinhec.synth.observations import recipe_pixels

    recipe = stored_recipe(seq.info)
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
    # the keyframe stacks are checked once for the thirteen solvers, not once by each (same results, same errors)
    with validated_stacks(inputs["axxb"], inputs["axyb"]):
        return _solver_rows(seq, specs, inputs, scale_true, meta, mode, timing)


def _solver_rows(seq, specs, inputs, scale_true: float, meta: dict, mode: str, timing: dict) -> list[dict]:
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
            row["error"] = "pixels could not be rebuilt: " + error_text(inputs[PIXEL_KIND])
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
                res, note = None, error_text(exc)
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


def failed_rows(info, specs, syncs, message: str) -> list[dict]:
    meta = _meta(info)
    rows = []
    for mode in _modes(info, syncs):
        timing = dict(_NAN_TIMING, time_offset_err_ms=math.nan)
        for spec in _solvers_for(info, specs):
            row = _row(meta, mode, spec.name, timing)
            row["error"] = message
            rows.append(row)
    return rows


def evaluate_rows(seq, specs, syncs) -> list[dict]:
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
                msg = "clock-offset estimation failed: " + error_text(exc)
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
            msg = "pairing failed: " + error_text(exc)
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
        :data:`kinhec.io.schema.RESULTS_SCHEMA`.

    Raises
    ------
    UnknownNameError
        For an unknown solver or synchronisation name.
    """
    names = check_solvers(solvers)
    syncs = check_sync(sync)
    specs = [_registry.evaluated_spec(n) for n in names]
    return results_table(evaluate_rows(seq, specs, syncs)).to_pandas()


def results_table(rows: list[dict]) -> pa.Table:
    cols = {f.name: [r[f.name] for r in rows] for f in RESULTS_SCHEMA}
    return pa.Table.from_pydict(cols, schema=RESULTS_SCHEMA)
