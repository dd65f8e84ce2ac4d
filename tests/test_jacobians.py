"""Every analytic Jacobian, gradient and information matrix of kinhec against finite differences, in one place.

Each entry of :data:`REGISTRY` builds, at a random point with unequal scales (translations from centimetres
to metres, rotations far from the identity, uneven whitening and weights), a function and the analytic
derivative kinhec computes for it; the test compares it with central differences column by column (each
column relative to its own size, so a small block cannot hide behind a large one).  A Jacobian written for
a Gauss-Newton step that is exact only at zero residual is checked at a point where the data fit exactly.

A new Jacobian joins by name: :func:`test_every_derivative_in_the_package_is_registered` lists every function
of the package whose name says it computes a Jacobian, gradient, Hessian, information or normal matrix, and
fails on one that no entry covers (or that :data:`NOT_DERIVATIVES` does not excuse with a reason).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize

import kinhec
from kinhec.geometry import se3
from kinhec.solvers import pair_model as pm

PKG = Path(kinhec.__file__).parent


@dataclass
class Case:
    """``kind="jacobian"``: ``analytic`` is ``d fun / d x`` (m, n) at ``x0``.  ``"normal"``: ``analytic`` is
    ``J^T J`` of the residual ``fun``.  ``"gradient"``: ``analytic`` is the gradient (n,) of the scalar ``fun``;
    ``"hessian"``: its Hessian (n, n)."""

    label: str
    fun: Callable[[np.ndarray], np.ndarray]
    x0: np.ndarray
    analytic: np.ndarray
    kind: str = "jacobian"
    h: float = 1e-6
    rtol: float = 1e-6
    numeric: np.ndarray | None = None  # finite differences already taken (of a function that changes later)


REGISTRY: dict[str, tuple[tuple[str, ...], Callable]] = {}


def jacobian(name: str, covers: tuple[str, ...]):
    """Register an entry: ``covers`` names the package's functions (``module:qualname``) it checks."""

    def deco(make):
        REGISTRY[name] = (covers, make)
        return make

    return deco


def _fd(fun, x0, h):
    x0 = np.asarray(x0, dtype=np.float64)
    cols = []
    for k in range(x0.size):
        d = np.zeros_like(x0)
        d.flat[k] = h
        cols.append((np.ravel(fun(x0 + d)) - np.ravel(fun(x0 - d))) / (2 * h))
    return np.stack(cols, axis=-1)


def _compare(case: Case):
    if case.kind == "gradient":
        num, ana = _fd(lambda x: np.atleast_1d(case.fun(x)), case.x0, case.h)[0], case.analytic
    elif case.kind == "hessian":
        grad = lambda x: _fd(lambda y: np.atleast_1d(case.fun(y)), x, case.h)[0]  # noqa: E731
        num, ana = _fd(grad, case.x0, case.h), case.analytic
    elif case.kind == "normal":
        J = _fd(case.fun, case.x0, case.h)
        num, ana = J.T @ J, case.analytic
    else:
        num = _fd(case.fun, case.x0, case.h) if case.numeric is None else case.numeric
        ana = case.analytic
    num, ana = np.atleast_2d(num), np.atleast_2d(np.asarray(ana, dtype=np.float64))
    assert ana.shape == num.shape, f"{case.label}: analytic shape {ana.shape}, numerical {num.shape}"
    col = np.abs(num).max(axis=0)
    floor = 1e-9 * max(float(col.max()), 1e-300)
    err = np.abs(ana - num).max(axis=0)
    bad = np.flatnonzero(err > case.rtol * col + floor)
    assert bad.size == 0, (f"{case.label}: columns {bad.tolist()} differ from finite differences by "
                           f"{(err[bad] / np.maximum(col[bad], floor)).round(6).tolist()} of their size")  # fmt: skip


# --------------------------------------------------------------------------- #
# random points with unequal scales
# --------------------------------------------------------------------------- #
def _pose(rng, scale=1.0):
    """A pose far from the identity with a translation whose components span two orders of magnitude [m]."""
    t = rng.choice([-1.0, 1.0], 3) * scale * 10.0 ** rng.uniform(-2.0, 0.5, 3)
    return se3.transform_from_rotation_translation(se3.so3_exp(rng.uniform(-2.0, 2.0, 3)), t)


def _poses(rng, n, scale=1.0):
    return np.stack([_pose(rng, scale) for _ in range(n)])


def _whitening(rng, n):
    """Lower-triangular whitening matrices (n, 6, 6) of uneven scales (rad-like rows ~1e3, metre rows ~1e2..1e4)."""
    L = np.tril(rng.normal(0.0, 0.2, (n, 6, 6)), -1)
    d = np.concatenate([10.0 ** rng.uniform(2.5, 3.5, (n, 3)), 10.0 ** rng.uniform(2.0, 4.0, (n, 3))], axis=1)
    return L * d[:, :, None] + d[:, :, None] * np.eye(6)


class _Recorder:
    """Stands in for ``scipy.optimize.leastsq`` (MINPACK's Levenberg-Marquardt, in ``he_ml``'s first camera-drift
    round): at its first call, the analytic Jacobian it was given and the finite differences of the residual
    function, both at ``at`` (taken then: the caller's closures move on)."""

    def __init__(self, monkeypatch, at):
        self.at = at
        self.taken = None
        self._real = scipy.optimize.leastsq
        monkeypatch.setattr(scipy.optimize, "leastsq", self)

    def __call__(self, fun, x0, Dfun=None, **kw):
        if self.taken is None:
            self.taken = (Dfun(self.at), _fd(fun, self.at, 1e-6), fun)
        return self._real(fun, x0, Dfun=Dfun, **kw)

    def case(self, label):
        J, num, fun = self.taken
        return Case(label, fun, self.at, J, numeric=num)


class _GaussNewtonRecorder(_Recorder):
    """The same for ``he_ml``'s damped Gauss-Newton (:func:`kinhec.solvers.gauss_newton.damped_gauss_newton`)
    as the module ``module`` calls it."""

    def __init__(self, monkeypatch, at, module):
        self.at = at
        self.taken = None
        self._real = module.damped_gauss_newton
        monkeypatch.setattr(module, "damped_gauss_newton", self)

    def __call__(self, fun, jac, *args, **kw):
        if self.taken is None:
            self.taken = (jac(self.at), _fd(fun, self.at, 1e-6), fun)
        return self._real(fun, jac, *args, **kw)


# --------------------------------------------------------------------------- #
# the pair model
# --------------------------------------------------------------------------- #
@jacobian("pair_model.pair_jacobians", ("solvers.pair_model:pair_jacobians", "solvers.pair_model:adjoint"))
def _pair_jacobians(rng, mp):
    out = []
    for conf in pm.CONFIGURATIONS:
        A, X, Y = _poses(rng, 4), _pose(rng, 0.1), _pose(rng, 2.0)
        C = pm.predicted_camera_poses(A, X, Y, conf)
        J, G = pm.pair_jacobians(C, X, conf)
        Ji, Gi = pm.pair_jacobians(None, X, conf, C_inv=se3.invert_transform(C))
        np.testing.assert_allclose(Ji, J, atol=1e-12 * np.abs(J).max())
        np.testing.assert_allclose(Gi, G, atol=1e-12 * np.abs(G).max())

        def f_xy(p, A=A, X=X, Y=Y, C=C, conf=conf):
            return pm.residuals(pm.predicted_camera_poses(A, X @ se3.se3_exp(p[:6]), Y @ se3.se3_exp(p[6:]), conf), C)

        def f_xi(p, A=A, X=X, Y=Y, C=C, conf=conf):
            return pm.residuals(pm.predicted_camera_poses(A @ se3.se3_exp(p.reshape(4, 6)), X, Y, conf), C)

        out.append(Case(f"J {conf}", f_xy, np.zeros(12), J.reshape(-1, 12)))
        Gb = np.zeros((4, 6, 4, 6))
        Gb[np.arange(4), :, np.arange(4), :] = G
        out.append(Case(f"G {conf}", f_xi, np.zeros(24), Gb.reshape(24, 24)))
    return out


