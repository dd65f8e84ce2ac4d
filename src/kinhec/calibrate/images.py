"""Calibration from a folder of images and a hand pose file: ``kinhec calibrate --images DIR --hand FILE --target SPEC``.

Steps:

1. **Images and poses.** The images of the folder (sorted naturally) are
   paired with the hand poses by order, by the stamps in their names or by
   a CSV map (:mod:`kinhec.vision.pairing`), before any detection: an image
   whose detection fails is dropped with its own pose and never shifts the
   pairs after it.
2. **Detection.** The target (:mod:`kinhec.vision.targets`) is found in every
   paired image with sub-pixel corners and per-view checks
   (:mod:`kinhec.vision.detect`); a rejected view is dropped with the reason.
   Where the detector offers two sub-pixel positions per corner (a
   chessboard: OpenCV's sector-based detector's and ``cornerSubPix``'s), the
   folder is calibrated with each and the set whose views agree best with
   the hand's poses is kept (on a tie within the levels' sampling error, the
   set whose corners fit the board's plane best): the robot is the same for both, so the robot
   error level that the calibration estimates differs only by what the
   corners add per view (a corner error common to a view, e.g. the sector
   detector's shift under uneven light, is taken up as that view's robot
   error, which a plane fit of the view cannot see).
3. **Calibration.** The accepted views form an observation set (written by
   ``save_corners``, so that a detection can be frozen, e.g. into the
   regression suite), which :func:`kinhec.calibrate.corners.calibrate_corners`
   calibrates: intrinsics (estimated or given), ``X``, ``Y``, their standard
   deviations with the robot's pose errors marginalised, outliers, verdict.

The result's ``inputs["images"]`` lists the images used and those dropped,
each with its reason; its residuals are indexed by the image's position in
the folder.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

import numpy as np

from kinhec.util.blas import single_threaded_blas
from kinhec.calibrate import corners as co
from kinhec.calibrate.frames import HAND_POSES, hand_metric
from kinhec.calibrate.option_values import units_pair
from kinhec.calibrate.readers import read_stream
from kinhec.calibrate.result import CalibrationResult
from kinhec.util.errors import InputError, UnknownNameError
from kinhec.models.intrinsics import calibrate_camera, model_of, pack_views
from kinhec.vision import pairing as image_pairing
from kinhec.vision import symmetry, targets

__all__ = ["LENSES", "calibrate_images", "lens_model", "write_corners"]

#: The lens models ``calibrate_images`` estimates (``lens``), by the name of the camera model of
#: :mod:`kinhec.models.intrinsics` each stands for.
LENSES = {"pinhole": "radtan", "fisheye": "equidistant", "rational": "rational"}

#: More dropped images than this fraction of the paired ones gives a warning.
DROPPED_WARN_FRACTION = 0.2


class _Clock:
    """Wall and CPU time since the last lap: CPU is user + system of the process (all its threads, OpenCV's
    included) and of its finished child processes."""

    def __init__(self):
        self._last = self._now()

    @staticmethod
    def _now() -> tuple[float, float]:
        t = os.times()
        return time.perf_counter(), t.user + t.system + t.children_user + t.children_system

    def lap(self) -> tuple[float, float]:
        now = self._now()
        out = (now[0] - self._last[0], now[1] - self._last[1])
        self._last = now
        return out


def write_corners(path, obs, image_names) -> Path:
    """Write an observation set as JSON with each view's image name in ``meta.image``; returns the path."""
    from kinhec.synth.observations import observations_to_json, write_document  # lazy: it loads pandas

    doc = observations_to_json(obs)
    for v, name in zip(doc["input"]["views"], image_names):
        v["meta"]["image"] = str(name)
    return write_document(path, doc)


