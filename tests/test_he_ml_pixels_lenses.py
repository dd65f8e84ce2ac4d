"""``he_ml``'s pixel stage through a fisheye (equidistant) and OpenCV's rational lens: the per-view normals against
finite differences, ``X`` against the truth and its own covariance on generated corners, agreement with the pinhole
path where the models coincide, and the input checks."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.models.intrinsics import calibrate_camera, pack_views, project_points
from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml import he_ml
from kinhec.solvers.he_ml_stages import pixels as hp
from kinhec.solvers.reprojection import PixelViews
from kinhec.synth.observations import (
    FISHEYE_LENSES,
    RATIONAL_LENSES,
    fisheye_observations_from_recipe,
    transform_from_pose_json,
)
from kinhec.util.errors import InputError

from helpers.recordings import lens_recipe

#: The lenses and the angle [deg] each is mounted turned off the target (towards the edge of its field).
LENSES = {"fisheye_180": 50.0, "rational_120": 20.0}
TARGETS = {"eye_in_hand": "grid_10x8_60mm", "eye_to_hand": "checker_9x6_25mm"}
CELLS = [(lens, setup) for lens in LENSES for setup in TARGETS]
#: chi-square with 6 degrees of freedom, 99.9 %
CHI2_6_999 = 22.46


def _intrinsics(lens: str) -> np.ndarray:
    return np.array({**FISHEYE_LENSES, **RATIONAL_LENSES}[lens].intrinsics)


@functools.lru_cache(maxsize=None)
def _recording(lens: str, setup: str, seed: int):
    """Generated corners of a look-at station recording through ``lens`` (detector-level pixel noise, robot twist
    noise), the view poses by PnP with the known lens: ``(A, B, PixelViews, X_true, Y_true)``."""
    r = lens_recipe(sequence_id=f"lens-{seed}", seed=seed, configuration=setup, target=TARGETS[setup])
    obs, truth = fisheye_observations_from_recipe(r, lens, tilt_deg=LENSES[lens])
    k = _intrinsics(lens)
    cam = calibrate_camera(pack_views(obs.points_3d, obs.points_2d), obs.image_size, intrinsics=k)
    B = pm.camera_poses(cam.T_cam_target, obs.mode)
    views = PixelViews(obs.points_3d, obs.points_2d, obs.image_size, obs.mode, k)
    return obs.T_base_ee, B, views, *(transform_from_pose_json(truth["poses"][n]) for n in ("X", "Y"))


@functools.lru_cache(maxsize=None)
def _fit(lens: str, setup: str, seed: int):
    """``X``'s error (right perturbation, rotation first) and covariance of ``he_ml`` with the pixels."""
    A, B, views, X, _ = _recording(lens, setup, seed)
    res = he_ml(A, B, pixels=views)
    return se3.se3_log(se3.invert_transform(X) @ res.X), res.cov_X, res.info["pixel_std"]


def _err6(T, T_true):
    return se3.se3_log(se3.invert_transform(T_true) @ T)


# --------------------------------------------------------------------------- #
# the per-view normals of the lens problem against finite differences
# --------------------------------------------------------------------------- #
def _wide_scene(k, rng, n_views=4, n_points=30, max_deg=100.0):
    """Camera poses and target points whose camera-frame rays lie up to ``max_deg`` off the axis (a fisheye beyond
    90 deg sees points behind its plane), and their pixels with 0.5 px noise."""
    C = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.5, (n_views, 3))),
                                                rng.normal(0, 0.3, (n_views, 3)))  # fmt: skip
    th = np.radians(rng.uniform(0.0, max_deg, (n_views, n_points)))
    ph = rng.uniform(0.0, 2 * np.pi, (n_views, n_points))
    pc = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], axis=-1)
    pc *= rng.uniform(0.3, 2.0, (n_views, n_points, 1))
    Cinv = se3.invert_transform(C)
    P = np.einsum("nij,npj->npi", Cinv[:, :3, :3], pc) + Cinv[:, None, :3, 3]
    uv = project_points(k, pc) + 0.5 * rng.standard_normal(pc.shape[:-1] + (2,))
    return C, P, uv, pc