@jacobian("pair_model.scale_jacobian", ("solvers.pair_model:scale_jacobian",))
def _scale_jacobian(rng, mp):
    C = _poses(rng, 5)

    def f(ls):
        Cs = C.copy()
        Cs[:, :3, 3] *= np.exp(ls[0])
        return pm.residuals(Cs, C)

    return [Case("d rho / d log s", f, np.zeros(1), pm.scale_jacobian(C).reshape(-1, 1))]


@jacobian("pair_model.adjoint", ("solvers.pair_model:adjoint",))
def _adjoint(rng, mp):
    T = _pose(rng, 3.0)
    f = lambda xi: se3.se3_log(T @ se3.se3_exp(xi) @ se3.invert_transform(T))  # noqa: E731
    return [Case("Ad(T)", f, np.zeros(6), pm.adjoint(T))]


# --------------------------------------------------------------------------- #
# he_ml
# --------------------------------------------------------------------------- #
@jacobian("he_ml.solve_wls", ("solvers.he_ml_stages.reweighting:solve_wls.jac",))
def _he_ml_wls(rng, mp):
    from kinhec.solvers.he_ml_stages import model, reweighting

    out = []
    for conf in pm.CONFIGURATIONS:
        n = 6
        A, X0, Y0 = _poses(rng, n), _pose(rng, 0.1), _pose(rng, 2.0)
        ls0 = 0.7
        # at a step of the scale alone (the rotations' parametrisation X0 exp(p) has its right Jacobian away
        # from p = 0, which the Gauss-Newton Jacobian leaves out by design)
        p0 = np.r_[np.zeros(12), 0.3]
        X, Y, ls = model.apply_step(X0, Y0, ls0, p0, True)
        # measured camera poses that fit (X, Y, s) exactly: translations s x metric
        Cm = model.predict(A, X, Y, conf)
        Cm[:, :3, 3] *= np.exp(ls)
        rec = _GaussNewtonRecorder(mp, p0, reweighting)
        reweighting.solve_wls(A, Cm, X0, Y0, ls0, _whitening(rng, n), rng.uniform(0.3, 2.0, n), conf, True)
        out.append(rec.case(f"solve_wls {conf}"))
    return out


@jacobian("he_ml.motion_fit", ("solvers.he_ml_stages.camera_drift:motion_fit.jacobian",))
def _he_ml_motion_fit(rng, mp):
    from kinhec.solvers.he_ml_stages import camera_drift, model

    n = 7
    A, X0 = _poses(rng, n), _pose(rng, 0.1)
    ls0 = -0.4
    p0 = np.r_[np.zeros(6), 0.25]  # as for solve_wls: a step of the scale alone
    X = X0
    # camera poses whose motions are inv(X) A_k X exactly, translations times s
    B = se3.invert_transform(X) @ A @ X
    B[:, :3, 3] *= np.exp(ls0 + p0[6])
    rec = _Recorder(mp, p0)
    camera_drift.motion_fit(A, B, X0, ls0, True)
    return [rec.case("motion fit")]


@jacobian("he_ml.solve_scale_drift", ("solvers.he_ml_stages.scale_drift:solve_scale_drift.normal",))
def _he_ml_scale_drift(rng, mp):
    """The normal matrix of the drifting-scale fit: its inverse (the covariance the stage returns, offsets
    marginalised, and the offsets' posterior variances) against the one of the finite-difference Jacobian of the
    stacked residuals (pairs and random-walk prior) at an exact fit."""
    from kinhec.solvers.he_ml_stages import model, scale_drift

    out = []
    for conf in pm.CONFIGURATIONS:
        n = 9
        A, X, Y = _poses(rng, n), _pose(rng, 0.1), _pose(rng, 2.0)
        ls0, sigma_d = 0.5, 0.02
        Linv, sw = _whitening(rng, n), rng.uniform(0.5, 2.0, n)
        Cm = model.predict(A, X, Y, conf)
        Cm[:, :3, 3] *= np.exp(ls0)
        res = scale_drift.solve_scale_drift(A, Cm, X, Y, ls0, np.zeros(n), Linv, sw, conf, sigma_d)
        cov = res[4]

        def stacked(p, A=A, X=X, Y=Y, Cm=Cm, Linv=Linv, sw=sw, conf=conf):
            Xp, Yp, lsp = model.apply_step(X, Y, ls0, p[:13], True)
            q = np.r_[0.0, p[13:]]
            e = sw[:, None] * model.mv(Linv, model.residuals(Cm, model.predict(A, Xp, Yp, conf), lsp, ls0, q))
            return np.concatenate([e.ravel(), np.diff(q) / sigma_d])

        J = _fd(stacked, np.zeros(13 + n - 1), 1e-6)
        full = np.linalg.inv(J.T @ J)
        got13 = cov.cov if hasattr(cov, "cov") else cov[:13, :13]
        got_q = cov.var_q if hasattr(cov, "var_q") else np.diag(cov)[13:]
        scale = np.sqrt(np.outer(np.diag(full[:13, :13]), np.diag(full[:13, :13])))
        np.testing.assert_allclose(got13 / scale, full[:13, :13] / scale, atol=1e-6, err_msg=f"covariance {conf}")
        np.testing.assert_allclose(got_q, np.diag(full)[13:], rtol=1e-6, err_msg=f"offset variances {conf}")
        out.append(Case(f"scale drift {conf} (exact fit)", stacked, np.zeros(13 + n - 1), J))
    return out


@jacobian("intrinsics.fisheye", ("models.intrinsics:project_points_jacobians",))
def _fisheye_projection(rng, mp):
    from kinhec.models.intrinsics import project_points_jacobians

    k = np.array([610.0, 605.0, 640.0, 512.0, 0.02, -0.01, 0.004, -0.001])
    out = []
    for off_axis_deg in (5.0, 60.0, 95.0):  # near the axis, in the field, beyond 90 deg (a 180-200 deg lens)
        th = np.radians(off_axis_deg)
        az = rng.uniform(-np.pi, np.pi)
        p0 = 0.7 * np.array([np.sin(th) * np.cos(az), np.sin(th) * np.sin(az), np.cos(th)])
        _, d_point, d_k = project_points_jacobians(k, p0)
        out.append(Case(f"d uv / d point at {off_axis_deg:g} deg", lambda p: project_points_jacobians(k, p)[0], p0,
                        d_point, h=1e-7))
        out.append(Case(f"d uv / d intrinsics at {off_axis_deg:g} deg",
                        lambda kk, p0=p0: project_points_jacobians(kk, p0)[0], k, d_k, h=0.1))  # uv is linear in
        # the intrinsics, so a wide step is exact and keeps round-off off the small k3, k4 columns near the axis
    return out


@jacobian("intrinsics.pinhole_rational", ("models.intrinsics:project_points_jacobians",
                                          "models.intrinsics:_pinhole_jacobians",
                                          "models.intrinsics:_distortion_and_jacobian"))
