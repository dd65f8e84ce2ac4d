"""Write pose streams into a ROS bag: ROS 1 ``.bag``, ROS 2 sqlite3 (``.db3``) or MCAP, with rosbags' writers.

A recording as a robot stack would hold it, for tests, examples and exports:
tf edges (``/tf`` time-stamped, one ``TFMessage`` per stamp holding every edge
stamped then, as ``robot_state_publisher`` does; ``/tf_static`` once, latched)
and pose topics (``geometry_msgs/PoseStamped``, ``PoseWithCovarianceStamped``,
``TransformStamped``, ``nav_msgs/Odometry``).  Stamps are given in seconds and
written as integer nanoseconds (``header.stamp``; the record time is the
stamp), rounded to the nearest nanosecond without passing through a float of
the whole epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError, UnknownNameError

__all__ = ["STORAGES", "TfEdge", "PoseTopic", "write_bag", "stamps_ns"]

#: Bag kinds :func:`write_bag` writes: ROS 1, ROS 2 with sqlite3 storage, ROS 2 with MCAP storage.
STORAGES = ("ros1", "sqlite3", "mcap")

_POSE_TYPES = {
    "PoseStamped": "geometry_msgs/msg/PoseStamped",
    "PoseWithCovarianceStamped": "geometry_msgs/msg/PoseWithCovarianceStamped",
    "TransformStamped": "geometry_msgs/msg/TransformStamped",
    "Odometry": "nav_msgs/msg/Odometry",
}
_TF = "tf2_msgs/msg/TFMessage"
_NS = 1_000_000_000


@dataclass
class TfEdge:
    """``T_parent_child`` over time (``t_s`` given) or static (``t_s`` None).

    Attributes
    ----------
    parent, child : str
    T : ndarray, shape (N, 4, 4) or (4, 4)
        Poses of ``child`` in ``parent`` [m].
    t_s : ndarray, shape (N,), or None
        Stamps [s] (ROS time); None for ``/tf_static``.
    """

    parent: str
    child: str
    T: np.ndarray
    t_s: np.ndarray | None = None


@dataclass
class PoseTopic:
    """A pose topic: ``T_frame_id_child`` per message.

    Attributes
    ----------
    topic : str
    msgtype : {"PoseStamped", "PoseWithCovarianceStamped", "TransformStamped", "Odometry"}
    frame_id : str
    T : ndarray, shape (N, 4, 4)
    t_s : ndarray, shape (N,)
        Header stamps [s].
    child_frame_id : str
        For ``TransformStamped`` and ``Odometry``.
    record_s : ndarray, shape (N,), optional
        Record times [s] (the bag's order); default the stamps.
    """

    topic: str
    msgtype: str
    frame_id: str
    T: np.ndarray
    t_s: np.ndarray
    child_frame_id: str = ""
    record_s: np.ndarray | None = None


def stamps_ns(t_s, epoch_s: int = 0) -> np.ndarray:
    """Integer nanoseconds of stamps ``t_s`` [s] plus a whole-second ``epoch_s``.

    The whole seconds and the fraction are converted apart, so that a float
    stamp near 1.7e9 s keeps its last digit (``t * 1e9`` would be off by up to
    128 ns).
    """
    t = np.asarray(t_s, dtype=np.float64)
    sec = np.floor(t)
    ns = sec.astype(np.int64) * _NS + np.round((t - sec) * 1e9).astype(np.int64)
    return ns + int(epoch_s) * _NS


def _store(ros1: bool):
    try:
        from rosbags.typesys import Stores, get_types_from_msg, get_typestore
    except ImportError:
        raise InputError('writing ROS bags needs the rosbags library: pip install "kinhec[ros]"') from None
    if not ros1:
        return get_typestore(Stores.ROS2_HUMBLE)
    store = get_typestore(Stores.ROS1_NOETIC)
    if _TF not in store.fielddefs:  # the stock ROS 1 store lacks tf2_msgs
        store.register(get_types_from_msg("geometry_msgs/TransformStamped[] transforms", _TF))
    return store


class _Messages:
    """Builds the message objects of one type store."""

    def __init__(self, store, ros1: bool) -> None:
        self.t = store.types
        self.ros1 = ros1

    def header(self, ns: int, frame: str):
        stamp = self.t["builtin_interfaces/msg/Time"](sec=int(ns // _NS), nanosec=int(ns % _NS))
        if self.ros1:
            return self.t["std_msgs/msg/Header"](seq=0, stamp=stamp, frame_id=frame)
        return self.t["std_msgs/msg/Header"](stamp=stamp, frame_id=frame)

    def pose(self, p, q):
        P = self.t["geometry_msgs/msg/Point"](x=float(p[0]), y=float(p[1]), z=float(p[2]))
        Q = self.t["geometry_msgs/msg/Quaternion"](x=float(q[1]), y=float(q[2]), z=float(q[3]), w=float(q[0]))
        return self.t["geometry_msgs/msg/Pose"](position=P, orientation=Q)

    def transform(self, ns, parent, child, p, q):
        V = self.t["geometry_msgs/msg/Vector3"](x=float(p[0]), y=float(p[1]), z=float(p[2]))
        Q = self.t["geometry_msgs/msg/Quaternion"](x=float(q[1]), y=float(q[2]), z=float(q[3]), w=float(q[0]))
        tr = self.t["geometry_msgs/msg/Transform"](translation=V, rotation=Q)
        return self.t["geometry_msgs/msg/TransformStamped"](header=self.header(ns, parent), child_frame_id=child,
                                                            transform=tr)

    def pose_message(self, typ: str, ns, frame, child, p, q):
        t = self.t
        if typ == "geometry_msgs/msg/TransformStamped":
            return self.transform(ns, frame, child, p, q)
        pose = self.pose(p, q)
        if typ == "geometry_msgs/msg/PoseStamped":
            return t[typ](header=self.header(ns, frame), pose=pose)
        cov = t["geometry_msgs/msg/PoseWithCovariance"](pose=pose, covariance=np.zeros(36))
        if typ == "geometry_msgs/msg/PoseWithCovarianceStamped":
            return t[typ](header=self.header(ns, frame), pose=cov)
        zero = t["geometry_msgs/msg/Vector3"](x=0.0, y=0.0, z=0.0)
        twist = t["geometry_msgs/msg/TwistWithCovariance"](twist=t["geometry_msgs/msg/Twist"](linear=zero, angular=zero),
                                                           covariance=np.zeros(36))
        return t[typ](header=self.header(ns, frame), child_frame_id=child, pose=cov, twist=twist)


def _pq(T: np.ndarray):
    p, q = se3.pq_from_transform(np.asarray(T, dtype=np.float64).reshape(-1, 4, 4), check=False)
    return p, q  # q: w, x, y, z


def write_bag(path, *, storage: str, tf=(), poses=(), epoch_s: int = 0) -> Path:
    """Write tf edges and pose topics into a new bag.

    Parameters
    ----------
    path : str or Path
        ``ros1``: the ``.bag`` file; ``sqlite3`` / ``mcap``: the ROS 2 bag folder
        (rosbags writes ``metadata.yaml`` and ``<folder name>.db3`` / ``.mcap``
        in it).  Must not exist.
    storage : {"ros1", "sqlite3", "mcap"}
    tf : sequence of TfEdge
        Time-stamped edges go to ``/tf`` (grouped by stamp), static ones to ``/tf_static``.
    poses : sequence of PoseTopic
    epoch_s : int
        Whole seconds added to every stamp (ROS time cannot be negative).

    Returns
    -------
    Path
        The bag written (the folder for ROS 2).
    """
    if storage not in STORAGES:
        raise UnknownNameError("bag storage", storage, STORAGES)
    path = Path(path)
    if path.exists():
        raise InputError(f"{path}: expected a new bag path, got an existing {'folder' if path.is_dir() else 'file'}")
    ros1 = storage == "ros1"
    if ros1 != (path.suffix == ".bag"):
        raise InputError(f"{path}: expected {'a .bag file' if ros1 else 'a ROS 2 bag folder (no .bag ending)'} for "
                         f"storage {storage}")
    store = _store(ros1)
    mk = _Messages(store, ros1)
    serialize = store.serialize_ros1 if ros1 else store.serialize_cdr
    out = []  # (record ns, topic, message type, message)
    dynamic = [e for e in tf if e.t_s is not None]
    static = [e for e in tf if e.t_s is None]
    first = []
    if dynamic:
        rows = []
        for e in dynamic:
            ns = stamps_ns(e.t_s, epoch_s)
            p, q = _pq(e.T)
            if ns.size != p.shape[0]:
                raise InputError(f"tf {e.parent} -> {e.child}: expected one pose per stamp, got {p.shape[0]} poses "
                                 f"and {ns.size} stamps")
            rows += [(int(n), e.parent, e.child, p[i], q[i]) for i, n in enumerate(ns.tolist())]
        rows.sort(key=lambda r: r[0])
        first.append(rows[0][0])
        k = 0
        while k < len(rows):
            j = k
            while j < len(rows) and rows[j][0] == rows[k][0]:
                j += 1
            msg = store.types[_TF](transforms=[mk.transform(*r) for r in rows[k:j]])
            out.append((rows[k][0], "/tf", _TF, msg))
            k = j
    for pt in poses:
        typ = _POSE_TYPES.get(pt.msgtype, pt.msgtype)
        if typ not in _POSE_TYPES.values():
            raise UnknownNameError("pose message type", pt.msgtype, _POSE_TYPES)
        ns = stamps_ns(pt.t_s, epoch_s)
        rec = ns if pt.record_s is None else stamps_ns(pt.record_s, epoch_s)
        p, q = _pq(pt.T)
        if rec.size:
            first.append(int(rec.min()))
        out += [(int(r), pt.topic, typ, mk.pose_message(typ, int(n), pt.frame_id, pt.child_frame_id, p[i], q[i]))
                for i, (n, r) in enumerate(zip(ns.tolist(), rec.tolist()))]
    if static:
        t0 = min(first) if first else int(epoch_s) * _NS
        trs = []
        for e in static:
            p, q = _pq(e.T)
            trs.append(mk.transform(t0, e.parent, e.child, p[0], q[0]))
        out.insert(0, (t0, "/tf_static", _TF, store.types[_TF](transforms=trs)))
    out.sort(key=lambda r: r[0])  # stable: /tf_static first at its stamp
    if ros1:
        from rosbags.rosbag1 import Writer

        writer = Writer(path)
    else:
        from rosbags.rosbag2 import StoragePlugin, Writer

        plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
        writer = Writer(path, version=Writer.VERSION_LATEST, storage_plugin=plugin)
    with writer:
        conns = {}
        for _, topic, typ, _ in out:
            if topic not in conns:
                extra = {"latching": 1} if ros1 and topic == "/tf_static" else {}
                conns[topic] = writer.add_connection(topic, typ, typestore=store, **extra)
        for ns, topic, typ, msg in out:
            writer.write(conns[topic], ns, serialize(msg, typ))
    return path
