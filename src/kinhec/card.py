"""The dataset card: a ``README.md`` that documents a dataset folder, generated from its index.

:func:`write_card` reads what a folder says about itself (``sequences.parquet``,
``generation_info.json``, the tier configuration that produced it,
``benchmarks/leaderboard.md`` and ``figures/*.png`` when present) and writes

* ``README.md``: YAML front matter for the Hugging Face Hub (licence, tags,
  size category, and ``configs:`` that expose the index and every track's
  robot and camera streams to the dataset viewer), then the counts of this
  copy per track, robot, configuration, trajectory family and noise model,
  the named noise levels of the tier, the frame conventions, the column
  documentation of every file, the evaluation protocol with the baseline
  leaderboard, the figures and the commands that regenerate the copy;
* ``LICENSE`` and ``CITATION.cff`` beside it (:mod:`kinhec.publish`).

Every number in the card is computed from the folder, so running
``kinhec card`` again after a resumed or extended generation brings it up to
date.  With ``hf_repo="user/name"`` the figure links become absolute URLs of
that Hub repository and the loading examples name it.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import pandas as pd
import yaml

from kinhec.fsutil import atomic_write_text
from kinhec import __version__
from kinhec.errors import DatasetFormatError, InputError
from kinhec.io import INDEX_CSV_FILE, INDEX_FILE, load_manifest
from kinhec.provenance import check_results_match, write_owned
from kinhec.publish import citation_cff, hf_configs, license_text
from kinhec.schema import CAMERA_SCHEMA, INDEX_SCHEMA, POSE_SUFFIXES, ROBOT_SCHEMA, TRACKS
from kinhec.tiers import TIER_NAMES, TRACK_DESCRIPTIONS, load_tier

__all__ = [
    "CARD_FILE",
    "SIZE_CATEGORIES",
    "INDEX_COLUMN_DOCS",
    "ROBOT_COLUMN_DOCS",
    "CAMERA_COLUMN_DOCS",
    "size_category",
    "hf_configs",
    "card_text",
    "write_card",
]

CARD_FILE = "README.md"

#: Hugging Face Hub size categories (by number of rows of the main table): (upper bound, label).
SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
    (10_000_000_000, "1B<n<10B"),
    (100_000_000_000, "10B<n<100B"),
    (1_000_000_000_000, "100B<n<1T"),
)

_HF_REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_LEADERBOARD_MAX_LINES = 160

# --------------------------------------------------------------------------- #
# column documentation: column (or pose prefix) -> (unit, meaning)
# --------------------------------------------------------------------------- #
#: Documentation of the index columns; pose prefixes (``X``, ``Y``) stand for their seven columns.
INDEX_COLUMN_DOCS: dict[str, tuple[str, str]] = {
    "sequence_id": ("-", "Identifier `<track>-<6 digits>`, unique in the copy."),
    "track": ("-", "Track the sequence belongs to (`noise`, `motion`, `temporal`, `outliers`, `monocular`, "
              "`robot_error`, `pnp`, `mixed`)."),
    "level": ("-", "The factor levels the track sweeps, as `name=value` pairs joined by `|` (for `mixed`: family, "
              "camera model and `async` when the clocks differ)."),
    "seed": ("-", "Seed of the sequence's own random generator, derived from the tier's global seed and the id."),
    "robot": ("-", "Kinematic model of the manipulator, or `free6d` for the free-floating end effector."),
    "dof": ("-", "Number of joints (0 for `free6d`)."),
    "configuration": ("-", "`eye_in_hand` (camera on the flange) or `eye_to_hand` (static camera, marker on the "
                      "flange)."),
    "family": ("-", "Trajectory family (`joint_sinusoid`, `joint_waypoints`, `lookat`, `cartesian_cone`, "
               "`proposal_sine`)."),
    "world_frame": ("-", "What the camera observes: `target` (a physical board or flange marker) or `vo_origin` "
                    "(the first camera pose of a visual-odometry frame)."),
    "camera": ("-", "Camera preset (resolution and focal length, see `cameras_targets.json`)."),
    "target": ("-", "Calibration-target preset seen by the camera (see `cameras_targets.json`)."),
    "sampling_mode": ("-", "`continuous` (frames along a moving trajectory) or `stations` (one frame per dwell of "
                      "a move-and-stop trajectory)."),
    "sync": ("-", "`synchronous`: one clock and row-aligned streams; `asynchronous`: separate clocks, rates, offset "
                  "and jitter."),
    "duration_s": ("s", "Length of the trajectory."),
    "robot_rate_hz": ("Hz", "Robot-stream rate (NaN for station sequences)."),
    "camera_rate_hz": ("Hz", "Camera-stream rate (NaN for station sequences)."),
    "n_robot_frames": ("-", "Rows of the sequence in its robot shard."),
    "n_camera_frames": ("-", "Rows of the sequence in its camera shard."),
    "n_visible_frames": ("-", "Camera frames in which the target is visible."),
    "n_outlier_frames": ("-", "Camera frames whose measurement was replaced by an outlier."),
    "time_offset_s": ("s", "True clock offset: a camera frame taken at robot time `t_gt` is stamped "
                      "`t_gt + time_offset_s` (+ jitter)."),
    "time_jitter_std_s": ("s", "Standard deviation of the Gaussian jitter of the camera stamps."),
    "camera_drop_fraction": ("-", "Fraction of camera frames dropped from the stream."),
    "scale": ("-", "Factor applied to the camera translations (1 = metric; monocular sequences differ)."),
    "scale_drift_std": ("-", "Per-frame standard deviation of the multiplicative random walk of the scale."),
    "robot_noise_models": ("-", "Active robot measurement models joined by `+` (`se3_gaussian`, `joint_gaussian`, "
                           "`dh_error`)."),
    "robot_rot_std_rad": ("rad", "Rotation standard deviation of the flange-frame twist noise."),
    "robot_trans_std_m": ("m", "Translation standard deviation of the flange-frame twist noise."),
    "joint_std_rad": ("rad", "Standard deviation of the joint-encoder noise."),
    "dh_len_std_m": ("m", "Standard deviation of the errors on the DH lengths `a`, `d` of the true robot."),
    "dh_ang_std_rad": ("rad", "Standard deviation of the errors on the DH angles `alpha`, `theta` offset."),
    "camera_noise_model": ("-", "Camera measurement model (`se3_gaussian`, `pnp`, `vo_drift`)."),
    "camera_rot_std_rad": ("rad", "Rotation standard deviation of the camera measurement (target frame)."),
    "camera_trans_std_m": ("m", "Lateral (x, y) translation standard deviation, camera frame."),
    "camera_trans_std_z_m": ("m", "Translation standard deviation along the optical axis (z)."),
    "pixel_std": ("px", "Pixel noise of the `pnp` model."),
    "student_t_dof": ("-", "Degrees of freedom of the Student-t noise; NaN means Gaussian. With Student-t noise the "
                      "camera std columns hold the scale of the distribution: the standard deviation is "
                      "sqrt(nu / (nu - 2)) times larger (1.73x at nu = 3)."),
    "outlier_fraction": ("-", "Requested fraction of camera measurements replaced by outliers."),
    "outlier_model": ("-", "`none`, `random_pose`, `planar_flip` or `gross`."),
    "X": ("m, -", "Ground-truth hand-eye transform: `T_ee_cam` (eye-in-hand) or `T_ee_marker` (eye-to-hand); "
          "position and unit quaternion (w, x, y, z), w >= 0."),
    "Y": ("m, -", "Ground-truth robot-world transform: `T_base_world` (eye-in-hand) or `T_base_cam` "
          "(eye-to-hand); position and unit quaternion (w, x, y, z), w >= 0."),
    "n_motions": ("-", "Keyframe motions from which the descriptors were computed."),
    "axis_scatter_lambda2": ("-", "Second eigenvalue of the angle-weighted scatter matrix of the flange rotation "
                             "axes (0: all axes parallel, the rotation of X is unobservable; 1/3: isotropic)."),
    "axis_scatter_lambda3": ("-", "Third (smallest) eigenvalue of the same matrix."),
    "mean_rot_angle_deg": ("deg", "Mean rotation angle of the keyframe motions."),
    "max_rot_angle_deg": ("deg", "Largest rotation angle of the keyframe motions."),
    "mean_trans_m": ("m", "Mean translation of the keyframe motions."),
    "translation_cond": ("-", "Condition number of the stacked `R_A - I` blocks (infinite for pure "
                         "translations); scale free, read it with `mean_rot_angle_deg`."),
    "robot_file": ("-", "Robot shard of the sequence, relative to the folder."),
    "camera_file": ("-", "Camera shard of the sequence, relative to the folder."),
    "robot_row_group": ("-", "Row group of the sequence in `robot_file`."),
    "camera_row_group": ("-", "Row group of the sequence in `camera_file`."),
    "generator_version": ("-", "kinhec version that generated the sequence."),
    "config_json": ("-", "The generation recipe as nested JSON, in the published key set (Parquet only; see "
                         "docs/format.md)."),
    "extra_json": ("-", "Generated details as JSON: true DH parameters (m, rad), per-frame scale, trajectory "
                   "parameters, keyframe indices, camera intrinsics, target geometry, then kinhec's whole recipe "
                   "and clock details (Parquet only)."),
}  # fmt: skip

#: Documentation of the robot-stream columns.
ROBOT_COLUMN_DOCS: dict[str, tuple[str, str]] = {
    "sequence_id": ("-", "Sequence the row belongs to."),
    "frame": ("-", "Frame number, from 0, within the sequence."),
    "t": ("s", "Time stamp on the robot clock, the reference clock."),
    "q_meas": ("rad", "Joint positions as the encoders report them (noisy under `joint_gaussian`); empty list "
               "for `free6d`."),
    "q_gt": ("rad", "True joint positions; empty list for `free6d`."),
    "base_ee_gt": ("m, -", "True flange pose `T_base_ee`: position and unit quaternion (w, x, y, z)."),
    "base_ee_meas": ("m, -", "Flange pose as the robot reports it (twist noise, encoder noise propagated through "
                     "the kinematics, or a systematic DH model error)."),
}  # fmt: skip

#: Documentation of the camera-stream columns.
CAMERA_COLUMN_DOCS: dict[str, tuple[str, str]] = {
    "sequence_id": ("-", "Sequence the row belongs to."),
    "frame": ("-", "Frame number, from 0, within the sequence."),
    "t": ("s", "Time stamp on the camera clock: `t_gt + time_offset_s` + jitter."),
    "t_gt": ("s", "True instant of the capture on the robot clock."),
    "base_ee_gt": ("m, -", "True flange pose at `t_gt` (synchronisation oracle)."),
    "cam_target_gt": ("m, -", "True pose `T_cam_target` of the observed reference in the camera frame."),
    "cam_target_meas": ("m, -", "Measured `T_cam_target`; NaN where there is no measurement (e.g. target out "
                        "of view under the `pnp` model)."),
    "visible": ("-", "The target is visible according to the camera and target model."),
    "outlier": ("-", "The measurement of this frame was replaced by an outlier."),
    "n_points": ("-", "Target points projected inside the image."),
    "depth_m": ("m", "Depth of the target centre along the optical axis."),
    "view_angle_deg": ("deg", "Angle between the target normal and the line of sight."),
    "reproj_rmse_px": ("px", "Reprojection RMSE of the PnP estimate (`pnp` model only, NaN otherwise)."),
}  # fmt: skip


# --------------------------------------------------------------------------- #
# small helpers
# --------------------------------------------------------------------------- #
def size_category(n_rows: int) -> str:
    """Hugging Face size category of a table with ``n_rows`` rows (``"n<1K"``, ``"1K<n<10K"``, ...)."""
    if isinstance(n_rows, bool) or not isinstance(n_rows, int) or n_rows < 0:
        raise InputError(f"n_rows: expected a non-negative integer, got {n_rows!r}")
    for bound, label in SIZE_CATEGORIES:
        if n_rows < bound:
            return label
    return "n>1T"


def _check_hf_repo(hf_repo):
    if hf_repo is None:
        return None
    if not isinstance(hf_repo, str) or not _HF_REPO_RE.match(hf_repo) or ".." in hf_repo:
        raise InputError(f"hf_repo: expected a Hub repository id USER/NAME, got {hf_repo!r}")
    return hf_repo


def _n(v) -> str:
    """Integer with thousands separators."""
    return f"{int(v):,}"


def _human_bytes(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0
    return f"{n:.1f} TB"  # pragma: no cover


def _folder_bytes(root: Path) -> int:
    """Bytes of the files of the folder, without the card itself, hidden folders and symlinks."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for f in filenames:
            if f == CARD_FILE and Path(dirpath) == root:
                continue
            p = os.path.join(dirpath, f)
            try:
                if not os.path.islink(p):
                    total += os.path.getsize(p)
            except OSError:
                pass
    return total


