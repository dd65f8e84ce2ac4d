"""Unstamped rows that do not pair one to one (:mod:`kinhec.calibrate.row_alignment`).

RWHE kuka_1 opens with eleven pure translations (one rotation for the first eleven poses): inside that block the
rotation angles cannot say where an image is missing, the translations can.  The exact inputs of the report (kuka_1
without camera row 4, or row 8, no stamps) must calibrate to the fit of the 29 rightly paired views and name the
robot pose without a partner; a repeated row, two rows missing in different places, a missing hand row, rows
missing in both files and a shift are placed too; where two alignments fit equally and pair different poses the
run stops (exit 2) naming the rows; where they pair the same poses bit for bit, it goes on (the same result).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec.geometry import se3
from kinhec.calibrate import calibrate
from kinhec.calibrate import row_alignment as ra
from kinhec.cli import main

KUKA_1 = Path(__file__).parent / "data" / "realdata" / "rwhe_calib" / "kuka_1"


def _write(path: Path, T: np.ndarray) -> Path:
    """One row-major 4x4 per line, as RobotPosesVec.txt."""
    path.write_text("".join(" ".join(repr(v) for v in M.ravel().tolist()) + "\n" for M in T))
    return path


@pytest.fixture(scope="module")
def kuka_1():
    """``(A, E)``: the robot poses ``T_base_tcp`` and the camera poses ``T_cam_target`` of the 30 views."""
    ref = json.loads((KUKA_1 / "opencv_reference_calibration.json").read_text())
    E = np.array([v["T_cam_target"] for v in ref["per_view"]])
    A = np.loadtxt(KUKA_1 / "RobotPosesVec.txt").reshape(-1, 4, 4)
    assert A.shape == E.shape == (30, 4, 4)
    return A, E


def _calibrate(tmp_path: Path, name: str, A: np.ndarray, E: np.ndarray, **kw):
    folder = tmp_path / name
    folder.mkdir()
    return calibrate(_write(folder / "RobotPosesVec.txt", A), _write(folder / "cam_T_target.txt", E), fmt="rwhe",
                     **kw)


def _row_notes(res) -> list[str]:
    return [n for n in res.notes if n.startswith("rows:")]


def _same_result(res, ref, fraction: float = 0.05) -> None:
    """``res`` gives the X of ``ref`` within ``fraction`` of ``ref``'s sigma (rotation and translation)."""
    rot, tr = se3.pose_error(res.X, ref.X)
    assert rot < fraction * np.degrees(ref.X_std[:3].min()), (rot, np.degrees(ref.X_std[:3]))
    assert tr < fraction * 1000 * ref.X_std[3:].min(), (tr, 1000 * ref.X_std[3:])
    assert res.n_pairs == ref.n_pairs


# --------------------------------------------------------------------------- #
# the exact inputs of the report
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("row", [4, 8])
def test_kuka_1_without_a_camera_row_inside_the_block_of_translations(tmp_path, kuka_1, row):
    """Before: 'lines of 1 pose(s) at one end without a partner', X 5.3 mm (row 4) and 5.6 mm (row 8) from the fit
    of the 29 rightly paired views (sigma about 2 mm), and a warning blaming a systematic error along the
    recording.  Now: the same X as those 29 pairs, and the note names robot pose ``row + 1`` in the middle."""
    A, E = kuka_1
    right = _calibrate(tmp_path, "right", np.delete(A, row, axis=0), np.delete(E, row, axis=0))
    res = _calibrate(tmp_path, "gap", A, np.delete(E, row, axis=0))
    _same_result(res, right, 0.01)
    note = _row_notes(res)
    assert len(note) == 1 and note[0].startswith(
        f"rows: {tmp_path / 'gap' / 'RobotPosesVec.txt'}, line {row + 1} (pose {row + 1} of 30) without a partner "
        "(in the middle)"), note
    assert "chosen by the fit by" in note[0]
    assert not any("systematic error" in w for w in res.warnings), res.warnings


