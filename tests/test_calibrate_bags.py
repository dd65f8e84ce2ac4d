"""``kinhec calibrate --bag``: ROS 1 bags, ROS 2 sqlite3 and MCAP written with rosbags from generated sequences give
the result of the sequence's own files; tf frame pairs through a chain with static transforms, pose topics of every
type; the ETH-ASL recording as tf gives the result of its CSVs; the ROS 2 launch file; the errors that list what
a bag holds."""

from __future__ import annotations

import ast
import dataclasses
import json
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("rosbags", reason="rosbags is not installed (pip install 'kinhec[ros]')")

from kinhec.geometry import se3  # noqa: E402
from kinhec.calibrate import calibrate  # noqa: E402
from kinhec.calibrate.bags import read_bag  # noqa: E402
from kinhec.calibrate.output import ros2_launch, ros_transforms  # noqa: E402
from kinhec.calibrate.readers import read_stream  # noqa: E402
from kinhec.cli import main  # noqa: E402

from helpers.checks import within_3_sigma  # noqa: E402
from helpers.paths import ETH  # noqa: E402
from helpers.recordings import exported, streams  # noqa: E402

from support.bag_writer import STORAGES, PoseTopic, TfEdge, stamps_ns, write_bag  # noqa: E402

EPOCH = 1_700_000_000  # ROS time of the recordings [s]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """An eye-in-hand kinhec sequence (clock offset, jitter, dropped frames) as TUM files, and their result."""
    root = tmp_path_factory.mktemp("bags")
    seq, hand, eye = exported(root, 0, sync="async", time_offset_s=0.05, time_jitter_std_s=0.001,
                              camera_drop_fraction=0.1, duration_s=6.0)  # fmt: skip
    h, e = read_stream(hand, "tum"), read_stream(eye, "tum")  # T_base_ee, T_target_cam
    ref = calibrate(hand, eye, setup="eye_in_hand", fmt="tum", eye_pose="target_T_cam")
    rng = np.random.default_rng(11)
    mounts = {"S": se3.random_poses(rng, 1)[0], "W": se3.random_poses(rng, 1, 0.1)[0],
              "O": se3.transform_from_rotation_translation(se3.so3_exp([1.2, -1.2, 1.2]), [0.01, 0.02, 0.0])}
    return root, seq, h, e, ref, mounts


def recording(h, e, m):
    """tf: world -> base_link (static) -> wrist_3_link -> tool0 (static); target -> camera_link -> camera_optical
    (static), the chains composing to the files' poses; and the same poses as PoseStamped topics."""
    inv = se3.invert_transform
    tf = [TfEdge("world", "base_link", m["S"]), TfEdge("wrist_3_link", "tool0", m["W"]),
          TfEdge("camera_link", "camera_optical", m["O"]),
          TfEdge("base_link", "wrist_3_link", h.T @ inv(m["W"]), h.t),
          TfEdge("target", "camera_link", e.T @ inv(m["O"]), e.t)]  # fmt: skip
    poses = [PoseTopic("/robot/tool_pose", "PoseStamped", "base_link", h.T, h.t),
             PoseTopic("/camera/pose", "PoseStamped", "target", e.T, e.t)]
    return tf, poses


def same_result(res, ref, tol=1e-9):
    assert res.n_pairs == ref.n_pairs and res.outliers == ref.outliers
    assert np.abs(res.X - ref.X).max() < tol and np.abs(res.Y - ref.Y).max() < tol
    assert abs(res.time_offset_s - ref.time_offset_s) < tol
    assert np.abs(res.X_std - ref.X_std).max() < 1e-3 * ref.X_std.min()