def _table(header: list[str], rows: list[list], align: list[str] | None = None) -> list[str]:
    align = align or ["l"] * len(header)
    sep = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return out


def _commented(pairs: list[tuple[str, str]]) -> list[str]:
    """Code lines with their ``#`` comments aligned in one column."""
    width = max(len(code) for code, _ in pairs)
    return [f"{code.ljust(width)}  # {c}" if c else code for code, c in pairs]


def _counts(series: pd.Series, order=None) -> list[tuple[str, int]]:
    vc = series.fillna("(missing)").astype(str).value_counts()
    keys = [k for k in (order or ()) if k in vc.index] + sorted(k for k in vc.index if k not in (order or ()))
    return [(k, int(vc[k])) for k in keys]


def _read_generation_info(root: Path) -> dict:
    path = root / "generation_info.json"
    if not path.is_file():
        return {}
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise DatasetFormatError(f"{path}: expected valid JSON, got unreadable content ({exc})") from None
    return info if isinstance(info, dict) else {}


def _tier_config(root: Path, info: dict) -> tuple[dict | None, str | None]:
    """The tier configuration that produced the copy, and where it came from.

    ``generation_info.json`` first, then ``configs/<tier>.yaml`` of the folder,
    then the shipped tier of that name.
    """
    cfg = info.get("tier_config")
    if isinstance(cfg, dict) and "robot_levels" in cfg:
        return cfg, "generation_info.json"
    tier = info.get("tier")
    candidates = [root / "configs" / f"{tier}.yaml"] if tier else []
    candidates += sorted((root / "configs").glob("*.yaml")) if (root / "configs").is_dir() else []
    for p in candidates:
        try:
            data = yaml.safe_load(p.read_text())
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, dict) and "robot_levels" in data:
            return data, f"configs/{p.name}"
    if tier in TIER_NAMES:
        return load_tier(tier).config, f"the shipped tier {tier!r}"
    return None, None


