"""The run-derived figures of ``docs/fidelity.md`` that ``build_figures.py`` writes: the composition of the small tier.

The block ``fidelity.composition`` compares kinhec's index rows of the small tier with the published toolkit's,
per track and numeric column, each pooled over the same draws (``benchmarks/fidelity_composition.py``; the rows
are stored in ``docs/fidelity_composition.kinhec.csv`` and ``docs/fidelity_composition.published.csv``), and
lists the pairs that differ with the cause found in the two generators.  Written by
``python docs/build_figures.py``; checked by ``tests/test_doc_figures.py``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OURS = HERE / "fidelity_composition.kinhec.csv"
PUBLISHED = HERE / "fidelity_composition.published.csv"

if str(REPO / "benchmarks") not in sys.path:  # support.fidelity_composition (benchmarks/support/): not shipped
    sys.path.append(str(REPO / "benchmarks"))

#: The page's blocks, in page order; those whose figures depend on the OpenCV version installed.
NAMES = ("fidelity.composition",)
OPENCV_BLOCKS = ()

#: Why a track and column differ, from reading both generators: (track, column) or ("*", column) -> the cause.
CAUSES: dict[tuple[str, str], str] = {
    ("*", "robot_rate_hz"): (
        "What the column means: the published index gives a synchronous sequence its robot controller's rate "
        "(UR e-series 500 Hz, Panda 1 kHz, free6d 100 Hz, not capped) although its robot stream holds the camera "
        "instants; kinhec gave the stream's rate (the camera's)."),
    ("*", "Y_pz"): (
        "Where the world reference lies along a continuous path: both generators put boards and static cameras "
        "below the robot's mounting plane where the motion looks there (kinhec kept them above it until the "
        "comparison showed z < 0 on 38 % of the published small-tier sequences); kinhec's board sat at the viewing "
        "distance of the camera and target (0.3-0.5 m for `hd` and the 9x6 checker), the published one 0.35-0.9 m "
        "along the gaze of one frame or of the mean gaze; now as published (`WORLD_*` in `trajectories.py`)."),
    ("*", "duration_s"): (
        "Station paths: the published robot dwells 0.6-1.4 s at each station (kinhec dwelt 0.5 s), moves for at "
        "least 0.4 s (kinhec 0.2 s) and reaches each station by IK from the previous one, keeping it only when no "
        "joint jumps more than 2.5 rad, so consecutive stations lie closer in joint space than kinhec's did, solved "
        "from home and then toured; its index gives the instant of the last station (kinhec gave the end of the "
        "path).  Now as published (`DWELL_RANGE_S`, `MIN_SEGMENT_S`, `LOOKAT_MAX_JUMP_RAD` in `trajectories.py`)."),
    ("*", "Y_px"): (
        "Look-at world placement: the published board lies on a table in front of the base (0.45-0.75 reach from "
        "the base axis, within 50 deg of the base's x axis), its static camera in front of and above the robot; "
        "kinhec placed both relative to the flange at home, which a UR holds at -x (now as published, "
        "`LOOKAT_BOARD_*`, `LOOKAT_CAMERA_*` in `trajectories.py`).  Along continuous paths: see `Y_pz`."),
    ("*", "Y_py"): "As `Y_px`: look-at world placement.",
    ("*", "Y_qw"): "As `Y_px`: the orientation of the look-at world reference.",
    ("*", "Y_qx"): "As `Y_px`: the orientation of the look-at world reference.",
    ("*", "Y_qy"): "As `Y_px`: the orientation of the look-at world reference.",
    ("*", "Y_qz"): "As `Y_px`: the orientation of the look-at world reference.",
    ("motion", "mean_trans_m"): (
        "Cone keyframes: the published positions are uniform within +-`trans_range_m` (0.15 m) of the centre, "
        "kinhec's were within half of it."),
    ("motion", "duration_s"): (
        "Cone station paths: the published free6d dwells 0.6-1.4 s at each keyframe, kinhec's dwelt 0.5 s (3.2 "
        "against 2.7 s per station; the moves agree since kinhec's free6d takes the published 0.15 m/s and 0.6 rad/s "
        "over the published +-0.15 m), now as published; the `joint_subsets` and `n_poses` sequences as on `noise`."),
    ("monocular", "n_motions"): (
        "`proposal_sine`: the published path is one 10 s time base played over the sequence's duration (10 s in "
        "the small tier: 0.5, 0.7, 0.3 rad/s); kinhec had fixed the frequencies fitted to the smoke copy's 4 s "
        "sequences (1.25, 1.75, 0.75 rad/s), so its flange moved 2.5 times as fast and the 2 cm keyframe rule fired "
        "every few frames."),
    ("monocular", "mean_rot_angle_deg"): "As `n_motions`: the `proposal_sine` time base.",
    ("monocular", "max_rot_angle_deg"): (
        "The `proposal_sine` half agrees (median 6.6 deg both); the UR5e `joint_sinusoid` half turned less "
        "(6.8 against 7.3 deg): the `joint_sinusoid` excitation, see `n_motions`, now as published."),
    ("monocular", "mean_trans_m"): "As `n_motions`: the `proposal_sine` time base.",
    ("monocular", "Y_px"): (
        "The visual-odometry origin is the first camera pose of a `joint_sinusoid`: the published centre "
        "configuration lies up to 10 % of each joint's range from home (a UR's base joint up to +-72 deg) and the "
        "joints swing by up to 12 % of their range, kinhec's were within 0.1 rad and 0.6 rad; now as published "
        "(`SINUSOID_CENTRE_FRACTION`, `SINUSOID_AMPLITUDE_FRACTION`)."),
    ("*", "n_motions"): (
        "`joint_sinusoid` excitation: the published joints swing by up to 12 % of their range (speed-capped) at two "
        "independent frequencies in 0.03-0.25 Hz each (three in 0.1-0.6 Hz on the temporal track), kinhec's swung by "
        "up to 0.6 rad at a base frequency in 0.08-0.2 Hz and its harmonics, so the keyframe rule (5 deg or 2 cm) "
        "fired at another rate; now as published."),
    ("temporal", "mean_rot_angle_deg"): (
        "As `n_motions`: the `joint_sinusoid` excitation (three sinusoids per joint of 0.1-0.6 Hz each)."),
    ("temporal", "n_visible_frames"): (
        "Board placement along a continuous path: the published board sits 0.35-0.9 m along the gaze of one "
        "frame (or of the mean gaze), kinhec's sat at the viewing distance of camera and target (0.3-0.45 m), where "
        "it leaves the image sooner as the camera moves; now as published."),
    ("robot_error", "joint_std_rad"): (
        "The tier's `dh_joint_std_rad` (1e-4): the published generator adds it as encoder noise to the DH-error "
        "sequences (`dh_error+joint_gaussian`) and perturbs the joint offsets with the DH angle error; kinhec "
        "reads it as the std of the joint-offset errors, as the project's tier specification defines it."),
    ("robot_error", "dh_ang_std_rad"): "As `joint_std_rad` (the same sequences' settings).",
    ("*", "X_qw"): (
        "Rotation of `X`: the published optical axis (eye-in-hand; marker normal eye-to-hand) is tilted from the "
        "flange axis by an angle uniform in 0-40 deg (0-30 deg); kinhec's was uniform over the cap, now as "
        "published.  What remains on `motion` is not a difference of the draws: the published motion track's "
        "angles of `X` depart from the published generator's own law (KS p < 1e-4 against 20,000 draws of it, "
        "while its noise, temporal and outliers tracks follow it at p = 0.14-0.42, and kinhec's motion track at "
        "p = 0.13); not traced further."),
    ("*", "X_qx"): "As `X_qw`: the tilt of `X`'s optical axis.",
    ("*", "X_qy"): "As `X_qw`: the tilt of `X`'s optical axis.",
    ("*", "X_qz"): "As `X_qw`: the tilt of `X`'s optical axis.",
    ("*", "X_px"): (
        "Position of `X`: the published lateral offset is uniform in a square of +-8 cm (+-5 cm eye-to-hand), "
        "kinhec's was uniform on a disc of that radius, now as published; a remaining flag at p > 1e-3 among "
        "360 comparisons is within what chance gives (3-4 pairs at p < 0.01)."),
    ("*", "X_py"): "As `X_px`: the lateral offset of `X`.",
    ("temporal", "X_py"): (
        "Not a difference of the draws: both generators draw the lateral offset of `X` uniform in +-8 cm, and "
        "kinhec's temporal rows follow that law (KS p = 0.38 against it) while the published ones depart from it "
        "(p = 0.001, their median -1.5 cm); one such pair among 360 comparisons is within what chance gives "
        "(3-4 pairs at p < 0.01)."),
    ("*", "axis_scatter_lambda2"): (
        "Look-at station geometry: the published camera stands 0.3 m to 0.45-0.9 m (0.7 reach) from the board "
        "whatever the camera and target, kinhec's stood at the distances that frame the target (0.30-0.45 m for "
        "`hd` and the 9x6 checker, 0.3-1.2 m for the large grid); the published chain of stations starts from home "
        "and tests its 2.5 rad jump on the configuration the IK returns, kinhec's started from home turned towards "
        "the board and tested the nearest whole-turn equivalent.  Now as published (`lookat_distance_range`, "
        "`LOOKAT_AIM_*`, `LOOKAT_MARKER_DEPTH_M`)."),
    ("*", "axis_scatter_lambda3"): "As `axis_scatter_lambda2`: look-at station geometry, or the mixed track's families.",
    ("*", "translation_cond"): "As `axis_scatter_lambda2`: station geometry and motion of the families.",
    ("*", "mean_rot_angle_deg"): "As `axis_scatter_lambda2`: station geometry and motion of the families.",
    ("*", "max_rot_angle_deg"): "As `axis_scatter_lambda2`: station geometry and motion of the families.",
    ("*", "mean_trans_m"): "As `axis_scatter_lambda2`: station geometry and motion of the families.",
    ("mixed", "n_motions"): (
        "The mixed track's motions: the published cones draw `trans_range_m` in 0.05-0.3 m and two rotation "
        "angles in 1-60 deg, and run continuously on 40 %; kinhec's cones are at stations with 0.15 m and "
        "fixed angle ranges; and kinhec's continuous sequences last longer (see `axis_scatter_lambda3`)."),
    ("mixed", "axis_scatter_lambda3"): (
        "The mixed track's motions: the published cones draw `trans_range_m` in 0.05-0.3 m and two rotation "
        "angles in 1-60 deg, and run continuously on 40 %; kinhec's cones are at stations with 0.15 m and "
        "fixed angle ranges; and kinhec's continuous sequences lasted 22-50 s, the published periodic ones 5-30 s "
        "(now as published, see `duration_s`): past 200 keyframes both keep 200 evenly spread, so longer "
        "sequences keep keyframes farther apart."),
    ("mixed", "mean_trans_m"): "As `axis_scatter_lambda3`: the mixed track's families and durations.",
    ("mixed", "mean_rot_angle_deg"): "As `axis_scatter_lambda3`: the mixed track's families and durations.",
    ("mixed", "translation_cond"): "As `axis_scatter_lambda3`: the mixed track's families.",
    ("mixed", "Y_qx"): (
        "The world reference placed along a continuous path: the published board's normal within 15 deg (uniform "
        "in angle) of the reversed gaze and its static camera in a 35 deg cone around the mean marker normal; "
        "kinhec's were within 20 deg (uniform over the cap) and a 70 deg cone; now as published."),
    ("mixed", "Y_qw"): "As `Y_qx`.",
    ("mixed", "Y_qy"): "As `Y_qx`.",
    ("mixed", "Y_qz"): "As `Y_qx`.",
    ("monocular", "Y_qw"): "As `Y_px`: the first camera pose of the `joint_sinusoid` is the origin.",
    ("temporal", "Y_px"): "The board along a continuous path: see `n_visible_frames` and `Y_pz`.",
    ("temporal", "Y_py"): "The board along a continuous path: see `n_visible_frames` and `Y_pz`.",
    ("temporal", "max_rot_angle_deg"): "As `mean_rot_angle_deg`: the `joint_sinusoid` excitation.",
    ("temporal", "translation_cond"): "As `mean_rot_angle_deg`: the `joint_sinusoid` excitation.",
    ("mixed", "duration_s"): (
        "Continuous mixed sequences: the published recipes draw 5-30 s for periodic families and let waypoint "
        "schedules (6-16 waypoints) run their own length; kinhec drew 22, 33 or 50 s for both, chosen to keep the "
        "card's 615 camera frames per mixed sequence.  Now as published (`MIXED_DURATIONS_S`; a continuous "
        "waypoint path passes once through its waypoints, `single_pass`): 612 frames per mixed sequence on the "
        "small tier."),
}


def _cause(track: str, column: str) -> str:
    return CAUSES.get((track, column)) or CAUSES.get(("*", column)) or "not traced"


def _g(x: float) -> str:
    if isinstance(x, float) and math.isnan(x):
        return "-"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) < 1e-9:
        return "0"
    return f"{x:.3g}"


def render_composition(table, flagged) -> str:
    """The block: a summary line and the table of the differing track/column pairs."""
    from support import fidelity_composition as fc

    n_pub = table["n_pub"].groupby(level="track").max()
    lines = [
        f"{len(flagged)} of {len(table)} track/column pairs differ (KS > {fc.KS_FLAG} at p < {fc.P_FLAG}); "
        f"pooled over the draws, {int(n_pub.sum()):,} published sequences at most per column.",
        "",
        "| track | column | KS | p | kinhec median (5 % to 95 %) | published median (5 % to 95 %) | cause |",
        "|---|---|---:|---:|---|---|---|",
    ]
    for (track, col), r in flagged.iterrows():
        nan = ""
        if abs(r["nan_ours"] - r["nan_pub"]) > 0.01:
            nan = f" NaN {r['nan_ours']:.0%} / {r['nan_pub']:.0%}."
        lines.append(
            f"| `{track}` | `{col}` | {r['ks']:.2f} | {r['p']:.0e} | {_g(r['median_ours'])} ({_g(r['q05_ours'])} to "
            f"{_g(r['q95_ours'])}) | {_g(r['median_pub'])} ({_g(r['q05_pub'])} to {_g(r['q95_pub'])}) | "
            f"{_cause(track, col)}{nan} |"
        )
    return "\n".join(lines) + "\n"


def blocks(ours: Path = OURS, published: Path = PUBLISHED) -> dict[str, str]:
    from support import fidelity_composition as fc

    table = fc.compare(fc.read_rows(ours), fc.read_rows(published))
    return {"fidelity.composition": render_composition(table, fc.flagged(table))}
