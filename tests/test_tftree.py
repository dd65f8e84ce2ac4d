"""The tf tree of a recording (``kinhec.calibrate.tftree``): composition through static and time-stamped edges,
interpolation to the stamps of the sparsest edge, and the errors that name the frames."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.calibrate.tftree import TfTree
from kinhec.util.errors import InputError

NS = 1_000_000_000


def screw(t, R0, w, p0, v):
    """A constant-rate motion: ``R0 exp(t w)``, ``p0 + t v``; SLERP and linear interpolation are exact on it."""
    R = R0 @ se3.so3_exp(np.asarray(t)[:, None] * w)
    return se3.transform_from_rotation_translation(R, p0 + np.asarray(t)[:, None] * v)


def flat(edges):
    """The flat transform lists :meth:`TfTree.from_transforms` takes, from ``(parent, child, t_ns or None, T)``."""
    parent, child, t, p, q, static = [], [], [], [], [], []
    for a, b, t_ns, T in edges:
        T = np.asarray(T).reshape(-1, 4, 4)
        pp, qq = se3.pq_from_transform(T)
        n = T.shape[0]
        parent += [a] * n
        child += [b] * n
        t.append(np.zeros(n, dtype=np.int64) if t_ns is None else np.asarray(t_ns, dtype=np.int64))
        p.append(pp)
        q.append(np.column_stack([qq[:, 1:], qq[:, :1]]))  # x y z w
        static += [t_ns is None] * n
    return parent, child, np.concatenate(t), np.concatenate(p), np.concatenate(q), np.array(static)


@pytest.fixture(scope="module")
def chain():
    rng = np.random.default_rng(7)
    S = se3.random_poses(rng, 1)[0]  # world -> base, static
    W = se3.random_poses(rng, 1, 0.1)[0]  # link1 -> tool, static
    O = se3.random_poses(rng, 1, 0.05)[0]  # cam_link -> cam_opt, static
    arm = (se3.random_rotations(rng, 1)[0], np.array([0.4, -0.9, 0.3]), rng.normal(size=3), rng.normal(size=3) * 0.2)
    cam = (se3.random_rotations(rng, 1)[0], np.array([-0.2, 0.5, 0.8]), rng.normal(size=3), rng.normal(size=3) * 0.1)
    t_arm = 1000 * NS + np.arange(0, 201) * (NS // 100)  # 100 Hz over [0, 2] s
    t_cam = 1000 * NS - NS // 2 + np.arange(0, 91) * (NS // 30) + 1234  # 30 Hz over [-0.5, 2.5] s, odd phase
    rel = lambda t_ns: (t_ns - 1000 * NS) / 1e9  # noqa: E731
    edges = [("world", "base", None, S), ("base", "link1", t_arm, screw(rel(t_arm), *arm)),
             ("link1", "tool", None, W), ("base", "cam_link", t_cam, screw(rel(t_cam), *cam)),
             ("cam_link", "cam_opt", None, O)]  # fmt: skip
    return TfTree.from_transforms(*flat(edges), source="chain.bag"), dict(S=S, W=W, O=O, arm=arm, cam=cam, rel=rel,
                                                                          t_arm=t_arm, t_cam=t_cam)


def test_composition_at_the_stamps_of_the_sparsest_edge(chain):
    tree, c = chain
    look = tree.lookup("tool", "cam_opt")  # tool <- link1 <- base -> cam_link -> cam_opt
    inside = (c["t_cam"] >= c["t_arm"][0]) & (c["t_cam"] <= c["t_arm"][-1])
    np.testing.assert_array_equal(look.t_ns, c["t_cam"][inside])  # the 30 Hz edge drives, within the 100 Hz span
    np.testing.assert_array_equal(look.index, np.flatnonzero(inside) + 1)
    assert (look.driver.parent, look.driver.child) == ("base", "cam_link")
    t = c["rel"](look.t_ns)
    truth = se3.invert_transform(screw(t, *c["arm"]) @ c["W"]) @ screw(t, *c["cam"]) @ c["O"]
    assert np.abs(look.T - truth).max() < 1e-12  # interpolation is exact on constant-rate motion
    assert any("outside the span" in n for n in look.notes)
    # the reverse lookup is the inverse, sample by sample; the static chain above is the same at every time
    back = tree.lookup("cam_opt", "tool")
    assert np.abs(back.T @ look.T - np.eye(4)).max() < 1e-12
    up = tree.lookup("world", "tool")
    t_up = c["rel"](up.t_ns)
    assert np.abs(up.T - c["S"] @ screw(t_up, *c["arm"]) @ c["W"]).max() < 1e-12
    assert tree.is_ancestor("world", "tool") and not tree.is_ancestor("tool", "world")
    assert tree.roots() == ["world"]


def test_interpolation_is_slerp_of_each_edge_not_of_the_product():
    """A non-constant edge between samples: the composed pose is the product of the per-edge interpolants."""
    rng = np.random.default_rng(3)
    T1 = se3.random_poses(rng, 9)
    T2 = se3.random_poses(rng, 3)
    t1 = np.arange(0, 45, 5) * NS // 100
    t2 = np.array([5, 17, 33]) * NS // 100
    tree = TfTree.from_transforms(*flat([("a", "b", t1, T1), ("b", "c", t2, T2)]))
    look = tree.lookup("a", "c")
    np.testing.assert_array_equal(look.t_ns, t2)
    expected = se3.interpolate_poses(t1 / 1e9, T1, t2 / 1e9) @ T2
    assert np.abs(look.T - expected).max() < 1e-12


def test_a_constant_time_stamped_edge_is_held_like_a_static_one():
    """ROS 1's tf static_transform_publisher republishes on /tf at its period: that period must not set the samples."""
    rng = np.random.default_rng(9)
    t_arm = np.arange(0, 101) * NS // 100
    t_slow = np.arange(-2, 4) * NS // 2  # 2 Hz, spanning the arm's stamps
    S, W = se3.random_poses(rng, 2)
    arm = se3.random_poses(rng, t_arm.size)
    tree = TfTree.from_transforms(*flat([("world", "base", t_slow, np.repeat(S[None], t_slow.size, axis=0)),
                                         ("base", "tool", t_arm, arm)]))
    look = tree.lookup("world", "tool")
    np.testing.assert_array_equal(look.t_ns, t_arm)
    assert np.abs(look.T - S @ arm).max() < 1e-12
    assert any("never changes (6 stamps)" in n for n in look.notes)
    with pytest.raises(InputError, match="static or constant transforms only"):
        tree.lookup("world", "base")


