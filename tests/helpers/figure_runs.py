"""The smoke tier with synthetic benchmark results, and every figure drawn once per run: module fixtures of the figure
tests (``test_viz.py`` and ``test_viz_parallel.py`` import them; each module gets its own instance, the drawn figures
are built once per run)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import kinhec
from kinhec.report import viz
from kinhec.io import is_asynchronous
from kinhec.io.schema import RESULTS_SCHEMA

from helpers.builds import built_once

SOLVERS = ["tsai_lenz", "park_martin", "shah", "andreff_scale", "my_solver"]  # the last one has no fixed colour


@pytest.fixture(scope="module")
def smoke(smoke_tier) -> Path:
    """The smoke tier (46 sequences), without benchmark results (read-only, shared by the run)."""
    return smoke_tier


def _synthetic_results(manifest: pd.DataFrame, rng: np.random.Generator) -> pa.Table:
    """Results rows with the exact RESULTS_SCHEMA: errors grow with the noise levels, some runs fail."""
    rows = []
    for _, r in manifest.iterrows():
        modes = ["oracle", "estimated"] if is_asynchronous(r["sync"]) else ["oracle"]
        base_mm = 1.0 + 1e3 * float(np.nan_to_num(r["camera_trans_std_m"]))
        for mode in modes:
            off_err = float(rng.normal(0, 2.0)) if mode == "estimated" else np.nan
            for k, s in enumerate(SOLVERS):
                ok = not (s == "tsai_lenz" and r["track"] == "outliers")  # one solver fails on a track
                rot, trans = base_mm * 0.05 * (1 + k) * rng.lognormal(0, 0.3), base_mm * (1 + k) * rng.lognormal(0, 0.3)
                rows.append({
                    **{c: r[c] for c in ("sequence_id", "track", "level", "robot", "configuration", "family",
                                         "sampling_mode", "sync", "camera_noise_model", "robot_noise_models",
                                         "outlier_fraction", "scale", "time_offset_s", "axis_scatter_lambda2",
                                         "mean_rot_angle_deg")},
                    "n_camera_frames": int(r["n_camera_frames"]), "eval_sync": mode, "time_offset_err_ms": off_err,
                    "solver": s, "ok": ok, "error": "" if ok else "DegenerateMotionError: synthetic",
                    "runtime_ms": 1.0, "n_motions": int(r["n_motions"]),
                    "X_rot_err_deg": rot if ok else np.nan, "X_trans_err_mm": trans if ok else np.nan,
                    "scale_est": np.nan, "scale_err_rel": np.nan, "n_inliers": np.nan,
                    "Y_rot_err_deg": np.nan, "Y_trans_err_mm": np.nan, "time_offset_runtime_ms": np.nan,
                    "time_offset_peak_corr": np.nan, "time_offset_est_s": np.nan,
                    # bound columns: a bound a little below the best solver's error
                    "X_rot_crlb_deg": 0.04 * base_mm, "X_trans_crlb_mm": 0.8 * base_mm,
                    "X_rot_efficiency": rot / (0.04 * base_mm) if ok else np.nan,
                    "X_trans_efficiency": trans / (0.8 * base_mm) if ok else np.nan,
                    "crlb_modelled": r["track"] not in ("outliers", "robot_error"),
                })  # fmt: skip
    return pa.Table.from_pylist(rows, schema=RESULTS_SCHEMA)


def _add_results(smoke: Path, root: Path) -> Path:
    """A copy of the smoke folder at ``root`` with a synthetic benchmarks/results.parquet."""
    shutil.copytree(smoke, root)
    table = _synthetic_results(kinhec.load_manifest(root), np.random.default_rng(7))
    (root / "benchmarks").mkdir()
    pq.write_table(table, root / "benchmarks" / "results.parquet")
    return root


@pytest.fixture(scope="module")
def with_results(smoke, tmp_path_factory) -> Path:
    """A copy of the smoke folder with a synthetic benchmarks/results.parquet."""
    return _add_results(smoke, tmp_path_factory.mktemp("viz_results") / "data")


@pytest.fixture(scope="module")
def full_run(smoke, tmp_path_factory):
    """Every figure drawn for real (one pnp and one asynchronous sequence plus the dataset-wide figures), once per
    test run (this module and test_viz_parallel.py read the same figures): ``(root, paths, messages)``."""
    def build(folder: Path) -> None:
        root = _add_results(smoke, folder / "data")
        messages: list[str] = []
        paths = viz.make_figures(root, sequences=["pnp-000000", "temporal-000000"], on_progress=messages.append)
        (folder / "run.json").write_text(json.dumps({"paths": [str(p) for p in paths], "messages": messages}))

    folder = built_once(tmp_path_factory, "viz_full_run", build)
    run = json.loads((folder / "run.json").read_text())
    return folder / "data", [Path(p) for p in run["paths"]], run["messages"]
