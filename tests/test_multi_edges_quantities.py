"""The edges of a multi-camera calibration (:mod:`kinhec.calibrate.multi_edges`): what states the direction of an
edge's file (in its order of precedence, with the exact message of a bad option), and the verdict on an edge's
readings from their scores -- the best, the margin over the reading as read, the decisive threshold on both sides
and the readings that fit."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.calibrate import conventions as cv
from kinhec.calibrate import multi_edges as me
from kinhec.calibrate.readers import PoseStream
from kinhec.util.errors import InputError


def _stream(path="cam0.txt", direction=None, comments=()):
    return PoseStream(T=np.tile(np.eye(4), (3, 1, 1)), t=None, lines=np.arange(1, 4), path=path, name="cam0",
                      fmt="tum" if direction is None else "tabb", direction=direction, comments=list(comments))


def test_what_states_an_edges_direction():
    s = _stream(comments=["poses T_target_cam"])
    assert me.stated_direction(s, "eye", "c/t", "cam_T_target", "target_T_cam") == ("cam_T_target", "--edge-pose c/t/eye")
    assert me.stated_direction(s, "eye", "c/t", None, "cam_T_target") == ("cam_T_target", "--eye-pose")
    assert me.stated_direction(_stream(direction="cam_T_target"), "eye", "c/t", None, None) == (None, "the tabb format")
    got, why = me.stated_direction(s, "eye", "c/t", None, None)
    assert got == "target_T_cam" and why != "the default"
    assert me.stated_direction(_stream(), "hand", "c/t", None, None) == ("base_T_ee", "the default")
    assert me.stated_direction(_stream(), "eye", "c/t", None, None) == ("cam_T_target", "the default")
    with pytest.raises(InputError) as e:
        me.stated_direction(s, "hand", "c/t", "cam_T_target", None)
    assert str(e.value) == "--edge-pose c/t/hand: expected one of base_T_ee, ee_T_base, got 'cam_T_target'"
    f = me.arrays_files(("cam0", "tag1"))
    assert f.key == "cam0/tag1" and f.hand == "pairs[('cam0', 'tag1')] A" and not f.files


def _check(totals):
    total = dict(zip(me.READINGS, totals))
    return me.EdgeCheck(edge=("c", "t"), n=10, own=total, graph=dict.fromkeys(me.READINGS, 0.0), total=total,
                        fit={}, gives={}, refs=())


@pytest.mark.parametrize("gap, contradicted", [(0.999, False), (1.001, True)])
def test_an_edge_is_contradicted_by_the_decisive_margin(gap, contradicted):
    d = cv.DECISIVE
    ch = _check([-gap * d, 0.0, -3 * d, -0.5 * d])
    assert ch.best == (False, True) and ch.margin == pytest.approx(gap * d, rel=1e-12)
    assert ch.contradicted is contradicted
    # within the margin of the best, best first: the eye inverted, then both inverted, then (if close) as read
    assert ch.fitting == ([(False, True), (True, True), (False, False)] if not contradicted else
                          [(False, True), (True, True)])
    d_ = ch.to_dict()
    assert d_["edge"] == "c/t" and d_["fits"][0] == "eye inverted" and d_["contradicted"] is contradicted


def test_the_graph_fit_is_in_degrees_as_the_edges_own_fit():
    """An edge's residual against the other edges and its residual on its own are medians of the same noise, both in
    degrees and millimetres: on a clean scene they agree within a factor of 3 (radians would be 57x smaller)."""
    from kinhec.synth import scenes

    sc = scenes.draw_scene(11, 0, n_cameras=3, n_targets=3, graph="dense", configuration="eye_to_hand", n_pairs=40)
    as_read = me.READINGS[0]
    for e, c in me.check_edges(sc.pairs).items():
        graph, alone = c.fit[as_read], me.check_edges({e: sc.pairs[e]})[e].fit[as_read]
        assert graph[2] == "graph" and alone[2] == "own"
        assert 1 / 3 < graph[0] / alone[0] < 3 and 1 / 3 < graph[1] / alone[1] < 3, (e, graph, alone)
