"""The report pages without a browser: packed data, tables against the results, scene geometry, page shell, CLI."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import kinhec
from kinhec import se3
from kinhec.cli import main
from kinhec.errors import DatasetFormatError, InputError
from kinhec.report import build_benchmark_report, check_calibration_result, write_calibration_report
from kinhec.report import data as rdata
from kinhec.report.sequences import pack, sequence_payloads, unpack
from kinhec.validate import validate_dataset

from conftest import calibration_result


def _page_data(path) -> dict:
    text = path.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="kinhec-data">(.*?)</script>', text, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


# --------------------------------------------------------------------------- #
# packing
# --------------------------------------------------------------------------- #
def test_pack_round_trip_within_half_a_step_and_keeps_missing_values():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(200, 3)) * 0.7
    a[5, 1] = np.nan
    p = pack(a)
    b = unpack(p).reshape(a.shape)
    fin = np.isfinite(a)
    assert np.isnan(b[5, 1]) and np.isfinite(b[fin]).all()
    step = np.ptp(a[fin]) / 65534
    assert np.abs(b[fin] - a[fin]).max() <= 0.5 * step + 1e-15
    assert np.array_equal(unpack(pack(np.full(4, 2.5))), np.full(4, 2.5))  # constant array: exact
    assert np.isnan(unpack(pack([np.nan, np.nan]))).all()


# --------------------------------------------------------------------------- #
# tables against the results file
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def results(smoke_benchmarked):
    return rdata.read_results(smoke_benchmarked)


def test_leaderboard_holds_the_medians_of_the_results(results):
    board = rdata.leaderboard(results)
    assert set(board["tracks"]) == set(results.track.unique())
    ok = results[results.ok]
    for track, rows in board["tracks"].items():
        for row in rows:
            for mode in ("oracle", "estimated"):
                sub = ok[(ok.track == track) & (ok.solver == row["solver"]) & (ok.eval_sync == mode)]
                want = sub["X_rot_err_deg"].median() if len(sub) else None
                got = row[f"X_rot_err_deg:{mode}"]
                assert (got is None) if want is None or not np.isfinite(want) else got == pytest.approx(want, rel=1e-3)
    # the asynchronous temporal track has estimated columns side by side with the oracle ones
    temporal = {r["solver"]: r for r in board["tracks"]["temporal"]}
    assert temporal["park_martin"]["X_rot_err_deg:estimated"] is not None


def test_leaderboard_shows_cramer_rao_columns_when_present(results):
    from kinhec.schema import RESULTS_BOUND_FIELDS

    results = results.drop(columns=[f.name for f in RESULTS_BOUND_FIELDS], errors="ignore")  # a table without them
    extra = results.assign(X_rot_crlb_deg=0.5 * results["X_rot_err_deg"], X_rot_efficiency=0.25, crlb_modelled=True)
    board = rdata.leaderboard(extra)
    keys = {c["key"] for c in board["columns"]}
    assert {"X_rot_crlb_deg:oracle", "X_rot_efficiency:oracle"} <= keys
    assert {c["group"] for c in board["columns"] if "crlb" in c["key"]} == {"X rot CRLB [deg]"}
    assert board["crlb"] == ["X_rot_crlb_deg", "X_rot_efficiency"]
    row = board["tracks"]["noise"][0]
    assert row["X_rot_crlb_deg:oracle"] == pytest.approx(0.5 * row["X_rot_err_deg:oracle"], rel=1e-3)
    assert not any("crlb" in c["key"] for c in rdata.leaderboard(results)["columns"])


def test_results_accept_both_spellings_of_sync(smoke_benchmarked, tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(smoke_benchmarked, root)
    path = root / "benchmarks" / "results.parquet"
    df = pd.read_parquet(path)
    # kinhec writes the published spelling; an older copy spells the values sync / async
    assert set(df["sync"]) == {"synchronous", "asynchronous"}
    df["sync"] = df["sync"].map({"synchronous": "sync", "asynchronous": "async"})
    df.to_parquet(path)
    a = rdata.read_results(root)
    b = rdata.read_results(smoke_benchmarked)
    assert list(a["sync"]) == list(b["sync"]) and set(a["sync"]) == {"synchronous", "asynchronous"}


def test_robustness_curves_are_medians_per_level(results, smoke_benchmarked):
    curves = rdata.robustness_curves(results, kinhec.load_manifest(smoke_benchmarked))
    motion = {c["name"]: c for c in curves["motion"]}["cone"]
    ok = results[(results.track == "motion") & results.ok & (results.eval_sync == "oracle")]
    cone = ok["level"].str.extract(r"cone=([0-9.]+)")[0].astype(float)
    for i, x in enumerate(motion["x"]):
        want = ok.loc[cone == x].groupby("solver")["X_trans_err_mm"].median()
        for solver, v in want.items():
            assert motion["solvers"][solver]["trans"][i] == pytest.approx(v, rel=1e-3)
    temporal = curves["temporal"][0]
    assert temporal["eval_sync"] == "estimated"


# --------------------------------------------------------------------------- #
# scene geometry
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def payloads(smoke_benchmarked):
    return sequence_payloads(smoke_benchmarked, kinhec.load_manifest(smoke_benchmarked))


@pytest.mark.parametrize("configuration", ["eye_in_hand", "eye_to_hand"])
def test_scene_geometry_follows_the_kinematic_chain(payloads, smoke_benchmarked, configuration):
    man = kinhec.load_manifest(smoke_benchmarked)
    sid = man.loc[(man.configuration == configuration) & (man.robot != "free6d") & (man.world_frame == "target"),
                  "sequence_id"].iloc[0]  # fmt: skip
    seq = kinhec.load_sequence(smoke_benchmarked, sid, man)
    s = payloads[sid]
    tol = 1e-4  # quantisation: range / 65534 of a scene about a metre wide
    # the arm's last frame (tool included) is the flange at the first robot frame
    arm = unpack(s["arm"]).reshape(s["arm_k"], -1, 3)
    assert np.abs(arm[0, -1] - seq.robot.T_base_ee_gt[0, :3, 3]).max() < tol
    assert np.abs(arm[-1, -1] - seq.robot.T_base_ee_gt[-1, :3, 3]).max() < tol
    path = unpack(s["path"]).reshape(-1, 3)
    assert np.abs(path[0] - seq.robot.T_base_ee_gt[0, :3, 3]).max() < tol
    cams = unpack(s["cams"]).reshape(-1, 5, 3)
    ref = unpack(s["ref"]).reshape(-1, 4, 3)
    if configuration == "eye_in_hand":
        # apexes are camera centres T_base_ee X, the board sits at Y
        centres = (seq.camera.T_base_ee_gt @ seq.X)[:, :3, 3]
        d = np.linalg.norm(cams[:, None, 0] - centres[None], axis=-1).min(axis=1)
        assert d.max() < tol and s["ref_kind"] == "board"
        assert np.abs(ref[0].mean(axis=0) - seq.Y[:3, 3]).max() < 0.02  # board centre near the target origin
    else:
        assert np.abs(cams[:, 0] - seq.Y[:3, 3]).max() < tol and s["ref_kind"] == "markers"
    # the far corners lie along the optical axis at the frustum depth
    axis = cams[:, 1:].mean(axis=1) - cams[:, 0]
    assert (np.linalg.norm(axis, axis=1) > 0.01).all()
    # streams are thinned and keep the time span
    rt = unpack(s["rt"])
    assert rt.size <= 150 and rt[0] == pytest.approx(seq.robot.t[0], abs=1e-3) and rt[-1] == pytest.approx(seq.robot.t[-1], abs=1e-3)


def test_outlier_frames_are_kept_and_marked_in_the_camera_stream(payloads, smoke_benchmarked):
    man = kinhec.load_manifest(smoke_benchmarked)
    sid = man.loc[man.n_outlier_frames > 0, "sequence_id"].iloc[0]
    seq = kinhec.load_sequence(smoke_benchmarked, sid, man)
    s = payloads[sid]
    ct = unpack(s["ct"])
    marked = np.sort(ct[s["co"]])
    truth = seq.camera.t[seq.camera.outlier]
    assert marked.size == truth.size
    assert np.abs(marked - np.sort(truth)).max() < 1e-3


# --------------------------------------------------------------------------- #
# the page
# --------------------------------------------------------------------------- #
def test_benchmark_page_is_self_contained(smoke_benchmarked, tmp_path):
    path = build_benchmark_report(smoke_benchmarked, tmp_path / "r.html")
    text = path.read_text(encoding="utf-8")
    assert text.count("plotly.js v") <= 2 and text.count('<script type="text/javascript">') == 1  # plotly.js once
    assert not re.search(r'<(script|link|img)[^>]+(src|href)=["\']https?:', text)
    d = _page_data(path)
    assert len(d["sequences"]) == len(d["scenes"]) == 46
    assert {r["status"] for r in d["sequences"]} == {"not validated"}
    assert path.stat().st_size < 10e6


def test_validation_status_comes_from_the_validation_report(smoke_benchmarked, tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(smoke_benchmarked, root)
    d = _page_data(build_benchmark_report(root, validate=True))  # the validator run now
    assert {r["status"] for r in d["sequences"]} == {"passed"}
    rep = validate_dataset(root)
    rep.write_json(root / rdata.VALIDATION_FILE)
    d = _page_data(build_benchmark_report(root))  # the report found next to the data
    assert {r["status"] for r in d["sequences"]} == {"passed"}
    bad = rep.to_dict()
    bad["ok"] = False
    bad["findings"].append({"level": "error", "check": "axyb", "sequence_id": "noise-000003", "path": None,
                            "message": "A X != Y B by 3 deg"})  # fmt: skip
    (tmp_path / "v.json").write_text(json.dumps(bad))
    rows = {r["id"]: r for r in _page_data(build_benchmark_report(root, validation=tmp_path / "v.json"))["sequences"]}
    assert rows["noise-000003"]["status"] == "failed (1 error)"
    assert rows["noise-000003"]["findings"] == [["error", "axyb", "A X != Y B by 3 deg"]]
    (tmp_path / "junk.json").write_text("[1, 2]")
    with pytest.raises(DatasetFormatError, match="junk.json"):
        build_benchmark_report(root, validation=tmp_path / "junk.json")


def test_page_without_results_and_bad_outputs(smoke_benchmarked, tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(smoke_benchmarked, root, ignore=shutil.ignore_patterns("benchmarks"))
    d = _page_data(build_benchmark_report(root))
    assert d["has_results"] is False and d["leaderboard"]["tracks"] == {} and len(d["scenes"]) == 46
    with pytest.raises(InputError, match="folder"):
        build_benchmark_report(root, tmp_path)
    with pytest.raises(InputError, match="does not exist"):
        build_benchmark_report(root, tmp_path / "nope" / "r.html")


def test_report_command(smoke_benchmarked, tmp_path):
    runner = CliRunner()
    out = tmp_path / "page.html"
    res = runner.invoke(main, ["report", str(smoke_benchmarked), "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    assert out.is_file() and str(out) in res.output
    res = runner.invoke(main, ["report", str(tmp_path)])
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1 and "sequences.parquet" in res.output


# --------------------------------------------------------------------------- #
# calibration page input
# --------------------------------------------------------------------------- #
def test_calibration_result_contract_errors_name_the_key(smoke_benchmarked, tmp_path):
    seq = kinhec.load_sequence(smoke_benchmarked, "outliers-000002")
    good = calibration_result(seq, np.random.default_rng(1), estimate_offset=False)
    # the fixture's estimate is a real one: close to the truth
    rot, trans = se3.pose_error(np.array(good["X"]), seq.X)
    assert rot < 1.0 and trans < 10.0
    assert check_calibration_result(good) is good
    for key in ("X", "verdict", "residuals"):
        bad = {k: v for k, v in good.items() if k != key}
        with pytest.raises(InputError, match=key):
            write_calibration_report(bad, tmp_path / "c.html")
    with pytest.raises(InputError, match="'X'"):
        check_calibration_result({**good, "X": [[1, 0], [0, 1]]})
    with pytest.raises(InputError, match="X_std"):
        check_calibration_result({**good, "X_std": [0.1, 0.2]})
    with pytest.raises(InputError, match="one length"):
        check_calibration_result({**good, "residuals": {**good["residuals"], "rot_deg": [1.0]}})
    with pytest.raises(InputError, match="dict"):
        check_calibration_result([good])
    assert not (tmp_path / "c.html").exists()


def test_page_of_the_published_copy(tmp_path, published_smoke_full):
    """A copy written by the published toolkit (sync spelled synchronous/asynchronous) gets the same page."""
    root = published_smoke_full
    d = _page_data(build_benchmark_report(root, tmp_path / "published.html"))
    assert len(d["sequences"]) == len(d["scenes"]) == len(kinhec.load_manifest(root))
    sync = next(f for f in d["composition"] if "sync" in f["layout"]["title"]["text"])
    assert set(sync["data"][0]["x"]) == {"synchronous", "asynchronous"}
    res = pd.read_parquet(root / "benchmarks" / "results.parquet")
    ok = res[res.ok & (res.track == "noise") & (res.eval_sync == "oracle")]
    want = ok.groupby("solver")["X_rot_err_deg"].median()
    got = {r["solver"]: r["X_rot_err_deg:oracle"] for r in d["leaderboard"]["tracks"]["noise"]}
    assert got.keys() == set(want.index)
    for s, v in want.items():
        assert got[s] == pytest.approx(v, rel=1e-3)


def test_calibration_page_of_a_minimal_result_and_a_rig(smoke_benchmarked, tmp_path):
    seq = kinhec.load_sequence(smoke_benchmarked, "outliers-000002")
    r = calibration_result(seq, np.random.default_rng(2), estimate_offset=False)
    r.update(Y=None, Y_name=None, Y_std=None, Y_quat_xyzw=None, Y_t_m=None, observability={}, warnings=[])
    r["rig"] = {"cameras": ["cam00", "cam01"], "X": {"cam00": r["X"], "cam01": r["X"]},
                "cam_T_cam": {"cam00_T_cam01": np.eye(4).tolist()}, "cam_T_cam_std": {"cam00_T_cam01": [0.0] * 6}}
    text = write_calibration_report(r, tmp_path / "c.html").read_text(encoding="utf-8")
    assert "cam00_T_cam01 translation [mm]" in text and "T_base_target" not in text
    d = _page_data(tmp_path / "c.html")
    assert set(d["figures"]) == {"fig-residuals", "fig-frames"}  # no offset curve, no observability values
    n = sum(len(t["x"]) for t in d["figures"]["fig-residuals"]["data"] if t["yaxis"] == "y")
    assert n == r["n_pairs"] == len(r["residuals"]["t_s"])


def test_sequence_table_names_the_best_solver_and_its_error():
    """The sequence table's ``best`` is the solver with the smallest X rotation error under oracle pairing (failed
    rows and other pairings do not count); the medians are over the oracle rows."""
    import pandas as pd

    from kinhec.report.data import sequence_rows

    manifest = pd.DataFrame([dict(sequence_id="noise-000000", track="noise", level="l", robot="ur5e",
                                  configuration="eye_in_hand", family="lookat", sync="sync",
                                  camera_noise_model="se3_gaussian")])  # fmt: skip
    rows = [("park_martin", "oracle", True, 0.30, 2.0), ("tsai_lenz", "oracle", True, 0.10, 3.0),
            ("shah", "oracle", True, 0.14, 1.0), ("daniilidis", "oracle", False, 0.01, 0.1),
            ("andreff", "nearest", True, 0.05, 0.5)]  # fmt: skip
    results = pd.DataFrame([dict(sequence_id="noise-000000", solver=s, eval_sync=e, ok=ok, X_rot_err_deg=r,
                                 X_trans_err_mm=t, Y_rot_err_deg=r, Y_trans_err_mm=t)
                            for s, e, ok, r, t in rows])  # fmt: skip
    (row,) = sequence_rows(manifest, results, None)
    assert row["best"] == "tsai_lenz" and row["best_rot"] == pytest.approx(0.10)
    # medians, not means (0.18 deg, 2.0 mm)
    assert row["median_rot"] == pytest.approx(0.14) and row["median_trans"] == pytest.approx(2.0)


def test_calibration_page_prints_the_quaternion_x_y_z_w():
    """The pose table's quaternion is in the order its label says, ``x, y, z, w`` (kinhec stores w first)."""
    from kinhec import se3
    from kinhec.report.calibration import _pose_rows

    T = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -0.2, 0.5]), [0.1, 0.2, 0.3])
    q = se3.quaternion_from_matrix(T[:3, :3])  # w, x, y, z
    rows = _pose_rows("X", T, None)
    (label, value, _), = [r for r in rows if "quaternion" in r[0]]
    assert label == "X quaternion (x, y, z, w)"
    np.testing.assert_allclose([float(v) for v in value.split(",")], [q[1], q[2], q[3], q[0]], atol=1e-6)
    (label, value, _), = [r for r in rows if "translation" in r[0]]
    assert label == "X translation [mm]" and [float(v) for v in value.split(",")] == [100.0, 200.0, 300.0]
