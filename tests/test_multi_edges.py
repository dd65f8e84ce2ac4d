"""Every edge's reading checked on its own and against the graph (``kinhec.calibrate.multi_edges``), the
standard-deviation limits of ``calibrate_multi`` and the certificate stated for the edges kept."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec.geometry import se3
from kinhec.synth import scenes
from kinhec.calibrate import calibrate_multi
from kinhec.calibrate import conventions as cv
from kinhec.calibrate import multi_edges as me
from kinhec.cli import main

W5 = dict(seed=1, scene_id=0, n_cameras=3, n_targets=4, graph="sparse", pairs_per_edge=8)
BAD = ("tag01", "cam01")


def _tum(path, T, comment=None):
    q = se3.quaternion_from_matrix(T[:, :3, :3])
    rows = np.column_stack([0.1 * np.arange(len(T)), T[:, :3, 3], q[:, 1:], q[:, :1]])
    head = f"# {comment}\n" if comment else ""
    path.write_text(head + "".join(" ".join(repr(v) for v in r) + "\n" for r in rows.tolist()))


def _write(root, pairs, eye_comment=None):
    """``root/edges/<x>/<y>/{hand,eye}.txt`` (TUM, eye-to-hand: T_base_ee and T_cam_tag)."""
    for (x, y), (A, B) in pairs.items():
        d = root / "edges" / x / y
        d.mkdir(parents=True, exist_ok=True)
        _tum(d / "hand.txt", A)
        _tum(d / "eye.txt", B, (eye_comment or {}).get((x, y)))


def _inverted(pairs, edge=BAD, which="eye", n=None):
    out = dict(pairs)
    A, B = out[edge]
    A, B = (A, B) if n is None else (A[:n], B[:n])
    out[edge] = (se3.invert_transform(A), B) if which == "hand" else (A, se3.invert_transform(B))
    return out


def _run(tmp_path, monkeypatch, *args):
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(main, ["calibrate-multi", "edges", *args])


def _assert_within_3_sigma(d, sc):
    """Every X and Y of the JSON within 3 sigma of the truth, per component (right perturbation, parent frame)."""
    for kind, truth in (("X", sc.X), ("Y", sc.Y)):
        for k, v in d[kind].items():
            T, S = np.asarray(v["T"]), np.asarray(v["std"])
            err = np.concatenate([se3.so3_log(T[:3, :3].T @ truth[k][:3, :3]), truth[k][:3, 3] - T[:3, 3]])
            assert np.all(np.abs(err) < 3 * S), (kind, k, err / S)


# --------------------------------------------------------------------------- #
# the W5 input: edges/tag01/cam01/eye.txt inverted
# --------------------------------------------------------------------------- #
def test_w5_the_inverted_edge_is_refused_by_name(tmp_path, monkeypatch):
    sc = scenes.draw_scene(**W5)
    _write(tmp_path, _inverted(sc.pairs))
    r = _run(tmp_path, monkeypatch)
    assert r.exit_code == 2, r.output
    assert r.output.count("\n") == 1 and r.output.startswith("kinhec calibrate-multi: error: ")
    assert "edges/tag01/cam01/eye.txt fits inverted (as target_T_cam), not as read" in r.output
    assert "--edge-pose tag01/cam01/eye=target_T_cam" in r.output and "--drop-edge tag01/cam01" in r.output
    assert "'# T_target_cam'" in r.output and "--force" in r.output
    # the edge that was not touched is not blamed, and nothing is said to be determined
    assert "tag01/cam00" not in r.output and "tag01-cam00" not in r.output and "determined" not in r.output
    # what the reading that fits gives: Y cam01 where it is
    y = sc.Y["cam01"][:3, 3]
    assert f"Y cam01 at ({y[0]:.2g}" in r.output or f"Y cam01 at ({y[0]:.3g}" in r.output


def test_w5_forced_keeps_the_edge_and_refuses_nothing_it_cannot_stand_behind(tmp_path, monkeypatch):
    sc = scenes.draw_scene(**W5)
    _write(tmp_path, _inverted(sc.pairs))
    r = _run(tmp_path, monkeypatch, "--force")
    assert r.exit_code == 0, r.output
    assert "warning: edges/tag01/cam01/eye.txt fits inverted" in r.output and "kept as read (--force)" in r.output
    # the edge pulls X tag01 and Y cam01 apart: their standard deviations are beyond the limits, not "determined"
    assert "X:tag01: standard deviations up to" in r.output and "(limits 2 deg, 20 mm)" in r.output
    assert "NOT determined by these pairs: X:tag01, Y:cam01" in r.output
    assert "4 X and 3 Y determined" not in r.output


@pytest.mark.parametrize("how", ["edge-pose", "comment", "file"])
def test_w5_corrected_gives_the_truth(tmp_path, monkeypatch, how):
    sc = scenes.draw_scene(**W5)
    args = ["--json", "res.json"]
    if how == "edge-pose":
        _write(tmp_path, _inverted(sc.pairs))
        args += ["--edge-pose", "tag01/cam01/eye=target_T_cam"]
    elif how == "comment":  # the file's own claim
        _write(tmp_path, _inverted(sc.pairs), eye_comment={BAD: "T_tag_cam"})
    else:
        _write(tmp_path, sc.pairs)
    r = _run(tmp_path, monkeypatch, *args)
    assert r.exit_code == 0, r.output
    assert "warning" not in r.output
    assert "4 X and 3 Y determined" in r.output and "rotations certified globally optimal (duality gap" in r.output
    d = json.loads((tmp_path / "res.json").read_text())
    _assert_within_3_sigma(d, sc)
    assert not any(e["contradicted"] for e in d["edge_readings"])
    src = {"edge-pose": "--edge-pose tag01/cam01/eye", "comment": "its comment 'T_tag_cam'", "file": "the default"}[how]
    assert d["inputs"]["read_as"]["tag01/cam01"]["eye"][0] == ("cam_T_target" if how == "file" else "target_T_cam")
    assert src in d["inputs"]["read_as"]["tag01/cam01"]["eye"][1]


def test_w5_edge_dropped_gives_the_truth_and_says_what_is_certified(tmp_path, monkeypatch):
    sc = scenes.draw_scene(**W5)
    _write(tmp_path, _inverted(sc.pairs))
    r = _run(tmp_path, monkeypatch, "--drop-edge", "tag01/cam01", "--json", "res.json")
    assert r.exit_code == 0, r.output
    assert ("4 X and 2 Y determined" in r.output and "rotations certified globally optimal for the 5 of 6 edges kept "
            "(tag01/cam01 dropped with --drop-edge)" in r.output)  # fmt: skip
    d = json.loads((tmp_path / "res.json").read_text())
    assert "cam01" not in d["Y"] and d["inputs"]["dropped"] == ["tag01/cam01"]
    assert d["certificate"]["edges_total"] == 5 and d["certificate"]["edges_certified"] == 5
    _assert_within_3_sigma(d, sc)
    r = _run(tmp_path, monkeypatch, "--drop-edge", "tag09/cam01")
    assert r.exit_code == 2 and "does not hold: tag09/cam01" in r.output


def test_a_comment_that_the_data_contradict_is_named(tmp_path, monkeypatch):
    """The file's own claim is a statement: data that contradict it stop the run, naming where it came from."""
    sc = scenes.draw_scene(**W5)
    _write(tmp_path, _inverted(sc.pairs), eye_comment={BAD: "T_cam_tag"})
    r = _run(tmp_path, monkeypatch)
    assert r.exit_code == 2 and "edges/tag01/cam01/eye.txt fits inverted" in r.output
    assert "cam_T_target from eye.txt: its comment 'T_cam_tag'" in r.output


