"""Every covariance kinhec reports against the scatter of its estimates, every nuisance level against the truth.

Each test draws fresh noise many times on one small fixed geometry (fixed seeds), runs the estimator and
sums the normalised squared errors ``e^T cov^-1 e`` over the draws: with the right covariance the sum is
chi-square with ``dim x draws`` degrees of freedom, and it must lie within that distribution's two-sided
99.9 % interval (:func:`assert_nees`).  The noise levels an estimator reports are compared with the levels
that drew the data, with bounds that the solvers' starting values would not meet.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from kinhec.geometry import se3
from kinhec.models import noise
from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml import he_ml
from kinhec.solvers.he_ml_stages import reweighting

from helpers.chains import make_chain

C3 = noise.camera_level("c3")
R2 = noise.robot_level("r2")
KNOWN = {"camera_rot_std_rad": C3[0], "camera_trans_std_m": C3[1], "camera_trans_std_z_m": C3[3],
         "robot_rot_std_rad": R2[0], "robot_trans_std_m": R2[1]}  # fmt: skip


def nees_interval(d2: np.ndarray, dim: int) -> tuple[float, float, float]:
    """Mean normalised squared error per dimension of ``d2`` (M,) and its two-sided 99.9 % chi-square interval."""
    M = d2.size
    lo, hi = stats.chi2.ppf([0.0005, 0.9995], dim * M) / (dim * M)
    return float(d2.mean()) / dim, float(lo), float(hi)


def assert_nees(d2, dim, what):
    mean, lo, hi = nees_interval(np.asarray(d2, dtype=np.float64), dim)
    assert lo < mean < hi, f"{what}: mean NEES / {dim} = {mean:.3f}, expected within [{lo:.3f}, {hi:.3f}]"


def _err12(res, X, Y):
    return np.r_[se3.se3_log(se3.invert_transform(X) @ res.X), se3.se3_log(se3.invert_transform(Y) @ res.Y)]


def _draws(n_pairs, seed, configuration="eye_in_hand", dof=None):
    """A fixed chain and a generator of its noisy pairs (the generator's noise functions)."""
    rng = np.random.default_rng(seed)
    ch = make_chain(rng, n_pairs, configuration=configuration)
    C = pm.camera_poses(ch.B_abs_gt, configuration)

    def draw():
        A = noise.robot_se3_gaussian(ch.A_abs_gt, R2[0], R2[1], rng)
        Cm = noise.camera_se3_gaussian(C, C3[0], C3[1], C3[3], rng, student_t_dof=dof)
        return A, pm.camera_poses(Cm, configuration)

    return ch, C, draw


# --------------------------------------------------------------------------- #
# he_ml on poses
# --------------------------------------------------------------------------- #
def test_he_ml_covariance_with_known_noise():
    """12 pairs, the noise levels given: the covariance of ``(X, Y)`` is the scatter of 200 estimates."""
    ch, _, draw = _draws(12, 40)
    d2 = []
    for _ in range(200):
        A, B = draw()
        res = he_ml(A, B, configuration="eye_in_hand", noise=KNOWN, scale=False, robust=False)
        e = _err12(res, ch.X, ch.Y)
        d2.append(e @ np.linalg.solve(res.cov, e))
    assert_nees(np.array(d2), 12, "he_ml, known noise")


def test_he_ml_estimated_noise_is_unbiased():
    """8 pairs, 48 residuals for 12 parameters and 5 variance components: the estimated noise, corrected for the
    degrees of freedom the fit takes (without it the variances come out (48 - 12) / 48 = 0.75 of the truth),
    matches the generated noise.

    The statistic is the mean over 150 draws of ``tr(S_i^-1 S_hat_i) / 6`` over the pairs, ``S_i`` the true and
    ``S_hat_i`` the estimated covariance of pair ``i`` (robot and camera noise are confounded in the camera
    frame, so only the totals are identified): 1 for unbiased levels, within 0.1 (five standard errors).
    """
    ch, C, draw = _draws(8, 41)
    _, G = pm.pair_jacobians(C, ch.X, "eye_in_hand")
    S_inv = np.linalg.inv(pm.camera_covariance(C, C3[0], C3[1], C3[3]) + pm.robot_covariance(G, *R2))
    ratio = []
    for _ in range(150):
        A, B = draw()
        z = he_ml(A, B, configuration="eye_in_hand", scale=False, robust=False).noise
        S_hat = (pm.camera_covariance(C, z["camera_rot_std_rad"], z["camera_trans_std_m"], z["camera_trans_std_z_m"])
                 + pm.robot_covariance(G, z["robot_rot_std_rad"], z["robot_trans_std_m"]))  # fmt: skip
        ratio.append(np.einsum("nij,nji->", S_inv, S_hat) / (6 * C.shape[0]))
    mean, sem = float(np.mean(ratio)), float(np.std(ratio) / math.sqrt(len(ratio)))
    assert abs(mean - 1.0) < 0.1, f"estimated / true variance {mean:.3f} +- {sem:.3f}"


def test_student_t_likelihood_is_the_density():
    """The likelihood that picks the Student-t degrees of freedom is the log density, constants and all (the
    Gaussian is the limit): comparing log densities without their constants picks the wrong model."""
    rng = np.random.default_rng(3)
    M = rng.normal(size=(5, 6, 6))
    S = M @ np.swapaxes(M, 1, 2) + 0.5 * np.eye(6)
    x = rng.normal(size=(5, 6)) * 2.0
    d2 = np.einsum("ni,nij,nj->n", x, np.linalg.inv(S), x)
    logdet = np.linalg.slogdet(S)[1]
    for nu in (3.0, 5.0, 10.0):
        ref = sum(stats.multivariate_t.logpdf(x[i], shape=S[i], df=nu) for i in range(5))
        assert reweighting.t_loglik(d2, logdet, nu) == pytest.approx(ref, rel=1e-12)
    ref = sum(stats.multivariate_normal.logpdf(x[i], cov=S[i]) for i in range(5))
    assert reweighting.t_loglik(d2, logdet, math.inf) == pytest.approx(ref, rel=1e-12)


def test_he_ml_finds_heavy_tails_and_applies_their_information():
    """Camera noise Student-t with 3 degrees of freedom: he_ml weights the pairs as Student-t (finite ``nu``, on
    most draws; Gaussian noise keeps Gaussian weights), and its covariance is the inverse of the expected
    information ``(nu + 6) / (nu + 8) sum J^T Sigma^-1 J`` over the inliers (the factor itself is checked
    against a Monte-Carlo of the score in test_bound_branches)."""
    nus = {3.0: [], None: []}
    for dof in nus:
        ch, _, draw = _draws(40, 42, dof=dof)
        for _ in range(6):
            A, B = draw()
            res = he_ml(A, B, configuration="eye_in_hand", noise=KNOWN, scale=False)
            nus[dof].append(res.dof)
            if dof is not None and np.isfinite(res.dof):
                Cp = pm.predicted_camera_poses(A, res.X, res.Y, "eye_in_hand")
                J, G = pm.pair_jacobians(Cp, res.X, "eye_in_hand")
                S = pm.camera_covariance(Cp, C3[0], C3[1], C3[3]) + pm.robot_covariance(G, *R2)
                i = res.inliers
                H = np.einsum("nip,nij,njq->pq", J[i], np.linalg.inv(S[i]), J[i])
                f = (res.dof + 6.0) / (res.dof + 8.0)
                np.testing.assert_allclose(res.cov, np.linalg.inv(f * H), rtol=1e-6,
                                           atol=1e-9 * np.abs(res.cov).max())  # fmt: skip
    assert sum(np.isfinite(nus[3.0])) >= 4, nus
    assert not any(np.isfinite(nus[None])), nus


# --------------------------------------------------------------------------- #
# he_ml on the pixels
# --------------------------------------------------------------------------- #
def test_pixel_stage_covariance_and_noise_levels():
    """25 views of a 7 x 5 checkerboard (eye-to-hand), 0.5 px pixel noise and a robot whose flange twist errors
    (3 mrad, 2 mm) dominate: over 40 draws the covariance of ``(X, Y)``, robot errors marginalised, is the
    scatter of the estimates, and the pixel and robot levels are the generated ones (the robot levels start at
    1 mrad and 1 mm, a third and a half of the truth, well outside the bounds)."""
    from kinhec.synth.observations import recipe_pixels
    from kinhec.solvers.he_ml_stages.pixels import pixel_ml

    recipe = dict(sequence_id="pix-c", seed=31, robot="ur5e", configuration="eye_to_hand", family="lookat",
                  sampling_mode="stations", n_stations=25, camera="vga", target="checker_7x5_20mm",
                  camera_noise_model="pnp", pixel_std=0.0, robot_noise_models=("se3_gaussian",))  # fmt: skip
    px = recipe_pixels(recipe)
    keep = np.flatnonzero(px.has_measurement)
    A0, det, uv0 = px.T_base_ee_meas[keep], px.detected[keep], px.uv_px[keep]
    s_px, r_rot, r_tr = 0.5, 3e-3, 2e-3
    rng = np.random.default_rng(44)
    d2, levels = [], []
    for _ in range(40):
        A = noise.robot_se3_gaussian(A0, r_rot, r_tr, rng)
        uv = uv0 + s_px * rng.standard_normal(uv0.shape)
        fit = pixel_ml(A, px.X, px.Y, px.configuration, [px.points_m[d] for d in det],
                       [u[d] for u, d in zip(uv, det)], px.intrinsics)  # fmt: skip
        e = _err12(fit, px.X, px.Y)
        d2.append(e @ np.linalg.solve(fit.cov, e))
        levels.append([fit.pixel_std / s_px, fit.robot_rot_std_rad / r_rot, fit.robot_trans_std_m / r_tr])
    assert_nees(np.array(d2), 12, "pixel stage")
    px_ratio, rot_ratio, tr_ratio = np.mean(levels, axis=0)
    assert abs(px_ratio - 1.0) < 0.03, px_ratio
    assert abs(tr_ratio - 1.0) < 0.15, tr_ratio
    # the rotation level is the weakly determined one (3 of the 6 dof of each view's robot error, against a small
    # target's PnP rotation): its estimates scatter by about 30 %, its mean by about 6 %
    assert abs(rot_ratio - 1.0) < 0.4, rot_ratio


# --------------------------------------------------------------------------- #
# calibrate's refinement
# --------------------------------------------------------------------------- #
def test_calibrate_refinement_covariance():
    """``kinhec calibrate``'s joint refinement of ``X`` and ``Y`` (60 pairs paired by order, its noise model
    estimated from the residuals): its covariance is the scatter of 100 estimates (errors in the parametrisation
    of its standard deviations: rotation in the estimate's frame, translation in the parent frame)."""
    from kinhec.calibrate import solve
    from kinhec.calibrate.pairing import OrderPairing

    ch, _, draw = _draws(60, 43)

    def right_error(T_est, T_true):
        return np.r_[se3.so3_log(T_est[:3, :3].T @ T_true[:3, :3]), T_true[:3, 3] - T_est[:3, 3]]

    d2 = []
    idx = np.arange(60)
    for _ in range(100):
        A, B = draw()
        sol = solve.refine(OrderPairing(A, B, idx, idx), ch.X, ch.Y, inverse_domain=True)
        e = np.r_[right_error(sol.X, ch.X), right_error(sol.Y, ch.Y)]
        d2.append(e @ np.linalg.solve(sol.cov[:12, :12], e))
    assert_nees(np.array(d2), 12, "calibrate refinement")


def test_he_ml_covariance_agrees_with_its_reported_noise():
    """7 pairs, the noise estimated (five components, corrected for the 12 fitted parameters): the covariance he_ml
    reports is the inverse information of the noise levels it reports, ``(sum J^T Sigma^-1 J)^-1`` with ``Sigma``
    built from ``res.noise`` at the solution, whichever path its last round took."""
    ch, C, draw = _draws(7, 45)
    for _ in range(5):
        A, B = draw()
        res = he_ml(A, B, configuration="eye_in_hand", scale=False)
        z = res.noise
        Cp = pm.predicted_camera_poses(A, res.X, res.Y, "eye_in_hand")
        J, G = pm.pair_jacobians(Cp, res.X, "eye_in_hand")
        S = (pm.camera_covariance(Cp, z["camera_rot_std_rad"], z["camera_trans_std_m"], z["camera_trans_std_z_m"])
             + pm.robot_covariance(G, z["robot_rot_std_rad"], z["robot_trans_std_m"]))  # fmt: skip
        H = np.einsum("nip,nij,njq->pq", J, np.linalg.inv(S), J)
        np.testing.assert_allclose(res.cov, np.linalg.inv(H), rtol=1e-5, atol=1e-9 * np.abs(res.cov).max())
