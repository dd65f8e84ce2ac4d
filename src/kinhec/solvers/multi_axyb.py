"""Joint maximum likelihood of the generalised robot-world/hand-eye problem ``A_k X_i(k) = Y_j(k) B_k``.

References
----------
E. Wise et al., "A certifiably correct algorithm for generalized robot-world and hand-eye calibration", IJRR
2026 (arXiv:2507.23045): the problem over a bipartite graph of hands/targets ``i`` and cameras/worlds ``j``;
the certificate is :mod:`kinhec.solvers.certificate`.  The per-pair measurement model, its Jacobians and the
variance components are those of :mod:`kinhec.solvers.pair_model` and :mod:`kinhec.solvers.he_ml` (Förstner
1979; Student-t weights, Lange, Little & Taylor 1989).

Model
-----
Edge ``e = (i, j)`` holds ``N_e`` pose pairs.  Eye-to-hand (fixed cameras ``Y_j = T_base_cam_j`` watching
tags ``X_i = T_ee_tag_i``): ``A_k = T_base_ee``, ``B_k = C_k = T_cam_tag``; eye-in-hand (cameras ``X_i =
T_body_cam_i`` on one body watching targets ``Y_j = T_world_target_j``): ``A_k = T_world_body``, ``B_k =
inv(C_k)``.  The error of pair ``k`` is the right twist ``rho_k = log(inv(C_pred,k) C_k)`` of the camera
measurement, with the per-pair covariance of :mod:`kinhec.solvers.he_ml` (camera rotation, lateral, depth;
robot rotation, translation through ``G_k``), one set of variance components per *camera* (``Y_j``
eye-to-hand, ``X_i`` eye-in-hand), and optionally a monocular scale per camera (its translations are ``s``
times the metric ones).  The unknowns are right perturbations ``X_i exp(dx_i)``, ``Y_j exp(dy_j)`` (rotation
first) and ``log s``; each pair's Jacobian is :func:`kinhec.solvers.pair_model.pair_jacobians` placed in the
columns of its two unknowns.  Pairs are independent: a robot pose shared by several simultaneous views is
counted once per view (its error is then correlated between them; see ``docs/multi.md``).

Procedure
---------
1. **Rotations, globally.**  Unit-weight chordal rotation problem over the graph, reduced to its
   ``9 K``-dimensional quadratic form, solved with a certificate of global optimality (spanning-tree start,
   Riemannian Newton, closed-form dual certificate, the SDP when that fails; :mod:`~kinhec.solvers.certificate`).
2. **Translations** (and ``1 / s`` per camera) by linear least squares given the rotations.  With
   ``robust``, steps 1-2 are repeated three times with Cauchy weights on the pair distances.
3. **Maximum likelihood.**  Rounds of: variance components per camera (Fisher scoring on the inliers,
   pooled over all cameras for a camera with few pairs), whitened Levenberg-Marquardt over all unknowns on
   the normal equations (assembled edge by edge: their size is ``6 (n_X + n_Y) + n_s`` whatever the number
   of pairs), then (from 8 pairs of a camera on) the chi-square gate at 99.9 % and Student-t weights with
   the degrees of freedom of highest likelihood, until inliers, weights and the noise shares settle.
4. **Covariance**: the inverse of the expected information ``sum f_nu J^T Sigma^-1 J`` over the inliers,
   variance components corrected for the ``P`` fitted parameters (``n / (n - P)``).  A derived
   camera-to-camera transform ``inv(T_a) T_b`` gets ``[-Ad(inv Z), I] cov_ab [...]^T`` (cross terms
   included).
5. **Certificate of the estimate.**  The chordal problem again, weighted ``1 / (2 sigma_k^2)`` with the
   fitted per-pair rotation variance (chi-square units), on the inliers; its global minimum is certified
   (step 1's machinery, started from the estimate); the estimate's *duality gap* is its cost minus the
   rigorous lower bound.  ``certified`` when the relaxation is tight and that gap is below the chi-square
   quantile :data:`ESTIMATE_GAP_QUANTILE` with ``3 K`` degrees of freedom, i.e. the estimate differs from
   the certified global rotations by no more than two consistent estimates of the same data do.  Without a
   start given, an estimate that fails while the relaxation is tight is refitted once from the certified
   rotations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from kinhec.geometry import se3
from kinhec.util.distributions import chi2_ppf
from kinhec.util.errors import InputError, UnknownNameError
from kinhec.util.optional import MissingDependencyError
from kinhec.solvers import _common as c
from kinhec.solvers import certificate as ct
from kinhec.solvers.he_ml_stages import configuration as hm_conf
from kinhec.solvers.he_ml_stages import inputs as hm_inputs
from kinhec.solvers.he_ml_stages import model as hm_model
from kinhec.solvers.he_ml_stages import reweighting as rw
from kinhec.solvers.he_ml_stages import variance_components as vc
from kinhec.solvers import pair_model as pm

__all__ = ["CITATION", "ESTIMATE_GAP_QUANTILE", "MultiAxybResult", "multi_axyb", "assemble_normal",
           "GraphData", "graph_data", "parent_std"]  # fmt: skip

CITATION = ct.CITATION
#: Chi-square quantile (``3 K`` degrees of freedom) of the estimate's duality gap below which it is certified.
ESTIMATE_GAP_QUANTILE = 1.0 - 1e-6
#: Fewest pairs of a camera for its own variance components (fewer: the pooled ones).
_OWN_COMPONENTS_MIN_PAIRS = 8
_ROBUST_MIN_PAIRS = 8
_IRLS_ROUNDS = 3
_CAUCHY_C = 2.5
_NU_CANDIDATES = (3.0, 5.0, 10.0, math.inf)
_SETTLE_SHARE = 0.02
_VAR_FLOOR = 1e-24
_LM_MAX_ITER = 50
#: Median and 99.9 % quantile of chi2 with 3 degrees of freedom (the reference problem's rotation gate).
_CHI2_3_MEDIAN = 2.365974
_CHI2_3_GATE = 16.2662
#: Smallest rotation variance of the reference problem [rad^2] (1 microradian: exact data stay in round-off
#: range of the eigenvalue computations).
_REF_VAR_FLOOR = 1e-12
#: Unknown blocks: a direction of the information below this relative eigenvalue counts as undetermined.
UNIDENTIFIED_TOL = 1e-10


# --------------------------------------------------------------------------- #
# the data
# --------------------------------------------------------------------------- #
@dataclass
class GraphData:
    """All pairs of all edges concatenated edge by edge, with their indices.

    Attributes
    ----------
    x_ids, y_ids : list
    edges : list of (x_id, y_id)
    A, B, C : ndarray, shape (N, 4, 4)
        Hand poses, eye poses as given, camera measurements ``T_cam_target``.
    xi, yj, edge, group, sgroup : ndarray of int, shape (N,)
        ``X`` index, ``Y`` index, edge index, camera (noise group) index, scale index (-1: metric).
    offsets : ndarray of int, shape (E,)
        First pair of every edge.
    cameras : list
        Camera ids (noise groups).
    scaled : list
        Camera ids with an unknown scale.
    configuration : str
    """

    x_ids: list
    y_ids: list
    edges: list
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    xi: np.ndarray
    yj: np.ndarray
    edge: np.ndarray
    group: np.ndarray
    sgroup: np.ndarray
    offsets: np.ndarray
    cameras: list
    scaled: list
    configuration: str

    @property
    def n(self) -> int:
        return self.A.shape[0]

    @property
    def n_params(self) -> int:
        return 6 * (len(self.x_ids) + len(self.y_ids)) + len(self.scaled)

    def columns(self) -> np.ndarray:
        """Global columns (E, 13) of the local unknowns ``(dx, dy, log s)`` of every edge; ``n_params``: none."""
        nx, P = len(self.x_ids), self.n_params
        e0 = self.offsets
        cols = np.empty((len(self.edges), 13), dtype=np.int64)
        cols[:, :6] = 6 * self.xi[e0, None] + np.arange(6)
        cols[:, 6:12] = 6 * (nx + self.yj[e0, None]) + np.arange(6)
        s = self.sgroup[e0]
        cols[:, 12] = np.where(s >= 0, 6 * (nx + len(self.y_ids)) + s, P)
        return cols


def _check_id(v, what: str):
    if not isinstance(v, (str, int, np.integer)):
        raise InputError(f"pairs: expected {what} ids that are strings or integers, got {type(v).__name__} {v!r}")
    return v


def graph_data(pairs, configuration: str | None = None, scale=False) -> GraphData:
    """Check the pairs and lay them out (see :class:`GraphData`).

    Raises
    ------
    InputError
        Not a dict of ``(x_id, y_id) -> (A, B)``, bad arrays, a disconnected graph, an unknown configuration
        or scale id.
    """
    if not isinstance(pairs, dict) or not pairs:
        raise InputError(f"pairs: expected a non-empty dict (x_id, y_id) -> (A, B), got {type(pairs).__name__}"
                         + (" (empty)" if isinstance(pairs, dict) else ""))  # fmt: skip
    x_ids, y_ids, edges, As, Bs = [], [], [], [], []
    for key, val in pairs.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise InputError(f"pairs: expected keys (x_id, y_id), got {key!r}")
        xid, yid = _check_id(key[0], "X"), _check_id(key[1], "Y")
        if not (isinstance(val, (tuple, list)) and len(val) == 2):
            raise InputError(f"pairs[{key!r}]: expected a tuple (A, B) of (N, 4, 4) arrays, got {type(val).__name__}")
        A, B = c.check_pairs(val[0], val[1], min_pairs=1, names=(f"pairs[{key!r}] A", f"pairs[{key!r}] B"))
        if xid not in x_ids:
            x_ids.append(xid)
        if yid not in y_ids:
            y_ids.append(yid)
        edges.append((xid, yid))
        As.append(A)
        Bs.append(B)
    _check_connected(x_ids, y_ids, edges)
    for ids in (x_ids, y_ids):
        try:
            ids.sort()
        except TypeError:  # ids of mixed types keep their order of appearance
            pass
    A = np.concatenate(As)
    B = np.concatenate(Bs)
    if configuration is None:
        configuration = hm_conf.from_poses(B)[0]
    elif configuration not in pm.CONFIGURATIONS:
        raise UnknownNameError("configuration", configuration, pm.CONFIGURATIONS)
    eth = configuration == "eye_to_hand"
    cameras = list(y_ids) if eth else list(x_ids)
    if scale is True:
        scaled = list(cameras)
    elif scale is False or scale is None:
        scaled = []
    else:
        scaled = list(scale)
        bad = [s for s in scaled if s not in cameras]
        if bad:
            raise InputError(f"scale: expected camera ids ({', '.join(map(str, cameras))}), got {bad}")
    counts = np.array([a.shape[0] for a in As])
    edge = np.repeat(np.arange(len(edges)), counts)
    xi = np.repeat([x_ids.index(e[0]) for e in edges], counts)
    yj = np.repeat([y_ids.index(e[1]) for e in edges], counts)
    gid = [cameras.index(e[1] if eth else e[0]) for e in edges]
    group = np.repeat(gid, counts)
    sg = np.repeat([scaled.index(cameras[g]) if cameras[g] in scaled else -1 for g in gid], counts)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return GraphData(x_ids, y_ids, edges, A, B, pm.camera_poses(B, configuration), xi.astype(np.int64),
                     yj.astype(np.int64), edge, np.asarray(group, dtype=np.int64), np.asarray(sg, dtype=np.int64),
                     offsets, cameras, scaled, configuration)  # fmt: skip


def _check_connected(x_ids, y_ids, edges) -> None:
    nodes = [("X", x) for x in x_ids] + [("Y", y) for y in y_ids]
    parent = {n: n for n in nodes}

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for x, y in edges:
        parent[find(("X", x))] = find(("Y", y))
    comps = {}
    for n in nodes:
        comps.setdefault(find(n), []).append(f"{n[0]}={n[1]}")
    if len(comps) > 1:
        parts = "; ".join("{" + ", ".join(v) + "}" for v in comps.values())
        raise InputError(f"pairs: expected a connected graph of X and Y, got {len(comps)} parts that share no "
                         f"pair: {parts}; solve them separately")  # fmt: skip


# --------------------------------------------------------------------------- #
# normal equations
# --------------------------------------------------------------------------- #
def assemble_normal(J: np.ndarray, r: np.ndarray | None, offsets: np.ndarray, cols: np.ndarray, n_params: int):
    """``H = sum_k J_k^T J_k`` and ``g = sum_k J_k^T r_k`` with every pair's local columns placed globally.

    Parameters
    ----------
    J : ndarray, shape (N, m, p)
        Local (whitened) Jacobians, pairs edge by edge.
    r : ndarray, shape (N, m), optional
    offsets : ndarray of int, shape (E,)
        First pair of every edge (the local columns are the same within an edge).
    cols : ndarray of int, shape (E, p)
        Global column of every local one; ``n_params`` for a local column that is not an unknown.
    n_params : int

    Returns
    -------
    H : ndarray, shape (n_params, n_params)
    g : ndarray, shape (n_params,) or None
    """
    blocks = np.add.reduceat(np.einsum("nip,niq->npq", J, J), offsets, axis=0)
    H = np.zeros((n_params + 1, n_params + 1))
    np.add.at(H, (cols[:, :, None], cols[:, None, :]), blocks)
    g = None
    if r is not None:
        gl = np.add.reduceat(np.einsum("nip,ni->np", J, r), offsets, axis=0)
        g = np.zeros(n_params + 1)
        np.add.at(g, cols, gl)
        g = g[:n_params]
    return H[:n_params, :n_params], g


# --------------------------------------------------------------------------- #
# the state
# --------------------------------------------------------------------------- #
def _inverse_prediction(d: GraphData, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``inv(C_pred)`` (N, 4, 4): eye-in-hand ``inv(Y) A X``, eye-to-hand ``inv(X) inv(A) Y``."""
    Xk, Yk = X[d.xi], Y[d.yj]
    if d.configuration == "eye_in_hand":
        return se3.invert_transform(Yk, check=False) @ d.A @ Xk
    return se3.invert_transform(Xk, check=False) @ se3.invert_transform(d.A, check=False) @ Yk


