"""Statistical fidelity to the published copy: composition, per-track families, look-at stations, the report."""

from __future__ import annotations

import collections

import numpy as np
import pandas as pd
import pytest

from kinhec.evaluate import fidelity
from kinhec.models import cameras
from kinhec.synth import tiers
from kinhec.util.errors import InputError
from kinhec.synth.generator import simulate

from helpers.paths import PUBLISHED_CARD, PUBLISHED_SMOKE_TRIMMED, REPO

# the card and the published index travel with the repository (tests/data/published); the station tests read
# the whole published copy (every shard) and skip without it
CARD = PUBLISHED_CARD
PUBLISHED_SMOKE = PUBLISHED_SMOKE_TRIMMED


@pytest.fixture(scope="module")
def full_recipes():
    ex = tiers.expand_tier(tiers.load_tier("full"))
    return ex


def test_full_tier_composition_within_two_percent_of_the_card(full_recipes):
    card = fidelity.read_card_composition(CARD)
    rows = [r for recipes in full_recipes.values() for r in recipes]
    assert len(rows) == 77_628
    for column, counts in card.items():
        ours = collections.Counter(r[column] for r in rows)
        assert set(ours) == set(counts), column
        for value, n_card in counts.items():
            assert abs(ours[value] / n_card - 1.0) <= 0.02, (column, value, ours[value], n_card)


def test_card_composition_is_read_from_the_card():
    card = fidelity.read_card_composition(CARD)
    assert sum(card["robot"].values()) == 77_628
    assert sum(card["configuration"].values()) == 77_628
    assert sum(card["family"].values()) == 77_628
    assert card["family"]["lookat"] == 24_516


def test_systematic_tracks_use_the_published_families():
    """Each systematic track of the smoke tier has the (family, sampling) pairs of the published smoke copy."""
    pub = pd.read_parquet(PUBLISHED_SMOKE / "sequences.parquet", columns=["track", "family", "sampling_mode"])
    ex = tiers.expand_tier(tiers.load_tier("smoke"))
    for track, recipes in ex.items():
        if track == "mixed":
            continue
        ours = {(r["family"], r["sampling_mode"]) for r in recipes}
        theirs = set(map(tuple, pub[pub.track == track][["family", "sampling_mode"]].to_numpy()))
        assert ours == theirs, track
    for track in ("outliers", "robot_error"):  # every tier, not only smoke
        for name in ("small", "medium", "full"):
            fams = {r["family"] for r in tiers.expand_track(tiers.load_tier(name), track)}
            assert fams == {"lookat"}, (name, track)


def _station_recipes(track: str, n: int) -> list[dict]:
    recipes = tiers.expand_track(tiers.load_tier("medium"), track)
    step = len(recipes) // n
    return recipes[::step][:n]


@pytest.mark.parametrize("track", ["outliers", "robot_error"])
def test_lookat_stations_see_the_target_at_every_station(track):
    """Project the target with the ground-truth pose: every point in front of the camera and inside the image."""
    for recipe in _station_recipes(track, 6):
        g = simulate(recipe)
        cam = cameras.get_camera(g.recipe.camera)
        tgt = cameras.get_target(g.recipe.target)
        T = g.T_cam_target_gt
        uv, depth = cameras.project_points(cam, T, tgt.points_m)
        assert np.all(depth > 0.05), recipe["sequence_id"]
        inside = (uv[..., 0] >= 0) & (uv[..., 0] <= cam.width_px) & (uv[..., 1] >= 0) & (uv[..., 1] <= cam.height_px)
        assert inside.all(), recipe["sequence_id"]
        assert g.visible.all()
        # one frame per station, and the stations are distinct poses (not a standing robot)
        assert T.shape[0] == g.recipe.n_stations
        d = np.linalg.norm(np.diff(T[:, :3, 3], axis=0), axis=1)
        assert np.median(d) > 0.02


