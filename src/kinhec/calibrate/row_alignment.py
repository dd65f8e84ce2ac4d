"""Which rows of two unstamped pose files pair: every alignment with a few rows missing or repeated, scored by the fit.

Without stamps, row ``k`` of the hand file goes with row ``k`` of the eye file
-- unless a detection failed (an image, hence an eye row, is missing), a pose
was written twice, or a hand row was lost.  Then some rows of one file (or of
both) have no partner, and the rows after them pair shifted.  An *alignment*
says which rows have no partner; the rest pair in order.  This module considers
every alignment with up to :data:`MAX_UNPAIRED` rows without a partner in each
file, at any place (the start, the end or the middle), and lets the fit choose.

Why the fit and not the rotation angles
---------------------------------------
The rotation angles between rows agree under the right pairing whatever ``X``
and ``Y`` are (:func:`kinhec.calibrate.readings.congruence`), which makes them
a cheap first test.  But a recording often holds blocks of pure translations
(RWHE kuka_1: its first eleven poses share one rotation): inside such a block
every row has the same angles, and the angles cannot say where in the block a
row is missing.  The translations can: ``A_i X = Y s B_i`` holds for the right
pair, and pairing row ``i`` with its neighbour's partner is off by the distance
between the two stations (centimetres, where the noise is millimetres).

The method
----------
1. *Congruence first.*  The best alignment by rotation angles
   (:func:`kinhec.calibrate.readings.order_alignments`: a shift, or one run of
   rows without a partner) gives the pairs of a first fit; so do windows of
   :data:`WINDOW` consecutive rows paired at each offset (where rows are missing
   in several places, some window lies between two of them).  Of these fits, in
   both direction classes (the eye file as read and inverted,
   :func:`kinhec.calibrate.readings.fit_class`), the one that fits most rows at
   their best offset is kept (a wrong class misses by tens of degrees).
2. *A fast fit.*  ``H_i X = Y (s E_i)`` on absolute poses, in closed form: the
   rotations from the top singular vectors of ``sum_i R_Hi (x) R_Ei`` (Shah 2013,
   "Solving the robot-world/hand-eye calibration problem using the Kronecker
   product"), refined by two alternations, then ``t_X``, ``t_Y`` and the ratio
   ``s`` of the translation units by linear least squares
   (:func:`fit_absolute`); refitted on the pairs within the Gaussian core.
3. *Every alignment scored at once.*  With ``X``, ``Y``, ``s`` fixed, pairing
   hand row ``i`` with eye row ``j`` costs ``rho(chi2_ij) = CAP ln(1 +
   chi2_ij / CAP)``: ``chi2`` is the squared residual of ``inv(Y s E_j) H_i X``
   (three rotation, three translation components) in units of the noise of each
   component (``1.4826`` times the median absolute residual), ``rho`` is
   ``-2 ln`` of a density with a Gaussian core and polynomial tails (an outlier
   costs tens, a mispaired row hundreds).  A row without a partner costs
   :data:`SKIP`.  A dynamic programme over the rows finds the cheapest
   alignment among all of them (the state: the rows of each file consumed, the
   rows left out so far, the last step; a hand row and an eye row left out next
   to each other are one pair dropped, which is the outlier gate's business, not
   an alignment).  Refitted on the pairs it picks and run again until it no
   longer changes (at most :data:`ITERATIONS` times).
4. *The rivals, each with its own fit.*  The same programme run on the reversed
   files gives, for every pair the best alignment does not use, the cost of the
   best alignment that does; the cheapest of them (up to :data:`N_RIVALS`) are
   the rivals, each refitted on its own pairs, all scored with one noise scale.
5. *How many rows are left out.*  First as few as the lengths require (the
   difference, all in the longer file).  An alignment that leaves out more (a
   row lost in each file, a shift) is taken only when it beats that by the
   margin with every pair's cost capped at ``CAP`` -- where two rows left out
   cost exactly one pair at the cap, so that leaving out the two rows of an
   outlier gains nothing.  Both are compared at the better of their fits
   (the fewer-rows alignment is refitted from the other's fit too): a few
   gross pairs can hold a refit away from the clean fit, and the margin must
   be that of the alignments, not of where their fits stopped.

The margin
----------
Half the difference of two costs is a log-likelihood ratio.  An alignment is
chosen when it beats every rival that pairs different poses by ``ln 100`` (the
firewall's :data:`~kinhec.calibrate.conventions.DECISIVE`: a likelihood ratio of
100), i.e. by :data:`MARGIN` ``= 2 ln 100 = 9.2`` in cost.  A rival whose pairs
hold the same poses bit for bit (a row written twice, rows of a standing robot
with the same detection) gives the same result and is no rival.  Otherwise the
run stops (exit 2) naming the rows each alignment leaves without a partner and
how far apart their ``X`` are -- never one of two alignments the fit cannot tell
apart.

Cost (CPU of one core, median of 5): 37 ms on RWHE kuka_1 without camera row 4
(the first fits of step 1 batched over the windows), 0.06 s on 100 rows,
0.66 s on 1,000 rows (the
programme runs over the rows in Python, each step on whole arrays of its
``(MAX_UNPAIRED + 1)^2 x 3`` states).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate import readings as rd
from kinhec.calibrate.pairing import Alignment, describe_unpaired
from kinhec.solvers import _common as c

__all__ = ["MAX_UNPAIRED", "CAP", "MARGIN", "RowAlignment", "align_rows", "fit_absolute", "pair_residuals", "with_note",
           "ambiguity"]

#: Most rows of one file without a partner.
MAX_UNPAIRED = 3
#: Where the cost of a pair leaves its Gaussian core: ``rho(chi2) = CAP ln(1 + chi2 / CAP)`` (six components; noise
#: alone exceeds a chi-square of 30 once in 25,000 pairs).
CAP = 30.0
#: Cost of a row without a partner: two of them cost one pair at a chi-square of ``CAP (e - 1)`` (51), well outside
#: the noise.
SKIP = CAP / 2
#: Cost difference that decides: twice the firewall's log-likelihood margin (ln 100).
MARGIN = 2.0 * float(np.log(100.0))
#: Refits of the best alignment at most.
ITERATIONS = 3
#: Rivals refitted at most.
N_RIVALS = 6
#: Rivals whose cost at the best alignment's fit is within this of the best are refitted.
REACH = 4.0 * MARGIN
#: Floors of the noise scale: rotation [rad], translation (relative to the median hand position).
ROT_FLOOR, TRANS_FLOOR = 1e-6, 1e-6

_INF = np.inf


# --------------------------------------------------------------------------- #
# the fast fit
# --------------------------------------------------------------------------- #
def fit_absolute(H: np.ndarray, E: np.ndarray):
    """``H_i X = Y (s E_i)`` on paired absolute poses (m, 4, 4) in closed form: ``(X, Y, s)``.

    Rotations: ``R_H R_X R_E^T = R_Y`` for every pair, so ``sum_i tr(R_Y^T R_Hi R_X R_Ei^T) = y^T K x`` with
    ``x``, ``y`` the row-major vectors of ``R_X``, ``R_Y`` and ``K = sum_i R_Hi (x) R_Ei`` (indices ``pq, rs``:
    ``R_H[p, r] R_E[q, s]``); the top singular vectors of ``K``, projected on SO(3) and refined by two
    alternations.  Translations: ``R_Hi t_X - s R_Y t_Ei - t_Y = -t_Hi`` by least squares.
    """
    RH, RE = H[:, :3, :3], E[:, :3, :3]
    K = (RH.reshape(-1, 9).T @ RE.reshape(-1, 9)).reshape(3, 3, 3, 3).transpose(0, 2, 1, 3).reshape(9, 9)
    U, _, Vt = np.linalg.svd(K)
    Mx, My = Vt[0].reshape(3, 3), U[:, 0].reshape(3, 3)
    if np.linalg.det(Mx) < 0:
        Mx, My = -Mx, -My
    RX, RY = c.project_to_so3(Mx), c.project_to_so3(My)
    REt = np.swapaxes(RE, 1, 2)
    for _ in range(2):
        RY = c.project_to_so3((RH @ RX @ REt).sum(axis=0))
        RX = c.project_to_so3((np.swapaxes(RH, 1, 2) @ RY @ RE).sum(axis=0))
    m = len(H)
    M = np.concatenate([RH, -(E[:, :3, 3] @ RY.T)[:, :, None], -np.broadcast_to(np.eye(3), (m, 3, 3))], axis=2)
    sol = np.linalg.lstsq(M.reshape(-1, 7), -H[:, :3, 3].reshape(-1), rcond=None)[0]
    return c.transform(RX, sol[:3]), c.transform(RY, sol[4:]), float(sol[3])


def pair_residuals(H: np.ndarray, E: np.ndarray, X, Y, s: float) -> np.ndarray:
    """Residuals (m, 6) of ``inv(Y s E_i) H_i X``: rotation vector [rad], translation [hand units]."""
    P = H @ X
    Es = E.copy()
    Es[:, :3, 3] *= s
    Q = Y @ Es
    RQt = np.swapaxes(Q[:, :3, :3], 1, 2)
    rot = c.rotvecs(RQt @ P[:, :3, :3])
    tr = np.einsum("nij,nj->ni", RQt, P[:, :3, 3] - Q[:, :3, 3])
    return np.concatenate([rot, tr], axis=1)


def _scale(r: np.ndarray, t_ref: float) -> np.ndarray:
    sig = 1.4826 * np.median(np.abs(r), axis=0)
    floor = np.r_[np.full(3, ROT_FLOOR), np.full(3, TRANS_FLOOR * max(t_ref, 1e-12))]
    return np.maximum(sig, floor)


def _chi2(r: np.ndarray, sig: np.ndarray) -> np.ndarray:
    return ((r / sig) ** 2).sum(axis=1)


def _rho(chi2: np.ndarray) -> np.ndarray:
    """Cost of pairs: ``-2 ln`` of a density with a Gaussian core and polynomial tails, ``(1 + chi2/CAP)^(-CAP/2)``."""
    return CAP * np.log1p(chi2 / CAP)


def _capped_fit(H, E, sig, starts, t_ref):
    """The fit of the pairs within the core, from each start ``(X, Y, s)``; the one of least cost: ``(cost, X, Y, s)``.

    Mispaired rows lie far outside the core: a plain least-squares fit would bend to them, so each start keeps the
    pairs within ``chi2 <= CAP``, refits on them and repeats (three times).
    """
    best = None
    for X, Y, s in starts:
        for _ in range(3):
            keep = _chi2(pair_residuals(H, E, X, Y, s), sig) <= CAP
            if keep.sum() < 6:
                break
            X, Y, s = fit_absolute(H[keep], E[keep])
        cost = float(_rho(_chi2(pair_residuals(H, E, X, Y, s), sig)).sum())
        if best is None or cost < best[0]:
            best = (cost, X, Y, s)
    return best


def _robust_fit(H, E, sig=None, t_ref=1.0):
    """The fast fit, then once more without the pairs beyond the cap; ``(X, Y, s, sig)``."""
    X, Y, s = fit_absolute(H, E)
    r = pair_residuals(H, E, X, Y, s)
    sg = _scale(r, t_ref) if sig is None else sig
    keep = _chi2(r, sg) <= CAP
    if 6 <= keep.sum() < len(H):
        X, Y, s = fit_absolute(H[keep], E[keep])
        if sig is None:
            sg = _scale(pair_residuals(H, E, X, Y, s)[keep], t_ref)
    return X, Y, s, sg


# --------------------------------------------------------------------------- #
# every alignment at once: a dynamic programme over the rows
# --------------------------------------------------------------------------- #
def _band_costs(H, E, X, Y, s, sig, capped: bool = False) -> np.ndarray:
    """Cost of hand row ``i`` with eye row ``i + k - MAX_UNPAIRED``: shape (nh, 2 MAX_UNPAIRED + 1).

    :func:`_rho` of the pair's chi-square, or (``capped``) ``min(chi2, CAP)``.
    """
    nh, ne, m = len(H), len(E), MAX_UNPAIRED
    i, k = np.meshgrid(np.arange(nh), np.arange(2 * m + 1), indexing="ij")
    j = i + k - m
    ok = (j >= 0) & (j < ne)
    C = np.full(i.shape, _INF)
    chi2 = _chi2(pair_residuals(H[i[ok]], E[j[ok]], X, Y, s), sig)
    C[ok] = np.minimum(chi2, CAP) if capped else _rho(chi2)
    return C


def _limits(nh: int, ne: int, counts) -> tuple:
    """Most rows left out of each file: ``counts`` (exactly that many), or up to :data:`MAX_UNPAIRED`."""
    return (MAX_UNPAIRED, MAX_UNPAIRED) if counts is None else counts


def _forward(C: np.ndarray, nh: int, ne: int, counts=None) -> np.ndarray:
    """Cheapest cost of reaching every state: ``F[i, a, b, last]``.

    ``i`` hand rows consumed, ``a`` of them and ``b`` eye rows left without a partner (so ``i + b - a`` eye rows
    consumed), ``last`` the last step: 0 a pair (or the start), 1 a hand row left out, 2 an eye row left out.
    A hand row and an eye row are not left out one right after the other (that is one pair dropped).  ``counts``:
    at most ``(A, B)`` rows of each file left out.
    """
    m = MAX_UNPAIRED
    la, lb = _limits(nh, ne, counts)
    F = np.full((nh + 1, m + 1, m + 1, 3), _INF)
    F[0, 0, 0, 0] = 0.0
    a = np.arange(m + 1)[:, None]
    b = np.arange(m + 1)[None, :]
    for i in range(nh + 1):
        Fi = F[i]
        for bb in range(lb):  # eye rows left out at this hand row, one after the other
            jj = i + bb - np.arange(m + 1)
            src = np.where(jj < ne, np.minimum(Fi[:, bb, 0], Fi[:, bb, 2]) + SKIP, _INF)
            Fi[:, bb + 1, 2] = np.minimum(Fi[:, bb + 1, 2], src)
        if i == nh:
            break
        j = i + b - a
        cost = C[i, np.clip(b - a + m, 0, 2 * m)]
        F[i + 1, :, :, 0] = np.where(j < ne, Fi.min(axis=2) + cost, _INF)
        F[i + 1, 1:, :, 1] = (np.minimum(Fi[:, :, 0], Fi[:, :, 1]) + SKIP)[:-1]
        F[i + 1, la + 1:] = _INF
        F[i + 1, :, lb + 1:] = _INF
    return F


def _end_states(nh: int, ne: int, counts=None):
    if counts is not None:
        return [counts]
    m = MAX_UNPAIRED
    return [(a, a + ne - nh) for a in range(m + 1) if 0 <= a + ne - nh <= m]


def _trace(F: np.ndarray, C: np.ndarray, state: tuple) -> list:
    """The pairs ``(i, j)`` of the cheapest way to ``state = (i, a, b, last)`` (in order)."""
    m = MAX_UNPAIRED
    i, a, b, last = state
    pairs = []
    while i > 0 or b > 0:
        v = F[i, a, b, last]
        j = i + b - a
        if last == 2:
            prev = [(i, a, b - 1, L) for L in (0, 2)]
            step = SKIP
        elif last == 1:
            prev = [(i - 1, a - 1, b, L) for L in (0, 1)]
            step = SKIP
        else:
            prev = [(i - 1, a, b, L) for L in (0, 1, 2)]
            step = C[i - 1, b - a + m]
            pairs.append((i - 1, j - 1))
        vals = [F[p] + step for p in prev]
        k = int(np.argmin(vals))
        if not abs(vals[k] - v) <= 1e-9 * max(1.0, abs(v)):
            raise RuntimeError("row alignment: no predecessor reaches the state")  # a bug, not an input
        i, a, b, last = prev[k]
    return pairs[::-1]


def _best(C, nh, ne, counts=None):
    F = _forward(C, nh, ne, counts)
    ends = [(nh, a, b, L) for a, b in _end_states(nh, ne, counts) for L in range(3)]
    vals = [F[e] for e in ends]
    k = int(np.argmin(vals))
    return float(vals[k]), _trace(F, C, ends[k]), F


def _reversed_costs(C, nh, ne):
    """The band costs of the reversed files (hand row ``nh-1-i``, eye row ``ne-1-j``: offset ``d - (j - i)``)."""
    m = MAX_UNPAIRED
    k = np.arange(2 * m + 1)
    kr = (ne - nh) - (k - m) + m
    Cr = np.full_like(C, _INF)
    ok = (kr >= 0) & (kr <= 2 * m)
    Cr[:, ok] = C[::-1][:, kr[ok]]
    return Cr


def _splits(off: int, counts):
    """Rows left out before and after a pair at offset ``off``: ``(a, b, a', b')`` with the totals ``counts``."""
    A, B = counts
    for a_ in range(A + 1):
        b_ = a_ + off
        if 0 <= b_ <= B:
            yield a_, b_, A - a_, B - b_


def _rivals(C, nh, ne, F, best_pairs, best_cost, counts) -> list:
    """The cheapest alignments (with ``counts`` rows left out) that use a pair the best one does not.

    The same programme on the reversed files gives the cheapest way from every pair to the end; with the forward
    one, the cheapest alignment through every pair (whole arrays over the pairs).  Returns ``[(cost at this fit,
    pairs)]``, cheapest first.
    """
    m = MAX_UNPAIRED
    Cr = _reversed_costs(C, nh, ne)
    R = _forward(Cr, nh, ne, counts)
    Fmin, Rmin = F.min(axis=3), R.min(axis=3)  # (nh + 1, m + 1, m + 1)
    i, k = np.meshgrid(np.arange(nh), np.arange(2 * m + 1), indexing="ij")
    off = k - m
    through = np.full(C.shape, _INF)
    for o in range(-m, m + 1):
        sel = off == o
        for a_, b_, a2, b2 in _splits(o, counts):
            ii = i[sel]
            through[sel] = np.minimum(through[sel], Fmin[ii, a_, b_] + Rmin[nh - ii - 1, a2, b2])
    through += C
    for p, q in best_pairs:
        through[p, q - p + m] = _INF
    flat = np.argsort(through, axis=None, kind="stable")
    out, seen = [], set()
    for f in flat:
        total = float(through.flat[f])
        if not np.isfinite(total) or len(out) >= N_RIVALS or (len(out) >= 2 and total > best_cost + REACH):
            break
        p, kk = divmod(int(f), 2 * m + 1)
        q = p + kk - m
        if (p, q) in seen:
            continue
        path = _path_through(C, Cr, F, R, nh, ne, p, q, counts)
        if path is None:
            continue
        seen.update(path)
        out.append((total, path))
    return out


def _path_through(C, Cr, F, R, nh, ne, i, j, counts):
    """The cheapest alignment that pairs hand row ``i`` with eye row ``j``."""
    best, arg = _INF, None
    for a_, b_, a2, b2 in _splits(j - i, counts):
        La, Lb = int(np.argmin(F[i, a_, b_])), int(np.argmin(R[nh - i - 1, a2, b2]))
        v = F[i, a_, b_, La] + R[nh - i - 1, a2, b2, Lb]
        if v < best:
            best, arg = v, ((i, a_, b_, La), (nh - i - 1, a2, b2, Lb))
    if arg is None or not np.isfinite(best):
        return None
    before = _trace(F, C, arg[0])
    after = [(nh - 1 - p, ne - 1 - q) for p, q in _trace(R, Cr, arg[1])][::-1]
    return before + [(i, j)] + after


# --------------------------------------------------------------------------- #
# the decision
# --------------------------------------------------------------------------- #
@dataclass
class Candidate:
    """One alignment refitted on its own pairs: its costs (same noise scale for all) and what it gives.

    ``cost``: :func:`_rho` over the pairs plus :data:`SKIP` per row left out; ``capped``: the same with
    ``min(chi2, CAP)`` per pair.
    """

    alignment: Alignment
    cost: float
    capped: float
    X: np.ndarray
    Y: np.ndarray
    scale: float


@dataclass
class RowAlignment:
    """The alignment the fit chose (or the best of those it cannot tell apart), its rivals and the margin.

    ``decided``: the best beats every rival whose pairs differ by :data:`MARGIN` in cost; ``rivals`` are those
    within the margin (empty when decided); ``runner_up`` the best of the others; ``klass`` the direction class
    fitted (0 as read, 1 eye inverted); ``rot_med`` the median rotation residual of the best fit [rad] (compares
    quaternion readings); ``fewest``: the best alignment that leaves out no more rows than the lengths require,
    when a rival leaving out more beat it (None otherwise); ``cost_s`` the CPU time.
    """

    best: Candidate
    rivals: list
    runner_up: Candidate | None
    klass: int
    rot_med: float
    cost_s: float = 0.0
    same_numbers: list = field(default_factory=list)  # rivals within the margin whose pairs hold the same poses
    fewest: Candidate | None = None

    @property
    def alignment(self) -> Alignment:
        return self.best.alignment

    @property
    def decided(self) -> bool:
        return not self.rivals

    @property
    def margin(self) -> float:
        """Log-likelihood ratio of the best over the runner-up (half the cost difference; inf without one)."""
        return float("inf") if self.runner_up is None else 0.5 * (self.runner_up.cost - self.best.cost)


def _alignment(pairs, nh, ne) -> Alignment:
    h = np.array([p for p, _ in pairs], dtype=int)
    e = np.array([q for _, q in pairs], dtype=int)
    return Alignment(h, e, shift=ne - nh, lengths=(nh, ne))


def _same_poses(H, E, a: Alignment, b: Alignment) -> bool:
    """The two alignments pair the same poses, bit for bit (in any order)."""
    if a.hand_index.size != b.hand_index.size:
        return False

    def rows(al):
        r = np.concatenate([H[al.hand_index].reshape(len(al.hand_index), -1),
                            E[al.eye_index].reshape(len(al.eye_index), -1)], axis=1)
        return r[np.lexsort(r.T[::-1])]

    return bool(np.array_equal(rows(a), rows(b)))


#: Rows in a window whose pairs at one offset give a first fit; windows tried at most; rows a first fit is judged on.
WINDOW, N_WINDOWS, N_JUDGE = 10, 12, 60


def _fit_batch(H: np.ndarray, E: np.ndarray, w: np.ndarray):
    """:func:`fit_absolute` of many sets of pairs at once: ``H``, ``E`` (W, m, 4, 4), weights ``w`` (W, m) of 0 or 1.

    Returns ``X``, ``Y`` (W, 4, 4) and ``s`` (W,).
    """
    nw, m = w.shape
    RH, RE = H[..., :3, :3], E[..., :3, :3]
    K = (np.swapaxes((w[:, :, None] * RH.reshape(nw, m, 9)), 1, 2) @ RE.reshape(nw, m, 9))
    K = K.reshape(nw, 3, 3, 3, 3).transpose(0, 1, 3, 2, 4).reshape(nw, 9, 9)
    U, _, Vt = np.linalg.svd(K)
    Mx, My = Vt[:, 0].reshape(nw, 3, 3), U[:, :, 0].reshape(nw, 3, 3)
    sg = np.where(np.linalg.det(Mx) < 0, -1.0, 1.0)[:, None, None]
    RX, RY = c.project_to_so3(sg * Mx), c.project_to_so3(sg * My)
    REt, RHt, wk = np.swapaxes(RE, -1, -2), np.swapaxes(RH, -1, -2), w[:, :, None, None]
    for _ in range(2):
        RY = c.project_to_so3((wk * (RH @ RX[:, None] @ REt)).sum(axis=1))
        RX = c.project_to_so3((wk * (RHt @ RY[:, None] @ RE)).sum(axis=1))
    tE = np.einsum("wij,wnj->wni", RY, E[..., :3, 3])
    M = np.concatenate([RH, -tE[..., None], -np.broadcast_to(np.eye(3), (nw, m, 3, 3))], axis=3)  # (W, m, 3, 7)
    Mw = M * w[:, :, None, None]
    N = np.einsum("wnki,wnkj->wij", Mw, M)
    rhs = np.einsum("wnki,wnk->wi", Mw, -H[..., :3, 3])
    sol = np.linalg.solve(N + 1e-12 * np.eye(7), rhs[..., None])[..., 0]
    X = se3.transform_from_rotation_translation(RX, sol[:, :3])
    Y = se3.transform_from_rotation_translation(RY, sol[:, 4:])
    return X, Y, sol[:, 3]


def _window_fits(H, E) -> list:
    """Fits of windows of :data:`WINDOW` consecutive hand rows (every half window, at most :data:`N_WINDOWS` spread
    over the file) paired at each offset: ``[(X, Y, s)]``."""
    nh, ne, m = len(H), len(E), MAX_UNPAIRED
    starts = np.arange(0, max(nh - WINDOW, 0) + 1, WINDOW // 2)
    starts = starts[np.unique(np.linspace(0, starts.size - 1, min(N_WINDOWS, starts.size)).round().astype(int))]
    i = (starts[:, None, None] + np.arange(min(WINDOW, nh))[None, None, :])  # (S, 1, W)
    j = i + np.arange(-m, m + 1)[None, :, None]  # (S, O, W)
    i = np.broadcast_to(i, j.shape).reshape(-1, j.shape[-1])
    j = j.reshape(-1, j.shape[-1])
    w = ((j >= 0) & (j < ne)).astype(float)
    ok = w.sum(axis=1) >= 6
    i, j, w = i[ok], np.clip(j[ok], 0, ne - 1), w[ok]
    X, Y, s = _fit_batch(H[i], E[j], w)
    return [(X[k], Y[k], float(s[k])) for k in range(len(s))]


def _judged(H, E):
    """:data:`N_JUDGE` hand rows spread over the file and, for each, the eye rows within the band: (n, 2m + 1)."""
    nh, ne, m = len(H), len(E), MAX_UNPAIRED
    rows = np.unique(np.linspace(0, nh - 1, min(N_JUDGE, nh)).round().astype(int))
    i, k = np.meshgrid(rows, np.arange(2 * m + 1), indexing="ij")
    return i, np.clip(i + k - m, 0, ne - 1)


def _size(rot_rad: np.ndarray, trans: np.ndarray, t_ref: float) -> np.ndarray:
    return rot_rad + trans / max(t_ref, 1e-12)


def _best_cells(H, E, fit, t_ref) -> np.ndarray:
    """Residuals (n, 6) of :data:`N_JUDGE` hand rows spread over the file, each with the eye row within the band
    that fits it best."""
    i, j = _judged(H, E)
    r = pair_residuals(H[i.ravel()], E[j.ravel()], *fit).reshape(*i.shape, 6)
    size = _size(np.linalg.norm(r[..., :3], axis=2), np.linalg.norm(r[..., 3:], axis=2), t_ref)
    return r[np.arange(i.shape[0]), np.argmin(size, axis=1)]


def _agreement(H, E, fits, t_ref) -> np.ndarray:
    """How well each fit agrees with the rows, whatever their alignment: the median over hand rows of the residual of
    the best eye row within the band, rotation [rad] plus translation relative to the median hand position.

    All fits at once; the rotation angle from the trace and the translation's length, which the rotation into the
    eye's frame does not change (no rotation vectors).
    """
    i, j = _judged(H, E)
    Hc, Ec = H[i.ravel()], E[j.ravel()]  # (cells, 4, 4)
    X = np.stack([f[0] for f in fits])
    Y = np.stack([f[1] for f in fits])
    sc = np.array([f[2] for f in fits])
    RH, RE, RY = Hc[None, :, :3, :3], Ec[None, :, :3, :3], Y[:, None, :3, :3]
    RP = RH @ X[:, None, :3, :3]  # (F, cells, 3, 3)
    tP = (RH @ X[:, None, :3, 3:])[..., 0] + Hc[None, :, :3, 3]
    RQ = RY @ RE
    tQ = sc[:, None, None] * (RY @ Ec[None, :, :3, 3:])[..., 0] + Y[:, None, :3, 3]
    ang = np.arccos(np.clip(0.5 * ((RP * RQ).sum(axis=(2, 3)) - 1.0), -1.0, 1.0))
    size = _size(ang, np.linalg.norm(tP - tQ, axis=2), t_ref).reshape(len(fits), *i.shape)
    return np.median(size.min(axis=2), axis=1)


def _best_cell_scale(H, E, fit, t_ref) -> np.ndarray:
    return _scale(_best_cells(H, E, fit, t_ref), t_ref)


class _Problem:
    """The two files in one direction class, the noise scale, and the fits of alignments."""

    def __init__(self, H, E, t_ref):
        self.H, self.E, self.t_ref = H, E, t_ref
        self.nh, self.ne = len(H), len(E)

    def fit(self, pairs):
        h = np.array([p for p, _ in pairs])
        e = np.array([q for _, q in pairs])
        return _robust_fit(self.H[h], self.E[e], t_ref=self.t_ref)

    def refit(self, pairs, start, sig) -> Candidate:
        al = _alignment(pairs, self.nh, self.ne)
        Hp, Ep = self.H[al.hand_index], self.E[al.eye_index]
        cost, X, Y, s = _capped_fit(Hp, Ep, sig, [start, fit_absolute(Hp, Ep)], self.t_ref)
        chi = _chi2(pair_residuals(Hp, Ep, X, Y, s), sig)
        n_out = (self.nh - al.hand_index.size) + (self.ne - al.eye_index.size)
        return Candidate(al, cost + SKIP * n_out, float(np.minimum(chi, CAP).sum() + SKIP * n_out), X, Y, s)

    def analyse(self, X, Y, s, sig, counts):
        """The best alignment with ``counts`` rows left out (refitted until it no longer changes) and its rivals,
        each refitted: ``(candidates, cheapest first; the fit (X, Y, s, sig))``."""
        nh, ne = self.nh, self.ne
        pairs = None
        for _ in range(ITERATIONS):
            C = _band_costs(self.H, self.E, X, Y, s, sig)
            _, new, _ = _best(C, nh, ne, counts)
            if new == pairs:
                break
            pairs = new
            X, Y, s, sig = self.fit(pairs)
        C = _band_costs(self.H, self.E, X, Y, s, sig)
        cost, pairs, F = _best(C, nh, ne, counts)
        others = _rivals(C, nh, ne, F, pairs, cost, counts)
        cands = [self.refit(pairs, (X, Y, s), sig)] + [self.refit(p, (X, Y, s), sig) for _, p in others]
        return sorted(cands, key=lambda x: x.cost), (X, Y, s, sig)


def _counts(al: Alignment) -> tuple:
    uh, ue = al.unpaired()
    return int(uh.size), int(ue.size)


def align_rows(H: np.ndarray, E: np.ndarray, start: Alignment | None = None) -> RowAlignment | None:
    """Which rows of two unstamped files pair, chosen by the fit (see the module documentation).

    Parameters
    ----------
    H, E : ndarray, shape (nh, 4, 4) and (ne, 4, 4)
        The poses of the two files as stored (any direction, any units).
    start : Alignment, optional
        The pairs of the first fit (default: the best by rotation angles).

    Returns
    -------
    RowAlignment or None
        None when the lengths differ by more than :data:`MAX_UNPAIRED` or a file holds fewer than 8 poses.
    """
    t0 = time.process_time()
    nh, ne = len(H), len(E)
    d = ne - nh
    if abs(d) > MAX_UNPAIRED or min(nh, ne) < 8:
        return None
    if start is None:
        cands = rd.order_alignments(H[:, :3, :3], E[:, :3, :3])
        if not cands:
            return None
        start = max(cands, key=lambda x: x[1])[0]
    t_ref = float(np.median(np.linalg.norm(H[:, :3, 3], axis=1)))
    # the direction class and the first fit: of the congruence's pairs and of windows of consecutive rows at each
    # offset, the fit that fits most rows at their best offset (a wrong class misses by tens of degrees)
    runs = []
    for klass, Ek in enumerate((E, se3.invert_transform(E, check=False))):
        h, e = start.hand_index, start.eye_index
        fits = [_robust_fit(H[h], Ek[e], t_ref=t_ref)[:3]] + _window_fits(H, Ek)
        runs += [(float(g), klass, Ek, f) for g, f in zip(_agreement(H, Ek, fits, t_ref), fits)]
    _, klass, Ek, fit = min(runs, key=lambda r: r[0])
    fit0 = (*fit, _best_cell_scale(H, Ek, fit, t_ref))
    prob = _Problem(H, Ek, t_ref)
    # 1. the fewest rows left out that the lengths allow (|d| of the longer file)
    fewest = (max(0, -d), max(0, d))
    cands, (X, Y, s, sig) = prob.analyse(*fit0, fewest)
    # 2. more rows left out (in both files) only when the fit gains the margin by it with every pair capped: two
    # rows left out cost a pair at the cap, so setting a pair that does not fit aside gains nothing -- that is the
    # outlier gate's business, not a row without a partner
    more = None
    current = cands[0]
    for k in range(1, MAX_UNPAIRED - max(fewest) + 1):
        counts = (fewest[0] + k, fewest[1] + k)
        tries = []
        for fit in ((X, Y, s), fit0[:3]):  # the fit of the fewest rows left out, and the first one
            _, pairs, _ = _best(_band_costs(H, Ek, *fit, sig, capped=True), nh, ne, counts)
            tries.append(prob.refit(pairs, fit, sig))
        other = min(tries, key=lambda x: x.capped)
        # each alignment at the better of the fits found: a few gross pairs can hold one alignment's own refit
        # away from the fit the other reached, and the margin is then that of the fits, not of the alignments
        held = prob.refit(current.alignment.pairs(), (other.X, other.Y, other.scale), sig)
        if min(held.capped, current.capped) >= other.capped + MARGIN:
            current = other
    if current is not cands[0]:
        more = cands[0]
        cands, _ = prob.analyse(current.X, current.Y, current.scale, sig, _counts(current.alignment))
    best, rest = cands[0], cands[1:]
    same = [x for x in rest if _same_poses(H, Ek, best.alignment, x.alignment)]
    differ = [x for x in rest if not any(x is y for y in same)]
    rivals = [x for x in differ if x.cost - best.cost < MARGIN]
    runner = differ[0] if differ else None
    r = pair_residuals(H[best.alignment.hand_index], Ek[best.alignment.eye_index], best.X, best.Y, best.scale)
    rot_med = float(np.median(np.linalg.norm(r[:, :3], axis=1)))
    return RowAlignment(best, rivals, runner, klass, rot_med, time.process_time() - t0,
                        [x for x in same if x.cost - best.cost < MARGIN], more)


# --------------------------------------------------------------------------- #
# words
# --------------------------------------------------------------------------- #
def _differs(a: Candidate, b: Candidate) -> str:
    rot, tr = se3.pose_error(b.X, a.X)
    return f"X {rot:.3g} deg and {tr:.3g} (hand file units) from (1)"


def with_note(row: RowAlignment, hand, eye, *, force: bool = False) -> Alignment:
    """The chosen alignment with the note of how it was chosen (``hand``, ``eye``: the PoseStreams of the files)."""
    al = row.alignment
    if row.decided and al.is_identity:
        return al
    text = f"rows: {describe_unpaired(al, hand, eye)}"
    if row.decided:
        if row.runner_up is not None:
            text += (f"; chosen by the fit by {row.margin:.1f} log units (a likelihood ratio of "
                     f"{_ratio(row.margin)}; {MARGIN / 2:.1f} decides) over "
                     f"{describe_unpaired(row.runner_up.alignment, hand, eye)}")
        if row.same_numbers:
            text += "; the other places of the row(s) without a partner pair the same poses bit for bit"
    else:
        text += f"; the fit cannot tell it from {len(row.rivals)} other alignment(s) (kept with --force)"
    return replace(al, note=text)


def _ratio(margin: float) -> str:
    return f"e^{margin:.0f}" if margin > 30 else f"{np.exp(margin):.3g}"


def ambiguity(row: RowAlignment, hand, eye) -> str:
    """The message of a refusal: the alignments the fit cannot tell apart, the rows each leaves out, what each gives."""
    items = [f"(1) {describe_unpaired(row.best.alignment, hand, eye)}"]
    for k, x in enumerate(row.rivals[:3]):
        items.append(f"({k + 2}) {describe_unpaired(x.alignment, hand, eye)}: {0.5 * (x.cost - row.best.cost):.1f} "
                     f"log units below (1), {_differs(row.best, x)}")
    return (f"{hand.span()} and {eye.span()}: the rows do not pair one to one, and the fit cannot tell which rows "
            f"have no partner (alignments within {MARGIN / 2:.1f} log units that pair different poses): "
            + "; ".join(items) + "; remove the row(s) without a partner so that row k of each file is the same "
            "station (or --force to keep (1))")