@pytest.mark.parametrize("storage", STORAGES)
def test_bag_gives_the_result_of_the_sequence_files(generated, storage):
    root, seq, h, e, ref, m = generated
    tf, poses = recording(h, e, m)
    path = write_bag(root / f"rec_{storage}{'.bag' if storage == 'ros1' else ''}", storage=storage, tf=tf,
                     poses=poses, epoch_s=EPOCH)  # fmt: skip
    if storage == "mcap":  # a bare storage file reads as well as the bag folder
        path = next(path.glob("*.mcap"))
    res = calibrate("base_link:tool0", "camera_optical:target", bag=path)
    same_result(res, ref)
    z = max(within_3_sigma(res.X, seq.X, res.X_std).max(), within_3_sigma(res.Y, seq.Y, res.Y_std).max())
    assert abs(res.time_offset_s - seq.time_offset) < 3 * res.time_offset_std_s + 1e-4
    if storage == "ros1":  # docs/bags.md, "Checked against files", quotes this run
        import re

        from helpers.doc_pages import build_figures

        page = (Path(__file__).resolve().parents[1] / "docs" / "bags.md").read_text(encoding="utf-8")
        m = re.search(r"the truth lies within\s+(\S+) sigma \(`X`, `Y`\) and (\S+) sigma \(offset\)", page)
        z_offset = abs(res.time_offset_s - seq.time_offset) / res.time_offset_std_s
        d = max(np.abs(res.X - ref.X).max(), np.abs(res.Y - ref.Y).max()), abs(res.time_offset_s - ref.time_offset_s)
        assert m is not None and build_figures().mismatches(" ".join(m.groups()), f"{z} {z_offset}") == [], \
            (z, z_offset, d)  # fmt: skip
        assert "TUM files to better than 1e-10 per element and the clock\noffset to better than 1e-10 s" in page
        assert max(d) < 1e-10, d
    assert res.inputs["frames"]["X"] == ["tool0", "camera_optical"]
    assert res.inputs["frames"]["Y"] == ["base_link", "target"]
    assert f"time stamps counted from {EPOCH} s" in res.notes[0]
    top = calibrate("/robot/tool_pose", "camera/pose", bag=path, eye_pose="target_T_cam")  # leading / optional
    same_result(top, ref)
    assert top.inputs["frames"]["Y"] == ["base_link", "target"] and top.inputs["frames"]["X"] == ["ee", "cam"]


def test_pose_message_types_and_stamps(tmp_path, monkeypatch):
    """Every pose type reads back the written poses; header stamps (not record times) are the clock; nanoseconds
    survive a 1.7e9 s epoch; messages out of stamp order are sorted; only the named topics are read."""
    rng = np.random.default_rng(2)
    T = se3.random_poses(rng, 6)
    t = np.array([0.0, 0.1, 0.3, 0.2, 0.4, 0.5]) + 1e-9 * np.array([1, 2, 3, 4, 5, 6])
    kinds = ["PoseStamped", "PoseWithCovarianceStamped", "TransformStamped", "Odometry"]
    rec = np.arange(6) * 0.1 + 0.01  # received in this order, 10 ms late
    poses = [PoseTopic(f"/p{k}", kind, "odom", T, t, "body", rec) for k, kind in enumerate(kinds)]
    poses.append(PoseTopic("/unused", "PoseStamped", "odom", T, t))
    path = write_bag(tmp_path / "types", storage="sqlite3", poses=poses, epoch_s=EPOCH)
    from rosbags.highlevel import AnyReader

    read, messages = [], AnyReader.messages

    def spy(self, connections=(), *args, **kw):
        read.append({c.topic for c in connections})
        return messages(self, connections, *args, **kw)

    monkeypatch.setattr(AnyReader, "messages", spy)
    hand, eyes = read_bag(path, "/p0", ["/p1", "/p2", "/p3"])
    assert read == [{"/p0"}, {"/p1"}, {"/p2"}, {"/p3"}]  # one topic at a time, never /unused
    order = np.argsort(t)
    for s, kind in zip([hand] + eyes, kinds):
        assert np.abs(s.T - T[order]).max() < 1e-12, kind
        assert np.abs(s.t - t[order]).max() < 1e-12  # counted from the epoch, nanoseconds kept
        assert s.frames == ("odom", "body" if kind in ("TransformStamped", "Odometry") else None)
        assert s.direction is None and s.item == "message" and s.lines.tolist() == [1, 2, 4, 3, 5, 6]
    assert any("out of stamp order" in n for n in hand.notes)
    ns = stamps_ns([1487321563.68, -0.25])
    exact = int((Decimal(1487321563.68) * 10**9).to_integral_value())  # the float's own digits, no 128 ns error
    assert ns.tolist() == [exact, -250_000_000] and exact % 1000 == 67