# --------------------------------------------------------------------------- #
# few pairs, the hand file, the library
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("which", ["eye", "hand"])
def test_a_mislabelled_edge_with_a_few_pairs_is_named(n, which):
    sc = scenes.draw_scene(**W5)
    pairs = _inverted(sc.pairs, which=which, n=n)
    ch = me.check_edges(pairs)
    assert ch[BAD].contradicted and ch[BAD].fitting == [(which == "hand", which == "eye")]
    assert [e for e, c in ch.items() if c.contradicted] == [BAD]
    with pytest.raises(me.EdgeReadingError, match=rf"pairs\[\('tag01', 'cam01'\)\] {'A' if which == 'hand' else 'B'} "
                                                  "fits inverted"):  # fmt: skip
        calibrate_multi(pairs)
    res = calibrate_multi(pairs, force=True)
    assert "kept as read (--force)" in res.warnings[0]


def test_an_edge_of_one_pair_that_nothing_checks_is_not_read_by_default(tmp_path, monkeypatch):
    """One pair of a camera that sees one tag: its readings all fit; the default must not choose one."""
    sc = scenes.draw_scene(**W5)
    pairs = dict(sc.pairs)
    A, B = pairs[BAD]
    pairs[BAD] = (A[:1], B[:1])
    _write(tmp_path, pairs)
    r = _run(tmp_path, monkeypatch)
    assert r.exit_code == 2
    assert "edge tag01/cam01: nothing in the data tells its readings apart (1 pair; the other edges know only its X)" \
        in r.output  # fmt: skip
    assert "(2) edges/tag01/cam01/eye.txt inverted (target_T_cam): Y cam01 at" in r.output
    # stated by the user (for every edge): the statement decides, and Y cam01 is the truth
    r = _run(tmp_path, monkeypatch, "--eye-pose", "cam_T_target", "--hand-pose", "base_T_ee", "--json", "res.json")
    assert r.exit_code == 0, r.output
    d = json.loads((tmp_path / "res.json").read_text())
    assert np.linalg.norm(np.asarray(d["Y"]["cam01"]["T"])[:3, 3] - sc.Y["cam01"][:3, 3]) < 0.02


