"""Atomic file writes: a file is either its old content or its complete new content, never a torn one.

Everything kinhec writes into a dataset folder goes through here (or, for the
two files of a shard that must appear together, through the same recipe in
:mod:`kinhec.io`): write to ``<name>.tmp`` in the same folder, flush and
``fsync``, then ``os.replace`` onto the final name.  A crash leaves at most a
``*.tmp`` file, which the runner and ``kinhec clean --partial`` remove.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

__all__ = ["atomic_write", "atomic_write_text"]


def atomic_write(path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp_path)`` to produce the file, then move it onto ``path`` atomically.

    The temporary file is removed if ``write`` raises.  Returns ``path``.
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def atomic_write_text(path, text: str) -> Path:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8", newline="\n"))