def _is_shipped_tier(cfg: dict | None) -> bool:
    name = (cfg or {}).get("tier")
    if name not in TIER_NAMES:
        return False
    return load_tier(name).config == cfg


def _front_matter(n_sequences: int, configs: list[dict]) -> str:
    meta = {
        "license": "mit",
        "pretty_name": "KinHEC-format hand-eye calibration benchmark",
        "task_categories": ["robotics"],
        "tags": [
            "hand-eye-calibration",
            "robot-world-calibration",
            "calibration",
            "robotics",
            "pose-estimation",
            "synthetic",
            "benchmark",
            "kinhec",
        ],
        "size_categories": [size_category(int(n_sequences))],
        "configs": configs,
    }
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, default_flow_style=False) + "---\n"


def _figure_caption(stem: str) -> str:
    fixed = {
        "pipeline": "How one sequence is generated, from the ground-truth hand-eye transform to the two stream "
        "tables.",
        "dataset_overview": "Composition of this copy and the distribution of the motion descriptors that decide how "
        "well X can be observed.",
        "robots": "The manipulator models at their home configurations.",
        "robots_home": "The manipulator models at their home configurations.",
        "benchmark_summary": "The baseline solvers per track: median errors of X (oracle synchronisation).",
        "descriptors": "Calibration error against the motion descriptors of the individual sequences.",
        "error_vs_descriptors": "Calibration error against the motion descriptors of the individual sequences.",
    }
    if stem in fixed:
        return fixed[stem]
    m = re.match(r"^(scene|streams|errors|noise|pnp_image|image|time_offset|clock)_(.+)$", stem)
    if m:
        what, sid = m.groups()
        return {
            "scene": f"Sequence {sid} in the robot base frame: arm, flange path, camera frustums and the observed "
            "reference.",
            "streams": f"The two streams of sequence {sid} over time, ground truth and measurements, each on its "
            "own clock.",
            "errors": f"The measurement errors injected into sequence {sid}, per component.",
            "noise": f"The measurement errors injected into sequence {sid}, per component.",
            "pnp_image": f"Sequence {sid} in the image plane: target points projected with the true and the "
            "measured pose.",
            "image": f"Sequence {sid} in the image plane: target points projected with the true and the measured "
            "pose.",
            "time_offset": f"Angular speed of the two streams of sequence {sid}, before and after clock-offset "
            "estimation.",
            "clock": f"Angular speed of the two streams of sequence {sid}, before and after clock-offset "
            "estimation.",
        }[what]
    named = {
        "robustness_noise_camera": "Track noise: error of X against the camera noise level.",
        "robustness_noise_robot": "Track noise: error of X against the robot noise level.",
        "robustness_motion_cone": "Track motion: error of X against the cone half-angle of the rotation axes, the "
        "degeneracy dial (0 deg leaves the rotation of X unobservable).",
        "robustness_temporal_offset": "Track temporal: error of X against the clock offset between the two streams.",
        "robustness_outliers_fraction": "Track outliers: error of X against the outlier fraction, where the RANSAC "
        "baseline separates from the closed-form solvers.",
        "robustness_robot_error_dh_len": "Track robot_error: error of X against the DH link-length errors of the "
        "uncalibrated robot.",
        "robustness_pnp_pixel_std": "Track pnp: error of X against the pixel noise on the projected target points.",
    }
    if stem in named:
        return named[stem]
    for track in sorted(TRACKS, key=len, reverse=True):  # robot_error before a shorter prefix
        if stem.startswith(f"robustness_{track}_"):
            return f"Track {track}: error of X against {stem[len(track) + 12:].replace('_', ' ')}."
    return stem.replace("_", " ").replace("-", " ").capitalize() + "."