def _pinhole_rational_projection(rng, mp):
    from kinhec.models.intrinsics import _distortion_and_jacobian, project_points_jacobians

    out = []
    # OpenCV's five coefficients, and the rational model's eight (a 120 deg lens's: k1..k6 of a few units)
    for k in (np.array([900.0, 880.0, 645.0, 350.0, -0.21, 0.08, 0.0015, -0.0008, -0.02]),
              np.array([784.8, 786.4, 641.3, 509.2, 2.0, 0.3, 2e-4, -1.5e-4, -0.01, 2.3, 0.8, 0.02])):
        for off_axis_deg in (3.0, 30.0, 58.0):
            th = np.radians(off_axis_deg)
            az = rng.uniform(-np.pi, np.pi)
            p0 = 1.3 * np.array([np.sin(th) * np.cos(az), np.sin(th) * np.sin(az), np.cos(th)])
            _, d_point, d_k = project_points_jacobians(k, p0)
            out.append(Case(f"{k.size} intrinsics: d uv / d point at {off_axis_deg:g} deg",
                            lambda p, k=k: project_points_jacobians(k, p)[0], p0, d_point, h=1e-7))  # fmt: skip
            scale = np.where(np.arange(k.size) < 4, 1.0, 1e-3)  # the coefficients by steps of their own size
            out.append(Case(f"{k.size} intrinsics: d uv / d intrinsics at {off_axis_deg:g} deg",
                            lambda s, k=k, p0=p0, scale=scale: project_points_jacobians(k + s * scale, p0)[0],
                            np.zeros(k.size), d_k * scale, h=1e-3))  # fmt: skip
            # the distortion's own 2 x 2 Jacobian in the normalised coordinates (the inverse's Newton steps)
            q0 = p0[:2] / p0[2]
            J = np.array(_distortion_and_jacobian(q0[0], q0[1], k[4:])[2:]).reshape(2, 2)
            out.append(Case(f"{k.size} intrinsics: d distorted / d normalised at {off_axis_deg:g} deg",
                            lambda q, k=k: np.array(_distortion_and_jacobian(q[0], q[1], k[4:])[:2]), q0, J, h=1e-7))
    return out


@jacobian("se3.right_jacobian", ("geometry.se3:se3_right_jacobian",))
def _se3_right_jacobian(rng, mp):
    out = []
    for th in (1e-6, 3e-3, 0.4, 2.5):  # the series, its bound, the closed form, near pi
        xi = np.r_[se3.random_unit_vectors(rng, 1)[0] * th, rng.normal(0.0, 0.7, 3)]
        Ti = se3.invert_transform(se3.se3_exp(xi))
        out.append(Case(f"J_r at |omega| = {th:g}", lambda d, xi=xi, Ti=Ti: se3.se3_log(Ti @ se3.se3_exp(xi + d)),
                        np.zeros(6), se3.se3_right_jacobian(xi[None])[0], h=1e-7))  # fmt: skip
    return out


@jacobian("intrinsics.pose_jacobians", ("models.intrinsics:pose_jacobians",))
def _intrinsics_pose_jacobians(rng, mp):
    from kinhec.models.intrinsics import pose_jacobians, project_points

    out = []
    for k in (np.array([900.0, 880.0, 645.0, 350.0, -0.21, 0.08, 0.0015, -0.0008, -0.02]),
              np.array([410.0, 395.0, 640.0, 512.0, 0.025, -0.006, 0.0012, -0.0001])):
        T = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.3, 3)), [0.05, -0.1, 0.9])
        P = np.c_[rng.uniform(-0.2, 0.2, (5, 2)), np.zeros(5)]
        inv_b = 1.0 / 1.07

        def uv(eps, k=k, T=T, P=P):
            Tp = T @ se3.se3_exp(eps)
            return project_points(k, P @ Tp[:3, :3].T + inv_b * Tp[:3, 3])

        G = pose_jacobians(k, np.broadcast_to(T[:3, :3], (5, 3, 3)), np.broadcast_to(inv_b * T[:3, 3], (5, 3)), P,
                           inv_b)[1]
        out.append(Case(f"{k.size} intrinsics: d uv / d eps", uv, np.zeros(6), G.reshape(-1, 6), h=1e-7))
    return out


def _view_poses(rng, n):
    """Poses ``T_cam_target`` (n, 4, 4) of a board 0.5-0.8 m in front of the camera, turned by about 0.2 rad."""
    return se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.2, (n, 3))),
                                                   np.c_[rng.normal(0, 0.05, (n, 2)), rng.uniform(0.5, 0.8, n)])


def _views_of(rng, k, C, n_pts=12):
    """A grid's points (target frame, z = 0) seen through the poses ``C`` (N, 4, 4) by intrinsics ``k``, with
    pixel noise, and one view shorter (padding)."""
    from kinhec.models.intrinsics import pack_views, project

    P = np.c_[rng.uniform(-0.12, 0.12, (n_pts, 2)), np.zeros(n_pts)]
    uv = project(k, C, P) + rng.normal(0.0, 2.0, (C.shape[0], n_pts, 2))
    sizes = [n_pts] * C.shape[0]
    sizes[1] = n_pts - 3
    return pack_views([P[:m] for m in sizes], [u[:m] for u, m in zip(uv, sizes)])


class _Stop(Exception):
    pass


@jacobian("calibrate.bundle.jac", ("calibrate.bundle:_jacobian", "calibrate.bundle:_jacobian.jac"))
def _bundle_jac(rng, mp):
    """The bundle adjustment's residuals (pixels, view twists, the priors on the intrinsics, the board's scale and
    a held translation) by ``X``, ``Y``, the intrinsics, ``log b`` and the view twists, both setups and the three
    lenses, at a point away from the start (every pose's twist non-zero)."""
    from kinhec.calibrate import bundle
    from kinhec.solvers.reprojection import chain_poses

    taken = []

    def em(fun, jac, x, *a):
        taken.append((fun, jac, x))
        raise _Stop

    mp.setattr(bundle, "_em", em)
    lenses = (np.array([900.0, 880.0, 645.0, 350.0, -0.21, 0.08, 0.0015, -0.0008, -0.02]),
              np.array([620.0, 640.0, 640.0, 512.0, 2.0, 0.3, 2e-4, -1.5e-4, -0.01, 2.3, 0.8, 0.02]),
              np.array([410.0, 395.0, 640.0, 512.0, 0.025, -0.006, 0.0012, -0.0001]))
    out = []
    for k in lenses:
        for conf in ("eye_in_hand", "eye_to_hand"):
            N = 4
            X = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.5, 3)), [0.03, -0.05, 0.1])
            if conf == "eye_in_hand":  # the camera on the flange looks at a board in front of the robot
                Y = se3.transform_from_rotation_translation(se3.so3_exp([np.pi, 0.0, 0.0]), [0.6, 0.0, 0.0])
                C = _view_poses(rng, N)
                A = Y @ se3.invert_transform(C) @ se3.invert_transform(X)
            else:  # a fixed camera sees the board on the flange
                Y = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.5, 3)), [1.0, 0.2, 0.5])
                C = _view_poses(rng, N)
                A = Y @ C @ se3.invert_transform(X)
            np.testing.assert_allclose(chain_poses(A, X, Y, conf), C, atol=1e-12)
            views = _views_of(rng, k, C)
            taken.clear()
            with pytest.raises(_Stop):
                bundle.refine_bundle(views, A, X, Y, k, conf, pixel_std=0.7, robot_std=(2e-3, 1e-3),
                                     free_intrinsics=range(k.size), intrinsics_prior_std=np.full(k.size, 5.0),
                                     board_prior_std=0.02, hold={4: 0.01, 11: 0.3})  # fmt: skip
            fun, jac, x0 = taken[0]
            x = x0 + rng.normal(0.0, 1e-3, x0.size) * np.maximum(1.0, np.abs(x0)) * 0.05
            x[len(k) : len(k) + 12] += rng.normal(0.0, 0.05, 12)  # X and Y away from their start
            out.append(Case(f"{k.size} intrinsics, {conf}", fun, x, jac(x).csr().toarray(), h=1e-6, rtol=1e-5))
    return out