def _scales(d: GraphData, ls: np.ndarray) -> np.ndarray:
    """Per-pair scale ``s`` (N,) of the log-scales ``ls`` (n_s,)."""
    return np.where(d.sgroup >= 0, np.exp(np.append(ls, 0.0)[d.sgroup]), 1.0)


def _residuals(d: GraphData, Ci: np.ndarray, Cm: np.ndarray, s: np.ndarray, s_ref: np.ndarray) -> np.ndarray:
    """``rho`` (N, 6): ``log(inv(C_pred) C)`` with the prediction's translation times ``s``, divided by ``s_ref``
    (the fixed scale of the round, see :func:`kinhec.solvers.he_ml_stages.model.residuals`)."""
    E = Ci.copy()
    E[:, :3, 3] *= s[:, None]
    r = pm.fast_se3_log(E @ Cm)
    r[:, 3:] /= s_ref[:, None]
    return r


def _local_jacobian(d: GraphData, Ci: np.ndarray, X: np.ndarray, s: np.ndarray, s_ref: np.ndarray):
    """``d rho / d(dx, dy, log s)`` (N, 6, 13) and ``G`` (N, 6, 6)."""
    J, G = pm.pair_jacobians(None, X[d.xi], d.configuration, C_inv=Ci)
    k = s / s_ref
    out = np.zeros((d.n, 6, 13))
    out[:, :, :12] = -J
    out[:, 3:, :12] *= k[:, None, None]
    out[:, 3:, 12] = k[:, None] * Ci[:, :3, 3]
    return out, G


