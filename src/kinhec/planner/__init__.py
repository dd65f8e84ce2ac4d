"""Which poses to record: a pose planner driven by kinhec's own error bound.

:func:`plan_poses` (command ``kinhec plan-poses``) returns joint configurations
of an arm that are reachable (inside the joint limits with a margin, away from
singularities), keep the whole target in view at a usable distance and angle,
and minimise the predicted translation error of ``X`` (the Cramér-Rao bound of
:mod:`kinhec.evaluate.bounds` under the generator's noise models), ordered into a short
joint-space path.

Modules, one concept each:

* :mod:`~kinhec.planner.model`: the noise the plan is made for and the Fisher
  information of one pose;
* :mod:`~kinhec.planner.guesses`: the guesses of ``X`` and ``Y``, how far
  they may be off (the guess tolerance), and guesses from a first calibration;
* :mod:`~kinhec.planner.candidates`: the scene, what a usable pose is, and the
  candidate poses (viewpoints around the target solved by IK, plus joint-space
  neighbours);
* :mod:`~kinhec.planner.expected`: the information a pose is expected to give when the guesses are off
  (averaged over the perturbed scenes of the guess tolerance, nothing where the target is lost);
* :mod:`~kinhec.planner.design`: the criterion and the greedy + exchange search;
* :mod:`~kinhec.planner.path`: the visiting order (nearest neighbour + 2-opt);
* :mod:`~kinhec.planner.plan`: :func:`plan_poses`, the plan and its files;
* :mod:`~kinhec.planner.figure`: the figure (matplotlib, imported when drawing).

See ``docs/planner.md``.
"""

from __future__ import annotations

from kinhec.planner.candidates import SETUPS, PlanLimits, Scene
from kinhec.planner.guesses import DEFAULT_GUESS_TOLERANCE, guesses_from_calibration, tolerance_from_std
from kinhec.planner.model import CAMERA_MODELS, PlannerNoise, noise_model
from kinhec.planner.plan import CRITERIA, PosePlan, check_plan, csv_header, plan_poses, read_poses_csv

__all__ = ["plan_poses", "PosePlan", "PlannerNoise", "noise_model", "PlanLimits", "Scene", "SETUPS", "CRITERIA",
           "CAMERA_MODELS", "check_plan", "csv_header", "read_poses_csv", "DEFAULT_GUESS_TOLERANCE",
           "guesses_from_calibration", "tolerance_from_std"]  # fmt: skip
