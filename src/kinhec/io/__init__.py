"""Reading and writing KinHEC dataset folders.

Transitional step of splitting this module by role: the code is still in one
file, :mod:`kinhec.io.sequence`, and every name is re-exported here.
"""

from __future__ import annotations

from kinhec.io.sequence import *  # noqa: F403
from kinhec.io.sequence import (  # noqa: F401  (names reached through kinhec.io outside __all__)
    LEGACY_INDEX_METADATA_KEY,
    WRITER,
    WRITER_METADATA_KEY,
    __all__,
    _row_groups_hold_ids,
    _rows_list_ids,
    shard_writer,
)
