"""The benchmark's protocol: its constants, the checks of its arguments and ``protocol.json``."""

from __future__ import annotations

import inspect
import math
import platform

import numpy as np
import pandas as pd
import pyarrow as pa

from kinhec import __version__
from kinhec.util.errors import InputError, UnknownNameError
from kinhec.geometry.motion import KEYFRAME_MAX, KEYFRAME_MIN_ROT_DEG, KEYFRAME_MIN_TRANS_M
from kinhec.io.schema import TRACKS
from kinhec.solvers import ransac as _ransac_mod
from kinhec.solvers import refine as _refine_mod
from kinhec.solvers import registry as _registry
from kinhec.solvers import time_offset as _time_offset_mod


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
PART_METADATA_KEY = "kinhec.evaluate.benchmark"
#: The solver that estimates the camera-translation scale (it runs on every sequence).
SCALE_SOLVER = "andreff_scale"
#: Kind of the solvers on pixels (:data:`kinhec.solvers.registry.PIXEL_SOLVERS`).
PIXEL_KIND = "pixels"

RESULTS_FILE = "results.parquet"
RESULTS_CSV_FILE = "results.csv"
LEADERBOARD_FILE = "leaderboard.md"
SUMMARY_FILE = "summary.json"
PROTOCOL_FILE = "protocol.json"
LOG_FILE = "benchmark.log"

# index columns copied to every result row, by kind
META_STR = ("sequence_id", "track", "level", "robot", "configuration", "family", "sampling_mode", "sync",
            "camera_noise_model", "robot_noise_models")  # fmt: skip
META_FLOAT = ("outlier_fraction", "scale", "time_offset_s", "axis_scatter_lambda2", "mean_rot_angle_deg")
META_INT = ("n_camera_frames",)
RECIPE_COLUMNS = ("config_json", "extra_json")


#: Tracks whose pnp sequences get the pixel solvers' rows.
PIXEL_TRACKS = ("pnp",)

#: Largest disagreement [deg, mm] between a rebuilt measured pose and the stored one before the pixels are refused.
PIXEL_CHECK_TOL = (1e-4, 1e-3)


def is_missing_value(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and math.isnan(v))


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


def _known_names(value, what: str, kind: str, known) -> list[str]:
    """The names of ``value`` in the order of ``known``; one not in ``known`` raises :class:`UnknownNameError`."""
    wanted = _names(value, what)
    for name in wanted:
        if name not in known:
            raise UnknownNameError(kind, name, known)
    return [n for n in known if n in wanted]


def check_solvers(solvers) -> list[str]:
    """Solver names (pose, pixel and plug-in) in leaderboard order; unknown names raise :class:`UnknownNameError`."""
    known = _registry.evaluated_names()
    return known if solvers is None else _known_names(solvers, "solvers", "solver", known)


def check_tracks(tracks) -> list[str] | None:
    return None if tracks is None else _known_names(tracks, "tracks", "track", TRACKS)


def check_sync(sync) -> list[str]:
    return _known_names(sync, "sync", "sync mode", EVAL_SYNCS)


def check_count(value, name: str, *, allow_none: bool) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name}: expected an integer >= 1{' or None' if allow_none else ''}, got {value!r}")
    return int(value)


def _defaults(fn) -> dict:
    """Keyword defaults of ``fn`` (the settings the registry runs it with)."""
    return {k: p.default for k, p in inspect.signature(fn).parameters.items() if p.default is not inspect.Parameter.empty}


def protocol_info(solvers=None, sync=EVAL_SYNCS) -> dict:
    """Every constant of the protocol, the solvers evaluated and the library versions (``protocol.json``)."""
    import scipy

    names = check_solvers(solvers)
    syncs = check_sync(sync)
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
