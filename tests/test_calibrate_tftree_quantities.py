"""Which transform the tf tree (``kinhec.calibrate.tftree``) keeps: the first of a repeated stamp, the last of a
republished static edge, the inverse when the second frame lies above the first, quaternions scalar last."""

from __future__ import annotations

import numpy as np

from kinhec import se3
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


def test_a_repeated_stamp_keeps_its_first_transform():
    T = _poses(91, 5)
    rows = [("base", "ee", 1 * NS, T[0]), ("base", "ee", 2 * NS, T[1]), ("base", "ee", 2 * NS, T[2]),
            ("base", "ee", 3 * NS, T[3]), ("base", "ee", 1 * NS, T[4])]  # fmt: skip
    tree = TfTree.from_transforms(*_flat(rows))
    (e,) = tree.edges
    np.testing.assert_array_equal(e.t_ns, [1 * NS, 2 * NS, 3 * NS])
    np.testing.assert_allclose(e.T, T[[0, 1, 3]], atol=1e-12)  # the first of each stamp, in stamp order
    assert e.n_messages == 5


def test_a_republished_static_edge_keeps_its_last_transform():
    T = _poses(92, 3)
    rows = [("ee", "cam", None, T[0]), ("ee", "cam", None, T[1]), ("ee", "cam", None, T[2])]
    (e,) = TfTree.from_transforms(*_flat(rows)).edges
    assert e.static
    np.testing.assert_allclose(e.T[0], T[2], atol=1e-12)


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
