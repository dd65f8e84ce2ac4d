"""The benchmark's pixel solver: ``reprojection`` on the pnp sequences, beside the pose solvers.

One small dataset is generated once per module with the real generator: the
smoke tier's pnp track (four synchronous sequences, both configurations) and
two noise-track sequences, on which the pixel solver must not appear.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from kinhec import io as kio
from kinhec.geometry import se3
from kinhec.util import jsonutil
from kinhec.models.cameras import get_camera
from kinhec.evaluate.benchmark import evaluate_sequence, pixels_available, run_benchmark
from kinhec.geometry.motion import KEYFRAME_MAX, KEYFRAME_MIN_ROT_DEG, KEYFRAME_MIN_TRANS_M
from kinhec.synth.observations import recipe_pixels
from kinhec.synth.runner import generate_dataset
from kinhec.solvers import registry
from kinhec.solvers.reprojection import solve_pixel_views

POSE_SOLVERS = list(registry.SOLVERS)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("pixbench") / "data"
    assert generate_dataset("smoke", root, workers=1, tracks=["pnp"], progress=False).ok
    assert generate_dataset("smoke", root, workers=1, tracks=["noise"], limit=2, progress=False).ok
    return root


@pytest.fixture(scope="module")
def run(data):
    s = run_benchmark(data, workers=1)
    assert s.ok, s.failed
    return s


def _pnp_ids(root) -> set:
    man = kio.load_manifest(root)
    return set(man.loc[man.camera_noise_model == "pnp", "sequence_id"])


def test_reprojection_rows_exist_exactly_for_the_pnp_sequences(data, run):
    df = run.results
    pnp = _pnp_ids(data)
    assert len(pnp) == 4
    rep = df[df.solver == "reprojection"]
    assert set(rep.sequence_id) == pnp and len(rep) == len(pnp)  # one row each (synchronous: oracle only)
    assert rep.ok.all() and (rep.error == "").all()
    assert (rep.eval_sync == "oracle").all()
    # every pose solver keeps its row on every sequence
    for name in POSE_SOLVERS:
        assert set(df.loc[df.solver == name, "sequence_id"]) == set(kio.load_manifest(data).sequence_id)
    assert "reprojection" in run.solvers and not run.subset
    # the same columns as the others: Y errors, runtime, the bound and the efficiency
    cols = ["X_rot_err_deg", "X_trans_err_mm", "Y_rot_err_deg", "Y_trans_err_mm", "runtime_ms", "X_rot_crlb_deg",
            "X_trans_crlb_mm", "X_rot_efficiency", "X_trans_efficiency"]  # fmt: skip
    assert rep[cols].notna().all().all() and (rep.runtime_ms > 0).all()
    assert rep[["scale_est", "scale_err_rel", "n_inliers", "time_offset_err_ms"]].isna().all().all()
    shah = df[df.solver == "shah"].set_index("sequence_id")
    r = rep.set_index("sequence_id")
    # the same keyframes: as many views as shah gets pose pairs, and the same bound
    np.testing.assert_array_equal(r.n_motions, shah.loc[r.index, "n_motions"])
    np.testing.assert_array_equal(r.X_trans_crlb_mm, shah.loc[r.index, "X_trans_crlb_mm"])
    np.testing.assert_allclose(r.X_trans_efficiency, r.X_trans_err_mm / r.X_trans_crlb_mm, rtol=1e-12)


def test_reprojection_errors_are_those_of_the_solver_against_the_ground_truth(data, run):
    """Rebuilt by hand: the keyframes, the pixels there, the preset's intrinsics; the errors against X, Y."""
    rep = run.results[run.results.solver == "reprojection"].set_index("sequence_id")
    for sid in sorted(_pnp_ids(data)):
        seq = kio.load_sequence(data, sid)
        A, _, idx = seq.axyb_keyframe_poses(KEYFRAME_MIN_ROT_DEG, KEYFRAME_MIN_TRANS_M, KEYFRAME_MAX,
                                            return_index=True)  # fmt: skip
        px = recipe_pixels(seq.extra["recipe"])
        np.testing.assert_allclose(px.T_base_ee_meas[idx], A, atol=1e-12)  # the measured robot poses, as stored
        c = get_camera(seq.info["camera"])  # the preset's intrinsics, those of the generator's PnP
        np.testing.assert_array_equal(px.intrinsics, [c.f_px, c.f_px, c.cx_px, c.cy_px, 0, 0, 0, 0, 0])
        res = solve_pixel_views(A, px.pixel_views(idx))
        xr, xt = se3.pose_error(res.X, seq.X)
        yr, yt = se3.pose_error(res.Y, seq.Y)
        row = rep.loc[sid]
        assert row.X_rot_err_deg == pytest.approx(xr, rel=1e-6, abs=1e-9)
        assert row.X_trans_err_mm == pytest.approx(xt, rel=1e-6, abs=1e-9)
        assert row.Y_rot_err_deg == pytest.approx(yr, rel=1e-6, abs=1e-9)
        assert row.Y_trans_err_mm == pytest.approx(yt, rel=1e-6, abs=1e-9)
        assert row.n_motions == idx.size
        assert xr < 1.0 and xt < 2.0  # sub-degree, millimetre-level: the ground truth is recovered


