"""Where the data the tests read lives: the repository's ``tests/data/`` and the large ``shared/`` folder beside the
clone (see ``tests/conftest.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: The tests folder and the repository's root.
TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
#: Real public hand-eye data copied into the repository (SOURCES.toml).
REALDATA = TESTS / "data" / "realdata"
#: Files of the published KinHEC dataset copied into the repository (SOURCES.toml).
PUBLISHED = TESTS / "data" / "published"
#: The published smoke folder without the shards of seven of its eight tracks (every other file verbatim).
PUBLISHED_SMOKE_TRIMMED = PUBLISHED / "smoke"
#: The published card of the full tier (composition, leaderboard).
PUBLISHED_CARD = PUBLISHED / "card_full_000_d083e06558e04aff.txt"

#: The ETH-ASL pose streams (CSV) among the real data.
ETH = REALDATA / "ethz_asl"


def shared_root() -> Path | None:
    """``shared/`` beside the clone or beside the nearest of its parents that has one (None when absent)."""
    return next((p / "shared" for p in REPO.parents if (p / "shared").is_dir()), None)


def shared_data(rel: str, what: str) -> Path:
    """``shared/<rel>``, or skip the calling test naming ``what`` is missing and where it was looked for.

    With the environment variable ``KINHEC_REQUIRE_SHARED`` set, a missing folder fails the test instead.
    """
    root = shared_root()
    path = root / rel if root is not None else None
    if path is None or not path.exists():
        where = path if path is not None else f"shared/{rel} beside {REPO} or its parents"
        msg = f"needs {what}: no {where} (the shared data of developers and CI)"
        if os.environ.get("KINHEC_REQUIRE_SHARED"):
            pytest.fail(msg)
        pytest.skip(msg)
    return path