@pytest.mark.parametrize("lens", ["fisheye_180", "rational_120"])
def test_lens_normals_are_the_finite_difference_jacobian(lens):
    """``M = J^T J`` and ``g = J^T e`` of every view with ``J`` the central differences of the pixel residuals in
    the camera's right twist, at a state off the pixels (noisy pixels, views of uneven size: padding included)."""
    rng = np.random.default_rng(41)
    k = _intrinsics(lens)
    max_deg = 100.0 if lens == "fisheye_180" else 55.0
    C, P, uv, pc = _wide_scene(k, rng, max_deg=max_deg)
    if lens == "fisheye_180":
        assert (pc[..., 2] < 0).sum() > 5  # points behind the camera's plane are part of the check
    sizes = [30, 22, 27, 30]
    packed = pack_views([p[:s] for p, s in zip(P, sizes)], [u[:s] for u, s in zip(uv, sizes)])
    A = np.broadcast_to(np.eye(4), C.shape)
    prob = hp._problem(A, packed, k, "eye_in_hand")
    assert isinstance(prob, hp._LensProblem)
    e, geom = prob.residuals(C)
    assert np.abs(e).max() > 0.1 and np.all(e[~packed.mask] == 0)
    M, g = prob.normals(e, geom)
    h = 1e-6
    J = np.empty((C.shape[0], 2 * packed.points_3d.shape[1], 6))
    for c in range(6):
        d = np.zeros(6)
        d[c] = h
        ep, _ = prob.residuals(C @ se3.se3_exp(d))
        em, _ = prob.residuals(C @ se3.se3_exp(-d))
        de = -(ep - em) / (2 * h)  # the residual is observed - predicted: J is d predicted / d twist
        J[..., c] = np.concatenate([de[..., 0], de[..., 1]], axis=1)
    JT = np.swapaxes(J, 1, 2)
    scale = np.abs(M).max(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(M / scale, (JT @ J) / scale, atol=1e-6)
    g_fd = (JT @ np.concatenate([e[..., 0], e[..., 1]], axis=1)[..., None])[..., 0]
    np.testing.assert_allclose(g, g_fd, rtol=1e-6, atol=1e-6 * np.abs(g_fd).max())


# --------------------------------------------------------------------------- #
# X against the truth and its own covariance
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("lens,setup", CELLS)
def test_x_is_recovered_within_its_covariance(lens, setup):
    """Five generated recordings per lens and setup: every component of ``X``'s error within 4 of its sigma, the
    NEES within chi-square(6)'s 99.9 % point, the pixel noise the generated 0.08 px within 10 %."""
    for seed in range(5):
        e, cov, px_std = _fit(lens, setup, seed)
        sig = np.sqrt(np.diag(cov))
        assert np.all(np.abs(e) < 4 * sig), (seed, e / sig)
        assert float(e @ np.linalg.solve(cov, e)) < CHI2_6_999, seed
        assert abs(px_std / 0.08 - 1) < 0.1, (seed, px_std)


def test_nees_over_twenty_recordings_is_chi_square_6():
    """The 20 recordings of the cells above (5 per lens and setup): the mean NEES of ``X`` is that of chi-square(6)
    when the covariance is right, 6 with a standard deviation of sqrt(12 / 20) = 0.77 over 20 draws; the band
    [4.0, 8.0] is its 99 % interval.  Measured: 7.36 on these 20; 6.41 over 80 (20 per cell, the heavy test below:
    5.85 and 6.90 for the fisheye eye-in-hand and eye-to-hand, 6.33 and 6.58 for the rational lens), so the error
    bars are at most a few per cent short.  Error bars 20 % short (a mean NEES of 9) fall outside the band."""
    nees = []
    for lens, setup in CELLS:
        for seed in range(5):
            e, cov, _ = _fit(lens, setup, seed)
            nees.append(float(e @ np.linalg.solve(cov, e)))
    assert 4.0 < np.mean(nees) < 8.0, nees


@pytest.mark.heavy
@pytest.mark.parametrize("lens,setup", CELLS)
def test_nees_per_cell_over_twenty_recordings(lens, setup):
    """Twenty recordings of one lens and setup: the mean NEES within chi-square(6)'s 99 % band for 20 draws."""
    nees = []
    for seed in range(20):
        e, cov, _ = _fit(lens, setup, seed)
        nees.append(float(e @ np.linalg.solve(cov, e)))
    assert 4.0 < np.mean(nees) < 8.0, nees


def test_a_fisheye_fits_points_behind_its_plane():
    """A 180 deg fisheye mounted 85 deg off a target that spans 30 deg: corners up to ~110 deg off the axis, part of
    them behind the camera's plane (``Z < 0``); the noisy pixels (0.3 px) and robot poses (0.2 mrad / 0.1 mm) give
    ``X`` within its covariance of the truth from a start 10 mrad / 5 mm away."""
    k = _intrinsics("fisheye_180")
    rng = np.random.default_rng(7)
    n = 16
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.1, -0.2, 0.4]), [0.03, -0.04, 0.08])
    Y = se3.transform_from_rotation_translation(se3.so3_exp([np.pi, 0.0, 0.0]), [0.6, 0.0, 0.0])
    g = np.stack(np.meshgrid(np.linspace(-0.25, 0.25, 8), np.linspace(-0.2, 0.2, 6)), -1).reshape(-1, 2)
    pts = np.c_[g, np.zeros(len(g))]
    # flange poses above the target, looking down: the camera axis turned 85 deg off the target by M
    M = se3.transform_from_rotation_translation(se3.so3_exp([np.radians(85.0), 0.0, 0.0]), np.zeros(3))
    down = se3.so3_exp(rng.normal(0, 0.25, (n, 3))) @ se3.so3_exp([np.pi, 0.0, 0.0])  # the camera's z towards the target
    look = se3.transform_from_rotation_translation(down, np.c_[rng.normal(0, 0.1, (n, 2)), rng.uniform(0.35, 0.6, n)])
    C = M @ se3.invert_transform(look)  # T_cam_target
    A = Y @ se3.invert_transform(C) @ se3.invert_transform(X)  # eye-in-hand: C = inv(A X) Y
    pc = np.einsum("nij,pj->npi", C[:, :3, :3], pts) + C[:, None, :3, 3]
    theta = np.degrees(np.arctan2(np.hypot(pc[..., 0], pc[..., 1]), pc[..., 2]))
    seen = theta < 110.0
    assert (pc[..., 2][seen] < 0).sum() > 50 and seen.sum(axis=1).min() >= 6
    uv = project_points(k, pc) + 0.3 * rng.standard_normal(pc.shape[:-1] + (2,))
    A_meas = A @ se3.se3_exp(np.c_[rng.normal(0, 2e-4, (n, 3)), rng.normal(0, 1e-4, (n, 3))])
    X0 = X @ se3.se3_exp([0.01, -0.005, 0.004, 0.005, -0.003, 0.002])
    Y0 = Y @ se3.se3_exp([-0.004, 0.006, 0.003, 0.002, 0.004, -0.003])
    fit = hp.pixel_ml(A_meas, X0, Y0, "eye_in_hand", [pts[s] for s in seen], [u[s] for u, s in zip(uv, seen)], k)
    e = _err6(fit.X, X)
    assert float(e @ np.linalg.solve(fit.cov[:6, :6], e)) < CHI2_6_999
    assert np.linalg.norm(e[3:]) < 1e-3 and abs(fit.pixel_std / 0.3 - 1) < 0.1


