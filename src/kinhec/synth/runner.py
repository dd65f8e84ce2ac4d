"""Resumable, parallel generation of a dataset folder from a tier.

Shards are the unit of work.  Each shard's two Parquet files are written
atomically by the worker that generated it (temporary name, then rename), so an
interrupted run never leaves a truncated shard behind, and a re-run skips every
shard whose files exist, open and hold the expected sequence ids in the
expected row groups.  Sequences are seeded from the tier's global seed and
their own id, so the folder's content does not depend on the number of workers,
the executor or the order of execution.

Executors: a local process pool (default) or a Dask cluster
(``executor="dask"``; ``scheduler`` = address of a running scheduler, or a
``LocalCluster`` started on this machine when no address is given).
"""

from __future__ import annotations

import json
import os
import shutil
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from kinhec import __version__
from kinhec.util.errors import DatasetFormatError, InputError, KinhecError
from kinhec.util.fsutil import atomic_write_text
from kinhec.util.executors import DaskExecutor, LocalExecutor, completed_tasks, drain_after_interrupt
from kinhec.util.locking import LOCK_NAME, STATE_DIR, writer_lock  # noqa: F401  (LOCK_NAME, STATE_DIR: re-exported)
from kinhec.io.schema import TRACKS
from kinhec.synth.tiers import TRACK_DESCRIPTIONS, Tier, expand_tier, load_tier, plan_counts, shards_of_track
from kinhec.io.tracks import sequence_id
from kinhec.util.provenance import is_owned, user_files, write_owned
from kinhec.models import cameras, robots
from kinhec.util import jsonutil
from kinhec.io.publish import citation_cff, license_text, write_card_if_missing
from kinhec import io

__all__ = ["ShardTask", "ShardOutcome", "RunSummary", "generate_dataset", "run_shard", "DatasetLock"]

#: While a run writes shards, the index is rewritten from the shards on disk (so that what is done can be read
#: before the run ends) after every ``INDEX_REFRESH_EVERY`` shards, but at most once per ``INDEX_REFRESH_MIN_S``
#: seconds: a rewrite reads every footer of the folder (about 20 s on the full tier), so a fixed count of shards
#: made a long run's parent process quadratic (about 700 CPU-s over the full tier's mixed track).  The index at
#: the end of the run is always rewritten.
INDEX_REFRESH_EVERY = 10  # shards
INDEX_REFRESH_MIN_S = 300.0


@dataclass(frozen=True)
class ShardTask:
    """One shard to generate: its place and the recipes of its sequences (as dicts)."""

    root: str
    track: str
    shard_index: int
    recipes: tuple
    full_ids: tuple = ()  # ids of the same shard without --limit: a complete copy of it is never cut down
    ids: tuple = ()  # planned ids when the recipes are not expanded yet (see plan_shard_ids)

    @property
    def sequence_ids(self) -> list[str]:
        return list(self.ids) if self.ids else [r["sequence_id"] for r in self.recipes]


@dataclass
class ShardOutcome:
    track: str
    shard_index: int
    n_sequences: int
    ok: bool
    seconds: float = 0.0
    failed_sequence: str | None = None
    failed_recipe: dict | None = None
    error: str | None = None
    traceback: str | None = None


@dataclass
class RunSummary:
    root: Path
    tier: str
    planned_sequences: int = 0
    planned_shards: int = 0
    skipped_shards: int = 0
    written_shards: int = 0
    written_sequences: int = 0
    failed: list[ShardOutcome] = field(default_factory=list)  # in plan order (track, shard index)
    interrupted: bool = False
    aborted: bool = False  # a second Ctrl+C: running shards were killed, the index was not refreshed
    wall_s: float = 0.0
    cpu_s: float = 0.0
    log_path: Path | None = None
    kept_files: list[str] = field(default_factory=list)  # the user's files kinhec did not replace
    removed_outputs: list[str] = field(default_factory=list)  # stale derived outputs removed by --overwrite

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted


