"""Intrinsics (Zhang) and the corner-based hand-eye solver against ground truth."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.util.errors import DegenerateMotionError, InputError
from kinhec.models.intrinsics import calibrate_camera, homographies, pack_views, project, zhang_intrinsics
from kinhec.geometry.lsq import BlockStructure, block_jacobian
from kinhec.solvers.reprojection import chain_poses, solve_reprojection

K_TRUE = np.array([800.0, 790.0, 322.0, 241.0, -0.2, 0.05, 0.001, -0.0005, 0.0])


def _board(cols=8, rows=6, pitch=0.03):
    x, y = np.meshgrid(np.arange(cols) * pitch, np.arange(rows) * pitch)
    return np.c_[x.ravel(), y.ravel(), np.zeros(x.size)]


def _scene(rng, n=12, configuration="eye_in_hand"):
    """Flange poses around a board 0.6 m in front of the camera, with X and Y."""
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.1, -0.2, 0.3]), [0.03, -0.05, 0.1])
    pts = _board()
    # camera poses looking at the board centre from different directions
    T_ct = []
    for _ in range(n):
        w = rng.normal(0, 0.35, 3)
        R = se3.so3_exp(w)
        c = np.array([0.105, 0.075, 0.0])
        t = np.array([0, 0, 0.6]) + rng.normal(0, 0.03, 3) - R @ c
        T_ct.append(se3.transform_from_rotation_translation(R, t))
    T_ct = np.stack(T_ct)
    Y = se3.transform_from_rotation_translation(se3.so3_exp([0.3, 0.1, -0.2]), [0.8, 0.1, 0.2])
    if configuration == "eye_in_hand":  # T_cam_target = inv(A X) Y  ->  A = Y inv(T_ct) inv(X)
        A = Y @ se3.invert_transform(T_ct) @ se3.invert_transform(X)
    else:  # T_cam_target = inv(Y) A X  ->  A = Y T_ct inv(X)
        A = Y @ T_ct @ se3.invert_transform(X)
    return A, X, Y, T_ct, pts


def test_project_matches_opencv_model_by_hand():
    T = se3.transform_from_rotation_translation(np.eye(3), [0.0, 0.0, 1.0])[None]
    uv = project(K_TRUE, T, np.array([[0.1, -0.2, 0.0]]))[0, 0]
    x, y = 0.1, -0.2
    r2 = x * x + y * y
    rad = 1 + K_TRUE[4] * r2 + K_TRUE[5] * r2**2
    xd = x * rad + 2 * K_TRUE[6] * x * y + K_TRUE[7] * (r2 + 2 * x * x)
    yd = y * rad + K_TRUE[6] * (r2 + 2 * y * y) + 2 * K_TRUE[7] * x * y
    assert uv == pytest.approx([800 * xd + 322, 790 * yd + 241], abs=1e-12)


def test_zhang_closed_form_is_exact_without_distortion_and_noise():
    rng = np.random.default_rng(1)
    *_, T_ct, pts = _scene(rng)
    k = K_TRUE.copy()
    k[4:] = 0
    uv = project(k, T_ct, pts)
    views = pack_views([pts] * len(T_ct), list(uv))
    f4 = zhang_intrinsics(homographies(views), (640, 480))
    np.testing.assert_allclose(f4, k[:4], rtol=1e-7)


def test_homography_of_a_four_point_view_is_exact():
    """Four points (a 2x2 marker) give an 8 x 9 DLT system: its null vector is the homography."""
    rng = np.random.default_rng(7)
    *_, T_ct, _ = _scene(rng, n=3)
    pts = np.array([[-0.02, 0.02, 0.0], [0.02, 0.02, 0.0], [-0.02, -0.02, 0.0], [0.02, -0.02, 0.0]])
    k = np.array([1400.0, 1400.0, 960.0, 540.0, 0, 0, 0, 0, 0])
    uv = project(k, T_ct, pts)
    H = homographies(pack_views([pts] * 3, list(uv)))
    p = np.einsum("nij,kj->nki", H, np.c_[pts[:, :2], np.ones(4)])
    np.testing.assert_allclose(p[..., :2] / p[..., 2:], uv, atol=1e-8)
    cal = calibrate_camera(pack_views([pts] * 3, list(uv)), (1920, 1080), intrinsics=k)
    rot, tr = se3.pose_error(cal.T_cam_target, T_ct)
    assert rot.max() < 1e-6 and tr.max() < 1e-6


def test_calibrate_camera_recovers_distortion():
    rng = np.random.default_rng(2)
    *_, T_ct, pts = _scene(rng, n=15)
    uv = project(K_TRUE, T_ct, pts)
    cal = calibrate_camera(pack_views([pts] * 15, list(uv)), (640, 480))
    np.testing.assert_allclose(cal.intrinsics[:4], K_TRUE[:4], rtol=1e-7)
    np.testing.assert_allclose(cal.intrinsics[4:8], K_TRUE[4:8], atol=1e-7)
    assert cal.rms_px < 1e-6


def test_parallel_views_are_degenerate():
    pts = _board()
    T = np.stack([se3.transform_from_rotation_translation(np.eye(3), [0.01 * i, 0, 0.6]) for i in range(5)])
    uv = project([800, 800, 320, 240, 0, 0, 0, 0, 0], T, pts)
    with pytest.raises(DegenerateMotionError, match="different orientations"):
        zhang_intrinsics(homographies(pack_views([pts] * 5, list(uv))), (640, 480))


@pytest.mark.parametrize("configuration", ["eye_in_hand", "eye_to_hand"])
def test_noise_free_solve_recovers_x_y_and_intrinsics(configuration):
    rng = np.random.default_rng(3)
    A, X, Y, T_ct, pts = _scene(rng, configuration=configuration)
    np.testing.assert_allclose(chain_poses(A, X, Y, configuration), T_ct, atol=1e-12)
    uv = project(K_TRUE, T_ct, pts)
    r = solve_reprojection([pts] * len(A), list(uv), A, (640, 480), configuration=configuration, loss="linear")
    rot, tr = se3.pose_error(r.X, X)
    assert rot < 1e-6 and tr < 1e-6
    rot, tr = se3.pose_error(r.Y, Y)
    assert rot < 1e-6 and tr < 1e-6
    np.testing.assert_allclose(r.intrinsics[:4], K_TRUE[:4], rtol=1e-8)
    assert r.rms_px < 1e-6


def test_noisy_solve_is_within_3_sigma_and_sigma_matches_the_scatter():
    """Pixel noise 0.5 px: every estimate within 3 sigma; reprojection RMS ~ 0.5 sqrt(2)."""
    rng = np.random.default_rng(4)
    A, X, Y, T_ct, pts = _scene(rng, n=15)
    uv = project(K_TRUE, T_ct, pts) + rng.normal(0, 0.5, (15, pts.shape[0], 2))
    r = solve_reprojection([pts] * 15, list(uv), A, (640, 480), loss="huber", f_scale_px=1.5)
    assert 0.6 < r.rms_px < 0.8
    for i, n in enumerate(("fx", "fy", "cx", "cy", "k1", "k2", "p1", "p2", "k3")):
        assert abs(r.intrinsics[i] - K_TRUE[i]) < 3 * r.sigma[n], n
    for name, T, Tt in (("X", r.X, X), ("Y", r.Y, Y)):
        xi = se3.se3_log(se3.invert_transform(Tt) @ T)
        for j, c in enumerate(("rx", "ry", "rz", "tx", "ty", "tz")):
            assert abs(xi[j]) < 3 * r.sigma[f"{name}.{c}"], f"{name}.{c}"


def test_robot_pose_errors_scale_sigma_up_and_the_prior_absorbs_them():
    rng = np.random.default_rng(5)
    A, X, Y, T_ct, pts = _scene(rng, n=15)
    uv = project(K_TRUE, T_ct, pts) + rng.normal(0, 0.2, (15, pts.shape[0], 2))
    A_meas = A @ se3.se3_exp(np.c_[rng.normal(0, 1e-3, (15, 3)), rng.normal(0, 1e-3, (15, 3))])
    r_meas = solve_reprojection([pts] * 15, list(uv), A_meas, (640, 480), loss="linear")
    r_prior = solve_reprojection([pts] * 15, list(uv), A_meas, (640, 480), loss="linear", refine_robot=True,
                                 robot_prior_rot_rad=1e-3, robot_prior_trans_m=1e-3)  # fmt: skip
    assert r_meas.sigma_scale > 2  # the views disagree far more than 0.2 px pixel noise allows
    assert r_prior.rms_px < 0.5 * r_meas.rms_px
    assert r_prior.rms_px < 0.35  # towards the corner noise (0.2 * sqrt(2) = 0.28 px)


def test_bad_input_is_refused():
    rng = np.random.default_rng(6)
    A, X, Y, T_ct, pts = _scene(rng)
    uv = list(project(K_TRUE, T_ct, pts))
    with pytest.raises(InputError, match="configuration"):
        solve_reprojection([pts] * len(A), uv, A, (640, 480), configuration="eye_on_hand")
    with pytest.raises(InputError, match=r"T_base_ee: expected shape \(12, 4, 4\)"):
        solve_reprojection([pts] * len(A), uv, A[:5], (640, 480))
    with pytest.raises(InputError, match="planar target"):
        calibrate_camera(pack_views([pts + [0, 0, 0.01]] * len(A), uv), (640, 480))


def test_block_jacobian_matches_dense_differences():
    rng = np.random.default_rng(7)
    M = rng.normal(size=(3, 2))

    def fun(x):  # 3 views of 2 residuals: shared x[0:2], block of 2 per view
        b = x[2:].reshape(3, 2)
        return (np.sin(x[0]) * b + M * x[1] ** 2).ravel()

    s = BlockStructure(2, 3, 2, np.repeat(np.arange(3), 2))
    x = rng.normal(size=8)
    J = block_jacobian(fun, x, fun(x), s).toarray()
    eps = 1e-7
    Jd = np.stack([(fun(x + eps * e) - fun(x - eps * e)) / (2 * eps) for e in np.eye(8)], axis=1)
    np.testing.assert_allclose(J, Jd, atol=1e-6)
    assert (s.pattern().toarray() != 0).sum() >= (np.abs(Jd) > 0).sum()


def _generated_pixel_views(sequence_id, seed, configuration, n_stations, pixel_std):
    """The pixels of a generated pnp sequence (frames with a measurement), as a PixelViews with the preset's intrinsics."""
    from kinhec.synth.observations import recipe_pixels

    recipe = dict(sequence_id=sequence_id, seed=seed, robot="ur5e", configuration=configuration, family="lookat",
                  sampling_mode="stations", n_stations=n_stations, camera="vga", target="checker_7x5_20mm",
                  camera_noise_model="pnp", pixel_std=pixel_std)  # fmt: skip
    px = recipe_pixels(recipe)
    keep = np.flatnonzero(px.has_measurement)
    return px, keep, px.pixel_views(keep)


