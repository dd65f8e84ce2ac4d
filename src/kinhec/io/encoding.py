"""How the stream shards (``robot/*.parquet``, ``camera/*.parquet``) are encoded on disk.

The columns and Arrow types are those of :mod:`kinhec.io.schema`; only the
Parquet encoding is chosen here, all lossless and all read by any Parquet
reader that implements the format's standard encodings (pyarrow >= 12 among
them):

* float columns (scalars and the elements of the joint lists) use
  ``BYTE_STREAM_SPLIT``: the eight bytes of the doubles of a page are stored
  as eight byte streams, so that zstd finds the nearly constant sign, exponent
  and leading mantissa bytes of a smooth trajectory;
* dictionary encoding only for ``sequence_id`` (one value per row group); for
  the other columns a dictionary never pays and its fallback costs bytes;
* zstd at level :data:`ZSTD_LEVEL`;
* column statistics only for ``sequence_id``: resuming reads them from the
  footers (:func:`kinhec.io.shard_status`); the other columns' statistics
  would only make every footer bigger.

One row group per sequence is part of the format and is kept.
"""

from __future__ import annotations

import pyarrow as pa

__all__ = ["ZSTD_LEVEL", "stream_write_options"]

#: zstd level of the stream shards.  3 (zstd's default): level 9 makes the small tier's shards 1.3 % and the
#: full tier's mixed shards 0.4 % smaller, but their writing takes half as long again and the generation of a
#: mixed sequence about 10 % more CPU; levels above 15 write several times slower for another 1-2 %.
ZSTD_LEVEL = 3


def _float_leaves(schema: pa.Schema) -> list[str]:
    out = []
    for f in schema:
        t = f.type
        if pa.types.is_floating(t):
            out.append(f.name)
        elif (pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_floating(t.value_type):
            out.append(f"{f.name}.list.element")
    return out


def stream_write_options(schema: pa.Schema) -> dict:
    """Keyword arguments of :class:`pyarrow.parquet.ParquetWriter` for a robot or camera shard of ``schema``."""
    return {
        "compression": "zstd",
        "compression_level": ZSTD_LEVEL,
        "use_dictionary": ["sequence_id"],
        "write_statistics": ["sequence_id"],
        "column_encoding": {name: "BYTE_STREAM_SPLIT" for name in _float_leaves(schema)},
    }
