"""The choice between sub-pixel corner methods (``kinhec.calibrate.images._agrees_best``) at its margin."""

from __future__ import annotations

import math
from types import SimpleNamespace

from kinhec.calibrate import images


def _run(rot, trans):
    return (None, None, [], SimpleNamespace(observability={"robot_std_rad_m": [rot, trans]}))


def test_another_method_replaces_the_first_only_beyond_the_sampling_error():
    """12 views: each level's log has a sampling std of 1 / sqrt(6 N); their sum's is 1 / sqrt(3 N) = 1/6."""
    n = 12
    margin = 1.0 / math.sqrt(3.0 * n)
    first = _run(1e-3, 1e-3)
    for drop, want in ((0.8 * margin, "sector"), (1.2 * margin, "subpix")):
        f = math.exp(-drop / 2)  # both levels smaller by this factor: the sum of logs by `drop`
        runs = {"sector": first, "subpix": _run(1e-3 * f, 1e-3 * f)}
        assert images._agrees_best(runs, n) == want
        assert math.isclose(images._robot_level(runs["sector"][3]) - images._robot_level(runs["subpix"][3]), drop)
