"""The data that travels with the repository: every file recorded with its source, licence and sha256.

``tests/data/realdata/SOURCES.toml`` and ``tests/data/published/SOURCES.toml`` name each copied file; a file
that is not recorded, or whose bytes changed, fails here.  Where ``shared/`` is present, the whole published
smoke copy must be the one the trimmed copy was taken from.
"""

from __future__ import annotations

import hashlib
import sys

import pytest

from helpers.paths import PUBLISHED, PUBLISHED_CARD, REALDATA, TESTS, shared_data, shared_root

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _recorded() -> dict:
    """``{path under tests/data: sha256}`` of every copied file, from both SOURCES.toml."""
    real = tomllib.loads((REALDATA / "SOURCES.toml").read_text())
    pub = tomllib.loads((PUBLISHED / "SOURCES.toml").read_text())
    out = {f"realdata/{rel}": digest for rel, digest in real["sha256"].items()}
    out[f"published/{pub['card']['file']}"] = pub["card"]["sha256"]
    out.update({f"published/smoke/{rel}": v["sha256"] for rel, v in pub["smoke"]["files"].items() if v["kept"]})
    return out


def test_every_copied_file_is_recorded_with_its_checksum():
    recorded = _recorded()
    data = TESTS / "data"
    on_disk = {p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file() and p.name != "SOURCES.toml"}
    assert on_disk == set(recorded), (sorted(on_disk - set(recorded)), sorted(set(recorded) - on_disk))
    bad = [rel for rel, digest in recorded.items() if _sha(data / rel) != digest]
    assert not bad, f"changed since they were recorded: {bad}"
    assert PUBLISHED_CARD.is_file()


def test_every_source_names_its_licence_and_origin():
    real = tomllib.loads((REALDATA / "SOURCES.toml").read_text())
    for name in ("tabb_ds1", "rwhe_calib", "ethz_asl"):
        assert real[name]["licence"] and real[name]["source"] and real[name]["citation"], name
    assert (REALDATA / real["ethz_asl"]["licence_file"]).read_text().startswith("BSD 3-Clause License")
    pub = tomllib.loads((PUBLISHED / "SOURCES.toml").read_text())
    assert pub["card"]["licence"] == "MIT" and pub["smoke"]["licence"].startswith("MIT")
    assert (PUBLISHED / "smoke" / "LICENSE").read_text().startswith("MIT License")


def test_the_shared_published_copy_is_the_recorded_one():
    full = shared_data("published/smoke", "the whole published smoke copy")
    pub = tomllib.loads((PUBLISHED / "SOURCES.toml").read_text())
    files = {p.relative_to(full).as_posix() for p in full.rglob("*") if p.is_file()}
    assert files == set(pub["smoke"]["files"])
    bad = [rel for rel, v in pub["smoke"]["files"].items() if _sha(full / rel) != v["sha256"]]
    assert not bad


def test_shared_data_skips_naming_what_is_missing(monkeypatch):
    monkeypatch.delenv("KINHEC_REQUIRE_SHARED", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"needs the moon's calibration: no .*no_such_folder"):
        shared_data("no_such_folder", "the moon's calibration")
    monkeypatch.setenv("KINHEC_REQUIRE_SHARED", "1")
    with pytest.raises(pytest.fail.Exception, match="needs the moon's calibration"):
        shared_data("no_such_folder", "the moon's calibration")
    root = shared_root()
    assert root is None or root.is_dir()
