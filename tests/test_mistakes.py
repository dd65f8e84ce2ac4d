"""A fixed sample of the mistake fuzzer (``benchmarks/mistakes.py``): no exit-0 wrong answer, no crash.

Each case is one input a user could give ``kinhec calibrate`` -- a recording's files with an ordinary mistake
(files exchanged, poses inverted, millimetres, a row missing or repeated, stamps in ms, a wrong or missing
statement, file names without frame words) -- and passes when the run either refuses (exit 2), follows a false
statement of the user's about what the data cannot tell, or gives the true reading's setup, X, Y and ROS line
within 3σ.  The cases marked ``xfail`` are the wrong answers the fuzzer found on this version of
``kinhec.calibrate``; each turns into a failure (strict) once fixed, and its mark goes.
"""

from __future__ import annotations

import sys

import pytest

from helpers.paths import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import mistakes as mk  # noqa: E402

pytestmark = pytest.mark.heavy  # about 15 s of CPU: 62 runs and the recordings

RECORDINGS = ("gen_eih_stations_11", "gen_eth_stations_11", "rwhe_kuka_1", "tabb_ds1")
SINGLES = ("swap_files", "hand_inverted", "eye_inverted", "both_inverted", "hand_mm", "eye_mm",
           "eye_row_missing_middle", "eye_row_repeated", "wrong_setup", "wrong_eye_pose", "neutral_names")
STAMPED = (("gen_eih_stamped_11", ("eye_stamps_ms",), "unstated"),
           ("gen_eth_stamped_11", ("setup_missing",), "stated"),
           ("gen_eih_stamped_11", ("hand_quat_wxyz",), "unstated"),
           ("gen_eth_stamped_11", ("both_stamps_ms",), "unstated"),
           ("gen_eth_stamped_11", (), "unstated"),
           ("multi_gen_eth_11", (), "stated"))  # fmt: skip
# Not here: calibrate-multi with an inverted edge (exit 0, that camera's Y 10 deg / 579 mm off with σ of 4 deg /
# 100-120 mm per axis: at 1.01 times the 3σ bound on seed 11, 0.72 on seed 12, too close to the bound to pin).

#: Wrong answers with exit 0 on this version, and what they are.
KNOWN_WRONG: dict = {}


def _cases():
    runs = []
    for rec in RECORDINGS:
        runs += [mk.Run(rec, (), "stated"), mk.Run(rec, (), "unstated"), mk.Run(rec, ("setup_missing",), "stated")]
        runs += [mk.Run(rec, (m,), "unstated") for m in SINGLES]
    runs += [mk.Run(*c) for c in STAMPED]
    out = []
    for run in runs:
        why = KNOWN_WRONG.get(run.key)
        marks = [pytest.mark.xfail(strict=True, reason=f"exit 0 with a wrong answer: {why}")] if why else []
        out.append(pytest.param(run, id=run.key.replace("|", "-"), marks=marks))
    return out


def test_the_catalogue_has_the_ordinary_mistakes():
    assert len(mk.CATALOGUE) >= 15
    assert set(KNOWN_WRONG) <= {p.values[0].key for p in _cases()}
    recs, _ = mk.recordings()
    assert sum(r.kind == "real" for r in recs) >= 4 and len(recs) >= 8
    assert len(mk.runs(recs)) >= 2000


@pytest.mark.parametrize("run", _cases())
def test_no_exit_0_wrong_answer(run):
    out = mk.execute(run)
    assert out["outcome"] in ("right", "refused", "as_stated", "as_claimed"), f"{out['outcome']}: {out['why']}\n{out['command']}"
    if not run.mistakes and run.mode == "stated":
        assert out["outcome"] == "right"  # a correctly stated, unmodified recording is calibrated
