"""Reading and writing KinHEC dataset folders.

A dataset folder holds

* ``sequences.parquet`` (the index, one row per sequence, schema
  :data:`kinhec.schema.INDEX_SCHEMA`) and ``sequences.csv`` (the same without
  ``config_json`` / ``extra_json``);
* ``robot/<track>-<5 digits>.parquet`` and ``camera/<track>-<5 digits>.parquet``
  (the shards, :data:`~kinhec.schema.ROBOT_SCHEMA` /
  :data:`~kinhec.schema.CAMERA_SCHEMA`, zstd), one row group per sequence in
  the same order in both files.  The index columns ``robot_file``,
  ``camera_file``, ``robot_row_group`` and ``camera_row_group`` say where a
  sequence lives, so one sequence is read without touching the rest of a shard.

Both files of a shard carry the shard's completed index rows in their Parquet
key-value metadata under :data:`INDEX_METADATA_KEY` (a JSON list of rows, as
the published toolkit writes it: NaN and +-inf are the tokens ``NaN`` and
``Infinity``; ``null`` and the strings ``"inf"`` / ``"-inf"`` of earlier
kinhec shards are read too), so the index can be rebuilt from the shards alone
(:func:`rebuild_index`).  Every file is written atomically: to
``<name>.tmp`` in the same folder, flushed to disk, then renamed.

Reading side (the first API a user touches)::

    man = load_manifest("data")                        # pandas DataFrame, one row per sequence
    seq = load_sequence("data", "noise-000000", man)   # reads only that sequence's row groups
    A, B = seq.axxb_motions()                          # relative keyframe motions for A X = X B
    A_abs, B_abs = seq.axyb_poses()                    # absolute pairs for A X = Y B

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
(case-insensitive) means asynchronous and everything else synchronous.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kinhec import __version__, jsonutil, se3
from kinhec.errors import DatasetFormatError, InputError, UnknownNameError
from kinhec.encoding import stream_write_options
from kinhec.motion import (
    KEYFRAME_MAX,
    KEYFRAME_MIN_ROT_DEG,
    KEYFRAME_MIN_TRANS_M,
    select_keyframes,
)
from kinhec.schema import (
    CAMERA_SCHEMA,
    COMPRESSION,
    CONFIGURATIONS,
    INDEX_CSV_COLUMNS,
    INDEX_SCHEMA,
    ROBOT_SCHEMA,
    TRACKS,
    SequenceTables,
    pose_columns,
    shard_name,
)

__all__ = [
    "INDEX_FILE",
    "INDEX_CSV_FILE",
    "INDEX_METADATA_KEY",
    "LOCATION_COLUMNS",
    "is_asynchronous",
    "robot_table",
    "camera_table",
    "shard_paths",
    "write_shard",
    "read_shard_index",
    "shard_status",
    "write_index",
    "rebuild_index",
    "load_manifest",
    "read_tables",
    "load_sequence",
    "iter_sequences",
    "RobotStream",
    "CameraStream",
    "Sequence",
]

#: Name of the index file inside a dataset folder.
INDEX_FILE = "sequences.parquet"
#: Name of the CSV copy of the index (without the JSON columns).
INDEX_CSV_FILE = "sequences.csv"
#: Parquet key-value metadata key holding a shard's index rows (JSON), as in the published format.
INDEX_METADATA_KEY = "kinhec_manifest"
#: The key earlier kinhec versions stored the rows under (still read).
LEGACY_INDEX_METADATA_KEY = "kinhec.index"
#: Parquet key-value metadata key naming the tool that wrote a shard (kinhec's own shards only).
WRITER_METADATA_KEY = "kinhec.writer"
#: The value of :data:`WRITER_METADATA_KEY` in the shards this kinhec writes.
WRITER = f"kinhec {__version__}"
#: Index columns filled in by :func:`write_shard`.
LOCATION_COLUMNS = ("robot_file", "camera_file", "robot_row_group", "camera_row_group")

_INDEX_NAMES = frozenset(INDEX_SCHEMA.names)
_SHARD_RE = re.compile(r"^(?P<track>[A-Za-z0-9_]+)-(?P<shard>\d{5})\.parquet$")


# --------------------------------------------------------------------------- #
# small helpers
# --------------------------------------------------------------------------- #
def is_asynchronous(sync_value) -> bool:
    """``True`` when a ``sync`` column value means asynchronous streams.

    Any string starting with ``"async"`` (case-insensitive, surrounding blanks
    ignored) is asynchronous; everything else, including missing values, is
    synchronous.
    """
    return isinstance(sync_value, str) and sync_value.strip().lower().startswith("async")


def _is_missing(v) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    if isinstance(v, (float, np.floating)):
        return bool(np.isnan(v))
    return False


def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def _fsync_dir(path: Path) -> None:
    # Makes the rename itself durable on POSIX; not possible (nor needed) everywhere.
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _tmp_path(path: Path) -> Path:
    return path.with_name(path.name + ".tmp")


def _check_track(track) -> str:
    if not isinstance(track, str) or track not in TRACKS:
        raise UnknownNameError("track", track, TRACKS)
    return track


def _check_shard_index(shard_index) -> int:
    if isinstance(shard_index, bool) or not isinstance(shard_index, (int, np.integer)) or not (
        0 <= int(shard_index) <= 99999
    ):
        raise InputError(f"shard_index: expected an integer in [0, 99999], got {shard_index!r}")
    return int(shard_index)


def _did_you_mean(name, candidates) -> str:
    """``"; did you mean 'x' or 'y'?"`` with the closest candidates, or an empty string."""
    import difflib

    close = difflib.get_close_matches(str(name), list(candidates), n=3, cutoff=0.6)
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?" if close else ""


def _dataset_root(root) -> Path:
    """The dataset folder as a Path; raises when it is not a kinhec dataset."""
    try:
        root = Path(root)
    except TypeError:
        raise InputError(f"root: expected a folder path, got {type(root).__name__}") from None
    if root.is_file() and root.name in (INDEX_FILE, INDEX_CSV_FILE):  # the index file itself names its folder
        root = root.parent
    if not root.is_dir():
        what = "a file" if root.exists() else "no such directory"
        raise DatasetFormatError(f"{root}: expected a dataset folder (or its {INDEX_FILE}), got {what}")
    if not (root / INDEX_FILE).is_file():
        raise DatasetFormatError(f"{root}: not a kinhec dataset: expected an index file {INDEX_FILE}, found none")
    return root


# --------------------------------------------------------------------------- #
# Arrow <-> numpy: poses and joint lists
# --------------------------------------------------------------------------- #
def _float_column(table: pa.Table, name: str) -> np.ndarray:
    col = table.column(name)
    if col.null_count:
        col = pc.fill_null(col, np.nan)
    return np.array(col.to_numpy(), dtype=np.float64)


def _poses_from_table(table: pa.Table, prefix: str, where: str) -> np.ndarray:
    """``(N, 4, 4)`` poses from the seven ``<prefix>_p*`` / ``<prefix>_q*`` columns; NaN rows where any is missing."""
    cols = pose_columns(prefix)
    P = np.column_stack([_float_column(table, c) for c in cols[:3]]) if table.num_rows else np.zeros((0, 3))
    Q = np.column_stack([_float_column(table, c) for c in cols[3:]]) if table.num_rows else np.zeros((0, 4))
    ok = np.isfinite(P).all(axis=1) & np.isfinite(Q).all(axis=1)
    T = np.full((table.num_rows, 4, 4), np.nan)
    if ok.any():
        try:
            T[ok] = se3.transform_from_pq(P[ok], Q[ok], normalize=True)
        except InputError as exc:
            raise DatasetFormatError(f"{where}: columns {prefix}_q*: {exc}") from None
    return T


def _pose_columns_from_transforms(T: np.ndarray, prefix: str) -> dict[str, np.ndarray]:
    """Seven float columns (position [m], quaternion w >= 0) of poses ``(N, 4, 4)``; NaN rows stay NaN."""
    ok = np.isfinite(T).all(axis=(1, 2))
    P = np.where(ok[:, None], T[:, :3, 3], np.nan)
    Q = np.where(ok[:, None], se3._quaternion_from_matrix(T[:, :3, :3]), np.nan)
    names = pose_columns(prefix)
    out = {names[i]: P[:, i] for i in range(3)}
    out.update({names[3 + i]: Q[:, i] for i in range(4)})
    return out


def _joint_matrix(table: pa.Table, name: str, dof_hint: int, where: str) -> np.ndarray:
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


def robot_table(
    sequence_id: str, t, T_base_ee_gt, T_base_ee_meas, q_gt=None, q_meas=None, *, check: bool = True
) -> pa.Table:
    """Build the robot-stream table of one sequence (schema :data:`~kinhec.schema.ROBOT_SCHEMA`).

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
    """Build the camera-stream table of one sequence (schema :data:`~kinhec.schema.CAMERA_SCHEMA`).

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
# schemas: conforming tables and index rows
# --------------------------------------------------------------------------- #
def _kind(t: pa.DataType) -> str:
    if pa.types.is_dictionary(t):
        return _kind(t.value_type)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or getattr(pa.types, "is_string_view", lambda _: False)(t):
        return "string"
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "list<" + _kind(t.value_type) + ">"
    if pa.types.is_null(t):
        return "null"
    return str(t)


def _conform(table: pa.Table, schema: pa.Schema, where: str, *, error=DatasetFormatError, exact_names=False) -> pa.Table:
    """``table`` with exactly ``schema`` (column order and types).

    Columns of the same kind but another width (``int64`` for ``int32``,
    ``large_string`` for ``string``, ...) are cast; missing columns, columns
    of another kind and (with ``exact_names``) extra or reordered columns
    raise ``error``.
    """
    if table.schema.equals(schema, check_metadata=False):
        return table.replace_schema_metadata(None) if table.schema.metadata else table
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
        if got != field.type and _kind(got) not in (_kind(field.type), "null"):
            bad.append(f"{field.name!r}: expected {field.type}, got {got}")
    if bad:
        raise error(f"{where}: mistyped columns: " + "; ".join(bad))
    try:
        return table.select(schema.names).cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise error(f"{where}: cannot convert the columns to the kinhec schema: {exc}") from None


def _bad_value(values, name: str, where: str, what: str, ok) -> InputError:
    """Error naming the first element of ``values`` for which ``ok`` is false."""
    for i, v in enumerate(values):
        if not _is_missing(v) and not ok(v):
            return InputError(f"{where}: column {name!r}: expected {what}, got {v!r} in row {i}")
    return InputError(f"{where}: column {name!r}: expected {what}")


def _is_number(v) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, str):
        return v.strip().lower() in ("inf", "+inf", "-inf", "nan", "infinity", "-infinity")
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _float_values(values: pd.Series, name: str, where: str) -> np.ndarray:
    if values.dtype.kind == "f":
        return values.to_numpy(dtype=np.float64, na_value=np.nan)
    if values.dtype.kind in "iu":
        return values.to_numpy(dtype=np.float64)
    if values.dtype.kind == "b":
        raise _bad_value(values, name, where, "a number", _is_number)
    obj = values.to_numpy(dtype=object)
    if any(isinstance(v, (bool, np.bool_)) for v in obj):
        raise _bad_value(obj, name, where, "a number", _is_number)
    try:  # None / NaN -> NaN; the strings "inf", "-inf", "nan" are parsed
        return pd.Series(obj, dtype=object).astype(np.float64).to_numpy()
    except (TypeError, ValueError):
        raise _bad_value(obj, name, where, "a number", _is_number) from None


def _is_integral(v) -> bool:
    return (
        not isinstance(v, (bool, np.bool_))
        and isinstance(v, (int, float, np.integer, np.floating))
        and math.isfinite(float(v))
        and float(v) == math.floor(float(v))
    )


def _int_values(values: pd.Series, name: str, typ: pa.DataType, where: str) -> pa.Array:
    if values.dtype.kind in "iu" and not values.hasnans:
        arr = pa.array(values.to_numpy(dtype=np.int64), type=pa.int64())
    else:
        obj = values.to_numpy(dtype=object)
        if values.dtype.kind == "b" or any(isinstance(v, (bool, np.bool_, str)) for v in obj):
            raise _bad_value(obj, name, where, "an integer", _is_integral)
        try:
            arr = pa.array(pd.array(obj, dtype="Int64"), type=pa.int64(), from_pandas=True)
        except (TypeError, ValueError, pa.ArrowInvalid):
            raise _bad_value(obj, name, where, "an integer", _is_integral) from None
    try:
        return arr.cast(typ)  # safe cast: raises on overflow
    except pa.ArrowInvalid as exc:
        raise InputError(f"{where}: column {name!r}: expected values that fit {typ}, got {exc}") from None


def _string_values(values: pd.Series, name: str, where: str) -> pa.Array:
    try:
        arr = pa.array(values, from_pandas=True)  # NaN / None -> null
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        arr = None
    if arr is not None and (pa.types.is_null(arr.type) or _kind(arr.type) == "string"):
        return arr.cast(pa.string())
    raise _bad_value(values.to_numpy(dtype=object), name, where, "a string", lambda v: isinstance(v, str))


def _index_table(rows_or_frame, where: str) -> pa.Table:
    """Typed index table (exactly :data:`INDEX_SCHEMA`) from a list of row dicts or a DataFrame.

    Floating-point columns never hold nulls (missing -> NaN; the strings
    ``"inf"``, ``"-inf"``, ``"nan"`` are accepted); integer and string columns
    hold nulls for missing values.  Vectorised per column.
    """
    names = INDEX_SCHEMA.names
    if isinstance(rows_or_frame, pd.DataFrame):
        df = rows_or_frame
        missing = [c for c in names if c not in df.columns]
        extra = [c for c in df.columns if c not in names]
        if missing or extra:
            raise InputError(
                f"{where}: expected exactly the index columns of kinhec.schema.INDEX_SCHEMA, got "
                + "; ".join(s for s in (f"missing {missing}" if missing else "", f"unexpected {extra}" if extra else "") if s)
            )
        if df.columns.duplicated().any():
            raise InputError(f"{where}: expected unique column names, got duplicates {df.columns[df.columns.duplicated()].tolist()}")
    else:
        rows = list(rows_or_frame)
        wanted = set(names)
        for k, r in enumerate(rows):
            if not isinstance(r, dict):
                raise InputError(f"{where}[{k}]: expected a dict of index columns, got {type(r).__name__}")
            if r.keys() != wanted:
                missing = [c for c in names if c not in r]
                extra = [c for c in r if c not in wanted]
                raise InputError(
                    f"{where}[{k}] ({r.get('sequence_id')!r}): expected exactly the index columns, got "
                    + "; ".join(
                        s for s in (f"missing {missing}" if missing else "", f"unexpected {extra}" if extra else "") if s
                    )
                )
        df = pd.DataFrame({c: pd.Series([r[c] for r in rows], dtype=object) for c in names})
        df = df.infer_objects()
    arrays = []
    for field in INDEX_SCHEMA:
        vals = df[field.name].reset_index(drop=True)
        if pa.types.is_floating(field.type):
            arrays.append(pa.array(_float_values(vals, field.name, where), type=field.type))
        elif pa.types.is_integer(field.type):
            arrays.append(_int_values(vals, field.name, field.type, where))
        else:
            arrays.append(_string_values(vals, field.name, where))
    return pa.Table.from_arrays(arrays, schema=INDEX_SCHEMA)


def _sort_index(table: pa.Table) -> pa.Table:
    """Rows sorted by track (in :data:`~kinhec.schema.TRACKS` order, unknown tracks after, by name) then id."""
    if table.num_rows == 0:
        return table
    track = np.array(table.column("track").to_pylist(), dtype=object)
    track = np.array(["" if v is None else v for v in track], dtype=object)
    rank = np.array([TRACKS.index(v) if v in TRACKS else len(TRACKS) for v in track])
    sid = np.array(["" if v is None else v for v in table.column("sequence_id").to_pylist()], dtype=object)
    order = np.lexsort((sid.astype(str), track.astype(str), rank))
    return table.take(pa.array(order))


def _check_unique_ids(table: pa.Table, where: str) -> None:
    ids = table.column("sequence_id")
    if ids.null_count:
        raise InputError(f"{where}: expected a sequence_id on every row, got {ids.null_count} missing")
    counts = pc.value_counts(ids).to_pylist()
    dup = sorted(c["values"] for c in counts if c["counts"] > 1)
    if dup:
        raise InputError(f"{where}: expected unique sequence ids, got duplicates {dup[:5]}")


def _encode_index_rows(table: pa.Table) -> str:
    """The ``kinhec_manifest`` text, as the published toolkit writes it: ``json.dumps`` with NaN and Infinity tokens."""
    rows = table.to_pylist()
    # the published order: index columns, then the four file locations last
    loc = set(LOCATION_COLUMNS)
    rows = [{**{k: v for k, v in r.items() if k not in loc}, **{k: r[k] for k in LOCATION_COLUMNS}} for r in rows]
    return json.dumps(rows, ensure_ascii=False)


def shard_writer(path) -> str | None:
    """The tool that wrote a shard file: kinhec's :data:`WRITER` value, ``None`` for another writer.

    A shard with the published ``kinhec_manifest`` rows but no
    :data:`WRITER_METADATA_KEY` was written by another tool (the published
    toolkit).  Raises :class:`DatasetFormatError` when the footer cannot be read.
    """
    path = Path(path)
    try:
        kv = pq.read_metadata(path).metadata or {}
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise DatasetFormatError(f"{path}: cannot read the Parquet footer, the file is truncated or corrupt ({exc})") from None
    v = kv.get(WRITER_METADATA_KEY.encode())
    return v.decode("utf-8", "replace") if v is not None else None


# --------------------------------------------------------------------------- #
# writing
# --------------------------------------------------------------------------- #
def shard_paths(root, track: str, shard_index: int) -> tuple[Path, Path]:
    """Absolute paths of the robot and camera files of a shard."""
    name = shard_name(_check_track(track), _check_shard_index(shard_index))
    root = Path(root)
    return root / "robot" / name, root / "camera" / name


def _write_parquet_tmp(path: Path, schema: pa.Schema, tables, metadata: dict[str, str] | None) -> Path:
    tmp = _tmp_path(path)
    try:
        # in the Arrow schema (so also the file's key-value metadata), where the published shards keep it
        full = schema.with_metadata(metadata) if metadata else schema
        with pq.ParquetWriter(tmp, full, **stream_write_options(schema)) as writer:
            for tbl in tables:
                writer.write_table(tbl.replace_schema_metadata(metadata) if metadata else tbl,
                                   row_group_size=max(tbl.num_rows, 1))  # fmt: skip
        _fsync_file(tmp)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def write_shard(root, track: str, shard_index: int, sequences) -> list[dict]:
    """Write both files of a shard atomically and return the completed index rows.

    Parameters
    ----------
    root : str or Path
        Dataset folder (``robot/`` and ``camera/`` are created if needed).
    track : str
        Track name (one of :data:`kinhec.schema.TRACKS`).
    shard_index : int
        Shard number, written with 5 digits.
    sequences : list of SequenceTables
        The shard's sequences in order; sequence ``k`` becomes row group ``k``
        of both files.  Each ``index_row`` holds every index column except
        (optionally) the four location columns, which are filled in here.

    Returns
    -------
    list of dict
        One completed index row per sequence (typed as stored: ``robot_file``
        = ``robot/<track>-<shard>.parquet``, ``robot_row_group`` = ``k``, ...).

    Notes
    -----
    Each file is written to ``<name>.parquet.tmp``, flushed to disk and then
    renamed over ``<name>.parquet``; the rows are also stored in the files'
    key-value metadata under :data:`INDEX_METADATA_KEY`.
    """
    track = _check_track(track)
    shard_index = _check_shard_index(shard_index)
    sequences = list(sequences)
    if not sequences:
        raise InputError("sequences: expected at least one SequenceTables, got none")
    name = shard_name(track, shard_index)
    rel_robot, rel_camera = f"robot/{name}", f"camera/{name}"
    robots, cameras, rows = [], [], []
    for k, st in enumerate(sequences):
        where = f"sequences[{k}]"
        if not isinstance(st, SequenceTables):
            raise InputError(f"{where}: expected a kinhec.schema.SequenceTables, got {type(st).__name__}")
        if not isinstance(st.index_row, dict):
            raise InputError(f"{where}.index_row: expected a dict, got {type(st.index_row).__name__}")
        sid = st.index_row.get("sequence_id")
        if not isinstance(sid, str) or not sid:
            raise InputError(f"{where}.index_row['sequence_id']: expected a non-empty string, got {sid!r}")
        if st.index_row.get("track") != track:
            raise InputError(
                f"{where} ({sid!r}): expected track {track!r} for shard {name}, got {st.index_row.get('track')!r}"
            )
        for stream, schema, out in (("robot", ROBOT_SCHEMA, robots), ("camera", CAMERA_SCHEMA, cameras)):
            tbl = getattr(st, stream)
            if not isinstance(tbl, pa.Table):
                raise InputError(f"{where}.{stream}: expected a pyarrow.Table, got {type(tbl).__name__}")
            tbl = _conform(tbl, schema, f"{where}.{stream} ({sid!r})", error=InputError, exact_names=True)
            found = [v for v in pc.unique(tbl.column("sequence_id")).to_pylist() if v != sid]
            if found:
                raise InputError(f"{where}.{stream}: expected sequence_id {sid!r} on every row, got {found[:3]}")
            out.append(tbl)
        row = dict(st.index_row)
        row.update(robot_file=rel_robot, camera_file=rel_camera, robot_row_group=k, camera_row_group=k)
        rows.append(row)
    table = _index_table(rows, "sequences (index rows)")
    _check_unique_ids(table, "sequences")
    meta = {INDEX_METADATA_KEY: _encode_index_rows(table), WRITER_METADATA_KEY: WRITER}
    robot_path, camera_path = shard_paths(root, track, shard_index)
    robot_path.parent.mkdir(parents=True, exist_ok=True)
    camera_path.parent.mkdir(parents=True, exist_ok=True)
    tmp_robot = _write_parquet_tmp(robot_path, ROBOT_SCHEMA, robots, meta)
    try:
        tmp_camera = _write_parquet_tmp(camera_path, CAMERA_SCHEMA, cameras, meta)
    except BaseException:
        tmp_robot.unlink(missing_ok=True)
        raise
    os.replace(tmp_robot, robot_path)
    os.replace(tmp_camera, camera_path)
    _fsync_dir(robot_path.parent)
    _fsync_dir(camera_path.parent)
    return table.to_pylist()


def _decode_index_metadata(text, where: str) -> list[dict]:
    try:
        rows = jsonutil.loads(text)
    except InputError as exc:
        raise DatasetFormatError(f"{where}: metadata {INDEX_METADATA_KEY!r} is not valid JSON ({exc})") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise DatasetFormatError(f"{where}: metadata {INDEX_METADATA_KEY!r}: expected a JSON list of rows")
    return rows


def _raw_index_metadata(path: Path) -> bytes:
    if not path.is_file():
        raise DatasetFormatError(f"{path}: missing shard file")
    try:
        kv = pq.read_metadata(path).metadata or {}
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise DatasetFormatError(f"{path}: cannot read the Parquet footer, the file is truncated or corrupt ({exc})") from None
    text = kv.get(INDEX_METADATA_KEY.encode(), kv.get(LEGACY_INDEX_METADATA_KEY.encode()))
    if text is None:
        raise DatasetFormatError(f"{path}: expected index rows in the metadata key {INDEX_METADATA_KEY!r}, found none")
    return text


def read_shard_index(path) -> list[dict]:
    """Index rows stored in the key-value metadata of one shard file (robot or camera).

    Returns
    -------
    list of dict
        One typed row per sequence of the shard, in row-group order.

    Raises
    ------
    DatasetFormatError
        If the file is missing, unreadable or carries no valid :data:`INDEX_METADATA_KEY`.
    """
    path = Path(path)
    rows = _decode_index_metadata(_raw_index_metadata(path), str(path))
    try:
        # restores the types, NaN written as null and inf written as strings
        return _index_table(rows, str(path)).to_pylist() if rows else []
    except InputError as exc:
        raise DatasetFormatError(str(exc)) from None


def _row_groups_hold_ids(md, expected: list[str]) -> bool | None:
    """Whether row group ``k`` holds only ``expected[k]``, decided from the footer's column statistics.

    ``True`` or ``False`` when every row group of the ``sequence_id`` column has
    min/max statistics and no nulls counted; ``None`` when some statistics are
    missing (the caller then reads the column).  No data page is read.
    """
    cols = [i for i in range(md.num_columns) if md.schema.column(i).path == "sequence_id"]
    if not cols:
        return None
    col = cols[0]
    for k in range(md.num_row_groups):
        st = md.row_group(k).column(col).statistics
        if st is None or not st.has_min_max or st.null_count is None:
            return None
        if st.null_count != 0 or st.min != expected[k] or st.max != expected[k]:
            return False
    return True


def shard_status(root, track: str, shard_index: int, expected_ids) -> str:
    """State of a shard on disk: ``"complete"``, ``"missing"`` or ``"corrupt"``.

    ``"missing"``: at least one of the two files does not exist.
    ``"complete"``: both files open, have the kinhec schema, exactly one row
    group per expected id, every row group holds only its expected sequence id
    (in order), and both files carry the same stored index rows, listing the
    same ids.
    ``"corrupt"``: anything else (truncated or empty file, wrong ids, ...).

    Only the two footers are read: the ids of a row group come from the min/max
    statistics of its ``sequence_id`` column chunk (the column itself is read
    only for files written without statistics).
    """
    if isinstance(expected_ids, str):
        raise InputError(f"expected_ids: expected a list of sequence ids, got the string {expected_ids!r}")
    expected = [str(s) for s in expected_ids]
    paths = shard_paths(root, track, shard_index)
    if not all(p.is_file() for p in paths):
        return "missing"
    texts: list[bytes] = []
    for path, schema in zip(paths, (ROBOT_SCHEMA, CAMERA_SCHEMA)):
        try:
            md = pq.read_metadata(path)  # the footer only
            if md.num_row_groups != len(expected):
                return "corrupt"
            if not md.schema.to_arrow_schema().equals(schema, check_metadata=False):
                return "corrupt"
            by_stats = _row_groups_hold_ids(md, expected)
            if by_stats is False:
                return "corrupt"
            if by_stats is None:  # no usable statistics (another writer): read the id column
                with pq.ParquetFile(path) as pf:
                    ids = pf.read(columns=["sequence_id"]).column(0)
                counts = np.array([md.row_group(i).num_rows for i in range(md.num_row_groups)], dtype=np.int64)
                want = np.repeat(np.array(expected, dtype=object), counts)
                got = np.array(ids.to_pylist(), dtype=object)
                if got.shape != want.shape or not (got == want).all():
                    return "corrupt"
            text = (md.metadata or {}).get(INDEX_METADATA_KEY.encode())
            if text is None or (texts and text != texts[0]):
                return "corrupt"  # no index rows, or the two files come from different writes
            if not texts and not _rows_list_ids(text, expected):
                # the byte search is conclusive only when it succeeds: decode to be sure
                if [r.get("sequence_id") for r in jsonutil.loads(text)] != expected:
                    return "corrupt"
            texts.append(text)
        except Exception:  # any failure to read means the shard must be rewritten
            return "corrupt"
    return "complete"


def _rows_list_ids(text: bytes, expected: list[str]) -> bool:
    """Whether the stored index rows (JSON text) name the ``expected`` ids, in order.

    A byte search instead of a JSON decode (the rows of a 200-sequence shard
    are megabytes): each id must occur as a JSON string ``"<id>"`` after the
    previous one.  Ids quoted inside the nested ``config_json`` text are
    escaped (``\\"<id>\\"``) and do not match.  ``False`` is not conclusive
    (e.g. rows nesting other ``sequence_id`` keys): the caller then decodes the JSON.
    """
    pos = 0
    for sid in expected:
        pos = text.find(b'"' + sid.encode() + b'"', pos)
        if pos < 0:
            return False
        pos += len(sid) + 2
    return text.count(b'"sequence_id"') == len(expected)


def _write_index_files(root: Path, table: pa.Table) -> list[Path]:
    pq_path = root / INDEX_FILE
    csv_path = root / INDEX_CSV_FILE
    tmp_pq = _tmp_path(pq_path)
    tmp_csv = _tmp_path(csv_path)
    try:
        pq.write_table(table, tmp_pq, compression=COMPRESSION)
        _fsync_file(tmp_pq)
        int_types = {f.type: pd.ArrowDtype(f.type) for f in INDEX_SCHEMA if pa.types.is_integer(f.type)}
        df = table.select(INDEX_CSV_COLUMNS).to_pandas(types_mapper=int_types.get)
        with open(tmp_csv, "w", encoding="utf-8", newline="") as fh:
            df.to_csv(fh, index=False, lineterminator="\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_pq, pq_path)
        os.replace(tmp_csv, csv_path)
        _fsync_dir(root)
    finally:
        tmp_pq.unlink(missing_ok=True)
        tmp_csv.unlink(missing_ok=True)
    return [pq_path, csv_path]


def write_index(root, rows_or_dataframe) -> list[Path]:
    """Write ``sequences.parquet`` and ``sequences.csv`` atomically.

    Parameters
    ----------
    root : str or Path
        Dataset folder (created if needed).
    rows_or_dataframe : list of dict or pandas.DataFrame
        Exactly the columns of :data:`~kinhec.schema.INDEX_SCHEMA` (e.g. rows
        returned by :func:`write_shard`, or the frame of :func:`rebuild_index`
        or :func:`load_manifest`).

    Returns
    -------
    list of Path
        The two files written.  Rows are sorted by track (in
        :data:`~kinhec.schema.TRACKS` order) then ``sequence_id``; the Parquet
        file has exactly ``INDEX_SCHEMA`` (zstd), the CSV the columns
        :data:`~kinhec.schema.INDEX_CSV_COLUMNS`.
    """
    table = _index_table(rows_or_dataframe, "rows_or_dataframe")
    _check_unique_ids(table, "rows_or_dataframe")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    return _write_index_files(root, _sort_index(table))


def _writer_name(writer) -> str:
    return writer if writer else "another tool (no kinhec.writer metadata: the published toolkit)"


def rebuild_index(root, *, skip_corrupt: bool = False) -> pd.DataFrame:
    """Rebuild the index from the metadata of the shards in ``root/robot`` and ``root/camera``.

    Only complete shards count (both files present); a shard whose two files
    disagree, that cannot be read or that carries no index metadata raises a
    :class:`DatasetFormatError`, or is skipped with ``skip_corrupt=True``.

    Returns
    -------
    pandas.DataFrame
        The index (columns of :data:`~kinhec.schema.INDEX_SCHEMA`), sorted like
        :func:`write_index` writes it; pass it to :func:`write_index` to store it.
    """
    root = Path(root)
    if not root.is_dir():
        raise DatasetFormatError(f"{root}: expected a dataset folder, got no such directory")
    robot_dir = root / "robot"
    rows: list[dict] = []
    writers: dict = {}  # writer -> first shard written by it
    names = sorted(p.name for p in robot_dir.iterdir() if _SHARD_RE.match(p.name)) if robot_dir.is_dir() else []
    for name in names:
        robot_path, camera_path = robot_dir / name, root / "camera" / name
        if not camera_path.is_file():
            continue  # incomplete shard
        try:
            text = _raw_index_metadata(robot_path)
            writer = shard_writer(robot_path)
            if shard_writer(camera_path) != writer:
                raise DatasetFormatError(f"{camera_path}: written by {_writer_name(shard_writer(camera_path))}, "
                                         f"its robot file by {_writer_name(writer)}")  # fmt: skip
            if _raw_index_metadata(camera_path) != text:
                raise DatasetFormatError(f"{camera_path}: its index metadata differs from that of {robot_path}")
            shard_rows = _decode_index_metadata(text, str(robot_path))
            for r in shard_rows:
                if r.keys() != _INDEX_NAMES:
                    raise DatasetFormatError(
                        f"{robot_path}: index row {r.get('sequence_id')!r} in the metadata lacks or adds columns "
                        f"(missing {sorted(_INDEX_NAMES - r.keys())}, unexpected {sorted(r.keys() - _INDEX_NAMES)})"
                    )
                if r.get("robot_file") != f"robot/{name}" or r.get("camera_file") != f"camera/{name}":
                    raise DatasetFormatError(
                        f"{robot_path}: index row {r.get('sequence_id')!r} points to {r.get('robot_file')!r} / "
                        f"{r.get('camera_file')!r}, expected robot/{name} / camera/{name}"
                    )
        except DatasetFormatError:
            if skip_corrupt:
                continue
            raise
        writers.setdefault(writer, f"robot/{name}")
        rows.extend(shard_rows)
    if len(writers) > 1:
        found = "; ".join(f"{shard} by {_writer_name(w)}" for w, shard in writers.items())
        raise DatasetFormatError(
            f"{root}: expected shards written by one tool, got a mix ({found}); keep the shards of one tool in "
            "this folder (move the others to a folder of their own)"
        )
    try:
        table = _index_table(rows, f"{root} (shard metadata)")
        _check_unique_ids(table, f"{root} (shard metadata)")
    except InputError as exc:
        raise DatasetFormatError(str(exc)) from None
    return _sort_index(table).to_pandas()


# --------------------------------------------------------------------------- #
# reading: index
# --------------------------------------------------------------------------- #
def _read_index_table(root: Path, filters=None) -> pa.Table:
    path = root / INDEX_FILE
    try:
        table = pq.read_table(path, filters=filters)
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise DatasetFormatError(f"{path}: cannot read the index, the file is truncated or corrupt ({exc})") from None
    return _conform_index(table, str(path))


def _conform_index(table: pa.Table, where: str) -> pa.Table:
    """Index columns cast to :data:`INDEX_SCHEMA` types; extra columns are kept after them."""
    conformed = _conform(table.select([n for n in table.schema.names if n in INDEX_SCHEMA.names]), INDEX_SCHEMA, where)
    extra = [n for n in table.schema.names if n not in INDEX_SCHEMA.names]
    for n in extra:
        conformed = conformed.append_column(table.schema.field(n), table.column(n))
    return conformed


def load_manifest(root) -> pd.DataFrame:
    """The index of a dataset folder as a DataFrame, one row per sequence.

    Parameters
    ----------
    root : str or Path
        Dataset folder holding ``sequences.parquet``.

    Returns
    -------
    pandas.DataFrame
        Every column of :data:`~kinhec.schema.INDEX_SCHEMA` (cast to its type
        when a copy stores a compatible one, e.g. ``int64`` for ``int32``),
        plus any extra columns of the file.

    Raises
    ------
    DatasetFormatError
        If ``root`` is not a dataset folder, the index cannot be read, or
        columns are missing or have the wrong kind of type.
    """
    root = _dataset_root(root)
    return _read_index_table(root).to_pandas()


def _manifest_row(root: Path, sequence_id, manifest) -> dict:
    if not isinstance(sequence_id, str):
        raise InputError(f"sequence_id: expected a string such as 'noise-000000', got {sequence_id!r}")
    if manifest is None:
        table = _read_index_table(root, filters=[("sequence_id", "==", sequence_id)])
        if table.num_rows == 0:
            ids = pq.read_table(root / INDEX_FILE, columns=["sequence_id"]).column("sequence_id").to_pylist()
            raise InputError(
                f"sequence_id: unknown sequence {sequence_id!r}{_did_you_mean(sequence_id, ids)}; "
                f"{root / INDEX_FILE} lists {len(ids)} sequences, not this one"
            )
        if table.num_rows > 1:
            raise DatasetFormatError(f"{root / INDEX_FILE}: sequence {sequence_id!r} is listed {table.num_rows} times")
        return table.to_pylist()[0]
    if not isinstance(manifest, pd.DataFrame):
        raise InputError(f"manifest: expected the DataFrame of load_manifest, got {type(manifest).__name__}")
    _check_manifest_columns(manifest)
    hit = manifest.loc[(manifest["sequence_id"] == sequence_id).to_numpy()]
    if len(hit) == 0:
        ids = [str(v) for v in manifest["sequence_id"]]
        raise InputError(
            f"sequence_id: unknown sequence {sequence_id!r}{_did_you_mean(sequence_id, ids)}; the manifest lists "
            f"{len(manifest)} sequences, not this one"
        )
    if len(hit) > 1:
        raise DatasetFormatError(f"manifest: sequence {sequence_id!r} is listed {len(hit)} times")
    return hit.iloc[0].to_dict()


_NEEDED_COLUMNS = ("sequence_id", "configuration", "sync", "time_offset_s", "scale") + LOCATION_COLUMNS + tuple(
    pose_columns("X") + pose_columns("Y")
)


def _check_manifest_columns(manifest: pd.DataFrame) -> None:
    missing = [c for c in _NEEDED_COLUMNS if c not in manifest.columns]
    if missing:
        raise InputError(f"manifest: expected the index columns of load_manifest, got a frame missing {missing}")


# --------------------------------------------------------------------------- #
# reading: streams
# --------------------------------------------------------------------------- #
class _ShardReader:
    """Keeps the most recently used shard file open, so consecutive sequences of a shard open it once."""

    def __init__(self) -> None:
        self.path: Path | None = None
        self.file: pq.ParquetFile | None = None

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
        self.path = self.file = None

    def read(self, root: Path, info: dict, stream: str, schema: pa.Schema) -> pa.Table:
        sid = info["sequence_id"]
        rel = info.get(f"{stream}_file")
        rg = info.get(f"{stream}_row_group")
        if not isinstance(rel, str) or not rel or _is_missing(rg):
            raise DatasetFormatError(f"index row of {sid!r}: expected {stream}_file and {stream}_row_group, got {rel!r} / {rg!r}")
        path = root / rel
        if path != self.path:
            self.close()
            if not path.is_file():
                raise DatasetFormatError(f"{path}: missing {stream} shard file (needed by {sid!r})")
            try:
                self.file = pq.ParquetFile(path)
            except Exception as exc:  # pyarrow raises several types for damaged files
                raise DatasetFormatError(
                    f"{path}: cannot open the {stream} shard, the file is truncated or corrupt ({exc})"
                ) from None
            self.path = path
        pf = self.file
        rg = int(rg)
        if not 0 <= rg < pf.num_row_groups:
            raise DatasetFormatError(
                f"{path}: row group {rg} of {sid!r} does not exist; the file has {pf.num_row_groups} row groups"
            )
        try:
            table = pf.read_row_group(rg)
        except Exception as exc:  # pyarrow raises several types for damaged files
            raise DatasetFormatError(f"{path}: cannot read row group {rg} of {sid!r}, the file is corrupt ({exc})") from None
        if "sequence_id" not in table.schema.names:
            raise DatasetFormatError(f"{path}: expected a sequence_id column, found none")
        found = [v for v in pc.unique(table.column("sequence_id")).to_pylist() if v != sid]
        if found:
            raise DatasetFormatError(f"{path}: row group {rg} holds sequence {found[0]!r}, expected {sid!r}")
        return _conform(table, schema, f"{path} row group {rg}")


def read_tables(root, sequence_id: str, manifest=None) -> SequenceTables:
    """The stored tables of one sequence: its index row (dict) and its two stream tables.

    Reads only the sequence's row group of each shard file.  See
    :func:`load_sequence` for the arguments and errors.
    """
    root = _dataset_root(root)
    info = _manifest_row(root, sequence_id, manifest)
    reader = _ShardReader()
    try:
        robot = reader.read(root, info, "robot", ROBOT_SCHEMA)
        reader.close()
        camera = reader.read(root, info, "camera", CAMERA_SCHEMA)
    finally:
        reader.close()
    return SequenceTables(info, robot, camera)


def load_sequence(root, sequence_id: str, manifest=None) -> Sequence:
    """Load one sequence: both streams as numpy arrays, with its ground truth.

    Parameters
    ----------
    root : str or Path
        Dataset folder.
    sequence_id : str
        Id such as ``"noise-000000"``.
    manifest : pandas.DataFrame, optional
        The frame of :func:`load_manifest` (or a filtered part of it holding
        the sequence); read from ``sequences.parquet`` when omitted.

    Returns
    -------
    Sequence

    Raises
    ------
    InputError
        If the id is unknown.
    DatasetFormatError
        If ``root`` is not a dataset, a shard file is missing, truncated or
        corrupt, or a row group holds another sequence.
    """
    st = read_tables(root, sequence_id, manifest)
    return Sequence.from_tables(st.index_row, st.robot, st.camera)


def iter_sequences(root, manifest=None, sequence_ids=None):
    """Yield :class:`Sequence` objects, one after the other.

    Parameters
    ----------
    root : str or Path
        Dataset folder.
    manifest : pandas.DataFrame, optional
        Sequences to load, in this order (default: the whole index).
    sequence_ids : iterable of str, optional
        Load only these ids, in this order (looked up in ``manifest``).

    Notes
    -----
    A shard file is opened once for a run of consecutive sequences stored in
    it, and only their row groups are read.
    """
    root = _dataset_root(root)
    if manifest is None:
        manifest = load_manifest(root)
    elif not isinstance(manifest, pd.DataFrame):
        raise InputError(f"manifest: expected the DataFrame of load_manifest, got {type(manifest).__name__}")
    _check_manifest_columns(manifest)
    if sequence_ids is not None:
        ids = [sequence_ids] if isinstance(sequence_ids, str) else list(sequence_ids)
        index = pd.Index(manifest["sequence_id"])
        if not index.is_unique:
            dup = index[index.duplicated()].unique().tolist()
            raise DatasetFormatError(f"manifest: expected unique sequence ids, got duplicates {dup[:5]}")
        pos = index.get_indexer(ids)
        unknown = [s for s, p in zip(ids, pos) if p < 0]
        if unknown:
            raise InputError(f"sequence_ids: unknown sequences {unknown[:5]} ({len(unknown)} not in the manifest)"
                             f"{_did_you_mean(unknown[0], [str(v) for v in index])}")  # fmt: skip
        manifest = manifest.iloc[pos]
    records = manifest.to_dict("records")
    robot_reader, camera_reader = _ShardReader(), _ShardReader()
    try:
        for info in records:
            robot = robot_reader.read(root, info, "robot", ROBOT_SCHEMA)
            camera = camera_reader.read(root, info, "camera", CAMERA_SCHEMA)
            yield Sequence.from_tables(info, robot, camera)
    finally:
        robot_reader.close()
        camera_reader.close()


# --------------------------------------------------------------------------- #
# the Sequence object
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


def _bool_column(table: pa.Table, name: str) -> np.ndarray:
    col = table.column(name)
    if col.null_count:
        col = pc.fill_null(col, False)
    return np.array(col.to_numpy(), dtype=bool)


def _int_column(table: pa.Table, name: str) -> np.ndarray:
    col = table.column(name)
    if col.null_count:
        col = pc.fill_null(col, 0)
    return np.array(col.to_numpy(), dtype=np.int64)


def _robot_stream(table: pa.Table, dof_hint: int, where: str) -> RobotStream:
    return RobotStream(
        t=_float_column(table, "t"),
        q_meas=_joint_matrix(table, "q_meas", dof_hint, where),
        q_gt=_joint_matrix(table, "q_gt", dof_hint, where),
        T_base_ee_gt=_poses_from_table(table, "base_ee_gt", where),
        T_base_ee_meas=_poses_from_table(table, "base_ee_meas", where),
        frame=_int_column(table, "frame"),
    )


def _camera_stream(table: pa.Table, where: str) -> CameraStream:
    return CameraStream(
        t=_float_column(table, "t"),
        t_gt=_float_column(table, "t_gt"),
        T_base_ee_gt=_poses_from_table(table, "base_ee_gt", where),
        T_cam_target_gt=_poses_from_table(table, "cam_target_gt", where),
        T_cam_target_meas=_poses_from_table(table, "cam_target_meas", where),
        visible=_bool_column(table, "visible"),
        outlier=_bool_column(table, "outlier"),
        n_points=_int_column(table, "n_points"),
        depth_m=_float_column(table, "depth_m"),
        view_angle_deg=_float_column(table, "view_angle_deg"),
        reproj_rmse_px=_float_column(table, "reproj_rmse_px"),
        frame=_int_column(table, "frame"),
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
    if _is_missing(text) or (isinstance(text, str) and not text.strip()):
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

        Accepts the :class:`~kinhec.schema.SequenceTables` parts straight from
        the generator, so a sequence can be used without going through disk.
        """
        if isinstance(index_row, pd.Series):
            index_row = index_row.to_dict()
        sid = index_row.get("sequence_id")
        where = f"sequence {sid!r}"
        robot_table = _conform(robot_table, ROBOT_SCHEMA, f"{where} robot table")
        camera_table = _conform(camera_table, CAMERA_SCHEMA, f"{where} camera table")
        dof = index_row.get("dof")
        dof_hint = 0 if _is_missing(dof) else int(dof)
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
        return 0.0 if _is_missing(v) else float(v)

    @property
    def scale(self) -> float:
        """Monocular translation scale of the camera stream (1 for metric sequences)."""
        v = self.info.get("scale")
        return 1.0 if _is_missing(v) else float(v)

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
        k = select_keyframes(A, min_rot_deg=min_rot_deg, min_trans_m=min_trans_m, max_keyframes=max_keyframes)
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
        :func:`kinhec.motion.select_keyframes` (at least ``min_rot_deg`` [deg]
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