def test_samples_in_a_gap_of_another_edge_are_dropped():
    rng = np.random.default_rng(4)
    t_dense = np.concatenate([np.arange(0, 50), np.arange(80, 120)]) * NS // 100  # a 0.3 s hole at 100 Hz
    t_sparse = np.arange(0, 12) * NS // 10
    tree = TfTree.from_transforms(*flat([("a", "b", t_dense, se3.random_poses(rng, t_dense.size)),
                                         ("b", "c", t_sparse, se3.random_poses(rng, t_sparse.size))]))
    look = tree.lookup("a", "c")
    dropped = set(t_sparse.tolist()) - set(look.t_ns.tolist())
    assert dropped == {5 * NS // 10, 6 * NS // 10, 7 * NS // 10}  # the samples inside (0.49, 0.80)
    assert any("gaps" in n for n in look.notes)


def test_repeated_stamps_keep_the_first_and_static_keeps_the_last():
    rng = np.random.default_rng(5)
    T = se3.random_poses(rng, 4)
    t = np.array([0, 1, 1, 2]) * NS
    S = se3.random_poses(rng, 2)
    tree = TfTree.from_transforms(*flat([("a", "b", t, T), ("/b", "/c", None, S)]))  # ROS 1 names: leading "/"
    (e_ab,) = [e for e in tree.edges if e.child == "b"]
    np.testing.assert_array_equal(e_ab.t_ns, [0, NS, 2 * NS])
    assert np.allclose(e_ab.T, T[[0, 1, 3]]) and e_ab.n_messages == 4
    (e_bc,) = [e for e in tree.edges if e.child == "c"]
    assert e_bc.static and np.allclose(e_bc.T[0], S[1])
    assert tree.frames == ["a", "b", "c"]


def test_static_mount_stops_below_the_hand(chain):
    tree, c = chain
    top, T = tree.static_mount("cam_opt")
    assert top == "cam_link" and np.allclose(T, c["O"])  # cam_link's own parent edge is time-stamped
    assert tree.static_mount("base") == ("world", pytest.approx(c["S"]))
    top, T = tree.static_mount("base", stop={"world"})
    assert top == "base" and np.allclose(T, np.eye(4))


@pytest.mark.parametrize("a, b, fragment", [
    ("tool", "nowhere", "no tf frame 'nowhere'.*frames base, cam_link, cam_opt, link1, tool, world"),
    ("tool", "tool", "two different tf frames"),
    ("world", "base", "static or constant transforms only"),
])  # fmt: skip
def test_lookup_errors_name_the_frames(chain, a, b, fragment):
    tree, _ = chain
    with pytest.raises(InputError, match=fragment):
        tree.lookup(a, b)


def test_structural_errors():
    rng = np.random.default_rng(6)
    T = se3.random_poses(rng, 2)
    t = np.array([0, NS])
    two = TfTree.from_transforms(*flat([("a", "c", t, T), ("b", "c", t, T)]), source="x.bag")
    with pytest.raises(InputError, match=r"x.bag: tf frame 'c' has 2 parents \(a \(2 transforms\), b"):
        two.lookup("a", "c")
    apart = TfTree.from_transforms(*flat([("a", "b", t, T), ("c", "d", t, T)]), source="x.bag")
    with pytest.raises(InputError, match="no tf path between 'b' and 'd'.*rooted at 'a'.*rooted at 'c'"):
        apart.lookup("b", "d")
    never = TfTree.from_transforms(*flat([("a", "b", t, T), ("b", "c", t + 5 * NS, T)]))
    with pytest.raises(InputError, match="never overlap in time"):
        never.lookup("a", "c")
    parent, child, t_ns, p, q, static = flat([("a", "b", t, T)])
    q[1] *= 1.5
    with pytest.raises(InputError, match=r"tf a -> b at stamp 1000000000 ns: expected finite numbers and a unit"):
        TfTree.from_transforms(parent, child, t_ns, p, q, static)
