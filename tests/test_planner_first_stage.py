"""The first stage of the planner's two-stage workflow, calibrated as docs/planner.md and the plan's note say.

Five poses fit ``A X = Y B`` exactly as well with both files inverted (``inv(A) Y = X inv(B)``: ``X`` and ``Y``
exchanged), whatever the poses.  The setup alone leaves that reading in: only physics removes it, when it puts the
camera more than 0.5 m from the flange -- i.e. when the board lies that far from the base.  A planned scene with the
board nearer (panda, 0.42 m here) therefore needs the direction of the flange poses stated, which the workflow knows
(the flange in the base, as the plan's CSV holds it).
"""

from __future__ import annotations

import json
import re
import shlex

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec.cli import main
from kinhec.calibrate import calibrate
from kinhec.calibrate.conventions import X_IMPOSSIBLE_M
from kinhec.geometry import se3
from kinhec.planner import PlanLimits, Scene, noise_model, plan_poses
from kinhec.models.cameras import get_camera, get_target
from kinhec.models.robots import get_robot
from kinhec.synth.trajectories import lookat, sample_hand_eye
from kinhec.util.errors import InputError

from helpers.paths import REPO
from support.planner_simulate import simulate_measurements

TRUSTED = PlanLimits(guess_tolerance_mm=0.0, guess_tolerance_deg=0.0)


def _xyzq(T) -> str:
    p, q = se3.pq_from_transform(T)
    return ",".join(f"{v:.17g}" for v in [*p, *q[1:], q[0]])


@pytest.fixture(scope="module")
def first_stage(tmp_path_factory):
    """Five planned panda poses eye-in-hand, the board 0.42 m from the base, recorded (PnP 0.5 px, robot r1) and
    written as a user writes them: flange poses ``T_base_ee`` and PnP's ``T_cam_target``, CSV without claims."""
    rng = np.random.default_rng([1, 30])
    rob, cam, tgt = get_robot("panda"), get_camera("hd"), get_target("checker_9x6_25mm")
    X = sample_hand_eye(rng, "eye_in_hand")
    _, Y, _ = lookat(rob, X, "eye_in_hand", cam, tgt, rng, n_stations=3)
    sc = Scene(rob, "eye_in_hand", cam, tgt, X, Y)
    plan = plan_poses("panda", "eye_in_hand", "hd", "checker_9x6_25mm", X, Y, 5, n_views=400, limits=TRUSTED,
                      min_visible_fraction=1.0)  # fmt: skip
    A, B = simulate_measurements(sc, plan.T_base_ee, noise_model(), np.random.default_rng(8))
    d = tmp_path_factory.mktemp("first")
    (d / "hand.csv").write_text("x,y,z,qx,qy,qz,qw\n" + "\n".join(_xyzq(t) for t in A) + "\n")
    (d / "eye.csv").write_text("x,y,z,qx,qy,qz,qw\n" + "\n".join(_xyzq(t) for t in se3.invert_transform(B)) + "\n")
    return sc, plan, d


def test_the_setup_alone_leaves_the_reading_with_x_and_y_exchanged(first_stage):
    sc, _, d = first_stage
    x_m, y_m = float(np.linalg.norm(sc.X[:3, 3])), float(np.linalg.norm(sc.Y[:3, 3]))
    assert y_m < X_IMPOSSIBLE_M  # the scene this is about: read with X and Y exchanged, the camera is possible
    with pytest.raises(InputError, match="2 readings fit these files exactly as well") as err:
        calibrate(d / "hand.csv", d / "eye.csv", setup="eye_in_hand", offset="none")
    found = re.findall(r"\(\d\) --setup (\S+) --hand-pose (\S+) --eye-pose (\S+): X = T_ee_cam, the camera (\d+) mm "
                       r"from the flange; Y = T_base_target, the target (\d+) mm from the base", str(err.value))
    got = {(s, h, e): (int(a) / 1e3, int(b) / 1e3) for s, h, e, a, b in found}
    assert set(got) == {("eye_in_hand", "base_T_ee", "cam_T_target"), ("eye_in_hand", "ee_T_base", "target_T_cam")}
    # as recorded: the true distances; both files inverted: inv(A) Y = X inv(B), so the camera where the board is
    # (|t| of the true Y from the flange) and the board where the camera is (|t| of the true X from the base)
    assert got["eye_in_hand", "base_T_ee", "cam_T_target"] == pytest.approx((x_m, y_m), abs=0.006)
    assert got["eye_in_hand", "ee_T_base", "target_T_cam"] == pytest.approx((y_m, x_m), abs=0.006)


