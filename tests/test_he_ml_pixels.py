"""``he_ml`` on the target's pixels (:mod:`kinhec.solvers.he_ml_stages.pixels`): Jacobians, accuracy, consistency, input checks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.util.errors import InputError
from kinhec.models.intrinsics import pack_views
from kinhec.synth.observations import recipe_pixels
from kinhec.solvers.he_ml_stages import pixels as hp
from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml import he_ml
from kinhec.solvers.reprojection import PixelViews


def _generated(seed, *, target="marker_2x2_40mm", camera="vga", pixel_std=2.0, configuration="eye_to_hand",
               n_stations=25, robot=(2e-4, 1e-4)):  # fmt: skip
    """Pixels, measured poses and truth of a generated pnp sequence with robot twist noise."""
    recipe = dict(sequence_id=f"pix-{seed}", seed=seed, robot="ur5e", configuration=configuration, family="lookat",
                  sampling_mode="stations", n_stations=n_stations, camera=camera, target=target,
                  camera_noise_model="pnp", pixel_std=pixel_std, robot_noise_models=("se3_gaussian",),
                  robot_rot_std_rad=robot[0], robot_trans_std_m=robot[1])  # fmt: skip
    px = recipe_pixels(recipe)
    keep = np.flatnonzero(px.has_measurement)
    views = px.pixel_views(keep)
    A = px.T_base_ee_meas[keep]
    C = px.T_cam_target_meas[keep]
    B = pm.camera_poses(C, px.configuration)
    return A, B, views, px


def _err6(X, X_true):
    """Right-perturbation error ``log(inv(X_true) X)`` (rotation first)."""
    return se3.se3_log(se3.invert_transform(X_true) @ X)


@pytest.mark.parametrize("configuration", ["eye_in_hand", "eye_to_hand"])
def test_normals_match_finite_differences(configuration):
    """The per-view information and gradient come from the exact derivative of the pixels in the pose's right twist."""
    rng = np.random.default_rng(3)
    A, B, views, px = _generated(5, target="checker_7x5_20mm", pixel_std=0.5, configuration=configuration,
                                 n_stations=6)  # fmt: skip
    packed = pack_views(views.points_3d, views.points_2d)
    prob = hp._Problem(A, packed, hp.normalised_points(packed, views.intrinsics), views.intrinsics[:2], configuration)
    C = pm.predicted_camera_poses(A, px.X, px.Y, configuration)
    e, geom = prob.residuals(C)
    M, g = prob.normals(e, geom)
    d = rng.normal(size=(C.shape[0], 6)) * np.r_[1e-3, 1e-3, 1e-3, 1e-4, 1e-4, 1e-4]
    h = 1e-4
    ep, _ = prob.residuals(C @ se3.se3_exp(h * d))
    em, _ = prob.residuals(C @ se3.se3_exp(-h * d))
    de = (ep - em) / (2 * h)  # d e / d t along d: -J d per point
    # M d d = |J d|^2 per view and g . d = -(J d) . e
    Jd2 = np.einsum("npk,npk->n", de, de)
    np.testing.assert_allclose(np.einsum("ni,nij,nj->n", d, M, d), Jd2, rtol=1e-5)
    np.testing.assert_allclose(np.einsum("ni,ni->n", g, d), -np.einsum("npk,npk->n", de, e), rtol=1e-5, atol=1e-9)


def test_normalised_points_invert_the_distortion():
    k = np.array([800.0, 790.0, 322.0, 241.0, -0.2, 0.05, 0.001, -0.0005, 0.01])
    rng = np.random.default_rng(0)
    xy = rng.uniform(-0.35, 0.35, (3, 7, 2))
    from kinhec.models.intrinsics import _distort

    uv = _distort(xy, k[4:9]) * k[0:2] + k[2:4]
    packed = pack_views(list(np.zeros((3, 7, 3))), list(uv))
    np.testing.assert_allclose(hp.normalised_points(packed, k), xy, atol=1e-10)


def test_noise_free_pixels_give_the_truth():
    A, B, views, px = _generated(7, pixel_std=0.0, robot=(0.0, 0.0), target="checker_9x6_25mm")
    # start away from the truth: the pixel stage alone must get back
    X0 = px.X @ se3.se3_exp(np.r_[0.01, -0.01, 0.005, 0.003, -0.002, 0.004])
    Y0 = px.Y @ se3.se3_exp(np.r_[-0.005, 0.01, 0.005, 0.002, 0.003, -0.004])
    fit = hp.pixel_ml(A, X0, Y0, px.configuration, views.points_3d, views.points_2d, views.intrinsics)
    assert np.all(np.abs(_err6(fit.X, px.X)) < 1e-8) and np.all(np.abs(_err6(fit.Y, px.Y)) < 1e-8)
    assert fit.rms_px < 1e-6


def test_pixels_beat_the_poses_on_a_small_marker_and_the_covariance_is_consistent():
    """A 2 x 2 marker on the flange under 2 px noise (the pnp track): PnP is nonlinear in the pixels there.

    Over 16 generated sequences the pixel stage's X translation error is well below that of the fit on
    the PnP poses, its noise levels are the generated ones, and its covariance explains its errors
    (mean NEES of X near 6).
    """
    pose_err, pix_err, nees, px_std = [], [], [], []
    for seed in range(16):
        A, B, views, px = _generated(100 + seed)
        pose = he_ml(A, B, configuration=px.configuration)
        pix = he_ml(A, B, pixels=views)
        pose_err.append(np.linalg.norm(_err6(pose.X, px.X)[3:]))
        e = _err6(pix.X, px.X)
        pix_err.append(np.linalg.norm(e[3:]))
        nees.append(float(e @ np.linalg.solve(pix.cov_X, e)))
        px_std.append(pix.info["pixel_std"])
    pose_rms, pix_rms = np.sqrt(np.mean(np.square(pose_err))), np.sqrt(np.mean(np.square(pix_err)))
    assert pix_rms < 0.6 * pose_rms, (pix_rms, pose_rms)
    assert 4.0 < np.mean(nees) < 8.5, nees
    # the pixel noise comes out 3-5 % low on the generator's chained look-at stations (mean 1.93 over 48 sequences,
    # seeds 100-115 and 200-231; within 2 % on the earlier, home-solved stations): a bias of the split between the
    # marginalised robot error and the pixels, not yet traced; 0.15 px is 7.5 %, so a bias twice as large fails
    assert abs(np.median(px_std) - 2.0) < 0.15, px_std


