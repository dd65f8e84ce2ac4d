"""The tf tree of a recording: frames joined by static and time-stamped transforms, and the pose of one frame in
another over time.

ROS publishes ``T_parent_child`` (the child frame's pose in its parent, the
``TransformStamped`` of ``/tf`` and ``/tf_static``); every frame has at most one
parent, so the frames form trees.  The pose of frame ``b`` in frame ``a`` is the
product of the edges on the path ``a`` -> common ancestor ``c`` -> ``b``::

    T_a_b = inv(T_c_a) @ T_c_b,   T_c_x = E_1 @ E_2 @ ... (the edges from c down to x)

Time: the pose is sampled at the stamps of the *sparsest* time-stamped edge on
the path (within the span every time-stamped edge of the path covers); every
other time-stamped edge is interpolated there, SLERP on the rotation and linear
on the translation, as tf2's ``lookupTransform`` does per edge.  A sample
outside another edge's span, or inside one of its gaps (an interval longer than
:data:`kinhec.calibrate.pairing.GAP_FACTOR` median periods), is dropped: tf2
does not extrapolate, and an interpolation over a gap is a guess.  Static
edges hold at every time.  All samples are composed at once (one batched
product per edge of the path).

A time-stamped edge whose pose never changes (a static transform republished on
``/tf``, as ROS 1's ``tf static_transform_publisher`` does at its period) is
held at every time like a static one: its stamps carry no motion, and its
period would otherwise set the samples of every path through it.

Stamps are integer nanoseconds (``t_ns``) as ROS stores them; the interpolation
works in seconds relative to the first stamp of the window, so nanoseconds
survive the conversion to float.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate.pairing import GAP_FACTOR, Interpolator
from kinhec.util.errors import InputError

__all__ = ["Edge", "Lookup", "TfTree", "transforms_from_ros"]

#: Largest accepted deviation of a transform's quaternion norm from 1 (it is normalised).
QUATERNION_TOL = 1e-2
#: A time-stamped edge whose matrices never move by more than this is held as a static one.
CONSTANT_TOL = 1e-12


@dataclass
class Edge:
    """One parent -> child link of the tree.

    Attributes
    ----------
    parent, child : str
        Frame names (``T_parent_child``).
    t_ns : ndarray of int64, shape (N,), or None
        Strictly increasing stamps [ns]; None for a static edge.
    T : ndarray, shape (N, 4, 4)
        ``T_parent_child`` at ``t_ns`` [m] (static: shape (1, 4, 4)).
    n_messages : int
        Transforms received for this edge (repeated stamps included).
    """

    parent: str
    child: str
    t_ns: np.ndarray | None
    T: np.ndarray
    n_messages: int

    @property
    def static(self) -> bool:
        return self.t_ns is None

    @property
    def constant(self) -> bool:
        """Static, or time-stamped with a pose that never changes (held at every time, see :meth:`TfTree.lookup`)."""
        return self.t_ns is None or bool(np.abs(self.T - self.T[0]).max() <= CONSTANT_TOL)

    def __str__(self) -> str:
        kind = "static" if self.static else f"{self.t_ns.size} stamps"
        return f"{self.parent} -> {self.child} ({kind})"


@dataclass
class Lookup:
    """Poses of one frame in another over time (:meth:`TfTree.lookup`).

    Attributes
    ----------
    T : ndarray, shape (N, 4, 4)
        ``T_a_b`` at the samples [m].
    t_ns : ndarray of int64, shape (N,)
        Sample stamps [ns] (stamps of ``driver``).
    index : ndarray of int, shape (N,)
        1-based number of every sample among the stamps of ``driver``.
    driver : Edge
        The time-stamped edge whose stamps are the samples.
    edges : list of Edge
        The path, from ``a`` up to the common ancestor, then down to ``b``.
    notes : list of str
        What was dropped and why.
    """

    T: np.ndarray
    t_ns: np.ndarray
    index: np.ndarray
    driver: Edge
    edges: list
    notes: list = field(default_factory=list)


def transforms_from_ros(p: np.ndarray, q_xyzw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Poses from ROS translations and quaternions (scalar last), and the rows that are not valid.

    Parameters
    ----------
    p : ndarray, shape (N, 3)
        Translations [m].
    q_xyzw : ndarray, shape (N, 4)
        Quaternions ``x, y, z, w``; normalised when within :data:`QUATERNION_TOL` of unit norm.

    Returns
    -------
    T : ndarray, shape (N, 4, 4)
        Poses (identity on the bad rows).
    bad : ndarray of bool, shape (N,)
        Rows with non-finite numbers or a quaternion norm off by more than :data:`QUATERNION_TOL`.
    """
    norm = np.linalg.norm(q_xyzw, axis=1)
    bad = ~(np.isfinite(p).all(axis=1) & np.isfinite(q_xyzw).all(axis=1)) | ~(np.abs(norm - 1.0) <= QUATERNION_TOL)
    q_wxyz = np.column_stack([q_xyzw[:, 3], q_xyzw[:, :3]])
    q_wxyz[bad] = [1.0, 0.0, 0.0, 0.0]
    q_wxyz /= np.where(bad, 1.0, norm)[:, None]  # the text readers' steps: divided by the norm, then normalised
    p = np.where(bad[:, None], 0.0, p)
    T = se3.transform_from_pq(p, q_wxyz, normalize=True)
    return T, bad


