"""The benchmark: one protocol for every solver, exact results schema, resumable per shard.

Two datasets are built once per session with the real generator: a smoke-tier
folder with two sequences per track (every track, both clocks, monocular
sequences), benchmarked once with the default options, and a noise-free
folder (synchronous stations, an asynchronous continuous sequence and a
monocular one) on which every solver must recover the ground truth.  Tests
that run the benchmark again write into their own output folder (``out=``).
"""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from kinhec import io as kio
from kinhec.evaluate.benchmark import (
    EVAL_SYNCS,
    PROTOCOL_VERSION,
    describe_failed_rows,
    evaluate_sequence,
    is_monocular,
    leaderboard_markdown,
    pixels_available,
    run_benchmark,
)
from kinhec.util.errors import InputError, UnknownNameError
from kinhec.util.locking import writer_lock
from kinhec.synth.generator import generate_sequence
from kinhec.synth.recipe import Recipe
from kinhec.synth.runner import generate_dataset
from kinhec.io.schema import RESULTS_SCHEMA, TRACKS
from kinhec.solvers import registry
from kinhec.solvers.registry import SolverResult, SolverSpec

ALL_SOLVERS = registry.evaluated_names()  # the pose solvers, then reprojection (pixels)
POSE_SOLVERS = list(registry.SOLVERS)
SCALE_FREE = [s for s in POSE_SOLVERS if s != "andreff_scale"]
META = ["track", "level", "robot", "configuration", "family", "sampling_mode", "sync", "camera_noise_model",
        "robot_noise_models", "outlier_fraction", "scale", "time_offset_s", "n_camera_frames",
        "axis_scatter_lambda2", "mean_rot_angle_deg"]  # fmt: skip


