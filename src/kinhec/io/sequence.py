"""The :class:`Sequence` object: both streams as numpy arrays, the ground truth, and the pose pairs.

A :class:`Sequence` holds the index row (``info``), a :class:`RobotStream`, a
:class:`CameraStream` and the ground truth ``X``, ``Y``; it is built from the
stored tables (:meth:`Sequence.from_tables`, also straight from the
generator's tables without going through disk).

Pairing protocol of :meth:`Sequence.axyb_poses`: synchronous sequences are
paired row by row (same clock, frame-aligned rows); for asynchronous ones the
*measured* robot stream is interpolated (SLERP on rotations, linear on
translations) at the camera stamps shifted back by the clock offset,
``t_camera - time_offset``.  Frames without a camera measurement (NaN) or
outside the robot stream's time range are dropped.  With ``A_i = T_base_ee(i)``
and ``B_i = inv(T_cam_target(i))`` (eye-in-hand, ``X = T_ee_cam``,
``Y = T_base_world``) or ``B_i = T_cam_target(i)`` (eye-to-hand,
``X = T_ee_marker``, ``Y = T_base_cam``), every pair satisfies
``A_i X = Y B_i`` on ground truth.

The ``sync`` column holds ``"synchronous"`` or ``"asynchronous"`` (the
published spellings); when reading, any value starting with ``"async"``
(case-insensitive) means asynchronous and everything else synchronous
(:func:`kinhec.io.is_asynchronous`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa

from kinhec.geometry import se3
from kinhec.util import jsonutil
from kinhec.util.errors import DatasetFormatError, InputError
from kinhec.io._common import is_asynchronous, is_missing
from kinhec.io.tables import bool_column, conform_table, float_column, int_column, joint_matrix, poses_from_table
from kinhec.geometry.motion import (
    KEYFRAME_MAX,
    KEYFRAME_MIN_ROT_DEG,
    KEYFRAME_MIN_TRANS_M,
    select_keyframes,
)
from kinhec.io.schema import CAMERA_SCHEMA, CONFIGURATIONS, ROBOT_SCHEMA, pose_columns

__all__ = ["RobotStream", "CameraStream", "Sequence"]


# --------------------------------------------------------------------------- #
# the two streams
# --------------------------------------------------------------------------- #
@dataclass(repr=False, eq=False)
class RobotStream:
    """Robot stream of a sequence (robot clock = reference clock).

    Attributes
    ----------
    t : ndarray, shape (N,)
        Time stamps [s].
    q_meas, q_gt : ndarray, shape (N, dof)
        Encoder and true joint positions [rad]; ``(N, 0)`` for ``free6d``.
    T_base_ee_gt, T_base_ee_meas : ndarray, shape (N, 4, 4)
        Flange pose in the robot base frame, true and as reported.
    frame : ndarray of int, shape (N,)
        Frame numbers as stored.
    """

    t: np.ndarray
    q_meas: np.ndarray
    q_gt: np.ndarray
    T_base_ee_gt: np.ndarray
    T_base_ee_meas: np.ndarray
    frame: np.ndarray

    def __len__(self) -> int:
        return int(self.t.shape[0])

    @property
    def dof(self) -> int:
        """Number of joints (0 for ``free6d``)."""
        return int(self.q_gt.shape[1])

    def __repr__(self) -> str:
        return f"RobotStream({len(self)} frames, dof={self.dof})"


@dataclass(repr=False, eq=False)
class CameraStream:
    """Camera stream of a sequence.

    Attributes
    ----------
    t : ndarray, shape (M,)
        Camera-clock time stamps [s] (``t_gt + time_offset_s + jitter``).
    t_gt : ndarray, shape (M,)
        True capture instants on the robot clock [s].
    T_base_ee_gt : ndarray, shape (M, 4, 4)
        True flange pose at ``t_gt``.
    T_cam_target_gt, T_cam_target_meas : ndarray, shape (M, 4, 4)
        Pose of the observed reference (target, marker or VO origin) in the
        camera frame, true and measured (NaN rows where there is no measurement).
    visible, outlier : ndarray of bool, shape (M,)
        Visibility of the target and outlier label of the measurement.
    n_points : ndarray of int, shape (M,)
        Target points inside the image.
    depth_m, view_angle_deg, reproj_rmse_px : ndarray, shape (M,)
        Target depth [m], viewing angle [deg], PnP reprojection RMSE [px].
    frame : ndarray of int, shape (M,)
        Frame numbers as stored.
    """

    t: np.ndarray
    t_gt: np.ndarray
    T_base_ee_gt: np.ndarray
    T_cam_target_gt: np.ndarray
    T_cam_target_meas: np.ndarray
    visible: np.ndarray
    outlier: np.ndarray
    n_points: np.ndarray
    depth_m: np.ndarray
    view_angle_deg: np.ndarray
    reproj_rmse_px: np.ndarray
    frame: np.ndarray

    def __len__(self) -> int:
        return int(self.t.shape[0])

    @property
    def has_measurement(self) -> np.ndarray:
        """``(M,)`` bool: the frame carries a finite measured ``T_cam_target``."""
        return np.isfinite(self.T_cam_target_meas).all(axis=(1, 2))

    def __repr__(self) -> str:
        return f"CameraStream({len(self)} frames, {int(self.has_measurement.sum())} measured)"


# --------------------------------------------------------------------------- #
# decoding an index row and the stream tables
# --------------------------------------------------------------------------- #
def _robot_stream(table: pa.Table, dof_hint: int, where: str) -> RobotStream:
    return RobotStream(
        t=float_column(table, "t"),
        q_meas=joint_matrix(table, "q_meas", dof_hint, where),
        q_gt=joint_matrix(table, "q_gt", dof_hint, where),
        T_base_ee_gt=poses_from_table(table, "base_ee_gt", where),
        T_base_ee_meas=poses_from_table(table, "base_ee_meas", where),
        frame=int_column(table, "frame"),
    )


def _camera_stream(table: pa.Table, where: str) -> CameraStream:
    return CameraStream(
        t=float_column(table, "t"),
        t_gt=float_column(table, "t_gt"),
        T_base_ee_gt=poses_from_table(table, "base_ee_gt", where),
        T_cam_target_gt=poses_from_table(table, "cam_target_gt", where),
        T_cam_target_meas=poses_from_table(table, "cam_target_meas", where),
        visible=bool_column(table, "visible"),
        outlier=bool_column(table, "outlier"),
        n_points=int_column(table, "n_points"),
        depth_m=float_column(table, "depth_m"),
        view_angle_deg=float_column(table, "view_angle_deg"),
        reproj_rmse_px=float_column(table, "reproj_rmse_px"),
        frame=int_column(table, "frame"),
    )


def _pose_from_info(info, prefix: str, sid) -> np.ndarray:
    cols = pose_columns(prefix)
    try:
        v = np.array([float(info[c]) for c in cols])
    except (KeyError, TypeError, ValueError):
        raise DatasetFormatError(f"index row of {sid!r}: expected numeric columns {cols}") from None
    if not np.isfinite(v).all():
        raise DatasetFormatError(f"index row of {sid!r}: expected a finite ground-truth {prefix}, got {v.tolist()}")
    try:
        return se3.transform_from_pq(v[:3], v[3:], normalize=True)
    except InputError as exc:
        raise DatasetFormatError(f"index row of {sid!r}: ground truth {prefix}: {exc}") from None


def _decode_json_column(info, name: str, sid):
    text = info.get(name)
    if is_missing(text) or (isinstance(text, str) and not text.strip()):
        return {}
    try:
        return jsonutil.loads(text)
    except InputError as exc:
        raise DatasetFormatError(f"index row of {sid!r}: column {name}: {exc}") from None


def _check_offset(time_offset) -> float:
    if isinstance(time_offset, (bool, np.bool_)) or not isinstance(time_offset, (int, float, np.integer, np.floating)):
        raise InputError(f"time_offset: expected a number of seconds or None, got {time_offset!r}")
    v = float(time_offset)
    if not math.isfinite(v):
        raise InputError(f"time_offset: expected a finite number of seconds, got {time_offset!r}")
    return v


class Sequence:
    """One sequence: both streams as numpy arrays, its ground truth and its recipe.

    Attributes
    ----------
    sequence_id : str
    info : pandas.Series
        The index row (``track``, ``configuration``, ``sync``, noise factors,
        descriptors, ...).
    robot : RobotStream
    camera : CameraStream
    X, Y : ndarray, shape (4, 4)
        Ground truth: eye-in-hand ``X = T_ee_cam``, ``Y = T_base_world``;
        eye-to-hand ``X = T_ee_marker``, ``Y = T_base_cam``.
    """

    def __init__(self, info, robot: RobotStream, camera: CameraStream) -> None:
        if isinstance(info, pd.Series):
            info = info.to_dict()
        if not isinstance(info, dict):
            raise InputError(f"info: expected an index row (dict or Series), got {type(info).__name__}")
        sid = info.get("sequence_id")
        self.sequence_id = str(sid)
        self.info = pd.Series(info, name=self.sequence_id, dtype=object)
        self.robot = robot
        self.camera = camera
        self.X = _pose_from_info(info, "X", sid)
        self.Y = _pose_from_info(info, "Y", sid)

    @classmethod
    def from_tables(cls, index_row, robot_table: pa.Table, camera_table: pa.Table) -> Sequence:
        """Build a Sequence from an index row and the two stream tables (as written or read).

        Accepts the :class:`~kinhec.io.schema.SequenceTables` parts straight from
        the generator, so a sequence can be used without going through disk.
        """
        if isinstance(index_row, pd.Series):
            index_row = index_row.to_dict()
        sid = index_row.get("sequence_id")
        where = f"sequence {sid!r}"
        robot_table = conform_table(robot_table, ROBOT_SCHEMA, f"{where} robot table")
        camera_table = conform_table(camera_table, CAMERA_SCHEMA, f"{where} camera table")
        dof = index_row.get("dof")
        dof_hint = 0 if is_missing(dof) else int(dof)
        return cls(index_row, _robot_stream(robot_table, dof_hint, where), _camera_stream(camera_table, where))

    # ---- index fields ------------------------------------------------------
    @property
    def track(self) -> str:
        return str(self.info.get("track"))

    @property
    def configuration(self) -> str:
        """``"eye_in_hand"`` or ``"eye_to_hand"``."""
        return str(self.info.get("configuration"))

    @property
    def is_synchronous(self) -> bool:
        """Same clock and frame-aligned rows in both streams (``sync`` not starting with "async")."""
        return not is_asynchronous(self.info.get("sync"))

    @property
    def time_offset(self) -> float:
        """Ground-truth clock offset [s]: camera stamp = true instant + offset (+ jitter); 0 if not recorded."""
        v = self.info.get("time_offset_s")
        return 0.0 if is_missing(v) else float(v)

    @property
    def scale(self) -> float:
        """Monocular translation scale of the camera stream (1 for metric sequences)."""
        v = self.info.get("scale")
        return 1.0 if is_missing(v) else float(v)

    @cached_property
    def config(self) -> dict:
        """Decoded ``config_json`` (the generation recipe); ``{}`` when absent."""
        return _decode_json_column(self.info, "config_json", self.sequence_id)

    @cached_property
    def extra(self) -> dict:
        """Decoded ``extra_json`` (keyframes, true DH parameters, per-frame scale, ...); ``{}`` when absent."""
        return _decode_json_column(self.info, "extra_json", self.sequence_id)

    def __repr__(self) -> str:
        return (
            f"Sequence({self.sequence_id!r}, track={self.track!r}, configuration={self.configuration!r}, "
            f"{'sync' if self.is_synchronous else 'async'}, robot={len(self.robot)} frames, "
            f"camera={len(self.camera)} frames)"
        )

    # ---- pairing -----------------------------------------------------------
    def _camera_side(self, T_cam_target: np.ndarray) -> np.ndarray:
        if self.configuration == "eye_in_hand":
            return se3.invert_transform(T_cam_target, check=False)
        if self.configuration == "eye_to_hand":
            return T_cam_target
        raise DatasetFormatError(
            f"sequence {self.sequence_id!r}: unknown configuration {self.configuration!r}; "
            f"expected one of: {', '.join(CONFIGURATIONS)}"
        )

    def _robot_at_camera(self, time_offset: float) -> np.ndarray:
        """Measured flange poses interpolated at ``camera.t - time_offset``; NaN outside the robot stream."""
        ok = np.isfinite(self.robot.T_base_ee_meas).all(axis=(1, 2)) & np.isfinite(self.robot.t)
        t_query = self.camera.t - time_offset
        have = np.isfinite(t_query)
        out = np.full((len(self.camera), 4, 4), np.nan)
        if not ok.any() or not have.any():
            return out
        try:
            out[have] = se3.interpolate_poses(
                self.robot.t[ok], self.robot.T_base_ee_meas[ok], t_query[have], out_of_range="nan"
            )
        except InputError as exc:
            raise DatasetFormatError(f"sequence {self.sequence_id!r}: cannot interpolate the robot stream: {exc}") from None
        return out

    def _pairs(self, time_offset, ground_truth: bool):
        if ground_truth:
            A = self.camera.T_base_ee_gt
            T_ct = self.camera.T_cam_target_gt
        else:
            T_ct = self.camera.T_cam_target_meas
            if time_offset is None and self.is_synchronous:
                if len(self.robot) != len(self.camera):
                    raise DatasetFormatError(
                        f"sequence {self.sequence_id!r}: synchronous streams must have frame-aligned rows, "
                        f"got {len(self.robot)} robot and {len(self.camera)} camera frames"
                    )
                A = self.robot.T_base_ee_meas
            else:
                offset = self.time_offset if time_offset is None else _check_offset(time_offset)
                A = self._robot_at_camera(offset)
        keep = np.isfinite(A).all(axis=(1, 2)) & np.isfinite(T_ct).all(axis=(1, 2))
        idx = np.flatnonzero(keep)
        return A[idx], self._camera_side(T_ct[idx]), idx

    def axyb_poses(self, time_offset=None, *, ground_truth: bool = False, return_index: bool = False):
        """Absolute pose pairs ``(A_i, B_i)`` with ``A_i X = Y B_i``.

        Parameters
        ----------
        time_offset : float, optional
            Clock offset [s] used to pair the streams: the measured robot
            stream is interpolated at ``camera.t - time_offset``.  ``None``
            (default) follows the protocol: row by row for synchronous
            sequences, the ground-truth offset for asynchronous ones.  Any
            value, including 0, switches a synchronous sequence to
            interpolation too.
        ground_truth : bool
            Pair the true streams instead (``camera.T_base_ee_gt`` and
            ``camera.T_cam_target_gt`` on every frame; the oracle for tests
            and validation).
        return_index : bool
            Also return the camera frames (row positions) that were kept.

        Returns
        -------
        A_abs : ndarray, shape (K, 4, 4)
            Flange poses ``T_base_ee`` (measured).
        B_abs : ndarray, shape (K, 4, 4)
            ``inv(T_cam_target)`` (eye-in-hand) or ``T_cam_target``
            (eye-to-hand), measured.
        index : ndarray of int, shape (K,)
            Only with ``return_index=True``.

        Frames without a camera measurement or outside the robot stream's
        time range are dropped.
        """
        A, B, idx = self._pairs(time_offset, ground_truth)
        return (A, B, idx) if return_index else (A, B)

    def _keyframes(self, min_rot_deg, min_trans_m, max_keyframes, time_offset, ground_truth):
        A, B, idx = self._pairs(time_offset, ground_truth)
        if A.shape[0] == 0:
            return A, B, idx
        # (the poses come from the tables' unit quaternions or their interpolation: rotations by construction)
        k = select_keyframes(A, min_rot_deg=min_rot_deg, min_trans_m=min_trans_m, max_keyframes=max_keyframes,
                             check=False)  # fmt: skip
        return A[k], B[k], idx[k]

    def axyb_keyframe_poses(
        self,
        min_rot_deg: float = KEYFRAME_MIN_ROT_DEG,
        min_trans_m: float = KEYFRAME_MIN_TRANS_M,
        max_keyframes: int = KEYFRAME_MAX,
        time_offset=None,
        *,
        ground_truth: bool = False,
        return_index: bool = False,
    ):
        """Absolute pose pairs at the keyframes (what the benchmark feeds to ``A X = Y B`` solvers).

        Keyframes are selected on the paired ``A`` poses with
        :func:`kinhec.geometry.motion.select_keyframes` (at least ``min_rot_deg`` [deg]
        or ``min_trans_m`` [m] apart, at most ``max_keyframes``, every paired
        frame if fewer than three survive).  Other arguments and the returns
        as in :meth:`axyb_poses`.
        """
        A, B, idx = self._keyframes(min_rot_deg, min_trans_m, max_keyframes, time_offset, ground_truth)
        return (A, B, idx) if return_index else (A, B)

    def axxb_motions(
        self,
        min_rot_deg: float = KEYFRAME_MIN_ROT_DEG,
        min_trans_m: float = KEYFRAME_MIN_TRANS_M,
        max_keyframes: int = KEYFRAME_MAX,
        time_offset=None,
        *,
        ground_truth: bool = False,
        return_index: bool = False,
    ):
        """Relative motions between consecutive keyframes for ``A X = X B``.

        ``A_k = inv(A_i) A_j`` and ``B_k = inv(B_i) B_j`` for consecutive
        keyframes ``i < j`` of :meth:`axyb_keyframe_poses` (same arguments).

        Returns
        -------
        A, B : ndarray, shape (K - 1, 4, 4)
            Robot (flange) and camera-side motions; empty when fewer than two
            frames can be paired.
        index : ndarray of int, shape (K,)
            Only with ``return_index=True``: camera frames of the keyframes.
        """
        Ak, Bk, idx = self._keyframes(min_rot_deg, min_trans_m, max_keyframes, time_offset, ground_truth)
        if Ak.shape[0] < 2:
            A = B = np.zeros((0, 4, 4))
        else:
            A = se3.invert_transform(Ak[:-1], check=False) @ Ak[1:]
            B = se3.invert_transform(Bk[:-1], check=False) @ Bk[1:]
        return (A, B, idx) if return_index else (A, B)
