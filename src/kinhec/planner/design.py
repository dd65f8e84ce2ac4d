"""Choosing the poses: greedy selection, then exchange, on the Fisher information of ``X`` and ``Y``.

Criterion
---------
The plan minimises ``f(F) = trace(cov_t)`` with ``cov_t`` the translation block of
``X`` in ``inv(F)`` (``Y`` an unknown nuisance), i.e. the predicted mean squared
translation error of ``X`` (A-optimality on the quantity a user checks), or with
``criterion="max_eig"`` its largest eigenvalue (E-optimality: the worst
direction).  ``F = F_0 + F_taken + sum_i F_i`` sums the information of the poses
(:func:`kinhec.planner.model.pose_information`); ``F_0`` is a weak prior (1 rad,
1 m standard deviation on every parameter) that keeps ``F`` invertible while
fewer than three poses leave directions undetermined, and is far below the
information of a single pose.

Under a guess tolerance each candidate has its information ``F_s`` in each of the ``S`` perturbed scenes
(:func:`kinhec.planner.expected.scene_information`, zero where it loses the target) and the criterion is the mean
over the scenes of ``f`` of each scene's sum, ``(1/S) sum_s f(F_0 + F_taken + sum_i F_s,i)``: the expected squared
error rather than that of the expected information, so that poses which lose the target in the same scenes are
seen to leave those scenes short (the stopping level of ``--stop-std-mm`` too is on that mean).

Search
------
1. **Greedy**: add, one at a time, the candidate that lowers ``f`` most (all
   candidates evaluated at once as a batch of 12 x 12 systems), until ``n``
   poses are chosen or, with a stopping level, the predicted error is below it.
2. **Exchange** (Fedorov): for each chosen pose in turn, replace it by the
   candidate that lowers ``f`` most, if any does; passes repeat until a whole
   pass improves ``f`` by less than a relative ``1e-6`` (at most
   :data:`MAX_EXCHANGE_PASSES`).
3. **Shrink** (with a stopping level only): while the level still holds,
   drop the pose whose loss raises ``f`` least and exchange again, so that the
   plan has the fewest poses the search finds for the level.

Greedy and exchange only ever lower ``f``.
"""

from __future__ import annotations

import numpy as np

from kinhec.planner.model import x_translation_variance

__all__ = ["PRIOR_STD", "MAX_EXCHANGE_PASSES", "prior_information", "select_poses"]

#: Standard deviation (rad and m) of the weak prior on every parameter of ``X`` and ``Y``.
PRIOR_STD = 1.0
#: Most exchange passes.
MAX_EXCHANGE_PASSES = 10
_REL_TOL = 1e-6


def prior_information() -> np.ndarray:
    """``F_0`` (12, 12): the weak prior of :data:`PRIOR_STD` on every parameter."""
    return np.eye(12) / PRIOR_STD**2


def _scores(F_base: np.ndarray, info: np.ndarray, criterion: str) -> np.ndarray:
    """``f(F_base + info_c)`` for every candidate ``c``, the mean over the scenes: ``F_base`` ``(S, 12, 12)``,
    ``info`` ``(S, M, 12, 12)``."""
    return x_translation_variance(F_base[:, None] + info, criterion).mean(axis=0)


def _f(F: np.ndarray, criterion: str) -> float:
    """The criterion of the information ``F`` ``(S, 12, 12)`` of the scenes: the mean of ``f`` over them."""
    return float(x_translation_variance(F, criterion).mean())


def select_poses(info: np.ndarray, n: int, F_start: np.ndarray, *, criterion: str = "trace",
                 stop_variance: float | None = None) -> tuple[np.ndarray, list[float]]:  # fmt: skip
    """Indices of the candidates to take.

    Parameters
    ----------
    info : ndarray, shape (M, 12, 12) or (S, M, 12, 12)
        Fisher information of every candidate, or of every candidate in each of ``S`` scenes (the perturbed
        scenes of a guess tolerance): then ``f`` is the mean over the scenes of ``f`` of each scene's information,
        the expected squared error rather than that of the expected information.
    n : int
        Most poses to choose (at most ``M``).
    F_start : ndarray, shape (12, 12)
        Information already there (prior plus taken poses).
    criterion : {"trace", "max_eig"}
    stop_variance : float, optional
        Stop adding poses once the mean squared translation error of ``X`` (``"trace"``, whatever the
        criterion) is at or below this value [m^2].

    Returns
    -------
    chosen : ndarray of int, shape (k,)
        Candidate indices, ``k <= n`` (fewer when the stopping level was met).
    greedy_f : list of float
        ``f`` after each greedy addition (before the exchange).
    """
    info = np.asarray(info, dtype=np.float64)
    if info.ndim == 3:
        info = info[None]
    m = info.shape[1]
    n = min(int(n), m)
    chosen: list[int] = []
    free = np.ones(m, dtype=bool)
    F = np.repeat(np.asarray(F_start, dtype=np.float64)[None], info.shape[0], axis=0)
    greedy_f: list[float] = []
    for _ in range(n):
        s = _scores(F, info, criterion)
        s[~free] = np.inf
        j = int(np.argmin(s))
        chosen.append(j)
        free[j] = False
        F += info[:, j]
        greedy_f.append(float(s[j]))
        if stop_variance is not None and _f(F, "trace") <= stop_variance:
            break
    F = _exchange(info, chosen, free, F, criterion)
    if stop_variance is not None and _f(F, "trace") <= stop_variance:
        # fewer poses may do after the exchange: drop the least useful one and exchange again while the level holds
        while len(chosen) > 1:
            loss = [_f(F - info[:, j], criterion) for j in chosen]
            k = int(np.argmin(loss))
            trial, trial_free = chosen[:k] + chosen[k + 1:], free.copy()
            trial_free[chosen[k]] = True
            F_trial = _exchange(info, trial, trial_free, F - info[:, chosen[k]], criterion)
            if _f(F_trial, "trace") > stop_variance:
                break
            chosen, free, F = trial, trial_free, F_trial
    return np.asarray(chosen, dtype=np.int64), greedy_f


def _exchange(info: np.ndarray, chosen: list, free: np.ndarray, F: np.ndarray, criterion: str) -> np.ndarray:
    """Fedorov exchange in place on ``chosen`` / ``free`` (``info`` ``(S, M, 12, 12)``, ``F`` ``(S, 12, 12)``);
    returns the information of the final set in each scene."""
    f_now = _f(F, criterion)
    for _ in range(MAX_EXCHANGE_PASSES):
        f_pass = f_now
        for k in range(len(chosen)):
            F_minus = F - info[:, chosen[k]]
            s = _scores(F_minus, info, criterion)
            s[~free] = np.inf
            j = int(np.argmin(s))
            if s[j] < f_now * (1.0 - 1e-12):
                free[chosen[k]] = True
                free[j] = False
                chosen[k] = j
                F = F_minus + info[:, j]
                f_now = float(s[j])
        if f_now >= f_pass * (1.0 - _REL_TOL):
            break
    return F
