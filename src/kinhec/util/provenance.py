"""Which files of a dataset folder kinhec wrote, and which data a results table belongs to.

Two guarantees rest on this module:

* ``kinhec generate`` never replaces a file it did not write.  Every file
  kinhec writes through :func:`write_owned` is recorded with its SHA-256 in
  ``.kinhec/written.json``; a file that is not recorded (or was edited since)
  and differs from what kinhec would write belongs to the user and is kept.
* Derived outputs are tied to their data.  :func:`data_fingerprint` hashes the
  identity of every sequence of the index (id, seed, generator version); the
  benchmark stores it in the metadata of ``results.parquet``
  (:data:`FINGERPRINT_KEY`), and :func:`check_results_match` refuses results
  computed on other data (a folder regenerated with another seed since).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from kinhec.util.errors import InputError
from kinhec.util.fsutil import atomic_write_text

__all__ = [
    "FINGERPRINT_KEY",
    "WRITTEN_FILE",
    "is_dataset_folder",
    "user_files",
    "is_owned",
    "write_owned",
    "data_fingerprint",
    "results_fingerprint",
    "check_results_match",
]

#: Key of the data fingerprint in the schema metadata of ``results.parquet``.
FINGERPRINT_KEY = b"kinhec.data_fingerprint"

#: Record of the files kinhec wrote into a dataset folder (relative path -> SHA-256).
WRITTEN_FILE = Path(".kinhec") / "written.json"

_DATASET_MARKERS = ("generation_info.json", "sequences.parquet")


def is_dataset_folder(root) -> bool:
    """True for a kinhec or published dataset folder (``generation_info.json``, an index, or shard folders)."""
    root = Path(root)
    return any((root / m).is_file() for m in _DATASET_MARKERS) or ((root / "robot").is_dir() and (root / "camera").is_dir())


def user_files(root) -> list[str]:
    """Names of the entries of a folder that is not a dataset (hidden entries aside), sorted."""
    root = Path(root)
    if not root.is_dir() or is_dataset_folder(root):
        return []
    return sorted(p.name for p in root.iterdir() if not p.name.startswith("."))


def _sha(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()


def _record(root: Path) -> dict:
    try:
        data = json.loads((root / WRITTEN_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def is_owned(root, name: str, text: str | None = None) -> bool:
    """True when ``root/name`` is absent, was written by kinhec and not edited since, or already holds ``text``."""
    root = Path(root)
    p = root / name
    if not p.exists():
        return True
    if not p.is_file():
        return False
    try:
        data = p.read_bytes()
    except OSError:
        return False
    if text is not None and data == text.encode():
        return True
    return _record(root).get(str(name)) == _sha(data)


def write_owned(root, name: str, text: str, *, replace: bool = False) -> bool:
    """Write ``text`` to ``root/name`` unless the file there belongs to the user; True when written.

    The file's hash is recorded in ``.kinhec/written.json`` so that later runs
    may replace it (until the user edits it).  ``replace=True`` writes in any
    case (a command whose purpose is that file, such as ``kinhec card``).
    """
    root = Path(root)
    if not replace and not is_owned(root, name, text):
        return False
    atomic_write_text(root / name, text)
    rec = _record(root)
    rec[str(name)] = _sha(text.encode())
    (root / WRITTEN_FILE).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(root / WRITTEN_FILE, json.dumps(rec, indent=1, sort_keys=True))
    return True


def data_fingerprint(root) -> str | None:
    """SHA-256 (16 hex digits) of the sequences of a dataset's index: ids, seeds, generator versions.

    None when the folder has no readable index.  Identical data (the same tier,
    seed and generator version) give the same fingerprint.
    """
    import pyarrow.parquet as pq

    idx = Path(root) / "sequences.parquet"
    if not idx.is_file():
        return None
    try:
        names = pq.read_schema(idx).names
        cols = [c for c in ("sequence_id", "seed", "generator_version") if c in names]
        if "sequence_id" not in cols:
            return None
        t = pq.read_table(idx, columns=cols).sort_by("sequence_id")
    except Exception:  # unreadable index: no fingerprint
        return None
    rows = list(zip(*[t.column(c).to_pylist() for c in cols]))
    return _sha(json.dumps([cols, rows], default=str).encode())[:16]


def results_fingerprint(path) -> str | None:
    """The data fingerprint stored in a ``results.parquet`` (None for results written without one)."""
    import pyarrow.parquet as pq

    try:
        md = pq.read_schema(path).metadata or {}
    except Exception:
        return None
    v = md.get(FINGERPRINT_KEY)
    return v.decode() if v else None


def check_results_match(root, results_path) -> None:
    """Raise :class:`InputError` when ``results_path`` was computed on other data than ``root`` holds now.

    Results without a fingerprint (older runs, published copies) are accepted.
    """
    theirs = results_fingerprint(results_path)
    if theirs is None:
        return
    mine = data_fingerprint(root)
    if mine is not None and mine != theirs:
        raise InputError(
            f"{results_path}: expected benchmark results of the data now in {root}, got results of other data "
            f"(fingerprint {theirs}, data {mine}: the folder was generated again since); run `kinhec benchmark "
            f"{root}` again"
        )