@jacobian("reprojection.refine.jac", ("solvers.reprojection:_refine.jac", "solvers.reprojection:chain_perturbations"))
def _reprojection_jac(rng, mp):
    """The pixel solver's residuals (pixels, and the flange twists' prior with ``refine_robot``) by the intrinsics,
    ``X``, ``Y`` and the flange twists, both setups, at a point away from the start."""
    from kinhec.models.intrinsics import camera_calibration
    from kinhec.solvers import reprojection

    taken = []

    def lm(fun, x0, structure, **kw):
        taken.append((fun, kw["jac"], x0))
        raise _Stop

    mp.setattr(reprojection, "levenberg_marquardt", lm)
    k = np.array([900.0, 880.0, 645.0, 350.0, -0.21, 0.08, 0.0015, -0.0008, -0.02])
    out = []
    for conf in ("eye_in_hand", "eye_to_hand"):
        for refine_robot in (False, True):
            N = 4
            X = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.5, 3)), [0.03, -0.05, 0.1])
            Y = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.5, 3)), [0.8, 0.2, 0.4])
            C = _view_poses(rng, N)
            A = (Y @ se3.invert_transform(C) @ se3.invert_transform(X) if conf == "eye_in_hand"
                 else Y @ C @ se3.invert_transform(X))  # fmt: skip
            views = _views_of(rng, k, C)
            taken.clear()
            with pytest.raises(_Stop):
                reprojection.solve_reprojection(views.points_3d, views.points_2d, A, (1280, 720), configuration=conf,
                                                refine_robot=refine_robot, robot_prior_rot_rad=2e-3,
                                                camera=camera_calibration(views, k, C))  # fmt: skip
            fun, jac, x0 = taken[0]
            x = x0.copy()
            x[:9] *= 1.0 + rng.normal(0.0, 1e-3, 9)
            x[9:] += rng.normal(0.0, 0.03, x.size - 9)
            out.append(Case(f"{conf}, refine_robot={refine_robot}", fun, x, jac(x).csr().toarray(), h=1e-6, rtol=1e-5))
    return out


@jacobian("intrinsics.refine_camera.jac", ("models.intrinsics:_refine_camera.jac",))
def _refine_camera_jac(rng, mp):
    """The camera calibration's residuals (pixels and the priors that hold intrinsics) by the intrinsics and the
    view twists, the three lenses, at a point away from the start."""
    from kinhec.models import intrinsics

    taken = []

    def lm(fun, x0, structure, **kw):
        taken.append((fun, kw["jac"], x0))
        raise _Stop

    mp.setattr(intrinsics, "levenberg_marquardt", lm)
    out = []
    for k in (np.array([900.0, 880.0, 645.0, 350.0, -0.21, 0.08, 0.0015, -0.0008, -0.02]),
              np.array([410.0, 395.0, 640.0, 512.0, 0.025, -0.006, 0.0012, -0.0001])):
        N = 4
        T0 = _view_poses(rng, N)
        views = _views_of(rng, k, T0)
        n_int = k.size
        prior = np.full(n_int, np.inf)
        prior[-2:] = 0.01  # two intrinsics held by a prior
        taken.clear()
        with pytest.raises(_Stop):
            intrinsics._refine_camera(views, k, n_int, T0, prior_std=prior, pixel_std=0.5)
        fun, jac, x0 = taken[0]
        x = x0.copy()
        x[n_int:] += rng.normal(0.0, 0.03, x.size - n_int)
        x[:n_int] *= 1.0 + rng.normal(0.0, 1e-3, n_int)
        out.append(Case(f"{k.size} intrinsics", fun, x, jac(x).csr().toarray(), h=1e-6, rtol=1e-5))
    return out


@jacobian("he_ml.pixels.normals", ("solvers.he_ml_stages.pixels:_Problem.normals",))
def _pixels_normals(rng, mp):
    from kinhec.models.intrinsics import pack_views
    from kinhec.solvers.he_ml_stages import pixels as hp

    n, P = 3, 7
    f = np.array([800.0, 620.0])
    pts = [np.c_[rng.uniform(-0.1, 0.1, (P, 2)), np.zeros(P)] for _ in range(n)]
    C = np.stack([se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.4, 3)),
                                                          [rng.uniform(-0.1, 0.1), rng.uniform(-0.1, 0.1), 0.3 + k])
                  for k in range(n)])  # fmt: skip
    uv = [rng.uniform(-0.3, 0.3, (P, 2)) for _ in range(n)]  # normalised coordinates: residuals far from zero
    views = pack_views(pts, uv)
    A = _poses(rng, n)
    prob = hp._Problem(A, views, views.points_2d, f, "eye_in_hand")
    e, geom = prob.residuals(C)
    M, g = prob.normals(e, geom)
    out = []
    for i in range(n):
        def err(d, i=i):
            return prob.residuals(C @ se3.se3_exp(np.broadcast_to(d, (n, 6))))[0][i].T.ravel()

        J = -_fd(err, np.zeros(6), 1e-7)  # rows of J_i: d pi / d twist
        out.append(Case(f"M view {i}", err, np.zeros(6), M[i], kind="normal", h=1e-7, rtol=1e-5))
        np.testing.assert_allclose(g[i], J.T @ e[i].T.ravel(), rtol=1e-5, atol=1e-9 * np.abs(g[i]).max())
    return out


@jacobian("he_ml.pixels.lens_normals", ("solvers.he_ml_stages.pixels:_LensProblem.normals",
                                        "solvers.he_ml_stages.pixels:_twist_normals"))
def _pixels_lens_normals(rng, mp):
    """The pixel residuals of a fisheye (rays to 100 deg off the axis: points behind the camera's plane) and of a
    rational lens (to 55 deg), views of uneven size (padding), pixels far from the projections."""
    from kinhec.models.intrinsics import pack_views, project_points
    from kinhec.solvers.he_ml_stages import pixels as hp

    n, P = 3, 9
    lenses = ((np.array([410.0, 395.0, 640.0, 512.0, 0.025, -0.006, 0.0012, -0.0001]), 100.0),
              (np.array([620.0, 640.0, 640.0, 512.0, 2.0, 0.3, 2e-4, -1.5e-4, -0.01, 2.3, 0.8, 0.02]), 55.0))
    out = []
    for k, max_deg in lenses:
        C = np.stack([se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.6, 3)), rng.normal(0, 0.3, 3))
                      for _ in range(n)])  # fmt: skip
        th = np.radians(rng.uniform(0.0, max_deg, (n, P)))
        ph = rng.uniform(0.0, 2 * np.pi, (n, P))
        pc = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], -1) * rng.uniform(0.3, 2.0, (n, P, 1))
        Ci = se3.invert_transform(C)
        pts = np.einsum("nij,npj->npi", Ci[:, :3, :3], pc) + Ci[:, None, :3, 3]
        uv = project_points(k, pc) + rng.normal(0, 3.0, (n, P, 2))
        sizes = (P, P - 2, P - 1)
        views = pack_views([p[:s] for p, s in zip(pts, sizes)], [u[:s] for u, s in zip(uv, sizes)])
        prob = hp._problem(_poses(rng, n), views, k, "eye_in_hand")
        e, geom = prob.residuals(C)
        M, g = prob.normals(e, geom)
        for i in range(n):
            def err(d, i=i, prob=prob, C=C):
                return prob.residuals(C @ se3.se3_exp(np.broadcast_to(d, (n, 6))))[0][i].T.ravel()

            J = -_fd(err, np.zeros(6), 1e-7)  # rows of J_i: d uv / d twist
            out.append(Case(f"{k.size} intrinsics: M view {i}", err, np.zeros(6), M[i], kind="normal", h=1e-7,
                            rtol=1e-5))  # fmt: skip
            np.testing.assert_allclose(g[i], J.T @ e[i].T.ravel(), rtol=1e-5, atol=1e-9 * np.abs(g[i]).max())
    return out


@jacobian("he_ml.points.normals", ("solvers.he_ml_stages.points:point_normals",
                                    "solvers.he_ml_stages.points:points_information"))
