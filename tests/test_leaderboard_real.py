"""The held-out machinery of the real-data leaderboard (``benchmarks/leaderboard_real.py``) on generated pairs
with known truth, and its stored run against a fresh one.

* noise-free pairs: every method (the registry's, OpenCV's, ``kinhec calibrate``) predicts every left-out eye
  pose to < 1e-6 deg and < 1e-6 mm, which checks each method's conventions (OpenCV's ``gripper2base``,
  ``target2cam``, ``world2cam``, ``base2gripper``) and the closed-form ``Y`` of the ``A X = X B`` methods;
* noisy pairs: the held-out RMS of ``he_ml`` is what the eye-pose noise predicts (the noise itself plus the
  leave-out fit's error, a few per cent here);
* the stored run behind ``docs/leaderboard_real.md`` matches a fresh run of the cheap methods on kuka_2 (the page's
  block itself is checked against the stored run by ``tests/test_doc_figures.py``).
"""

from __future__ import annotations

import importlib.util
import json
import sys

import numpy as np
import pytest
from conftest import REPO

from kinhec.geometry import se3


def _load():
    name = "leaderboard_real"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / "leaderboard_real.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


board = _load()


def _pairs(n: int, seed: int, rot_std_rad: float = 0.0, trans_std_m: float = 0.0):
    """``n`` stations of an eye-in-hand arm: hand poses ``A`` (``T_base_ee``), eye poses ``B`` (``T_target_cam``)
    with isotropic noise on the measured ``T_cam_target`` (rotation on the right, translation added), the truth."""
    rng = np.random.default_rng(seed)
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -1.2, 0.4]), [0.05, -0.02, 0.10])
    R0 = se3.so3_exp([np.pi, 0.0, 0.0])  # the flange looking down
    A = se3.transform_from_rotation_translation(R0 @ se3.so3_exp(rng.normal(scale=0.45, size=(n, 3))),
                                                rng.uniform(-0.25, 0.25, (n, 3)) + [0.5, 0.0, 0.6])  # fmt: skip
    Y = se3.transform_from_rotation_translation(se3.so3_exp([0.1, 0.2, 1.0]), [0.55, 0.05, -0.1])  # target ~0.8 m
    C = se3.invert_transform(A @ X) @ Y  # T_cam_target
    if rot_std_rad or trans_std_m:
        C = C.copy()
        C[:, :3, :3] = C[:, :3, :3] @ se3.so3_exp(rng.normal(scale=rot_std_rad, size=(n, 3)))
        C[:, :3, 3] += rng.normal(scale=trans_std_m, size=(n, 3))
    return A, se3.invert_transform(C), X, Y


def _exact(methods):
    A, B, _, _ = _pairs(14, seed=3)
    for m in methods:
        h = board.held_out(m, A, B, "cam_T_target")
        assert not h["failures"], (m, h["failures"])
        assert np.max(h["rot_deg"]) < 1e-6 and np.max(h["trans_mm"]) < 1e-6, (m, h["rot_deg"].max(), h["trans_mm"].max())


def test_noise_free_pairs_are_predicted_exactly_by_every_kinhec_method():
    _exact(board.method_names(opencv=False))


def test_noise_free_pairs_are_predicted_exactly_by_every_opencv_method():
    pytest.importorskip("cv2", reason="OpenCV's methods need opencv-python-headless (dev extra)")
    _exact([m for m in board.method_names(opencv=True) if m.startswith("opencv ")])


def test_the_two_error_domains_and_the_closed_form_y():
    A, B, X, Y = _pairs(10, seed=5)
    assert np.allclose(board.y_from_x(A, B, X), Y, atol=1e-12)
    wrong = se3.transform_from_rotation_translation(np.eye(3), [0.0, 0.0, 0.01])  # Y moved 10 mm along the target's z
    for domain in ("cam_T_target", "target_T_cam"):
        rot, tr = board.prediction_errors(A, B, X, Y @ wrong, None, domain)
        assert np.allclose(rot, 0.0, atol=1e-9) and np.allclose(tr, 10.0)
    # scale: the predicted eye translation times the scale (eye = scale x metric)
    Bs = B.copy()
    Bs[:, :3, 3] *= 1.01
    rot, tr = board.prediction_errors(A, Bs, X, Y, np.full(len(A), 1.01), "target_T_cam")
    assert np.max(tr) < 1e-9
    assert np.allclose(board.y_from_x(A, Bs, X, 1.01), Y, atol=1e-12)


def test_held_out_rms_of_he_ml_on_noisy_pairs_is_what_the_noise_predicts():
    sr, st = 0.0005, 0.001  # rad, m per axis on the measured T_cam_target
    A, B, X, Y = _pairs(60, seed=11, rot_std_rad=sr, trans_std_m=st)
    h = board.held_out("he_ml", A, B, "cam_T_target")
    assert not h["failures"]
    # the noise alone: sqrt(3) sigma per pose; the leave-out fit adds its own error (12 parameters from 59 x 6
    # numbers: a few per cent here), and 60 stations leave the RMS a sampling error of about 5 %
    rms_mm, rms_deg = np.sqrt(np.mean(h["trans_mm"] ** 2)), np.sqrt(np.mean(h["rot_deg"] ** 2))
    noise_mm, noise_deg = np.sqrt(3) * st * 1000, np.degrees(np.sqrt(3) * sr)
    assert 0.9 < rms_mm / noise_mm < 1.2, rms_mm / noise_mm
    assert 0.9 < rms_deg / noise_deg < 1.2, rms_deg / noise_deg
    # against the same noise drawn: the true X and Y "predict" with the noise alone, and the leave-out fits add
    # their own small error on top (1.00-1.03 over seeds 1-4 and 11)
    r_true, t_true = board.prediction_errors(A, B, X, Y, None, "cam_T_target")
    assert 0.98 < rms_mm / np.sqrt(np.mean(t_true**2)) < 1.08
    assert 0.98 < rms_deg / np.sqrt(np.mean(r_true**2)) < 1.08
    # and every prediction error is the noise plus a small fit error: against the noise-free eye poses it is small
    _, B0, _, _ = _pairs(60, seed=11)
    _, tr0 = board.prediction_errors(A, B0, *(board.fit("he_ml", A, B).X, board.fit("he_ml", A, B).Y), None,
                                     "cam_T_target")  # fmt: skip
    assert np.sqrt(np.mean(tr0**2)) < 0.5 * noise_mm


def test_the_stored_run_matches_a_fresh_run_of_the_closed_forms_on_kuka_2():
    stored = json.loads(board.OUT.read_text())["recordings"]["kuka_2"]
    rec = board.load_recordings(("kuka_2",))[0]
    assert stored["n_stations"] == len(rec.A)
    for m in ("park_martin", "andreff", "shah", "li_kronecker"):
        h = board.held_out(m, rec.A, rec.B, rec.domain)
        s = stored["methods"][m]
        assert np.allclose(h["trans_mm"], s["trans_mm"], rtol=1e-4, atol=1e-6), m
        assert np.allclose(h["rot_deg"], s["rot_deg"], rtol=1e-4, atol=1e-6), m
