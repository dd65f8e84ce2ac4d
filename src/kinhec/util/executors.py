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
* ``shutdown()`` releases the pool or the cluster connection;
* ``abort(futures)`` stops at once: running tasks are killed (local pool) or
  cancelled (Dask), and a later ``shutdown()`` does not wait for anything;
* ``require_folder(folder)`` makes sure the workers read and write the folder
  the caller means: a no-op for local processes; on Dask every worker must find
  a probe file the client has just written there (:func:`folder_probe`), or an
  :class:`~kinhec.util.errors.InputError` names the workers that do not.  Tasks carry
  absolute paths (a relative one would be resolved in each worker's own working
  directory).

``capacity`` is the number of tasks that can run at once.  Worker processes of
the local pool ignore ``SIGINT``: ``Ctrl+C`` reaches the parent only, which
cancels what has not started and lets the running tasks finish; a second
``Ctrl+C`` calls ``abort()``.  Outputs are written to ``*.tmp`` files and
renamed, so a killed task leaves nothing the next run would trust.  Workers
die with their parent: a parent killed outright (``kill -9``) takes them along
at once (``prctl(PR_SET_PDEATHSIG)`` on Linux, and a watch thread everywhere)
instead of leaving them to finish their shards.

:class:`kinhec.util.locking.FolderLock` (re-exported here) is the lock file that
keeps two such commands from writing the same folder at the same time.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
import uuid
from pathlib import Path
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Callable

from kinhec.util.errors import InputError
from kinhec.util.optional import require
from kinhec.util.locking import STATE_DIR, FolderLock, pid_alive  # noqa: F401  (re-exported: they used to live here)