def test_kuka_1_a_repeated_camera_row_pairs_once(tmp_path, kuka_1):
    """Camera row 5 written twice (the same detection): either copy left out pairs the same poses bit for bit,
    so both readings publish the same result and the run goes on, with the 30 views of the clean files."""
    A, E = kuka_1
    clean = _calibrate(tmp_path, "clean", A, E)
    res = _calibrate(tmp_path, "twice", A, np.insert(E, 6, E[5], axis=0))
    _same_result(res, clean, 1e-6)
    note = _row_notes(res)
    assert len(note) == 1 and "cam_T_target.txt, line 6 (pose 6 of 31) without a partner (in the middle)" in note[0]
    assert "the same poses bit for bit" in note[0]


def test_kuka_1_two_camera_rows_missing_in_different_places(tmp_path, kuka_1):
    A, E = kuka_1
    right = _calibrate(tmp_path, "right", np.delete(A, [4, 20], axis=0), np.delete(E, [4, 20], axis=0))
    res = _calibrate(tmp_path, "gaps", A, np.delete(E, [4, 20], axis=0))
    _same_result(res, right, 0.01)
    assert "RobotPosesVec.txt, lines 5 (pose 5 of 30), 21 (pose 21 of 30) without a partner (in the middle)" in \
        _row_notes(res)[0]


def test_kuka_1_a_missing_hand_row(tmp_path, kuka_1):
    A, E = kuka_1
    right = _calibrate(tmp_path, "right", np.delete(A, 6, axis=0), np.delete(E, 6, axis=0))
    res = _calibrate(tmp_path, "gap", np.delete(A, 6, axis=0), E)
    _same_result(res, right, 0.01)
    assert "cam_T_target.txt, line 7 (pose 7 of 30) without a partner (in the middle)" in _row_notes(res)[0]


def test_kuka_1_rows_missing_at_the_ends(tmp_path, kuka_1):
    A, E = kuka_1
    for rows, where in (([0], "at the start"), ([29], "at the end")):
        right = _calibrate(tmp_path, f"right{rows[0]}", np.delete(A, rows, axis=0), np.delete(E, rows, axis=0))
        res = _calibrate(tmp_path, f"gap{rows[0]}", A, np.delete(E, rows, axis=0))
        _same_result(res, right, 0.01)
        assert f"line {rows[0] + 1} (pose {rows[0] + 1} of 30) without a partner ({where})" in _row_notes(res)[0]


def test_kuka_1_unmodified_pairs_row_by_row_without_a_note(tmp_path, kuka_1):
    A, E = kuka_1
    res = _calibrate(tmp_path, "clean", A, E)
    assert res.n_pairs == 30 and not _row_notes(res)
    row = ra.align_rows(A, E)
    assert row.decided and row.alignment.is_identity


# --------------------------------------------------------------------------- #
# alignments the fit cannot tell apart
# --------------------------------------------------------------------------- #
def test_two_detections_of_one_view_and_the_robot_pose_once_is_refused_naming_the_rows(tmp_path, kuka_1):
    """The robot stood still for two images (camera rows 6 and 7 of the file: one view detected twice, the second
    20 micrometres apart), and its pose was written once.  Either image can be the one without a partner: the two
    alignments fit equally (the robot pose is the same) but pair different camera poses, so the results differ
    (by a hair): exit 2, naming both rows; with --force the first is kept with a note."""
    A, E = kuka_1
    twice = np.insert(E, 6, E[5] @ se3.se3_exp(np.array([0.0, 0.0, 0.0, 2e-5, 0.0, 0.0])), axis=0)
    hand, eye = _write(tmp_path / "RobotPosesVec.txt", A), _write(tmp_path / "cam_T_target.txt", twice)
    out = CliRunner().invoke(main, ["calibrate", "--hand", str(hand), "--eye", str(eye), "--format", "rwhe"])
    assert out.exit_code == 2, out.output
    msg = " ".join(out.output.split())
    assert "the fit cannot tell which rows have no partner" in msg
    assert "(1) " + str(eye) + ", line 6 (pose 6 of 31) without a partner (in the middle)" in msg
    assert "(2) " + str(eye) + ", line 7 (pose 7 of 31) without a partner (in the middle)" in msg
    res = calibrate(hand, eye, fmt="rwhe", force=True)
    assert res.n_pairs == 30 and "kept with --force" in _row_notes(res)[0]


