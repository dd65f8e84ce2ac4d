"""The published shapes of ``config_json`` and ``extra_json`` (docs/format.md).

A sequence's index row carries two JSON columns.  ``config_json`` is the
generation recipe in the published KinHEC form: nested, with exactly the keys
of :data:`CONFIG_KEYS` (and of :data:`CONFIG_NESTED_KEYS` inside ``sampling``,
``timing``, ``robot_noise``, ``camera_noise``, ``outliers`` and ``scale``), so
that a reader which builds ``SequenceConfig(**config)`` accepts it.  kinhec's
own :class:`~kinhec.synth.recipe.Recipe` is flat and has a few more fields (motion
design, dwell time, DH joint noise, ...); it goes whole into ``extra_json``
under ``"recipe"``, after the published ``extra_json`` keys
(:data:`EXTRA_KEYS`).

``sync`` is spelled ``"synchronous"`` or ``"asynchronous"`` on disk (index
column, ``config_json.sampling.sync`` and the stored recipe);
:class:`~kinhec.synth.recipe.Recipe` uses ``"sync"``/``"async"`` in memory and
accepts both spellings.
"""

from __future__ import annotations

import math
import re

from kinhec.synth.recipe import Recipe

__all__ = [
    "CONFIG_KEYS",
    "CONFIG_NESTED_KEYS",
    "EXTRA_KEYS",
    "SYNC_SPELLINGS",
    "published_sync",
    "config_dict",
    "stored_recipe",
    "recipe_from_json",
    "robot_student_t_dof",
    "tags_from_level",
]

#: Top-level keys of ``config_json``, sorted as written.
CONFIG_KEYS = (
    "camera", "camera_noise", "configuration", "family", "family_params", "level", "outliers", "robot",
    "robot_noise", "sampling", "scale", "seed", "sequence_id", "tags", "target", "timing", "track", "world_frame",
)  # fmt: skip
#: Keys of the nested objects of ``config_json``.
CONFIG_NESTED_KEYS = {
    "sampling": ("mode", "duration_s", "camera_rate_hz", "robot_rate_hz", "sync", "n_stations"),
    "timing": ("time_offset_s", "jitter_std_s", "drop_fraction"),
    "robot_noise": ("models", "rot_std_rad", "trans_std_m", "joint_std_rad", "dh_len_std_m", "dh_ang_std_rad",
                    "student_t_dof"),
    "camera_noise": ("model", "rot_std_rad", "trans_std_m", "pixel_std", "student_t_dof"),
    "outliers": ("fraction", "model"),
    "scale": ("enabled", "value", "drift_std"),
}  # fmt: skip
#: Published ``extra_json`` keys, in the order written (``true_dh`` and ``scale_per_frame`` only when they apply).
EXTRA_KEYS = ("true_dh", "scale_per_frame", "trajectory_params", "keyframe_indices", "camera_intrinsics", "target")
#: In-memory spelling -> on-disk spelling of ``sync``.
SYNC_SPELLINGS = {"sync": "synchronous", "async": "asynchronous"}

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def published_sync(value: str) -> str:
    """``"synchronous"`` or ``"asynchronous"`` for any accepted spelling of ``sync``."""
    v = str(value).strip().lower()
    return "asynchronous" if v.startswith("async") else "synchronous"


def _num(v):
    """A JSON-safe float: NaN becomes None."""
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f


def tags_from_level(level: str) -> dict:
    """The factor values of a grid cell read from its ``level`` (``"robot=r2|camera=c1"`` -> dict).

    Numbers become int or float; parts without ``=`` are ignored (``"random"`` -> ``{}``).
    """
    out = {}
    for part in str(level).split("|"):
        if "=" not in part:
            continue
        k, v = part.split("=", 1)
        k, v = k.strip(), v.strip()
        if _NUMBER.match(v):
            out[k] = int(v) if re.match(r"^[+-]?\d+$", v) else float(v)
        else:
            out[k] = v
    return dict(sorted(out.items()))


