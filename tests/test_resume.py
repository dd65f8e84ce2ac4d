"""Resume: what is done is decided from the Parquet footers, and the plan lists ids without expanding recipes."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kinhec import io as kio
from kinhec.synth import runner
from kinhec.synth.tiers import expand_tier, load_tier, shards_of_track

from helpers.datasets import build_sequences  # noqa: E402  (the hand-built fixture of the io tests)


@pytest.fixture()
def shard(tmp_path):
    seqs, _ = build_sequences(exact=True, seed=3)
    noise = [s for s in seqs if s.index_row["track"] == "noise"]
    kio.write_shard(tmp_path, "noise", 0, noise)
    return tmp_path, [s.index_row["sequence_id"] for s in noise]


def test_status_is_decided_without_reading_a_data_page(shard, monkeypatch):
    root, ids = shard

    def no_data(*a, **k):
        raise AssertionError("shard_status read data pages")

    monkeypatch.setattr(pq.ParquetFile, "read", no_data)
    monkeypatch.setattr(pq.ParquetFile, "read_row_group", no_data)
    monkeypatch.setattr(pq, "read_table", no_data)
    assert kio.shard_status(root, "noise", 0, ids) == "complete"
    assert kio.shard_status(root, "noise", 0, ids[::-1]) == "corrupt"
    assert kio.shard_status(root, "noise", 0, [ids[0], "noise-000009"]) == "corrupt"


def test_files_without_statistics_fall_back_to_the_id_column(shard):
    root, ids = shard
    for path in kio.shard_paths(root, "noise", 0):
        pf = pq.ParquetFile(path)
        meta = pf.metadata.metadata
        tables = [pf.read_row_group(k) for k in range(pf.num_row_groups)]
        with pq.ParquetWriter(path, pf.schema_arrow, write_statistics=False) as w:
            for t in tables:
                w.write_table(t)
            w.add_key_value_metadata({k.decode(): v.decode() for k, v in meta.items() if k != b"ARROW:schema"})
        assert pq.read_metadata(path).row_group(0).column(0).statistics is None
    assert kio.shard_status(root, "noise", 0, ids) == "complete"
    assert kio.shard_status(root, "noise", 0, ids[::-1]) == "corrupt"
    # a row group holding a foreign id is seen by the column read
    path = kio.shard_paths(root, "noise", 0)[0]
    pf = pq.ParquetFile(path)
    meta = pf.metadata.metadata
    t0, t1 = pf.read_row_group(0), pf.read_row_group(1)
    t0 = t0.set_column(0, "sequence_id", pa.array(["noise-000007"] * t0.num_rows))
    with pq.ParquetWriter(path, pf.schema_arrow, write_statistics=False) as w:
        w.write_table(t0)
        w.write_table(t1)
        w.add_key_value_metadata({k.decode(): v.decode() for k, v in meta.items() if k != b"ARROW:schema"})
    assert kio.shard_status(root, "noise", 0, ids) == "corrupt"


def test_rows_list_ids_needs_every_id_in_order():
    text = b'[{"sequence_id":"noise-000000","config_json":"{\\"sequence_id\\": \\"noise-000005\\"}"},' \
           b'{"sequence_id":"noise-000001"}]'
    assert kio.rows_list_ids(text, ["noise-000000", "noise-000001"])
    assert not kio.rows_list_ids(text, ["noise-000001", "noise-000000"])
    assert not kio.rows_list_ids(text, ["noise-000000"])  # a row too many
    assert not kio.rows_list_ids(text, ["noise-000000", "noise-000005"])  # only quoted inside config_json


@pytest.mark.parametrize("limit", [None, 2, 7])
def test_plan_by_ids_matches_the_expanded_plan(tmp_path, limit):
    tier = load_tier("small")
    light, counts = runner.plan_shard_ids(tier, tmp_path, limit=limit)
    full, counts_full = runner.plan_shards(tier, tmp_path, limit=limit)
    assert counts == counts_full
    assert [(t.track, t.shard_index, t.sequence_ids, t.full_ids) for t in light] == [
        (t.track, t.shard_index, t.sequence_ids, t.full_ids) for t in full
    ]
    some = light[:: max(1, len(light) // 4)]
    assert runner.with_recipes(tier, some) == [t for t in full if (t.track, t.shard_index) in {(s.track, s.shard_index) for s in some}]
    recipes = expand_tier(tier, ["mixed"])["mixed"]
    assert tuple(r["sequence_id"] for r in shards_of_track(recipes, tier.shard_size)[0]) == (light[
        [t.track for t in light].index("mixed")
    ].full_ids)
