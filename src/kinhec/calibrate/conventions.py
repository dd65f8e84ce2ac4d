"""Sanity checks of pose direction and units: compare the fits of the alternatives.

A wrong direction (``T_base_ee`` read where the file holds ``T_ee_base``, or
``T_cam_target`` for ``T_target_cam``) turns the relative motions into
motions expressed in the wrong frame, which no constant ``X`` reconciles.
:func:`check_directions` fits the rotation of ``X`` (Park-Martin) on motions
between a subsample of pairs three ways -- as read, hand inverted, eye inverted
-- and reports the alternative the data support when it fits far better.
(Inverting *both* streams swaps ``X`` and ``Y`` and fits equally well; it
cannot be told from the motion alone.)

Units: robot and motion-capture positions beyond :data:`MAX_PLAUSIBLE_M`
are taken as millimetres read as metres; a mix shows in the ratio of the eye
translations to the hand's, fitted jointly with the translation of ``X``
(:func:`translation_scale`): about 1000 or 1/1000.
"""

from __future__ import annotations

import warnings

import numpy as np

from kinhec import se3
from kinhec.calibrate.solve import INIT_PAIRS, motions_between
from kinhec.errors import KinhecError
from kinhec.solvers.axxb_park_martin import _park_martin

__all__ = ["check_directions", "translation_scale", "median_norm", "MAX_PLAUSIBLE_M"]

#: Median position magnitude [m] beyond which a stream is taken to be in millimetres.
MAX_PLAUSIBLE_M = 20.0


def _fit(A, B) -> tuple[float, float]:
    """Median rotation [deg] and translation [m] disagreement of ``A X = X B`` after a Park-Martin fit."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            X = _park_martin(A, B, check_axes=False)
    except (KinhecError, np.linalg.LinAlgError, ValueError):
        return float("inf"), float("inf")
    R, t = X[:3, :3], X[:3, 3]
    E = np.swapaxes(A[:, :3, :3] @ R, 1, 2) @ (R @ B[:, :3, :3])
    et = A[:, :3, :3] @ t + A[:, :3, 3] - B[:, :3, 3] @ R.T - t
    return (float(np.degrees(np.median(se3.rotation_angle(E, check=False)))),
            float(np.median(np.linalg.norm(et, axis=1))))


def check_directions(A_abs, B_abs) -> dict:
    """Rotation fit [deg] as read and with either stream inverted.

    Parameters
    ----------
    A_abs, B_abs : ndarray, shape (N, 4, 4)
        Paired hand and eye poses in solver form.

    Returns
    -------
    dict
        ``{"as_read": (deg, m), "hand_inverted": (deg, m), "eye_inverted": (deg, m)}``: median
        rotation and translation disagreement of each.
    """
    n = A_abs.shape[0]
    idx = np.unique(np.linspace(0, n - 1, min(n, INIT_PAIRS)).round().astype(int))
    Ai = se3.invert_transform(A_abs[idx], check=False)
    Bi = se3.invert_transform(B_abs[idx], check=False)
    out = {}
    sub = np.arange(len(idx))
    for key, A, B in (("as_read", A_abs[idx], B_abs[idx]), ("hand_inverted", Ai, B_abs[idx]),
                      ("eye_inverted", A_abs[idx], Bi)):
        Am, Bm = motions_between(A, B, sub)
        out[key] = _fit(Am, Bm)
    return out


def translation_scale(A_abs, B_abs) -> float:
    """Ratio ``s`` of eye to hand translations, fitted with ``t_X`` on motions: ``(R_A - I) t_X - s R_X t_B = -t_A``.

    Returns NaN when the fit is not determined.
    """
    n = A_abs.shape[0]
    idx = np.unique(np.linspace(0, n - 1, min(n, INIT_PAIRS)).round().astype(int))
    Am, Bm = motions_between(A_abs, B_abs, idx)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            R = _park_martin(Am, Bm, check_axes=False)[:3, :3]
    except (KinhecError, np.linalg.LinAlgError, ValueError):
        return float("nan")
    M = np.concatenate([Am[:, :3, :3] - np.eye(3), -(Bm[:, :3, 3] @ R.T)[:, :, None]], axis=2).reshape(-1, 4)
    b = -Am[:, :3, 3].reshape(-1)
    sol, *_ = np.linalg.lstsq(M, b, rcond=None)
    if np.linalg.matrix_rank(M) < 4:
        return float("nan")
    return float(1.0 / sol[3]) if sol[3] != 0 else float("nan")


def median_norm(T) -> float:
    """Median translation magnitude of poses (N, 4, 4) [their units]."""
    return float(np.median(np.linalg.norm(T[:, :3, 3], axis=1)))

