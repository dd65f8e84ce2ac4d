"""Batched Levenberg-Marquardt PnP and the pixel-noise measurement model."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.models import cameras, pnp
from kinhec.util.errors import InputError, UnknownNameError

PRESETS = [
    ("hd", "checker_9x6_25mm"),
    ("vga", "checker_7x5_20mm"),
    ("fhd", "grid_10x8_60mm"),
    ("industrial_5mp", "marker_3x3_30mm"),
]


def observing_poses(rng, n, camera, target, *, depth_m=(0.3, 1.0), tilt_deg=45.0):
    """Visible poses ``T_cam_target`` of a board roughly facing the camera, tilted up to ``tilt_deg``."""
    facing = np.diag([1.0, -1.0, -1.0])
    out = []
    while sum(len(T) for T in out) < n:
        m = 4 * n
        axes = se3.random_unit_vectors(rng, m)
        R = se3.so3_exp(axes * np.radians(rng.uniform(0.0, tilt_deg, m))[:, None]) @ facing
        d = rng.uniform(*depth_m, m)
        t = np.stack([rng.uniform(-0.15, 0.15, m) * d, rng.uniform(-0.1, 0.1, m) * d, d], axis=1)
        T = se3.transform_from_rotation_translation(R, t)
        out.append(T[cameras.visibility(camera, target, T).visible])
    return np.concatenate(out)[:n]


def noisy_pixels(rng, camera, target, T, pixel_std):
    uv, _ = cameras.project_points(camera, T, cameras.get_target(target).points_m)
    return uv + pixel_std * rng.standard_normal(uv.shape)


# --------------------------------------------------------------------------- #
# ground truth recovery
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("camera, target", PRESETS + [("hd", "marker_2x2_40mm")])
def test_noise_free_pixels_converge_to_the_truth(camera, target):
    rng = np.random.default_rng(1)
    T_true = observing_poses(rng, 200, camera, target)
    pts = cameras.get_target(target).points_m
    uv, _ = cameras.project_points(camera, T_true, pts)
    # start 1-3 deg and 1-3 cm away from the truth
    xi = np.concatenate([se3.random_unit_vectors(rng, 200) * np.radians(rng.uniform(1, 3, 200))[:, None],
                         se3.random_unit_vectors(rng, 200) * rng.uniform(0.01, 0.03, 200)[:, None]], axis=1)
    T_init = se3.se3_exp(xi) @ T_true
    res = pnp.solve_pnp(camera, pts, uv, T_init)
    assert res.T_cam_target.shape == (200, 4, 4)
    assert res.converged.all()
    rot_deg, trans_mm = se3.pose_error(res.T_cam_target, T_true)
    assert np.radians(rot_deg).max() < 1e-9  # rad
    assert trans_mm.max() < 1e-6  # 1e-9 m
    assert res.rmse_px.max() < 1e-9
    se3.check_transforms(res.T_cam_target, tol=1e-12)  # the estimate stays a rigid transform


def test_noise_free_from_far_and_with_non_planar_points():
    rng = np.random.default_rng(12)
    tgt = cameras.get_target("checker_9x6_25mm")
    T_true = observing_poses(rng, 300, "hd", tgt)
    # 20 deg and 10 cm away: still the basin of the truth
    xi = np.concatenate([se3.random_unit_vectors(rng, 300) * np.radians(20.0),
                         se3.random_unit_vectors(rng, 300) * 0.10], axis=1)
    uv, _ = cameras.project_points("hd", T_true, tgt.points_m)
    res = pnp.solve_pnp("hd", tgt.points_m, uv, se3.se3_exp(xi) @ T_true)
    rot_deg, trans_mm = se3.pose_error(res.T_cam_target, T_true)
    assert res.converged.all() and rot_deg.max() < 1e-9 and trans_mm.max() < 1e-6
    # a non-planar point cloud
    pts = rng.uniform(-0.1, 0.1, (20, 3))
    uv, _ = cameras.project_points("vga", T_true, pts)
    res = pnp.solve_pnp("vga", pts, uv, se3.se3_exp(0.1 * xi) @ T_true)
    rot_deg, trans_mm = se3.pose_error(res.T_cam_target, T_true)
    assert res.converged.all() and rot_deg.max() < 1e-9 and trans_mm.max() < 1e-6


def test_iteration_cap_reports_unconverged_frames():
    rng = np.random.default_rng(14)
    tgt = cameras.get_target("checker_7x5_20mm")
    T_true = observing_poses(rng, 50, "vga", tgt)
    uv, _ = cameras.project_points("vga", T_true, tgt.points_m)
    T_init = se3.se3_exp(np.full((50, 6), 0.01)) @ T_true
    one = pnp.solve_pnp("vga", tgt.points_m, uv, T_init, max_iter=1)
    assert not one.converged.any() and (one.n_iter == 1).all()
    # the last estimate is kept, and one Gauss-Newton step already brings it much closer
    before = se3.pose_error(T_init, T_true)[1]
    after = se3.pose_error(one.T_cam_target, T_true)[1]
    assert (after < 0.1 * before).all()
    np.testing.assert_allclose(one.rmse_px, pnp.reprojection_rmse_px("vga", tgt.points_m, uv, one.T_cam_target))


def test_batched_ldlt_solve_matches_lapack():
    rng = np.random.default_rng(13)
    M = rng.standard_normal((500, 9, 6)) * np.logspace(0, 3, 6)  # badly scaled columns, as in PnP
    A = np.swapaxes(M, 1, 2) @ M
    b = rng.standard_normal((500, 6))
    x = pnp._solve_spd(A, b)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", A, x), b, atol=1e-9)
    np.testing.assert_allclose(x, np.linalg.solve(A, b[..., None])[..., 0], rtol=1e-6, atol=1e-12)
    # a singular system (a parameter the points do not constrain) gives a finite answer, not an error
    A[:, 2, :] = A[:, :, 2] = 0.0
    b[:, 2] = 0.0
    assert np.isfinite(pnp._solve_spd(A, b)).all()


def test_starting_at_the_solution_stays_there():
    rng = np.random.default_rng(2)
    T = observing_poses(rng, 50, "hd", "checker_9x6_25mm")
    uv, _ = cameras.project_points("hd", T, cameras.get_target("checker_9x6_25mm").points_m)
    res = pnp.solve_pnp("hd", cameras.get_target("checker_9x6_25mm").points_m, uv, T)
    assert res.converged.all() and (res.n_iter == 1).all()
    np.testing.assert_allclose(res.T_cam_target, T, atol=1e-14)


def test_agrees_with_opencv_iterative_pnp():
    """Same noisy points, same start: the LM estimate is OpenCV's SOLVEPNP_ITERATIVE result.

    OpenCV stops its Levenberg-Marquardt loop after at most 20 iterations with a loose
    threshold, so it is called again from its own output until it no longer moves (at most
    eight calls).  Where it has then converged, the two poses agree to 1e-5 deg and 1e-5 mm,
    about 1e-5 of the pose error that the 0.5 px noise causes (measured: at most 2e-6 deg and
    1e-6 mm; the rest of the difference is where each method stops in the flat direction of the
    cost).  On every frame the kinhec estimate reprojects at least as well as OpenCV's.
    """
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(3)
    n_compared = 0
    for camera, target in PRESETS:
        cam = cameras.get_camera(camera)
        pts = cameras.get_target(target).points_m
        T_true = observing_poses(rng, 120, camera, target)
        uv = noisy_pixels(rng, camera, target, T_true, 0.5)
        ours = pnp.solve_pnp(cam, pts, uv, T_true)
        assert ours.converged.all()
        T_cv = np.empty_like(T_true)
        settled = np.zeros(len(T_true), dtype=bool)
        for i in range(len(T_true)):
            rvec, _ = cv2.Rodrigues(T_true[i, :3, :3])
            tvec = T_true[i, :3, 3].reshape(3, 1).copy()
            for _ in range(8):
                before = np.concatenate([rvec.ravel(), tvec.ravel()])
                ok, rvec, tvec = cv2.solvePnP(
                    pts, uv[i], cam.K, None, rvec, tvec, useExtrinsicGuess=True, flags=cv2.SOLVEPNP_ITERATIVE
                )
                assert ok
                moved = np.abs(np.concatenate([rvec.ravel(), tvec.ravel()]) - before).max()
                if moved < 1e-12:
                    settled[i] = True
                    break
            T_cv[i] = np.eye(4)
            T_cv[i, :3, :3] = cv2.Rodrigues(rvec)[0]
            T_cv[i, :3, 3] = tvec.ravel()
        assert settled.mean() > 0.7, (camera, target)
        rot_deg, trans_mm = se3.pose_error(ours.T_cam_target[settled], T_cv[settled])
        assert rot_deg.max() < 1e-5, (camera, target, rot_deg.max())
        assert trans_mm.max() < 1e-5, (camera, target, trans_mm.max())
        rmse_cv = pnp.reprojection_rmse_px(cam, pts, uv, T_cv)
        assert (ours.rmse_px <= rmse_cv + 1e-9).all()
        n_compared += int(settled.sum())
    assert n_compared > 350


def test_rmse_matches_a_recomputation():
    cv2 = pytest.importorskip("cv2")
    cam = cameras.get_camera("hd")
    tgt = cameras.get_target("checker_9x6_25mm")
    T_true = observing_poses(np.random.default_rng(4), 300, cam, tgt)
    # simulate_pnp draws N * P * 2 standard normals; replay them to get the measured pixels
    res = pnp.simulate_pnp(cam, tgt, T_true, 0.7, np.random.default_rng(44))
    noise = np.random.default_rng(44).standard_normal((300, tgt.n_points, 2))
    uv = cameras.project_points(cam, T_true, tgt.points_m)[0] + 0.7 * noise
    rvecs = [cv2.Rodrigues(T[:3, :3])[0] for T in res.T_cam_target]
    proj = np.stack([cv2.projectPoints(tgt.points_m, r, T[:3, 3], cam.K, None)[0][:, 0] for r, T in
                     zip(rvecs, res.T_cam_target)])
    rmse = np.sqrt(((proj - uv) ** 2).sum(axis=-1).mean(axis=-1))
    np.testing.assert_allclose(res.rmse_px, rmse, rtol=1e-9)
    np.testing.assert_allclose(pnp.reprojection_rmse_px(cam, tgt.points_m, uv, res.T_cam_target), rmse, rtol=1e-9)
    # at the least-squares minimum, E[rmse^2] = 2 sigma^2 (2P - 6) / (2P): six of the 2P residual degrees
    # of freedom are absorbed by the pose
    expected = 2 * 0.7**2 * (1 - 3 / tgt.n_points)
    assert np.mean(res.rmse_px**2) == pytest.approx(expected, rel=0.05)


def test_error_grows_with_pixel_noise_and_is_depth_dominated():
    cam = cameras.get_camera("hd")
    tgt = cameras.get_target("checker_9x6_25mm")
    T_true = observing_poses(np.random.default_rng(5), 1500, cam, tgt)
    rms_rot, rms_xyz = [], []
    for pixel_std in (0.1, 0.5, 2.0):
        res = pnp.simulate_pnp(cam, tgt, T_true, pixel_std, np.random.default_rng(55))
        assert res.converged.mean() > 0.99
        rot_deg, _ = se3.pose_error(res.T_cam_target, T_true)
        d_mm = 1000 * (res.T_cam_target[:, :3, 3] - T_true[:, :3, 3])  # camera frame, z = optical axis
        rms_rot.append(np.sqrt(np.mean(rot_deg**2)))
        rms_xyz.append(np.sqrt(np.mean(d_mm**2, axis=0)))
        # depth dominated: the error along the optical axis is several times the lateral one
        x, y, z = rms_xyz[-1]
        assert z > 4 * max(x, y)
        assert np.mean(np.abs(d_mm[:, 2]) > np.abs(d_mm[:, :2]).max(axis=1)) > 0.75
    # errors grow with the noise, close to proportionally (same noise draws, scaled)
    rms_z = [v[2] for v in rms_xyz]
    assert rms_rot[0] < rms_rot[1] < rms_rot[2] and rms_z[0] < rms_z[1] < rms_z[2]
    assert rms_rot[2] / rms_rot[0] == pytest.approx(20, rel=0.1)
    assert rms_z[2] / rms_z[0] == pytest.approx(20, rel=0.1)


# --------------------------------------------------------------------------- #
# masks, availability, determinism
# --------------------------------------------------------------------------- #
def test_mask_ignores_points_and_their_nans():
    rng = np.random.default_rng(6)
    tgt = cameras.get_target("grid_10x8_60mm")
    T = observing_poses(rng, 40, "fhd", tgt)
    uv = noisy_pixels(rng, "fhd", tgt.name, T, 0.3)
    mask = rng.random((40, tgt.n_points)) < 0.5
    mask[0] = False
    mask[0, :2] = True  # two points: not solvable
    mask[1] = False
    mask[1, [0, 9, 70]] = True  # three points: solved exactly
    garbage = uv.copy()
    garbage[~mask] = np.nan
    full = pnp.solve_pnp("fhd", tgt.points_m, garbage, T, mask=mask)
    # the same problem with the masked points removed frame by frame
    for i in (1, 2, 3, 20):
        sub = pnp.solve_pnp("fhd", tgt.points_m[mask[i]], uv[i : i + 1, mask[i]], T[i : i + 1])
        np.testing.assert_allclose(full.T_cam_target[i], sub.T_cam_target[0], atol=1e-12)
        assert full.rmse_px[i] == pytest.approx(sub.rmse_px[0], rel=1e-9, abs=1e-12)
    assert np.isnan(full.T_cam_target[0]).all() and np.isnan(full.rmse_px[0])
    assert not full.converged[0] and full.n_iter[0] == 0
    assert full.rmse_px[1] < 1e-9  # three points, six unknowns: the fit is exact
    assert np.isfinite(full.T_cam_target[2:]).all()


def test_simulate_only_measures_available_frames():
    cam = cameras.get_camera("vga")
    tgt = cameras.get_target("checker_7x5_20mm")
    T = observing_poses(np.random.default_rng(7), 30, cam, tgt)
    T_far = T.copy()
    T_far[::3, 2, 3] += 10.0  # every third frame beyond 5 m: not visible
    res = pnp.simulate_pnp(cam, tgt, T_far, 0.5, np.random.default_rng(70))
    hidden = np.zeros(30, dtype=bool)
    hidden[::3] = True
    assert np.isnan(res.T_cam_target[hidden]).all() and np.isnan(res.rmse_px[hidden]).all()
    assert not res.converged[hidden].any() and (res.n_iter[hidden] == 0).all()
    assert np.isfinite(res.T_cam_target[~hidden]).all() and res.converged[~hidden].all()
    # the noise of a frame does not depend on the others: the visible frames match a run on all frames
    everything = pnp.simulate_pnp(cam, tgt, T, 0.5, np.random.default_rng(70))
    np.testing.assert_array_equal(res.T_cam_target[~hidden], everything.T_cam_target[~hidden])
    # an explicit availability overrides the visibility rule
    some = np.zeros(30, dtype=bool)
    some[[1, 4]] = True
    picked = pnp.simulate_pnp(cam, tgt, T, 0.5, np.random.default_rng(70), available=some)
    assert np.isfinite(picked.rmse_px).sum() == 2
    np.testing.assert_array_equal(picked.T_cam_target[some], everything.T_cam_target[some])


def test_simulate_is_deterministic_and_noise_free_is_exact():
    cam = cameras.get_camera("industrial_5mp")
    tgt = cameras.get_target("marker_3x3_30mm")
    T = observing_poses(np.random.default_rng(8), 60, cam, tgt)
    a = pnp.simulate_pnp(cam, tgt, T, 1.0, np.random.default_rng(80))
    b = pnp.simulate_pnp(cam.name, tgt.name, T, 1.0, np.random.default_rng(80))
    np.testing.assert_array_equal(a.T_cam_target, b.T_cam_target)
    np.testing.assert_array_equal(a.rmse_px, b.rmse_px)
    exact = pnp.simulate_pnp(cam, tgt, T, 0.0, np.random.default_rng(80))
    np.testing.assert_allclose(exact.T_cam_target, T, atol=1e-12)
    assert (exact.rmse_px < 1e-9).all()


def test_simulate_uses_only_points_inside_the_image():
    cam = cameras.get_camera("hd")
    tgt = cameras.get_target("grid_10x8_60mm")
    T = np.diag([1.0, -1.0, -1.0, 1.0])
    T[:3, 3] = (0.45, 0.0, 1.0)  # 72 of the 80 points in the image
    T = T[None]
    vis = cameras.visibility(cam, tgt, T)
    assert vis.visible[0] and vis.n_points[0] == 72
    res = pnp.simulate_pnp(cam, tgt, T, 0.5, np.random.default_rng(9))
    uv_true, depth = cameras.project_points(cam, T, tgt.points_m)
    inside = cameras.points_in_image(cam, uv_true, depth)
    uv = uv_true + 0.5 * np.random.default_rng(9).standard_normal(uv_true.shape)
    ref = pnp.solve_pnp(cam, tgt.points_m, uv, T, mask=inside)
    np.testing.assert_allclose(res.T_cam_target, ref.T_cam_target, atol=1e-12)
    np.testing.assert_allclose(res.rmse_px, ref.rmse_px, rtol=1e-12)


def test_a_point_behind_the_camera_at_the_start_is_not_solved():
    pts = cameras.get_target("checker_9x6_25mm").points_m
    T = np.diag([1.0, -1.0, -1.0, 1.0])
    T[2, 3] = 0.5
    T_bad = T.copy()
    T_bad[2, 3] = -0.5
    uv, _ = cameras.project_points("hd", T, pts)
    res = pnp.solve_pnp("hd", pts, np.stack([uv, uv]), np.stack([T, T_bad]))
    assert np.isfinite(res.T_cam_target[0]).all() and res.converged[0]
    assert np.isnan(res.T_cam_target[1]).all() and not res.converged[1] and res.n_iter[1] == 0


# --------------------------------------------------------------------------- #
# input errors
# --------------------------------------------------------------------------- #
def test_solve_pnp_input_errors():
    pts = cameras.get_target("marker_3x3_30mm").points_m
    T = np.broadcast_to(np.diag([1.0, -1.0, -1.0, 1.0]), (2, 4, 4)).copy()
    T[:, 2, 3] = 0.5
    uv, _ = cameras.project_points("hd", T, pts)
    with pytest.raises(InputError, match=r"uv_px: expected shape \(N, 9, 2\) to match points_m, got shape \(2, 8, 2\)"):
        pnp.solve_pnp("hd", pts, uv[:, :8], T)
    with pytest.raises(InputError, match=r"uv_px: expected shape \(N, 9, 2\) to match points_m, got shape \(9, 2\)"):
        pnp.solve_pnp("hd", pts, uv[0], T)
    with pytest.raises(InputError, match=r"T_init: expected shape \(2, 4, 4\), got shape \(1, 4, 4\)"):
        pnp.solve_pnp("hd", pts, uv, T[:1])
    with pytest.raises(InputError, match=r"points_m: expected shape \(\.\.\., 3\)"):
        pnp.solve_pnp("hd", pts[:, :2], uv, T)
    bad = uv.copy()
    bad[1, 4, 0] = np.nan
    with pytest.raises(InputError, match="uv_px: expected finite pixels at every point selected by mask, got 1 NaN"):
        pnp.solve_pnp("hd", pts, bad, T)
    bad[1, 4, 0] = np.inf
    with pytest.raises(InputError, match="uv_px: expected finite values, got 1 infinite"):
        pnp.solve_pnp("hd", pts, bad, T)
    T_nan = T.copy()
    T_nan[0, 0, 3] = np.nan
    with pytest.raises(InputError, match="T_init: expected finite values"):
        pnp.solve_pnp("hd", pts, uv, T_nan)
    with pytest.raises(InputError, match="mask: expected a boolean array of shape \\(2, 9\\), got dtype int64"):
        pnp.solve_pnp("hd", pts, uv, T, mask=np.ones((2, 9), dtype=np.int64))
    with pytest.raises(InputError, match=r"mask: expected shape \(2, 9\), got shape \(9,\)"):
        pnp.solve_pnp("hd", pts, uv, T, mask=np.ones(9, dtype=bool))
    with pytest.raises(InputError, match="max_iter: expected an integer >= 1, got 0"):
        pnp.solve_pnp("hd", pts, uv, T, max_iter=0)
    with pytest.raises(InputError, match="max_iter: expected an integer >= 1, got 2.5"):
        pnp.solve_pnp("hd", pts, uv, T, max_iter=2.5)
    with pytest.raises(InputError, match="tol: expected a finite value >= 0, got -1"):
        pnp.solve_pnp("hd", pts, uv, T, tol=-1)
    with pytest.raises(InputError, match="tol: expected a finite value >= 0, got None"):
        pnp.solve_pnp("hd", pts, uv, T, tol=None)
    with pytest.raises(UnknownNameError, match="unknown camera preset 'hdr'"):
        pnp.solve_pnp("hdr", pts, uv, T)


def test_simulate_pnp_input_errors():
    T = np.diag([1.0, -1.0, -1.0, 1.0])
    T[2, 3] = 0.5
    T = T[None]
    rng = np.random.default_rng(0)
    with pytest.raises(UnknownNameError, match="unknown target preset 'aruco'"):
        pnp.simulate_pnp("hd", "aruco", T, 0.5, rng)
    with pytest.raises(InputError, match=r"T_cam_target_gt: expected shape \(N, 4, 4\), got shape \(4, 4\)"):
        pnp.simulate_pnp("hd", "checker_9x6_25mm", T[0], 0.5, rng)
    with pytest.raises(InputError, match="pixel_std: expected a finite number >= 0, got -0.5"):
        pnp.simulate_pnp("hd", "checker_9x6_25mm", T, -0.5, rng)
    with pytest.raises(InputError, match="pixel_std: expected a finite number >= 0, got nan"):
        pnp.simulate_pnp("hd", "checker_9x6_25mm", T, float("nan"), rng)
    with pytest.raises(InputError, match="pixel_std: expected a number >= 0, got 'big'"):
        pnp.simulate_pnp("hd", "checker_9x6_25mm", T, "big", rng)
    with pytest.raises(InputError, match="rng: expected a numpy.random.Generator, got int"):
        pnp.simulate_pnp("hd", "checker_9x6_25mm", T, 0.5, 42)
    with pytest.raises(InputError, match=r"available: expected a boolean array of shape \(1,\), got shape \(2,\)"):
        pnp.simulate_pnp("hd", "checker_9x6_25mm", T, 0.5, rng, available=np.ones(2, dtype=bool))
    with pytest.raises(InputError, match=r"T_cam_target: expected shape \(1, 4, 4\), got shape \(4, 4\)"):
        pnp.reprojection_rmse_px("hd", cameras.get_target("checker_9x6_25mm").points_m, np.zeros((1, 54, 2)), T[0])
