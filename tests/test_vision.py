"""kinhec.vision: target specs and frames, rendered images, detection with a canonical order and per-view checks."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.models.cameras import TARGET_NAMES, get_target
from kinhec.util.errors import InputError, UnknownNameError
from kinhec.models.intrinsics import project
from kinhec.vision.targets import AprilGrid, Charuco, Chessboard, parse_target, target_for_preset

cv2 = pytest.importorskip("cv2")

from kinhec.vision.checks import fit_check  # noqa: E402
from kinhec.vision.chessboard import check_chessboard_order, detect_chessboard  # noqa: E402
from kinhec.vision.detect import detect  # noqa: E402
from kinhec.vision.render import (RenderSettings, exact_corners, reflectance, render_view,  # noqa: E402
                                  undistort_normalised)  # fmt: skip

VGA = np.array([525.0, 525.0, 320.0, 240.0, 0, 0, 0, 0, 0])
SIZE = (640, 480)


def _pose(target, depth: float, tilt_rad, roll_deg: float = 0.0, offset=(0.0, 0.0)) -> np.ndarray:
    """``T_cam_target`` with the target's centre ``depth`` ahead, seen from its printed side, tilted and rolled."""
    R = se3.so3_exp(np.array([tilt_rad[0], tilt_rad[1], 0.0])) @ se3.so3_exp(np.array([0, 0, np.radians(roll_deg)]))
    T_c = np.eye(4)  # the centred frame faces the camera: z towards the viewer, y up
    T_c[:3, :3] = R @ np.diag([1.0, -1.0, -1.0])
    T_c[:3, 3] = [offset[0], offset[1], depth]
    return T_c @ target.T_centred_target


def _errors(det, target, T):
    ids, uv, used = exact_corners(target, VGA, SIZE, T[None])
    assert used[0]
    ref = dict(zip(ids[0].tolist(), uv[0]))
    keep = [k for k, i in enumerate(det.ids) if int(i) in ref]
    return np.array([det.uv_px[k] - ref[int(det.ids[k])] for k in keep]), len(keep)


# --------------------------------------------------------------------------- #
# specs and frames
# --------------------------------------------------------------------------- #
def test_spec_strings_parse_and_round_trip():
    c = parse_target("chessboard:9x6:0.025")
    assert isinstance(c, Chessboard) and (c.cols, c.rows, c.square_m) == (9, 6, 0.025) and not c.symmetric
    assert np.allclose(c.points_m[9 + 2], [2 * 0.025, 0.025, 0.0])  # corner i * cols + j at (j s, i s)
    ch = parse_target("charuco:12x9:0.06:0.045:5x5_100")
    assert isinstance(ch, Charuco) and ch.dictionary == "DICT_5X5_100" and ch.n_points == 11 * 8
    ag = parse_target("aprilgrid:6x6:0.088:0.3")
    assert isinstance(ag, AprilGrid) and ag.n_points == 144 and ag.z_towards_viewer
    for t in (c, ch, ag, parse_target("charuco:5x7:0.04:0.03:DICT_4X4_50:legacy")):
        assert parse_target(t.spec) == t


@pytest.mark.parametrize("spec, match", [
    ("chessboard:9x6", "chessboard:COLSxROWS:SQUARE_M"),
    ("chessboard:9by6:0.02", "AxB"),
    ("chessboard:9x6:25", "millimetres"),
    ("charuco:12x9:0.06:0.07:DICT_5X5_100", "smaller than its square"),
    ("charuco:20x20:0.06:0.045:DICT_4X4_50", "at least 200 markers"),
    ("aprilgrid:6x6:0.088:1.5", "spacing"),
    ("circles:4x11:0.02", "expected one of"),
])  # fmt: skip
def test_bad_specs_say_what_was_expected(spec, match):
    with pytest.raises(InputError, match=match):
        parse_target(spec)
    with pytest.raises(UnknownNameError, match="DICT_5X5_100"):
        parse_target("charuco:12x9:0.06:0.045:DICT_5X5_99")


