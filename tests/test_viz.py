"""Figures of a dataset folder (kinhec.report.viz): every figure is written, readable and not blank."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kinhec
from kinhec.report import viz
from kinhec.util.errors import DatasetFormatError, InputError

from helpers.figure_runs import full_run, smoke, with_results  # noqa: F401  (module fixtures of the figure tests)

RESULTS_FIGURES = {
    "benchmark_summary.png",
    "robustness_noise_camera.png",
    "robustness_noise_robot.png",
    "robustness_motion_cone.png",
    "robustness_temporal_offset.png",
    "robustness_outliers_fraction.png",
    "robustness_robot_error_dh_len.png",
    "robustness_pnp_pixel_std.png",
    "error_vs_descriptors.png",
    "efficiency.png",
}


# --------------------------------------------------------------------------- #
# fixtures: smoke, with_results and full_run come from helpers.figure_runs
# --------------------------------------------------------------------------- #
def _stub_figures(monkeypatch) -> None:
    """Replace the drawing functions by ones that write a marker file (for tests of the selection logic)."""

    def stub(*args, **kwargs):
        path = next(a for a in args if isinstance(a, Path))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("stub")
        return path

    for name in ("plot_dataset_overview", "plot_robots_home", "plot_scene", "plot_streams", "plot_errors",
                 "plot_pnp_image", "plot_time_offset", "plot_benchmark_summary", "plot_error_vs_descriptors",
                 "plot_robustness", "plot_efficiency"):  # fmt: skip
        monkeypatch.setattr(viz, name, stub)


def _check_png(path: Path) -> None:
    import matplotlib.image as mpimg

    assert path.stat().st_size > 20_000, f"{path.name}: only {path.stat().st_size} bytes"
    img = mpimg.imread(path)
    h, w = img.shape[:2]
    assert h >= 500 and w >= 800, f"{path.name}: {w} x {h} px"
    rgb = img[::2, ::2, :3].reshape(-1, 3)
    assert rgb.std(axis=0).max() > 0.05, f"{path.name}: nearly a single colour"
    q = (rgb * 255).astype(np.int64)
    assert np.unique((q[:, 0] << 16) | (q[:, 1] << 8) | q[:, 2]).size > 50, f"{path.name}: too few colours"
    assert (rgb.min(axis=1) < 0.3).mean() > 0.002, f"{path.name}: almost no dark ink (no text or lines)"


# --------------------------------------------------------------------------- #
# the whole set
# --------------------------------------------------------------------------- #
def test_every_figure_is_written_and_non_trivial(full_run):
    root, paths, messages = full_run
    out = root / "figures"
    expected = {"dataset_overview.png", "robots_home.png", "pnp_image_pnp-000000.png",
                "time_offset_temporal-000000.png"} | RESULTS_FIGURES  # fmt: skip
    for sid in ("pnp-000000", "temporal-000000"):
        expected |= {f"scene_{sid}.png", f"streams_{sid}.png", f"errors_{sid}.png"}
    assert {p.name for p in paths} == expected
    assert {p.name for p in out.iterdir()} == expected
    assert all(p.parent == out for p in paths)
    for p in paths:
        _check_png(p)
    assert sum(m.startswith("wrote ") for m in messages) == len(expected)
    assert not any(m.startswith("skipped") and "results" in m for m in messages)


def test_figures_differ_between_sequences(full_run):
    import matplotlib.image as mpimg

    root, _, _ = full_run
    a = mpimg.imread(root / "figures" / "streams_pnp-000000.png")
    b = mpimg.imread(root / "figures" / "streams_temporal-000000.png")
    assert a.shape != b.shape or np.abs(a - b).mean() > 0.005


def test_import_kinhec_never_imports_matplotlib():
    code = "import sys, kinhec, kinhec.report.viz; assert 'matplotlib' not in sys.modules, 'matplotlib was imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------- #
# choice of sequences, skipping and errors
# --------------------------------------------------------------------------- #
def test_default_sequences(smoke):
    chosen = viz.default_sequences(kinhec.load_manifest(smoke))
    assert chosen == {
        "scene": ["noise-000000", "motion-000000", "pnp-000000"],
        "pnp_image": ["pnp-000000"],
        "time_offset": ["temporal-000000"],
    }


def test_missing_benchmarks_skips_the_results_figures(smoke, tmp_path, monkeypatch):
    _stub_figures(monkeypatch)
    messages: list[str] = []
    paths = viz.make_figures(smoke, out=tmp_path / "fig", on_progress=messages.append)
    names = {p.name for p in paths}
    assert names == {"dataset_overview.png", "robots_home.png", "pnp_image_pnp-000000.png",
                     "time_offset_temporal-000000.png"} | {
        f"{kind}_{sid}.png" for kind in ("scene", "streams", "errors")
        for sid in ("noise-000000", "motion-000000", "pnp-000000")
    }  # fmt: skip
    assert not names & RESULTS_FIGURES
    skipped = [m for m in messages if m.startswith("skipped the results figures")]
    assert len(skipped) == 1 and "benchmarks/results.parquet" in skipped[0]
    assert not (smoke / "figures").exists()  # out= was honoured


def test_sequence_selection(with_results, tmp_path, monkeypatch):
    _stub_figures(monkeypatch)
    messages: list[str] = []
    paths = viz.make_figures(with_results, out=tmp_path, sequences=["temporal-000001", "pnp-000002", "pnp-000002"],
                             on_progress=messages.append)  # fmt: skip
    names = [p.name for p in paths]
    per_seq = {n for n in names if n.split("_")[0] in ("scene", "streams", "errors", "pnp", "time")}
    assert per_seq == {
        "scene_temporal-000001.png", "streams_temporal-000001.png", "errors_temporal-000001.png",
        "scene_pnp-000002.png", "streams_pnp-000002.png", "errors_pnp-000002.png",
        "pnp_image_pnp-000002.png", "time_offset_temporal-000001.png",
    }  # fmt: skip
    assert len(names) == len(set(names))  # the duplicate id is drawn once
    assert RESULTS_FIGURES <= set(names)


def test_selection_without_pnp_or_async_says_so(with_results, tmp_path, monkeypatch):
    _stub_figures(monkeypatch)
    messages: list[str] = []
    paths = viz.make_figures(with_results, out=tmp_path, sequences="noise-000003", on_progress=messages.append)
    assert not any(p.name.startswith(("pnp_image", "time_offset")) for p in paths)
    assert any(m.startswith("skipped pnp_image") for m in messages)
    assert any(m.startswith("skipped time_offset") for m in messages)


def test_unknown_sequence_ids_are_named(smoke, tmp_path):
    with pytest.raises(InputError, match=r"unknown sequence ids \['nope-000001', 'noise-999999'\]"):
        viz.make_figures(smoke, out=tmp_path / "fig", sequences=["noise-000000", "nope-000001", "noise-999999"])
    assert not (tmp_path / "fig").exists()  # nothing drawn before the check
    with pytest.raises(InputError, match="expected sequence ids"):
        viz.make_figures(smoke, out=tmp_path / "fig", sequences=[1, 2])
    with pytest.raises(InputError, match="at least one sequence id"):
        viz.make_figures(smoke, out=tmp_path / "fig", sequences=[])


def test_bad_arguments(smoke, tmp_path):
    with pytest.raises(DatasetFormatError):
        viz.make_figures(tmp_path / "not_a_dataset")
    with pytest.raises(InputError, match="on_progress"):
        viz.make_figures(smoke, out=tmp_path, on_progress="print")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="expected a folder"):
        viz.make_figures(smoke, out=tmp_path / "file")
    with pytest.raises(InputError, match="kinhec.io.Sequence"):
        viz.plot_scene("noise-000000", tmp_path / "x.png")


# --------------------------------------------------------------------------- #
# results helpers
# --------------------------------------------------------------------------- #
def test_parse_level_formats():
    assert viz.parse_level("robot=r2|camera=c3") == {"robot": "r2", "camera": "c3"}
    assert viz.parse_level("cone=10|rot=8-15|n=20") == {"cone": "10", "rot": "8-15", "n": "20"}
    assert viz.parse_level("offset=0.05|rate=30|jitter=0.002|drop=0.1")["offset"] == "0.05"
    assert viz.parse_level("fraction=0.2|model=planar_flip|t_dof=3")["model"] == "planar_flip"
    assert viz.parse_level("dh_len_mm=1.0|dh_ang_deg=0.1") == {"dh_len_mm": "1.0", "dh_ang_deg": "0.1"}
    assert viz.parse_level("pixel_std=0.5|camera=hd|target=checker_9x6_25mm")["target"] == "checker_9x6_25mm"
    assert viz.parse_level("lookat|vo_drift") == {"lookat": "", "vo_drift": ""}
    assert viz.parse_level(None) == {}


def test_robustness_factors_follow_the_levels(with_results):
    results = viz.load_results(with_results)
    specs = viz.robustness_factors(results)
    assert {s.file_name for s in specs} == {n for n in RESULTS_FIGURES if n.startswith("robustness_")}
    only_noise = results.loc[results["track"] == "noise"]
    assert [s.name for s in viz.robustness_factors(only_noise)] == ["camera", "robot"]
    motion = next(s for s in viz.ROBUSTNESS_FACTORS if s.track == "motion")
    with pytest.raises(InputError, match="track 'motion'"):
        viz.plot_robustness(only_noise, motion, Path("unused.png"))


def test_load_results_checks_columns(tmp_path):
    with pytest.raises(DatasetFormatError, match="no results file"):
        viz.load_results(tmp_path)
    pd.DataFrame({"sequence_id": ["noise-000000"], "solver": ["shah"]}).to_parquet(tmp_path / "r.parquet")
    with pytest.raises(DatasetFormatError, match=r"missing \['track', 'level'"):
        viz.load_results(tmp_path / "r.parquet")