# --------------------------------------------------------------------------- #
# worker side
# --------------------------------------------------------------------------- #
def run_shard(task: ShardTask) -> ShardOutcome:
    """Generate and write one shard; never raises (failures come back in the outcome)."""
    from kinhec.synth.generator import generate_sequence
    from kinhec.synth.recipe import Recipe

    t0 = time.process_time()
    current = None
    try:
        tables = []
        for rdict in task.recipes:
            current = rdict
            tables.append(generate_sequence(Recipe.from_dict(rdict)))
        current = None
        io.write_shard(task.root, task.track, task.shard_index, tables)
        return ShardOutcome(task.track, task.shard_index, len(task.recipes), True, time.process_time() - t0)
    except Exception as exc:  # reported to the parent, which logs the traceback and goes on
        return ShardOutcome(
            task.track,
            task.shard_index,
            len(task.recipes),
            False,
            time.process_time() - t0,
            failed_sequence=None if current is None else current.get("sequence_id"),
            failed_recipe=current,
            error=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(),
        )


# --------------------------------------------------------------------------- #
# lock
# --------------------------------------------------------------------------- #
def DatasetLock(root: Path):
    """The writer lock of a dataset folder (``root/.kinhec/lock``), shared with ``benchmark`` and ``index``."""
    return writer_lock(root)


# --------------------------------------------------------------------------- #
# dataset metadata
# --------------------------------------------------------------------------- #
def _tier_fingerprint(tier: Tier) -> dict:
    return {"tier": tier.name, "global_seed": tier.global_seed, "generator_version": __version__}


def _folder_tier_config(root: Path, info: dict):
    """The tier configuration a folder was generated with: ``configs/<tier>.yaml`` named by ``tier_config``.

    Older folders kept the configuration itself under ``tier_config``; ``None``
    when neither can be read.
    """
    cfg = info.get("tier_config")
    if isinstance(cfg, dict):
        return cfg
    if not isinstance(cfg, str) or not cfg:
        return None
    import yaml

    try:
        return yaml.safe_load((root / cfg).read_text())
    except (OSError, yaml.YAMLError):
        return None


#: Files of ``benchmarks/`` written by ``kinhec benchmark`` (removed by ``--overwrite`` with the shards).
_BENCHMARK_OUTPUTS = ("results.parquet", "results.csv", "leaderboard.md", "summary.json", "protocol.json")


def _remove_derived_outputs(root: Path) -> list[str]:
    """Remove the outputs derived from the data being replaced: benchmark results, figures, the card.

    Only what kinhec writes goes: the benchmark's files and parts, a ``figures/``
    folder holding nothing but PNG files, and a card ``README.md`` kinhec wrote
    and nobody edited.  Returns the removed paths (relative to ``root``).
    """

    removed = []
    bench = root / "benchmarks"
    if bench.is_dir():
        for name in _BENCHMARK_OUTPUTS:
            if (bench / name).is_file():
                (bench / name).unlink()
                removed.append(f"benchmarks/{name}")
        for sub in ("subsets", ".parts"):  # subset runs' outputs; parts of older versions
            if (bench / sub).is_dir():
                shutil.rmtree(bench / sub, ignore_errors=True)
                removed.append(f"benchmarks/{sub}")
        if not any(bench.iterdir()):
            bench.rmdir()
    parts = root / STATE_DIR / "benchmark"  # the benchmark's scratch parts (kinhec.util.fingerprint.run_folders)
    if parts.is_dir():
        shutil.rmtree(parts, ignore_errors=True)
        removed.append(f"{STATE_DIR}/benchmark")
    fig = root / "figures"
    if fig.is_dir() and all(p.is_file() and p.suffix == ".png" for p in fig.iterdir()):
        shutil.rmtree(fig, ignore_errors=True)
        removed.append("figures")
    if (root / "README.md").is_file() and is_owned(root, "README.md"):
        (root / "README.md").unlink()
        removed.append("README.md")
    return removed


