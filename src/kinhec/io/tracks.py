"""Track names and the naming of sequences and shards.

Kept apart from :mod:`kinhec.io.schema` (which builds the Arrow schemas) so that
commands that only need names -- ``kinhec plan``, ``kinhec info``, argument
checks -- start without importing pyarrow.
"""

from __future__ import annotations

TRACKS = ("noise", "motion", "temporal", "outliers", "monocular", "robot_error", "pnp", "mixed")


def sequence_id(track: str, index: int) -> str:
    """``<track>-<6-digit index>``, e.g. ``noise-000000``."""
    return f"{track}-{index:06d}"


def shard_name(track: str, shard: int) -> str:
    """``<track>-<5-digit shard index>.parquet``, e.g. ``noise-00000.parquet``."""
    return f"{track}-{shard:05d}.parquet"
