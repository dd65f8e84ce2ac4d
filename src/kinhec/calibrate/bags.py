"""ROS bags as pose streams: ROS 1 ``.bag``, ROS 2 ``.db3`` and ``.mcap`` (a storage file or a bag folder).

Read with the pure-Python ``rosbags`` library (``pip install "kinhec[ros]"``;
imported here only, when a bag is read).  A stream is named in one of two ways:

``PARENT:CHILD`` (a tf frame pair)
    The pose of ``CHILD`` in ``PARENT`` composed through the bag's tf tree
    (``/tf`` and ``/tf_static``) at every stamp (:mod:`kinhec.calibrate.tftree`:
    static transforms hold at every time, time-stamped ones are interpolated to
    the stamps of the sparsest edge of the path).  The hand pair is
    ``BASE:EE`` (robot base or mocap world : flange, tool or body), the eye pair
    ``CAMERA:TARGET`` (eye-to-hand: ``CAMERA:MARKER``).  The pair fixes the
    direction: the stream keeps the direction the tree stores (``T_target_cam``
    when the target frame lies above the camera, as in a camera-in-target
    recording; else ``T_cam_target``), so its residuals start in the domain
    where the poses were measured.  ``--hand-pose`` / ``--eye-pose`` override
    it as for files (a pair given the other way round, which the direction
    check of :mod:`kinhec.calibrate.calibration` reports).
``/topic``
    A topic of ``geometry_msgs/PoseStamped``, ``PoseWithCovarianceStamped``,
    ``TransformStamped`` or ``nav_msgs/Odometry``: ``T_frame_id_child`` per
    message.  The direction is the user's (``--hand-pose``, ``--eye-pose``), as
    with files.

Clocks: the ``header.stamp`` of every message (of every transform for tf); the
bag's record times are used only when a topic's stamps are all zero.  Stamps
are converted to seconds counted from a whole second shared by all streams of
the bag (noted), so that nanoseconds survive; the clock offset between the
streams is then estimated exactly as for files.  Only the connections a stream
needs are decoded (``/tf`` and ``/tf_static`` for frame pairs, the named topics
otherwise).

A wrong frame or topic name raises an :class:`~kinhec.util.errors.InputError`
listing the frames and the pose topics the bag has.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kinhec.calibrate.readers import PoseStream
from kinhec.calibrate.tf_messages import decode_batch
from kinhec.calibrate.tftree import TfTree, dedup, transforms_from_ros
from kinhec.util.errors import InputError
from kinhec.util.optional import require

__all__ = ["POSE_TYPES", "TF_TOPICS", "BAG_SUFFIXES", "read_bag", "parse_stream", "frame_names", "cli_streams"]

#: Message types a pose topic may carry (rosbags' names; ROS 1 types are read under the same names).
POSE_TYPES = (
    "geometry_msgs/msg/PoseStamped",
    "geometry_msgs/msg/PoseWithCovarianceStamped",
    "geometry_msgs/msg/TransformStamped",
    "nav_msgs/msg/Odometry",
)
#: Topics holding the tf tree (time-stamped, static).
TF_TOPICS = ("/tf", "/tf_static")
#: File endings of bags (a ROS 2 bag folder holds a ``metadata.yaml``).
BAG_SUFFIXES = (".bag", ".db3", ".mcap")
_TF_TYPES = ("tf2_msgs/msg/TFMessage", "tf/msg/tfMessage")
_NS = 1_000_000_000

_ROLES = {  # role -> (first frame, second frame) names of the pair, and the two directions
    "hand": ("BASE", "EE", "base_T_ee", "ee_T_base"),
    "eye": ("CAMERA", "TARGET", "cam_T_target", "target_T_cam"),
}


def _rosbags():
    highlevel = require("rosbags.highlevel", "reading ROS bags")
    typesys = require("rosbags.typesys", "reading ROS bags")
    return highlevel.AnyReader, highlevel.AnyReaderError, typesys.Stores, typesys.get_typestore


def parse_stream(spec: str, role: str) -> tuple[str, str, str | None]:
    """``("tf", PARENT, CHILD)`` for a frame pair ``PARENT:CHILD``, ``("topic", NAME, None)`` for a topic.

    Raises
    ------
    InputError
        A pair without two names.
    """
    s = str(spec).strip()
    if ":" in s:
        parts = [x.strip().lstrip("/") for x in s.split(":")]
        if len(parts) != 2 or not all(parts):
            a, b = _ROLES[role][:2]
            raise InputError(f"{role}: expected a tf frame pair {a}:{b} (e.g. base_link:tool0) or a topic, got {spec!r}")
        return "tf", parts[0], parts[1]
    if not s:
        raise InputError(f"{role}: expected a tf frame pair or a topic name, got an empty name")
    return "topic", s, None


class _Bag:
    """An open bag: its topics and the decoding of the connections a stream needs."""

    def __init__(self, reader, path: Path) -> None:
        self.reader = reader
        self.path = path
        self.topics: dict[str, tuple[str, int, list]] = {}
        for c in reader.connections:
            typ, n, conns = self.topics.get(c.topic, (c.msgtype, 0, []))
            self.topics[c.topic] = (typ, n + max(int(c.msgcount), 0), conns + [c])
        self.tree: TfTree | None = None

    def describe_topics(self) -> str:
        pose = [f"{t} ({typ.replace('/msg/', '/')}, {n} messages)" for t, (typ, n, _) in sorted(self.topics.items())
                if typ in POSE_TYPES]
        return f"pose topics {', '.join(pose)}" if pose else "no pose topics"

    def describe(self) -> str:
        """What the bag holds, for messages: its tf frames, pose topics and other topics."""
        parts = [self.tf_tree().describe() if self.has_tf() else "no /tf or /tf_static", self.describe_topics()]
        other = [t for t, (typ, _, _) in sorted(self.topics.items()) if typ not in POSE_TYPES and t not in TF_TOPICS]
        if other:
            parts.append(f"other topics {', '.join(other)}")
        return "; ".join(parts)

    def has_tf(self) -> bool:
        return any(t in self.topics and self.topics[t][0] in _TF_TYPES for t in TF_TOPICS)

    def tf_tree(self) -> TfTree:
        """The tree of every transform on ``/tf`` and ``/tf_static`` (decoded once)."""
        if self.tree is not None:
            return self.tree
        conns = [c for t in TF_TOPICS if t in self.topics for c in self.topics[t][2] if c.msgtype in _TF_TYPES]
        raws, static, types = [], [], []
        for conn, _, raw in self.reader.messages(connections=conns):
            raws.append(raw)
            static.append(conn.topic == "/tf_static")
            types.append(conn.msgtype)
        d = decode_batch(raws, ros1=not self.reader.is2)  # the usual kinds of message, all at once
        msg, k = [d["msg"]], [d["k"]]
        parent, child, stamp, p, q = list(d["parent"]), list(d["child"]), [d["t_ns"]], [d["p"]], [d["q_xyzw"]]
        for i in d["rest"]:  # any other, one by one
            trs = self.reader.deserialize(raws[i], types[i]).transforms
            msg.append(np.full(len(trs), i, dtype=np.int64))
            k.append(np.arange(len(trs)))
            parent += [tr.header.frame_id for tr in trs]
            child += [tr.child_frame_id for tr in trs]
            stamp.append(np.array([tr.header.stamp.sec * _NS + tr.header.stamp.nanosec for tr in trs], dtype=np.int64))
            x = [tr.transform for tr in trs]
            p.append(np.array([(a.translation.x, a.translation.y, a.translation.z) for a in x], dtype=float).reshape(-1, 3))
            q.append(np.array([(a.rotation.x, a.rotation.y, a.rotation.z, a.rotation.w) for a in x],
                              dtype=float).reshape(-1, 4))  # fmt: skip
        msg, k = np.concatenate(msg), np.concatenate(k)
        order = np.lexsort((k, msg)) if d["rest"] else np.arange(msg.size)
        self.tree = TfTree.from_transforms([parent[i] for i in order], [child[i] for i in order],
                                           np.concatenate(stamp)[order], np.concatenate(p)[order],
                                           np.concatenate(q)[order], np.array(static, dtype=bool)[msg[order]],
                                           source=str(self.path))  # fmt: skip
        return self.tree

    def topic(self, name: str, role: str) -> str:
        """The bag's spelling of topic ``name`` (a missing leading ``/`` is added); raise listing the topics."""
        for cand in (name, "/" + name.lstrip("/")):
            if cand in self.topics:
                typ = self.topics[cand][0]
                if typ in _TF_TYPES:
                    a, b = _ROLES[role][:2]
                    raise InputError(f"{self.path}: {cand} is the tf tree, not a pose topic; name a frame pair "
                                     f"{a}:{b} (--{role}-tf); the bag has {self.describe()}")
                if typ not in POSE_TYPES:
                    raise InputError(f"{self.path}: topic {cand} carries {typ}, expected one of "
                                     f"{', '.join(POSE_TYPES)}; the bag has {self.describe()}")
                return cand
        raise InputError(f"{self.path}: no topic {name!r} ({role}); the bag has {self.describe()}")

    def read_topic(self, topic: str):
        """Stamps [ns], poses, frame names and notes of a pose topic, sorted by stamp."""
        typ, _, conns = self.topics[topic]
        stamp, rec, frame, child, p, q = [], [], [], [], [], []
        deserialize = self.reader.deserialize
        for conn, t_rec, raw in self.reader.messages(connections=conns):
            m = deserialize(raw, conn.msgtype)
            if typ == "geometry_msgs/msg/TransformStamped":
                a, r = m.transform.translation, m.transform.rotation
            else:
                pose = m.pose if typ == "geometry_msgs/msg/PoseStamped" else m.pose.pose
                a, r = pose.position, pose.orientation
            stamp.append(m.header.stamp.sec * _NS + m.header.stamp.nanosec)
            rec.append(t_rec)
            frame.append(m.header.frame_id.lstrip("/"))
            child.append(getattr(m, "child_frame_id", "").lstrip("/") or None)
            p.append((a.x, a.y, a.z))
            q.append((r.x, r.y, r.z, r.w))
        where = f"{self.path} [{topic}]"
        if not stamp:
            raise InputError(f"{where}: expected pose messages, got none")
        notes = []
        t_ns = np.array(stamp, dtype=np.int64)
        if not t_ns.any():
            t_ns = np.array(rec, dtype=np.int64)
            notes.append(f"{where}: every header stamp is zero; the bag's record times are used instead")
        for what, names in (("frame_id", frame), ("child_frame_id", child)):
            seen = sorted({str(n) for n in names})
            if len(seen) > 1:
                raise InputError(f"{where}: expected one {what} in a pose topic, got {', '.join(seen)}")
        T, bad = transforms_from_ros(np.array(p, dtype=float), np.array(q, dtype=float))
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(f"{where}, message {i + 1}: expected finite numbers and a unit quaternion, got position "
                             f"{list(p[i])}, quaternion (x y z w) {list(q[i])}")
        n_back = int(np.count_nonzero(np.diff(t_ns) < 0))
        keep = dedup(t_ns)
        if n_back:
            notes.append(f"{where}: {n_back} message(s) out of stamp order; sorted by header stamp")
        n_dup = t_ns.size - keep.size
        if n_dup:
            notes.append(f"{where}: {n_dup} repeated header stamp(s) dropped (the first message of each kept)")
        return t_ns[keep], T[keep], keep + 1, (frame[0] or None, child[0]), notes


