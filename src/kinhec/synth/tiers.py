"""Tiers: factor grids that expand into the recipes of every sequence of a dataset.

A tier is a YAML file (``src/kinhec/synth/configs/{smoke,small,medium,full}.yaml`` ship
with kinhec; any file with the same structure works, ``--tier my_tier.yaml``).
It lists the global seed, the shard size, the named noise levels and, per
track, the factor levels; each systematic track is a full factorial grid of its
levels times ``repeats`` (times the tier's ``repeats_multiplier``), and the
``mixed`` track draws ``n_sequences`` random configurations from the whole
factor space.

Expanding a tier is cheap and deterministic: the i-th sequence of a track gets
the id ``<track>-<i:06d>`` and the seed :func:`sequence_seed` (global seed,
id), so any subset of sequences can be generated in any order, on any number of
workers, with identical results.
"""

from __future__ import annotations

import bisect
import copy
import hashlib
import itertools
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

import yaml

from kinhec.util.errors import InputError, UnknownNameError
from kinhec.synth.tier_schema import check_tier_schema
from kinhec.io.tracks import TRACKS, sequence_id

__all__ = [
    "TIER_NAMES",
    "Tier",
    "load_tier",
    "sequence_seed",
    "count_track",
    "plan_counts",
    "expand_track",
    "expand_tier",
    "shards_of_track",
]

TIER_NAMES = ("smoke", "small", "medium", "full")

TRACK_DESCRIPTIONS = {
    "noise": "Sensor-noise robustness: robot flange-twist noise x camera anisotropic pose noise, "
    "continuous joint-space trajectories and look-at stations.",
    "motion": "Motion design and degeneracy: rotation-axis cone half-angle, rotation magnitude and number of "
    "poses; joint-subset excitation; number of stations.",
    "temporal": "Spatio-temporal calibration: asynchronous streams with clock offsets, jitter and frame drops.",
    "outliers": "Gross errors: outlier fraction x outlier model x Gaussian / Student-t noise.",
    "monocular": "Visual-odometry input: translations known up to a scale (with drift), random-walk noise.",
    "robot_error": "Systematic robot errors: joint-encoder noise and uncalibrated DH parameters.",
    "pnp": "Image formation: pixel noise and PnP refinement for several cameras and targets.",
    "mixed": "Random configurations sampled from the whole factor space.",
}

_ARMS = (
    "ur3", "ur5", "ur10", "ur3e", "ur5e", "ur10e", "ur16e", "ur20",
    "panda", "iiwa7", "iiwa14", "irb120", "puma560",
)  # fmt: skip
_ROBOTS = _ARMS + ("free6d",)
_CONFIGURATIONS = ("eye_in_hand", "eye_to_hand")
_SUBSETS = ("single", "parallel", "two_axes", "wrist", "all")
_OUTLIER_MODELS = ("random_pose", "planar_flip", "gross")
_CAMERAS = ("vga", "hd", "fhd", "industrial_5mp")
_TARGETS = ("checker_7x5_20mm", "checker_9x6_25mm", "grid_10x8_60mm", "marker_2x2_40mm", "marker_3x3_30mm")
_CAMERA_MODELS = ("se3_gaussian", "pnp", "vo_drift")

#: Fraction of the joint-speed caps used by the generated motions (temporal track: faster).
SPEED_FRACTION = 0.25
SPEED_FRACTION_TEMPORAL = 0.35
#: Frequency range [Hz] of the three sinusoids per joint of the temporal track's excitation (faster than the
#: 0.03-0.25 Hz of the other tracks, as published: a time offset shows in fast motion).
FREQUENCY_RANGE_TEMPORAL_HZ = (0.1, 0.6)


def sequence_seed(global_seed: int, seq_id: str) -> int:
    """Seed of one sequence: a stable hash of (global seed, sequence id), in [0, 2**63).

    Independent of the platform, the Python hash seed and the order in which
    sequences are generated.
    """
    h = hashlib.sha256(f"kinhec:{int(global_seed)}:{seq_id}".encode()).digest()
    return int.from_bytes(h[:8], "little") & ((1 << 63) - 1)


# --------------------------------------------------------------------------- #
# loading and validation
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class Tier:
    """A loaded and validated tier definition."""

    name: str
    source: str  # path of the YAML file, or "builtin:<name>"
    config: dict

    @property
    def global_seed(self) -> int:
        return int(self.config["global_seed"])

    @property
    def shard_size(self) -> int:
        return int(self.config["shard_size"])

    @property
    def repeats_multiplier(self) -> int:
        return int(self.config.get("repeats_multiplier", 1))

    @property
    def tracks(self) -> tuple[str, ...]:
        return tuple(t for t in TRACKS if t in self.config["tracks"])

    def yaml_text(self) -> str:
        """The tier as YAML (what is copied into a dataset's ``configs/``)."""
        return yaml.safe_dump(self.config, sort_keys=False)