# --------------------------------------------------------------------------- #
# fixtures
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="session")
def smoke(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench") / "data"
    summary = generate_dataset("smoke", root, workers=1, limit=2, progress=False)
    assert summary.ok
    return root


@pytest.fixture(scope="session")
def smoke_run(smoke):
    summary = run_benchmark(smoke)
    assert summary.ok, summary.failed
    return summary


@pytest.fixture(scope="session")
def noise_free(tmp_path_factory):
    """A folder of noise-free sequences (every noise standard deviation is zero)."""
    root = tmp_path_factory.mktemp("bench_exact") / "data"
    recipes = {
        "noise": [
            Recipe(sequence_id="noise-000000", track="noise", seed=11, robot="free6d", family="cartesian_cone",
                   sampling_mode="stations", cone_half_angle_deg=60.0, n_waypoints=12),
            Recipe(sequence_id="noise-000001", track="noise", seed=12, robot="ur5e", configuration="eye_to_hand",
                   family="lookat", sampling_mode="stations", n_stations=10),
        ],
        "temporal": [
            Recipe(sequence_id="temporal-000000", track="temporal", seed=13, robot="ur5e", family="joint_sinusoid",
                   sync="async", duration_s=5.0, time_offset_s=0.04, n_harmonics=3, speed_fraction=0.35),
        ],
        "monocular": [
            Recipe(sequence_id="monocular-000000", track="monocular", seed=14, robot="free6d",
                   family="proposal_sine", world_frame="vo_origin", scale=2.0, duration_s=4.0),
        ],
    }  # fmt: skip
    rows = []
    for track, rs in recipes.items():
        rows += kio.write_shard(root, track, 0, [generate_sequence(r) for r in rs])
    kio.write_index(root, rows)
    return root


@pytest.fixture(scope="session")
def noise_free_run(noise_free):
    summary = run_benchmark(noise_free)
    assert summary.ok, summary.failed
    return summary


def _expected_keys(man: pd.DataFrame, solvers=ALL_SOLVERS, syncs=EVAL_SYNCS) -> set:
    keys = set()
    for _, r in man.iterrows():
        modes = [m for m in syncs if m == "oracle" or kio.is_asynchronous(r["sync"])]
        for s in solvers:  # every pose solver on every sequence (the published protocol), pixels where rebuilt
            if registry.evaluated_spec(s).kind == "pixels" and not pixels_available(r):
                continue
            keys.update((r["sequence_id"], s, m) for m in modes)
    return keys


def _comparable(df: pd.DataFrame) -> pd.DataFrame:
    """Results without the timing columns (which differ from run to run)."""
    return df.drop(columns=["runtime_ms", "time_offset_runtime_ms"]).reset_index(drop=True)


# --------------------------------------------------------------------------- #
# results table
# --------------------------------------------------------------------------- #
def test_results_files_have_the_exact_schema(smoke_run):
    out = smoke_run.out
    table = pq.read_table(out / "results.parquet")
    assert table.schema.equals(RESULTS_SCHEMA, check_metadata=False)
    assert list(pd.read_csv(out / "results.csv", nrows=0).columns) == RESULTS_SCHEMA.names
    csv = pd.read_csv(out / "results.csv")
    assert len(csv) == table.num_rows
    np.testing.assert_allclose(csv["X_rot_err_deg"], table.column("X_rot_err_deg").to_numpy(), rtol=1e-12)
    for name in ("leaderboard.md", "summary.json", "protocol.json"):
        assert (out / name).is_file()


def test_rows_are_sequences_times_solvers_times_sync(smoke, smoke_run):
    man = kio.load_manifest(smoke)
    df = smoke_run.results
    keys = list(zip(df.sequence_id, df.solver, df.eval_sync))
    assert len(keys) == len(set(keys))
    assert set(keys) == _expected_keys(man)
    assert smoke_run.n_rows == len(df) == len(_expected_keys(man))
    order = sorted(keys, key=lambda k: (k[0], k[2], k[1]))
    assert keys == order  # sorted by sequence_id, eval_sync, solver (as published)


def test_index_columns_are_copied(smoke, smoke_run):
    man = kio.load_manifest(smoke).set_index("sequence_id")
    df = smoke_run.results
    for col in META:
        want = man.loc[df.sequence_id, col].to_numpy()
        got = df[col].to_numpy()
        if col in ("outlier_fraction", "scale", "time_offset_s", "axis_scatter_lambda2", "mean_rot_angle_deg"):
            np.testing.assert_array_equal(got.astype(float), want.astype(float))
        else:
            assert [str(v) for v in got] == [str(v) for v in want], col


def test_estimated_rows_only_for_async_sequences(smoke, smoke_run):
    man = kio.load_manifest(smoke)
    async_ids = set(man.sequence_id[[kio.is_asynchronous(s) for s in man.sync]])
    assert async_ids  # the smoke tier has asynchronous sequences (temporal track)
    df = smoke_run.results
    est = df[df.eval_sync == "estimated"]
    assert set(est.sequence_id) == async_ids
    # clock-offset columns: filled on estimated rows, NaN on oracle rows (as published)
    truth = man.set_index("sequence_id").loc[est.sequence_id, "time_offset_s"].to_numpy()
    np.testing.assert_allclose(est.time_offset_err_ms, 1000.0 * (est.time_offset_est_s - truth), atol=1e-9)
    assert est[["time_offset_peak_corr", "time_offset_runtime_ms"]].notna().all().all()
    assert (est.time_offset_runtime_ms > 0).all()
    orc = df[df.eval_sync == "oracle"]
    assert orc.time_offset_err_ms.isna().all()
    assert orc[["time_offset_est_s", "time_offset_peak_corr", "time_offset_runtime_ms"]].isna().all().all()
    # one estimate per sequence, shared by its solvers
    assert (est.groupby("sequence_id").time_offset_est_s.nunique() == 1).all()


def test_solver_specific_columns(smoke, smoke_run):
    df = smoke_run.results
    kinds = df.solver.map(lambda s: registry.evaluated_spec(s).kind)
    ok = df.ok
    assert df.loc[(kinds == "axxb"), ["Y_rot_err_deg", "Y_trans_err_mm"]].isna().all().all()
    assert df.loc[kinds.isin(["axyb", "pixels"]) & ok, ["Y_rot_err_deg", "Y_trans_err_mm"]].notna().all().all()
    # the pixel solver: on the pnp sequences only (the smoke tier's are synchronous, with their recipe)
    man_all = kio.load_manifest(smoke)
    pnp = set(man_all.loc[man_all.camera_noise_model == "pnp", "sequence_id"])
    assert pnp and set(df.loc[df.solver == "reprojection", "sequence_id"]) == pnp
    ransac = df.solver == "ransac_park_martin"
    assert df.loc[~ransac & (df.solver != "he_ml"), "n_inliers"].isna().all()
    h = df[(df.solver == "he_ml") & ok]
    assert ((h.n_inliers >= 3) & (h.n_inliers <= h.n_motions)).all()
    r = df[ransac & ok]
    assert ((r.n_inliers >= 0) & (r.n_inliers <= r.n_motions)).all()
    assert (r.n_inliers == r.n_inliers.round()).all()
    # andreff_scale: on every sequence, with its scale error against the true scale (1 on metric sequences)
    man = kio.load_manifest(smoke).set_index("sequence_id")
    sc = df[(df.solver == "andreff_scale") & ok]
    assert set(df.loc[df.solver == "andreff_scale", "sequence_id"]) == set(man.index)
    s_true = man.loc[sc.sequence_id, "scale"].to_numpy()
    np.testing.assert_allclose(sc.scale_err_rel, np.abs(sc.scale_est - s_true) / s_true, rtol=1e-12)
    assert df.loc[~df.solver.isin(["andreff_scale", "he_ml"]), ["scale_est", "scale_err_rel"]].isna().all().all()
    # he_ml reports a scale only where it finds one (monocular sequences)
    hs = df[(df.solver == "he_ml") & df.scale_est.notna()]
    assert set(hs.sequence_id) <= {s for s in man.index if is_monocular(man.loc[s])}
    # motions: consecutive keyframe motions for AX=XB, one more pose pair for AX=YB
    one = df[df.eval_sync == "oracle"].pivot_table(index="sequence_id", columns="solver", values="n_motions")
    np.testing.assert_array_equal(one["shah"], one["park_martin"] + 1)
    assert (df.runtime_ms > 0).all()
    # the smoke sequences are all solvable, except that RANSAC finds no consensus where no X fits: a monocular
    # sequence whose camera translations are 10x too long, or single-axis motion (cone 0 deg); recorded, not hidden
    failed = df[~df.ok]
    assert set(failed.solver) <= {"ransac_park_martin"}, failed[["sequence_id", "solver", "error"]]
    ransac_failed = failed[failed.solver == "ransac_park_martin"]
    assert ransac_failed.error.str.contains("consensus").all()
    rows = man.loc[ransac_failed.sequence_id]
    assert ((rows.scale != 1.0) | (rows.axis_scatter_lambda2 < 1e-6)).all()
    # andreff_scale returns its estimate where the scale comes out negative (undetermined), as published: warned
    # (the error column keeps the first warning: the negative scale, or the near-parallel axes that cause it)
    negative = df[(df.solver == "andreff_scale") & ok & (df.scale_est < 0)]
    assert negative.error.str.startswith("DegenerateMotionWarning: andreff_scale:").all()


# --------------------------------------------------------------------------- #
# ground truth recovery
# --------------------------------------------------------------------------- #
def test_noise_free_sequences_give_zero_errors(noise_free_run):
    df = noise_free_run.results
    assert df.ok.all()
    sync = df[df.sequence_id.str.startswith("noise")]
    assert len(sync) == 2 * len(POSE_SOLVERS)  # every solver, andreff_scale too (its scale: 1); no pixels here
    assert sync.X_rot_err_deg.max() < 1e-8 and sync.X_trans_err_mm.max() < 1e-6
    axyb = sync[sync.solver.map(lambda s: registry.SOLVERS[s].kind) == "axyb"]
    assert axyb.Y_rot_err_deg.max() < 1e-8 and axyb.Y_trans_err_mm.max() < 1e-6
    # asynchronous: interpolating a 500 Hz robot stream at the true offset is exact to the interpolation error
    orc = df[(df.sequence_id == "temporal-000000") & (df.eval_sync == "oracle")]
    assert len(orc) == len(POSE_SOLVERS)
    assert orc.X_rot_err_deg.max() < 1e-3 and orc.X_trans_err_mm.max() < 0.01
    est = df[(df.sequence_id == "temporal-000000") & (df.eval_sync == "estimated")]
    assert len(est) == len(POSE_SOLVERS)
    assert est.time_offset_err_ms.abs().max() < 0.5 and est.time_offset_peak_corr.min() > 0.99
    assert est.X_rot_err_deg.max() < 0.01 and est.X_trans_err_mm.max() < 0.1


def test_monocular_scale_is_recovered_by_andreff_scale_only(noise_free_run):
    df = noise_free_run.results
    mono = df[df.sequence_id == "monocular-000000"].set_index("solver")
    assert set(mono.index) == set(POSE_SOLVERS)
    s = mono.loc["andreff_scale"]
    assert abs(s.scale_est - 2.0) < 1e-9 and s.scale_err_rel < 1e-9
    assert s.X_trans_err_mm < 1e-6 and s.X_rot_err_deg < 1e-8
    # the scale-free AX=XB solvers get the rotation and miss the translation (camera translations are 2x)
    for name in ("tsai_lenz", "park_martin", "horaud_dornaika", "andreff"):
        assert mono.loc[name].X_rot_err_deg < 1e-8
        assert mono.loc[name].X_trans_err_mm > 10.0
    # the published baseline park_martin+lm weighs rotation and (wrongly scaled) translation residuals alike,
    # 1 rad ~ 1 m, so the translations pull its rotation away from the exact closed-form start
    assert mono.loc["park_martin+lm"].X_rot_err_deg > 0.1 and mono.loc["park_martin+lm"].X_trans_err_mm > 10.0


def test_evaluate_sequence_matches_the_run(noise_free, noise_free_run):
    seq = kio.load_sequence(noise_free, "noise-000001")
    df = evaluate_sequence(seq, solvers=["shah", "park_martin"], sync=["oracle"])
    assert list(df.columns) == RESULTS_SCHEMA.names
    assert list(df.solver) == ["park_martin", "shah"]
    run = noise_free_run.results.set_index(["sequence_id", "solver"])
    for _, r in df.iterrows():
        assert r.X_trans_err_mm == pytest.approx(run.loc[("noise-000001", r.solver), "X_trans_err_mm"], abs=1e-12)


# --------------------------------------------------------------------------- #
# failures are rows, not crashes
# --------------------------------------------------------------------------- #
def _spec(name, run):
    return SolverSpec(name, "axxb", run, "X", "test double", "test double")


def test_failing_solvers_are_recorded_and_the_run_goes_on(noise_free, tmp_path, monkeypatch):
    def boom(A, B):
        raise RuntimeError("no luck")

    def nan(A, B):
        return SolverResult(X=np.full((4, 4), np.nan))

    monkeypatch.setitem(registry.SOLVERS, "boom", _spec("boom", boom))
    monkeypatch.setitem(registry.SOLVERS, "nan_x", _spec("nan_x", nan))
    summary = run_benchmark(noise_free, out=tmp_path / "b", solvers=["boom", "park_martin", "nan_x"])
    assert summary.ok
    df = summary.results
    assert set(df.solver) == {"boom", "park_martin", "nan_x"}
    assert len(df) == 3 * 5  # 4 sequences, one asynchronous (two eval_sync)
    b = df[df.solver == "boom"]
    assert not b.ok.any() and (b.error == "RuntimeError: no luck").all()
    assert b[["X_rot_err_deg", "X_trans_err_mm"]].isna().all().all()
    n = df[df.solver == "nan_x"]
    assert not n.ok.any() and n.error.str.startswith("NonFiniteEstimate").all()
    p = df[df.solver == "park_martin"]
    assert p.ok.all() and (p.error == "").all()  # no error: an empty string, as published
    assert summary.subset and summary.out == tmp_path / "b" / "subsets" / summary.fingerprint
    board = (summary.out / "leaderboard.md").read_text()
    assert "\n| boom (plug-in) | 1 | 0.00 | - |" in board  # listed, with its success rate 0


def test_unreadable_sequence_gives_failed_rows(noise_free, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(noise_free, data, ignore=shutil.ignore_patterns("benchmarks"))
    (data / "camera" / "noise-00000.parquet").write_bytes(b"not parquet")
    summary = run_benchmark(data, solvers=["shah", "park_martin"])
    df = summary.results
    bad = df[df.sequence_id.str.startswith("noise")]
    assert len(bad) == 4 and not bad.ok.any()
    assert bad.error.str.startswith("reading failed: DatasetFormatError").all()
    good = df[~df.sequence_id.str.startswith("noise")]
    assert good.ok.all() and len(good) == 2 * 3


def test_degenerate_motion_warning_is_noted_and_error_recorded(tmp_path):
    root = tmp_path / "data"
    near = Recipe(sequence_id="motion-000000", track="motion", seed=5, robot="free6d", family="cartesian_cone",
                  sampling_mode="stations", cone_half_angle_deg=0.5, n_waypoints=10,
                  robot_rot_std_rad=0.0005, robot_trans_std_m=0.0003, camera_rot_std_rad=0.002,
                  camera_trans_std_m=0.001, camera_trans_std_z_m=0.003)  # fmt: skip
    exact = Recipe(sequence_id="motion-000001", track="motion", seed=6, robot="free6d", family="cartesian_cone",
                   sampling_mode="stations", cone_half_angle_deg=0.0, n_waypoints=10)  # fmt: skip
    kio.write_index(root, kio.write_shard(root, "motion", 0, [generate_sequence(near), generate_sequence(exact)]))
    df = run_benchmark(root, solvers=["park_martin", "shah"], sync=["oracle"]).results.set_index(
        ["sequence_id", "solver"])
    assert len(df) == 4
    for solver in ("park_martin", "shah"):
        warned = df.loc[("motion-000000", solver)]  # axes within a degree: solved, with a warning noted
        assert warned.ok and warned.error.startswith(f"DegenerateMotionWarning: {solver}: ")
        assert np.isfinite(warned.X_rot_err_deg)
        refused = df.loc[("motion-000001", solver)]  # one rotation axis: the solver raises, the row records it
        assert not refused.ok and refused.error.startswith(f"DegenerateMotionError: {solver}: ")
        assert math.isnan(refused.X_rot_err_deg) and refused.runtime_ms > 0


# --------------------------------------------------------------------------- #
# resuming
# --------------------------------------------------------------------------- #
def test_finished_parts_are_reused(noise_free, tmp_path, monkeypatch):
    out = tmp_path / "b"
    first = run_benchmark(noise_free, out=out, solvers=["shah", "park_martin"])
    assert first.computed_units == first.planned_units == 3 and first.skipped_units == 0
    (first.out / "results.parquet").unlink()
    (first.out / "leaderboard.md").unlink()
    import kinhec.evaluate.benchmark.sequence as bm

    monkeypatch.setattr(bm, "evaluate_rows", lambda *a: pytest.fail("a finished part was recomputed"))
    again = run_benchmark(noise_free, out=out, solvers=["shah", "park_martin"])
    assert again.skipped_units == 3 and again.computed_units == 0
    assert again.out == first.out and again.fingerprint == first.fingerprint
    assert (again.out / "results.parquet").is_file() and (again.out / "leaderboard.md").is_file()
    pd.testing.assert_frame_equal(again.results, first.results)


def test_parts_of_other_solver_code_are_recomputed(noise_free, tmp_path, monkeypatch):
    import kinhec.evaluate.benchmark.run as bm
    from kinhec.util.fingerprint import source_digest

    assert len(source_digest()) == 16 and source_digest() == source_digest()
    out = tmp_path / "b"
    first = run_benchmark(noise_free, out=out, solvers=["shah"])
    assert first.computed_units == 3
    # the same kinhec version with edited sources (a checkout between two runs): nothing is reused
    monkeypatch.setattr(bm, "source_digest", lambda: "0" * 16)
    again = run_benchmark(noise_free, out=out, solvers=["shah"])
    assert again.computed_units == 3 and again.skipped_units == 0


def test_parts_of_other_options_are_not_mixed_in(noise_free, tmp_path):
    out = tmp_path / "b"
    run_benchmark(noise_free, out=out, solvers=["shah"])
    other = run_benchmark(noise_free, out=out, solvers=["park_martin"], sync=["oracle"])
    assert other.computed_units == 3 and other.skipped_units == 0
    assert set(other.results.solver) == {"park_martin"} and set(other.results.eval_sync) == {"oracle"}
    # a damaged part is recomputed, the others are kept
    part = other.parts_dir / "temporal-00000.parquet"
    part.write_bytes(part.read_bytes()[:100])
    again = run_benchmark(noise_free, out=out, solvers=["park_martin"], sync=["oracle"])
    assert again.computed_units == 1 and again.skipped_units == 2
    pd.testing.assert_frame_equal(_comparable(again.results), _comparable(other.results))


def test_interrupted_run_resumes(smoke, smoke_run, tmp_path):
    out = tmp_path / "b"
    events = []

    def stop_after_two(kind, data):
        events.append(kind)
        if kind == "shard" and events.count("shard") == 2:
            raise KeyboardInterrupt

    first = run_benchmark(smoke, out=out, on_event=stop_after_two)
    assert first.interrupted and not first.ok
    assert first.computed_units == 2
    assert not first.subset and first.out == out
    assert not (out / "results.parquet").exists()  # no partial results are published
    assert len(list(first.parts_dir.glob("*.parquet"))) == 2
    assert first.parts_dir == out / ".kinhec" / "benchmark" / first.fingerprint  # scratch, outside the outputs
    assert not (out / ".kinhec" / "lock").exists()
    resumed = run_benchmark(smoke, out=out)
    assert resumed.ok
    assert resumed.skipped_units == 2 and resumed.computed_units == resumed.planned_units - 2
    pd.testing.assert_frame_equal(_comparable(resumed.results), _comparable(smoke_run.results))


def test_a_second_run_on_a_locked_folder_is_refused(noise_free, tmp_path):
    out = tmp_path / "b"
    with writer_lock(out):
        with pytest.raises(InputError, match="no other kinhec process"):
            run_benchmark(noise_free, out=out, solvers=["shah"])


# --------------------------------------------------------------------------- #
# options and their errors
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"solvers": ["park_martin", "parkmartin"]}, r"unknown solver 'parkmartin'; expected one of: andreff, "),
        ({"tracks": ["noise", "nosie"]}, r"unknown track 'nosie'; expected one of: .*monocular.*temporal"),
        ({"sync": ["oracle", "late"]}, r"unknown sync mode 'late'; expected one of: estimated, oracle"),
    ],
)
def test_unknown_names_raise_and_list_the_valid_ones(noise_free, tmp_path, kwargs, match):
    with pytest.raises(UnknownNameError, match=match):
        run_benchmark(noise_free, out=tmp_path / "b", **kwargs)
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"solvers": []}, "solvers: expected at least one name"),
        ({"sync": []}, "sync: expected at least one name"),
        ({"max_sequences": 0}, "max_sequences: expected an integer >= 1"),
        ({"workers": 0}, "workers: expected an integer >= 1"),
        ({"executor": "spark"}, "executor: expected one of local, dask"),
        ({"tracks": ["pnp"]}, "tracks: expected tracks present in the dataset .* got pnp without any sequence"),
    ],
)
def test_bad_arguments(noise_free, tmp_path, kwargs, match):
    with pytest.raises(InputError, match=match):
        run_benchmark(noise_free, out=tmp_path / "b", **kwargs)