def _open(path: Path):
    """A rosbags reader of ``path`` (not yet open) and the error class it raises."""
    AnyReader, AnyReaderError, Stores, get_typestore = _rosbags()
    if not path.exists():
        raise InputError(f"{path}: expected a ROS bag (.bag, .db3, .mcap or a ROS 2 bag folder), got no such file")
    if path.is_dir() and not (path / "metadata.yaml").is_file():
        raise InputError(f"{path}: expected a ROS 2 bag folder holding metadata.yaml, got a folder without one")
    if path.is_file() and path.suffix.lower() not in BAG_SUFFIXES:
        raise InputError(f"{path}: expected a ROS bag ending in {', '.join(BAG_SUFFIXES)} (or a ROS 2 bag folder), "
                         f"got {path.suffix or 'no ending'}")
    # bags without embedded definitions (older ROS 2 .db3) are decoded with the stock ones; the types read here
    # are the same in every distribution
    store = get_typestore(Stores.ROS1_NOETIC if path.suffix.lower() == ".bag" else Stores.ROS2_HUMBLE)
    try:
        return AnyReader([path], default_typestore=store), AnyReaderError
    except AnyReaderError as exc:
        raise InputError(f"{path}: not a readable ROS bag: {exc}") from None


def _tf_stream(bag: _Bag, role: str, a: str, b: str, stop: set):
    """The pose stream of a frame pair, in the direction the tree stores (see the module documentation)."""
    tree = bag.tf_tree()
    first, second, fwd, inv = _ROLES[role]
    for f, what in ((a, first), (b, second)):
        if f not in tree.frames:
            raise InputError(f"{bag.path}: no tf frame {f!r} (the {what} frame of the {role} pair {a}:{b}); "
                             f"the bag has {bag.describe()}")
    stored_inverse = tree.is_ancestor(b, a)
    parent, child = (b, a) if stored_inverse else (a, b)
    try:
        look = tree.lookup(parent, child)
    except InputError as exc:  # no path, no motion, no overlap: say what else the bag offers
        raise InputError(f"{exc}; {bag.describe_topics()}") from None
    mounts = {}
    for f in (a, b) if role == "eye" else ():  # the camera's (either frame, should the pair come reversed)
        top, T_top_f = tree.static_mount(f, stop=stop)
        if top != f:
            mounts[f] = {"frame": top, "T_frame_sensor": T_top_f.tolist()}
    return look.t_ns, look.T, look.index, (parent, child), (inv if stored_inverse else fwd), look.notes, mounts