def test_one_edge_alone_with_one_stream_inverted_names_both_readings():
    sc = scenes.draw_scene(2, 0, n_cameras=1, n_targets=1, pairs_per_edge=10)
    (e, (A, B)), = sc.pairs.items()
    ch = me.check_edges({e: (A, se3.invert_transform(B))})[e]
    assert ch.contradicted and set(ch.fitting) == {(False, True), (True, False)}
    with pytest.raises(me.EdgeReadingError, match=r"2 readings fit about equally .*no other edge shares its X or Y"):
        calibrate_multi({e: (A, se3.invert_transform(B))})


def test_clean_scenes_raise_no_alarm_and_every_inverted_edge_is_found():
    for sid, (graph, conf) in enumerate([("dense", "eye_to_hand"), ("sparse", "eye_in_hand"), ("tree", "eye_to_hand"),
                                         ("sparse", "eye_to_hand")]):  # fmt: skip
        sc = scenes.draw_scene(11, sid, n_cameras=3, n_targets=3, graph=graph, configuration=conf, n_pairs=40,
                               outlier_fraction=0.1 if sid == 3 else 0.0)  # fmt: skip
        ch = me.check_edges(sc.pairs)
        assert not any(c.contradicted for c in ch.values()), (sid, {e: c.margin for e, c in ch.items()})
        for e in list(sc.pairs)[:2]:
            for which in ("eye", "hand"):
                ch = me.check_edges(_inverted(sc.pairs, e, which))
                assert [f for f, c in ch.items() if c.contradicted] == [e], (sid, e, which)
                assert ch[e].fitting == [(which == "hand", which == "eye")]


