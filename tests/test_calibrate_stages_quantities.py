"""The staged calibrate pipeline (:mod:`kinhec.calibrate.stages`, options, inputs, frames) against ground truth and
exact identities: the reading's units when the files are exchanged, the reported clock offset, the residuals' units,
the eye-bias prior from ``intrinsics_std``, the scale check's delta method and the rig's composed deviations."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from kinhec.calibrate import calibrate
from kinhec.calibrate.stages import rig, verdict
from kinhec.geometry import se3

from helpers.recordings import X_TRUE, rig as rig_folder, streams, write_tum


@pytest.fixture(scope="module")
def exchanged(tmp_path_factory):
    """Stamped streams on one clock, the hand's in millimetres, given exchanged (--hand the camera's file) with
    their units as given (``m,mm``), a stated clock offset of 0 and ``intrinsics_std`` (2 %, 0.005)."""
    d = tmp_path_factory.mktemp("exchanged")
    t, A, C = streams(np.random.default_rng(3), n=40)
    A_mm = A.copy()
    A_mm[:, :3, 3] *= 1000.0
    hand, eye = write_tum(d / "hand_mm.txt", t, A_mm), write_tum(d / "eye_m.txt", t, C)
    res = calibrate(str(eye), str(hand), setup="eye_in_hand", offset=0.0, units="m,mm", intrinsics_std=(0.02, 0.005))
    return res, hand


def test_exchanged_files_keep_their_units(exchanged):
    res, hand = exchanged
    assert res.inputs["hand"] == str(hand) and res.inputs["units"] == "mm,m"
    # the hand's millimetres converted as the hand's: X within 4 sigma of the truth (sigma about 1 to 10 mm)
    err = np.abs(res.X[:3, 3] - X_TRUE[:3, 3])
    assert res.determined and np.all(err < 4 * res.X_std[3:] + 1e-4), (err, res.X_std)


def test_a_stated_clock_offset_is_reported_as_stated(exchanged):
    res, _ = exchanged
    assert res.time_offset_s == 0.0 and res.time_offset_std_s is None


def test_rotation_residuals_are_the_pairs_angles_in_degrees(exchanged):
    res, _ = exchanged
    A, B = res.pairs
    E = se3.invert_transform(A @ res.X) @ res.Y @ B  # A X = Y B eye-in-hand: E is the pair's discrepancy
    angle = np.degrees(np.linalg.norm(se3.so3_log(E[:, :3, :3]), axis=-1))
    assert np.allclose(res.residuals["rot_deg"], angle, rtol=1e-9, atol=1e-12)


def test_intrinsics_std_sets_the_eye_bias_prior(exchanged):
    # (focal length fraction, principal point over focal length): the rotations and shifts take the second,
    # the depth stretches the first
    res, _ = exchanged
    p = res.observability["eye_bias"]["prior_std"]
    assert [p[k] for k in ("rot_x_rad", "rot_y_rad", "shift_x_per_m", "shift_y_per_m")] == [0.005] * 4
    assert [p[k] for k in ("depth_stretch", "depth_stretch_turning")] == [0.02] * 2


@pytest.mark.parametrize("r, r_std", [(2.0, 0.3), (0.5, 0.12), (3.0, 0.2), (0.3, 0.02)])
def test_scale_check_uses_the_delta_method_on_log_r(r, r_std):
    # std(log r) = std(r) / r: the eye translations are not metric when |log r| exceeds three of them
    eye = SimpleNamespace(path="eye.txt")
    warn = verdict.check_scale(eye, SimpleNamespace(scale=r, scale_std=r_std), False)
    assert (warn is not None) == (abs(math.log(r)) > 3 * r_std / r)
    assert verdict.check_scale(eye, SimpleNamespace(scale=r, scale_std=r_std), True) is None


def test_rig_composed_deviations_of_an_isotropic_covariance():
    # inv(I) X2 with X2's covariance isotropic in rotation (a) and translation (b): the composed transform's
    # deviations are a and b exactly (the first order of the retraction, whatever X2's rotation)
    X2 = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -1.0, 0.5]), [0.1, 0.2, -0.3])
    a, b = 1e-3, 2e-3
    Z, s = rig.compose_std(np.eye(4), np.zeros((6, 6)), X2, np.diag([a * a] * 3 + [b * b] * 3))
    assert np.allclose(Z, X2, atol=1e-15)
    assert np.allclose(s, [a] * 3 + [b] * 3, rtol=1e-6, atol=0)


def test_units_given_override_the_files_own():
    # a file that states millimetres (Tabb's, say) read with units given as metres: the option wins, exactly
    from kinhec.calibrate.frames import eye_solver_form, hand_metric

    t, A, C = streams(np.random.default_rng(4), n=5)
    s = SimpleNamespace(T=A, direction="base_T_ee", units="mm")
    assert np.array_equal(hand_metric(s, None, "m"), A)
    scaled = hand_metric(s, None, None)
    assert np.array_equal(scaled[:, :3, :3], A[:, :3, :3])
    assert np.allclose(scaled[:, :3, 3], A[:, :3, 3] / 1000, rtol=1e-15)
    e = SimpleNamespace(T=C, direction="cam_T_target", units="mm", fmt="tum", span=lambda: "eye")
    assert np.allclose(eye_solver_form(e, None, "m", "eye_to_hand"), C, rtol=0, atol=0)


def test_offset_curve_is_21_offsets_a_period_apart_centred_on_the_estimate(tmp_path):
    t, A, C = streams(np.random.default_rng(5), n=40)
    hand, eye = write_tum(tmp_path / "hand.txt", t, A), write_tum(tmp_path / "eye.txt", t + 0.03, C)
    res = calibrate(str(hand), str(eye), setup="eye_in_hand", eye_pose="cam_T_target")
    assert res.time_offset_std_s is not None  # estimated
    offs, cost = np.asarray(res.offset_curve["offset_s"]), np.asarray(res.offset_curve["cost"])
    # period 0.5 s (both streams): the estimate at the centre, ten periods either side
    assert np.allclose(offs, res.time_offset_s + 0.5 * np.arange(-10, 11), rtol=0, atol=1e-12)
    assert cost.shape == (21,) and int(np.argmin(cost)) == 10


# --------------------------------------------------------------------------- #
# every stage on its own: conventions, pairing, solve, uncertainty, verdict, outputs
# --------------------------------------------------------------------------- #
def _stream(T, t=None, *, path="f.txt", direction=None, units=None, notes=()):
    from kinhec.calibrate.readers import PoseStream

    return PoseStream(T=T, t=t, lines=np.arange(2, len(T) + 2), path=path, name=path.split(".")[0], fmt="tum",
                      direction=direction, units=units, notes=list(notes))


def _decision(hand, eye, *, swap=False, units=("m", "m"), eye_pose=None, hand_pose=None, quat=(None, None)):
    reading = SimpleNamespace(swap=swap, units=units, hand_pose=hand_pose, eye_pose=eye_pose, quat=quat,
                              setup="eye_in_hand")
    return SimpleNamespace(reading=reading, hand=hand, eye=eye, notes=["decision note"], warnings=["decision warning"],
                           coarse=None, alignment=None, report={"ranking": []}, scale=1.0, scale_std=0.01)


@pytest.mark.parametrize("setup, eye_pose, file_domain", [
    ("eye_in_hand", "cam_T_target", True), ("eye_in_hand", "target_T_cam", False),
    ("eye_to_hand", "cam_T_target", False), ("eye_to_hand", "target_T_cam", True),
    ("eye_in_hand", None, True), ("eye_to_hand", None, False)])  # fmt: skip
def test_conventions_file_domain_and_solver_form(setup, eye_pose, file_domain):
    # the file's own domain is T_cam_target's: eye-in-hand with T_cam_target files, eye-to-hand with T_target_cam
    # (unstated: the file's poses are T_cam_target); B is T_target_cam eye-in-hand, T_cam_marker eye-to-hand
    from kinhec.calibrate.stages.conventions import apply_reading

    _, A, C = streams(np.random.default_rng(6), n=4)
    stored = C if eye_pose in (None, "cam_T_target") else se3.invert_transform(C)
    hand, eye = _stream(A, notes=["hand note"]), _stream(stored, path="eye.txt", notes=["eye note"])
    cv = apply_reading(_decision(hand, eye, eye_pose=eye_pose), setup)
    assert cv.file_domain is file_domain
    expected_B = se3.invert_transform(C) if setup == "eye_in_hand" else C
    assert np.allclose(cv.B, expected_B, rtol=0, atol=1e-12)
    assert np.array_equal(cv.A, A)
    assert cv.notes == ["hand note", "eye note", "decision note"] and cv.warnings == ["decision warning"]
    assert cv.where == "f.txt, lines 2-5 and eye.txt, lines 2-5"


@pytest.mark.parametrize("swap", [False, True])
def test_conventions_units_follow_the_files_when_exchanged(swap):
    # units are stated per file as given (--hand, --eye): exchanged, the hand is read in the second file's unit
    from kinhec.calibrate.stages.conventions import apply_reading

    _, A, C = streams(np.random.default_rng(7), n=3)
    A_mm, C_mm = A.copy(), C.copy()
    A_mm[:, :3, 3] *= 1000.0
    C_mm[:, :3, 3] *= 1000.0
    # as given: (--hand in mm, --eye in m); exchanged the hand stream is the file given as --eye
    units = ("m", "mm") if swap else ("mm", "m")
    cv = apply_reading(_decision(_stream(A_mm), _stream(C), swap=swap, units=units), "eye_to_hand")
    assert np.allclose(cv.A[:, :3, 3], A[:, :3, 3], rtol=1e-15, atol=0) and np.allclose(cv.B, C, rtol=0, atol=1e-15)
    cv = apply_reading(_decision(_stream(A), _stream(C_mm), swap=swap, units=units[::-1]), "eye_to_hand")
    assert np.allclose(cv.B[:, :3, 3], C[:, :3, 3], rtol=1e-15, atol=0) and np.array_equal(cv.A, A)


def test_pairing_refuses_an_offset_without_stamps_and_too_few_poses():
    from kinhec.calibrate.stages.conventions import apply_reading
    from kinhec.calibrate.stages.pairing import pair
    from kinhec.util.errors import InputError

    _, A, C = streams(np.random.default_rng(8), n=5)
    cv = apply_reading(_decision(_stream(A, path="h.txt"), _stream(C, path="e.txt")), "eye_in_hand")
    with pytest.raises(InputError) as e:
        pair(cv, SimpleNamespace(offset=0.1))
    assert str(e.value) == "h.txt / e.txt: a clock offset needs time stamps in both files"
    short = apply_reading(_decision(_stream(A[:2], path="h.txt"), _stream(C[:2], path="e.txt")), "eye_in_hand")
    with pytest.raises(InputError, match=r"^h\.txt, lines 2-3 and e\.txt, lines 2-3: expected at least 3 pose pairs, got 2$"):
        pair(short, SimpleNamespace(offset="auto"))


@pytest.mark.parametrize("estimate_offset", [True, False])
def test_uncertainty_reads_the_covariance_in_its_order(estimate_offset):
    # X (6), Y (6), then the offset when estimated, then the log scale: std(s) = s std(log s)
    from kinhec.calibrate.stages.uncertainty import spread

    p = 14 if estimate_offset else 13
    std = np.arange(1, p + 1) * 1e-3
    sol = SimpleNamespace(cov=np.diag(std**2), scale=2.5)
    sp = spread(SimpleNamespace(sol=sol), estimate_offset, SimpleNamespace(fixed_scale=False))
    assert np.allclose(sp.X_std, std[:6], rtol=1e-12) and np.allclose(sp.Y_std, std[6:12], rtol=1e-12)
    if estimate_offset:
        assert sp.offset_std == pytest.approx(0.013, rel=1e-12)
    else:
        assert sp.offset_std is None
    assert sp.scale_std == pytest.approx(2.5 * std[-1], rel=1e-12) and sol.scale == 2.5
    fixed = SimpleNamespace(cov=np.diag(std[:12] ** 2), scale=1.3)
    sp = spread(SimpleNamespace(sol=fixed), False, SimpleNamespace(fixed_scale=True))
    assert sp.scale_std == 0.0 and fixed.scale == 1.0 and np.allclose(sp.Y_std, std[6:12], rtol=1e-12)


@pytest.mark.parametrize("r, warns", [(0.69, True), (0.7, True), (0.71, False), (1.39, False), (1.4, True), (1.41, True), (0.0, False),
                                      (-2.0, False), (float("nan"), False), (float("inf"), False)])
def test_scale_check_range_edges(r, warns):
    # outside the open range (0.7, 1.4) with no usable standard deviation: a monocular stream; a ratio <= 0 or not finite: none
    eye = SimpleNamespace(path="eye.txt")
    for r_std in (float("nan"), 0.0):
        warn = verdict.check_scale(eye, SimpleNamespace(scale=r, scale_std=r_std), False)
        assert (warn is not None) == warns
    if warns:
        assert warn == (f"eye.txt: the eye translations are {r:.3g} times the metric ones: a monocular "
                        "(up-to-scale) stream needs --scale")


def test_reading_inputs_name_the_files_as_given():
    from kinhec.calibrate.stages.outputs import reading_inputs

    hs = SimpleNamespace(path="h.txt")
    dec = _decision(hs, hs, swap=True, units=("mm", "m"), hand_pose="ee_T_base", eye_pose="target_T_cam",
                    quat=(None, "wxyz"))
    assert reading_inputs(dec) == {"hand_pose": "ee_T_base", "eye_pose": "target_T_cam", "units": "m,mm",
                                   "conventions": {"ranking": []}, "quat_order": "-,wxyz"}
    dec = _decision(hs, hs, swap=False, units=("mm", "mm"))
    assert reading_inputs(dec) == {"hand_pose": None, "eye_pose": None, "units": "mm", "conventions": {"ranking": []}}
    assert reading_inputs(_decision(hs, hs, units=("mm", "m")))["units"] == "mm,m"


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    """The stages run one by one on stamped streams: the hand at 0.5 s, the eye at 1 s (every other row),
    a clock offset estimated."""
    from kinhec.calibrate import firewall as fw
    from kinhec.calibrate.options import parse_options
    from kinhec.calibrate.readers import read_stream
    from kinhec.calibrate.stages import conventions, outputs, pairing, solve, uncertainty

    d = tmp_path_factory.mktemp("staged")
    t, A, C = streams(np.random.default_rng(3), n=40)
    h, e = write_tum(d / "hand.txt", t, A), write_tum(d / "eye.txt", t[::2], C[::2])
    kw = dict(setup="eye_in_hand", fmt=None, hand_pose=None, eye_pose="cam_T_target", units=None, offset="auto",
              solver=None, force=False, max_offset_s=0.5, intrinsics=None, pairing="auto", save_corners=None,
              progress=None, rig_world="auto", quat_order=None, intrinsics_std=None, stamp_unit=None, workers=None,
              fast_detection=False)
    opts = parse_options(str(h), [str(e)], **kw)
    dec = fw.check(read_stream(str(h)), read_stream(str(e)), setup="eye_in_hand", **opts.firewall_options())
    cv = conventions.apply_reading(dec, "eye_in_hand")
    p = pairing.pair(cv, opts)
    s = solve.solve(cv, p, opts, opts.eye_bias_prior)
    sp = uncertainty.spread(s, p.estimate_offset, opts)
    v = verdict.judge(cv, p, s, sp, opts, opts.eye_bias_prior)
    return SimpleNamespace(cv=cv, paired=p, solved=s, spread=sp, result=outputs.result(cv, p, s, sp, v))


def test_pairing_period_and_margin_of_streams_at_two_rates(staged):
    # the offset curve's step is the shorter period (0.5 s), the offset's margin the longer one (1 s)
    p = staged.paired
    assert p.stamped and p.estimate_offset and p.period_s == 0.5 and p.margin_s == 1.0
    offs = np.asarray(staged.result.offset_curve["offset_s"])
    assert np.allclose(np.diff(offs), 0.5, rtol=0, atol=1e-12)
    # 20 eye samples, the first and the last without hand poses within the margin of the offset: 18 pairs
    assert staged.result.time_offset_peak_corr == p.peak and staged.result.n_pairs == len(p) == 18


def test_solve_names_the_residual_domain_it_chose(staged):
    # inverse domain: inv(A X) Y against inv(B) = T_cam_target eye-in-hand; else inv(Y) A X against B = T_target_cam
    name = "T_cam_target" if staged.solved.inverse_domain else "T_target_cam"
    assert f"residuals compared as {name} (the noise model that fits best)" in staged.cv.notes


def test_translation_residuals_are_millimetres_in_the_fits_domain(staged):
    # by hand from A X = Y B in the domain the fit chose, translations in metres, reported in millimetres
    res = staged.result
    A, B = res.pairs
    if staged.solved.inverse_domain:
        P, M = se3.invert_transform(A @ res.X) @ res.Y, se3.invert_transform(B)
    else:
        P, M = se3.invert_transform(res.Y) @ A @ res.X, B
    r_t = res.scale * P[:, :3, 3] - M[:, :3, 3]
    assert np.allclose(res.residuals["trans_mm"], 1000.0 * np.linalg.norm(r_t, axis=1), rtol=1e-9, atol=1e-12)
    assert 0.3 < np.median(res.residuals["trans_mm"]) < 5.0  # noise of 0.5 mm and 1 mrad at 0.8 m: millimetres
    assert np.array_equal(res.residuals["t_s"], np.asarray(staged.solved.pairing.t, dtype=float))


def test_uncertainty_of_the_staged_run_is_the_covariance_diagonal(staged):
    sol, sp = staged.solved.sol, staged.spread
    std = np.sqrt(np.diag(sol.cov))
    assert np.array_equal(sp.X_std, std[:6]) and sp.offset_std == std[12] and sp.scale_std == sol.scale * std[13]
    # the truth within 4 sigma: the offset 0, X's translation
    assert abs(staged.result.time_offset_s) < 4 * sp.offset_std
    assert np.all(np.abs(staged.result.X[:3, 3] - X_TRUE[:3, 3]) < 4 * sp.X_std[3:])


@pytest.fixture(scope="module")
def corrupted(tmp_path_factory):
    """40 pairs at a stated offset of 0, the eye translations of k of them moved by 7 cm (k = 8, 9)."""
    d = tmp_path_factory.mktemp("corrupted")
    t, A, C = streams(np.random.default_rng(3), n=40)
    bad = np.array([3, 5, 9, 14, 22, 27, 31, 35, 38])
    out = {}
    for k in (8, 9):
        C2 = C.copy()
        C2[bad[:k], :3, 3] += [0.05, -0.04, 0.03]
        h, e = write_tum(d / f"h{k}.txt", t, A), write_tum(d / f"e{k}.txt", t, C2)
        out[k] = (calibrate(str(h), str(e), setup="eye_in_hand", eye_pose="cam_T_target", offset=0.0), bad[:k])
    return out


@pytest.mark.parametrize("k", [8, 9])
def test_outliers_are_the_corrupted_pairs_and_warned_above_a_fifth(corrupted, k):
    res, bad = corrupted[k]
    assert res.outliers == sorted(bad.tolist())
    assert np.array_equal(np.flatnonzero(res.residuals["outlier"]), np.sort(bad))
    share = [w for w in res.warnings if w.endswith("are outliers")]
    # 8 of 40 is a fifth exactly: not more than it
    assert share == ([] if k == 8 else ["9 of 40 pairs (22 %) are outliers"])
    assert res.time_offset_s == 0.0 and res.offset_curve is None and res.time_offset_std_s is None


# --------------------------------------------------------------------------- #
# the rig: composed camera-to-camera transforms and their deviations
# --------------------------------------------------------------------------- #
def test_rig_composed_deviations_of_the_first_transform():
    # inv(X1) X2 with X1 = (R1, t1) moved by (phi, d) (rotation in its child frame, translation in its parent):
    # the composed rotation moves by -R2^T R1 phi, its translation by -R1^T d - phi x v with v = R1^T (t2 - t1);
    # isotropic (a, b): rotation deviations a, translation sqrt(b^2 + a^2 (|v|^2 - v_i^2))
    X1 = se3.transform_from_rotation_translation(se3.so3_exp([1.1, 0.4, -0.7]), [0.3, -0.2, 0.5])
    X2 = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -1.0, 0.5]), [0.1, 0.2, -0.3])
    a, b = 1e-3, 2e-3
    Z, s = rig.compose_std(X1, np.diag([a * a] * 3 + [b * b] * 3), X2, np.zeros((6, 6)))
    assert np.allclose(Z, np.linalg.inv(X1) @ X2, rtol=0, atol=1e-14)
    v = X1[:3, :3].T @ (X2[:3, 3] - X1[:3, 3])
    assert np.allclose(s, np.r_[[a] * 3, np.sqrt(b * b + a * a * (v @ v - v * v))], rtol=1e-6, atol=0)
    # anisotropic: first order by hand, rows (rotation, translation) over columns (phi, d)
    R1, R2 = X1[:3, :3], X2[:3, :3]
    vx = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    J = np.block([[-R2.T @ R1, np.zeros((3, 3))], [vx, -R1.T]])
    C1 = np.diag(np.array([1.0, 3.0, 0.5, 2.0, 0.3, 4.0]) * 1e-3) ** 2
    _, s_an = rig.compose_std(X1, C1, X2, np.zeros((6, 6)))
    assert np.allclose(s_an, np.sqrt(np.diag(J @ C1 @ J.T)), rtol=1e-6, atol=0)
    # the deviations of the two add in variance
    _, s2 = rig.compose_std(X1, np.zeros((6, 6)), X2, np.diag([a * a] * 3 + [b * b] * 3))
    _, s12 = rig.compose_std(X1, np.diag([a * a] * 3 + [b * b] * 3), X2, np.diag([a * a] * 3 + [b * b] * 3))
    assert np.allclose(s12**2, s**2 + s2**2, rtol=1e-6, atol=0)


@pytest.fixture(scope="module")
def two_camera_rig(tmp_path_factory):
    d = tmp_path_factory.mktemp("rig")
    X = rig_folder(d, np.random.default_rng(3), n=30, cams=2)
    return d, X


def test_rig_per_camera_worlds_compose_the_per_camera_fits(two_camera_rig):
    d, X = two_camera_rig
    res = calibrate(d / "body.tum", d, setup="rig", offset="none", rig_world="per_camera")
    per = res.rig.per_camera
    assert res.rig.joint is None and list(res.rig.cam_T_cam) == ["cam01_T_cam02"]
    # a_T_b = inv(X_a) X_b of the cameras' own fits, exactly, and near the truth
    Z = res.rig.cam_T_cam["cam01_T_cam02"]
    assert np.allclose(Z, se3.invert_transform(per["cam01"].X) @ per["cam02"].X, rtol=0, atol=1e-12)
    Zt = se3.invert_transform(X["cam01"]) @ X["cam02"]
    err = np.r_[se3.so3_log(Zt[:3, :3].T @ Z[:3, :3]), Z[:3, 3] - Zt[:3, 3]]
    assert np.all(np.abs(err) < 4 * res.rig.cam_T_cam_std["cam01_T_cam02"])
    # its deviations compose the cameras' X covariances (the X block of each fit, not Y's)
    for k in ("cam01", "cam02"):
        assert np.allclose(np.sqrt(np.diag(per[k].cov[:6, :6])), per[k].X_std, rtol=1e-12, atol=0)
    _, s = rig.compose_std(per["cam01"].X, per["cam01"].cov[:6, :6], per["cam02"].X, per["cam02"].cov[:6, :6])
    assert np.allclose(res.rig.cam_T_cam_std["cam01_T_cam02"], s, rtol=1e-12, atol=0)
    assert res.setup == "rig" and res.observability["determined"] == all(r.determined for r in per.values())
    assert set(res.observability["per_camera"]) == {"cam01", "cam02"}


def test_rig_without_a_body_has_the_reference_at_the_identity(two_camera_rig):
    d, X = two_camera_rig
    res = calibrate(None, d, setup="rig", offset="none")
    assert res.rig.cameras == ["cam01", "cam02"] and (res.X_name, res.Y_name) == ("T_cam01_cam02", "T_world_world")
    assert np.array_equal(res.rig.X["cam01"], np.eye(4)) and np.array_equal(res.rig.X_std["cam01"], np.zeros(6))
    Zt = se3.invert_transform(X["cam01"]) @ X["cam02"]
    assert np.all(np.abs(res.rig.X["cam02"][:3, 3] - Zt[:3, 3]) < 4 * res.rig.X_std["cam02"][3:])


# --------------------------------------------------------------------------- #
# the scale: eye translations twice the robot's
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def doubled(tmp_path_factory):
    """40 pairs at a stated offset of 0 whose eye translations are twice the metric ones, calibrated without a
    scale option, with ``scale=True`` and with ``scale="fixed"``."""
    d = tmp_path_factory.mktemp("doubled")
    t, A, C = streams(np.random.default_rng(3), n=40)
    C2 = C.copy()
    C2[:, :3, 3] *= 2.0
    h, e = write_tum(d / "hand.txt", t, A), write_tum(d / "eye2.txt", t, C2)
    kw = dict(setup="eye_in_hand", eye_pose="cam_T_target", offset=0.0)
    return {k: calibrate(str(h), str(e), scale=s, **kw) for k, s in (("none", False), ("free", True),
                                                                      ("fixed", "fixed"))}, e


def test_a_scale_far_from_metric_is_freed_with_one_warning(doubled):
    runs, eye = doubled
    res = runs["none"]
    assert abs(res.scale - 2.0) < 4 * res.scale_std
    assert res.warnings == [f"{eye}: the eye translations are {res.scale:.4g} times the robot's (+- {res.scale_std:.2g}): "
                            "not metric -- a monocular (up-to-scale) stream (say so with --scale) or translations in "
                            "other units; the scale was estimated freely and X and Y are given for it"]
    assert any(n.startswith(f"the eye translations are {res.scale:.5g} times the robot's, beyond what the scale's "
                            "prior of 0.5 % allows") for n in res.notes)
    assert np.all(np.abs(res.X[:3, 3] - X_TRUE[:3, 3]) < 4 * res.X_std[3:])


def test_a_monocular_scale_is_estimated_freely(doubled):
    runs, _ = doubled
    res = runs["free"]
    assert abs(res.scale - 2.0) < 4 * res.scale_std and res.scale_std > 0
    assert res.warnings == [] and res.observability["scale"]["mode"] == "monocular"
    assert np.all(np.abs(res.X[:3, 3] - X_TRUE[:3, 3]) < 4 * res.X_std[3:])
    # the same scale as the freed metric fit (the same data, no prior either way)
    assert res.scale == pytest.approx(runs["none"].scale, abs=2 * res.scale_std)


def test_a_fixed_scale_is_one_and_warns_of_the_monocular_stream(doubled):
    runs, eye = doubled
    res = runs["fixed"]
    assert res.scale == 1.0 and res.scale_std == 0.0 and res.observability["scale"]["mode"] == "fixed"
    assert (f"{eye}: the eye translations are 2 times the metric ones: a monocular (up-to-scale) stream needs "
            "--scale") in res.warnings
    # held at 1, the translations of X absorb the factor: far from the truth (tens of millimetres)
    assert np.max(np.abs(res.X[:3, 3] - X_TRUE[:3, 3])) > 0.02


def test_pairing_by_order_when_one_file_has_no_stamps():
    from kinhec.calibrate.stages.conventions import apply_reading
    from kinhec.calibrate.stages.pairing import pair

    t, A, C = streams(np.random.default_rng(9), n=6)
    A[3] = A[2]
    C[3] = C[2]  # a pair written twice: counted once
    cv = apply_reading(_decision(_stream(A, t, path="h.txt"), _stream(C, path="e.txt")), "eye_to_hand")
    p = pair(cv, SimpleNamespace(offset="auto"))
    assert not p.stamped and p.offset0 is None and len(p) == 5
    assert np.array_equal(p.pairing.A, A[[0, 1, 2, 4, 5]]) and np.array_equal(p.pairing.hand_lines, [2, 3, 4, 6, 7])
    assert cv.notes[-1] == ("h.txt, lines 2-7 and e.txt, lines 2-7: 1 of 6 pairs repeat an earlier pair exactly "
                            "(eye lines 5): the same measurement written again, counted once")


def test_verdict_counts_inliers_and_notes_the_inflation(staged, corrupted):
    res = staged.result
    sol = staged.solved.sol
    assert res.observability["n_inliers"] == int(sol.inliers.sum()) == res.n_pairs - len(res.outliers)
    from kinhec.calibrate import solve as sv

    assert (sv.inflation_note(sol) in res.notes) == (sol.inflation > 1.0)
    assert corrupted[9][0].observability["n_inliers"] == 31


def test_a_run_of_bad_pairs_is_kept_with_the_gates_count(tmp_path):
    # 12 consecutive pairs of 40 moved by 7 cm: not scattered gross errors but a run -- every pair kept, the gate's
    # count and share named
    t, A, C = streams(np.random.default_rng(3), n=40)
    C[15:27, :3, 3] += [0.05, -0.04, 0.03]
    h, e = write_tum(tmp_path / "h.txt", t, A), write_tum(tmp_path / "e.txt", t, C)
    res = calibrate(str(h), str(e), setup="eye_in_hand", eye_pose="cam_T_target", offset=0.0)
    assert res.outliers == [] and res.observability["n_inliers"] == 40 and not res.residuals["outlier"].any()
    assert len(res.warnings) == 1 and res.warnings[0].startswith(
        "the chi-square gate labelled 12 of 40 pairs (30 %) outliers, more than the fit supports: they come in 3 runs "
        "of consecutive pairs")
    assert res.warnings[0].endswith("; all pairs kept (their residuals are not independent Gaussian noise, and X "
                                    "carries that error)")


def test_offset_curve_cost_and_default_work_point_by_hand(staged):
    # the curve's centre: the mean over the pairs at the estimated offset of r^T S^-1 r under the fit's noise
    # covariance, each capped at the gate's 99.99 % quantile
    from kinhec.calibrate import solve as sv

    res, sol = staged.result, staged.solved.sol
    A, B = staged.solved.pairing.at(sol.offset)
    r = sv.residuals(A, B, sol.X, sol.Y, sol.scale, staged.solved.inverse_domain)
    d2 = np.einsum("ni,ij,nj->n", r, np.linalg.inv(sol.noise_cov), r)
    assert res.offset_curve["cost"][10] == pytest.approx(np.mean(np.minimum(d2, sv.CHI2_6_9999)), rel=1e-9)
    # the work point: the target's mean position in the camera (B = T_target_cam), in metres (the scale divided out)
    assert np.allclose(res.point_cam_m, se3.invert_transform(B)[:, :3, 3].mean(axis=0) / sol.scale, rtol=0, atol=1e-12)


def test_a_rig_names_each_cameras_warnings_and_keeps_each_cameras_own_result(tmp_path):
    # cam02's positions 8 cm noisy: its X is poorly determined, cam01's is not; the rig is determined only when
    # every camera is, its warnings name their camera, and each camera's own result stays its own
    rig_folder(tmp_path, np.random.default_rng(3), n=30, cams=2)
    f = tmp_path / "gt_poses" / "cam02_poses.txt"
    rows = np.loadtxt(f)
    rows[:, 1:4] += np.random.default_rng(5).normal(0, 0.08, (len(rows), 3))
    np.savetxt(f, rows)
    res = calibrate(tmp_path / "body.tum", tmp_path, setup="rig", offset="none", rig_world="per_camera")
    per = res.rig.per_camera
    assert per["cam01"].determined and not per["cam02"].determined and not res.determined
    assert per["cam02"].warnings and res.warnings == [f"cam02: {w}" for w in per["cam02"].warnings]
    assert per["cam01"].warnings == [] and per["cam01"].setup == "eye_in_hand" and per["cam01"].rig is None
    assert res.setup == "rig" and res.observability["per_camera"]["cam01"]["determined"] is True
    assert np.array_equal(res.X, per["cam01"].X)


@pytest.mark.parametrize("setup", ["eye_in_hand", "eye_to_hand"])
def test_the_eye_poses_systematic_error_is_taken_in_the_setups_camera_frame(tmp_path, monkeypatch, setup):
    """The intrinsics behind the eye poses err in the camera's frame: the refinement is told which side of the
    chain the camera is on (the flange eye-in-hand, the base eye-to-hand), and the prior is passed on."""
    from kinhec.calibrate import solve as sv

    rng = np.random.default_rng(12)
    t, A, C = streams(rng, 30)
    if setup == "eye_to_hand":  # the same flange poses seen by a camera 1 m in front of them: C = inv(Y) A X
        R = np.array([[0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])  # looking along -x of the base
        Y = se3.transform_from_rotation_translation(R, [1.5, 0.0, 0.4])
        C = se3.invert_transform(Y) @ A @ X_TRUE @ se3.se3_exp(np.c_[rng.normal(0, 1e-3, (30, 3)),
                                                                      rng.normal(0, 5e-4, (30, 3))])
    seen = []
    real = sv.refine

    def spy(*args, **kw):
        seen.append((kw.get("eye_in_hand"), kw.get("eye_bias_prior") is not None))
        return real(*args, **kw)

    monkeypatch.setattr(sv, "refine", spy)
    calibrate(write_tum(tmp_path / "h.tum", t, A), [write_tum(tmp_path / "e.tum", t, C)], setup=setup,
              offset="none", force=True)  # fmt: skip (force: the files' roles as given)
    assert seen and all(s == (setup == "eye_in_hand", True) for s in seen), seen
