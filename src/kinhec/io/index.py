"""The index of a dataset folder: ``sequences.parquet`` and ``sequences.csv``.

The index holds one row per sequence (schema :data:`kinhec.io.schema.INDEX_SCHEMA`);
``sequences.csv`` is the same without ``config_json`` / ``extra_json``.  The
index columns ``robot_file``, ``camera_file``, ``robot_row_group`` and
``camera_row_group`` (:data:`~kinhec.io.LOCATION_COLUMNS`) say where a
sequence lives, so one sequence is read without touching the rest of a shard.

This module types index rows (from row dicts or a DataFrame: floats never
null, integers and strings null when missing), writes both index files
atomically and sorted (:func:`write_index`), and reads the index back
(:func:`load_manifest`, and the row of one sequence for :mod:`kinhec.io.reader`).
Rebuilding the index from the shards' metadata is :func:`kinhec.io.shards.rebuild_index`.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kinhec.util.errors import DatasetFormatError, InputError
from kinhec.io._common import (
    INDEX_CSV_FILE,
    INDEX_FILE,
    LOCATION_COLUMNS,
    dataset_root,
    did_you_mean,
    fsync_dir,
    fsync_file,
    is_missing,
    tmp_path_of,
)
from kinhec.io.tables import arrow_kind, conform_table
from kinhec.io.schema import COMPRESSION, INDEX_CSV_COLUMNS, INDEX_SCHEMA, TRACKS, pose_columns

__all__ = ["write_index", "load_manifest", "check_manifest_columns", "check_unique_ids", "encode_index_rows",
           "index_table", "manifest_row", "sort_index"]


# --------------------------------------------------------------------------- #
# typed index rows
# --------------------------------------------------------------------------- #
def _bad_value(values, name: str, where: str, what: str, ok) -> InputError:
    """Error naming the first element of ``values`` for which ``ok`` is false."""
    for i, v in enumerate(values):
        if not is_missing(v) and not ok(v):
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
    if arr is not None and (pa.types.is_null(arr.type) or arrow_kind(arr.type) == "string"):
        return arr.cast(pa.string())
    raise _bad_value(values.to_numpy(dtype=object), name, where, "a string", lambda v: isinstance(v, str))


def index_table(rows_or_frame, where: str) -> pa.Table:
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
                f"{where}: expected exactly the index columns of kinhec.io.schema.INDEX_SCHEMA, got "
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


def sort_index(table: pa.Table) -> pa.Table:
    """Rows sorted by track (in :data:`~kinhec.io.schema.TRACKS` order, unknown tracks after, by name) then id."""
    if table.num_rows == 0:
        return table
    track = _track_names(table)
    rank = np.array([TRACKS.index(v) if v in TRACKS else len(TRACKS) for v in track])
    sid = np.array(["" if v is None else v for v in table.column("sequence_id").to_pylist()], dtype=object)
    order = np.lexsort((sid.astype(str), track.astype(str), rank))
    return table.take(pa.array(order))


def _track_names(table: pa.Table) -> np.ndarray:
    """The ``track`` column as an object array, ``""`` for a missing track."""
    return np.array(["" if v is None else v for v in table.column("track").to_pylist()], dtype=object)


def check_unique_ids(table: pa.Table, where: str) -> None:
    ids = table.column("sequence_id")
    if ids.null_count:
        raise InputError(f"{where}: expected a sequence_id on every row, got {ids.null_count} missing")
    counts = pc.value_counts(ids).to_pylist()
    dup = sorted(c["values"] for c in counts if c["counts"] > 1)
    if dup:
        raise InputError(f"{where}: expected unique sequence ids, got duplicates {dup[:5]}")


def encode_index_rows(table: pa.Table) -> str:
    """The ``kinhec_manifest`` text, as the published toolkit writes it: ``json.dumps`` with NaN and Infinity tokens."""
    rows = table.to_pylist()
    # the published order: index columns, then the four file locations last
    loc = set(LOCATION_COLUMNS)
    rows = [{**{k: v for k, v in r.items() if k not in loc}, **{k: r[k] for k in LOCATION_COLUMNS}} for r in rows]
    return json.dumps(rows, ensure_ascii=False)


# --------------------------------------------------------------------------- #
# writing the index
# --------------------------------------------------------------------------- #
def _write_by_track(table: pa.Table, path: Path) -> None:
    """``table`` (sorted by track) written with one row group per run of a track.

    A reader that wants some tracks' rows (such as the benchmark, which needs the recipes of the ``pnp``
    track only) then skips the other row groups by their statistics instead of decoding every recipe.
    """
    track = _track_names(table)
    cuts = [0, *(np.flatnonzero(track[1:] != track[:-1]) + 1).tolist(), len(track)]
    with pq.ParquetWriter(path, table.schema, compression=COMPRESSION) as writer:
        for a, b in zip(cuts[:-1], cuts[1:]):
            writer.write_table(table.slice(a, b - a))


def _write_index_files(root: Path, table: pa.Table) -> list[Path]:
    pq_path = root / INDEX_FILE
    csv_path = root / INDEX_CSV_FILE
    tmp_pq = tmp_path_of(pq_path)
    tmp_csv = tmp_path_of(csv_path)
    try:
        _write_by_track(table, tmp_pq)
        fsync_file(tmp_pq)
        int_types = {f.type: pd.ArrowDtype(f.type) for f in INDEX_SCHEMA if pa.types.is_integer(f.type)}
        df = table.select(INDEX_CSV_COLUMNS).to_pandas(types_mapper=int_types.get)
        with open(tmp_csv, "w", encoding="utf-8", newline="") as fh:
            df.to_csv(fh, index=False, lineterminator="\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_pq, pq_path)
        os.replace(tmp_csv, csv_path)
        fsync_dir(root)
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
        Exactly the columns of :data:`~kinhec.io.schema.INDEX_SCHEMA` (e.g. rows
        returned by :func:`write_shard`, or the frame of :func:`rebuild_index`
        or :func:`load_manifest`).

    Returns
    -------
    list of Path
        The two files written.  Rows are sorted by track (in
        :data:`~kinhec.io.schema.TRACKS` order) then ``sequence_id``; the Parquet
        file has exactly ``INDEX_SCHEMA`` (zstd), the CSV the columns
        :data:`~kinhec.io.schema.INDEX_CSV_COLUMNS`.
    """
    table = index_table(rows_or_dataframe, "rows_or_dataframe")
    check_unique_ids(table, "rows_or_dataframe")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    return _write_index_files(root, sort_index(table))