def test_eye_to_hand_and_rig_outputs(tmp_path):
    """Topic frames name the outputs; eye-to-hand publishes T_base_cam; a rig of two tf cameras publishes both,
    each below its static mount."""
    rng = np.random.default_rng(8)
    t, A, C = streams(rng)  # T_base_ee, T_cam_target (eye-in-hand, X_TRUE)
    O = se3.transform_from_rotation_translation(se3.so3_exp([0.0, 0.0, 0.5]), [0.0, 0.05, 0.0])
    B = se3.transform_from_rotation_translation(se3.so3_exp([0.02, 0.1, 0.0]), [0.06, 0.0, 0.01])  # a baseline
    inv = se3.invert_transform
    tf = [TfEdge("base_link", "tool0", A, t), TfEdge("cam_a_optical", "board", C, t),
          TfEdge("cam_b_link", "cam_b_optical", O), TfEdge("cam_a_optical", "cam_b_link", B)]
    path = write_bag(tmp_path / "rig.bag", storage="ros1", tf=tf, epoch_s=EPOCH,
                     poses=[PoseTopic("/arm/pose", "TransformStamped", "base_link", A, t, "tool0"),
                            PoseTopic("/board", "PoseStamped", "cam_a_optical", C, t)])  # fmt: skip
    res = calibrate("/arm/pose", "/board", bag=path, offset="none")
    assert res.inputs["frames"] == {"X": ["tool0", "cam_a_optical"], "Y": ["base_link", "target"],
                                    "camera": "cam_a_optical", "mount": None}
    fake = dataclasses.replace(res, setup="eye_to_hand", inputs=dict(res.inputs, frames={
        "X": ["tool0", "marker"], "Y": ["base_link", "cam_a_optical"], "camera": "cam_a_optical", "mount": None}))
    pub = [e for e in ros_transforms(fake) if e["publish"]]
    assert [(e["parent"], e["child"]) for e in pub] == [("base_link", "cam_a_optical")] and pub[0]["T"] is not None
    assert np.allclose(pub[0]["T"], fake.Y)
    rig = calibrate("base_link:tool0", ["cam_a_optical:board", "cam_b_optical:board"], bag=path, setup="rig",
                    offset="none")  # fmt: skip
    entries = ros_transforms(rig)
    # cam_b_optical hangs below cam_a_optical through static transforms (as a stereo driver's right camera below
    # its left one): both reach cam_a_optical, which is published once; the second says how far it disagrees
    assert [(e["parent"], e["child"], e["publish"]) for e in entries] == [
        ("tool0", "cam_a_optical", True), ("tool0", "cam_a_optical", False)]
    X_a, X_b = rig.rig.X["cam_a_optical"], rig.rig.X["cam_b_optical"]
    # camera b is found through the tree; its noisy solve lands within a small fraction of sigma of X_a T_a_b
    z = np.abs(np.r_[se3.so3_log((X_a @ B @ O)[:3, :3].T @ X_b[:3, :3]), X_b[:3, 3] - (X_a @ B @ O)[:3, 3]])
    assert (z / rig.rig.X_std["cam_b_optical"]).max() < 0.1
    assert np.abs(entries[1]["T"] - X_b @ inv(B @ O)).max() < 1e-12  # X_b inv(T_a_b)
    assert "published once, from X of cam_a_optical" in entries[1]["note"]
    text = ros2_launch(rig)
    ast.parse(text)
    assert text.count("\n        Node(") == 1 and text.count("# Node(") == 1