def dedup(t_ns: np.ndarray) -> np.ndarray:
    """Indices sorting ``t_ns`` (stable) with repeated stamps reduced to their first occurrence."""
    order = np.argsort(t_ns, kind="stable")
    ts = t_ns[order]
    keep = np.ones(ts.size, dtype=bool)
    keep[1:] = ts[1:] != ts[:-1]
    return order[keep]


class TfTree:
    """Frames and the edges between them, as a recording holds them.

    Build it with :meth:`from_transforms`; ask it for a pose over time with
    :meth:`lookup`.  ``source`` names the recording in messages.
    """

    def __init__(self, edges: list, source: str = "tf") -> None:
        self.source = source
        self.edges = list(edges)
        self._parents: dict[str, list[Edge]] = {}
        for e in self.edges:
            self._parents.setdefault(e.child, []).append(e)
        self._frames = sorted({e.parent for e in self.edges} | {e.child for e in self.edges})

    # ------------------------------------------------------------------ #
    # construction
    # ------------------------------------------------------------------ #
    @classmethod
    def from_transforms(cls, parent, child, t_ns, p, q_xyzw, static, *, source: str = "tf") -> TfTree:
        """Tree of a flat list of transforms (every ``TransformStamped`` of ``/tf`` and ``/tf_static``).

        Parameters
        ----------
        parent, child : sequence of str, length N
            ``header.frame_id`` and ``child_frame_id`` of each transform (a
            leading ``/``, ROS 1 style, is dropped).
        t_ns : array_like of int, shape (N,)
            ``header.stamp`` [ns].
        p : array_like, shape (N, 3)
            Translations [m].
        q_xyzw : array_like, shape (N, 4)
            Rotations, quaternion scalar last (ROS order).
        static : array_like of bool, shape (N,)
            True for transforms of ``/tf_static``.
        source : str
            Name of the recording, for messages.

        Returns
        -------
        TfTree
            One edge per (parent, child): time-stamped edges sorted by stamp
            with repeated stamps reduced to their first transform; a static
            edge keeps its last transform (a later ``/tf_static`` replaces an
            earlier one, as in tf2).  An edge published on both topics is
            time-stamped.

        Raises
        ------
        InputError
            Non-finite numbers or a quaternion far from unit norm (naming the
            edge and the stamp).
        """
        t_ns = np.asarray(t_ns, dtype=np.int64).reshape(-1)
        p = np.asarray(p, dtype=np.float64).reshape(-1, 3)
        q = np.asarray(q_xyzw, dtype=np.float64).reshape(-1, 4)
        static = np.asarray(static, dtype=bool).reshape(-1)
        n = t_ns.size
        if not (len(parent) == len(child) == n == p.shape[0] == q.shape[0] == static.size):
            raise InputError(f"{source}: expected as many parents, children, stamps, translations, rotations and "
                             f"static flags, got {len(parent)}, {len(child)}, {n}, {p.shape[0]}, {q.shape[0]}, "
                             f"{static.size}")
        codes: dict[tuple[str, str], int] = {}
        edge_of = np.fromiter((codes.setdefault((a.lstrip("/"), b.lstrip("/")), len(codes))
                               for a, b in zip(parent, child)), dtype=np.int64, count=n)
        names = list(codes)
        T, bad = transforms_from_ros(p, q)
        if bad.any():
            i = int(np.argmax(bad))
            a, b = names[edge_of[i]]
            raise InputError(f"{source}: tf {a} -> {b} at stamp {int(t_ns[i])} ns: expected finite numbers and a "
                             f"unit quaternion, got translation {p[i].tolist()}, quaternion (x y z w) {q[i].tolist()}")
        edges = []
        order = np.argsort(edge_of, kind="stable")
        bounds = np.flatnonzero(np.diff(edge_of[order])) + 1
        for idx in np.split(order, bounds) if n else []:
            a, b = names[edge_of[idx[0]]]
            dyn = idx[~static[idx]]
            if dyn.size:
                keep = dyn[dedup(t_ns[dyn])]
                edges.append(Edge(a, b, t_ns[keep], T[keep], int(idx.size)))
            else:
                edges.append(Edge(a, b, None, T[idx[-1:]], int(idx.size)))
        return cls(edges, source)

    # ------------------------------------------------------------------ #
    # structure
    # ------------------------------------------------------------------ #
    @property
    def frames(self) -> list[str]:
        """Every frame name, sorted."""
        return list(self._frames)

    def roots(self) -> list[str]:
        """Frames without a parent, sorted."""
        return [f for f in self._frames if f not in self._parents]

    def describe(self) -> str:
        """``"frames a, b, c (trees rooted at a)"``: what the tree holds, for messages."""
        if not self._frames:
            return "no tf frames"
        roots = self.roots()
        return (f"tf frames {', '.join(self._frames)} ({len(self._frames)} frames; "
                f"tree{'s' if len(roots) != 1 else ''} rooted at {', '.join(roots) or '(a cycle)'})")

    def parent_edge(self, frame: str) -> Edge | None:
        """The edge to ``frame``'s parent (None for a root).

        Raises
        ------
        InputError
            ``frame`` has several parents in the recording.
        """
        es = self._parents.get(frame)
        if not es:
            return None
        if len(es) > 1:
            which = ", ".join(f"{e.parent} ({e.n_messages} transforms)" for e in es)
            raise InputError(f"{self.source}: tf frame {frame!r} has {len(es)} parents ({which}); expected one, as tf2 "
                             "does at any time")
        return es[0]

    def ancestors(self, frame: str) -> list[str]:
        """``[frame, parent, grandparent, ..., root]``."""
        out = [frame]
        seen = {frame}
        while (e := self.parent_edge(out[-1])) is not None:
            if e.parent in seen:
                raise InputError(f"{self.source}: the tf frames {' -> '.join(out + [e.parent])} form a cycle")
            out.append(e.parent)
            seen.add(e.parent)
        return out

    def check_frame(self, frame: str, what: str) -> None:
        """Raise an :class:`InputError` listing the frames when ``frame`` is not in the tree."""
        if frame not in self._parents and frame not in self._frames:
            raise InputError(f"{self.source}: no tf frame {frame!r} ({what}); the recording has {self.describe()}")

    def path(self, a: str, b: str) -> tuple[list, list]:
        """Edges from ``a`` up to the common ancestor and from there down to ``b``.

        Returns
        -------
        up : list of Edge
            Edges from the common ancestor ``c`` down to ``a`` (``T_c_a`` is their product in this order).
        down : list of Edge
            Edges from ``c`` down to ``b``.
        """
        up_a, up_b = self.ancestors(a), self.ancestors(b)
        on_b = set(up_b)
        c = next((f for f in up_a if f in on_b), None)
        if c is None:
            raise InputError(
                f"{self.source}: no tf path between {a!r} and {b!r}: {a!r} is in the tree rooted at {up_a[-1]!r}, "
                f"{b!r} in the one rooted at {up_b[-1]!r} (a missing /tf_static transform?); the recording has "
                f"{self.describe()}"
            )  # fmt: skip
        chain_a = [self._parents[f][0] for f in up_a[: up_a.index(c)]][::-1]
        chain_b = [self._parents[f][0] for f in up_b[: up_b.index(c)]][::-1]
        return chain_a, chain_b

    def is_ancestor(self, a: str, b: str) -> bool:
        """True when ``a`` lies above ``b`` (``b``'s chain of parents reaches ``a``)."""
        return a != b and a in self.ancestors(b)

    def static_mount(self, frame: str, stop=()) -> tuple[str, np.ndarray]:
        """The highest frame reached from ``frame`` through static edges only, and ``frame``'s pose in it.

        Used to publish a calibrated sensor pose at the root of the sensor's own
        static subtree (e.g. ``camera_link`` above ``camera_optical``), so that
        no frame gets a second parent.  The walk stops below a parent in ``stop``.

        Returns
        -------
        top : str
        T_top_frame : ndarray, shape (4, 4)
        """
        top, T = frame, np.eye(4)
        while (e := self.parent_edge(top)) is not None and e.static and e.parent not in stop and e.parent != frame:
            T = e.T[0] @ T
            top = e.parent
        return top, T

    # ------------------------------------------------------------------ #
    # poses over time
    # ------------------------------------------------------------------ #
    def lookup(self, a: str, b: str) -> Lookup:
        """``T_a_b`` over time: the pose of frame ``b`` in frame ``a`` at the stamps of the sparsest edge.

        Parameters
        ----------
        a, b : str
            Frame names (both in the tree, connected).

        Returns
        -------
        Lookup

        Raises
        ------
        InputError
            An unknown frame (the message lists the frames), frames in separate
            trees, a path of static edges only (a constant pose), or edges whose
            time spans do not overlap.
        """
        self.check_frame(a, "first frame of the pair")
        self.check_frame(b, "second frame of the pair")
        if a == b:
            raise InputError(f"{self.source}: expected two different tf frames, got {a!r} twice")
        up, down = self.path(a, b)
        edges = up + down
        dynamic = [e for e in edges if not e.constant]
        if not dynamic:
            raise InputError(f"{self.source}: the tf path {a} -> {b} holds static or constant transforms only "
                             f"({', '.join(map(str, edges))}): a constant pose, no motion to calibrate from")
        notes = [f"{self.source}: tf {e.parent} -> {e.child} is time-stamped but never changes ({e.t_ns.size} "
                 "stamps): held at every time, as a static transform" for e in edges if e.constant and not e.static]
        lo = max(int(e.t_ns[0]) for e in dynamic)
        hi = min(int(e.t_ns[-1]) for e in dynamic)
        if lo > hi:
            spans = ", ".join(f"{e.parent} -> {e.child} [{e.t_ns[0]}, {e.t_ns[-1]}] ns" for e in dynamic)
            raise InputError(f"{self.source}: the time-stamped tf edges between {a!r} and {b!r} never overlap in "
                             f"time ({spans})")
        counts = [int(np.count_nonzero((e.t_ns >= lo) & (e.t_ns <= hi))) for e in dynamic]
        k = int(np.argmin(counts))  # the sparsest edge drives; ties: the first on the path
        driver = dynamic[k]
        sel = np.flatnonzero((driver.t_ns >= lo) & (driver.t_ns <= hi))
        t_ns = driver.t_ns[sel]
        tq = (t_ns - lo) / 1e9
        ok = np.ones(t_ns.size, dtype=bool)
        poses = {}
        for e in dynamic:
            if e is driver:
                poses[id(e)] = e.T[sel]
                continue
            f = Interpolator((e.t_ns - lo) / 1e9, e.T)
            valid = f.valid(tq)
            if not valid.all():
                notes.append(f"{self.source}: {int((~valid).sum())} sample(s) of tf {a} -> {b} fall in gaps (longer "
                             f"than {GAP_FACTOR:g} periods) of tf {e.parent} -> {e.child}; left out")
            ok &= valid
            poses[id(e)] = f(tq)
        n_out = int(np.count_nonzero((driver.t_ns < lo) | (driver.t_ns > hi)))
        if n_out:
            notes.append(f"{self.source}: {n_out} stamp(s) of tf {driver.parent} -> {driver.child} lie outside the "
                         f"span of the other edges between {a} and {b}; left out")

        def product(chain):
            out = None
            for e in chain:
                E = poses[id(e)][ok] if id(e) in poses else e.T[0]
                out = E if out is None else out @ E
            return out

        T_c_a, T_c_b = product(up), product(down)
        n = int(ok.sum())
        if T_c_b is None:
            T = se3.invert_transform(np.broadcast_to(T_c_a, (n, 4, 4)), check=False)
        elif T_c_a is None:
            T = np.broadcast_to(T_c_b, (n, 4, 4)).copy()
        else:
            T = se3.invert_transform(np.broadcast_to(T_c_a, (n, 4, 4)), check=False) @ T_c_b
        return Lookup(T=np.ascontiguousarray(T), t_ns=t_ns[ok], index=sel[ok] + 1, driver=driver, edges=edges,
                      notes=notes)
