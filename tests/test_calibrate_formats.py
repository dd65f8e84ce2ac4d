"""Pose-file readers of ``kinhec calibrate`` (one per format, the same poses each time) and the output forms."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.calibrate import calibrate, read_stream, read_streams
from kinhec.calibrate.output import ros_static_transform, rpy_from_matrix, urdf_origin
from kinhec.calibrate.readers import detect_format
from kinhec.util.errors import InputError

RNG = np.random.default_rng(21)
T = se3.random_poses(RNG, 5, 0.5)
t = 100.0 + 0.1 * np.arange(5)


def _pq(T):
    q = se3.quaternion_from_matrix(T[:, :3, :3])
    return T[:, :3, 3], np.column_stack([q[:, 1:], q[:, :1]])  # x y z w


def test_tum_and_eth_and_csv_read_the_same_poses(tmp_path):
    p, q = _pq(T)
    rows = np.column_stack([t, p, q])
    (tmp_path / "a.tum").write_text("# t x y z qx qy qz qw\n" + "".join(" ".join(map(repr, r)) + "\n" for r in rows.tolist()))
    (tmp_path / "a.csv").write_text("".join(", ".join(map(repr, r)) + "\n" for r in rows.tolist()))
    # header naming the columns, in another order, quaternion scalar first
    hdr = "qw,qx,qy,qz,timestamp,x,y,z\n"
    (tmp_path / "b.csv").write_text(hdr + "".join(",".join(map(repr, [r[7], r[4], r[5], r[6], r[0], r[1], r[2], r[3]])) + "\n"
                                                  for r in rows.tolist()))
    assert detect_format(tmp_path / "a.tum") == "tum"
    assert detect_format(tmp_path / "a.csv") == "eth"
    assert detect_format(tmp_path / "b.csv") == "csv"
    for name in ("a.tum", "a.csv", "b.csv"):
        s = read_stream(tmp_path / name)
        assert np.allclose(s.T, T, atol=1e-12) and np.allclose(s.t, t)
        assert s.lines[0] == (2 if name != "a.csv" else 1)


def test_rwhe_tabb_and_observations(tmp_path):
    (tmp_path / "v.txt").write_text("".join("\t".join(map(repr, M.ravel().tolist())) + "\n" for M in T))
    s = read_stream(tmp_path / "v.txt")
    assert s.fmt == "rwhe" and s.t is None and np.allclose(s.T, T)
    mm = T.copy()
    mm[:, :3, 3] *= 1000
    blocks = "\n".join("\n".join(" ".join(f"{v:.9f}" for v in row) for row in M) + "\n" for M in mm)
    (tmp_path / "robot_cali.txt").write_text(f"{len(T)}\n{blocks}")
    s = read_stream(tmp_path / "robot_cali.txt")
    assert s.fmt == "tabb" and s.direction == "ee_T_base" and s.units == "mm"
    assert np.allclose(s.T[:, :3, 3] / 1000, T[:, :3, 3], atol=1e-9) and s.lines.tolist() == [2, 7, 12, 17, 22]
    p, q = _pq(T)
    doc = {"version": 1, "problem": "single_cam_handeye", "input": {"views": [
        {"obs": {}, "meta": {"base_se3_gripper": {"rotation": qi.tolist(), "translation": pi.tolist()}}}
        for pi, qi in zip(p, q)]}}  # fmt: skip
    (tmp_path / "obs.json").write_text(json.dumps(doc))
    s = read_stream(tmp_path / "obs.json")
    assert s.fmt == "observations" and s.direction == "base_T_ee" and np.allclose(s.T, T)


def test_rig_folder_picks_cameras_by_name(tmp_path):
    (tmp_path / "gt_poses").mkdir()
    p, q = _pq(T)
    for cam in ("cam01", "cam02"):
        rows = np.column_stack([t, p, q])
        (tmp_path / "gt_poses" / f"{cam}_poses.txt").write_text("".join(" ".join(map(repr, r)) + "\n" for r in rows.tolist()))
    both = read_streams(tmp_path)
    assert [s.name for s in both] == ["cam01", "cam02"] and all(s.direction == "target_T_cam" for s in both)
    assert read_stream(f"{tmp_path}:cam02").name == "cam02"
    with pytest.raises(InputError, match="cam07"):
        read_stream(f"{tmp_path}:cam07")


def test_urdf_rpy_and_ros_line_round_trip():
    for R in se3.random_rotations(np.random.default_rng(2), 20):
        r, p, y = rpy_from_matrix(R)
        Rz, Ry, Rx = se3.so3_exp([0, 0, y]), se3.so3_exp([0, p, 0]), se3.so3_exp([r, 0, 0])
        assert np.allclose(Rz @ Ry @ Rx, R, atol=1e-9)
    X = T[0]
    line = ros_static_transform(X, "ee", "cam")
    vals = {k: float(v) for k, v in zip(line.split()[4::2], line.split()[5::2]) if k not in ("--frame-id", "--child-frame-id")}
    q = np.array([vals["--qw"], vals["--qx"], vals["--qy"], vals["--qz"]])
    assert np.allclose(se3.matrix_from_quaternion(q, normalize=True), X[:3, :3], atol=1e-7)
    assert "--frame-id ee --child-frame-id cam" in line
    assert urdf_origin(X).startswith('<origin xyz="')


def test_figure_is_drawn_and_matplotlib_stays_lazy(tmp_path):
    from helpers.recordings import streams, write_tum

    tt, A, C = streams(np.random.default_rng(4))
    res = calibrate(write_tum(tmp_path / "h.tum", tt, A), write_tum(tmp_path / "e.tum", tt, C), setup="eye_in_hand")
    out = res.figure(tmp_path / "fig.png")
    assert out.stat().st_size > 10_000
    code = "import sys, kinhec.calibrate; print('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


@pytest.mark.parametrize("n_warnings", [1, 8])
def test_figure_text_stays_on_the_page(tmp_path, n_warnings):
    """The summary panel wraps long lines (a long warning, a wordy verdict) instead of running off the right edge,
    and shrinks its font (or, with many warnings, says how many lines it left out) instead of running off the
    bottom."""
    import dataclasses

    from matplotlib.text import Text

    from kinhec.calibrate.figure import build
    from helpers.recordings import streams, write_tum

    tt, A, C = streams(np.random.default_rng(4))
    res = calibrate(write_tum(tmp_path / "h.tum", tt, A), write_tum(tmp_path / "e.tum", tt, C), setup="eye_in_hand")
    long = "the hand rotates about nearly one axis only, so the rotation of X about it is poorly determined; " * 3
    res = dataclasses.replace(res, warnings=[long] * n_warnings)
    fig = build(res)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert any("warning: the hand rotates" in t.get_text() for t in texts)
    assert any("more lines (the JSON" in t.get_text() for t in texts) == (n_warnings > 1)
    page = fig.bbox
    for t in texts:
        box = t.get_window_extent(renderer)
        assert box.x0 >= page.x0 - 1 and box.x1 <= page.x1 + 1, (t.get_text()[:60], box, page)
        assert box.y0 >= page.y0 - 1 and box.y1 <= page.y1 + 1, (t.get_text()[:60], box, page)
