"""Recordings of the reduced-DOF machines, with exact ground truth, through the generator (kinhec only).

The machines of :data:`kinhec.models.robots.MACHINE_NAMES` (a SCARA, a 4-axis palletiser, a Cartesian gantry) keep
their flange level: every motion turns about the vertical only, so ``A X = Y B`` cannot determine the offset along
it.  No published tier draws them; :func:`machine_recipes` writes recipes for them and
:func:`generate_machine_dataset` generates a dataset folder of them that kinhec's readers load like any other
(:func:`kinhec.io.load_sequence`).

The folder has the files of a generated dataset: ``robots.json`` holds the machines recorded (in kinhec's own
form, :meth:`kinhec.models.robots.RobotModel.to_dict`, which carries the joint types and the chain),
``generation_info.json`` names ``machines`` as its tier and ``configs/machines.yaml`` holds the settings.

Each machine gets ``n_per_setup`` sequences eye-in-hand and as many eye-to-hand, in the ``motion`` track (one shard
per machine and set-up).  Sequence ``k`` of a set-up moves by ``joint_sinusoid`` (continuous, 20 s at 30 Hz) when
``k`` is even and by ``joint_waypoints`` (20 stations) when odd: joint-space motions, which a machine can always
follow (the generator checks nothing else: the machine's kinematics keep the flange level).  The noise is the
tier's: the robot's flange-twist level and the camera's pose level cycle through :data:`ROBOT_LEVELS` and
:data:`CAMERA_LEVELS` of the tier's named levels; every third sequence adds encoder noise (``joint_gaussian``,
:data:`JOINT_STD` per joint, radians or metres) and every fourth measures the camera by PnP
(:data:`PIXEL_STD_PX`).  Seeds come from the global seed and the sequence id
(:func:`kinhec.synth.tiers.sequence_seed`), as in a tier.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from kinhec import __version__, io
from kinhec.io.publish import citation_cff, license_text, write_card_if_missing
from kinhec.io.tracks import sequence_id
from kinhec.models.cameras import cameras_targets_json
from kinhec.models.robots import MACHINE_NAMES, get_robot
from kinhec.synth.generator import generate_sequence
from kinhec.synth.recipe import Recipe
from kinhec.synth.tiers import TRACK_DESCRIPTIONS, load_tier, sequence_seed
from kinhec.util import jsonutil
from kinhec.util.errors import InputError, UnknownNameError
from kinhec.util.fsutil import atomic_write_text
from kinhec.util.provenance import user_files, write_owned

__all__ = ["TRACK", "ROBOT_LEVELS", "CAMERA_LEVELS", "JOINT_STD", "PIXEL_STD_PX", "machine_recipes",
           "generate_machine_dataset"]  # fmt: skip

#: The track the machine sequences are stored in (motion design and degeneracy).
TRACK = "motion"
#: Named noise levels of the tier cycled through (robot flange twist, camera pose).
ROBOT_LEVELS = ("r1", "r2", "r3")
CAMERA_LEVELS = ("c1", "c2", "c3")
#: Encoder noise [rad or m] of every third sequence, and the pixel noise [px] of every fourth.
JOINT_STD = 1e-4
PIXEL_STD_PX = 0.5
_SETUPS = ("eye_in_hand", "eye_to_hand")


def _check_machines(machines) -> tuple[str, ...]:
    names = (machines,) if isinstance(machines, str) else tuple(machines)
    for name in names:
        if name not in MACHINE_NAMES:
            raise UnknownNameError("machine", name, MACHINE_NAMES)
    if not names:
        raise InputError(f"machines: expected at least one of {', '.join(MACHINE_NAMES)}, got none")
    return names


def machine_recipes(machines=MACHINE_NAMES, n_per_setup: int = 50, *, seed: int = 0, tier: str = "small") -> list[dict]:
    """The recipes (dicts, in id order) of ``n_per_setup`` sequences per machine and set-up (module docstring).

    Parameters
    ----------
    machines : str or sequence of str
        Names of :data:`kinhec.models.robots.MACHINE_NAMES`.
    n_per_setup : int
        Sequences eye-in-hand, and as many eye-to-hand, per machine.
    seed : int
        Global seed (each sequence's seed is :func:`kinhec.synth.tiers.sequence_seed` of it and the id).
    tier : str
        The tier (name or YAML) whose named noise levels and camera are used.
    """
    names = _check_machines(machines)
    if isinstance(n_per_setup, bool) or not isinstance(n_per_setup, int) or n_per_setup < 1:
        raise InputError(f"n_per_setup: expected an integer >= 1, got {n_per_setup!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed: expected an integer >= 0, got {seed!r}")
    cfg = load_tier(tier).config
    rlevels, clevels = cfg["robot_levels"], cfg["camera_levels"]
    camera = cfg.get("defaults", {}).get("camera", "hd")
    out = []
    for name in names:
        for setup in _SETUPS:
            for k in range(n_per_setup):
                sid = sequence_id(TRACK, len(out))
                rl, cl = ROBOT_LEVELS[k % len(ROBOT_LEVELS)], CAMERA_LEVELS[(k // 2) % len(CAMERA_LEVELS)]
                rot, trans = (float(v) for v in rlevels[rl])
                c_rot, (c_x, _, c_z) = float(clevels[cl][0]), (float(v) for v in clevels[cl][1])
                joints = k % 3 == 2
                pnp = k % 4 == 3
                family = "joint_sinusoid" if k % 2 == 0 else "joint_waypoints"
                r = dict(
                    sequence_id=sid, track=TRACK, seed=sequence_seed(seed, sid), robot=name, configuration=setup,
                    family=family, sampling_mode="continuous" if family == "joint_sinusoid" else "stations",
                    camera=camera, duration_s=20.0, n_stations=20, camera_rate_hz=30.0, subset="all",
                    robot_noise_models=("se3_gaussian", "joint_gaussian") if joints else ("se3_gaussian",),
                    robot_rot_std_rad=rot, robot_trans_std_m=trans, joint_std_rad=JOINT_STD if joints else 0.0,
                    camera_noise_model="pnp" if pnp else "se3_gaussian",
                    pixel_std=PIXEL_STD_PX if pnp else None,
                    camera_rot_std_rad=0.0 if pnp else c_rot, camera_trans_std_m=0.0 if pnp else c_x,
                    camera_trans_std_z_m=0.0 if pnp else c_z,
                    level=(f"machine={name}|{family}|robot={rl}{'+joints' if joints else ''}|"
                           f"camera={'pnp' if pnp else cl}"),
                )  # fmt: skip
                out.append(Recipe.from_dict(r).to_dict())
    return out


def generate_machine_dataset(out, machines=MACHINE_NAMES, n_per_setup: int = 50, *, seed: int = 0,
                             tier: str = "small") -> list[Path]:  # fmt: skip
    """Generate the machine sequences of :func:`machine_recipes` into the dataset folder ``out`` and index it.

    One shard per machine and set-up, then the index and the static files (module docstring); the folder must be
    empty or new (a folder holding other files is refused).  Returns the shard files written (robot, camera) in
    order.
    """
    root = Path(out)
    if root.exists() and (not root.is_dir() or user_files(root) or any(root.iterdir())):
        raise InputError(f"--out {root}: expected a new or empty folder for the machine recordings, got "
                         f"{'a file' if not root.is_dir() else 'a folder with files in it'}")  # fmt: skip
    recipes = machine_recipes(machines, n_per_setup, seed=seed, tier=tier)
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for shard in range(len(recipes) // n_per_setup):
        part = recipes[shard * n_per_setup : (shard + 1) * n_per_setup]
        tables = [generate_sequence(Recipe.from_dict(r)) for r in part]
        io.write_shard(root, TRACK, shard, tables)
        written.extend(io.shard_paths(root, TRACK, shard))
    io.write_index(root, io.rebuild_index(root))
    names = _check_machines(machines)
    settings = {"machines": list(names), "n_per_setup": n_per_setup, "global_seed": seed, "noise_levels_of": tier,
                "robot_levels": list(ROBOT_LEVELS), "camera_levels": list(CAMERA_LEVELS), "joint_std": JOINT_STD,
                "pixel_std_px": PIXEL_STD_PX}  # fmt: skip
    (root / "configs").mkdir(exist_ok=True)
    atomic_write_text(root / "configs" / "machines.yaml", yaml.safe_dump(settings, sort_keys=False))
    atomic_write_text(root / "robots.json", jsonutil.dumps({n: get_robot(n).to_dict() for n in names}, indent=2))
    atomic_write_text(root / "cameras_targets.json", jsonutil.dumps(cameras_targets_json(), indent=2))
    info = {"dataset": "KinHEC machines (kinhec only)", "generator_version": __version__, "tier": "machines",
            "tier_config": "configs/machines.yaml", "global_seed": seed,
            "tracks": {TRACK: {"description": TRACK_DESCRIPTIONS[TRACK], "planned_sequences": len(recipes)}}}
    atomic_write_text(root / "generation_info.json", jsonutil.dumps(info, indent=2))
    for name, text in (("LICENSE", license_text()), ("CITATION.cff", citation_cff())):
        write_owned(root, name, text)
    write_card_if_missing(root)
    return written
