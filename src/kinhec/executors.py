"""Where the units of work of a long command run: in this process, in a local process pool, or on Dask.

``kinhec generate`` (shards to generate) and ``kinhec benchmark`` (shards to
evaluate) share these executors.  Each wraps one module-level function
``fn(task) -> outcome`` (it must be picklable, and importable by the workers
of a Dask cluster) and offers the same four operations, so the driving loop
does not care where the work happens:

* ``submit(task)`` returns a future (``concurrent.futures.Future`` or a Dask
  future) whose ``result()`` is ``fn(task)``;
* ``wait_any(futures, timeout)`` returns the set of those that finished;
* ``cancel_pending(futures)`` cancels those not started yet;
* ``shutdown()`` releases the pool or the cluster connection.

``capacity`` is the number of tasks that can run at once.  Worker processes of
the local pool ignore ``SIGINT``: ``Ctrl+C`` reaches the parent only, which
cancels what has not started and lets the running tasks finish.  They die with
their parent: a parent killed outright (``kill -9``) takes them along at once
(``prctl(PR_SET_PDEATHSIG)`` on Linux, and a watch thread everywhere) instead
of leaving them to finish their shards.

:class:`FolderLock` is the lock file that keeps two such commands from writing
the same folder at the same time.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable

from kinhec.errors import InputError

__all__ = [
    "EXECUTORS",
    "ignore_sigint",
    "die_with_parent",
    "worker_init",
    "InlineExecutor",
    "LocalExecutor",
    "DaskExecutor",
    "make_executor",
    "FolderLock",
    "lock_holder",
]

#: Executor names accepted by :func:`make_executor`.
EXECUTORS = ("local", "dask")


def ignore_sigint() -> None:
    """Process-pool initializer: ``Ctrl+C`` is handled by the parent only."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


#: How often a worker's watch thread checks that its parent still runs [s].
PARENT_WATCH_S = 0.5


def die_with_parent(parent_pid: int) -> None:
    """Make this (worker) process end as soon as the process ``parent_pid`` is gone.

    On Linux the kernel sends ``SIGKILL`` when the parent dies
    (``prctl(PR_SET_PDEATHSIG)``); everywhere, a daemon thread checks the parent
    pid every :data:`PARENT_WATCH_S` seconds and exits the process when it
    changed (the worker was re-parented).
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # no prctl: the watch thread still works
            pass
    if os.getppid() != parent_pid:  # the parent died before the line above
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(PARENT_WATCH_S)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="kinhec-parent-watch", daemon=True).start()


def worker_init(parent_pid: int) -> None:
    """Process-pool initializer: ignore ``SIGINT`` and die with the parent."""
    ignore_sigint()
    die_with_parent(parent_pid)


class InlineExecutor:
    """Runs every task at once in the calling process (one worker, no pool to start).

    ``submit`` returns an already completed future; an exception of ``fn`` is
    stored in it, except ``KeyboardInterrupt``, which propagates to the caller
    (the task in flight is then abandoned, as a pool would never report it).
    """

    capacity = 1

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def submit(self, task) -> Future:
        fut: Future = Future()
        try:
            fut.set_result(self.fn(task))
        except Exception as exc:
            fut.set_exception(exc)
        return fut

    def wait_any(self, futures, timeout):
        return {f for f in futures if f.done()}

    def cancel_pending(self, futures) -> None:
        pass

    def shutdown(self) -> None:
        pass


class LocalExecutor:
    """A pool of ``workers`` local processes (workers ignore ``SIGINT``)."""

    def __init__(self, fn: Callable[[Any], Any], workers: int) -> None:
        self.fn = fn
        self.pool = ProcessPoolExecutor(max_workers=workers, initializer=worker_init, initargs=(os.getpid(),))
        self.capacity = workers

    def submit(self, task) -> Future:
        return self.pool.submit(self.fn, task)

    def wait_any(self, futures, timeout):
        done, _ = wait(futures, timeout=timeout, return_when=FIRST_COMPLETED)
        return done

    def cancel_pending(self, futures) -> None:
        for f in futures:
            f.cancel()

    def shutdown(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """A Dask cluster: the scheduler at ``scheduler``, or a ``LocalCluster`` of ``workers`` processes."""

    def __init__(self, fn: Callable[[Any], Any], workers: int, scheduler: str | None) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise InputError(
                "--executor dask: expected dask.distributed to be installed (pip install 'kinhec[cluster]'), got an "
                "ImportError"
            ) from None
        self.fn = fn
        self._cluster = None
        if scheduler:
            self.client = Client(scheduler)
        else:
            self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
            self.client = Client(self._cluster)
        self.capacity = max(1, sum(self.client.nthreads().values()))

    def submit(self, task):
        return self.client.submit(self.fn, task, pure=False)

    def wait_any(self, futures, timeout):
        from dask.distributed import wait as dwait

        if not futures:
            return set()
        try:
            res = dwait(list(futures), timeout=timeout, return_when="FIRST_COMPLETED")
        except (TimeoutError, asyncio.TimeoutError):  # nothing finished within the timeout
            return set()
        return set(res.done)

    def cancel_pending(self, futures) -> None:
        self.client.cancel([f for f in futures if f.status == "pending"])

    def shutdown(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def make_executor(fn: Callable[[Any], Any], executor: str, workers: int, scheduler: str | None = None, *,
                  inline_single: bool = False):  # fmt: skip
    """The executor called ``executor`` ("local" or "dask") running ``fn``.

    With ``inline_single=True``, a local executor of one worker runs the tasks
    in the calling process (:class:`InlineExecutor`) instead of starting a pool.
    """
    if executor == "local":
        if inline_single and workers == 1:
            return InlineExecutor(fn)
        return LocalExecutor(fn, workers)
    if executor == "dask":
        return DaskExecutor(fn, workers, scheduler)
    raise InputError(f"executor: expected one of {', '.join(EXECUTORS)}, got {executor!r}")


# --------------------------------------------------------------------------- #
# lock
# --------------------------------------------------------------------------- #
class FolderLock:
    """A lock file refusing a second kinhec process on a folder being written.

    The file at ``path`` holds the pid and host of its owner.  A lock left by
    a process that no longer runs on this host is taken over.

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
        me = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                try:
                    other = json.loads(self.path.read_text() or "{}")
                except (OSError, ValueError):
                    other = {}
                if other.get("host") == me["host"] and not pid_alive(int(other.get("pid", -1))):
                    self.path.unlink(missing_ok=True)  # stale lock of a dead process
                    continue
                raise InputError(
                    f"{self.folder}: expected a folder no other kinhec process is writing, got a lock "
                    f"held by pid {other.get('pid')} on {other.get('host')} ({self.path}); if that process is gone, "
                    "delete the lock file"
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


def lock_holder(path) -> dict | None:
    """The owner (``pid``, ``host``, ``started``) of a :class:`FolderLock` file when it is held, else None.

    A lock of a process that no longer runs on this host counts as free.
    """
    try:
        other = json.loads(Path(path).read_text() or "{}")
    except (OSError, ValueError):
        return None
    if not isinstance(other, dict):
        return None
    try:
        pid = int(other.get("pid", -1))
    except (TypeError, ValueError):
        return None
    if other.get("host") == socket.gethostname() and not pid_alive(pid):
        return None
    return other


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