def _points_normals(rng, mp):
    from kinhec.models.depth_noise import point_whitening
    from kinhec.solvers.he_ml_stages import points as hpt

    n, P, noise = 3, 6, (2e-3, 1.5e-3)
    model = [np.c_[rng.uniform(-0.1, 0.1, (P, 2)), rng.uniform(-0.02, 0.02, P)] for _ in range(n)]
    C = np.stack([se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.4, 3)),
                                                          [rng.uniform(-0.1, 0.1), rng.uniform(-0.1, 0.1), 0.5 + k])
                  for k in range(n)])  # fmt: skip
    meas = [(p @ c[:3, :3].T + c[:3, 3]) + rng.normal(0.0, 0.01, (P, 3)) for p, c in zip(model, C)]  # far from zero
    views = hpt.pack_points(model, meas)
    L = point_whitening(np.stack(meas), noise)
    M, g, e, K = hpt.point_normals(C, views, L)
    out = []
    for i in range(n):
        def err(d, i=i):
            return hpt.point_normals(C @ se3.se3_exp(np.broadcast_to(d, (n, 6))), views, L)[2][i].ravel()

        out.append(Case(f"M view {i}", err, np.zeros(6), M[i], kind="normal", h=1e-7, rtol=1e-5))
        out.append(Case(f"K view {i}", err, np.zeros(6), K[i].reshape(-1, 6), h=1e-7, rtol=1e-5))
        Ki = K[i].reshape(-1, 6)
        np.testing.assert_allclose(g[i], Ki.T @ e[i].ravel(), rtol=1e-10, atol=1e-12 * np.abs(g[i]).max())
    # the information of (dx, dy): the whitened points as X and Y move (weights at the predicted points, held)
    for conf in pm.CONFIGURATIONS:
        A, X, Y = _poses(rng, n), _pose(rng, 0.1), _pose(rng, 2.0)
        Cp = pm.predicted_camera_poses(A, X, Y, conf)
        # views whose model points sit in front of the predicted cameras: the points C^-1 (x, y, 0.6 +- 0.1)
        pts = [np.c_[rng.uniform(-0.1, 0.1, (P, 2)), rng.uniform(0.5, 0.7, P)] for _ in range(n)]
        mod = [(q - c[:3, 3]) @ c[:3, :3] for q, c in zip(pts, Cp)]
        vw = hpt.pack_points(mod, pts)
        Lp = point_whitening(np.stack(pts), noise)

        def f(p, A=A, X=X, Y=Y, conf=conf, vw=vw, Lp=Lp):
            Cq = pm.predicted_camera_poses(A, X @ se3.se3_exp(p[:6]), Y @ se3.se3_exp(p[6:]), conf)
            return hpt.point_normals(Cq, vw, Lp)[2].ravel()

        out.append(Case(f"information {conf}", f, np.zeros(12), hpt.points_information(A, X, Y, conf, vw, noise),
                        kind="normal", h=1e-7, rtol=1e-5))
    return out


@jacobian("he_ml.pixels.marginal_likelihood", ("solvers.he_ml_stages.pixels:_MarginalLikelihood.nll_and_gradient",))
def _pixels_marginal(rng, mp):
    from kinhec.solvers.he_ml_stages import pixels as hp

    n = 5
    M = rng.normal(size=(n, 6, 6))
    M = M @ np.swapaxes(M, 1, 2) * 10.0 ** rng.uniform(1, 4, (n, 1, 1))
    G = np.stack([pm.adjoint(_pose(rng, 0.3)) for _ in range(n)])
    J = rng.normal(size=(n, 6, 12))
    ml = hp._MarginalLikelihood(M, rng.normal(size=(n, 6)), rng.normal(size=(n, 9, 2)), J, G,
                                rng.normal(size=(n, 6)) * 1e-2, 90)  # fmt: skip
    p = np.array([np.log(0.3), np.log(2e-6), np.log(5e-7)])
    return [Case("d nll / d log(levels)", lambda x: ml.nll_and_gradient(x)[0], p, ml.nll_and_gradient(p)[1],
                 kind="gradient", h=1e-5, rtol=1e-6)]  # fmt: skip


@jacobian("he_ml.restricted_score", ("solvers.he_ml_stages.variance_components:_information",))
def _restricted_score(rng, mp):
    """The score of the restricted likelihood of the variance components (``_information``, with weights and
    a projection of 12 fitted parameters) against central differences of that likelihood formed densely:
    ``-1/2 (log det S~ + log det H + r^T P r)`` with the 6n x 6n ``S~ = blockdiag(sum_k th_k Q_k / w)``,
    ``H = J^T S~^-1 J`` and ``P = S~^-1 - S~^-1 J H^-1 J^T S~^-1``; in the relative components ``th / th0``.
    (The average information returned with the score is no derivative of it: tests/test_he_ml.py holds it
    to the dense projection.)"""
    from kinhec.solvers.he_ml_stages import variance_components as vc

    n, p = 6, 12
    C = _poses(rng, n, 0.5)
    G = np.stack([pm.adjoint(_pose(rng, 0.3)) for _ in range(n)])
    Q = vc.components(C, G, U=rng.normal(size=(n, 6)))  # the five constant components and the motion one
    J = rng.normal(size=(n, 6, p))
    w = rng.uniform(0.3, 1.0, n)
    th0 = 10.0 ** rng.uniform(-5.0, -3.0, Q.shape[0])
    r = rng.normal(size=(n, 6)) * 3e-2
    Jd = J.reshape(6 * n, p)

    def loglik(x):
        S = scipy.linalg.block_diag(*(np.tensordot(th0 * x, Q, axes=1) / w[:, None, None]))
        Wt = np.linalg.inv(S)
        H = Jd.T @ Wt @ Jd
        P = Wt - Wt @ Jd @ np.linalg.solve(H, Jd.T @ Wt)
        return -0.5 * (np.linalg.slogdet(S)[1] + np.linalg.slogdet(H)[1] + r.ravel() @ P @ r.ravel())

    W = np.linalg.inv(np.tensordot(th0, Q, axes=1))
    rr, _, parts = vc._weighted_fit(r, W, w, J)
    u = np.sqrt(w)[:, None] * (W @ rr[:, :, None])[:, :, 0]
    score = vc._information(Q, W, u, vc._projection_factor(*parts))[0]
    return [Case("d restricted loglik / d (th / th0)", loglik, np.ones(Q.shape[0]), score * th0, kind="gradient",
                 h=1e-5, rtol=1e-6)]  # fmt: skip


# --------------------------------------------------------------------------- #
# PnP, the block finite differences, calibrate
# --------------------------------------------------------------------------- #
@jacobian("pnp.normal_equations", ("models.pnp:_normal_equations",))
def _pnp_normal_equations(rng, mp):
    from kinhec.models import pnp

    n, P, f = 2, 6, 700.0
    pts = rng.uniform(-0.2, 0.2, (n, P, 3)) + np.array([0.0, 0.0, 0.8])
    ru, rv = rng.normal(0, 1, (n, P)), rng.normal(0, 1, (n, P))
    x, y, z = pts[..., 0] / pts[..., 2], pts[..., 1] / pts[..., 2], 1.0 / pts[..., 2]
    H, g = pnp._normal_equations(f, x, y, z, ru, rv, np.zeros(n))
    out = []
    for i in range(n):
        def proj(d, i=i):  # pixels of the points moved by a left twist of the camera pose
            q = (se3.se3_exp(d) @ np.c_[pts[i], np.ones(P)].T)[:3]
            return f * np.concatenate([q[0] / q[2], q[1] / q[2]])

        out.append(Case(f"H pose {i}", proj, np.zeros(6), H[i], kind="normal"))
        J = _fd(proj, np.zeros(6), 1e-6)
        np.testing.assert_allclose(g[i], J.T @ np.r_[ru[i], rv[i]], rtol=1e-6, atol=1e-9 * np.abs(g[i]).max())
    return out


@jacobian("lsq.block_jacobian", ("geometry.lsq:block_jacobian",))
def _block_jacobian(rng, mp):
    from kinhec.geometry.lsq import BlockStructure, block_jacobian

    n_views, block, n_shared = 4, 3, 2
    M = rng.normal(size=(n_views, 2))

    def fun(x):  # 2 residuals per view: shared x[:2], the view's block
        b = x[n_shared:].reshape(n_views, block)
        r = np.sin(x[0]) * b[:, :2] * b[:, 2:] + M * x[1] ** 2 + np.log(np.abs(b[:, :2]) + 1.0)
        return r.ravel()

    s = BlockStructure(n_shared, n_views, block, np.repeat(np.arange(n_views), 2))
    # blocks of very different magnitudes: every view gets its own finite-difference step
    x = np.r_[0.3, -1.7, (rng.uniform(0.5, 2.0, (n_views, block)) * 10.0 ** np.arange(n_views)[:, None]).ravel()]
    # forward differences (step sqrt(eps) |x|) lose about eps |f| / h to round-off where the residuals are large
    # (here 3e-4 of a column); central ones (step eps^(1/3) |x|) are good to about 1e-9
    return [Case(f"block_jacobian central={c}", fun, x, block_jacobian(fun, x, fun(x), s, central=c).toarray(),
                 rtol=1e-7 if c else 1e-3) for c in (False, True)]  # fmt: skip


