"""The synthetic calibration chains of ``helpers.chains`` (robot flange poses, ``X``, ``Y`` and the camera poses in
either configuration, with the dataset's noise models, outliers and a monocular scale) satisfy the identities the
solver tests rely on."""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3

from helpers.chains import CONFIGURATIONS, WORKSPACES, make_chain


# --------------------------------------------------------------------------- #
# the identities the solvers rely on
# --------------------------------------------------------------------------- #
def test_chain_satisfies_axyb_and_axxb():
    rng = np.random.default_rng(1)
    for conf in CONFIGURATIONS:
        ch = make_chain(rng, 12, configuration=conf)
        np.testing.assert_allclose(ch.A_abs @ ch.X, ch.Y @ ch.B_abs, atol=1e-12)
        A, B = ch.motions()
        np.testing.assert_allclose(A @ ch.X, ch.X @ B, atol=1e-12)
        # the motion of the camera is the flange motion seen from the camera frame
        np.testing.assert_allclose(B, se3.invert_transform(ch.X) @ A @ ch.X, atol=1e-12)


def test_chain_geometry_is_realistic():
    rng = np.random.default_rng(2)
    for conf in CONFIGURATIONS:
        for ws in WORKSPACES:
            ch = make_chain(rng, 30, configuration=conf, workspace=ws)
            assert 0.0 < np.linalg.norm(ch.X[:3, 3]) < 0.15
            # distance from the camera to the board / marker
            T_ct = se3.invert_transform(ch.B_abs_gt) if conf == "eye_in_hand" else ch.B_abs_gt
            dist = np.linalg.norm(T_ct[:, :3, 3], axis=1)
            assert 0.3 < np.median(dist) < 1.8
            if conf == "eye_to_hand":
                # the static camera looks at the marker: positive depth
                assert (T_ct[:, 2, 3] > 0).all()


def test_chain_noise_and_scale_models():
    rng = np.random.default_rng(3)
    ch = make_chain(rng, 2000, robot_noise=(0.001, 0.0005), camera_noise=(0.002, 0.001, 0.001, 0.004))
    xi = se3.se3_log(se3.invert_transform(ch.A_abs_gt) @ ch.A_abs)
    np.testing.assert_allclose(xi[:, :3].std(0), 0.001, rtol=0.1)
    T_ct_gt = se3.invert_transform(ch.B_abs_gt)
    T_ct = se3.invert_transform(ch.B_abs)
    np.testing.assert_allclose((T_ct[:, :3, 3] - T_ct_gt[:, :3, 3]).std(0), [0.001, 0.001, 0.004], rtol=0.1)
    ch = make_chain(rng, 10, scale=3.0)
    np.testing.assert_allclose(ch.B_abs[:, :3, 3], 3.0 * ch.B_abs_gt[:, :3, 3], atol=1e-12)
    ch = make_chain(rng, 100, outlier_fraction=0.3)
    assert ch.outlier.sum() == 30
