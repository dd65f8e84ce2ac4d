"""``plan_poses``: the poses to record for a calibration, chosen by kinhec's own error bound.

See :mod:`kinhec.planner` for the method and ``docs/planner.md`` for the
criterion, the options and the measured behaviour.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import kinhec
from kinhec.geometry import se3
from kinhec.evaluate.bounds import inverse_information, null_directions
from kinhec.models.cameras import VISIBILITY_MARGIN_PX, TargetPreset, inside_image, pinhole_pixels, to_camera
from kinhec.models.robot_files import load_robot
from kinhec.util.errors import InputError
from kinhec.planner.candidates import N_VIEWS, SETUPS, Candidates, PlanLimits, Scene, feasibility, sample_candidates
from kinhec.planner.design import prior_information, select_poses
from kinhec.planner.expected import scene_information, scene_sigma_curve
from kinhec.planner.guesses import DEFAULT_GUESS_TOLERANCE, guesses_from_calibration, tolerance_from_std
from kinhec.planner.inputs import adjoint, planner_camera, planner_target
from kinhec.planner.model import PlannerNoise, pose_information, sigma_curve
from kinhec.planner.path import order_path, path_time
from kinhec.planner.trajectory import DEFAULT_DWELL_S, DEFAULT_SPEED, joint_trajectory_yaml, trajectory_times
from kinhec.models.robots import RobotModel
from kinhec.planner.figure import draw

__all__ = ["CRITERIA", "MAX_POSES", "N_RANDOM_DRAWS", "PosePlan", "plan_poses", "pose_from_xyz_qxyzw",
           "read_poses_csv", "csv_header", "check_plan"]  # fmt: skip

#: Design criteria (:mod:`kinhec.planner.design`).
CRITERIA = ("trace", "max_eig")
#: Most poses one plan may ask for.
MAX_POSES = 200
#: Random pose sets behind the "random poses" curve of the plan (median over them).
N_RANDOM_DRAWS = 20
#: A taken pose whose joints and flange pose are both given must agree to these [m, rad].
TAKEN_AGREEMENT_M = 1e-4
TAKEN_AGREEMENT_RAD = 1e-3
#: Above this guess tolerance (mm, deg) the plan suggests the two-stage workflow.
ROUGH_GUESS_TOLERANCE = (10.0, 2.0)
#: Fewest target points in the predicted image for a taken pose to count (PnP needs them).
MIN_TAKEN_POINTS = 4

_POSE_COLS = ("x", "y", "z", "qx", "qy", "qz", "qw")


def csv_header(dof: int) -> list[str]:
    """Column names of a pose file: ``q1 .. q<dof>`` [rad] then ``x y z`` [m] and ``qx qy qz qw`` (flange in base)."""
    return [f"q{i + 1}" for i in range(dof)] + list(_POSE_COLS)


def pose_from_xyz_qxyzw(value, name: str) -> np.ndarray:
    """A pose ``(4, 4)`` from ``x, y, z, qx, qy, qz, qw`` (7 numbers or a comma-separated string) or a ``(4, 4)`` matrix."""
    if isinstance(value, str):
        parts = [p for p in value.replace(" ", ",").split(",") if p]
        try:
            value = [float(p) for p in parts]
        except ValueError:
            raise InputError(f"{name}: expected 7 comma-separated numbers x,y,z,qx,qy,qz,qw, got {value!r}") from None
    a = np.asarray(value, dtype=np.float64) if not isinstance(value, np.ndarray) else value.astype(np.float64)
    if a.shape == (4, 4):
        return se3.check_transforms(a, name)
    if a.shape != (7,):
        raise InputError(f"{name}: expected 7 numbers x,y,z,qx,qy,qz,qw (m, unit quaternion) or a (4, 4) pose, "
                         f"got shape {a.shape}")  # fmt: skip
    if not np.isfinite(a).all():
        raise InputError(f"{name}: expected finite numbers, got {a.tolist()}")
    nq = float(np.linalg.norm(a[3:]))
    if abs(nq - 1.0) > 1e-3:
        raise InputError(f"{name}: expected a unit quaternion qx,qy,qz,qw (norm 1), got norm {nq:.6g}")
    q_wxyz = np.array([a[6], a[3], a[4], a[5]]) / nq
    return se3.transform_from_pq(a[:3], q_wxyz, normalize=True)


def _xyz_qxyzw(T: np.ndarray) -> np.ndarray:
    """``(N, 7)`` rows ``x, y, z, qx, qy, qz, qw`` of poses ``(N, 4, 4)`` (``qw >= 0``)."""
    p, q = se3.pq_from_transform(T, check=False)
    return np.concatenate([p, q[..., 1:], q[..., :1]], axis=-1)


def read_poses_csv(path, robot: RobotModel) -> tuple[np.ndarray, np.ndarray | None]:
    """Poses already taken, from a CSV file in the planner's own format.

    The header names the columns: ``q1 .. q<dof>`` [rad] and/or ``x y z qx qy qz qw`` (flange in the base frame
    [m], unit quaternion); commas separate the values.  With joints the flange pose is their forward kinematics
    (and must agree with the pose columns, when present, to :data:`TAKEN_AGREEMENT_M` and
    :data:`TAKEN_AGREEMENT_RAD`).

    Returns
    -------
    T_base_ee : ndarray, shape (K, 4, 4)
    q : ndarray, shape (K, dof) or None
        The joints, when the file has them.

    Raises
    ------
    InputError
        A missing or unknown column, a value that is not a finite number, joints and pose that disagree.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    rows = [r for r in csv.reader(io.StringIO(text)) if any(c.strip() for c in r)]
    if not rows:
        raise InputError(f"{path}: expected a header line ({','.join(csv_header(robot.dof))}), got an empty file")
    header = [c.strip().lower() for c in rows[0]]
    q_cols = [f"q{i + 1}" for i in range(robot.dof)]
    known = set(q_cols) | set(_POSE_COLS)
    unknown = [c for c in header if c not in known]
    if unknown:
        raise InputError(f"{path}: unknown column(s) {', '.join(unknown)}; expected {','.join(csv_header(robot.dof))} "
                         f"(robot {robot.name} has {robot.dof} joints)")  # fmt: skip
    has_q = any(c in header for c in q_cols)
    has_T = any(c in header for c in _POSE_COLS)
    for flag, cols, what in ((has_q, q_cols, "joint"), (has_T, _POSE_COLS, "pose")):
        missing = [c for c in cols if c not in header]
        if flag and missing:
            raise InputError(f"{path}: {what} columns incomplete, missing {', '.join(missing)}")
    data = np.zeros((len(rows) - 1, len(header)))
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != len(header):
            raise InputError(f"{path}: line {i}: expected {len(header)} values, got {len(r)}")
        try:
            data[i - 2] = [float(c) for c in r]
        except ValueError:
            raise InputError(f"{path}: line {i}: expected numbers, got {','.join(r)!r}") from None
        if not np.isfinite(data[i - 2]).all():
            raise InputError(f"{path}: line {i}: expected finite numbers, got {','.join(r)!r}")
    col = {c: k for k, c in enumerate(header)}
    q = data[:, [col[c] for c in q_cols]] if has_q else None
    T_file = None
    if has_T:
        P = data[:, [col[c] for c in _POSE_COLS]]
        T_file = np.zeros((P.shape[0], 4, 4))
        for i, row in enumerate(P):
            T_file[i] = pose_from_xyz_qxyzw(row, f"{path}: line {i + 2}")
    if q is None:
        return T_file, None
    T = robot.fk(q) if q.shape[0] else np.zeros((0, 4, 4))
    if T_file is not None and q.shape[0]:
        dp = np.linalg.norm(T[:, :3, 3] - T_file[:, :3, 3], axis=-1)
        dr = se3.rotation_angle(np.swapaxes(T[:, :3, :3], 1, 2) @ T_file[:, :3, :3], check=False)
        bad = np.flatnonzero((dp > TAKEN_AGREEMENT_M) | (dr > TAKEN_AGREEMENT_RAD))
        if bad.size:
            i = int(bad[0])
            raise InputError(f"{path}: line {i + 2}: the joints' forward kinematics ({robot.name}) is "
                             f"{1000 * dp[i]:.3f} mm and {math.degrees(dr[i]):.4f} deg from the pose columns; "
                             "expected them to agree (wrong robot or joint order?)")  # fmt: skip
    return T, q


