"""The choice between readings that fit the same (:mod:`kinhec.calibrate.reading_choice`), on plain candidates:
what is stated, then what the files claim, then what is physically impossible; never a default."""

from __future__ import annotations

from kinhec.calibrate.reading_choice import Candidate, Statement, choose

FILES = "hand.txt, lines 1-30 and camera.txt, lines 1-30"


def group(against=None, impossible=None):
    """The four readings of one fit: (hand direction x setup), the eye direction following (eye rows as read in
    the eye-in-hand reading with the hand as read: T_target_cam)."""
    against, impossible = against or {}, impossible or {}
    out = []
    for setup, hp, ep in (("eye_in_hand", "base_T_ee", "target_T_cam"), ("eye_to_hand", "base_T_ee", "cam_T_target"),
                          ("eye_in_hand", "ee_T_base", "cam_T_target"), ("eye_to_hand", "ee_T_base", "target_T_cam")):
        key = (setup, hp)
        out.append(Candidate(key, setup, hp, ep, (f"--setup {setup}", f"--hand-pose {hp}", f"--eye-pose {ep}"),
                             tuple(against.get(key, ())), 3.0 * len(against.get(key, ())),
                             tuple(impossible.get(key, ())), f"summary of {key}", f"ros line of {key}"))
    return out


FAR = {("eye_in_hand", "ee_T_base"): ("X 1.2 m from the flange",), ("eye_to_hand", "ee_T_base"): ("X 1.2 m",)}


def test_nothing_stated_claimed_or_impossible_refuses_listing_each_with_what_it_publishes():
    c = choose(group(impossible=FAR), Statement(), FILES)
    assert c.chosen is None and "2 readings fit these files exactly as well" in c.refusal
    for setup in ("eye_in_hand", "eye_to_hand"):
        assert f"ros line of ('{setup}', 'base_T_ee')" in c.refusal and f"--setup {setup}" in c.refusal
    assert "a default is not a statement" in c.refusal


def test_a_stated_setup_decides():
    c = choose(group(impossible=FAR), Statement(setup="eye_to_hand"), FILES)
    assert c.chosen.key == ("eye_to_hand", "base_T_ee") and c.refusal is None


def test_the_files_claims_decide_before_physics():
    """The claims leave one reading; the one they rule out would have been possible (and one they keep would not)."""
    claims = {("eye_to_hand", "base_T_ee"): ("its comment says eye_in_hand",),
              ("eye_to_hand", "ee_T_base"): ("its comment says eye_in_hand",),
              ("eye_in_hand", "ee_T_base"): ("its comment says T_base_ee",)}
    c = choose(group(against=claims), Statement(), FILES)
    assert c.chosen.key == ("eye_in_hand", "base_T_ee") and c.by == "claims"
    # claimed by the files but physically impossible: the claim is false (a stale name), so nothing tells the
    # possible readings apart -- refused, naming them (publishing the impossible claim was an exit-0 wrong answer)
    c = choose(group(against=claims, impossible={("eye_in_hand", "base_T_ee"): ("X 1.2 m",)}), Statement(), FILES)
    assert c.chosen is None and "what the files claim about themselves is physically impossible" in c.refusal
    assert "X 1.2 m" in c.refusal and "--setup eye_to_hand --hand-pose base_T_ee" in c.refusal


def test_physics_decides_what_claims_leave():
    behind = {**FAR, ("eye_to_hand", "base_T_ee"): ("the marker behind the camera in 100% of the views",)}
    c = choose(group(impossible=behind), Statement(), FILES)
    assert c.chosen.key == ("eye_in_hand", "base_T_ee") and c.by == "physics"
    assert "physically possible" in c.notes[0]


def test_a_stated_eye_direction_never_changes_an_unstated_setup():
    """--eye-pose cam_T_target fits only as eye-to-hand here, which is impossible: refused, naming the reading
    that fits; and where both setups are possible, refused too (the stated direction does not pick the setup)."""
    behind = {**FAR, ("eye_to_hand", "base_T_ee"): ("the marker behind the camera in 100% of the views",)}
    c = choose(group(impossible=behind), Statement(eye_pose="cam_T_target"), FILES)
    assert c.chosen is None and "--eye-pose cam_T_target is physically impossible" in c.refusal
    assert "select it with --setup eye_in_hand --hand-pose base_T_ee --eye-pose target_T_cam" in c.refusal
    c = choose(group(impossible=FAR), Statement(eye_pose="cam_T_target"), FILES)
    assert c.chosen is None and "--eye-pose cam_T_target alone does not say which" in c.refusal


def test_a_statement_against_the_files_claim_is_refused_not_overruled():
    claims = {("eye_to_hand", "base_T_ee"): ("the name says T_target_cam",),
              ("eye_in_hand", "ee_T_base"): ("the name says T_target_cam",)}
    c = choose(group(against=claims, impossible=FAR), Statement(setup="eye_to_hand", eye_pose="cam_T_target"), FILES)
    assert c.chosen is None and "contradicts what the files claim" in c.refusal
    assert "the reading that fits: (--setup eye_in_hand --hand-pose base_T_ee --eye-pose target_T_cam" in c.refusal


def test_a_stated_setup_that_is_impossible_is_refused_naming_the_possible_one():
    behind = {**FAR, ("eye_to_hand", "base_T_ee"): ("the marker behind the camera in 100% of the views",)}
    c = choose(group(impossible=behind), Statement(setup="eye_to_hand"), FILES)
    assert c.chosen is None and "--setup eye_to_hand is physically impossible on these files" in c.refusal
    assert "select it with --setup eye_in_hand" in c.refusal
