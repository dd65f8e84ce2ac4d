"""The card's account of what the copy holds: its tracks, its composition and the named noise levels."""

from __future__ import annotations

import math

from kinhec.dataset.card import markdown as md
from kinhec.dataset.card.folder import CardInputs
from kinhec.synth.tiers import TRACK_DESCRIPTIONS

__all__ = ["composition_section", "noise_levels_section"]


def composition_section(c: CardInputs) -> list[str]:
    """The tracks (sequences, levels, frames, what varies) and the counts per robot, configuration, family and noise model."""
    man, info, tracks, n_seq = c.man, c.info, c.tracks, len(c.man)
    n_robot_frames = int(man["n_robot_frames"].sum())
    n_camera_frames = int(man["n_camera_frames"].sum())
    L: list[str] = []
    # ---- tracks and composition -------------------------------------------
    descr = {t: (v.get("description") if isinstance(v, dict) else None) for t, v in (info.get("tracks") or {}).items()}
    rows = []
    for t in tracks:
        sub = man[man["track"] == t]
        levels = "sampled" if t == "mixed" else md.n(sub["level"].nunique())
        rows.append([f"`{t}`", md.n(len(sub)), levels, md.n(sub["n_robot_frames"].sum()), md.n(sub["n_camera_frames"].sum()),
                     descr.get(t) or TRACK_DESCRIPTIONS.get(t, "")])  # fmt: skip
    rows.append(["**total**", md.n(n_seq), "", md.n(n_robot_frames), md.n(n_camera_frames), ""])
    L += ["", "## Tracks", ""]
    L += md.table(["track", "sequences", "factor levels", "robot frames", "camera frames", "what is varied"], rows,
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
        L += md.table([head, "sequences"], [[f"`{k}`", md.n(v)] for k, v in md.counts(man[col], order)], ["l", "r"])
        L += [""]
    return L


def noise_levels_section(c: CardInputs) -> list[str]:
    """The tier's named robot and camera noise levels, and those the `noise` track uses."""
    man, cfg, cfg_source = c.man, c.cfg, c.cfg_source
    L: list[str] = []
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
        L += md.table(["level", "rotation [deg]", "translation [mm]", "rotation [rad]", "translation [m]"], rrows,
                    ["l", "r", "r", "r", "r"])  # fmt: skip
        L += ["", "Camera levels (rotation of the target orientation; translation in the camera frame, x and y "
                  "lateral, z along the optical axis):", ""]  # fmt: skip
        crows = []
        for k, v in cfg["camera_levels"].items():
            rot, (x, y, z) = float(v[0]), (float(c) for c in v[1])
            crows.append([f"`{k}`", f"{math.degrees(rot):.3f}", f"{x * 1000:.2f}", f"{y * 1000:.2f}",
                          f"{z * 1000:.2f}"])  # fmt: skip
        L += md.table(["level", "rotation [deg]", "x [mm]", "y [mm]", "z (depth) [mm]"], crows, ["l", "r", "r", "r", "r"])
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
    return L


def _level_strings(man: pd.DataFrame, track: str, key: str) -> list[str]:
    vals = set()
    for s in man.loc[man["track"] == track, "level"].dropna().astype(str):
        for part in s.split("|"):
            k, _, v = part.partition("=")
            if k == key and v:
                vals.add(v)
    return sorted(vals)