# --------------------------------------------------------------------------- #
# reading the index
# --------------------------------------------------------------------------- #
def _read_index_table(root: Path, filters=None, without=()) -> pa.Table:
    path = root / INDEX_FILE
    try:
        columns = None
        if without:
            columns = [n for n in pq.read_schema(path).names if n not in without]
        table = pq.read_table(path, columns=columns, filters=filters)
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise DatasetFormatError(f"{path}: cannot read the index, the file is truncated or corrupt ({exc})") from None
    return _conform_index(table, str(path), without)


def _conform_index(table: pa.Table, where: str, without=()) -> pa.Table:
    """Index columns cast to :data:`INDEX_SCHEMA` types (but the ``without`` ones); extra columns are kept after them."""
    schema = INDEX_SCHEMA if not without else pa.schema([f for f in INDEX_SCHEMA if f.name not in without])
    conformed = conform_table(table.select([n for n in table.schema.names if n in schema.names]), schema, where)
    extra = [n for n in table.schema.names if n not in INDEX_SCHEMA.names]
    for n in extra:
        conformed = conformed.append_column(table.schema.field(n), table.column(n))
    return conformed


def load_manifest(root, *, without=()) -> pd.DataFrame:
    """The index of a dataset folder as a DataFrame, one row per sequence.

    Parameters
    ----------
    root : str or Path
        Dataset folder holding ``sequences.parquet``.
    without : iterable of str, optional
        Index columns not to read, e.g. the recipes ``config_json`` and
        ``extra_json``, which hold most of the index's bytes (about 0.5 GB of
        text on the full tier): the frame then lacks them.

    Returns
    -------
    pandas.DataFrame
        Every column of :data:`~kinhec.io.schema.INDEX_SCHEMA` (cast to its type
        when a copy stores a compatible one, e.g. ``int64`` for ``int32``),
        plus any extra columns of the file.

    Raises
    ------
    DatasetFormatError
        If ``root`` is not a dataset folder, the index cannot be read, or
        columns are missing or have the wrong kind of type.
    """
    root = dataset_root(root)
    without = _columns_left_out(without)
    return _read_index_table(root, without=without).to_pandas()


