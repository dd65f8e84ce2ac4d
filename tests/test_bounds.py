"""The Cramér-Rao bound (kinhec.evaluate.bounds): model against the generator's noise code, and Monte-Carlo of an efficient estimator."""

from __future__ import annotations

import math
import numpy as np
import pytest

from kinhec.evaluate import bounds
from kinhec.geometry import se3
from kinhec.models import noise
from kinhec import io as kio
from kinhec.models.cameras import get_camera, get_target
from kinhec.util.errors import InputError
from kinhec.models.pnp import simulate_pnp
from kinhec.synth.runner import generate_dataset
from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml import he_ml

from helpers.chains import make_chain


def _camera_meas(chain):
    return pm.camera_poses(chain.B_abs_gt, chain.configuration)


def test_jacobians_match_finite_differences():
    rng = np.random.default_rng(3)
    for conf in pm.CONFIGURATIONS:
        ch = make_chain(rng, 5, configuration=conf)
        C = _camera_meas(ch)
        J, G = pm.pair_jacobians(C, ch.X, conf)
        # the same from the inverse poses
        J_i, G_i = pm.pair_jacobians(None, ch.X, conf, C_inv=se3.invert_transform(C))
        np.testing.assert_allclose(J_i, J, atol=1e-14)
        np.testing.assert_allclose(G_i, G, atol=1e-14)
        h = 1e-6
        for k in range(12):
            d = np.zeros(6)
            d[k % 6] = h
            Xp = ch.X @ se3.se3_exp(d) if k < 6 else ch.X
            Yp = ch.Y @ se3.se3_exp(d) if k >= 6 else ch.Y
            num = pm.residuals(pm.predicted_camera_poses(ch.A_abs_gt, Xp, Yp, conf), C) / h
            np.testing.assert_allclose(num, J[:, :, k], atol=1e-5)
        for k in range(6):
            d = np.zeros(6)
            d[k] = h
            num = pm.residuals(pm.predicted_camera_poses(ch.A_abs_gt @ se3.se3_exp(d), ch.X, ch.Y, conf), C) / h
            np.testing.assert_allclose(num, G[:, :, k], atol=1e-5)


@pytest.mark.parametrize("shape", [(6, 6), (7, 6, 6), (5, 3, 6, 6), (4, 2, 2)])
def test_inverse_cholesky(shape):
    rng = np.random.default_rng(5)
    M = rng.normal(size=shape[:-1] + (shape[-1] + 2,))
    S = M @ np.swapaxes(M, -1, -2)
    Li = pm.inverse_cholesky(S)
    assert Li.shape == S.shape
    eye = np.eye(shape[-1])
    np.testing.assert_allclose(Li @ np.linalg.cholesky(S), np.broadcast_to(eye, S.shape), atol=1e-12)
    np.testing.assert_array_equal(np.triu(Li, 1), 0.0)  # lower triangular
    np.testing.assert_allclose(np.swapaxes(Li, -1, -2) @ Li, np.linalg.inv(S), rtol=1e-10,
                               atol=1e-12 * np.abs(np.linalg.inv(S)).max())  # fmt: skip
    # whitening: residuals drawn with covariance S come out with unit covariance
    if S.ndim == 2:
        r = rng.multivariate_normal(np.zeros(shape[-1]), S, size=20000)
        np.testing.assert_allclose(np.cov((r @ Li.T).T), eye, atol=0.05)
    with pytest.raises(np.linalg.LinAlgError):
        pm.inverse_cholesky(-S)


def test_camera_covariance_matches_the_generator_noise():
    """Normalised camera errors drawn by kinhec.models.noise have mean chi-square 6 and the predicted covariance."""
    rng = np.random.default_rng(4)
    ch = make_chain(rng, 4000, configuration="eye_in_hand")
    C = _camera_meas(ch)
    lv = noise.camera_level("c3")
    Cm = noise.camera_se3_gaussian(C, lv[0], lv[1], lv[3], np.random.default_rng(5))
    rho = pm.residuals(Cm, C)
    S = pm.camera_covariance(C, lv[0], lv[1], lv[3])
    d2 = np.einsum("ni,nij,nj->n", rho, np.linalg.inv(S), rho)
    assert abs(d2.mean() - 6.0) < 0.2
    # depth noise really is along the camera z axis: the camera-frame translation error
    e = np.einsum("nij,nj->ni", C[:, :3, :3], rho[:, 3:])
    np.testing.assert_allclose(e.std(axis=0), [lv[1], lv[1], lv[3]], rtol=0.05)


