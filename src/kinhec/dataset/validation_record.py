"""Where the outcome of the last ``kinhec validate`` of a dataset folder is kept, so the page can say it.

``kinhec validate DIR`` writes its report to ``DIR/.kinhec/validation.json``
(:data:`RECORD`, in the folder's scratch state, which publishing leaves out)
together with the SHA-256 of the index it validated; ``kinhec report DIR``
reads it back (:func:`read_record`) and says "passed", "FAILED" or, when the
index has changed since, that the record is out of date.  An explicit report
(``kinhec validate DIR --report FILE``, ``kinhec report DIR --validation
FILE``) still works as before.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from kinhec.util import jsonutil
from kinhec.util.errors import DatasetFormatError
from kinhec.util.fsutil import atomic_write_text
from kinhec.io import INDEX_FILE
from kinhec.util.locking import STATE_DIR

__all__ = ["RECORD", "index_digest", "record_validation", "read_record"]

#: The record, relative to the dataset folder.
RECORD = Path(STATE_DIR) / "validation.json"


def index_digest(root) -> str | None:
    """SHA-256 (hex) of the folder's index ``sequences.parquet``; None without one."""
    path = Path(root) / INDEX_FILE
    if not path.is_file():
        return None
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def record_validation(root, report) -> Path | None:
    """Keep ``report`` (a :class:`kinhec.dataset.validate.ValidationReport`) as the folder's last validation.

    Returns
    -------
    Path or None
        The record written, or None when ``root`` has no index (not a dataset: nothing to record) or the
        record cannot be written (a read-only copy); validating never fails because of the record.
    """
    root = Path(root)
    digest = index_digest(root)
    if digest is None:
        return None
    data = dict(report.to_dict())
    data["index_sha256"] = digest
    data["recorded_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    path = root / RECORD
    try:
        path.parent.mkdir(exist_ok=True)
        atomic_write_text(path, jsonutil.dumps(data, indent=2) + "\n")
    except OSError:
        return None
    return path


def read_record(root) -> tuple[dict | None, str]:
    """The last validation of ``root`` and whether it still describes the folder.

    Returns
    -------
    record : dict or None
        The report as written by :func:`record_validation` (None when there is none).
    state : str
        ``"current"`` (the index is the one validated), ``"stale"`` (the index changed since) or ``"none"``.

    Raises
    ------
    DatasetFormatError
        The record exists but is not a validation report (the message names the file).
    """
    path = Path(root) / RECORD
    if not path.is_file():
        return None, "none"
    try:
        data = jsonutil.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetFormatError(f"{path}: cannot read the validation record ({exc}); delete it or run kinhec "
                                 "validate again") from None  # fmt: skip
    if not isinstance(data, dict) or "ok" not in data or not isinstance(data.get("findings"), list):
        raise DatasetFormatError(f"{path}: expected a kinhec validation record (keys 'ok', 'findings'); delete it or "
                                 "run kinhec validate again")  # fmt: skip
    return data, ("current" if data.get("index_sha256") == index_digest(root) else "stale")
