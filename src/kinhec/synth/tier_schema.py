"""The schema of a tier file: every key it may hold, with its type and range.

:func:`check_tier_schema` walks a loaded tier mapping against :data:`TIER_SCHEMA`
before :func:`kinhec.synth.tiers.validate_tier_config` checks the cross-references
(noise levels named by the tracks, robot and preset names).  It rejects, in
one line naming the file and the key path:

* an unknown key at any level, with the closest valid key of that level
  (``n_station`` -> ``n_stations``) and, when the key is valid elsewhere, where
  (``camera_rate_hz`` belongs in ``tracks.noise.families[]``);
* a value of the wrong type (``global_seed: "5"``, ``repeats: 2.5``,
  ``include_free6d: 1``);
* a value out of range (``shard_size: 0``, ``drop_fraction: [1.5]``).

Unknown keys are checked before missing ones, so a misspelt required key is
reported as the typo it is.  To add a key to the tier format, add it here.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from kinhec.util.errors import InputError

__all__ = ["TIER_SCHEMA", "check_tier_schema", "Field", "Block", "Levels"]


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "a mapping"}.get(type(v), type(v).__name__)  # fmt: skip


@dataclass(frozen=True)
class Field:
    """A leaf value.

    ``kind``: ``"int"``, ``"num"``, ``"str"``, ``"bool"``, ``"range"`` (a
    ``[low, high]`` pair), ``"vec2"`` / ``"vec3"`` (numbers); ``list=True``
    for a non-empty list of such values; ``lo`` / ``hi`` bound the numbers
    (``hi_open``: ``< hi``); ``nullable`` accepts ``null`` (list items too).
    """

    kind: str
    lo: float | None = None
    hi: float | None = None
    hi_open: bool = False
    list: bool = False
    nullable: bool = False

    def describe(self) -> str:
        base = {"int": "an integer", "num": "a number", "str": "a string", "bool": "true or false",
                "range": "a [low, high] pair", "vec2": "a pair of numbers", "vec3": "three numbers"}[self.kind]  # fmt: skip
        if self.lo is not None and self.hi is not None:
            base += f" in [{self.lo:g}, {self.hi:g}{')' if self.hi_open else ']'}"
        elif self.lo is not None:
            base += f" >= {self.lo:g}"
        if self.nullable:
            base += " or null"
        return f"a non-empty list of {base.replace('a ', '', 1).replace('an ', '', 1)}s" if self.list else base


@dataclass(frozen=True)
class Block:
    """A mapping with a fixed set of keys; ``each``: a list of such mappings."""

    keys: dict = field(default_factory=dict)
    each: bool = False


@dataclass(frozen=True)
class Levels:
    """A mapping of free names (noise levels) to values of one schema."""

    value: Any


_NUM0 = Field("num", lo=0.0)
_NUM0_LIST = Field("num", lo=0.0, list=True)
_POS = Field("num", lo=1e-9)
_STR_LIST = Field("str", list=True)
_REPEATS = Field("int", lo=1)
_STATIONS = Field("int", lo=2)
_PAIR = Field("str", list=True)  # [robot level, camera level]: names checked by the tier validator
_COMMON = {"robots": _STR_LIST, "configurations": _STR_LIST, "repeats": _REPEATS}

#: The keys of a tier file and of each of its blocks.
TIER_SCHEMA = Block({
    "tier": Field("str"),
    "description": Field("str"),
    "global_seed": Field("int", lo=0),
    "shard_size": Field("int", lo=1),
    "repeats_multiplier": Field("int", lo=1),
    "robot_rate_cap_hz": Field("num", lo=1.0),
    "robot_levels": Levels(Field("vec2", lo=0.0)),
    "camera_levels": Levels(None),  # [rot_std_rad, [x, y, z]]: checked by the tier validator
    "defaults": Block({"camera": Field("str"), "target_eye_in_hand": Field("str"), "target_eye_to_hand": Field("str")}),
    "tracks": Block({
        "noise": Block({
            **_COMMON,
            "families": Block({"family": Field("str"), "mode": Field("str"), "duration_s": _POS,
                               "camera_rate_hz": _POS, "n_stations": _STATIONS}, each=True),
            "robot_levels": _STR_LIST,
            "camera_levels": _STR_LIST,
        }),
        "motion": Block({
            "cone": Block({"cone_half_angle_deg": Field("num", lo=0.0, hi=180.0, list=True),
                           "rot_angle_deg": Field("range", lo=0.0, hi=180.0, list=True),
                           "n_waypoints": Field("int", lo=2, list=True), "trans_range_m": _NUM0,
                           "repeats": _REPEATS, "noise": _PAIR}),
            "joint_subsets": Block({**_COMMON, "subsets": _STR_LIST, "duration_s": _POS, "camera_rate_hz": _POS,
                                    "noise": _PAIR}),
            "n_poses": Block({**_COMMON, "n_stations": Field("int", lo=2, list=True), "noise": _PAIR}),
        }),
        "temporal": Block({
            **_COMMON, "time_offset_s": _NUM0_LIST, "camera_rate_hz": Field("num", lo=1e-9, list=True),
            "jitter_std_s": _NUM0_LIST, "drop_fraction": Field("num", lo=0.0, hi=1.0, hi_open=True, list=True),
            "duration_s": _POS, "noise": _PAIR,
        }),
        "outliers": Block({
            **_COMMON, "fraction": Field("num", lo=0.0, hi=1.0, hi_open=True, list=True), "model": _STR_LIST,
            "student_t_dof": Field("num", lo=2.0, list=True, nullable=True), "n_stations": _STATIONS, "noise": _PAIR,
        }),
        "monocular": Block({
            **_COMMON, "scale": Field("num", lo=1e-9, list=True), "drift_std": _NUM0_LIST, "camera_model": _STR_LIST,
            "duration_s": _POS, "camera_rate_hz": _POS, "noise": _PAIR, "vo_drift_std": Field("vec2", lo=0.0),
        }),
        "robot_error": Block({
            **_COMMON, "joint_std_rad": _NUM0_LIST, "dh_len_std_mm": _NUM0_LIST, "dh_ang_std_deg": _NUM0_LIST,
            "dh_joint_std_rad": _NUM0, "n_stations": _STATIONS, "camera_level": Field("str"),
        }),
        "pnp": Block({
            **_COMMON, "pixel_std": _NUM0_LIST, "cameras": _STR_LIST, "targets_eih": _STR_LIST,
            "targets_eth": _STR_LIST, "n_stations": _STATIONS, "robot_level": Field("str"),
        }),
        "mixed": Block({"n_sequences": Field("int", lo=1), "include_free6d": Field("bool")}),
    }),
})  # fmt: skip


def _where_valid(key: str, node=TIER_SCHEMA, path: str = "") -> list[str]:
    """Key paths of the blocks where ``key`` is valid."""
    out = []
    if isinstance(node, Block):
        if key in node.keys:
            out.append(path or "the top level")
        for k, sub in node.keys.items():
            p = f"{path}.{k}" if path else k
            if isinstance(sub, Block) and sub.each:
                p += "[]"
            out += _where_valid(key, sub, p)
    return out


def _fail(source: str, path: str, msg: str) -> InputError:
    return InputError(f"tier {source}: key '{path}': {msg}")


def _unknown(source: str, path: str, key, valid: list[str], parent: str) -> InputError:
    if not isinstance(key, str):
        return _fail(source, path, f"expected a key among {', '.join(valid)}, got {key!r}")
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}'? " if close else ""
    elsewhere = [p for p in _where_valid(key) if p != parent]
    if elsewhere:
        hint += f"('{key}' is a key of {', '.join(elsewhere)}) "
    return _fail(source, path, f"unknown key; {hint}expected one of: {', '.join(valid)}")


def _number_ok(x, f: Field, integer: bool) -> bool:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    if integer and not isinstance(x, int):
        return False
    if x != x:  # NaN
        return False
    if f.lo is not None and x < f.lo:
        return False
    if f.hi is not None and (x >= f.hi if f.hi_open else x > f.hi):
        return False
    return True


def _item_ok(x, f: Field) -> bool:
    if x is None:
        return f.nullable
    if f.kind in ("int", "num"):
        return _number_ok(x, f, f.kind == "int")
    if f.kind == "str":
        return isinstance(x, str) and bool(x)
    if f.kind == "bool":
        return isinstance(x, bool)
    if f.kind == "range":
        return isinstance(x, list) and len(x) == 2 and all(_number_ok(v, f, False) for v in x) and x[0] <= x[1]
    n = {"vec2": 2, "vec3": 3}[f.kind]
    return isinstance(x, list) and len(x) == n and all(_number_ok(v, f, False) for v in x)


def _check_field(source: str, path: str, value, f: Field) -> None:
    if f.list:
        if not isinstance(value, list) or not value:
            raise _fail(source, path, f"expected {f.describe()}, got {_kind(value)} {value!r}")
        for i, x in enumerate(value):
            if not _item_ok(x, f):
                raise _fail(source, f"{path}[{i}]", f"expected {f.describe()[len('a non-empty list of '):].rstrip('s')} "
                                                   f"(in {f.describe()}), got {_kind(x)} {x!r}")  # fmt: skip
    elif not _item_ok(value, f):
        raise _fail(source, path, f"expected {f.describe()}, got {_kind(value)} {value!r}")


def _walk(source: str, path: str, value, node) -> None:
    if node is None:
        return
    if isinstance(node, Field):
        _check_field(source, path, value, node)
        return
    if isinstance(node, Levels):
        if not isinstance(value, dict) or not value:
            raise _fail(source, path, f"expected a non-empty mapping of level names, got {_kind(value)} {value!r}")
        for k, v in value.items():
            _walk(source, f"{path}.{k}", v, node.value)
        return
    if node.each:
        if not isinstance(value, list) or not value:
            raise _fail(source, path, f"expected a non-empty list of mappings, got {_kind(value)} {value!r}")
        for i, item in enumerate(value):
            _walk(source, f"{path}[{i}]", item, Block(node.keys))
        return
    if not isinstance(value, dict):
        raise _fail(source, path or "(top level)", f"expected a mapping, got {_kind(value)} {value!r}")
    valid = list(node.keys)
    parent = path.split("[")[0] + ("[]" if "[" in path else "") if path else "the top level"
    for k in value:
        if k not in node.keys:
            raise _unknown(source, f"{path}.{k}" if path else str(k), k, valid, parent)
    for k, v in value.items():
        _walk(source, f"{path}.{k}" if path else k, v, node.keys[k])


def check_tier_schema(cfg: dict, source: str = "<tier>") -> None:
    """Check the keys, types and ranges of a tier mapping against :data:`TIER_SCHEMA`.

    Parameters
    ----------
    cfg : dict
        The loaded YAML.
    source : str
        File path (or ``builtin:<name>``) named in the message.

    Raises
    ------
    InputError
        ``tier <source>: key '<path>': ...`` for the first unknown key (with
        the closest valid one), wrong type or out-of-range value.
    """
    _walk(source, "", cfg, TIER_SCHEMA)