def test_kalibr_and_eth_target_yamls(tmp_path):
    (tmp_path / "april.yaml").write_text("target_type: 'aprilgrid'\ntagCols: 6\ntagRows: 5\ntagSize: 0.088\ntagSpacing: 0.3\n")
    (tmp_path / "eth.yaml").write_text("april_tag_number_vertical: 6\napril_tag_number_horizontal: 6\n"
                                       "april_tag_number_pixel_boarder: 2\napril_tag_size_m: 0.055\n"
                                       "april_tag_gap_size_m: 0.0165\n")  # fmt: skip
    (tmp_path / "checker.yaml").write_text("target_type: 'checkerboard'\ntargetCols: 6\ntargetRows: 7\n"
                                           "rowSpacingMeters: 0.06\ncolSpacingMeters: 0.06\n")  # fmt: skip
    (tmp_path / "bad.yaml").write_text("target_type: 'aprilgrid'\ntagCols: 6\n")
    assert parse_target(tmp_path / "april.yaml") == AprilGrid(6, 5, 0.088, 0.3)
    eth = parse_target(str(tmp_path / "eth.yaml"))
    assert (eth.cols, eth.rows, eth.border_bits) == (6, 6, 2) and eth.spacing == pytest.approx(0.3)
    assert parse_target(tmp_path / "checker.yaml") == Chessboard(6, 7, 0.06)
    with pytest.raises(InputError, match=r"bad.yaml: expected the key 'tagRows'"):
        parse_target(tmp_path / "bad.yaml")


def test_charuco_points_are_opencv_board_corners():
    from kinhec.vision.markers import charuco_board

    for t in (Charuco(5, 7, 0.04, 0.03, "DICT_4X4_50"), Charuco(12, 9, 0.06, 0.045, "DICT_5X5_100", legacy=True)):
        assert np.allclose(np.asarray(charuco_board(t).getChessboardCorners()), t.points_m, atol=1e-6)


@pytest.mark.parametrize("name", TARGET_NAMES)
def test_the_target_for_a_preset_has_the_preset_points(name):
    t, p = target_for_preset(name), get_target(name)
    mapped = t.points_m @ t.T_centred_target[:3, :3].T + t.T_centred_target[:3, 3]
    if t.kind == "aprilgrid":  # same points, rows counted from the bottom
        assert np.allclose(np.sort(mapped, axis=0), np.sort(p.points_m, axis=0))
    else:
        assert np.allclose(mapped, p.points_m)


def test_aprilgrid_tag_corners_and_printed_tags_follow_kalibr():
    """Kalibr's point layout, and its printed tags: Kalibr's 36h11 codes 0-2 drawn as its target script draws them."""
    g = AprilGrid(3, 2, 0.1, 0.3)
    p = g.points_m
    ids = g.tag_point_ids([4])[0]  # tag 4: column 1, row 1 (from the bottom)
    x0, y0 = 1.3 * 0.1, 1.3 * 0.1
    # OpenCV's corner order of a tag printed upside down: bottom-right, bottom-left, top-left, top-right (y up)
    assert np.allclose(p[ids, :2], [[x0 + 0.1, y0], [x0, y0], [x0, y0 + 0.1], [x0 + 0.1, y0 + 0.1]])
    codes = (0xD5D628584, 0xD97F18B49, 0xDD280910E)  # Kalibr's t36h11[0..2]
    n, S = 10, 0.1
    for tag, code in enumerate(codes):
        c, r = tag % 3, tag // 3
        i, j = np.meshgrid(np.arange(6), np.arange(6), indexing="ij")  # data row i from the top, column j
        x = c * g.pitch_m + (j + 2 + 0.5) * S / n
        y = r * g.pitch_m + (n - 1 - (i + 2) + 0.5) * S / n
        white, on = reflectance(g, x, y)
        bits = (code >> (35 - (6 * i + j))) & 1  # Kalibr draws bit 1 white, most significant bit top-left
        assert on.all() and np.array_equal(white.astype(int), bits), tag


def test_rendered_charuco_pattern_is_opencv_s_board_image():
    from kinhec.vision.markers import charuco_board

    for t in (Charuco(5, 4, 0.04, 0.03, "DICT_4X4_50"), Charuco(6, 4, 0.04, 0.028, "DICT_5X5_100", legacy=True)):
        px = 40  # pixels per square
        ref = charuco_board(t).generateImage((t.squares_x * px, t.squares_y * px), marginSize=0, borderBits=1) > 127
        v, u = np.mgrid[0 : ref.shape[0], 0 : ref.shape[1]]
        white, on = reflectance(t, (u + 0.5) * t.square_m / px, (v + 0.5) * t.square_m / px)
        assert on.all() and np.mean((white > 0.5) != ref) < 0.01


# --------------------------------------------------------------------------- #
# rendering
# --------------------------------------------------------------------------- #
def test_render_is_seeded_and_draws_the_black_corner_square_at_corner_0():
    t = Chessboard(7, 5, 0.03)
    T = _pose(t, 0.5, (0.2, -0.1))
    a = render_view(t, VGA, SIZE, T, np.random.default_rng([1, 2]))
    assert np.array_equal(a, render_view(t, VGA, SIZE, T, np.random.default_rng([1, 2])))
    assert not np.array_equal(a, render_view(t, VGA, SIZE, T, np.random.default_rng([1, 3])))
    clean = render_view(t, VGA, SIZE, T, np.random.default_rng(0), RenderSettings(noise_dn=0, lighting=0, blur_px=0))
    inner = project(VGA, T[None], np.array([[-0.5, -0.5, 0.0], [0.5, -0.5, 0.0]]) * 0.03)[0]  # squares (0,0), (1,0)
    dark, light = (clean[int(round(v)), int(round(u))] for u, v in inner)
    assert dark < 40 and light > 150