def test_tracks_max_sequences_and_oracle_only(smoke, tmp_path):
    s = run_benchmark(smoke, out=tmp_path / "b", tracks=["temporal", "noise"], max_sequences=1,
                      solvers=["tsai_lenz", "shah"], sync=["oracle"])  # fmt: skip
    man = kio.load_manifest(smoke)
    first = man.groupby("track", sort=False).head(1)
    first = first[first.track.isin(["noise", "temporal"])]
    assert set(s.results.sequence_id) == set(first.sequence_id)
    assert set(s.results.eval_sync) == {"oracle"}
    assert len(s.results) == 2 * 2
    assert s.tracks == ["noise", "temporal"] and s.solvers == ["tsai_lenz", "shah"]


def test_local_process_pool_gives_the_same_results(noise_free, noise_free_run, tmp_path):
    pooled = run_benchmark(noise_free, out=tmp_path / "b", workers=2)
    assert pooled.ok and pooled.cpu_s > 0
    pd.testing.assert_frame_equal(_comparable(pooled.results), _comparable(noise_free_run.results))


# --------------------------------------------------------------------------- #
# leaderboard, summary, protocol
# --------------------------------------------------------------------------- #
def test_leaderboard_lists_every_track_and_solver(smoke_run):
    text = (smoke_run.out / "leaderboard.md").read_text()
    assert text.startswith("# KinHEC baseline leaderboard\n")
    heads = [ln for ln in text.splitlines() if ln.startswith("## Track")]
    assert heads == [f"## Track `{t}`" for t in sorted(TRACKS)]  # alphabetical, as published
    for solver in ALL_SOLVERS:
        assert f"\n| {solver} | " in text
    temporal = text.split("\n## Track `temporal`\n")[1].split("\n## ")[0]
    assert "### synchronisation: estimated" in temporal and "### synchronisation: oracle" in temporal
    assert temporal.index("synchronisation: estimated") < temporal.index("synchronisation: oracle")
    assert "Time-offset estimation error" in temporal
    noise = text.split("\n## Track `noise`\n")[1].split("\n## ")[0]
    assert "### synchronisation" not in noise
    # per factor of the level column with more than one value: a translation and a rotation table
    levels = set(smoke_run.results.loc[smoke_run.results.track == "noise", "level"])
    cams = sorted({lv.split("camera=")[1].split("|")[0] for lv in levels})
    assert len(cams) > 1
    assert "### Median X translation error [mm] versus `camera` (oracle synchronisation" in noise
    assert "### Median X rotation error [deg] versus `camera` (oracle synchronisation" in noise
    for c in cams:
        assert f"\n| {c} | " in noise
    assert "Relative scale error of `andreff_scale`" in text.split("\n## Track `monocular`\n")[1]


