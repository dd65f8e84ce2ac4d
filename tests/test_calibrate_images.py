"""``kinhec render`` and ``kinhec calibrate --images``: from pictures (rendered or real) to X, pairing that survives drops."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec.geometry import se3
from kinhec.calibrate import calibrate
from kinhec.calibrate.readers import read_stream
from kinhec.cli import main
from kinhec.util.errors import InputError
from kinhec.synth.observations import read_observations
from kinhec.vision.pairing import list_images, natural_key, pair_images

from helpers.paths import shared_data
from helpers.recordings import small_pnp_tier

cv2 = pytest.importorskip("cv2")

ROOT = Path(__file__).resolve().parents[1]


def _intrinsics(truth: dict) -> str:
    return ",".join(str(truth["intrinsics"][k]) for k in ("fx", "fy", "cx", "cy", "k1", "k2", "p1", "p2", "k3"))


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """A generated eye-in-hand pnp sequence (8 stations, 640x480, 9x6 chessboard) rendered by ``kinhec render``."""
    root = tmp_path_factory.mktemp("images")
    small_pnp_tier(root)
    r = CliRunner().invoke(main, ["render", str(root / "data"), "--sequence", "pnp-000000", "--out", str(root / "r")])
    assert r.exit_code == 0, r.output
    truth = json.loads((root / "r" / "truth.json").read_text())
    return root / "r", truth, r.output


def _x_error(X, truth) -> tuple[float, float]:
    return se3.pose_error(np.asarray(X), np.array(truth["X"]))


def test_render_writes_images_hand_poses_truth_and_resumes(rendered):
    out, truth, output = rendered
    images = list_images(out / "images")
    hand = read_stream(out / "hand_poses.txt")
    assert len(images) == len(hand) == 8 and hand.fmt == "rwhe"
    assert truth["target"] == "chessboard:9x6:0.025" and truth["X_name"] == "T_ee_cam" and truth["image_size"] == [640, 480]
    assert cv2.imread(str(images[0]), cv2.IMREAD_UNCHANGED).shape == (480, 640)
    assert f"kinhec calibrate --images {out / 'images'}" in output
    again = CliRunner().invoke(main, ["render", str(out.parent / "data"), "--sequence", "pnp-000000", "--out", str(out)])
    assert again.exit_code == 0 and "(0 rendered now)" in again.output  # resumed: nothing rendered twice
    other = CliRunner().invoke(main, ["render", str(out.parent / "data"), "--sequence", "pnp-000000", "--out", str(out),
                                      "--blur", "1.5"])  # fmt: skip
    assert other.exit_code == 2 and "rendered with other settings" in other.output  # bad input: exit 2


def test_calibrate_from_images_lands_on_the_truth_like_the_exact_corners(rendered, tmp_path):
    out, truth, _ = rendered
    k = _intrinsics(truth)
    res_json, corners = tmp_path / "res.json", tmp_path / "corners.json"
    r = CliRunner().invoke(main, ["calibrate", "--images", str(out / "images"), "--hand", str(out / "hand_poses.txt"),
                                  "--target", truth["target"], "--intrinsics", k, "--json", str(res_json),
                                  "--save-corners", str(corners)])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "images: 8 of 8 used (chessboard:9x6:0.025, paired by order)" in r.output
    d = json.loads(res_json.read_text())
    assert [u["image"] for u in d["inputs"]["images"]["used"]] == [f"{i:04d}.png" for i in range(8)]
    rot, tr = _x_error(d["X"], truth)
    exact = calibrate(corners=out / "exact_corners.json", intrinsics=k)
    rot_e, tr_e = _x_error(exact.X, truth)
    std = np.array(d["X_std"])
    assert np.radians(rot) < 4 * np.linalg.norm(std[:3]) and tr / 1e3 < 4 * np.linalg.norm(std[3:]), (rot, tr, std)
    # as good as the exact corners, up to the board scale kinhec now estimates from 8 views (+-0.1 %: a few tenths
    # of a millimetre at this distance, within the result's own standard deviation)
    tr_scale = 2e3 * np.linalg.norm(std[3:])
    assert rot < max(3 * rot_e, 0.02) and tr < max(3 * tr_e, 0.3) + tr_scale, (rot, tr, rot_e, tr_e, tr_scale)
    obs = read_observations(corners)  # the saved detection calibrates to the same X through --corners
    assert obs.n_views == 8 and json.loads(corners.read_text())["input"]["views"][3]["meta"]["image"] == "0003.png"
    # the same to 1e-5 mm: the file carries the hand poses as quaternions (last-bit changes), which the bundle's stop
    # (steps far below the standard deviation) can carry to a few 1e-6 mm
    assert se3.pose_error(calibrate(corners=corners, intrinsics=k).X, np.array(d["X"]))[1] < 1e-5


def test_a_view_dropped_in_the_middle_does_not_shift_the_pairing(rendered, tmp_path):
    out, truth, _ = rendered
    images = tmp_path / "images"
    shutil.copytree(out / "images", images)
    cv2.imwrite(str(images / "0003.png"), np.full((480, 640), 90, np.uint8))  # undetectable on purpose
    k = _intrinsics(truth)
    res = calibrate(out / "hand_poses.txt", images=images, target=truth["target"], intrinsics=k)
    im = res.inputs["images"]
    assert res.n_pairs == 7 and [d["image"] for d in im["dropped"]] == ["0003.png"]
    assert im["dropped"][0]["reason"] == "0003.png: no 9x6 chessboard found"
    assert {u["image"]: u["pose"] for u in im["used"]}["0004.png"] == "line 6"  # line 1 is the header comment
    assert np.array_equal(res.residuals["t_s"], [0, 1, 2, 4, 5, 6, 7])
    rot, tr = _x_error(res.X, truth)
    assert rot < 0.05 and tr < 0.5, (rot, tr)
    # the control: the same images with the poses after the dropped view shifted by one are far off
    lines = (out / "hand_poses.txt").read_text().splitlines()
    shifted = tmp_path / "shifted.txt"
    shifted.write_text("\n".join(lines[:4] + lines[5:] + lines[8:9]) + "\n")  # image k >= 3 gets pose k + 1
    bad = calibrate(shifted, images=images, target=truth["target"], intrinsics=k)
    rot_bad, tr_bad = _x_error(bad.X, truth)
    assert rot_bad > 20 * rot or tr_bad > 20 * tr, (rot_bad, tr_bad)


def test_pairing_by_stamps_in_the_names_and_by_a_map(rendered, tmp_path):
    out, truth, _ = rendered
    files = list_images(out / "images")
    hand = read_stream(out / "hand_poses.txt")
    stamps = 1_700_000_000 + 2.5 * np.arange(len(files))
    named = tmp_path / "stamped"
    named.mkdir()
    for f, s in zip(files, stamps):
        shutil.copy(f, named / f"frame_{int(round(s * 1e9))}.png")  # nanoseconds
    q = np.array([se3.quaternion_from_matrix(T[:3, :3]) for T in hand.T])
    tum = tmp_path / "hand.tum"
    tum.write_text("".join(f"{s:.3f} {T[0, 3]} {T[1, 3]} {T[2, 3]} {w[1]} {w[2]} {w[3]} {w[0]}\n"
                           for s, T, w in zip(stamps + 0.01, hand.T, q)))  # fmt: skip
    stream = read_stream(tum)
    p = pair_images(list_images(named), stream, stream.T, "stamp")
    assert p.mode == "stamp" and not p.missing and np.allclose(p.T_base_ee, hand.T, atol=1e-9)
    assert "read as ns" in p.notes[0]
    p_auto = pair_images(list_images(named)[:-1], stream, stream.T, "auto")  # 7 images, 8 poses: by stamp
    assert p_auto.mode == "stamp" and np.allclose(p_auto.T_base_ee, hand.T[:7], atol=1e-9)
    mapping = tmp_path / "map.csv"
    mapping.write_text("image,pose\n0002.png,2\n0000.png,0\n0005.png,5\n")
    m = pair_images(files, hand, hand.T, str(mapping))
    assert sorted(m.missing) == [1, 3, 4, 6, 7] and np.allclose(m.T_base_ee[5], hand.T[5])
    with pytest.raises(InputError, match="8 images and 7 poses"):
        pair_images(files, hand, hand.T[:7], "order")
    assert sorted(["img10.png", "img2.png", "img1.png"], key=natural_key) == ["img1.png", "img2.png", "img10.png"]


def test_bad_image_input_is_named(rendered, tmp_path):
    out, truth, _ = rendered
    with pytest.raises(InputError, match="needs --target|expected the target's spec"):
        calibrate(out / "hand_poses.txt", images=out / "images")
    with pytest.raises(InputError, match="expected --images DIR"):
        calibrate(out / "hand_poses.txt", "cam.txt", images=out / "images", target=truth["target"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="expected image files"):
        calibrate(out / "hand_poses.txt", images=empty, target=truth["target"])
    r = CliRunner().invoke(main, ["calibrate", "--images", str(out / "images"), "--hand", str(out / "hand_poses.txt"),
                                  "--target", "charuco:5x4:0.04:0.03:DICT_4X4_50"])  # fmt: skip
    assert r.exit_code == 2 and "expected at least 3 images with the target detected, got 0 of 8" in r.output


def test_a_missing_opencv_is_one_line_naming_the_extra(rendered):
    out, truth, _ = rendered
    code = ("import sys; sys.modules['cv2'] = None\nfrom kinhec.cli import main\n"
            f"sys.argv = ['kinhec', 'calibrate', '--images', {str(out / 'images')!r}, '--hand', "
            f"{str(out / 'hand_poses.txt')!r}, '--target', 'chessboard:9x6:0.025']\nmain()")  # fmt: skip
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert 'pip install "kinhec[vision]"' in p.stderr


# --------------------------------------------------------------------------- #
# the real kuka_1 images (../shared/realdata: 85 MB, not copied into the repository)
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="session")
def kuka_1_folder() -> Path:
    return shared_data("realdata/rwhe_calib/kuka_1/images", "the RWHE-Calib kuka_1 images (85 MB)").parent


@pytest.fixture(scope="session")
def kuka_1(tmp_path_factory, kuka_1_folder):
    KUKA_1 = kuka_1_folder
    corners = tmp_path_factory.mktemp("kuka_1") / "corners.json"
    res = calibrate(KUKA_1 / "RobotPosesVec.txt", images=KUKA_1 / "images", target="chessboard:28x17:0.02",
                    save_corners=corners)  # fmt: skip
    return res, corners


def test_kuka_1_every_image_detected_on_the_frozen_corners(kuka_1, kuka_1_folder):
    res, corners = kuka_1
    assert res.n_pairs == 30 and not res.inputs["images"]["dropped"]
    frozen = json.loads((kuka_1_folder / "corners_opencv_detected.json").read_text())["views"]
    mine = json.loads(corners.read_text())["input"]["views"]
    assert [v["meta"]["image"] for v in mine] == [v["image"] for v in frozen]
    d = np.concatenate([np.linalg.norm(np.array(a["obs"]["points_2d"]) - np.array(b["corners_px"]), axis=1)
                        for a, b in zip(mine, frozen)])  # fmt: skip
    assert np.median(d) < 0.05, np.median(d)
    suite = read_observations(ROOT / "regression" / "observations" / "kuka_1.json")
    d2 = np.concatenate([np.linalg.norm(a - np.array(b["obs"]["points_2d"]), axis=1) for a, b in zip(suite.points_2d, mine)])
    assert np.median(d2) < 0.05, np.median(d2)


def test_kuka_1_x_from_the_images_is_x_from_the_frozen_corners(kuka_1):
    """Within 0.02 deg / 0.2 mm of ``--corners regression/observations/kuka_1.json``.

    ``--corners`` refines the intrinsics and the board scale beyond the suite's blessed ``he_ml`` result (whose
    board is held at its stated size: 0.9 mm away along the optical axis, as the estimated scale 0.9988 says), so
    the images are compared with the same command on the frozen corners."""
    res, _ = kuka_1
    X_ref = calibrate(corners=ROOT / "regression" / "observations" / "kuka_1.json").X
    rot, tr = se3.pose_error(res.X, X_ref)
    assert rot < 0.02 and tr < 0.2, (rot, tr)


def test_the_walk_through_of_docs_images_is_what_the_command_prints(kuka_1, kuka_1_folder, monkeypatch):
    """docs/images.md's kuka_1 output: every line shown is printed by ``kinhec calibrate --images`` (numbers compared
    as docs/build_figures.py compares them), for the OpenCV version the page names.  The command prints the session's result
    (the detection is not run twice)."""
    import re

    import cv2
    from helpers.doc_pages import console_mismatches, fenced_after

    page = (ROOT / "docs" / "images.md").read_text(encoding="utf-8")
    stated = re.search(r"prints \(with OpenCV (\d+\.\d+)", page).group(1)
    if not cv2.__version__.startswith(stated + "."):
        pytest.skip(f"docs/images.md shows the output of OpenCV {stated}, this is OpenCV {cv2.__version__}")
    res, _ = kuka_1
    monkeypatch.setattr("kinhec.calibrate.calibrate", lambda *args, **kwargs: res)
    r = CliRunner().invoke(main, ["calibrate", "--images", str(kuka_1_folder / "images"), "--hand",
                                  str(kuka_1_folder / "RobotPosesVec.txt"), "--target", "chessboard:28x17:0.02"])  # fmt: skip
    assert r.exit_code == 0, r.output
    problems = console_mismatches(fenced_after(page, "prints (with OpenCV"), r.output)
    assert not problems, "docs/images.md's walk-through is not what the command prints:\n" + "\n".join(problems)


def test_a_symmetric_chessboard_is_settled_by_the_hand_motion(rendered, tmp_path, monkeypatch):
    """An 8x6 board looks the same turned round; this sequence's camera rolls far enough that the top-left numbering
    flips 4 of its 8 views, and the hand's motion must put them back (without it no X fits the eight views)."""
    from kinhec.io import load_sequence
    from kinhec.vision import symmetry
    from kinhec.vision.render import render_sequence

    out, truth, _ = rendered
    r = render_sequence(load_sequence(out.parent / "data", "pnp-000000"), tmp_path / "r", target="chessboard:8x6:0.025")
    res = calibrate(r.hand, images=r.out / "images", target=r.target, intrinsics=r.intrinsics)
    note = next(n for n in res.notes if "turned by half a turn" in n)
    turned = res.inputs["images"]["renumbered"]
    assert turned and ", ".join(turned) in note and not res.outliers, note
    rot, tr = se3.pose_error(res.X, r.X)
    X, X_true = np.asarray(res.X), np.asarray(r.X)
    e = np.r_[se3.so3_log(X[:3, :3].T @ X_true[:3, :3]), X_true[:3, 3] - X[:3, 3]]
    assert np.all(np.abs(e) < 4 * np.asarray(res.X_std)), (e, res.X_std, note)
    # docs/images.md quotes this run
    import re

    from helpers.doc_pages import build_figures

    page = (ROOT / "docs" / "images.md").read_text(encoding="utf-8")
    m = re.search(r"top-left numbering, (\d+) of (\d+) views are renumbered and `X` lands (\S+) deg / (\S+) mm",
                  " ".join(page.split()))  # fmt: skip
    assert m is not None and build_figures().mismatches(" ".join(m.groups()),
                                                         f"{len(turned)} {res.n_pairs} {rot} {tr}") == [], (turned, rot, tr)  # fmt: skip
    monkeypatch.setattr(symmetry, "resolve_half_turns", lambda T, *a: (np.zeros(len(T), dtype=bool), 0.0))
    bad = calibrate(r.hand, images=r.out / "images", target=r.target, intrinsics=r.intrinsics)
    # without the hand's motion the views numbered from the other end (4 of 8 here) and the other four each agree
    # among themselves on a differently turned board: no X fits the eight views, and the run says X is not determined
    # (on an earlier draw of this scene, 5 against 3, the fit kept the five and lost the other three as outliers);
    # the motion settles all eight
    assert res.determined and not bad.determined, (res.observability, bad.observability)
    assert any("X is poorly determined" in w for w in bad.warnings), bad.warnings