def test_lookat_station_motions_are_not_roll_dominated():
    """Rotation axes of the look-at station motions spread like the published copy's (lambda2 ~0.15, cond ~1.9).

    With a narrow viewing cap most of the rotation between stations is roll about the optical axis: lambda2
    0.08 and translation condition 2.6 made every look-at track's translation error 1.3x the published one.
    """
    from kinhec.synth.generator import index_row

    rows = [index_row(simulate(r)) for r in _station_recipes("pnp", 30)]
    lam2 = np.median([r["axis_scatter_lambda2"] for r in rows])
    cond = np.median([r["translation_cond"] for r in rows])
    pub = pd.read_parquet(PUBLISHED_SMOKE / "sequences.parquet")
    pub = pub[(pub.family == "lookat") & (pub.sampling_mode == "stations") & (pub.track != "mixed")]
    assert abs(lam2 - pub.axis_scatter_lambda2.median()) < 0.05, lam2
    assert abs(cond - pub.translation_cond.median()) < 0.4, cond


def test_card_leaderboard_parses_every_track_and_solver():
    t = fidelity.read_card_leaderboard(CARD)
    assert len(t) == 8 * 10
    assert t.loc[("noise", "park_martin")].tolist() == [0.218, 3.70]
    assert t.loc[("outliers", "ransac_park_martin")].tolist() == [0.078, 1.07]
    smoke = fidelity.read_card_leaderboard(PUBLISHED_SMOKE / "README.md")  # the Markdown form
    assert smoke.loc[("pnp", "shah")].tolist() == [0.729, 1.03]


def test_card_without_a_table_is_refused(tmp_path):
    p = tmp_path / "card.txt"
    p.write_text("no table here\n")
    with pytest.raises(InputError, match="card.txt"):
        fidelity.read_card_leaderboard(p)
    with pytest.raises(InputError, match="card.txt"):
        fidelity.read_card_composition(p)


def _results(rows):
    return pd.DataFrame(rows, columns=["track", "solver", "eval_sync", "ok", "X_rot_err_deg", "X_trans_err_mm"])


def test_comparison_medians_ratios_and_shifts():
    card = pd.DataFrame(
        {"rot": [0.2, 0.1, 1.0, 1.0], "trans": [2.0, 1.0, 10.0, 10.0]},
        index=pd.MultiIndex.from_tuples(
            [("a", "park_martin"), ("a", "li_kronecker"), ("b", "park_martin"), ("b", "shah")], names=["track", "solver"]
        ),
    )
    rows = []
    for x in (0.3, 0.4, 0.5, 99.0):  # median of ok rows 0.4 deg; the failed row does not count
        rows.append(("a", "park_martin", "oracle", x < 50, x, 10 * x))
        rows.append(("a", "park_martin", "estimated", True, 50.0, 500.0))  # other sync ignored
    rows += [("a", "li_kronecker", "oracle", True, 1.0, 10.0)]
    rows += [("b", "park_martin", "oracle", True, 1.1, 11.0), ("b", "shah", "oracle", True, 0.9, 9.0)]
    t = fidelity.compare(card, fidelity.results_medians(_results(rows)))
    assert t.loc[("a", "park_martin"), "rot_ours"] == pytest.approx(0.4)
    assert t.loc[("a", "park_martin"), "ratio_rot"] == pytest.approx(2.0)
    assert t.loc[("a", "park_martin"), "ratio_trans"] == pytest.approx(2.0)
    assert not t.loc[("a", "li_kronecker"), "checked"]
    s = fidelity.track_shifts(t)
    assert bool(s.loc["a", "shift_trans"]) and not bool(s.loc["b", "shift_trans"])
    assert s.loc["b", "gmean_rot"] == pytest.approx(np.sqrt(1.1 * 0.9))
    worst, where = fidelity.worst_ratio(t)
    assert worst == pytest.approx(2.0) and where[:2] == ("a", "park_martin")  # li_kronecker (10x) not counted
    md = fidelity.render_markdown(t, title_ours="x", title_card="y")
    assert "| `park_martin` | 0.200 | 0.400 | 2.00 |" in md
    assert "| `a` | `park_martin` | 3 / 4 |" in md  # the failed row is listed with the failures counted
    assert t.loc[("a", "park_martin"), "trans_worst"] == pytest.approx(4.5)
    assert "6 of 6 track x solver medians" in md
    with pytest.raises(InputError, match="TABLES"):
        fidelity.fill_template("no marker", md)