def test_he_ml_gets_the_pixels_where_reprojection_runs_and_the_poses_elsewhere(data, run):
    """he_ml's rows: with the rebuilt pixels on the pnp sequences, with the poses only on the others."""
    from kinhec.solvers.he_ml import he_ml

    rows = run.results[(run.results.solver == "he_ml") & (run.results.eval_sync == "oracle")].set_index("sequence_id")
    pnp = _pnp_ids(data)
    for sid in sorted(set(rows.index)):
        seq = kio.load_sequence(data, sid)
        A, B, idx = seq.axyb_keyframe_poses(KEYFRAME_MIN_ROT_DEG, KEYFRAME_MIN_TRANS_M, KEYFRAME_MAX,
                                            return_index=True)  # fmt: skip
        if sid in pnp:
            px = recipe_pixels(seq.extra["recipe"])
            res = he_ml(A, B, pixels=px.pixel_views(idx))
            assert "pixel_std" in res.info
        else:
            res = he_ml(A, B)
        xr, xt = se3.pose_error(res.X, seq.X)
        assert rows.loc[sid].ok and rows.loc[sid].X_rot_err_deg == pytest.approx(xr, rel=1e-6, abs=1e-9)
        assert rows.loc[sid].X_trans_err_mm == pytest.approx(xt, rel=1e-6, abs=1e-9)
    proto = json.loads((run.out / "protocol.json").read_text())
    entries = {e["name"]: e for e in proto["solvers"]}
    assert "pixels" in entries["he_ml"] and "pixels" not in entries["shah"]


def test_reprojection_is_on_the_median_not_worse_than_the_best_classical_pose_solver(data, run):
    # the pixels beat every closed form and refinement on the PnP poses; he_ml, which gets the pixels too and
    # models the robot's noise (the pixel solver takes the robot poses as exact), is left out of the comparison
    df = run.results
    on = df[df.sequence_id.isin(_pnp_ids(data)) & df.ok]
    med = on.groupby("solver")[["X_rot_err_deg", "X_trans_err_mm"]].median()
    pose = med.drop(index=["reprojection", "he_ml"])
    assert len(pose) == len(POSE_SOLVERS) - 1
    assert med.loc["reprojection", "X_trans_err_mm"] <= pose.X_trans_err_mm.min(), med
    assert med.loc["reprojection", "X_rot_err_deg"] <= pose.X_rot_err_deg.min(), med


def test_reprojection_in_the_leaderboard_protocol_and_summary(run):
    board = (run.out / "leaderboard.md").read_text()
    pnp = board.split("\n## Track `pnp`\n")[1].split("\n## ")[0]
    assert "\n| reprojection | 4 | 1.00 | " in pnp and "reprojection (plug-in)" not in board
    noise = board.split("\n## Track `noise`\n")[1].split("\n## ")[0]
    assert "reprojection" not in noise
    proto = json.loads((run.out / "protocol.json").read_text())
    entry = {e["name"]: e for e in proto["solvers"]}["reprojection"]
    assert entry["kind"] == "pixels" and "plugin" not in entry
    assert [e["name"] for e in proto["solvers"]] == registry.evaluated_names()
    assert "pnp" in proto["pixel_solvers"]["runs_on"] and "held fixed" in proto["pixel_solvers"]["intrinsics"]
    summ = json.loads((run.out / "summary.json").read_text())
    assert summ["results"]["pnp"]["reprojection"]["oracle"]["n"] == 4
    assert "reprojection" not in summ["results"]["noise"]
    assert summ["efficiency"]["pnp"]["reprojection"]["n"] == 4


def test_reprojection_is_selectable_and_deselectable(data, run, tmp_path):
    only = run_benchmark(data, out=tmp_path / "only", solvers=["reprojection"])
    assert only.ok and set(only.results.solver) == {"reprojection"}
    assert set(only.results.sequence_id) == _pnp_ids(data)
    key = ["sequence_id", "X_rot_err_deg", "X_trans_err_mm", "Y_rot_err_deg", "Y_trans_err_mm", "n_motions"]
    full = run.results[run.results.solver == "reprojection"][key].reset_index(drop=True)
    pd.testing.assert_frame_equal(only.results[key].reset_index(drop=True), full)  # deterministic
    without = run_benchmark(data, out=tmp_path / "without", solvers=POSE_SOLVERS)
    assert without.ok and "reprojection" not in set(without.results.solver)
    assert len(without.results) == len(run.results) - 4