def test_undistortion_inverts_the_lens_model():
    from kinhec.models.intrinsics import _distort

    d = np.array([-0.25, 0.08, 0.001, -0.0005, -0.01])
    xy = np.random.default_rng(3).uniform(-0.6, 0.6, (500, 2))
    xd = _distort(xy, d)
    xu, yu = undistort_normalised(xd[:, 0], xd[:, 1], d)
    assert np.abs(np.column_stack([xu, yu]) - xy).max() < 1e-9


# --------------------------------------------------------------------------- #
# detection against the exact projection
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("spec, pose", [
    ("chessboard:9x6:0.025", (0.45, (0.35, -0.2), 20.0)),
    ("charuco:7x5:0.04:0.03:DICT_4X4_50", (0.5, (-0.3, 0.25), -35.0)),
    ("aprilgrid:4x3:0.04:0.3", (0.45, (0.2, 0.3), 160.0)),
])  # fmt: skip
def test_detected_corners_sit_on_the_exact_projection(spec, pose):
    t = parse_target(spec)
    T = _pose(t, pose[0], pose[1], pose[2])
    img = render_view(t, VGA, SIZE, T, np.random.default_rng(11), RenderSettings(blur_px=0.8, noise_dn=2.0))
    det = detect(img, t, "view.png")
    assert det.ok, det.reason
    e, n = _errors(det, t, T)
    assert n == det.n_points >= 0.9 * t.n_points
    rms = float(np.sqrt(np.mean(np.sum(e**2, axis=1))))
    assert rms < 0.12, rms
    assert np.linalg.norm(e.mean(axis=0)) < 0.05  # no bias: the ids and the frame are right


@pytest.mark.parametrize("spec", ["charuco:7x5:0.04:0.03:DICT_4X4_50", "aprilgrid:4x3:0.04:0.3"])
def test_partial_views_of_marker_targets_count(spec):
    t = parse_target(spec)
    T = _pose(t, 0.4, (0.1, 0.1), 0.0, offset=(0.17, 0.0))  # the board runs off the right edge
    img = render_view(t, VGA, SIZE, T, np.random.default_rng(5))
    det = detect(img, t, "partial.png")
    ids, _, _ = exact_corners(t, VGA, SIZE, T[None])
    assert det.ok and 4 <= det.n_points < t.n_points and set(det.ids.tolist()) <= set(ids[0].tolist())
    e, _ = _errors(det, t, T)
    assert np.abs(e).max() < 0.5


def test_lens_distortion_is_rendered_as_intrinsics_project_it():
    t = Chessboard(9, 6, 0.025)
    k = VGA.copy()
    k[4:9] = [-0.22, 0.06, 0.0005, -0.0003, 0.0]
    T = _pose(t, 0.42, (0.25, 0.2), 10.0, offset=(0.05, 0.04))
    det = detect(render_view(t, k, SIZE, T, np.random.default_rng(2)), t)
    ref = project(k, T[None], t.points_m)[0]
    assert det.ok and np.sqrt(np.mean(np.sum((det.uv_px - ref) ** 2, axis=1))) < 0.12


# --------------------------------------------------------------------------- #
# canonical order and the per-view checks
# --------------------------------------------------------------------------- #
def test_mirrored_or_upside_down_chessboard_detections_are_rejected_naming_the_image():
    t = Chessboard(9, 6, 0.025)  # cols + rows odd: the black corner square marks corner 0
    T = _pose(t, 0.45, (0.2, -0.25), 200.0)  # the camera rolled past a half turn: the detector numbers from the end
    img = render_view(t, VGA, SIZE, T, np.random.default_rng(4))
    det = detect_chessboard(img, t, "img_07.png")
    assert det.ok and np.linalg.norm(det.uv_px - project(VGA, T[None], t.points_m)[0], axis=1).max() < 0.4
    grid = det.uv_px.reshape(6, 9, 2)
    assert check_chessboard_order(img, grid, t, "img_07.png") is None
    assert "img_07.png: mirrored" in check_chessboard_order(img, grid[:, ::-1], t, "img_07.png")
    assert "img_07.png: mirrored" in check_chessboard_order(img, grid[::-1], t, "img_07.png")
    assert "img_07.png: upside-down" in check_chessboard_order(img, grid[::-1, ::-1], t, "img_07.png")
    bent = grid.copy()
    bent[2, 4] += 0.3 * (grid[2, 5] - grid[2, 4])  # one corner a third of a square off
    assert "off the board's plane fit" in check_chessboard_order(img, bent, t, "img_07.png")