def _family_params(r: Recipe, joints=None) -> dict:
    if r.family == "joint_sinusoid":
        p = {"n_harmonics": int(r.n_harmonics), "speed_frac": float(r.speed_fraction),
             "f_min": float(r.frequency_range_hz[0]), "f_max": float(r.frequency_range_hz[1])}  # fmt: skip
        if joints is not None:
            p["joints"] = [int(j) for j in joints]
        return dict(sorted(p.items()))
    if r.family in ("lookat", "joint_waypoints"):
        return {"n_waypoints": int(r.n_stations), "speed_frac": float(r.speed_fraction)}
    if r.family == "cartesian_cone":
        return {"cone_half_angle_deg": float(r.cone_half_angle_deg), "n_waypoints": int(r.n_waypoints),
                "rot_angle_deg": [float(v) for v in r.rot_angle_range_deg], "trans_range_m": float(r.trans_range_m)}
    return {}


def config_dict(r: Recipe, *, robot_rate_hz=None, joints=None) -> dict:
    """The published ``config_json`` object of a recipe (keys sorted at every level).

    Parameters
    ----------
    r : Recipe
    robot_rate_hz : float, optional
        The robot stream's rate [Hz] of an asynchronous sequence (``sampling.robot_rate_hz``;
        ``None`` for a synchronous one, as published).
    joints : sequence of int, optional
        Excited joints of a ``joint_sinusoid`` trajectory (``family_params.joints``).

    Returns
    -------
    dict
        Exactly :data:`CONFIG_KEYS` (and :data:`CONFIG_NESTED_KEYS`); units are
        seconds, hertz, metres and radians.
    """
    asynchronous = published_sync(r.sync) == "asynchronous"
    cam = r.camera_noise_model
    if cam == "vo_drift":
        rot, trans, trans_z = r.vo_drift_rot_std_rad, r.vo_drift_trans_std_m, r.vo_drift_trans_std_m
    else:
        rot, trans, trans_z = r.camera_rot_std_rad, r.camera_trans_std_m, r.camera_trans_std_z_m
    models = list(r.robot_noise_models)
    cfg = {
        "camera": r.camera,
        "camera_noise": {
            "model": cam,
            "pixel_std": float(r.pixel_std) if cam == "pnp" else 0.0,  # a number, as published: no pixel noise
            "rot_std_rad": [float(rot)] * 3,
            "student_t_dof": _num(r.student_t_dof),
            "trans_std_m": [float(trans), float(trans), float(trans_z)],
        },
        "configuration": r.configuration,
        "family": r.family,
        "family_params": _family_params(r, joints),
        "level": r.level,
        "outliers": {
            "fraction": float(r.outlier_fraction),
            "model": "random_pose" if r.outlier_model == "none" else r.outlier_model,
        },
        "robot": r.robot,
        "robot_noise": {
            "dh_ang_std_rad": float(r.dh_ang_std_rad),
            "dh_len_std_m": float(r.dh_len_std_m),
            "joint_std_rad": float(r.joint_std_rad),
            "models": models,
            "rot_std_rad": float(r.robot_rot_std_rad),
            "student_t_dof": _num(r.robot_student_t_dof),
            "trans_std_m": float(r.robot_trans_std_m),
        },
        "sampling": {
            "camera_rate_hz": float(r.camera_rate_hz),
            "duration_s": float(r.duration_s),
            "mode": r.sampling_mode,
            "n_stations": int(r.n_stations) if r.sampling_mode == "stations" else None,
            "robot_rate_hz": _num(robot_rate_hz) if asynchronous else None,
            "sync": published_sync(r.sync),
        },
        "scale": {
            "drift_std": float(r.scale_drift_std),
            "enabled": bool(r.scale != 1.0 or r.scale_drift_std > 0),
            "value": float(r.scale),
        },
        "seed": int(r.seed),
        "sequence_id": r.sequence_id,
        "tags": tags_from_level(r.level),
        "target": r.target,
        "timing": {
            "drop_fraction": float(r.camera_drop_fraction),
            "jitter_std_s": float(r.time_jitter_std_s),
            "time_offset_s": float(r.time_offset_s),
        },
        "track": r.track,
        "world_frame": r.world_frame,
    }
    return cfg


