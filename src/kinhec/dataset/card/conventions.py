"""The card's reference part: frames and conventions, then the files and the documentation of every column."""

from __future__ import annotations

from kinhec.dataset.card import markdown as md
from kinhec.dataset.card.columns import CAMERA_COLUMN_DOCS, INDEX_COLUMN_DOCS, ROBOT_COLUMN_DOCS, column_rows
from kinhec.dataset.card.folder import CardInputs
from kinhec.io import INDEX_CSV_FILE, INDEX_FILE
from kinhec.io.schema import CAMERA_SCHEMA, INDEX_SCHEMA, ROBOT_SCHEMA

__all__ = ["conventions_section", "files_section"]


def conventions_section(c: CardInputs) -> list[str]:
    """Frames, quaternion order, clocks and what X, Y, A_i, B_i are in each configuration."""
    L: list[str] = []
    # ---- conventions ---------------------------------------------------------
    L += [
        "",
        "## Frames and conventions",
        "",
        "* `T_a_b` is the 4x4 pose of frame `b` in frame `a` (`p_a = T_a_b p_b`). Files store a pose as a "
        "position `px, py, pz` [m] and a unit quaternion `qw, qx, qy, qz` with `qw >= 0`.",
        "* Frames: `base` (robot base), `ee` (flange), `cam` (camera optical frame, OpenCV: x right, y down, "
        "z forward), `target` (the observed reference), `world` (the fixed frame of `Y`).",
        "* The observed reference is the calibration board (eye-in-hand), the marker on the flange seen by a "
        "static camera (eye-to-hand), or the first camera pose of a visual-odometry frame "
        "(`world_frame = vo_origin`).",
        "* Time: the robot clock is the reference; a camera frame captured at robot time `t_gt` is stamped "
        "`t = t_gt + time_offset_s + jitter`. Synchronous sequences share one clock and have row-aligned streams.",
        "",
    ]
    L += md.table(
        ["configuration", "X", "Y", "A_i", "B_i"],
        [
            ["eye-in-hand", "`T_ee_cam`", "`T_base_world`", "`T_base_ee(i)`", "`inv(T_cam_target(i))`"],
            ["eye-to-hand", "`T_ee_marker`", "`T_base_cam`", "`T_base_ee(i)`", "`T_cam_target(i)`"],
        ],
    )
    L += [
        "",
        "Every pair satisfies `A_i X = Y B_i`; two pairs `i, j` give the relative motions `A = inv(A_i) A_j`, "
        "`B = inv(B_i) B_j` of `A X = X B` (the toolkit's `Sequence.axxb_motions()` builds them between keyframes).",
    ]
    return L


def files_section(c: CardInputs) -> list[str]:
    """The files of the folder and the columns of the index and of the two streams."""
    root = c.root
    L: list[str] = []
    # ---- files and columns ----------------------------------------------------
    has = lambda p: (root / p).exists()  # noqa: E731
    files = [
        ("`README.md`, `LICENSE`, `CITATION.cff`", "this card, the licence, the citation"),
        (f"`{INDEX_FILE}`" + (f", `{INDEX_CSV_FILE}`" if has(INDEX_CSV_FILE) else ""),
         "the index, one row per sequence (the CSV copy lacks the two JSON columns)"),
        ("`robot/<track>-<shard>.parquet`", "robot streams, one row group per sequence"),
        ("`camera/<track>-<shard>.parquet`", "camera streams, one row group per sequence"),
    ]  # fmt: skip
    for p, what in (
        ("robots.json", "kinematic models: DH tables, joint limits, speed caps, sources"),
        ("cameras_targets.json", "camera intrinsics and calibration-target presets"),
        ("generation_info.json", "tier, global seed, generator version and the planned count per track"),
        ("configs", "the tier configuration that produced the copy"),
        ("benchmarks", "baseline results: per-sequence results, leaderboard, summary, protocol"),
        ("figures", "figures of the copy"),
    ):
        if has(p):
            files.append((f"`{p}/`" if (root / p).is_dir() else f"`{p}`", what))
    L += ["", "## Files", ""]
    L += md.table(["file", "content"], [list(f) for f in files])
    for title, schema, docs, note in (
        (f"### `{INDEX_FILE}` (index)", INDEX_SCHEMA, INDEX_COLUMN_DOCS,
         "One row per sequence: identifiers, setup, sampling, timing ground truth, noise factors, the ground truth "
         "`X` and `Y`, motion descriptors, the location of the streams and the generation recipe."),
        ("### Robot stream (`robot/*.parquet`)", ROBOT_SCHEMA, ROBOT_COLUMN_DOCS,
         "One row per robot frame, on the robot clock."),
        ("### Camera stream (`camera/*.parquet`)", CAMERA_SCHEMA, CAMERA_COLUMN_DOCS,
         "One row per camera frame, on the camera clock, with the ground truth at the true capture instant."),
    ):  # fmt: skip
        L += ["", title, "", note, ""]
        L += md.table(["column", "unit", "meaning"], column_rows(schema, docs))
    return L