def test_resume_reuses_the_parts_with_the_pixel_rows(data, run, tmp_path):
    out = tmp_path / "b"
    first = run_benchmark(data, out=out, tracks=["pnp"])
    again = run_benchmark(data, out=out, tracks=["pnp"])
    assert again.ok and again.computed_units == 0 and again.skipped_units == again.planned_units
    pd.testing.assert_frame_equal(again.results, first.results)
    assert (again.results.solver == "reprojection").sum() == 4


def _with_extra(seq, extra):
    info = seq.info.to_dict()
    info["extra_json"] = None if extra is None else jsonutil.dumps(extra)
    return kio.Sequence(info, seq.robot, seq.camera)


def test_no_recipe_no_row_and_a_wrong_recipe_a_failed_row(data):
    sid = sorted(_pnp_ids(data))[0]
    seq = kio.load_sequence(data, sid)
    assert pixels_available(seq.info)
    names = ["shah", "reprojection"]
    assert list(evaluate_sequence(seq, solvers=names).solver) == names
    # a copy without kinhec's recipe (as the published toolkit writes them): no pixel row
    bare = _with_extra(seq, {k: v for k, v in seq.extra.items() if k != "recipe"})
    assert not pixels_available(bare.info)
    assert list(evaluate_sequence(bare, solvers=names).solver) == ["shah"]
    assert list(evaluate_sequence(_with_extra(seq, None), solvers=names).solver) == ["shah"]
    # a recipe that no longer rebuilds the stored data: a failed row that says why
    wrong = dict(seq.extra, recipe=dict(seq.extra["recipe"], seed=seq.extra["recipe"]["seed"] + 1))
    df = evaluate_sequence(_with_extra(seq, wrong), solvers=names).set_index("solver")
    assert df.loc["shah", "ok"] and not df.loc["reprojection", "ok"]
    assert df.loc["reprojection", "error"].startswith("pixels could not be rebuilt: InputError")
    assert "differ from the stored ones" in df.loc["reprojection", "error"]
    # not pnp, or asynchronous: no pixels
    assert not pixels_available(dict(seq.info.to_dict(), camera_noise_model="se3_gaussian"))
    assert not pixels_available(dict(seq.info.to_dict(), sync="asynchronous"))
    assert not pixels_available(dict(seq.info.to_dict(), track="mixed"))  # the mixed track's pnp sequences


def test_registry_keeps_reprojection_out_of_the_pose_solvers():
    assert "reprojection" not in registry.SOLVERS and "reprojection" not in registry.BASELINES
    assert not registry.is_plugin("reprojection")
    assert registry.evaluated_names()[: len(registry.BASELINES)] == list(registry.BASELINES)
    assert "reprojection" not in registry.solver_names()  # the calibration commands get pose solvers only
    from kinhec.util.errors import InputError

    with pytest.raises(InputError, match="kinhec baseline"):
        registry.register("reprojection", "axxb", lambda A, B: np.eye(4))
    from kinhec.report.viz import _style

    assert _style.solver_label("reprojection") == "reprojection" and "reprojection" in _style.SOLVER_COLORS


def test_recipes_read_alike_from_one_row_group_or_one_per_track(data, tmp_path):
    """The benchmark reads the recipes of the pixel track only; an index in one row group (as the published copy
    stores it) gives it the same rows."""
    import shutil

    import pyarrow.parquet as pq

    from kinhec.evaluate.benchmark.run import _slim_index

    assert pq.ParquetFile(data / "sequences.parquet").num_row_groups == 2  # noise, pnp
    per_track = _slim_index(data, True)
    assert "config_json" not in per_track.columns
    pnp = per_track.camera_noise_model == "pnp"
    assert per_track.loc[pnp, "extra_json"].notna().all() and per_track.loc[~pnp, "extra_json"].isna().all()
    for text in per_track.loc[pnp, "extra_json"]:
        assert list(jsonutil.loads(text)) == ["recipe"]
    one = tmp_path / "one"
    shutil.copytree(data, one, ignore=shutil.ignore_patterns("robot", "camera", ".kinhec*"))
    pq.write_table(pq.read_table(data / "sequences.parquet"), one / "sequences.parquet", compression="zstd")
    assert pq.ParquetFile(one / "sequences.parquet").num_row_groups == 1
    pd.testing.assert_frame_equal(_slim_index(one, True), per_track)
    # without a pixel solver no recipe is read at all
    assert "extra_json" not in _slim_index(data, False).columns