def test_results_without_the_columns_are_refused():
    with pytest.raises(InputError, match="missing"):
        fidelity.results_medians(pd.DataFrame({"track": ["a"]}))


def test_same_data_separates_solver_differences():
    """Rows of the same sequences: an identical solver gives ratio 1 and 100 % identical rows; another is off by its factor."""
    base = dict(eval_sync="oracle", ok=True)
    pub = pd.DataFrame([dict(base, sequence_id=f"s{i}", track="noise" if i < 3 else "monocular", solver=s,
                             X_rot_err_deg=0.1 * (i + 1), X_trans_err_mm=1.0 + i)
                        for i in range(5) for s in ("a", "b")])  # fmt: skip
    ours = pub.copy()
    b = ours.solver == "b"
    ours.loc[b & (ours.track == "monocular"), "X_rot_err_deg"] *= 4.0  # b differs on two of five rows
    ours.loc[ours.sequence_id == "s0", "ok"] = False  # a row without a result is left out
    t = fidelity.same_data(ours, pub)
    assert t.loc[("a", "all"), "n"] == 4 and t.loc[("a", "all"), "identical"] == 1.0
    assert t.loc[("a", "all"), "gm_rot"] == pytest.approx(1.0) and t.loc[("a", "all"), "gm_trans"] == pytest.approx(1.0)
    assert t.loc[("b", "monocular"), "gm_rot"] == pytest.approx(4.0) and t.loc[("b", "monocular"), "identical"] == 0.0
    assert t.loc[("b", "noise"), "gm_rot"] == pytest.approx(1.0)
    assert t.loc[("b", "all"), "gm_rot"] == pytest.approx(4.0 ** 0.5)  # two of four rows
    md = fidelity.render_same_data(t)
    assert "| `b` | 2 | 0% | 4.000 | 1.000 |" in md and "*`monocular` only*" in md
    with pytest.raises(InputError, match="lack columns"):
        fidelity.same_data(ours.drop(columns="ok"), pub)


def test_mixed_track_is_stratified():
    """Every prefix of the mixed track holds each robot in proportion to its weight (within a few sequences)."""
    recipes = list(tiers.expand_track(tiers.load_tier("medium"), "mixed"))[:2000]
    counts = collections.Counter(r["robot"] for r in recipes)
    w = tiers.MIXED_ROBOT_WEIGHTS
    total = sum(w.values())
    for robot, weight in w.items():
        assert abs(counts[robot] - 2000 * weight / total) <= 4, robot


def _tour_ratio(q: np.ndarray) -> float:
    """Mean joint distance between consecutive stations over the mean between any two stations."""
    d = np.linalg.norm(q[:, None] - q[None], axis=-1)
    i, j = np.triu_indices(len(q), 1)
    return float(np.diag(d, 1).mean() / d[i, j].mean())


def _published_station_joints(root):
    from kinhec.io import load_manifest, load_sequence

    man = load_manifest(root)
    ids = man[(man.family == "lookat") & (man.sampling_mode == "stations") & (man.track != "mixed")].sequence_id
    for sid in ids:
        seq = load_sequence(root, sid, man)
        nearest = np.abs(seq.robot.t[None, :] - seq.camera.t_gt[:, None]).argmin(axis=1)
        yield seq, seq.robot.q_gt[nearest]