# --------------------------------------------------------------------------- #
# the pinhole path and the pixel-space path agree where the models coincide
# --------------------------------------------------------------------------- #
def test_rational_with_zero_coefficients_is_the_pinhole_path():
    """A pinhole without distortion as nine intrinsics (the normalised residuals ``f (m - pi(C P))``) and as the
    rational model's twelve with every coefficient zero (pixel residuals ``uv - project(k, C P)``): the same model
    and so the same fit, X, Y, covariance and noise levels, to rounding."""
    r = lens_recipe(sequence_id="lens-pin", seed=5, configuration="eye_to_hand", target="checker_9x6_25mm")
    k12 = np.r_[_intrinsics("rational_120")[:4], np.zeros(8)]
    k9 = k12[:9]
    obs, truth = fisheye_observations_from_recipe(r, "rational_120", pixel_std=0.0)
    # the corners of the recording re-drawn through the pinhole of the same focal length, with 0.3 px noise
    X, Y = (transform_from_pose_json(truth["poses"][n]) for n in ("X", "Y"))
    C = pm.predicted_camera_poses(obs.T_base_ee, X, Y, obs.mode)
    rng = np.random.default_rng(3)
    uv = [project_points(k9, (C[i, :3, :3] @ p.T).T + C[i, :3, 3]) + 0.3 * rng.standard_normal((len(p), 2))
          for i, p in enumerate(obs.points_3d)]  # fmt: skip
    A = obs.T_base_ee @ se3.se3_exp(np.c_[rng.normal(0, 2e-4, (obs.n_views, 3)), rng.normal(0, 1e-4, (obs.n_views, 3))])
    X0 = X @ se3.se3_exp([0.004, -0.003, 0.002, 0.002, -0.001, 0.003])
    p9 = hp.pixel_ml(A, X0, Y, obs.mode, obs.points_3d, uv, k9)
    p12 = hp.pixel_ml(A, X0, Y, obs.mode, obs.points_3d, uv, k12)
    assert isinstance(hp._problem(A, pack_views(obs.points_3d, uv), k9, obs.mode), hp._Problem)
    assert not isinstance(hp._problem(A, pack_views(obs.points_3d, uv), k9, obs.mode), hp._LensProblem)
    np.testing.assert_allclose(_err6(p12.X, p9.X), 0.0, atol=1e-9)
    np.testing.assert_allclose(_err6(p12.Y, p9.Y), 0.0, atol=1e-9)
    np.testing.assert_allclose(p12.cov, p9.cov, rtol=1e-5, atol=1e-5 * np.abs(p9.cov).max())
    np.testing.assert_allclose([p12.pixel_std, p12.robot_rot_std_rad, p12.robot_trans_std_m],
                               [p9.pixel_std, p9.robot_rot_std_rad, p9.robot_trans_std_m], rtol=1e-5)  # fmt: skip
    # and both are the truth within their covariance
    e = _err6(p9.X, X)
    assert float(e @ np.linalg.solve(p9.cov[:6, :6], e)) < CHI2_6_999


