"""Certifiably globally optimal rotations of the generalised ``A_k X_i(k) = Y_j(k) B_k`` problem.

References
----------
E. Wise, P. Kaveti, Q. Chen, W. Wang, H. Singh, J. Kelly, D. M. Rosen, M. Giamou, "A certifiably correct
algorithm for generalized robot-world and hand-eye calibration", IJRR 2026 (arXiv:2507.23045): the
problem over a bipartite graph of hands/targets and cameras/worlds, relaxed to a semidefinite program.
D. M. Rosen, L. Carlone, A. S. Bandeira, J. J. Leonard, "SE-Sync: a certifiably correct algorithm for
synchronization over the special Euclidean group", IJRR 38(2-3), 2019: verification of a local solution
by a closed-form dual certificate, the lower bound from any multipliers.
B. O'Donoghue, E. Chu, N. Parikh, S. Boyd, "Conic optimization via operator splitting and homogeneous
self-dual embedding", JOTA 169(3), 2016 (SCS, the default SDP solver here).

The rotation problem
--------------------
With ``K`` unknown rotations ``R_1..R_K`` (first the ``X_i``, then the ``Y_j``) and the row-major
vectorisation ``z_i = vec(R_i)`` (``vec(R)[3 p + q] = R[p, q]``), pair ``k`` on edge ``(i, j)`` with weight
``w_k`` costs the chordal distance ::

    w_k ||R_A,k R_X,i - R_Y,j R_B,k||_F^2 = w_k (6 - 2 tr(R_X,i^T R_A,k^T R_Y,j R_B,k))
                                          = w_k (6 - 2 z_i^T kron(R_A,k^T, R_B,k^T) z_j)

so the whole cost is ``f(R) = c0 + z^T Q z`` with ``c0 = 6 sum_k w_k`` and ``Q`` holding, per edge, the
off-diagonal block ``-M_e`` with ``M_e = sum_k w_k kron(R_A,k^T, R_B,k^T)`` (9 x 9).  The data enter only
through these sums: the problem has size ``9 K`` whatever the number of pairs.  With ``w_k = 1 / (2
sigma_k^2)`` (``sigma_k^2`` the per-axis rotation variance of the pair) ``f`` is the negative
log-likelihood of isotropic (Langevin) rotation noise, in chi-square units (``||I - exp(w)||_F^2 ~ 2
|w|^2``).

Relaxation and certificate
--------------------------
``min f`` over ``SO(3)^K`` is a quadratically constrained quadratic program.  Dropping the determinant
(``O(3)^K``, a superset) and lifting ``Z = z z^T`` gives the Shor relaxation ::

    min  c0 + tr(Q Z)   s.t.  Z >= 0,  sum_p Z[(i,p,a), (i,p,b)] = delta_ab   (R_i^T R_i = I)
                                       [sum_q Z[(i,p,q), (i,p',q)] = delta_pp'  (R_i R_i^T = I, redundant)]

whose dual is ``max c0 + sum_i tr(P_i) [+ tr(P'_i)]`` s.t. ``S = Q - blockdiag(kron(I, P_i) [+ kron(P'_i,
I)]) >= 0`` for symmetric 3 x 3 multipliers.  For *any* symmetric multipliers and any feasible ``R``,
``f(R) = c0 + z^T S z + sum_i tr(P_i) >= c0 + sum_i tr(P_i) + 3 K min(0, lambda_min(S))`` (``|z|^2 = 3
K``): a rigorous lower bound on the global minimum, computed here in numpy from the multipliers whatever
produced them (closed form or an SDP solver of limited accuracy).

1. **Local solution.** Rotations from a maximum spanning tree of the edges (the edge best determined by its
   own data fixes its two ends by the top singular vectors of ``M_e``; each further unknown is the
   Procrustes solution given its tree parent), then Riemannian Newton (Levenberg-Marquardt damped) on
   ``SO(3)^K``.
2. **Dual certificate** (closed form, no solver): at a critical point the first-order conditions fix the
   multipliers of the ``R^T R = I`` constraints, ``P_i = sym(R_i^T G_i)`` with ``G_i`` the 3 x 3 block ``i``
   of ``Q z``; ``S z = 0`` then holds, and ``S >= 0`` proves ``R`` globally optimal (zero duality gap).
3. **SDP** (when the certificate fails, or always with ``method="sdp"``): the dual above, with the redundant
   row constraints, solved by SCS (or Clarabel).  The primal ``Z`` (the solver's dual variable) is rounded
   by its top eigenvector (blocks of one sign, projected onto SO(3)), refined by step 1, and certified
   again; the bound is that of the solver's multipliers (rigorous, see above).

``tight`` is true when the duality gap ``f(R) - bound`` is below :data:`GAP_TOL` of ``max(f(R),
GAP_FLOOR * c0)``: the rotations are then the global minimiser of ``f`` (over ``O(3)^K``, hence over
``SO(3)^K``).  What this does *not* certify: the translations, the anisotropic and robust weights of the
maximum-likelihood cost (:mod:`kinhec.solvers.multi_axyb` checks its estimate against the bound instead).

Solver choice.  SCS (first-order, operator splitting) handles the ``9 K``-dimensional semidefinite cone of
eight cameras and sixteen targets (``216 x 216``) in seconds; an interior-point method (Clarabel) forms the
dense Hessian of the cone, ``(9K (9K + 1) / 2)^2`` entries, which is 4.5 GB at that size, and is offered for
small problems (up to about four unknowns) where it is the more accurate.  Both are called directly in
their standard conic form (no modelling layer: the problem is already ``min c^T x, A x + s = b, s in PSD``).
Both are optional (``pip install "kinhec[certify]"``): without them the closed-form certificate still runs,
and an uncertified local solution is reported as such.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from kinhec.util.errors import InputError, UnknownNameError
from kinhec.util.optional import require
from kinhec.solvers import _common as c

__all__ = [
    "CITATION",
    "GAP_TOL",
    "GAP_FLOOR",
    "SDP_SOLVERS",
    "RotationProblem",
    "RotationCertificate",
    "rotation_problem",
    "initial_rotations",
    "refine_rotations",
    "dual_certificate",
    "solve_relaxation",
    "global_rotations",
]

CITATION = (
    "E. Wise et al., 'A certifiably correct algorithm for generalized robot-world and hand-eye calibration', "
    "IJRR 2026; D. M. Rosen et al., 'SE-Sync', IJRR 38(2-3), 2019; SCS: B. O'Donoghue et al., JOTA 169(3), 2016."
)

#: Relative duality gap below which the relaxation counts as tight at the rotations.
GAP_TOL = 1e-6
#: Floor of the gap's scale as a fraction of ``c0`` (noise-free data have a zero optimum).
GAP_FLOOR = 1e-9
#: SDP solvers (both optional: ``pip install "kinhec[certify]"``).
SDP_SOLVERS = ("scs", "clarabel")
#: Largest lifted dimension ``9 K`` handed to Clarabel (its cone Hessian grows as the fourth power).
CLARABEL_MAX_DIM = 45
#: Accuracy asked of SCS (its multipliers are re-checked in numpy: this only sets the bound's looseness).
SCS_EPS = 1e-5
SCS_MAX_ITERS = 20000


@dataclass(frozen=True)
class RotationProblem:
    """The weighted chordal rotation problem, reduced to its quadratic form.

    Attributes
    ----------
    n_x, n_y : int
        Numbers of ``X`` and ``Y`` unknowns; rotation ``k`` is ``X_k`` for ``k < n_x``, else ``Y_(k - n_x)``.
    edges : ndarray of int, shape (E, 2)
        ``(i, j)`` of every edge (indices into the ``X`` and ``Y`` lists).
    M : ndarray, shape (E, 9, 9)
        ``sum_k w_k kron(R_A,k^T, R_B,k^T)`` per edge.
    c0 : float
        ``6 sum_k w_k``: the cost is ``c0 + z^T Q z``.
    n_pairs : int
    """

    n_x: int
    n_y: int
    edges: np.ndarray
    M: np.ndarray
    c0: float
    n_pairs: int

    @property
    def n_rotations(self) -> int:
        return self.n_x + self.n_y

    def quadratic_form(self) -> np.ndarray:
        """The symmetric ``Q`` (9K, 9K) of ``f = c0 + z^T Q z``."""
        K = self.n_rotations
        Q = np.zeros((K, 9, K, 9))
        i, j = self.edges[:, 0], self.n_x + self.edges[:, 1]
        np.add.at(Q, (i, slice(None), j), -self.M)
        np.add.at(Q, (j, slice(None), i), -np.swapaxes(self.M, 1, 2))
        return Q.reshape(9 * K, 9 * K)

    def cost(self, R: np.ndarray, Q: np.ndarray | None = None) -> float:
        """``f(R)`` of rotations ``R`` (K, 3, 3)."""
        z = R.reshape(-1)
        Q = self.quadratic_form() if Q is None else Q
        return float(self.c0 + z @ Q @ z)


@dataclass
class RotationCertificate:
    """The certificate of a set of rotations.

    Attributes
    ----------
    cost : float
        ``f(R)`` at the rotations (chi-square units with ``w = 1 / (2 sigma^2)``).
    lower_bound : float
        A rigorous lower bound on the global minimum of ``f`` (from the multipliers, see the module text).
    duality_gap : float
        ``cost - lower_bound`` (>= 0 up to round-off).
    relative_gap : float
        ``duality_gap / max(cost, GAP_FLOOR c0)``.
    tight : bool
        ``relative_gap <= GAP_TOL``: the rotations are the certified global minimiser.
    min_eigenvalue : float
        Smallest eigenvalue of the certificate matrix ``S`` (>= 0 up to round-off when tight), scaled by
        ``3 K / max(cost, GAP_FLOOR c0)`` (its contribution to the relative gap).
    method : str
        ``"dual certificate"`` (closed form) or ``"sdp (scs)"`` / ``"sdp (clarabel)"``.
    sdp_dim : int
        Side of the semidefinite matrix, ``9 K``.
    solver_time_s : float
        CPU time of the SDP solver (0 without one).
    notes : list of str
    """

    cost: float
    lower_bound: float
    duality_gap: float
    relative_gap: float
    tight: bool
    min_eigenvalue: float
    method: str
    sdp_dim: int
    solver_time_s: float = 0.0
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "cost": float(self.cost), "lower_bound": float(self.lower_bound),
            "duality_gap": float(self.duality_gap), "relative_gap": float(self.relative_gap),
            "tight": bool(self.tight), "min_eigenvalue": float(self.min_eigenvalue), "method": self.method,
            "sdp_dim": int(self.sdp_dim), "solver_time_s": float(self.solver_time_s), "notes": list(self.notes),
        }  # fmt: skip


# --------------------------------------------------------------------------- #
# the problem
# --------------------------------------------------------------------------- #
def edge_kronecker_sum(RA: np.ndarray, RB: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_k w_k kron(R_A,k^T, R_B,k^T)`` (9, 9) of rotations (N, 3, 3): one product over the pairs.

    Entry ``[(p, q), (r, s)]`` is ``sum_k w_k R_A,k[r, p] R_B,k[s, q]``.
    """
    P = (RA.reshape(-1, 9) * w[:, None]).T @ RB.reshape(-1, 9)  # [(r, p), (s, q)]
    return P.reshape(3, 3, 3, 3).transpose(1, 3, 0, 2).reshape(9, 9)


