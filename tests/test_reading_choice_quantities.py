"""The choice between readings that fit the same (:mod:`kinhec.calibrate.reading_choice`): which statement narrows
the group and which does not, the claims' weight on both sides of its tolerance, claims that every reading breaks,
how the choice is labelled and the exact note and refusal texts."""

from __future__ import annotations

import pytest

from kinhec.calibrate.reading_choice import Candidate, Statement, choose

FILES = "h.txt, lines 1-9 and e.txt, lines 1-9"
READINGS = (("eye_in_hand", "base_T_ee", "target_T_cam"), ("eye_to_hand", "base_T_ee", "cam_T_target"),
            ("eye_in_hand", "ee_T_base", "cam_T_target"), ("eye_to_hand", "ee_T_base", "target_T_cam"))


def group(weights=(0.0, 0.0, 0.0, 0.0), impossible=((), (), (), ()), against=None):
    against = against or [tuple(f"claim {k}" for _ in range(int(w > 0))) for k, w in enumerate(weights)]
    return [Candidate(k, s, hp, ep, (f"--setup {s}", f"--hand-pose {hp}"), tuple(a), w, tuple(imp), f"S{k}", f"P{k}")
            for k, ((s, hp, ep), w, imp, a) in enumerate(zip(READINGS, weights, impossible, against))]


def test_a_stated_setup_and_hand_direction_decide_by_statement():
    c = choose(group(), Statement(setup="eye_to_hand", hand_pose="ee_T_base"), FILES)
    assert c.chosen.key == 3 and c.by == "statement" and c.notes == [] and c.refusal is None
    assert len(c.candidates) == 4


def test_a_stated_hand_direction_alone_leaves_two():
    c = choose(group(), Statement(hand_pose="ee_T_base"), FILES)
    assert c.chosen is None
    assert c.refusal == (f"{FILES}: 2 readings fit these files exactly as well (the same equation A X = Y B read in "
                         "another setup, or with X and Y exchanged) and nothing stated, claimed by the files or "
                         "physically impossible tells them apart: (1) --setup eye_in_hand --hand-pose ee_T_base: S2; "
                         "publishes `P2`; (2) --setup eye_to_hand --hand-pose ee_T_base: S3; publishes `P3`; state the "
                         "one that matches your recording with its options (a default is not a statement: kinhec does "
                         "not pick one)")


def test_an_eye_direction_without_a_setup_narrows_nothing():
    c = choose(group(), Statement(hand_pose="base_T_ee", eye_pose="cam_T_target"), FILES)
    assert c.chosen is None and c.refusal.endswith(
        "; --eye-pose cam_T_target alone does not say which (it holds a different pose in each setup): state the "
        "setup too; state the one that matches your recording with its options (a default is not a statement: "
        "kinhec does not pick one)")
    # with the setup it counts: eye-to-hand with base_T_ee reads the eye as cam_T_target
    assert choose(group(), Statement(setup="eye_to_hand", eye_pose="cam_T_target"), FILES).chosen.key == 1


@pytest.mark.parametrize("w, decided", [(1e-10, False), (1e-8, True)])
def test_claims_decide_only_beyond_the_tolerance(w, decided):
    c = choose(group(weights=(0.0, w, w, w)), Statement(), FILES)
    assert (c.chosen is not None and c.chosen.key == 0 and c.by == "claims") if decided else c.chosen is None


def test_claims_that_every_reading_breaks_decide_nothing():
    # the lowest weight is not a choice when none is zero: the data show some claim false
    c = choose(group(weights=(1.0, 2.0, 2.0, 2.0)), Statement(), FILES)
    assert c.chosen is None and c.refusal.startswith(f"{FILES}: 4 readings fit these files exactly as well")


def test_the_note_of_a_choice_by_claims_names_the_others_faults():
    against = [(), ("format tum", "comment '# T_cam_target'"), ("format tum",), ()]
    c = choose(group(weights=(0.0, 6.0, 3.0, 0.0), impossible=((), (), (), ("X 2.0 m from the flange",)),
                     against=against), Statement(hand_pose="base_T_ee"), FILES)
    assert c.chosen.key == 0 and c.by == "claims"
    assert c.notes == ["conventions: 4 readings fit these files exactly as well (the same equation read in another "
                       "setup, or with X and Y exchanged); of the 2 that keep what is stated, --setup eye_in_hand "
                       "--hand-pose base_T_ee is the one the files claim: --setup eye_to_hand --hand-pose base_T_ee: "
                       "against what the files claim (2 claims)"]


def test_physics_decides_between_readings_the_claims_leave():
    c = choose(group(impossible=(("camera 3 m from the flange",), (), ("behind",), ("behind",))), Statement(), FILES)
    assert c.chosen.key == 1 and c.by == "physics"
    assert c.notes[0].endswith("--setup eye_to_hand --hand-pose base_T_ee is the one physically possible: "
                               "--setup eye_in_hand --hand-pose base_T_ee: camera 3 m from the flange; --setup "
                               "eye_in_hand --hand-pose ee_T_base: behind; --setup eye_to_hand --hand-pose ee_T_base: "
                               "behind")


def test_a_single_reading_is_the_only_one():
    c = choose(group()[:1], Statement(setup="eye_to_hand"), FILES)
    assert c.chosen.key == 0 and c.by == "only"
    assert choose([], Statement(), FILES).chosen is None