def _apply(X, Y, ls, step, nx, ny):
    X = X @ se3.se3_exp(step[: 6 * nx].reshape(nx, 6))
    Y = Y @ se3.se3_exp(step[6 * nx : 6 * (nx + ny)].reshape(ny, 6))
    return X, Y, ls + step[6 * (nx + ny) :]


def _solve_lm(d: GraphData, Cm, X, Y, ls, Linv, sw, cols, max_iter: int = _LM_MAX_ITER):
    """Whitened Levenberg-Marquardt over all unknowns (normal equations); returns ``X, Y, ls``."""
    nx, ny, P = len(d.x_ids), len(d.y_ids), d.n_params
    s_ref = _scales(d, ls)

    def evaluate(X_, Y_, ls_):
        Ci = _inverse_prediction(d, X_, Y_)
        s = _scales(d, ls_)
        e = sw[:, None] * hm_model.mv(Linv, _residuals(d, Ci, Cm, s, s_ref))
        return e, Ci, s

    e, Ci, s = evaluate(X, Y, ls)
    f = float(np.sum(e * e))
    lam = 1e-4
    for _ in range(max_iter):
        Jl, _ = _local_jacobian(d, Ci, X, s, s_ref)
        Jw = sw[:, None, None] * (Linv @ Jl)
        H, g = assemble_normal(Jw, e, d.offsets, cols, P)
        dH = np.maximum(np.diag(H), 1e-300)
        while True:
            try:
                step = -np.linalg.solve(H + lam * np.diag(dH), g)
            except np.linalg.LinAlgError:
                lam *= 10.0
                continue
            Xn, Yn, lsn = _apply(X, Y, ls, step, nx, ny)
            en, Cin, sn = evaluate(Xn, Yn, lsn)
            fn = float(np.sum(en * en))
            if fn <= f:
                break
            lam *= 10.0
            if lam > 1e10:
                return X, Y, ls
        small = f - fn <= 1e-12 * max(f, 1e-300)
        X, Y, ls, e, Ci, s, f = Xn, Yn, lsn, en, Cin, sn, fn
        lam = max(lam / 10.0, 1e-12)
        if small:
            break
    X[:, :3, :3] = c.project_to_so3(X[:, :3, :3])
    Y[:, :3, :3] = c.project_to_so3(Y[:, :3, :3])
    return X, Y, ls


