"""``calibrate()``: from a user's pose files to ``X`` (and ``Y``), the clock offset, scale and their uncertainty.

Steps: read the streams (:mod:`~kinhec.calibrate.readers`), convert them to
metres and to the solver form (``A = T_base_ee``; ``B = T_target_cam``
eye-in-hand and for every camera of a rig, ``B = T_cam_marker`` eye-to-hand)
in the reading the convention firewall settles on (directions, units,
quaternion order, which file is which, row alignment:
:mod:`~kinhec.calibrate.firewall`), pair them (by order or by time with
the coarse clock offset of :func:`kinhec.solvers.estimate_time_offset`,
:mod:`~kinhec.calibrate.pairing`), initialise from the registry's solvers and
refine with outlier rejection (:mod:`~kinhec.calibrate.solve`), then judge
the observability (:mod:`~kinhec.calibrate.observability`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kinhec import se3
from kinhec.calibrate import eye_bias as eb
from kinhec.calibrate import firewall as fw
from kinhec.calibrate import free_scale
from kinhec.calibrate import held_out as ho
from kinhec.calibrate import pairing as pr
from kinhec.calibrate import robot_error
from kinhec.calibrate import same_clock
from kinhec.calibrate import scale as sc
from kinhec.calibrate import solve as sv
from kinhec.calibrate import stamp_units
from kinhec.calibrate.observability import observability
from kinhec.calibrate.options import nonnegative_pair
from kinhec.calibrate.outliers import judge as judge_outliers
from kinhec.calibrate.readers import QUAT_ORDERS, PoseStream, read_stream, read_streams, to_metres
from kinhec.calibrate.result import CalibrationResult, RigResult
from kinhec.errors import DegenerateMotionError, InputError, UnknownNameError

__all__ = ["calibrate", "SETUPS", "HAND_POSES", "EYE_POSES", "UNITS"]

SETUPS = ("eye_in_hand", "eye_to_hand", "rig")
HAND_POSES = ("base_T_ee", "ee_T_base")
EYE_POSES = ("cam_T_target", "target_T_cam")
UNITS = ("m", "mm")
#: Largest clock offset searched by ``offset="auto"`` [s].
MAX_OFFSET_S = 0.5
#: Below this angular-speed correlation the coarse offset comes from a scan of the pose fit.
MIN_PEAK_CORR = pr.MIN_PEAK_CORR
#: Eye translations this many times the hand's (or fewer) without ``scale``: a monocular stream.
SCALE_RANGE = (0.7, 1.4)


def _names(setup: str):
    if setup == "eye_to_hand":
        return "T_ee_marker", "T_base_cam"
    return "T_ee_cam", "T_base_target"


def _option_pair(value, valid, name: str, example: str) -> tuple[str | None, str | None]:
    """An option given once or per file (``"mm"`` or ``"mm,m"``) as ``(hand, eye)``, each checked against ``valid``."""
    if value is None:
        return None, None
    parts = [u.strip() for u in str(value).split(",")]
    for u in parts:
        if u not in valid:
            raise UnknownNameError(name, u, valid)
    if len(parts) in (1, 2):
        return parts[0], parts[-1]
    raise InputError(f"{name}: expected one of {', '.join(valid)} or HAND,EYE (e.g. {example}), got {value!r}")


def _units_pair(units) -> tuple[str | None, str | None]:
    return _option_pair(units, UNITS, "unit", "mm,m")


def _hand_metric(s: PoseStream, hand_pose, units) -> np.ndarray:
    direction = hand_pose or s.direction or "base_T_ee"
    if direction not in HAND_POSES:
        raise UnknownNameError("hand pose direction", direction, HAND_POSES)
    T = to_metres(s.T, units or s.units or "m")
    return se3.invert_transform(T, check=False) if direction == "ee_T_base" else T


def _eye_solver_form(s: PoseStream, eye_pose, units, setup: str) -> np.ndarray:
    direction = eye_pose or s.direction or "cam_T_target"
    if eye_pose is None and s.direction in HAND_POSES:
        raise InputError(f"{s.span()}: holds robot poses ({s.fmt} format), not camera poses; give it as --hand")
    if direction not in EYE_POSES:
        raise UnknownNameError("eye pose direction", direction, EYE_POSES)
    T = to_metres(s.T, units or s.units or "m")
    cam_T_target = se3.invert_transform(T, check=False) if direction == "target_T_cam" else T
    return cam_T_target if setup == "eye_to_hand" else se3.invert_transform(cam_T_target, check=False)


def _check_scale(eye: PoseStream, decision, scale: bool) -> str | None:
    """The warning for eye translations that are not metric (a monocular stream) when no scale is asked for."""
    r, r_std = decision.scale, decision.scale_std
    if scale or not np.isfinite(r) or r <= 0:
        return None
    lo, hi = SCALE_RANGE
    if not (lo < r < hi) and (not np.isfinite(r_std) or abs(np.log(r)) > 3 * r_std / r):
        return (f"{eye.path}: the eye translations are {r:.3g} times the metric ones: a monocular "
                "(up-to-scale) stream needs --scale")
    return None


def _offset_curve(pairing, sol: sv.Solution, period: float, inverse_domain: bool) -> dict:
    offs = sol.offset + period * np.linspace(-10, 10, 21)
    Sinv = np.linalg.inv(sol.noise_cov)
    cost = [sv.capped_cost(pairing, o, sol.X, sol.Y, sol.scale, Sinv, inverse_domain) for o in offs]
    return {"offset_s": offs.tolist(), "cost": cost}


def _one(hand: PoseStream, A, eye: PoseStream, eye_pose, units_eye, setup, *, offset, scale, solver, force,
         max_offset_s, decision=None, eye_bias_prior=None, fixed_scale: bool = False) -> CalibrationResult:
    warn, notes = [], list(hand.notes) + list(eye.notes)
    if decision is not None:
        notes += decision.notes
        warn += decision.warnings
    B = _eye_solver_form(eye, eye_pose, units_eye, setup)
    sv.check_enough_pairs(min(len(hand), len(eye)), f"{hand.span()} and {eye.span()}")
    stamped = hand.t is not None and eye.t is not None
    peak = None
    off0 = None
    offset_edge = False
    estimate_offset = False
    curve_period = None
    if stamped:
        eye_dir = eye_pose or eye.direction or "cam_T_target"
        co = decision.coarse if decision is not None and decision.coarse is not None else None
        if co is None:
            co = pr.coarse_offset(hand, A, eye, B, offset, max_offset_s,
                                  inverse_domain=(setup != "eye_to_hand") == (eye_dir == "cam_T_target"))
        off0, peak, estimate_offset = co.offset_s, co.peak, co.estimated
        warn += co.warnings
        notes += co.notes
        if estimate_offset and co.at_edge:  # an offset at the edge of its search is never determined
            offset_edge = stamp_units.check_offset_edge(hand, eye, off0, max_offset_s, coarse=True, force=force,
                                                        warnings=warn)
        pr.check_overlap(hand, eye, max(abs(off0), 1e-9) + 1e-9 if offset != "auto" else max_offset_s)
        ph = float(np.median(np.diff(hand.t)))
        pe = float(np.median(np.diff(eye.t)))
        curve_period = min(ph, pe)
        margin = max(ph, pe) if estimate_offset else 0.0
        pairing = pr.TimePairing(hand, A, eye, B, off0, margin)
        notes += pairing.notes
    else:
        if offset not in (None, "none", "auto"):
            raise InputError(f"{hand.path} / {eye.path}: a clock offset needs time stamps in both files")
        pairing = pr.pair_by_order(hand, A, eye, B, decision.alignment if decision is not None else None)
        pairing = pr.drop_repeated_pairs(pairing, f"{hand.span()} and {eye.span()}")
        notes += pairing.notes
    eye_dir = eye_pose or eye.direction or "cam_T_target"
    file_domain = (setup != "eye_to_hand") == (eye_dir == "cam_T_target")  # residuals in the file's own domain
    n = len(pairing)
    sv.check_enough_pairs(n, f"{hand.span()} and {eye.span()}")
    Ap, Bp = pairing.at(off0)
    not_metric = _check_scale(eye, decision, scale) if decision is not None else None
    try:
        cands = sv.initial_candidates(Ap, Bp, solver=solver, estimate_scale=scale, inverse_domain=file_domain)
    except DegenerateMotionError as exc:
        raise InputError(f"{hand.span()} and {eye.span()}: X is not determined by this motion: {exc}") from None
    name, X0, Y0, s0 = cands[0]
    eih = sv.choose_domain(Ap, Bp, X0, Y0, s0)
    notes.append(f"residuals compared as {'T_cam_target' if eih != (setup == 'eye_to_hand') else 'T_target_cam'} "
                 "(the noise model that fits best)")
    notes.append(f"initial estimate from {name} (of {len(cands)} candidates: the one most pairs agree with)")
    # the scale of the eye translations is always estimated: freely when asked for (--scale), under the prior of
    # a metric stream otherwise (kinhec.calibrate.scale)
    # (held at 1 with scale="fixed")
    fit = dict(offset0=off0, scale0=s0 if scale else 1.0, estimate_offset=estimate_offset,
               estimate_scale=not fixed_scale, scale_prior_std=None if scale or fixed_scale else sc.PRIOR_STD,
               init_solver=name, inverse_domain=eih, eye_bias_prior=None if scale else eye_bias_prior,
               eye_in_hand=setup != "eye_to_hand")  # fmt: skip
    sol = sv.refine(pairing, X0, Y0, **fit)
    if estimate_offset:  # a repeated path can lock the coarse offset on a wrong peak: try the same clock too
        alt = same_clock.refit_from_zero_offset(hand, A, eye, B, pairing, sol, fit, margin_s=margin,
                                                period_s=curve_period, solver=solver, scale=scale,
                                                candidate_domain=file_domain)
        if alt is not None:
            pairing, sol, X0, Y0, fit, note = alt
            notes.append(note)
    if not scale and not fixed_scale:
        sol, fit, restart = free_scale.restart(pairing, X0, Y0, fit, sol, decision)
        if restart is not None:
            notes.append(restart)
            X0, Y0 = sol.X, sol.Y
    if estimate_offset and not offset_edge and stamp_units.offset_at_edge(sol.offset, max_offset_s, curve_period):
        offset_edge = stamp_units.check_offset_edge(hand, eye, sol.offset, max_offset_s, coarse=False, force=force,
                                                    warnings=warn)
    freed = not scale and not fixed_scale and fit.get("scale_prior_std") is None
    why = judge_outliers(sol.inliers, pairing.at(sol.offset)[0])
    if why is not None:  # not outliers the fit supports: every pair kept
        n_out0 = int((~sol.inliers).sum())
        warn.append(f"the chi-square gate labelled {n_out0} of {n} pairs ({100 * n_out0 / n:.0f} %) outliers, more "
                    f"than the fit supports: {why}; all pairs kept (their residuals are not independent Gaussian "
                    "noise, and X carries that error)")
        sol = sv.refine(pairing, X0, Y0, reject=False, **fit)
    std = np.sqrt(np.maximum(np.diag(sol.cov), 0.0))
    X_std, Y_std = std[0:6], std[6:12]
    k = 12
    off_std = None
    if estimate_offset:
        off_std = float(std[k])
        k += 1
    scale_std = 0.0 if fixed_scale else float(sol.scale * std[k])
    if fixed_scale:
        sol.scale = 1.0
    A_and_B = pairing.at(sol.offset)
    A_final = A_and_B[0]
    tau = None if sol.inflation_detail is None else float(sol.inflation_detail.residual_tau.max())
    obs, obs_warn = observability(A_final[sol.inliers], sol.cov[:12, :12], X_std, tau, drift_refused=bool(scale),
                                  noise_dof=sol.fit_dof)  # fmt: skip
    obs["n_inliers"] = int(sol.inliers.sum())
    if offset_edge:  # kept under --force: the offset, and X paired at it, are not determined
        obs["determined"], obs["offset_at_edge"] = False, True
    obs.update(sv.noise_report(sol))
    if fixed_scale:
        scale_rep, scale_warn, scale_notes = sc.describe_fixed()
    else:
        scale_rep, scale_warn, scale_notes = sc.describe(sol.scale, scale_std, sol.scale_data_std,
                                                         prior_std=None if scale else sc.PRIOR_STD,
                                                         where=str(eye.path))
    obs["scale"] = scale_rep
    if not_metric is not None and freed:  # one message: not metric, the scale estimated, X given for it
        scale_warn = [f"{eye.path}: the eye translations are {sol.scale:.4g} times the robot's (+- {scale_std:.2g}): "
                      "not metric -- a monocular (up-to-scale) stream (say so with --scale) or translations in other "
                      "units; the scale was estimated freely and X and Y are given for it"]
    elif not_metric is not None:
        warn.append(not_metric)
    if sol.eye_bias_cov is not None:
        obs["eye_bias"] = eb.describe(eye_bias_prior, sol.eye_bias_cov[:6, :6])
        notes.append(eb.note(eye_bias_prior))
    warn[:0] = obs_warn if not offset_edge else []  # the verdict quotes the first warning: observability first
    if offset_edge:  # one message for the edge: the coarse estimate's warning is part of it
        warn[:] = [w for w in warn if not w.startswith("the clock offset lies at the edge")] + obs_warn
    warn += scale_warn
    notes += scale_notes
    n_out = int((~sol.inliers).sum())
    if n_out > 0.2 * n:
        warn.append(f"{n_out} of {n} pairs ({100 * n_out / n:.0f} %) are outliers")
    if sol.inflation > 1.0:
        notes.append(sv.inflation_note(sol))
    r = sol.residuals
    residuals = {
        "t_s": np.asarray(pairing.t, dtype=float),
        "rot_deg": np.degrees(np.linalg.norm(r[:, :3], axis=1)),
        "trans_mm": 1000 * np.linalg.norm(r[:, 3:], axis=1),
        "outlier": ~sol.inliers,
    }
    curve = _offset_curve(pairing, sol, curve_period, eih) if estimate_offset else None
    held = ho.assess_solution(sol, A_final, np.asarray(pairing.t, dtype=float) if stamped else None)
    if ho.warning(held) is not None:  # held-out eye poses far worse than sigma predicts
        warn.append(ho.warning(held))
    X_name, Y_name = _names(setup)
    return CalibrationResult(
        setup=setup, inputs={}, X=sol.X, Y=sol.Y, X_name=X_name, Y_name=Y_name, X_std=X_std, Y_std=Y_std,
        time_offset_s=sol.offset if stamped else None, time_offset_std_s=off_std,
        time_offset_peak_corr=peak, scale=sol.scale, scale_std=scale_std, n_pairs=n,
        outliers=np.flatnonzero(~sol.inliers).tolist(), observability=obs, warnings=warn, notes=notes,
        residuals=residuals, offset_curve=curve, init_solver=name, cov=sol.cov, pairs=A_and_B,
        where=f"{hand.span()} and {eye.span()}", held_out=held,
        point_cam_m=ho.default_point(A_and_B[1], setup, sol.scale),
    )  # fmt: skip


def _intrinsics_std(value) -> tuple[float, float] | None:
    """``intrinsics_std`` as ``(focal_rel, principal_point_over_f)``, checked; None when not given."""
    return nonnegative_pair(value, "intrinsics_std", "focal length fraction, principal point over focal length, "
                                                     "e.g. 0.003,0.001")


def _compose_std(X1, C1, X2, C2):
    """``inv(X1) X2`` and the standard deviations of its (rotation, translation) parametrisation."""
    Z = se3.invert_transform(X1, check=False) @ X2

    def f(p):
        a = sv._retract(X1, p[:6])
        b = sv._retract(X2, p[6:])
        E = se3.invert_transform(Z, check=False) @ se3.invert_transform(a, check=False) @ b
        return np.concatenate([se3.so3_log(E[:3, :3], check=False), (se3.invert_transform(a, check=False) @ b)[:3, 3] - Z[:3, 3]])

    J = np.zeros((6, 12))
    for k in range(12):
        e = np.zeros(12)
        e[k] = 1e-7
        J[:, k] = (f(e) - f(-e)) / 2e-7
    C = np.zeros((12, 12))
    C[:6, :6], C[6:, 6:] = C1, C2
    return Z, np.sqrt(np.maximum(np.diag(J @ C @ J.T), 0.0))


def _quat_pair(order) -> tuple[str | None, str | None]:
    return _option_pair(order, QUAT_ORDERS, "quaternion order", "wxyz,xyzw")


def _solve_reading(dec, *, setup, offset, scale, solver, force, max_offset_s, eye_bias_prior=None,
                   fixed_scale: bool = False) -> CalibrationResult:
    """Solve in the reading the firewall settled on (its streams, directions, units, alignment, coarse offset)."""
    r = dec.reading
    u_hand, u_eye = (r.units[1], r.units[0]) if r.swap else r.units
    A = _hand_metric(dec.hand, r.hand_pose, u_hand)
    return _one(dec.hand, A, dec.eye, r.eye_pose, u_eye, setup, offset=offset, scale=scale, solver=solver, force=force,
                max_offset_s=max_offset_s, decision=dec, eye_bias_prior=eye_bias_prior, fixed_scale=fixed_scale)


def _reading_inputs(dec) -> dict:
    r = dec.reading
    u = (r.units[1], r.units[0]) if r.swap else r.units
    out = {"hand_pose": r.hand_pose, "eye_pose": r.eye_pose, "units": u[0] if u[0] == u[1] else f"{u[0]},{u[1]}",
           "conventions": dec.report}
    if any(q is not None for q in r.quat):
        out["quat_order"] = ",".join(q or "-" for q in r.quat)
    return out


def calibrate(hand=None, eye=(), *, setup: str | None = None, fmt: str | None = None, hand_pose: str | None = None,
              eye_pose: str | None = None, units: str | None = None, offset="auto", scale: bool | str = False,
              solver: str | None = None, force: bool = False, dataset=None, sequence: str | None = None,
              max_offset_s: float = MAX_OFFSET_S, corners=None, intrinsics=None, bag=None, images=None, target=None,
              pairing: str = "auto", save_corners=None, progress=None, rig_world: str = "auto",
              quat_order: str | None = None, intrinsics_std=None, robot_accuracy=None,
              stamp_unit: str | None = None, workers: int | None = None,
              fast_detection: bool = False) -> CalibrationResult:
    """Calibrate ``X`` (and ``Y``) from a hand pose file and one or more eye pose files, or from corners or images.

    Parameters
    ----------
    hand : str or Path
        Hand stream: robot flange in the base (``T_base_ee``) or a motion-capture
        body in the mocap world.
    eye : str, Path or sequence of them
        Eye stream(s): the target in the camera (``T_cam_target``, board + PnP)
        or the camera in a world (``T_target_cam``: mocap-converted, VO, SLAM).
        A rig folder (``gt_poses/camNN_poses.txt``) gives every camera;
        ``FOLDER:camNN`` one of them.
    setup : {"eye_in_hand", "eye_to_hand", "rig"}, optional
        ``rig``: two or more eye streams on one rigid body, each solved as
        eye-in-hand, then all cameras jointly when they share one world
        (``rig_world``), plus every camera->camera transform.  Default
        ``eye_in_hand`` (with ``corners``: the file's).
    fmt : str, optional
        File format (see :data:`kinhec.calibrate.readers.FORMATS`); guessed when omitted.
    hand_pose : {"base_T_ee", "ee_T_base"}, optional
        Direction of the hand poses in the file (default: the format's, else ``base_T_ee``).
    eye_pose : {"cam_T_target", "target_T_cam"}, optional
        Direction of the eye poses (default: the format's, else ``cam_T_target``).
    units : {"m", "mm", "HAND,EYE"}, optional
        Units of the translations in the files (default: the format's, else metres).
    quat_order : {"xyzw", "wxyz", "HAND,EYE"}, optional
        Order of the quaternion columns of TUM / ETH files (default: scalar last, ``xyzw``).
    offset : "auto", "none" or float
        Clock offset [s] (eye stamp = hand time + offset): estimated with its
        standard deviation, zero, or given.
    scale : bool or {"free", "fixed"}
        The scale of the eye translations (eye = scale x metric).  ``False``
        (default): a metric stream, its scale estimated under a 0.5 % prior
        (board size, focal length; freed when the translations are far from
        metric); ``True`` or ``"free"``: estimated without a prior (monocular
        VO / SLAM); ``"fixed"``: held at 1 (translations known to be exact).
    solver : str, optional
        Registry solver for the initial estimate (default: the best of all).
    force : bool
        Report a contradicted option or an undecided reading of the files (see
        :mod:`kinhec.calibrate.firewall`) as a warning instead of raising.
    dataset, sequence : optional
        Read a kinhec sequence (measured streams) instead of files.
    max_offset_s : float
        Largest offset searched by ``offset="auto"`` [s].
    corners : str or Path, optional
        An observation file of detected target corners with the robot pose of
        every view, in place of ``hand`` and ``eye``: the camera poses come from
        the corners and ``X``, ``Y`` from their pixels with the robot's pose
        errors marginalised (:mod:`kinhec.calibrate.corners`).
    intrinsics : str or array_like, optional
        With ``corners`` or ``images``: known ``fx, fy, cx, cy[, k1, k2, p1, p2[, k3]]`` [px]
        (default: estimated from the views).
    images, target, pairing, save_corners : optional
        A folder of images with the ``hand`` file and the target's spec, in
        place of ``eye``: the target is detected in every image, the images
        are paired with the hand poses (``pairing``: ``"auto"``, ``"order"``,
        ``"stamp"`` or a CSV map), and the corners are calibrated as with
        ``corners`` (:mod:`kinhec.calibrate.images`); ``save_corners`` writes
        them as an observation file; ``progress(done, total, detection)`` is
        called after each image; ``workers`` images are detected at once
        (default: the cores available; the result does not depend on it);
        ``fast_detection`` finds a chessboard at half size first
        (:func:`kinhec.vision.chessboard.find_chessboard`).
    bag : str or Path, optional
        A ROS 1 ``.bag``, ROS 2 ``.db3`` / ``.mcap`` or ROS 2 bag folder; ``hand``
        and ``eye`` then name its streams: a tf frame pair ``BASE:EE`` /
        ``CAMERA:TARGET`` or a pose topic (:mod:`kinhec.calibrate.bags`).  The
        result's ``inputs["frames"]`` names ``X`` and ``Y`` after the bag's frames.
    rig_world : {"auto", "shared", "per_camera"}
        ``rig``: the cameras' poses are in one world (one ``Y``, the cameras
        solved jointly by :func:`kinhec.calibrate.calibrate_multi`), each in
        its own, or decided from the per-camera ``Y`` (``auto``).
    intrinsics_std : (float, float) or str, optional
        How well the intrinsics are known: the focal length's relative and the
        principal point's standard deviation over the focal length (``"0.003,0.001"``:
        0.3 %, 1 px at 1000 px).  Pose files: the intrinsics the eye poses were
        computed with, whose systematic error is marginalised
        (:mod:`kinhec.calibrate.eye_bias`; default 0.3 % and 1e-3); with
        ``corners``: the prior of given ``intrinsics`` (default
        :data:`kinhec.calibrate.bundle.INTRINSICS_PRIOR`).  ``0,0`` counts no
        such error.
    robot_accuracy : (float, float) or str, optional
        The hand stream's systematic accuracy (a robot's absolute accuracy) as
        RMS rotation [deg] and RMS distance [mm] (``"0.05,0.3"``): its part that
        is constant over the recording moves ``X`` and ``Y`` one for one and no
        residual shows it, so it is added to their covariances
        (:mod:`kinhec.calibrate.robot_error`).  Default: not counted (noted).
    stamp_unit : {"s", "ms", "us", "ns", "HAND,EYE"}, optional
        Unit of the files' time stamps, never overruled (an implausible one
        stops the run unless ``force``).  Default: what a file states (a CSV
        column ``t_ns``), else seconds, unless they make a stream implausible
        and exactly one unit fits both files (:mod:`kinhec.calibrate.stamp_units`).

    Returns
    -------
    CalibrationResult

    Raises
    ------
    InputError
        Bad files (naming the file and line), options that the files contradict
        or files that several readings fit equally (unless ``force``), fewer than
        3 pairs, streams that do not overlap, motion that determines no ``X`` at all.

    Notes
    -----
    Before solving, every reading of the files is scored (directions, setup,
    units, quaternion order, which file is the hand, row alignment); a
    decisive correction is applied and noted (:mod:`kinhec.calibrate.firewall`).
    """
    level = robot_error.parse(robot_accuracy)
    fixed_scale = False
    if isinstance(scale, str):
        if scale not in ("free", "fixed"):
            raise InputError(f"scale: expected free or fixed (or a flag), got {scale!r}")
        scale, fixed_scale = scale == "free", scale == "fixed"
    scale = bool(scale)
    if level is not None and setup == "rig":
        raise InputError("robot_accuracy: counted for one camera (eye_in_hand, eye_to_hand), not for a rig, got "
                         f"--setup rig with robot_accuracy {robot_accuracy!r}")
    if images is not None or target is not None:
        given = [n for n, v in (("eye", eye), ("dataset", dataset), ("corners", corners), ("bag", bag))
                 if v not in (None, (), [])]
        if images is None or given:
            raise InputError(f"images: expected --images DIR with --hand FILE and --target SPEC, got "
                             f"{'no images' if images is None else ', '.join(given)}")
        from kinhec.calibrate.images import calibrate_images

        res = calibrate_images(images, hand, target, setup=setup, fmt=fmt, hand_pose=hand_pose, units=units,
                               pairing=pairing, intrinsics=intrinsics, save_corners=save_corners, progress=progress,
                               workers=workers, fast_detection=fast_detection)
        robot_error.apply(res, level)
        return res
    if corners is not None:
        given = [n for n, v in (("hand", hand), ("eye", eye), ("dataset", dataset)) if v not in (None, (), [])]
        if given:
            raise InputError(f"corners: the observation file holds both sides; expected no {', '.join(given)} with it")
        moot = [f"{n} {v!r}" if v is not True else n for n, v in (
            ("scale", "fixed" if fixed_scale else (scale or None)), ("solver", solver), ("units", units),
            ("offset", None if offset == "auto" else offset), ("format", fmt), ("hand_pose", hand_pose), ("eye_pose", eye_pose), ("quat_order", quat_order),
            ("sequence", sequence), ("stamp_unit", stamp_unit)) if v is not None]
        if moot:
            raise InputError(f"corners: these options do not apply to a corner file (its views are paired by order, "
                             f"in metres, with no clock offset or scale, solved by he_ml on the pixels), got "
                             f"{', '.join(moot)}")
        if setup == "rig":
            raise InputError("setup: a corner file is one camera (eye_in_hand or eye_to_hand), got rig")
        from kinhec.calibrate.corners import calibrate_corners

        res = calibrate_corners(corners, intrinsics=intrinsics, setup=setup,
                                intrinsics_prior=_intrinsics_std(intrinsics_std))
        robot_error.apply(res, level)
        return res
    if intrinsics is not None:
        raise InputError("intrinsics: only used with corners (--corners), got intrinsics without them")
    setup_given = setup
    setup = "eye_in_hand" if setup is None else setup
    if setup not in SETUPS:
        raise UnknownNameError("setup", setup, SETUPS)
    if isinstance(offset, str) and offset not in ("auto", "none"):
        try:
            offset = float(offset)
        except ValueError:
            raise InputError(f"offset: expected auto, none or a number of seconds, got {offset!r}") from None
    units_hand, units_eye = _units_pair(units)
    quat_hand, quat_eye = _quat_pair(quat_order)
    k_std = _intrinsics_std(intrinsics_std)
    eye_bias_prior = eb.prior_std() if k_std is None else eb.prior_std(k_std[1], k_std[0])
    if not np.any(eye_bias_prior > 0):
        eye_bias_prior = None
    if dataset is not None:
        from kinhec.calibrate.readers import read_kinhec

        hand_s, eye_list, setup_ds = read_kinhec(dataset, sequence)
        setup = setup_ds if setup != "rig" else setup
        setup_given = setup
        eyes = [eye_list]
        hand_pose, eye_pose, units_hand, units_eye = "base_T_ee", "cam_T_target", "m", "m"
        fmt = "kinhec"
    else:
        if bag is not None:
            from kinhec.calibrate.bags import read_bag

            if fmt is not None:
                raise InputError(f"format: a bag's streams carry their own format, got --format {fmt} with a bag")
            hand, eye = read_bag(bag, hand, eye)
        eye_specs = [eye] if isinstance(eye, (str, Path)) else list(eye)
        if not eye_specs:
            raise InputError("eye: expected at least one eye pose file (--eye), got none")
        eyes = [s for spec in eye_specs for s in read_streams(spec, fmt)]
        if hand is None and setup == "rig" and len(eyes) >= 2:
            # no body stream: the first camera is the reference, every X is camera-to-camera
            reference = eyes.pop(0)
            direction = eye_pose or reference.direction or "cam_T_target"
            hand_pose = "base_T_ee" if direction == "target_T_cam" else "ee_T_base"
            hand_s = reference
        elif hand is None:
            raise InputError("hand: expected a hand pose file (--hand), got none (only a rig of two or more "
                             "cameras can do without)")
        else:
            hand_s = read_stream(hand, fmt if fmt != "rig" else None)
    if dataset is None:  # the stamps' unit: stated, or judged from rates, durations and overlap
        hand_s, eyes = stamp_units.settle_streams(hand_s, eyes, stamp_unit, force=force)
    elif stamp_unit is not None:
        raise InputError(f"stamp_unit: a kinhec dataset's stamps are in seconds, got --stamp-unit {stamp_unit}")
    if setup != "rig" and len(eyes) != 1:
        raise InputError(f"eye: expected one eye stream for {setup}, got {len(eyes)} ({', '.join(e.name for e in eyes)}); "
                         "use --setup rig for several cameras")
    reference_camera = hand is None and dataset is None and setup == "rig"
    if setup == "rig" and len(eyes) < (1 if reference_camera else 2):
        raise InputError(f"eye: expected two or more eye streams for a rig, got {len(eyes)}")
    check = dict(hand_pose=hand_pose, eye_pose=eye_pose, scale=scale, offset=offset, max_offset_s=max_offset_s,
                 force=force, units=(units_hand, units_eye) if units is not None else None,
                 quat=(quat_hand, quat_eye) if quat_order is not None else None)
    inputs = {"hand": hand_s.path, "eye": [e.path for e in eyes], "format": fmt or hand_s.fmt}
    if setup != "rig":
        dec = fw.check(hand_s, eyes[0], setup=setup_given, **check)
        res = _solve_reading(dec, setup=dec.reading.setup, offset=offset, scale=scale, solver=solver, force=force,
                             max_offset_s=max_offset_s, eye_bias_prior=eye_bias_prior, fixed_scale=fixed_scale)
        res.inputs = dict(inputs, hand=dec.hand.path, eye=[dec.eye.path], **_reading_inputs(dec))
        if bag is not None:
            from kinhec.calibrate.bags import frame_names

            r = dec.reading
            res.inputs["frames"] = frame_names(r.setup, dec.hand, dec.eye, r.hand_pose, r.eye_pose)
        robot_error.apply(res, level)
        return res
    per = {}
    decs = {}
    for e in eyes:
        dec = fw.check(hand_s, e, rig=True, rig_reference=reference_camera, **check)
        decs[e.name] = dec
        r = _solve_reading(dec, setup="eye_in_hand", offset=offset, scale=scale, solver=solver, force=force,
                           max_offset_s=max_offset_s, fixed_scale=fixed_scale)
        r.inputs = dict(inputs, eye=[e.path], **_reading_inputs(dec))
        per[e.name] = r
    inputs.update(_reading_inputs(next(iter(decs.values()))))
    if bag is not None:
        from kinhec.calibrate.bags import frame_names

        inputs["camera_frames"] = {e.name: frame_names("rig", d.hand, d.eye, d.reading.hand_pose, d.reading.eye_pose)
                                   for e, d in zip(eyes, decs.values())}
    if reference_camera:
        for k, r in per.items():
            r.X_name = f"T_{hand_s.name}_{k}"
            r.Y_name = "T_world_world"
    names = list(per)
    X_all = {k: r.X for k, r in per.items()}
    C_all = {k: r.cov[:6, :6] for k, r in per.items()}
    S_all = {k: r.X_std for k, r in per.items()}
    if reference_camera:  # the reference camera itself: identity, exactly
        names = [hand_s.name] + names
        X_all[hand_s.name], C_all[hand_s.name], S_all[hand_s.name] = np.eye(4), np.zeros((6, 6)), np.zeros(6)
    from kinhec.calibrate.multi import joint_rig  # one body, K cameras: solved jointly when in one world

    joint = joint_rig(per, reference=hand_s.name if reference_camera else None, world=rig_world, scale=scale)
    cam_T_cam, cam_std = {}, {}
    if joint is not None:
        X_all, S_all, cam_T_cam, cam_std = joint.X, joint.X_std, joint.cam_T_cam, joint.cam_T_cam_std
    for i, a in enumerate(names if joint is None else []):
        for b in names[i + 1:]:
            Z, s = _compose_std(X_all[a], C_all[a], X_all[b], C_all[b])
            cam_T_cam[f"{a}_T_{b}"] = Z
            cam_std[f"{a}_T_{b}"] = s
    rig = RigResult(names, X_all, S_all, cam_T_cam, cam_std, per, joint=None if joint is None else joint.info)
    first = per[next(iter(per))]
    first.setup = "rig"
    first.inputs = inputs
    first.rig = rig
    first.warnings = [f"{k}: {w}" for k, r in per.items() for w in r.warnings]
    first.observability = dict(first.observability,
                               determined=all(r.determined for r in per.values()),
                               per_camera={k: r.observability for k, r in per.items()})
    return first