def test_robot_covariance_matches_the_generator_noise():
    rng = np.random.default_rng(6)
    ch = make_chain(rng, 4000, configuration="eye_to_hand")
    C = _camera_meas(ch)
    r_rot, r_tr = noise.robot_level("r3")
    A = noise.robot_se3_gaussian(ch.A_abs_gt, r_rot, r_tr, np.random.default_rng(7))
    rho = pm.residuals(pm.predicted_camera_poses(A, ch.X, ch.Y, "eye_to_hand"), C)
    _, G = pm.pair_jacobians(C, ch.X, "eye_to_hand")
    S = pm.robot_covariance(G, r_rot, r_tr)
    d2 = np.einsum("ni,nij,nj->n", rho, np.linalg.inv(S), rho)
    assert abs(d2.mean() - 6.0) < 0.2


def _monte_carlo(ch, n_trials, draw, known):
    """Errors (n_trials, 6) of X from he_ml with the known noise, on fresh draws of the same poses."""
    rng = np.random.default_rng(11)
    errs = []
    for _ in range(n_trials):
        A, B = draw(rng)
        res = he_ml(A, B, configuration=ch.configuration, noise=known, scale=False, robust=False)
        errs.append(se3.se3_log(se3.invert_transform(ch.X) @ res.X))
    return np.array(errs)


def _median_errors(E):
    return (math.degrees(float(np.median(np.linalg.norm(E[:, :3], axis=1)))),
            1000.0 * float(np.median(np.linalg.norm(E[:, 3:], axis=1))))  # fmt: skip


@pytest.mark.parametrize("configuration", ["eye_in_hand", "eye_to_hand"])
def test_bound_matches_monte_carlo_of_the_ml_estimator(configuration):
    """The ML solver on pairs drawn by the generator's noise code reaches the bound within 10 %."""
    ch = make_chain(np.random.default_rng(21), 25, configuration=configuration)
    C = _camera_meas(ch)
    cr, cxy, _, cz = noise.camera_level("c3")
    rr, rt = noise.robot_level("r3")
    known = {"camera_rot_std_rad": cr, "camera_trans_std_m": cxy, "camera_trans_std_z_m": cz,
             "robot_rot_std_rad": rr, "robot_trans_std_m": rt}  # fmt: skip
    b = bounds.bound_from_pairs(ch.A_abs_gt, C, ch.X, ch.Y, configuration,
                                camera_cov=pm.camera_covariance(C, cr, cxy, cz),
                                robot_cov=np.broadcast_to(np.diag([rr**2] * 3 + [rt**2] * 3), (25, 6, 6)),
                                rng=np.random.default_rng(0))  # fmt: skip

    def draw(rng):
        A = noise.robot_se3_gaussian(ch.A_abs_gt, rr, rt, rng)
        Cm = noise.camera_se3_gaussian(C, cr, cxy, cz, rng)
        return A, pm.camera_poses(Cm, configuration)  # inv is its own inverse: B from T_cam_target

    E = _monte_carlo(ch, 300, draw, known)
    rot, trans = _median_errors(E)
    assert rot == pytest.approx(b.X_rot_deg, rel=0.10)
    assert trans == pytest.approx(b.X_trans_mm, rel=0.10)
    # and the whole covariance, not only the medians: mean NEES of the bound's covariance is 6
    nees = np.einsum("ni,ij,nj->n", E, np.linalg.inv(b.cov_X), E)
    assert nees.mean() == pytest.approx(6.0, rel=0.15)


