"""The pose file readers (:mod:`kinhec.calibrate.readers`) on files written by hand with known poses: the quaternion
column orders (by position, by header, re-read), each tolerance on both sides, the stamps' order, the CSV columns
in any order, the 4x4 formats (RWHE, Tabb's two files) and the format guess, with the exact messages."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.calibrate import readers as rd
from kinhec.geometry import se3
from kinhec.util.errors import InputError

S = np.sqrt(0.5)
RZ90 = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # 90 deg about z: q = (w, x, y, z) = (S, 0, 0, S)
RX90 = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # 90 deg about x: q = (S, S, 0, 0)


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_tum_reads_scalar_last_and_a_header_reorders(tmp_path):
    p = _write(tmp_path, "a.txt", f"0.0 1 2 3 0 0 {S} {S}\n0.5 4 5 6 {S} 0 0 {S}\n")
    s = rd.read_stream(p)
    assert s.fmt == "tum" and s.quat_order == "xyzw" and s.quat_order_source is None
    assert np.allclose(s.T[0, :3, :3], RZ90, atol=1e-12) and np.allclose(s.T[1, :3, :3], RX90, atol=1e-12)
    assert np.array_equal(s.T[:, :3, 3], [[1, 2, 3], [4, 5, 6]]) and np.array_equal(s.t, [0.0, 0.5])
    assert s.lines.tolist() == [1, 2]
    # the same numbers under a header naming the scalar first: the first row turns about x
    h = _write(tmp_path, "b.txt", f"# timestamp tx ty tz qw qx qy qz\n0.0 1 2 3 {S} {S} 0 0\n1.0 1 2 3 {S} 0 0 {S}\n")
    s = rd.read_stream(h)
    assert s.quat_order == "wxyz" and s.quat_order_source == "header" and s.quat_raw is None
    assert np.allclose(s.T[0, :3, :3], RX90, atol=1e-12) and np.allclose(s.T[1, :3, :3], RZ90, atol=1e-12)
    assert s.lines.tolist() == [2, 3]


def test_quaternion_columns_re_read_in_the_other_order(tmp_path):
    # stored (S, 0, 0, S): as x y z w a turn about x by 90 deg; as w x y z a turn about z
    s = rd.read_stream(_write(tmp_path, "a.txt", f"0.0 1 2 3 {S} 0 0 {S}\n1.0 1 2 3 0 0 0 1\n"))
    assert np.allclose(s.T[0, :3, :3], RX90, atol=1e-12)
    w = rd.with_quaternion_order(s, "wxyz")
    assert w.quat_order == "wxyz" and np.allclose(w.T[0, :3, :3], RZ90, atol=1e-12)
    # (0, 0, 0, 1) read w x y z is a half turn about z
    assert np.allclose(w.T[1, :3, :3], np.diag([-1.0, -1.0, 1.0]), atol=1e-12)
    assert np.array_equal(w.T[:, :3, 3], s.T[:, :3, 3]) and rd.with_quaternion_order(s, "xyzw") is s


@pytest.mark.parametrize("norm, ok", [(1.0099, True), (0.9901, True), (1.0101, False), (0.9899, False)])
def test_quaternion_norm_tolerance(tmp_path, norm, ok):
    p = _write(tmp_path, "a.txt", f"0 0 0 0 0 0 0 1\n1 0 0 0 0 0 {S * norm} {S * norm}\n")
    if ok:
        assert np.allclose(rd.read_stream(p).T[1, :3, :3], RZ90, atol=1e-12)  # normalised
    else:
        with pytest.raises(InputError) as e:
            rd.read_stream(p)
        assert str(e.value) == f"{p}, line 2: expected a unit quaternion (qx qy qz qw), got norm {norm:.6g}"


def test_stamps_never_go_back_and_repeats_keep_the_first(tmp_path):
    p = _write(tmp_path, "a.txt", "0 0 0 0 0 0 0 1\n1 1 0 0 0 0 0 1\n1 2 0 0 0 0 0 1\n1 3 0 0 0 0 0 1\n2 4 0 0 0 0 0 1\n")
    s = rd.read_stream(p)
    assert s.t.tolist() == [0.0, 1.0, 2.0] and s.T[:, 0, 3].tolist() == [0.0, 1.0, 4.0] and s.lines.tolist() == [1, 2, 5]
    assert s.notes == [f"{p}: 2 repeated time stamp(s) dropped (first at line 3)"]
    q = _write(tmp_path, "b.txt", "# c\n0 0 0 0 0 0 0 1\n2 0 0 0 0 0 0 1\n1.5 0 0 0 0 0 0 1\n")
    with pytest.raises(InputError) as e:
        rd.read_stream(q)
    assert str(e.value) == f"{q}, line 4: expected non-decreasing time stamps, got 1.5 after 2.0 (line 3)"


def test_csv_columns_in_any_order_and_a_time_unit(tmp_path):
    p = _write(tmp_path, "a.csv", f"qw,z,t_ns,qx,y,qy,x,qz\n{S},3,0,0,2,0,1,{S}\n1,6,20000000,0,5,0,4,0\n")
    s = rd.read_stream(p)
    assert s.fmt == "csv" and s.stamp_unit == "ns" and s.t.tolist() == [0.0, 2e7]
    assert np.array_equal(s.T[:, :3, 3], [[1, 2, 3], [4, 5, 6]]) and np.allclose(s.T[0, :3, :3], RZ90, atol=1e-12)
    bad = _write(tmp_path, "b.csv", "t,x,y,z,qx,qy,qw\n0,0,0,0,0,0,1\n")
    with pytest.raises(InputError) as e:
        rd.read_stream(bad)
    assert str(e.value) == (f"{bad}, line 1: expected a header naming the columns t, x, y, z, qx, qy, qz, qw; missing qz "
                            "in ['t', 'x', 'y', 'z', 'qx', 'qy', 'qw']")
    assert rd.header_unit("timestamp [ms]") == "ms" and rd.header_unit("t_us") == "us" and rd.header_unit("t") is None


def _row(M):
    return " ".join(repr(float(v)) for v in M.ravel())


@pytest.mark.parametrize("dev, ok", [(0.9e-3, True), (1.2e-3, False)])
def test_rwhe_rotation_tolerance_and_projection(tmp_path, dev, ok):
    M = np.eye(4)
    M[:3, :3] = RZ90 @ np.diag([1.0 + dev / 2, 1.0, 1.0])  # R^T R - I has dev + dev^2 / 4 on its diagonal
    M[:3, 3] = [0.1, 0.2, 0.3]
    p = _write(tmp_path, "poses.txt", _row(np.eye(4)) + "\n" + _row(M) + "\n")
    assert rd.detect_format(p) == "rwhe"
    if ok:
        s = rd.read_stream(p)
        assert np.allclose(s.T[1, :3, :3], RZ90, atol=1e-14) and np.array_equal(s.T[1, :3, 3], [0.1, 0.2, 0.3])
        assert s.t is None
    else:
        with pytest.raises(InputError, match=r"line 2: expected an orthonormal rotation \(\|R\^T R - I\| <= 0\.001\), got "
                                             r"a deviation of 0\.0012"):
            rd.read_stream(p)


def test_rwhe_reflection_and_last_row(tmp_path):
    M = np.diag([1.0, 1.0, -1.0, 1.0])
    p = _write(tmp_path, "poses.txt", _row(np.eye(4)) + "\n" + _row(M) + "\n")
    with pytest.raises(InputError) as e:
        rd.read_stream(p)
    assert str(e.value) == f"{p}, line 2: expected det(R) = +1, got a reflection (det = -1)"
    M = np.eye(4)
    M[3, 0] = 1e-5
    q = _write(tmp_path, "q.txt", _row(M) + "\n")
    with pytest.raises(InputError, match=r"line 1: expected the last row 0 0 0 1, got \[1e-05, 0\.0, 0\.0, 1\.0\]"):
        rd.read_stream(q)


def test_tabb_robot_and_camera_files(tmp_path):
    M = np.eye(4)
    M[:3, :3], M[:3, 3] = RZ90, [100.0, 200.0, 300.0]
    blocks = "\n".join(" ".join(repr(float(v)) for v in r) for r in M) + "\n"
    p = _write(tmp_path, "robot_cali.txt", "2\n" + "\n".join(" ".join("1" if i == j else "0" for j in range(4))
                                                              for i in range(4)) + "\n" + blocks)
    assert rd.detect_format(p) == "tabb"
    s = rd.read_stream(p)
    assert (s.direction, s.units, s.lines.tolist()) == ("ee_T_base", "mm", [2, 6])
    assert np.allclose(s.T[1], M, atol=1e-14)
    K = " ".join(["1000", "0", "320", "0", "1000", "240", "0", "0", "1"])
    R = " ".join(repr(float(v)) for v in RX90.ravel())
    c = _write(tmp_path, "cali.txt", f"1\nimg0 {K} {R} 10 20 30 0 0 0 0 0 0 0 0\n")
    s = rd.read_stream(c)
    assert (s.direction, s.units) == ("cam_T_target", "mm")
    assert np.allclose(s.T[0, :3, :3], RX90, atol=1e-14) and np.array_equal(s.T[0, :3, 3], [10.0, 20.0, 30.0])
    wrong = _write(tmp_path, "bad.txt", "3\n" + blocks)
    with pytest.raises(InputError) as e:
        rd.read_stream(wrong)
    assert str(e.value) == f"{wrong}, line 1: expected 3 poses as the count line says, got 1"


def test_format_guess(tmp_path):
    assert rd.detect_format(_write(tmp_path, "a.txt", "# c\n0,1,2,3,0,0,0,1\n")) == "eth"
    assert rd.detect_format(_write(tmp_path, "b.txt", "0 1 2 3 0 0 0 1\n")) == "tum"
    assert rd.detect_format(_write(tmp_path, "c.txt", "t,x,y,z,qx,qy,qz,qw\n")) == "csv"
    assert rd.detect_format(_write(tmp_path, "d.json", "{}")) == "observations"
    assert rd.detect_format(tmp_path / "missing.txt") == "tum" and rd.detect_format(tmp_path) == "rig"
    e = rd.read_stream(_write(tmp_path, "e.txt", f"0,1,2,3,0,0,{S},{S}\n1,1,2,3,0,0,0,1\n"))
    assert e.fmt == "eth" and np.allclose(e.T[0, :3, :3], RZ90, atol=1e-12)


def test_metres_from_millimetres():
    T = se3.transform_from_rotation_translation(np.stack([RZ90, RX90]), [[1000.0, -20.0, 3.0], [0.0, 0.0, 1.0]])
    m = rd.to_metres(T, "mm")
    assert np.array_equal(m[:, :3, :3], T[:, :3, :3]) and np.allclose(m[:, :3, 3], T[:, :3, 3] / 1000, rtol=1e-15)
    assert rd.to_metres(T, "m") is T and T[0, 0, 3] == 1000.0  # the input left as it was


def test_csv_without_a_time_column_and_rig_folders(tmp_path):
    p = _write(tmp_path, "a.csv", f"x,y,z,qx,qy,qz,qw\n1,2,3,0,0,{S},{S}\n# a comment\n4,5,6,0,0,0,1\n")
    s = rd.read_stream(p)
    assert s.t is None and s.lines.tolist() == [2, 4] and np.allclose(s.T[0, :3, :3], RZ90, atol=1e-12)
    (tmp_path / "rig" / "gt_poses").mkdir(parents=True)
    for cam in ("cam02", "cam01"):
        _write(tmp_path / "rig" / "gt_poses", f"{cam}_poses.txt", f"0 1 2 3 0 0 {S} {S}\n1 1 2 3 0 0 0 1\n")
    both = rd.read_streams(tmp_path / "rig")
    assert [c.name for c in both] == ["cam01", "cam02"] and all(c.direction == "target_T_cam" for c in both)
    assert rd.read_stream(f"{tmp_path / 'rig'}:cam02").name == "cam02"
    with pytest.raises(InputError, match=r"expected one stream, got 2 cameras; name one as FOLDER:camNN$"):
        rd.read_stream(tmp_path / "rig")
    with pytest.raises(InputError) as e:
        rd.read_stream(tmp_path / "nothing.txt")
    assert str(e.value) == f"{tmp_path / 'nothing.txt'}: expected a pose file, got no such file"
