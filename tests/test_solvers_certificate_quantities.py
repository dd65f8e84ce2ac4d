"""The rotation problem and its certificate (``kinhec.solvers.certificate``): the quadratic form against the
chordal cost written out pair by pair, the Riemannian gradient and Hessian against finite differences, and the
dual lower bound of an arbitrary point against the certified minimum."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec import se3
from kinhec.solvers import certificate as ct


@pytest.fixture(scope="module")
def problem():
    """Two X, two Y, three edges, noisy rotation pairs with unequal weights."""
    rng = np.random.default_rng(61)
    RX = se3.random_rotations(rng, 2)
    RY = se3.random_rotations(rng, 2)
    edges = [(0, 0), (1, 0), (1, 1)]
    RA, RB, W = [], [], []
    for i, j in edges:
        n = 8
        Ra = se3.random_rotations(rng, n)
        noise = se3.so3_exp(rng.normal(size=(n, 3)) * 0.05)
        Rb = np.swapaxes(RY[j], -1, -2) @ Ra @ RX[i] @ noise  # R_A R_X = R_Y R_B up to noise
        RA.append(Ra)
        RB.append(Rb)
        W.append(rng.uniform(0.5, 2.0, n))
    prob = ct.rotation_problem(edges, RA, RB, W, 2, 2)
    return prob, edges, RA, RB, W, np.concatenate([RX, RY])


def _chordal(edges, RA, RB, W, R, nx=2):
    f = 0.0
    for (i, j), Ra, Rb, w in zip(edges, RA, RB, W):
        d = Ra @ R[i] - R[nx + j] @ Rb
        f += float(np.sum(w * np.sum(d * d, axis=(1, 2))))
    return f


def test_cost_is_the_weighted_chordal_distance(problem):
    prob, edges, RA, RB, W, R_true = problem
    rng = np.random.default_rng(62)
    for R in (R_true, se3.random_rotations(rng, 4)):
        assert prob.cost(R) == pytest.approx(_chordal(edges, RA, RB, W, R), rel=1e-12)


def test_kronecker_sum_is_the_sum_of_kronecker_products():
    rng = np.random.default_rng(63)
    Ra, Rb = se3.random_rotations(rng, 5), se3.random_rotations(rng, 5)
    w = rng.uniform(0.1, 1.0, 5)
    want = sum(wk * np.kron(a.T, b.T) for wk, a, b in zip(w, Ra, Rb))
    np.testing.assert_allclose(ct.edge_kronecker_sum(Ra, Rb, w), want, atol=1e-14)


def test_gradient_and_hessian_match_finite_differences(problem):
    prob, *_ = problem
    rng = np.random.default_rng(64)
    R = se3.random_rotations(rng, 4)
    Q = prob.quadratic_form()
    g, H = ct._gradient_hessian(Q, R)

    def f(d):
        return float(prob.cost(R @ se3.so3_exp(d.reshape(4, 3)), Q))

    h = 1e-4
    E = np.eye(12)
    g_fd = np.array([(f(h * e) - f(-h * e)) / (2 * h) for e in E])
    np.testing.assert_allclose(g, g_fd, atol=1e-6 * np.abs(g).max())
    H_fd = np.array([[(f(h * (a + b)) - f(h * (a - b)) - f(h * (b - a)) + f(-h * (a + b))) / (4 * h * h) for b in E]
                     for a in E])  # fmt: skip
    np.testing.assert_allclose(H, H_fd, atol=1e-4 * np.abs(H).max())


def test_the_bound_of_any_point_is_below_the_minimum(problem):
    prob, *_ = problem
    R_opt, cert = ct.global_rotations(prob, method="local")
    assert cert.tight
    rng = np.random.default_rng(65)
    for _ in range(20):
        R = se3.random_rotations(rng, 4)
        c = ct.dual_certificate(prob, R)
        assert c.lower_bound <= cert.cost * (1 + 1e-9)
        assert not c.tight and c.cost > cert.cost
