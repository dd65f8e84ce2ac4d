"""The certificate of globally optimal rotations (``kinhec.solvers.certificate``): the reduced quadratic form
against the chordal cost it stands for, the Riemannian derivatives against finite differences, the rigorous
lower bound, both outcomes of the closed-form certificate, and the SDP through both solvers."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.util.errors import InputError
from kinhec.util.optional import MissingDependencyError
from kinhec.solvers import certificate as ct


def problem(rng, n_x=3, n_y=2, n=6, rot_std=0.05, edges=None, weights=True):
    """A rotation problem with known truth: ``R_A R_X = R_Y R_B`` up to noise on ``R_B``."""
    RX, RY = se3.random_rotations(rng, n_x), se3.random_rotations(rng, n_y)
    edges = edges or [(i, j) for i in range(n_x) for j in range(n_y)]
    RA, RB, W = [], [], []
    for i, j in edges:
        ra = se3.random_rotations(rng, n)
        rb = RY[j].T @ ra @ RX[i] @ se3.so3_exp(rng.normal(0, rot_std, (n, 3)))
        RA.append(ra)
        RB.append(rb)
        W.append(rng.uniform(0.2, 3.0, n) if weights else np.ones(n))
    return ct.rotation_problem(edges, RA, RB, W, n_x, n_y), (RA, RB, W, edges), np.concatenate([RX, RY])


def chordal(data, R, n_x):
    RA, RB, W, edges = data
    return sum(float(np.sum(w * np.sum((ra @ R[i] - R[n_x + j] @ rb) ** 2, axis=(1, 2))))
               for ra, rb, w, (i, j) in zip(RA, RB, W, edges))  # fmt: skip


def test_quadratic_form_is_the_chordal_cost(rng=None):
    rng = np.random.default_rng(0)
    prob, data, _ = problem(rng)
    Q = prob.quadratic_form()
    assert np.allclose(Q, Q.T)
    for _ in range(3):
        R = se3.random_rotations(rng, prob.n_rotations)
        assert prob.cost(R, Q) == pytest.approx(chordal(data, R, prob.n_x), rel=1e-12)


def test_gradient_and_hessian_match_finite_differences():
    rng = np.random.default_rng(1)
    prob, _, _ = problem(rng, rot_std=0.3)
    Q = prob.quadratic_form()
    R = se3.random_rotations(rng, prob.n_rotations)
    g, H = ct._gradient_hessian(Q, R)
    P = 3 * prob.n_rotations

    def f(d):
        return prob.cost(R @ se3.so3_exp(d.reshape(-1, 3)), Q)

    h = 1e-5
    E = np.eye(P)
    g_num = np.array([(f(h * e) - f(-h * e)) / (2 * h) for e in E])
    H_num = np.array([[(f(h * (a + b)) - f(h * (a - b)) - f(h * (b - a)) + f(-h * (a + b))) / (4 * h * h) for b in E]
                      for a in E])  # fmt: skip
    scale = np.abs(H).max()
    assert np.allclose(g, g_num, atol=1e-6 * scale)
    assert np.allclose(H, H_num, atol=1e-4 * scale)


def test_noise_free_truth_is_certified_with_zero_cost():
    rng = np.random.default_rng(2)
    prob, _, R_true = problem(rng, rot_std=0.0)
    R, cert = ct.global_rotations(prob, method="local")
    assert cert.tight and cert.method == "dual certificate"
    assert cert.cost == pytest.approx(0.0, abs=1e-9 * prob.c0)
    assert np.abs(R - R_true).max() < 1e-8


def test_the_bound_holds_anywhere_and_is_tight_only_at_the_optimum():
    """Any rotations give a valid lower bound (never above the certified optimum); at a point that is not the
    optimum the certificate refuses, at the optimum it accepts."""
    rng = np.random.default_rng(3)
    prob, _, R_true = problem(rng, rot_std=0.1)
    R_opt, cert_opt = ct.global_rotations(prob, method="local")
    assert cert_opt.tight and cert_opt.relative_gap < 1e-9
    for _ in range(5):
        R = se3.random_rotations(rng, prob.n_rotations)
        c = ct.dual_certificate(prob, R)
        assert c.lower_bound <= cert_opt.cost + 1e-9 * prob.c0
        assert not c.tight and c.duality_gap > 0
    near = R_opt @ se3.so3_exp(rng.normal(0, 0.02, (prob.n_rotations, 3)))
    assert not ct.dual_certificate(prob, near).tight
    # multipliers of the redundant row constraints: any symmetric choice still gives a valid bound, and at the
    # optimum the first-order conditions keep it exact for small ones
    for scale in (1e-3, 1.0):
        M = rng.normal(0, scale, (prob.n_rotations, 3, 3))
        rows = 0.5 * (M + np.swapaxes(M, 1, 2))
        c = ct.dual_certificate(prob, R_opt, row_multipliers=rows)
        assert c.lower_bound <= cert_opt.cost + 1e-9 * prob.c0
    assert ct.dual_certificate(prob, R_opt, row_multipliers=np.zeros((prob.n_rotations, 3, 3))).tight


def test_a_wrong_local_minimum_is_refused_and_the_sdp_finds_the_global_one():
    """Block-wise Procrustes from random rotations stalls in non-global critical points: the closed-form
    certificate refuses them; the SDP's rounded solution is the certified global optimum."""
    pytest.importorskip("scs")
    rng = np.random.default_rng(4)
    prob, _, R_true = problem(rng, n_x=4, n_y=3, n=8, rot_std=0.05)
    Q = prob.quadratic_form()
    R_opt, cert_opt = ct.global_rotations(prob, method="local")
    assert cert_opt.tight
    wrong = []
    for _ in range(20):
        R = se3.random_rotations(rng, prob.n_rotations)
        for _ in range(30):  # block coordinate descent: each block the Procrustes solution given the others
            for b in range(prob.n_rotations):
                G = (Q[9 * b : 9 * b + 9] @ R.reshape(-1)).reshape(3, 3)
                R[b] = ct.c.project_to_so3(-G)
        c = ct.dual_certificate(prob, R, Q=Q)
        if c.cost > cert_opt.cost * (1 + 1e-6):
            wrong.append(R)
            assert not c.tight
    assert wrong, "expected some random starts to stall away from the optimum"
    R_sdp, cert = ct.global_rotations(prob, start=wrong[0], method="auto", solver="scs")
    assert cert.tight and cert.method == "sdp (scs)"
    assert cert.cost == pytest.approx(cert_opt.cost, rel=1e-9)
    assert np.abs(R_sdp - R_opt).max() < 1e-6


