"""The runs test that tells clustered outliers from scattered ones (kinhec.calibrate.outliers.runs_z)."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.calibrate import outliers as ol


def _wald_wolfowitz(n1: int, n2: int, runs: int) -> float:
    """The runs test's z from its textbook moments: mean 2 n1 n2 / n + 1, variance
    2 n1 n2 (2 n1 n2 - n) / (n^2 (n - 1))."""
    n = n1 + n2
    mean = 2 * n1 * n2 / n + 1
    var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n**2 * (n - 1))
    return (runs - mean) / np.sqrt(var)


def test_runs_z_of_two_blocks_and_of_alternation():
    # ten True then ten False: 2 runs against a mean of 11 and a variance of 36000/7600, z = -9/2.1764 = -4.135
    blocks = np.r_[np.ones(10, bool), np.zeros(10, bool)]
    assert ol.runs_z(blocks) == pytest.approx(-4.1352, abs=1e-4)
    assert ol.runs_z(~blocks) == pytest.approx(-4.1352, abs=1e-4)  # the labels' names do not matter
    # alternating: 20 runs, as far above the mean as the blocks are below it
    assert ol.runs_z(np.arange(20) % 2 == 0) == pytest.approx(4.1352, abs=1e-4)


def test_runs_z_matches_the_textbook_moments_on_uneven_sequences():
    rng = np.random.default_rng(8)
    for _ in range(20):
        x = rng.random(int(rng.integers(5, 40))) < rng.uniform(0.1, 0.5)
        n1, n2 = int(x.sum()), int((~x).sum())
        if n1 == 0 or n2 == 0:
            continue
        runs = 1 + int(np.sum(x[1:] != x[:-1]))
        assert ol.runs_z(x) == pytest.approx(_wald_wolfowitz(n1, n2, runs), rel=1e-12)
    assert ol.runs_z(np.ones(8, bool)) == 0.0  # one label only: undefined