# --------------------------------------------------------------------------- #
# initialisation
# --------------------------------------------------------------------------- #
def _rotation_problem(d: GraphData, w: np.ndarray) -> ct.RotationProblem:
    RA, RB = d.A[:, :3, :3], d.B[:, :3, :3]
    ends = list(d.offsets[1:]) + [d.n]
    sl = [slice(a, b) for a, b in zip(d.offsets, ends)]
    E = [(d.xi[a.start], d.yj[a.start]) for a in sl]
    return ct.rotation_problem(E, [RA[a] for a in sl], [RB[a] for a in sl], [w[a] for a in sl],
                               len(d.x_ids), len(d.y_ids))  # fmt: skip


def _translations(d: GraphData, RX, RY, w):
    """``t_X``, ``t_Y`` and ``1 / s`` per scaled camera by weighted linear least squares given the rotations.

    ``R_A t_X + t_A = k R_Y t_B + t_Y`` (``k = 1 / s``; ``k = 1`` for a metric camera).
    """
    nx, ny, ns = len(d.x_ids), len(d.y_ids), len(d.scaled)
    P = 3 * (nx + ny) + ns
    RA, tA, tB = d.A[:, :3, :3], d.A[:, :3, 3], d.B[:, :3, 3]
    RYtB = (RY[d.yj] @ tB[:, :, None])[:, :, 0]
    J = np.zeros((d.n, 3, 7))
    J[:, :, :3] = RA
    J[:, :, 3:6] = -np.eye(3)
    scaled = d.sgroup >= 0
    J[:, :, 6] = np.where(scaled[:, None], -RYtB, 0.0)
    r = tA - np.where(scaled[:, None], 0.0, RYtB)
    sw = np.sqrt(w)
    e0 = d.offsets
    cols = np.empty((len(d.edges), 7), dtype=np.int64)
    cols[:, :3] = 3 * d.xi[e0, None] + np.arange(3)
    cols[:, 3:6] = 3 * (nx + d.yj[e0, None]) + np.arange(3)
    cols[:, 6] = np.where(d.sgroup[e0] >= 0, 3 * (nx + ny) + d.sgroup[e0], P)
    H, g = assemble_normal(sw[:, None, None] * J, sw[:, None] * r, d.offsets, cols, P)
    sol = np.linalg.lstsq(H + 1e-12 * np.trace(H) / P * np.eye(P), -g, rcond=None)[0]
    k = sol[3 * (nx + ny) :]
    ls = -np.log(np.where(k > 1e-9, k, 1.0))
    return sol[: 3 * nx].reshape(nx, 3), sol[3 * nx : 3 * (nx + ny)].reshape(ny, 3), ls


def _pair_distance(d: GraphData, X, Y, ls) -> np.ndarray:
    """Rotation angle [rad] plus translation distance [m] of every pair's residual (a robust score)."""
    Ci = _inverse_prediction(d, X, Y)
    s = _scales(d, ls)
    r = _residuals(d, Ci, d.C, s, s)
    return np.linalg.norm(r[:, :3], axis=1) + np.linalg.norm(r[:, 3:], axis=1)


def _poses(R, t):
    return se3.transform_from_rotation_translation(R, t)


def _initial(d: GraphData, robust: bool, method: str, solver: str, notes: list):
    """Global rotations, then translations; with ``robust`` three Cauchy-reweighted rounds (steps 1-2)."""
    nx = len(d.x_ids)
    w = np.ones(d.n)
    R = None
    cert = None
    for rnd in range(_IRLS_ROUNDS + 1 if robust else 1):
        prob = _rotation_problem(d, w)
        try:
            R, cert = ct.global_rotations(prob, start=R, method=method if rnd == 0 else "local", solver=solver)
        except MissingDependencyError as exc:  # no SDP solver installed: the local solution stands
            R, cert = ct.global_rotations(prob, start=R, method="local")
            notes.append(f"initial rotations not certified by the SDP: {exc}")
        tX, tY, ls = _translations(d, R[:nx], R[nx:], w)
        X, Y = _poses(R[:nx], tX), _poses(R[nx:], tY)
        if not robust:
            break
        dist = _pair_distance(d, X, Y, ls)
        scale = np.empty(d.n)
        for g in range(len(d.cameras)):
            m = d.group == g
            scale[m] = max(1.4826 * float(np.median(dist[m])), 1e-12)
        w = 1.0 / (1.0 + (dist / (_CAUCHY_C * scale)) ** 2)
    return X, Y, ls, cert