# --------------------------------------------------------------------------- #
# input checks
# --------------------------------------------------------------------------- #
def test_bad_intrinsics_length_is_named():
    A, B, views, X, Y = _recording("rational_120", "eye_in_hand", 0)
    bad = PixelViews(views.points_3d, views.points_2d, views.image_size, views.configuration, views.intrinsics[:10])
    with pytest.raises(InputError, match=r"pixels\.intrinsics: expected 9 .*8 .*12 .*got 10 values"):
        he_ml(A, B, pixels=bad)
    with pytest.raises(InputError, match=r"intrinsics: expected 9 .*got 7 values"):
        hp.pixel_ml(A, X, Y, "eye_in_hand", views.points_3d, views.points_2d, views.intrinsics[:7])
    with pytest.raises(InputError, match=r"fx, fy > 0"):
        hp.pixel_ml(A, X, Y, "eye_in_hand", views.points_3d, views.points_2d, np.r_[-1.0, views.intrinsics[1:]])


def test_a_view_behind_a_rational_camera_is_named():
    """A start that puts one view's target behind the camera: the rational model refuses it naming the view (and
    any step there costs infinitely much); the fisheye takes it; the pinhole's normalised residuals are evaluated
    at any depth, as they were before the lens models came, and its fit runs."""
    from kinhec.solvers.he_ml_stages.pixels import BehindCameraError

    A, B, views, X, Y = _recording("rational_120", "eye_in_hand", 1)
    k = views.intrinsics
    A_bad = A.copy()
    A_bad[3] = A[3] @ se3.transform_from_rotation_translation(se3.so3_exp([np.pi, 0.0, 0.0]), np.zeros(3))
    C = pm.predicted_camera_poses(A_bad, X, Y, "eye_in_hand")
    z = np.einsum("nk,pk->np", C[3:4, 2, :3], views.points_3d[3]) + C[3:4, 2, 3:]
    assert np.all(z < 0)  # the flange turned half a turn about its x axis: the target behind the camera
    with pytest.raises(BehindCameraError, match=r"view 3 has target points on or behind the camera's plane .*rational"):
        hp.pixel_ml(A_bad, X, Y, "eye_in_hand", views.points_3d, views.points_2d, k)
    packed = pack_views(views.points_3d, views.points_2d)
    assert np.isinf(hp._problem(A_bad, packed, k, "eye_in_hand").residuals(C)[0]).all()
    fe = hp._problem(A_bad, packed, _intrinsics("fisheye_180"), "eye_in_hand")
    assert fe.behind(C).tolist() == [False] * len(C) and np.isfinite(fe.residuals(C)[0]).all()
    pin = hp.pixel_ml(A_bad, X, Y, "eye_in_hand", views.points_3d, views.points_2d, np.r_[k[:4], np.zeros(5)])
    assert np.isfinite(pin.X).all()


def test_corners_start_from_the_poses_where_the_pixel_stage_refuses(monkeypatch):
    """``calibrate_corners`` of a rational lens whose pixel stage refuses its start: ``X`` and ``Y`` from the pose
    pairs, the bundle from there (a note says so), and the result the truth within its covariance."""
    import kinhec.calibrate.corners as corners
    from kinhec.solvers.he_ml_stages.pixels import BehindCameraError

    real = corners.he_ml

    def refusing(A, B, **kw):
        if kw.get("pixels") is not None:
            raise BehindCameraError("pixels: view 2 has target points on or behind the camera's plane")
        return real(A, B, **kw)

    monkeypatch.setattr(corners, "he_ml", refusing)
    r = lens_recipe(sequence_id="lens-fb", seed=6, configuration="eye_in_hand", target=TARGETS["eye_in_hand"],
                    n_stations=10)  # fmt: skip
    obs, truth = fisheye_observations_from_recipe(r, "rational_120", tilt_deg=20.0)
    res = corners.calibrate_corners(obs)
    assert any(n.startswith("X and Y started from the pose pairs, not from the pixels: pixels: view 2") for n in res.notes)
    e = _err6(res.X, transform_from_pose_json(truth["poses"]["X"]))
    assert float(e @ np.linalg.solve(res.cov[:6, :6], e)) < CHI2_6_999
