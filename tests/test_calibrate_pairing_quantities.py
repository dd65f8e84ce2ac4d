"""Pairing by time and by order (:mod:`kinhec.calibrate.pairing`) against streams whose poses are known functions of
time: the interpolation at and between samples, the clock convention (eye stamp = hand time + offset) in both
directions, the gap threshold on both sides, the margin's pairs, repeated pairs, alignments and the coarse offset."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.calibrate import pairing as pr
from kinhec.calibrate.readers import PoseStream
from kinhec.geometry import se3
from kinhec.util.errors import InputError

W = np.array([0.3, -0.2, 0.5])  # rotation rate [rad/s] about a fixed axis
V = np.array([0.1, 0.05, -0.02])  # translation rate [m/s]


def linear_motion(t):
    """Poses whose rotation turns at a constant rate about a fixed axis and whose translation moves linearly:
    SLERP and linear interpolation reproduce them exactly between any two samples."""
    t = np.asarray(t, dtype=float)
    return se3.transform_from_rotation_translation(se3.so3_exp(np.outer(t, W)), np.outer(t, V) + [0.4, 0.0, 0.3])


def _stream(t, T=None, path="h.txt"):
    t = np.asarray(t, dtype=float)
    T = linear_motion(t) if T is None else T
    return PoseStream(T=T, t=t, lines=np.arange(1, len(t) + 1), path=path, name=path, fmt="tum")


def test_interpolation_is_exact_at_and_between_samples():
    t = np.array([0.0, 0.1, 0.3, 0.4, 0.7])
    it = pr.Interpolator(t, linear_motion(t))
    tq = np.array([0.0, 0.05, 0.2, 0.31, 0.55, 0.7])
    assert np.allclose(it(tq), linear_motion(tq), rtol=0, atol=1e-13)
    assert it.period == pytest.approx(0.15, abs=1e-15)  # the median step (of 0.1, 0.2, 0.1, 0.3)


def test_interpolated_rotation_is_the_geodesic_in_the_body_frame():
    # R0 to R0 exp(phi) about an axis that is not R0's: a quarter of the way is R0 exp(phi / 4)
    R0, phi = se3.so3_exp([1.0, 0.0, 0.0]), np.array([0.0, 0.6, 0.2])
    T = se3.transform_from_rotation_translation(np.stack([R0, R0 @ se3.so3_exp(phi)]), [[0.0, 0, 0], [1.0, 2.0, 3.0]])
    got = pr.Interpolator(np.array([0.0, 2.0]), T)(np.array([0.5]))[0]
    assert np.allclose(got[:3, :3], R0 @ se3.so3_exp(phi / 4), rtol=0, atol=1e-14)
    assert np.allclose(got[:3, 3], [0.25, 0.5, 0.75], rtol=0, atol=1e-15)


def test_gap_threshold_and_the_ends():
    # median step 1/8 s: an interval of 3 periods is not a gap, one of 4 is; the ends are inside
    t = np.array([0.0, 0.125, 0.25, 0.625, 0.75, 1.25, 1.375, 1.5])
    it = pr.Interpolator(t, linear_motion(t))
    got = it.valid(np.array([-0.01, 0.0, 0.4, 1.0, 1.5, 1.51]))
    assert got.tolist() == [False, True, True, False, True, False]


@pytest.mark.parametrize("hand_dense", [True, False])
def test_time_pairing_follows_the_clock_convention(hand_dense):
    # eye stamp = hand time + offset: at offset o the eye sample stamped s pairs with the hand pose at s - o
    dense, sparse = np.arange(0.0, 10.0001, 0.1), np.arange(0.0, 10.0001, 0.5)
    t_h, t_e = (dense, sparse) if hand_dense else (sparse, dense)
    o = 0.13
    hand = _stream(t_h)
    eye_t = t_e
    B = linear_motion(eye_t - o)  # what the hand looked like when the eye sample was taken (stand-in poses)
    eye = _stream(eye_t, B, path="e.txt")
    tp = pr.TimePairing(hand, hand.T, eye, B, o, 0.0)
    A, Bp = tp.at(o)
    assert np.allclose(A, Bp, rtol=0, atol=1e-12)  # every pair at the very instant
    A2, B2 = tp.at(o + 0.02)
    if hand_dense:  # the eye's own samples, the hand re-interpolated 20 ms earlier
        assert np.allclose(A2, linear_motion(tp.t - o - 0.02), rtol=0, atol=1e-12) and np.array_equal(B2, Bp)
    else:  # the hand's own samples, the eye re-interpolated 20 ms later
        assert np.allclose(B2, linear_motion(tp.t + 0.02), rtol=0, atol=1e-12) and np.array_equal(A2, A)
    assert bool(tp.interp_hand) is hand_dense


def test_time_pairing_keeps_the_pairs_valid_over_the_margin():
    # eye every 0.5 s over [0, 10], hand every 0.1 s over [0, 10]; offset 0.2 and margin 0.3: a pair needs the
    # hand at s - 0.5 and s + 0.1, so 0 and 10 go and 0.5 .. 9.5 stay (19 pairs), with a note for 0 and 10 ...
    hand = _stream(np.arange(0.0, 10.0001, 0.1))
    eye = _stream(np.arange(0.0, 10.0001, 0.5), path="e.txt")
    tp = pr.TimePairing(hand, hand.T, eye, eye.T, 0.2, 0.3)
    assert np.allclose(tp.t, np.arange(0.5, 9.5001, 0.5), rtol=0, atol=1e-12) and len(tp) == 19
    # ... of which only 10 lies inside the hand at the offset itself (s - 0.2 = -0.2 for the first is outside)
    assert tp.notes == ["1 sample(s) of e.txt fall in gaps of the other stream or near its ends; left out"]
    assert np.array_equal(tp.eye_lines, np.arange(2, 21)) and not tp.hand_lines.any()


def test_time_pairing_refuses_streams_that_do_not_meet():
    hand = _stream(np.arange(0.0, 1.0001, 0.1))
    eye = _stream(np.arange(5.0, 6.0001, 0.5), path="e.txt")
    with pytest.raises(InputError) as e:
        pr.TimePairing(hand, hand.T, eye, eye.T, 0.0, 0.0)
    assert str(e.value) == ("h.txt, lines 1-11 and e.txt, lines 1-3: expected stamps that overlap at clock offset 0 s, "
                            "got hand [0.000000, 1.000000] s and eye [5.000000, 6.000000] s")


def test_time_pairing_says_when_streams_that_meet_are_too_short_for_the_offset_to_move():
    # three stations stamped alike in both files: they meet, but the offset's fit needs the hand on both sides of
    # every eye stamp within one sample period, which no station has
    t = np.array([0.5, 4.3, 9.2])
    hand, eye = _stream(t), _stream(t, path="e.txt")
    with pytest.raises(InputError) as e:
        pr.TimePairing(hand, hand.T, eye, eye.T, 0.0, 4.3)
    msg = str(e.value)
    assert msg.startswith("h.txt, lines 1-3 and e.txt, lines 1-3: expected samples of e.txt with samples of h.txt "
                          "around them within +-4.3 s of clock offset 0 s"), msg
    assert "none of its 3 sample(s)" in msg and msg.endswith("give it (--offset SECONDS; 0 when both streams were "
                                                               "stamped by one clock)")
    assert len(pr.TimePairing(hand, hand.T, eye, eye.T, 0.0, 0.0)) == 3  # the offset given: every station pairs


def test_too_few_pairs_left_by_the_offsets_room_are_explained():
    # four stations stamped alike: the two at the ends keep no hand sample on both sides within the margin; the two
    # left are too few, and the refusal says why and how to pair all four
    t = np.array([0.3, 6.9, 13.2, 20.7])
    hand, eye = _stream(t), _stream(t, path="e.txt")
    p = pr.TimePairing(hand, hand.T, eye, eye.T, 0.0, 6.6)
    assert len(p) == 2 and (p.n_inside, p.n_near_ends) == (4, 2)
    msg = p.left_for_offset(3, "here")
    assert msg == ("here: expected at least 3 pose pairs, got 2: of the 4 samples of e.txt inside the other stream, 2 "
                   "lie within +-6.6 s of its ends or of a gap in it, the room the clock offset's fit needs, and are "
                   "left out; give the offset (--offset SECONDS; 0 when both streams were stamped by one clock) to "
                   "pair them")
    assert p.left_for_offset(2, "here") is None  # enough pairs: nothing to explain
    assert pr.TimePairing(hand, hand.T, eye, eye.T, 0.0, 0.0).left_for_offset(3, "here") is None  # all four pair


@pytest.mark.parametrize("start, overlaps", [(1.49, True), (1.5, False)])
def test_overlap_within_the_offset_range(start, overlaps):
    # hand [0, 1], eye from `start`: they meet when the eye starts less than 0.5 s after the hand's end (touching
    # at one instant is no overlap)
    hand, eye = _stream(np.linspace(0.0, 1.0, 5)), _stream(np.linspace(start, start + 1, 5), path="e.txt")
    if overlaps:
        pr.check_overlap(hand, eye, 0.5)
    else:
        with pytest.raises(InputError, match=r"within 0\.5 s of offset\), got hand \[0\.000000, 1\.000000\] s"):
            pr.check_overlap(hand, eye, 0.5)


def test_pair_by_order_and_its_alignment():
    hand, eye = _stream(np.arange(5.0)), _stream(np.arange(4.0), path="e.txt")
    with pytest.raises(InputError) as e:
        pr.pair_by_order(hand, hand.T, eye, eye.T)
    assert str(e.value) == ("h.txt and e.txt: expected the same number of poses to pair by order (no time stamps), "
                            "got 5 (last at line 5) and 4 (last at line 4)")
    al = pr.Alignment(np.array([0, 1, 3, 4]), np.array([0, 1, 2, 3]), shift=-1, cut=2, lengths=(5, 4), note="n")
    p = pr.pair_by_order(hand, hand.T, eye, eye.T, al)
    assert np.array_equal(p.A, hand.T[[0, 1, 3, 4]]) and np.array_equal(p.B, eye.T) and p.notes == ["n"]
    assert np.array_equal(p.hand_lines, [1, 2, 4, 5]) and np.array_equal(p.t, np.arange(4.0))
    uh, ue = al.unpaired()
    assert uh.tolist() == [2] and ue.size == 0 and not al.is_identity
    sw = al.swapped()
    assert np.array_equal(sw.hand_index, al.eye_index) and sw.shift == 1 and sw.lengths == (4, 5)
    assert al.describe(hand, eye) == ("h.txt, line 3 (pose 3 of 5) without a partner (in the middle): the other rows "
                                      "pair in order")
    ident = pr.Alignment(np.arange(4), np.arange(4), lengths=(4, 4))
    assert ident.is_identity and not pr.Alignment(np.arange(4), np.arange(4), lengths=(4, 5)).is_identity


def test_shifted_rows_are_described_with_their_lines():
    hand, eye = _stream(np.arange(6.0)), _stream(np.arange(4.0), path="e.txt")
    al = pr.Alignment(np.array([0, 1, 4, 5]), np.array([0, 1, 2, 3]), shift=-2, cut=2)
    assert al.describe(hand, eye) == ("h.txt, line(s) 3, 4: pose(s) without a partner in the other file (a dropped "
                                      "image or a missed detection); the rows before pair one to one, those after "
                                      "shifted by 2")
    whole = pr.Alignment(np.arange(4), np.arange(2, 6), shift=2)
    assert whole.describe(hand, eye) == ("rows shifted by 2: hand row k with eye row k+2 (e.txt: lines of 2 pose(s) "
                                         "at one end without a partner)")


def test_repeated_pairs_count_once():
    T = linear_motion(np.arange(6.0))
    A, B = T[[0, 1, 1, 2, 1, 3]], T[[0, 2, 2, 4, 2, 5]]
    B[4] = T[3]  # pair 4 repeats the hand pose of pair 1 with another eye pose: kept
    p = pr.OrderPairing(A, B, np.arange(1, 7), np.arange(11, 17))
    out = pr.drop_repeated_pairs(p, "here")
    assert np.array_equal(out.eye_lines, [11, 12, 14, 15, 16]) and np.array_equal(out.A, A[[0, 1, 3, 4, 5]])
    assert out.notes == ["here: 1 of 6 pairs repeat an earlier pair exactly (eye lines 13): the same measurement "
                         "written again, counted once"]
    B2 = B.copy()
    B2[2] = T[3]  # the same eye pose under another hand pose is a measurement too
    A2 = A.copy()
    A2[2] = T[4]
    assert len(pr.drop_repeated_pairs(pr.OrderPairing(A2, B2, np.arange(1, 7), np.arange(11, 17)), "here")) == 6
    assert pr.drop_repeated_pairs(out, "here") is out


def test_coarse_offset_given_or_estimated():
    t = np.arange(0.0, 20.0, 0.02)
    rng = np.random.default_rng(0)
    # a wobbling rotation (its angular speed varies), the eye stamped 80 ms later than the hand's clock
    w = np.cumsum(rng.normal(0, 0.05, (t.size, 3)), axis=0)
    w = np.apply_along_axis(lambda c: np.convolve(c, np.ones(25) / 25, mode="same"), 0, w)
    T = se3.transform_from_rotation_translation(se3.so3_exp(w), np.zeros((t.size, 3)))
    hand, eye = _stream(t, T), _stream(t + 0.08, T, path="e.txt")
    assert pr.coarse_offset(hand, T, eye, T, "none", 0.5) == pr.CoarseOffset(0.0)
    given = pr.coarse_offset(hand, T, eye, T, 0.05, 0.5)
    assert given.offset_s == 0.05 and not given.estimated and given.peak is None
    est = pr.coarse_offset(hand, T, eye, T, "auto", 0.5)
    assert est.estimated and abs(est.offset_s - 0.08) <= 0.02 and est.peak > pr.MIN_PEAK_CORR and not est.at_edge
    assert est.notes == [] and est.warnings == []  # correlated well: no scan of the pose fit


def test_offset_step_holds_the_sample_noise_out_of_the_slope():
    """A 500 Hz hand stream whose positions carry 0.05 mm of noise, paired with a 30 Hz eye: the offset's central
    difference spans ``h = sigma / sqrt(2 eps v^2)`` (``v^2 = |V|^2 / 3`` the mean squared speed per component,
    ``eps`` = OFFSET_SLOPE_NOISE), so the slope's noise ``sigma^2 / (2 h^2)`` is ``eps`` of the motion's; exact
    samples need the least step; noise on a stream that does not move, the longest (half the margin)."""
    rng = np.random.default_rng(21)
    sigma = 5e-5
    t_h = np.arange(0.0, 6.0, 0.002)
    t_e = np.arange(0.05, 5.9, 1.0 / 30.0)
    noisy = linear_motion(t_h)
    noisy[:, :3, 3] += rng.normal(0.0, sigma, (t_h.size, 3))
    eye = _stream(t_e, path="e.txt")
    p = pr.TimePairing(_stream(t_h, noisy), noisy, eye, eye.T, 0.0, 0.1)
    expected = sigma / np.sqrt(2.0 * pr.OFFSET_SLOPE_NOISE * float(V @ V) / 3.0)
    assert p.offset_step(0.0) == pytest.approx(expected, rel=0.1)
    exact = linear_motion(t_h)
    assert pr.TimePairing(_stream(t_h), exact, eye, eye.T, 0.0, 0.1).offset_step(0.0) == pr.MIN_OFFSET_STEP_S
    still = np.broadcast_to(linear_motion([0.0]), (t_h.size, 4, 4)).copy()
    still[:, :3, 3] += rng.normal(0.0, sigma, (t_h.size, 3))
    assert pr.TimePairing(_stream(t_h, still), still, eye, eye.T, 0.0, 0.1).offset_step(0.0) == pytest.approx(0.05)