def rotation_problem(edges, RA, RB, weights, n_x: int, n_y: int) -> RotationProblem:
    """Reduce the pairs of every edge to the quadratic form.

    Parameters
    ----------
    edges : sequence of (int, int)
        ``(i, j)`` per edge: ``X_i`` and ``Y_j``.
    RA, RB : sequence of ndarray, shape (N_e, 3, 3)
        Rotations of ``A_k`` and ``B_k`` of each edge's pairs.
    weights : sequence of ndarray, shape (N_e,)
        ``w_k >= 0`` per pair.
    n_x, n_y : int
        Numbers of unknowns.
    """
    E = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    M = np.stack([edge_kronecker_sum(a, b, np.asarray(w, dtype=np.float64)) for a, b, w in zip(RA, RB, weights)])
    c0 = 6.0 * float(sum(float(np.sum(w)) for w in weights))
    n = int(sum(len(w) for w in weights))
    return RotationProblem(int(n_x), int(n_y), E, M, c0, n)


# --------------------------------------------------------------------------- #
# local solution
# --------------------------------------------------------------------------- #
def _mat(v: np.ndarray) -> np.ndarray:
    return v.reshape(-1, 3, 3)


def initial_rotations(problem: RotationProblem) -> np.ndarray:
    """Rotations (K, 3, 3) from a maximum spanning tree of the edges (see the module text, step 1)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import breadth_first_order, minimum_spanning_tree

    K, nx = problem.n_rotations, problem.n_x
    s = np.linalg.svd(problem.M, compute_uv=False)
    # how well each edge fixes its own two rotations: the gap between its top singular values (relative to
    # the largest gap, so that the tree weights are all in (0, 1])
    rel = np.maximum(s[:, 0] - s[:, 1], 0.0)
    rel = rel / max(float(rel.max()), 1e-300)
    i, j = problem.edges[:, 0], nx + problem.edges[:, 1]
    W = coo_matrix((2.0 - rel, (i, j)), shape=(K, K)).tocsr()  # minimum tree of 2 - rel = maximum tree of rel
    tree = minimum_spanning_tree(W + W.T)
    tree = tree + tree.T
    e0 = int(np.argmax(rel))
    U, _, Vt = np.linalg.svd(problem.M[e0])
    MX, MY = U[:, 0].reshape(3, 3), Vt[0].reshape(3, 3)
    sign = 1.0 if np.linalg.det(MX) + np.linalg.det(MY) >= 0 else -1.0
    R = np.tile(np.eye(3), (K, 1, 1))
    root = int(i[e0])
    R[root] = c.project_to_so3(sign * MX)
    order, pred = breadth_first_order(tree, root, directed=False)
    index = {(int(a), int(b)): k for k, (a, b) in enumerate(zip(i, j))}
    for node in order[1:]:
        p = int(pred[node])
        if node >= nx:  # Y given its parent X: maximise y^T M^T x
            e = index[(p, node)]
            R[node] = c.project_to_so3((problem.M[e].T @ R[p].reshape(9)).reshape(3, 3))
        else:
            e = index[(node, p)]
            R[node] = c.project_to_so3((problem.M[e] @ R[p].reshape(9)).reshape(3, 3))
    unreached = np.setdiff1d(np.arange(K), order)
    if unreached.size:
        raise InputError(f"the graph of X and Y is not connected: rotations {unreached.tolist()} are not reached")
    return R


def _tangent_basis(R: np.ndarray) -> np.ndarray:
    """``T`` (9K, 3K): column ``3 i + a`` is ``vec(R_i hat(e_a))`` in block ``i``."""
    K = R.shape[0]
    E = c.skew(np.eye(3))  # (3, 3, 3): hat(e_a)
    blocks = np.einsum("kpq,aqr->kpra", R, E).reshape(K, 9, 3)
    T = np.zeros((K, 9, K, 3))
    T[np.arange(K), :, np.arange(K), :] = blocks
    return T.reshape(9 * K, 3 * K)


def _exp_so3(w: np.ndarray) -> np.ndarray:
    """Rodrigues for (K, 3) rotation vectors."""
    th = np.linalg.norm(w, axis=1)
    small = th < 1e-8
    ts = np.where(small, 1.0, th)
    a = np.where(small, 1.0 - th**2 / 6.0, np.sin(ts) / ts)
    b = np.where(small, 0.5 - th**2 / 24.0, (1.0 - np.cos(ts)) / (ts * ts))
    W = c.skew(w)
    return np.eye(3) + a[:, None, None] * W + b[:, None, None] * (W @ W)


def _gradient_hessian(Q: np.ndarray, R: np.ndarray):
    """Riemannian gradient (3K,) and Hessian (3K, 3K) of ``z^T Q z`` in the right perturbations ``R exp(d)``.

    ``z(d) = z + T d + s(d) / 2`` with ``s_i = vec(R_i hat(d_i)^2)``; ``hat(d)^2 = d d^T - |d|^2 I`` gives
    ``z^T Q s = sum_i d_i^T (sym(M_i) - tr(M_i) I) d_i`` with ``M_i = R_i^T G_i``, ``G = mat(Q z)``.
    """
    K = R.shape[0]
    z = R.reshape(-1)
    G = _mat(Q @ z)
    T = _tangent_basis(R)
    g = 2.0 * (T.T @ (Q @ z))
    Mi = np.swapaxes(R, 1, 2) @ G
    Ms = 0.5 * (Mi + np.swapaxes(Mi, 1, 2))
    D = Ms - np.trace(Mi, axis1=1, axis2=2)[:, None, None] * np.eye(3)
    H = 2.0 * (T.T @ Q @ T)
    idx = np.arange(K)
    Hb = H.reshape(K, 3, K, 3)
    Hb[idx, :, idx, :] += 2.0 * D
    return g, H


def refine_rotations(problem: RotationProblem, R0: np.ndarray, *, Q: np.ndarray | None = None,
                     max_iter: int = 100, tol: float = 1e-12) -> np.ndarray:  # fmt: skip
    """Riemannian Newton with Levenberg-Marquardt damping on ``SO(3)^K`` from ``R0`` (K, 3, 3): a local minimiser."""
    Q = problem.quadratic_form() if Q is None else Q
    R = c.project_to_so3(np.array(R0, dtype=np.float64))
    f = problem.cost(R, Q)
    mu = 1e-6
    scale = max(abs(problem.c0), 1e-300)
    for _ in range(max_iter):
        g, H = _gradient_hessian(Q, R)
        if float(np.max(np.abs(g))) <= tol * scale:
            break
        lam = np.linalg.eigvalsh(H)[0]
        d_h = max(abs(float(np.max(np.diag(H)))), 1e-300)
        while True:
            shift = mu * d_h + max(0.0, -lam) * 1.01
            step = -np.linalg.solve(H + shift * np.eye(H.shape[0]), g)
            Rn = R @ _exp_so3(step.reshape(-1, 3))
            fn = problem.cost(Rn, Q)
            if fn <= f + 1e-14 * scale:
                mu = max(mu / 10.0, 1e-12)
                break
            mu *= 10.0
            if mu > 1e12:
                return R
        done = f - fn <= 1e-15 * scale and float(np.max(np.abs(step))) < 1e-12
        R, f = c.project_to_so3(Rn), fn
        if done:
            break
    return R


# --------------------------------------------------------------------------- #
# certificate
# --------------------------------------------------------------------------- #
def _bound_scale(problem: RotationProblem, cost: float) -> float:
    return max(cost, GAP_FLOOR * problem.c0, 1e-300)


def dual_certificate(problem: RotationProblem, R: np.ndarray, *, Q: np.ndarray | None = None,
                     row_multipliers: np.ndarray | None = None) -> RotationCertificate:  # fmt: skip
    """Closed-form dual certificate of the rotations ``R`` (K, 3, 3) (step 2 of the module text).

    ``row_multipliers`` (K, 3, 3), symmetric: multipliers ``P'_i`` of the redundant ``R R^T = I`` constraints
    (e.g. an SDP solver's); the column multipliers then follow from the first-order conditions
    ``G_i = R_i P_i + P'_i R_i``, so that ``S z = 0`` holds exactly and only ``S >= 0`` remains to check.
    """
    Q = problem.quadratic_form() if Q is None else Q
    K = R.shape[0]
    z = R.reshape(-1)
    G = _mat(Q @ z)
    Rt = np.swapaxes(R, 1, 2)
    P = Rt @ G
    if row_multipliers is not None:
        P = P - Rt @ row_multipliers @ R
    P = 0.5 * (P + np.swapaxes(P, 1, 2))
    S = Q.copy().reshape(K, 9, K, 9)
    idx = np.arange(K)
    L = np.einsum("ab,kcd->kacbd", np.eye(3), P).reshape(K, 9, 9)
    if row_multipliers is not None:
        L = L + np.einsum("kab,cd->kacbd", row_multipliers, np.eye(3)).reshape(K, 9, 9)
    S[idx, :, idx, :] -= L
    S = S.reshape(9 * K, 9 * K)
    lam = float(np.linalg.eigvalsh(S)[0])
    cost = problem.c0 + float(z @ Q @ z)
    dual = float(np.trace(P, axis1=1, axis2=2).sum())
    if row_multipliers is not None:
        dual += float(np.trace(row_multipliers, axis1=1, axis2=2).sum())
    bound = problem.c0 + dual + 3.0 * K * min(lam, 0.0)
    return _certificate(problem, cost, bound, lam, "dual certificate", 0.0)


def _certificate(problem, cost, bound, lam, method, t, notes=None) -> RotationCertificate:
    gap = cost - bound
    sc = _bound_scale(problem, cost)
    rel = gap / sc
    return RotationCertificate(cost=cost, lower_bound=bound, duality_gap=gap, relative_gap=rel,
                               tight=bool(rel <= GAP_TOL), min_eigenvalue=3.0 * problem.n_rotations * lam / sc,
                               method=method, sdp_dim=9 * problem.n_rotations, solver_time_s=t,
                               notes=list(notes or []))  # fmt: skip


# --------------------------------------------------------------------------- #
# the SDP
# --------------------------------------------------------------------------- #
def _constraint_index(redundant: bool) -> list:
    """``(a, b, "column" | "row")`` of every per-rotation constraint, in the order of :func:`_constraint_blocks`."""
    out = []
    for a in range(3):
        for b in range(a, 3):
            out.append((a, b, "column"))
            if redundant and not (a == b == 2):  # tr(R R^T) = tr(R^T R): one trace is enough
                out.append((a, b, "row"))
    return out


def _constraint_blocks(redundant: bool):
    """Per-rotation multiplier matrices (m, 9, 9) and their objective coefficients (m,).

    ``kron(I, E)`` is ``tr(E R^T R)`` (columns), ``kron(E, I)`` is ``tr(E R R^T)`` (rows), for the row-major
    ``vec``.
    """
    mats, obj = [], []
    I3 = np.eye(3)
    for a, b, kind in _constraint_index(redundant):
        E = np.zeros((3, 3))
        E[a, b] = E[b, a] = 1.0
        mats.append(np.kron(I3, E) if kind == "column" else np.kron(E, I3))
        obj.append(1.0 if a == b else 0.0)
    return np.array(mats), np.array(obj)


def _svec_index(n: int, upper: bool):
    """Row and column indices of the scaled half-vectorisation: SCS lower-triangular by columns, Clarabel upper."""
    cols = np.repeat(np.arange(n), np.arange(n, 0, -1)) if not upper else np.repeat(np.arange(n), np.arange(1, n + 1))
    if upper:
        rows = np.concatenate([np.arange(j + 1) for j in range(n)])
    else:
        rows = np.concatenate([np.arange(j, n) for j in range(n)])
    return rows, cols


def solve_relaxation(problem: RotationProblem, *, solver: str = "scs", redundant: bool = True,
                     Q: np.ndarray | None = None):  # fmt: skip
    """Solve the dual SDP; returns ``(Z, bound, lambda_min, cpu_s, status, row_multipliers)``.

    ``Z`` (9K, 9K) is the primal moment matrix (the solver's dual variable), ``bound`` the rigorous lower
    bound on ``f`` of the solver's multipliers, ``row_multipliers`` (K, 3, 3) those of the redundant
    ``R R^T = I`` constraints (zero without them).

    Raises
    ------
    InputError
        Unknown solver, missing package, or a problem too large for Clarabel.
    """
    import scipy.sparse as sp

    if solver not in SDP_SOLVERS:
        raise UnknownNameError("SDP solver", solver, SDP_SOLVERS)
    Q = problem.quadratic_form() if Q is None else Q
    K = problem.n_rotations
    n = 9 * K
    if solver == "clarabel" and n > CLARABEL_MAX_DIM:
        raise InputError(f"solver: Clarabel's dense cone Hessian is too large for {K} rotations (9K = {n} > "
                         f"{CLARABEL_MAX_DIM}); expected solver='scs'")  # fmt: skip
    blocks, obj = _constraint_blocks(redundant)
    m = blocks.shape[0]
    rows, cols = _svec_index(n, upper=(solver == "clarabel"))
    scale = np.where(rows == cols, 1.0, math.sqrt(2.0))
    # column (i, c) of A: svec of the multiplier matrix c placed in block i; only the 45 entries of the block
    pos = -np.ones((n, n), dtype=np.int64)
    pos[rows, cols] = np.arange(rows.size)
    br, bc = np.nonzero(np.triu(np.ones((9, 9))) if solver == "clarabel" else np.tril(np.ones((9, 9))))
    data, ri, ci = [], [], []
    for i in range(K):
        p = pos[9 * i + br, 9 * i + bc]
        sc = np.where(br == bc, 1.0, math.sqrt(2.0))
        for k in range(m):
            v = blocks[k, br, bc] * sc
            nz = v != 0
            data.append(v[nz])
            ri.append(p[nz])
            ci.append(np.full(int(nz.sum()), i * m + k))
    A = sp.csc_matrix((np.concatenate(data), (np.concatenate(ri), np.concatenate(ci))), shape=(rows.size, K * m))
    qn = float(np.max(np.abs(Q))) or 1.0  # the solvers like unit-scale data
    b = Q[rows, cols] * scale / qn
    cvec = -np.tile(obj, K)
    t0 = time.process_time()
    if solver == "scs":
        scs = require("scs", "the SDP relaxation")
        s = scs.SCS(dict(A=A, b=b, c=cvec), dict(s=[n]), eps_abs=SCS_EPS, eps_rel=SCS_EPS, verbose=False,
                    max_iters=SCS_MAX_ITERS)  # fmt: skip
        sol = s.solve()
        lam_vec, zvec, status = np.asarray(sol["x"]), np.asarray(sol["y"]), str(sol["info"]["status"])
    else:
        clarabel = require("clarabel", "the SDP relaxation")
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        s = clarabel.DefaultSolver(sp.csc_matrix((K * m, K * m)), cvec, A, b, [clarabel.PSDTriangleConeT(n)], settings)
        sol = s.solve()
        lam_vec, zvec, status = np.asarray(sol.x), np.asarray(sol.z), str(sol.status)
    cpu = time.process_time() - t0
    lam_vec = lam_vec * qn
    Z = np.zeros((n, n))
    Z[rows, cols] = zvec / scale
    Z = Z + Z.T - np.diag(np.diag(Z))
    # the rigorous bound of these multipliers
    L = np.einsum("km,mab->kab", lam_vec.reshape(K, m), blocks)
    S = Q.copy().reshape(K, 9, K, 9)
    idx = np.arange(K)
    S[idx, :, idx, :] -= L
    lam_min = float(np.linalg.eigvalsh(S.reshape(n, n))[0])
    bound = problem.c0 + float(np.tile(obj, K) @ lam_vec) + 3.0 * K * min(lam_min, 0.0)
    rows = np.zeros((K, 3, 3))
    lv = lam_vec.reshape(K, m)
    for k, (a, b, kind) in enumerate(_constraint_index(redundant)):
        if kind == "row":
            rows[:, a, b] = rows[:, b, a] = lv[:, k]
    return Z, bound, lam_min, cpu, status, rows


def round_moment_matrix(Z: np.ndarray) -> np.ndarray:
    """Rotations (K, 3, 3) from the top eigenvector of ``Z``: one sign for all blocks (most determinants
    positive), each block projected onto SO(3)."""
    w, V = np.linalg.eigh(Z)
    v = V[:, -1] * math.sqrt(max(w[-1], 0.0))
    B = _mat(v)
    sign = 1.0 if float(np.sum(np.linalg.det(B))) >= 0 else -1.0
    return c.project_to_so3(sign * B)


def global_rotations(problem: RotationProblem, *, start: np.ndarray | None = None, method: str = "auto",
                     solver: str = "scs") -> tuple[np.ndarray, RotationCertificate]:  # fmt: skip
    """Certified global rotations: local solution, certificate, and the SDP when needed.

    Parameters
    ----------
    problem : RotationProblem
    start : ndarray, shape (K, 3, 3), optional
        Start of the local solution (default: the spanning tree of :func:`initial_rotations`).
    method : {"auto", "local", "sdp"}
        ``auto``: the SDP only when the closed-form certificate fails; ``local``: never (the certificate
        says whether the local solution is global); ``sdp``: always.
    solver : {"scs", "clarabel"}

    Returns
    -------
    R : ndarray, shape (K, 3, 3)
    certificate : RotationCertificate
    """
    if method not in ("auto", "local", "sdp"):
        raise UnknownNameError("certificate method", method, ("auto", "local", "sdp"))
    Q = problem.quadratic_form()
    R = refine_rotations(problem, initial_rotations(problem) if start is None else start, Q=Q)
    cert = dual_certificate(problem, R, Q=Q)
    if method == "local" or (method == "auto" and cert.tight):
        return R, cert
    Z, bound, lam_min, cpu, status, rows = solve_relaxation(problem, solver=solver, Q=Q)
    Rs = refine_rotations(problem, round_moment_matrix(Z), Q=Q)
    notes = [f"{solver}: {status}"]
    cands = [(Rs, dual_certificate(problem, Rs, Q=Q)), (Rs, dual_certificate(problem, Rs, Q=Q, row_multipliers=rows))]
    if cert.cost <= cands[0][1].cost:
        # the local solution is as good: the solver's row multipliers may certify it (exactly) as well
        cands.append((R, dual_certificate(problem, R, Q=Q, row_multipliers=rows)))
    R_best, c_best = min([(R, cert)] + cands, key=lambda rc: (rc[1].cost, -rc[1].lower_bound))
    if R_best is not R:
        notes.append(f"the SDP's rounded solution improves the local one ({cert.cost:.6g} -> {c_best.cost:.6g})")
    # the best rigorous bound of all: the solver's multipliers, or the closed forms at the rounded solution
    src = max([(bound, None)] + [(c.lower_bound, c) for _, c in cands], key=lambda bc: bc[0])
    lb, c_lb = src
    K = problem.n_rotations
    lam = lam_min if c_lb is None else c_lb.min_eigenvalue * _bound_scale(problem, c_lb.cost) / (3.0 * K)
    return R_best, _certificate(problem, c_best.cost, lb, lam, f"sdp ({solver})", cpu, notes)