@pytest.mark.parametrize("solver", ["scs", "clarabel"])
def test_sdp_bound_equals_the_optimum(solver):
    pytest.importorskip(solver)
    rng = np.random.default_rng(5)
    prob, _, _ = problem(rng, n_x=2, n_y=2, n=5, rot_std=0.2)
    _, cert_opt = ct.global_rotations(prob, method="local")
    Z, bound, lam_min, cpu, status, rows = ct.solve_relaxation(prob, solver=solver)
    assert bound <= cert_opt.cost + 1e-9 * prob.c0
    assert bound == pytest.approx(cert_opt.cost, abs=1e-4 * max(cert_opt.cost, 1.0))
    R = ct.round_moment_matrix(Z)
    assert np.abs(ct.refine_rotations(prob, R) - ct.refine_rotations(prob, ct.initial_rotations(prob))).max() < 1e-6


def test_solver_errors_name_the_fix(monkeypatch):
    rng = np.random.default_rng(6)
    prob, _, _ = problem(rng, n_x=3, n_y=3, n=3)
    with pytest.raises(InputError, match="scs"):
        ct.solve_relaxation(prob, solver="mosek")
    with pytest.raises(InputError, match="too large for 6 rotations"):
        ct.solve_relaxation(prob, solver="clarabel")
    monkeypatch.setitem(__import__("sys").modules, "scs", None)
    with pytest.raises(MissingDependencyError,
                       match=r'^the SDP relaxation needs scs, which is not installed: pip install "kinhec\[certify\]"$'):
        ct.solve_relaxation(prob, solver="scs")


def test_disconnected_edges_are_refused():
    rng = np.random.default_rng(7)
    prob, _, _ = problem(rng, n_x=2, n_y=2, edges=[(0, 0), (1, 1)])
    with pytest.raises(InputError, match="not connected"):
        ct.initial_rotations(prob)


def test_the_start_follows_the_best_determined_edges_past_a_very_noisy_one():
    # two X and two Y joined by four edges (a cycle): three with 0.3 deg of noise on R_B, one with 57 deg (1 rad)
    # per axis.  The spanning tree of the start must leave the noisy edge out, so that every rotation starts within
    # a few tenths of a degree of the truth (reached through the noisy edge, one starts about 9 deg off).
    rng = np.random.default_rng(39)
    n_x, n_y, n = 2, 2, 8
    RX, RY = se3.random_rotations(rng, n_x), se3.random_rotations(rng, n_y)
    edges = [(0, 0), (0, 1), (1, 0), (1, 1)]
    RA, RB, W = [], [], []
    for e, (i, j) in enumerate(edges):
        noise = 1.0 if e == 2 else np.radians(0.3)
        ra = se3.random_rotations(rng, n)
        RA.append(ra)
        RB.append(RY[j].T @ ra @ RX[i] @ se3.so3_exp(rng.normal(0, noise, (n, 3))))
        W.append(np.ones(n))
    prob = ct.rotation_problem(edges, RA, RB, W, n_x, n_y)
    R0 = ct.initial_rotations(prob)
    err = np.degrees(se3.rotation_angle(np.swapaxes(R0, 1, 2) @ np.concatenate([RX, RY])))
    assert err.max() < 2.0, err
