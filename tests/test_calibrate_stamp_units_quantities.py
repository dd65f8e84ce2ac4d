"""The stamp units (:mod:`kinhec.calibrate.stamp_units`) against hand computations: a unit's rate and duration,
the plausible ranges' edges on both sides, a stated unit pair applied per file, the offset edge's threshold and
its message."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.calibrate import stamp_units as su
from kinhec.calibrate.readers import PoseStream
from kinhec.util.errors import InputError, UnknownNameError


def _stream(t, path="h.txt", stamp_unit=None):
    n = len(t)
    return PoseStream(T=np.tile(np.eye(4), (n, 1, 1)), t=np.asarray(t, dtype=float), lines=np.arange(1, n + 1),
                      path=path, name=path, fmt="tum", stamp_unit=stamp_unit)


@pytest.mark.parametrize("unit, f", [("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)])
def test_a_units_rate_and_duration(unit, f):
    # 101 stamps 20 apart in the file's numbers: 1 / (20 f) Hz over 2000 f s
    ok, rate, dur = su.plausible(np.arange(101) * 20.0, unit)
    assert rate == pytest.approx(1.0 / (20.0 * f), rel=1e-12) and dur == pytest.approx(2000.0 * f, rel=1e-12)
    assert ok == (unit == "ms")  # 50 Hz over 2 s; in seconds 0.05 Hz, in us 2 ms long


@pytest.mark.parametrize("step, ok", [(5.0, True), (5.05, False), (1 / 4950, True), (1 / 5050, False)])
def test_the_rate_range_edges(step, ok):
    # 0.2 Hz to 5 kHz: 1 % inside and outside either end (the duration kept within 1 s to 12 h)
    t = np.arange(6000) * step if step < 1 else np.arange(20) * step
    assert su.plausible(t, "s")[0] is ok


@pytest.mark.parametrize("span, ok", [(1.0, True), (0.99, False), (43200.0, True), (43300.0, False)])
def test_the_duration_range_edges(span, ok):
    n = 11 if span < 2 else 9001  # 10 Hz and 0.2 Hz (about)
    assert su.plausible(np.linspace(0.0, span, n), "s")[0] is ok


def test_stamp_unit_pairs():
    assert su.stamp_unit_pair(None) == (None, None)
    assert su.stamp_unit_pair("ms") == ("ms", "ms") and su.stamp_unit_pair("ns, s") == ("ns", "s")
    with pytest.raises(UnknownNameError):
        su.stamp_unit_pair("sec")
    with pytest.raises(InputError) as e:
        su.stamp_unit_pair("ms,s,s")
    assert str(e.value) == "stamp unit: expected one of s, ms, us, ns or HAND,EYE (e.g. ns,s), got 'ms,s,s'"


def test_a_stated_pair_converts_each_file_in_its_own_unit():
    t = np.arange(200) * 0.02  # 50 Hz over 4 s
    hand, eye = _stream(t * 1000.0), _stream(t + 0.01, path="e.txt")
    h, e = su.settle(hand, eye, "ms,s")
    assert np.allclose(h.t, t, rtol=1e-15, atol=1e-15) and h.stamp_unit == "s" and e is eye
    # unstated: the milliseconds are found (a 0.05 Hz stream over 66 min, as seconds, is not a pose stream)
    h, e = su.settle(hand, eye)
    assert np.allclose(h.t, t, rtol=1e-15, atol=1e-15) and e is eye
    assert h.notes[-1] == ("h.txt: time stamps read in ms, not s: in s they give 0.05 Hz over 66.3 min (a pose stream "
                           "reports at 0.2 Hz to 5 kHz), in ms 50 Hz over 3.98 s, the only unit that makes both files "
                           "plausible and their spans overlap (--stamp-unit to state it)")


@pytest.mark.parametrize("offset, period, edge", [(0.48, 0.02, True), (0.4799, 0.02, False), (-0.48, 0.02, True),
                                                  (0.45, 0.5, True), (0.4499, 0.5, False), (0.4999, -1.0, False),
                                                  (0.5, -1.0, True)])
def test_offset_edge_threshold(offset, period, edge):
    # within one period of +-max, or a tenth of the range for slower streams (never a negative period)
    assert su.offset_at_edge(offset, 0.5, period) is edge


@pytest.mark.parametrize("coarse", [True, False])
def test_offset_edge_message_and_force(coarse):
    hand, eye = _stream(np.arange(100) * 0.02), _stream(np.arange(60) / 30.0, path="e.txt")
    what = ("the coarse estimate (angular-speed correlation or pose-fit scan) peaks" if coarse
            else "the refined offset ends")
    body = (f"the clock offset is not determined: {what} at -490.0 ms, the edge of the searched +-0.5 s, so the true "
            "offset may lie beyond it; widen the search (--max-offset SECONDS), give the offset (--offset SECONDS), "
            "or check the time stamps' unit (--stamp-unit: h.txt runs at 50 Hz, e.txt at 30 Hz as read)")
    with pytest.raises(InputError) as e:
        su.check_offset_edge(hand, eye, -0.49, 0.5, coarse=coarse, force=False, warnings=[])
    assert str(e.value) == "h.txt, lines 1-100 and e.txt, lines 1-60: " + body
    warnings = ["earlier"]
    assert su.check_offset_edge(hand, eye, -0.49, 0.5, coarse=coarse, force=True, warnings=warnings) is True
    assert warnings == [body + "; kept (--force)", "earlier"]


def test_a_rigs_hand_unit_is_settled_with_the_first_camera():
    # the body stamped in ms, the first camera in s, the second in ms: the body's unit found with the first camera
    # (ms) holds for the second, whose stamps are then read in ms too
    t = np.arange(200) * 0.02
    hand = _stream(t * 1000.0)
    cams = [_stream(t + 0.01, path="c1.txt"), _stream((t + 0.01) * 1000.0, path="c2.txt")]
    h, eyes = su.settle_streams(hand, cams)
    assert np.allclose(h.t, t, rtol=1e-15, atol=1e-15) and eyes[0] is cams[0]
    assert np.allclose(eyes[1].t, t + 0.01, rtol=1e-15, atol=1e-15) and eyes[1].stamp_unit == "s"
    assert su.settle_streams(None, cams) == (None, cams) and su.settle_streams(hand, []) == (hand, [])