def test_lookat_stations_follow_the_published_viewing_cap_and_tour(published_smoke_full):
    """The published stations lie within 50 deg of the target normal and form a shortened tour.

    Consecutive published stations are about 0.82 times as far apart in joint space as any two of them; in
    random order they would be 1.0, and hand-eye errors of every ``A X = X B`` solver grow as consecutive
    motions shrink.  kinhec's look-at stations must show the same cap and the same shortening.  Both generators
    reach each station by IK from the previous one, so the stations wander: the more of them, the farther apart
    two of them lie on average while consecutive ones do not, and the ratio falls with the count.  kinhec's
    sequences are therefore drawn with the published smoke copy's station counts (12 on pnp, 20 on outliers).
    """
    from kinhec.synth.trajectories import LOOKAT_CAP_HALF_ANGLE_DEG

    def tilt_deg(T_cam_target):
        p = -np.einsum("nji,nj->ni", T_cam_target[:, :3, :3], T_cam_target[:, :3, 3])  # camera in the target frame
        return np.degrees(np.arccos(np.abs(p[:, 2]) / np.linalg.norm(p, axis=1)))

    pub_tilt, pub_ratio = [], []
    for seq, q in _published_station_joints(published_smoke_full):
        pub_tilt.append(tilt_deg(seq.camera.T_cam_target_gt).max())
        pub_ratio.append(_tour_ratio(q))
    assert 45.0 < max(pub_tilt) <= LOOKAT_CAP_HALF_ANGLE_DEG + 0.5, pub_tilt
    ours_tilt, ours_ratio = [], []
    counts = {"pnp": 12, "outliers": 20}  # as in the published smoke copy's sequences of these tracks
    for recipe in [dict(r, n_stations=counts[r["track"]]) for r in _station_recipes("pnp", 12) + _station_recipes(
            "outliers", 12)]:
        g = simulate(recipe)
        if g.q_gt_rad is None:
            continue
        ours_tilt.append(tilt_deg(g.T_cam_target_gt).max())
        ours_ratio.append(_tour_ratio(g.trajectory.joint_positions(g.t_camera_gt_s)))
    assert max(ours_tilt) <= LOOKAT_CAP_HALF_ANGLE_DEG + 0.5
    assert 0.7 < np.median(pub_ratio) < 0.9, pub_ratio
    assert abs(np.median(ours_ratio) - np.median(pub_ratio)) < 0.08, (np.median(ours_ratio), np.median(pub_ratio))


