"""The stream tables: building them from numpy arrays and decoding their columns back.

:func:`robot_table` and :func:`camera_table` build the Arrow table of one
sequence's robot and camera stream (schemas :data:`~kinhec.io.schema.ROBOT_SCHEMA`
and :data:`~kinhec.io.schema.CAMERA_SCHEMA`): 4x4 poses become the seven
``<prefix>_p*`` / ``<prefix>_q*`` columns (quaternions with ``qw >= 0``), joint
arrays become ``list<double>`` columns.  The private decoders turn those
columns back into numpy arrays (:mod:`kinhec.io.sequence` builds its streams
with them), and ``conform_table`` casts a table read from disk, or handed in by a
caller, to exactly its kinhec schema.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kinhec.geometry import se3
from kinhec.util.errors import DatasetFormatError, InputError
from kinhec.io.schema import CAMERA_SCHEMA, ROBOT_SCHEMA, pose_columns

__all__ = ["robot_table", "camera_table", "bool_column", "conform_table", "float_column", "int_column", "joint_matrix",
           "arrow_kind", "poses_from_table"]


# --------------------------------------------------------------------------- #
# Arrow <-> numpy: poses, joint lists and columns
# --------------------------------------------------------------------------- #
def float_column(table: pa.Table, name: str) -> np.ndarray:
    col = table.column(name)
    if col.null_count:
        col = pc.fill_null(col, np.nan)
    return np.array(col.to_numpy(), dtype=np.float64)


def poses_from_table(table: pa.Table, prefix: str, where: str) -> np.ndarray:
    """``(N, 4, 4)`` poses from the seven ``<prefix>_p*`` / ``<prefix>_q*`` columns; NaN rows where any is missing."""
    cols = pose_columns(prefix)
    n = table.num_rows
    PQ = np.empty((n, 7))
    for i, c in enumerate(cols):
        PQ[:, i] = float_column(table, c)
    P, Q = PQ[:, :3], PQ[:, 3:]
    ok = np.isfinite(PQ).all(axis=1)
    try:
        if ok.all():  # (no gaps: the poses straight, without a NaN stack to scatter them into)
            return se3.transform_from_pq(P, Q, normalize=True)
        T = np.full((n, 4, 4), np.nan)
        if ok.any():
            T[ok] = se3.transform_from_pq(P[ok], Q[ok], normalize=True)
    except InputError as exc:
        raise DatasetFormatError(f"{where}: columns {prefix}_q*: {exc}") from None
    return T


def _pose_columns_from_transforms(T: np.ndarray, prefix: str) -> dict[str, np.ndarray]:
    """Seven float columns (position [m], quaternion w >= 0) of poses ``(N, 4, 4)``; NaN rows stay NaN."""
    ok = np.isfinite(T).all(axis=(1, 2))
    P = np.where(ok[:, None], T[:, :3, 3], np.nan)
    Q = np.where(ok[:, None], se3.quaternion_from_matrix_unchecked(T[:, :3, :3]), np.nan)
    names = pose_columns(prefix)
    out = {names[i]: P[:, i] for i in range(3)}
    out.update({names[3 + i]: Q[:, i] for i in range(4)})
    return out


def joint_matrix(table: pa.Table, name: str, dof_hint: int, where: str) -> np.ndarray:
    """``(N, dof)`` float array of a ``list<double>`` column (flatten + reshape, no per-row Python)."""
    col = table.column(name)
    col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    n = len(col)
    if col.null_count:
        raise DatasetFormatError(f"{where}: column {name}: expected a joint list on every row, got {col.null_count} nulls")
    if n == 0:
        return np.zeros((0, max(int(dof_hint), 0)))
    lens = np.diff(np.asarray(col.offsets, dtype=np.int64))
    dof = int(lens[0])
    if (lens != dof).any():
        raise DatasetFormatError(
            f"{where}: column {name}: expected the same number of joints on every row, "
            f"got lengths between {lens.min()} and {lens.max()}"
        )
    values = col.flatten()
    if values.null_count:
        values = pc.fill_null(values, np.nan)
    return np.array(values.to_numpy(zero_copy_only=False), dtype=np.float64).reshape(n, dof)


def _list_array(M: np.ndarray) -> pa.Array:
    n, dof = M.shape
    offsets = pa.array(np.arange(n + 1, dtype=np.int32) * dof, type=pa.int32())
    return pa.ListArray.from_arrays(offsets, pa.array(M.reshape(-1), type=pa.float64()))


def _stream_length(name: str, a: np.ndarray, n: int | None) -> int:
    if n is not None and a.shape[0] != n:
        raise InputError(f"{name}: expected {n} rows to match t, got {a.shape[0]}")
    return a.shape[0]


def _timestamps(t, name: str) -> np.ndarray:
    a = se3.check_array(t, name, ())
    if a.ndim != 1:
        raise InputError(f"{name}: expected a 1-D array of time stamps [s], got shape {a.shape}")
    return a


def _measured_poses(T, name: str, n: int) -> np.ndarray:
    a = se3.check_array(T, name, (4, 4), allow_nan=True)
    if a.ndim != 3:
        raise InputError(f"{name}: expected shape (N, 4, 4), got shape {a.shape}")
    _stream_length(name, a, n)
    ok = np.isfinite(a).all(axis=(1, 2))
    if ok.any():
        se3.check_transforms(a[ok], name)
    return np.where(ok[:, None, None], a, np.nan)


def _gt_poses(T, name: str, n: int) -> np.ndarray:
    a = se3.check_transforms(T, name)
    if a.ndim != 3:
        raise InputError(f"{name}: expected shape (N, 4, 4), got shape {a.shape}")
    _stream_length(name, a, n)
    return a


def bool_column(table: pa.Table, name: str) -> np.ndarray:
    col = table.column(name)
    if col.null_count:
        col = pc.fill_null(col, False)
    return np.array(col.to_numpy(), dtype=bool)


def int_column(table: pa.Table, name: str) -> np.ndarray:
    col = table.column(name)
    if col.null_count:
        col = pc.fill_null(col, 0)
    return np.array(col.to_numpy(), dtype=np.int64)


# --------------------------------------------------------------------------- #
# building the stream tables
# --------------------------------------------------------------------------- #
def robot_table(
    sequence_id: str, t, T_base_ee_gt, T_base_ee_meas, q_gt=None, q_meas=None, *, check: bool = True
) -> pa.Table:
    """Build the robot-stream table of one sequence (schema :data:`~kinhec.io.schema.ROBOT_SCHEMA`).

    Parameters
    ----------
    sequence_id : str
        Id written on every row.
    t : array_like, shape (N,)
        Robot-clock time stamps [s].
    T_base_ee_gt, T_base_ee_meas : array_like, shape (N, 4, 4)
        Flange pose in the robot base frame, ground truth and as reported
        (measured rows may be NaN).
    q_gt, q_meas : array_like, shape (N, dof), optional
        True and encoder joint positions [rad]; ``None`` or ``(N, 0)`` gives
        the empty lists of ``free6d`` sequences.
    check : bool
        Validate the arrays (shapes, finiteness, proper rotations).  The
        generator passes ``False`` for arrays it built itself.

    Returns
    -------
    pyarrow.Table
        Quaternions stored with ``qw >= 0``; ``frame`` is ``0 .. N-1``.
    """
    t = _timestamps(t, "t") if check else np.asarray(t, dtype=np.float64)
    n = t.shape[0]
    Tg = _gt_poses(T_base_ee_gt, "T_base_ee_gt", n) if check else np.asarray(T_base_ee_gt, dtype=np.float64)
    Tm = _measured_poses(T_base_ee_meas, "T_base_ee_meas", n) if check else np.asarray(T_base_ee_meas, dtype=np.float64)
    qs = {}
    for name, q in (("q_meas", q_meas), ("q_gt", q_gt)):
        q = np.zeros((n, 0)) if q is None else se3.check_array(q, name, (), allow_nan=True)
        if q.ndim != 2 or q.shape[0] != n:
            raise InputError(f"{name}: expected shape ({n}, dof), got shape {q.shape}")
        qs[name] = q
    if qs["q_meas"].shape[1] != qs["q_gt"].shape[1]:
        raise InputError(
            f"q_meas: expected as many joints as q_gt ({qs['q_gt'].shape[1]}), got {qs['q_meas'].shape[1]}"
        )
    cols = {
        "sequence_id": pa.array([str(sequence_id)] * n, type=pa.string()),
        "frame": pa.array(np.arange(n, dtype=np.int32)),
        "t": pa.array(t),
        "q_meas": _list_array(qs["q_meas"]),
        "q_gt": _list_array(qs["q_gt"]),
    }
    cols.update({k: pa.array(v) for k, v in _pose_columns_from_transforms(Tg, "base_ee_gt").items()})
    cols.update({k: pa.array(v) for k, v in _pose_columns_from_transforms(Tm, "base_ee_meas").items()})
    return pa.Table.from_pydict(cols, schema=ROBOT_SCHEMA)


def camera_table(
    sequence_id: str,
    t,
    t_gt,
    T_base_ee_gt,
    T_cam_target_gt,
    T_cam_target_meas,
    *,
    visible=None,
    outlier=None,
    n_points=None,
    depth_m=None,
    view_angle_deg=None,
    reproj_rmse_px=None,
    check: bool = True,
) -> pa.Table:
    """Build the camera-stream table of one sequence (schema :data:`~kinhec.io.schema.CAMERA_SCHEMA`).

    Parameters
    ----------
    sequence_id : str
        Id written on every row.
    t : array_like, shape (M,)
        Camera-clock time stamps [s] (``t_gt + time_offset_s + jitter``).
    t_gt : array_like, shape (M,)
        True capture instants on the robot clock [s].
    T_base_ee_gt : array_like, shape (M, 4, 4)
        Ground-truth flange pose at ``t_gt``.
    T_cam_target_gt, T_cam_target_meas : array_like, shape (M, 4, 4)
        Pose of the observed reference in the camera frame, ground truth and
        measured (NaN rows where there is no measurement).
    visible, outlier : array_like of bool, shape (M,), optional
        Labels (default all visible, no outliers).
    n_points : array_like of int, shape (M,), optional
        Target points inside the image (default 0).
    depth_m, view_angle_deg, reproj_rmse_px : array_like, shape (M,), optional
        Per-frame statistics (default NaN).
    check : bool
        Validate the arrays (see :func:`robot_table`).
    """
    if check:
        t = _timestamps(t, "t")
        m = t.shape[0]
        t_gt = _timestamps(t_gt, "t_gt")
        _stream_length("t_gt", t_gt, m)
        Tb = _gt_poses(T_base_ee_gt, "T_base_ee_gt", m)
        Tg = _gt_poses(T_cam_target_gt, "T_cam_target_gt", m)
        Tm = _measured_poses(T_cam_target_meas, "T_cam_target_meas", m)
    else:
        t, t_gt, Tb, Tg, Tm = (np.asarray(a, dtype=np.float64) for a in (t, t_gt, T_base_ee_gt, T_cam_target_gt, T_cam_target_meas))
        m = t.shape[0]

    def vec(x, name, default, dtype):
        if x is None:
            return np.full(m, default, dtype=dtype)
        a = np.asarray(x)
        if a.shape != (m,):
            raise InputError(f"{name}: expected shape ({m},), got shape {a.shape}")
        return a.astype(dtype)

    cols = {
        "sequence_id": pa.array([str(sequence_id)] * m, type=pa.string()),
        "frame": pa.array(np.arange(m, dtype=np.int32)),
        "t": pa.array(t),
        "t_gt": pa.array(t_gt),
    }
    for prefix, T in (("base_ee_gt", Tb), ("cam_target_gt", Tg), ("cam_target_meas", Tm)):
        cols.update({k: pa.array(v) for k, v in _pose_columns_from_transforms(T, prefix).items()})
    cols["visible"] = pa.array(vec(visible, "visible", True, bool))
    cols["outlier"] = pa.array(vec(outlier, "outlier", False, bool))
    cols["n_points"] = pa.array(vec(n_points, "n_points", 0, np.int16))
    cols["depth_m"] = pa.array(vec(depth_m, "depth_m", np.nan, np.float64))
    cols["view_angle_deg"] = pa.array(vec(view_angle_deg, "view_angle_deg", np.nan, np.float64))
    cols["reproj_rmse_px"] = pa.array(vec(reproj_rmse_px, "reproj_rmse_px", np.nan, np.float64))
    return pa.Table.from_pydict(cols, schema=CAMERA_SCHEMA)


# --------------------------------------------------------------------------- #
# conforming a table to its kinhec schema
# --------------------------------------------------------------------------- #
def arrow_kind(t: pa.DataType) -> str:
    if pa.types.is_dictionary(t):
        return arrow_kind(t.value_type)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or getattr(pa.types, "is_string_view", lambda _: False)(t):
        return "string"
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "list<" + arrow_kind(t.value_type) + ">"
    if pa.types.is_null(t):
        return "null"
    return str(t)


def conform_table(table: pa.Table, schema: pa.Schema, where: str, *, error=DatasetFormatError, exact_names=False) -> pa.Table:
    """``table`` with exactly ``schema`` (column order and types).

    Columns of the same kind but another width (``int64`` for ``int32``,
    ``large_string`` for ``string``, ...) are cast; missing columns, columns
    of another kind and (with ``exact_names``) extra or reordered columns
    raise ``error``.
    """
    if table.schema.equals(schema, check_metadata=False):
        # (replaced without looking: reading ``schema.metadata`` converts it to Python, and a shard's footer
        # carries its sequences' manifest, megabytes, which would cost ten times the replacement)
        return table.replace_schema_metadata(None)
    names = table.schema.names
    if exact_names and names != schema.names:
        missing = [n for n in schema.names if n not in names]
        extra = [n for n in names if n not in schema.names]
        detail = []
        if missing:
            detail.append(f"missing {missing}")
        if extra:
            detail.append(f"unexpected {extra}")
        if not detail:
            detail.append("columns in another order")
        raise error(f"{where}: expected the columns {schema.names}, got {'; '.join(detail)}")
    missing = [n for n in schema.names if n not in names]
    if missing:
        raise error(f"{where}: expected the columns {schema.names}, got missing columns {missing}")
    bad = []
    for field in schema:
        got = table.schema.field(field.name).type
        if got != field.type and arrow_kind(got) not in (arrow_kind(field.type), "null"):
            bad.append(f"{field.name!r}: expected {field.type}, got {got}")
    if bad:
        raise error(f"{where}: mistyped columns: " + "; ".join(bad))
    try:
        return table.select(schema.names).cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise error(f"{where}: cannot convert the columns to the kinhec schema: {exc}") from None
