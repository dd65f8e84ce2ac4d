"""The shards: writing them, the index rows in their metadata, their status, and the index rebuilt from them.

A shard is two files, ``robot/<track>-<5 digits>.parquet`` and
``camera/<track>-<5 digits>.parquet`` (schemas :data:`~kinhec.io.schema.ROBOT_SCHEMA`
and :data:`~kinhec.io.schema.CAMERA_SCHEMA`, zstd), with one row group per
sequence in the same order in both files (:func:`write_shard`).

Both files carry the shard's completed index rows in their Parquet key-value
metadata under :data:`~kinhec.io.INDEX_METADATA_KEY` (a JSON list of rows, as
the published toolkit writes it: NaN and +-inf are the tokens ``NaN`` and
``Infinity``; ``null`` and the strings ``"inf"`` / ``"-inf"`` of earlier
kinhec shards are read too), so the index can be rebuilt from the shards alone
(:func:`rebuild_index`, :func:`read_shard_index`).  kinhec's own shards also
name their writer (:data:`~kinhec.io.WRITER_METADATA_KEY`, :func:`shard_writer`).
Every file is written atomically: to ``<name>.tmp`` in the same folder,
flushed to disk, then renamed.

:func:`shard_status` tells a resumed run whether a shard on disk is complete,
missing or corrupt, from the two footers only.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kinhec.util import jsonutil
from kinhec.io.encoding import stream_write_options
from kinhec.util.errors import DatasetFormatError, InputError
from kinhec.io._common import (
    INDEX_CSV_FILE,
    INDEX_FILE,
    INDEX_METADATA_KEY,
    LEGACY_INDEX_METADATA_KEY,
    WRITER,
    WRITER_METADATA_KEY,
    check_shard_index,
    check_track,
    fsync_dir,
    fsync_file,
    tmp_path_of,
)
from kinhec.io.index import check_unique_ids, encode_index_rows, index_table, sort_index
from kinhec.io.tables import conform_table
from kinhec.io.schema import CAMERA_SCHEMA, INDEX_SCHEMA, ROBOT_SCHEMA, SequenceTables, shard_name

__all__ = ["shard_paths", "write_shard", "read_shard_index", "shard_writer", "shard_status", "rebuild_index",
           "index_is_current", "row_groups_hold_ids", "rows_list_ids"]

_INDEX_NAMES = frozenset(INDEX_SCHEMA.names)
_SHARD_RE = re.compile(r"^(?P<track>[A-Za-z0-9_]+)-(?P<shard>\d{5})\.parquet$")


# --------------------------------------------------------------------------- #
# writing a shard
# --------------------------------------------------------------------------- #
def shard_paths(root, track: str, shard_index: int) -> tuple[Path, Path]:
    """Absolute paths of the robot and camera files of a shard."""
    name = shard_name(check_track(track), check_shard_index(shard_index))
    root = Path(root)
    return root / "robot" / name, root / "camera" / name


def _write_parquet_tmp(path: Path, schema: pa.Schema, tables, metadata: dict[str, str] | None) -> Path:
    tmp = tmp_path_of(path)
    try:
        # in the Arrow schema (so also the file's key-value metadata), where the published shards keep it.  The
        # footer takes it from the writer's schema alone, so the row groups' tables are written as they come
        # (copying the metadata, a few MB of index rows, into each of them cost a third of the writing)
        full = schema.with_metadata(metadata) if metadata else schema
        with pq.ParquetWriter(tmp, full, **stream_write_options(schema)) as writer:
            for tbl in tables:
                writer.write_table(tbl, row_group_size=max(tbl.num_rows, 1))
        fsync_file(tmp)
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
        Track name (one of :data:`kinhec.io.schema.TRACKS`).
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
    track = check_track(track)
    shard_index = check_shard_index(shard_index)
    sequences = list(sequences)
    if not sequences:
        raise InputError("sequences: expected at least one SequenceTables, got none")
    name = shard_name(track, shard_index)
    rel_robot, rel_camera = f"robot/{name}", f"camera/{name}"
    robots, cameras, rows = [], [], []
    for k, st in enumerate(sequences):
        where = f"sequences[{k}]"
        if not isinstance(st, SequenceTables):
            raise InputError(f"{where}: expected a kinhec.io.schema.SequenceTables, got {type(st).__name__}")
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
            tbl = conform_table(tbl, schema, f"{where}.{stream} ({sid!r})", error=InputError, exact_names=True)
            found = [v for v in pc.unique(tbl.column("sequence_id")).to_pylist() if v != sid]
            if found:
                raise InputError(f"{where}.{stream}: expected sequence_id {sid!r} on every row, got {found[:3]}")
            out.append(tbl)
        row = dict(st.index_row)
        row.update(robot_file=rel_robot, camera_file=rel_camera, robot_row_group=k, camera_row_group=k)
        rows.append(row)
    table = index_table(rows, "sequences (index rows)")
    check_unique_ids(table, "sequences")
    meta = {INDEX_METADATA_KEY: encode_index_rows(table), WRITER_METADATA_KEY: WRITER}
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
    fsync_dir(robot_path.parent)
    fsync_dir(camera_path.parent)
    return table.to_pylist()


# --------------------------------------------------------------------------- #
# the index rows stored in a shard's metadata
# --------------------------------------------------------------------------- #
def _decode_index_metadata(text, where: str) -> list[dict]:
    try:
        rows = jsonutil.loads(text)
    except InputError as exc:
        raise DatasetFormatError(f"{where}: metadata {INDEX_METADATA_KEY!r} is not valid JSON ({exc})") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise DatasetFormatError(f"{where}: metadata {INDEX_METADATA_KEY!r}: expected a JSON list of rows")
    return rows


def _key_values(path: Path) -> dict:
    """The key-value metadata of a shard file's footer (one parse of the footer)."""
    if not path.is_file():
        raise DatasetFormatError(f"{path}: missing shard file")
    try:
        return pq.read_metadata(path).metadata or {}
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise DatasetFormatError(f"{path}: cannot read the Parquet footer, the file is truncated or corrupt ({exc})") from None


