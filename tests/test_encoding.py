"""The stream shards' Parquet encoding: lossless, standard, smaller, and statistics where resume needs them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from kinhec import io as kio
from kinhec.io.encoding import ZSTD_LEVEL, stream_write_options
from kinhec.io.schema import CAMERA_SCHEMA, ROBOT_SCHEMA

from helpers.datasets import build_sequences  # noqa: E402


def _bits(col: pa.ChunkedArray):
    col = col.combine_chunks()
    if pa.types.is_list(col.type):
        return col.offsets.to_numpy().tobytes(), _bits(pa.chunked_array([col.flatten()]))
    if pa.types.is_floating(col.type):
        return col.to_numpy(zero_copy_only=False).view(np.uint64).tobytes()
    return col.to_pylist()


def test_shards_use_the_encoding_and_round_trip_bit_for_bit(tmp_path):
    seqs, _ = build_sequences(exact=False, seed=11)
    noise = [s for s in seqs if s.index_row["track"] == "noise"]
    # NaN (an invisible frame's measurement), signed zero and subnormals must come back bit for bit
    cam = noise[0].camera
    px = cam.column("cam_target_meas_px").to_numpy().copy()
    px[:3] = [np.nan, -0.0, 5e-324]
    noise[0].camera = cam.set_column(cam.schema.get_field_index("cam_target_meas_px"), "cam_target_meas_px", pa.array(px))
    kio.write_shard(tmp_path, "noise", 0, noise)
    for path, schema, stream in zip(kio.shard_paths(tmp_path, "noise", 0), (ROBOT_SCHEMA, CAMERA_SCHEMA), ("robot", "camera")):
        table = pq.read_table(path)  # plain pyarrow
        assert table.schema.equals(schema, check_metadata=False)
        written = pa.concat_tables([getattr(s, stream) for s in noise]).cast(schema)
        for name in schema.names:
            assert _bits(table[name]) == _bits(written[name]), (stream, name)
        md = pq.read_metadata(path)
        opts = stream_write_options(schema)
        for k in range(md.num_row_groups):
            rg = md.row_group(k)
            for i in range(rg.num_columns):
                c = rg.column(i)
                assert c.compression == "ZSTD"
                if c.path_in_schema in opts["column_encoding"]:
                    assert "BYTE_STREAM_SPLIT" in c.encodings, c.path_in_schema
                if c.path_in_schema == "sequence_id":
                    assert c.statistics is not None and c.statistics.min == c.statistics.max
                else:
                    assert c.statistics is None or not c.statistics.has_min_max, c.path_in_schema
    assert kio.shard_status(tmp_path, "noise", 0, [s.index_row["sequence_id"] for s in noise]) == "complete"


def test_every_float_column_is_byte_stream_split():
    for schema in (ROBOT_SCHEMA, CAMERA_SCHEMA):
        opts = stream_write_options(schema)
        floats = {f.name for f in schema if pa.types.is_floating(f.type)}
        floats |= {f"{f.name}.list.element" for f in schema if pa.types.is_list(f.type)}
        assert set(opts["column_encoding"]) == floats
        assert opts["use_dictionary"] == ["sequence_id"] and opts["compression_level"] == ZSTD_LEVEL