def _columns_left_out(without) -> tuple:
    names = (without,) if isinstance(without, str) else tuple(without)
    unknown = [n for n in names if n not in INDEX_SCHEMA.names]
    if unknown:
        raise InputError(f"without: expected index columns, got {unknown}")
    needed = [n for n in names if n in _NEEDED_COLUMNS]
    if needed:
        raise InputError(f"without: the columns {needed} are needed to read the sequences and cannot be left out")
    return names


def read_index_column(root, column: str, sequence_ids, tracks) -> dict:
    """``{sequence_id: value}`` of one index column for the sequences ``sequence_ids`` of the tracks ``tracks``.

    Only the row groups that may hold the tracks are read (an index written by kinhec has one per track).
    """
    root = dataset_root(root)
    ids = list(sequence_ids)
    if not ids:
        return {}
    path = root / INDEX_FILE
    try:
        table = pq.read_table(path, columns=["sequence_id", column],
                              filters=[("track", "in", list(tracks)), ("sequence_id", "in", ids)])  # fmt: skip
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise DatasetFormatError(f"{path}: cannot read the column {column!r} of the index ({exc})") from None
    return dict(zip(table.column("sequence_id").to_pylist(), table.column(column).to_pylist()))


def manifest_row(root: Path, sequence_id, manifest) -> dict:
    if not isinstance(sequence_id, str):
        raise InputError(f"sequence_id: expected a string such as 'noise-000000', got {sequence_id!r}")
    if manifest is None:
        table = _read_index_table(root, filters=[("sequence_id", "==", sequence_id)])
        if table.num_rows == 0:
            ids = pq.read_table(root / INDEX_FILE, columns=["sequence_id"]).column("sequence_id").to_pylist()
            raise InputError(
                f"sequence_id: unknown sequence {sequence_id!r}{did_you_mean(sequence_id, ids)}; "
                f"{root / INDEX_FILE} lists {len(ids)} sequences, not this one"
            )
        if table.num_rows > 1:
            raise DatasetFormatError(f"{root / INDEX_FILE}: sequence {sequence_id!r} is listed {table.num_rows} times")
        return table.to_pylist()[0]
    if not isinstance(manifest, pd.DataFrame):
        raise InputError(f"manifest: expected the DataFrame of load_manifest, got {type(manifest).__name__}")
    check_manifest_columns(manifest)
    hit = manifest.loc[(manifest["sequence_id"] == sequence_id).to_numpy()]
    if len(hit) == 0:
        ids = [str(v) for v in manifest["sequence_id"]]
        raise InputError(
            f"sequence_id: unknown sequence {sequence_id!r}{did_you_mean(sequence_id, ids)}; the manifest lists "
            f"{len(manifest)} sequences, not this one"
        )
    if len(hit) > 1:
        raise DatasetFormatError(f"manifest: sequence {sequence_id!r} is listed {len(hit)} times")
    return hit.iloc[0].to_dict()


_NEEDED_COLUMNS = ("sequence_id", "configuration", "sync", "time_offset_s", "scale") + LOCATION_COLUMNS + tuple(
    pose_columns("X") + pose_columns("Y")
)


def check_manifest_columns(manifest: pd.DataFrame) -> None:
    missing = [c for c in _NEEDED_COLUMNS if c not in manifest.columns]
    if missing:
        raise InputError(f"manifest: expected the index columns of load_manifest, got a frame missing {missing}")
