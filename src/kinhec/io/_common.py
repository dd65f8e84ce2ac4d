"""What every part of :mod:`kinhec.io` shares: file names, metadata keys and small helpers.

The names of the index files (:data:`INDEX_FILE`, :data:`INDEX_CSV_FILE`),
the Parquet metadata keys of a shard (:data:`INDEX_METADATA_KEY`,
:data:`WRITER_METADATA_KEY`), the index columns that locate a sequence in its
shard (:data:`LOCATION_COLUMNS`), the reading of the ``sync`` column
(:func:`is_asynchronous`), the pieces of an atomic write (``<name>.tmp``,
flushed, then renamed) and the argument checks used by the other modules.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from kinhec import __version__
from kinhec.util.errors import DatasetFormatError, InputError, UnknownNameError
from kinhec.util.locking import refuse_if_in_use
from kinhec.io.schema import TRACKS

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


def is_asynchronous(sync_value) -> bool:
    """``True`` when a ``sync`` column value means asynchronous streams.

    Any string starting with ``"async"`` (case-insensitive, surrounding blanks
    ignored) is asynchronous; everything else, including missing values, is
    synchronous.
    """
    return isinstance(sync_value, str) and sync_value.strip().lower().startswith("async")


def is_missing(v) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    if isinstance(v, (float, np.floating)):
        return bool(np.isnan(v))
    return False


def fsync_file(path: Path) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def fsync_dir(path: Path) -> None:
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


def tmp_path_of(path: Path) -> Path:
    return path.with_name(path.name + ".tmp")


def check_track(track) -> str:
    if not isinstance(track, str) or track not in TRACKS:
        raise UnknownNameError("track", track, TRACKS)
    return track


def check_shard_index(shard_index) -> int:
    if isinstance(shard_index, bool) or not isinstance(shard_index, (int, np.integer)) or not (
        0 <= int(shard_index) <= 99999
    ):
        raise InputError(f"shard_index: expected an integer in [0, 99999], got {shard_index!r}")
    return int(shard_index)


def did_you_mean(name, candidates) -> str:
    """``"; did you mean 'x' or 'y'?"`` with the closest candidates, or an empty string."""
    import difflib

    close = difflib.get_close_matches(str(name), list(candidates), n=3, cutoff=0.6)
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?" if close else ""


def dataset_root(root) -> Path:
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
        refuse_if_in_use(root, "read")  # a run that has not written its index yet: say so, not "not a dataset"
        raise DatasetFormatError(f"{root}: not a kinhec dataset: expected an index file {INDEX_FILE}, found none")
    return root