__all__ = [
    "EXECUTORS",
    "ignore_sigint",
    "die_with_parent",
    "worker_init",
    "InlineExecutor",
    "LocalExecutor",
    "DaskExecutor",
    "make_executor",
    "completed_tasks",
    "drain_after_interrupt",
    "folder_probe",
    "FolderLock",
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


def folder_probe(probe: str, token: str) -> str:
    """Run on a worker: ``"ok"`` when the file ``probe`` holds ``token``, else what the worker finds there."""
    p = Path(probe)
    try:
        text = p.read_text()
    except FileNotFoundError:
        return f"no file {p}" + ("" if p.parent.is_dir() else f" (no folder {p.parent} either)")
    except OSError as exc:
        return f"cannot read {p} ({exc})"
    return "ok" if text == token else f"{p} holds another token (another machine's folder of the same name)"


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

    def abort(self, futures=()) -> None:
        pass

    def require_folder(self, folder, scratch=None) -> None:
        pass


class LocalExecutor:
    """A pool of ``workers`` local processes (workers ignore ``SIGINT``)."""

    def __init__(self, fn: Callable[[Any], Any], workers: int) -> None:
        self.fn = fn
        self.pool = ProcessPoolExecutor(max_workers=workers, initializer=worker_init, initargs=(os.getpid(),))
        self.capacity = workers
        self._aborted = False

    def submit(self, task) -> Future:
        return self.pool.submit(self.fn, task)

    def wait_any(self, futures, timeout):
        done, _ = wait(futures, timeout=timeout, return_when=FIRST_COMPLETED)
        return done

    def cancel_pending(self, futures) -> None:
        for f in futures:
            f.cancel()

    def shutdown(self) -> None:
        self.pool.shutdown(wait=not self._aborted, cancel_futures=True)

    def abort(self, futures=()) -> None:
        """Kill the worker processes now (the tasks they were running are lost)."""
        self._aborted = True
        processes = list((getattr(self.pool, "_processes", None) or {}).values())
        self.pool.shutdown(wait=False, cancel_futures=True)
        for proc in processes:
            if proc.is_alive():
                proc.kill()
        for proc in processes:
            proc.join(timeout=5)

    def require_folder(self, folder, scratch=None) -> None:
        pass  # local processes share this process's file system and working directory


class DaskExecutor:
    """A Dask cluster: the scheduler at ``scheduler``, or a ``LocalCluster`` of ``workers`` processes."""

    def __init__(self, fn: Callable[[Any], Any], workers: int, scheduler: str | None) -> None:
        distributed = require("dask.distributed", "--executor dask")
        Client, LocalCluster = distributed.Client, distributed.LocalCluster
        self.fn = fn
        self._cluster = None
        self._aborted = False
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
        quick = {"timeout": 5} if self._aborted else {}
        self.client.close(**quick)
        if self._cluster is not None:
            self._cluster.close(**quick)

    def abort(self, futures=()) -> None:
        """Cancel ``futures`` (running ones included) and stop waiting for them."""
        self._aborted = True
        try:
            self.client.cancel(list(futures), force=True)
        except Exception:  # the connection may already be gone
            pass

    def require_folder(self, folder, scratch=None) -> None:
        """Raise :class:`InputError` unless every worker sees ``folder`` as this process does.

        A probe file with a random token is written to ``scratch`` (default
        ``folder/.kinhec``) and every connected worker must read that token
        back: a worker on another machine without the shared file system, or
        with a folder of the same name of its own, fails the check.
        """
        folder = Path(folder).resolve()
        scratch = Path(scratch).resolve() if scratch is not None else folder / STATE_DIR
        token = uuid.uuid4().hex
        probe = scratch / f"probe-{token}"
        scratch.mkdir(parents=True, exist_ok=True)
        probe.write_text(token)
        try:
            seen = self.client.run(folder_probe, str(probe), token)
        finally:
            probe.unlink(missing_ok=True)
        blind = {w: r for w, r in sorted(seen.items()) if r != "ok"}
        if blind:  # (no worker connected yet, e.g. an adaptive cluster: the outputs are checked after the run)
            shown = "; ".join(f"{w}: {r}" for w, r in list(blind.items())[:3])
            raise InputError(
                f"{folder}: expected every Dask worker to see this folder, got {len(blind)} of {len(seen)} that do "
                f"not ({shown}); the workers write and read it by this absolute path, so it must be on a file "
                "system they share with this machine (the same path on every machine)"
            )


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


def completed_tasks(ex, pending: list, running: dict, stop: Callable[[], bool] = lambda: False):
    """``(task, future)`` of each task as it completes, at most ``2 x ex.capacity`` of them in flight at once.

    ``pending`` is taken from its end (pass the tasks reversed to start them in order); clearing it, or ``stop()``
    turning true, starts no more.  ``running`` maps the futures in flight to their tasks, and is kept current, so
    that :func:`drain_after_interrupt` can wait for them after a ``Ctrl+C`` raised here.  ``future.result()`` is
    the caller's to take (it raises what the task raised, or the loss of its worker).
    """
    while pending or running:
        while pending and not stop() and len(running) < 2 * ex.capacity:
            task = pending.pop()
            running[ex.submit(task)] = task
        if not running:
            break
        for fut in ex.wait_any(list(running), timeout=0.5):
            yield running.pop(fut), fut


def drain_after_interrupt(ex, running, summary, emit: Callable[[str, dict], None],
                          on_outcome: Callable[[Any], None]) -> None:
    """What a runner does on a first ``Ctrl+C``: stop starting tasks, let the running ones finish.

    ``summary.interrupted`` is set and an ``interrupt`` event emitted; tasks not
    started are cancelled; each running task that then completes is passed to
    ``on_outcome`` (one that fails is skipped).  A second ``Ctrl+C`` sets
    ``summary.aborted``, emits ``abort`` and kills the running tasks
    (``ex.abort``).  ``running`` holds the futures (a dict keyed by future, or
    any iterable of them).
    """
    summary.interrupted = True
    emit("interrupt", {"running": len(running)})
    ex.cancel_pending(list(running))
    try:
        for fut in list(running):
            if fut.cancelled():
                continue
            try:
                outcome = fut.result()
            except KeyboardInterrupt:
                raise
            except BaseException:
                continue
            on_outcome(outcome)
    except KeyboardInterrupt:
        summary.aborted = True
        emit("abort", {"running": len(running)})
        ex.abort(list(running))
