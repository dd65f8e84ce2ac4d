"""The clock offset of a repeated path: the coarse cross-correlation can lock on a wrong peak, and a fit started
from a zero offset, kept when it fits better, brings the offset and X back (kinhec.calibrate.same_clock)."""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate import same_clock

from helpers.recordings import calibrated_mixed


def test_a_wrong_correlation_peak_is_left_for_the_same_clock(tmp_path):
    g, res = calibrated_mixed(tmp_path)  # helpers.recordings.MIXED_ONE_CLOCK: seed 2
    # the fit started from the correlation peak ends worse than one from a zero offset, which is kept (on the scene
    # of seed 32 before the dwells were drawn in 0.6-1.4 s, the first fit alone gave an offset of 33.33 ms and X
    # 1.17 deg / 4.3 mm off, 'determined' with NEES 60)
    assert any("fitted worse than a fit started from a zero offset" in n for n in res.notes), res.notes
    period = float(np.median(np.diff(g.t_robot_s)))
    assert abs(res.time_offset_s) < period, res.time_offset_s
    rot_err, trans_err = se3.pose_error(res.X, g.X)
    assert rot_err < 0.3 and trans_err < 1.5, (rot_err, trans_err)


def test_no_refit_when_the_offset_ends_near_zero():
    class _Sol:
        offset = 0.0049  # within half a sample period of zero: the fit from zero would end where this one did

    assert same_clock.refit_from_zero_offset(None, None, None, None, None, _Sol(), {}, margin_s=0.0, period_s=0.01,
                                             solver=None, scale=False, candidate_domain=True) is None  # fmt: skip
