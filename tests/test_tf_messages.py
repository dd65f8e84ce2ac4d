"""Batch decoding of ``tf2_msgs/TFMessage`` (``kinhec.calibrate.tf_messages``) against rosbags' own decoder, on
ROS 1 and CDR messages with frame names of every length (all alignments), several kinds of message and
messages it must leave to the generic decoder."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rosbags", reason="rosbags is not installed (pip install 'kinhec[ros]')")

from kinhec.calibrate.tf_messages import decode_batch  # noqa: E402

from support.bag_writer import _store  # noqa: E402

TF = "tf2_msgs/msg/TFMessage"


def messages(ros1: bool, rng: np.random.Generator, n: int = 60):
    """Raw messages of four kinds (0 to 3 transforms, names of 1 to 11 characters), stamps and numbers random."""
    store = _store(ros1)
    T = store.types
    names = ["a" * k for k in range(1, 12)]
    kinds = [[], [(names[0], names[4])], [(names[2], names[1]), (names[6], names[10])],
             [(names[3], names[5]), (names[7], names[8]), (names[9], names[2])]]  # fmt: skip
    raws, truth = [], []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        trs = []
        for parent, child in kind:
            sec = int(rng.integers(0, 2**31 - 1)) if ros1 else int(rng.integers(-(2**31), 2**31 - 1))
            nsec = int(rng.integers(0, 10**9))
            v = rng.normal(size=7)
            stamp = T["builtin_interfaces/msg/Time"](sec=sec, nanosec=nsec)
            hdr = (T["std_msgs/msg/Header"](seq=int(rng.integers(0, 2**32)), stamp=stamp, frame_id=parent) if ros1
                   else T["std_msgs/msg/Header"](stamp=stamp, frame_id=parent))
            tr = T["geometry_msgs/msg/Transform"](
                translation=T["geometry_msgs/msg/Vector3"](x=v[0], y=v[1], z=v[2]),
                rotation=T["geometry_msgs/msg/Quaternion"](x=v[3], y=v[4], z=v[5], w=v[6]))
            trs.append(T["geometry_msgs/msg/TransformStamped"](header=hdr, child_frame_id=child, transform=tr))
            truth.append((i, parent, child, sec * 10**9 + nsec, v))
        msg = T[TF](transforms=trs)
        raws.append(store.serialize_ros1(msg, TF) if ros1 else store.serialize_cdr(msg, TF))
    return store, raws, truth


@pytest.mark.parametrize("ros1", [True, False])
def test_batch_decoding_matches_rosbags(ros1):
    store, raws, truth = messages(ros1, np.random.default_rng(1 if ros1 else 2))
    d = decode_batch(raws, ros1)
    assert d["rest"] == []
    assert d["msg"].tolist() == [t[0] for t in truth]
    assert d["parent"] == [t[1] for t in truth] and d["child"] == [t[2] for t in truth]
    assert d["t_ns"].tolist() == [t[3] for t in truth]
    assert np.array_equal(np.c_[d["p"], d["q_xyzw"]], np.array([t[4] for t in truth]))
    # and rosbags reads the same from the same bytes
    des = store.deserialize_ros1 if ros1 else store.deserialize_cdr
    first = des(raws[1], TF).transforms[0]
    assert (first.header.frame_id, first.child_frame_id) == (d["parent"][0], d["child"][0])


def test_unknown_layouts_are_left_to_the_generic_decoder():
    _, raws, truth = messages(False, np.random.default_rng(3), n=8)
    big_endian = b"\x00\x00" + raws[1][2:]  # CDR big endian: not read here
    truncated = raws[2][:-9]
    d = decode_batch([raws[0], big_endian, truncated, raws[3]], False)
    assert d["rest"] == [1, 2]
    assert sorted(set(d["msg"].tolist())) == [3]  # message 0 holds no transform
