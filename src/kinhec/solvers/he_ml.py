"""Maximum-likelihood robot-world/hand-eye calibration (``A_i X = Y B_i``) with the anisotropic noise model.

Method
------
The measurement model is the generator's (:mod:`kinhec.solvers.pair_model`):
each camera pose ``C_i = T_cam_target`` has a target-frame rotation error and a
camera-frame translation error (depth noisier than lateral), and each flange
pose a flange-frame twist error carried into the camera error by
``G_i``.  The per-pair covariance of the camera error ``rho_i`` is written as a
sum of five *variance components*

    Sigma_i = th_1 Q_rot + th_2 R_i^T diag(1, 1, 0) R_i + th_3 R_i^T e_z e_z^T R_i
              + th_4 G_i diag(I, 0) G_i^T + th_5 G_i diag(0, I) G_i^T

(camera rotation, camera lateral, camera depth, robot rotation, robot
translation variances).  With the reference in view two more follow, the
covariance shapes of PnP on a generic planar target (a 3 x 3 grid of half-width
5 % and 20 % of the median target distance, seen from the predicted pose ``C_i``):
pixel noise through the projection gives errors that depend on the pose (tilt
known from the foreshortening of oblique views, in-plane rotation and lateral
position growing as ``z``, depth as ``z^2``, rotation and translation
correlated), which constant components cannot describe; the same estimation
picks constant or PnP-shaped camera noise from the residuals.  From 8 pairs on
there is a last component, ``th_m (G_i u_i)(G_i u_i)^T``
with ``u_i`` the flange twist between the neighbours of pair ``i`` (the local
direction of motion, along which a time-stamp error moves the flange: the
pairing error of asynchronous streams with camera jitter).  When the noise levels are not given they are
estimated from the residuals by maximising the restricted Gaussian likelihood (average-information Newton steps)
(variance-component estimation with ``X``, ``Y`` and the scale integrated out, so that each component counts
the degrees of freedom the fit left it, under a weak prior at its block's residual level;
:mod:`~kinhec.solvers.he_ml_stages.variance_components`).

1. **Configuration** (:mod:`~kinhec.solvers.he_ml_stages.configuration`).  Eye-in-hand data have
   ``C_i = inv(B_i)``, eye-to-hand ``C_i = B_i`` (or pass it).  A first reading puts the reference in front of
   the camera; from 8 pairs on, the reading whose camera frame shows the
   depth / lateral anisotropy of the start's residuals best is kept.  Robot
   translation noise is isotropic in the camera frame, so only the camera-frame
   totals of the translation variances are identified (all the weights need).
2. **Robust initialisation** (from 8 pairs on; :mod:`~kinhec.solvers.he_ml_stages.hypotheses`).
   Hypotheses of ``(X, Y, s)`` from the Shah closed form on every pair and from 64 random minimal sets of
   three pairs (Kronecker rotation, then translations and ``1 / s`` by linear
   least squares, all hypotheses as one batch); each is scored by a low
   quantile of the distances of the other pairs (up to about 60 % outliers),
   every pair also read with its planar-ambiguity mirror
   (:func:`kinhec.models.noise.planar_flip`).  The all-pairs start is kept unless a
   minimal set halves its score.
3. **Maximum likelihood** (:mod:`~kinhec.solvers.he_ml_stages.reweighting`).  Iteratively reweighted:
   variance components on the current inliers, whitened residuals, ``scipy.optimize.least_squares`` over
   right perturbations of ``X`` and ``Y`` (and ``log s``) with the analytic
   Jacobian; then the Mahalanobis chi-square of every pair decides inliers
   (gate at the 99.9 % quantile of chi2(6)), and a pair whose mirrored pose
   passes the gate is repaired.  Heavy tails: the Student-t degrees of freedom
   (3, 5, 10 or Gaussian) with the highest likelihood set the weights
   ``(nu + 6) / (nu + d_i^2)``.
4. **Scale** (:mod:`~kinhec.solvers.he_ml_stages.reweighting`, a drifting one in
   :mod:`~kinhec.solvers.he_ml_stages.scale_drift`).  With ``scale="auto"`` the monocular scale of the
   camera translations is estimated when the closed form finds it more than 5 %
   away from 1, and kept only if it still is, by more than three standard
   deviations, after the maximum-likelihood fit.
   A scale that drifts (``scale_drift="auto"``, from 8 pairs on): when the
   log-scale offsets each pair alone asks for follow one another (lag-1
   autocorrelation above :data:`SCALE_DRIFT_LAG1`), one offset per pair is
   fitted with ``X``, ``Y`` and ``log s`` under a random-walk prior whose step
   is estimated by EM; the variance components are re-estimated with the
   offsets' posterior variance (the E-step), and the offsets are marginalised
   out of the covariance.
5. **Drift** (:mod:`~kinhec.solvers.he_ml_stages.camera_drift`).  Visual odometry integrates its
   frame-to-frame errors, so the camera error of a pose is a random walk in the reference's frame: the
   residuals of neighbouring pairs are nearly equal (lag-1 autocorrelation
   0.94-0.98 on the medium tier's ``vo_drift`` sequences, at most 0.45 on
   independent noise).  From 8 pairs on, with ``drift="auto"``, an
   autocorrelation above 0.3 at the pair model's solution brings a fit of ``X``
   (and ``s``) to the motions between consecutive pairs (all of them), whose
   errors are the independent increments, kept when the autocorrelation at its
   own solution is above :data:`DRIFT_LAG1`:
   ``A_k X = X B_k`` with right residuals ``log(inv(inv(X) A_k X) B_k)`` in the
   camera frame (camera translations scaled by ``s``), rotation and translation
   variances from the residuals and Student-t weights (``nu = 4``).  ``Y`` then
   follows from ``X`` as the mean of ``A_i X inv(B_i)``.
6. **Covariance** (:mod:`~kinhec.solvers.he_ml_stages.covariance`).  The inverse of the whitened normal
   matrix at the solution (with drift: the ``X`` and ``log s`` block from the motion fit, the ``Y``
   block from the pair model, no cross terms).
   A robust fit whose inliers are a minority that determines no ``X`` (a run of rows where nothing moved,
   fitted exactly while every informative pair is set aside) is refused: every pair is fitted by plain
   maximum likelihood instead, with a warning (:mod:`~kinhec.solvers.he_ml_stages.collapse`).
7. **Pixels** (``pixels=``, the target's pixels behind the poses with known
   intrinsics): ``X`` and ``Y`` from the pixels of the inliers, each view's
   robot error a nuisance under the flange-twist prior, the pixel and robot
   noise levels by maximum likelihood (:mod:`kinhec.solvers.he_ml_stages.pixels`); the covariance
   marginalises the robot errors.  The lens is the model of the intrinsics
   (:func:`kinhec.models.intrinsics.model_of`): a pinhole with OpenCV's five
   coefficients, a fisheye (equidistant, points behind the camera's plane
   included) or OpenCV's rational model.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from kinhec.solvers import _common as c
from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml_stages import camera_drift, collapse, covariance, hypotheses, inputs, reweighting
from kinhec.solvers.he_ml_stages import configuration as conf_stage
from kinhec.solvers.he_ml_stages import variance_components as vc
from kinhec.solvers.he_ml_stages.camera_drift import DRIFT_LAG1
from kinhec.solvers.he_ml_stages.hypotheses import N_HYPOTHESES, SCORE_QUANTILE
from kinhec.solvers.he_ml_stages.pixels import pixel_ml
from kinhec.solvers.he_ml_stages.reweighting import CHI2_GATE
from kinhec.solvers.he_ml_stages.scale_drift import SCALE_DRIFT_LAG1, fit_drifting_scale
from kinhec.solvers.he_ml_stages.variance_components import NOISE_KEYS

__all__ = ["CITATION", "NOISE_KEYS", "HeMlResult", "he_ml", "CHI2_GATE", "N_HYPOTHESES", "DRIFT_LAG1",
           "SCALE_DRIFT_LAG1", "HE_ML_SEED"]

#: Seed of the minimal-set and scoring draws when ``seed`` is not given: a constant, never a hash of the input,
#: so that an input changed in its last bits (another BLAS or CPU) keeps the same draws and moves X continuously.
HE_ML_SEED = 0

CITATION = (
    "Maximum likelihood with variance components: W. Förstner, 'Ein Verfahren zur Schätzung von Varianz- und "
    "Kovarianzkomponenten', Allgemeine Vermessungs-Nachrichten 86, 1979; Student-t weights: K. L. Lange, "
    "R. J. A. Little, J. M. G. Taylor, 'Robust statistical modeling using the t distribution', JASA 84(408), 1989; "
    "closed-form hypotheses: Shah, ASME J. Mechanisms and Robotics 5(3), 2013."
)


@dataclass(frozen=True)
class HeMlResult(pm.XYCovariance):
    """Estimate of :func:`he_ml`.

    Attributes
    ----------
    X, Y : ndarray, shape (4, 4)
        Hand-eye and robot-world transforms [m].
    cov : ndarray, shape (12, 12) or (13, 13)
        Covariance of the right perturbations ``(dx, dy[, log s])`` (rad, m).
    scale : float or None
        Camera-translation scale ``s`` (camera = ``s`` x metric) when estimated, else None.
    noise : dict
        Noise levels used (given or estimated), keys :data:`NOISE_KEYS`.
    configuration : str
        ``"eye_in_hand"`` or ``"eye_to_hand"`` (given or identified).
    inliers : ndarray of bool, shape (N,)
        Pairs kept by the chi-square gate.
    repaired : ndarray of bool, shape (N,)
        Pairs replaced by their planar-ambiguity mirror.
    dof : float
        Student-t degrees of freedom of the weights (inf: Gaussian).
    chi2 : ndarray, shape (N,)
        Mahalanobis chi-square of every pair at the solution.
    n_inliers : int
    info : dict
        With the reference in view: ``pnp_target_half_widths_m`` (the generic targets of the PnP-shaped
        camera components) and ``pnp_shape_variances`` (their variance components, (pixel std / focal
        length)^2 when the camera noise is PnP).  ``residual_lag1`` (the lag-1 autocorrelation of the
        residuals in time order, each component scaled by its RMS, from 8 pairs on); with a scale,
        ``scale_offset_lag1`` and, when a drifting scale was fitted, ``scale_drift_std`` (the step of the
        log-scale walk between pairs) and ``scale_offsets`` (the log-scale offset of every pair from the
        first), or ``scale_drift_diverged`` when the drifting fit ran off and was discarded (the scale
        kept constant); when ``X`` came from the motions, ``drift`` (the
        per-motion rotation [rad] and translation [m] standard deviations of the camera error), or
        ``camera_drift_diverged`` when that fit's scale ran off and the pair model's fit was kept.
        With pixels: ``pixel_std`` [px] (estimated), ``pixel_rms`` [px] (RMS residual),
        ``pixel_iterations`` and ``pixel_robot_twists`` (N, 6): the posterior mean of every view's
        flange twist error, the true flange pose being ``A_i exp(xi_i)`` (NaN for the views the gate
        rejected); ``noise`` then holds the robot levels of the pixel stage.
    """

    X: np.ndarray
    Y: np.ndarray
    cov: np.ndarray
    scale: float | None
    noise: dict
    configuration: str
    inliers: np.ndarray
    repaired: np.ndarray
    dof: float
    chi2: np.ndarray
    n_inliers: int = 0
    info: dict = field(default_factory=dict)


def he_ml(A_abs, B_abs, *, configuration: str | None = None, noise: dict | None = None, scale="auto",
          scale_drift="auto", drift="auto", robust: bool = True, n_hypotheses: int = N_HYPOTHESES, seed: int | None = None,
          max_rounds: int = 5, pixels=None) -> HeMlResult:  # fmt: skip
    """Maximum-likelihood ``X`` and ``Y`` of ``A_i X = Y B_i`` under the anisotropic noise model.

    Parameters
    ----------
    A_abs : array_like, shape (N, 4, 4)
        Flange poses ``T_base_ee`` [m], N >= 3.
    B_abs : array_like, shape (N, 4, 4)
        ``inv(T_cam_target)`` (eye-in-hand) or ``T_cam_target`` (eye-to-hand).
    configuration : {"eye_in_hand", "eye_to_hand"}, optional
        Identified from the poses when omitted (the one that puts the
        reference in front of the camera).
    noise : dict, optional
        Known standard deviations (:data:`NOISE_KEYS`: camera rotation [rad],
        camera lateral and depth translation [m], robot flange rotation [rad]
        and translation [m]); estimated from the residuals when omitted.
    scale : {"auto", True, False}
        Monocular scale of the camera translations: estimated and kept when
        significant (``"auto"``), always estimated, or fixed to 1.
    scale_drift : {"auto", True, False}
        A scale that drifts as a random walk (pairs in time order): fitted when
        the per-pair scale offsets show it (``"auto"``, from 8 pairs on and
        with a scale), always (with a scale, from 8 pairs on), or never.
    drift : {"auto", True, False}
        Camera error that is a random walk (visual odometry): ``X`` from the
        motions between consecutive pairs (given in time order) when the
        residuals show it (``"auto"``, from 8 pairs on), always, or never.
    robust : bool
        Minimal-set hypotheses, chi-square gate, planar-flip repair and
        Student-t weights (from 8 pairs on).  ``False``: all pairs, Gaussian
        weights.
    n_hypotheses : int
        Random minimal sets of the initialisation.
    seed : int, optional
        Seed of the minimal-set draws (default: :data:`HE_ML_SEED`, the same on every call).
    max_rounds : int
        Most reweighting rounds (they stop once inliers, weights and noise levels settle).
    pixels : PixelViews, optional
        The target's pixels behind the camera poses, one view per pair, with
        known intrinsics (:class:`kinhec.solvers.reprojection.PixelViews`): 9
        (pinhole), 8 (fisheye) or 12 (rational model) numbers.
        The fit on the poses then starts a last stage on the pixels of its
        inliers, with the robot's pose errors marginalised
        (:mod:`kinhec.solvers.he_ml_stages.pixels`): where PnP is nonlinear (small
        targets, large pixel noise) the poses lose accuracy that the pixels
        keep.  The views' configuration is the configuration; PnP poses are
        metric, so no scale is estimated.

    Returns
    -------
    HeMlResult
        ``X`` (``T_ee_cam`` / ``T_ee_marker``), ``Y`` (``T_base_world`` /
        ``T_base_cam``), their covariance, the scale, the noise levels, the
        inliers.

    Raises
    ------
    InputError
        Bad shapes or values, unknown configuration, bad noise levels.
    DegenerateMotionError
        The flange rotations all differ by rotations about one axis.
    """
    A, B = c.check_pairs(A_abs, B_abs)
    c.check_rotation_axes(c.relative_rotvecs_of_poses(A[:, :3, :3]), "he_ml", "the motions between the poses A_abs")
    known = inputs.check_noise(noise)
    inputs.check_options(scale=scale, drift=drift, scale_drift=scale_drift)
    if pixels is not None:
        configuration, scale = inputs.check_pixels(pixels, A.shape[0], configuration, scale)
        scale_drift = drift = False
    given = configuration
    if configuration is None:
        configuration, _ = conf_stage.from_poses(B)
    else:
        inputs.check_configuration(configuration)
    rng = np.random.default_rng(HE_ML_SEED if seed is None else seed)

    # 1-2. hypotheses scored with the reading of the frustum test (or the given configuration); the configuration
    # whose camera-frame noise model explains the start best
    fit = hypotheses.robust_start(A, B, configuration, rng, n_hypotheses, scale, robust, identify=given is None)
    # 3-4. maximum likelihood with the variance components, reweighted; a scale kept only when significant
    vc.prepare(fit, known)
    reweighting.run_rounds(fit, known, scale, max_rounds)
    if fit.with_scale and scale_drift is not False:
        fit_drifting_scale(fit, known, force=scale_drift is True)
    # 5. a camera error that is a random walk: X from the motions
    camera_drift.fit_on_motions(fit, drift)
    # 6. the covariance with the final weights; variance components corrected for the fitted parameters
    cov = covariance.final_covariance(fit, known)
    collapsed = collapse.minority_collapse(A, fit.inl) if robust else None
    if collapsed is not None:  # a minority of pairs that determine nothing: refused, every pair fitted instead
        levels = vc.noise_from_theta(fit.theta)
        collapsed["noise"] = levels
        why = (f"whose flange poses rotate by {collapsed['rot_range_deg']:.2g} deg between them: they determine no X"
               if collapsed["reason"] == "no_x" else
               f"fewer than the {100 * SCORE_QUANTILE:.0f} % that chose its start")  # fmt: skip
        warnings.warn(
            f"he_ml: the robust fit kept {collapsed['n_inliers']} of {collapsed['n']} pairs, {why} (its noise levels "
            f"on them, at most {max(levels.values()):.2g} rad or m); refused: every pair fitted by plain maximum "
            "likelihood", collapse.RobustCollapseWarning, stacklevel=2)
        # the configuration the caller gave, else identified afresh from every pair: the collapsed minority's
        # choice is not evidence (it flips with the last bits of the input)
        out = he_ml(A, B, configuration=given, noise=noise, scale=scale, scale_drift=scale_drift,
                    drift=drift, robust=False, seed=seed, max_rounds=max_rounds, pixels=pixels)
        out.info["robust_collapse"] = collapsed
        return out
    fit.info.update(vc.shape_info(fit.sizes, fit.shapes, fit.theta))
    noise_out = vc.noise_from_theta(fit.theta)
    X, Y = fit.X, fit.Y
    if pixels is not None:
        # 7. the pixels of the inliers, the robot's errors marginalised; start from the fit on the poses
        sel = np.flatnonzero(fit.inl)
        px = pixel_ml(A[sel], X, Y, fit.configuration, [pixels.points_3d[i] for i in sel],
                      [pixels.points_2d[i] for i in sel], pixels.intrinsics)  # fmt: skip
        X, Y, cov = px.X, px.Y, px.cov
        noise_out["robot_rot_std_rad"] = px.robot_rot_std_rad
        noise_out["robot_trans_std_m"] = px.robot_trans_std_m
        twists = np.full((fit.n, 6), np.nan)
        twists[sel] = px.robot_twists
        fit.info.update(pixel_std=px.pixel_std, pixel_rms=px.rms_px, pixel_iterations=px.n_iter,
                        pixel_robot_twists=twists)  # fmt: skip
    return HeMlResult(
        X=X, Y=Y, cov=cov, scale=math.exp(fit.ls) if fit.with_scale else None, noise=noise_out,
        configuration=fit.configuration, inliers=fit.inl, repaired=fit.repaired, dof=fit.nu, chi2=fit.chi2,
        n_inliers=int(fit.inl.sum()), info=fit.info,
    )  # fmt: skip
