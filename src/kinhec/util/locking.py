"""The one lock of a kinhec folder: every writer (generate, benchmark, index) takes it.

The lock is the file ``<folder>/.kinhec/lock`` created with ``O_EXCL``; it
holds the owner's pid, host, command line and start time, so that a refused
command can say who is writing.  A lock left by a process that no longer runs
on this host is taken over.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

from kinhec.util.errors import FolderInUseError

__all__ = ["STATE_DIR", "LOCK_NAME", "FolderLock", "writer_lock", "lock_holder", "live_lock_holder", "pid_alive",
           "refuse_if_in_use"]

#: Scratch folder of a dataset (lock, logs, benchmark parts); never part of the published files.
STATE_DIR = ".kinhec"
#: Name of the lock file inside :data:`STATE_DIR`.
LOCK_NAME = "lock"

class FolderLock:
    """A lock file refusing a second kinhec writer on a folder.

    Parameters
    ----------
    path : Path
        The lock file.
    folder : Path
        The folder it protects (named in the error message).
    """

    def __init__(self, path: Path, folder: Path) -> None:
        self.path = Path(path)
        self.folder = Path(folder)
        self._held = False

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        me = {"pid": os.getpid(), "host": socket.gethostname(), "command": _command_line(),
              "started": time.strftime("%Y-%m-%d %H:%M:%S %Z")}  # fmt: skip
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                other = lock_holder(self.path) or {}
                if other.get("host") == me["host"] and not pid_alive(_int(other.get("pid"))):
                    self.path.unlink(missing_ok=True)  # stale lock of a dead process
                    continue
                cmd = f" running '{other['command']}'" if other.get("command") else ""
                since = f" since {other['started']}" if other.get("started") else ""
                raise FolderInUseError(
                    f"{self.folder}: expected a folder no other kinhec process is writing, got a lock held by pid "
                    f"{other.get('pid')} on {other.get('host')}{cmd}{since} ({self.path}); wait for it to finish, "
                    "or, if that process is gone, delete the lock file"
                ) from None
            with os.fdopen(fd, "w") as f:
                json.dump(me, f)
            self._held = True
            return

    def release(self) -> None:
        if self._held:
            self.path.unlink(missing_ok=True)
            self._held = False

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def writer_lock(folder) -> FolderLock:
    """The lock of ``folder`` (``<folder>/.kinhec/lock``), shared by every kinhec writer."""
    folder = Path(folder)
    return FolderLock(folder / STATE_DIR / LOCK_NAME, folder)


def lock_holder(path) -> dict | None:
    """Contents of a lock file (pid, host, command, started), or None when absent or unreadable."""
    try:
        data = json.loads(Path(path).read_text() or "{}")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def live_lock_holder(path) -> dict | None:
    """Like :func:`lock_holder`, but None also for a lock left by a process no longer running on this host."""
    other = lock_holder(path)
    if other is None:
        return None
    if other.get("host") == socket.gethostname() and not pid_alive(_int(other.get("pid"))):
        return None
    return other


def refuse_if_in_use(folder, action: str) -> None:
    """Raise :class:`~kinhec.util.errors.FolderInUseError` when a running kinhec writer holds the lock of ``folder``.

    A folder being written is incomplete by design (no index yet, or one of
    the shards done so far): ``validate``, ``benchmark`` and ``report`` say it
    is in use and by whom instead of reporting what is not there yet.
    ``action`` is the refused command's verb ("validate", "benchmark", ...).
    """
    path = Path(folder) / STATE_DIR / LOCK_NAME
    busy = live_lock_holder(path)
    if busy is not None:
        what = busy.get("command") or "kinhec"
        raise FolderInUseError(f"{folder}: in use: {what} (pid {busy.get('pid')} on {busy.get('host')}) is writing it; "
                         f"{action} it when that run has finished (a lock left by a crash: delete {path})")


def _command_line() -> str:
    argv = list(sys.argv)
    if argv and Path(argv[0]).name in ("kinhec", "__main__.py", "cli.py"):
        argv[0] = "kinhec"
    return " ".join(argv)[:300]


def _int(v) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return -1


def pid_alive(pid: int) -> bool:
    """True when a process ``pid`` runs on this host (or cannot be signalled by us)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