def test_a_clean_scene_passes_within_3_sigma(tmp_path, monkeypatch):
    sc = scenes.draw_scene(**W5)
    res = calibrate_multi(sc.pairs)
    assert res.determined and not res.warnings
    assert res.verdict.endswith(f"rotations certified globally optimal (duality gap {res.certificate['duality_gap']:.3g}).")
    _assert_within_3_sigma(res.to_dict(), sc)


# --------------------------------------------------------------------------- #
# the limits and the certificate's words
# --------------------------------------------------------------------------- #
def test_an_unknown_beyond_the_limits_is_not_determined(tmp_path, monkeypatch):
    sc = scenes.draw_scene(seed=4, scene_id=0, n_cameras=2, n_targets=2, graph="tree", pairs_per_edge=4,
                           camera_noise=(0.03, 0.03, 0.06))  # fmt: skip
    res = calibrate_multi(sc.pairs)
    assert not res.determined and res.observability["Y:cam01"]["undetermined"] == ["precision"]
    assert res.observability["Y:cam01"]["std_max_mm"] > 20
    assert any(w.startswith("Y:cam01: standard deviations up to") for w in res.warnings)
    _write(tmp_path, sc.pairs)
    r = _run(tmp_path, monkeypatch)
    assert r.exit_code == 2 and "NOT determined by these pairs: Y:cam01" in r.output
    assert _run(tmp_path, monkeypatch, "--force").exit_code == 0


def test_the_certificate_is_stated_for_the_edges_it_covers():
    """An edge of random poses: the robust fit rejects it; the certificate says it covers the other edges."""
    sc = scenes.draw_scene(seed=1, scene_id=0, n_cameras=3, n_targets=4, graph="dense", pairs_per_edge=8)
    pairs = dict(sc.pairs)
    A, _ = pairs[("tag02", "cam01")]
    rng = np.random.default_rng(0)
    pairs[("tag02", "cam01")] = (A, se3.transform_from_rotation_translation(se3.random_rotations(rng, len(A)),
                                                                            rng.normal(0, 1, (len(A), 3))))  # fmt: skip
    res = calibrate_multi(pairs)  # no reading of random poses fits: nothing to refuse
    c = res.certificate
    assert (c["edges_total"], c["edges_certified"], c["edges_left_out"]) == (12, 11, ["tag02-cam01"])
    assert "every pair of edge tag02-cam01 rejected" in res.verdict
    assert ("rotations certified globally optimal for the 11 of 12 edges kept (tag02-cam01 left out by the outlier "
            "gate)") in res.verdict  # fmt: skip
    for k in ("tag00", "tag01", "tag03"):
        assert np.degrees(np.linalg.norm(se3.so3_log(res.X[k][:3, :3].T @ sc.X[k][:3, :3]))) < 0.5


def test_every_reading_within_the_decisive_margin_of_the_best_fits():
    """Readings the evidence cannot separate by a factor of 100 all fit (and the edge is then not read by default)."""
    r0, r1, r2, r3 = me.READINGS
    total = {r0: -3.0, r1: -3.0 - 0.5 * cv.DECISIVE, r2: -3.0 - 1.5 * cv.DECISIVE, r3: -50.0}
    chk = me.EdgeCheck(edge=("tag01", "cam01"), n=8, own=total, graph={r: 0.0 for r in total}, total=total,
                       fit={}, gives={}, refs=("X", "Y"))
    assert chk.best == r0 and chk.margin == 0.0 and not chk.contradicted
    assert chk.fitting == [r0, r1]  # within ln 100 of the best; r2 and r3 beyond it
    flipped = {**total, r1: 5.0}
    chk = me.EdgeCheck(("tag01", "cam01"), 8, flipped, {r: 0.0 for r in total}, flipped, {}, {}, ("X", "Y"))
    assert chk.best == r1 and chk.margin == pytest.approx(8.0) and chk.contradicted and chk.fitting == [r1]
