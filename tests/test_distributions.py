"""``kinhec.util.distributions``: the chi-square and F tails and quantiles of ``scipy.stats``, without importing it.

Each function is compared with ``scipy.stats`` on a grid that covers the interior, the ends of the range
(``x <= 0``, ``q`` at 0 and 1, infinities) and invalid arguments (NaN, degrees of freedom <= 0): the values
must be the same to the last bit.  A fresh interpreter then runs the calibration's quantiles and checks that
``scipy.stats`` was never imported.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from kinhec.util import distributions as dist

_RNG = np.random.default_rng(20261207)
X = np.concatenate([[0.0, -1.0, 1e-300, 1e-8, 0.5, 1.0, 6.0, 12.59, 16.81, 22.46, 100.0, 1e4, np.inf, np.nan],
                    _RNG.uniform(0.0, 60.0, 200), _RNG.lognormal(0.0, 3.0, 200)])  # fmt: skip
Q = np.concatenate([[0.0, 1.0, 1e-12, 1e-6, 1e-3, 0.025, 0.05, 0.5, 0.95, 0.975, 0.99, 0.999, 1.0 - 1e-12, -0.1, 1.1,
                     np.nan], _RNG.uniform(0.0, 1.0, 200)])  # fmt: skip
DOF = [1, 2, 3, 5, 6, 7.5, 12, 18, 30, 99.5, 300, 1e4, 0.3, 0, -1]


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


@pytest.mark.parametrize("df", DOF)
def test_chi_square_is_scipy_stats_to_the_last_bit(df):
    assert _same(dist.chi2_sf(X, df), stats.chi2.sf(X, df))
    assert _same(dist.chi2_ppf(Q, df), stats.chi2.ppf(Q, df))


@pytest.mark.parametrize("dfn", DOF)
def test_f_is_scipy_stats_to_the_last_bit(dfn):
    for dfd in (1, 3, 7, 20.5, 1e3, 0):
        assert _same(dist.f_sf(X, dfn, dfd), stats.f.sf(X, dfn, dfd))
        assert _same(dist.f_ppf(Q, dfn, dfd), stats.f.ppf(Q, dfn, dfd))


def test_scalars_and_broadcasting_as_scipy_stats():
    v = dist.chi2_ppf(0.95, 6)
    assert type(v) is type(stats.chi2.ppf(0.95, 6)) and v == stats.chi2.ppf(0.95, 6)
    assert abs(v - 12.591587243743977) < 1e-12  # the familiar table value
    assert _same(dist.chi2_ppf([0.025, 0.975], [[4.0], [10.0]]), stats.chi2.ppf([0.025, 0.975], [[4.0], [10.0]]))
    assert _same(dist.f_ppf(0.99, [3, 6], 12.5), stats.f.ppf(0.99, [3, 6], 12.5))
    # the quantile and the tail agree: sf(ppf(q)) = 1 - q
    q = np.array([0.5, 0.9, 0.99])
    np.testing.assert_allclose(dist.chi2_sf(dist.chi2_ppf(q, 7.0), 7.0), 1.0 - q, rtol=1e-10)
    np.testing.assert_allclose(dist.f_sf(dist.f_ppf(q, 6.0, 20.0), 6.0, 20.0), 1.0 - q, rtol=1e-10)


_NO_STATS = """
import json, sys
import numpy as np
from kinhec.calibrate import held_out, held_out_pixels, uncertainty, check  # noqa: F401
from kinhec.solvers import multi_axyb  # noqa: F401
vals = [held_out._region_quantile(np.inf, "full", 0.95), held_out._region_quantile(20.0, "full", 0.95),
        held_out._region_quantile(9.0, "diagonal", 0.95), held_out._region_quantile(9.0, "block", 0.95),
        *held_out.rms_interval(3.0, 1.5, 10, 0.95), held_out.rms_upper(3.0, 1.5, 10, 0.99),
        float(held_out_pixels._scaled_chi2(3.0, 1.5, 0.95))]
print(json.dumps({"stats": "scipy.stats" in sys.modules, "values": vals}))
"""


def test_the_calibration_quantiles_do_not_import_scipy_stats():
    out = subprocess.run([sys.executable, "-c", _NO_STATS], capture_output=True, text=True, check=True, timeout=120)
    res = json.loads(out.stdout)
    assert res["stats"] is False
    # the same values as through scipy.stats (here, where it may be imported)
    p = 6
    expected = [stats.chi2.ppf(0.95, p), p * 20.0 / (20.0 - p + 1.0) * stats.f.ppf(0.95, p, 20.0 - p + 1.0)]
    assert res["values"][:2] == [float(v) for v in expected]
    dof = 2.0 * 3.0 * 3.0 / 1.5
    a = (1.0 - 0.95) / 2.0  # (as rms_interval forms it: 0.025 and a bit)
    lo, hi = stats.chi2.ppf([a, 1.0 - a], dof) / dof
    assert res["values"][4:6] == [float(np.sqrt(3.0 / 10 * lo)), float(np.sqrt(3.0 / 10 * hi))]
    assert res["values"][7] == float(3.0 / dof * stats.chi2.ppf(0.95, dof))