def _check_or_write_generation_info(root: Path, tier: Tier, tracks, counts: dict, overwrite: bool) -> list[str]:
    path = root / "generation_info.json"
    info = None
    removed: list[str] = []
    if path.exists():
        try:
            info = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise DatasetFormatError(f"{path}: expected valid JSON, got unreadable content ({exc})") from None
        mine = _tier_fingerprint(tier)
        theirs = {k: info.get(k) for k in mine}
        if theirs != mine or _folder_tier_config(root, info) != tier.config:
            if not overwrite:
                diff = ", ".join(f"{k}: {theirs[k]!r} (folder) vs {mine[k]!r} (now)" for k in mine if theirs[k] != mine[k])
                if not diff:
                    diff = "the tier configuration differs"
                raise InputError(
                    f"{root}: expected a folder generated by the same tier, seed and generator version, got {diff}; "
                    "use another --out folder, or --overwrite to delete its shards and start again"
                )
            for sub in ("robot", "camera"):
                shutil.rmtree(root / sub, ignore_errors=True)
            for f in ("sequences.parquet", "sequences.csv"):
                (root / f).unlink(missing_ok=True)
            removed = _remove_derived_outputs(root)
            info = None
    track_info = dict(info.get("tracks", {})) if info else {}
    for t in tracks:
        track_info[t] = {"description": TRACK_DESCRIPTIONS[t], "planned_sequences": counts[t]}
    ordered = {t: track_info[t] for t in TRACKS if t in track_info}
    new = {  # the published generation_info.json keys, in order (docs/format.md)
        "dataset": "KinHEC",
        "generator_version": __version__,
        "tier": tier.name,
        "tier_config": f"configs/{tier.name}.yaml",
        "global_seed": tier.global_seed,
        "tracks": ordered,
    }
    cfg = root / "configs"
    cfg.mkdir(exist_ok=True)
    atomic_write_text(cfg / f"{tier.name}.yaml", tier.yaml_text())
    atomic_write_text(path, jsonutil.dumps(new, indent=2))
    return removed


#: Entries kinhec must write itself: a foreign folder holding one of them is refused even with ``force``.
_DATA_ENTRIES = ("robots.json", "cameras_targets.json", "sequences.csv", "configs", "robot", "camera")


def write_static_files(root: Path) -> list[str]:
    """robots.json, cameras_targets.json, LICENSE and CITATION.cff of a dataset folder.

    A ``LICENSE`` or ``CITATION.cff`` that kinhec did not write is kept
    (:func:`kinhec.util.provenance.write_owned`); the names of the kept files are
    returned.  ``robots.json`` and ``cameras_targets.json`` describe the data
    and are always kinhec's.
    """

    atomic_write_text(root / "robots.json", jsonutil.dumps(robots.robots_json(), indent=2))
    atomic_write_text(root / "cameras_targets.json", jsonutil.dumps(cameras.cameras_targets_json(), indent=2))
    kept = []
    for name, text in (("LICENSE", license_text()), ("CITATION.cff", citation_cff())):
        if not write_owned(root, name, text):
            kept.append(name)
    return kept


# --------------------------------------------------------------------------- #
# executors (shared with the benchmark: kinhec.util.executors)
# --------------------------------------------------------------------------- #
class _LocalExecutor(LocalExecutor):
    def __init__(self, workers: int) -> None:
        super().__init__(run_shard, workers)


class _DaskExecutor(DaskExecutor):
    def __init__(self, workers: int, scheduler: str | None) -> None:
        super().__init__(run_shard, workers, scheduler)


# --------------------------------------------------------------------------- #
# the run
# --------------------------------------------------------------------------- #
def plan_shards(tier: Tier, root: Path, tracks=None, limit: int | None = None) -> tuple[list[ShardTask], dict]:
    """Every shard of the selected tracks (first ``limit`` sequences per track when given)."""
    recipes = expand_tier(tier, tracks, generator_version=__version__)
    tasks, counts = [], {}
    for track, rs in recipes.items():
        full = shards_of_track(rs, tier.shard_size)
        if limit is not None:
            rs = rs[:limit]
        counts[track] = len(rs)
        for k, chunk in enumerate(shards_of_track(rs, tier.shard_size)):
            full_ids = tuple(r["sequence_id"] for r in full[k])
            tasks.append(ShardTask(str(root), track, k, tuple(chunk), full_ids))
    return tasks, counts


def plan_shard_ids(tier: Tier, root: Path, tracks=None, limit: int | None = None) -> tuple[list[ShardTask], dict]:
    """Every shard of the selected tracks with its sequence ids only (no recipe expanded).

    Sequence ``i`` of a track is ``sequence_id(track, i)`` and the counts come
    from :func:`kinhec.synth.tiers.plan_counts`, so this takes milliseconds even for
    the full tier; :func:`with_recipes` fills in the recipes of the shards that
    still have to be generated.
    """
    counts_full = plan_counts(tier, tracks)
    tasks, counts = [], {}
    size = tier.shard_size
    for track, n_full in counts_full.items():
        n = n_full if limit is None else min(limit, n_full)
        counts[track] = n
        for k, start in enumerate(range(0, n, size)):
            ids = tuple(sequence_id(track, i) for i in range(start, min(start + size, n)))
            full_ids = tuple(sequence_id(track, i) for i in range(start, min(start + size, n_full)))
            tasks.append(ShardTask(str(root), track, k, (), full_ids, ids))
    return tasks, counts


