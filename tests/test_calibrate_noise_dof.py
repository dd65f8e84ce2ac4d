"""The degrees of freedom of calibrate's noise estimate: the inlying pairs less the fit's parameters over 6."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.calibrate import calibrate

from helpers.recordings import streams, write_tum


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("dof")
    t, A, C = streams(np.random.default_rng(7), 40)
    return str(write_tum(d / "hand.txt", t, A)), str(write_tum(d / "eye.txt", t, C))


def test_twelve_free_parameters_take_two_pairs_worth(files):
    # X and Y (12 parameters, no prior), scale and offset held: 40 inlying pairs leave 40 - 12 / 6 = 38
    res = calibrate(files[0], [files[1]], setup="eye_in_hand", scale="fixed", offset="none")
    assert res.outliers == [] and res.n_pairs == 40
    assert res.observability["noise_dof"] == pytest.approx(38.0, abs=1e-9)


def test_a_scale_under_its_prior_counts_for_what_the_data_add(files):
    # the metric scale estimated under its 0.5 % prior: a thirteenth parameter, counted between 0 and 1
    dof = calibrate(files[0], [files[1]], setup="eye_in_hand", offset="none").observability["noise_dof"]
    assert 40.0 - 13.0 / 6.0 < dof < 38.0