class _Pairs:
    """Unstamped pose pairs as :func:`kinhec.calibrate.solve.refine` takes them."""

    has_time = False

    def __init__(self, A, B):
        self.A, self.B = A, B

    def at(self, offset):
        return self.A, self.B

    def __len__(self):
        return self.A.shape[0]


@jacobian("calibrate.solve.jac", ("calibrate.solve:_Problem.jac", "calibrate.solve:_xy_jacobian"))
def _calibrate_jac(rng, mp):
    from kinhec.calibrate import solve

    out = []
    for inverse_domain in (True, False):
        n = 6
        A, X, Y = _poses(rng, n), _pose(rng, 0.1), _pose(rng, 2.0)
        s = 1.7
        B = se3.invert_transform(Y) @ A @ X  # A X = Y B exactly
        B[:, :3, 3] *= s  # the eye's translations carry the scale
        prob = solve._Problem(_Pairs(A, B), False, True, inverse_domain)
        mask = np.ones(n, dtype=bool)
        st = (X, Y, None, s)
        f = lambda p, prob=prob, st=st, mask=mask: prob.res(prob.apply(st, p), mask)  # noqa: E731
        J = prob.jac(st, mask).reshape(-1, 13)
        out.append(Case(f"calibrate inverse_domain={inverse_domain}", f, np.zeros(13), J))
    return out


@jacobian("calibrate.solve.bias_jac", ("calibrate.solve:_Problem.bias_jac",))
def _calibrate_bias_jac(rng, mp):
    """The residuals' derivative in the intrinsics' systematic error (the consider parameters of
    :mod:`kinhec.calibrate.eye_bias`) against differences of the residuals of camera poses corrected before the
    problem is built -- the path the data take, not the one bias_jac takes -- at noisy pairs (bias_jac is not a
    Gauss-Newton approximation), some left out, a scale far from 1."""
    from kinhec.calibrate import eye_bias as eb
    from kinhec.calibrate import solve

    out = []
    for eye_in_hand, inverse_domain in ((True, True), (True, False), (False, True), (False, False)):
        n = 7
        A, X, Y = _poses(rng, n), _pose(rng, 0.1), _pose(rng, 2.0)
        s = 1.3
        B = se3.invert_transform(Y) @ A @ X @ se3.se3_exp(rng.normal(0, 0.02, (n, 6)))
        B[:, :3, 3] *= s
        mask = np.ones(n, dtype=bool)
        mask[[1, 4]] = False
        st = (X, Y, None, s)
        prob = solve._Problem(_Pairs(A, B), False, True, inverse_domain)
        J = prob.bias_jac(st, mask, eye_in_hand).reshape(-1, eb.N_PARAMS)

        def f(theta, eye_in_hand=eye_in_hand, inverse_domain=inverse_domain, A=A, B=B, st=st, mask=mask):
            p = solve._Problem(_Pairs(A, eb.correct(B, theta, eye_in_hand)), False, True, inverse_domain)
            return p.res(st, mask)

        out.append(Case(f"calibrate bias eye_in_hand={eye_in_hand} inverse_domain={inverse_domain}", f,
                        np.zeros(eb.N_PARAMS), J, h=1e-5))
    return out


# --------------------------------------------------------------------------- #
# the refinements, the joint problem of many X and Y, the certificate
# --------------------------------------------------------------------------- #
@jacobian("refine", ("solvers.refine:_axxb_problem.jac", "solvers.refine:_axyb_problem.jac",
                     "solvers.refine:_twist_problem.jac", "solvers.refine:_se3_jr_inv"))  # fmt: skip
def _refine(rng, mp):
    from kinhec.solvers import refine as r

    A, B, X, Y = _poses(rng, 6), _poses(rng, 6), _pose(rng, 0.1), _pose(rng, 2.0)
    out = []
    fun, jac = r._axxb_problem(A, B, X[:3, :3], X[:3, 3], 2e-3, 1e-3)
    p = rng.normal(0, 0.2, 6)
    out.append(Case("axxb chordal", fun, p, jac(p)))
    fun, jac, _ = r._axyb_problem(A, B, X[:3, :3], X[:3, 3], Y[:3, :3], Y[:3, 3], 2e-3, 1e-3)
    p = rng.normal(0, 0.2, 12)
    out.append(Case("axyb chordal", fun, p, jac(p)))
    for Y0, k in ((None, 6), (Y, 12)):
        fun, jac, _ = r._twist_problem(A[:, :, :] @ np.eye(4), B, X, Y0, 2e-3, 1e-3)
        p = rng.normal(0, 0.05, k)
        out.append(Case(f"twist {k}", fun, p, jac(p), rtol=1e-5))
    for theta in (1e-6, 0.5, 2.5):
        w = rng.normal(size=3)
        xi = np.r_[theta * w / np.linalg.norm(w), rng.normal(size=3)]
        E = se3.se3_exp(xi)
        out.append(Case(f"J_r^-1 at {theta}", lambda d, E=E: se3.se3_log(E @ se3.se3_exp(d)), np.zeros(6),
                        r._se3_jr_inv(xi[None])[0]))  # fmt: skip
    return out


@jacobian("multi_axyb.local_jacobian", ("solvers.multi_axyb:_local_jacobian",))
def _multi_local(rng, mp):
    from kinhec.synth import scenes
    from kinhec.solvers import multi_axyb as ma

    sc = scenes.draw_scene(7, 0, n_cameras=2, n_targets=2, pairs_per_edge=3, scale=True, camera_noise="c0",
                           robot_noise="r0")  # fmt: skip
    d = ma.graph_data(sc.pairs, scale=True)
    X = np.stack([sc.X[k] for k in d.x_ids])
    Y = np.stack([sc.Y[k] for k in d.y_ids])
    n_s = int(d.sgroup.max()) + 1
    ls = np.array([np.log(sc.scale[k]) for k in d.scaled]) if hasattr(sc, "scale") else np.zeros(n_s)
    s = ma._scales(d, ls)
    Ci = ma._inverse_prediction(d, X, Y)
    # measurements that fit exactly: the predicted camera poses, translations times s
    Cm = se3.invert_transform(Ci)
    Cm[:, :3, 3] *= s[:, None]
    Jl, _ = ma._local_jacobian(d, Ci, X, s, s)

    def local(p):  # every pair's own X, Y and log s moved alike: each pair's residual sees its local step
        Xp, Yp = X @ se3.se3_exp(p[:6]), Y @ se3.se3_exp(p[6:12])
        return ma._residuals(d, ma._inverse_prediction(d, Xp, Yp), Cm, ma._scales(d, ls + p[12]), s)

    sel = d.sgroup >= 0
    return [Case("local (scaled pairs)", lambda p: local(p)[sel], np.zeros(13), Jl[sel].reshape(-1, 13))]


@jacobian("certificate.gradient_hessian", ("solvers.certificate:_gradient_hessian",))
def _certificate(rng, mp):
    from kinhec.solvers import certificate as ct

    K = 3
    M = rng.normal(size=(9 * K, 9 * K))
    Q = M @ M.T * 10.0 ** rng.uniform(-1, 1, 9 * K)[:, None] * 10.0 ** rng.uniform(-1, 1, 9 * K)[None, :]
    Q = 0.5 * (Q + Q.T)
    R = se3.so3_exp(rng.uniform(-2, 2, (K, 3)))

    def cost(d):
        z = (R @ se3.so3_exp(d.reshape(K, 3))).reshape(-1)
        return float(z @ Q @ z)

    g, H = ct._gradient_hessian(Q, R)
    return [Case("gradient", cost, np.zeros(3 * K), g, kind="gradient"),
            Case("Hessian", cost, np.zeros(3 * K), H, kind="hessian", h=1e-4, rtol=1e-5)]  # fmt: skip


