"""The time stamps' unit (``kinhec.calibrate.stamp_units``) and the refusal of an offset at the edge of its search.

The ETH-ASL robot_arm_real streams (50 Hz robot, 30 Hz camera, 56 s, stamps in seconds since the epoch; their
offset is +16.4 ms, see test_calibrate_real.py) are written as TUM files with their stamps in other units; read
right, every copy must give the seconds run's offset and X (within its sigma); otherwise the run must stop naming
the fix.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec.geometry import se3
from kinhec.calibrate import calibrate
from kinhec.calibrate import stamp_units as su
from kinhec.calibrate.readers import PoseStream
from kinhec.cli import main
from kinhec.util.errors import InputError

from helpers.checks import one_line_exit_2, within_3_sigma
from helpers.paths import REALDATA
from helpers.recordings import EYE_POSE, exported


ARM = REALDATA / "ethz_asl" / "robot_arm_real"
FACTOR = {"s": 1, "ms": 1e3, "us": 1e6, "ns": 1e9}


#: What the user states about the ETH arm's files written here as TUM: the camera on the flange, the eye poses
#: T_target_cam (the names of the files written here claim nothing, so the setup has to be stated)
ARM_STATED = dict(setup="eye_in_hand", eye_pose="target_T_cam")


def arm(hand, eye, **kw):
    return calibrate(hand, eye, **ARM_STATED, **kw)


def run(*args):
    return CliRunner().invoke(main, ["calibrate", "--setup", "eye_in_hand", "--eye-pose", "target_T_cam",
                                     *map(str, args)])


def write_tum(path, rows: np.ndarray, unit: str):
    """The ETH rows as a TUM file with the stamps in ``unit`` (integers for ns, as ROS writes them)."""
    a = rows.copy()
    if unit == "ns":
        stamps = [str(int(round(float(v) * 1e9))) for v in a[:, 0]]  # exact integers, as a ROS stamp
    else:
        stamps = [repr(float(v) * FACTOR[unit]) for v in a[:, 0]]
    path.write_text("".join(f"{s} " + " ".join(repr(float(x)) for x in r[1:]) + "\n" for s, r in zip(stamps, a)))
    return path


@pytest.fixture(scope="module")
def arm_rows():
    hand = np.loadtxt(next(ARM.glob("*_hinge.csv")), delimiter=",")
    eye = np.loadtxt(next(ARM.glob("*_target_ir.csv")), delimiter=",")
    return hand, eye


@pytest.fixture(scope="module")
def seconds_run(arm_rows, tmp_path_factory):
    """The reference: the same TUM files with their stamps in seconds."""
    d = tmp_path_factory.mktemp("s")
    res = arm(write_tum(d / "robot.tum", arm_rows[0], "s"), write_tum(d / "camera.tum", arm_rows[1], "s"))
    assert res.determined and 0.0155 < res.time_offset_s < 0.0175  # +16.4 ms
    assert not any("time stamps read in" in n for n in res.notes)  # seconds: nothing to say
    return res


def same_as(res, ref):
    """``res`` gives ``ref``'s offset and X: the difference far inside ``ref``'s standard deviations."""
    assert res.determined
    assert abs(res.time_offset_s - ref.time_offset_s) < 0.1 * ref.time_offset_std_s, (res.time_offset_s,
                                                                                      ref.time_offset_s)
    d = np.concatenate([se3.so3_log(ref.X[:3, :3].T @ res.X[:3, :3]), res.X[:3, 3] - ref.X[:3, 3]])
    assert np.all(np.abs(d) < 0.1 * ref.X_std), np.abs(d) / ref.X_std


# --------------------------------------------------------------------------- #
# The symptom: the ETH robot_arm_real streams with their stamps x 1000 (ms)
# --------------------------------------------------------------------------- #
def test_eth_stamps_in_milliseconds_give_the_seconds_offset_and_x(arm_rows, seconds_run, tmp_path):
    hand = write_tum(tmp_path / "robot_ms.tum", arm_rows[0], "ms")
    eye = write_tum(tmp_path / "camera_ms.tum", arm_rows[1], "ms")
    r = run("--hand", hand, "--eye", eye, "--json", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    d = json.loads((tmp_path / "r.json").read_text())
    # before: 0.00 +- 0.00 ms, X 0.19 deg / 2.15 mm from the seconds run (1.87 mm in z against sigma 0.53 mm)
    assert abs(1000 * d["time_offset_s"] - 16.4) < 0.5 and 0.0003 < d["time_offset_std_s"] < 0.002
    res = arm(hand, eye)
    same_as(res, seconds_run)
    for f, rate in (("robot_ms.tum", "0.05 Hz"), ("camera_ms.tum", "0.03 Hz")):
        note = next(n for n in res.notes if n.startswith(str(tmp_path / f)))
        assert "time stamps read in ms, not s" in note and rate in note, note  # the file, units read and used, why
    assert "note: " + str(hand) + ": time stamps read in ms, not s" in r.output
    assert "edge of the searched" not in r.output


@pytest.mark.parametrize("unit", ["us", "ns"])
def test_eth_stamps_in_microseconds_and_nanoseconds(arm_rows, seconds_run, tmp_path, unit):
    res = arm(write_tum(tmp_path / f"robot_{unit}.tum", arm_rows[0], unit),
                    write_tum(tmp_path / f"camera_{unit}.tum", arm_rows[1], unit))
    same_as(res, seconds_run)
    assert sum(f"time stamps read in {unit}, not s" in n for n in res.notes) == 2


def test_ros_nanoseconds_since_the_epoch_against_seconds(arm_rows, seconds_run, tmp_path):
    """A ROS-style stream (integer ns since the epoch) against one in seconds: only ns,s overlaps."""
    hand = write_tum(tmp_path / "robot_ns.tum", arm_rows[0], "ns")
    eye = write_tum(tmp_path / "camera.tum", arm_rows[1], "s")
    res = arm(hand, eye)
    same_as(res, seconds_run)
    notes = [n for n in res.notes if "time stamps read in" in n]
    assert len(notes) == 1 and notes[0].startswith(f"{hand}: time stamps read in ns, not s"), notes
    # stated, the same (and nothing corrected)
    stated = arm(hand, eye, stamp_unit="ns,s")
    assert stated.time_offset_s == res.time_offset_s and np.array_equal(stated.X, res.X)
    assert not any("time stamps read in" in n for n in stated.notes)


def test_generated_mixed_units_recover_the_true_offset_and_x(tmp_path):
    """A generated recording (true offset 50 ms) with the robot's stamps in ms, the camera's in s, both from 0."""
    seq, hand, eye = exported(tmp_path, 3, sync="async", time_offset_s=0.05)
    lines = hand.read_text().splitlines(True)
    hand.write_text("".join(ln if ln.startswith("#") or not ln.strip() else
                            f"{float(ln.split()[0]) * 1000!r} " + ln.split(None, 1)[1] for ln in lines))
    res = calibrate(hand, eye, setup=seq.configuration, eye_pose=EYE_POSE[seq.configuration])
    assert any(n.startswith(f"{hand}: time stamps read in ms, not s") for n in res.notes), res.notes
    assert res.determined
    assert abs(res.time_offset_s - seq.time_offset) < 3 * res.time_offset_std_s + 1e-3, (res.time_offset_s,
                                                                                         seq.time_offset)
    within_3_sigma(res.X, seq.X, res.X_std)


# --------------------------------------------------------------------------- #
# A stated unit is used and never overruled; an implausible one is refused
# --------------------------------------------------------------------------- #
def test_a_stated_unit_is_used_without_a_correction(arm_rows, seconds_run, tmp_path):
    hand = write_tum(tmp_path / "robot_ms.tum", arm_rows[0], "ms")
    eye = write_tum(tmp_path / "camera_ms.tum", arm_rows[1], "ms")
    r = run("--hand", hand, "--eye", eye, "--stamp-unit", "ms", "--json", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    assert "time stamps read in" not in r.output
    d = json.loads((tmp_path / "r.json").read_text())
    assert abs(d["time_offset_s"] - seconds_run.time_offset_s) < 0.1 * seconds_run.time_offset_std_s


def test_a_stated_implausible_unit_is_refused_naming_the_file_rate_and_fix(arm_rows, tmp_path):
    hand = write_tum(tmp_path / "robot_ms.tum", arm_rows[0], "ms")
    eye = write_tum(tmp_path / "camera_ms.tum", arm_rows[1], "ms")
    one_line_exit_2(run("--hand", hand, "--eye", eye, "--stamp-unit", "s"),
                    f"{hand}, lines 1-{len(arm_rows[0])}: --stamp-unit s implies 0.05 Hz over 15.6 h",
                    "50 Hz over 56.3 s", "--stamp-unit ms")
    ns = write_tum(tmp_path / "robot_ns.tum", arm_rows[0], "ns")
    s = write_tum(tmp_path / "camera.tum", arm_rows[1], "s")
    one_line_exit_2(run("--hand", ns, "--eye", s, "--stamp-unit", "ms"), f"{ns}, lines", "--stamp-unit ns,s")
    one_line_exit_2(run("--hand", ns, "--eye", s, "--stamp-unit", "min"), "stamp unit", "ms")  # not a unit
    forced = arm(hand, eye, stamp_unit="s", force=True)  # kept as stated, and said
    assert any(n.endswith("; kept (--force)") and "--stamp-unit s implies 0.05 Hz" in n for n in forced.notes)
    assert not any("time stamps read in" in n for n in forced.notes)


def _stream(t, name):
    T = np.tile(np.eye(4), (len(t), 1, 1))
    return PoseStream(T, np.asarray(t, dtype=float), np.arange(1, len(t) + 1), f"{name}.tum", name, "tum")


def test_two_plausible_units_are_refused_listing_them():
    """1 Hz over 25 min (s) or 1 kHz over 1.5 s (ms), both files alike: nothing tells them apart."""
    hand, eye = _stream(np.arange(1500.0), "robot"), _stream(np.arange(1500.0) + 0.3, "camera")
    with pytest.raises(InputError, match=r"fit 2 units equally: s,s \(robot.tum in s: 1 Hz over 25 min.*ms,ms "
                                         r"\(robot.tum in ms: 1 kHz over 1.5 s.*--stamp-unit"):
        su.settle(hand, eye)
    h, e = su.settle(hand, eye, force=True)  # forced: kept as read, and said
    assert np.array_equal(h.t, hand.t) and e is eye and "fit 2 unit pairs equally (s,s, ms,ms); kept in s,s (--force)" in h.notes[-1]
    h, e = su.settle(hand, eye, "ms")  # stated: used
    assert np.allclose(h.t, hand.t / 1000) and np.allclose(e.t, eye.t / 1000)
    h, e = su.settle(hand, eye, "s")
    assert h is hand and e is eye


def test_seconds_that_fit_are_left_alone_and_known_seconds_never_judged():
    hand, eye = _stream(1.6e9 + np.arange(0, 60, 0.01), "robot"), _stream(1.6e9 + np.arange(0, 60, 1 / 30), "camera")
    h, e = su.settle(hand, eye)
    assert h is hand and e is eye
    # a stream logged at stations every 10 s (0.1 Hz in s, nothing plausible in any unit): kept as read
    slow = _stream(np.arange(0, 300, 10.0), "stations")
    assert su.settle(slow, slow) == (slow, slow)


# --------------------------------------------------------------------------- #
# An offset at the edge of its search is never "determined"
# --------------------------------------------------------------------------- #
def test_an_offset_at_the_edge_of_the_search_is_refused(arm_rows, tmp_path):
    hand = write_tum(tmp_path / "robot.tum", arm_rows[0], "s")
    eye = write_tum(tmp_path / "camera.tum", arm_rows[1], "s")
    # the true +16.4 ms lies beyond +-10 ms
    err = one_line_exit_2(run("--hand", hand, "--eye", eye, "--max-offset", "0.01"),
                          "the clock offset is not determined", "edge of the searched +-0.01 s", "--max-offset",
                          "--offset SECONDS", "--stamp-unit")
    assert "50 Hz" in err and "30 Hz" in err
    with pytest.raises(InputError, match=r"edge of the searched \+-0.01 s"):
        arm(hand, eye, max_offset_s=0.01)
    forced = arm(hand, eye, max_offset_s=0.01, force=True)  # kept, and said: not determined
    assert not forced.determined and forced.observability["offset_at_edge"]
    assert forced.time_offset_s > 0.008  # pinned near the edge, not the true 16.4 ms
    assert forced.warnings[0].startswith("the clock offset is not determined") and "NOT determined" in forced.verdict
    assert sum("edge of the searched" in w for w in forced.warnings) == 1
    r = run("--hand", hand, "--eye", eye, "--max-offset", "0.01", "--force", "--json", tmp_path / "f.json")
    assert r.exit_code == 0 and "X is NOT determined" in r.output, r.output
    assert json.loads((tmp_path / "f.json").read_text())["observability"]["determined"] is False
    # widened as the message says: the true offset
    wide = arm(hand, eye, max_offset_s=0.05)
    assert wide.determined and abs(1000 * wide.time_offset_s - 16.4) < 0.5


def test_offset_at_edge_rule():
    assert su.offset_at_edge(0.49, 0.5, 0.02) and su.offset_at_edge(-0.5, 0.5, 0.02)
    assert not su.offset_at_edge(0.0164, 0.5, 0.02) and not su.offset_at_edge(-0.4, 0.5, 0.02)
    assert not su.offset_at_edge(0.0, 0.5, 0.5) and su.offset_at_edge(0.46, 0.5, 0.5)  # a 2 Hz stream


def test_rig_body_in_milliseconds_against_cameras_in_seconds(tmp_path):
    """A mocap body stamped in ms against a rig of three cameras in s: the body is read in ms once, every camera fits."""
    from helpers.recordings import rig

    rig(tmp_path, np.random.default_rng(3))
    ref = calibrate(tmp_path / "body.tum", tmp_path, setup="rig", offset="none")
    rows = np.loadtxt(tmp_path / "body.tum")
    rows[:, 0] *= 1000
    write_tum(tmp_path / "body_ms.tum", rows, "s")  # the numbers as they are (ms)
    res = calibrate(tmp_path / "body_ms.tum", tmp_path, setup="rig", offset="none")
    assert sum("time stamps read in ms, not s" in n for n in res.notes) == 1
    for name in ref.rig.cameras:
        assert np.allclose(res.rig.X[name], ref.rig.X[name], atol=1e-9), name


# --------------------------------------------------------------------------- #
# What a file says: a CSV time column named with its unit
# --------------------------------------------------------------------------- #
def write_csv(path, rows: np.ndarray, unit: str, header_t: str):
    stamps = ([str(int(round(float(v) * 1e9))) for v in rows[:, 0]] if unit == "ns" else
              [repr(float(v) * FACTOR[unit]) for v in rows[:, 0]])
    body = "".join(f"{s}," + ",".join(repr(float(x)) for x in r[1:]) + "\n" for s, r in zip(stamps, rows))
    path.write_text(f"{header_t},x,y,z,qx,qy,qz,qw\n" + body)
    return path


@pytest.mark.parametrize("name", ["su.header_unit", "reader"])
def test_time_column_names_state_their_unit(name, tmp_path):
    names = {"t": None, "t_s": "s", "timestamp_ns": "ns", "#timestamp [ns]": "ns", "time [ms]": "ms", "t(us)": "us",
             "stamp": None, "x_ms": None}
    if name == "su.header_unit":
        assert {k: su.header_unit(k) for k in names} == names
        return
    from kinhec.calibrate.readers import read_stream

    p = tmp_path / "a.csv"
    p.write_text("timestamp [ns],x,y,z,qx,qy,qz,qw\n1000000000,0,0,0,0,0,0,1\n1020000000,0,0,0,0,0,0,1\n")
    s = read_stream(p, "csv")  # before, a column named with its unit was not a time column: paired by order
    assert s.stamp_unit == "ns" and s.t is not None and s.t[1] - s.t[0] == 2e7


def test_a_csv_header_in_ns_against_seconds(arm_rows, seconds_run, tmp_path):
    hand = write_csv(tmp_path / "robot.csv", arm_rows[0], "ns", "timestamp_ns")
    eye = write_csv(tmp_path / "camera.csv", arm_rows[1], "s", "t")
    res = arm(hand, eye)
    same_as(res, seconds_run)
    assert not any("time stamps read in" in n for n in res.notes)  # the file said so: nothing corrected


def test_a_header_claim_is_refused_when_implausible_and_overridden_by_the_user(arm_rows, seconds_run, tmp_path):
    hand = write_csv(tmp_path / "robot.csv", arm_rows[0], "s", "t_ms")  # the header is wrong: seconds
    eye = write_csv(tmp_path / "camera.csv", arm_rows[1], "s", "t")
    one_line_exit_2(run("--hand", hand, "--eye", eye), f"{hand}, lines 2-", "its time column's name (ms) implies",
                    "50 kHz", "--stamp-unit s")
    res = arm(hand, eye, stamp_unit="s")  # the user is never overruled, and the file's claim is noted
    same_as(res, seconds_run)
    assert f"{hand}: its time column's name says ms; --stamp-unit s used" in res.notes


def test_streams_are_consistent_when_they_overlap_by_half_the_shorter_span():
    """A camera recording 4 s inside a robot's 10 s log: the whole of the shorter span overlaps (consistent), though
    less than half of the longer does; a camera log that overlaps 1 s of its 4 s is not."""
    robot = np.arange(0.0, 10.0, 0.01)
    inside = np.arange(2.0, 6.0, 1 / 30)
    assert su._consistent(robot, 1.0, inside, 1.0)
    assert su._consistent(robot * 1e3, 1e-3, inside, 1.0)  # the same in ms against s
    assert not su._consistent(robot, 1.0, inside + 7.0, 1.0)  # 9-13 s: 1 s of 4 overlaps
    assert not su._consistent(robot, 1.0, np.arange(0.0, 400.0, 1.0), 1.0)  # 40 times the span: not one recording


def test_four_stations_left_two_pairs_by_the_offsets_room_name_it_and_the_option(tmp_path):
    """Four stations stamped alike in both files, the clock offset estimated: the two at the ends keep no partner over
    the offset's range, two pairs are left, and the refusal says so and names --offset; stated, all four pair."""
    from helpers.recordings import write_tum

    rng = np.random.default_rng(5)
    t = np.array([0.35, 6.97, 13.2, 20.69])
    A = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.6, (4, 3))), rng.normal(0, 0.2, (4, 3)))
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.1, -0.2, 0.3]), [0.03, -0.02, 0.08])
    Y = se3.transform_from_rotation_translation(se3.so3_exp([0.3, 0.1, -0.2]), [0.6, 0.1, -0.3])
    C = se3.invert_transform(A @ X) @ Y  # T_cam_target = inv(T_base_cam) T_base_target
    hand, eye = write_tum(tmp_path / "hand.tum", t, A), write_tum(tmp_path / "eye.tum", t, C)
    args = ["calibrate", "--hand", str(hand), "--eye", str(eye), "--setup", "eye_in_hand", "--hand-pose", "base_T_ee",
            "--eye-pose", "cam_T_target"]  # fmt: skip
    err = one_line_exit_2(CliRunner().invoke(main, args), "expected at least 3 pose pairs, got 2: of the",
                          f"samples of {eye} inside the other stream", "within +-6.6",
                          "the room the clock offset's fit needs", "--offset SECONDS; 0 when both streams")  # fmt: skip
    r = CliRunner().invoke(main, [*args, "--offset", "0"])
    assert "pose pairs, got" not in r.output + r.stderr and "pairs: 4" in r.output, r.output + r.stderr