def read_bag(path, hand, eye) -> tuple[PoseStream | None, list[PoseStream]]:
    """Read the hand and eye streams a bag holds.

    Parameters
    ----------
    path : str or Path
        A ROS 1 ``.bag``, a ROS 2 ``.db3`` or ``.mcap`` file, or a ROS 2 bag folder.
    hand : str or None
        ``BASE:EE`` (tf frame pair) or a pose topic; None for a rig without a body stream.
    eye : str or sequence of str
        ``CAMERA:TARGET`` (tf frame pair) or a pose topic, one per camera.

    Returns
    -------
    hand : PoseStream or None
    eyes : list of PoseStream
        Poses in metres, stamps [s] counted from a whole second shared by all
        streams, the frame names (``frames``, ``T_parent_child`` as stored),
        the direction when a frame pair fixes it, and for an eye frame pair the
        camera's static mount (``mounts``).

    Raises
    ------
    InputError
        A missing or unreadable bag, an unknown frame or topic (the message
        lists what the bag has), a topic of another type, a tf path without
        motion, bad numbers.
    """
    path = Path(path)
    eyes = [eye] if isinstance(eye, str) else list(eye)
    if not eyes:
        raise InputError(f"{path}: expected at least one eye stream (a CAMERA:TARGET frame pair or a pose topic), "
                         "got none")
    specs = ([("hand", parse_stream(hand, "hand"))] if hand is not None else []) + [
        ("eye", parse_stream(e, "eye")) for e in eyes]
    reader, reader_error = _open(path)
    try:
        with reader:
            bag = _Bag(reader, path)
            topics = {}
            for role, (kind, a, _) in specs:  # every name checked before anything is decoded
                if kind == "topic":
                    topics[a] = bag.topic(a, role)
                elif not bag.has_tf():
                    raise InputError(f"{path}: no /tf or /tf_static topic to look up the {role} frames {a}; the bag "
                                     f"has {bag.describe()}")
            raw = []
            stop: set = set()  # the hand's frames: a camera's static mount ends below them
            for role, (kind, a, b) in specs:
                if kind == "tf":
                    if role == "hand":
                        tree = bag.tf_tree()
                        stop = {f for x in (a, b) if x in tree.frames for f in tree.ancestors(x)}
                    t_ns, T, index, frames, direction, notes, mounts = _tf_stream(bag, role, a, b, stop)
                    where, item, name = f"{path} [tf {frames[0]} -> {frames[1]}]", "sample", a if role == "eye" else b
                else:
                    topic = topics[a]
                    t_ns, T, index, frames, notes = bag.read_topic(topic)
                    direction, mounts, where, item, name = None, None, f"{path} [{topic}]", "message", topic
                    if role == "hand":
                        stop = {f for f in frames if f}
                if t_ns.size == 0:
                    raise InputError(f"{where}: expected poses, got none")
                raw.append((t_ns, T, index, frames, direction, notes, mounts, item, where, name))
    except reader_error as exc:
        raise InputError(f"{path}: not a readable ROS bag: {exc}") from None
    origin = min(int(r[0][0]) for r in raw) // _NS * _NS
    streams = [PoseStream(T, (t_ns - origin) / 1e9, np.asarray(index, dtype=np.int64), where, name, "bag",
                          direction=direction, units="m", notes=list(notes), frames=frames, item=item,
                          mounts=mounts or None)
               for t_ns, T, index, frames, direction, notes, mounts, item, where, name in raw]  # fmt: skip
    streams[0].notes.insert(0, f"{path}: time stamps counted from {origin // _NS} s (ROS time)")
    if hand is None:
        return None, streams
    return streams[0], streams[1:]