_FIGURE_ORDER = ("pipeline", "dataset_overview", "robots", "scene_", "streams_", "errors_", "noise_", "pnp_image_",
                 "image_", "time_offset_", "clock_", "benchmark_summary", "robustness_", "error_vs_descriptors")


def _figure_order(path: Path):
    """Dataset figures first (overview, robots, then per sequence), then the baseline results."""
    stem = path.stem
    rank = next((i for i, p in enumerate(_FIGURE_ORDER) if stem.startswith(p)), len(_FIGURE_ORDER))
    return rank, stem


def _demote_headings(lines: list[str], top: int) -> list[str]:
    levels = [len(m.group(1)) for ln in lines if (m := re.match(r"^(#+)\s", ln))]
    if not levels:
        return lines
    shift = top - min(levels)
    out = []
    in_code = False
    for ln in lines:
        if ln.startswith("```"):
            in_code = not in_code
        m = None if in_code else re.match(r"^(#+)(\s.*)$", ln)
        out.append("#" * min(6, max(1, len(m.group(1)) + shift)) + m.group(2) if m else ln)
    return out


def _leaderboard_lines(path: Path) -> tuple[list[str], bool]:
    """The leaderboard, headings demoted under the card's section; cut at whole sections when long."""
    lines = path.read_text(encoding="utf-8").rstrip("\n").splitlines()
    lines = _demote_headings(lines, 3)
    # a "|" inside a code span of a table row would split the cell (level strings such as `robot=r2|camera=c1`)
    lines = [
        re.sub(r"`[^`]*`", lambda m: re.sub(r"(?<!\\)\|", r"\\|", m.group(0)), ln) if ln.startswith("|") else ln
        for ln in lines
    ]
    if len(lines) <= _LEADERBOARD_MAX_LINES:
        return lines, False
    starts = [i for i, ln in enumerate(lines) if re.match(r"^#+\s", ln) and i > 0]
    whole = [s for s in starts if s <= _LEADERBOARD_MAX_LINES]
    if whole:
        cut = max(whole)  # as many whole sections as fit
    else:
        cut = starts[0] if starts else _LEADERBOARD_MAX_LINES  # at least the first section
    return lines[:cut], True