def _script(name: str):
    """The module of ``benchmarks/<name>.py`` (the scripts that write docs/fidelity.md's sections)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"{name}_script", REPO / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _fidelity_script():
    return _script("fidelity")


def test_small_tier_section_regenerates_from_the_stored_results_and_is_within_bounds():
    """docs/fidelity.md's small-tier comparison: rebuilt from the two stored files, it is the page's section;
    andreff_scale's medians are within 0.5-2x the published ones on every track (mixed since its camera noise is
    drawn as published, item 15), and so are the other baselines on the tracks where andreff_scale was 2.5-9x off
    (outliers since its random poses are the published ones, item 17)."""
    mod = _fidelity_script()
    page = (REPO / "docs" / "fidelity.md").read_text(encoding="utf-8")
    section = page.split(fidelity.SMALL_BEGIN)[1].split(fidelity.SMALL_END)[0]
    assert section.strip() == mod.small_tier_section().strip()
    table = fidelity.small_tier_table(pd.read_parquet(mod.SMALL_RESULTS), fidelity.read_medians(mod.PUBLISHED_SMALL))
    checked = table[table["checked"]]
    assert len(checked) == 8 * 10  # every track x the published baselines but li_kronecker
    inside = lambda r: (r >= fidelity.RATIO_LOW) & (r <= fidelity.RATIO_HIGH)  # noqa: E731
    scale = checked.xs("andreff_scale", level="solver")
    # pnp's rotation is 2.3-2.5x for every closed form in this one draw of its few sequences (the published draw's
    # median, 0.052 deg, is half the published full tier's 0.113); on the medium tier's 600 against the card they
    # are 0.92-1.03x (docs/fidelity.md, pnp), so that one median is a draw's, not the generator's
    assert inside(scale.drop(index="pnp")[["ratio_rot", "ratio_trans"]]).all().all(), scale
    assert inside(scale.loc[["pnp"], ["ratio_trans"]]).all().all() and scale.loc["pnp", "ratio_rot"] < 3.0
    four = checked[checked.index.get_level_values("track").isin(["motion", "temporal", "monocular"])]
    assert inside(four["ratio_rot"]).all()
    # motion's translations carry the page's one systematic shift (item 11: geometric mean about 0.6x); tsai_lenz,
    # the least accurate of them, sits at 0.44x in this single draw of 84 sequences (0.62x before the scenes were
    # drawn as published), the others at 0.54-1.12x
    # and monocular's RANSAC translation, 0.49x in this draw (kinhec's thresholds adapt to the noise, item 13; 0.72x
    # on the medium tier against the card)
    assert inside(four.drop(index=[("motion", "tsai_lenz"), ("monocular", "ransac_park_martin")])["ratio_trans"]).all()
    assert four.loc[("monocular", "ransac_park_martin"), "ratio_trans"] >= 0.4
    assert four.loc[("motion", "tsai_lenz"), "ratio_trans"] >= 0.4
    # outliers: every translation; tsai_lenz's rotation is the one median left out (the published draws of it
    # range over 16.5-37.2 deg, test_small_tier_draws_...); mixed is judged over several draws, below
    out = checked[checked.index.get_level_values("track") == "outliers"]
    assert inside(out["ratio_trans"]).all()
    assert inside(out.drop(index=["tsai_lenz"], level="solver")["ratio_rot"]).all()
    # every other median in band: all but mixed (judged over several draws), pnp's rotations and the two named above
    rest = checked.drop(index=["mixed"], level="track").drop(index=[("motion", "tsai_lenz"),
                                                                     ("monocular", "ransac_park_martin")])
    assert inside(rest["ratio_trans"]).all(), rest
    assert inside(rest.drop(index=["pnp"], level="track")["ratio_rot"]).all(), rest


def test_mixed_parameter_section_regenerates_and_the_published_draws_lie_in_kinhec_ranges(tmp_path):
    """docs/fidelity.md's mixed-track parameter table is rebuilt from kinhec's recipes and the stored published
    quantiles; every published value lies within the range kinhec draws it from, and the medians agree to the
    sampling error of 150 sequences."""
    mod = _script("fidelity_mixed")
    page = (REPO / "docs" / "fidelity.md").read_text(encoding="utf-8")
    assert page.split(fidelity.MIXED_BEGIN)[1].split(fidelity.MIXED_END)[0].strip() == mod.mixed_section().strip()
    pub = fidelity.read_mixed_quantiles(mod.PUBLISHED_MIXED)
    ranges = {
        "se3_gaussian rotation std": (1e3 * 10 ** np.array(tiers.MIXED_SE3_ROT_LOG10)),
        "se3_gaussian lateral translation std": (1e3 * 10 ** np.array(tiers.MIXED_SE3_TRANS_LOG10)),
        "se3_gaussian along-axis / lateral": tiers.MIXED_Z_FACTOR_RANGE,
        "vo_drift rotation std": (1e3 * 10 ** np.array(tiers.MIXED_VO_ROT_LOG10)),
        "vo_drift translation std": (1e3 * 10 ** np.array(tiers.MIXED_VO_TRANS_LOG10)),
        "pnp pixel std": 10 ** np.array(tiers.MIXED_PIXEL_LOG10),
        "unknown monocular scale": 10 ** np.array(tiers.MIXED_SCALE_LOG10),
        "outlier fraction": tiers.MIXED_OUTLIER_FRACTION_RANGE,
        "robot se3_gaussian rotation std": 1e3 * 10 ** np.array(tiers.MIXED_ROBOT_ROT_LOG10),
        "robot se3_gaussian translation std": 1e3 * 10 ** np.array(tiers.MIXED_ROBOT_TRANS_LOG10),
        "robot joint_gaussian std": 1e3 * 10 ** np.array(tiers.MIXED_JOINT_STD_LOG10),
        "robot dh_error length std": 1e3 * 10 ** np.array(tiers.MIXED_DH_LEN_LOG10),
        "robot dh_error angle std": 10 ** np.array(tiers.MIXED_DH_ANG_DEG_LOG10),
    }
    ours = fidelity.mixed_parameter_quantiles(pd.DataFrame(tiers.expand_track(tiers.load_tier("small"), "mixed")))
    for name, (lo, hi) in ranges.items():
        assert lo <= pub.loc[name, "min"] and pub.loc[name, "max"] <= hi, name
        assert lo <= ours.loc[name, "min"] and ours.loc[name, "max"] <= hi, name
        # medians within a factor 2 (log-uniform draws of 12-100 values)
        assert 0.5 < ours.loc[name, "median"] / pub.loc[name, "median"] < 2.0, name
    for name in ("share with Student-t camera noise", "share vo_drift", "share pnp", "unknown scale among vo_origin",
                 "share with robot se3_gaussian", "share with robot joint_gaussian", "share with robot dh_error",
                 "share with an exact robot (none)"):  # fmt: skip
        assert abs(ours.loc[name, "share"] - pub.loc[name, "share"]) < 0.1, name
    back = fidelity.read_mixed_quantiles(fidelity.write_mixed_quantiles(ours, tmp_path / "q.csv"))
    assert np.allclose(back["median"].to_numpy(float), ours["median"].to_numpy(float), rtol=1e-5, equal_nan=True)
    (tmp_path / "bad.csv").write_text("parameter,n\nx,1\n")
    with pytest.raises(InputError, match="missing"):
        fidelity.read_mixed_quantiles(tmp_path / "bad.csv")
    with pytest.raises(InputError, match="missing"):
        fidelity.mixed_parameters(pd.DataFrame({"track": ["mixed"]}))


def test_medians_csv_round_trip_and_errors(tmp_path):
    t = pd.DataFrame({"track": ["noise", "noise"], "solver": ["shah", "andreff_scale"], "eval_sync": "oracle",
                      "ok": [True, True], "X_rot_err_deg": [0.1, 0.2], "X_trans_err_mm": [1.0, 3.0]})
    med = fidelity.results_medians(t)
    back = fidelity.read_medians(fidelity.write_medians(med, tmp_path / "m.csv"))
    assert back.loc[("noise", "andreff_scale"), "trans"] == 3.0 and back.loc[("noise", "shah"), "n"] == 1
    (tmp_path / "bad.csv").write_text("track,solver,rot\nnoise,shah,1\n")
    with pytest.raises(InputError, match="missing"):
        fidelity.read_medians(tmp_path / "bad.csv")
    with pytest.raises(InputError, match="markers"):
        fidelity.replace_section("no markers here", "x")
    page = f"a\n{fidelity.SMALL_BEGIN}\nold\n{fidelity.SMALL_END}\nb"
    assert fidelity.replace_section(page, "new") == f"a\n{fidelity.SMALL_BEGIN}\nnew\n{fidelity.SMALL_END}\nb"


# --------------------------------------------------------------------------- #
# several draws of the small tier (support.fidelity_draws, benchmarks/support/)
# --------------------------------------------------------------------------- #
def _draws_script():
    return _script("fidelity_draws")


def test_small_tier_draws_pooled_within_bounds_where_one_published_draw_is_not():
    """docs/fidelity.md's section over several draws is rebuilt from the two stored tables; pooled over four
    draws every baseline's mixed and outliers medians are within 0.5-2x the published ones, while the published
    toolkit's own draws of the mixed track lie beyond 2x of each other (the reason one draw cannot settle it)."""
    from support import fidelity_draws as fd

    mod = _draws_script()
    page = (REPO / "docs" / "fidelity.md").read_text(encoding="utf-8")
    assert page.split(fd.DRAWS_BEGIN)[1].split(fd.DRAWS_END)[0].strip() == mod.section().strip()
    ours, pub = fd.read_draws(mod.OURS), fd.read_draws(mod.PUBLISHED)
    assert set(ours["draw"]) == set(pub["draw"]) == {"0", "1", "2", "3", fd.POOLED}
    table = fd.draws_table(ours, pub)
    checked = table[table["checked"]]
    assert len(checked) == 2 * 10
    # mixed ransac_park_martin's translation is the page's documented solver difference (item 13: kinhec's RANSAC
    # thresholds adapt to the noise, more accurate than the published one): 0.48x pooled since the stations dwell
    # 0.6-1.4 s (0.53x before), 0.47x on the medium tier against the card
    rpm = ("mixed", "ransac_park_martin")
    assert 0.4 <= checked.loc[rpm, "ratio_trans"] < 1.0
    r = checked.drop(index=[rpm])[["ratio_rot", "ratio_trans"]].to_numpy(dtype=float)
    assert ((r >= fidelity.RATIO_LOW) & (r <= fidelity.RATIO_HIGH)).all(), checked
    assert fidelity.RATIO_LOW <= checked.loc[rpm, "ratio_rot"] <= fidelity.RATIO_HIGH
    # the pooled medians are over the draws' rows together: 4 x 150 mixed, 4 x 56 outliers sequences
    assert table.xs("mixed", level="track")["n_pub"].max() == 600
    assert table.xs("outliers", level="track")["n_pub"].max() == 224
    out_pub, pairs, worst_pub = fd.spread_between_draws(pub, "mixed")
    out_ours, _, worst_ours = fd.spread_between_draws(ours, "mixed")
    assert pairs == 6 * 10 * 2 and out_pub > 20 and worst_pub > 4.0
    assert out_ours < out_pub and worst_ours < worst_pub
    # the published toolkit reproduces its stored small tier: its draw 0 is the single-draw comparison's medians
    # (but for its RANSAC, whose samples are not seeded from the sequence)
    single = fidelity.read_medians(REPO / "docs" / "fidelity_small.published.csv")
    d0 = pub[pub["draw"] == "0"].set_index(["track", "solver"]).drop(index="ransac_park_martin", level="solver")
    assert np.allclose(d0[["rot", "trans"]], single.loc[d0.index, ["rot", "trans"]], rtol=1e-5)