def test_leaderboard_medians_match_the_results(smoke_run):
    df = smoke_run.results
    text = leaderboard_markdown(df)
    sel = df[(df.track == "noise") & (df.solver == "shah") & (df.eval_sync == "oracle") & df.ok]
    noise = text.split("\n## Track `noise`\n")[1]
    head = [c.strip() for c in noise.splitlines()[0].strip("|").split("|")]
    # the medians lead; the means, which a few degenerate sequences can dominate, come after them
    assert head[3:5] == ["X rot median [deg]", "X trans median [mm]"] and head[7:9] == ["X rot mean [deg]", "X trans mean [mm]"]
    row = [ln for ln in noise.splitlines() if ln.startswith("| shah |")][0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == str(len(sel))
    assert float(cells[3]) == pytest.approx(sel.X_rot_err_deg.median(), abs=5e-4)
    assert float(cells[4]) == pytest.approx(sel.X_trans_err_mm.median(), abs=5e-3)
    assert float(cells[8]) == pytest.approx(sel.X_trans_err_mm.mean(), abs=5e-3)


def test_factor_tables_hold_only_their_sweep_and_failed_rows_are_named():
    def rows(level, solver, err, ok=True, error=""):
        return {"sequence_id": f"motion-{level}", "track": "motion", "level": level, "solver": solver,
                "eval_sync": "oracle", "ok": ok, "error": error, "X_trans_err_mm": err, "X_rot_err_deg": err / 10}
    recs = [rows("cone=0|rot=3-8", "shah", 5000.0), rows("cone=90|rot=3-8", "shah", 2.0),
            rows("cone=0|rot=3-8", "park_martin", 900.0), rows("cone=90|rot=3-8", "park_martin", 3.0),
            rows("n_stations=20", "shah", 0.5), rows("subset=parallel", "shah", 700.0),
            rows("cone=0|rot=3-8", "andreff_scale", np.nan, ok=False,
                 error="DegenerateMotionError: andreff_scale: the camera translations do not determine the scale"),
            rows("cone=90|rot=3-8", "tsai_lenz", np.nan, ok=False, error="ValueError: boom")]  # fmt: skip
    df = pd.DataFrame(recs)
    for c in ("X_rot_err_deg", "X_trans_err_mm", "Y_rot_err_deg", "Y_trans_err_mm", "runtime_ms", "n_motions",
              "scale_err_rel", "n_inliers", "time_offset_err_ms", "time_offset_peak_corr", "time_offset_runtime_ms"):
        df[c] = df.get(c, np.nan)
    text = leaderboard_markdown(df, solvers=["shah", "park_martin", "andreff_scale", "tsai_lenz"])
    cone = text.split("versus `cone`")[1].split("\n### ")[0]
    assert "The 2 sequences of the `cone` sweep only." in cone
    levels = [ln.split("|")[1].strip() for ln in cone.splitlines() if ln.startswith("| ") and not ln.startswith("| level")]
    assert levels == ["0", "90"]  # no n_stations=20 or subset=parallel rows in the cone sweep's table
    # the rows without an estimate: named, and the degenerate refusal marked as expected
    lines = describe_failed_rows(df)
    assert len(lines) == 2
    assert lines[0].startswith("1 row without an estimate, expected") and "andreff_scale on motion-cone=0" in lines[0]
    assert lines[1].startswith("1 row without an estimate, unexpected") and "tsai_lenz" in lines[1] and "boom" in lines[1]
    assert "## Rows without an estimate" in text


def test_too_few_keyframes_are_expected_refusals_and_other_input_errors_are_not():
    """A sequence whose keyframes leave one motion (two pose pairs) is refused by the solvers' input check: named as
    expected; an input error of another kind stays unexpected."""
    base = {"track": "mixed", "level": "random", "eval_sync": "oracle", "ok": False}
    df = pd.DataFrame([
        dict(base, sequence_id="mixed-001112", solver="tsai_lenz", error="InputError: A, B: expected at least 2 motions, got 1"),
        dict(base, sequence_id="mixed-001112", solver="shah", error="InputError: A_abs, B_abs: expected at least 3 pose pairs, got 2"),
        dict(base, sequence_id="mixed-000007", solver="shah", error="InputError: B_abs: expected the same shape as A_abs"),
    ])  # fmt: skip
    lines = describe_failed_rows(df)
    assert len(lines) == 3
    assert lines[0].startswith("1 row without an estimate, expected (the protocol's keyframes leave fewer motions")
    assert "tsai_lenz on mixed-001112" in lines[0]
    assert lines[1].startswith("1 row without an estimate, expected (the protocol's keyframes leave fewer pose pairs")
    assert lines[2].startswith("1 row without an estimate, unexpected") and "same shape" in lines[2]


def test_summary_and_protocol_json(smoke, smoke_run):
    summ = json.loads((smoke_run.out / "summary.json").read_text())
    df = smoke_run.results
    assert summ["n_rows"] == len(df) and summ["n_sequences"] == df.sequence_id.nunique()
    assert summ["protocol_version"] == PROTOCOL_VERSION
    for (track, solver, mode), g in df.groupby(["track", "solver", "eval_sync"]):
        st = summ["results"][track][solver][mode]
        assert st["n"] == len(g) and st["n_ok"] == int(g.ok.sum())
        med = g.loc[g.ok, "X_trans_err_mm"].median()
        assert st["X_trans_err_mm_median"] == pytest.approx(med, rel=1e-12)
    assert set(summ["clock_offset"]) == set(df.loc[df.eval_sync == "estimated", "track"])
    proto = json.loads((smoke_run.out / "protocol.json").read_text())
    assert proto["keyframes"]["min_rot_deg"] == 5.0
    assert proto["keyframes"]["min_trans_m"] == 0.02
    assert proto["keyframes"]["max_keyframes"] == 200
    assert proto["time_offset"]["max_offset_s"] == 0.5
    assert proto["ransac"]["n_hypotheses"] > 0
    assert [s["name"] for s in proto["solvers"]] == ALL_SOLVERS
    assert proto["versions"]["numpy"] == np.__version__
    assert math.isfinite(summ["results"]["noise"]["shah"]["oracle"]["runtime_ms_median"])


def test_unreadable_sequences_make_the_run_fail(smoke, tmp_path):
    import shutil

    copy = tmp_path / "partial"
    shutil.copytree(smoke, copy, ignore=shutil.ignore_patterns("benchmarks"))
    for p in (copy / "robot").glob("pnp-*.parquet"):  # a partial download: one track's streams are missing
        p.unlink()
    s = run_benchmark(copy, solvers=["park_martin"], sync=["oracle"])
    assert not s.ok
    assert s.unreadable and all(sid.startswith("pnp-") for sid in s.unreadable)
    assert run_benchmark(copy, solvers=["park_martin"], sync=["oracle"], tracks=["noise"]).ok


def test_parts_are_assembled_in_the_results_order(smoke_run, tmp_path):
    from kinhec.evaluate.benchmark.run import _assemble

    table = pq.read_table(smoke_run.out / "results.parquet").replace_schema_metadata(None)
    # the rows shuffled over three parts come back as one table sorted by sequence, synchronisation and solver
    perm = np.random.default_rng(7).permutation(table.num_rows)
    cuts = np.array_split(perm, 3)
    paths = []
    for k, rows in enumerate(cuts):
        paths.append(tmp_path / f"part-{k}.parquet")
        pq.write_table(table.take(rows), paths[-1])
    out = _assemble(paths + [tmp_path / "missing.parquet"])
    assert out.schema == RESULTS_SCHEMA
    pd.testing.assert_frame_equal(out.to_pandas(), table.to_pandas())  # (NaN where NaN)
    keys = list(zip(*(out.column(c).to_pylist() for c in ("sequence_id", "eval_sync", "solver"))))
    assert keys == sorted(keys)
    assert _assemble([]).num_rows == 0


def test_text_columns_read_missing_values_as_empty_strings():
    from kinhec.evaluate.benchmark.summary import ordered_names, string_column

    s = pd.Series(["noise", None, "mixed", np.nan, "noise", pd.NA], dtype=object)
    got = string_column(s)
    assert got.dtype == object and list(got) == ["noise", "", "mixed", "", "noise", ""]
    assert list(string_column(pd.Series(["a", None], dtype="string"))) == ["a", ""]
    assert list(string_column(pd.Series([None, None], dtype=object))) == ["", ""]
    # anything but text goes through str()
    assert list(string_column(pd.Series([1.5, None, 2], dtype=object))) == ["1.5", "", "2"]
    # the distinct names: the reference's order first, then the rest sorted, from an array as from a list
    vals = np.array(["pnp", "", "zeta", "noise", "alpha", "pnp"], dtype=object)
    assert ordered_names(vals, TRACKS) == ordered_names(list(vals), TRACKS) == ["noise", "pnp", "", "alpha", "zeta"]
