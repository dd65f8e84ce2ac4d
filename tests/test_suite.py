"""The regression suite: every entry re-solved and compared, checksums, drift, accuracy, acceptance figures."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner
from helpers.paths import REALDATA, REPO

from kinhec.geometry import se3
from kinhec.models.cameras import get_camera
from kinhec.cli import main
from kinhec.util.errors import DatasetFormatError, UnknownNameError
from kinhec.synth.observations import read_observations, transform_from_pose_json
from kinhec.models.pnp import solve_pnp
from kinhec.solvers import SOLVERS
from kinhec.evaluate.suite import check, load_suite
from kinhec.evaluate.suite.checks import drift
from kinhec.evaluate.suite.compare import compare_rows, format_table
from kinhec.evaluate.suite.manifest import read_checksums, sha256_file

SUITE = REPO / "regression"


@pytest.fixture(scope="module")
def reports():
    """``suite check`` on the repository's suite, every entry (what CI runs)."""
    return {r.id: r for r in check(SUITE)}


def test_suite_check_passes_on_every_entry(reports):
    assert set(reports) == {e.id for e in load_suite(SUITE).entries}
    bad = {i: r.messages for i, r in reports.items() if not r.ok}
    assert not bad
    # re-solving reproduces the reference (pose entries carry no sigma: NaN): the closed-form and bundle entries
    # to 1e-3 sigma; the he_ml entries, whose pixel stage turns last-bit differences of the noise levels into
    # up to 1.1e-3 sigma (kuka_2_he_ml between OpenBLAS's kernels with and without numpy's AVX-512 dispatch),
    # to 5e-3 sigma, a tenth of their stated tolerance
    entries = {e.id: e for e in load_suite(SUITE).entries}
    with_sigma = [i for i, e in entries.items() if e.problem == "single_cam_handeye"]
    assert {i for i in with_sigma if entries[i].config.get("solver") == "he_ml"} == {"kuka_1_he_ml", "kuka_2_he_ml"}
    for i in with_sigma:
        bound = 5e-3 if entries[i].config.get("solver") == "he_ml" else 1e-3
        assert reports[i].max_sigma < bound, (i, reports[i].max_sigma)
    assert all(math.isnan(r.max_sigma) for i, r in reports.items() if i not in with_sigma)


