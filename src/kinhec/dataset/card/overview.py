"""The card's opening: front matter, what the benchmark is, this copy in numbers, and the quick start."""

from __future__ import annotations

from kinhec.dataset.card import markdown as md
from kinhec.dataset.card.folder import CardInputs, front_matter, install_command, install_note
from kinhec.io import INDEX_FILE

__all__ = ["overview_section"]


def overview_section(c: CardInputs) -> list[str]:
    """Front matter, title, what a sequence is, this copy's numbers, the install line and examples."""
    root, man, info, tracks, configs = c.root, c.man, c.info, c.tracks, c.configs
    tier_name, versions, seed, local, hf_repo = c.tier_name, c.versions, c.seed, c.local, c.hf_repo
    n_seq = len(man)
    n_robot_frames = int(man["n_robot_frames"].sum())
    n_camera_frames = int(man["n_camera_frames"].sum())
    arms = sorted(set(man["robot"].dropna().astype(str)) - {"free6d"})
    L: list[str] = []
    L.append(front_matter(n_seq, configs))
    L += [
        "# KinHEC-format benchmark for hand-eye and robot-world calibration",
        "",
        "A synthetic benchmark with complete ground truth for the two classical calibration problems of robotics, "
        "hand-eye calibration `A X = X B` and simultaneous robot-world / hand-eye calibration `A X = Y B`, and for "
        "their extension by an unknown clock offset between robot and camera.",
        "",
        "A sequence is not a set of images but two time-stamped pose streams: the robot flange trajectory, "
        "computed by forward kinematics of a published manipulator model, and the pose of the observed reference "
        "in the camera frame, which is what a marker detector, a PnP solver or a visual-odometry front end "
        "reports. Each stream is stored twice, exactly and as a measurement with a physically motivated error "
        "model, so that solvers can be compared on the numerical problem alone under controlled sensor noise, "
        "motion degeneracy, clock misalignment, outliers, unknown monocular scale, systematic robot-model errors "
        "and image-formation effects.",
        "",
        "## This copy",
        "",
    ]
    seeds = f"{seed}" if seed is not None else "unknown"
    L += md.table(
        ["property", "value"],
        [
            ["tier", f"`{tier_name}`"],
            ["sequences", md.n(n_seq)],
            ["robot-stream frames", md.n(n_robot_frames)],
            ["camera-stream frames", md.n(n_camera_frames)],
            ["size on disk", md.human_bytes(md.folder_bytes(root))],
            ["manipulators", f"{len(arms)} kinematic models" + (" + free-floating `free6d`" if
                                                                 (man['robot'] == 'free6d').any() else "")],
            ["produced by", f"kinhec {', '.join(versions)}, global seed {seeds}"],
        ],
    )
    planned = {t: v.get("planned_sequences", v.get("planned")) for t, v in (info.get("tracks") or {}).items()
               if isinstance(v, dict)}  # fmt: skip
    incomplete = []
    for t, p in planned.items():
        have = int((man["track"] == t).sum())
        if isinstance(p, int) and have != p:
            incomplete.append(f"`{t}` holds {md.n(have)} of {md.n(p)} planned sequences")
    if incomplete:
        L += ["", "This copy is not complete: " + "; ".join(incomplete) + "."]
    L += ["", "## Quick start", "", install_note(c), "", "```"]
    if hf_repo:
        first_track = tracks[0] if tracks else "noise"
        L += [
            install_command(c, "huggingface_hub"),
            f"hf download {hf_repo} --repo-type dataset --local-dir {local}",
            "# or only what a study needs, e.g. the index and one track:",
            f'hf download {hf_repo} --repo-type dataset --local-dir {local} --include "{INDEX_FILE}" '
            f'"robot/{first_track}-*.parquet" "camera/{first_track}-*.parquet" "generation_info.json" "robots.json" '
            '"cameras_targets.json"',
        ]
    else:
        L += [install_command(c)]
    first = man["sequence_id"].iloc[0] if n_seq else "noise-000000"
    L += [
        "```",
        "",
        "```python",
        "from kinhec import load_manifest, load_sequence, solvers, se3",
        "",
        *md.commented([
            (f'man = load_manifest("{local}")', "one row per sequence, every factor a column"),
            (f'seq = load_sequence("{local}", "{first}", man)', "both streams and the ground truth"),
            ("A, B = seq.axxb_motions()", "relative motions between keyframes"),
            ("X = solvers.park_martin(A, B)", "solve A X = X B"),
            ("print(se3.pose_error(X, seq.X))", "(rotation error [deg], translation error [mm])"),
            ("A_abs, B_abs = seq.axyb_keyframe_poses()", "absolute pose pairs at the same keyframes"),
            ("X, Y = solvers.shah(A_abs, B_abs)", "solve A X = Y B"),
        ]),  # fmt: skip
        "```",
        "",
        "Without the toolkit, with PyArrow alone (one row group per sequence, so a sequence is read without the "
        "rest of its shard):",
        "",
        "```python",
        "import pyarrow.parquet as pq",
        "",
        f'man = pq.read_table("{local}/{INDEX_FILE}").to_pandas()',
        "row = man.iloc[0]",
        f'robot = pq.ParquetFile("{local}/" + row.robot_file).read_row_group(int(row.robot_row_group)).to_pandas()',
        f'camera = pq.ParquetFile("{local}/" + row.camera_file).read_row_group(int(row.camera_row_group)).to_pandas()',
        "```",
    ]
    if hf_repo and len(configs) > 1:
        stream_cfg = configs[1]["config_name"].split("_", 1)[1]
        L += [
            "",
            "With the Hugging Face `datasets` library, streaming from the Hub (one configuration per track and "
            "stream):",
            "",
            "```python",
            "from datasets import load_dataset",
            "",
            f'index = load_dataset("{hf_repo}", "sequences", split="train")',
            f'robot = load_dataset("{hf_repo}", "robot_{stream_cfg}", split="train", streaming=True)',
            f'camera = load_dataset("{hf_repo}", "camera_{stream_cfg}", split="train", streaming=True)',
            "```",
        ]
    return L
