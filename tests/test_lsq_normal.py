"""The normal equations formed from a block Jacobian's parts equal the dense products."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.geometry.lsq import BlockStructure, block_jacobian, block_jacobian_parts


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_block_normal_equations_equal_the_dense_products(seed):
    rng = np.random.default_rng(seed)
    n_views, n_shared, block = 5, 4, 6
    # rows of the views interleaved, a view's prior rows apart from its pixel rows, two rows of no view
    row_view = np.concatenate([np.repeat(np.arange(n_views), 7), np.repeat(np.arange(n_views), 6), [-1, -1]])
    rng.shuffle(row_view)
    s = BlockStructure(n_shared, n_views, block, row_view)
    A = rng.normal(size=(row_view.size, s.n_params)) * (s.pattern().toarray() != 0) * rng.uniform(0.1, 30, s.n_params)

    def fun(x):
        return np.sin(A @ x) + 0.1 * (A @ x) ** 2

    x = rng.normal(size=s.n_params)
    r = fun(x)
    parts = block_jacobian_parts(fun, x, r, s)
    J = parts.csr().toarray()
    np.testing.assert_array_equal(J, block_jacobian(fun, x, r, s).toarray())
    w = rng.uniform(0.2, 1.0, row_view.size)
    H, g = parts.normal(r, w)
    scale = np.abs(J.T @ (w[:, None] * J)).max()
    np.testing.assert_allclose(H, J.T @ (w[:, None] * J), rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(g, J.T @ (w * r), rtol=0, atol=1e-13 * np.abs(J.T @ (w * r)).max())
    H1, g1 = parts.normal()
    assert g1 is None
    np.testing.assert_allclose(H1, J.T @ J, rtol=0, atol=1e-13 * np.abs(J.T @ J).max())
    np.testing.assert_array_equal(H, H.T)  # symmetric by construction
