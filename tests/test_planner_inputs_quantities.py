"""The planner's own-setup helpers (:mod:`kinhec.planner.inputs`) against exact identities."""

from __future__ import annotations

import numpy as np
from scipy.linalg import expm

from kinhec.geometry import se3
from kinhec.planner.inputs import adjoint


def _hat4(xi):
    H = np.zeros((4, 4))
    H[:3, :3] = se3.hat(xi[:3])
    H[:3, 3] = xi[3:]
    return H


def test_adjoint_moves_a_twist_through_the_transform():
    # T exp(xi) T^-1 = exp(Ad_T xi) for twists (omega, v), on a transform with a general rotation and offset
    rng = np.random.default_rng(11)
    T = np.eye(4)
    T[:3, :3] = expm(se3.hat(rng.normal(size=3)))
    T[:3, 3] = rng.normal(size=3)
    for xi in rng.normal(scale=0.3, size=(5, 6)):
        lhs = T @ expm(_hat4(xi)) @ np.linalg.inv(T)
        assert np.abs(lhs - expm(_hat4(adjoint(T) @ xi))).max() <= 1e-12
