"""Keyframe selection, relative motions and motion-observability descriptors.

The benchmark protocol turns two paired pose streams into solver input in the
same way for every solver:

1. keyframes: walk along the stream and keep a frame when it is at least
   ``min_rot_deg`` *or* ``min_trans_m`` away from the previous keyframe (at most
   ``max_keyframes``; if fewer than three survive, every frame is used);
2. relative motions between consecutive keyframes,
   ``A = inv(A_i) A_j`` and ``B = inv(B_i) B_j``, for ``A X = X B``;
3. descriptors of those motions, which say how well ``X`` is observable:
   the eigenvalues of the rotation-axis scatter matrix (each axis weighted by
   its squared angle; 0 = all axes parallel, 1/3 = isotropic), the mean and
   maximum rotation angle, the mean translation and the condition number of
   the stacked ``[R_A - I]`` blocks.
"""

from __future__ import annotations

import math

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError

__all__ = [
    "KEYFRAME_MIN_ROT_DEG",
    "KEYFRAME_MIN_TRANS_M",
    "KEYFRAME_MAX",
    "select_keyframes",
    "relative_motions",
    "rotation_axis_scatter",
    "motion_descriptors",
]

KEYFRAME_MIN_ROT_DEG = 5.0
KEYFRAME_MIN_TRANS_M = 0.02
KEYFRAME_MAX = 200


