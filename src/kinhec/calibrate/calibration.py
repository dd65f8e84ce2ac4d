"""``calibrate()``: from a user's pose files to ``X`` (and ``Y``), the clock offset, scale and their uncertainty.

:func:`calibrate` runs its stages in turn, each a module with its own result:

1. **Options** (:mod:`~kinhec.calibrate.options`): every option parsed and checked once
   (:class:`~kinhec.calibrate.options.Options`).  A folder of images
   (:mod:`~kinhec.calibrate.images`) or a corner file (:mod:`~kinhec.calibrate.corners`) is
   calibrated on its own path from here.
2. **Inputs** (:mod:`~kinhec.calibrate.inputs`): the hand and eye streams from files, a bag or a
   kinhec dataset sequence, their stamps in seconds.
3. **Conventions** (:mod:`~kinhec.calibrate.firewall`, then :mod:`~kinhec.calibrate.stages.conventions`):
   every reading of the files scored, one decided (directions, units, quaternion order, which file is
   which, row alignment), and the streams converted to the solver form (``A = T_base_ee``;
   ``B = T_target_cam`` eye-in-hand and for every camera of a rig, ``B = T_cam_marker`` eye-to-hand;
   :mod:`~kinhec.calibrate.frames`).
4. **Pairing** (:mod:`~kinhec.calibrate.stages.pairing`): by order or by time with the coarse clock
   offset of :func:`kinhec.solvers.estimate_time_offset` (:mod:`~kinhec.calibrate.pairing`).
5. **Solve** (:mod:`~kinhec.calibrate.stages.solve`): initialised from the registry's solvers and
   refined with outlier rejection (:mod:`~kinhec.calibrate.solve`).
6. **Uncertainty** (:mod:`~kinhec.calibrate.stages.uncertainty`): the standard deviations.
7. **Verdict** (:mod:`~kinhec.calibrate.stages.verdict`): observability
   (:mod:`~kinhec.calibrate.observability`), warnings, held-out poses.
8. **Outputs** (:mod:`~kinhec.calibrate.stages.outputs`): the
   :class:`~kinhec.calibrate.result.CalibrationResult`; a rig's cameras are then solved jointly
   (:mod:`~kinhec.calibrate.stages.rig`).  A stated robot accuracy is added last
   (:mod:`~kinhec.calibrate.robot_error`).

Parameters of :func:`calibrate`
-------------------------------
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
scale : bool or {"free", "fixed", "metric"}
    The scale of the eye translations (eye = scale x metric).  ``False``
    (default): a metric stream, its scale estimated under a 0.5 % prior
    (board size, focal length), freed when the translations are decisively
    far from metric and refused when the data cannot tell
    (:mod:`kinhec.calibrate.free_scale`); ``"metric"``: under the prior and
    never freed; ``True`` or ``"free"``: estimated without a prior
    (monocular VO / SLAM, a board of unknown size); ``"fixed"``: held at 1
    (translations known to be exact).
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
points, point_noise : optional
    A point observation file of a depth camera (the target's points measured
    in 3D in the camera frame, with the robot pose of every view), in place
    of ``hand`` and ``eye``; ``target`` gives its model points when the file
    does not.  ``X`` and ``Y`` from the points under a depth-dependent noise
    (``point_noise`` ``"A,B"``: along the ray ``A z^2``, across it ``B z``;
    estimated when omitted) (:mod:`kinhec.calibrate.points`).
intrinsics : str or array_like, optional
    With ``corners`` or ``images``: known ``fx, fy, cx, cy[, k1, k2, p1, p2[, k3[, k4, k5, k6]]]`` [px]
    or an intrinsics file (default: estimated from the views).
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
    (:func:`kinhec.vision.chessboard.find_chessboard`); ``lens`` (``"pinhole"``,
    ``"fisheye"`` or ``"rational"``) the lens model estimated from the
    views (default: that of ``intrinsics``, else the pinhole).
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
known : sequence of str or dict, optional
    A motion that turns about one axis only (SCARA, 4-axis palletiser, XY-theta gantry) leaves part of ``X`` and
    ``Y`` open (:mod:`kinhec.calibrate.reduced_dof`): the translations along the axis, named as components
    ``X.tz``, ``Y.tz`` ... (translations of ``X`` in the flange frame, of ``Y`` in the robot base).  Stating
    them (``["X.tz=0.120"]``, metres) completes the solution; a component the motion determines is refused.
    Pose files, corner files and images alike (with corners the stated components are held in the bundle on the
    pixels); not a rig or a point file.
partial : bool
    For such a motion without ``known``: return what it determines, the open components set by a stated
    convention (``X``'s translation along the axis 0) and listed in ``observability["undetermined"]``, without
    standard deviations, instead of refusing.

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

from __future__ import annotations

from kinhec.calibrate import firewall as fw
from kinhec.calibrate import robot_error
from kinhec.calibrate.corners import calibrate_corners
from kinhec.calibrate.frames import EYE_POSES, HAND_POSES, SETUPS, UNITS
from kinhec.calibrate.images import calibrate_images
from kinhec.calibrate.inputs import load_inputs
from kinhec.calibrate.options import MAX_OFFSET_S, Options, parse_options
from kinhec.calibrate.pairing import MIN_PEAK_CORR
from kinhec.calibrate.points import calibrate_points
from kinhec.calibrate.result import CalibrationResult
from kinhec.calibrate.stages.camera import solve_camera
from kinhec.calibrate.stages.outputs import single_camera_inputs
from kinhec.calibrate.stages.rig import solve_rig

__all__ = ["calibrate", "SETUPS", "HAND_POSES", "EYE_POSES", "UNITS", "MAX_OFFSET_S", "MIN_PEAK_CORR"]


def _from_images(images, hand, target, opts: Options) -> CalibrationResult:
    return calibrate_images(images, hand, target, setup=opts.setup, fmt=opts.fmt, hand_pose=opts.hand_pose,
                            units=opts.units, pairing=opts.pairing, intrinsics=opts.intrinsics,
                            save_corners=opts.save_corners, progress=opts.progress, workers=opts.workers,
                            fast_detection=opts.fast_detection, lens=opts.lens, known=opts.known,
                            partial=opts.partial)


def calibrate(hand=None, eye=(), *, setup: str | None = None, fmt: str | None = None, hand_pose: str | None = None,
              eye_pose: str | None = None, units: str | None = None, offset="auto", scale: bool | str = False,
              solver: str | None = None, force: bool = False, dataset=None, sequence: str | None = None,
              max_offset_s: float = MAX_OFFSET_S, corners=None, intrinsics=None, bag=None, images=None, target=None,
              pairing: str = "auto", save_corners=None, progress=None, rig_world: str = "auto",
              quat_order: str | None = None, intrinsics_std=None, robot_accuracy=None,
              stamp_unit: str | None = None, workers: int | None = None,
              fast_detection: bool = False, known=None, partial: bool = False, points=None,
              point_noise=None, lens: str | None = None) -> CalibrationResult:
    """Calibrate ``X`` (and ``Y``) from a hand pose file and one or more eye pose files, or from corners or images.

    The parameters, what it returns and raises: the module's documentation.  The stages, numbered there:
    1. options, 2. inputs, 3. conventions, 4. pairing, 5. solve, 6. uncertainty, 7. verdict, 8. outputs
    (one camera, :func:`~kinhec.calibrate.stages.camera.solve_camera`; a rig,
    :func:`~kinhec.calibrate.stages.rig.solve_rig`), then the robot's stated accuracy.
    """
    opts = parse_options(hand, eye, dataset=dataset, corners=corners, bag=bag, images=images, target=target,
                         sequence=sequence, scale=scale, robot_accuracy=robot_accuracy, setup=setup, fmt=fmt,
                         hand_pose=hand_pose, eye_pose=eye_pose, units=units, offset=offset, solver=solver,
                         force=force, max_offset_s=max_offset_s, intrinsics=intrinsics, pairing=pairing,
                         save_corners=save_corners, progress=progress, rig_world=rig_world, quat_order=quat_order,
                         intrinsics_std=intrinsics_std, stamp_unit=stamp_unit, workers=workers,
                         fast_detection=fast_detection, known=known, partial=partial, points=points,
                         point_noise=point_noise, lens=lens)  # 1. options
    if opts.kind == "images":
        res = _from_images(images, hand, target, opts)
    elif opts.kind == "points":
        res = calibrate_points(points, target=opts.target, setup=opts.setup, point_noise=opts.point_noise)
    elif opts.kind == "corners":
        res = calibrate_corners(corners, intrinsics=intrinsics, setup=opts.setup, intrinsics_prior=opts.intrinsics_std,
                                known=known, partial=partial)
    else:
        inp = load_inputs(hand, eye, opts, dataset=dataset, sequence=sequence, bag=bag)  # 2. inputs
        if inp.options.setup == "rig":
            return solve_rig(inp)  # 3.-8. per camera, then the rig
        o = inp.options
        dec = fw.check(inp.hand, inp.eyes[0], setup=o.setup_given, **o.firewall_options())  # 3. conventions
        res = solve_camera(dec, dec.reading.setup, o, o.eye_bias_prior)  # 3.-8.
        res.inputs = single_camera_inputs(inp.record, dec, inp.from_bag)
    robot_error.apply(res, opts.robot_level)
    return res