@dataclass
class PosePlan:
    """A plan: the poses to take, in path order, and what the bound predicts.

    Attributes
    ----------
    q : ndarray, shape (K, dof)
        Joint configurations [rad], in the order to visit them.
    T_base_ee : ndarray, shape (K, 4, 4)
        Flange poses in the base frame (forward kinematics of ``q``) [m].
    T_cam_target : ndarray, shape (K, 4, 4)
        Predicted target pose in the camera frame (from the guesses).
    sigma_mm : ndarray, shape (K,)
        Predicted RMS translation error of ``X`` [mm] after each pose (taken poses included); ``inf`` while
        undetermined.
    sigma_rot_deg : ndarray, shape (K,)
        The same for the rotation of ``X`` [deg].
    sigma_taken_mm : float
        Predicted error from the taken poses alone (``inf`` without them or when they do not determine ``X``).
    random_sigma_mm : ndarray, shape (K,)
        Median over :data:`N_RANDOM_DRAWS` sets of random candidates (after the taken poses) of the same.
    details : dict
        Everything else written to the JSON file (inputs, limits, counts, per-pose checks, runtime).
    """

    scene: Scene
    q: np.ndarray
    T_base_ee: np.ndarray
    T_cam_target: np.ndarray
    sigma_mm: np.ndarray
    sigma_rot_deg: np.ndarray
    sigma_taken_mm: float
    random_sigma_mm: np.ndarray
    T_taken: np.ndarray
    details: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.q.shape[0])

    def to_csv(self) -> str:
        """The CSV text: header ``q1 .. qK,x,y,z,qx,qy,qz,qw`` and one line per pose (17 significant digits)."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(csv_header(self.scene.robot.dof))
        for qi, pi in zip(self.q, _xyz_qxyzw(self.T_base_ee)):
            w.writerow([format(float(v), ".17g") for v in np.concatenate([qi, pi])])
        return buf.getvalue()

    def to_dict(self) -> dict:
        """The JSON content (``null`` for an undetermined error)."""
        fin = lambda a: [float(v) if np.isfinite(v) else None for v in np.asarray(a, dtype=float)]  # noqa: E731
        d = dict(self.details)
        d.update(
            sigma_mm=fin(self.sigma_mm),
            sigma_rot_deg=fin(self.sigma_rot_deg),
            sigma_taken_mm=fin([self.sigma_taken_mm])[0],
            random_sigma_mm=fin(self.random_sigma_mm),
        )
        return d

    def write(self, out) -> tuple[Path, Path]:
        """Write the CSV to ``out`` and the JSON beside it (``out`` with the suffix ``.json``); return both paths."""
        out = Path(out)
        if out.suffix.lower() == ".json":
            raise InputError(f"--out: expected the CSV file name (the JSON goes beside it), got {out}")
        out.parent.mkdir(parents=True, exist_ok=True)
        js = out.with_suffix(".json")
        out.write_text(self.to_csv(), encoding="utf-8")
        js.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")
        return out, js

    def trajectory_yaml(self, speed: float = DEFAULT_SPEED, dwell_s: float = DEFAULT_DWELL_S) -> str:
        """The plan as a ROS 2 ``JointTrajectory`` YAML (:mod:`kinhec.planner.trajectory`)."""
        rob = self.scene.robot
        q0 = np.asarray(self.details.get("path_start_q", rob.home_q_rad), dtype=np.float64)
        t = trajectory_times(rob, q0, self.q, speed, dwell_s)
        d = self.details
        head = [f"trajectory_msgs/msg/JointTrajectory: {len(self)} poses planned by kinhec plan-poses "
                f"{d.get('kinhec_version', '')}", f"robot {d['robot']}, {d['setup']}, camera {d['camera']}, "
                f"target {d['target']}", f"timing: moves at {speed:g} of every joint's speed cap from "
                f"{'the last taken pose' if d.get('n_taken') else 'the model home'} "
                f"[{', '.join(f'{v:.6g}' for v in q0)}] rad{' (m for a prismatic joint)' if rob.joint_types else ''}, "
                f"{dwell_s:g} s still at each pose"]  # fmt: skip
        names = d.get("joint_names") or [f"j{i + 1}" for i in range(rob.dof)]
        return joint_trajectory_yaml(self.q, t, names, d.get("base_frame") or "base", self.sigma_mm, head)

    def write_trajectory(self, path, speed: float = DEFAULT_SPEED, dwell_s: float = DEFAULT_DWELL_S) -> Path:
        """Write :meth:`trajectory_yaml` to ``path``; return it."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.trajectory_yaml(speed, dwell_s), encoding="utf-8")
        return path

    def figure(self, path) -> Path:
        """Draw the plan (:func:`kinhec.planner.figure.draw`) to ``path``."""

        return draw(self, path)