def _index_text(kv: dict, path: Path) -> bytes:
    """The stored index rows (JSON text) of a footer's key-value metadata ``kv``."""
    text = kv.get(INDEX_METADATA_KEY.encode(), kv.get(LEGACY_INDEX_METADATA_KEY.encode()))
    if text is None:
        raise DatasetFormatError(f"{path}: expected index rows in the metadata key {INDEX_METADATA_KEY!r}, found none")
    return text


def _writer_value(kv: dict) -> str | None:
    v = kv.get(WRITER_METADATA_KEY.encode())
    return v.decode("utf-8", "replace") if v is not None else None


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
    rows = _decode_index_metadata(_index_text(_key_values(path), path), str(path))
    try:
        # restores the types, NaN written as null and inf written as strings
        return index_table(rows, str(path)).to_pylist() if rows else []
    except InputError as exc:
        raise DatasetFormatError(str(exc)) from None


def shard_writer(path) -> str | None:
    """The tool that wrote a shard file: kinhec's :data:`WRITER` value, ``None`` for another writer.

    A shard with the published ``kinhec_manifest`` rows but no
    :data:`WRITER_METADATA_KEY` was written by another tool (the published
    toolkit).  Raises :class:`DatasetFormatError` when the footer cannot be read.
    """
    return _writer_value(_key_values(Path(path)))


# --------------------------------------------------------------------------- #
# shard status (resume)
# --------------------------------------------------------------------------- #
def row_groups_hold_ids(md, expected: list[str]) -> bool | None:
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
            by_stats = row_groups_hold_ids(md, expected)
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
            if not texts and not rows_list_ids(text, expected):
                # the byte search is conclusive only when it succeeds: decode to be sure
                if [r.get("sequence_id") for r in jsonutil.loads(text)] != expected:
                    return "corrupt"
            texts.append(text)
        except Exception:  # any failure to read means the shard must be rewritten
            return "corrupt"
    return "complete"


def rows_list_ids(text: bytes, expected: list[str]) -> bool:
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


# --------------------------------------------------------------------------- #
# rebuilding the index from the shards
# --------------------------------------------------------------------------- #
def _writer_name(writer) -> str:
    return writer if writer else "another tool (no kinhec.writer metadata: the published toolkit)"


def index_is_current(root) -> bool:
    """Whether the index files of ``root`` were written after the last change to its shards.

    True when ``sequences.parquet`` and ``sequences.csv`` exist and are newer (modification time) than the
    ``robot`` and ``camera`` folders (a shard added, removed or renamed changes the folder's time) and than
    every shard file in them (a shard rewritten in place changes its own).  A run that wrote no shard then
    has nothing to add to the index, and need not read every footer to rebuild it (about 45 ms a shard).
    """
    root = Path(root)
    try:
        written = min((root / INDEX_FILE).stat().st_mtime_ns, (root / INDEX_CSV_FILE).stat().st_mtime_ns)
        for sub in ("robot", "camera"):
            folder = root / sub
            if folder.stat().st_mtime_ns > written:
                return False
            with os.scandir(folder) as entries:
                for e in entries:
                    if _SHARD_RE.match(e.name) and e.stat().st_mtime_ns > written:
                        return False
    except OSError:  # an index file or a folder is missing
        return False
    return True


def rebuild_index(root, *, skip_corrupt: bool = False) -> pd.DataFrame:
    """Rebuild the index from the metadata of the shards in ``root/robot`` and ``root/camera``.

    Only complete shards count (both files present); a shard whose two files
    disagree, that cannot be read or that carries no index metadata raises a
    :class:`DatasetFormatError`, or is skipped with ``skip_corrupt=True``.

    Returns
    -------
    pandas.DataFrame
        The index (columns of :data:`~kinhec.io.schema.INDEX_SCHEMA`), sorted like
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
            kv_robot, kv_camera = _key_values(robot_path), _key_values(camera_path)
            text = _index_text(kv_robot, robot_path)
            writer = _writer_value(kv_robot)
            if _writer_value(kv_camera) != writer:
                raise DatasetFormatError(f"{camera_path}: written by {_writer_name(_writer_value(kv_camera))}, "
                                         f"its robot file by {_writer_name(writer)}")  # fmt: skip
            if _index_text(kv_camera, camera_path) != text:
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
        table = index_table(rows, f"{root} (shard metadata)")
        check_unique_ids(table, f"{root} (shard metadata)")
    except InputError as exc:
        raise DatasetFormatError(str(exc)) from None
    return sort_index(table).to_pandas()