def frame_names(setup: str, hand: PoseStream, eye: PoseStream, hand_pose=None, eye_pose=None) -> dict | None:
    """The frames of ``X`` and ``Y`` named after the streams' frames (None when the streams name none).

    Parameters
    ----------
    setup : {"eye_in_hand", "eye_to_hand", "rig"}
    hand, eye : PoseStream
        With ``frames`` (``T_parent_child`` as stored) when read from a bag.
    hand_pose, eye_pose : str, optional
        The user's directions (default: the streams', else ``base_T_ee`` / ``cam_T_target``).

    Returns
    -------
    dict or None
        ``{"X": [parent, child], "Y": [parent, child], "camera": name,
        "mount": {"frame": root, "T_frame_sensor": 4x4 list} or None}``: the
        camera frame's static mount in the recording; a frame a stream does not
        name (a ``PoseStamped`` has no child frame) keeps kinhec's role name.
    """
    if hand.frames is None and eye.frames is None:
        return None
    h = hand.frames or (None, None)
    e = eye.frames or (None, None)
    base, ee = h if (hand_pose or hand.direction or "base_T_ee") == "base_T_ee" else h[::-1]
    cam, target = e if (eye_pose or eye.direction or "cam_T_target") == "cam_T_target" else e[::-1]
    base, ee, cam = base or "base", ee or "ee", cam or "cam"
    target = target or ("marker" if setup == "eye_to_hand" else "target")
    if setup == "eye_to_hand":
        X, Y = [ee, target], [base, cam]
    else:
        X, Y = [ee, cam], [base, target]
    return {"X": X, "Y": Y, "camera": cam, "mount": (eye.mounts or {}).get(cam)}