@pytest.mark.heavy
def test_pnp_bound_matches_monte_carlo():
    """PnP pixel noise through the PnP Jacobian: ML on PnP poses from noisy pixels reaches the bound."""
    cam, tgt = get_camera("vga"), get_target("checker_9x6_25mm")
    rng = np.random.default_rng(31)
    # eye-in-hand views of the board from 0.3-0.5 m, board well inside the image
    n = 20
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.1, -0.2, 0.3]), [0.03, -0.02, 0.06])
    Y = se3.transform_from_rotation_translation(np.eye(3), [0.5, 0.0, 0.0])
    centre = tgt.points_m.mean(axis=0)
    C = np.empty((n, 4, 4))
    for i in range(n):
        R = se3.so3_exp(np.r_[rng.uniform(-0.5, 0.5, 2), rng.uniform(-np.pi, np.pi)])
        p = -R @ centre + np.r_[rng.uniform(-0.03, 0.03, 2), rng.uniform(0.3, 0.5)]
        C[i] = se3.transform_from_rotation_translation(R, p)
    A = Y @ se3.invert_transform(C) @ se3.invert_transform(X)
    px = 0.5
    b = bounds.bound_from_pairs(A, C, X, Y, "eye_in_hand", camera_cov=bounds.pnp_covariance(C, cam, tgt, px),
                                rng=np.random.default_rng(0))  # fmt: skip
    errs = []
    Sig = bounds.pnp_covariance(C, cam, tgt, px)
    for _ in range(150):
        Cm = simulate_pnp(cam, tgt, C, px, rng, available=np.ones(n, dtype=bool)).T_cam_target
        # ML with the exact per-pair covariance: one Gauss-Newton step from the truth is the efficient estimate
        J, _ = pm.pair_jacobians(C, X, "eye_in_hand")
        r = pm.residuals(Cm, C)
        W = np.linalg.inv(Sig)
        H = np.einsum("nip,nij,njq->pq", J, W, J)
        g = np.einsum("nip,nij,nj->p", J, W, r)
        errs.append(np.linalg.lstsq(H, g, rcond=None)[0][:6])
    rot, trans = _median_errors(np.array(errs))
    assert rot == pytest.approx(b.X_rot_deg, rel=0.12)
    assert trans == pytest.approx(b.X_trans_mm, rel=0.12)


def test_nuisance_parameters_only_loosen_the_bound():
    ch = make_chain(np.random.default_rng(41), 20, configuration="eye_in_hand")
    C = _camera_meas(ch)
    cov = pm.camera_covariance(C, 0.002, 0.001, 0.003)
    known = bounds.bound_from_pairs(ch.A_abs_gt, C, ch.X, ch.Y, "eye_in_hand", camera_cov=cov)
    scaled = bounds.bound_from_pairs(ch.A_abs_gt, C, ch.X, ch.Y, "eye_in_hand", camera_cov=cov, scale_unknown=True)
    assert np.all(np.linalg.eigvalsh(scaled.cov_X - known.cov_X) > -1e-15)
    assert scaled.X_trans_mm >= known.X_trans_mm
    # more pairs -> a tighter bound (information adds up)
    half = bounds.bound_from_pairs(ch.A_abs_gt[:10], C[:10], ch.X, ch.Y, "eye_in_hand", camera_cov=cov[:10])
    assert half.X_rot_deg > known.X_rot_deg and half.X_trans_mm > known.X_trans_mm


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    root = tmp_path_factory.mktemp("bounds") / "data"
    assert generate_dataset("smoke", root, workers=1, limit=2, progress=False).ok
    return root


def test_sequence_bound_reads_the_sequence_noise(smoke):
    """Every track gets a finite bound; outliers and DH errors are flagged; se3 noise is read from the index."""
    man = kio.load_manifest(smoke)
    flagged = {}
    for seq in kio.iter_sequences(smoke, man):
        b = bounds.sequence_bound(seq)
        assert np.isfinite([b.X_rot_deg, b.Y_rot_deg]).all(), seq.sequence_id
        one_axis = float(seq.info["axis_scatter_lambda2"]) < 1e-4  # rotations about one axis: translation undetermined
        assert np.isfinite([b.X_trans_mm, b.Y_trans_mm]).all() != one_axis, seq.sequence_id
        assert b.X_rot_deg > 0 and b.X_trans_mm > 0
        outl = float(seq.info["outlier_fraction"]) > 0
        dh = "dh_error" in str(seq.info["robot_noise_models"])
        assert b.modelled == (not outl and not dh)
        flagged[seq.track] = b.modelled
        i = seq.info
        if seq.track == "noise":
            _, _, idx = seq.axyb_keyframe_poses(return_index=True)
            C = seq.camera.T_cam_target_gt[idx]
            ref = bounds.bound_from_pairs(
                seq.camera.T_base_ee_gt[idx], C, seq.X, seq.Y, seq.configuration,
                camera_cov=pm.camera_covariance(C, float(i.camera_rot_std_rad), float(i.camera_trans_std_m),
                                                float(i.camera_trans_std_z_m)),
                robot_cov=np.broadcast_to(np.diag([float(i.robot_rot_std_rad) ** 2] * 3
                                                  + [float(i.robot_trans_std_m) ** 2] * 3), (idx.size, 6, 6)),
            )  # fmt: skip
            np.testing.assert_allclose(b.cov, ref.cov, rtol=1e-9)
    assert flagged.get("noise") is True