def _reference_weights(d: GraphData, X, Y, ls) -> np.ndarray:
    """The weights of the chordal problem the estimate is certified on, fixed by the data and the global start alone.

    At the certified (robustly reweighted) start: the per-axis rotation variance ``sigma_c^2`` of every
    camera from the median of its pairs' squared residual angles (``median chi2(3) = 2.366``), pooled over
    all pairs for a camera with fewer than 4, at least :data:`_REF_VAR_FLOOR` (exact data); the pairs whose
    ``|w|^2 / sigma_c^2`` passes the 99.9 % gate of chi2(3); weights ``1 / (2 sigma_c^2)``.  It does not
    depend on the estimate being certified, so an estimate that gates pairs out or fits odd noise levels
    cannot make its own certificate easier.
    """
    Ci = _inverse_prediction(d, X, Y)
    s = _scales(d, ls)
    a2 = np.sum(_residuals(d, Ci, d.C, s, s)[:, :3] ** 2, axis=1)
    pooled = max(float(np.median(a2)) / _CHI2_3_MEDIAN, _REF_VAR_FLOOR)
    var = np.full(d.n, pooled)
    for g in range(len(d.cameras)):
        m = d.group == g
        if m.sum() >= 4:
            var[m] = max(float(np.median(a2[m])) / _CHI2_3_MEDIAN, _REF_VAR_FLOOR)
    return np.where(a2 / var <= _CHI2_3_GATE, 0.5 / var, 0.0)


def _problem_extent(d: GraphData, w: np.ndarray) -> dict:
    """What the certified problem holds: its edges and pairs, and the edges the gate left without a pair."""
    per_edge = np.bincount(d.edge, weights=(w > 0).astype(float), minlength=len(d.edges))
    out = [f"{x}-{y}" for (x, y), k in zip(d.edges, per_edge) if k == 0]
    return {"edges_total": len(d.edges), "edges_certified": int((per_edge > 0).sum()),
            "pairs_certified": int((w > 0).sum()), "edges_left_out": out}


# --------------------------------------------------------------------------- #
# result
# --------------------------------------------------------------------------- #
@dataclass
class MultiAxybResult:
    """Estimate of :func:`multi_axyb`.

    Attributes
    ----------
    X, Y : dict of id -> ndarray (4, 4)
        The unknowns [m] (see the module text for the frames).
    scale : dict of camera id -> float
        Estimated monocular scales (camera translation = ``s`` x metric).
    cov : ndarray, shape (P, P)
        Covariance of ``(dx_1, .., dx_nX, dy_1, .., dy_nY, log s_1, ..)`` (right perturbations, rotation
        first, rad and m).
    x_ids, y_ids, scaled : list
        Order of the unknowns in ``cov``.
    configuration : str
    noise : dict of camera id -> dict
        Noise levels per camera (keys :data:`kinhec.solvers.he_ml.NOISE_KEYS`).
    dof : dict of camera id -> float
        Student-t degrees of freedom of the weights (inf: Gaussian).
    residuals : dict of (x_id, y_id) -> ndarray (N, 6)
        ``rho`` of every pair at the solution (rad, m; target frame).
    chi2 : dict of (x_id, y_id) -> ndarray (N,)
    inliers : dict of (x_id, y_id) -> ndarray of bool (N,)
    certificate : dict
        See step 5 of the module text: ``certified``, ``duality_gap``, ``threshold``, ``lower_bound``,
        ``cost``, ``relaxation_tight``, ``relaxation_gap``, ``global_rotation_distance_deg``, ``method``,
        ``sdp_dim``, ``solver_time_s``, ``notes``; and what the certified problem holds: ``edges_total``,
        ``edges_certified`` (edges with a pair that passed its gate), ``pairs_certified``, ``edges_left_out``
        (``"x-y"`` of every edge the gate left without a pair: the certificate does not cover them).
    observability : dict of str -> dict
        Per unknown (``"X:id"``, ``"Y:id"``, ``"scale:id"``): ``determined``, ``undetermined`` (which parts),
        ``edges`` and ``pairs`` touching it.
    info : dict
    """

    X: dict
    Y: dict
    scale: dict
    cov: np.ndarray
    x_ids: list
    y_ids: list
    scaled: list
    configuration: str
    noise: dict
    dof: dict
    residuals: dict
    chi2: dict
    inliers: dict
    certificate: dict
    observability: dict
    info: dict = field(default_factory=dict)

    def _slice(self, kind: str, key) -> slice:
        if kind == "X":
            k = self.x_ids.index(key)
        elif kind == "Y":
            k = len(self.x_ids) + self.y_ids.index(key)
        else:
            raise UnknownNameError("unknown kind", kind, ("X", "Y"))
        return slice(6 * k, 6 * k + 6)

    def cov_of(self, kind: str, key) -> np.ndarray:
        """Covariance (6, 6) of ``X[key]`` or ``Y[key]`` (``kind`` ``"X"`` or ``"Y"``)."""
        s = self._slice(kind, key)
        return self.cov[s, s]

    def std(self, kind: str, key) -> np.ndarray:
        """Standard deviations (6,): rotation [rad] (right perturbation), then translation [m] in the parent
        frame (the spread of the translation column itself, as :mod:`kinhec.calibrate` reports it)."""
        T = self.X[key] if kind == "X" else self.Y[key]
        return parent_std(T, self.cov_of(kind, key))

    @property
    def X_std(self) -> dict:
        return {k: self.std("X", k) for k in self.x_ids}

    @property
    def Y_std(self) -> dict:
        return {k: self.std("Y", k) for k in self.y_ids}

    def relative(self, a, b, kind: str | None = None):
        """``T_a_b = inv(T_a) T_b`` of two unknowns of one kind and its covariance (6, 6) (right perturbation).

        ``kind`` defaults to the cameras' (``Y`` eye-to-hand, ``X`` eye-in-hand).
        """
        kind = kind or ("Y" if self.configuration == "eye_to_hand" else "X")
        T = self.Y if kind == "Y" else self.X
        Z = se3.invert_transform(T[a], check=False) @ T[b]
        sa, sb = self._slice(kind, a), self._slice(kind, b)
        J = np.zeros((6, 12))
        J[:, :6] = -pm.adjoint(se3.invert_transform(Z, check=False))
        J[:, 6:] = np.eye(6)
        idx = np.r_[np.arange(sa.start, sa.stop), np.arange(sb.start, sb.stop)]
        return Z, J @ self.cov[np.ix_(idx, idx)] @ J.T