def check_threshold(value, name: str, lo: float, hi: float) -> float:
    """``value`` as a float in ``[lo, hi]``; raises :class:`InputError` naming ``name`` otherwise (strings too)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"{name}: expected a number in [{lo:g}, {hi:g}], got {type(value).__name__} {value!r}")
    v = float(value)
    if not (lo <= v <= hi):
        raise InputError(f"{name}: expected a number in [{lo:g}, {hi:g}], got {value!r}")
    return v


def select_keyframes(
    T,
    *,
    min_rot_deg: float = KEYFRAME_MIN_ROT_DEG,
    min_trans_m: float = KEYFRAME_MIN_TRANS_M,
    max_keyframes: int = KEYFRAME_MAX,
    check: bool = True,
) -> np.ndarray:
    """Indices of keyframes of a pose stream ``T`` of shape ``(N, 4, 4)``.

    Greedy selection from frame 0: the next keyframe is the first later frame
    whose pose differs from the current keyframe by at least ``min_rot_deg``
    [deg] of rotation or ``min_trans_m`` [m] of translation.  When more than
    ``max_keyframes`` survive, ``max_keyframes`` of them are kept evenly spaced
    along the selection.  When fewer than three survive, every frame is
    returned (the fallback of the protocol).  ``check=False`` skips the
    validation of ``T`` (for poses the caller has built itself).

    Returns
    -------
    ndarray of int, shape (K,)
        Increasing frame indices.
    """
    T = se3.check_transforms(T, "T") if check else np.asarray(T, dtype=np.float64)
    if T.ndim != 3:
        raise InputError(f"T: expected a stream of shape (N, 4, 4), got shape {T.shape}")
    min_rot_deg = check_threshold(min_rot_deg, "min_rot_deg", 0.0, 180.0)
    min_trans_m = check_threshold(min_trans_m, "min_trans_m", 0.0, math.inf)
    if isinstance(max_keyframes, bool) or not isinstance(max_keyframes, (int, np.integer)) or max_keyframes < 2:
        raise InputError(f"max_keyframes: expected an integer >= 2, got {max_keyframes!r}")
    n = T.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    R9 = np.ascontiguousarray(T[:, :3, :3]).reshape(n, 9)  # row-major rotations: tr(Rk^T Rj) = R9[k] . R9[j]
    p = np.ascontiguousarray(T[:, :3, 3])
    cos_min = np.cos(np.radians(min_rot_deg))
    keep = _greedy_keyframes(R9, p, cos_min, min_trans_m)
    idx = np.asarray(keep, dtype=np.int64)
    if idx.size < 3:
        return np.arange(n, dtype=np.int64)
    if idx.size > max_keyframes:
        idx = idx[np.round(np.linspace(0, idx.size - 1, max_keyframes)).astype(np.int64)]
    return idx


#: Frames per block of :func:`_greedy_keyframes`, and how many later frames each one is tested against at once.
_BLOCK_ROWS = 128
_BLOCK_BAND = 16


def _far(R9k, pk, R9j, pj, cos_min: float, min_trans_m: float) -> np.ndarray:
    """Which frames ``j`` are at least the thresholds away from frames ``k`` (rows of ``R9``, ``p``, broadcast).

    The cosine of the relative angle comes from the trace, ``(tr(Rk^T Rj) - 1) / 2``.
    """
    tr = np.einsum("...j,...j->...", R9k, R9j)
    d = pj - pk
    return ((tr - 1.0) / 2.0 <= cos_min) | (np.sqrt(np.einsum("...j,...j->...", d, d)) >= min_trans_m)


def _greedy_keyframes(R9: np.ndarray, p: np.ndarray, cos_min: float, min_trans_m: float) -> list[int]:
    """The greedy chain of keyframes from frame 0 (see :func:`select_keyframes`), before any cap.

    Keyframes of a recording lie a few frames apart, so a Python step per keyframe would cost more than the
    arithmetic.  The stream is taken in blocks of ``_BLOCK_ROWS`` frames: every frame of a block is tested
    against its next ``_BLOCK_BAND`` frames at once, which gives each one its next keyframe when that lies
    within the band, and the chain is followed through those.  A keyframe whose next lies further is
    searched for in windows that double until one holds it.
    """
    n = R9.shape[0]
    keep = [0]
    k = 0
    offsets = np.arange(1, _BLOCK_BAND + 1)
    window = 16
    while k < n - 1:
        stop = min(k + _BLOCK_ROWS, n - 1)
        rows = np.arange(k, stop)
        cols = rows[:, None] + offsets
        inside = cols < n
        cols = np.minimum(cols, n - 1)
        far = _far(R9[rows, None], p[rows, None], R9[cols], p[cols], cos_min, min_trans_m) & inside
        first = far.argmax(axis=1)
        nxt = np.where(far[rows - k, first], rows + first + 1, -1).tolist()
        base = k
        while k < stop and nxt[k - base] >= 0:
            k = nxt[k - base]
            keep.append(k)
        if k >= stop:
            continue
        # the next keyframe lies beyond the band: windows from there on, doubling until one holds it
        start = k + _BLOCK_BAND + 1
        found = -1
        while start < n:
            end = min(n, start + window)
            hit = _far(R9[k], p[k], R9[start:end], p[start:end], cos_min, min_trans_m)
            i = int(hit.argmax())
            if hit[i]:
                found = start + i
                break
            start = end
            window *= 2
        if found < 0:
            break
        window = max(16, min(window, 2 * (found - k)))
        k = found
        keep.append(k)
    return keep


def relative_motions(T) -> np.ndarray:
    """Consecutive relative motions ``inv(T_i) T_{i+1}`` of a stream ``(N, 4, 4)``, shape ``(N-1, 4, 4)``."""
    T = se3.check_transforms(T, "T")
    return se3.invert_transform(T[:-1], check=False) @ T[1:]


def rotation_axis_scatter(R) -> np.ndarray:
    """Eigenvalues (descending, summing to 1) of the angle-weighted rotation-axis scatter matrix.

    ``S = sum_k theta_k^2 a_k a_k^T / sum_k theta_k^2`` for the rotations
    ``R`` of shape ``(K, 3, 3)`` (angle ``theta_k``, axis ``a_k``).  The second
    eigenvalue is 0 when every axis is parallel (the rotation of ``X`` is then
    unobservable) and 1/3 for isotropic axes.  Returns zeros when no motion
    rotates.
    """
    R = se3.check_rotations(R, "R")
    w = se3.so3_log(R.reshape(-1, 3, 3), check=False)  # theta * a
    S = w.T @ w
    tot = np.trace(S)
    if tot <= 0:
        return np.zeros(3)
    ev = np.linalg.eigvalsh(S / tot)[::-1]
    return np.clip(ev, 0.0, None)


def motion_descriptors(A) -> dict[str, float]:
    """Observability descriptors of relative robot motions ``A`` of shape ``(K, 4, 4)``.

    Returns a dict with the index columns ``n_motions``,
    ``axis_scatter_lambda2``, ``axis_scatter_lambda3``, ``mean_rot_angle_deg``,
    ``max_rot_angle_deg``, ``mean_trans_m`` and ``translation_cond`` (condition
    number of the stacked ``[R_A - I]``; infinite for pure translations; NaN
    when there is no motion).
    """
    A = se3.check_transforms(A, "A")
    A = A.reshape(-1, 4, 4)
    k = A.shape[0]
    out = {
        "n_motions": int(k),
        "axis_scatter_lambda2": float("nan"),
        "axis_scatter_lambda3": float("nan"),
        "mean_rot_angle_deg": float("nan"),
        "max_rot_angle_deg": float("nan"),
        "mean_trans_m": float("nan"),
        "translation_cond": float("nan"),
    }
    if k == 0:
        return out
    ev = rotation_axis_scatter(A[:, :3, :3])
    ang = np.degrees(se3.rotation_angle(A[:, :3, :3], check=False))
    M = (A[:, :3, :3] - np.eye(3)).reshape(-1, 3)
    sv = np.linalg.svd(M, compute_uv=False)
    cond = float(sv[0] / sv[-1]) if sv[-1] > 1e-12 * max(sv[0], 1e-300) else float("inf")
    out.update(
        axis_scatter_lambda2=float(ev[1]),
        axis_scatter_lambda3=float(ev[2]),
        mean_rot_angle_deg=float(ang.mean()),
        max_rot_angle_deg=float(ang.max()),
        mean_trans_m=float(np.linalg.norm(A[:, :3, 3], axis=1).mean()),
        translation_cond=cond,
    )
    return out
