"""Reading sequences: only the row groups a sequence needs, into :class:`~kinhec.io.sequence.Sequence` objects.

:func:`load_sequence` looks a sequence up in the index and reads its row group
of the robot and of the camera shard file; :func:`read_tables` stops at the
Arrow tables (with the index row); :func:`iter_sequences` walks many sequences
and opens a shard file once for a run of consecutive sequences stored in it.
A missing, truncated or corrupt shard, or a row group holding another
sequence, raises :class:`~kinhec.util.errors.DatasetFormatError`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kinhec.util.errors import DatasetFormatError, InputError
from kinhec.io._common import dataset_root, did_you_mean, is_missing
from kinhec.io.index import check_manifest_columns, load_manifest, manifest_row
from kinhec.io.sequence import Sequence
from kinhec.io.tables import conform_table
from kinhec.io.schema import CAMERA_SCHEMA, ROBOT_SCHEMA, SequenceTables

__all__ = ["read_tables", "load_sequence", "iter_sequences"]


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
        if not isinstance(rel, str) or not rel or is_missing(rg):
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
            # (one thread: a sequence's row group is small, and Arrow's reader threads cost a quarter more CPU)
            table = pf.read_row_group(rg, use_threads=False)
        except Exception as exc:  # pyarrow raises several types for damaged files
            raise DatasetFormatError(f"{path}: cannot read row group {rg} of {sid!r}, the file is corrupt ({exc})") from None
        if "sequence_id" not in table.schema.names:
            raise DatasetFormatError(f"{path}: expected a sequence_id column, found none")
        found = [v for v in pc.unique(table.column("sequence_id")).to_pylist() if v != sid]
        if found:
            raise DatasetFormatError(f"{path}: row group {rg} holds sequence {found[0]!r}, expected {sid!r}")
        return conform_table(table, schema, f"{path} row group {rg}")


def read_tables(root, sequence_id: str, manifest=None) -> SequenceTables:
    """The stored tables of one sequence: its index row (dict) and its two stream tables.

    Reads only the sequence's row group of each shard file.  See
    :func:`load_sequence` for the arguments and errors.
    """
    root = dataset_root(root)
    info = manifest_row(root, sequence_id, manifest)
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
    root = dataset_root(root)
    if manifest is None:
        manifest = load_manifest(root)
    elif not isinstance(manifest, pd.DataFrame):
        raise InputError(f"manifest: expected the DataFrame of load_manifest, got {type(manifest).__name__}")
    check_manifest_columns(manifest)
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
                             f"{did_you_mean(unknown[0], [str(v) for v in index])}")  # fmt: skip
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