def _run(*args):
    return CliRunner().invoke(main, ["calibrate", *map(str, args)])


@pytest.fixture(scope="module")
def ros1_bag(generated):
    root, seq, h, e, ref, m = generated
    tf, poses = recording(h, e, m)
    return write_bag(root / "cli.bag", storage="ros1", tf=tf, poses=poses, epoch_s=EPOCH), ref, m


def test_cli_launch_file(ros1_bag, tmp_path):
    path, ref, m = ros1_bag
    out = tmp_path / "hand_eye.launch.py"
    r = _run("--bag", path, "--hand-tf", "base_link:tool0", "--eye-tf", "camera_optical:target", "--launch", out,
             "--json", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    frames = json.loads((tmp_path / "r.json").read_text())["inputs"]["frames"]
    assert frames["X"] == ["tool0", "camera_optical"] and frames["mount"]["frame"] == "camera_link"
    assert np.allclose(frames["mount"]["T_frame_sensor"], m["O"])
    assert "frames of the recording: X tool0 -> camera_optical, Y base_link -> target" in r.output
    assert "--frame-id tool0 --child-frame-id camera_link" in r.output  # the camera's static mount
    tree = ast.parse(out.read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "Node"]
    assert len(calls) == 1  # Y is offered commented out only
    kw = {k.arg: ast.literal_eval(k.value) for k in calls[0].keywords}
    assert kw["package"] == "tf2_ros" and kw["executable"] == "static_transform_publisher"
    args = kw["arguments"]
    assert args[0::2] == ["--x", "--y", "--z", "--qx", "--qy", "--qz", "--qw", "--frame-id", "--child-frame-id"]
    assert args[-3:] == ["tool0", "--child-frame-id", "camera_link"]
    x, y, z, qx, qy, qz, qw = map(float, args[1:14:2])
    T = se3.transform_from_pq([x, y, z], [qw, qx, qy, qz])
    assert np.abs(T - ref.X @ se3.invert_transform(m["O"])).max() < 1e-9  # published tool0 -> camera_link
    assert "# Node(" in out.read_text() and "base_link" in out.read_text()


@pytest.mark.parametrize("args, fragments", [
    (["--hand-tf", "base_link:tool9", "--eye-tf", "camera_optical:target"],
     ["no tf frame 'tool9'", "tf frames base_link, camera_link, camera_optical, target, tool0, world, wrist_3_link",
      "pose topics /camera/pose (geometry_msgs/PoseStamped, ", "/robot/tool_pose"]),
    (["--hand-topic", "/robot/pose", "--eye-tf", "camera_optical:target"],
     ["no topic '/robot/pose' (hand)", "pose topics /camera/pose", "/robot/tool_pose", "tf frames base_link"]),
    (["--hand-tf", "base_link", "--eye-tf", "camera_optical:target"], ["--hand-tf: expected a frame pair BASE:EE"]),
    (["--hand-topic", "/tf", "--eye-tf", "camera_optical:target"], ["/tf is the tf tree, not a pose topic"]),
])  # fmt: skip
def test_cli_wrong_names_list_what_the_bag_has(ros1_bag, args, fragments):
    path, _, _ = ros1_bag
    r = _run("--bag", path, *args)
    assert r.exit_code == 2, r.output
    err = r.stderr if hasattr(r, "stderr") else r.output
    assert len(err.strip().splitlines()) == 1, err
    for f in fragments:
        assert f in err, (f, err)


def test_a_reversed_pair_with_the_direction_it_holds_gives_the_same_result(ros1_bag):
    path, ref, _ = ros1_bag
    # the setup and the hand's direction stated: the reading choice does not yet take the bag's tf frame pairs as
    # claims that tell apart the readings fitting the same (eye-in-hand or eye-to-hand, X and Y exchanged)
    stated = dict(setup="eye_in_hand", hand_pose="base_T_ee")
    res = calibrate("base_link:tool0", "target:camera_optical", bag=path, eye_pose="target_T_cam", **stated)
    same_result(res, ref)
    # without --eye-pose: the tf frames say which is the camera (the convention firewall reads them)
    res = calibrate("base_link:tool0", "target:camera_optical", bag=path, **stated)
    same_result(res, ref)
    assert res.inputs["eye_pose"] == "target_T_cam" and res.setup == "eye_in_hand"
    assert res.inputs["frames"]["X"] == ["tool0", "camera_optical"]
    assert res.inputs["frames"]["mount"]["frame"] == "camera_link"  # the camera's mount, whichever side it came


def test_cli_bag_option_errors(ros1_bag, tmp_path, monkeypatch):
    path, _, _ = ros1_bag
    cases = [
        (["--hand-tf", "a:b", "--eye-tf", "c:d"], "expected --bag FILE with them"),
        (["--bag", path, "--hand", "x.tum", "--eye-tf", "c:d"], "instead of --hand"),
        (["--bag", tmp_path / "none.bag", "--hand-tf", "a:b", "--eye-tf", "c:d"], "got no such file"),
        (["--bag", tmp_path / "x.txt", "--hand-tf", "a:b", "--eye-tf", "c:d"], "got no such file"),
    ]
    (tmp_path / "bad.bag").write_bytes(b"not a bag")
    cases.append((["--bag", tmp_path / "bad.bag", "--hand-tf", "a:b", "--eye-tf", "c:d"], "not a readable ROS bag"))
    for args, fragment in cases:
        r = _run(*args)
        assert r.exit_code == 2 and fragment in r.output and len(r.output.strip().splitlines()) == 1, (args, r.output)
    monkeypatch.setitem(sys.modules, "rosbags.highlevel", None)  # as if the extra were not installed
    r = _run("--bag", path, "--hand-tf", "base_link:tool0", "--eye-tf", "camera_optical:target")
    assert r.exit_code == 2 and 'pip install "kinhec[ros]"' in r.output and len(r.output.strip().splitlines()) == 1


def test_import_kinhec_does_not_import_rosbags():
    import subprocess

    code = "import sys, kinhec, kinhec.calibrate, kinhec.cli; print('rosbags' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_eth_robot_arm_real_as_tf_gives_the_csv_result(tmp_path):
    """The ETH-ASL robot_arm_real CSVs written into a bag as tf (base_link -> sr300_hinge at 50 Hz, target -> ir at
    30 Hz, their own stamps) give the X and the clock offset of the CSV route.

    The routes differ by the CSV's absolute float stamps (a float64 holds 1.49e9 s to 2.4e-7 s, and the pairing's
    shifted stamps are rounded to that grid); docs/bags.md gives the figures (``python docs/build_figures.py``).
    """
    files = sorted((ETH / "robot_arm_real").glob("*.csv"))  # kept with the tests (tests/data/realdata)
    assert len(files) == 2, f"expected the two CSV streams of {ETH / 'robot_arm_real'}"
    hand = next(f for f in files if "hinge" in f.name)
    eye = next(f for f in files if "target_ir" in f.name)
    ref = calibrate(hand, eye, fmt="eth", eye_pose="target_T_cam")
    h, e = read_stream(hand, "eth"), read_stream(eye, "eth")
    path = write_bag(tmp_path / "robot_arm_real.bag", storage="ros1",
                     tf=[TfEdge("base_link", "sr300_hinge", h.T, h.t), TfEdge("target", "ir", e.T, e.t)])
    res = calibrate("base_link:sr300_hinge", "ir:target", bag=path)
    assert res.n_pairs == ref.n_pairs and res.outliers == ref.outliers
    assert np.abs(res.X - ref.X).max() < 1e-6 and abs(res.time_offset_s - ref.time_offset_s) < 1e-6
    assert abs(res.time_offset_s - ref.time_offset_s) < 1e-3 * ref.time_offset_std_s
