"""Which files of a dataset folder are published, and the command that uploads exactly those (the tests' copy of
the recipe in ``docs/performance.md``, "Publishing a folder"; kinhec has no upload command).

A dataset folder also holds kinhec's scratch state: the lock, logs and
benchmark parts under ``.kinhec/``, the outputs of subset benchmark runs
under ``benchmarks/subsets/``, and ``*.tmp`` files of an interrupted write.
None of it belongs to the published copy.  :data:`UPLOAD_EXCLUDE` lists them
as glob patterns; :func:`upload_command` gives the Hugging Face CLI command
with those patterns (``docs/performance.md`` shows it), and
:func:`published_files` lists what that command uploads.
"""

from __future__ import annotations

import fnmatch
import shlex
from pathlib import Path

__all__ = ["UPLOAD_EXCLUDE", "published_files", "upload_command"]

#: Glob patterns (relative to the dataset folder) of files never uploaded.
UPLOAD_EXCLUDE = (".kinhec/*", "benchmarks/subsets/*", "benchmarks/.parts/*", "*.tmp")


def _excluded(rel: str) -> bool:
    return any(fnmatch.fnmatch(rel, pat) for pat in UPLOAD_EXCLUDE)


def published_files(root) -> list[str]:
    """Relative POSIX paths of the files an upload with :data:`UPLOAD_EXCLUDE` sends, sorted."""
    root = Path(root)
    return sorted(
        rel for p in root.rglob("*") if p.is_file() and not _excluded(rel := p.relative_to(root).as_posix())
    )


def upload_command(root, repo: str) -> str:
    """``hf upload`` command publishing ``root`` to the dataset repository ``repo`` without scratch state."""
    excludes = " ".join(f"--exclude {shlex.quote(p)}" for p in UPLOAD_EXCLUDE)
    return f"hf upload {shlex.quote(repo)} {shlex.quote(str(root))} . --repo-type dataset {excludes}"