def parent_std(T: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Standard deviations of ``(omega, d)`` with ``T exp(omega, v)``: ``d = R v`` (the translation's own change)."""
    D = np.eye(6)
    D[3:, 3:] = T[:3, :3]
    return np.sqrt(np.maximum(np.diag(D @ cov @ D.T), 0.0))


# --------------------------------------------------------------------------- #
# the solver
# --------------------------------------------------------------------------- #
def _components_of(Cp, G):
    return vc.components(Cp, G)


def _estimate_noise(d, r, Q, w, inl, theta, known):
    """Variance components per camera: pooled over all inliers, then each camera with enough pairs its own."""
    if known is not None:
        return theta
    pooled = np.maximum(vc.estimate_components(r[inl], np.ascontiguousarray(Q[:, inl]), w[inl],
                                                theta.mean(axis=0)), _VAR_FLOOR)  # fmt: skip
    out = np.empty_like(theta)
    for g in range(len(d.cameras)):
        m = inl & (d.group == g)
        if int(m.sum()) >= _OWN_COMPONENTS_MIN_PAIRS:
            try:
                out[g] = np.maximum(vc.estimate_components(r[m], np.ascontiguousarray(Q[:, m]), w[m], theta[g]),
                                    _VAR_FLOOR)  # fmt: skip
                continue
            except np.linalg.LinAlgError:
                pass
        out[g] = pooled
    return out


def _sigma(d, theta, Q):
    """Per-pair covariance (N, 6, 6) from each pair's camera components."""
    return np.einsum("nk,knij->nij", theta[d.group], Q) + vc.COVARIANCE_FLOOR * np.eye(6)


def _student_weights(nu: np.ndarray, chi2: np.ndarray) -> np.ndarray:
    """``(nu + 6) / (nu + chi2)`` per pair, 1 where ``nu`` is infinite (Gaussian)."""
    out = np.ones(chi2.shape)
    fin = np.isfinite(nu)
    out[fin] = (nu[fin] + 6.0) / (nu[fin] + chi2[fin])
    return out


def _fit(d: GraphData, X, Y, ls, *, known, robust: bool, max_rounds: int):
    """Steps 3-4: the rounds of the maximum-likelihood fit and the covariance."""
    nx, ny, P = len(d.x_ids), len(d.y_ids), d.n_params
    G_n = len(d.cameras)
    cols = d.columns()
    Cm = d.C
    # initial inliers: a generous gate on the robust distance (per camera)
    inl = np.ones(d.n, dtype=bool)
    if robust:
        dist = _pair_distance(d, X, Y, ls)
        for g in range(G_n):
            m = d.group == g
            if m.sum() >= _ROBUST_MIN_PAIRS:
                gate = max(4.0 * float(np.quantile(dist[m], 0.35)), 1e-12)
                inl[m] = dist[m] <= gate
    theta = None if known is None else np.tile(vc.theta_from_noise(known), (G_n, 1))
    nu = np.full(G_n, math.inf)
    w = np.ones(d.n)
    prev = None
    for _ in range(max_rounds):
        Ci = _inverse_prediction(d, X, Y)
        s = _scales(d, ls)
        r = _residuals(d, Ci, Cm, s, s)
        Cp = se3.invert_transform(Ci, check=False)
        _, G = pm.pair_jacobians(None, X[d.xi], d.configuration, C_inv=Ci)
        Q = _components_of(Cp, G)
        if theta is None:
            rr = max(float(np.mean(r[inl, :3] ** 2)), _VAR_FLOOR)
            rt = max(float(np.mean(r[inl, 3:] ** 2)), _VAR_FLOOR)
            theta = np.tile([rr, rt, rt, 0.1 * rr, 0.1 * rt], (G_n, 1))
        if 6 * int(inl.sum()) - P >= 2 * theta.shape[1]:
            try:
                theta = _estimate_noise(d, r, Q, w, inl, theta, known)
            except np.linalg.LinAlgError:
                pass
        Linv, Sinv, logdet = vc.whitener(_sigma(d, theta, Q))
        chi2 = hm_model.quad(r, Sinv)
        if robust:
            new_inl = inl.copy()
            for g in range(G_n):
                m = d.group == g
                if m.sum() < _ROBUST_MIN_PAIRS:
                    continue
                cand = m & (chi2 <= rw.CHI2_GATE)
                if cand.sum() >= 3:
                    new_inl[m] = cand[m]
                mi = new_inl & m
                lls = [rw.t_loglik(chi2[mi], logdet[mi], v) for v in _NU_CANDIDATES]
                nu[g] = _NU_CANDIDATES[int(np.argmax(lls))]
            inl = new_inl
            w = _student_weights(nu[d.group], chi2)
        trQ = vc.traces(Q)  # (k, N)
        share = np.array([theta[g] * trQ[:, (d.group == g) & inl].mean(axis=1) if ((d.group == g) & inl).any()
                          else np.zeros(theta.shape[1]) for g in range(G_n)])  # fmt: skip
        share = share / np.maximum(share.sum(axis=1, keepdims=True), 1e-300)
        state = (inl.copy(), nu.copy(), share)
        if prev is not None and np.array_equal(prev[0], inl) and np.array_equal(prev[1], nu) and \
                np.all(np.abs(prev[2] - share) <= _SETTLE_SHARE):
            break
        prev = state
        sw = np.sqrt(w) * inl
        X, Y, ls = _solve_lm(d, Cm, X, Y, ls, Linv, sw, cols)
    # covariance at the solution, variance components corrected for the fitted parameters
    n_obs = 6.0 * inl.sum()
    dof_scale = n_obs / max(n_obs - P, 1.0) if known is None else 1.0
    theta = theta * dof_scale
    Ci = _inverse_prediction(d, X, Y)
    s = _scales(d, ls)
    r = _residuals(d, Ci, Cm, s, s)
    Cp = se3.invert_transform(Ci, check=False)
    Jl, G = _local_jacobian(d, Ci, X, s, s)
    Q = _components_of(Cp, G)
    Sig = _sigma(d, theta, Q)
    Linv, Sinv, _ = vc.whitener(Sig)
    chi2 = hm_model.quad(r, Sinv)
    f_nu = _student_weights(nu[d.group], np.full(d.n, 2.0))  # (nu + 6) / (nu + 8): expected information
    Jw = (np.sqrt(f_nu) * inl)[:, None, None] * (Linv @ Jl)
    H, _ = assemble_normal(Jw, None, d.offsets, cols, P)
    return X, Y, ls, H, theta, nu, inl, r, chi2, Sig


def _observability(d: GraphData, H: np.ndarray):
    """Per unknown: the parts the information leaves undetermined, and the edges and pairs that touch it."""
    P = H.shape[0]
    dg = np.sqrt(np.clip(np.diag(H), 1e-300, None))
    Hn = H / np.outer(dg, dg)
    wv, V = np.linalg.eigh(Hn)
    null = wv < UNIDENTIFIED_TOL * max(float(wv.max()), 1e-300)
    inv_w = np.where(null, 0.0, 1.0 / np.where(null, 1.0, wv))
    cov = (V * inv_w) @ V.T / np.outer(dg, dg)
    Vn = V[:, null]
    raw_zero = np.diag(H) <= 1e-300
    out = {}
    nx = len(d.x_ids)
    edge_pairs = np.bincount(d.edge, minlength=len(d.edges))

    def meets(sl) -> bool:
        return bool(raw_zero[sl].any()) or (bool(Vn.size) and float(np.max(np.sum(Vn[sl] ** 2, axis=0))) > 1e-3)

    for kind, ids in (("X", d.x_ids), ("Y", d.y_ids)):
        for k, key in enumerate(ids):
            b = 6 * (k if kind == "X" else nx + k)
            parts = [name for name, sl in (("rotation", slice(b, b + 3)), ("translation", slice(b + 3, b + 6)))
                     if meets(sl)]  # fmt: skip
            es = [e for e, (x, y) in enumerate(d.edges) if (x if kind == "X" else y) == key]
            out[f"{kind}:{key}"] = {"determined": not parts, "undetermined": parts, "edges": len(es),
                                    "pairs": int(edge_pairs[es].sum())}  # fmt: skip
    base = 6 * (nx + len(d.y_ids))
    for k, key in enumerate(d.scaled):
        parts = ["scale"] if meets(slice(base + k, base + k + 1)) else []
        out[f"scale:{key}"] = {"determined": not parts, "undetermined": parts}
    return out, cov


def _certify(prob: ct.RotationProblem, R_est: np.ndarray, R_start: np.ndarray, method: str, solver: str):
    """Step 5: the certificate of the rotations ``R_est`` on the reference problem (a dict) and the certified
    global rotations.

    The local solutions from the estimate and from the global start are both refined and certified in
    closed form; the better is kept, and the SDP runs (``method="auto"``) when it is not certified.
    """

    K = prob.n_rotations
    tau = float(chi2_ppf(ESTIMATE_GAP_QUANTILE, 3 * K))
    notes = []
    Q = prob.quadratic_form()
    cands = []
    for R0 in (R_est, R_start):
        R = ct.refine_rotations(prob, R0, Q=Q)
        cands.append((R, ct.dual_certificate(prob, R, Q=Q)))
    R_g, cert = min(cands, key=lambda rc: rc[1].cost)
    if not cert.tight and method in ("auto", "sdp") or method == "sdp":
        try:
            R_g, cert = ct.global_rotations(prob, start=R_g, method=method, solver=solver)
        except MissingDependencyError as exc:  # no SDP solver installed: the local certificate stands
            notes.append(str(exc))
    f_est = prob.cost(R_est, Q)
    gap = f_est - cert.lower_bound
    dist = np.degrees(np.linalg.norm(c.rotvecs(np.swapaxes(R_g, 1, 2) @ R_est), axis=1))
    out = {
        "certified": bool(cert.tight and gap <= tau),
        "duality_gap": float(gap),
        "threshold": tau,
        "lower_bound": float(cert.lower_bound),
        "cost": float(f_est),
        "relaxation_tight": bool(cert.tight),
        "relaxation_gap": float(cert.duality_gap),
        "relaxation_relative_gap": float(cert.relative_gap),
        "global_cost": float(cert.cost),
        "global_rotation_distance_deg": float(dist.max()),
        "method": cert.method,
        "sdp_dim": int(cert.sdp_dim),
        "solver_time_s": float(cert.solver_time_s),
        "notes": notes + list(cert.notes),
    }
    return out, R_g


def multi_axyb(pairs, *, configuration: str | None = None, noise: dict | None = None, scale=False,
               robust: bool = True, start: dict | None = None, certify: str | None = "auto", sdp_solver: str = "scs",
               max_rounds: int = 6) -> MultiAxybResult:  # fmt: skip
    """Joint maximum-likelihood ``X_i`` and ``Y_j`` of ``A_k X_i(k) = Y_j(k) B_k`` with a certificate.

    Parameters
    ----------
    pairs : dict of (x_id, y_id) -> (A, B)
        Every edge's pose pairs: ``A`` (N, 4, 4) hand poses (``T_base_ee`` / ``T_world_body``) and ``B`` (N,
        4, 4) eye poses (``T_cam_tag`` eye-to-hand, ``T_target_cam`` eye-in-hand) [m], N >= 1.  The graph of
        ids must be connected.
    configuration : {"eye_to_hand", "eye_in_hand"}, optional
        Identified from the eye poses when omitted (the reading that puts the targets in front of the cameras).
    noise : dict, optional
        Known standard deviations (keys :data:`kinhec.solvers.he_ml.NOISE_KEYS`) for every camera; estimated
        per camera when omitted.
    scale : bool or iterable of camera ids
        Monocular scale per camera: every camera, the ones named, or none.
    robust : bool
        Cauchy-reweighted start, chi-square gate and Student-t weights.
    start : dict, optional
        ``{"X": {id: T}, "Y": {id: T}[, "scale": {id: s}]}``: refine locally from there instead of the
        certified global start (the certificate then says whether the result is the global solution).
    certify : {"auto", "local", "sdp"} or None
        How the estimate is certified (:func:`kinhec.solvers.certificate.global_rotations`): the SDP only
        when the closed-form certificate fails, never, or always; None skips the certificate.
    sdp_solver : {"scs", "clarabel"}
    max_rounds : int

    Returns
    -------
    MultiAxybResult

    Raises
    ------
    InputError
        Bad pairs, a disconnected graph, bad options, a start without every unknown.
    """
    if certify not in (None, "auto", "local", "sdp"):
        raise UnknownNameError("certify", certify, ("auto", "local", "sdp"))
    if sdp_solver not in ct.SDP_SOLVERS:
        raise UnknownNameError("SDP solver", sdp_solver, ct.SDP_SOLVERS)
    d = graph_data(pairs, configuration, scale)
    known = hm_inputs.check_noise(noise)
    nx = len(d.x_ids)
    notes = []
    init_cert = ref = R_start = None
    if start is None or certify is not None:
        X0, Y0, ls0, init_cert = _initial(d, robust, certify or "local", sdp_solver, notes)
        w_ref = _reference_weights(d, X0, Y0, ls0)
        ref = _rotation_problem(d, w_ref)
        R_start = np.concatenate([X0[:, :3, :3], Y0[:, :3, :3]])
    X, Y, ls = (X0, Y0, ls0) if start is None else _start(d, start)
    fit = _fit(d, X, Y, ls, known=known, robust=robust, max_rounds=max_rounds)
    if certify is not None:
        cert, R_g = _certify(ref, _rotations(fit), R_start, certify, sdp_solver)
        if start is None and cert["relaxation_tight"] and not cert["certified"]:
            # the fit left the certified basin: once more from the certified rotations
            inl = fit[6].astype(np.float64)
            tX, tY, ls0 = _translations(d, R_g[:nx], R_g[nx:], inl)
            fit2 = _fit(d, _poses(R_g[:nx], tX), _poses(R_g[nx:], tY), ls0, known=known, robust=robust,
                        max_rounds=max_rounds)  # fmt: skip
            cert2, _ = _certify(ref, _rotations(fit2), R_g, certify, sdp_solver)
            notes.append("the first fit left the basin of the certified rotations; refitted from them")
            if cert2["duality_gap"] < cert["duality_gap"]:
                fit, cert = fit2, cert2
        cert.update(_problem_extent(d, w_ref))
    else:
        cert = {"certified": False, "duality_gap": math.nan, "method": "none", "notes": ["not computed"]}
    X, Y, ls, H, theta, nu, inl, r, chi2, Sig = fit
    obs, cov = _observability(d, H)
    ends = list(d.offsets[1:]) + [d.n]
    per = {e: slice(a, b) for e, a, b in zip(d.edges, d.offsets, ends)}
    info = {"n_pairs": d.n, "n_edges": len(d.edges), "notes": notes}
    if init_cert is not None:
        info["initial_certificate"] = init_cert.to_dict()
    return MultiAxybResult(
        X=dict(zip(d.x_ids, X)), Y=dict(zip(d.y_ids, Y)),
        scale={k: float(math.exp(v)) for k, v in zip(d.scaled, ls)}, cov=cov, x_ids=list(d.x_ids),
        y_ids=list(d.y_ids), scaled=list(d.scaled), configuration=d.configuration,
        noise={k: vc.noise_from_theta(theta[g]) for g, k in enumerate(d.cameras)},
        dof={k: float(nu[g]) for g, k in enumerate(d.cameras)},
        residuals={e: r[s] for e, s in per.items()}, chi2={e: chi2[s] for e, s in per.items()},
        inliers={e: inl[s] for e, s in per.items()}, certificate=cert, observability=obs, info=info,
    )  # fmt: skip


def _rotations(fit) -> np.ndarray:
    return np.concatenate([fit[0][:, :3, :3], fit[1][:, :3, :3]])


def _start(d: GraphData, start) -> tuple:
    if not isinstance(start, dict) or "X" not in start or "Y" not in start:
        raise InputError(f"start: expected a dict with 'X' and 'Y' (id -> 4x4), got {start!r:.80}")
    missing = [f"X:{k}" for k in d.x_ids if k not in start["X"]] + [f"Y:{k}" for k in d.y_ids if k not in start["Y"]]
    if missing:
        raise InputError(f"start: expected every unknown of the pairs, got none for {', '.join(missing)}")
    X = np.stack([c.check_pose(start["X"][k], f"start['X'][{k!r}]") for k in d.x_ids])
    Y = np.stack([c.check_pose(start["Y"][k], f"start['Y'][{k!r}]") for k in d.y_ids])
    sc = start.get("scale", {}) or {}
    ls = np.array([math.log(float(sc.get(k, 1.0))) for k in d.scaled])
    return X, Y, ls