def calibrate_images(images, hand, target, *, setup: str | None = None, fmt: str | None = None,
                     hand_pose: str | None = None, units: str | None = None, pairing: str = "auto", intrinsics=None,
                     save_corners=None, progress: Callable | None = None,
                     workers: int | None = None, fast_detection: bool = False,
                     lens: str | None = None, known=None, partial: bool = False) -> CalibrationResult:  # fmt: skip
    """``X`` and ``Y`` from a folder of images of a target and the hand poses (see the module docstring).

    Parameters
    ----------
    images : str or Path
        Folder of the images (one camera).
    hand : str or Path
        Hand pose file (any format of :mod:`kinhec.calibrate.readers`).
    target : str, Path or Target
        ``chessboard:COLSxROWS:SQUARE_M``, ``charuco:SXxSY:SQUARE_M:MARKER_M:DICT``,
        ``aprilgrid:COLSxROWS:TAG_M:SPACING`` or a Kalibr target YAML.
    setup : {"eye_in_hand", "eye_to_hand"}, optional
        Default ``eye_in_hand``.
    fmt, hand_pose, units : optional
        The hand file's format, direction and units (as for pose files).
    pairing : {"auto", "order", "stamp"} or a CSV path
        How images and hand poses are paired (:mod:`kinhec.vision.pairing`).
    intrinsics : str or array_like, optional
        Known ``fx, fy, cx, cy[, k1, k2, p1, p2[, k3[, k4, k5, k6]]]`` [px] or an intrinsics file (a fisheye's
        too); estimated from the views when omitted.
    save_corners : str or Path, optional
        Write the accepted views as an observation file (the input of ``--corners``), stating the lens model
        when it is not the pinhole.
    lens : {"pinhole", "fisheye", "rational"}, optional
        The lens model estimated from the views (:data:`LENSES`): the pinhole with OpenCV's five coefficients,
        the fisheye (equidistant, four coefficients) or OpenCV's rational model (eight).  Default: that of
        ``intrinsics`` when given, else the pinhole; given with ``intrinsics`` of another model, refused.
    progress : callable, optional
        ``progress(done, total, detection)`` after each image.
    workers : int, optional
        Images detected at once (default: the cores available); the corners do not depend on it
        (:func:`kinhec.vision.detect.detect_images`).
    fast_detection : bool
        Find a chessboard at half size first, then at full resolution in its window only (about 3x less CPU;
        corners within about 0.02 px of the whole image's search, not the same bit for bit).
    known, partial : optional
        For a hand that turns about one axis only (SCARA, palletiser, XY-theta gantry): the components it leaves
        open stated, or set by convention (:func:`kinhec.calibrate.corners.calibrate_corners`).

    Raises
    ------
    InputError
        No target, a bad spec, an unreadable image or hand file, counts that
        cannot be paired, fewer than 3 accepted views (the message lists why
        the others were dropped).
    """
    # lazy: kinhec.vision.detect loads pandas (through kinhec.synth.observations)
    from kinhec.vision.detect import available_cores, detect_images

    if hand is None:
        raise InputError("hand: expected the hand pose file (--hand) that goes with the images, got none")
    if target is None:
        raise InputError("target: expected the target's spec with the images (--target chessboard:9x6:0.025, ...), "
                         "got none")
    setup = "eye_in_hand" if setup is None else setup
    if setup not in ("eye_in_hand", "eye_to_hand"):
        raise UnknownNameError("setup for images (one camera)", setup, ("eye_in_hand", "eye_to_hand"))
    t = targets.parse_target(target)
    model = lens_model(lens, intrinsics)  # before the detection: a contradiction is named at once
    folder = Path(images)
    files = image_pairing.list_images(folder)
    hand_s = read_stream(hand, fmt if fmt not in ("rig", "kinhec") else None)
    units_hand, _ = units_pair(units)
    A = hand_metric(hand_s, hand_pose, units_hand)
    pr = image_pairing.pair_images(files, hand_s, A, pairing)
    paired = pr.paired
    n_workers = max(1, min(available_cores() if workers is None else int(workers), len(paired)))
    clock = _Clock()
    with single_threaded_blas():  # small products: more BLAS threads only spin (2.5x the CPU on 2 cores)
        dets = detect_images([files[i] for i in paired], t, progress=progress, workers=workers,
                             fast=fast_detection)
    det_cost = clock.lap()
    ok = np.array([d.ok for d in dets], dtype=bool)
    used = paired[ok]
    dropped = dict(pr.missing)
    dropped.update({int(i): d.reason for i, d in zip(paired, dets) if not d.ok})
    dropped = dict(sorted(dropped.items()))
    where = f"{folder} and {hand_s.path}"
    if used.size < 3:
        why = "; ".join(list(dropped.values())[:3])
        raise InputError(f"{where}: expected at least 3 images with the target detected, got {used.size} of "
                         f"{len(files)}{': ' + why if why else ''}")
    accepted = [dets[k] for k in np.flatnonzero(ok)]
    names = [files[i].name for i in used]
    if model is None and intrinsics is not None:  # intrinsics whose file needs the images' size to be read
        model = lens_model(lens, intrinsics, accepted[0].image_size)
    model = "radtan" if model is None else model
    runs = _calibrate_each_method(accepted, pr.T_base_ee[used], t, setup, model, intrinsics, names, folder,
                                  dict(known=known, partial=partial))
    method = _agrees_best(runs, used.size)
    cal_cost = clock.lap()
    obs, turned_note, turned, res = runs[method]
    if save_corners is not None:
        write_corners(save_corners, obs, names)
    if len(runs) > 1:
        res.notes.insert(0, _choice_note(runs, method))
    res.where = f"{where} ({used.size} views)"
    res.inputs.update(_images_inputs(res, folder, t, pr, files, used, dropped, turned,
                                     (n_workers, det_cost, cal_cost), save_corners, hand_s, hand_pose,
                                     units_hand))
    res.residuals["t_s"] = used.astype(float)  # the image's position in the folder
    res.notes = [n for n in res.notes if not n.startswith("views paired by order")]  # said below, with the images
    res.notes[:0] = pr.notes + [f"{used.size} of {len(files)} images used ({t.spec}); "
                                f"{len(dropped)} dropped" + (f": {', '.join(files[i].name for i in dropped)}" if dropped else "")]
    res.notes.append(f"detection: {len(paired)} images in {det_cost[0]:.1f} s wall, {det_cost[1]:.1f} s CPU "
                     f"({n_workers} worker{'s' if n_workers > 1 else ''}); calibration: {cal_cost[0]:.1f} s wall, "
                     f"{cal_cost[1]:.1f} s CPU{f' ({len(runs)} sets of corners)' if len(runs) > 1 else ''}; CPU is "
                     "user + system time, every thread counted")
    if len(dropped) > DROPPED_WARN_FRACTION * len(files):
        res.warnings.append(f"{len(dropped)} of {len(files)} images dropped (see inputs.images.dropped)")
    if turned_note is not None:
        res.notes.insert(len(pr.notes) + 1, turned_note)
    return res