def test_pixels_input_is_checked():
    A, B, views, px = _generated(9, n_stations=10, target="checker_7x5_20mm", pixel_std=0.3)
    with pytest.raises(InputError, match="PixelViews"):
        he_ml(A, B, pixels={"points_3d": views.points_3d})
    with pytest.raises(InputError, match="one view per pose pair"):
        he_ml(A[:-1], B[:-1], pixels=views)
    with pytest.raises(InputError, match="intrinsics"):
        he_ml(A, B, pixels=dataclasses.replace(views, intrinsics=None))
    other = "eye_to_hand" if px.configuration == "eye_in_hand" else "eye_in_hand"
    with pytest.raises(InputError, match="configuration"):
        he_ml(A, B, pixels=views, configuration=other)
    with pytest.raises(InputError, match="metric"):
        he_ml(A, B, pixels=views, scale=True)
    few = dataclasses.replace(views, points_3d=[p[:2] for p in views.points_3d],
                              points_2d=[p[:2] for p in views.points_2d])  # fmt: skip
    with pytest.raises(InputError, match="at least 3"):
        he_ml(A, B, pixels=few)


def test_registry_entry_takes_the_pixels():
    from kinhec.solvers.registry import SOLVERS, uses_pixels

    A, B, views, px = _generated(11, n_stations=12, target="marker_3x3_30mm", pixel_std=1.0)
    spec = SOLVERS["he_ml"]
    assert uses_pixels("he_ml") and uses_pixels("reprojection") and not uses_pixels("shah")
    with_px = spec.run_pixels(A, B, views=views)
    direct = he_ml(A, B, pixels=views)
    np.testing.assert_array_equal(with_px.X, direct.X)
    e = _err6(direct.X, px.X)
    assert float(e @ np.linalg.solve(direct.cov_X, e)) < 22.46  # chi2(6) 99.9 %
    assert "pixel_std" in direct.info and "pixel_std" not in he_ml(A, B).info


def test_pixel_stage_reaches_the_cramer_rao_bound_where_the_poses_do_not():
    """Monte-Carlo on one fixed geometry (a 3 x 3 marker on the flange, vga, 1 px, robot noise r2-like).

    Every draw adds fresh pixel and robot noise to the exact pixels and flange poses, measures the poses by
    the generator's PnP and runs ``he_ml`` on the poses and on the pixels.  The errors of X, normalised by
    the sequence's Cramér-Rao covariance (:func:`kinhec.evaluate.bounds.bound_from_pairs` with the PnP covariance of
    the pixel noise and the robot twist noise), average 6 for an efficient estimator: the pixel stage does,
    the pose fit is far above.
    """
    from kinhec.models import noise
    from kinhec.evaluate.bounds import bound_from_pairs, pnp_covariance
    from kinhec.models.pnp import solve_pnp

    target, camera, s_px, r_rot, r_tr = "marker_3x3_30mm", "vga", 1.0, 2e-4, 1e-4
    _, _, _, px = _generated(31, target=target, camera=camera, pixel_std=0.0, robot=(0.0, 0.0))
    keep = np.flatnonzero(px.has_measurement)
    A0, C0, det = px.T_base_ee_meas[keep], px.T_cam_target_meas[keep], px.detected[keep]
    uv0 = px.uv_px[keep]
    conf, X, Y = px.configuration, px.X, px.Y
    robot_cov = np.broadcast_to(np.diag([r_rot**2] * 3 + [r_tr**2] * 3), (keep.size, 6, 6))
    bound = bound_from_pairs(A0, C0, X, Y, conf, camera_cov=pnp_covariance(C0, camera, target, s_px),
                             robot_cov=robot_cov)  # fmt: skip
    info = np.linalg.inv(bound.cov[:6, :6])
    rng = np.random.default_rng(2024)
    nees = {"poses": [], "pixels": []}
    for _ in range(48):
        A = noise.robot_se3_gaussian(A0, r_rot, r_tr, rng)
        uv = uv0 + s_px * rng.standard_normal(uv0.shape)
        C = solve_pnp(camera, px.points_m, uv, C0, mask=det).T_cam_target
        views = PixelViews([px.points_m[d] for d in det], [u[d] for u, d in zip(uv, det)], px.image_size, conf,
                           px.intrinsics)  # fmt: skip
        B = pm.camera_poses(C, conf)
        for key, res in (("poses", he_ml(A, B, configuration=conf)), ("pixels", he_ml(A, B, pixels=views))):
            e = _err6(res.X, X)
            nees[key].append(float(e @ info @ e))
    assert 4.5 < np.mean(nees["pixels"]) < 7.5, np.mean(nees["pixels"])
    assert np.mean(nees["poses"]) > 2.0 * np.mean(nees["pixels"]), (np.mean(nees["poses"]), np.mean(nees["pixels"]))