def test_registry_pixel_solver_on_generated_pnp_sequence():
    """The registry's pixel entry on a generated pnp sequence, with the camera preset's intrinsics."""
    from kinhec.solvers.registry import PIXEL_SOLVERS

    px, keep, views = _generated_pixel_views("pix", 11, "eye_to_hand", 10, 0.2)
    spec = PIXEL_SOLVERS["reprojection"]
    res = spec.run(px.T_base_ee_meas[keep], views)
    rot, tr = se3.pose_error(res.X, px.X)
    assert spec.kind == "pixels" and rot < 0.5 and tr < 2.0, (rot, tr)


def test_pixel_views_started_from_pnp_poses_reach_the_same_solution():
    """Known intrinsics and the views' PnP poses: the free-pose fit is skipped, the solution is the same."""
    import dataclasses

    from kinhec.util.errors import InputError
    from kinhec.solvers.reprojection import solve_pixel_views

    px, keep, views = _generated_pixel_views("pix2", 12, "eye_in_hand", 12, 0.5)
    A = px.T_base_ee_meas[keep]
    # the generator's PnP of each view on these pixels with these intrinsics (the sequence's measured poses)
    T0 = px.T_cam_target_meas[keep]
    free = solve_pixel_views(A, views)
    started = solve_pixel_views(A, dataclasses.replace(views, view_poses=T0))
    assert np.all(np.array(se3.pose_error(started.X, free.X)) < [1e-4, 1e-3])  # deg, mm
    rot, tr = se3.pose_error(started.X, px.X)
    assert rot < 0.5 and tr < 2.0
    with pytest.raises(InputError, match="view_poses"):
        solve_pixel_views(A, dataclasses.replace(views, view_poses=T0[:3]))
