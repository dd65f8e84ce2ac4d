"""Every baseline on sequences made by the generator: exact recovery without noise, sane behaviour with it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from kinhec import solvers
from kinhec.geometry import se3
from kinhec.synth.generator import generate_sequence
from kinhec.io import Sequence
from kinhec.synth.recipe import Recipe
from kinhec.solvers import registry

ROBOTS = ("ur5e", "panda", "irb120", "iiwa14")
NOISE_FREE = dict(
    robot_rot_std_rad=0.0, robot_trans_std_m=0.0, camera_rot_std_rad=0.0,
    camera_trans_std_m=0.0, camera_trans_std_z_m=0.0,
)  # fmt: skip


def _sequence(robot, configuration, family, k, **noise) -> Sequence:
    base = dict(
        sequence_id=f"noise-{k:06d}", track="noise", level="test", seed=1000 + k, robot=robot,
        configuration=configuration, family=family, camera="hd",
        robot_noise_models=("se3_gaussian",), camera_noise_model="se3_gaussian",
    )  # fmt: skip
    if family == "joint_sinusoid":
        base.update(sampling_mode="continuous", duration_s=6.0, camera_rate_hz=30.0)
    else:
        base.update(sampling_mode="stations", n_stations=12)
    base.update(NOISE_FREE)
    base.update(noise)
    t = generate_sequence(Recipe.from_dict(base))
    return Sequence.from_tables(t.index_row, t.robot, t.camera)


CASES = [(r, c, f) for r in ROBOTS for c in ("eye_in_hand", "eye_to_hand") for f in ("joint_sinusoid", "lookat")]


@pytest.mark.parametrize("robot, configuration, family", CASES)
def test_noise_free_generated_sequences_are_solved_exactly(robot, configuration, family):
    seq = _sequence(robot, configuration, family, CASES.index((robot, configuration, family)))
    A, B = seq.axxb_motions()
    A_abs, B_abs = seq.axyb_keyframe_poses()
    for name, spec in registry.SOLVERS.items():
        if name == "andreff_scale":
            res = spec.run(A, B)
            assert abs(res.scale - 1.0) < 1e-9
        else:
            res = spec.run(A, B) if spec.kind == "axxb" else spec.run(A_abs, B_abs)
        rot, trans = se3.pose_error(res.X, seq.X)
        assert rot < 1e-6 and trans < 1e-6, (name, rot, trans)
        if spec.kind == "axyb":
            rot, trans = se3.pose_error(res.Y, seq.Y)
            assert rot < 1e-6 and trans < 1e-6, (name, "Y", rot, trans)


def test_lm_refinements_do_not_move_an_exact_solution():
    seq = _sequence("ur5e", "eye_in_hand", "lookat", 99)
    A, B = seq.axxb_motions()
    A_abs, B_abs = seq.axyb_keyframe_poses()
    X = solvers.refine_lm(A, B, seq.X)
    assert np.abs(X - seq.X).max() < 1e-10
    X, Y = solvers.refine_lm_axyb(A_abs, B_abs, seq.X, seq.Y)
    assert np.abs(X - seq.X).max() < 1e-10 and np.abs(Y - seq.Y).max() < 1e-10


def test_noisy_generated_sequences_more_noise_more_error():
    # c1 vs c4 camera noise on the same motion (same seed): every solver's translation error grows
    errs = {}
    for level, cam in (("c1", (0.0005, 0.0003, 0.001)), ("c4", (0.01, 0.006, 0.02))):
        e = {name: [] for name in ("park_martin", "shah", "daniilidis")}
        for k in range(6):
            seq = _sequence("ur5e", "eye_in_hand", "joint_sinusoid", 200 + k, robot_rot_std_rad=0.0005,
                            robot_trans_std_m=0.0003, camera_rot_std_rad=cam[0], camera_trans_std_m=cam[1],
                            camera_trans_std_z_m=cam[2])  # fmt: skip
            A, B = seq.axxb_motions()
            A_abs, B_abs = seq.axyb_keyframe_poses()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                e["park_martin"].append(se3.pose_error(solvers.park_martin(A, B), seq.X)[1])
                e["daniilidis"].append(se3.pose_error(solvers.daniilidis(A, B), seq.X)[1])
                e["shah"].append(se3.pose_error(solvers.shah(A_abs, B_abs)[0], seq.X)[1])
        errs[level] = {k: float(np.median(v)) for k, v in e.items()}
    for name in errs["c1"]:
        assert errs["c4"][name] > 3 * errs["c1"][name], (name, errs)