# --------------------------------------------------------------------------- #
# the card
# --------------------------------------------------------------------------- #
def _column_rows(schema, docs: dict) -> list[list[str]]:
    rows, seen = [], set()
    names = list(schema.names)
    for name in names:
        if name in seen:
            continue
        prefix = None
        for p in docs:
            cols = [f"{p}_{s}" for s in POSE_SUFFIXES]
            if name == cols[0] and all(c in names for c in cols):
                prefix = p
        if prefix is not None:
            cols = [f"{prefix}_{s}" for s in POSE_SUFFIXES]
            seen.update(cols)
            unit, text = docs[prefix]
            rows.append([", ".join(f"`{c}`" for c in cols), unit, text])
            continue
        seen.add(name)
        unit, text = docs.get(name, ("-", "(undocumented)"))
        rows.append([f"`{name}`", unit, text])
    return rows


def _level_strings(man: pd.DataFrame, track: str, key: str) -> list[str]:
    vals = set()
    for s in man.loc[man["track"] == track, "level"].dropna().astype(str):
        for part in s.split("|"):
            k, _, v = part.partition("=")
            if k == key and v:
                vals.add(v)
    return sorted(vals)


def card_text(root, *, hf_repo: str | None = None) -> str:
    """The dataset card of a folder as Markdown with YAML front matter (see :func:`write_card`)."""
    hf_repo = _check_hf_repo(hf_repo)
    root = Path(root)
    man = load_manifest(root)
    info = _read_generation_info(root)
    cfg, cfg_source = _tier_config(root, info)
    n_seq = len(man)
    tracks = [t for t in TRACKS if (man["track"] == t).any()]
    tracks += sorted(set(man["track"].dropna().astype(str)) - set(TRACKS))
    configs = hf_configs(root, tracks)
    tier_name = str(info.get("tier") or (cfg or {}).get("tier") or "unknown")
    versions = sorted(set(man["generator_version"].dropna().astype(str))) or [str(info.get("generator_version", "?"))]
    seed = info.get("global_seed", (cfg or {}).get("global_seed"))
    folder = root.resolve().name or "data"
    local = "kinhec_data" if hf_repo else folder
    n_robot_frames = int(man["n_robot_frames"].sum())
    n_camera_frames = int(man["n_camera_frames"].sum())
    arms = sorted(set(man["robot"].dropna().astype(str)) - {"free6d"})
    L: list[str] = []
    L.append(_front_matter(n_seq, configs))
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
    L += _table(
        ["property", "value"],
        [
            ["tier", f"`{tier_name}`"],
            ["sequences", _n(n_seq)],
            ["robot-stream frames", _n(n_robot_frames)],
            ["camera-stream frames", _n(n_camera_frames)],
            ["size on disk", _human_bytes(_folder_bytes(root))],
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
            incomplete.append(f"`{t}` holds {_n(have)} of {_n(p)} planned sequences")
    if incomplete:
        L += ["", "This copy is not complete: " + "; ".join(incomplete) + "."]
    L += ["", "## Quick start", "", "```"]
    if hf_repo:
        first_track = tracks[0] if tracks else "noise"
        L += [
            "pip install kinhec huggingface_hub",
            f"hf download {hf_repo} --repo-type dataset --local-dir {local}",
            "# or only what a study needs, e.g. the index and one track:",
            f'hf download {hf_repo} --repo-type dataset --local-dir {local} --include "{INDEX_FILE}" '
            f'"robot/{first_track}-*.parquet" "camera/{first_track}-*.parquet" "generation_info.json" "robots.json" '
            '"cameras_targets.json"',
        ]
    else:
        L += ["pip install kinhec"]
    first = man["sequence_id"].iloc[0] if n_seq else "noise-000000"
    L += [
        "```",
        "",
        "```python",
        "from kinhec import load_manifest, load_sequence, solvers, se3",
        "",
        *_commented([
            (f'man = load_manifest("{local}")', "one row per sequence, every factor a column"),
            (f'seq = load_sequence("{local}", "{first}", man)', "both streams and the ground truth"),
            ("A, B = seq.axxb_motions()", "relative motions between keyframes"),
            ("X = solvers.park_martin(A, B)", "solve A X = X B"),
            ("print(se3.pose_error(X, seq.X))", "(rotation error [deg], translation error [mm])"),
            ("A_abs, B_abs = seq.axyb_poses()", "absolute pose pairs"),
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

    # ---- tracks and composition -------------------------------------------
    descr = {t: (v.get("description") if isinstance(v, dict) else None) for t, v in (info.get("tracks") or {}).items()}
    rows = []
    for t in tracks:
        sub = man[man["track"] == t]
        levels = "sampled" if t == "mixed" else _n(sub["level"].nunique())
        rows.append([f"`{t}`", _n(len(sub)), levels, _n(sub["n_robot_frames"].sum()), _n(sub["n_camera_frames"].sum()),
                     descr.get(t) or TRACK_DESCRIPTIONS.get(t, "")])  # fmt: skip
    rows.append(["**total**", _n(n_seq), "", _n(n_robot_frames), _n(n_camera_frames), ""])
    L += ["", "## Tracks", ""]
    L += _table(["track", "sequences", "factor levels", "robot frames", "camera frames", "what is varied"], rows,
                ["l", "r", "r", "r", "r", "l"])  # fmt: skip
    L += ["", "## Composition", ""]
    groups = [
        ("robot", "Sequences per robot", "robot", None),
        ("configuration", "Sequences per configuration", "configuration", ["eye_in_hand", "eye_to_hand"]),
        ("family", "Sequences per trajectory family", "family", None),
        ("camera_noise_model", "Sequences per camera noise model", "camera noise model", None),
        ("robot_noise_models", "Sequences per combination of robot noise models", "robot noise models", None),
    ]
    for col, title, head, order in groups:
        L += [f"### {title}", ""]
        L += _table([head, "sequences"], [[f"`{k}`", _n(v)] for k, v in _counts(man[col], order)], ["l", "r"])
        L += [""]

    # ---- noise levels -------------------------------------------------------
    L += ["## Named noise levels", ""]
    if cfg and isinstance(cfg.get("robot_levels"), dict) and isinstance(cfg.get("camera_levels"), dict):
        L += [
            "The `level` string of a sequence names the factors its track sweeps. The `noise` track names a robot "
            "and a camera noise level (`robot=r2|camera=c3`); the other tracks keep the noise fixed and name their "
            "own factors. Whatever the level string says, the numbers actually used are in the per-sequence columns "
            "`robot_rot_std_rad`, `robot_trans_std_m`, `joint_std_rad`, `dh_len_std_m`, `dh_ang_std_rad`, "
            "`camera_rot_std_rad`, `camera_trans_std_m`, `camera_trans_std_z_m` and `pixel_std`, which are 0 or "
            "NaN when the corresponding model is not active.",
            "",
            "Robot levels (twist noise in the flange frame, standard deviations):",
            "",
        ]
        rrows = []
        for k, v in cfg["robot_levels"].items():
            rot, trans = float(v[0]), float(v[1])
            rrows.append([f"`{k}`", f"{math.degrees(rot):.3f}", f"{trans * 1000:.2f}", f"{rot:g}", f"{trans:g}"])
        L += _table(["level", "rotation [deg]", "translation [mm]", "rotation [rad]", "translation [m]"], rrows,
                    ["l", "r", "r", "r", "r"])  # fmt: skip
        L += ["", "Camera levels (rotation of the target orientation; translation in the camera frame, x and y "
                  "lateral, z along the optical axis):", ""]  # fmt: skip
        crows = []
        for k, v in cfg["camera_levels"].items():
            rot, (x, y, z) = float(v[0]), (float(c) for c in v[1])
            crows.append([f"`{k}`", f"{math.degrees(rot):.3f}", f"{x * 1000:.2f}", f"{y * 1000:.2f}",
                          f"{z * 1000:.2f}"])  # fmt: skip
        L += _table(["level", "rotation [deg]", "x [mm]", "y [mm]", "z (depth) [mm]"], crows, ["l", "r", "r", "r", "r"])
        used_r, used_c = _level_strings(man, "noise", "robot"), _level_strings(man, "noise", "camera")
        L += ["", f"Values from {cfg_source}. A tier defines every level it may use; "]
        if used_r or used_c:
            L[-1] += (f"in this copy the `noise` track sweeps the robot levels {', '.join(f'`{x}`' for x in used_r)} "
                      f"and the camera levels {', '.join(f'`{x}`' for x in used_c)}.")  # fmt: skip
        else:
            L[-1] += "this copy holds no `noise` track."
    else:
        L += ["The tier configuration of this copy could not be found, so its named levels are not listed; the "
              "per-sequence noise columns of the index hold the values used."]  # fmt: skip

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
    L += _table(
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
    L += _table(["file", "content"], [list(f) for f in files])
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
        L += _table(["column", "unit", "meaning"], _column_rows(schema, docs))

    # ---- protocol and results -------------------------------------------------
    L += [
        "",
        "## Evaluation protocol and baseline results",
        "",
        "`kinhec benchmark` treats every solver alike: it pairs the streams (row by row for synchronous sequences; "
        "for asynchronous ones the measured robot stream is interpolated at `t - offset`, with the true offset "
        "(`oracle`) or with the offset estimated by cross-correlating angular speeds (`estimated`)), keeps the "
        "frames that carry a measurement, selects keyframes at least 5 deg or 2 cm apart (at most 200; all paired "
        "frames when fewer than three survive), feeds consecutive keyframe motions to the `A X = X B` solvers and "
        "the absolute keyframe poses to the `A X = Y B` solvers, and reports the geodesic rotation error [deg] and "
        "the Euclidean translation error [mm] of `X` (and `Y`).",
        "",
        "**Read the medians, not the success count.** A solver counts as successful on a sequence whenever it "
        "returns a finite estimate. A closed-form solver returns an orthonormal `X` whatever its input, also on "
        "the degenerate motions of the `motion` track and on the outlier-ridden sequences of the `outliers` track, "
        "so a full success count says nothing about whether a track was solved; the median errors do.",
        "",
    ]
    lb = root / "benchmarks" / "leaderboard.md"
    if lb.is_file():
        lines, cut = _leaderboard_lines(lb)
        L += lines
        L += ["", "Full tables: [`benchmarks/leaderboard.md`](benchmarks/leaderboard.md)" +
              (" (shortened here)." if cut else ".")]  # fmt: skip
        if (root / "benchmarks" / "results.parquet").is_file():
            L[-1] += " Raw per-sequence results: `benchmarks/results.parquet`."
    else:
        L += [f"No baseline results in this copy yet; `kinhec benchmark {folder}` computes them into `benchmarks/`."]

    # ---- figures ------------------------------------------------------------------
    figs = sorted((root / "figures").glob("*.png")) if (root / "figures").is_dir() else []
    if figs:
        L += ["", "## Figures"]
        results_fig = re.compile(r"^(benchmark_|robustness_|error_vs_)")
        groups = (
            ("The dataset", sorted((f for f in figs if not results_fig.match(f.stem)), key=_figure_order)),
            ("Baseline results", sorted((f for f in figs if results_fig.match(f.stem)), key=_figure_order)),
        )
        for title, group in groups:
            if group:
                L += ["", f"### {title}", ""]
            for f in group:
                url = (f"https://huggingface.co/datasets/{hf_repo}/resolve/main/figures/{f.name}" if hf_repo
                       else f"figures/{f.name}")  # fmt: skip
                cap = _figure_caption(f.stem)
                L += [f"![{cap}]({url})", "", f"*{cap}*", ""]
            if group:
                L.pop()

    # ---- regeneration, validation, limitations --------------------------------------
    tier_arg = tier_name if _is_shipped_tier(cfg) else f"{folder}/configs/{tier_name}.yaml"
    L += [
        "",
        "## Regenerating and extending",
        "",
        "The copy is the output of a deterministic program: every sequence is seeded from the tier's global seed "
        "and its own id, and shards are generated independently, so the result depends neither on the number of "
        "workers nor on the order of execution.",
        "",
        "```",
        "pip install kinhec",
        f"kinhec plan --tier {tier_arg}",
        f"kinhec generate --tier {tier_arg} --out {folder}    # resumable: complete shards are skipped",
        f"kinhec validate {folder}",
        f"kinhec benchmark {folder}",
        f"kinhec visualize {folder}",
        f"kinhec card {folder}" + (f" --hf-repo {hf_repo}" if hf_repo else ""),
        "```",
        "",
        "A tier is a YAML file listing the factor levels of every track; copy one to build your own "
        "(`--tier my_tier.yaml`) or raise `repeats_multiplier` to enlarge every track in proportion.",
        "",
        "## Validation",
        "",
        f"`kinhec validate {folder}` checks the files, the index against the row groups of the shards, the schemas, "
        "the time stamps and the temporal ground truth, orthonormal rotations and unit quaternions, the frame, "
        "visibility and outlier counts, the forward kinematics of the true joint positions against the true "
        "flange poses, and the identity `A_i X = Y B_i` on every camera frame.",
        "",
        "## Limitations",
        "",
        "* Purely kinematic: no images, dynamics or compliance; image formation enters only through pixel noise "
        "followed by PnP, and target-detection failures only through the planar-flip outlier model.",
        "* The camera is an ideal pinhole with exactly known intrinsics (no lens distortion).",
        "* `X` and `Y` are constant within a sequence (no mounting flex, no thermal drift).",
        "* Noise levels bracket published sensor characteristics; they are not measured on a given device.",
        "* Joint limits and speed caps are respected; self-collisions and obstacles are not modelled.",
        "* `dh_error` perturbs every DH parameter independently, whereas real geometric errors are correlated.",
        "",
        "## Licence and citation",
        "",
        "Released under the MIT licence (see `LICENSE`). Cite with the metadata in `CITATION.cff`"
        + (f" or the Hub page https://huggingface.co/datasets/{hf_repo}." if hf_repo else "."),
        "",
        f"*This card was generated by `kinhec card` (kinhec {__version__}) from the files of the folder.*",
    ]
    return "\n".join(L) + "\n"


def write_card(root, *, hf_repo: str | None = None) -> Path:
    """Write ``README.md`` (the dataset card), ``LICENSE`` and ``CITATION.cff`` into a dataset folder.

    Parameters
    ----------
    root : str or Path
        Dataset folder holding at least ``sequences.parquet``.
    hf_repo : str, optional
        Hugging Face Hub repository id ``USER/NAME``: figure links become
        absolute URLs of that repository, the examples download from it and
        ``CITATION.cff`` points to it.

    Returns
    -------
    Path
        The card written (``root / "README.md"``).

    Raises
    ------
    DatasetFormatError
        If ``root`` is not a dataset folder or its index or
        ``generation_info.json`` cannot be read.
    InputError
        If ``hf_repo`` is not of the form ``USER/NAME``, or ``benchmarks/results.parquet``
        was computed on other data (the folder was generated again since).
    """
    hf_repo = _check_hf_repo(hf_repo)
    root = Path(root)
    results = root / "benchmarks" / "results.parquet"
    if results.is_file():  # the card quotes the leaderboard: refuse results of other data
        check_results_match(root, results)
    text = card_text(root, hf_repo=hf_repo)
    url = f"https://huggingface.co/datasets/{hf_repo}" if hf_repo else None
    for name, content in (("LICENSE", license_text()), ("CITATION.cff", citation_cff(url=url))):
        write_owned(root, name, content)  # a LICENSE or CITATION.cff of the user's is kept
    write_owned(root, CARD_FILE, text, replace=True)
    return root / CARD_FILE
