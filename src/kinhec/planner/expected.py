"""The information a pose is expected to give when the guesses of ``X`` and ``Y`` are off.

A plan is made from guesses.  When they may be off by the guess tolerance
(:class:`~kinhec.planner.candidates.PlanLimits`), the scene the robot will
meet is one of many: the planner's ``S`` perturbed scenes
(:func:`~kinhec.planner.candidates.perturbed_guesses`, ``X`` and ``Y`` each
moved and turned by the tolerance, fixed draws) stand for them.  In scene
``s`` a pose at the flange pose ``T`` sees the target at
``C_s = predicted_camera_poses(T, X_s, Y_s)`` and gives the information
``F_s = pose_information(C_s, X_s)`` (:mod:`kinhec.planner.model`) if the
target is in view there (the planner's view test,
:func:`~kinhec.planner.candidates.in_view`), nothing if the target is lost.
The expected information of the pose is the average over the scenes::

    E[F] = (1 / S) sum_s v_s F_s,      v_s = 1 if the pose sees the target in scene s, else 0

so a pose that loses the target in ``k`` of ``S`` scenes counts with the weight
``(S - k) / S`` of its information where it sees it, and a pose whose
information depends on where exactly ``X`` and ``Y`` are (near views, steep
angles) counts with its average.  Each ``F_s`` is about the right perturbations
of that scene's own ``X_s`` and ``Y_s``: the error of ``X`` the plan minimises
is the error with respect to whatever the true ``X`` is.  Without a tolerance
the one scene is the guesses' and ``E[F]`` is the information at the guesses.

The planner chooses the poses by the mean over the scenes of its criterion
(:mod:`kinhec.planner.design`) applied to each scene's sum ``sum_i v_s F_s``,
the expected squared error of ``X``, not by the criterion of the summed
``E[F]``: poses that lose the target in the same scenes leave those scenes
with little information, which the average of the information hides.  The errors it reports are the
median over the scenes of the bound in each (:func:`scene_sigma_curve`).
"""

from __future__ import annotations

import numpy as np

from kinhec.planner.candidates import PlanLimits, Scene, in_view, perturbed_guesses
from kinhec.evaluate.bounds import inverse_information_batch
from kinhec.planner.model import PlannerNoise, pose_information
from kinhec.solvers import pair_model as pm

__all__ = ["expected_information", "scene_information", "scene_sigma_curve"]


def scene_information(scene: Scene, T_base_ee: np.ndarray, noise: PlannerNoise, limits: PlanLimits) -> np.ndarray:
    """Information ``(S, N, 12, 12)`` of flange poses ``T_base_ee`` ``(N, 4, 4)`` in each perturbed scene ``s``:
    ``F_s`` where the pose sees the target there, zero where it loses it (module docstring).

    Without a guess tolerance ``S = 1``: :func:`~kinhec.planner.model.pose_information` at the guesses (every pose
    counted, as the candidates already passed the view test there).
    """
    T_base_ee = np.asarray(T_base_ee, dtype=np.float64)
    conf, cam, tgt = scene.configuration, scene.camera, scene.target
    if not limits.has_tolerance:
        return pose_information(scene.observed(T_base_ee), scene.X, conf, noise, cam, tgt)[None]
    draws = perturbed_guesses(scene, limits)
    F = np.zeros((len(draws), T_base_ee.shape[0], 12, 12))
    for s, (Xs, Ys) in enumerate(draws):  # one batch per scene, all poses at once
        Cs = pm.predicted_camera_poses(T_base_ee, Xs, Ys, conf)
        seen = in_view(scene, Cs, limits)[0]
        if seen.any():
            F[s, seen] = pose_information(Cs[seen], Xs, conf, noise, cam, tgt)
    return F


def expected_information(scene: Scene, T_base_ee: np.ndarray, noise: PlannerNoise, limits: PlanLimits) -> np.ndarray:
    """Expected Fisher information ``(N, 12, 12)`` of flange poses ``T_base_ee`` ``(N, 4, 4)``: the mean over the
    scenes of :func:`scene_information` (module docstring)."""
    return scene_information(scene, T_base_ee, noise, limits).mean(axis=0)


def scene_sigma_curve(info_s: np.ndarray, F_before: np.ndarray | None = None) -> dict:
    """Predicted errors of ``X`` after each pose of a sequence, the median over the scenes of the bound in each.

    Parameters
    ----------
    info_s : ndarray, shape (S, K, 12, 12)
        :func:`scene_information` of the poses, in the order they are taken.
    F_before : ndarray, shape (12, 12), optional
        Information of poses taken before.

    Returns
    -------
    dict
        ``trans_rms_mm`` and ``rot_rms_deg`` (K,): for each prefix of the sequence, the median over the ``S`` scenes
        of the bound of :func:`kinhec.planner.model.sigma_curve` (the same rule, all prefixes and scenes at once) of
        the poses that see the target in that scene (``inf`` in a scene where they leave ``X`` undetermined).  The
        bound of the summed expected information is not used for this: averaged over scenes whose ``X`` differ,
        the information of a single pose already looks like it determines ``X``, which no single scene's does.
    """
    F = np.cumsum(info_s, axis=1)
    if F_before is not None:
        F = F + F_before
    trans, rot = _sigma_batch(F)
    return {"trans_rms_mm": np.median(trans, axis=0), "rot_rms_deg": np.median(rot, axis=0)}


def _sigma_batch(F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """RMS translation [mm] and rotation [deg] errors of ``X`` for information matrices ``F`` ``(..., 12, 12)``
    (:func:`kinhec.evaluate.bounds.inverse_information_batch`; ``inf`` where a block meets its null space)."""
    cov, unidentified = inverse_information_batch(F)
    out = []
    for k, b in enumerate((slice(0, 3), slice(3, 6))):
        tr = np.clip(np.einsum("...ii->...", cov[..., b, b]), 0.0, None)
        out.append(np.where(unidentified[..., k], np.inf, np.sqrt(tr)))
    return 1000.0 * out[1], np.degrees(out[0])