def test_draw_medians_pool_the_rows_and_refuse_bad_input(tmp_path):
    from support import fidelity_draws as fd

    def rows(errs):
        return pd.DataFrame({"track": "mixed", "solver": "shah", "eval_sync": "oracle", "ok": True,
                             "X_rot_err_deg": errs, "X_trans_err_mm": [10 * e for e in errs]})  # fmt: skip

    t = fd.draw_medians({0: rows([1.0, 2.0, 3.0]), 1: rows([10.0, 20.0])})
    t = t.set_index("draw")
    assert t.loc["0", "rot"] == 2.0 and t.loc["1", "rot"] == 15.0
    # pooled: the median of the five rows (3.0), not the median of the two medians (8.5)
    assert t.loc[fd.POOLED, "rot"] == 3.0 and t.loc[fd.POOLED, "trans"] == 30.0 and t.loc[fd.POOLED, "n"] == 5
    back = fd.read_draws(fd.write_draws(t.reset_index()[["track", "solver", "draw", "rot", "trans", "n"]],
                                        tmp_path / "d.csv"))  # fmt: skip
    assert list(back["draw"]) == ["0", "1", fd.POOLED]
    assert fd.draw_seed(20260909, 3) == 20263909
    with pytest.raises(InputError, match="draw"):
        fd.draw_seed(1, -1)
    with pytest.raises(InputError, match="at least one draw"):
        fd.draw_medians({})
    with pytest.raises(InputError, match="missing"):
        fd.draw_medians({0: pd.DataFrame({"track": ["mixed"]})})
    (tmp_path / "bad.csv").write_text("track,solver\nmixed,shah\n")
    with pytest.raises(InputError, match="missing"):
        fd.read_draws(tmp_path / "bad.csv")


@pytest.mark.heavy
def test_a_kinhec_draw_reproduces_its_stored_medians(tmp_path):
    """Draw 1 generated and benchmarked again gives the stored medians (the seed is the only input)."""
    from support import fidelity_draws as fd

    mod = _draws_script()
    got = fd.draw_medians({1: mod.kinhec_draw(1, tmp_path, workers=1)}).set_index(["track", "solver", "draw"])
    stored = fd.read_draws(mod.OURS).set_index(["track", "solver", "draw"])
    got = got.xs("1", level="draw", drop_level=False)
    want = stored.loc[got.index]
    assert np.allclose(got[["rot", "trans"]], want[["rot", "trans"]], rtol=1e-5), (got, want)
    assert (got["n"] == want["n"]).all()