def test_row_alignment_ranks_bit_for_bit_equal_pairs_as_one_result(kuka_1):
    """The same detection written twice: the alignments leaving out either copy are rivals that pair the same
    poses, so they count as the same result (not a refusal)."""
    A, E = kuka_1
    row = ra.align_rows(A, np.insert(E, 6, E[5], axis=0))
    assert row.decided and row.same_numbers
    twice = np.insert(E, 6, E[5] @ se3.se3_exp(np.array([0.0, 0.0, 0.0, 2e-5, 0.0, 0.0])), axis=0)
    row = ra.align_rows(A, twice)
    assert not row.decided and not row.same_numbers
    assert {tuple(x.alignment.unpaired()[1]) for x in [row.best, *row.rivals]} == {(5,), (6,)}


# --------------------------------------------------------------------------- #
# the fit and the programme on generated recordings
# --------------------------------------------------------------------------- #
def _recording(seed: int, n: int = 40, noise: bool = True, block: int = 0):
    """``A = T_base_ee``, ``E = T_cam_target`` (noisy: 0.05 deg / 0.5 mm on the hand, 0.1 deg / 1 mm on the
    camera), ``X``, ``Y``; the first ``block`` stations share one rotation (pure translations)."""
    rng = np.random.default_rng([41, seed])
    X = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 1.0, 3)), rng.uniform(-0.1, 0.1, 3))
    Y = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 1.0, 3)), rng.uniform(0.5, 1.0, 3))
    w = rng.normal(0, 0.4, (n, 3))
    w[:block] = w[0]
    A = se3.transform_from_rotation_translation(se3.so3_exp(w), rng.normal([0.5, 0, 0.4], 0.15, (n, 3)))
    B = se3.invert_transform(Y) @ A @ X  # T_target_cam
    if noise:
        A = A @ se3.se3_exp(np.c_[rng.normal(0, 5e-4, (n, 3)), rng.normal(0, 1e-3, (n, 3))])
        B = B @ se3.se3_exp(np.c_[rng.normal(0, 1e-3, (n, 3)), rng.normal(0, 2e-3, (n, 3))])
    return A, se3.invert_transform(B), X, Y


def test_fit_absolute_recovers_x_and_y_without_noise():
    A, E, X, Y = _recording(0, noise=False)
    Xf, Yf, s = ra.fit_absolute(A, se3.invert_transform(E))  # A X = Y B with B = T_target_cam
    assert se3.pose_error(Xf, X)[0] < 1e-9 and se3.pose_error(Xf, X)[1] < 1e-9
    assert se3.pose_error(Yf, Y)[1] < 1e-9 and abs(s - 1) < 1e-12
    # millimetres in the eye file: s takes the ratio
    Bmm = se3.invert_transform(E)
    Bmm[:, :3, 3] *= 1000
    assert abs(ra.fit_absolute(A, Bmm)[2] - 1e-3) < 1e-12


CASES = {  # (hand rows removed, eye rows removed): rows without a partner in the middle, at the ends, both files
    "eye row in the block": ((), (5,)),
    "hand row in the block": ((7,), ()),
    "three eye rows": ((), (3, 17, 30)),
    "first and last": ((0,), (39,)),
    "one in each file": ((4,), (25,)),
    "shifted by two": ((0, 1), (38, 39)),
    "repeated hand row": ("repeat 12", ()),
}


@pytest.mark.parametrize("case", list(CASES))
def test_row_alignment_places_the_rows_without_a_partner(case):
    """Ten pure translations open each recording; every case is placed exactly, by a decisive margin."""
    hand_rows, eye_rows = CASES[case]
    for seed in range(3):
        A, E, _, _ = _recording(seed, block=10)
        stations = np.arange(len(A))
        if hand_rows == "repeat 12":
            h_st = np.insert(stations, 13, 12)
        else:
            h_st = np.delete(stations, list(hand_rows))
        e_st = np.delete(stations, list(eye_rows))
        row = ra.align_rows(A[h_st], E[e_st])
        assert row.decided and row.margin > ra.MARGIN, (case, seed, row.margin)
        al = row.alignment
        assert np.array_equal(h_st[al.hand_index], e_st[al.eye_index]), (case, seed, al.unpaired())


