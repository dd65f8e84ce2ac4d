"""Every confident wrong answer the calibrate issue lists, on the input that showed it: now right (with a note)
or refused (exit 2, one line naming the cause).

Real data: Tabb, RWHE and the ETH-ASL streams are copied under tests/data/realdata (their sources and licences in
its SOURCES.toml).  The multi-camera recording of the issue is
not public; a generated analogue stands in for it (:func:`static_run_analogue`).
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec.geometry import se3
from kinhec.calibrate import calibrate
from kinhec.cli import main
from kinhec.util.errors import InputError

from helpers.checks import one_line_exit_2
from helpers.recordings import EYE_POSE, exported, static_run_analogue

DATA = Path(__file__).resolve().parent / "data" / "realdata"
ETH = DATA / "ethz_asl"
TABB = DATA / "tabb_ds1"


def run(*args):
    return CliRunner().invoke(main, ["calibrate", *map(str, args)])


def eth_files(folder):
    files = sorted((ETH / folder).glob("*.csv"))
    assert files, f"no ETH-ASL streams in {ETH / folder} (tests/data travels with the repository)"
    return files


# --------------------------------------------------------------------------- #
# ETH robot_arm_real: "the poses look inverted", and --hand-pose ee_T_base gave Y as X with exit 0
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def arm():
    files = eth_files("robot_arm_real")
    return next(f for f in files if "hinge" in f.name), next(f for f in files if "target_ir" in f.name)


def test_eth_plain_run_reads_the_camera_in_the_target_frame(arm, tmp_path):
    hand, eye = arm
    r = run("--hand", hand, "--eye", eye, "--json", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    d = json.loads((tmp_path / "r.json").read_text())
    # the right run of the issue (--eye-pose target_T_cam): X t = (0.00003, -0.0143, 0.0048) m
    assert np.allclose(d["X_t_m"], [0.00003, -0.0143, 0.0048], atol=0.002), d["X_t_m"]
    assert d["inputs"]["eye_pose"] == "target_T_cam" and "look inverted" not in r.output
    assert d["inputs"]["conventions"]["margin"] > 4.6 and d["inputs"]["conventions"]["cost_s"] < 1.0
    # the recommendation, followed, landed on Y (0.656 m) with exit 0: now refused, naming both readings
    err = one_line_exit_2(run("--hand", hand, "--eye", eye, "--hand-pose", "ee_T_base"),
                          "--hand-pose ee_T_base does not fit", "--hand-pose base_T_ee")
    assert "692 mm from the flange" in err and "18 mm" in err


# --------------------------------------------------------------------------- #
# kinhec's own TUM export: read as cam_T_target; the hint led to the true Y as X
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("configuration", ["eye_in_hand", "eye_to_hand"])
def test_kinhec_export_round_trip_needs_no_direction_flag(tmp_path, configuration):
    seq, hand, eye = exported(tmp_path, 1, configuration=configuration, sync="async", time_offset_s=0.05)
    res = calibrate(hand, eye)  # no --setup, no --eye-pose: the export says (names and its comment line)
    assert res.setup == configuration and res.determined
    assert not any(n.startswith("conventions: corrected") for n in res.notes)
    # exactly what the right options give (whose X test_calibrate_synthetic holds to the truth)
    right = calibrate(hand, eye, setup=configuration, eye_pose=EYE_POSE[configuration])
    assert np.array_equal(res.X, right.X) and res.time_offset_s == right.time_offset_s
    # an export written before the comment line: its file names alone decide
    for f in (hand, eye):
        f.write_text("".join(line for line in f.read_text().splitlines(True) if "kinhec export" not in line))
    res2 = calibrate(hand, eye, setup=configuration)
    assert np.allclose(res2.X, res.X, atol=1e-9)


def test_exchanged_500_hz_robot_and_30_hz_camera_files_are_corrected(tmp_path):
    """The issue: exit 0, offset -49.8 ms (truth +50), X ~150 mm off.  The rates (and the export's names) say
    which file is which."""
    seq, hand, eye = exported(tmp_path, 2, sync="async", time_offset_s=0.05)
    res = calibrate(eye, hand)  # exchanged
    assert any("corrected to --hand and --eye exchanged" in n and "500 Hz" in n for n in res.notes), res.notes
    right = calibrate(hand, eye)
    assert np.array_equal(res.X, right.X) and res.time_offset_s == right.time_offset_s
    assert abs(res.time_offset_s - 0.05) < 3 * res.time_offset_std_s + 1e-4 and res.inputs["hand"] == str(hand)


def test_quaternions_scalar_first_are_diagnosed_and_corrected(tmp_path):
    """The issue: never diagnosed (inversion, then a scale of 6.61, then an undetermined X; --force 1.3 deg / 17 mm)."""
    seq, hand, eye = exported(tmp_path, 3)
    right = calibrate(hand, eye)
    for f in (hand, eye):  # rewrite both files in w x y z order, no header naming the columns
        rows = [r.split() for r in f.read_text().splitlines() if r and not r.startswith("#")]
        f.write_text("".join(" ".join([r[0], r[1], r[2], r[3], r[7], r[4], r[5], r[6]]) + "\n" for r in rows))
    res = calibrate(hand, eye, setup="eye_in_hand", eye_pose="target_T_cam")  # the comment lines went too
    assert any("corrected to --quat-order wxyz" in n for n in res.notes), res.notes
    assert np.allclose(res.X, right.X, atol=1e-9) and res.inputs["quat_order"] == "wxyz,wxyz"
    # an order stated on the command line that the files contradict: refused, naming it
    with pytest.raises(InputError, match=r"--quat-order wxyz,xyzw does not fit.*--quat-order wxyz"):
        calibrate(hand, eye, setup="eye_in_hand", eye_pose="target_T_cam", quat_order="wxyz,xyzw")
    assert np.allclose(calibrate(hand, eye, quat_order="wxyz", setup="eye_in_hand", eye_pose="target_T_cam").X,
                       right.X, atol=1e-9)


# --------------------------------------------------------------------------- #
# Tabb: both directions given wrong (X 2.2 m, exit 0); a wrong --setup; the files exchanged
# --------------------------------------------------------------------------- #
def test_tabb_wrong_directions_are_refused_naming_them():
    err = one_line_exit_2(run("--hand", TABB / "robot_cali.txt", "--eye", TABB / "cali.txt", "--hand-pose", "base_T_ee",
                              "--eye-pose", "target_T_cam"),
                          "--hand-pose base_T_ee and --eye-pose target_T_cam do not fit", "2.23 m from the flange",
                          "robot_cali.txt holds ee_T_base (the tabb format)")
    assert "--hand-pose ee_T_base, --eye-pose cam_T_target" in err


def test_tabb_wrong_setup_names_the_setup():
    """The issue: the hint repeated an option the format sets and never mentioned --setup."""
    err = one_line_exit_2(run("--hand", TABB / "robot_cali.txt", "--eye", TABB / "cali.txt", "--setup", "eye_to_hand"),
                          "--setup eye_to_hand does not fit", "--setup eye_in_hand")
    assert "cali.txt holds cam_T_target (the tabb format)" in err


def test_tabb_files_exchanged_are_corrected_naming_both_files():
    """The issue: ``unknown hand pose direction 'cam_T_target'``, naming neither file."""
    ref = calibrate(TABB / "robot_cali.txt", TABB / "cali.txt")
    res = calibrate(TABB / "cali.txt", TABB / "robot_cali.txt")
    note = next(n for n in res.notes if n.startswith("conventions: corrected"))
    assert "--hand and --eye exchanged" in note and "cali.txt holds cam_T_target" in note
    assert np.allclose(res.X, ref.X, atol=1e-9) and res.inputs["hand"].endswith("robot_cali.txt")


# --------------------------------------------------------------------------- #
# mixed-000004 of the small tier (scale 1, 20 % outliers): "eye translations are 35.5 times the metric ones"
# --------------------------------------------------------------------------- #
#: The settings of mixed-000004 when the symptom was reported (a continuous, asynchronous path with the camera
#: level c5 on a metric VO origin, 20 % random poses, an uncalibrated DH model); the track samples and draws its
#: camera noise differently now, so the case sets them over the robot, family and target it still draws.
MIXED_000004_AS_REPORTED = dict(
    sampling_mode="continuous", duration_s=30.0, camera_rate_hz=10.0, n_stations=9, sync="async", time_offset_s=0.0576,
    time_jitter_std_s=0.005, robot_noise_models=("se3_gaussian", "dh_error"), joint_std_rad=0.0, dh_len_std_m=0.001,
    dh_ang_std_rad=0.00017453292519943296, dh_joint_std_rad=0.0001, world_frame="vo_origin",
    camera_noise_model="se3_gaussian", camera_rot_std_rad=0.02, camera_trans_std_m=0.012, camera_trans_std_z_m=0.04,
    student_t_dof=None, outlier_fraction=0.2, outlier_model="random_pose", scale=1.0, scale_drift_std=0.0,
)


def test_outliers_do_not_make_a_metric_stream_look_monocular(tmp_path):
    from kinhec import io as kio
    from kinhec.synth.generator import generate_sequence
    from kinhec.synth.recipe import Recipe
    from kinhec.synth.tiers import expand_track, load_tier

    recipe = next(r for r in expand_track(load_tier("small"), "mixed") if r["sequence_id"] == "mixed-000004")
    recipe.update(MIXED_000004_AS_REPORTED)
    kio.write_index(tmp_path, kio.write_shard(tmp_path, "mixed", 4, [generate_sequence(Recipe.from_dict(recipe))]))
    res = calibrate(dataset=tmp_path, sequence="mixed-000004")
    assert not any("--scale" in w for w in res.warnings), res.warnings
    ratio = res.inputs["conventions"]["ranking"][0]["scale"]
    assert 0.9 < ratio < 1.1  # the robust coarse fit (before: a least-squares ratio of 35.5)


# --------------------------------------------------------------------------- #
# unstamped pairs in row order with a run of repeated rows (the multi-camera set of the issue)
# --------------------------------------------------------------------------- #
def _rows(path, T):
    path.write_text("".join(" ".join(repr(v) for v in M.ravel().tolist()) + "\n" for M in T))
    return path


def test_he_ml_refuses_a_minority_of_repeated_rows():
    """The issue: he_ml(robust) kept 42 of 107 pairs, its noise levels fell to 0, Y landed 2.6 m away, no warning."""
    from kinhec.solvers.he_ml import he_ml
    from kinhec.solvers.he_ml_stages.collapse import RobustCollapseWarning

    A, C, X, Y = static_run_analogue()
    with pytest.warns(RobustCollapseWarning, match=r"kept 2[678] of 60 pairs.*refused"):
        res = he_ml(A, se3.invert_transform(C))
    # the refused fit keeps the 26 repeated rows, and on some CPU kernels a neighbour or two: its noise levels are
    # at rounding, so its gate is no stable decision (it is reported, never used)
    assert res.n_inliers == 60 and 26 <= res.info["robust_collapse"]["n_inliers"] <= 28
    assert se3.pose_error(res.Y, Y)[1] < 300  # before: metres
    # the plain fit (robust=False) is what is returned, bit for bit
    plain = he_ml(A, se3.invert_transform(C), robust=False)
    assert np.array_equal(plain.X, res.X)


def test_li_kronecker_flags_a_translation_its_residuals_reject():
    from kinhec.solvers import li_kronecker
    from kinhec.solvers.axyb_li_kronecker import InconsistentTranslationWarning, translation_f_statistic

    A, C, X, Y = static_run_analogue()
    B = se3.invert_transform(C)
    with pytest.warns(InconsistentTranslationWarning, match="rejected by its own residuals"):
        Xl, Yl = li_kronecker(A, B)
    F, p, t_best = translation_f_statistic(A, B, Xl, Yl)
    assert p < 1e-3 and np.linalg.norm(t_best[:3] - Xl[:3, 3]) > 0.03  # its best translation is far from its own
    # exact pairs: no flag
    A0 = A[np.r_[0:20, 46:60]]
    B0 = se3.invert_transform(se3.invert_transform(A0 @ X) @ Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InconsistentTranslationWarning)
        li_kronecker(A0, B0)


def _mahalanobis2(T, T_true, C) -> float:
    e = np.r_[se3.so3_log(T[:3, :3].T @ T_true[:3, :3]), T_true[:3, 3] - T[:3, 3]]
    return float(e @ np.linalg.solve(C, e))


def test_calibrate_counts_repeated_rows_once_and_is_right_or_refuses(tmp_path):
    """The issue: calibrate labelled 37 % of the pairs outliers and refused 'X is not determined'; with --force Y
    landed 1.03 m off.  Here 26 of 60 rows repeat one pair (43 %).  Counted 26 times, that pair pinned the fit and
    its zero residuals shrank the noise estimate: X and Y came out 4-5 sigma off (squared Mahalanobis errors 29
    and 28, means 22 and 25 over eight seeds).  Counted once, the 30 mm noise leaves X poorly determined: refused
    by default, and with --force within its sigma."""
    A, C, X, Y = static_run_analogue()
    hand, eye = _rows(tmp_path / "body.txt", A), _rows(tmp_path / "cam_T_tag.txt", C)
    one_line_exit_2(run("--hand", hand, "--eye", eye), "X is not determined by this motion", "poorly determined")
    res = calibrate(hand, eye, force=True)
    assert any("25 of 60 pairs repeat an earlier pair exactly" in n for n in res.notes), res.notes
    assert res.n_pairs == 35 and not res.outliers and not res.determined
    assert _mahalanobis2(res.X, X, res.cov[:6, :6]) < 16.8  # chi2(6) at 99 %
    assert _mahalanobis2(res.Y, Y, res.cov[6:12, 6:12]) < 16.8


def test_calibrate_keeps_every_pair_when_the_outliers_come_in_a_run(tmp_path):
    """A systematic error that changes along the recording (the tag re-identified: 15 consecutive rows shifted by
    100 mm) is not a set of gross errors: the gate labels the run, the judgement keeps every pair and says so, and
    X, carrying the error, stays within its sigma."""
    A, C, X, Y = static_run_analogue(n_static=1, noise_mm=2.0, noise_deg=0.1)
    C[20:35] = C[20:35] @ se3.se3_exp(np.r_[0.0, 0.0, 0.0, 0.1, 0.0, 0.0])
    res = calibrate(_rows(tmp_path / "body.txt", A), _rows(tmp_path / "cam_T_tag.txt", C))
    w = next(w for w in res.warnings if "more than the fit supports" in w)
    assert "15 of 60 pairs" in w and "runs of consecutive pairs" in w and "all pairs kept" in w
    assert not res.outliers and res.n_pairs == 60
    assert _mahalanobis2(res.X, X, res.cov[:6, :6]) < 16.8


def test_scattered_gross_outliers_are_still_set_aside(tmp_path):
    """The judgement of the outlier share does not undo the gate's proper work: 15 % random poses, scattered."""
    A, C, X, Y = static_run_analogue(n_static=1, noise_mm=2.0, noise_deg=0.1)
    rng = np.random.default_rng(1)
    bad = np.sort(rng.choice(len(C), 9, replace=False))
    C[bad] = C[bad] @ se3.se3_exp(np.c_[rng.normal(0, 0.3, (9, 3)), rng.normal(0, 0.3, (9, 3))])
    res = calibrate(_rows(tmp_path / "body.txt", A), _rows(tmp_path / "cam_T_tag.txt", C))
    assert sorted(res.outliers) == bad.tolist()
    assert not any("more than the fit supports" in w for w in res.warnings)


# --------------------------------------------------------------------------- #
# --corners: options that do not apply were silently ignored; notes only in the JSON
# --------------------------------------------------------------------------- #
def test_corners_refuse_options_that_do_not_apply():
    obs = Path(__file__).resolve().parents[1] / "regression" / "observations" / "kuka_2.json"
    for opt in (["--scale"], ["--solver", "shah"], ["--units", "mm"], ["--offset", "0.02"], ["--hand-pose", "ee_T_base"]):
        one_line_exit_2(run("--corners", obs, *opt), "do not apply to a corner file", opt[0].lstrip("-").replace("-", "_"))
    with pytest.raises(InputError, match="scale, solver 'shah'"):
        calibrate(corners=obs, scale=True, solver="shah")


def test_notes_are_printed_on_screen(tmp_path):
    seq, hand, eye = exported(tmp_path, 4)
    r = run("--hand", hand, "--eye", eye)
    assert r.exit_code == 0, r.output
    assert "note: conventions:" in r.output and "note: initial estimate from" in r.output


def test_the_start_is_the_candidate_most_pairs_agree_with():
    """The issue: calibrate started from Daniilidis, the candidate with the smallest median residuals -- a median
    that a candidate fitting part of the pairs well wins.  The start is now the candidate (the solvers' consensus
    among them) that the most pairs agree with: on five analogues it is closer to the truth on average, in
    rotation and in translation."""
    from kinhec.calibrate import solve as sv

    err_new, err_old = [], []
    for seed in range(5):
        A, C, X, Y = static_run_analogue(seed=seed)
        B = se3.invert_transform(C)
        cands = sv.initial_candidates(A, B)
        assert "consensus" in [c[0] for c in cands]
        med = np.array([sv.score(A, B, Xc, Yc, s) for _, Xc, Yc, s in cands])
        by_median = cands[int(np.argmin((med / med.min(axis=0)).sum(axis=1)))]
        err_new.append(se3.pose_error(cands[0][1], X))
        err_old.append(se3.pose_error(by_median[1], X))
    assert np.all(np.mean(err_new, axis=0) < np.mean(err_old, axis=0)), (err_new, err_old)


def test_runs_test_and_the_judgement_of_outlier_labels():
    from kinhec.calibrate.outliers import judge, runs_z

    block = np.r_[np.zeros(60, bool), np.ones(40, bool)]
    assert runs_z(block) < -9  # two runs where about 49 are expected
    alternating = np.arange(100) % 2 == 0
    assert runs_z(alternating) > 9
    rng = np.random.default_rng(0)
    assert abs(runs_z(rng.random(100) < 0.2)) < 3  # scattered at random
    A, C, X, Y = static_run_analogue(n_static=1)
    inl = np.ones(len(A), bool)
    assert judge(inl, A) is None
    inl[rng.choice(len(A), 8, replace=False)] = False  # scattered gross errors: supported
    assert judge(inl, A) is None
    inl = np.ones(len(A), bool)
    inl[20:35] = False  # a quarter of the rows in one run
    assert "runs of consecutive pairs" in judge(inl, A)
    inl = np.zeros(len(A), bool)
    inl[:25] = True
    assert "minority" in judge(inl, A)
    # inliers that turn about one axis only (every other row), outliers that turn about all three: X is not determined
    w = rng.normal(0, 0.5, (40, 3))
    w[::2, :2] = 0.0
    A_axis = se3.transform_from_rotation_translation(se3.so3_exp(w), rng.normal(0, 0.2, (40, 3)))
    inl = np.arange(40) % 2 == 0
    assert "would not determine X" in judge(inl, A_axis)
    w[::2, :2] = rng.normal(0, 0.5, (20, 2))  # the same labels on inliers that turn about every axis: supported
    assert judge(inl, se3.transform_from_rotation_translation(se3.so3_exp(w), A_axis[:, :3, 3])) is None


# --------------------------------------------------------------------------- #
# readings that fit the same: told apart only by what is stated, what the files claim, what is physically
# possible (kinhec.calibrate.reading_choice); never by a default
# --------------------------------------------------------------------------- #
def _smoke_export(smoke_tier, folder: Path, comments: bool = True) -> tuple[Path, Path]:
    """The smoke tier's eye-to-hand noise-000004 exported as TUM and renamed robot_poses.txt / camera_poses.txt
    (without the ``# kinhec export`` comment line that states each file's frames and setup when ``comments`` is
    False)."""
    from kinhec.dataset.export import export_sequence
    from kinhec.io import load_manifest

    man = load_manifest(smoke_tier)
    assert man.set_index("sequence_id").loc["noise-000004", "configuration"] == "eye_to_hand"
    export_sequence(smoke_tier, "noise-000004", "tum", folder / "export")
    out = []
    for src, name in (("noise-000004_base_ee_meas.tum", "robot_poses.txt"),
                      ("noise-000004_cam_marker_meas.tum", "camera_poses.txt")):
        lines = (folder / "export" / src).read_text().splitlines(True)
        (folder / name).write_text("".join(x for x in lines if comments or "kinhec export" not in x))
        out.append(folder / name)
    return out[0], out[1]


def test_renamed_eye_to_hand_export_is_read_from_its_comment_lines(smoke_tier, tmp_path):
    """An eye-to-hand export renamed robot_poses.txt / camera_poses.txt, no option: the comment lines survive the
    renaming and state T_cam_marker and eye_to_hand, so the camera is published fixed in the base, not on the
    flange."""
    hand, eye = _smoke_export(smoke_tier, tmp_path)
    r = run("--hand", hand, "--eye", eye)
    assert r.exit_code == 0, r.output
    assert "T_ee_marker (X)" in r.output and "T_base_cam (Y)" in r.output
    assert "--frame-id base --child-frame-id cam" in r.output and "corrected" not in r.output


def test_eye_to_hand_recording_without_claims_or_setup_is_refused_naming_both_setups(smoke_tier, tmp_path):
    """The same files without the export's comment line, no option.  It used to say "corrected to --eye-pose
    target_T_cam", label the result T_ee_cam and publish the fixed camera on the flange (``--frame-id ee
    --child-frame-id cam``): eye-in-hand with T_target_cam rows and eye-to-hand with T_cam_marker rows are the same
    equation, and here nothing stated, claimed or physically impossible tells them apart.  (With the camera under
    half a metre from the base, X and Y exchanged -- ``ee_T_base`` rows -- is no more impossible: those two readings
    are listed as well.)"""
    hand, eye = _smoke_export(smoke_tier, tmp_path, comments=False)
    err = one_line_exit_2(run("--hand", hand, "--eye", eye), "robot_poses.txt, lines ",
                          "readings fit these files exactly as well",
                          "--setup eye_to_hand --hand-pose base_T_ee --eye-pose cam_T_target",
                          "--setup eye_in_hand --hand-pose base_T_ee --eye-pose target_T_cam",
                          "--frame-id base --child-frame-id cam", "--frame-id ee --child-frame-id cam",
                          "a default is not a statement")
    assert "X = T_ee_marker" in err and "X = T_ee_cam" in err
    k = int(re.search(r"(\d+) readings fit these files exactly as well", err).group(1))
    assert k >= 2 and all(f"({i}) --setup" in err for i in range(1, k + 1)) and f"({k + 1})" not in err
    # stated, it calibrates as stated (the hand rows' direction too when X and Y exchanged are listed)
    stated = ["--setup", "eye_to_hand"] + (["--hand-pose", "base_T_ee"] if k > 2 else [])
    r = run("--hand", hand, "--eye", eye, *stated)
    assert r.exit_code == 0 and "--frame-id base --child-frame-id cam" in r.output, r.output


def test_eth_eye_pose_against_the_file_name_is_refused_not_fitted_by_another_setup(arm):
    """ETH robot_arm_real, ``--eye-pose cam_T_target`` against the eye file's name (``…_target_ir``: T_target_cam).
    It used to say "corrected to --setup eye_to_hand" (in the same note: "X puts the camera 18 mm from the flange")
    and publish ``base -> cam`` at the board's position."""
    hand, eye = arm
    err = one_line_exit_2(run("--hand", hand, "--eye", eye, "--eye-pose", "cam_T_target"),
                          "--eye-pose cam_T_target contradicts what the files claim",
                          "an unstated setup is not changed to fit it", "says T_target_cam (target_ir)",
                          "select it with --setup eye_in_hand --hand-pose base_T_ee --eye-pose target_T_cam",
                          "--frame-id ee --child-frame-id cam")
    assert "corrected" not in err


def test_rwhe_inverted_camera_poses_with_a_wrong_eye_pose_are_refused(tmp_path):
    """RWHE kuka_1 with the camera poses written inverted (T_target_cam) and ``--eye-pose cam_T_target``: it used to
    say "corrected to --setup eye_to_hand" and publish a camera 2.75 m from the base.  Read so, the marker lies
    behind the camera in every view: refused, naming the reading that fits."""
    d = json.loads((DATA / "rwhe_calib" / "kuka_1" / "opencv_reference_calibration.json").read_text())
    T = se3.invert_transform(np.array([p["T_cam_target"] for p in d["per_view"]], dtype=float))
    cam = tmp_path / "cam.txt"
    cam.write_text("".join(" ".join(repr(float(v)) for v in M.ravel()) + "\n" for M in T))
    hand = DATA / "rwhe_calib" / "kuka_1" / "RobotPosesVec.txt"
    err = one_line_exit_2(run("--hand", hand, "--eye", cam, "--format", "rwhe", "--eye-pose", "cam_T_target"),
                          "--eye-pose cam_T_target is physically impossible on these files",
                          "the marker lies behind the camera in 100% of the views",
                          "select it with --setup eye_in_hand --hand-pose base_T_ee --eye-pose target_T_cam")
    assert "corrected" not in err
    r = run("--hand", hand, "--eye", cam, "--format", "rwhe", "--eye-pose", "target_T_cam")
    assert r.exit_code == 0 and "T_ee_cam (X)" in r.output, r.output
