"""Reference solvers of hand-eye (``A X = X B``) and robot-world/hand-eye (``A X = Y B``) calibration.

One signature per problem (see ``docs/solvers.md`` for the derivation and the
conventions):

* ``f(A, B) -> X`` for ``A X = X B``; ``A``, ``B``: relative motions
  ``inv(A_i) A_j``, ``inv(B_i) B_j`` of shape ``(N, 4, 4)``;
* ``f(A_abs, B_abs) -> (X, Y)`` for ``A_i X = Y B_i``; absolute pose pairs.

Eye-in-hand: ``A_i = T_base_ee``, ``B_i = inv(T_cam_target)``, ``X = T_ee_cam``,
``Y = T_base_world``.  Eye-to-hand: ``A_i = T_base_ee``, ``B_i = T_cam_target``,
``X = T_ee_marker``, ``Y = T_base_cam``.

:data:`SOLVERS` maps the leaderboard names to a uniform
``run(A, B) -> SolverResult``; :func:`get_solver` raises on an unknown name
and lists the valid ones.  :func:`register` adds your own solver beside the
baselines (see ``examples/13_own_solver.py``).
"""

from __future__ import annotations

from kinhec.solvers._common import (
    AbsolutePosesWarning,
    DEGENERATE_LAMBDA2,
    NEAR_DEGENERATE_LAMBDA2,
    DegenerateMotionWarning,
    validated_stacks,
)
from kinhec.solvers.axxb_andreff import andreff
from kinhec.solvers.axxb_daniilidis import daniilidis
from kinhec.solvers.axxb_horaud_dornaika import horaud_dornaika
from kinhec.solvers.axyb_li_kronecker import li_kronecker
from kinhec.solvers.axxb_park_martin import park_martin
# the function, like every solver name here: importing the module kinhec.solvers.he_ml binds that attribute to the
# module, and this import (which runs first, with the package) binds it to the function; the module's names stay
# importable by its path (from kinhec.solvers.he_ml import HeMlResult)
from kinhec.solvers.he_ml import HeMlResult, he_ml
from kinhec.solvers.ransac import RansacResult, ransac_axxb
from kinhec.solvers.refine import refine_lm, refine_lm_axyb
from kinhec.solvers.registry import (
    BASELINES,
    ENTRY_POINT_GROUP,
    KINDS,
    SOLVERS,
    SolverResult,
    SolverSpec,
    get_solver,
    is_plugin,
    load_plugins,
    normalise_result,
    register,
    solver_names,
    unregister,
)
from kinhec.solvers.axyb_shah import shah
from kinhec.solvers.time_offset import TimeOffsetEstimate, estimate_time_offset
from kinhec.solvers.axxb_tsai_lenz import tsai_lenz

__all__ = [
    "validated_stacks",
    "tsai_lenz",
    "park_martin",
    "horaud_dornaika",
    "daniilidis",
    "andreff",
    "refine_lm",
    "ransac_axxb",
    "RansacResult",
    "shah",
    "li_kronecker",
    "he_ml",
    "HeMlResult",
    "refine_lm_axyb",
    "estimate_time_offset",
    "TimeOffsetEstimate",
    "SolverResult",
    "SolverSpec",
    "SOLVERS",
    "KINDS",
    "get_solver",
    "solver_names",
    "register",
    "unregister",
    "is_plugin",
    "load_plugins",
    "normalise_result",
    "BASELINES",
    "ENTRY_POINT_GROUP",
    "DegenerateMotionWarning",
    "AbsolutePosesWarning",
    "DEGENERATE_LAMBDA2",
    "NEAR_DEGENERATE_LAMBDA2",
]
