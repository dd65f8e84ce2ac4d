"""Calibration from the target's corners: robot poses and detected pixels in one observation file.

``kinhec calibrate --corners FILE`` reads an observation file (the
calibration-rs JSON of :mod:`kinhec.synth.observations`: per view the target
points, their pixels and ``meta.base_se3_gripper``).  The camera side is
not a pose file but the corners themselves:

1. **Camera.** The intrinsics are given (``--intrinsics``) or estimated from
   the views (Zhang's closed form, then every intrinsic and view pose
   refined on the pixels); either way each view's target pose follows by
   PnP with them.
2. **Hand-eye.** :func:`kinhec.solvers.he_ml.he_ml` on the pose pairs, then
   its pixel stage on the corners (``pixels=``): ``X`` and ``Y`` from the
   pixels with every view's robot pose error a nuisance under a
   flange-twist prior, the pixel noise and the robot's error level by EM.
   A robot whose reported poses are off by a fraction of a millimetre, as
   real arms are, then biases ``X`` no more than the data allow.
3. **Intrinsics and board scale.** :func:`kinhec.calibrate.bundle.refine_bundle`
   refines ``X``, ``Y``, the intrinsics (given ones under a loose prior) and
   the board's true size over its stated one (under the prior of
   :mod:`kinhec.calibrate.scale`) jointly on the pixels, the robot errors
   still marginalised.  The covariance marginalises the intrinsics and the
   scale: neither is held fixed.

The result is a :class:`~kinhec.calibrate.result.CalibrationResult` like
that of pose files: standard deviations with the robot errors, the
intrinsics and the board scale marginalised, per-view residuals of the pose
pairs, outliers (views that the pose stage's chi-square gate rejects are
left out of the pixel stages), observability and the verdict.  The views are
paired by order (one robot pose per view); there is no clock offset.  A hand
that turns about one axis only (SCARA, palletiser, XY-theta gantry) leaves
part of ``X`` and ``Y`` open: named from the pose pairs of step 2
(:mod:`kinhec.calibrate.reduced_dof`), the stated components (``known``)
held in step 3.  The
``scale`` reported is that of the eye translations (``1 / b``, as on the pose
path: a board 0.5 % larger than stated gives eye translations 0.5 % short).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kinhec.calibrate import free_scale
from kinhec.calibrate import reduced_dof as rd
from kinhec.calibrate import scale as sc
from kinhec.calibrate.bundle import DISTORTION_PRIORS, INTRINSICS_PRIOR, refine_bundle
from kinhec.calibrate.frames import names as frame_names
from kinhec.calibrate import held_out as ho
from kinhec.calibrate.held_out_pixels import assess_views
from kinhec.calibrate.observability import MIN_LAMBDA2, axis_scatter, observability
from kinhec.calibrate.solve import one_axis_pair_information
from kinhec.calibrate.result import CalibrationResult
from kinhec.util.blas import single_threaded_blas
from kinhec.util.errors import InputError
from kinhec.models.intrinsics import calibrate_camera, camera_calibration, intrinsic_names, model_of, pack_views
from kinhec.models.intrinsics_files import IntrinsicsFile, read_intrinsics
from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml import he_ml
from kinhec.solvers.he_ml_stages.pixels import BehindCameraError
from kinhec.solvers.reprojection import PixelViews, chain_poses

__all__ = ["calibrate_corners", "intrinsics_from_file", "intrinsics_vector", "parse_intrinsics", "solve_corners"]


#: Suffixes of the intrinsics files ``--intrinsics`` reads (:mod:`kinhec.models.intrinsics_files`).
INTRINSICS_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def parse_intrinsics(text, image_size=None) -> np.ndarray:
    """The 9 intrinsics ``fx fy cx cy k1 k2 p1 p2 k3`` from ``"fx,fy,cx,cy[,k1,k2,p1,p2[,k3]]"``, a sequence of 4, 8
    or 9 numbers (12: OpenCV's rational model, ``fx fy cx cy k1 k2 p1 p2 k3 k4 k5 k6``), or an intrinsics file
    (OpenCV YAML, Kalibr camchain, a ``kinhec calibrate --json``; checked against ``image_size`` ``(width, height)``
    [px] when given), or an :class:`~kinhec.models.intrinsics_files.IntrinsicsFile` (a fisheye's as its 8 numbers
    ``fx fy cx cy k1 k2 k3 k4``: bare numbers are a pinhole's)."""
    if isinstance(text, IntrinsicsFile):
        return intrinsics_vector(text, "intrinsics")
    if isinstance(text, (str, Path)) and (Path(text).suffix.lower() in INTRINSICS_FILE_SUFFIXES or Path(text).is_file()):
        return intrinsics_from_file(text, image_size)
    if isinstance(text, str):
        try:
            vals = [float(v) for v in text.replace(" ", "").split(",") if v != ""]
        except ValueError:
            raise InputError(f"intrinsics: expected numbers fx,fy,cx,cy[,k1,k2,p1,p2[,k3[,k4,k5,k6]]] or an intrinsics "
                             f"file (.yaml, .json), got {text!r}") from None
    else:
        vals = [float(v) for v in np.ravel(np.asarray(text, dtype=np.float64))]
    if len(vals) not in (4, 8, 9, 12) or not np.isfinite(vals).all() or vals[0] <= 0 or vals[1] <= 0:
        raise InputError(f"intrinsics: expected 4, 8, 9 or 12 finite numbers fx,fy,cx,cy[,k1,k2,p1,p2[,k3[,k4,k5,"
                         f"k6]]] with fx, fy > 0 [px], got {text!r}")  # fmt: skip
    return np.array(vals + [0.0] * (9 - len(vals))) if len(vals) < 12 else np.array(vals)


def intrinsics_from_file(path, image_size=None) -> np.ndarray:
    """The intrinsics of an intrinsics file: 9 for a pinhole with OpenCV's distortion (``fx fy cx cy k1 k2 p1 p2
    k3``), 8 for a fisheye (``fx fy cx cy k1 k2 k3 k4``), 12 for OpenCV's rational model (``fx fy cx cy k1 k2 p1 p2
    k3 k4 k5 k6``; :mod:`kinhec.models.intrinsics`)."""
    size = None if image_size is None else f"{int(image_size[0])}x{int(image_size[1])}"
    return intrinsics_vector(read_intrinsics(path, image_size=size, size_from="the size of the images calibrated"), path)


def intrinsics_vector(intr: IntrinsicsFile, path) -> np.ndarray:
    """The intrinsics vector of :mod:`kinhec.models.intrinsics` of intrinsics read from a file (named ``path``)."""
    dist = [float(v) for v in intr.distortion]
    if intr.distortion_model == "equidistant":
        if len(dist) not in (0, 4):
            raise InputError(f"{path}: expected 4 fisheye (equidistant) coefficients k1 k2 k3 k4, got {len(dist)}")
        return np.array([intr.fx, intr.fy, intr.cx, intr.cy, *(dist or [0.0] * 4)])
    if intr.distortion_model not in ("radtan", "rational"):
        raise InputError(f"{path}: expected a pinhole with OpenCV's distortion k1 k2 p1 p2 k3 [k4 k5 k6] (radtan, "
                         f"rational) or a fisheye (equidistant), got {intr.distortion_model} distortion")  # fmt: skip
    if len(dist) > 8 and any(v != 0.0 for v in dist[8:]):
        raise InputError(f"{path}: expected at most 8 distortion coefficients k1 k2 p1 p2 k3 k4 k5 k6 (OpenCV's "
                         f"rational model), got {len(dist)} with nonzero thin-prism or tilt terms "
                         f"({', '.join(f'{v:.6g}' for v in dist[8:])}), which kinhec does not model")  # fmt: skip
    if intr.distortion_model == "rational" or any(v != 0.0 for v in dist[5:8]):
        dist = (dist + [0.0] * 8)[:8]  # OpenCV's rational model
    else:
        dist = (dist + [0.0] * 5)[:5]
    return np.array([intr.fx, intr.fy, intr.cx, intr.cy, *dist])


def chain_rms_note(obs, camera, A, res, refined_rms=None) -> str:
    """The reprojection RMS through the whole chain with the robot poses as measured, beside the refined one.

    With the robot poses as measured, every view's target pose is
    ``inv(A_i X) Y`` (eye-in-hand; ``inv(Y) A_i X`` eye-to-hand) and the RMS is
    taken over every corner of every view: OpenCV's definition, comparable with
    its figures.  The pixel stage refines each view's robot pose; its RMS (on the
    inliers) is the other figure.
    """
    views = pack_views(obs.points_3d, obs.points_2d)
    measured = camera_calibration(views, camera.intrinsics, chain_poses(A, res.X, res.Y, obs.mode)).rms_px
    refined = res.info.get("pixel_rms", float("nan")) if refined_rms is None else float(refined_rms)
    return (f"reprojection RMS through the chain: {measured:.3f} px with the robot poses as measured (every corner "
            f"of all {obs.n_views} views, as OpenCV reports it), {refined:.3f} px with each view's robot pose refined")


def solve_corners(obs, camera):
    """:func:`kinhec.solvers.he_ml.he_ml` on an observation set's corners, the camera (intrinsics, view poses) given.

    ``obs`` a :class:`kinhec.synth.observations.ObservationSet`, ``camera`` a
    :class:`kinhec.models.intrinsics.CameraCalibration` of its views; the pose pairs come from the camera's view
    poses, ``X`` and ``Y`` from the pixels (``pixels=``) through the camera's lens model.  Returns the
    :class:`~kinhec.solvers.he_ml.HeMlResult`; where the fit on the poses puts a view's target behind a rational
    camera (:class:`~kinhec.solvers.he_ml_stages.pixels.BehindCameraError`), that of the poses alone, with
    ``info["pixel_stage_skipped"]`` saying why.
    """
    B = pm.camera_poses(camera.T_cam_target, obs.mode)
    pixels = PixelViews(obs.points_3d, obs.points_2d, obs.image_size, obs.mode, camera.intrinsics)
    try:
        return he_ml(obs.T_base_ee, B, pixels=pixels)
    except BehindCameraError as exc:
        # a rational lens sees only points in front of it, and the fit on the poses put a view's target behind it:
        # X and Y from the poses, the bundle then fits the pixels from there
        res = he_ml(obs.T_base_ee, B, configuration=obs.mode, scale=False)
        res.info["pixel_stage_skipped"] = str(exc)
        return res


def _bundle(obs, cam, res, inl, given, prior, hold=None, start=None):
    """:func:`kinhec.calibrate.bundle.refine_bundle` on the inlying views from ``he_ml``'s pixel solution (or from
    ``start`` ``(X, Y)``), the components ``hold`` held."""
    sel = np.flatnonzero(inl)
    views = pack_views([obs.points_3d[i] for i in sel], [obs.points_2d[i] for i in sel])
    kv = cam.intrinsics
    notes = []
    if given is None:
        # every intrinsic the views gave: focal lengths and principal point free, the distortion under a wide prior
        dist_prior = DISTORTION_PRIORS[model_of(kv)]
        free = tuple(range(kv.size))
        prior_std = np.concatenate([[np.inf] * 4, dist_prior])
        prior_mean = np.concatenate([kv[:4], np.zeros(dist_prior.size)])
    else:
        f_rel, c_rel = (INTRINSICS_PRIOR["focal_rel"], INTRINSICS_PRIOR["principal_point_rel_f"]) if prior is None \
            else (float(prior[0]), float(prior[1]))
        if f_rel > 0 and c_rel > 0:
            free = (0, 1, 2, 3)
            prior_std = np.array([f_rel * kv[0], f_rel * kv[1], c_rel * kv[0], c_rel * kv[1]])
            prior_mean = kv[:4]
            notes.append(f"the given intrinsics are refined on the corners within {100 * f_rel:.2g} % (focal lengths) "
                         f"and {c_rel * kv[0]:.3g} px (principal point), their uncertainty marginalised; the given "
                         "distortion is held")  # fmt: skip
        else:
            free, prior_std, prior_mean = (), None, None
            notes.append("the given intrinsics are held fixed: their uncertainty is not counted")
    twists = res.info.get("pixel_robot_twists")
    if twists is not None:  # the pixel stage's levels and robot twists start the bundle
        pixel_std, robot_std = float(res.info["pixel_std"]), (res.noise["robot_rot_std_rad"], res.noise["robot_trans_std_m"])
        twists = np.asarray(twists)[sel]
    else:  # no pixel stage (solve_corners): the camera fit's RMS per axis, the robot's levels from a generous start
        pixel_std, robot_std = cam.rms_px / np.sqrt(2.0), (1e-3, 1e-3)
        notes.append("X and Y started from the pose pairs, not from the pixels: "
                     + str(res.info.get("pixel_stage_skipped", "no pixel stage ran")))
    X0, Y0 = (res.X, res.Y) if start is None else start
    fit = refine_bundle(views, obs.T_base_ee[sel], X0, Y0, kv, obs.mode, pixel_std=pixel_std,
                        robot_std=robot_std, twists0=twists, free_intrinsics=free,
                        intrinsics_prior_std=prior_std, intrinsics_prior_mean=prior_mean,
                        board_prior_std=sc.PRIOR_STD, hold=hold)  # fmt: skip
    return fit, notes


def _open_directions(obs, cam, res, inl):
    """The directions of ``(X, Y)`` a motion about one axis leaves open (:mod:`kinhec.calibrate.reduced_dof`), from
    the pose pairs of the inlying views (the hand poses and the camera fit's target poses) at ``he_ml``'s solution,
    each residual component whitened by its RMS; None for a motion about two axes or more."""
    A = obs.T_base_ee[inl]
    lam2 = axis_scatter(A)
    if not lam2 < MIN_LAMBDA2:
        return None
    r = pm.residuals(cam.T_cam_target[inl], pm.predicted_camera_poses(A, res.X, res.Y, obs.mode))
    rms = np.sqrt(np.mean(r**2, axis=0))
    std = np.maximum(np.r_[[rms[:3].mean()] * 3, [rms[3:].mean()] * 3], [1e-6] * 3 + [1e-6] * 3)
    return rd.open_directions(one_axis_pair_information(A, res.X, res.Y, obs.mode == "eye_in_hand", std), lam2)


def _intrinsics_hint(od, given) -> str:
    """The naming of open directions ``od`` when the intrinsics were estimated from the views (``given`` None) and
    a rotation is among them ("" otherwise): a hand that turns about one axis shows the board the same way up in
    every view, which does not fix the focal length; it then trades against the camera's distance and opens
    directions a stated translation cannot close (with the intrinsics given, the same views leave only the
    translations along the axis open), so neither stating components nor moving the hand otherwise is the remedy."""
    if given is not None or not any(c.split(".")[1][0] == "r" for c in od.components):
        return ""
    return (f"the hand rotates about one axis only and {', '.join(od.components)} are not determined: the intrinsics "
            "were estimated from these views, which show the board the same way up in every view and so do not fix "
            "the focal length; give the camera's intrinsics (--intrinsics, from a calibration with the board tilted), "
            "and state the translation along the axis with --known")


def _partial_refusal(od, setup: str, where: str) -> str:
    """Why ``--partial`` is refused on corners for a motion that leaves ``od`` open."""
    tr = [c for c in od.components if c.split(".")[1][0] == "t"]
    ex = " or ".join(f"--known {c}=METRES ({rd.describe_component(c, setup)})" for c in tr[:2])
    return (f"{where}: partial: the hand rotates about one axis only ({', '.join(od.components)} not determined); "
            "from corners the open components cannot be set by a convention: the robot's pose errors act about the "
            "flange's origin, so where the open components sit changes the fit of the others and their standard "
            "deviations; " + (f"state {'one' if od.k == 1 else od.k} with {ex}" if tr else
                              "move the hand sideways between stations"))


def calibrate_corners(path, *, intrinsics=None, setup: str | None = None, where: str | None = None,
                      intrinsics_prior=None, known=None, partial: bool = False) -> CalibrationResult:  # fmt: skip
    """``X`` and ``Y`` from an observation file of corners and robot poses (see the module docstring).

    Parameters
    ----------
    path : str, Path or ObservationSet
        Observation JSON (:func:`kinhec.synth.observations.read_observations`), or the observations themselves
        (e.g. detected in images, :mod:`kinhec.calibrate.images`), named ``where`` in messages.
    intrinsics : str or array_like, optional
        Known ``fx, fy, cx, cy[, k1, k2, p1, p2[, k3[, k4, k5, k6]]]`` [px] (or a file, :func:`parse_intrinsics`);
        estimated from the views when omitted.
    setup : {"eye_in_hand", "eye_to_hand"}, optional
        Must agree with the file's ``problem`` mode when given.
    intrinsics_prior : (float, float), optional
        With ``intrinsics``: their uncertainty, the focal lengths' as a fraction and the principal point's
        as a fraction of the focal length (default :data:`kinhec.calibrate.bundle.INTRINSICS_PRIOR`);
        ``(0, 0)`` holds them fixed.
    known : sequence of str or dict, optional
        For a motion about one axis (SCARA, palletiser, XY-theta gantry), the components it leaves open stated
        (``["X.tz=0.120"]`` or ``{"X.tz": 0.120}`` [m]; :mod:`kinhec.calibrate.reduced_dof`): held in the bundle on
        the pixels, reported with standard deviation 0.  Refused for a component the motion determines.
    partial : bool
        Refused for such a motion (an :class:`InputError` saying why: the robot's pose errors act about the
        flange's origin, so a convention for the open components would move the rest of the fit); a motion
        that determines everything is calibrated as without it.  Without ``known``, such a motion gives a result
        that is not determined, naming the open components.

    Raises
    ------
    InputError
        A file that does not conform (named), a setup that contradicts it, bad intrinsics, fewer than
        3 views, views whose corners do not determine a camera.

    Notes
    -----
    Runs with BLAS on one thread (:func:`kinhec.util.blas.single_threaded_blas`): its products are small, so more
    threads only spin (2.5x the CPU time on 2 cores for the kuka_1 views), and the result's last digits then
    do not depend on the thread setting.
    """
    with single_threaded_blas():
        return _calibrate_corners(path, intrinsics=intrinsics, setup=setup, where=where,
                                  intrinsics_prior=intrinsics_prior, known=_known(known),
                                  partial=bool(partial))  # fmt: skip


def _known(known) -> dict:
    """``known`` as ``{parameter index: metres}``: as :func:`kinhec.calibrate.reduced_dof.parse_known` reads it, or
    already so (from :func:`kinhec.calibrate.options.parse_options`)."""
    if isinstance(known, dict) and all(isinstance(k, (int, np.integer)) for k in known):
        return {int(k): float(v) for k, v in known.items()}
    return rd.parse_known(known)


def _read_corners(path, setup, where):
    """The observation set (read from ``path`` unless given), its path and its name for messages."""
    from kinhec.synth.observations import ObservationSet, read_observations  # lazy: it loads pandas (kinhec.synth.generator)

    if isinstance(path, ObservationSet):
        obs, path = path, Path(where or "observations")
    else:
        path = Path(path)
        obs = read_observations(path)
    where = f"{path} ({obs.n_views} views)"
    if setup not in (None, obs.mode):
        raise InputError(f"setup: {path} holds {obs.mode} views, got --setup {setup}")
    if obs.n_views < 3:
        raise InputError(f"{where}: expected at least 3 views, got {obs.n_views}")
    return obs, path, where


def _report_noise_levels(report: dict, fit, obs, inl) -> None:
    """The bundle's pixel and robot noise levels and their standard deviations, into ``report``."""
    report["pixel_std_px"] = fit.pixel_std
    report["robot_std_rad_m"] = [fit.robot_rot_std_rad, fit.robot_trans_std_m]
    # a variance from d degrees of freedom has a relative std sqrt(2 / d)
    n_px = sum(len(obs.points_2d[i]) for i in np.flatnonzero(inl))
    report["pixel_std_std_px"] = fit.pixel_std / np.sqrt(2.0 * max(2 * n_px - fit.cov.shape[0], 1))
    report["robot_std_std_rad_m"] = [v / np.sqrt(2.0 * 3 * max(int(inl.sum()), 1))
                                     for v in (fit.robot_rot_std_rad, fit.robot_trans_std_m)]  # fmt: skip


def _calibrate_corners(path, *, intrinsics, setup, where, intrinsics_prior, known, partial) -> CalibrationResult:
    from kinhec.synth.observations import ObservationSet  # lazy: it loads pandas (kinhec.synth.generator)

    obs, path, where = _read_corners(path, setup, where)
    k = None if intrinsics is None else parse_intrinsics(intrinsics, obs.image_size)
    model = obs.distortion_model if k is None else model_of(k)
    if k is not None and obs.distortion_model != "radtan" and model != obs.distortion_model:
        raise InputError(f"intrinsics: {path} states a {obs.distortion_model} camera, got {model} intrinsics "
                         f"({k.size} numbers)")  # fmt: skip
    views = pack_views(obs.points_3d, obs.points_2d)
    try:
        cam = calibrate_camera(views, obs.image_size, intrinsics=k, model=model)
    except InputError as exc:
        raise InputError(f"{where}: the corners do not determine the camera: {exc}") from None
    A = obs.T_base_ee
    board = free_scale.board_scale(A, cam.T_cam_target, obs.mode)
    b0 = 1.0
    if board is not None:  # a board of the wrong size: start from the size the robot's translations give
        b0, board_note = board
        obs = ObservationSet(obs.camera_id, obs.image_size, obs.mode, [b0 * p for p in obs.points_3d],
                             obs.points_2d, obs.T_base_ee, obs.problem, obs.distortion_model)  # fmt: skip
        views = pack_views(obs.points_3d, obs.points_2d)
        cam = calibrate_camera(views, obs.image_size, intrinsics=k, model=model)
    if known and partial:
        raise InputError("partial: the open components are either stated (known) or set by convention (partial), "
                         "got both")
    res = solve_corners(obs, cam)
    inl = res.inliers
    od = _open_directions(obs, cam, res, inl)
    hold, X0, Y0 = None, res.X, res.Y
    if od is not None:
        if partial:
            raise InputError(_partial_refusal(od, obs.mode, where))
        try:
            rd.check_known(od, known, res.X, res.Y, None)
        except InputError as exc:
            raise InputError(f"{where}: {_intrinsics_hint(od, k) or str(exc).replace(', or --partial', '')}") from None
        if known:  # X and Y moved along the open directions to the stated values, then held there
            od.known = dict(known)
            hold = dict(known)
            X0, Y0 = rd.move_to_known(res.X, res.Y, od, hold)
    fit, bundle_notes = _bundle(obs, cam, res, inl, k, intrinsics_prior, hold, (X0, Y0))
    X, Y = fit.X.copy(), fit.Y.copy()
    for i, v in (hold or {}).items():  # the held translations exactly as stated (their prior leaves them a hair off)
        (X if i < 6 else Y)[(i % 6) - 3, 3] = v
    cov = fit.cov[:12, :12]
    if od is None and known:
        try:
            rd.check_known(None, known, X, Y, cov)
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    X_std, Y_std = std[:6], std[6:12]
    resolved = od is not None and bool(od.known)
    one_axis = None if od is None else "" if resolved else (_intrinsics_hint(od, k)
                                                             or rd.refusal(od, obs.mode, partial=False))
    report, warn = observability(A[inl], cov, X_std, one_axis=one_axis)
    report["n_inliers"] = int(inl.sum())
    report["undetermined"] = [] if od is None or od.known else list(od.components)
    if od is not None:
        report["open_directions"] = od.to_dict()
    _report_noise_levels(report, fit, obs, inl)
    names = fit.intrinsic_names
    k_std = np.sqrt(np.maximum(np.diag(fit.cov)[12 : 12 + len(names)], 0.0))
    report["intrinsics_std"] = {n: float(v) for n, v in zip(names, k_std)}
    lb_std = float(np.sqrt(max(fit.cov[-1, -1], 0.0)))
    scale, scale_std = 1.0 / (b0 * fit.board_scale), lb_std / (b0 * fit.board_scale)
    scale_rep, scale_warn, scale_notes = sc.describe(scale, scale_std, fit.board_scale_data_std,
                                                     prior_std=sc.PRIOR_STD, where=str(path))
    report["scale"] = scale_rep
    warn += scale_warn
    n = obs.n_views
    n_out = int((~inl).sum())
    if n_out > 0.2 * n:
        warn.append(f"{n_out} of {n} views ({100 * n_out / n:.0f} %) are outliers")
    held = assess_views(fit.system, intrinsics_estimated=bool(fit.intrinsic_names), chain=(A[inl], X, Y, obs.mode))
    if ho.warning(held) is not None:  # held-out corners far worse than sigma predicts
        warn.append(ho.warning(held))
    source = "given" if k is not None else "estimated from the views"
    ki = fit.intrinsics
    notes = [
        f"intrinsics {source}: fx {cam.intrinsics[0]:.2f}, fy {cam.intrinsics[1]:.2f}, cx {cam.intrinsics[2]:.2f}, "
        f"cy {cam.intrinsics[3]:.2f} px; camera fit RMS {cam.rms_px:.3f} px with free view poses",
        f"X and Y from the corners with the robot's pose errors marginalised: pixel noise "
        f"{fit.pixel_std:.3f} px, robot errors {1e3 * fit.robot_rot_std_rad:.3g} mrad / "
        f"{1e3 * fit.robot_trans_std_m:.3g} mm (estimated); RMS {fit.rms_px:.3f} px",
        *bundle_notes,
        f"intrinsics refined with X and Y: fx {ki[0]:.2f}, fy {ki[1]:.2f}, cx {ki[2]:.2f}, cy {ki[3]:.2f} px"
        + "".join(f", {n} +- {v:.3g}" for n, v in zip(names[:4], k_std[:4])),
        *([board_note] if board is not None else []),
        *scale_notes,
        *([rd.resolution_note(od, obs.mode)] if resolved else []),
        "views paired by order (one robot pose per view)",
        chain_rms_note(obs, cam, A, res, None if model == "radtan" else fit.rms_px),
    ]
    r = pm.residuals(cam.T_cam_target, pm.predicted_camera_poses(A, X, Y, obs.mode))
    residuals = {
        "t_s": np.arange(n, dtype=float),
        "rot_deg": np.degrees(np.linalg.norm(r[:, :3], axis=1)),
        "trans_mm": 1000 * np.linalg.norm(r[:, 3:], axis=1),
        "outlier": ~inl,
    }
    X_name, Y_name = frame_names(obs.mode)
    inputs = {"corners": str(path), "format": "observations", "intrinsics": [float(v) for v in cam.intrinsics],
              "intrinsics_source": "given" if k is not None else "estimated", "hand_pose": "base_T_ee",
              "eye_pose": "cam_T_target", "units": "m", "intrinsics_refined": [float(v) for v in fit.intrinsics],
              "image_size": [int(v) for v in obs.image_size]}  # fmt: skip
    if model != "radtan":
        inputs["distortion_model"] = model
    return CalibrationResult(
        setup=obs.mode, inputs=inputs, X=X, Y=Y, X_name=X_name, Y_name=Y_name, X_std=X_std, Y_std=Y_std, time_offset_s=None,
        time_offset_std_s=None, time_offset_peak_corr=None, scale=scale, scale_std=scale_std, n_pairs=n,
        outliers=np.flatnonzero(~inl).tolist(), observability=report, warnings=warn, notes=notes,
        residuals=residuals, offset_curve=None, init_solver="he_ml (corners)", cov=cov, where=where, held_out=held,
    )  # fmt: skip