# --------------------------------------------------------------------------- #
# robots, trajectories, planner, bounds, vision
# --------------------------------------------------------------------------- #
@jacobian("robots.jacobian", ("models.robots:RobotModel.jacobian", "models.robots:RobotModel.fk_jacobian"))
def _robot_jacobian(rng, mp):
    from kinhec.models.robots import get_robot

    out = []
    for name in ("ur5e", "panda"):
        robot = get_robot(name)
        q = rng.uniform(robot.q_min_rad, robot.q_max_rad)
        T0, J = robot.fk_jacobian(q[None])
        np.testing.assert_allclose(robot.jacobian(q), J[0], atol=1e-14)

        def twist(dq, robot=robot, q=q, T0=T0[0]):  # base-frame (omega, v of the flange origin)
            T = robot.fk(q + dq)
            return np.r_[se3.so3_log(T[:3, :3] @ T0[:3, :3].T), T[:3, 3] - T0[:3, 3]]

        out.append(Case(name, twist, np.zeros(robot.dof), J[0]))
    return out


@jacobian("trajectories.joint_velocities", ("synth.trajectories:SinusoidJointTrajectory.joint_velocities",
                                            "synth.trajectories:WaypointJointTrajectory.joint_velocities"))  # fmt: skip
def _joint_velocities(rng, mp):
    from kinhec.synth import trajectories as tj
    from kinhec.models.robots import get_robot

    robot = get_robot("ur5e")
    out = []
    for traj in (tj.joint_sinusoid(robot, rng, duration_s=5.0),
                 tj.joint_waypoints(robot, rng, n_waypoints=4, dwell_range_s=(0.2, 0.2), sampling_mode="continuous",
                                    duration_s=5.0)):  # fmt: skip
        for t in (0.7, 2.9):
            tt = np.array([t])
            out.append(Case(f"{type(traj).__name__} q'({t})", traj.joint_positions, tt,
                            traj.joint_velocities(tt).reshape(-1, 1), rtol=1e-5))  # fmt: skip
    return out


@jacobian("planner.pose_information", ("planner.model:pose_information",))
def _planner_information(rng, mp):
    from kinhec.planner import model

    noise = model.noise_model("c3", "r2")
    A, X, Y = _poses(rng, 3), _pose(rng, 0.1), _pose(rng, 2.0)
    C = pm.predicted_camera_poses(A, X, Y, "eye_in_hand")
    F = model.pose_information(C, X, "eye_in_hand", noise, "hd", "checker_9x6_25mm")
    S = model.camera_covariance(C, noise, "hd", "checker_9x6_25mm")
    _, G = pm.pair_jacobians(C, X, "eye_in_hand")
    S = S + pm.robot_covariance(G, noise.robot_rot_std_rad, noise.robot_trans_std_m)
    out = []
    for i in range(3):
        Li = np.linalg.inv(np.linalg.cholesky(S[i]))

        def white(p, i=i, Li=Li):
            Cp = pm.predicted_camera_poses(A[i : i + 1], X @ se3.se3_exp(p[:6]), Y @ se3.se3_exp(p[6:]), "eye_in_hand")
            return Li @ pm.residuals(Cp, C[i : i + 1])[0]

        out.append(Case(f"pose {i}", white, np.zeros(12), F[i], kind="normal", rtol=1e-5))
    return out


@jacobian("bounds.fisher_information", ("evaluate.bounds:fisher_information",))
def _fisher(rng, mp):
    from kinhec.evaluate import bounds

    n, p = 4, 5
    J = rng.normal(size=(n, 6, p)) * 10.0 ** rng.uniform(-2, 2, p)
    M = rng.normal(size=(n, 6, 6))
    S = M @ np.swapaxes(M, 1, 2) + 0.1 * np.eye(6)
    Mf = rng.normal(size=(6 * n, 6 * n))
    Sf = Mf @ Mf.T + 0.1 * np.eye(6 * n)
    Jf = J.reshape(6 * n, p)

    def white_blocks(x):
        return np.concatenate([np.linalg.solve(np.linalg.cholesky(S[k]), J[k] @ x) for k in range(n)])

    return [Case("block-diagonal", white_blocks, np.zeros(p), bounds.fisher_information(J, S), kind="normal"),
            Case("full", lambda x: np.linalg.solve(np.linalg.cholesky(Sf), Jf @ x), np.zeros(p),
                 bounds.fisher_information(J, Sf), kind="normal")]  # fmt: skip


def _walk_covariance(Sigma, walk=None, scale_walk=None):
    """The dense ``6N x 6N`` covariance that :func:`kinhec.evaluate.bounds.random_walk_information` never forms:
    ``L blockdiag(walk) L^T + blockdiag(Sigma) + U L_s diag(v) L_s^T U^T`` (``L``: cumulative sums)."""
    n = Sigma.shape[0]
    full = np.zeros((n, 6, n, 6))
    full[np.arange(n), :, np.arange(n), :] = Sigma
    if walk is not None:
        cum = np.cumsum(walk, axis=0)  # cov(rho_j, rho_k) = sum_(i <= min(j, k)) walk_i
        for j in range(n):
            for k in range(n):
                full[j, :, k, :] += cum[min(j, k)]
    if scale_walk is not None:
        u, v = scale_walk
        cv = np.cumsum(v)
        full += np.einsum("ja,jk,kb->jakb", u, cv[np.minimum.outer(np.arange(n), np.arange(n))], u)
    return full.reshape(6 * n, 6 * n)


def _whitened(Sigma_full, residual):
    Lf = np.linalg.cholesky(Sigma_full)
    return lambda x: scipy.linalg.solve_triangular(Lf, np.ravel(residual(x)), lower=True)


@jacobian("bounds.random_walk_information", ("evaluate.bounds:random_walk_information", "evaluate.bounds:_bound_from_information",
                                             "evaluate.bounds:pairs_information"))