def test_the_inverted_reading_fits_exactly_as_well():
    """The identity behind the tie, on exact poses: inv(A_i) Y = X inv(B_i) with X and Y exchanged."""
    rng = np.random.default_rng(3)
    X, Y = se3.random_poses(rng, 2, 0.5)
    A = se3.random_poses(rng, 5, 0.5)
    B = se3.invert_transform(Y) @ A @ X  # A X = Y B
    lhs = se3.invert_transform(A) @ Y  # the exchanged reading: A' = inv(A), B' = inv(B), X' = Y, Y' = X
    rhs = X @ se3.invert_transform(B)
    np.testing.assert_allclose(lhs, rhs, atol=1e-12)


def _command(text: str, hand, eye, out) -> list[str]:
    """The ``kinhec calibrate`` command in ``text`` as arguments, its placeholders replaced by these files."""
    m = re.search(r"kinhec calibrate (--hand [^\n;)`]*?--json \S+)", text)
    assert m, text
    args = shlex.split(m.group(1))
    args[args.index("--hand") + 1], args[args.index("--eye") + 1] = str(hand), str(eye)
    args[args.index("--json") + 1] = str(out)
    return ["calibrate"] + args


def _check_calibrated(sc, args, out):
    r = CliRunner().invoke(main, args + ["--offset", "none"])
    assert r.exit_code == 0, r.output
    X = np.array(json.loads(out.read_text())["X"])
    rot_deg, trans_mm = se3.pose_error(X, sc.X)
    # five poses at 0.5 px: a few mm (1-5 mm over the benchmark's first stages)
    assert rot_deg < 0.5 and trans_mm < 6.0, (rot_deg, trans_mm)


def test_the_docs_command_calibrates_the_first_stage(first_stage, tmp_path):
    sc, _, d = first_stage
    page = (REPO / "docs" / "planner.md").read_text(encoding="utf-8")
    block = page[page.index("### The two-stage workflow"):]
    args = _command(block, d / "hand.csv", d / "eye.csv", tmp_path / "first.json")
    _check_calibrated(sc, args, tmp_path / "first.json")


def test_the_plans_note_names_a_command_that_calibrates_the_first_stage(first_stage, tmp_path):
    sc, plan, d = first_stage
    first = plan_poses("panda", "eye_in_hand", "hd", "checker_9x6_25mm", sc.X, sc.Y, 5, n_views=400,
                       min_visible_fraction=1.0)  # the default tolerance: the note of a first stage
    note = first.details["notes"][0]
    assert "--guesses-from" in note
    _check_calibrated(sc, _command(note, d / "hand.csv", d / "eye.csv", tmp_path / "first.json"),
                      tmp_path / "first.json")


def test_in_opencvs_target_frame_the_exchanged_reading_puts_the_board_behind_the_camera(first_stage, tmp_path):
    """The same recording with the board's z turned into the board (OpenCV's frame): read inverted, every camera pose
    puts the board behind the camera, so physics leaves one reading and the setup alone calibrates."""
    sc, _, d = first_stage
    flip = np.diag([1.0, -1.0, -1.0, 1.0])  # half a turn about x
    rows = np.array([[float(v) for v in line.split(",")] for line in (d / "eye.csv").read_text().splitlines()[1:]])
    T = se3.transform_from_pq(rows[:, :3], np.concatenate([rows[:, 6:7], rows[:, 3:6]], axis=1), normalize=True) @ flip
    inv_z = se3.invert_transform(T)[:, 2, 3]
    assert (T[:, 2, 3] > 0).all() and (inv_z < 0).all()  # in front as recorded, behind read inverted
    (tmp_path / "eye.csv").write_text("x,y,z,qx,qy,qz,qw\n" + "\n".join(_xyzq(t) for t in T) + "\n")
    res = calibrate(d / "hand.csv", tmp_path / "eye.csv", setup="eye_in_hand", offset="none")
    assert res.inputs["conventions"]["fit_the_same"]["chosen_by"] == "physics"
    rot_deg, trans_mm = se3.pose_error(res.X, sc.X)
    assert rot_deg < 0.5 and trans_mm < 6.0, (rot_deg, trans_mm)
    rot_deg, trans_mm = se3.pose_error(res.Y, sc.Y @ flip)
    assert rot_deg < 0.5 and trans_mm < 6.0, (rot_deg, trans_mm)
