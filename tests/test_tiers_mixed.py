"""The mixed track's camera-noise draw: ranges, independence, shares, seeded determinism, stratified outliers."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.synth import tiers
from kinhec.util.errors import InputError, UnknownNameError

N = 3000


def _draws(model: str, configuration: str = "eye_in_hand", seed: int = 7) -> list[dict]:
    return [tiers.mixed_camera_noise(np.random.default_rng([seed, i]), model, configuration) for i in range(N)]


def _log_uniform(x: np.ndarray, lo_hi: tuple[float, float]) -> None:
    """``x`` lies in the range, and its log10 quartiles are those of a uniform law on it (to sampling error)."""
    lo, hi = lo_hi
    lx = np.log10(x)
    assert lx.min() >= lo and lx.max() <= hi
    q = np.quantile(lx, [0.25, 0.5, 0.75])
    assert np.allclose(q, lo + (hi - lo) * np.array([0.25, 0.5, 0.75]), atol=0.04 * (hi - lo)), q


def test_se3_gaussian_draw_is_log_uniform_and_independent():
    d = _draws("se3_gaussian", "eye_to_hand")
    rot = np.array([r["camera_rot_std_rad"] for r in d])
    lat = np.array([r["camera_trans_std_m"] for r in d])
    ratio = np.array([r["camera_trans_std_z_m"] for r in d]) / lat
    _log_uniform(rot, tiers.MIXED_SE3_ROT_LOG10)
    _log_uniform(lat, tiers.MIXED_SE3_TRANS_LOG10)
    assert abs(np.corrcoef(np.log(rot), np.log(lat))[0, 1]) < 0.06
    fixed = np.isclose(ratio, tiers.MIXED_Z_FACTOR_FIXED)
    assert abs(fixed.mean() - tiers.MIXED_P_Z_FACTOR_FIXED) < 0.03
    assert ratio.min() >= 1.0 and ratio.max() <= 5.0 and abs(np.median(ratio[~fixed]) - 3.0) < 0.15
    assert abs(np.corrcoef(ratio[~fixed], np.log(lat[~fixed]))[0, 1]) < 0.06
    assert all(r.get("world_frame", "target") == "target" and r.get("scale", 1.0) == 1.0 for r in d)
    dof = [r.get("student_t_dof") for r in d]
    heavy = np.array([x is not None for x in dof])
    assert abs(heavy.mean() - tiers.MIXED_P_STUDENT_T) < 0.03
    assert set(x for x in dof if x is not None) == set(tiers.MIXED_STUDENT_T_DOFS)


def test_vo_drift_draw_has_a_vo_origin_and_an_unknown_scale_on_half():
    d = _draws("vo_drift")
    assert all(r["world_frame"] == "vo_origin" for r in d)
    rot = np.array([r["camera_rot_std_rad"] for r in d])
    trans = np.array([r["camera_trans_std_m"] for r in d])
    _log_uniform(rot, tiers.MIXED_VO_ROT_LOG10)
    _log_uniform(trans, tiers.MIXED_VO_TRANS_LOG10)
    assert all(r["camera_trans_std_z_m"] == r["camera_trans_std_m"] == r["vo_drift_trans_std_m"] for r in d)
    assert all(r["vo_drift_rot_std_rad"] == r["camera_rot_std_rad"] for r in d)
    scale = np.array([r.get("scale", 1.0) for r in d])
    assert abs((scale != 1.0).mean() - tiers.MIXED_P_UNKNOWN_SCALE) < 0.03
    _log_uniform(scale[scale != 1.0], tiers.MIXED_SCALE_LOG10)
    assert {r.get("scale_drift_std", 0.0) for r in d if "scale" in r} == set(tiers.MIXED_SCALE_DRIFT_STDS)
    # no plane to flip on a visual-odometry origin
    assert {r["outlier_model"] for r in d if "outlier_model" in r} == {"random_pose", "gross"}
    with pytest.raises(InputError, match="eye_in_hand"):
        tiers.mixed_camera_noise(np.random.default_rng(0), "vo_drift", "eye_to_hand")


def test_pnp_draw_and_outliers():
    d = _draws("pnp", "eye_to_hand")
    _log_uniform(np.array([r["pixel_std"] for r in d]), tiers.MIXED_PIXEL_LOG10)
    assert all("student_t_dof" not in r for r in d)  # pixel noise stays Gaussian
    frac = np.array([r.get("outlier_fraction", 0.0) for r in d])
    lo, hi = tiers.MIXED_OUTLIER_FRACTION_RANGE
    assert abs((frac > 0).mean() - tiers.MIXED_P_OUTLIERS) < 0.03
    assert frac[frac > 0].min() >= lo and frac.max() <= hi
    assert abs(np.median(frac[frac > 0]) - (lo + hi) / 2) < 0.015
    assert {r["outlier_model"] for r in d if "outlier_model" in r} == {"random_pose", "planar_flip", "gross"}
    with pytest.raises(UnknownNameError):
        tiers.mixed_camera_noise(np.random.default_rng(0), "pinhole", "eye_in_hand")


def test_mixed_draw_is_seeded_by_the_sequence():
    a = tiers.mixed_camera_noise(np.random.default_rng(11), "se3_gaussian", "eye_in_hand")
    assert a == tiers.mixed_camera_noise(np.random.default_rng(11), "se3_gaussian", "eye_in_hand")
    assert a != tiers.mixed_camera_noise(np.random.default_rng(12), "se3_gaussian", "eye_in_hand")
    small = tiers.load_tier("small")
    first = tiers.expand_track(small, "mixed")
    assert first == tiers.expand_track(small, "mixed")
    # another global seed draws other camera noise for the same sequence ids
    other = tiers.Tier(small.name, small.source, {**small.config, "global_seed": small.global_seed + 10})
    moved = tiers.expand_track(other, "mixed")
    assert [r["sequence_id"] for r in moved] == [r["sequence_id"] for r in first]
    assert [r["camera_rot_std_rad"] for r in moved] != [r["camera_rot_std_rad"] for r in first]


def test_mixed_track_outlier_flag_is_stratified_and_vo_origin_only_with_vo_drift():
    recipes = tiers.expand_track(tiers.load_tier("small"), "mixed")
    flags = np.array([r["outlier_fraction"] > 0 for r in recipes])
    for n in (50, 100, 150):
        assert abs(flags[:n].sum() - tiers.MIXED_P_OUTLIERS * n) <= 2, n
    assert all((r["world_frame"] == "vo_origin") == (r["camera_noise_model"] == "vo_drift") for r in recipes)
    models = {r["camera_noise_model"] for r in recipes}
    assert models == {"se3_gaussian", "vo_drift", "pnp"}
    assert len({r["camera_rot_std_rad"] for r in recipes if r["camera_noise_model"] == "se3_gaussian"}) > 90


def test_robot_noise_draw_matches_the_published_shares_and_ranges():
    """se3 on 70 %, encoder noise on 30 % and DH errors on 25 % of arms, independently; levels log-uniform."""
    d = [tiers.mixed_robot_noise(np.random.default_rng([9, i]), is_arm=True) for i in range(N)]
    models = [set(r["robot_noise_models"]) for r in d]
    se3 = np.array(["se3_gaussian" in m for m in models])
    joint = np.array(["joint_gaussian" in m for m in models])
    dh = np.array(["dh_error" in m for m in models])
    for flag, p in ((se3, tiers.MIXED_P_ROBOT_SE3), (joint, tiers.MIXED_P_ROBOT_JOINT), (dh, tiers.MIXED_P_ROBOT_DH)):
        assert abs(flag.mean() - p) < 0.03
    # independent flags: the exact robot ("none") on (1 - 0.7)(1 - 0.3)(1 - 0.25) = 15.75 %
    none = ~(se3 | joint | dh)
    assert abs(none.mean() - 0.3 * 0.7 * 0.75) < 0.025
    assert abs(np.mean(se3 & joint) - se3.mean() * joint.mean()) < 0.02
    rot = np.array([r["robot_rot_std_rad"] for r in d])
    trans = np.array([r["robot_trans_std_m"] for r in d])
    assert np.all(rot[~se3] == 0) and np.all(trans[~se3] == 0)
    _log_uniform(rot[se3], tiers.MIXED_ROBOT_ROT_LOG10)
    _log_uniform(trans[se3], tiers.MIXED_ROBOT_TRANS_LOG10)
    assert abs(np.corrcoef(np.log(rot[se3]), np.log(trans[se3]))[0, 1]) < 0.06
    _log_uniform(np.array([r["joint_std_rad"] for r, j in zip(d, joint) if j]), tiers.MIXED_JOINT_STD_LOG10)
    dh_rows = [r for r, f in zip(d, dh) if f]
    _log_uniform(np.array([r["dh_len_std_m"] for r in dh_rows]), tiers.MIXED_DH_LEN_LOG10)
    ang_deg = np.degrees([r["dh_ang_std_rad"] for r in dh_rows])
    _log_uniform(ang_deg, tiers.MIXED_DH_ANG_DEG_LOG10)
    assert all(r["dh_joint_std_rad"] == r["dh_ang_std_rad"] for r in dh_rows)


def test_robot_noise_of_free6d_has_no_joint_models_and_is_seeded():
    d = [tiers.mixed_robot_noise(np.random.default_rng([9, i]), is_arm=False) for i in range(500)]
    assert all(set(r["robot_noise_models"]) <= {"se3_gaussian"} for r in d)
    assert all("joint_std_rad" not in r and "dh_len_std_m" not in r for r in d)
    a = tiers.mixed_robot_noise(np.random.default_rng(3))
    assert a == tiers.mixed_robot_noise(np.random.default_rng(3))
    assert a != tiers.mixed_robot_noise(np.random.default_rng(4))