def test_degenerate_motion_has_an_infinite_translation_bound():
    """Rotations about one axis only leave the translation of X along it undetermined: no finite bound."""
    ch = make_chain(np.random.default_rng(51), 12, configuration="eye_in_hand")
    A = ch.A_abs_gt.copy()
    A[:, :3, :3] = A[0, :3, :3] @ se3.so3_exp(np.outer(np.linspace(-1.0, 1.0, 12), [0.0, 0.0, 1.0]))
    C = pm.predicted_camera_poses(A, ch.X, ch.Y, "eye_in_hand")
    b = bounds.bound_from_pairs(A, C, ch.X, ch.Y, "eye_in_hand", camera_cov=pm.camera_covariance(C, 0.002, 0.001, 0.003))
    assert math.isfinite(b.X_rot_deg) and b.X_trans_mm == math.inf


def test_median_errors_are_deterministic_and_match_the_chi_distribution():
    """Isotropic blocks: |omega| is sigma times a chi(3) variable, whose median is sqrt(2.3660) = 1.5382."""
    from scipy import stats

    s_r, s_t = 1e-3, 2e-3
    cov = np.diag([s_r**2] * 3 + [s_t**2] * 3)
    rot_deg, trans_mm = bounds.median_errors(cov)
    assert (rot_deg, trans_mm) == bounds.median_errors(cov)  # one fixed set of draws: the same every call
    m = np.sqrt(stats.chi2.median(3))
    assert rot_deg == pytest.approx(np.degrees(s_r * m), rel=0.01)
    assert trans_mm == pytest.approx(1000 * s_t * m, rel=0.01)
    # one axis only: |omega| is |N(0, s^2)|, median 0.6745 s
    one = np.zeros((6, 6))
    one[0, 0] = s_r**2
    assert bounds.median_errors(one)[0] == pytest.approx(np.degrees(0.6745 * s_r), rel=0.01)


def test_exact_median_is_numpys_median_bit_for_bit():
    """The bracketed selection returns np.median's value exactly: sums of squared normals as median_errors makes
    them, odd and even sizes round the subsample's threshold, heavy ties, NaN throughout, and a subsample that
    misses the middle (the whole array is then selected)."""
    rng = np.random.default_rng(73)
    z2 = bounds._squared_normals(bounds.N_SAMPLES)
    cases = [z2 @ (rng.random(3) * 10.0 ** rng.integers(-12, 3)) for _ in range(200)]
    cases += [z2 @ np.array([0.0, 0.0, 2e-7]), z2 @ np.zeros(3)]
    cases += [rng.standard_normal(n) for n in (1, 2, 255, 256, 257, 1000, 1001, 20001)]
    cases += [np.round(3 * rng.standard_normal(20000)), np.full(5000, 0.25)]
    skewed = np.arange(20000, dtype=np.float64)
    skewed[:: bounds._BRACKET_STRIDE] = -1.0  # the strided subsample holds none of the middle values
    cases.append(skewed)
    cases += [rng.standard_normal((100, 201)), rng.integers(0, 1000, 4001)]  # flattened, as np.median does
    for v in cases:
        assert bounds.exact_median(v) == float(np.median(v))
    assert math.isnan(bounds.exact_median(np.full(20000, np.nan)))