def test_another_corner_method_replaces_the_first_only_beyond_the_sampling_margin():
    from types import SimpleNamespace

    from kinhec.calibrate import images as im

    def run(rot, trans):  # a fake calibration: only the robot error level it estimated matters here
        return (None, None, None, SimpleNamespace(observability={"robot_std_rad_m": (rot, trans)}))

    n = 12  # margin 1 / sqrt(36) = 1/6 in log(rot std) + log(trans std)
    first = run(1e-3, 5e-4)
    for shrink, chosen in ((0.10, "sb"), (0.15, "sb"), (0.20, "classic"), (0.50, "classic")):
        runs = {"sb": first, "classic": run(1e-3 * np.exp(-shrink), 5e-4)}
        assert im._agrees_best(runs, n) == chosen, shrink
    # a method that agrees worse never replaces the first, however small the margin
    assert im._agrees_best({"sb": first, "classic": run(2e-3, 5e-4)}, 10_000) == "sb"


def test_an_image_inside_a_hole_of_the_hand_log_gets_no_pose():
    from types import SimpleNamespace

    # a 100 Hz hand log over 10 s with nothing logged from 4 s to 6 s; images stamped before, in and after the hole
    t = np.arange(0.0, 10.0, 0.01)
    t = t[(t < 4.0) | (t > 6.0 - 1e-9)]
    w = np.stack([0.4 * np.sin(0.7 * t), 0.3 * np.cos(0.5 * t), 0.2 * t / 10], axis=1)
    A = se3.transform_from_rotation_translation(se3.so3_exp(w), np.stack([0.5 + 0.1 * np.sin(t), 0.1 * np.cos(t),
                                                                          0.4 + 0.01 * t], axis=1))
    hand = SimpleNamespace(t=t, lines=np.arange(1, t.size + 1), path="hand.tum", fmt="tum")
    stamps = [1.005, 3.5, 4.02, 5.0, 5.98, 7.255]
    images = [Path(f"frame_{s:.3f}.png") for s in stamps]
    p = pair_images(images, hand, A, "stamp")
    assert sorted(p.missing) == [2, 3, 4]  # 4.02 s, 5.0 s and 5.98 s lie between the poses at 3.99 s and 6.00 s
    assert all("gap" in p.missing[k] for k in (2, 3, 4))
    assert np.isnan(p.T_base_ee[[2, 3, 4]]).all()
    np.testing.assert_array_equal(p.paired, [0, 1, 5])
    for k in (0, 1, 5):  # the others are interpolated between their neighbours
        np.testing.assert_allclose(p.T_base_ee[k], se3.interpolate_poses(t, A, np.array([stamps[k]]))[0],
                                   atol=1e-12)