def _calibrate_each_method(accepted, T_base_ee, t, setup, model, intrinsics, names, folder, one_axis=None) -> dict:
    """Per sub-pixel method that every accepted view has: ``(observations, half-turn note, turned views, result)``,
    the views' corners calibrated as a camera of ``model``."""
    from kinhec.vision.detect import observations_from_detections

    runs = {}
    with single_threaded_blas():
        for method in _methods(accepted):
            obs = observations_from_detections([d.with_method(method) for d in accepted], T_base_ee, t, mode=setup)
            if model != "radtan":  # the detections make a pinhole's observation set: the lens stated instead
                obs = replace(obs, distortion_model=model)
            turned_note, turned = None, []
            if getattr(t, "symmetric", False):
                obs, turned_note, turned = _settle_half_turns(obs, t, setup, intrinsics, names)
            res = co.calibrate_corners(obs, intrinsics=intrinsics, setup=setup, where=f"{folder}", **(one_axis or {}))
            runs[method] = (obs, turned_note, turned, res)
    return runs


def lens_model(lens: str | None, intrinsics=None, image_size=None) -> str | None:
    """The camera model (``"radtan"``, ``"equidistant"``, ``"rational"``) of ``lens`` (:data:`LENSES`; None: that of
    ``intrinsics``, else the pinhole's), checked against the model of ``intrinsics`` when given.

    Returns None when ``intrinsics`` is a file that needs ``image_size`` (a ``kinhec calibrate`` JSON) and none is
    given: call again with the images' size.

    Raises
    ------
    InputError
        An unknown lens (an :class:`~kinhec.util.errors.UnknownNameError`), or intrinsics of another model than
        the lens (one line naming both).
    """
    if lens is not None and lens not in LENSES:
        raise UnknownNameError("lens", lens, tuple(LENSES))
    if intrinsics is None:
        return LENSES["pinhole" if lens is None else lens]
    try:
        k = co.parse_intrinsics(intrinsics, image_size)
    except InputError:
        if image_size is None:
            return None  # read again with the images' size, which reports what is wrong
        raise
    given = model_of(k)
    if lens is not None and LENSES[lens] != given:
        name = {v: n for n, v in LENSES.items()}[given]
        source = f"--intrinsics {intrinsics}" if isinstance(intrinsics, (str, Path)) else "the given intrinsics"
        raise InputError(f"lens: --lens {lens} estimates a {lens} camera, got {name} intrinsics ({k.size} numbers) "
                         f"from {source}; expected --lens {name} or no --lens with them")  # fmt: skip
    return given


def _choice_note(runs: dict, method: str) -> str:
    """The note of which set of corners was kept (``runs``: per sub-pixel method, its calibration) and why."""
    levels = ", ".join(f"{m}: {1e3 * runs[m][3].observability['robot_std_rad_m'][0]:.3g} mrad / "
                       f"{1e3 * runs[m][3].observability['robot_std_rad_m'][1]:.3g} mm" for m in sorted(runs))
    if method != next(iter(runs)):
        why = "whose views agree best with the hand's poses"
    elif min(runs, key=lambda m: _robot_level(runs[m][3])) != method:
        why = "whose corners fit the board's plane best (the hand's poses cannot tell the sets apart)"
    else:
        why = "whose corners fit the board's plane best and whose views agree best with the hand's poses"
    return f"corners by {method}, {why}; the robot error level each set of corners leaves: {levels}"


