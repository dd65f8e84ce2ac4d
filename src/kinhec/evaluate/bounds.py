"""Cramér-Rao lower bound on the hand-eye transform ``X`` (and ``Y``) of one benchmark sequence.

The bound is computed for exactly the data the benchmark gives an
``A X = Y B`` solver: the protocol's keyframe pairs
(:meth:`kinhec.io.Sequence.axyb_keyframe_poses`), with the sequence's own
noise factors (index row and recipe), linearised at the ground truth.  The
measurement model is the generator's, written out in
:mod:`kinhec.solvers.pair_model`:

* camera ``se3_gaussian``: target-frame rotation noise and camera-frame
  anisotropic translation noise;
* camera ``pnp``: the pixel noise of every target point inside the image
  carried through the PnP Jacobian (``sigma_px^2 (J^T J)^-1`` in the left,
  camera-frame twist of :mod:`kinhec.models.pnp`, moved to the target frame by
  ``Ad(inv C)``, which brings in the rotation -> translation lever arm);
* camera ``vo_drift``: the random walk of the visual odometry, whose errors
  are correlated between keyframes (full covariance over all keyframes);
* monocular scale: ``log s`` is a nuisance parameter; a drifting scale is a
  correlated random walk of ``log s`` added to the camera errors;

  both random walks are handled by their structure (:func:`random_walk_information`):
  the walk's increments between keyframes are independent, so differencing makes
  the camera covariance block-tridiagonal (a banded Cholesky factorisation), and
  the scale walk enters by the Woodbury identity with its tridiagonal precision,
  instead of a dense factorisation of the ``6N x 6N`` covariance;
* robot ``se3_gaussian``: the flange-frame twist, carried into the camera
  error by ``G`` (:func:`~kinhec.solvers.pair_model.pair_jacobians`);
  ``joint_gaussian``: the encoder noise through the manipulator Jacobian;
* asynchronous pairing: the robot stream interpolated between two noisy
  samples (variance ``(1-w)^2 + w^2`` of one sample), and the camera
  time-stamp jitter ``s`` along the path to second order: ``s^2 V V^T`` of the
  flange body velocity plus ``(s^4 / 2) Vdot Vdot^T`` of its derivative, the
  path's bend within the jitter (:func:`_jitter_covariance`);
* Student-t noise: the Fisher information of a 6-d Student-t location,
  ``(nu + 6) / (nu + 8)`` times that of a Gaussian with the same scale.

The Fisher information ``F = J^T Sigma^-1 J`` is summed over the pairs; the
bound on ``X`` is the ``X`` block of ``F^-1`` with ``Y`` (and ``log s``) as
unknown nuisance parameters.  It is converted to the expected *median*
rotation [deg] and translation [mm] error of ``X`` by sampling the Gaussian
``N(0, cov_X)`` (the geodesic angle is ``|omega|`` and the translation error
``|v|`` to first order).

Not in the model, so the bound does not hold there (``modelled = False``):
outliers (any ``outlier_fraction > 0``) and errors of the robot's kinematic
parameters (``dh_error``), which bias every pair alike.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kinhec.geometry import se3
from kinhec.models.cameras import VISIBILITY_MARGIN_PX, as_camera, as_target, inside_image, pinhole_pixels, to_camera
from kinhec.util.errors import InputError
from kinhec.geometry.motion import KEYFRAME_MAX, KEYFRAME_MIN_ROT_DEG, KEYFRAME_MIN_TRANS_M
from kinhec.synth.recipe_json import robot_student_t_dof
from kinhec.models.robots import get_robot
from kinhec.solvers import pair_model as pm
from kinhec.solvers.multi_axyb import assemble_normal, graph_data

if TYPE_CHECKING:
    from kinhec.synth.scenes import MultiScene

__all__ = [
    "N_SAMPLES",
    "SequenceBound",
    "sequence_bound",
    "bound_from_pairs",
    "fisher_information",
    "median_errors",
    "exact_median",
    "student_t_information_factor",
    "GraphBound",
    "graph_bound",
    "pnp_covariance",
    "inverse_information",
    "inverse_information_batch",
    "null_directions",
    "pairs_information",
    "sequence_information",
    "sequence_pair_noise",
    "parent_frame_information",
    "constrained_covariance",
]

#: Samples of ``N(0, cov_X)`` behind the expected median errors.
N_SAMPLES = 20000
#: Seed of the fixed draws behind the median errors.
_SAMPLE_SEED = 140_000


@dataclass
class SequenceBound(pm.XYCovariance):
    """Cramér-Rao bound of one sequence.

    Attributes
    ----------
    X_rot_deg, X_trans_mm : float
        Expected median rotation [deg] and translation [mm] error of ``X`` of
        an efficient unbiased estimator; ``inf`` when the pairs do not
        determine that part of ``X`` (degenerate motion).
    Y_rot_deg, Y_trans_mm : float
        The same for ``Y``.
    cov : ndarray, shape (P, P)
        Inverse Fisher information over ``(dx, dy[, log s])`` (right
        perturbations, rotation first, rad and m).
    n_pairs : int
        Keyframe pairs in the bound.
    modelled : bool
        False when the sequence has effects outside the model (``notes``).
    notes : list of str
        What the bound leaves out or approximates.
    """

    X_rot_deg: float
    X_trans_mm: float
    Y_rot_deg: float
    Y_trans_mm: float
    cov: np.ndarray
    n_pairs: int
    modelled: bool = True
    notes: list = field(default_factory=list)


def student_t_information_factor(dof) -> float:
    """Fisher information of a 6-d Student-t location relative to a Gaussian of the same scale (1 if Gaussian)."""
    if dof is None or not np.isfinite(dof):
        return 1.0
    return (float(dof) + 6.0) / (float(dof) + 8.0)


def fisher_information(J: np.ndarray, Sigma: np.ndarray) -> np.ndarray:
    """``J^T Sigma^-1 J`` for block-diagonal ``Sigma`` (N, 6, 6) or a full ``Sigma`` (6N, 6N).

    ``J`` has shape ``(N, 6, P)``; returns ``(P, P)``.
    """
    n, _, p = J.shape
    if Sigma.ndim == 3:
        L = np.linalg.cholesky(Sigma)
        W = np.linalg.solve(L, J)  # whitened
        return np.einsum("nip,niq->pq", W, W)
    Jf = J.reshape(6 * n, p)
    L = np.linalg.cholesky(Sigma)
    W = np.linalg.solve(L, Jf)
    return W.T @ W


@functools.lru_cache(maxsize=4)
def _squared_normals(n_samples: int) -> np.ndarray:
    """``(n_samples, 3)`` squared standard normal draws, the same for every call (seed ``_SAMPLE_SEED``)."""
    z = np.random.default_rng(_SAMPLE_SEED).standard_normal((n_samples, 3))
    z *= z
    z.setflags(write=False)
    return z


def median_errors(cov6: np.ndarray, rng: np.random.Generator | None = None,
                  n_samples: int = N_SAMPLES) -> tuple[float, float]:  # fmt: skip
    """Median ``|omega|`` [deg] and ``|v|`` [mm] of ``(omega, v) ~ N(0, cov6)``.

    ``|omega|^2`` is distributed as ``sum_k w_k z_k^2`` with ``w`` the eigenvalues of the rotation block
    (likewise for ``v``), so one fixed set of squared normal draws serves every covariance: the result is
    a deterministic function of ``cov6`` (``rng``, when given, draws a fresh set instead).
    """
    z2 = _squared_normals(int(n_samples)) if rng is None else rng.standard_normal((int(n_samples), 3)) ** 2
    out = []
    for block in (cov6[:3, :3], cov6[3:, 3:]):
        w = np.clip(np.linalg.eigvalsh(0.5 * (block + block.T)), 0.0, None)
        out.append(math.sqrt(exact_median(z2 @ w)))
    return math.degrees(out[0]), 1000.0 * out[1]


#: Values of every this-many-th sample that bracket a median in :func:`exact_median`.
_BRACKET_STRIDE = 32


def exact_median(v: np.ndarray) -> float:
    """``np.median(v)`` of the values of an array (flattened, as float64), the same value, at a fraction of its cost
    on large arrays.

    ``np.median`` selects the middle order statistics from the whole array (about 0.2 ms on 20,000 values).
    Here the order statistics of a strided subsample a few places either side of its middle bracket the
    median (three standard deviations of the rank either side); counting the values below the bracket tells the
    ranks the middle values have among the few inside it (about a tenth), and only those are selected.  When the
    bracket misses (a counting check) or is not finite, the whole array is.  For finite values or NaN
    throughout (what :func:`median_errors` passes); NaN in some places only may be missed by the subsample.
    """
    v = np.asarray(v, dtype=np.float64).reshape(-1)
    n = v.size
    if n < 8 * _BRACKET_STRIDE:
        return float(np.median(v))
    sub = np.sort(v[::_BRACKET_STRIDE])
    m, k = sub.size // 2, max(3, int(1.5 * math.sqrt(sub.size)))  # (the middle's rank in it: sd sqrt(size) / 2)
    lo, hi = sub[max(m - k, 0)], sub[min(m + k, sub.size - 1)]
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return float(np.median(v))
    below = int(np.count_nonzero(v < lo))
    inside = v[(v >= lo) & (v <= hi)]
    ranks = [(n - 1) // 2 - below, n // 2 - below]  # the middle ranks (equal for odd n) among the values inside
    if ranks[0] < 0 or ranks[1] >= inside.size:
        return float(np.median(v))
    part = np.partition(inside, ranks)
    return float(np.mean(part[ranks]))


def pnp_covariance(C: np.ndarray, camera, target, pixel_std: float) -> np.ndarray:
    """Covariance (N, 6, 6) of ``rho`` for PnP from noisy pixels (pinhole, points inside the image)."""
    cam = as_camera(camera)
    tgt = as_target(target)
    pts = tgt.points_m
    Pc = to_camera(C, pts)  # (N, P, 3)
    uv, depth = pinhole_pixels(cam, Pc)
    inside = inside_image(cam, uv, depth, VISIBILITY_MARGIN_PX).astype(np.float64)
    Xc, Yc, Zc = Pc[..., 0], Pc[..., 1], np.where(Pc[..., 2] > 0, Pc[..., 2], 1.0)
    x, y, iz = Xc / Zc, Yc / Zc, 1.0 / Zc
    return (pixel_std / cam.f_px) ** 2 * pm.pnp_unit_covariance(C, x, y, iz, inside)


def _vo_increments(T_ct_all: np.ndarray, frames: np.ndarray, rot_std: float, trans_std: float, dof) -> np.ndarray:
    """Covariances (K, 6, 6) of the ``vo_drift`` walk's increments up to each of the camera frames ``frames``.

    With ``S_f = sum_{i=1..f} Ad(T_i) Sigma_xi Ad(T_i)^T`` (``T = inv(C)`` the true VO poses), the error at
    keyframe ``k`` is the sum of independent increments of covariance ``D_0 = S_(f_0)`` and
    ``D_k = S_(f_k) - S_(f_(k-1))``, each summed over its own frames (no differences of large sums); the error at
    keyframes ``j`` and ``k`` has covariance ``sum_{i <= min(j, k)} D_i``.
    """
    T = se3.invert_transform(T_ct_all[: int(frames[-1]) + 1], check=False)
    Ad = pm.adjoint(T)
    var = np.array([rot_std**2] * 3 + [trans_std**2] * 3)
    if dof is not None and np.isfinite(dof) and dof > 2:
        var = var * dof / (dof - 2.0)
    inc = np.einsum("nij,j,nkj->nik", Ad, var, Ad)
    inc[0] = 0.0
    starts = np.r_[0, np.asarray(frames[:-1], dtype=np.int64) + 1]
    return np.add.reduceat(inc, starts, axis=0)


def _info_get(info, key, default=math.nan):
    v = info.get(key, default) if hasattr(info, "get") else default
    try:
        v = float(v)
    except (TypeError, ValueError):
        return default
    return v


def _block_tridiagonal_band(diag: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """Upper banded storage (12, 6K) of a symmetric block-tridiagonal matrix for :func:`scipy.linalg.cholesky_banded`.

    ``diag`` (K, 6, 6): the diagonal blocks; ``lower`` (K - 1, 6, 6): the blocks ``(k + 1, k)``.
    """
    K = diag.shape[0]
    u = 11
    ab = np.zeros((u + 1, 6 * K))
    a, b = np.meshgrid(np.arange(6), np.arange(6), indexing="ij")
    k = np.arange(K)[:, None, None]
    # diagonal blocks: row 6k + a, column 6k + b, kept where row <= column
    r, c = 6 * k + a, 6 * k + b
    keep = np.broadcast_to(a <= b, r.shape)
    ab[(u + r - c)[keep], np.broadcast_to(c, r.shape)[keep]] = diag[keep]
    # the upper blocks (k, k + 1) are the transposes of the lower ones: row 6k + b, column 6(k + 1) + a
    if K > 1:
        k1 = np.arange(K - 1)[:, None, None]
        r, c = 6 * k1 + b, 6 * (k1 + 1) + a
        ab[u + r - c, c] = lower
    return ab


def random_walk_information(J: np.ndarray, Sigma: np.ndarray, walk: np.ndarray | None = None,
                            scale_walk: tuple | None = None) -> np.ndarray:  # fmt: skip
    """``J^T Sigma_full^-1 J`` (P, P) for errors that are random walks over the pairs plus independent noise.

    ``Sigma_full = L blockdiag(walk) L^T + blockdiag(Sigma) + U L_s diag(v) L_s^T U^T``, with ``L`` (``L_s``)
    summing the increments up to each pair, i.e. ``cov(rho_j, rho_k) = sum_(i <= min(j, k)) walk_i`` plus the
    independent ``Sigma`` (N, 6, 6) of every pair, plus a random walk of one scalar ``q`` (increment
    variances ``v``) along the directions ``u_k`` (``scale_walk = (u (N, 6), v (N,))``).

    The camera part is made block-tridiagonal by differencing neighbouring pairs (``Delta``, whose inverse is
    ``L``): ``Delta Sigma_0 Delta^T = blockdiag(walk) + Delta blockdiag(Sigma) Delta^T``, factorised by a
    banded Cholesky; the scalar walk enters by the Woodbury identity with its tridiagonal precision (its
    reference pair, with ``v = 0``, carries no offset).  The cost is O(N) for the camera walk and O(N^2)
    for the scale walk, against O(N^3) for the dense ``6N x 6N`` factorisation, with the same result.
    """
    from scipy.linalg import cho_solve_banded, cholesky_banded  # here: kinhec.evaluate.bounds stays light to import

    n, _, p = J.shape
    D = np.zeros((n, 6, 6)) if walk is None else walk

    def diff(M):  # Delta applied to a stack (n, 6, k): M_k - M_(k-1)
        out = M.copy()
        out[1:] -= M[:-1]
        return out

    # Delta blockdiag(Sigma) Delta^T: diagonal Sigma_k + Sigma_(k-1), lower neighbours -Sigma_k
    diag = D + Sigma
    diag[1:] += Sigma[:-1]
    cb = cholesky_banded(_block_tridiagonal_band(diag, -Sigma[:-1]), check_finite=False)
    cols = [diff(J)]
    if scale_walk is not None:
        u, v = scale_walk
        v = np.asarray(v, dtype=np.float64)
        if v.shape != (n,) or not (np.all(np.isfinite(v)) and v[0] >= 0 and np.all(v[1:] > 0)):
            raise InputError(f"scale_walk: expected {n} finite increment variances, > 0 after the first (>= 0), "
                             f"got {v}")  # fmt: skip
        act = np.flatnonzero(v > 0)
        U = np.zeros((n, 6, act.size))
        U[act, :, np.arange(act.size)] = u[act]
        cols.append(diff(U))
    R = np.concatenate(cols, axis=2).reshape(6 * n, -1)  # Delta [J, U]
    Y = cho_solve_banded((cb, False), R, check_finite=False).reshape(n, 6, -1)
    Dt = Y.copy()  # Delta^T Y = Sigma_0^-1 [J, U]
    Dt[:-1] -= Y[1:]
    F = np.einsum("nap,naj->pj", J, Dt[:, :, :p])
    if scale_walk is not None and act.size:
        # Woodbury: F -= C^T (Q^-1 + U^T Sigma_0^-1 U)^-1 C, C = U^T Sigma_0^-1 J; Q^-1 of the walk is tridiagonal
        w = 1.0 / v[act]
        w_next = np.r_[w[1:], 0.0]
        # [J, U]^T Sigma_0^-1 U: every column of U is one pair's scale direction
        UtS = np.einsum("ka,kaj->kj", u[act], Dt[act])  # (m, p + m)
        inner = UtS[:, p:].copy()
        m = act.size
        inner[np.arange(m), np.arange(m)] += w + w_next
        inner[np.arange(m - 1), np.arange(1, m)] -= w[1:]
        inner[np.arange(1, m), np.arange(m - 1)] -= w[1:]
        C = UtS[:, :p]
        F = F - C.T @ np.linalg.solve(0.5 * (inner + inner.T), C)
    return 0.5 * (F + F.T)


def bound_from_pairs(A, C, X, Y, configuration: str, *, camera_cov=None, camera_cov_full=None, robot_cov=None,
                     camera_walk=None, scale_walk=None, scale_unknown: bool = False, rng=None,
                     n_samples: int = N_SAMPLES) -> SequenceBound:  # fmt: skip
    """Bound from true keyframe poses and the per-pair noise covariances (the information of
    :func:`pairs_information`, inverted; parameters as there).

    Parameters
    ----------
    rng : numpy.random.Generator, optional
        Draws behind the median errors (default: one fixed set, see :func:`median_errors`).

    Returns
    -------
    SequenceBound
    """
    F = pairs_information(A, C, X, Y, configuration, camera_cov=camera_cov, camera_cov_full=camera_cov_full,
                          robot_cov=robot_cov, camera_walk=camera_walk, scale_walk=scale_walk,
                          scale_unknown=scale_unknown)  # fmt: skip
    return _bound_from_information(F, C.shape[0], rng, n_samples)


def pairs_information(A, C, X, Y, configuration: str, *, camera_cov=None, camera_cov_full=None, robot_cov=None,
                      camera_walk=None, scale_walk=None, scale_unknown: bool = False) -> np.ndarray:  # fmt: skip
    """Fisher information ``(P, P)`` over ``(dx, dy[, log s])`` of true poses and their per-pair noise covariances.

    Parameters
    ----------
    A : ndarray, shape (N, 4, 4)
        True flange poses ``T_base_ee`` of the pairs (only their count is used).
    C : ndarray, shape (N, 4, 4)
        True camera measurements ``T_cam_target``.
    X, Y : ndarray, shape (4, 4)
        True ``X`` and ``Y``.
    configuration : {"eye_in_hand", "eye_to_hand"}
    camera_cov : ndarray, shape (N, 6, 6), optional
        Independent camera errors (right twist of ``C``).
    camera_cov_full : ndarray, shape (6N, 6N), optional
        Correlated camera errors (VO drift, scale drift); added to ``camera_cov``.
    robot_cov : ndarray, shape (N, 6, 6), optional
        Flange-frame twist covariance of each pair.
    camera_walk : ndarray, shape (N, 6, 6), optional
        A camera error that is a random walk over the pairs (in time order): the covariances of its
        independent increments up to each pair (the first: from the walk's start).  The same bound as the
        equivalent ``camera_cov_full`` (``cov(rho_j, rho_k) = sum_(i <= min(j, k)) D_i``), computed in O(N).
    scale_walk : ndarray, shape (N,), optional
        A log-scale that drifts as a random walk: the variances of its increments up to each pair (the
        first from ``log s``'s reference, 0 when the first pair is that reference); the scale directions
        are those of :func:`~kinhec.solvers.pair_model.scale_jacobian`.
    scale_unknown : bool
        ``log s`` of a monocular scale is a nuisance parameter.

    Returns
    -------
    ndarray, shape (P, P)
        ``J^T Sigma^-1 J`` for right perturbations of ``X`` and ``Y`` (rotation first, rad and m), ``P = 12``
        (13 with ``scale_unknown``).
    """
    if configuration not in pm.CONFIGURATIONS:
        raise InputError(f"configuration: expected one of {', '.join(pm.CONFIGURATIONS)}, got {configuration!r}")
    n = C.shape[0]
    J, G = pm.pair_jacobians(C, X, configuration)
    if scale_unknown:
        J = np.concatenate([J, pm.scale_jacobian(C)[:, :, None]], axis=2)
    Sigma = np.zeros((n, 6, 6)) if camera_cov is None else np.array(camera_cov, dtype=np.float64)
    if robot_cov is not None:
        Sigma = Sigma + np.einsum("nij,njk,nlk->nil", G, robot_cov, G)
    if camera_walk is not None or scale_walk is not None:
        if camera_cov_full is not None:
            raise InputError("bound_from_pairs: expected camera_cov_full or the random walks (camera_walk, "
                             "scale_walk), got both")  # fmt: skip
        return random_walk_information(J, Sigma + 1e-18 * np.eye(6), camera_walk,
                                       None if scale_walk is None else (pm.scale_jacobian(C), scale_walk))  # fmt: skip
    if camera_cov_full is not None:
        full = np.array(camera_cov_full, dtype=np.float64)
        idx = np.arange(n)
        blocks = full.reshape(n, 6, n, 6)
        blocks[idx, :, idx, :] += Sigma
        Sig = blocks.reshape(6 * n, 6 * n)
    else:
        Sig = Sigma
    # a tiny floor keeps noise-free components invertible without changing the others
    tiny = 1e-18
    if Sig.ndim == 3:
        Sig = Sig + tiny * np.eye(6)
    else:
        Sig = Sig + tiny * np.eye(6 * n)
    return fisher_information(J, Sig)


def _bound_from_information(F: np.ndarray, n: int, rng, n_samples: int) -> SequenceBound:
    """The bound of a Fisher information ``F`` (P, P) of ``(dx, dy[, log s])`` from ``n`` pairs."""
    cov, unidentified = inverse_information(F)
    xr, xt = median_errors(cov[:6, :6], rng, n_samples)
    yr, yt = median_errors(cov[6:12, 6:12], rng, n_samples)
    # a block touched by a direction the data do not determine (e.g. rotations about one axis only) has no bound
    xr, xt, yr, yt = (math.inf if unidentified[k] else v for k, v in enumerate((xr, xt, yr, yt)))
    return SequenceBound(xr, xt, yr, yt, cov, n)


#: Relative eigenvalue of the (scaled) Fisher information below which a direction counts as undetermined.
UNIDENTIFIED_TOL = 1e-10


def inverse_information_batch(F: np.ndarray):
    """:func:`inverse_information` of a stack ``F`` ``(..., 12, 12)`` at once: the pseudo-inverses ``(..., 12, 12)``
    and ``(..., 4)`` booleans, per block (X rot, X trans, Y rot, Y trans), whether it meets its null space."""
    d = np.sqrt(np.clip(np.einsum("...ii->...i", F), 1e-300, None))
    dd = d[..., :, None] * d[..., None, :]
    w, V = np.linalg.eigh(F / dd)
    null = w < UNIDENTIFIED_TOL * np.maximum(w.max(axis=-1, keepdims=True), 1e-300)
    inv_w = np.where(null, 0.0, 1.0 / np.where(null, 1.0, w))
    cov = (V * inv_w[..., None, :]) @ np.swapaxes(V, -1, -2) / dd
    V2 = np.where(null[..., None, :], V**2, 0.0)  # the null space's columns only
    unidentified = np.stack([V2[..., b, :].sum(axis=-2).max(axis=-1) > 1e-3
                             for b in (slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12))], axis=-1)  # fmt: skip
    return cov, unidentified


def null_directions(F: np.ndarray) -> np.ndarray:
    """The directions ``(k, 12)`` (unit norm, in ``F``'s own coordinates) that ``F`` ``(12, 12)`` leaves undetermined:
    its null space by the rule of :func:`inverse_information_batch` (no rows when everything is determined)."""
    F = np.asarray(F, dtype=np.float64)
    d = np.sqrt(np.clip(np.diag(F), 1e-300, None))
    w, V = np.linalg.eigh(F / (d[:, None] * d[None, :]))
    null = w < UNIDENTIFIED_TOL * max(float(w.max()), 1e-300)
    x = (V[:, null] / d[:, None]).T  # F x = 0  <=>  (F / dd) (d x) = 0
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def inverse_information(F: np.ndarray):
    """Pseudo-inverse of ``F`` and, per block (X rot, X trans, Y rot, Y trans), whether it meets its null space."""
    cov, unidentified = inverse_information_batch(np.asarray(F)[None])
    return cov[0], [bool(u) for u in unidentified[0]]


def _robot_twist_cov(seq, idx, info, config, offset) -> np.ndarray:
    """Flange-frame twist covariance (K, 6, 6) of the paired robot poses at camera frames ``idx``."""
    K = idx.size
    cov = np.zeros((K, 6, 6))
    models = str(info.get("robot_noise_models") or "")
    rs, ts = _info_get(info, "robot_rot_std_rad", 0.0), _info_get(info, "robot_trans_std_m", 0.0)
    if "se3_gaussian" in models and (rs > 0 or ts > 0):
        f = 1.0 / student_t_information_factor(robot_student_t_dof(config))
        cov += np.diag([rs**2] * 3 + [ts**2] * 3) * f
    js = _info_get(info, "joint_std_rad", 0.0)
    if "joint_gaussian" in models and js > 0 and seq.robot.dof > 0:
        robot = get_robot(str(info.get("robot")))
        ridx = _robot_rows(seq, idx, offset)
        q = seq.robot.q_gt[ridx]
        Jb = robot.jacobian(q)  # base frame (omega, v of the flange origin)
        R = robot.fk(q)[:, :3, :3]
        Rt = np.swapaxes(R, -1, -2)
        Jf = np.concatenate([Rt @ Jb[:, :3], Rt @ Jb[:, 3:]], axis=1)
        cov += js**2 * Jf @ np.swapaxes(Jf, -1, -2)
    if not seq.is_synchronous:
        cov *= _interpolation_factor(seq, idx, offset)[:, None, None]
        jit = _info_get(info, "time_jitter_std_s", 0.0)
        if jit > 0:
            # the path's velocity and its derivative where the pose is read: at the paired stamps
            t = _paired_instants(seq, idx, offset)
            cov += _jitter_covariance(_body_velocity(seq, idx, t), _body_acceleration(seq, t), jit)
    return cov


def _jitter_covariance(V: np.ndarray, Vdot: np.ndarray, jitter_std: float) -> np.ndarray:
    """Covariance (K, 6, 6) of the flange error of a pose read at a jittered stamp, to second order in the jitter.

    The pose read at ``t + tau`` (``tau ~ N(0, s^2)``, ``s = jitter_std``) differs from the true one at ``t`` by
    ``xi = log(T(t)^-1 T(t + tau)) = V tau + Vdot tau^2 / 2 + O(tau^3)`` (``V`` (K, 6) the body velocity,
    ``Vdot`` (K, 6) its time derivative; the commutator of the second-order term vanishes, ``[V, V] = 0``).
    ``tau`` and ``tau^2`` are uncorrelated and ``var(tau^2) = 2 s^4``, so

        ``cov(xi) = s^2 V V^T + (s^4 / 2) Vdot Vdot^T``.

    The second term is the bending of the path within the jitter; it matters across the velocity, where only
    the robot noise competes with it.  The mean ``Vdot s^2 / 2`` is a bias of each pair, not in the covariance.
    """
    s2 = float(jitter_std) ** 2
    return s2 * np.einsum("ni,nj->nij", V, V) + 0.5 * s2**2 * np.einsum("ni,nj->nij", Vdot, Vdot)


def _robot_rows(seq, idx, offset) -> np.ndarray:
    """Robot rows nearest to the paired instants of camera frames ``idx``."""
    if seq.is_synchronous and offset is None:
        return idx
    t = seq.camera.t[idx] - (seq.time_offset if offset is None else offset)
    j = np.clip(np.searchsorted(seq.robot.t, t), 1, len(seq.robot) - 1)
    left = np.abs(seq.robot.t[j - 1] - t) <= np.abs(seq.robot.t[j] - t)
    return np.where(left, j - 1, j)


def _paired_instants(seq, idx, offset) -> np.ndarray:
    """Robot-clock instants (K,) at which the flange poses of camera frames ``idx`` are read: stamp minus offset."""
    return seq.camera.t[idx] - (seq.time_offset if offset is None else offset)


def _interpolation_factor(seq, idx, offset) -> np.ndarray:
    """Variance factor ``(1 - w)^2 + w^2`` of a pose interpolated between two independent noisy samples."""
    t = _paired_instants(seq, idx, offset)
    tr = seq.robot.t
    j = np.clip(np.searchsorted(tr, t), 1, tr.size - 1)
    w = np.clip((t - tr[j - 1]) / np.maximum(tr[j] - tr[j - 1], 1e-12), 0.0, 1.0)
    return (1.0 - w) ** 2 + w**2


def _body_velocity(seq, idx, t=None) -> np.ndarray:
    """Flange body twist velocity (K, 6) at the true capture instants of camera frames ``idx`` (or at the robot-clock
    instants ``t`` (K,)): central differences of the true stream."""
    tr = seq.robot.t
    h = 0.5 * float(np.median(np.diff(tr))) if tr.size > 1 else 1e-3
    t = np.clip(seq.camera.t_gt[idx] if t is None else np.asarray(t, dtype=np.float64), tr[0] + h, tr[-1] - h)
    T0 = se3.interpolate_poses(tr, seq.robot.T_base_ee_gt, t - h, out_of_range="clip", check=False)
    T1 = se3.interpolate_poses(tr, seq.robot.T_base_ee_gt, t + h, out_of_range="clip", check=False)
    return se3.se3_log(se3.invert_transform(T0, check=False) @ T1, check=False) / (2 * h)


def _body_acceleration(seq, t) -> np.ndarray:
    """Time derivative (K, 6) of the flange body velocity at the robot-clock instants ``t`` (K,).

    With ``xi_+- = log(T(t)^-1 T(t +- H)) = +-V H + Vdot H^2 / 2 + O(H^3)`` on the true robot stream,
    ``Vdot = (xi_+ + xi_-) / H^2``.  The stream is interpolated linearly between its samples (interval ``dt``), off
    the path by its chord, ``w (1 - w) dt^2 a / 2`` at the fraction ``w`` of an interval; ``H`` is four sample
    intervals, so on a regular stream the three instants share ``w`` and their chords cancel in the second
    difference up to the change of ``a`` over ``H``.
    """
    tr = seq.robot.t
    H = 4.0 * float(np.median(np.diff(tr))) if tr.size > 1 else 1e-2
    t = np.clip(np.asarray(t, dtype=np.float64), tr[0] + H, tr[-1] - H)
    Tm, T0, Tp = (se3.interpolate_poses(tr, seq.robot.T_base_ee_gt, t + k * H, out_of_range="clip", check=False)
                  for k in (-1, 0, 1))  # fmt: skip
    inv0 = se3.invert_transform(T0, check=False)
    xp = se3.se3_log(inv0 @ Tp, check=False)
    xm = se3.se3_log(inv0 @ Tm, check=False)
    return (xp + xm) / H**2


def sequence_bound(seq, *, time_offset=None, keyframes=None, rng=None, n_samples: int = N_SAMPLES) -> SequenceBound:
    """Cramér-Rao bound of ``X`` and ``Y`` for the protocol's keyframe pairs of a loaded sequence.

    Parameters
    ----------
    seq : kinhec.io.Sequence
        The sequence (index row with its noise factors, both streams, ground truth).
    time_offset : float, optional
        Pairing offset as in :meth:`~kinhec.io.Sequence.axyb_keyframe_poses`
        (default: the protocol's ``oracle`` pairing).  It only decides which
        keyframes are used; the offset itself is treated as known.
    keyframes : array_like of int, optional
        Camera-frame indices of those keyframes, when the caller has already
        selected them with the same offset (the benchmark does); else they
        are selected here.
    rng : numpy.random.Generator, optional
        Draws behind the median errors (default: one fixed set, see :func:`median_errors`).
    n_samples : int
        Samples behind the medians.

    Returns
    -------
    SequenceBound
        ``modelled`` is False (and ``notes`` says why) for outliers and DH errors.

    Raises
    ------
    InputError
        Fewer than three keyframe pairs, or an unknown configuration / camera model.
    """
    terms, modelled, notes = _sequence_terms(seq, time_offset, keyframes)
    b = bound_from_pairs(**terms, rng=rng, n_samples=n_samples)
    b.modelled = modelled
    b.notes = notes
    return b


def _sequence_terms(seq, time_offset, keyframes):
    """The arguments of :func:`pairs_information` for the sequence's keyframes, whether the model holds, and notes."""
    info = seq.info
    config = seq.config
    if keyframes is None:
        _, _, idx = seq.axyb_keyframe_poses(KEYFRAME_MIN_ROT_DEG, KEYFRAME_MIN_TRANS_M, KEYFRAME_MAX,
                                             time_offset=time_offset, return_index=True)  # fmt: skip
    else:
        idx = np.asarray(keyframes, dtype=np.int64)
    if idx.size < 3:
        raise InputError(f"sequence {seq.sequence_id!r}: expected at least 3 keyframe pairs for a bound, got {idx.size}")
    conf = seq.configuration
    C = seq.camera.T_cam_target_gt[idx]
    A = seq.camera.T_base_ee_gt[idx]
    notes = []
    modelled = True
    model = str(info.get("camera_noise_model"))
    dof = _info_get(info, "student_t_dof")
    camera_cov = None
    walk = None
    if model == "se3_gaussian":
        f = 1.0 / student_t_information_factor(dof)
        camera_cov = f * pm.camera_covariance(C, _info_get(info, "camera_rot_std_rad", 0.0),
                                              _info_get(info, "camera_trans_std_m", 0.0),
                                              _info_get(info, "camera_trans_std_z_m", 0.0))  # fmt: skip
    elif model == "pnp":
        camera_cov = pnp_covariance(C, str(info.get("camera")), str(info.get("target")),
                                    _info_get(info, "pixel_std", 0.0))  # fmt: skip
    elif model == "vo_drift":
        walk = _vo_increments(seq.camera.T_cam_target_gt, idx, _info_get(info, "camera_rot_std_rad", 0.0),
                              _info_get(info, "camera_trans_std_m", 0.0), dof if np.isfinite(dof) else None)  # fmt: skip
    else:
        raise InputError(f"sequence {seq.sequence_id!r}: unknown camera noise model {model!r}")
    mono = str(info.get("world_frame")) == "vo_origin" or seq.scale != 1.0
    drift = _info_get(info, "scale_drift_std", 0.0)
    scale_walk = None
    if mono and drift > 0:
        # log s drifts from the sequence's first frame on: cov(q_j, q_k) = drift^2 min(f_j, f_k)
        scale_walk = drift**2 * np.diff(np.r_[0.0, idx.astype(np.float64)])
    robot_cov = _robot_twist_cov(seq, idx, info, config, time_offset)
    if "dh_error" in str(info.get("robot_noise_models") or ""):
        modelled = False
        notes.append("dh_error: kinematic-parameter errors are not in the model")
    if _info_get(info, "outlier_fraction", 0.0) > 0:
        modelled = False
        notes.append("outliers are not in the model")
    terms = dict(A=A, C=C, X=seq.X, Y=seq.Y, configuration=conf, camera_cov=camera_cov, robot_cov=robot_cov,
                 camera_walk=walk, scale_walk=scale_walk, scale_unknown=mono)  # fmt: skip
    return terms, modelled, notes


def sequence_information(seq, *, frames=None, time_offset=None, offset_unknown: bool = False,
                         scale_prior_std: float | None = None) -> np.ndarray:  # fmt: skip
    """Fisher information ``(12, 12)`` on ``(X, Y)`` of the camera frames ``frames`` of a loaded sequence.

    The information of :func:`sequence_bound`'s model (the sequence's own noise factors, linearised at the ground
    truth), for the pairs a calibration of the sequence's files uses: by default every camera frame with a
    measurement (:attr:`kinhec.io.sequence.CameraStream.has_measurement`).  A monocular scale (``log s``) is
    marginalised.  Right perturbations of ``X`` and ``Y`` (rotation [rad] first, then translation [m] in the
    transform's own frame); :func:`parent_frame_information` turns it into calibrate's parameters.

    ``offset_unknown``: the clock offset is a nuisance parameter too, as when a calibration estimates it (its
    column: the flange's body velocity at the frames, through the robot-noise map ``G``; 0 where the hand stands
    still); ``scale_prior_std``: so is the scale of the eye translations, under a Gaussian prior on ``log s`` of that
    standard deviation (kinhec calibrate's on a metric stream).  Both only for independent pair errors.

    Raises
    ------
    InputError
        Fewer than three frames, an unknown camera model, or the nuisances asked of correlated errors.
    """
    idx = np.flatnonzero(seq.camera.has_measurement) if frames is None else np.asarray(frames, dtype=np.int64)
    terms, _, _ = _sequence_terms(seq, time_offset, idx)
    if not offset_unknown and scale_prior_std is None:
        F = pairs_information(**terms)
    else:
        J, G, Sigma = _independent_pairs(seq, terms)
        cols, prior = [J], []
        if offset_unknown:
            cols.append(-np.einsum("nij,nj->ni", G, _body_velocity(seq, idx))[:, :, None])
            prior.append(0.0)
        if scale_prior_std is not None:
            cols.append(pm.scale_jacobian(terms["C"])[:, :, None])
            prior.append(1.0 / float(scale_prior_std) ** 2)
        F = fisher_information(np.concatenate(cols, axis=2), Sigma + 1e-18 * np.eye(6))
        F[12:, 12:] += np.diag(prior)
    if F.shape[0] > 12:  # the nuisances: their Schur complement
        F = F[:12, :12] - F[:12, 12:] @ np.linalg.pinv(F[12:, 12:]) @ F[12:, :12]
    return 0.5 * (F + F.T)


def _independent_pairs(seq, terms):
    """``J`` (n, 6, 12), the robot-noise map ``G`` (n, 6, 6) and ``Sigma`` (n, 6, 6) of independent pair errors."""
    if terms["camera_walk"] is not None or terms["scale_walk"] is not None or terms["scale_unknown"]:
        raise InputError(f"sequence {seq.sequence_id!r}: expected independent pair errors and a metric scale, got a "
                         "random walk or a monocular scale")  # fmt: skip
    J, G = pm.pair_jacobians(terms["C"], terms["X"], terms["configuration"])
    Sigma = terms["camera_cov"] + np.einsum("nij,njk,nlk->nil", G, terms["robot_cov"], G)
    return J, G, Sigma


def sequence_pair_noise(seq, *, frames=None, time_offset=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The per-pair terms behind :func:`sequence_information`: ``J`` (n, 6, 12), ``Sigma`` (n, 6, 6), ``C`` (n, 4, 4).

    ``J`` the Jacobian of the camera error ``rho`` (right twist of ``C = T_cam_target``) in right perturbations of
    ``(X, Y)``, ``Sigma`` its covariance (camera and robot noise), ``C`` the true camera poses of the frames (by
    default every measured one).  Only independent errors: a sequence with correlated ones (``vo_drift``, a drifting
    scale) or a monocular scale raises :class:`InputError`.
    """
    idx = np.flatnonzero(seq.camera.has_measurement) if frames is None else np.asarray(frames, dtype=np.int64)
    terms, _, _ = _sequence_terms(seq, time_offset, idx)
    J, _, Sigma = _independent_pairs(seq, terms)
    return J, Sigma, terms["C"]


def parent_frame_information(F: np.ndarray, X, Y) -> np.ndarray:
    """The information ``F`` (12, 12) of right perturbations of ``(X, Y)`` in calibrate's parameters.

    kinhec calibrate moves ``X`` by ``(phi, dt)``: ``R exp(phi)`` and ``t + dt``, ``dt`` in the parent frame
    (:func:`kinhec.geometry.se3.retract`); to first order ``dt = R v`` for the right perturbation ``(phi, v)``, so
    the information is ``M F M^T`` with ``M = blockdiag(I, R_X, I, R_Y)`` (orthogonal).
    """
    M = np.eye(12)
    M[3:6, 3:6] = np.asarray(X)[:3, :3]
    M[9:12, 9:12] = np.asarray(Y)[:3, :3]
    out = M @ np.asarray(F, dtype=np.float64) @ M.T
    return 0.5 * (out + out.T)


def constrained_covariance(F: np.ndarray, fixed) -> tuple[np.ndarray, list]:
    """The Cramér-Rao covariance ``(12, 12)`` of ``(X, Y)`` with the parameters ``fixed`` (indices) known.

    The information ``F`` restricted to the other parameters, inverted (:func:`inverse_information`); the rows and
    columns of the fixed parameters are 0.  Also returns, per block (X rot, X trans, Y rot, Y trans), whether the
    restricted information still leaves it undetermined.
    """
    F = np.asarray(F, dtype=np.float64)
    free = np.setdiff1d(np.arange(F.shape[0]), np.asarray(list(fixed), dtype=np.int64))
    sub, _ = inverse_information(F[np.ix_(free, free)])
    cov = np.zeros_like(F)
    cov[np.ix_(free, free)] = sub
    blocks = (slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12))
    null = null_directions(F[np.ix_(free, free)])
    full = np.zeros((null.shape[0], F.shape[0]))
    full[:, free] = null
    unidentified = [bool(full.size and np.max(np.sum(full[:, bl] ** 2, axis=1)) > 1e-3) for bl in blocks]
    return cov, unidentified


# --------------------------------------------------------------------------- #
# the joint problem of many X and Y (kinhec.solvers.multi_axyb)
# --------------------------------------------------------------------------- #
@dataclass
class GraphBound:
    """Cramér-Rao bound of the generalised problem ``A_k X_i(k) = Y_j(k) B_k``.

    Attributes
    ----------
    cov : ndarray, shape (P, P)
        Inverse Fisher information over ``(dx_1.., dy_1.., log s_1..)`` (right perturbations, rad and m).
    x_ids, y_ids, scaled : list
        Order of the unknowns.
    median : dict of str -> (float, float)
        ``"X:id"`` / ``"Y:id"``: expected median rotation [deg] and translation [mm] error of an efficient
        unbiased estimator (``inf`` where the data leave a part undetermined).
    n_pairs : int
    """

    cov: np.ndarray
    x_ids: list
    y_ids: list
    scaled: list
    median: dict
    n_pairs: int

    def cov_of(self, kind: str, key) -> np.ndarray:
        """Covariance (6, 6) of ``X[key]`` (``kind="X"``) or ``Y[key]``."""
        k = self.x_ids.index(key) if kind == "X" else len(self.x_ids) + self.y_ids.index(key)
        return self.cov[6 * k : 6 * k + 6, 6 * k : 6 * k + 6]


def graph_bound(A, C, X: dict, Y: dict, configuration: str, *, camera_noise, robot_noise=(0.0, 0.0),
                student_t_dof=None, scale_groups=None, masks=None, n_samples: int = N_SAMPLES) -> GraphBound:  # fmt: skip
    """Joint bound of many ``X`` and ``Y`` from the true poses of every edge.

    Parameters
    ----------
    A, C : dict of (x_id, y_id) -> ndarray (N, 4, 4)
        True hand poses and true camera measurements ``T_cam_target`` of every edge.
    X, Y : dict of id -> ndarray (4, 4)
        True unknowns.
    configuration : {"eye_in_hand", "eye_to_hand"}
    camera_noise : (rot_std_rad, xy_std_m, z_std_m)
        Camera ``se3_gaussian`` levels (one for all cameras).
    robot_noise : (rot_std_rad, trans_std_m)
        Flange twist levels.
    student_t_dof : float, optional
        Student-t errors: the information of each pair is ``(nu + 6) / (nu + 8)`` times the Gaussian one.
    scale_groups : list of camera ids, optional
        Cameras whose ``log s`` is a nuisance parameter.
    masks : dict of edge -> ndarray of bool, optional
        The pairs in the bound (e.g. the inliers).

    Returns
    -------
    GraphBound
    """

    if configuration not in pm.CONFIGURATIONS:
        raise InputError(f"configuration: expected one of {', '.join(pm.CONFIGURATIONS)}, got {configuration!r}")
    sel = {e: (np.ones(C[e].shape[0], dtype=bool) if masks is None or e not in masks else np.asarray(masks[e]))
           for e in C}  # fmt: skip
    pairs = {e: (A[e][m], pm.camera_poses(C[e][m], configuration)) for e, m in sel.items() if m.any()}
    d = graph_data(pairs, configuration, scale=list(scale_groups) if scale_groups else False)
    Xs = np.stack([X[k] for k in d.x_ids])
    J, G = pm.pair_jacobians(d.C, Xs[d.xi], configuration)
    Jl = np.zeros((d.n, 6, 13))
    Jl[:, :, :12] = J
    Jl[:, :, 12] = pm.scale_jacobian(d.C)
    f = 1.0 / student_t_information_factor(student_t_dof)
    Sig = f * (pm.camera_covariance(d.C, *camera_noise) + pm.robot_covariance(G, *robot_noise))
    Sig = Sig + 1e-18 * np.eye(6)
    W = np.linalg.solve(np.linalg.cholesky(Sig), Jl)
    F, _ = assemble_normal(W, None, d.offsets, d.columns(), d.n_params)
    d_ = np.sqrt(np.clip(np.diag(F), 1e-300, None))
    w, V = np.linalg.eigh(F / np.outer(d_, d_))
    null = w < UNIDENTIFIED_TOL * max(float(w.max()), 1e-300)
    cov = (V * np.where(null, 0.0, 1.0 / np.where(null, 1.0, w))) @ V.T / np.outer(d_, d_)
    Vn = V[:, null]
    median = {}
    nx = len(d.x_ids)
    for kind, ids in (("X", d.x_ids), ("Y", d.y_ids)):
        for k, key in enumerate(ids):
            b = 6 * (k if kind == "X" else nx + k)
            rot, tr = median_errors(cov[b : b + 6, b : b + 6], None, n_samples)
            for part, sl in ((0, slice(b, b + 3)), (1, slice(b + 3, b + 6))):
                if Vn.size and float(np.max(np.sum(Vn[sl] ** 2, axis=0))) > 1e-3:
                    rot, tr = (math.inf, tr) if part == 0 else (rot, math.inf)
            median[f"{kind}:{key}"] = (rot, tr)
    return GraphBound(cov, list(d.x_ids), list(d.y_ids), list(d.scaled), median, d.n)


def scene_bound(scene: MultiScene, *, scale_unknown: bool | None = None):
    """Cramér-Rao bound of the joint problem of a :class:`~kinhec.synth.scenes.MultiScene` (:func:`graph_bound`).

    ``scale_unknown`` (default: whether the scene has a monocular scale) makes every camera's ``log s`` a
    nuisance parameter.  Outliers are not in the model (the bound then holds for the inliers' problem).
    """
    mono = any(s != 1.0 for s in scene.scale.values()) if scale_unknown is None else bool(scale_unknown)
    return graph_bound(scene.A_true, scene.C_true, scene.X, scene.Y, scene.configuration,
                       camera_noise=scene.camera_noise, robot_noise=scene.robot_noise,
                       student_t_dof=scene.student_t_dof, scale_groups=scene.cameras if mono else None,
                       masks={e: ~m for e, m in scene.outliers.items()})  # fmt: skip
