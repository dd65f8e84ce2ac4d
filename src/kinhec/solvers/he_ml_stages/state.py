"""The state of a ``he_ml`` fit as it passes from stage to stage."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kinhec.solvers.he_ml_stages.scale_drift import OffsetCovariance


@dataclass
class FitState:
    """What the stages of :func:`kinhec.solvers.he_ml.he_ml` read and update.

    Attributes
    ----------
    A : ndarray, shape (n, 4, 4)
        Flange poses ``T_base_ee`` [m].
    B : ndarray, shape (n, 4, 4)
        The caller's camera-side poses (``inv(T_cam_target)`` eye-in-hand, ``T_cam_target`` eye-to-hand).
    configuration : str
        ``"eye_in_hand"`` or ``"eye_to_hand"``.
    robust : bool
        The robust stages run (asked for and at least :data:`~.model.ROBUST_MIN_PAIRS` pairs).
    Cm : ndarray, shape (n, 4, 4)
        Measured camera poses ``C_i = T_cam_target``.
    Cf : ndarray, shape (n, 4, 4), or None
        Their planar-ambiguity mirrors (reference in view and robust), else None.
    X, Y : ndarray, shape (4, 4)
        Current hand-eye and robot-world transforms.
    ls : float
        Current log-scale of the camera translations (0 when metric).
    with_scale : bool
        The scale is estimated.
    inl, repaired : ndarray of bool, shape (n,)
        Inlier pairs; pairs read with their mirror.
    U : ndarray, shape (n, 6), or None
        Motion directions of the motion-direction component (None: not used).
    sizes : ndarray or None
        Half-widths [m] of the generic PnP targets (None: no PnP-shaped components).
    shapes : ndarray, shape (len(sizes), n, 6, 6), or None
        The PnP covariance shapes, taken at the first prediction.
    theta : ndarray or None
        Variance components (None until the first round sets them).
    nu : float
        Student-t degrees of freedom of the weights (inf: Gaussian).
    w : ndarray, shape (n,)
        Weights of the pairs.
    chi2 : ndarray, shape (n,)
        Mahalanobis chi-square of every pair at the last round.
    settled_at : tuple or None
        ``(X, Y, ls, Cp, J, G, Q, r, Sinv)`` of the round where the weights settled.
    q : ndarray, shape (n,), or None
        Log-scale offsets of a drifting scale (None: constant scale).
    drift_cov : OffsetCovariance or None
        Covariance of the drifting-scale fit (:class:`~.scale_drift.OffsetCovariance`).
    motion_cov : ndarray or None
        Covariance of ``(dx[, log s])`` when ``X`` came from the motions.
    restricted : bool
        ``theta`` is the restricted estimate (it counts the degrees of freedom the fitted parameters took;
        False: the start from the residual spreads, corrected by the loss of degrees of freedom at the end).
    info : dict
        The ``info`` of the result, filled by the stages.
    """

    A: np.ndarray
    B: np.ndarray
    configuration: str
    robust: bool
    Cm: np.ndarray
    Cf: np.ndarray | None
    X: np.ndarray
    Y: np.ndarray
    ls: float
    with_scale: bool
    inl: np.ndarray
    repaired: np.ndarray
    U: np.ndarray | None = None
    sizes: np.ndarray | None = None
    shapes: np.ndarray | None = None
    theta: np.ndarray | None = None
    nu: float = math.inf
    w: np.ndarray | None = None
    chi2: np.ndarray | None = None
    settled_at: tuple | None = None
    q: np.ndarray | None = None
    drift_cov: OffsetCovariance | None = None
    motion_cov: np.ndarray | None = None
    restricted: bool = False
    info: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of pairs."""
        return self.A.shape[0]

    def camera_poses_used(self) -> np.ndarray:
        """The measured camera poses (n, 4, 4), mirrors in place of the repaired ones."""
        if self.Cf is None:
            return self.Cm
        return np.where(self.repaired[:, None, None], self.Cf, self.Cm)