def _images_inputs(res, folder, t, pr, files, used, dropped, turned, cost, save_corners, hand_s, hand_pose,
                   units_hand) -> dict:
    """The result's ``inputs`` of a calibration from images: the hand file, the images used and dropped, the cost."""
    n_workers, det_cost, cal_cost = cost
    return {
        "corners": None if save_corners is None else str(save_corners),
        "format": "images",
        "hand": hand_s.path,
        "hand_format": hand_s.fmt,
        "hand_pose": hand_pose or hand_s.direction or HAND_POSES[0],
        "units": units_hand or hand_s.units or "m",
        "images": {
            "folder": str(folder),
            "target": t.spec,
            "pairing": pr.mode,
            "lens": {v: n for n, v in LENSES.items()}[res.inputs.get("distortion_model", "radtan")],
            "n_images": len(files),
            "used": [{"image": files[i].name, "pose": pr.source[i]} for i in used],
            "dropped": [{"image": files[i].name, "reason": r} for i, r in dropped.items()],
            "outliers": [files[used[k]].name for k in res.outliers],
            "renumbered": turned,
            "cost": {"workers": n_workers, "detection_wall_s": round(det_cost[0], 3),
                     "detection_cpu_s": round(det_cost[1], 3), "calibration_wall_s": round(cal_cost[0], 3),
                     "calibration_cpu_s": round(cal_cost[1], 3)},
        },
    }  # fmt: skip


def _methods(detections) -> list[str]:
    """The sub-pixel methods every detection has, the one it uses first."""
    common = set.intersection(*({d.method} | {a[0] for a in d.alternatives} for d in detections))
    return [detections[0].method] + sorted(common - {detections[0].method})


def _agrees_best(runs: dict, n_views: int) -> str:
    """The corner method whose views agree best with the hand; a tie keeps the plane-fit choice (the first).

    Each robot error level is estimated from the ``3 N`` components of the ``N`` view twists, rotation and
    translation each, so the log of each has a sampling standard deviation of about ``1 / sqrt(6 N)`` and
    :func:`_robot_level` one of about ``1 / sqrt(3 N)``: another method replaces the first only when its level is
    smaller by more than that (on a tie the hand cannot tell the corner sets apart, and the set that fits the board's
    plane better is kept).
    """
    first = next(iter(runs))
    best = min(runs, key=lambda m: _robot_level(runs[m][3]))
    margin = 1.0 / np.sqrt(3.0 * n_views)
    return best if _robot_level(runs[best][3]) < _robot_level(runs[first][3]) - margin else first


def _robot_level(result: CalibrationResult) -> float:
    """``log(rot std) + log(trans std)`` of the robot errors a calibration from corners estimated.

    The robot is the same whichever corners are used, so its estimated error level differs only by what the
    corners add per view (a shift or tilt of a whole view is taken up by that view's robot-error nuisance):
    the smaller, the better the views agree with the hand.
    """
    rot, trans = result.observability["robot_std_rad_m"]
    return float(np.log(max(rot, 1e-12)) + np.log(max(trans, 1e-12)))


def _settle_half_turns(obs, board, setup: str, intrinsics, names) -> tuple:
    """Renumber the views of a half-turn-symmetric chessboard to agree with the hand's motion (:mod:`kinhec.vision.symmetry`)."""
    k = None if intrinsics is None else co.parse_intrinsics(intrinsics, obs.image_size)
    try:
        cam = calibrate_camera(pack_views(obs.points_3d, obs.points_2d), obs.image_size, intrinsics=k,
                               model=obs.distortion_model)
    except Exception as exc:  # noqa: BLE001 - the camera calibration proper reports it with its context
        return obs, (f"the {board.spec} board looks the same turned by half a turn; its views could not be checked "
                     f"against the hand's motion ({exc}): corner 0 is the one nearest each image's top-left"), []
    turn, mismatch = symmetry.resolve_half_turns(cam.T_cam_target, obs.T_base_ee, board, setup)
    p2 = [uv[::-1].copy() if f else uv for uv, f in zip(obs.points_2d, turn)]
    which = ", ".join(n for n, f in zip(names, turn) if f) or "none"
    note = (f"the {board.spec} board looks the same turned by half a turn: {int(turn.sum())} view(s) renumbered from "
            f"the other end to agree with the hand's motion ({which}; relative-motion angles then agree to "
            f"{mismatch:.2g} deg, median)")
    return replace(obs, points_2d=p2), note, [n for n, f in zip(names, turn) if f]


def images_summary(result: CalibrationResult) -> list[str]:
    """Lines for the command line: the images used and dropped (with the reasons), the outliers by name."""
    im = result.inputs["images"]
    lines = [f"images: {len(im['used'])} of {im['n_images']} used ({im['target']}, paired by {im['pairing']})"]
    lines += [f"  dropped {d['reason']}" for d in im["dropped"]]
    if im.get("outliers"):
        lines.append(f"  outliers: {', '.join(im['outliers'])}")
    return lines
