"""Time ``kinhec.calibrate.bags.read_bag`` on recordings as a robot stack writes them.

Writes throw-away bags (ROS 1 and ROS 2 MCAP) of DURATION seconds:

* ``/tf``: a six-joint arm as ``robot_state_publisher`` sends it, one
  ``TFMessage`` of 6 transforms per stamp at 125 Hz (base_link -> link_1 ->
  ... -> link_6), and the target in the camera at 30 Hz (camera_optical ->
  target, a detector's message of its own);
* ``/tf_static``: world -> base_link, link_6 -> tool0, tool0 -> camera_link ->
  camera_optical;
* ``/joint_states`` at 125 Hz and ``/camera/image_raw`` (160 x 120 mono8) at
  30 Hz: topics no stream needs, which the reader must not decode;
* ``/camera/pose`` (``PoseStamped``, 30 Hz): the eye as a topic.

Then prints the median CPU time (``time.process_time``, 3 repeats) of reading
the hand ``base_link:tool0`` and the eye ``camera_optical:target`` (tf route)
and of the eye topic, split into decoding ``/tf`` and composing the tree, and
per message / per transform.

Run: ``python benchmarks/bench_bags.py [--duration 60] [--duration 600]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate.bags import _Bag, _open, read_bag

from support.bag_writer import PoseTopic, TfEdge, write_bag

ARM_HZ, CAM_HZ, EPOCH = 125.0, 30.0, 1_700_000_000


def recording(duration: float, rng: np.random.Generator):
    t_arm = np.arange(0, duration, 1 / ARM_HZ)
    t_cam = np.arange(0.013, duration, 1 / CAM_HZ)
    tf = [TfEdge("world", "base_link", se3.random_poses(rng, 1)[0]),
          TfEdge("link_6", "tool0", se3.random_poses(rng, 1, 0.1)[0]),
          TfEdge("tool0", "camera_link", se3.random_poses(rng, 1, 0.1)[0]),
          TfEdge("camera_link", "camera_optical", se3.random_poses(rng, 1, 0.01)[0])]  # fmt: skip
    frames = ["base_link"] + [f"link_{k}" for k in range(1, 7)]
    for k in range(6):
        w = rng.normal(0, 0.5, 3)
        R = se3.so3_exp(np.sin(2 * np.pi * 0.1 * (k + 1) * t_arm)[:, None] * w)
        tf.append(TfEdge(frames[k], frames[k + 1], se3.transform_from_rotation_translation(R, [0.0, 0.0, 0.1]), t_arm))
    C = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.3, (t_cam.size, 3))),
                                                rng.normal([0, 0, 0.6], 0.05, (t_cam.size, 3)))  # fmt: skip
    tf.append(TfEdge("camera_optical", "target", C, t_cam))
    poses = [PoseTopic("/camera/pose", "PoseStamped", "camera_optical", C, t_cam)]
    return tf, poses, t_arm, t_cam


def add_other_topics(path: Path, storage: str, t_arm, t_cam) -> None:
    """Joint states and small images: a real recording's bulk, needed by no stream."""
    from rosbags.typesys import Stores, get_typestore

    ros1 = storage == "ros1"
    store = get_typestore(Stores.ROS1_NOETIC if ros1 else Stores.ROS2_HUMBLE)
    T = store.types
    ser = store.serialize_ros1 if ros1 else store.serialize_cdr

    def header(ns):
        stamp = T["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9)
        return T["std_msgs/msg/Header"](**({"seq": 0} if ros1 else {}), stamp=stamp, frame_id="")

    out = []
    js = "sensor_msgs/msg/JointState"
    for t in t_arm:
        ns = int(round((EPOCH + t) * 1e9))
        msg = T[js](header=header(ns), name=[f"joint_{k}" for k in range(6)], position=np.zeros(6),
                    velocity=np.zeros(6), effort=np.zeros(6))
        out.append((ns, "/joint_states", js, ser(msg, js)))
    img = "sensor_msgs/msg/Image"
    pixels = np.zeros(160 * 120, dtype=np.uint8)
    for t in t_cam:
        ns = int(round((EPOCH + t) * 1e9))
        msg = T[img](header=header(ns), height=120, width=160, encoding="mono8", is_bigendian=0, step=160,
                     data=pixels)
        out.append((ns, "/camera/image_raw", img, ser(msg, img)))
    return out


def write_with_bulk(path: Path, storage: str, duration: float, rng) -> float:
    """Write the recording, then a copy with the bulk topics merged in (rosbags writers cannot append)."""
    from rosbags.highlevel import AnyReader
    from rosbags.rosbag1 import Writer as Writer1
    from rosbags.rosbag2 import StoragePlugin, Writer as Writer2

    tf, poses, t_arm, t_cam = recording(duration, rng)
    t0 = time.perf_counter()
    base = path.with_name(path.name + ".base" + (".bag" if storage == "ros1" else ""))
    write_bag(base, storage=storage, tf=tf, poses=poses, epoch_s=EPOCH)
    extra = add_other_topics(path, storage, t_arm, t_cam)
    ros1 = storage == "ros1"
    writer = Writer1(path) if ros1 else Writer2(path, version=9, storage_plugin=StoragePlugin.MCAP)
    with AnyReader([base]) as reader, writer:
        conns = {}
        for c in reader.connections:
            conns[c.topic] = writer.add_connection(c.topic, c.msgtype, typestore=reader.typestore)
        from rosbags.typesys import Stores, get_typestore

        store = get_typestore(Stores.ROS1_NOETIC if ros1 else Stores.ROS2_HUMBLE)
        for topic, typ in (("/joint_states", "sensor_msgs/msg/JointState"), ("/camera/image_raw", "sensor_msgs/msg/Image")):
            conns[topic] = writer.add_connection(topic, typ, typestore=store)
        merged = [(ts, c.topic, raw) for c, ts, raw in reader.messages()] + [(ns, tp, raw) for ns, tp, _, raw in extra]
        merged.sort(key=lambda r: r[0])
        for ns, topic, raw in merged:
            writer.write(conns[topic], ns, raw)
    return time.perf_counter() - t0


def cpu(fn, repeats=3):
    out = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return statistics.median(out)


def tf_decode(path):
    reader, _ = _open(path)
    with reader:
        _Bag(reader, path).tf_tree()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, action="append", help="Recording length [s] (repeatable; default 60).")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        for duration in args.duration or [60.0]:
            for storage in ("ros1", "mcap"):
                path = Path(tmp) / f"rec_{int(duration)}_{storage}{'.bag' if storage == 'ros1' else ''}"
                wall = write_with_bulk(path, storage, duration, rng)
                n_arm, n_cam = int(duration * ARM_HZ), int(duration * CAM_HZ)
                n_tf = n_arm + n_cam
                size = sum(f.stat().st_size for f in ([path] if path.is_file() else path.rglob("*")))
                t_tf = cpu(lambda: read_bag(path, "base_link:tool0", "camera_optical:target"))
                t_dec = cpu(lambda: tf_decode(path))
                t_topic = cpu(lambda: read_bag(path, "base_link:tool0", "/camera/pose"))
                print(f"{duration:6.0f} s {storage:5s} {size / 1e6:7.1f} MB (written in {wall:5.1f} s): "
                      f"{n_tf} /tf messages ({6 * n_arm + n_cam} transforms), {n_arm + n_cam} bulk messages")
                print(f"    tf route {t_tf:6.2f} s CPU = decode /tf {t_dec:6.2f} s "
                      f"({1e6 * t_dec / n_tf:5.1f} us/message, {1e6 * t_dec / (6 * n_arm + n_cam):4.1f} us/transform)"
                      f" + tree and composition {t_tf - t_dec:5.2f} s;  hand tf + eye topic {t_topic:6.2f} s")


if __name__ == "__main__":
    main()