def test_a_mirrored_image_is_rejected_when_the_board_shows_it():
    """cols and rows both odd: no mirror maps the board's colours onto themselves, so a mirror image is told apart.

    With cols or rows even (9x6 below) the board is its own mirror image across one axis: a mirrored photograph
    of it is a photograph of the same board in another pose, and its corners are numbered as such.
    """
    odd = Chessboard(7, 5, 0.03)
    img = render_view(odd, VGA, SIZE, _pose(odd, 0.45, (0.2, 0.1), 15.0), np.random.default_rng(6))
    assert detect_chessboard(img, odd, "a.png").ok
    det = detect_chessboard(cv2.flip(img, 1), odd, "a_flipped.png")
    assert not det.ok and det.reason.startswith("a_flipped.png: ") and "mirrored" in det.reason
    even = Chessboard(9, 6, 0.025)
    T = _pose(even, 0.45, (0.2, 0.1), 15.0)
    flipped = detect_chessboard(cv2.flip(render_view(even, VGA, SIZE, T, np.random.default_rng(6)), 1), even)
    assert flipped.ok and check_chessboard_order(cv2.flip(render_view(even, VGA, SIZE, T, np.random.default_rng(6)), 1),
                                                 flipped.uv_px, even) is None  # fmt: skip


def test_a_symmetric_board_starts_at_the_top_left_candidate():
    t = Chessboard(8, 6, 0.025)
    assert t.symmetric
    for roll in (10.0, 190.0):  # the same board turned by half a turn looks the same: corner 0 stays top-left
        T = _pose(t, 0.45, (0.15, 0.1), roll)
        det = detect_chessboard(render_view(t, VGA, SIZE, T, np.random.default_rng(8)), t)
        assert det.ok and np.hypot(*det.uv_px[0]) < np.hypot(*det.uv_px[-1])


def test_a_charuco_board_with_the_wrong_dictionary_is_rejected_naming_the_image():
    printed = Charuco(7, 5, 0.04, 0.03, "DICT_4X4_50")
    img = render_view(printed, VGA, SIZE, _pose(printed, 0.5, (0.2, 0.1), 5.0), np.random.default_rng(9))
    assert detect(img, printed, "board.png").ok
    det = detect(img, "charuco:7x5:0.04:0.03:DICT_5X5_100", "board.png")
    assert not det.ok and det.reason.startswith("board.png: no marker of DICT_5X5_100 found")
    assert "DICT_4X4_*" in det.reason  # the dictionary the board was printed with


def test_fit_check_flags_a_corner_off_the_grid_and_a_mirrored_order():
    t = Chessboard(9, 6, 0.025)
    T = _pose(t, 0.5, (0.3, 0.2))
    uv = project(VGA, T[None], t.points_m)[0] + np.random.default_rng(1).normal(0, 0.05, (54, 2))
    ok = fit_check(t.points_m[:, :2], uv, t.spacing_m)
    assert ok.clean and ok.n_bad == 0 and ok.rms_px < 0.08 and ok.orientation == 1.0
    bad = uv.copy()
    bad[20] += [0.25 * ok.spacing_px, 0.0]
    f = fit_check(t.points_m[:, :2], bad, t.spacing_m)
    assert f.n_bad == 1 and not f.good[20]
    mirrored = uv.reshape(6, 9, 2)[:, ::-1].reshape(-1, 2)
    assert fit_check(t.points_m[:, :2], mirrored, t.spacing_m).orientation == -1.0


def test_import_kinhec_does_not_import_opencv():
    code = "import sys, kinhec, kinhec.calibrate, kinhec.vision.targets; print('cv2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_render_refuses_a_sequence_it_cannot_draw(tmp_path):
    from kinhec.vision.render import render_sequence

    recipe = dict(sequence_id="temporal-000000", seed=3, robot="ur5e", configuration="eye_in_hand",
                  family="joint_waypoints", sampling_mode="continuous", sync="async", duration_s=3.0, n_stations=4,
                  camera="vga")  # fmt: skip
    with pytest.raises(InputError, match="temporal-000000: expected a synchronous sequence"):
        render_sequence(recipe, tmp_path)
    with pytest.raises(InputError, match="supersample"):
        RenderSettings(supersample=0)
