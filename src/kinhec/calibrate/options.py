"""The options of :func:`kinhec.calibrate.calibrate`, parsed and checked once into :class:`Options`.

Every check and its message is that of the options as documented in :mod:`kinhec.calibrate.calibration`;
they run in one order (the robot accuracy, the scale, then per kind of input: point files, images, corners, pose
files), so that a run given several bad options names the same one first.  The checks of images, corners and
point files end there: their own modules read the rest (:mod:`~kinhec.calibrate.images`,
:mod:`~kinhec.calibrate.corners`, :mod:`~kinhec.calibrate.points`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from kinhec.calibrate import eye_bias as eb
from kinhec.calibrate import reduced_dof
from kinhec.calibrate import robot_error
from kinhec.calibrate.frames import SETUPS
from kinhec.calibrate.option_values import intrinsics_std as parse_intrinsics_std
from kinhec.calibrate.option_values import nonnegative_pair, point_noise_pair, quat_pair, units_pair
from kinhec.util.errors import InputError, UnknownNameError

__all__ = ["Options", "parse_options", "nonnegative_pair", "MAX_OFFSET_S", "KINDS"]

#: Largest clock offset searched by ``offset="auto"`` [s].
MAX_OFFSET_S = 0.5
#: The kinds of input: a folder of images, a corner file, a depth camera's point file, pose files (or a bag, or a
#: dataset sequence).
KINDS = ("images", "corners", "points", "poses")


@dataclass(frozen=True)
class Options:
    """:func:`~kinhec.calibrate.calibrate`'s options, checked (the parameters as documented there).

    ``kind`` is one of :data:`KINDS`; ``robot_level`` the parsed ``robot_accuracy`` (None: not counted);
    ``scale`` True when estimated freely, ``fixed_scale`` True when held at 1, ``metric_scale`` True when stated
    metric (estimated under the scale's prior and never freed).  For pose files also:
    ``setup`` (defaulted to ``eye_in_hand``) and ``setup_given`` (as given), ``offset`` (``"auto"``,
    ``"none"``, None or seconds), the per-file ``units_hand``/``units_eye`` and ``quat_hand``/``quat_eye``,
    ``intrinsics_std`` as ``(focal_rel, principal_point_over_f)`` and the eye-bias prior it gives
    (:mod:`kinhec.calibrate.eye_bias`; None when it counts no error); ``known`` the stated components of a motion
    about one axis as ``{parameter index: metres}`` (:mod:`kinhec.calibrate.reduced_dof`), ``partial`` whether
    the components such a motion leaves open are set by convention; for a point file ``target`` (its spec, when
    given) and ``point_noise`` ``(a, b)`` (None: estimated).  The others are as given.
    """

    kind: str
    robot_level: tuple[float, float] | None
    scale: bool
    fixed_scale: bool
    setup: str | None
    setup_given: str | None
    fmt: str | None = None
    hand_pose: str | None = None
    eye_pose: str | None = None
    units: str | None = None
    offset: Any = "auto"
    solver: str | None = None
    force: bool = False
    max_offset_s: float = MAX_OFFSET_S
    quat_order: str | None = None
    units_hand: str | None = None
    units_eye: str | None = None
    quat_hand: str | None = None
    quat_eye: str | None = None
    intrinsics_std: tuple[float, float] | None = None
    eye_bias_prior: np.ndarray | None = None
    stamp_unit: str | None = None
    rig_world: str = "auto"
    intrinsics: Any = None
    pairing: str = "auto"
    save_corners: Any = None
    progress: Callable | None = None
    workers: int | None = None
    fast_detection: bool = False
    lens: str | None = None
    known: dict = field(default_factory=dict)  # parameter index of (X, Y) -> stated value [m] (reduced_dof)
    partial: bool = False
    target: Any = None
    point_noise: tuple[float, float] | None = None
    metric_scale: bool = False  # stated metric (--scale metric): within the prior, never freed

    def firewall_options(self) -> dict:
        """The options the convention firewall checks the files against (:func:`kinhec.calibrate.firewall.check`)."""
        return dict(hand_pose=self.hand_pose, eye_pose=self.eye_pose, scale=self.scale, offset=self.offset,
                    max_offset_s=self.max_offset_s, force=self.force,
                    units=(self.units_hand, self.units_eye) if self.units is not None else None,
                    quat=(self.quat_hand, self.quat_eye) if self.quat_order is not None else None)


def _given(pairs) -> list[str]:
    return [n for n, v in pairs if v not in (None, (), [])]


def _check_images(images, eye, dataset, corners, bag) -> None:
    given = _given((("eye", eye), ("dataset", dataset), ("corners", corners), ("bag", bag)))
    if images is None or given:
        raise InputError(f"images: expected --images DIR with --hand FILE and --target SPEC, got "
                         f"{'no images' if images is None else ', '.join(given)}")


def _check_corners(kw: dict, hand, eye, dataset, stated_scale) -> None:
    given = _given((("hand", hand), ("eye", eye), ("dataset", dataset)))
    if given:
        raise InputError(f"corners: the observation file holds both sides; expected no {', '.join(given)} with it")
    moot = [f"{n} {v!r}" if v is not True else n for n, v in (
        ("scale", stated_scale), ("solver", kw["solver"]), ("units", kw["units"]),
        ("offset", None if kw["offset"] == "auto" else kw["offset"]), ("format", kw["fmt"]),
        ("hand_pose", kw["hand_pose"]), ("eye_pose", kw["eye_pose"]), ("quat_order", kw["quat_order"]),
        ("sequence", kw["sequence"]), ("stamp_unit", kw["stamp_unit"])) if v is not None]
    if moot:
        raise InputError(f"corners: these options do not apply to a corner file (its views are paired by order, "
                         f"in metres, with no clock offset or scale, solved by he_ml on the pixels), got "
                         f"{', '.join(moot)}")
    if kw["setup"] == "rig":
        raise InputError("setup: a corner file is one camera (eye_in_hand or eye_to_hand), got rig")


def _check_points(kw: dict, hand, eye, dataset, corners, bag, stated_scale) -> None:
    given = _given((("hand", hand), ("eye", eye), ("dataset", dataset), ("corners", corners), ("bag", bag)))
    if given:
        raise InputError(f"points: the point file holds both sides; expected no {', '.join(given)} with it")
    moot = [f"{n} {v!r}" if v is not True else n for n, v in (
        ("scale", stated_scale), ("solver", kw["solver"]), ("units", kw["units"]),
        ("offset", None if kw["offset"] == "auto" else kw["offset"]), ("format", kw["fmt"]),
        ("hand_pose", kw["hand_pose"]), ("eye_pose", kw["eye_pose"]), ("quat_order", kw["quat_order"]),
        ("sequence", kw["sequence"]), ("stamp_unit", kw["stamp_unit"]), ("intrinsics", kw["intrinsics"]),
        ("intrinsics_std", kw["intrinsics_std"])) if v is not None]
    if moot:
        raise InputError(f"points: these options do not apply to a point file (its views are paired by order, in "
                         f"metres, measured in 3D: no clock offset, scale or intrinsics), got {', '.join(moot)}")
    if kw["setup"] == "rig":
        raise InputError("setup: a point file is one camera (eye_in_hand or eye_to_hand), got rig")


def _offset(offset):
    if isinstance(offset, str) and offset not in ("auto", "none"):
        try:
            return float(offset)
        except ValueError:
            raise InputError(f"offset: expected auto, none or a number of seconds, got {offset!r}") from None
    return offset


def parse_options(hand=None, eye=(), *, dataset=None, corners=None, bag=None, images=None, target=None,
                  sequence=None, scale=False, robot_accuracy=None, known=None, partial=False, points=None,
                  point_noise=None, **kw) -> Options:
    """:func:`~kinhec.calibrate.calibrate`'s keyword arguments (and which inputs were given) as :class:`Options`.

    Raises :class:`~kinhec.util.errors.InputError` (an :class:`~kinhec.util.errors.UnknownNameError` for a bad name) for
    the first bad option, with the messages documented by the tests.
    """
    level = robot_error.parse(robot_accuracy)
    fixed_scale = metric_scale = False
    if isinstance(scale, str):
        if scale not in ("free", "fixed", "metric"):
            raise InputError(f"scale: expected free, fixed or metric (or a flag), got {scale!r}")
        scale, fixed_scale, metric_scale = scale == "free", scale == "fixed", scale == "metric"
    scale = bool(scale)
    stated_scale = "fixed" if fixed_scale else "metric" if metric_scale else (scale or None)  # as the user gave it
    if level is not None and kw["setup"] == "rig":
        raise InputError("robot_accuracy: counted for one camera (eye_in_hand, eye_to_hand), not for a rig, got "
                         f"--setup rig with robot_accuracy {robot_accuracy!r}")
    known = reduced_dof.parse_known(known)
    if (known or partial) and (points is not None or kw["setup"] == "rig"):
        what = "a rig" if kw["setup"] == "rig" else "a point file"
        raise InputError(f"{'known' if known else 'partial'}: for one camera (eye_in_hand or eye_to_hand) from "
                         f"pose files, a corner file or images, got {what}")
    if known and partial:
        raise InputError("partial: the open components are either stated (known) or set by convention (partial), "
                         "got both")
    common = dict(robot_level=level, scale=scale, fixed_scale=fixed_scale, metric_scale=metric_scale,
                  setup_given=kw["setup"], known=known,
                  partial=bool(partial))
    if kw.get("lens") is not None and images is None:
        raise InputError(f"lens: the lens model estimated from images (--images), got lens {kw['lens']!r} without "
                         "them (a corner file states its lens in its distortion_model)")
    if point_noise is not None and points is None:
        raise InputError(f"point_noise: only used with a point file (--points), got point_noise {point_noise!r} "
                         "without one")
    if points is not None:
        _check_points(dict(kw, sequence=sequence), hand, eye, dataset, corners, bag, stated_scale)
        if images is not None:
            raise InputError("points: a point file holds the camera's measurements; expected no images with it")
        return Options(kind="points", target=target, point_noise=point_noise_pair(point_noise), **common, **kw)
    if images is not None or target is not None:
        _check_images(images, eye, dataset, corners, bag)
        return Options(kind="images", **common, **kw)
    if corners is not None:
        _check_corners(dict(kw, sequence=sequence), hand, eye, dataset, stated_scale)
        return Options(kind="corners", intrinsics_std=parse_intrinsics_std(kw.pop("intrinsics_std")), **common, **kw)
    if kw["intrinsics"] is not None:
        raise InputError("intrinsics: only used with corners (--corners), got intrinsics without them")
    setup = "eye_in_hand" if kw["setup"] is None else kw["setup"]
    if setup not in SETUPS:
        raise UnknownNameError("setup", setup, SETUPS)
    offset = _offset(kw["offset"])
    units_hand, units_eye = units_pair(kw["units"])
    quat_hand, quat_eye = quat_pair(kw["quat_order"])
    k_std = parse_intrinsics_std(kw["intrinsics_std"])
    eye_bias_prior = eb.prior_std() if k_std is None else eb.prior_std(k_std[1], k_std[0])
    if not np.any(eye_bias_prior > 0):
        eye_bias_prior = None
    kw.update(setup=setup, offset=offset, intrinsics_std=k_std)
    return Options(kind="poses", units_hand=units_hand, units_eye=units_eye, quat_hand=quat_hand, quat_eye=quat_eye,
                   eye_bias_prior=eye_bias_prior, **common, **kw)
