"""Readings of a hand and an eye pose file, and what the poses themselves say about each.

A *reading* (:class:`Reading`) is one way to take the input: which file is the
hand, the direction of each (``base_T_ee`` or ``ee_T_base``; ``cam_T_target``
or ``target_T_cam``), the setup, the units of each file, the order of its
quaternion columns, and for unstamped files which rows pair.  The convention
firewall (:mod:`kinhec.calibrate.firewall`) scores them all; this module holds
what the data contribute.

What the data can tell
----------------------
Paired poses obey ``A_i X = Y B_i``, so relative motions obey
``inv(A_i) A_j = X inv(B_i) B_j inv(X)``: they are conjugate, and their
rotation angles agree whatever ``X`` and ``Y`` are.  Reading a stream the
other way round conjugates its motions by a pose and inverts them, which
changes no angle either.  The agreement of the angles (*congruence*,
:func:`congruence`) therefore tests, before anything is fitted, which rows
pair (:func:`order_alignments`) -- except inside a block of pure translations,
where every row has the same angles: the fit then places the rows
(:mod:`kinhec.calibrate.row_alignment`, which starts from this test).  It is blind to the order of the quaternion
columns: the angle between two rotations is ``2 acos|q_i . q_j|``, which no
permutation of the four components changes.  A stream read in the wrong order
shows in the fit instead: its rotations no longer fit one ``X`` -- or, with
both streams misread alike, they still do and the translations do not.

Directions fall into two *classes*, which a fit separates (:func:`fit_class`):
as read, and with one of the two streams inverted.  Within a class the data
cannot decide: inverting both streams turns ``A X = Y B`` into
``inv(A) Y = X inv(B)`` -- the same fit with ``X`` and ``Y`` exchanged -- and
exchanging the files turns it into ``B inv(X) = inv(Y) A``.  The four readings
of a class fit exactly equally (:meth:`ClassFit.transforms` derives their
``X`` and ``Y`` from one fit) and differ in which transform is called ``X``;
the setup (eye-in-hand or eye-to-hand) changes only names.  The units change
the ratio ``s`` of eye to hand translations, which the fit leaves free.  What
separates these is evidence of another kind (:mod:`kinhec.calibrate.conventions`).

Scores are in log-likelihood units (natural log), built so that noise alone
does not decide.  A congruence score counts the rows that clearly do not belong
where a reading puts them: a row's cost is the mean disagreement of its angles
with those of reference rows in units of the noise, capped at :data:`CAP`, and
only its excess over :data:`NOISE_COST` counts (a correctly paired row costs
about 0.8, a mispaired one about ``CAP``).  A fit score is
``n ln(spread_best / spread)`` for the median rotation and translation residuals
of ``n`` pairs, ratios within :data:`FIT_TOLERANCE` counting as equal.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate.pairing import Alignment
from kinhec.solvers import _common as c

__all__ = ["Reading", "ClassFit", "angle_matrix", "rotation_angles", "congruence", "order_alignments", "consistent_poses",
           "fit_class", "SUBSAMPLE", "MAX_SHIFT", "CAP"]

#: Pairs (evenly spread) on which the classes are fitted and the congruence is scored.
SUBSAMPLE = 30
#: Largest shift of the rows (or run of rows without a partner) tried for unstamped files.
MAX_SHIFT = 3
#: Cost of a row whose angles disagree with every other row's (in noise units).
CAP = 8.0
#: Row cost that noise alone reaches (the mean of |N(0, 1)| is 0.8; a few rows in a hundred reach 2.5).
NOISE_COST = 2.5
#: Ratio of median fit residuals that counts as equal.
FIT_TOLERANCE = 1.25
#: Reference rows a row's angles are compared with when aligning unstamped files.
N_REF = 40
#: Floor of the angle noise [rad] (noise-free data would otherwise make every difference infinite).
ANGLE_FLOOR = np.radians(0.02)
#: Floors of the fit residuals: rotation [rad], translation (relative to the median motion translation).
ROT_FLOOR, TRANS_FLOOR = 1e-4, 1e-4
#: Unstamped files longer than this are aligned row by row only (the alignment search is quadratic).
MAX_ALIGN_ROWS = 1000


@dataclass(frozen=True)
class Reading:
    """One way to read a hand file and an eye file.

    Attributes
    ----------
    swap : bool
        The file given as the eye holds the hand poses (and the reverse).
    hand_pose : {"base_T_ee", "ee_T_base"}
        Direction of the file used as the hand.
    eye_pose : {"cam_T_target", "target_T_cam"}
        Direction of the file used as the eye.
    setup : {"eye_in_hand", "eye_to_hand"}
    units : tuple of str
        ``(units of the file given as --hand, units of the file given as --eye)``.
    quat : tuple
        Quaternion column order of the two files as given (``"xyzw"``,
        ``"wxyz"``, or None where the format names them).
    align : int
        Row alignment (unstamped): 0 row by row, 1 the alignment the fit chose
        otherwise (:mod:`kinhec.calibrate.row_alignment`; where that does not
        apply, the index among :func:`order_alignments`' candidates); 0 for
        stamped files.
    """

    swap: bool = False
    hand_pose: str = "base_T_ee"
    eye_pose: str = "cam_T_target"
    setup: str = "eye_in_hand"
    units: tuple = ("m", "m")
    quat: tuple = (None, None)
    align: int = 0

    @property
    def inv_hand(self) -> bool:
        """The hand file is inverted to give ``A = T_base_ee``."""
        return self.hand_pose == "ee_T_base"

    @property
    def inv_eye(self) -> bool:
        """The eye file is inverted to give the solver form ``B`` (``T_target_cam`` / ``T_cam_marker``)."""
        return (self.setup != "eye_to_hand") == (self.eye_pose == "cam_T_target")

    @property
    def hand_file_inverted(self) -> bool:
        """The file given as the hand is inverted in this reading (whichever role it plays)."""
        return self.inv_eye if self.swap else self.inv_hand

    @property
    def klass(self) -> int:
        """Direction class: 0 as read (or both inverted), 1 one stream inverted."""
        return int(self.inv_hand != self.inv_eye)

    @property
    def outcome(self) -> tuple:
        """What changes the numbers (the setup and the matching eye direction change only names)."""
        return (self.swap, self.inv_hand, self.inv_eye, self.units, self.quat, self.align)


# --------------------------------------------------------------------------- #
# congruence of rotation angles
# --------------------------------------------------------------------------- #
def angle_matrix(R1: np.ndarray, R2: np.ndarray) -> np.ndarray:
    """Angles [rad] of ``R1[i]^T R2[j]`` for every ``i, j``: shape ``(len(R1), len(R2))``.

    From the trace ``sum(R1[i] * R2[j])`` alone (one matrix product): about
    1e-8 rad of round-off near zero, ample for comparing streams.
    """
    tr = R1.reshape(-1, 9) @ R2.reshape(-1, 9).T
    return np.arccos(np.clip(0.5 * (tr - 1.0), -1.0, 1.0))


def _row_costs(D: np.ndarray, sigma: float) -> np.ndarray:
    """Mean capped disagreement of every row of ``D`` (rows, refs) [noise units]."""
    return np.minimum(np.abs(D) / sigma, CAP).mean(axis=1)


def _excess(cost) -> np.ndarray:
    """What a row's cost says beyond noise: its excess over :data:`NOISE_COST`."""
    return np.maximum(np.asarray(cost) - NOISE_COST, 0.0)


def _sigma(D: np.ndarray) -> float:
    return max(1.4826 * float(np.median(np.abs(D))), ANGLE_FLOOR)


def congruence(RA: np.ndarray, RB: np.ndarray, sigma: float | None = None) -> tuple[float, float, float]:
    """Congruence of paired rotations ``RA``, ``RB`` (n, 3, 3): ``(score, median |dtheta| [rad], sigma)``.

    ``score = -sum_i excess(mean_j min(|theta_A(i, j) - theta_B(i, j)| / sigma, CAP))`` over every two pairs
    (log units; :func:`_excess`);
    ``sigma`` the noise of the angle differences (default: from these pairs, floored at :data:`ANGLE_FLOOR`).
    """
    D = angle_matrix(RA, RA) - angle_matrix(RB, RB)
    np.fill_diagonal(D, np.nan)
    D = D[~np.isnan(D)].reshape(len(RA), len(RA) - 1) if len(RA) > 1 else np.zeros((len(RA), 1))
    med = float(np.median(np.abs(D)))
    s = _sigma(D) if sigma is None else sigma
    return -float(_excess(_row_costs(D, s)).sum()), med, s


def order_alignments(R_hand: np.ndarray, R_eye: np.ndarray, max_shift: int = MAX_SHIFT, sigma: float | None = None):
    """Candidate row alignments of two unstamped files, scored by congruence.

    Files of equal length: shifts of the whole file by ``-max_shift..max_shift``
    rows (row by row first).  Files whose lengths differ by ``d <= max_shift``:
    ``d`` consecutive rows of the longer one without a partner, at every place
    (the rows before pair one to one, those after shifted by ``d``).  Each
    alignment's rows are compared with :data:`N_REF` reference rows spread
    over the file; all places of the run are scored at once from prefix sums.

    ``sigma`` is the noise of the angle differences [rad] (default: from the
    best alignment); pass a common one to compare the scores of other readings
    of the files (quaternion orders).

    Returns
    -------
    list of (Alignment, float, float)
        ``(alignment, score, median |dtheta| [rad])``, row by row (or the best)
        first, then by score; empty when the lengths differ by more than
        ``max_shift`` or the files are longer than :data:`MAX_ALIGN_ROWS`.
    """
    nh, ne = len(R_hand), len(R_eye)
    d = ne - nh
    if abs(d) > max_shift or max(nh, ne) > MAX_ALIGN_ROWS or min(nh, ne) < 4:
        if d == 0:
            i = np.arange(nh)
            return [(Alignment(i, i), 0.0, float("nan"))]
        return []
    if d == 0:
        cands = []
        for k in range(-max_shift, max_shift + 1):
            h = np.arange(max(0, -k), min(nh, ne - k))
            if h.size < 4:
                continue
            cands.append((Alignment(h, h + k, shift=k), h))
        # terms with a first guess of the noise, then with the noise of the best alignment
        D = []
        for al, _ in cands:
            ref = np.unique(np.linspace(0, al.hand_index.size - 1, min(N_REF, al.hand_index.size)).round().astype(int))
            D.append(angle_matrix(R_hand[al.hand_index], R_hand[al.hand_index[ref]])
                     - angle_matrix(R_eye[al.eye_index], R_eye[al.eye_index[ref]]))
        rough = [float(_row_costs(x, np.radians(1.0)).mean()) for x in D]
        sigma = _sigma(D[int(np.argmin(rough))]) if sigma is None else sigma
        n_rows = nh
        out = [(al, -n_rows * float(_excess(_row_costs(x, sigma)).mean()), float(np.median(np.abs(x))))
               for (al, _), x in zip(cands, D)]
        first = [o for o in out if o[0].shift == 0]
        rest = sorted((o for o in out if o[0].shift != 0), key=lambda o: -o[1])
        return first + rest
    # lengths differ: the shorter file S, the longer L; S row s pairs with L row s + d [s >= cut]
    short_is_eye = d < 0
    RS, RL = (R_eye, R_hand) if short_is_eye else (R_hand, R_eye)
    dd = abs(d)
    ns = len(RS)
    ref = np.unique(np.linspace(0, ns - 1, min(N_REF, ns)).round().astype(int))
    thS = angle_matrix(RS, RS[ref])  # (ns, nref)
    th = {(a, b): angle_matrix(RL[np.arange(ns) + a * dd], RL[ref + b * dd]) for a in (0, 1) for b in (0, 1)}
    cuts = np.arange(ns + 1)

    def totals(sigma):
        # a row's cost depends on which side of the cut it and each reference row lie: with the references
        # sorted, the references after the cut are a suffix, so a row's sum over references is a prefix sum
        # of one matrix plus a suffix sum of another (per row and cut: (ns, ncut) values)
        C = {k: np.minimum(np.abs(v - thS) / sigma, CAP) for k, v in th.items()}  # (ns, nref)
        Pref = {k: np.hstack([np.zeros((ns, 1)), np.cumsum(v, axis=1)]) for k, v in C.items()}  # (ns, nref + 1)
        j = np.searchsorted(ref, cuts)  # references before the cut: ref[:j]
        tot = np.zeros(len(cuts))
        for a in (0, 1):
            row = (Pref[(a, 0)][:, j] + (Pref[(a, 1)][:, -1:] - Pref[(a, 1)][:, j])) / len(ref)  # (ns, ncut)
            side = (np.arange(ns)[:, None] >= cuts[None, :]) == bool(a)  # the row lies on side a of the cut
            tot += np.where(side, _excess(row), 0.0).sum(axis=0)
        return tot  # (ncut,) summed over rows

    rough = totals(np.radians(1.0)) + 1e-9 * np.abs(cuts - ns)  # ties: the missing rows at the end
    best = int(np.argmin(rough))
    lmap = np.arange(ns) + dd * (np.arange(ns) >= best)
    refmap = ref + dd * (ref >= best)
    Db = angle_matrix(RL[lmap], RL[refmap]) - thS
    sigma = _sigma(Db) if sigma is None else sigma
    score = -totals(sigma)
    order = np.argsort(-score, kind="stable")
    out = []
    for cut in order[: 2 * max_shift + 3]:
        s_idx = np.arange(ns)
        l_idx = s_idx + dd * (s_idx >= cut)
        h, e = (l_idx, s_idx) if short_is_eye else (s_idx, l_idx)
        D = angle_matrix(RL[l_idx], RL[l_idx[ref]]) - thS
        out.append((Alignment(h, e, shift=d, cut=int(cut) if 0 < cut < ns else None), float(score[cut]),
                    float(np.median(np.abs(D)))))
    return out


# --------------------------------------------------------------------------- #
# the fit of a direction class
# --------------------------------------------------------------------------- #
@dataclass
class ClassFit:
    """Coarse ``A X = Y B`` fit of one direction class on raw file poses (translations in the hand file's units).

    ``H X = Y (s E)``: ``H`` the file given as the hand, ``E`` the eye file (class 0) or its inverse (class 1),
    ``s`` the ratio converting the eye file's translations into the hand file's units.

    The fit serves every reading of its class: inverting both files (``H^-1 Y = X E^-1``) exchanges ``X`` and
    ``Y``; exchanging the files (``E X^-1 = Y^-1 H``) inverts both.  Either way the lengths of the two
    translations stay, exchanged when the reading inverts the file given as the hand.
    """

    X: np.ndarray
    Y: np.ndarray
    scale: float
    scale_std: float
    rot_med: float  # median rotation residual of the motions [rad]
    trans_med: float  # median translation residual of the motions [hand units]
    trans_ref: float  # median translation of the hand motions [hand units]
    n: int

    def transforms(self, swap: bool, hand_file_inverted: bool) -> tuple[np.ndarray, np.ndarray]:
        """``(X, Y)`` of a reading of this class.

        ``hand_file_inverted``: the reading inverts the file given as the hand
        (whatever role it plays); ``swap``: the files exchange roles.  From
        ``H X_c = Y_c E_c``: inverting both files exchanges ``X`` and ``Y``,
        exchanging the files inverts both.
        """
        X, Y = (self.Y, self.X) if hand_file_inverted else (self.X, self.Y)
        if swap:
            X, Y = se3.invert_transform(X, check=False), se3.invert_transform(Y, check=False)
        return X, Y


def rotation_angles(R: np.ndarray) -> np.ndarray:
    """Angles [rad] of rotations ``(..., 3, 3)`` from their traces (the firewall's cheap measure)."""
    return np.arccos(np.clip(0.5 * (np.trace(R, axis1=-2, axis2=-1) - 1.0), -1.0, 1.0))


def consistent_poses(RA: np.ndarray, RB: np.ndarray) -> np.ndarray:
    """Paired rotations (n, 3, 3) whose motions to the others keep their angles, (n,) bool.

    A motion turns the hand and the eye by the same angle whatever ``X`` and ``Y`` are; a wrong pose (a gross
    outlier) changes the angle of every motion it is part of.  A pose is kept when the median over the others of
    ``|theta_A - theta_B|`` is at most three times that of the median pose (or :data:`ANGLE_FLOOR`); all are
    kept when that would leave fewer than half of them (then the angles tell nothing: a wrong direction class,
    or too much noise).
    """
    n = len(RA)
    if n < 4:
        return np.ones(n, dtype=bool)
    D = np.abs(angle_matrix(RA, RA) - angle_matrix(RB, RB))
    np.fill_diagonal(D, np.nan)
    med = np.nanmedian(D, axis=1)
    keep = med <= max(3.0 * float(np.median(med)), ANGLE_FLOOR)
    return keep if 2 * int(keep.sum()) >= n else np.ones(n, dtype=bool)


def fit_class(H: np.ndarray, E: np.ndarray) -> ClassFit:
    """Fit ``H_i X = Y (s E_i)`` on paired raw poses (n, 4, 4): rotation (Park-Martin), then translations and ``s``.

    Robust to a minority of wrong pairs: the motions are taken between the poses
    that keep their rotation angles (:func:`consistent_poses`: a gross outlier
    among the poses spoils every motion it is part of, so that with 30 % of them
    only half the motions are right), and the rotation and the translations are
    refitted once without the motions whose residual exceeds three times the
    median.  The medians reported are over the motions between those poses (all
    of them when every pose keeps its angles).
    """
    n = len(H)
    i, j = np.triu_indices(n, k=1)
    ok = consistent_poses(H[:, :3, :3], E[:, :3, :3])
    base = ok[i] & ok[j]
    Hi = se3.invert_transform(H[i], check=False) @ H[j]
    Ei = se3.invert_transform(E[i], check=False) @ E[j]
    RA, tA, RB, tB = Hi[:, :3, :3], Hi[:, :3, 3], Ei[:, :3, :3], Ei[:, :3, 3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qA, qB = c.motion_quats(Hi, Ei)
    alpha, beta = c.rotvecs_from_quats(qA), c.rotvecs_from_quats(qB)
    keep = base
    for _ in range(2):
        R = c.project_to_so3(alpha[keep].T @ beta[keep])
        res_r = rotation_angles(np.swapaxes(RA @ R, 1, 2) @ (R @ RB))
        keep = base & (res_r <= max(3.0 * float(np.median(res_r[base])), 1e-9))
    # translations: (R_A - I) t_X - s R t_B = -t_A on the motions
    M = np.concatenate([RA - np.eye(3), -(tB @ R.T)[:, :, None]], axis=2)  # (m, 3, 4)
    b = -tA
    sol = np.zeros(4)
    rows = keep.copy()
    for _ in range(2):
        sol = np.linalg.lstsq(M[rows].reshape(-1, 4), b[rows].reshape(-1), rcond=None)[0]
        res_t = np.linalg.norm(np.einsum("mij,j->mi", M, sol) - b, axis=1)
        rows = keep & (res_t <= max(3.0 * float(np.median(res_t[keep])), 1e-12))
    t_X, s = sol[:3], float(sol[3])
    # the standard deviation of s, the motions counted as n - 1 independent ones
    Mk = M[rows].reshape(-1, 4)
    dof = max(Mk.shape[0] - 4, 1)
    sig2 = float(((Mk @ sol - b[rows].reshape(-1)) ** 2).sum()) / dof
    try:
        cov = np.linalg.inv(Mk.T @ Mk) * sig2 * (rows.sum() / max(n - 1, 1))
        s_std = float(np.sqrt(max(cov[3, 3], 0.0)))
    except np.linalg.LinAlgError:
        s_std = float("inf")
    Hk, Ek = H[ok], E[ok]
    RY = c.project_to_so3((Hk[:, :3, :3] @ R @ np.swapaxes(Ek[:, :3, :3], 1, 2)).sum(axis=0))
    t_Y = np.median(Hk[:, :3, :3] @ t_X + Hk[:, :3, 3] - s * (Ek[:, :3, 3] @ RY.T), axis=0)
    return ClassFit(X=c.transform(R, t_X), Y=c.transform(RY, t_Y), scale=s, scale_std=s_std,
                    rot_med=float(np.median(res_r[base])), trans_med=float(np.median(res_t[base])),
                    trans_ref=float(np.median(np.linalg.norm(tA, axis=1))), n=n)


def fit_score(fit: ClassFit, best_rot: float, best_trans: float) -> float:
    """``-n [ln(rot / rot_best) + ln(trans / trans_best)]``, each ratio less :data:`FIT_TOLERANCE` (log units, <= 0)."""
    fr = max(fit.rot_med, ROT_FLOOR)
    ft = max(fit.trans_med, TRANS_FLOOR * max(fit.trans_ref, 1e-12))
    tol = np.log(FIT_TOLERANCE)
    return -fit.n * (max(np.log(fr / max(best_rot, ROT_FLOOR)) - tol, 0.0)
                     + max(np.log(ft / max(best_trans, TRANS_FLOOR * max(fit.trans_ref, 1e-12))) - tol, 0.0))
