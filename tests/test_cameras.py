"""Camera and target presets, pinhole projection and the visibility rule."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.models import cameras
from kinhec.util.errors import InputError, UnknownNameError

# The dataset card's "Camera and target presets" tables.
CARD_CAMERAS = {
    # name: (width, height, f [px], HFOV [deg])
    "vga": (640, 480, 525, 62.7),
    "hd": (1280, 720, 920, 69.6),
    "fhd": (1920, 1080, 1400, 68.9),
    "industrial_5mp": (2448, 2048, 3200, 41.9),
}
CARD_TARGETS = {
    # name: (cols, rows, pitch [mm], kind, min. visible points, extent [m] from the description)
    "checker_7x5_20mm": (7, 5, 20, "checkerboard", 35, (0.12, 0.08)),
    "checker_9x6_25mm": (9, 6, 25, "checkerboard", 54, (0.20, 0.125)),
    "grid_10x8_60mm": (10, 8, 60, "grid", 12, (0.54, 0.42)),
    "marker_2x2_40mm": (2, 2, 40, "grid", 4, (0.04, 0.04)),
    "marker_3x3_30mm": (3, 3, 30, "grid", 6, (0.06, 0.06)),
}


def facing(depth_m: float, tx_m: float = 0.0, ty_m: float = 0.0) -> np.ndarray:
    """A board facing the camera (target z towards the camera) at the given camera-frame position."""
    T = np.diag([1.0, -1.0, -1.0, 1.0])
    T[:3, 3] = (tx_m, ty_m, depth_m)
    return T


def rot_x(angle_deg: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = se3.so3_exp(np.array([np.radians(angle_deg), 0.0, 0.0]))
    return T


# --------------------------------------------------------------------------- #
# presets
# --------------------------------------------------------------------------- #
def test_preset_names_in_card_order():
    assert cameras.CAMERA_NAMES == tuple(CARD_CAMERAS)
    assert cameras.TARGET_NAMES == tuple(CARD_TARGETS)


@pytest.mark.parametrize("name", list(CARD_CAMERAS))
def test_camera_presets_match_card(name):
    width, height, f, hfov = CARD_CAMERAS[name]
    cam = cameras.get_camera(name)
    assert cam.name == name
    assert (cam.width_px, cam.height_px, cam.f_px) == (width, height, f)
    assert (cam.cx_px, cam.cy_px) == (width / 2, height / 2)
    assert cam.hfov_deg == pytest.approx(hfov, abs=0.05)
    K = cam.K
    assert K.shape == (3, 3)
    np.testing.assert_array_equal(K, [[f, 0, width / 2], [0, f, height / 2], [0, 0, 1]])
    assert f"f={f} px" in cam.description


@pytest.mark.parametrize("name", list(CARD_TARGETS))
def test_target_presets_match_card(name):
    cols, rows, pitch_mm, kind, min_visible, extent_m = CARD_TARGETS[name]
    tgt = cameras.get_target(name)
    assert (tgt.name, tgt.cols, tgt.rows, tgt.kind, tgt.min_visible_points) == (name, cols, rows, kind, min_visible)
    assert tgt.pitch_m == pytest.approx(pitch_mm / 1000, abs=1e-15)
    assert tgt.n_points == cols * rows
    assert tgt.size_m == pytest.approx(extent_m, abs=1e-12)
    if kind == "checkerboard":  # a checkerboard is seen only as a whole
        assert min_visible == tgt.n_points


@pytest.mark.parametrize("name", list(CARD_TARGETS))
def test_target_points_geometry(name):
    tgt = cameras.get_target(name)
    pts = tgt.points_m
    assert pts.shape == (tgt.n_points, 3)
    np.testing.assert_allclose(pts.mean(axis=0), 0.0, atol=1e-15)  # centred on the origin
    np.testing.assert_array_equal(pts[:, 2], 0.0)  # plane z = 0
    grid = pts.reshape(tgt.rows, tgt.cols, 3)
    # rows run along +x with the pitch, successive rows step down (-y) by the pitch
    np.testing.assert_allclose(np.diff(grid[..., 0], axis=1), tgt.pitch_m, atol=1e-15)
    np.testing.assert_allclose(np.diff(grid[..., 1], axis=0), -tgt.pitch_m, atol=1e-15)
    np.testing.assert_allclose(np.ptp(pts[:, :2], axis=0), tgt.size_m, atol=1e-15)
    # first point top-left as seen from the front
    assert pts[0, 0] == pts[:, 0].min() and pts[0, 1] == pts[:, 1].max()


def test_facing_board_reads_like_a_page():
    """Target z towards the viewer: a facing board shows its first point at the top left of the image."""
    tgt = cameras.get_target("checker_9x6_25mm")
    uv, depth = cameras.project_points("hd", facing(0.5), tgt.points_m)
    grid = uv.reshape(tgt.rows, tgt.cols, 2)
    assert (np.diff(grid[..., 0], axis=1) > 0).all()  # u grows along a row
    assert (np.diff(grid[..., 1], axis=0) > 0).all()  # v grows from row to row (image y is down)
    np.testing.assert_allclose(depth, 0.5)


@pytest.mark.parametrize("getter, kind", [(cameras.get_camera, "camera preset"), (cameras.get_target, "target preset")])
@pytest.mark.parametrize("bad", ["nope", "HD", "", 3, None])
def test_unknown_preset_names(getter, kind, bad):
    with pytest.raises(UnknownNameError, match=f"unknown {kind} {bad!r}; expected one of: "):
        getter(bad)


def test_unknown_name_lists_valid_names():
    with pytest.raises(UnknownNameError, match="fhd, hd, industrial_5mp, vga"):
        cameras.get_camera("4k")
    with pytest.raises(UnknownNameError, match="checker_7x5_20mm, checker_9x6_25mm, grid_10x8_60mm"):
        cameras.get_target("checker_8x8")


def test_presets_accept_names_or_objects_only():
    pts = cameras.get_target("marker_2x2_40mm").points_m
    a = cameras.project_points("vga", facing(0.5), pts)[0]
    b = cameras.project_points(cameras.get_camera("vga"), facing(0.5), pts)[0]
    np.testing.assert_array_equal(a, b)
    with pytest.raises(InputError, match="camera: expected a CameraPreset or a preset name, got dict"):
        cameras.project_points({"f_px": 500}, facing(0.5), pts)
    with pytest.raises(InputError, match="target: expected a TargetPreset or a preset name, got int"):
        cameras.visibility("vga", 7, facing(0.5))


def test_cameras_targets_json_round_trip():
    doc = cameras.cameras_targets_json()
    assert set(doc) == {"cameras", "targets"}
    back = json.loads(json.dumps(doc))
    assert back == doc
    assert list(back["cameras"]) == list(CARD_CAMERAS)
    assert list(back["targets"]) == list(CARD_TARGETS)
    for name, (width, height, f, hfov) in CARD_CAMERAS.items():
        c = back["cameras"][name]
        assert (c["name"], c["width"], c["height"], c["fx"], c["fy"]) == (name, width, height, f, f)
        assert (c["cx"], c["cy"]) == (width / 2, height / 2)
        assert c["hfov_deg"] == pytest.approx(hfov, abs=0.06)  # 2 decimals, as published (69.649 -> 69.65)
    for name, (cols, rows, pitch_mm, kind, min_visible, extent_m) in CARD_TARGETS.items():
        t = back["targets"][name]
        assert (t["cols"], t["rows"], t["kind"], t["min_visible_points"]) == (cols, rows, kind, min_visible)
        assert t["name"] == name
        assert t["spacing_m"] == pytest.approx(pitch_mm / 1000)
        assert t["size_m"] == pytest.approx(list(extent_m))
        assert t["n_points"] == cols * rows


# --------------------------------------------------------------------------- #
# projection
# --------------------------------------------------------------------------- #
def test_projection_of_a_hand_computed_point():
    # hd: f = 920, principal point (640, 360).  Board facing the camera at 0.5 m; the target point
    # (0.1, 0.05, 0) sits at camera (0.1, -0.05, 0.5): u = 640 + 920 * 0.2 = 824, v = 360 - 920 * 0.1 = 268.
    uv, depth = cameras.project_points("hd", facing(0.5)[None], [[0.1, 0.05, 0.0], [0.0, 0.0, 0.0]])
    assert uv.shape == (1, 2, 2) and depth.shape == (1, 2)
    np.testing.assert_allclose(uv[0], [[824.0, 268.0], [640.0, 360.0]], atol=1e-12)
    np.testing.assert_allclose(depth[0], [0.5, 0.5], atol=1e-15)
    # a translated, rotated pose: camera point = R p + t
    T = facing(0.8, 0.05, -0.02) @ rot_x(30.0)
    p = np.array([0.03, -0.04, 0.0])
    pc = T[:3, :3] @ p + T[:3, 3]
    uv, depth = cameras.project_points("vga", T, p[None])
    np.testing.assert_allclose(uv, [[525 * pc[0] / pc[2] + 320, 525 * pc[1] / pc[2] + 240]], atol=1e-12)
    np.testing.assert_allclose(depth, [pc[2]], atol=1e-15)


def test_projection_shapes_follow_the_poses():
    pts = cameras.get_target("checker_7x5_20mm").points_m
    T = np.broadcast_to(facing(0.6), (2, 3, 4, 4))
    uv, depth = cameras.project_points("hd", T, pts)
    assert uv.shape == (2, 3, 35, 2) and depth.shape == (2, 3, 35)
    uv1, depth1 = cameras.project_points("hd", facing(0.6), pts)
    assert uv1.shape == (35, 2) and depth1.shape == (35,)
    np.testing.assert_array_equal(uv[1, 2], uv1)


def test_projection_agrees_with_opencv():
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(11)
    pts = np.concatenate([cameras.get_target("grid_10x8_60mm").points_m, rng.uniform(-0.3, 0.3, (20, 3))])
    for name in cameras.CAMERA_NAMES:
        cam = cameras.get_camera(name)
        T = se3.random_poses(rng, 25, trans_std_m=0.2)
        T[:, 2, 3] = rng.uniform(1.0, 3.0, 25)  # in front of the camera
        uv, depth = cameras.project_points(cam, T, pts)
        assert (depth > 0).all()
        for i in range(len(T)):
            rvec, _ = cv2.Rodrigues(T[i, :3, :3])
            ref, _ = cv2.projectPoints(pts, rvec, T[i, :3, 3], cam.K, None)
            np.testing.assert_allclose(uv[i], ref[:, 0, :], rtol=0, atol=1e-9)


def test_points_behind_the_camera_have_no_image():
    T = facing(0.05)  # the board's plane crosses z = 0 when tilted
    T = T @ rot_x(80.0)
    pts = np.array([[0.0, 0.5, 0.0], [0.0, -0.5, 0.0], [0.0, 0.0, 0.0]])
    uv, depth = cameras.project_points("hd", T, pts)
    behind = depth <= 0
    assert behind.any() and (~behind).any()
    assert np.isnan(uv[behind]).all()
    assert np.isfinite(uv[~behind]).all()


def test_projection_input_errors():
    pts = cameras.get_target("marker_2x2_40mm").points_m
    with pytest.raises(InputError, match=r"T_cam_target: expected shape \(\.\.\., 4, 4\), got array of shape \(3, 4\)"):
        cameras.project_points("hd", np.eye(4)[:3], pts)
    bad = facing(0.5)
    bad[0, 3] = np.nan
    with pytest.raises(InputError, match="T_cam_target: expected finite values, got 1 non-finite"):
        cameras.project_points("hd", bad, pts)
    scaled = np.eye(4)
    scaled[:3, :3] *= 2.0
    with pytest.raises(InputError, match=r"T_cam_target \(rotation block\): expected orthonormal rotation"):
        cameras.project_points("hd", scaled, pts)
    with pytest.raises(InputError, match=r"points_m: expected shape \(\.\.\., 3\), got array of shape \(4, 2\)"):
        cameras.project_points("hd", facing(0.5), pts[:, :2])
    with pytest.raises(InputError, match=r"points_m: expected shape \(P, 3\) with P >= 1, got shape \(1, 4, 3\)"):
        cameras.project_points("hd", facing(0.5), pts[None])
    with pytest.raises(InputError, match="points_m: expected finite values"):
        cameras.project_points("hd", facing(0.5), np.full((2, 3), np.nan))


# --------------------------------------------------------------------------- #
# visibility
# --------------------------------------------------------------------------- #
def test_facing_board_at_half_a_metre_is_visible():
    for cam in cameras.CAMERA_NAMES:
        for tgt_name in ("checker_7x5_20mm", "checker_9x6_25mm", "marker_2x2_40mm", "marker_3x3_30mm"):
            tgt = cameras.get_target(tgt_name)
            vis = cameras.visibility(cam, tgt, facing(0.5)[None])
            assert vis.visible.tolist() == [True], (cam, tgt_name)
            assert vis.n_points.tolist() == [tgt.n_points]
            np.testing.assert_allclose(vis.depth_m, [0.5])
            np.testing.assert_allclose(vis.view_angle_deg, [0.0], atol=1e-12)
            assert vis.visible.dtype == bool and vis.n_points.dtype.kind == "i"


def test_depth_limits_are_inclusive():
    # a single marker is small enough to stay inside the image from 0.09 m to 5.1 m
    depths = np.array([0.09, 0.0999, 0.1, 0.3, 4.999, 5.0, 5.001, 5.1])
    T = np.stack([facing(d) for d in depths])
    vis = cameras.visibility("industrial_5mp", "marker_2x2_40mm", T)
    assert (vis.n_points == 4).all()  # every point is in the image: only the depth decides
    np.testing.assert_allclose(vis.depth_m, depths)
    assert vis.visible.tolist() == [False, False, True, True, True, True, False, False]


def test_too_close_a_checkerboard_leaves_the_image():
    vis = cameras.visibility("hd", "checker_9x6_25mm", np.stack([facing(0.5), facing(0.12)]))
    assert vis.visible.tolist() == [True, False]
    assert vis.n_points[1] < 54


def test_view_angle_limit():
    tilts = np.array([0.0, 30.0, 60.0, 74.99, 75.01, 89.0, 120.0, 180.0])
    T = np.stack([facing(0.5) @ rot_x(a) for a in tilts])
    vis = cameras.visibility("hd", "checker_9x6_25mm", T)
    np.testing.assert_allclose(vis.view_angle_deg, tilts, atol=1e-9)
    # the board stays in the image at every tilt (seen edge-on or from behind)
    assert (vis.n_points == 54).all()
    assert vis.visible.tolist() == [True, True, True, True, False, False, False, False]


def test_view_angle_is_measured_to_the_line_of_sight():
    # a board whose normal is parallel to the optical axis but placed 45 deg off-axis is seen obliquely
    T = facing(1.0, tx_m=1.0)
    np.testing.assert_allclose(cameras.view_angles_deg(T), 45.0, atol=1e-9)
    # turning it about its own y axis towards the camera brings the angle back to zero
    T_turned = T.copy()
    T_turned[:3, :3] = T[:3, :3] @ se3.so3_exp(np.array([0.0, np.radians(-45.0), 0.0]))
    np.testing.assert_allclose(cameras.view_angles_deg(T_turned[None]), [0.0], atol=1e-9)
    vis = cameras.visibility("hd", "marker_2x2_40mm", np.stack([T, T_turned]))
    np.testing.assert_allclose(vis.view_angle_deg, [45.0, 0.0], atol=1e-9)


def test_shifted_out_of_the_image():
    shifts = np.array([0.0, 0.3, 0.45, 2.0])  # lateral shift [m] at 1 m depth, hd half-width is 0.696 m
    T = np.stack([facing(1.0, tx_m=s) for s in shifts])
    checker = cameras.visibility("hd", "checker_9x6_25mm", T)
    assert checker.visible.tolist() == [True, True, True, False]
    assert checker.n_points.tolist() == [54, 54, 54, 0]
    # the large grid is cut by the image border but stays visible while >= 12 points remain
    grid = cameras.visibility("hd", "grid_10x8_60mm", T)
    assert grid.n_points[0] == 80 and 12 <= grid.n_points[2] < 80
    assert grid.visible.tolist() == [True, True, True, False]


def test_grids_need_only_their_minimum():
    tgt = cameras.get_target("grid_10x8_60mm")
    cam = cameras.get_camera("hd")
    # Facing the camera at 1 m, column k (0-based) of the grid sits at camera x = (k - 4.5) * 0.06 + tx and
    # the right image margin at x_max = (1280 - 5 - 640) / 920 m.  Shift the grid right so that exactly the
    # first m columns (8 points each) stay inside, the last of them half a pitch from the margin.
    x_max = (cam.width_px - cameras.VISIBILITY_MARGIN_PX - cam.cx_px) / cam.f_px
    counts = []
    for m in (1, 2, 3):
        tx = x_max - (m - 1 - 4.5) * tgt.pitch_m - 0.5 * tgt.pitch_m
        counts.append(cameras.visibility(cam, tgt, facing(1.0, tx_m=tx)[None]))
    n = [int(v.n_points[0]) for v in counts]
    assert n == [8, 16, 24]
    assert [bool(v.visible[0]) for v in counts] == [False, True, True]  # minimum 12 points


def test_margin_of_exactly_five_pixels():
    cam = cameras.get_camera("vga")
    m = cameras.VISIBILITY_MARGIN_PX
    assert m == 5.0
    uv = np.array(
        [
            [m, m], [cam.width_px - m, cam.height_px - m],  # on the margin: inside
            [m - 1e-9, 100.0], [100.0, m - 1e-9],  # just outside
            [cam.width_px - m + 1e-9, 100.0], [100.0, cam.height_px - m + 1e-9],
            [np.nan, np.nan],  # no image
        ]
    )
    depth = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0])
    inside = cameras.points_in_image(cam, uv, depth)
    assert inside.tolist() == [True, True, False, False, False, False, False]
    # a point inside the image but behind the camera never counts
    assert not cameras.points_in_image(cam, [[100.0, 100.0]], [-1.0])[0]


def test_margin_through_the_visibility_rule():
    # a 2x2 marker facing the camera at 0.5 m; its left column at u = 5 +- 1e-6 px
    cam = cameras.get_camera("hd")
    half = 0.02  # the marker's points are at x = +-0.02 m
    vis = []
    for eps in (1e-6, -1e-6):
        tx = half + (cameras.VISIBILITY_MARGIN_PX + eps - cam.cx_px) * 0.5 / cam.f_px
        vis.append(cameras.visibility(cam, "marker_2x2_40mm", facing(0.5, tx_m=tx)[None]))
    assert [int(v.n_points[0]) for v in vis] == [4, 2]
    assert [bool(v.visible[0]) for v in vis] == [True, False]
    # the generator's unchecked call applies the same rule
    T = facing(0.5, tx_m=half + (cameras.VISIBILITY_MARGIN_PX - 1e-6 - cam.cx_px) * 0.5 / cam.f_px)[None]
    unchecked = cameras.visibility(cam, "marker_2x2_40mm", T, check=False)
    assert int(unchecked.n_points[0]) == 2 and not bool(unchecked.visible[0])


def test_visibility_input_errors():
    with pytest.raises(InputError, match=r"T_cam_target: expected shape \(\.\.\., 4, 4\)"):
        cameras.visibility("hd", "checker_9x6_25mm", np.zeros((3, 3)))
    with pytest.raises(UnknownNameError, match="unknown target preset 'checker'"):
        cameras.visibility("hd", "checker", facing(0.5))
    with pytest.raises(InputError, match="depth_m: expected shape"):
        cameras.points_in_image("hd", np.zeros((4, 2)), np.zeros(3))
