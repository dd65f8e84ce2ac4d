"""The scale report (``kinhec.calibrate.scale.describe``): when it warns and what it blames."""

from __future__ import annotations

from kinhec.calibrate import scale as sc


def test_longer_eye_translations_mean_a_smaller_board():
    _, warn, _ = sc.describe(1.02, 0.001, 0.001, prior_std=sc.PRIOR_STD)
    assert len(warn) == 1 and "2 % longer" in warn[0] and "2 % smaller than stated" in warn[0]
    _, warn, _ = sc.describe(0.98, 0.001, 0.001, prior_std=sc.PRIOR_STD)
    assert len(warn) == 1 and "2 % shorter" in warn[0] and "2 % larger than stated" in warn[0]


def test_a_warning_needs_both_significance_and_size():
    # 0.2 % off but within 3 standard deviations of 1 (std 0.1 %): no warning
    report, warn, notes = sc.describe(1.002, 0.001, 0.001, prior_std=sc.PRIOR_STD)
    assert report["determined"] and warn == [] and len(notes) == 1
    # significant (30 standard deviations) but below the smallest departure worth a warning (0.1 %)
    assert sc.describe(1.0006, 2e-5, 2e-5, prior_std=sc.PRIOR_STD)[1] == []
    # both: a warning
    assert len(sc.describe(1.004, 0.001, 0.001, prior_std=sc.PRIOR_STD)[1]) == 1
