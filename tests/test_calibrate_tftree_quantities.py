"""The tf tree (``kinhec.calibrate.tftree``): the inverse chain when the second frame lies above the first, and ROS
quaternions scalar last."""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate.tftree import TfTree, transforms_from_ros

NS = 1_000_000_000


def _flat(rows):
    """``(parent, child, t_ns or None, T)`` rows as the flat lists :meth:`TfTree.from_transforms` takes."""
    parent = [r[0] for r in rows]
    child = [r[1] for r in rows]
    t = np.array([0 if r[2] is None else r[2] for r in rows], dtype=np.int64)
    T = np.stack([r[3] for r in rows])
    p, q = se3.pq_from_transform(T)
    return parent, child, t, p, np.column_stack([q[:, 1:], q[:, :1]]), np.array([r[2] is None for r in rows])


def _poses(seed, n):
    rng = np.random.default_rng(seed)
    return se3.random_poses(rng, n)


def test_lookup_of_a_frame_above_is_the_inverse_of_the_chain():
    T = _poses(93, 4)
    t = np.arange(4) * NS
    rows = [("base", "ee", int(t[i]), T[i]) for i in range(4)]
    tree = TfTree.from_transforms(*_flat(rows))
    down = tree.lookup("base", "ee")  # T_base_ee
    up = tree.lookup("ee", "base")  # T_ee_base
    np.testing.assert_allclose(down.T, T, atol=1e-12)
    np.testing.assert_allclose(up.T, se3.invert_transform(T), atol=1e-12)


def test_ros_quaternions_are_scalar_last():
    q_xyzw = np.array([[0.0, 0.0, np.sin(0.25), np.cos(0.25)]])  # 0.5 rad about z
    T, bad = transforms_from_ros(np.array([[1.0, 2.0, 3.0]]), q_xyzw)
    assert not bad.any()
    np.testing.assert_allclose(T[0, :3, :3], se3.so3_exp(np.array([0.0, 0.0, 0.5])), atol=1e-15)
    np.testing.assert_array_equal(T[0, :3, 3], [1.0, 2.0, 3.0])
