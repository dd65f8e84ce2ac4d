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

The planner sums ``E[F]`` over the poses and applies its criterion
(:mod:`kinhec.planner.design`) to the sum.
"""

from __future__ import annotations

import numpy as np

from kinhec.planner.candidates import PlanLimits, Scene, in_view, perturbed_guesses
from kinhec.planner.model import PlannerNoise, pose_information
from kinhec.solvers import pair_model as pm

__all__ = ["expected_information"]


def expected_information(scene: Scene, T_base_ee: np.ndarray, noise: PlannerNoise, limits: PlanLimits) -> np.ndarray:
    """Expected Fisher information ``(N, 12, 12)`` of flange poses ``T_base_ee`` ``(N, 4, 4)`` (module docstring).

    Without a guess tolerance, :func:`~kinhec.planner.model.pose_information` at the guesses (every pose counted,
    as the candidates already passed the view test there).
    """
    T_base_ee = np.asarray(T_base_ee, dtype=np.float64)
    conf, cam, tgt = scene.configuration, scene.camera, scene.target
    if not limits.has_tolerance:
        return pose_information(scene.observed(T_base_ee), scene.X, conf, noise, cam, tgt)
    draws = perturbed_guesses(scene, limits)
    F = np.zeros((T_base_ee.shape[0], 12, 12))
    for Xs, Ys in draws:  # one batch per scene, all poses at once
        Cs = pm.predicted_camera_poses(T_base_ee, Xs, Ys, conf)
        seen = in_view(scene, Cs, limits)[0]
        if seen.any():
            F[seen] += pose_information(Cs[seen], Xs, conf, noise, cam, tgt)
    return F / len(draws)
