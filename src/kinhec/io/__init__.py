"""Reading and writing KinHEC dataset folders.

A dataset folder holds

* ``sequences.parquet`` (the index, one row per sequence, schema
  :data:`kinhec.io.schema.INDEX_SCHEMA`) and ``sequences.csv`` (the same without
  ``config_json`` / ``extra_json``);
* ``robot/<track>-<5 digits>.parquet`` and ``camera/<track>-<5 digits>.parquet``
  (the shards), one row group per sequence in the same order in both files;
  the index says which file and row group hold a sequence, and each shard
  carries its own index rows in its metadata, so the index can be rebuilt
  from the shards alone.

Reading side (the first API a user touches)::

    man = load_manifest("data")                        # pandas DataFrame, one row per sequence
    seq = load_sequence("data", "noise-000000", man)   # reads only that sequence's row groups
    A, B = seq.axxb_motions()                          # relative keyframe motions for A X = X B
    A_abs, B_abs = seq.axyb_poses()                    # absolute pairs for A X = Y B

Every name below is importable from :mod:`kinhec.io`; the modules, by role:

* :mod:`kinhec.io._common`: file names and metadata keys (:data:`INDEX_FILE`,
  :data:`INDEX_METADATA_KEY`, :data:`LOCATION_COLUMNS`, ...),
  :func:`is_asynchronous`, atomic-write and argument helpers;
* :mod:`kinhec.io.tables`: the stream tables (:func:`robot_table`,
  :func:`camera_table`), their columns to and from numpy, conforming a table
  to its kinhec schema;
* :mod:`kinhec.io.index`: the index files: typed index rows,
  :func:`write_index`, :func:`load_manifest`;
* :mod:`kinhec.io.shards`: the shards: :func:`shard_paths`, :func:`write_shard`,
  the index rows in their metadata (:func:`read_shard_index`), their state for
  a resumed run (:func:`shard_status`), :func:`rebuild_index`;
* :mod:`kinhec.io.sequence`: :class:`Sequence`, :class:`RobotStream`,
  :class:`CameraStream` and the pairing protocol;
* :mod:`kinhec.io.reader`: :func:`load_sequence`, :func:`read_tables`,
  :func:`iter_sequences` (only the row groups a sequence needs).

Imports go one way: ``_common`` <- ``tables`` <- ``index`` <- ``shards``;
``tables`` <- ``sequence``; ``index`` and ``sequence`` <- ``reader``.
"""

from __future__ import annotations

import importlib

from kinhec.util.optional import missing_dependency

# Every name below is loaded with its module on first use, so that importing a light module of this
# group (``kinhec.io.tracks``, ``kinhec.io.publish``) does not load pandas or pyarrow.
_WHERE = {
    "INDEX_CSV_FILE": "_common",
    "INDEX_FILE": "_common",
    "INDEX_METADATA_KEY": "_common",
    "LEGACY_INDEX_METADATA_KEY": "_common",
    "LOCATION_COLUMNS": "_common",
    "WRITER": "_common",
    "WRITER_METADATA_KEY": "_common",
    "is_asynchronous": "_common",
    "load_manifest": "index",
    "write_index": "index",
    "iter_sequences": "reader",
    "load_sequence": "reader",
    "read_tables": "reader",
    "CameraStream": "sequence",
    "RobotStream": "sequence",
    "Sequence": "sequence",
    "row_groups_hold_ids": "shards",
    "rows_list_ids": "shards",
    "index_is_current": "shards",
    "read_shard_index": "shards",
    "rebuild_index": "shards",
    "shard_paths": "shards",
    "shard_status": "shards",
    "shard_writer": "shards",
    "write_shard": "shards",
    "camera_table": "tables",
    "robot_table": "tables",
}

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
    "index_is_current",
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


def __getattr__(name: str):
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module 'kinhec.io' has no attribute {name!r}") from None
    try:
        loaded = importlib.import_module(f"kinhec.io.{module}")
    except ImportError as exc:  # pandas or pyarrow not installed (a light install): say which extra brings them
        missing = missing_dependency(exc, f"kinhec.io.{name}")
        if missing is None:
            raise
        raise missing from None
    value = getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))