def with_recipes(tier: Tier, tasks: list[ShardTask]) -> list[ShardTask]:
    """The same tasks with their recipes expanded (only the tracks they belong to are expanded)."""
    if not tasks:
        return []
    recipes = expand_tier(tier, sorted({t.track for t in tasks}, key=TRACKS.index), generator_version=__version__)
    out = []
    for t in tasks:
        chunk = shards_of_track(recipes[t.track], tier.shard_size)[t.shard_index][: len(t.sequence_ids)]
        if [r["sequence_id"] for r in chunk] != t.sequence_ids:  # the plan and the expansion must agree
            raise KinhecError(f"shard {t.track}-{t.shard_index:05d}: planned ids differ from the expanded recipes")
        out.append(ShardTask(t.root, t.track, t.shard_index, tuple(chunk), t.full_ids))
    return out


#: Scratch file (in ``DATA/.kinhec/``) of the shards known to be complete, with the size and modification time
#: of their two files (see :class:`CompleteShards`).
COMPLETE_SHARDS_NAME = "complete_shards.json"


class CompleteShards:
    """The shards of a folder known to be complete, keyed by the size and modification time of their files.

    A resumed ``generate`` decides that a shard is complete from its two Parquet footers
    (:func:`kinhec.io.shard_status`); on the full tier that is about 40 ms per shard, 15 s for the 390
    shards, most of it pyarrow parsing footers of 200 row groups.  A shard this run wrote, or found
    complete from its footers, is recorded here with its sequence ids and the ``(size, mtime_ns)`` of both
    files; while the files keep them (and the planned ids are the same) the footers are not read again.
    Any other file (rewritten, truncated, touched, deleted) falls back to the footers.  The record is
    scratch state (``DATA/.kinhec/``, never uploaded); a missing or unreadable record is an empty one.
    """

    def __init__(self, root: Path) -> None:
        self.path = Path(root) / STATE_DIR / COMPLETE_SHARDS_NAME
        self.root = Path(root)
        self.entries: dict = {}
        self.changed = False
        try:
            data = json.loads(self.path.read_text())
            if isinstance(data, dict) and isinstance(data.get("shards"), dict):
                self.entries = data["shards"]
        except (OSError, ValueError):
            pass

    def _stat(self, track: str, shard_index: int):
        try:
            return [[st.st_size, st.st_mtime_ns] for st in (p.stat() for p in io.shard_paths(self.root, track,
                                                                                             shard_index))]  # fmt: skip
        except OSError:
            return None

    def holds(self, track: str, shard_index: int, ids) -> bool:
        """The shard was recorded complete with exactly ``ids`` and its files have not changed since."""
        entry = self.entries.get(f"{track}-{shard_index:05d}")
        if not entry or entry.get("ids") != list(ids):
            return False
        stat = self._stat(track, shard_index)
        return stat is not None and entry.get("files") == stat

    def add(self, track: str, shard_index: int, ids) -> None:
        """Record the shard, complete with ``ids``, with its files as they are now."""
        stat = self._stat(track, shard_index)
        if stat is not None:
            self.entries[f"{track}-{shard_index:05d}"] = {"ids": list(ids), "files": stat}
            self.changed = True

    def save(self) -> None:
        if self.changed:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps({"shards": self.entries}, separators=(",", ":")))
            self.changed = False


def _shard_done(root: Path, task: ShardTask, known: CompleteShards | None = None) -> bool:
    """The shard is on disk with the planned sequences, or with more of the same shard (an earlier run with a
    larger or no ``--limit``): a complete shard is never cut down by a smaller limit.  ``known``: the shards
    recorded complete, whose footers need not be read again (a shard found complete is added)."""

    want = task.sequence_ids
    if known is not None and known.holds(task.track, task.shard_index, want):
        return True
    if io.shard_status(root, task.track, task.shard_index, want) == "complete":
        if known is not None:
            known.add(task.track, task.shard_index, want)
        return True
    if not task.full_ids or list(task.full_ids) == want:
        return False
    try:
        have = [r["sequence_id"] for r in io.read_shard_index(io.shard_paths(root, task.track, task.shard_index)[0])]
    except KinhecError:
        return False
    return (
        len(have) > len(want)
        and have == list(task.full_ids[: len(have)])
        and io.shard_status(root, task.track, task.shard_index, have) == "complete"
    )