def test_row_alignment_cost(kuka_1):
    """The CPU cost on kuka_1 without camera row 4 (tens of milliseconds; the bound is loose for shared CI)."""
    A, E = kuka_1
    row = ra.align_rows(A, np.delete(E, 4, axis=0))
    assert row.cost_s < 0.5, row.cost_s


def test_the_batched_window_fits_are_the_single_fits():
    A, E, _, _ = _recording(4, n=30)
    B = se3.invert_transform(E)
    fits = ra._window_fits(A, B)
    assert len(fits) == 5 * 7  # windows at rows 0, 5, 10, 15, 20; offsets -3..3
    # the window at row 5, offset -2: hand rows 5-14 with eye rows 3-12
    X, Y, s = ra.fit_absolute(A[5:15], B[3:13])
    Xb, Yb, sb = fits[1 * 7 + 1]
    assert np.allclose(Xb, X, atol=1e-9) and np.allclose(Yb, Y, atol=1e-9) and abs(sb - s) < 1e-9
    # at the start, offset -3: the first three hand rows have no eye row and are left out of the fit
    X, Y, s = ra.fit_absolute(A[3:10], B[0:7])
    assert np.allclose(fits[0][0], X, atol=1e-9) and abs(fits[0][2] - s) < 1e-9


def test_the_firewall_refuses_alignments_the_fit_cannot_tell_apart(tmp_path, kuka_1):
    from kinhec.calibrate import firewall as fw
    from kinhec.calibrate.readers import read_stream
    from kinhec.util.errors import InputError

    A, E = kuka_1
    twice = np.insert(E, 6, E[5] @ se3.se3_exp(np.array([0.0, 0.0, 0.0, 2e-5, 0.0, 0.0])), axis=0)
    hand = read_stream(_write(tmp_path / "RobotPosesVec.txt", A), "rwhe")
    eye = read_stream(_write(tmp_path / "cam_T_target.txt", twice), "rwhe")
    with pytest.raises(InputError, match=r"cannot tell which rows have no partner .*line 6 .*line 7 "):
        fw.check(hand, eye)
    dec = fw.check(hand, eye, force=True)
    assert dec.alignment.hand_index.size == 30 and "kept with --force" in dec.alignment.note


def test_the_margin_is_the_firewalls_factor_of_100_on_the_cost_scale():
    """Costs are -2 ln of a likelihood, so the firewall's factor of 100 (ln 100 in log-likelihood) is 2 ln 100."""
    from kinhec.calibrate import conventions as cv

    assert ra.MARGIN == pytest.approx(2.0 * cv.DECISIVE)
    assert ra._rho(np.array([0.0, 1.0, 2.0]))[1] == pytest.approx(ra.CAP * np.log1p(1.0 / ra.CAP))
    assert np.allclose(ra._rho(np.array([1e-6, 1e-4])), [1e-6, 1e-4], rtol=1e-4)  # the Gaussian core: -2 ln = chi2


def test_two_gross_rows_in_a_row_are_not_a_row_lost_in_each_file():
    """Eight look-at stations whose eye rows 3 and 4 are grossly wrong (10 deg, 5 cm draws): leaving out hand row 4
    and eye row 3 trades the two bad pairs for one mispaired pair and two rows left out, which costs the same at the
    cap; the first fit, pulled by the two bad pairs, once made the shifted alignment look 33 cost units better.  Both
    alignments are compared at the better of their fits, so the files pair in order."""
    from kinhec.synth.generator import simulate

    from helpers.recordings import STATIONS

    g = simulate(dict(STATIONS, seed=101, n_stations=8))
    H, E = g.T_base_ee_meas, g.T_cam_target_meas.copy()
    rng = np.random.default_rng(1)
    for i in rng.choice(8, 2, replace=False):
        E[i] = se3.transform_from_rotation_translation(se3.so3_exp(np.radians(10) * rng.normal(size=3)),
                                                       0.05 * rng.normal(size=3)) @ E[i]  # fmt: skip
    row = ra.align_rows(H, E)
    np.testing.assert_array_equal(row.best.alignment.hand_index, np.arange(8))
    np.testing.assert_array_equal(row.best.alignment.eye_index, np.arange(8))
    assert row.fewest is None and not row.rivals