def robot_student_t_dof(config: dict) -> float | None:
    """Degrees of freedom of the robot's Student-t twist noise from a decoded ``config_json`` (None: Gaussian).

    Read from ``robot_noise.student_t_dof`` of the published nested form, or from ``robot_student_t_dof`` of
    an older kinhec row whose ``config_json`` is the flat recipe itself.
    """
    if not isinstance(config, dict):
        return None
    rn = config.get("robot_noise")
    v = rn.get("student_t_dof") if isinstance(rn, dict) else config.get("robot_student_t_dof")
    if v is None:
        return None
    v = float(v)
    return None if math.isnan(v) else v


def stored_recipe(r: Recipe) -> dict:
    """kinhec's whole recipe as stored in ``extra_json["recipe"]`` (``sync`` spelled as on disk)."""
    d = r.to_dict()
    d["sync"] = published_sync(d["sync"])
    d["pixel_std"] = _num(d["pixel_std"])
    return d


def recipe_from_json(config: dict, extra: dict | None = None) -> Recipe:
    """The :class:`Recipe` of a sequence from its decoded ``config_json`` and ``extra_json``.

    kinhec's own rows carry the whole recipe in ``extra["recipe"]``; for a row
    written by another tool the recipe is rebuilt from the published nested
    ``config_json`` (fields it does not name keep their defaults).
    """
    if isinstance(extra, dict) and isinstance(extra.get("recipe"), dict):
        return Recipe.from_dict(extra["recipe"])
    if "sampling" not in config:  # an older kinhec row: the flat recipe itself
        return Recipe.from_dict(config)
    s, t, rn, cn = config["sampling"], config["timing"], config["robot_noise"], config["camera_noise"]
    o, sc, fp = config["outliers"], config["scale"], config.get("family_params") or {}
    cam = cn["model"]
    rot, trans = list(cn["rot_std_rad"]), list(cn["trans_std_m"])
    kw = dict(
        sequence_id=config["sequence_id"], track=config["track"], level=config["level"], seed=config["seed"],
        robot=config["robot"], configuration=config["configuration"], family=config["family"],
        sampling_mode=s["mode"], sync=published_sync(s["sync"]), world_frame=config["world_frame"],
        camera=config["camera"], target=config["target"], duration_s=s["duration_s"],
        camera_rate_hz=s["camera_rate_hz"], time_offset_s=t["time_offset_s"], time_jitter_std_s=t["jitter_std_s"],
        camera_drop_fraction=t["drop_fraction"],
        robot_noise_models=tuple(rn["models"]), robot_rot_std_rad=rn["rot_std_rad"],
        robot_trans_std_m=rn["trans_std_m"], robot_student_t_dof=rn["student_t_dof"],
        joint_std_rad=rn["joint_std_rad"], dh_len_std_m=rn["dh_len_std_m"], dh_ang_std_rad=rn["dh_ang_std_rad"],
        camera_noise_model=cam, pixel_std=cn["pixel_std"] if cam == "pnp" else math.nan,
        student_t_dof=None if cam == "pnp" else cn["student_t_dof"],
        outlier_fraction=o["fraction"], outlier_model=o["model"] if o["fraction"] > 0 else "none",
        scale=sc["value"], scale_drift_std=sc["drift_std"],
    )  # fmt: skip
    if cam == "vo_drift":
        kw.update(vo_drift_rot_std_rad=rot[0], vo_drift_trans_std_m=trans[0])
    else:
        kw.update(camera_rot_std_rad=rot[0], camera_trans_std_m=trans[0], camera_trans_std_z_m=trans[2])
    if s.get("n_stations") is not None:
        kw["n_stations"] = s["n_stations"]
    if s.get("robot_rate_hz") is not None:
        kw["robot_rate_cap_hz"] = s["robot_rate_hz"]
    for src, dst in (("n_harmonics", "n_harmonics"), ("speed_frac", "speed_fraction"),
                     ("cone_half_angle_deg", "cone_half_angle_deg"), ("trans_range_m", "trans_range_m")):
        if src in fp:
            kw[dst] = fp[src]
    if "f_min" in fp and "f_max" in fp:
        kw["frequency_range_hz"] = (fp["f_min"], fp["f_max"])
    if "rot_angle_deg" in fp:
        kw["rot_angle_range_deg"] = tuple(fp["rot_angle_deg"])
    if config["family"] == "cartesian_cone" and "n_waypoints" in fp:
        kw["n_waypoints"] = fp["n_waypoints"]
    return Recipe.from_dict(kw)