@pytest.mark.parametrize("first_is_reference", [False, True])
def test_random_walks_give_the_dense_bound(first_is_reference):
    """A camera random walk (differenced to a block-tridiagonal, banded Cholesky) and a log-scale walk (Woodbury
    with its tridiagonal precision) give the bound of the dense 6N x 6N covariance they stand for; with the
    first pair as the scale's reference (increment variance 0) too."""
    rng = np.random.default_rng(61)
    ch = make_chain(rng, 14, configuration="eye_in_hand")
    C = _camera_meas(ch)
    n = C.shape[0]
    M = rng.normal(size=(n, 6, 6)) * np.r_[1e-3, 1e-3, 1e-3, 2e-3, 2e-3, 2e-3][:, None]
    walk = M @ np.swapaxes(M, 1, 2)  # unequal increments, correlated axes
    cam = pm.camera_covariance(C, 0.002, 0.001, 0.003)
    robot = np.broadcast_to(np.diag([3e-4**2] * 3 + [2e-4**2] * 3), (n, 6, 6))
    frames = np.cumsum(rng.integers(1, 5, size=n)) - (1 if first_is_reference else 0)
    frames -= frames[0] if first_is_reference else 0
    v = 0.003**2 * np.diff(np.r_[0.0, frames])
    assert (v[0] == 0) == first_is_reference
    u = pm.scale_jacobian(C)
    S = np.cumsum(walk, axis=0)[np.minimum.outer(np.arange(n), np.arange(n))]  # cov(rho_j, rho_k) = S_min(j, k)
    full = S.transpose(0, 2, 1, 3).reshape(6 * n, 6 * n)
    m = 0.003**2 * np.minimum.outer(frames, frames).astype(float)  # cov(q_j, q_k) along the scale directions u
    full += np.einsum("jk,ja,kb->jakb", m, u, u).reshape(6 * n, 6 * n)
    dense = bounds.bound_from_pairs(ch.A_abs_gt, C, ch.X, ch.Y, "eye_in_hand", camera_cov=cam, camera_cov_full=full,
                                    robot_cov=robot, scale_unknown=True)  # fmt: skip
    walks = bounds.bound_from_pairs(ch.A_abs_gt, C, ch.X, ch.Y, "eye_in_hand", camera_cov=cam, robot_cov=robot,
                                    camera_walk=walk, scale_walk=v, scale_unknown=True)  # fmt: skip
    np.testing.assert_allclose(walks.cov, dense.cov, rtol=1e-9, atol=1e-12 * np.abs(dense.cov).max())
    # the walks matter: without them the bound is several times tighter
    plain = bounds.bound_from_pairs(ch.A_abs_gt, C, ch.X, ch.Y, "eye_in_hand", camera_cov=cam, robot_cov=robot,
                                    scale_unknown=True)  # fmt: skip
    assert dense.X_trans_mm > 2.0 * plain.X_trans_mm
    with pytest.raises(InputError, match="scale_walk"):
        bounds.bound_from_pairs(ch.A_abs_gt, C, ch.X, ch.Y, "eye_in_hand", camera_cov=cam, scale_walk=-v)


def test_constrained_covariance_is_the_conditional_covariance():
    """With components fixed, the bound is the inverse of the information restricted to the others: for a full-rank
    information the conditional covariance of the others given the fixed ones (Schur complement of ``inv(F)``); for
    one with a null direction that the fixed component breaks, finite, with the fixed rows 0."""
    rng = np.random.default_rng(71)
    G = rng.normal(size=(40, 12)) * np.r_[np.full(6, 1e3), np.full(6, 1e2)]
    F = G.T @ G
    S = np.linalg.inv(F)
    fixed = [5, 11]
    free = [i for i in range(12) if i not in fixed]
    cov, unident = bounds.constrained_covariance(F, fixed)
    cond = S[np.ix_(free, free)] - S[np.ix_(free, fixed)] @ np.linalg.solve(S[np.ix_(fixed, fixed)], S[np.ix_(fixed, free)])
    assert np.allclose(cov[np.ix_(free, free)], cond, rtol=1e-8, atol=0)
    assert not any(unident) and np.all(cov[fixed] == 0) and np.all(cov[:, fixed] == 0)
    # a null direction moving components 5 and 11 together: open unless one of them is fixed
    v = np.zeros(12)
    v[5], v[11] = 1.0, -1.0
    P = np.eye(12) - np.outer(v, v) / 2.0
    F0 = P @ F @ P
    assert bounds.constrained_covariance(F0, [])[1] == [False, True, False, True]
    cov0, unident0 = bounds.constrained_covariance(F0, [5])
    free0 = [i for i in range(12) if i != 5]
    assert not any(unident0)
    assert np.allclose(cov0[np.ix_(free0, free0)], np.linalg.inv(F0[np.ix_(free0, free0)]), rtol=1e-6, atol=0)