def test_manifest_records_licence_citation_and_source():
    for e in load_suite(SUITE).entries:
        assert e.licence in ("NOASSERTION", "CC0-1.0", "BSD-3-Clause") and e.citation and e.source and e.description
    sums = read_checksums(SUITE)
    for rel, digest in sums.items():
        assert sha256_file(SUITE / rel) == digest
    if shutil.which("sha256sum"):
        subprocess.run(["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=SUITE, check=True)


def test_schema_copy_matches_the_package_schema():
    from kinhec.synth.observations import schema_path

    assert (SUITE / "schema" / "observation_set.schema.json").read_bytes() == schema_path().read_bytes()


@pytest.fixture
def suite_copy(tmp_path):
    dst = tmp_path / "regression"
    shutil.copytree(SUITE, dst)
    return dst


def test_one_edited_byte_fails_that_entry_naming_the_file(suite_copy):
    path = suite_copy / "observations" / "synth_pnp.json"
    data = bytearray(path.read_bytes())
    i = data.index(b"0.", 2000)
    data[i + 3] = ord("7") if data[i + 3] != ord("7") else ord("3")
    path.write_bytes(bytes(data))
    (r,) = check(suite_copy, only=["synth_pnp"])
    assert not r.ok
    assert any(str(path) in m and "checksum mismatch" in m for m in r.messages)


def test_a_missing_checksum_fails_never_skips(suite_copy):
    sums = (suite_copy / "SHA256SUMS").read_text().splitlines()
    (suite_copy / "SHA256SUMS").write_text("\n".join(s for s in sums if "truth/synth_pnp" not in s) + "\n")
    (r,) = check(suite_copy, only=["synth_pnp"])
    assert not r.ok and any("truth/synth_pnp.json: no checksum" in m for m in r.messages)


def test_a_result_moved_beyond_tolerance_fails_with_the_values(suite_copy):
    path = suite_copy / "results" / "synth_pnp" / "kinhec.json"
    doc = json.loads(path.read_text())
    old = doc["poses"]["X"]["translation"][0]
    doc["poses"]["X"]["translation"][0] = old + 1e-3
    doc["statistics"]["rms_px"] *= 1 + 1e-7  # within the drift tolerance: not reported
    path.write_text(json.dumps(doc))
    (r,) = check(suite_copy, only=["synth_pnp"])
    assert not r.ok
    # X has standard deviations: it is compared on their scale (1 mm is many sigma of X.tx, tens of micrometres)
    assert r.messages and all(m.startswith("X.t") and "sigma > 0.0001" in m for m in r.messages), r.messages
    assert any(m.startswith("X.tx: moved ") for m in r.messages)
    (r,) = check(suite_copy, only=["synth_pnp"], sigma=3.0)
    assert not r.ok and any(m.startswith("X.t") and "sigma > 3" in m for m in r.messages)
    (r,) = check(suite_copy, only=["synth_pnp"], sigma=1e6)
    assert r.ok


def test_parameters_are_compared_on_the_scale_of_their_sigma(suite_copy):
    """A weakly determined parameter (k3 of synth_eye_to_hand, sigma about 176) may move in its fifth digit; a
    number without a sigma (the fit statistics) is held to its drift tolerance; each entry's rule is its own."""
    path = suite_copy / "results" / "synth_eye_to_hand" / "kinhec.json"
    doc = json.loads(path.read_text())
    k3, s3 = doc["parameters"]["k3"], doc["sigma"]["k3"]
    assert s3 > 100.0
    doc["parameters"]["k3"] = k3 + 0.5e-3 * s3  # 0.09 absolute: far beyond rel 1e-4, within 1e-3 sigma
    path.write_text(json.dumps(doc))
    (r,) = check(suite_copy, only=["synth_eye_to_hand"])
    assert r.ok, r.messages
    doc["parameters"]["k3"] = k3 + 2e-3 * s3
    doc["statistics"]["rms_px"] *= 1 + 1e-3
    path.write_text(json.dumps(doc))
    (r,) = check(suite_copy, only=["synth_eye_to_hand"])
    assert sorted(m.split(":")[0] for m in r.messages) == ["k3", "statistics.rms_px"], r.messages
    # 0.002 sigma less the run's own change since the reference (k3 here: about 1e-5 sigma, round-off of the bundle)
    assert re.search(r"moved 0\.00(?:19|2)\d* sigma > 0\.001", r.messages[0]) and repr(k3 + 2e-3 * s3) in r.messages[0]
    # a tolerance key that is not one of the four is refused, naming the entry
    toml = (suite_copy / "suite.toml").read_text().replace("sigma = 1e-3,", "sigmas = 1e-3,", 1)
    (suite_copy / "suite.toml").write_text(toml)
    with pytest.raises(DatasetFormatError, match="entry synth_eye_to_hand: tolerance: expected keys among .* got sigmas"):
        load_suite(suite_copy)


def test_freeze_names_the_real_data_it_misses(suite_copy, tmp_path):
    from kinhec.util.errors import InputError
    from kinhec.evaluate.suite import freeze

    before = (suite_copy / "SHA256SUMS").read_bytes()
    with pytest.raises(InputError, match=r"entry kuka_1 is rebuilt from the real data at .*rwhe_calib/kuka_1, which "
                                         r"does not exist: pass --realdata DIR"):  # fmt: skip
        freeze(suite_copy, only=["kuka_1"], realdata=tmp_path)
    assert (suite_copy / "SHA256SUMS").read_bytes() == before


def test_drift_reports_shape_and_string_changes():
    assert drift({"a": [1.0, 2.0]}, {"a": [1.0, 2.0 + 1e-12]}, 1e-9, 1e-6) == []
    assert drift({"a": [1.0]}, {"a": [1.0, 2.0]}, 1e-9, 1e-6) == ["a[1]: missing in the result"]
    assert drift({"p": "x"}, {"p": "y"}, 1e-9, 1e-6) == ["p: 'y' -> 'x'"]


def test_unknown_entry_and_broken_manifest(tmp_path):
    with pytest.raises(UnknownNameError, match="synth_pnp"):
        check(SUITE, only=["nope"])
    (tmp_path / "suite.toml").write_text('[[entry]]\nid = "a"\n')
    with pytest.raises(DatasetFormatError, match=r"suite.toml: entry\[0\]: expected the keys description"):
        load_suite(tmp_path)


def test_synthetic_entries_within_3_sigma_of_truth(reports):
    for i in ("synth_eye_in_hand", "synth_eye_to_hand", "synth_pnp"):
        assert reports[i].truth_sigma < 3.0, i


def _result(entry):
    return json.loads((SUITE / "results" / entry / "kinhec.json").read_text())


@pytest.mark.parametrize("entry, opencv_chain_rms", [("kuka_1", 2.45), ("kuka_2", 1.61)])
def test_kuka_chain_rms_below_opencv_and_x_near_park(entry, opencv_chain_rms):
    """Acceptance on the real data (reference results are the ones `suite check` just reproduced)."""
    ref_file = REALDATA / "rwhe_calib" / entry / "opencv_reference_calibration.json"
    ref = json.loads(ref_file.read_text())
    X_park = np.array(ref["opencv_calibrateHandEye"]["PARK"]["T_tcp_cam (cam2gripper)"])
    best = min(m["chain_reprojection_rms_px"] for m in ref["opencv_calibrateHandEye"].values())
    assert best == pytest.approx(opencv_chain_rms, abs=0.005)  # OpenCV's lowest chain RMS over its methods
    measured, prior = _result(entry), _result(entry + "_prior")
    assert measured["statistics"]["rms_px"] < best
    assert prior["statistics"]["rms_px"] < 0.1  # towards the corner noise (free-pose fit: ~0.08 px)
    rot, tr = se3.pose_error(transform_from_pose_json(measured["poses"]["X"]), X_park)
    assert tr < 5.0
    # kuka_2 with measured poses: 0.56 deg, a bias from the arm's position-dependent pose errors
    # (docs/regression.md, "kuka_2: where the 0.56 deg comes from"); the _prior entry is within 0.5 deg
    assert rot < (0.5 if entry == "kuka_1" else 0.6)
    rot, tr = se3.pose_error(transform_from_pose_json(prior["poses"]["X"]), X_park)
    assert rot < 0.5 and tr < 5.0


def test_pnp_entry_beats_every_pose_based_solver():
    """X from the pixels vs the registry's solvers on the PnP poses of the same frozen pixels."""
    obs = read_observations(SUITE / "observations" / "synth_pnp.json")
    truth = json.loads((SUITE / "truth" / "synth_pnp.json").read_text())
    X_true = transform_from_pose_json(truth["poses"]["X"])
    X_pix = transform_from_pose_json(_result("synth_pnp")["poses"]["X"])
    uv = np.stack(obs.points_2d)
    # PnP poses exactly as the generator's pnp model computes them (true pose as the start)
    Y_true = transform_from_pose_json(truth["poses"]["Y"])
    T_init = se3.invert_transform(obs.T_base_ee @ X_true) @ Y_true
    pnp = solve_pnp(get_camera("hd"), obs.points_3d[0], uv, T_init)
    A, B = obs.T_base_ee, se3.invert_transform(pnp.T_cam_target)
    best_rot = best_tr = np.inf
    for spec in SOLVERS.values():
        if spec.name == "andreff_scale":
            continue
        if spec.kind == "axyb":
            X = spec.run(A, B).X
        else:
            X = spec.run(se3.invert_transform(A[:-1]) @ A[1:], se3.invert_transform(B[:-1]) @ B[1:]).X
        rot, tr = se3.pose_error(X, X_true)
        best_rot, best_tr = min(best_rot, rot), min(best_tr, tr)
    rot, tr = se3.pose_error(X_pix, X_true)
    assert rot < best_rot and tr < best_tr


def test_compare_table_has_a_row_per_entry():
    rows = compare_rows(SUITE)
    assert [r["entry"] for r in rows] == [e.id for e in load_suite(SUITE).entries]
    text = format_table(rows)
    assert text.count("\n") == len(rows) + 1
    synth = {r["entry"]: r for r in rows}["synth_pnp"]
    assert synth["truth kinhec [sigma]"][0] < 3.0


def test_cli_suite_check_and_compare():
    runner = CliRunner()
    res = runner.invoke(main, ["suite", "check", "--root", str(SUITE), "--only", "synth_pnp"])
    assert res.exit_code == 0, res.output
    assert "PASS synth_pnp" in res.output and "1 passed, 0 failed" in res.output
    res = runner.invoke(main, ["suite", "compare", "--root", str(SUITE), "--only", "kuka_1"])
    assert res.exit_code == 0 and "| kuka_1 |" in res.output
    res = runner.invoke(main, ["suite", "check", "--root", str(SUITE), "--only", "nope"])
    assert res.exit_code == 2 and "unknown suite entry 'nope'" in res.output


def test_cli_suite_check_says_how_an_entry_without_standard_deviations_is_compared():
    # synth_pnp's reference states standard deviations, tabb_ds1's none (its change cannot be counted in sigma)
    res = CliRunner().invoke(main, ["suite", "check", "--root", str(SUITE), "--only", "synth_pnp"])
    assert "max change" in res.output and "sigma" in res.output and "nan" not in res.output, res.output
    res = CliRunner().invoke(main, ["suite", "check", "--root", str(SUITE), "--only", "tabb_ds1"])
    assert res.exit_code == 0 and "PASS tabb_ds1" in res.output, res.output and "nan" not in res.output
    assert "no standard deviations in the reference: every number within its drift tolerance" in res.output


def test_cli_suite_check_fails_with_exit_1(suite_copy):
    (suite_copy / "observations" / "synth_pnp.json").write_text("{}")
    res = CliRunner().invoke(main, ["suite", "check", "--root", str(suite_copy), "--only", "synth_pnp"])
    assert res.exit_code == 1
    assert "FAIL synth_pnp" in res.output and "synth_pnp.json: checksum mismatch" in res.output


def test_tabb_ds1_within_opencv_test_tolerance_of_tabbs_result():
    """OpenCV's regression test holds its Shah and Li solvers to 1 deg / 50 mm of Tabb's own result."""
    lines = (REALDATA / "tabb_ds1" / "transformations_rwhe_AA_RPI.txt").read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("Z"))
    Z = np.array([[float(v) for v in lines[i + 1 + r].split()] for r in range(4)])  # T_cam_ee [mm]
    Z[:3, 3] /= 1000.0
    X = transform_from_pose_json(_result("tabb_ds1")["poses"]["X"])  # T_ee_cam
    rot, tr = se3.pose_error(X, se3.invert_transform(Z))
    assert rot < 1.0 and tr < 50.0


def test_ethz_prime_sense_runs_agree():
    """Two recordings of the same rig: hand-eye within 1 deg / 20 mm; each correlation offset near the pose fit's.

    The entries take the clock offset from the angular-speed correlation alone.  ``kinhec calibrate`` refines it
    on the poses (-19.3 and -14.6 ms, standard deviation below 1 ms); the correlation estimate must lie within
    10 ms of that, i.e. well inside a camera period (33 ms).
    """
    from kinhec.calibrate import calibrate

    r1, r2 = _result("ethz_prime_sense_1"), _result("ethz_prime_sense_2")
    for run, r in (("prime_sense_1", r1), ("prime_sense_2", r2)):
        files = sorted((REALDATA / "ethz_asl" / run).glob("*.csv"))
        assert len(files) == 2, f"expected the two CSV streams of {REALDATA / 'ethz_asl' / run}"
        hand = next(f for f in files if "vicon" in f.name)
        eye = next(f for f in files if "camera" in f.name)
        fit = calibrate(hand, eye, fmt="eth", eye_pose="target_T_cam")
        assert -0.05 < r["parameters"]["time_offset_s"] < 0 and -0.05 < fit.time_offset_s < 0
        assert abs(r["parameters"]["time_offset_s"] - fit.time_offset_s) < 0.01, run
    rot, tr = se3.pose_error(transform_from_pose_json(r1["poses"]["X"]), transform_from_pose_json(r2["poses"]["X"]))
    assert rot < 1.0 and tr < 20.0


@pytest.mark.parametrize("entry", ["kuka_1", "kuka_2"])
def test_he_ml_on_the_corners_lands_near_park(entry, corners_results):
    """he_ml with the corners (robot errors marginalised, their level by maximum likelihood) on the real RWHE-Calib views.

    The suite's ``_he_ml`` entry is he_ml's pixel stage at the free-pose intrinsics and the board's stated size: it
    lands where the ``_prior`` entry and OpenCV's Park do, with the pixel noise at the corner detector's level and
    the robot's errors about 0.5 mrad.  ``kinhec calibrate --corners`` (the session's ``corners_results``) starts
    there and refines the intrinsics and the board's scale with X and Y: the scale moves X along the camera's
    optical axis (kuka_2's eye translations are about 1 % longer than the robot's: 5 mm there), so across the axis
    and in rotation it stays where he_ml is.
    """
    res = corners_results[entry]
    ref = json.loads((REALDATA / "rwhe_calib" / entry / "opencv_reference_calibration.json").read_text())
    X_park = np.array(ref["opencv_calibrateHandEye"]["PARK"]["T_tcp_cam (cam2gripper)"])
    he = _result(entry + "_he_ml")
    X_he = transform_from_pose_json(he["poses"]["X"])
    rot, tr = se3.pose_error(X_he, X_park)
    assert rot < 0.2 and tr < 1.0, (rot, tr)
    assert he["statistics"]["pixel_std_px"] < 0.1 and 1e-4 < he["statistics"]["robot_rot_std_rad"] < 2e-3
    # the _prior entry refines the intrinsics too (kuka_1's principal point moves), which shifts its translation
    rot, tr = se3.pose_error(X_he, transform_from_pose_json(_result(entry + "_prior")["poses"]["X"]))
    assert rot < 0.1 and tr < 3.0, (rot, tr)
    # --corners: the same rotation; the translation moved by the board scale along the optical axis only
    assert res.observability["pixel_std_px"] < 0.1 and 1e-4 < res.observability["robot_std_rad_m"][0] < 2e-3
    rot, _ = se3.pose_error(res.X, X_he)
    assert rot < 3 * np.degrees(np.linalg.norm(res.X_std[:3])), rot
    d_cam = res.X[:3, :3].T @ (X_he[:3, 3] - res.X[:3, 3])  # in the camera frame: z along the optical axis
    cov_cam = res.X[:3, :3].T @ res.cov[3:6, 3:6] @ res.X[:3, :3]
    across = np.linalg.norm(d_cam[:2]) / np.sqrt(cov_cam[0, 0] + cov_cam[1, 1])
    # measured: kuka_1 well inside; kuka_2 3.10 (1.5 and 1.7 mm across, 0.5 mm each), both fits without view 0,
    # whose pose-stage chi-square (23.5) is above the gate at the restricted maximum of the noise levels (2.98
    # while the levels stopped short of it and kept the view); the sigma is --corners' own, not that of the
    # difference of two fits with different intrinsics and board scale
    assert across < 3.5, (across, d_cam, np.sqrt(np.diag(cov_cam)))


def test_drift_reports_values_that_turn_nan_or_infinite():
    nan, inf = float("nan"), float("inf")
    assert drift({"a": nan}, {"a": 1.0}, 1e-9, 1e-6) == ["a: 1.0 -> nan"]
    assert drift({"a": 1.0}, {"a": nan}, 1e-9, 1e-6) == ["a: nan -> 1.0"]
    assert drift({"a": inf}, {"a": 1.0}, 1e-9, 1e-6) == ["a: 1.0 -> inf"]
    assert drift({"a": -inf}, {"a": inf}, 1e-9, 1e-6) == ["a: inf -> -inf"]
    assert drift({"a": [nan, inf]}, {"a": [nan, inf]}, 1e-9, 1e-6) == []  # unchanged non-finite values


def test_bless_rewrites_only_the_chosen_references(suite_copy):
    from kinhec.evaluate.suite import bless

    ref = suite_copy / "results" / "synth_pnp" / "kinhec.json"
    good = json.loads(ref.read_text())
    doc = json.loads(ref.read_text())
    doc["poses"]["X"]["translation"][0] += 1e-3
    ref.write_text(json.dumps(doc))
    others = {p: p.read_bytes() for p in (suite_copy / "results").rglob("*.json") if p != ref}
    assert bless(suite_copy, only=["synth_pnp"]) == ["synth_pnp"]
    # the re-solved result (what check compares with), not the tampered one
    assert drift(json.loads(ref.read_text()), good, 1e-12, 1e-9) == []
    assert all(p.read_bytes() == b for p, b in others.items())


def test_bless_refuses_an_entry_whose_files_fail_their_checksum(suite_copy):
    from kinhec.evaluate.suite import bless

    path = suite_copy / "observations" / "synth_pnp.json"
    path.write_bytes(path.read_bytes().replace(b"0.", b"1.", 1))
    ref = suite_copy / "results" / "synth_pnp" / "kinhec.json"
    before = ref.read_bytes()
    with pytest.raises(DatasetFormatError, match="synth_pnp.json"):
        bless(suite_copy, only=["synth_pnp"])
    assert ref.read_bytes() == before


def test_freeze_rebuilds_a_generated_entry_and_its_checksums(suite_copy, tmp_path):
    """``freeze`` of a recipe entry writes its observations and truth from the recipe, the same bytes every time,
    and SHA256SUMS lists what it wrote (the other entries' sums unchanged)."""
    from kinhec.evaluate.suite import freeze
    from kinhec.evaluate.suite.runner import verify_entry_files

    other = tmp_path / "again"
    shutil.copytree(suite_copy, other)
    sums_before = read_checksums(suite_copy)
    obs = suite_copy / "observations" / "synth_pnp.json"
    truth = suite_copy / "truth" / "synth_pnp.json"
    obs.unlink()
    truth.write_text("{}")
    assert freeze(suite_copy, only=["synth_pnp"]) == ["synth_pnp"]
    assert freeze(other, only=["synth_pnp"]) == ["synth_pnp"]
    for rel in ("observations/synth_pnp.json", "truth/synth_pnp.json", "SHA256SUMS"):
        assert (suite_copy / rel).read_bytes() == (other / rel).read_bytes(), rel
    sums = read_checksums(suite_copy)
    assert sums["observations/synth_pnp.json"] == sha256_file(obs)
    assert sums["truth/synth_pnp.json"] == sha256_file(truth)
    assert {k: v for k, v in sums.items() if "synth_pnp" not in k} == {
        k: v for k, v in sums_before.items() if "synth_pnp" not in k}
    entry = next(e for e in load_suite(suite_copy).entries if e.id == "synth_pnp")
    assert verify_entry_files(suite_copy, entry, sums) == []
    assert read_observations(obs).T_base_ee.shape == (20, 4, 4)


def test_drift_tolerance_is_absolute_plus_relative():
    """A number moves when ``|new - ref| > abs_tol + rel_tol * max(|ref|, |new|)``: just beyond it reported, just
    within it not (relative and absolute parts apart)."""
    assert drift({"a": 100.0 * (1 + 2.2e-6)}, {"a": 100.0}, 0.0, 1e-6)[0].startswith("a: 100.0 -> ")
    assert drift({"a": 100.0 * (1 + 0.9e-6)}, {"a": 100.0}, 0.0, 1e-6) == []
    assert drift({"a": 1.1e-9}, {"a": 0.0}, 1e-9, 1e-6)[0].startswith("a: 0.0 -> ")
    assert drift({"a": 0.9e-9}, {"a": 0.0}, 1e-9, 1e-6) == []