def _check_int(v, name: str, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= int(v) <= hi:
        raise InputError(f"{name}: expected an integer in [{lo}, {hi}], got {v!r}")
    return int(v)


def _taken_poses(taken, robot: RobotModel):
    if taken is None:
        return np.zeros((0, 4, 4)), None, None
    if isinstance(taken, (str, Path)):
        T, q = read_poses_csv(taken, robot)
        return T, q, str(taken)
    a = np.asarray(taken, dtype=np.float64)
    if a.ndim == 2 and a.shape[1] == robot.dof:
        a = se3.check_array(a, "taken", (robot.dof,))
        return robot.fk(a) if a.shape[0] else np.zeros((0, 4, 4)), a, None
    if a.ndim == 3 and a.shape[1:] == (4, 4):
        return se3.check_transforms(a, "taken"), None, None
    raise InputError(f"taken: expected a CSV file, joints (K, {robot.dof}) or flange poses (K, 4, 4), got shape {a.shape}")


def plan_poses(robot, setup: str, camera, target, X_guess, Y_guess, n: int, *, taken=None,
               stop_std_mm: float | None = None, seed: int = 0, noise: PlannerNoise | None = None,
               criterion: str = "trace", limits: PlanLimits | None = None, n_views: int = N_VIEWS,
               calibration=None, base_link: str | None = None, tip_link: str | None = None,
               image_size=None, min_visible_fraction: float | None = None) -> PosePlan:  # fmt: skip
    """Plan the ``n`` poses that minimise the predicted error of ``X``, in a short joint-space order.

    Parameters
    ----------
    robot : str, Path or RobotModel
        An arm of :data:`kinhec.models.robots.ROBOT_NAMES` (not ``free6d``), a DH-table YAML or a URDF with
        ``base_link`` and ``tip_link`` (:mod:`kinhec.models.robot_files`).
    setup : {"eye_in_hand", "eye_to_hand"}
    camera : str, Path or CameraPreset
        A camera preset (:mod:`kinhec.models.cameras`) or an intrinsics file (OpenCV YAML, Kalibr camchain,
        ``kinhec calibrate`` JSON; :mod:`kinhec.planner.inputs`).
    target : str, Path or TargetPreset
        A target preset or a ``calibrate --images`` spec (``chessboard:9x6:0.025``, ...); eye-to-hand the target
        is the marker on the flange.  A spec's target frame is the printed target's own (OpenCV's for a
        chessboard: origin at corner 0, ``z`` into the board), a preset's kinhec's centred one.
    X_guess : array_like, shape (7,) or (4, 4), or str, or None
        Guess of ``T_ee_cam`` (eye-in-hand) or ``T_ee_marker`` (eye-to-hand, in the target's frame):
        ``x, y, z, qx, qy, qz, qw`` [m].  None with ``calibration``: the calibration's ``X``.
    Y_guess : array_like, shape (7,) or (4, 4), or str, or None
        Guess of ``T_base_world`` (the board's target frame in the robot base, eye-in-hand) or ``T_base_cam``
        (eye-to-hand).  None with ``calibration``: the calibration's ``Y``.
    n : int
        Poses to plan (1 .. :data:`MAX_POSES`).
    taken : str, Path or array_like, optional
        Poses already recorded: a CSV file as written by :meth:`PosePlan.write` (joints and/or flange poses),
        joints ``(K, dof)`` or flange poses ``(K, 4, 4)``.  Their information is counted first and the path
        starts at the last of them.
    stop_std_mm : float, optional
        Stop adding poses once the predicted RMS translation error of ``X`` is at or below this [mm].
    seed : int
        Seed of every random draw (candidates, IK restarts, the random-pose comparison).
    noise : PlannerNoise, optional
        Measurement noise (default: PnP with 0.5 px pixel noise, robot level ``r1``).
    criterion : {"trace", "max_eig"}
        Trace or largest eigenvalue of the translation block of ``X``'s covariance.
    limits : PlanLimits, optional
        What a usable pose is (margins, view angle, conditioning) and how far the guesses may be off (default
        :class:`PlanLimits`: 50 mm and 10 deg; with ``calibration``, the tolerance its standard deviations
        give, :func:`kinhec.planner.guesses.tolerance_from_std`).
    n_views : int
        Viewpoints solved by IK for the candidate set.
    calibration : str or Path, optional
        The JSON of ``kinhec calibrate --json`` from the poses recorded so far: its ``X`` and ``Y`` replace the
        guesses given as None, and its standard deviations set the guess tolerance unless ``limits`` is given
        (:func:`kinhec.planner.guesses.guesses_from_calibration`).  With ``taken`` the poses of that
        calibration, this plans the second stage of the two-stage workflow (``docs/planner.md``).
    base_link, tip_link : str, optional
        The chain of a URDF ``robot``.
    image_size : str or (int, int), optional
        ``WIDTHxHEIGHT`` of an intrinsics file's images (needed for a ``kinhec calibrate`` JSON, checked otherwise).
    min_visible_fraction : float, optional
        Replaces ``limits.min_visible_fraction`` (also of a tolerance set from ``calibration``): the smallest
        fraction of the perturbed scenes of the guess tolerance in which a pose must see the target (default
        0.75, :data:`kinhec.planner.candidates.MIN_VISIBLE_FRACTION`, the chance of losing it weighed by the
        search; 1: every pose safe, as a first stage of the two-stage workflow needs, at about twice the bound
        from rough guesses eye-in-hand, docs/planner.md).

    Returns
    -------
    PosePlan

    Raises
    ------
    InputError
        Bad arguments; a taken file that cannot be read; too few feasible candidates (the message says where
        they were lost).
    """
    t0 = time.process_time()
    rob = load_robot(robot, base_link=base_link, tip_link=tip_link) if isinstance(robot, (str, Path)) else robot
    if not isinstance(rob, RobotModel):
        raise InputError(f"robot: expected a robot name or RobotModel, got {type(robot).__name__}")
    if rob.is_free:
        raise InputError(f"robot: expected an arm with joints, got {rob.name!r} (no kinematic chain to plan for)")
    if setup not in SETUPS:
        raise InputError(f"setup: expected one of {', '.join(SETUPS)}, got {setup!r}")
    cam, cam_info = planner_camera(camera, image_size=image_size)
    ptgt = planner_target(target)
    tgt: TargetPreset = ptgt.preset
    calib_info = None
    tolerance_source = "given" if limits is not None else "default"
    if calibration is not None:
        X_cal, Y_cal, _, calib_info = guesses_from_calibration(calibration, setup)
        X_guess = X_cal if X_guess is None else X_guess
        Y_guess = Y_cal if Y_guess is None else Y_guess
    for v, name in ((X_guess, "X_guess"), (Y_guess, "Y_guess")):
        if v is None:
            raise InputError(f"{name}: expected x,y,z,qx,qy,qz,qw or a calibration to take it from, got none")
    X_user = X = pose_from_xyz_qxyzw(X_guess, "X_guess")
    Y_user = Y = pose_from_xyz_qxyzw(Y_guess, "Y_guess")
    # a spec target: the guesses are in its own frame, the planner works in the centred one (kinhec.planner.inputs);
    # the information about right perturbations in the user's frame is A^T F A (X_user = X T_ct, so dx = Ad(T_ct) dx')
    A_user = np.eye(12)
    if ptgt.T_centred_target is not None:
        T_ct = ptgt.T_centred_target
        block = slice(6, 12) if setup == "eye_in_hand" else slice(0, 6)
        A_user[block, block] = adjoint(T_ct)
        if setup == "eye_in_hand":
            Y = Y_user @ se3.invert_transform(T_ct, check=False)
        else:
            X = X_user @ se3.invert_transform(T_ct, check=False)
    to_user = lambda F: A_user.T @ F @ A_user  # noqa: E731
    n = _check_int(n, "n", 1, MAX_POSES)
    seed = _check_int(seed, "seed", 0, 2**63 - 1)
    n_views = _check_int(n_views, "n_views", 10, 1_000_000)
    if stop_std_mm is not None:
        if isinstance(stop_std_mm, bool) or not isinstance(stop_std_mm, (int, float)) or not (
                math.isfinite(stop_std_mm) and stop_std_mm > 0):
            raise InputError(f"stop_std_mm: expected a number > 0 [mm], got {stop_std_mm!r}")
    if criterion not in CRITERIA:
        raise InputError(f"criterion: expected one of {', '.join(CRITERIA)}, got {criterion!r}")
    noise = PlannerNoise() if noise is None else noise
    if not isinstance(noise, PlannerNoise):
        raise InputError(f"noise: expected a PlannerNoise, got {type(noise).__name__}")
    scene = Scene(rob, setup, cam, tgt, X, Y)
    warnings: list[str] = []

    # poses already taken
    T_taken, q_taken, taken_src = _taken_poses(taken, rob)
    F_taken = np.zeros((12, 12))
    info_taken = np.zeros((0, 12, 12))
    if T_taken.shape[0]:
        C_taken = scene.observed(T_taken)
        uv, depth = pinhole_pixels(cam, to_camera(C_taken, tgt.points_m))
        n_in = inside_image(cam, uv, depth, VISIBILITY_MARGIN_PX).sum(axis=-1)
        seen = n_in >= MIN_TAKEN_POINTS
        if not seen.all():
            rows = ", ".join(str(i + 1) for i in np.flatnonzero(~seen))
            warnings.append(f"taken pose(s) {rows}: the guesses put fewer than {MIN_TAKEN_POINTS} target points in "
                            "the image; not counted (check --X-guess/--Y-guess)")  # fmt: skip
        if seen.any():
            info_taken = to_user(pose_information(C_taken[seen], X, setup, noise, cam, tgt))
            F_taken = info_taken.sum(axis=0)
    sig_taken = sigma_curve(info_taken)["trans_rms_mm"][-1] if info_taken.shape[0] else math.inf
    if limits is None and calib_info is not None:
        (mm, deg), tolerance_source = _calibrated_tolerance(calib_info, info_taken)
        if mm > DEFAULT_GUESS_TOLERANCE[0] or deg > DEFAULT_GUESS_TOLERANCE[1]:
            warnings.append(f"{calib_info['file']}: X and Y are known only to {mm:.0f} mm and {deg:.1f} deg; planned "
                            f"with the default tolerance {DEFAULT_GUESS_TOLERANCE[0]:g} mm, "
                            f"{DEFAULT_GUESS_TOLERANCE[1]:g} deg")  # fmt: skip
            tolerance_source = "default (the calibration is less precise)"
        else:
            limits = PlanLimits(guess_tolerance_mm=mm, guess_tolerance_deg=deg)
    limits = PlanLimits() if limits is None else limits
    if min_visible_fraction is not None:
        if isinstance(min_visible_fraction, bool) or not isinstance(min_visible_fraction, (int, float)):
            raise InputError(f"min_visible_fraction: expected a number in [0, 1], got {min_visible_fraction!r}")
        limits = dataclasses.replace(limits, min_visible_fraction=float(min_visible_fraction))

    ss = np.random.SeedSequence(seed)
    rng_cand, rng_random = (np.random.default_rng(s) for s in ss.spawn(2))
    stop_var = None if stop_std_mm is None else (stop_std_mm / 1000.0) ** 2
    stopped = "n"
    if stop_std_mm is not None and sig_taken <= stop_std_mm:  # nothing to plan: no candidates needed
        cand = Candidates.empty(rob.dof, {"skipped": "the taken poses meet stop_std_mm"})
        info_s = np.zeros((1, 0, 12, 12))
        chosen = np.zeros(0, dtype=np.int64)
        stopped = "stop_std_mm"
    else:
        cand = sample_candidates(scene, rng_cand, limits, n_views=n_views)
        if len(cand) < 3:
            tol = limits.guess_tolerance_mm > 0 or limits.guess_tolerance_deg > 0
            hint = (f"; the guesses are trusted to {limits.guess_tolerance_mm:g} mm and {limits.guess_tolerance_deg:g} "
                    "deg: give a smaller --guess-tolerance if they are better" if tol else "")  # fmt: skip
            if rob.dof < 6:
                hint += (f"; {rob.name} has {rob.dof} joints and cannot turn the camera or marker towards the target: "
                         "the target must lie where the machine's fixed viewing direction sees it")  # fmt: skip
            raise InputError(
                f"{rob.name} {setup} with camera {cam.name} and target {tgt.name}: expected at least 3 feasible "
                f"candidate poses, got {len(cand)} ({_lost(cand.counts)}); check the guesses (is the target in reach "
                f"and in front of the camera?) or loosen the limits{hint}")  # fmt: skip
        info_s = to_user(scene_information(scene, cand.T_base_ee, noise, limits))  # (S, M, 12, 12)
        n_eff = min(n, len(cand))
        if n_eff < n:
            warnings.append(f"only {len(cand)} feasible candidates for {n} poses; planned {n_eff}")
            stopped = "candidates"
        # the criterion in each perturbed scene, averaged over them (kinhec.planner.expected): poses lost together
        # leave a scene with little information, which the averaged information would hide
        chosen, _ = select_poses(info_s, n_eff, prior_information() + F_taken, criterion=criterion,
                                 stop_variance=stop_var)  # fmt: skip
        if stop_std_mm is not None and chosen.size < n_eff:
            stopped = "stop_std_mm"
    q_start = q_taken[-1] if q_taken is not None and q_taken.shape[0] else rob.home_q_rad
    chosen = chosen[order_path(rob, q_start, cand.q[chosen])]
    plan = cand.take(chosen)
    curve = (scene_sigma_curve(info_s[:, chosen], F_taken) if chosen.size else
             {"trans_rms_mm": np.zeros(0), "rot_rms_deg": np.zeros(0)})  # fmt: skip

    # the same curve for random feasible candidates (median over N_RANDOM_DRAWS sets)
    k = chosen.size
    rand = np.full((N_RANDOM_DRAWS, k), math.inf)
    for d in range(N_RANDOM_DRAWS):
        pick = rng_random.choice(len(cand), size=min(k, len(cand)), replace=False)
        rand[d, : pick.size] = scene_sigma_curve(info_s[:, pick], F_taken)["trans_rms_mm"]
    random_curve = np.median(rand, axis=0) if k else np.zeros(0)
    quart = np.percentile(rand, [25, 75], axis=0, method="nearest") if k else np.zeros((2, 0))

    details = {
        "kinhec_version": kinhec.__version__,
        "robot": rob.name,
        "robot_source": rob.source if isinstance(robot, (str, Path)) and rob.source else None,
        "joint_names": list(rob.joint_names) or [f"j{i + 1}" for i in range(rob.dof)],
        "base_frame": rob.base_frame or "base",
        "setup": setup,
        "camera": cam.name,
        "camera_file": cam_info.get("file"),
        "camera_intrinsics": cam_info.get("intrinsics"),
        "target": tgt.name,
        "target_frame": ptgt.frame,
        "X_guess": _xyz_qxyzw(X_user[None])[0].tolist(),
        "Y_guess": _xyz_qxyzw(Y_user[None])[0].tolist(),
        "X_name": "T_ee_cam" if setup == "eye_in_hand" else "T_ee_marker",
        "Y_name": "T_base_world" if setup == "eye_in_hand" else "T_base_cam",
        "pose_columns": "x y z [m], qx qy qz qw: the flange pose T_base_ee; q1.. [rad]" + (
            "; metres for the prismatic joints " + ", ".join(f"q{i + 1}" for i in np.flatnonzero(rob.prismatic))
            if rob.joint_types else ""),
        "seed": seed,
        "n_requested": n,
        "n_planned": int(k),
        "n_taken": int(T_taken.shape[0]),
        "n_taken_counted": int(info_taken.shape[0]),
        "taken_file": taken_src,
        "stop_std_mm": stop_std_mm,
        "stopped_by": stopped,
        "criterion": criterion,
        "criterion_description": ("trace of the translation block of X's covariance (mean squared translation error "
                                  "of X, Y unknown)" if criterion == "trace" else
                                  "largest eigenvalue of the translation block of X's covariance"),  # fmt: skip
        "sigma_description": "predicted RMS translation error of X [mm] (sqrt of the trace of its Cramér-Rao "
                             "covariance) after each pose of the path, taken poses counted first; under a guess "
                             "tolerance the median over the perturbed scenes of that bound in each, a pose counted "
                             "where it sees the target",
        "noise": noise.to_dict(),
        "limits": limits.to_dict(),
        "candidates": dict(cand.counts),
        "random_sigma_quartiles_mm": [[float(v) if np.isfinite(v) else None for v in row] for row in quart],
        "path_time_s": path_time(rob, q_start, plan.q) if k else 0.0,
        "path_start_q": [float(v) for v in q_start],
        "poses": [
            {"view_angle_deg": float(a), "target_depth_m": float(dd), "margin_px": float(mg), "condition": float(c),
             "visible_fraction": float(v)}
            for a, dd, mg, c, v in zip(plan.view_angle_deg, plan.depth_m, plan.margin_px, plan.condition,
                                       plan.visible_fraction)
        ],
        "warnings": warnings,
        "guesses_from": calib_info,
        "guess_tolerance_source": tolerance_source,
        "notes": _notes(limits, setup),
        "undetermined": [],
        "sigma_given_undetermined_mm": None,
    }
    if k and not np.isfinite(curve["trans_rms_mm"][-1]):  # say what is undetermined, at the guesses themselves
        F_plan = to_user(pose_information(plan.C, X, setup, noise, cam, tgt)).sum(axis=0) + F_taken
        details["undetermined"] = undetermined_components(F_plan, X_user, Y_user, rob)
        details["sigma_given_undetermined_mm"] = sigma_given_undetermined_mm(F_plan)
    details["cpu_time_s"] = time.process_time() - t0
    C_user = plan.C if ptgt.T_centred_target is None else plan.C @ ptgt.T_centred_target
    return PosePlan(scene, plan.q, plan.T_base_ee, C_user, curve["trans_rms_mm"], curve["rot_rms_deg"],
                    float(sig_taken), random_curve, T_taken, details)  # fmt: skip


def _calibrated_tolerance(calib_info: dict, info_taken: np.ndarray) -> tuple[tuple[float, float], str]:
    """The guess tolerance ``(mm, deg)`` after a calibration, and where it came from: from its standard deviations,
    or from the bound of the taken poses (under the plan's noise model) where that is larger; a calibration from a
    few poses may understate them."""
    tol = tolerance_from_std(calib_info["X_std"], calib_info["Y_std"])
    source = "calibration's standard deviations"
    if info_taken.shape[0]:
        cov, unidentified = inverse_information(info_taken.sum(axis=0))
        if not any(unidentified):
            sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
            bound = tolerance_from_std(sd[:6], sd[6:])
            if bound[0] > tol[0] or bound[1] > tol[1]:
                source = "bound of the taken poses where larger"
                tol = (max(tol[0], bound[0]), max(tol[1], bound[1]))
    return tol, f"guesses_from: {source}"


def _notes(limits: PlanLimits, setup: str) -> list[str]:
    """Advice printed with the plan: the two-stage workflow when the guesses are rough."""
    mm, deg = limits.guess_tolerance_mm, limits.guess_tolerance_deg
    if mm <= ROUGH_GUESS_TOLERANCE[0] and deg <= ROUGH_GUESS_TOLERANCE[1]:
        return []
    frac = limits.min_visible_fraction
    if frac >= 1.0:
        note = (f"the guesses are trusted to {mm:g} mm and {deg:g} deg, so every pose keeps the target in view of "
                "guesses that far off")  # fmt: skip
    else:
        note = (f"the guesses are trusted to {mm:g} mm and {deg:g} deg: every pose sees the target in at least "
                f"{frac:.0%} of the scenes that far off and the plan weighs the chance of losing it, so a few poses "
                "may not see it (skip those when recording)")  # fmt: skip
    if setup == "eye_in_hand":
        note += ("; for a plan close to one from the true X and Y, plan and record about 5 poses that never lose "
                 "the target first (--n 5 --min-visible-fraction 1), calibrate them (kinhec calibrate "
                 "--hand HAND.csv --eye EYE.csv --setup eye_in_hand --hand-pose base_T_ee --eye-pose cam_T_target --json "
                 "first.json: HAND the flange poses in the robot's base, as this plan's CSV holds them, EYE the "
                 "camera's poses of the target (T_cam_target, as solvePnP gives them); with the poses "
                 "read the other way X and Y exchange and fit exactly as well, so the direction is stated), then plan "
                 "the rest with --taken <first plan CSV> --guesses-from first.json (docs/planner.md)")  # fmt: skip
    return [note]


def _lost(counts: dict) -> str:
    keys = ("viewpoints_drawn", "joint_draws", "in_reach", "ik_solved", "within_limits", "conditioned", "above_floor",
            "target_visible_at_guesses", "target_visible", "feasible")  # fmt: skip
    return ", ".join(f"{k.replace('_', ' ')} {counts[k]}" for k in keys if k in counts)


def check_plan(plan: PosePlan) -> dict:
    """Re-check every planned pose from scratch: forward kinematics, limits and visibility (whole arrays).

    Returns
    -------
    dict
        ``fk_error_m`` (K,) (distance between ``fk(q)`` and the stored flange pose, also from the CSV text) and
        the boolean (K,) arrays of :func:`kinhec.planner.candidates.feasibility`.
    """
    sc = plan.scene
    f = feasibility(sc, plan.q, PlanLimits(**{k: v for k, v in plan.details["limits"].items()}))
    f["fk_error_m"] = np.abs(sc.robot.fk(plan.q) - plan.T_base_ee).max(axis=(-1, -2))
    return f


_AXIS_NAMES = ("x", "y", "z")


def _direction_words(u: np.ndarray, frame: str) -> str:
    """``u`` (unit, 3) in words: "along the flange's z axis" when within 1 deg of an axis, else its components."""
    k = int(np.argmax(np.abs(u)))
    if abs(u[k]) >= math.cos(math.radians(1.0)):
        return f"along the {frame}'s {'-' if u[k] < 0 else ''}{_AXIS_NAMES[k]} axis"
    return f"along ({u[0]:.3f}, {u[1]:.3f}, {u[2]:.3f}) in the {frame} frame"


def undetermined_components(F: np.ndarray, X: np.ndarray, Y: np.ndarray, robot: RobotModel) -> list[str]:
    """What the information ``F`` (12, 12; right perturbations of ``X`` then ``Y``) leaves undetermined, in words.

    One sentence per null direction (:func:`kinhec.evaluate.bounds.null_directions`): each part of it (rotation or
    translation of ``X`` or ``Y``) larger than 1e-3 of the whole, as a direction in the flange frame (``X``) or the
    base frame (``Y``); for a robot with fewer than six joints the reason is added (its motions turn about too few
    axes: a machine whose flange stays level turns about the vertical only, and the offset along it is not seen).
    """
    out = []
    for v in null_directions(F):
        words = []
        for blk, T, what, frame in ((slice(0, 3), X, "X's rotation", "flange"), (slice(3, 6), X, "X's translation",
                                    "flange"), (slice(6, 9), Y, "Y's rotation", "base"),
                                    (slice(9, 12), Y, "Y's translation", "base")):  # fmt: skip
            u = v[blk]
            if np.linalg.norm(u) < 1e-3:
                continue
            words.append(f"{what} {_direction_words(T[:3, :3] @ (u / np.linalg.norm(u)), frame)}")
        text = " together with ".join(words)
        if robot.dof < 6:
            text += (f" ({robot.name} has {robot.dof} joints: its motions turn about too few axes to separate them; "
                     "measure this offset another way, e.g. a known height)")  # fmt: skip
        out.append(text)
    return out


#: Information [1/m^2] of the prior that stands for a component measured another way.
_KNOWN_INFORMATION = 1e12


def sigma_given_undetermined_mm(F: np.ndarray) -> float | None:
    """Predicted RMS translation error of ``X`` [mm] once the undetermined components of ``F`` are known: each null
    direction's ``X``-translation part is added as a known component (a prior of :data:`_KNOWN_INFORMATION`); None
    when the translation stays undetermined (a null direction without an ``X``-translation part)."""
    F = np.array(F, dtype=np.float64)
    for v in null_directions(F):
        u = np.zeros(12)
        u[3:6] = v[3:6]
        if np.linalg.norm(u) < 1e-3:
            continue
        u /= np.linalg.norm(u)
        F += _KNOWN_INFORMATION * np.outer(u, u)
    cov, unidentified = inverse_information(F)
    if unidentified[1]:
        return None
    return 1000.0 * math.sqrt(max(float(np.trace(cov[3:6, 3:6])), 0.0))
