"""The report pages without a browser: packed data, tables against the results, scene geometry, page shell, CLI."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import kinhec
from kinhec.geometry import se3
from kinhec.cli import main
from kinhec.util.errors import DatasetFormatError, InputError
from kinhec.report import build_benchmark_report, check_calibration_result, write_calibration_report
from kinhec.report import data as rdata
from kinhec.report.sequences import pack, sequence_payloads, unpack
from kinhec.dataset.validate import validate_dataset

from helpers.calibration_result import calibration_result


def _page_text(path) -> str:
    """A page as text: windows-1252, ASCII but the packed plotly.js (latin-1 keeps every byte as one character)."""
    return Path(path).read_bytes().decode("latin-1")


def _page_data(path) -> dict:
    text = _page_text(path)
    m = re.search(r'<script type="application/json" id="kinhec-data">(.*?)</script>', text, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


def _page_plotly(text: str) -> str:
    """The unpacked plotly.js of a page (it holds exactly one); the rest of the page is ASCII."""
    from kinhec.report.page import unpack_bytes

    head = '<script type="application/octet-stream" id="kinhec-plotly" data-encoding="gzip+escaped-bytes">'
    before, rest = text.split(head)  # one block, before the page script
    assert "kinhec-plotly" not in before
    packed, after = rest.split("</script>", 1)
    assert before.isascii() and after.isascii()
    assert '<meta charset="windows-1252">' in before[:1024]  # where a browser looks for it
    # what an HTML parser would change in a script block (NUL, CR) or that would end it ("<") never occurs
    assert not re.search("[\x00\r<]", packed)
    return unpack_bytes(packed.encode("latin-1")).decode("utf-8")


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
    from kinhec.io.schema import RESULTS_BOUND_FIELDS

    results = results.drop(columns=[f.name for f in RESULTS_BOUND_FIELDS], errors="ignore")  # a table without them
    # the bound is a property of the sequence (here: half its shah error), the efficiency one of each run
    bound = results[results.solver == "shah"].set_index(["sequence_id", "eval_sync"])["X_rot_err_deg"] * 0.5
    per_row = bound.reindex(pd.MultiIndex.from_frame(results[["sequence_id", "eval_sync"]])).to_numpy()
    extra = results.assign(X_rot_crlb_deg=per_row, X_rot_efficiency=results["X_rot_err_deg"] / per_row,
                           crlb_modelled=True)  # fmt: skip
    board = rdata.leaderboard(extra)
    keys = {c["key"] for c in board["columns"]}
    # efficiency per solver in the table; the bound, the same for every solver, once per track beside it
    assert "X_rot_efficiency:oracle" in keys and not any("crlb" in k for k in keys)
    assert {c["group"] for c in board["columns"] if "efficiency" in c["key"]} == {"X rot efficiency"}
    assert board["crlb"] == ["X_rot_crlb_deg", "X_rot_efficiency"]
    noise = extra[(extra.track == "noise") & (extra.eval_sync == "oracle")].drop_duplicates("sequence_id")
    assert board["bounds"]["noise"]["X_rot_crlb_deg:oracle"] == pytest.approx(noise.X_rot_crlb_deg.median(), rel=1e-3)
    row = next(r for r in board["tracks"]["noise"] if r["solver"] == "shah")
    assert row["X_rot_efficiency:oracle"] == pytest.approx(2.0, rel=1e-3)
    plain = rdata.leaderboard(results)
    assert not any("crlb" in c["key"] or "efficiency" in c["key"] for c in plain["columns"]) and not any(plain["bounds"].values())


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
    from plotly.offline import get_plotlyjs

    path = build_benchmark_report(smoke_benchmarked, tmp_path / "r.html")
    text = _page_text(path)
    # plotly.js once, packed: the full bundle of the plotly package (the drill-down draws 3D scenes)
    assert _page_plotly(text) == get_plotlyjs()
    assert "plotly.js v" not in text and "<script src" not in text
    assert not re.search(r'<(script|link|img)[^>]+(src|href)=["\']https?:', text)
    d = _page_data(path)
    assert len(d["sequences"]) == len(d["scenes"]) == 46
    assert {r["status"] for r in d["sequences"]} == {"not validated"}
    assert path.stat().st_size < 10e6


def test_packed_bytes_round_trip_and_hold_nothing_a_parser_would_change():
    from kinhec.report.page import pack_bytes, unpack_bytes

    rng = np.random.default_rng(7)
    for raw in (bytes(range(256)) * 3, b"</script><!-- \r\n\x00 ==", rng.integers(0, 256, 20_000, dtype=np.uint8).tobytes()):
        packed = pack_bytes(raw)
        assert not set(packed) & {0, 13, 60}  # NUL, CR, "<"
        assert unpack_bytes(packed) == raw and pack_bytes(raw) == packed  # the same bytes on every run


def test_calibration_page_embeds_the_plotly_package_bundle_and_stays_small(smoke_benchmarked, tmp_path):
    from plotly.offline import get_plotlyjs

    # kinhec ships no plotting code of its own: the page carries the plotly package's bundle
    assert not (Path(kinhec.__file__).parent / "report" / "vendor").exists()
    seq = kinhec.load_sequence(smoke_benchmarked, "temporal-000001")
    path = write_calibration_report(calibration_result(seq, np.random.default_rng(3), estimate_offset=True),
                                    tmp_path / "c.html")  # fmt: skip
    text = _page_text(path)
    assert _page_plotly(text) == get_plotlyjs()
    kinds = {t["type"] for f in _page_data(path)["figures"].values() for t in f["data"]}
    assert kinds <= {"scatter", "bar"}, kinds
    assert path.stat().st_size <= 1.5e6  # plotly.js packed is 1.44 MB


def test_one_palette_for_the_pages_and_the_pngs(smoke_benchmarked, tmp_path):
    from kinhec.util import palette
    from kinhec.solvers import registry
    from kinhec.report.viz import _style

    names = registry.evaluated_names() + ["reprojection"]
    colours = [palette.SOLVER_COLORS[n] for n in dict.fromkeys(names)]
    assert len(set(colours)) == len(colours) == 13  # no two of kinhec's solvers share a colour
    assert not set(palette.EXTRA_COLORS) & set(colours)  # nor does a plug-in take one of theirs
    assert palette.SOLVER_COLORS["tsai_lenz"] != palette.SOLVER_COLORS["reprojection"]
    # a solver's colour does not depend on the others listed; plug-ins get the extra colours in order
    assert palette.solver_colors(["mine", "he_ml", "theirs"]) == {
        "mine": palette.EXTRA_COLORS[0], "he_ml": "#000000", "theirs": palette.EXTRA_COLORS[1]}
    # the PNGs (kinhec.report.viz) and the page use these very colours
    assert _style.solver_colors is palette.solver_colors and _style.SOLVER_COLORS is palette.SOLVER_COLORS
    d = _page_data(build_benchmark_report(smoke_benchmarked, tmp_path / "r.html"))
    assert d["colors"] == {s: palette.SOLVER_COLORS[s] for s in d["solvers"]} and d["colors"]["he_ml"] == "#000000"
    traces = [t for c in d["curves"]["noise"] for t in c["figure"]["data"]]
    assert all(t["line"]["color"] == palette.SOLVER_COLORS[t["legendgroup"]] for t in traces)


def test_log_axes_label_every_tick_with_its_whole_value():
    from kinhec.report.figures import log_axis, tick_label

    ax = log_axis("err", [0.031, 0.2, 0.573, None, -1.0])
    assert ax["type"] == "log" and ax["tickmode"] == "array"
    assert ax["ticktext"] == [tick_label(v) for v in ax["tickvals"]]
    assert ax["ticktext"] == ["0.05", "0.1", "0.2", "0.5"]  # never a bare "5" or "2"
    lo, hi = ax["range"]
    assert lo < np.log10(0.031) and hi > np.log10(0.573)  # every value inside the axis
    wide = log_axis("err", [1e-3, 4e3])
    assert wide["ticktext"] == ["0.001", "0.01", "0.1", "1", "10", "100", "1000"]
    one = log_axis("err", [0.3, 0.31])  # less than a 1-2-5 step: widened to the neighbouring ticks
    assert one["ticktext"] == ["0.2", "0.5"] and len(one["tickvals"]) == 2
    assert tick_label(2e-5) == "2e-5" and tick_label(150000.0) == "2e5"


def test_validation_status_comes_from_the_validation_report(smoke_benchmarked, tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(smoke_benchmarked, root)
    d = _page_data(build_benchmark_report(root, validate=True))  # the validator run now
    assert {r["status"] for r in d["sequences"]} == {"passed"}
    assert "validation: not run" in _page_text(build_benchmark_report(root))
    # kinhec validate DIR (no --report) records its outcome where kinhec report DIR reads it
    res = CliRunner().invoke(main, ["validate", str(root), "-q"])
    assert res.exit_code == 0, res.output
    page = build_benchmark_report(root)
    assert "validation: passed;" in _page_text(page) and {r["status"] for r in _page_data(page)["sequences"]} == {"passed"}
    # a record of another index is out of date, and the page says so instead of "passed"
    man = pd.read_parquet(root / "sequences.parquet")
    man.iloc[::-1].to_parquet(root / "sequences.parquet")
    text = _page_text(build_benchmark_report(root))
    assert "validation: out of date (the index changed since kinhec validate ran)" in text
    man.to_parquet(root / "sequences.parquet")
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
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1 and "sequences.parquet" in res.output


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


def test_calibration_page_says_pairs_without_stamps_and_explains_observability(smoke_benchmarked, tmp_path):
    from kinhec.report.calibration import _time_axis
    from kinhec.report.observability import observability_rows, verdict_explanation

    seq = kinhec.load_sequence(smoke_benchmarked, "outliers-000002")
    r = calibration_result(seq, np.random.default_rng(2), estimate_offset=False)
    n = len(r["residuals"]["t_s"])
    x, title, kind = _time_axis(r)  # stamped: seconds from the first pair, never epoch seconds
    assert kind == "t" and x[0] == 0.0 and title == "time since the first pair [s]"
    r["residuals"] = {**r["residuals"], "t_s": [float(i) for i in range(n)]}  # paired by order (RWHE, Tabb)
    x, title, kind = _time_axis(r)
    assert kind == "pair" and x == list(range(n)) and "no time stamps" in title
    text = _page_text(write_calibration_report(r, tmp_path / "c.html"))
    assert "The files have no time stamps: the pairs are in recording order." in text
    # a determined X with a large condition number: the page says the condition is informational
    obs = {"lambda2": 0.21, "rot_range_deg": 32.6, "trans_range_m": 1.44, "condition": 4228.8, "determined": True,
           "X_std_max_deg": 0.036, "X_std_max_mm": 3.6,
           "limits": {"lambda2": 1e-4, "rot_range_deg": 2.0, "X_std_deg": 2.0, "X_std_mm": 20.0}}  # fmt: skip
    rows = {q["key"]: q for q in observability_rows(obs)}
    assert rows["condition"]["status"] == "short" and "not part of the verdict" in rows["condition"]["status_text"]
    assert rows["rot_range_deg"]["status"] == "meets" and rows["X_std_max_mm"]["limit"] == 20.0
    why = verdict_explanation(obs)
    assert why.startswith("Determined: every limit holds") and "4.23e+03" in why and "informational" in why
    bad = {**obs, "rot_range_deg": 1.0, "determined": False}
    assert verdict_explanation(bad).startswith("Not determined: rotation range 1 deg (limit ≥ 2 deg)")
    assert {q["key"]: q["status"] for q in observability_rows(bad)}["rot_range_deg"] == "fails"


def test_calibration_page_of_a_minimal_result_and_a_rig(smoke_benchmarked, tmp_path):
    seq = kinhec.load_sequence(smoke_benchmarked, "outliers-000002")
    r = calibration_result(seq, np.random.default_rng(2), estimate_offset=False)
    r.update(Y=None, Y_name=None, Y_std=None, Y_quat_xyzw=None, Y_t_m=None, observability={}, warnings=[])
    r["rig"] = {"cameras": ["cam00", "cam01"], "X": {"cam00": r["X"], "cam01": r["X"]},
                "cam_T_cam": {"cam00_T_cam01": np.eye(4).tolist()}, "cam_T_cam_std": {"cam00_T_cam01": [0.0] * 6}}
    text = _page_text(write_calibration_report(r, tmp_path / "c.html"))
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
    from kinhec.geometry import se3
    from kinhec.report.calibration import _pose_rows

    T = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -0.2, 0.5]), [0.1, 0.2, 0.3])
    q = se3.quaternion_from_matrix(T[:3, :3])  # w, x, y, z
    rows = _pose_rows("X", T, None)
    (label, value, _), = [r for r in rows if "quaternion" in r[0]]
    assert label == "X quaternion (x, y, z, w)"
    np.testing.assert_allclose([float(v) for v in value.split(",")], [q[1], q[2], q[3], q[0]], atol=1e-6)
    (label, value, _), = [r for r in rows if "translation" in r[0]]
    assert label == "X translation [mm]" and [float(v) for v in value.split(",")] == [100.0, 200.0, 300.0]
