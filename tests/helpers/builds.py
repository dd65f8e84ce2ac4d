"""Folders built once per test run and shared by the pytest-xdist workers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable


def built_once(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name`` built by ``build(folder)`` once per test run and shared by every xdist worker.

    Each worker is a process with its own session fixtures; the folder lives in the run's base temporary
    folder, common to the workers, and a file lock makes one worker build it while the others wait.  Tests
    read it; a test that writes copies it first.
    """
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's base temp (each worker has its own folder below it)
    folder = base / f"built-{name}"
    done = base / f"built-{name}.done"
    with FileLock(str(base / f"built-{name}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed in another worker
            folder.mkdir(parents=True)
            build(folder)
            done.touch()
    return folder
