"""Tier files: the published counts, validation errors, determinism of the expansion."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import yaml
from scipy import stats

from kinhec.synth import tiers
from kinhec.util.errors import InputError, UnknownNameError

PUBLISHED = {
    "smoke": dict(noise=16, motion=8, temporal=2, outliers=4, monocular=4, robot_error=2, pnp=4, mixed=6),
    "small": dict(noise=144, motion=84, temporal=48, outliers=56, monocular=32, robot_error=24, pnp=24, mixed=150),
    "medium": dict(noise=1200, motion=1100, temporal=576, outliers=704, monocular=240, robot_error=576, pnp=600,
                   mixed=5000),
    "full": dict(noise=5120, motion=3580, temporal=2592, outliers=1760, monocular=640, robot_error=1536, pnp=2400,
                 mixed=60000),
}  # fmt: skip
TOTALS = {"smoke": 46, "small": 562, "medium": 9996, "full": 77628}


@pytest.mark.parametrize("name", tiers.TIER_NAMES)
def test_plan_counts_equal_published_table(name):
    tier = tiers.load_tier(name)
    counts = tiers.plan_counts(tier)
    assert counts == PUBLISHED[name]
    assert sum(counts.values()) == TOTALS[name]
    assert tier.global_seed == 20260909


@pytest.mark.parametrize("name", ["smoke", "small", "medium"])
def test_expansion_matches_counts_and_ids(name):
    tier = tiers.load_tier(name)
    rec = tiers.expand_tier(tier)
    for track, rs in rec.items():
        assert len(rs) == PUBLISHED[name][track]
        assert [r["sequence_id"] for r in rs] == [f"{track}-{i:06d}" for i in range(len(rs))]
        seeds = [r["seed"] for r in rs]
        assert len(set(seeds)) == len(seeds)
        assert all(0 <= s < 2**63 for s in seeds)


def test_expansion_is_deterministic_and_order_free():
    tier = tiers.load_tier("small")
    a = tiers.expand_track(tier, "mixed")
    b = tiers.expand_track(tier, "mixed")
    assert a == b
    # the seed depends only on (global seed, id)
    assert tiers.sequence_seed(20260909, "noise-000000") == tiers.sequence_seed(20260909, "noise-000000")
    assert tiers.sequence_seed(20260909, "noise-000000") != tiers.sequence_seed(20260909, "noise-000001")
    assert tiers.sequence_seed(20260909, "noise-000000") != tiers.sequence_seed(20260910, "noise-000000")


def test_level_values_follow_the_tier():
    tier = tiers.load_tier("small")
    noise = tiers.expand_track(tier, "noise")
    levels = collections.Counter(r["level"] for r in noise)
    assert set(levels) == {f"robot={r}|camera={c}" for r in ("r1", "r3") for c in ("c1", "c3", "c5")}
    r3c5 = next(r for r in noise if r["level"] == "robot=r3|camera=c5")
    assert r3c5["robot_rot_std_rad"] == 0.002 and r3c5["robot_trans_std_m"] == 0.001
    assert (r3c5["camera_rot_std_rad"], r3c5["camera_trans_std_m"], r3c5["camera_trans_std_z_m"]) == (0.02, 0.012, 0.04)
    temporal = tiers.expand_track(tier, "temporal")
    assert all(r["sync"] == "async" and r["speed_fraction"] == 0.35 for r in temporal)
    assert {r["time_offset_s"] for r in temporal} == {0.0, 0.02, 0.1}
    out = tiers.expand_track(tier, "outliers")
    assert sum(r["outlier_fraction"] == 0 for r in out) == 2 * 2 * 2  # robots x t settings x repeats
    rob = tiers.expand_track(tier, "robot_error")
    dh = [r for r in rob if "dh_error" in r["robot_noise_models"]]
    assert {round(r["dh_len_std_m"], 6) for r in dh} == {0.0001, 0.001}
    # as the published tiers write them: dh_joint_std_rad is the encoder noise of these sequences, and the joint
    # offsets err by the DH angle error
    assert all(set(r["robot_noise_models"]) == {"joint_gaussian", "dh_error"} for r in dh)
    assert {r["joint_std_rad"] for r in dh} == {tier.config["tracks"]["robot_error"]["dh_joint_std_rad"]}
    assert all(r["dh_joint_std_rad"] == r["dh_ang_std_rad"] for r in dh)


def test_mixed_covers_the_factor_space():
    tier = tiers.load_tier("medium")
    mixed = tiers.expand_track(tier, "mixed")
    robots = collections.Counter(r["robot"] for r in mixed)
    assert set(robots) == set(tiers._ROBOTS)  # every arm and free6d
    assert {r["family"] for r in mixed} == {"joint_sinusoid", "joint_waypoints", "lookat", "cartesian_cone", "proposal_sine"}
    assert {r["camera_noise_model"] for r in mixed} == {"se3_gaussian", "pnp", "vo_drift"}
    assert {r["sync"] for r in mixed} == {"sync", "async"}
    assert {r["outlier_model"] for r in mixed} == {"none", "random_pose", "planar_flip", "gross"}
    assert any(r["scale"] != 1.0 for r in mixed)
    # free6d never gets joint-space families
    assert all(r["family"] in ("cartesian_cone", "lookat", "proposal_sine") for r in mixed if r["robot"] == "free6d")


def test_repeats_multiplier_scales_every_systematic_track(tmp_path):
    cfg = yaml.safe_load(tiers.load_tier("smoke").yaml_text())
    cfg["repeats_multiplier"] = 3
    p = tmp_path / "triple.yaml"
    p.write_text(yaml.safe_dump(cfg))
    counts = tiers.plan_counts(tiers.load_tier(p))
    for t, n in PUBLISHED["smoke"].items():
        assert counts[t] == (n if t == "mixed" else 3 * n)


def test_builtin_name_wins_over_a_folder_of_that_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "smoke").mkdir()
    assert tiers.load_tier("smoke").source == "builtin:smoke"


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda c: c["tracks"]["noise"].__setitem__("robots", ["ur5e", "ur99"]), r"tracks\.noise\.robots.*ur99"),
        (lambda c: c["tracks"]["noise"].__setitem__("camera_levels", ["c9"]), r"camera_levels.*c9"),
        (lambda c: c["tracks"].__setitem__("bogus", {}), r"'tracks\.bogus': unknown key"),
        (lambda c: c.__setitem__("shard_size", 0), r"shard_size.*integer >= 1"),
        (lambda c: c["tracks"]["outliers"].__setitem__("model", ["flip"]), r"outliers\.model.*flip"),
        (lambda c: c["tracks"]["pnp"].__setitem__("cameras", ["4k"]), r"pnp\.cameras.*4k"),
        (lambda c: c["tracks"]["temporal"].pop("time_offset_s"), r"temporal\.time_offset_s' is missing"),
        (lambda c: c.pop("global_seed"), r"'global_seed' is missing"),
    ],
)
def test_invalid_tier_files_name_the_key(tmp_path, mutate, match):
    cfg = yaml.safe_load(tiers.load_tier("smoke").yaml_text())
    mutate(cfg)
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump(cfg))
    with pytest.raises(InputError, match=match):
        tiers.load_tier(p)


def test_unknown_tier_and_track_names():
    with pytest.raises(UnknownNameError, match="unknown tier 'tiny'.*smoke"):
        tiers.load_tier("tiny")
    with pytest.raises(InputError, match="no such file"):
        tiers.load_tier("missing/tier.yaml")
    with pytest.raises(UnknownNameError, match="unknown track 'nois'"):
        tiers.plan_counts(tiers.load_tier("smoke"), ["nois"])


def test_mixed_track_has_the_published_composition(tmp_path):
    # full tier, published card: 60,000 mixed sequences with 36.9 M camera frames (615 per sequence), camera
    # models pnp 5,427 / vo_drift 14,752 / se3_gaussian 39,821; vo_drift only with the camera on the flange
    cfg = yaml.safe_load(tiers.load_tier("full").yaml_text())
    cfg["tracks"] = {"mixed": {"n_sequences": 6000, "include_free6d": True}}
    p = tmp_path / "mixed.yaml"
    p.write_text(yaml.safe_dump(cfg))
    mixed = tiers.expand_track(tiers.load_tier(p), "mixed")
    models = collections.Counter(r["camera_noise_model"] for r in mixed)
    assert abs(models["pnp"] / 6000 - 5427 / 60000) < 0.015
    assert abs(models["vo_drift"] / 6000 - 14752 / 60000) < 0.02
    assert all(r["configuration"] == "eye_in_hand" for r in mixed if r["camera_noise_model"] == "vo_drift")
    assert not any(r["outlier_model"] == "planar_flip" and r["world_frame"] == "vo_origin" for r in mixed)
    # continuous periodic sequences last the duration asked, uniform in 5-30 s as in the published recipes; a
    # continuous waypoint path runs its own length, so the card's frames per sequence are checked on generated
    # sequences (tests/test_fidelity_composition.py)
    asked = np.array([r["duration_s"] for r in mixed if r["sampling_mode"] == "continuous"])
    lo, hi = tiers.MIXED_DURATIONS_S
    assert (lo, hi) == (5.0, 30.0)
    assert stats.kstest(asked, stats.uniform(lo, hi - lo).cdf).pvalue > 1e-3


def test_camera_levels_need_equal_lateral_stds(tmp_path):
    cfg = yaml.safe_load(tiers.load_tier("smoke").yaml_text())
    cfg["camera_levels"]["c1"] = [0.0005, [0.0003, 0.0004, 0.001]]
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump(cfg))
    with pytest.raises(InputError, match=r"camera_levels\.c1.*x == y"):
        tiers.load_tier(p)


def _renamed(d: dict, old: str, new: str, value=None) -> None:
    d[new] = d.pop(old) if value is None else value
    d.pop(old, None)


def _families(c):
    return c["tracks"]["noise"]["families"]


# the typos of the issue, each refused in one line naming the file and the key path, with the right key suggested
@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda c: _renamed(c, "repeats_multiplier", "repeat_multiplier", 2),
         r"key 'repeat_multiplier': unknown key; did you mean 'repeats_multiplier'\?"),
        (lambda c: _renamed(c, "global_seed", "global_sed", 5), r"key 'global_sed': unknown key; did you mean 'global_seed'\?"),
        (lambda c: c.setdefault("defaults", {}).__setitem__("camra", "vga"),
         r"key 'defaults\.camra': unknown key; did you mean 'camera'\?"),
        (lambda c: c["tracks"]["noise"].__setitem__("camera_rate_hz", 15),
         r"key 'tracks\.noise\.camera_rate_hz': unknown key; .*'camera_rate_hz' is a key of .*tracks\.noise\.families\[\]"),
        (lambda c: c["tracks"]["outliers"].__setitem__("camera_rate_hz", 15),
         r"key 'tracks\.outliers\.camera_rate_hz': unknown key; .*is a key of .*tracks\.temporal"),
        (lambda c: _families(c)[-1].__setitem__("n_station", 15),
         r"key 'tracks\.noise\.families\[\d\]\.n_station': unknown key; did you mean 'n_stations'\?"),
        (lambda c: c["tracks"]["noise"].__setitem__("robot", ["ur5e"]), r"'tracks\.noise\.robot'.*did you mean 'robots'"),
        (lambda c: c["tracks"]["motion"].__setitem__("n_pose", {}), r"'tracks\.motion\.n_pose'.*did you mean 'n_poses'"),
        (lambda c: c["tracks"]["motion"]["cone"].__setitem__("repeat", 1), r"'tracks\.motion\.cone\.repeat'.*'repeats'"),
    ],
)
def test_typos_are_refused_with_the_closest_key(tmp_path, mutate, match):
    cfg = yaml.safe_load(tiers.load_tier("smoke").yaml_text())
    mutate(cfg)
    p = tmp_path / "typo.yaml"
    p.write_text(yaml.safe_dump(cfg))
    with pytest.raises(InputError, match=match) as info:
        tiers.load_tier(p)
    msg = str(info.value)
    assert msg.startswith(f"tier {p}: key '") and "\n" not in msg


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda c: c.__setitem__("global_seed", "5"), r"'global_seed': expected an integer >= 0, got a string '5'"),
        (lambda c: c.__setitem__("global_seed", -1), r"'global_seed': expected an integer >= 0, got an integer -1"),
        (lambda c: c["tracks"]["noise"].__setitem__("repeats", 2.5), r"'tracks\.noise\.repeats': expected an integer >= 1"),
        (lambda c: c["tracks"]["noise"].__setitem__("repeats", True), r"'tracks\.noise\.repeats': expected an integer"),
        (lambda c: c["tracks"]["temporal"].__setitem__("drop_fraction", [0.1, 1.5]),
         r"'tracks\.temporal\.drop_fraction\[1\]': expected number in \[0, 1\)"),
        (lambda c: c["tracks"]["temporal"].__setitem__("camera_rate_hz", 30), r"'tracks\.temporal\.camera_rate_hz': "
                                                                              r"expected a non-empty list"),
        (lambda c: c["tracks"]["mixed"].__setitem__("include_free6d", 1), r"'tracks\.mixed\.include_free6d': expected "
                                                                         r"true or false, got an integer 1"),
        (lambda c: c["tracks"]["outliers"].__setitem__("student_t_dof", [None, 1]),
         r"'tracks\.outliers\.student_t_dof\[1\]'"),
        (lambda c: _families(c)[0].__setitem__("duration_s", 0), r"'tracks\.noise\.families\[0\]\.duration_s': expected"),
        (lambda c: c["tracks"]["motion"]["cone"].__setitem__("rot_angle_deg", [[10, 5]]),
         r"'tracks\.motion\.cone\.rot_angle_deg\[0\]': expected \[low, high\] pair"),
        (lambda c: c.__setitem__("robot_levels", {"r0": [0, "x"]}), r"'robot_levels\.r0': expected a pair of numbers"),
        (lambda c: c.__setitem__("tracks", []), r"'tracks': expected a mapping, got a list"),
    ],
)
def test_types_and_ranges_are_checked(tmp_path, mutate, match):
    cfg = yaml.safe_load(tiers.load_tier("smoke").yaml_text())
    mutate(cfg)
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump(cfg))
    with pytest.raises(InputError, match=match):
        tiers.load_tier(p)


def test_typo_through_the_cli_is_one_line_and_exit_1(tmp_path):
    from click.testing import CliRunner

    from kinhec.cli import main

    cfg = yaml.safe_load(tiers.load_tier("smoke").yaml_text())
    _families(cfg)[-1]["n_station"] = 15
    p = tmp_path / "typo.yaml"
    p.write_text(yaml.safe_dump(cfg))
    res = CliRunner().invoke(main, ["plan", "--tier", str(p)])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and str(p) in lines[0] and "did you mean 'n_stations'" in lines[0]


# --------------------------------------------------------------------------- #
# the edges of every bounded key of the tier schema
# --------------------------------------------------------------------------- #
def _bounded_fields(node, cfg, path=()):
    """``(path, Field)`` of every number-bounded key present in ``cfg`` (one item of lists and levels)."""
    from kinhec.synth.tier_schema import Block, Field, Levels

    if isinstance(node, Field):
        if node.kind in ("int", "num", "vec2", "range") and (node.lo is not None or node.hi is not None):
            yield path, node
    elif isinstance(node, Levels):
        name = next(iter(cfg))
        yield from _bounded_fields(node.value, cfg[name], path + (name,))
    elif isinstance(node, Block):
        items = [(0, cfg[0])] if node.each else [(None, cfg)]
        for i, c in items:
            for k, sub in node.keys.items():
                if isinstance(c, dict) and k in c:
                    yield from _bounded_fields(sub, c[k], path + ((i,) if i is not None else ()) + (k,))


def _with(cfg, path, value):
    import copy

    out = copy.deepcopy(cfg)
    node = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return out


def test_every_bounded_tier_key_takes_its_edges_as_declared():
    """At ``lo`` a key is accepted, below it refused; at ``hi`` accepted when the bound is closed, refused when it
    is half-open (``hi_open``), just below accepted; above it refused."""
    from pathlib import Path

    from kinhec.synth.tier_schema import TIER_SCHEMA, check_tier_schema

    cfg = yaml.safe_load((Path(tiers.__file__).parent / "configs" / "smoke.yaml").read_text())
    seen = 0
    for path, f in _bounded_fields(TIER_SCHEMA, cfg):
        def value(x, f=f):
            x = int(x) if f.kind == "int" else float(x)
            v = [x, x] if f.kind in ("vec2", "range") else x
            return [v] if f.list else v

        def ok(x, path=path):
            try:
                check_tier_schema(_with(cfg, path, value(x)), "smoke")
            except InputError:
                return False
            return True

        where = ".".join(map(str, path))
        step = 1 if f.kind == "int" else 1e-9 * max(1.0, abs(f.lo if f.lo is not None else f.hi))
        if f.lo is not None:
            assert ok(f.lo), f"{where}: its lower bound {f.lo} refused"
            assert not ok(f.lo - step), f"{where}: below its lower bound {f.lo} accepted"
        if f.hi is not None:
            assert ok(f.hi) != f.hi_open, f"{where}: its upper bound {f.hi} {'accepted' if f.hi_open else 'refused'}"
            assert ok(f.hi - step), f"{where}: just below its upper bound {f.hi} refused"
            assert not ok(f.hi + step), f"{where}: above its upper bound {f.hi} accepted"
        seen += 1
    assert seen >= 25, seen