def _random_walk_information(rng, mp):
    """The structured (banded Cholesky + Woodbury) information against the Gauss-Newton normal matrix of the
    residuals whitened by the dense covariance; then the whole bound of :func:`bounds.bound_from_pairs` with
    the random walks against finite differences of the true pair residuals and against its dense path."""
    from kinhec.evaluate import bounds

    def spd(n, scales):
        M = rng.normal(size=(n, 6, 6)) * scales
        return M @ np.swapaxes(M, 1, 2) + 1e-3 * np.diag(scales**2)

    n, p = 6, 13
    scales = np.array([1e-3] * 3 + [1e-2] * 3)  # rad and m: unequal blocks
    J = rng.normal(size=(n, 6, p)) * 10.0 ** rng.uniform(-1, 1, p)
    Sigma, walk = spd(n, scales), 0.3 * spd(n, scales)
    u = rng.normal(size=(n, 6)) * np.r_[[1e-3] * 3, [0.5] * 3]
    v0 = rng.uniform(1e-4, 1e-3, n)  # first pair: the scale's reference (v = 0) or already drifted
    v_ref = np.r_[0.0, v0[1:]]
    lin = lambda x: np.einsum("nap,p->na", J, x)  # noqa: E731
    cases = []
    for label, w, sw in (("camera walk", walk, None), ("scale walk, drifted first pair", None, (u, v0)),
                         ("both walks, reference pair", walk, (u, v_ref))):  # fmt: skip
        F = bounds.random_walk_information(J, Sigma, w, sw)
        cases.append(Case(label, _whitened(_walk_covariance(Sigma, w, sw), lin), np.zeros(p), F, kind="normal"))

    # the bound itself: true eye-in-hand pairs, camera and scale walks, robot noise
    A, X, Y = _poses(rng, 12), _pose(rng, 0.1), _pose(rng, 2.0)
    C = pm.predicted_camera_poses(A, X, Y, "eye_in_hand")
    m = C.shape[0]
    cam, robot, cwalk = spd(m, scales), spd(m, scales), 0.2 * spd(m, scales)
    swalk = np.r_[0.0, rng.uniform(1e-5, 1e-4, m - 1)]
    sb = bounds.bound_from_pairs(A, C, X, Y, "eye_in_hand", camera_cov=cam, robot_cov=robot, camera_walk=cwalk,
                                 scale_walk=swalk)  # fmt: skip
    _, G = pm.pair_jacobians(C, X, "eye_in_hand")
    S_ind = cam + np.einsum("nij,njk,nlk->nil", G, robot, G)
    dense = _walk_covariance(S_ind, cwalk, (pm.scale_jacobian(C), swalk))

    def resid(x):
        return pm.residuals(C, pm.predicted_camera_poses(A, X @ se3.se3_exp(x[:6]), Y @ se3.se3_exp(x[6:]),
                                                         "eye_in_hand"))  # fmt: skip

    cases.append(Case("bound_from_pairs: inverse of the bound's covariance", _whitened(dense, resid), np.zeros(12),
                      np.linalg.inv(sb.cov), kind="normal", rtol=1e-5))  # fmt: skip
    # the same median errors as the dense path it replaces (the same fixed draws)
    sd = bounds.bound_from_pairs(A, C, X, Y, "eye_in_hand", camera_cov=S_ind,
                                 camera_cov_full=dense - _walk_covariance(S_ind))  # fmt: skip
    got, ref = (sb.X_rot_deg, sb.X_trans_mm, sb.Y_rot_deg, sb.Y_trans_mm), (sd.X_rot_deg, sd.X_trans_mm,
                                                                            sd.Y_rot_deg, sd.Y_trans_mm)  # fmt: skip
    assert np.all(np.isfinite(got)) and got == pytest.approx(ref, rel=1e-7), (got, ref)
    return cases


@jacobian("vision.jacobian_det", ("vision.checks:_jacobian_det",))
def _homography_det(rng, mp):
    from kinhec.vision import checks

    H = np.eye(3) + rng.normal(0, 0.2, (3, 3))
    H[2, :2] *= 0.01
    H[:2, 2] *= 100.0
    out = []
    for xy in rng.uniform(-50, 50, (3, 2)):
        J = _fd(lambda p: checks._apply(H, p[None])[0], xy, 1e-5)
        det = checks._jacobian_det(H, xy[None])[0]
        assert det == pytest.approx(np.linalg.det(J), rel=1e-7)
        out.append(Case("homography", lambda p: checks._apply(H, p[None])[0], xy, J))
    return out


# --------------------------------------------------------------------------- #
# the tests
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_analytic_derivative_matches_finite_differences(name, monkeypatch):
    covers, make = REGISTRY[name]
    rng = np.random.default_rng(sum(map(ord, name)))  # a seed of the entry's name, the same every run
    cases = make(rng, monkeypatch)
    assert cases
    for case in cases:
        _compare(case)


#: Functions whose names say derivative or information but that compute none (or that another test checks).
NOT_DERIVATIVES = {
    "evaluate.bounds:sequence_information": "pairs_information (registered) on a loaded sequence's frames, the offset "
                                            "and scale as nuisances; tests/test_calibrate_reduced_dof.py holds its "
                                            "null direction to the analytic one",
    "evaluate.bounds:parent_frame_information": "a change of parameters (right perturbations to calibrate's parent-"
                                                "frame translations) applied to an information matrix",
    "calibrate.solve:one_axis_pair_information": "_xy_jacobian's (registered) normal matrix on plain pose pairs, "
                                                  "the hand's rotations made one-axis as one_axis_information does; "
                                                  "tests/test_calibrate_reduced_dof_corners.py holds the names it "
                                                  "gives to the analytic open direction",
    "calibrate.solve:one_axis_information": "_xy_jacobian's (registered) normal matrix with the hand's rotations made "
                                            "one-axis; tests/test_calibrate_reduced_dof.py checks the open direction",
    "calibrate.reduced_dof:xy_information": "G^T G of the solve stage's whitened Jacobian (registered with the solve) "
                                            "with the nuisance block marginalised: a Schur complement, no derivative",
    "planner.expected:scene_information": "planner.model:pose_information (registered) in each perturbed scene, zero "
                                          "where the target is lost; tests/test_planner_expected.py holds it to that",
    "planner.expected:expected_information": "the mean of scene_information over the scenes; "
                                             "tests/test_planner_expected.py checks it by hand",
    "geometry.lsq:levenberg_marquardt.jacobian": "hands the caller's jac (the bundle's and the camera's, registered) or "
                                                 "block_jacobian_parts on",
    "geometry.lsq:block_jacobian_parts": "block_jacobian's body (block_jacobian returns its parts as CSR), checked there",
    "geometry.lsq:BlockJacobian.normal": "J^T W J and J^T W r from a Jacobian's blocks; tests/test_lsq_normal.py holds it to "
                                "the dense products",
    "evaluate.bounds:inverse_information": "the pseudo-inverse of an information matrix (checked with the bound's tests)",
    "evaluate.bounds:inverse_information_batch": "inverse_information on a stack (inverse_information is its "
                                                 "one-matrix case)",
    "evaluate.bounds:student_t_information_factor": "a constant factor, checked against a Monte-Carlo of the score "
                                           "(test_bound_branches)",
    "planner.design:prior_information": "a constant prior",
    "solvers.he_ml_stages.model:fitted_jacobian": "pair_jacobians with the column of scale_jacobian appended",
    "solvers.he_ml_stages.variance_components:_expected_information": "the expected information of the plain "
                                                                      "likelihood (traces, not a derivative of a "
                                                                      "computed function); tests/test_he_ml.py "
                                                                      "holds it to the dense traces",
    "evaluate.bounds:_squared_normals": "squared standard normal draws",
    "evaluate.bounds:_body_acceleration": "a time derivative of the true flange path, not of the parameters; "
                                          "test_bound_branches holds it to a path of known acceleration",
    "solvers.multi_axyb:assemble_normal": "assembly of given local Jacobians (test_multi)",
    "calibrate.check:residuals_and_jacobian": "central differences of calibrate.solve.residuals; test_check holds "
                                              "its first-order prediction to a perturbed fit",
    "calibrate.held_out:_normal_sample": "squared standard normals at Sobol points, not a derivative",
}

_DERIVATIVE_NAME = re.compile(r"(^|_)(jac|jacobian|jacobians|gradient|gradient_hessian|hessian|information|normal|"
                              r"normals|normal_equations)(_|$)")  # fmt: skip


def _functions() -> tuple[set[str], set[str]]:
    """Qualified names ``module:qualname`` of the package's functions whose names say derivative, and of all."""
    found, every = set(), set()
    for path in PKG.rglob("*.py"):
        module = ".".join(path.relative_to(PKG).with_suffix("").parts)

        def walk(node, prefix):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    qual = f"{prefix}{child.name}"
                    every.add(f"{module}:{qual}")
                    if not isinstance(child, ast.ClassDef) and _DERIVATIVE_NAME.search(child.name):
                        found.add(f"{module}:{qual}")
                    walk(child, qual + ".")

        walk(ast.parse(path.read_text()), "")
    return found, every


def test_every_derivative_in_the_package_is_registered():
    covered = {c for covers, _ in REGISTRY.values() for c in covers}
    found, every = _functions()
    missing = sorted(found - covered - set(NOT_DERIVATIVES))
    assert not missing, f"register these in tests/test_jacobians.py (or say why not in NOT_DERIVATIVES): {missing}"
    stale = sorted((covered | set(NOT_DERIVATIVES)) - every)
    assert not stale, f"no longer in the package (rename the entries): {stale}"