def _safe_load(text: str):
    """``yaml.safe_load`` with libyaml's parser when available (same resolver and constructor, ~10x faster)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _read_yaml(path: Path) -> dict:
    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError(f"tier file {path}: cannot be read ({exc.strerror or exc})") from None
    try:
        data = _safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"tier file {path}: not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(f"tier file {path}: expected a mapping at the top level, got {type(data).__name__}")
    return data


def load_tier(name_or_path: str | Path) -> Tier:
    """Load a tier by built-in name (``smoke``, ``small``, ``medium``, ``full``) or from a YAML path.

    A built-in name always means the shipped tier, even if a file or folder of
    that name exists in the working directory; a path must end in ``.yaml`` or
    ``.yml`` (or contain a path separator).
    """
    s = str(name_or_path)
    if s in TIER_NAMES:
        text = resources.files("kinhec").joinpath("synth", "configs", f"{s}.yaml").read_text()
        data = _safe_load(text)
        source = f"builtin:{s}"
    else:
        p = Path(s)
        if p.suffix.lower() not in (".yaml", ".yml") and "/" not in s and "\\" not in s:
            raise UnknownNameError("tier", s, TIER_NAMES + ("<path/to/tier.yaml>",))
        if not p.is_file():
            raise InputError(f"tier file {p}: expected an existing YAML file, got no such file")
        data = _read_yaml(p)
        source = str(p)
    validate_tier_config(data, source)
    return Tier(name=str(data["tier"]), source=source, config=data)


def _err(source: str, key: str, expected: str, got: Any) -> InputError:
    return InputError(f"tier {source}: key '{key}': expected {expected}, got {got!r}")


def _check_list(source, key, value, allowed=None, kind=None, nonempty=True):
    if not isinstance(value, list) or (nonempty and not value):
        raise _err(source, key, "a non-empty list", value)
    for v in value:
        if allowed is not None and v not in allowed:
            raise _err(source, key, f"values among {list(allowed)}", v)
        if kind == "number" and not (isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0):
            raise _err(source, key, "non-negative numbers", v)
        if kind == "range" and not (
            isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v) and 0 <= v[0] <= v[1]
        ):
            raise _err(source, key, "[low, high] pairs with 0 <= low <= high", v)
    return value


def _check_int(source, key, value, minimum=1):
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise _err(source, key, f"an integer >= {minimum}", value)
    return value


def _check_num(source, key, value, minimum=0.0):
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < minimum:
        raise _err(source, key, f"a number >= {minimum}", value)
    return value


def _require(source, block, key, where):
    if key not in block:
        raise InputError(f"tier {source}: key '{where}.{key}' is missing")
    return block[key]


def validate_tier_config(cfg: dict, source: str = "<tier>") -> None:
    """Check a tier mapping; raise :class:`InputError` naming the key, the allowed values and what came.

    Keys, types and ranges first (:func:`kinhec.synth.tier_schema.check_tier_schema`: an unknown key is refused
    with the closest valid one), then the required keys and the names the tracks refer to.
    """
    check_tier_schema(cfg, source)
    for key in ("tier", "global_seed", "shard_size", "tracks", "robot_levels", "camera_levels"):
        if key not in cfg:
            raise InputError(f"tier {source}: key '{key}' is missing")
    _check_int(source, "global_seed", cfg["global_seed"], 0)
    _check_int(source, "shard_size", cfg["shard_size"], 1)
    _check_int(source, "repeats_multiplier", cfg.get("repeats_multiplier", 1), 1)
    _check_num(source, "robot_rate_cap_hz", cfg.get("robot_rate_cap_hz", 500.0), 1.0)
    rl, cl = cfg["robot_levels"], cfg["camera_levels"]
    if not isinstance(rl, dict) or not rl:
        raise _err(source, "robot_levels", "a mapping level -> [rot_std_rad, trans_std_m]", rl)
    for k, v in rl.items():
        if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) and x >= 0 for x in v)):
            raise _err(source, f"robot_levels.{k}", "[rot_std_rad, trans_std_m] (non-negative)", v)
    if not isinstance(cl, dict) or not cl:
        raise _err(source, "camera_levels", "a mapping level -> [rot_std_rad, [x, y, z] std m]", cl)
    for k, v in cl.items():
        ok = (
            isinstance(v, list)
            and len(v) == 2
            and isinstance(v[0], (int, float))
            and isinstance(v[1], list)
            and len(v[1]) == 3
            and all(isinstance(x, (int, float)) and x >= 0 for x in v[1])
        )
        if not ok:
            raise _err(source, f"camera_levels.{k}", "[rot_std_rad, [x, y, z] std m]", v)
        if v[1][0] != v[1][1]:
            raise _err(source, f"camera_levels.{k}", "equal lateral stds x == y (the index stores one lateral std)", v)
    defaults = cfg.get("defaults", {})
    if defaults.get("camera", "hd") not in _CAMERAS:
        raise _err(source, "defaults.camera", f"one of {list(_CAMERAS)}", defaults.get("camera"))
    for k in ("target_eye_in_hand", "target_eye_to_hand"):
        if k in defaults and defaults[k] not in _TARGETS:
            raise _err(source, f"defaults.{k}", f"one of {list(_TARGETS)}", defaults[k])
    tracks = cfg["tracks"]
    if not isinstance(tracks, dict) or not tracks:
        raise _err(source, "tracks", f"a mapping with some of {list(TRACKS)}", tracks)
    for t in tracks:
        if t not in TRACKS:
            raise _err(source, "tracks", f"track names among {list(TRACKS)}", t)
    rlevels, clevels = list(rl), list(cl)

    def noise_pair(where, block):
        v = _require(source, block, "noise", where)
        if not (isinstance(v, list) and len(v) == 2 and v[0] in rlevels and v[1] in clevels):
            raise _err(source, f"{where}.noise", f"[robot level in {rlevels}, camera level in {clevels}]", v)

    def common(where, block, robots=_ARMS, configs=True):
        _check_list(source, f"{where}.robots", _require(source, block, "robots", where), robots)
        if configs:
            _check_list(
                source, f"{where}.configurations", _require(source, block, "configurations", where), _CONFIGURATIONS
            )
        _check_int(source, f"{where}.repeats", _require(source, block, "repeats", where), 1)

    for t, block in tracks.items():
        if not isinstance(block, dict):
            raise _err(source, f"tracks.{t}", "a mapping of factor levels", block)
        w = f"tracks.{t}"
        if t == "noise":
            common(w, block)
            fams = _require(source, block, "families", w)
            if not isinstance(fams, list) or not fams:
                raise _err(source, f"{w}.families", "a non-empty list of family settings", fams)
            for f in fams:
                if not isinstance(f, dict) or f.get("family") not in ("joint_sinusoid", "joint_waypoints", "lookat"):
                    raise _err(source, f"{w}.families", "entries with family joint_sinusoid|joint_waypoints|lookat", f)
                if f.get("mode") not in ("continuous", "stations"):
                    raise _err(source, f"{w}.families.mode", "continuous or stations", f.get("mode"))
            _check_list(source, f"{w}.robot_levels", _require(source, block, "robot_levels", w), rlevels)
            _check_list(source, f"{w}.camera_levels", _require(source, block, "camera_levels", w), clevels)
        elif t == "motion":
            for sub in block:
                if sub not in ("cone", "joint_subsets", "n_poses"):
                    raise _err(source, f"{w}", "sub-designs among ['cone', 'joint_subsets', 'n_poses']", sub)
            if "cone" in block:
                b, ww = block["cone"], f"{w}.cone"
                _check_list(source, f"{ww}.cone_half_angle_deg", _require(source, b, "cone_half_angle_deg", ww), kind="number")
                _check_list(source, f"{ww}.rot_angle_deg", _require(source, b, "rot_angle_deg", ww), kind="range")
                _check_list(source, f"{ww}.n_waypoints", _require(source, b, "n_waypoints", ww), kind="number")
                _check_num(source, f"{ww}.trans_range_m", _require(source, b, "trans_range_m", ww))
                _check_int(source, f"{ww}.repeats", _require(source, b, "repeats", ww))
                noise_pair(ww, b)
            if "joint_subsets" in block:
                b, ww = block["joint_subsets"], f"{w}.joint_subsets"
                common(ww, b)
                _check_list(source, f"{ww}.subsets", _require(source, b, "subsets", ww), _SUBSETS)
                noise_pair(ww, b)
            if "n_poses" in block:
                b, ww = block["n_poses"], f"{w}.n_poses"
                common(ww, b)
                _check_list(source, f"{ww}.n_stations", _require(source, b, "n_stations", ww), kind="number")
                noise_pair(ww, b)
        elif t == "temporal":
            common(w, block)
            for k in ("time_offset_s", "camera_rate_hz", "jitter_std_s", "drop_fraction"):
                _check_list(source, f"{w}.{k}", _require(source, block, k, w), kind="number")
            noise_pair(w, block)
        elif t == "outliers":
            common(w, block)
            _check_list(source, f"{w}.fraction", _require(source, block, "fraction", w), kind="number")
            _check_list(source, f"{w}.model", _require(source, block, "model", w), _OUTLIER_MODELS)
            dofs = _require(source, block, "student_t_dof", w)
            if not isinstance(dofs, list) or not all(d is None or (isinstance(d, (int, float)) and d > 2) for d in dofs):
                raise _err(source, f"{w}.student_t_dof", "a list of null or numbers > 2", dofs)
            noise_pair(w, block)
        elif t == "monocular":
            common(w, block, robots=_ROBOTS, configs=False)
            _check_list(source, f"{w}.scale", _require(source, block, "scale", w), kind="number")
            _check_list(source, f"{w}.drift_std", _require(source, block, "drift_std", w), kind="number")
            _check_list(source, f"{w}.camera_model", _require(source, block, "camera_model", w), ("se3_gaussian", "vo_drift"))
            noise_pair(w, block)
        elif t == "robot_error":
            common(w, block)
            for k in ("joint_std_rad", "dh_len_std_mm", "dh_ang_std_deg"):
                _check_list(source, f"{w}.{k}", _require(source, block, k, w), kind="number")
            if block.get("camera_level") not in clevels:
                raise _err(source, f"{w}.camera_level", f"one of {clevels}", block.get("camera_level"))
        elif t == "pnp":
            common(w, block)
            _check_list(source, f"{w}.pixel_std", _require(source, block, "pixel_std", w), kind="number")
            _check_list(source, f"{w}.cameras", _require(source, block, "cameras", w), _CAMERAS)
            _check_list(source, f"{w}.targets_eih", _require(source, block, "targets_eih", w), _TARGETS)
            _check_list(source, f"{w}.targets_eth", _require(source, block, "targets_eth", w), _TARGETS)
            if block.get("robot_level") not in rlevels:
                raise _err(source, f"{w}.robot_level", f"one of {rlevels}", block.get("robot_level"))
        elif t == "mixed":
            _check_int(source, f"{w}.n_sequences", _require(source, block, "n_sequences", w), 1)


# --------------------------------------------------------------------------- #
# expansion into recipe dictionaries
# --------------------------------------------------------------------------- #
def _fmt(x) -> str:
    """A factor value in a level string as the published copy spells it: Python's ``str`` of the tier file's value.

    An integer stays an integer and a float keeps its point (``30`` -> '30', ``0.0`` -> '0.0', ``2.0`` -> '2.0').
    """
    return str(x)


def _tails(dof) -> str:
    """The camera-noise tails of an outliers level: 'gaussian', or 'student_t3' for 3 degrees of freedom."""
    if dof is None:
        return "gaussian"
    return f"student_t{int(dof) if float(dof).is_integer() else dof}"


class _Ctx:
    def __init__(self, tier: Tier) -> None:
        self.tier = tier
        c = tier.config
        self.rlevels = {k: tuple(map(float, v)) for k, v in c["robot_levels"].items()}
        self.clevels = {k: (float(v[0]), tuple(map(float, v[1]))) for k, v in c["camera_levels"].items()}
        d = c.get("defaults", {})
        self.camera = d.get("camera", "hd")
        self.target_eih = d.get("target_eye_in_hand", "checker_9x6_25mm")
        self.target_eth = d.get("target_eye_to_hand", "marker_3x3_30mm")
        self.rate_cap = float(c.get("robot_rate_cap_hz", 500.0))
        self.mult = tier.repeats_multiplier

    def target(self, configuration: str) -> str:
        return self.target_eih if configuration == "eye_in_hand" else self.target_eth

    def base(self, **kw) -> dict:
        """A recipe dict with the defaults every track shares."""
        r = dict(
            camera=self.camera,
            sampling_mode="continuous",
            sync="sync",
            world_frame="target",
            robot_rate_cap_hz=self.rate_cap,
            speed_fraction=SPEED_FRACTION,
            n_harmonics=2,
            subset="all",
            time_offset_s=0.0,
            time_jitter_std_s=0.0,
            camera_drop_fraction=0.0,
            robot_noise_models=("se3_gaussian",),
            robot_rot_std_rad=0.0,
            robot_trans_std_m=0.0,
            joint_std_rad=0.0,
            dh_len_std_m=0.0,
            dh_ang_std_rad=0.0,
            dh_joint_std_rad=0.0,
            camera_noise_model="se3_gaussian",
            camera_rot_std_rad=0.0,
            camera_trans_std_m=0.0,
            camera_trans_std_z_m=0.0,
            pixel_std=None,
            student_t_dof=None,
            outlier_fraction=0.0,
            outlier_model="none",
            scale=1.0,
            scale_drift_std=0.0,
        )
        r.update(kw)
        if "target" not in r:
            r["target"] = self.target(r["configuration"])
        return r

    def robot_noise(self, level: str) -> dict:
        rot, trans = self.rlevels[level]
        return dict(robot_noise_models=("se3_gaussian",), robot_rot_std_rad=rot, robot_trans_std_m=trans)

    def camera_noise(self, level: str) -> dict:
        rot, (x, y, z) = self.clevels[level]
        return dict(camera_noise_model="se3_gaussian", camera_rot_std_rad=rot, camera_trans_std_m=x, camera_trans_std_z_m=z)

    def noise_pair(self, pair) -> dict:
        return {**self.robot_noise(pair[0]), **self.camera_noise(pair[1])}


def _family_settings(f: dict) -> dict:
    out = dict(family=f["family"], sampling_mode=f["mode"])
    if "duration_s" in f:
        out["duration_s"] = float(f["duration_s"])
    if "camera_rate_hz" in f:
        out["camera_rate_hz"] = float(f["camera_rate_hz"])
    if "n_stations" in f:
        out["n_stations"] = int(f["n_stations"])
    return out


def _track_noise(ctx: _Ctx, b: dict) -> Iterator[dict]:
    for robot, conf, fam, rl, cl in itertools.product(
        b["robots"], b["configurations"], b["families"], b["robot_levels"], b["camera_levels"]
    ):
        for _ in range(b["repeats"] * ctx.mult):
            yield ctx.base(
                robot=robot, configuration=conf, level=f"robot={rl}|camera={cl}",
                **_family_settings(fam), **ctx.robot_noise(rl), **ctx.camera_noise(cl),
            )  # fmt: skip


def _track_motion(ctx: _Ctx, block: dict) -> Iterator[dict]:
    if "cone" in block:
        b = block["cone"]
        for half, rng_deg, n_wp in itertools.product(b["cone_half_angle_deg"], b["rot_angle_deg"], b["n_waypoints"]):
            for _ in range(b["repeats"] * ctx.mult):
                yield ctx.base(
                    robot="free6d", configuration="eye_in_hand", family="cartesian_cone",
                    level=f"cone={_fmt(half)}|rot={_fmt(rng_deg[0])}-{_fmt(rng_deg[1])}|n={int(n_wp)}",
                    cone_half_angle_deg=float(half), rot_angle_range_deg=(float(rng_deg[0]), float(rng_deg[1])),
                    n_waypoints=int(n_wp), trans_range_m=float(b["trans_range_m"]),
                    sampling_mode="stations", n_stations=int(n_wp),
                    **ctx.noise_pair(b["noise"]),
                )  # fmt: skip
    if "joint_subsets" in block:
        b = block["joint_subsets"]
        for robot, conf, subset in itertools.product(b["robots"], b["configurations"], b["subsets"]):
            for _ in range(b["repeats"] * ctx.mult):
                yield ctx.base(
                    robot=robot, configuration=conf, family="joint_sinusoid", level=f"subset={subset}",
                    subset=subset, duration_s=float(b["duration_s"]), camera_rate_hz=float(b["camera_rate_hz"]),
                    **ctx.noise_pair(b["noise"]),
                )  # fmt: skip
    if "n_poses" in block:
        b = block["n_poses"]
        for robot, conf, n in itertools.product(b["robots"], b["configurations"], b["n_stations"]):
            for _ in range(b["repeats"] * ctx.mult):
                yield ctx.base(
                    robot=robot, configuration=conf, family="lookat", sampling_mode="stations",
                    n_stations=int(n), level=f"n_stations={int(n)}", **ctx.noise_pair(b["noise"]),
                )  # fmt: skip


def _track_temporal(ctx: _Ctx, b: dict) -> Iterator[dict]:
    for robot, conf, off, rate, jit, drop in itertools.product(
        b["robots"], b["configurations"], b["time_offset_s"], b["camera_rate_hz"], b["jitter_std_s"], b["drop_fraction"]
    ):
        for _ in range(b["repeats"] * ctx.mult):
            yield ctx.base(
                robot=robot, configuration=conf, family="joint_sinusoid", sync="async",
                level=f"offset={_fmt(off)}|rate={_fmt(rate)}|jitter={_fmt(jit)}|drop={_fmt(drop)}",
                duration_s=float(b["duration_s"]), camera_rate_hz=float(rate), time_offset_s=float(off),
                time_jitter_std_s=float(jit), camera_drop_fraction=float(drop),
                speed_fraction=SPEED_FRACTION_TEMPORAL, n_harmonics=3,
                frequency_range_hz=FREQUENCY_RANGE_TEMPORAL_HZ, **ctx.noise_pair(b["noise"]),
            )  # fmt: skip


def _track_outliers(ctx: _Ctx, b: dict) -> Iterator[dict]:
    settings = [(0.0, "none")] + [(f, m) for f in b["fraction"] if f > 0 for m in b["model"]]
    for robot, conf, (frac, model), dof in itertools.product(
        b["robots"], b["configurations"], settings, b["student_t_dof"]
    ):
        # as published, the outlier-free level names the first outlier model of the list (its outlier_model is none)
        level_model = b["model"][0] if frac == 0 else model
        for _ in range(b["repeats"] * ctx.mult):
            yield ctx.base(
                robot=robot, configuration=conf, family="lookat", sampling_mode="stations",
                n_stations=int(b["n_stations"]), level=f"fraction={_fmt(frac)}|model={level_model}|tails={_tails(dof)}",
                outlier_fraction=float(frac), outlier_model=model,
                student_t_dof=None if dof is None else float(dof), **ctx.noise_pair(b["noise"]),
            )  # fmt: skip


def _track_monocular(ctx: _Ctx, b: dict) -> Iterator[dict]:
    vo_rot, vo_trans = (float(x) for x in b.get("vo_drift_std", [0.001, 0.002]))
    for robot, scale, drift, model in itertools.product(b["robots"], b["scale"], b["drift_std"], b["camera_model"]):
        for _ in range(b["repeats"] * ctx.mult):
            fam = "proposal_sine" if robot == "free6d" else "joint_sinusoid"
            r = ctx.base(
                robot=robot, configuration="eye_in_hand", family=fam, world_frame="vo_origin",
                level=f"scale={_fmt(scale)}|drift={_fmt(drift)}|camera={model}",
                duration_s=float(b["duration_s"]), camera_rate_hz=float(b["camera_rate_hz"]),
                scale=float(scale), scale_drift_std=float(drift), **ctx.noise_pair(b["noise"]),
            )  # fmt: skip
            if model == "vo_drift":
                r.update(camera_noise_model="vo_drift", camera_rot_std_rad=vo_rot, camera_trans_std_m=vo_trans,
                         camera_trans_std_z_m=vo_trans, vo_drift_rot_std_rad=vo_rot, vo_drift_trans_std_m=vo_trans)
            yield r


def _track_robot_error(ctx: _Ctx, b: dict) -> Iterator[dict]:
    settings = [("joint", float(j), None, None) for j in b["joint_std_rad"]] + [
        ("dh", None, float(ln), float(an)) for ln in b["dh_len_std_mm"] for an in b["dh_ang_std_deg"]
    ]
    theta = float(b.get("dh_joint_std_rad", 0.0))
    for robot, conf, (kind, j, ln, an) in itertools.product(b["robots"], b["configurations"], settings):
        for _ in range(b["repeats"] * ctx.mult):
            r = ctx.base(
                robot=robot, configuration=conf, family="lookat", sampling_mode="stations",
                n_stations=int(b["n_stations"]), **ctx.camera_noise(b["camera_level"]),
            )  # fmt: skip
            if kind == "joint":
                r.update(robot_noise_models=("joint_gaussian",), joint_std_rad=j, level=f"joint_std={_fmt(j)}")
            else:
                # as the published tiers write it: the tier's dh_joint_std_rad is encoder noise on these
                # sequences (dh_error+joint_gaussian), and the joint offsets err by the DH angle error
                r.update(
                    robot_noise_models=("dh_error", "joint_gaussian"), joint_std_rad=theta,
                    dh_len_std_m=ln / 1000.0, dh_ang_std_rad=math.radians(an), dh_joint_std_rad=math.radians(an),
                    level=f"dh_len_mm={_fmt(ln)}|dh_ang_deg={_fmt(an)}",
                )
            yield r


def _track_pnp(ctx: _Ctx, b: dict) -> Iterator[dict]:
    pairs = [("eye_in_hand", t) for t in b["targets_eih"]] + [("eye_to_hand", t) for t in b["targets_eth"]]
    pairs = [p for p in pairs if p[0] in b["configurations"]]
    for robot, px, cam, (conf, tgt) in itertools.product(b["robots"], b["pixel_std"], b["cameras"], pairs):
        for _ in range(b["repeats"] * ctx.mult):
            yield ctx.base(
                robot=robot, configuration=conf, family="lookat", sampling_mode="stations",
                n_stations=int(b["n_stations"]), camera=cam, target=tgt,
                level=f"pixel_std={_fmt(px)}|camera={cam}|target={tgt}",
                camera_noise_model="pnp", pixel_std=float(px), **ctx.robot_noise(b["robot_level"]),
            )  # fmt: skip


def _track_mixed(ctx: _Ctx, b: dict) -> Iterator[dict]:
    """Random configurations; each drawn from its own seed so that expansion order does not matter."""
    include_free = bool(b.get("include_free6d", True))
    robots = _ROBOTS if include_free else _ARMS
    import numpy as np  # here: planning and listing tiers do not need numpy

    for i in range(int(b["n_sequences"])):
        rng = np.random.default_rng(sequence_seed(ctx.tier.global_seed + 1, sequence_id("mixed", i)))
        yield _sample_mixed(ctx, rng, robots, i)


#: Mixed-track sampling probabilities, tuned so that the full tier's mixed track has the published composition
#: (camera models about 9 % pnp / 25 % vo_drift / 66 % se3_gaussian, 60 % eye-in-hand over the whole copy,
#: about 615 camera frames and 2,670 robot frames per sequence on average).
MIXED_P_PNP = 0.09
MIXED_P_VO_DRIFT = 0.246
MIXED_P_EYE_IN_HAND_OTHERWISE = 0.472
#: Share of the mixed track's visual-odometry sequences (``vo_drift``, the only ones with a ``vo_origin``) whose
#: translations carry an unknown scale; the others are metric VO.  The published generator's mixed recipes have
#: 49.3 % (of 14,752 VO recipes among its 60,000; docs/fidelity.md "Mixed-track parameters").
MIXED_P_UNKNOWN_SCALE = 0.5
#: Share of the mixed track's sequences with outliers, stratified like the camera model (every prefix of the track
#: holds it to within a sequence or two; independent draws put 59 of the small tier's 150 there).  The card states no
#: share; the published generator's 60,000 mixed recipes have 35.1 % (its small tier 43 of 150).  The medium tier
#: was last compared with the card at 0.33 (docs/fidelity.md, item 13).
MIXED_P_OUTLIERS = 0.35
#: Sampling of the mixed track as the published generator's 60,000 mixed recipes have it: joint waypoints and
#: look-at paths at stations on 59.5 %, 4-60 stations (uniform); continuous paths pass 6-16 waypoints and ask for a
#: duration uniform in ``MIXED_DURATIONS_S``, which a periodic family (``joint_sinusoid``, ``proposal_sine``) lasts;
#: a continuous waypoint path passes once through its waypoints and runs its own length (``single_pass``), as the
#: published generator's waypoint paths do.
MIXED_P_STATIONS = 0.595
MIXED_STATIONS = (4, 60)
MIXED_CONTINUOUS_WAYPOINTS = (6, 16)
MIXED_DURATIONS_S = (5.0, 30.0)
MIXED_CAMERA_RATES_HZ = (10.0, 15.0, 30.0, 60.0)
#: Robot weights of the mixed track: the published full copy's sequences per robot minus those of its
#: systematic tracks (so the full tier's robots match the card; nearly uniform, 4,205-4,393 of 60,000).
MIXED_ROBOT_WEIGHTS = {
    "ur3": 4320, "ur5": 4284, "ur10": 4205, "ur3e": 4341, "ur5e": 4330, "ur10e": 4319, "ur16e": 4281,
    "ur20": 4393, "panda": 4239, "iiwa7": 4280, "iiwa14": 4294, "irb120": 4206, "puma560": 4237, "free6d": 4271,
}  # fmt: skip
#: Family probabilities of the mixed track for arms and for free6d, likewise the card's family counts minus
#: the systematic tracks' (which since look-at stations carry the outliers and robot_error tracks hold no
#: joint_waypoints sequences).
MIXED_ARM_FAMILIES = {"joint_sinusoid": 0.4012, "joint_waypoints": 0.3524, "lookat": 0.2464}
MIXED_FREE_FAMILIES = {"cartesian_cone": 0.4046, "lookat": 0.4048, "proposal_sine": 0.1906}
#: Steps of the Kronecker sequences ``u_i = frac(1/2 + i * step)`` that stratify the mixed track's robot, family,
#: camera model and outlier flag: every prefix of the track holds each value in proportion to its weight (to within a
#: few sequences), where independent draws would scatter the 60,000 counts by about 1.5 %.  The steps are
#: fractional parts of square roots of distinct primes, so the three choices are jointly equidistributed.
_MIXED_STRATA_STEPS = (math.sqrt(2.0) - 1.0, math.sqrt(3.0) - 1.0, math.sqrt(5.0) - 2.0, math.sqrt(7.0) - 2.0)


def _stratum(i: int, k: int) -> float:
    """The ``i``-th value in [0, 1) of the ``k``-th stratifying sequence of the mixed track."""
    return (0.5 + i * _MIXED_STRATA_STEPS[k]) % 1.0


def _sample_mixed(ctx: _Ctx, rng, robots, i: int = 0) -> dict:
    import numpy as np  # here: planning and listing tiers do not need numpy

    def pick(seq, p=None, u=None):
        # one uniform draw per choice (faster than Generator.choice, and just as reproducible)
        u = rng.random() if u is None else u
        if p is None:
            return seq[min(int(u * len(seq)), len(seq) - 1)]
        # bisect on the running sums: the same index as np.searchsorted(np.cumsum(p), ..., side="right")
        return seq[min(bisect.bisect_right(list(itertools.accumulate(p)), u * sum(p)), len(seq) - 1)]

    robot = pick(robots, [MIXED_ROBOT_WEIGHTS[x] for x in robots], u=_stratum(i, 0))
    fams = MIXED_FREE_FAMILIES if robot == "free6d" else MIXED_ARM_FAMILIES
    family = pick(tuple(fams), tuple(fams.values()), u=_stratum(i, 1))
    # the camera model first: visual odometry (vo_drift) needs the camera on the flange
    u = _stratum(i, 2)
    cam_model = "pnp" if u < MIXED_P_PNP else ("vo_drift" if u < MIXED_P_PNP + MIXED_P_VO_DRIFT else "se3_gaussian")
    if cam_model == "vo_drift" or rng.random() < MIXED_P_EYE_IN_HAND_OTHERWISE:
        configuration = "eye_in_hand"
    else:
        configuration = "eye_to_hand"
    if family in ("joint_waypoints", "lookat"):
        mode = "stations" if rng.random() < MIXED_P_STATIONS else "continuous"
    elif family == "cartesian_cone":
        mode = "stations"
    else:
        mode = "continuous"
    r = ctx.base(robot=robot, configuration=configuration, family=family, sampling_mode=mode, level="mixed")
    if mode == "continuous":
        r.update(duration_s=float(rng.uniform(*MIXED_DURATIONS_S)), camera_rate_hz=float(pick(MIXED_CAMERA_RATES_HZ)),
                 single_pass=family in ("joint_waypoints", "lookat"))
        if rng.random() < 0.3:
            r.update(
                sync="async", time_offset_s=float(np.round(rng.uniform(0.0, 0.2), 4)),
                time_jitter_std_s=float(pick((0.0, 0.002, 0.005))), camera_drop_fraction=float(pick((0.0, 0.1))),
            )  # fmt: skip
        if family in ("joint_waypoints", "lookat"):
            r["n_stations"] = int(rng.integers(MIXED_CONTINUOUS_WAYPOINTS[0], MIXED_CONTINUOUS_WAYPOINTS[1] + 1))
    else:
        r["n_stations"] = int(rng.integers(MIXED_STATIONS[0], MIXED_STATIONS[1] + 1))
    if family == "cartesian_cone":
        lo = float(pick((1.0, 3.0, 8.0, 15.0, 30.0)))
        r.update(
            cone_half_angle_deg=float(pick((0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 45.0, 90.0))),
            rot_angle_range_deg=(lo, 2 * lo), n_waypoints=r["n_stations"], trans_range_m=0.15,
        )  # fmt: skip
    # robot measurement and camera measurement: each its own stream (global seed + sequence id), so that the
    # draws above stay as they were
    robot_rng = np.random.default_rng(sequence_seed(ctx.tier.global_seed + 3, sequence_id("mixed", i)))
    r.update(mixed_robot_noise(robot_rng, is_arm=robot != "free6d"))
    cam_rng = np.random.default_rng(sequence_seed(ctx.tier.global_seed + 2, sequence_id("mixed", i)))
    r.update(mixed_camera_noise(cam_rng, cam_model, configuration, outlier_u=_stratum(i, 3)))
    if cam_model == "pnp":
        r.update(camera=pick(_CAMERAS), target=pick(_TARGETS[:3]) if configuration == "eye_in_hand" else pick(_TARGETS[3:]))
    r["level"] = "random"  # as published: the mixed track has no factor grid
    return r


#: The mixed track's robot measurement, as the published generator's mixed recipes draw it (measured on its
#: 60,000 full-tier recipes, docs/fidelity.md "Mixed-track parameters"): flange twist noise (``se3_gaussian``) on
#: 70 % of the sequences, rotation and translation log-uniform between the powers of ten below and independent;
#: on arms, encoder noise (``joint_gaussian``) on 30 % and a perturbed DH geometry (``dh_error``) on 25 %, each
#: drawn independently, so that 17 % of the sequences have an exact robot (``none``).  The DH angle error applies
#: to ``alpha`` and to the joint offsets alike.
MIXED_P_ROBOT_SE3 = 0.7
MIXED_P_ROBOT_JOINT = 0.3
MIXED_P_ROBOT_DH = 0.25
MIXED_ROBOT_ROT_LOG10 = (-4.0, -2.3)
MIXED_ROBOT_TRANS_LOG10 = (-4.3, -2.5)
MIXED_JOINT_STD_LOG10 = (-4.5, -2.5)
MIXED_DH_LEN_LOG10 = (-4.5, -2.5)
MIXED_DH_ANG_DEG_LOG10 = (-2.3, -0.5)


def _log_uniform(rng, lo_hi) -> float:
    """One draw log-uniform between ``10 ** lo_hi[0]`` and ``10 ** lo_hi[1]``."""
    return float(10.0 ** rng.uniform(*lo_hi))


def mixed_robot_noise(rng, is_arm: bool = True) -> dict:
    """Robot-measurement settings of one mixed-track sequence, drawn continuously and independently.

    ``rng`` is the sequence's own generator (seeded by the global seed and the sequence id); ``is_arm`` is
    False for the free-floating ``free6d``, which has no joints to read or DH geometry to perturb.  Every
    draw is made whatever the outcome, in a fixed order, so each parameter is independent of the others;
    a model that is not active leaves its levels at 0.
    """

    se3, joint, dh = (rng.random() < p for p in (MIXED_P_ROBOT_SE3, MIXED_P_ROBOT_JOINT, MIXED_P_ROBOT_DH))
    rot, trans = _log_uniform(rng, MIXED_ROBOT_ROT_LOG10), _log_uniform(rng, MIXED_ROBOT_TRANS_LOG10)
    joint_std = _log_uniform(rng, MIXED_JOINT_STD_LOG10)
    dh_len = _log_uniform(rng, MIXED_DH_LEN_LOG10)
    dh_ang = math.radians(_log_uniform(rng, MIXED_DH_ANG_DEG_LOG10))
    models: list[str] = []
    out: dict = dict(robot_rot_std_rad=0.0, robot_trans_std_m=0.0)
    if se3:
        models.append("se3_gaussian")
        out.update(robot_rot_std_rad=rot, robot_trans_std_m=trans)
    if is_arm and joint:
        models.append("joint_gaussian")
        out["joint_std_rad"] = joint_std
    if is_arm and dh:
        models.append("dh_error")
        out.update(dh_len_std_m=dh_len, dh_ang_std_rad=dh_ang, dh_joint_std_rad=dh_ang)
    out["robot_noise_models"] = tuple(models)
    return out


#: Ranges of the mixed track's continuous camera-noise draws, each log-uniform between the two powers of ten
#: (measured on the published generator's mixed recipes, docs/fidelity.md "Mixed-track parameters"):
#: ``se3_gaussian`` rotation 0.32-32 mrad and lateral translation 0.1-10 mm, ``vo_drift`` per-step rotation and
#: translation 0.1-3.2 mrad / mm, PnP pixel noise 0.1-2.5 px, unknown monocular scale 0.1-10.
MIXED_SE3_ROT_LOG10 = (-3.5, -1.5)
MIXED_SE3_TRANS_LOG10 = (-4.0, -2.0)
MIXED_VO_ROT_LOG10 = (-4.0, -2.5)
MIXED_VO_TRANS_LOG10 = (-4.0, -2.5)
MIXED_PIXEL_LOG10 = (-1.0, 0.4)
MIXED_SCALE_LOG10 = (-1.0, 1.0)
#: Along the optical axis the ``se3_gaussian`` translation noise is the lateral one times 3 (the ratio of the
#: named camera levels c2-c5) on a third of the sequences and times a uniform factor in [1, 5] otherwise.
MIXED_Z_FACTOR_FIXED = 3.0
MIXED_P_Z_FACTOR_FIXED = 1.0 / 3.0
MIXED_Z_FACTOR_RANGE = (1.0, 5.0)
#: Heavy tails: a share of the sequences draws a Student-t degree of freedom; PnP's pixel noise stays Gaussian
#: (the card), so the draw is made on every sequence and applied where the camera model takes it.
MIXED_P_STUDENT_T = 0.2
MIXED_STUDENT_T_DOFS = (2.5, 3.0, 5.0)
#: Outlier fraction, uniform in this range, on a ``MIXED_P_OUTLIERS`` share of the sequences.
MIXED_OUTLIER_FRACTION_RANGE = (0.01, 0.3)
MIXED_SCALE_DRIFT_STDS = (0.0, 0.001, 0.003)


def mixed_camera_noise(rng, camera_model: str, configuration: str, outlier_u: float | None = None) -> dict:
    """Camera-measurement settings of one mixed-track sequence, drawn continuously and independently.

    ``rng`` is the sequence's own generator (seeded by the global seed and the sequence id);
    ``camera_model`` is ``"se3_gaussian"``, ``"vo_drift"`` or ``"pnp"`` (stratified by the caller);
    ``outlier_u`` in [0, 1), if given, decides whether the sequence has outliers (``outlier_u <
    MIXED_P_OUTLIERS``) in place of the generator's draw (the track stratifies the flag with it).
    Returns the recipe fields of the camera noise, the world frame (a visual-odometry origin exactly
    with ``vo_drift``, half of them with an unknown scale), the heavy tails and the outliers.  The
    draws, in this order, are made whatever the model, so each parameter is independent of the others.
    """
    if camera_model not in ("se3_gaussian", "vo_drift", "pnp"):
        raise UnknownNameError("camera_noise_model", camera_model, ("se3_gaussian", "vo_drift", "pnp"))

    se3_rot, se3_lat = _log_uniform(rng, MIXED_SE3_ROT_LOG10), _log_uniform(rng, MIXED_SE3_TRANS_LOG10)
    fixed_z = rng.random() < MIXED_P_Z_FACTOR_FIXED
    z_factor = float(rng.uniform(*MIXED_Z_FACTOR_RANGE))
    vo_rot, vo_trans = _log_uniform(rng, MIXED_VO_ROT_LOG10), _log_uniform(rng, MIXED_VO_TRANS_LOG10)
    pixel = _log_uniform(rng, MIXED_PIXEL_LOG10)
    scaled = rng.random() < MIXED_P_UNKNOWN_SCALE
    scale = _log_uniform(rng, MIXED_SCALE_LOG10)
    drift = float(MIXED_SCALE_DRIFT_STDS[int(rng.integers(len(MIXED_SCALE_DRIFT_STDS)))])
    heavy = rng.random() < MIXED_P_STUDENT_T
    dof = float(MIXED_STUDENT_T_DOFS[int(rng.integers(len(MIXED_STUDENT_T_DOFS)))])
    u = rng.random()
    outliers = (u if outlier_u is None else outlier_u) < MIXED_P_OUTLIERS
    fraction = float(rng.uniform(*MIXED_OUTLIER_FRACTION_RANGE))
    model_u = rng.random()

    out: dict = dict(camera_noise_model=camera_model)
    if camera_model == "se3_gaussian":
        z = MIXED_Z_FACTOR_FIXED if fixed_z else z_factor
        out.update(camera_rot_std_rad=se3_rot, camera_trans_std_m=se3_lat, camera_trans_std_z_m=z * se3_lat)
    elif camera_model == "vo_drift":
        if configuration != "eye_in_hand":
            raise InputError(f"configuration: expected 'eye_in_hand' with camera model 'vo_drift', got {configuration!r}")
        out.update(camera_rot_std_rad=vo_rot, camera_trans_std_m=vo_trans, camera_trans_std_z_m=vo_trans,
                   vo_drift_rot_std_rad=vo_rot, vo_drift_trans_std_m=vo_trans, world_frame="vo_origin")  # fmt: skip
        if scaled:
            out.update(scale=scale, scale_drift_std=drift)
    else:
        out.update(pixel_std=pixel)
    if heavy and camera_model != "pnp":
        out["student_t_dof"] = dof
    if outliers:
        # a visual-odometry origin has no plane, so no planar-ambiguity flip there
        models = ("random_pose", "gross") if camera_model == "vo_drift" else _OUTLIER_MODELS
        out.update(outlier_fraction=fraction, outlier_model=models[min(int(model_u * len(models)), len(models) - 1)])
    return out


_EXPANDERS = {
    "noise": _track_noise,
    "motion": _track_motion,
    "temporal": _track_temporal,
    "outliers": _track_outliers,
    "monocular": _track_monocular,
    "robot_error": _track_robot_error,
    "pnp": _track_pnp,
    "mixed": _track_mixed,
}


def count_track(tier: Tier, track: str) -> int:
    """Number of sequences of ``track`` in ``tier`` (0 if the tier does not define it), without expanding."""
    b = tier.config["tracks"].get(track)
    if b is None:
        return 0
    m = tier.repeats_multiplier
    if track == "noise":
        return len(b["robots"]) * len(b["configurations"]) * len(b["families"]) * len(b["robot_levels"]) * len(
            b["camera_levels"]
        ) * b["repeats"] * m
    if track == "motion":
        n = 0
        if "cone" in b:
            c = b["cone"]
            n += len(c["cone_half_angle_deg"]) * len(c["rot_angle_deg"]) * len(c["n_waypoints"]) * c["repeats"] * m
        if "joint_subsets" in b:
            c = b["joint_subsets"]
            n += len(c["robots"]) * len(c["configurations"]) * len(c["subsets"]) * c["repeats"] * m
        if "n_poses" in b:
            c = b["n_poses"]
            n += len(c["robots"]) * len(c["configurations"]) * len(c["n_stations"]) * c["repeats"] * m
        return n
    if track == "temporal":
        return math.prod(len(b[k]) for k in ("robots", "configurations", "time_offset_s", "camera_rate_hz",
                                              "jitter_std_s", "drop_fraction")) * b["repeats"] * m  # fmt: skip
    if track == "outliers":
        settings = 1 + len([f for f in b["fraction"] if f > 0]) * len(b["model"])
        return len(b["robots"]) * len(b["configurations"]) * settings * len(b["student_t_dof"]) * b["repeats"] * m
    if track == "monocular":
        return len(b["robots"]) * len(b["scale"]) * len(b["drift_std"]) * len(b["camera_model"]) * b["repeats"] * m
    if track == "robot_error":
        settings = len(b["joint_std_rad"]) + len(b["dh_len_std_mm"]) * len(b["dh_ang_std_deg"])
        return len(b["robots"]) * len(b["configurations"]) * settings * b["repeats"] * m
    if track == "pnp":
        pairs = (len(b["targets_eih"]) if "eye_in_hand" in b["configurations"] else 0) + (
            len(b["targets_eth"]) if "eye_to_hand" in b["configurations"] else 0
        )
        return len(b["robots"]) * len(b["pixel_std"]) * len(b["cameras"]) * pairs * b["repeats"] * m
    if track == "mixed":
        return int(b["n_sequences"])
    raise UnknownNameError("track", track, TRACKS)


def plan_counts(tier: Tier, tracks=None) -> dict[str, int]:
    """Sequences per track (in the canonical track order) for the selected tracks."""
    sel = _select_tracks(tier, tracks)
    return {t: count_track(tier, t) for t in sel}


def _select_tracks(tier: Tier, tracks) -> tuple[str, ...]:
    if tracks is None:
        return tier.tracks
    out = []
    for t in tracks:
        if t not in TRACKS:
            raise UnknownNameError("track", t, TRACKS)
        if t not in tier.config["tracks"]:
            raise InputError(f"track {t!r}: expected a track defined by tier {tier.name!r} ({', '.join(tier.tracks)}), got none")
        out.append(t)
    return tuple(t for t in TRACKS if t in out)


_ATOMIC = (str, int, float, bool, type(None))


def _copy_plain(value):
    """Deep copy of plain recipe data (dicts, lists, tuples, scalars); several times faster than ``copy.deepcopy``."""
    t = type(value)
    if t is dict:
        return {k: v if type(v) in _ATOMIC else _copy_plain(v) for k, v in value.items()}
    if t is list:
        return [v if type(v) in _ATOMIC else _copy_plain(v) for v in value]
    if t is tuple:
        return tuple(v if type(v) in _ATOMIC else _copy_plain(v) for v in value)
    if t in _ATOMIC:
        return value
    return copy.deepcopy(value)


def expand_track(tier: Tier, track: str, *, generator_version: str | None = None) -> list[dict]:
    """The recipe dictionaries of every sequence of ``track``, with ids and seeds, in id order."""
    if track not in _EXPANDERS:
        raise UnknownNameError("track", track, TRACKS)
    block = tier.config["tracks"].get(track)
    if block is None:
        return []
    ctx = _Ctx(tier)
    out = []
    for i, r in enumerate(_EXPANDERS[track](ctx, block)):
        sid = sequence_id(track, i)
        r = _copy_plain(r)
        r.update(sequence_id=sid, track=track, seed=sequence_seed(tier.global_seed, sid))
        if generator_version is not None:
            r["generator_version"] = generator_version
        out.append(r)
    return out


def expand_tier(tier: Tier, tracks=None, *, generator_version: str | None = None) -> dict[str, list[dict]]:
    """Recipe dictionaries per track for the selected tracks."""
    return {t: expand_track(tier, t, generator_version=generator_version) for t in _select_tracks(tier, tracks)}


def shards_of_track(recipes: list[dict], shard_size: int) -> list[list[dict]]:
    """Split a track's recipes into consecutive shards of ``shard_size`` sequences."""
    return [recipes[i : i + shard_size] for i in range(0, len(recipes), shard_size)]
