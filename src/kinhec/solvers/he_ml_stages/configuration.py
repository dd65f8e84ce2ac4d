"""Step 1 of ``he_ml``: the configuration (eye-in-hand or eye-to-hand) and the planar-ambiguity mirrors.

Eye-in-hand data have ``C_i = inv(B_i)``, eye-to-hand ``C_i = B_i``.  A first
reading puts the reference in front of the camera (:func:`from_poses`); from 8
pairs on, the reading whose camera frame shows the depth / lateral anisotropy
of the start's residuals best is kept (:func:`better_reading`).

The comparison needs residuals that carry information: when the start fits its
inliers to within rounding (a run of repeated rows, exact data), the two
likelihoods are logarithms of rounding errors, which differ from one CPU's
kernels to another's.  Below :data:`RESOLUTION` the first reading is kept.
"""

from __future__ import annotations

import math

import numpy as np

from kinhec.geometry import se3
from kinhec.models.noise import planar_flip
from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml_stages.model import mv, predict, residuals


#: Relative size of the residuals (rotation in rad; translation over the median camera distance) below which the
#: start is taken to fit its inliers to within rounding: far above the 1e-15 of double rounding, far below any
#: pose measurement (1e-6 and up).
RESOLUTION = 1e-10


def frustum_fraction(C: np.ndarray) -> float:
    """Share of camera poses ``C`` (n, 4, 4) seeing the reference's origin within atan(1.5) of the optical axis."""
    t = C[:, :3, 3]
    return float(np.mean((t[:, 2] > 0) & (np.hypot(t[:, 0], t[:, 1]) < 1.5 * t[:, 2])))


def from_poses(B: np.ndarray) -> tuple[str, bool]:
    """``(configuration, reference_in_view)`` from the camera-side poses ``B`` (n, 4, 4)."""
    f_eih = frustum_fraction(se3.invert_transform(B, check=False))
    f_eth = frustum_fraction(B)
    if f_eth > f_eih:
        return "eye_to_hand", f_eth >= 0.5
    return "eye_in_hand", f_eih >= 0.5


def readings(B: np.ndarray, configuration: str, robust: bool):
    """Measured camera poses (n, 4, 4) and, for a reference in view, their planar-ambiguity mirrors (else None)."""
    Cm = pm.camera_poses(B, configuration)
    in_view = frustum_fraction(Cm) >= 0.5 and bool(np.all(np.linalg.norm(Cm[:, :3, 3], axis=1) > 1e-9))
    return Cm, (planar_flip(Cm, check=False) if (robust and in_view) else None)


def loglik(A, C, X, Y, ls, inl, configuration) -> float | None:
    """Gaussian log-likelihood of the inlier residuals under a camera-frame diagonal model in ``configuration``.

    Rotation errors isotropic, translation errors with one variance per camera axis (closed-form
    fits): the reading in which the camera frame is the real one shows the depth / lateral
    anisotropy and scores higher.  Both readings are related by a map of unit determinant, so the
    two likelihoods compare directly.  None when the residuals are at rounding (:func:`resolved`).
    """
    Cp = predict(A, X, Y, configuration)
    r = residuals(C, Cp, ls)[inl]
    e = mv(Cp[inl, :3, :3], r[:, 3:])  # camera-frame translation error
    m = r.shape[0]
    if not resolved(r, C[inl]):
        return None
    var_w = max(float(np.mean(r[:, :3] ** 2)), 1e-300)
    var_e = np.maximum(np.mean(e**2, axis=0), 1e-300)
    return -0.5 * m * (3.0 * math.log(var_w) + float(np.sum(np.log(var_e))))


def resolved(r: np.ndarray, C: np.ndarray) -> bool:
    """True when the residuals ``r`` (n, 6) are above rounding (:data:`RESOLUTION`) for the camera poses ``C``."""
    if r.shape[0] == 0:
        return False
    scale = max(float(np.median(np.linalg.norm(C[:, :3, 3], axis=1))), 1e-300)
    rot = math.sqrt(float(np.mean(r[:, :3] ** 2)))
    trans = math.sqrt(float(np.mean(r[:, 3:] ** 2))) / scale
    return rot > RESOLUTION and trans > RESOLUTION


def better_reading(fit) -> str | None:
    """The other configuration when its camera-frame noise model explains the start's residuals better, else None.

    ``fit``: a :class:`~kinhec.solvers.he_ml_stages.state.FitState` at the start (the current reading with
    its mirrors repaired).
    """
    configuration = fit.configuration
    other = "eye_to_hand" if configuration == "eye_in_hand" else "eye_in_hand"
    ll = {}
    for conf in (configuration, other):
        Cu = pm.camera_poses(fit.B, conf)
        if conf == configuration and fit.Cf is not None:
            Cu = np.where(fit.repaired[:, None, None], fit.Cf, fit.Cm)
        ll[conf] = loglik(fit.A, Cu, fit.X, fit.Y, fit.ls, fit.inl, conf)
    if ll[configuration] is None or ll[other] is None:  # residuals at rounding: nothing to compare
        return None
    return other if ll[other] > ll[configuration] else None