def cli_streams(bag, hand, eye, hand_tf, eye_tf, hand_topic, eye_topic) -> tuple[str | None, list[str]]:
    """The ``hand`` and ``eye`` stream names of ``kinhec calibrate --bag`` from its options.

    Parameters
    ----------
    bag : str or None
        ``--bag``.
    hand, eye : str or None, sequence of str
        ``--hand`` and ``--eye`` (files: not with a bag).
    hand_tf, hand_topic : str or None
        ``--hand-tf BASE:EE`` or ``--hand-topic TOPIC``.
    eye_tf, eye_topic : sequence of str
        ``--eye-tf CAMERA:TARGET`` and ``--eye-topic TOPIC`` (repeatable: a rig).

    Returns
    -------
    hand : str or None
    eyes : list of str

    Raises
    ------
    InputError
        Stream options without a bag, files with a bag, both a frame pair and
        a topic for the hand, a pair without a colon, a topic with one.
    """
    named = [o for o, v in (("--hand-tf", hand_tf), ("--eye-tf", eye_tf), ("--hand-topic", hand_topic),
                            ("--eye-topic", eye_topic)) if v]  # fmt: skip
    if bag is None:
        raise InputError(f"{', '.join(named)}: name streams of a ROS bag; expected --bag FILE with them")
    files = [o for o, v in (("--hand", hand), ("--eye", eye)) if v]
    if files:
        raise InputError(f"--bag: the streams come from the bag; expected --hand-tf/--hand-topic and "
                         f"--eye-tf/--eye-topic instead of {' and '.join(files)}")
    if hand_tf and hand_topic:
        raise InputError(f"--hand-tf and --hand-topic: expected one hand stream, got the frame pair {hand_tf} and "
                         f"the topic {hand_topic}")
    for opt, values in (("--hand-tf", [hand_tf] if hand_tf else []), ("--eye-tf", list(eye_tf or ()))):
        for v in values:
            if v.count(":") != 1:
                first, second = _ROLES["hand" if opt == "--hand-tf" else "eye"][:2]
                raise InputError(f"{opt}: expected a frame pair {first}:{second}, got {v!r}")
    for opt, values in (("--hand-topic", [hand_topic] if hand_topic else []), ("--eye-topic", list(eye_topic or ()))):
        for v in values:
            if ":" in v:
                raise InputError(f"{opt}: expected a topic name (no ':'), got {v!r}; a frame pair goes to "
                                 f"{opt.replace('topic', 'tf')}")
    eyes = list(eye_tf or ()) + list(eye_topic or ())
    if not eyes:
        raise InputError("--bag: expected the eye stream as --eye-tf CAMERA:TARGET or --eye-topic TOPIC, got neither")
    return hand_tf or hand_topic or None, eyes