def _clean_tmp(root: Path) -> None:
    for sub in ("robot", "camera"):
        d = root / sub
        if d.is_dir():
            for p in d.glob("*.tmp"):
                p.unlink(missing_ok=True)


def generate_dataset(
    tier: str | Tier,
    out: str | Path,
    *,
    workers: int | None = None,
    tracks: Iterable[str] | None = None,
    limit: int | None = None,
    fail_fast: bool = False,
    executor: str = "local",
    scheduler: str | None = None,
    overwrite: bool = False,
    force: bool = False,
    progress: bool = True,
    on_event: Callable[[str, dict], None] | None = None,
) -> RunSummary:
    """Generate (or resume) a dataset folder.

    Parameters
    ----------
    tier : str or Tier
        Built-in tier name or path of a tier YAML file.
    out : path
        Dataset folder (created if needed).
    workers : int, optional
        Parallel worker processes (default: number of cores).
    tracks : iterable of str, optional
        Generate only these tracks; other tracks already in the folder stay in the index.
    limit : int, optional
        Keep the first ``limit`` sequences of each track (debugging).
    fail_fast : bool
        Stop submitting shards after the first failure.
    executor : {"local", "dask"}
        Local process pool, or Dask (``scheduler`` address, or a LocalCluster).
    overwrite : bool
        Allow writing into a folder made by another tier/seed/version (its
        shards are deleted first, with the outputs derived from them: the
        benchmark results, ``figures/`` and the card).
    force : bool
        Write into a non-empty folder that is not a dataset; the files already
        there are kept (``summary.kept_files``), a ``LICENSE`` or
        ``CITATION.cff`` of the user's included.  Without it such a folder is
        refused.

    Returns
    -------
    RunSummary
        ``summary.ok`` is False if any shard failed or the run was interrupted.
    """

    if workers is None:
        workers = os.cpu_count() or 1
    if not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers: expected an integer >= 1, got {workers!r}")
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise InputError(f"limit: expected an integer >= 1, got {limit!r}")
    if executor not in ("local", "dask"):
        raise InputError(f"executor: expected 'local' or 'dask', got {executor!r}")
    if scheduler:
        executor = "dask"
    tier_obj = tier if isinstance(tier, Tier) else load_tier(tier)
    tracks = tuple(tracks) if tracks else None
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise InputError(f"--out {root}: expected a folder, got a file")

    foreign = user_files(root)
    if foreign and not force:
        shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
        raise InputError(
            f"--out {root}: expected an empty folder or a dataset folder, got a folder with {len(foreign)} other "
            f"file(s) ({shown}); use another --out, or --force to generate beside them (they are kept)"
        )
    clash = [f for f in foreign if f in _DATA_ENTRIES]
    if clash:
        raise InputError(f"--out {root}: expected no {', '.join(clash)} of your own (kinhec writes them as part of the "
                         "dataset), got them in a folder that is not a dataset; move them or use another --out")  # fmt: skip
    root.mkdir(parents=True, exist_ok=True)

    summary = RunSummary(root=root, tier=tier_obj.name)
    t_wall = time.perf_counter()
    emit = on_event or (lambda kind, data: None)
    with DatasetLock(root):
        # the tasks carry the absolute path: a Dask worker resolves a relative one in its own working directory
        tasks, counts = plan_shard_ids(tier_obj, root.resolve(), tracks, limit)
        summary.removed_outputs = _check_or_write_generation_info(root, tier_obj, list(counts), counts, overwrite)
        kept = write_static_files(root)
        summary.kept_files = sorted(set(kept) | {f for f in foreign if f not in kept})
        _clean_tmp(root)
        log_path = root / STATE_DIR / f"generate_{tier_obj.name}.log"
        summary.log_path = log_path
        summary.planned_sequences = sum(counts.values())
        summary.planned_shards = len(tasks)
        todo = []
        known = CompleteShards(root)
        for task in tasks:
            if _shard_done(root, task, known):
                summary.skipped_shards += 1
            else:
                todo.append(task)
        known.save()
        done_seqs = summary.planned_sequences - sum(len(t.sequence_ids) for t in todo)
        todo = with_recipes(tier_obj, todo)
        emit("start", {"planned": summary.planned_sequences, "done": done_seqs, "todo_shards": len(todo)})
        if todo:
            _run_tasks(todo, workers, executor, scheduler, fail_fast, summary, log_path, root, emit, known)
            # shards finish in any order: report failures in plan order so the summary is deterministic
            summary.failed.sort(key=lambda o: (o.track, o.shard_index))
        if not summary.aborted:  # after a second Ctrl+C, stop at once: the next run writes the index
            # shards that failed may have left unreadable files from an earlier run: index what is complete
            # (a run that wrote nothing keeps an index written after the shards' last change)
            if todo or not io.index_is_current(root):
                index = io.rebuild_index(root, skip_corrupt=True)
                io.write_index(root, index)

            write_card_if_missing(root)
    summary.wall_s = time.perf_counter() - t_wall
    emit("end", {"summary": summary})
    return summary


