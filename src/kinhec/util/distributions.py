"""Chi-square and F tail probabilities and quantiles from :mod:`scipy.special`, without :mod:`scipy.stats`.

``import scipy.stats`` costs about a quarter of a CPU-second (its hundred distributions are built on import),
more than some of the commands that need a quantile or two spend on their arithmetic.  These four functions
are the ones kinhec uses, computed by the same special functions ``scipy.stats.chi2`` and ``scipy.stats.f``
call (``chdtrc``, ``gammaincinv``, ``fdtrc``, ``fdtri``), so they return the same values, with the same
answers at the ends of the range (``ppf(0) = 0``, ``ppf(1) = inf``, ``sf(x <= 0) = 1``).  Arguments broadcast;
a scalar in gives a numpy scalar out, as ``scipy.stats`` does.
"""

from __future__ import annotations

import numpy as np

__all__ = ["chi2_sf", "chi2_ppf", "f_sf", "f_ppf"]


def _out(v):
    return v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v


def chi2_sf(x, df):
    """``P(X > x)`` for ``X ~ chi2(df)`` (``scipy.stats.chi2.sf``)."""
    from scipy.special import chdtrc

    x, df = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(df, dtype=np.float64))
    ok = df > 0
    out = np.where(x <= 0, 1.0, chdtrc(df, np.maximum(x, 0.0)))
    return _out(np.where(ok & ~np.isnan(x), out, np.nan))


def chi2_ppf(q, df):
    """The ``q`` quantile of ``chi2(df)`` (``scipy.stats.chi2.ppf``)."""
    from scipy.special import gammaincinv

    q, df = np.broadcast_arrays(np.asarray(q, dtype=np.float64), np.asarray(df, dtype=np.float64))
    ok = (df > 0) & (q >= 0) & (q <= 1)
    inner = 2 * gammaincinv(df / 2, np.clip(q, 0.0, 1.0))
    out = np.where(q == 0, 0.0, np.where(q == 1, np.inf, inner))
    return _out(np.where(ok, out, np.nan))


def f_sf(x, dfn, dfd):
    """``P(X > x)`` for ``X ~ F(dfn, dfd)`` (``scipy.stats.f.sf``)."""
    from scipy.special import fdtrc

    x, dfn, dfd = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (x, dfn, dfd)))
    ok = (dfn > 0) & (dfd > 0)
    out = np.where(x <= 0, 1.0, fdtrc(dfn, dfd, np.maximum(x, 0.0)))
    return _out(np.where(ok & ~np.isnan(x), out, np.nan))


def f_ppf(q, dfn, dfd):
    """The ``q`` quantile of ``F(dfn, dfd)`` (``scipy.stats.f.ppf``)."""
    from scipy.special import fdtri

    q, dfn, dfd = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (q, dfn, dfd)))
    ok = (dfn > 0) & (dfd > 0) & (q >= 0) & (q <= 1)
    inner = fdtri(dfn, dfd, np.clip(q, 0.0, 1.0))
    out = np.where(q == 0, 0.0, np.where(q == 1, np.inf, inner))
    return _out(np.where(ok, out, np.nan))
