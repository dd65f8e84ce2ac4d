"""``kinhec calibrate --corners`` on a SCARA that turns about one axis: the open components named and stated, as on
pose files (:mod:`kinhec.calibrate.reduced_dof`); ``--partial`` refused, saying why.

The recordings are generated views of a board (``one_axis_corners``): the truth is known, and the direction the
motion leaves open is known by hand -- the flange points down, so moving the camera (the marker) along the flange's
z axis and ``Y`` by as much along the base's z axis changes no view.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec.calibrate import calibrate
from kinhec.calibrate.corners import calibrate_corners
from kinhec.cli import main
from kinhec.geometry import se3
from kinhec.solvers.reprojection import chain_poses
from kinhec.synth.observations import observations_from_recipe, transform_from_pose_json, write_observations
from kinhec.util.errors import InputError

from helpers.checks import one_line_exit_2
from helpers.recordings import CORNERS_CAMERA, one_axis_corners

SETUPS = ("eye_in_hand", "eye_to_hand")
K = ",".join(repr(float(v)) for v in CORNERS_CAMERA[:4])
X_TZ, Y_TZ = 5, 11  # the indices of X.tz and Y.tz in calibrate's 12 parameters


def _errors(res, X, Y):
    """Rotation errors (right perturbation, rad) and translation errors (parent frame, m) of X and Y."""
    rx = se3.so3_log(X[:3, :3].T @ res.X[:3, :3])
    ry = se3.so3_log(Y[:3, :3].T @ res.Y[:3, :3])
    return np.r_[rx, res.X[:3, 3] - X[:3, 3], ry, res.Y[:3, 3] - Y[:3, 3]]


def _run(*args):
    return CliRunner().invoke(main, ["calibrate", *map(str, args)])


def r_err(tmp_path, path):
    """The error line of ``--corners path`` without options."""
    return _run("--corners", path, "--intrinsics", K).stderr


def test_the_open_direction_changes_no_view():
    """The identity the named components rest on: X.tz + s and Y.tz - s give the same chain for every view."""
    for setup in SETUPS:
        obs, X, Y = one_axis_corners(np.random.default_rng(0), setup, 6, robot_std=(0.0, 0.0))
        X2, Y2 = X.copy(), Y.copy()
        X2[2, 3] += 0.1
        Y2[2, 3] -= 0.1
        assert np.allclose(chain_poses(obs.T_base_ee, X, Y, setup), chain_poses(obs.T_base_ee, X2, Y2, setup),
                           atol=1e-12)  # fmt: skip


@pytest.mark.parametrize("setup", SETUPS)
def test_refused_naming_the_open_components(tmp_path, setup):
    obs, _, _ = one_axis_corners(np.random.default_rng(1), setup, 12)
    res = calibrate_corners(obs, intrinsics=K)
    assert not res.determined and res.undetermined == ["X.tz", "Y.tz"]
    path = write_observations(tmp_path / "scara.json", obs)
    what = "camera's" if setup == "eye_in_hand" else "marker's"
    one_line_exit_2(_run("--corners", path, "--intrinsics", K), "X.tz, Y.tz are not determined",
                    "only X.tz + Y.tz is determined",
                    f"--known X.tz=METRES (the {what} origin along the flange's z axis)", "--known Y.tz=METRES")
    assert "--partial" not in r_err(tmp_path, path)


@pytest.mark.parametrize("setup", SETUPS)
def test_known_at_the_truth_gives_x_and_y_within_their_sigma(setup):
    for seed in (2, 3, 4):
        obs, X, Y = one_axis_corners(np.random.default_rng(seed), setup, 12)
        res = calibrate_corners(obs, intrinsics=K, known={"X.tz": X[2, 3]})
        assert res.determined and res.undetermined == [], res.warnings
        assert res.X[2, 3] == X[2, 3] and res.X_std[5] == 0.0  # stated: exactly, standard deviation 0
        s = np.r_[res.X_std, res.Y_std]
        keep = np.arange(12) != X_TZ
        z = _errors(res, X, Y)[keep] / s[keep]
        assert np.all(np.abs(z) < 4.0), (seed, z)
        assert res.observability["open_directions"]["known"] == {"X.tz": X[2, 3]}
        assert any("as stated (--known, standard deviation 0)" in n for n in res.notes)


def test_partial_is_refused_saying_why(tmp_path):
    """A convention is no gauge here: the robot's twist noise acts about the flange's origin, so where X.tz sits
    moves the rest of the fit.  Seen on this recording: X.tz held at 0 instead of its truth (5 cm) moves the
    X.tz + Y.tz the data fix by more than 3 of its standard deviations (2.7 mm against 0.68 mm)."""
    obs, X, Y = one_axis_corners(np.random.default_rng(5), "eye_to_hand", 12)
    at_truth = calibrate_corners(obs, intrinsics=K, known={"X.tz": X[2, 3]})
    at_zero = calibrate_corners(obs, intrinsics=K, known={"X.tz": 0.0})
    moved = (at_zero.X[2, 3] + at_zero.Y[2, 3]) - (at_truth.X[2, 3] + at_truth.Y[2, 3])
    assert abs(moved) > 3 * at_truth.Y_std[5]  # flange down: X.tz + Y.tz is what the pixels fix along the axis
    assert abs((at_truth.X[2, 3] + at_truth.Y[2, 3]) - (X[2, 3] + Y[2, 3])) < 4 * at_truth.Y_std[5]
    path = write_observations(tmp_path / "scara.json", obs)
    one_line_exit_2(_run("--corners", path, "--intrinsics", K, "--partial"),
                    "X.tz, Y.tz not determined", "cannot be set by a convention",
                    "--known X.tz=METRES (the marker's origin along the flange's z axis)", "--known Y.tz=METRES")


def test_known_through_the_command_line(tmp_path):
    obs, X, _ = one_axis_corners(np.random.default_rng(6), "eye_in_hand", 12)
    path = write_observations(tmp_path / "scara.json", obs)
    base = ("--corners", path, "--intrinsics", K)
    ok = _run(*base, "--known", f"X.tz={float(X[2, 3])!r}")
    assert ok.exit_code == 0, ok.output
    assert f"X.tz = {X[2, 3]:.6g} m (the camera's origin along the flange's z axis) as stated" in ok.output
    one_line_exit_2(_run(*base, "--known", "X.tx=0.03"), "known X.tx: determined by the motion",
                    "the open components are X.tz, Y.tz")
    one_line_exit_2(_run(*base, "--known", "X.tz=0.08", "--known", "Y.tz=-0.3"),
                    "2 stated where the motion leaves 1 direction open")
    one_line_exit_2(_run(*base, "--known", "X.tz=0.08", "--partial"), "got both")


@pytest.fixture(scope="module")
def six_axis(tmp_path_factory):
    """A generated 6-axis (UR5e) eye-to-hand recording of a marker, 12 views."""
    recipe = dict(sequence_id="corners", seed=43, robot="ur5e", configuration="eye_to_hand", family="lookat",
                  sampling_mode="stations", n_stations=12, camera="hd", target="marker_3x3_30mm",
                  camera_noise_model="pnp", pixel_std=0.5, robot_noise_models=("se3_gaussian",),
                  robot_rot_std_rad=2e-4, robot_trans_std_m=1e-4)  # fmt: skip
    obs, truth = observations_from_recipe(recipe)
    return write_observations(tmp_path_factory.mktemp("six") / "obs.json", obs), truth


def test_a_six_axis_recording_is_unaffected_and_refuses_known(six_axis):
    path, truth = six_axis
    k = [truth["parameters"][n] for n in ("fx", "fy", "cx", "cy")]
    res = calibrate(corners=path, intrinsics=k)
    assert res.undetermined == [] and "open_directions" not in res.observability
    part = calibrate(corners=path, intrinsics=k, partial=True)  # nothing open: the same result
    assert np.array_equal(part.X, res.X) and np.array_equal(part.X_std, res.X_std)
    X_true = transform_from_pose_json(truth["poses"]["X"])
    z = se3.se3_log(se3.invert_transform(X_true) @ res.X) / res.X_std
    assert np.all(np.abs(z) < 4.0), z
    with pytest.raises(InputError, match="the motion determines every component of X and Y"):
        calibrate(corners=path, intrinsics=k, known={"X.tz": 0.1})


@pytest.mark.heavy
def test_images_of_a_scara_take_known_too(tmp_path):
    """Rendered images of a chessboard under a SCARA's camera (12 views, 640x480): named without an option, within
    4 sigma of the truth with X.tz stated, --partial refused."""
    cv2 = pytest.importorskip("cv2")
    from kinhec.vision.render import render_view

    spec, k = "chessboard:8x5:0.025", np.array([400.0, 400.0, 320.0, 240.0])
    rng = np.random.default_rng(3)
    n = 12
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.04, -0.06, 0.4]), [0.03, -0.04, 0.08])
    # the board's frame at corner 0, z into the table (OpenCV's), its middle under the flange's work area
    Y = se3.transform_from_rotation_translation(se3.so3_exp([0.0, 0.0, 0.3]) @ np.diag([1.0, -1.0, -1.0]),
                                                [0.45, 0.0, -0.40]) @ se3.transform_from_rotation_translation(
        np.eye(3), [-3.5 * 0.025, -2 * 0.025, 0.0])  # fmt: skip
    R = se3.so3_exp(np.outer(rng.uniform(-1.5, 1.5, n), [0.0, 0.0, 1.0])) @ np.diag([1.0, -1.0, -1.0])
    A = se3.transform_from_rotation_translation(R, np.c_[np.array([0.45, 0.0]) + rng.uniform(-0.04, 0.04, (n, 2)),
                                                         rng.uniform(0.05, 0.2, n)])  # fmt: skip
    C = se3.invert_transform(A @ X) @ Y
    (tmp_path / "images").mkdir()
    for i in range(n):
        cv2.imwrite(str(tmp_path / "images" / f"{i:03d}.png"), render_view(spec, k, (640, 480), C[i],
                                                                           np.random.default_rng(100 + i)))
    Am = A @ se3.se3_exp(np.c_[rng.normal(0, 2e-4, (n, 3)), rng.normal(0, 2e-4, (n, 3))])
    hand = tmp_path / "hand.txt"
    hand.write_text("".join(" ".join(repr(float(v)) for v in M.reshape(-1)) + "\n" for M in Am))
    kw = dict(images=tmp_path / "images", hand=hand, target=spec, intrinsics=",".join(map(str, k)), fmt="rwhe")
    assert calibrate(**kw).undetermined == ["X.tz", "Y.tz"]
    res = calibrate(**kw, known={"X.tz": X[2, 3]})
    assert res.determined and res.X[2, 3] == X[2, 3] and res.X_std[5] == 0.0
    keep = np.arange(12) != X_TZ
    z = _errors(res, X, Y)[keep] / np.r_[res.X_std, res.Y_std][keep]
    assert np.all(np.abs(z) < 4.0), z
    with pytest.raises(InputError, match="cannot be set by a convention"):
        calibrate(**kw, partial=True)


def test_intrinsics_estimated_from_level_views_are_named_as_the_cause():
    """A camera looking straight down on the board sees it the same way up in every view: the focal length is then
    not fixed by the views, and with the intrinsics estimated more than the translations along the axis is open.
    The refusal names that cause and ``--intrinsics``, not ``--partial`` (refused on corners) nor moving the hand
    sideways (it did); with the intrinsics given, the same views leave only ``X.tz`` and ``Y.tz`` open."""
    obs, X, _ = one_axis_corners(np.random.default_rng(3), "eye_in_hand", 12)
    with pytest.raises(InputError) as exc:
        calibrate_corners(obs, known={"X.tz": float(X[2, 3])})
    msg = str(exc.value)
    assert "do not fix the focal length" in msg and "--intrinsics" in msg, msg
    assert "--partial" not in msg and "sideways" not in msg, msg
    res = calibrate_corners(obs)
    assert not res.observability["determined"]
    assert any(c.startswith("X.r") for c in res.observability["undetermined"])
    assert "--intrinsics" in " ".join(str(w) for w in res.warnings)
    given = calibrate_corners(obs, intrinsics=K)
    assert given.observability["undetermined"] == ["X.tz", "Y.tz"]