def _run_tasks(todo, workers, executor, scheduler, fail_fast, summary, log_path, root, emit,
               known: CompleteShards | None = None) -> None:  # fmt: skip

    ex = _LocalExecutor(workers) if executor == "local" else _DaskExecutor(workers, scheduler)
    pending = list(reversed(todo))
    running: dict = {}
    since_refresh = 0
    last_refresh = time.monotonic()
    log = open(log_path, "a")
    try:
        ex.require_folder(root)  # Dask: every worker must see this folder (a shared file system)
        try:
            for task, fut in completed_tasks(ex, pending, running):
                try:
                    outcome = fut.result()
                except BaseException as exc:  # a worker process died, or the cluster lost the task
                    outcome = ShardOutcome(task.track, task.shard_index, len(task.recipes), False,
                                           error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())  # fmt: skip
                if outcome.ok and executor != "local" and not _shard_done(root, task):
                    # a worker that joined after the folder check wrote to a folder of its own
                    outcome = ShardOutcome(task.track, task.shard_index, len(task.recipes), False,
                                           error=f"a worker reported the shard written, but it is not in {root}: "
                                                 "the Dask workers must share this folder's file system")  # fmt: skip
                summary.cpu_s += outcome.seconds
                if outcome.ok:
                    summary.written_shards += 1
                    summary.written_sequences += outcome.n_sequences
                    since_refresh += 1
                    if known is not None:  # both files are in place (renamed) when the outcome comes back
                        known.add(task.track, task.shard_index, [r["sequence_id"] for r in task.recipes])
                else:
                    summary.failed.append(outcome)
                    log.write(
                        f"--- shard {task.track}-{task.shard_index:05d} failed at {time.ctime()}\n"
                        f"sequence: {outcome.failed_sequence}\nrecipe: {json.dumps(outcome.failed_recipe, default=str)}\n"
                        f"{outcome.traceback}\n"
                    )
                    log.flush()
                    if fail_fast:  # start no more shards
                        pending.clear()
                emit("shard", {"outcome": outcome})
                if since_refresh >= INDEX_REFRESH_EVERY:
                    since_refresh = 0
                    if known is not None:  # (cheap: the record of complete shards is kept current)
                        known.save()
                    if time.monotonic() - last_refresh >= INDEX_REFRESH_MIN_S:
                        last_refresh = time.monotonic()
                        try:  # a refresh must never stop the run (a shard may be between its two renames)
                            io.write_index(root, io.rebuild_index(root, skip_corrupt=True))
                        except KinhecError as exc:
                            log.write(f"--- index refresh skipped at {time.ctime()}: {exc}\n")
        except KeyboardInterrupt:
            pending.clear()

            def finished(outcome) -> None:
                if outcome.ok:
                    summary.written_shards += 1
                    summary.written_sequences += outcome.n_sequences
                emit("shard", {"outcome": outcome})

            # the shards already running finish (workers ignore SIGINT); a second Ctrl+C aborts them
            drain_after_interrupt(ex, running, summary, emit, finished)
    finally:
        ex.shutdown()
        log.close()
        if known is not None:
            known.save()
