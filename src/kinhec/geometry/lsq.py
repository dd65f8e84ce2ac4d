"""Sparse nonlinear least squares for bundle-type problems: block Jacobians, Levenberg-Marquardt, Huber.

The reprojection problems of kinhec (:mod:`kinhec.models.intrinsics`,
:mod:`kinhec.solvers.reprojection`) have a few *shared* parameters
(intrinsics, hand-eye, world) that touch every residual and *per-view*
blocks of six (a view pose or a robot-pose correction) that touch only the
residuals of their view.  :class:`BlockStructure` describes that sparsity
(it is also what a ``jac_sparsity`` pattern for
:func:`scipy.optimize.least_squares` encodes, see :meth:`BlockStructure.pattern`).

:func:`block_jacobian` builds the Jacobian by forward differences in
``n_shared + block`` evaluations, however many views there are: column ``c``
of every view block is perturbed at once, since the views' residuals do not
overlap (Curtis, Powell and Reid 1974).

A caller that has the Jacobian analytically (the bundle adjustment of
:mod:`kinhec.calibrate.bundle`, the camera calibration of
:mod:`kinhec.models.intrinsics`) hands it to :func:`levenberg_marquardt` as
``jac`` in the same parts (:class:`BlockJacobian`); the differences are then
not taken.

:func:`levenberg_marquardt` minimises ``sum rho(r_i)`` with Marquardt's
scaled damping on the normal equations (``H + lambda diag(H)``) and the
Huber loss by iteratively reweighted least squares (Holland and Welsch
1977): weights ``w_i = min(1, f / |r_i|)`` on the robust residuals.  The
normal equations are small (shared + 6 x views parameters) and solved
densely, which converges in a handful of steps where a trust-region solver
with an iterative inner solver needs hundreds.

References
----------
A. R. Curtis, M. J. D. Powell and J. K. Reid, "On the estimation of sparse
Jacobian matrices," *IMA J. Applied Mathematics* 13(1), 1974.
D. W. Marquardt, *SIAM J. Applied Mathematics* 11(2), 1963.
P. W. Holland and R. E. Welsch, "Robust regression using iteratively
reweighted least-squares," *Comm. in Statistics* 6(9), 1977.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp

from kinhec.util.errors import InputError

__all__ = ["BlockStructure", "BlockJacobian", "block_jacobian", "block_jacobian_parts", "LMResult", "levenberg_marquardt", "huber_weights"]


@dataclass(frozen=True)
class BlockStructure:
    """Sparsity of a problem with shared parameters and per-view parameter blocks.

    Parameter vector: ``n_shared`` shared entries, then ``n_views`` blocks of
    ``block`` entries.  ``row_view[i]`` is the view of residual ``i`` (``-1``:
    a residual that no view block touches); a prior residual on a block
    belongs to that block's view.
    """

    n_shared: int
    n_views: int
    block: int
    row_view: np.ndarray

    @property
    def n_params(self) -> int:
        return self.n_shared + self.n_views * self.block

    def pattern(self) -> sp.csr_matrix:
        """0/1 ``jac_sparsity`` pattern of shape ``(len(row_view), n_params)``."""
        M = self.row_view.size
        rows_s = np.repeat(np.arange(M), self.n_shared)
        cols_s = np.tile(np.arange(self.n_shared), M)
        ok = np.flatnonzero(self.row_view >= 0)
        rows_b = np.repeat(ok, self.block)
        cols_b = (self.n_shared + self.block * self.row_view[ok][:, None] + np.arange(self.block)).ravel()
        rows = np.concatenate([rows_s, rows_b])
        cols = np.concatenate([cols_s, cols_b])
        return sp.csr_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(M, self.n_params))


@dataclass(frozen=True)
class BlockJacobian:
    """A Jacobian with the sparsity of a :class:`BlockStructure`, kept as its nonzero parts.

    ``shared`` ``(M, n_shared)``: the columns of the shared parameters (dense); ``blocks`` ``(K, block)``: the
    entries of the per-view columns on the rows ``rows`` ``(K,)`` (those whose view is ``>= 0``), each in the
    columns of its own view's block.
    """

    shared: np.ndarray
    blocks: np.ndarray
    rows: np.ndarray
    structure: BlockStructure

    def csr(self) -> sp.csr_matrix:
        """The Jacobian as a CSR matrix ``(M, n_params)``."""
        s = self.structure
        M = self.shared.shape[0]
        ok = self.rows
        rows = np.concatenate([np.repeat(np.arange(M), s.n_shared), np.repeat(ok, s.block)])
        cols = np.concatenate([
            np.tile(np.arange(s.n_shared), M),
            (s.n_shared + s.block * s.row_view[ok][:, None] + np.arange(s.block)).ravel(),
        ])  # fmt: skip
        vals = np.concatenate([self.shared.ravel(), self.blocks.ravel()])
        return sp.csr_matrix((vals, (rows, cols)), shape=(M, s.n_params))

    def normal(self, r: np.ndarray | None = None, w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """``(J^T W J, J^T W r)`` as dense arrays from the blocks (``W = diag(w)``, default the identity).

        Equal to the sparse products up to the order of the sums (a few units of the last digit): the shared
        columns as one dense product, each view's own block and its coupling to the shared columns summed
        over that view's rows only.
        """
        s = self.structure
        S, B, ok = self.shared, self.blocks, self.rows
        ns, b, N = s.n_shared, s.block, s.n_views
        w = np.ones(S.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
        Sw = S * w[:, None]
        Bw = B * w[ok][:, None]
        n = s.n_params
        H = np.zeros((n, n))
        Hss = S.T @ Sw
        H[:ns, :ns] = 0.5 * (Hss + Hss.T)  # symmetric to the last bit (a product's halves round apart)
        g = None if r is None else np.empty(n)
        if g is not None:
            g[:ns] = Sw.T @ r
        if N and ok.size:
            view = s.row_view[ok]
            order = np.argsort(view, kind="stable")
            bounds = np.searchsorted(view[order], np.arange(N + 1))
            Sw_o, B_o, Bw_o = Sw[ok[order]], B[order], Bw[order]
            rB_o = None if r is None else Bw_o * r[ok[order]][:, None]
            for v in range(N):
                a, e = bounds[v], bounds[v + 1]
                j = ns + b * v
                Hbb = B_o[a:e].T @ Bw_o[a:e]
                H[j : j + b, j : j + b] = 0.5 * (Hbb + Hbb.T)
                H[:ns, j : j + b] = Sw_o[a:e].T @ B_o[a:e]
                H[j : j + b, :ns] = H[:ns, j : j + b].T
                if g is not None:
                    g[j : j + b] = rB_o[a:e].sum(axis=0)
        elif g is not None:
            g[ns:] = 0.0
        return H, g


def block_jacobian_parts(fun: Callable[[np.ndarray], np.ndarray], x: np.ndarray, r0: np.ndarray,
                         s: BlockStructure, *, central: bool = False) -> BlockJacobian:  # fmt: skip
    """Finite-difference Jacobian of ``fun`` at ``x`` (``r0 = fun(x)``) with the structure ``s``, as its parts.

    Forward differences (``n_shared + block`` evaluations of ``fun``, relative
    error about 1e-8), or ``central`` ones (twice as many, about 1e-10).
    """
    M = r0.size
    eps = np.finfo(float).eps ** (1.0 / 3.0 if central else 0.5)
    h_all = eps * np.maximum(1.0, np.abs(x))

    def diff(idx):
        xp = x.copy()
        xp[idx] += h_all[idx]
        if not central:
            return fun(xp) - r0, xp[idx] - x[idx]
        xm = x.copy()
        xm[idx] -= h_all[idx]
        return fun(xp) - fun(xm), xp[idx] - xm[idx]

    cols_dense = np.empty((M, s.n_shared))
    for j in range(s.n_shared):
        df, dx = diff(np.array([j]))
        cols_dense[:, j] = df / dx[0]
    ok = np.flatnonzero(s.row_view >= 0)
    vals_b = np.zeros((ok.size, s.block))
    for c in range(s.block):
        idx = s.n_shared + s.block * np.arange(s.n_views) + c
        if idx.size == 0:
            continue
        df, dx = diff(idx)
        vals_b[:, c] = df[ok] / dx[s.row_view[ok]]
    return BlockJacobian(cols_dense, vals_b, ok, s)


def block_jacobian(fun: Callable[[np.ndarray], np.ndarray], x: np.ndarray, r0: np.ndarray,
                   s: BlockStructure, *, central: bool = False) -> sp.csr_matrix:  # fmt: skip
    """Finite-difference Jacobian of ``fun`` at ``x`` (``r0 = fun(x)``) with the structure ``s``.

    Forward differences (``n_shared + block`` evaluations of ``fun``, relative
    error about 1e-8), or ``central`` ones (twice as many, about 1e-10).
    Returns a CSR matrix of shape ``(len(r0), s.n_params)`` (:func:`block_jacobian_parts` keeps the parts,
    whose :meth:`BlockJacobian.normal` forms ``J^T J`` without the sparse products).
    """
    return block_jacobian_parts(fun, x, r0, s, central=central).csr()


def huber_weights(r: np.ndarray, f_scale: float) -> np.ndarray:
    """IRLS weights of the Huber loss: 1 inside ``|r| <= f_scale``, ``f_scale / |r|`` outside."""
    a = np.abs(r)
    return np.where(a <= f_scale, 1.0, f_scale / np.maximum(a, 1e-300))


def _cost(r: np.ndarray, n_robust: int, loss: str, f: float) -> float:
    rr, rl = r[:n_robust], r[n_robust:]
    if loss == "huber":
        a = np.abs(rr)
        c = np.where(a <= f, a * a, 2.0 * f * a - f * f).sum()
    else:
        c = float(rr @ rr)
    return 0.5 * float(c + rl @ rl)


@dataclass(frozen=True)
class LMResult:
    """Result of :func:`levenberg_marquardt`.

    Attributes
    ----------
    x : ndarray, shape (n,)
        Solution.
    residuals : ndarray, shape (m,)
        Unweighted residuals at ``x``.
    jac : scipy.sparse.csr_matrix, shape (m, n)
        Jacobian at ``x``.
    weights : ndarray, shape (m,)
        IRLS weights at ``x`` (1 for a linear loss).
    cost : float
        ``0.5 sum rho(r_i)``.
    n_iter : int
    converged : bool
    """

    x: np.ndarray
    residuals: np.ndarray
    jac: sp.csr_matrix
    weights: np.ndarray
    cost: float
    n_iter: int
    converged: bool


def levenberg_marquardt(fun, x0, structure: BlockStructure, *, n_robust: int | None = None, loss: str = "linear",
                        f_scale: float = 1.0, max_iter: int = 100, tol: float = 1e-10, jac=None) -> LMResult:  # fmt: skip
    """Minimise ``0.5 sum rho(fun(x)_i)`` by Levenberg-Marquardt with a block-sparse Jacobian.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> r`` of shape ``(m,)``.
    x0 : ndarray, shape (n,)
    structure : BlockStructure
    n_robust : int, optional
        The first ``n_robust`` residuals carry the loss; the others are
        squared as they are (priors).  Default: all.
    loss : {"linear", "huber"}
    f_scale : float
        Huber threshold, in the residuals' unit.
    max_iter : int
    tol : float
        Stop when a step changes every parameter by less than ``tol``
        (relative to ``max(1, |x|)``), or when no step lowers the cost any
        more (the minimum within round-off).  There is deliberately no test
        on the decrease of the cost: near the minimum the cost is flat and
        such a test stops early in weakly determined directions, where the
        last digits of the result would then depend on round-off.
    jac : callable, optional
        ``jac(x) -> BlockJacobian``, the Jacobian of ``fun`` at ``x`` with the sparsity of ``structure``
        (analytic).  Default: finite differences (:func:`block_jacobian_parts`, forward in the iterations and
        central for the final Gauss-Newton steps).
    """
    if loss not in ("linear", "huber"):
        raise InputError(f"loss: expected 'linear' or 'huber', got {loss!r}")
    if not (np.isfinite(f_scale) and f_scale > 0):
        raise InputError(f"f_scale: expected a positive number, got {f_scale!r}")
    x = np.asarray(x0, dtype=np.float64).copy()
    r = fun(x)
    m = r.size
    nr = m if n_robust is None else int(n_robust)

    def weights(res):
        w = np.ones(m)
        if loss == "huber":
            w[:nr] = huber_weights(res[:nr], f_scale)
        return w

    def jacobian(x, r, central=False):
        return jac(x) if jac is not None else block_jacobian_parts(fun, x, r, structure, central=central)

    cost = _cost(r, nr, loss, f_scale)
    lam = 1e-3
    converged = False
    it = 0
    J = jacobian(x, r)
    for it in range(1, max_iter + 1):
        w = weights(r)
        H, g = J.normal(r, w)
        d = np.maximum(np.diag(H), 1e-12 * max(np.diag(H).max(), 1e-300))
        accepted = False
        while lam < 1e16:
            try:
                dx = np.linalg.solve(H + lam * np.diag(d), -g)
            except np.linalg.LinAlgError:
                lam *= 10.0
                continue
            x_new = x + dx
            r_new = fun(x_new)
            c_new = _cost(r_new, nr, loss, f_scale) if np.isfinite(r_new).all() else np.inf
            if c_new < cost:
                accepted = True
                break
            lam *= 4.0
        if not accepted:
            converged = True  # no descent left within round-off
            break
        small_step = np.all(np.abs(dx) <= tol * np.maximum(1.0, np.abs(x)))
        x, r, cost = x_new, r_new, c_new
        lam = max(lam / 3.0, 1e-12)
        J = jacobian(x, r)
        if small_step:
            converged = True
            break
    # Gauss-Newton polish: at the minimum the cost cannot tell steps of a
    # millionth of a standard deviation apart, but the gradient J^T W r can;
    # two undamped steps land on its zero, so the result no longer depends on
    # the round-off of the cost (the last digits are stable across platforms).
    J = jacobian(x, r, central=True)
    for _ in range(2):
        w = weights(r)
        H, g = J.normal(r, w)
        d = np.maximum(np.diag(H), 1e-12 * max(np.diag(H).max(), 1e-300))
        try:
            dx = np.linalg.solve(H + 1e-12 * np.diag(d), -g)
        except np.linalg.LinAlgError:
            break
        r_new = fun(x + dx)
        if not np.isfinite(r_new).all():
            break
        c_new = _cost(r_new, nr, loss, f_scale)
        if c_new > cost * (1.0 + 1e-9):
            break
        x, r, cost = x + dx, r_new, c_new
        J = jacobian(x, r, central=True)
    return LMResult(x, r, J.csr(), weights(r), cost, it, converged)
