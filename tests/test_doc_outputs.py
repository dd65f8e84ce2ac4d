"""Figures and statements of README.md and docs/*.md that come from runs but are not written by
``docs/build_figures.py``: each is checked here against what the code gives (counts, frames, conventions).

Timings that depend on the machine are stated on the pages with their conditions; what of them is reproducible
(how many tests, sequences, views) is checked here.
"""

from __future__ import annotations

import re

import numpy as np
from conftest import REPO

from kinhec.cameras import get_target
from kinhec.vision.targets import target_for_preset

README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"


def test_planner_page_states_the_frame_that_images_give():
    """docs/planner.md: ``--images`` gives ``Y`` in the printed target's frame (a chessboard's: OpenCV's, corner 0 at
    the origin, z into the board), and ``Y @ inv(T_centred_target)`` moves it to the preset's centred frame."""
    page = (DOCS / "planner.md").read_text(encoding="utf-8")
    assert "as `kinhec calibrate --images` with the same target does" not in page
    assert "`Y @ inv(T)` eye-in-hand or `X @ inv(T)` eye-to-hand" in page
    preset = "checker_9x6_25mm"
    board = target_for_preset(preset)
    T = board.T_centred_target  # the printed board's frame in the preset's
    assert np.allclose(board.points_m[0], 0.0)  # corner 0 at the origin of the detector's frame
    assert np.allclose(np.diag(T[:3, :3]), [1.0, -1.0, -1.0])  # z into the board, against the preset's z
    in_preset = board.points_m @ T[:3, :3].T + T[:3, 3]
    assert np.allclose(in_preset, get_target(preset).points_m, atol=1e-12)
    rng = np.random.default_rng(3)
    from kinhec import se3

    Y_preset = se3.random_poses(rng, 1)[0]  # T_base_centred
    Y_images = Y_preset @ T  # T_base_board, what --images reports (kinhec render's truth.json: Y @ T_centred_target)
    assert np.allclose(Y_images @ np.linalg.inv(T), Y_preset, atol=1e-12)
    # a board point seen through either Y lands at the same place in the base
    p = np.r_[board.points_m[7], 1.0]
    assert np.allclose(Y_images @ p, Y_preset @ np.r_[in_preset[7], 1.0], atol=1e-12)
