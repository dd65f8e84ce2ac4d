"""A benchmark run: shards as units of work, their parts, planning, resuming, and the outputs."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kinhec import __version__
from kinhec.util import jsonutil
from kinhec import io as kio
from kinhec.io.index import read_index_column
from kinhec.util.blas import single_threaded_blas
from kinhec.util.errors import InputError
from kinhec.util.executors import EXECUTORS, completed_tasks, drain_after_interrupt, make_executor
from kinhec.util.fingerprint import run_fingerprint, run_folders, source_digest
from kinhec.util.locking import refuse_if_in_use, writer_lock
from kinhec.util.fsutil import atomic_write, atomic_write_text
from kinhec.util.provenance import FINGERPRINT_KEY, data_fingerprint
from kinhec.io.schema import COMPRESSION, RESULTS_SCHEMA
from kinhec.solvers import registry as _registry
from kinhec.evaluate.benchmark import sequence as _sequence
from kinhec.evaluate.benchmark.leaderboard import leaderboard_markdown
from kinhec.evaluate.benchmark.protocol import (EVAL_SYNCS, LEADERBOARD_FILE, LOG_FILE, PART_METADATA_KEY, PIXEL_TRACKS,
                                      PROTOCOL_FILE, PROTOCOL_VERSION, RECIPE_COLUMNS, RESULTS_CSV_FILE, RESULTS_DIR,
                                      RESULTS_FILE, SUMMARY_FILE, check_count, check_solvers, check_sync, check_tracks,
                                      protocol_info)
from kinhec.evaluate.benchmark.sequence import error_text, failed_rows, pixels_available, results_table, stored_recipe
from kinhec.evaluate.benchmark.summary import summarize_results

# --------------------------------------------------------------------------- #
# one unit of work (a shard)
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class BenchmarkTask:
    """One shard to evaluate.

    Attributes
    ----------
    root : str
        Dataset folder.
    part_path : str
        Where the unit's rows go (written atomically).
    unit : str
        ``<track>-<shard>`` (the stem of the shard file).
    track : str
    shard_index : int
    records : tuple of dict
        The index rows of the sequences to evaluate, in order.
    solvers : tuple of str
    sync : tuple of str
    fingerprint : str
        Written into the part's metadata; a part is reused only when it matches.
    solver_modules : tuple of str
        Modules registering plug-in solvers, imported by a worker that lacks them.
    """

    root: str
    part_path: str
    unit: str
    track: str
    shard_index: int
    records: tuple
    solvers: tuple
    sync: tuple
    fingerprint: str
    solver_modules: tuple = ()

    @property
    def sequence_ids(self) -> list[str]:
        return [r["sequence_id"] for r in self.records]


@dataclass
class UnitOutcome:
    """What a worker reports for a unit (same fields as the generator's shard outcome, plus ``unit``, ``n_rows``)."""

    track: str
    shard_index: int
    n_sequences: int
    ok: bool
    seconds: float = 0.0
    unit: str = ""
    n_rows: int = 0
    n_failed_rows: int = 0
    failed_sequence: str | None = None
    error: str | None = None
    traceback: str | None = None


def _loaded(root: str, records: tuple):
    """Yield ``(index row, Sequence or exception)``; one unreadable sequence does not stop the others."""
    man = pd.DataFrame.from_records(list(records))
    k = 0
    it = kio.iter_sequences(root, man)
    while k < len(records):
        try:
            seq = next(it)
        except StopIteration:
            return
        except Exception as exc:  # the iterator is finished: load the rest one by one
            yield records[k], exc
            for rec in records[k + 1 :]:
                try:
                    one = kio.load_sequence(root, rec["sequence_id"], man)
                except Exception as exc2:
                    one = exc2
                yield rec, one
            return
        yield records[k], seq
        k += 1


def run_unit(task: BenchmarkTask) -> UnitOutcome:
    """Evaluate one shard and write its part file; never raises (failures come back in the outcome).

    The solvers run with BLAS on one thread (:func:`kinhec.util.blas.single_threaded_blas`): the rows then do not
    depend on ``OPENBLAS_NUM_THREADS``, and parallel workers do not oversubscribe the cores.
    """
    t0 = time.process_time()
    current = None
    try:
        if any(n not in _registry.evaluated_names() for n in task.solvers):  # a fresh worker: import the plug-ins
            _registry.load_plugins(task.solver_modules)
        specs = [_registry.evaluated_spec(n) for n in task.solvers]
        rows: list[dict] = []
        with single_threaded_blas():
            for rec, seq in _loaded(task.root, task.records):
                current = rec.get("sequence_id")
                if isinstance(seq, BaseException):
                    rows.extend(failed_rows(rec, specs, task.sync, "reading failed: " + error_text(seq)))
                else:
                    rows.extend(_sequence.evaluate_rows(seq, specs, task.sync))
        current = None
        table = results_table(rows)
        meta = {PART_METADATA_KEY: jsonutil.dumps({"fingerprint": task.fingerprint, "sequence_ids": task.sequence_ids})}
        _write_parquet_atomic(Path(task.part_path), table.replace_schema_metadata(meta))
        n_failed = sum(1 for r in rows if not r["ok"])
        return UnitOutcome(task.track, task.shard_index, len(task.records), True, time.process_time() - t0,
                           unit=task.unit, n_rows=len(rows), n_failed_rows=n_failed)  # fmt: skip
    except Exception as exc:  # reported to the parent, which logs the traceback and goes on
        return UnitOutcome(
            task.track, task.shard_index, len(task.records), False, time.process_time() - t0, unit=task.unit,
            failed_sequence=current, error=error_text(exc), traceback=traceback.format_exc(),
        )  # fmt: skip


def _write_parquet_atomic(path: Path, table: pa.Table) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda tmp: pq.write_table(table, tmp, compression=COMPRESSION))


def _part_is_current(path: Path, fingerprint: str, sequence_ids: list[str]) -> bool:
    if not path.is_file():
        return False
    try:
        md = pq.read_metadata(path)
        kv = md.metadata or {}
        text = kv.get(PART_METADATA_KEY.encode())
        if text is None or not md.schema.to_arrow_schema().equals(RESULTS_SCHEMA, check_metadata=False):
            return False
        info = jsonutil.loads(text.decode())
    except Exception:  # unreadable or foreign file: recompute
        return False
    return isinstance(info, dict) and info.get("fingerprint") == fingerprint and info.get("sequence_ids") == sequence_ids


# --------------------------------------------------------------------------- #
# planning
# --------------------------------------------------------------------------- #
_UNIT_RE = re.compile(r"^(?P<track>.+)-(?P<shard>\d+)$")


def _file_stat(root: Path, rel) -> list:
    if not isinstance(rel, str):
        return [None, None]
    try:
        st = (root / rel).stat()
    except OSError:
        return [rel, None]
    return [rel, st.st_size]


def _fingerprint(root: Path, records: list[dict], solvers, syncs) -> str:
    """Options and data a part depends on, as one JSON string."""
    seq_keys = [
        [r.get("sequence_id"), r.get("seed"), r.get("generator_version"), r.get("robot_row_group"),
         r.get("camera_row_group")] + [r.get(c) for c in _POSE_TRUTH]
        for r in records
    ]  # fmt: skip
    digest = hashlib.sha256(jsonutil.dumps(seq_keys).encode()).hexdigest()[:16]
    first = records[0] if records else {}
    fp = {
        "protocol_version": PROTOCOL_VERSION,
        "kinhec_version": __version__,
        "kinhec_sources": source_digest(),
        "solvers": list(solvers),
        "sync": list(syncs),
        "sequences": digest,
        "files": [_file_stat(root, first.get("robot_file")), _file_stat(root, first.get("camera_file"))],
    }
    plugins = {n: _plugin_identity(n) for n in solvers if _registry.is_plugin(n)}
    if plugins:  # a plug-in whose code moved or was replaced is evaluated again
        fp["plugins"] = plugins
    return jsonutil.dumps(fp, sort_keys=True)


_POSE_TRUTH = [f"{p}_{c}" for p in ("X", "Y") for c in ("px", "py", "pz", "qw", "qx", "qy", "qz")]


def _plugin_identity(name: str) -> str:
    spec = _registry.SOLVERS.get(name)
    fn = getattr(getattr(spec, "run", None), "__wrapped__", None)
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"


def _plan(root: Path, manifest: pd.DataFrame, parts: Path, solvers, syncs, solver_modules=()) -> list[BenchmarkTask]:
    """One task per shard (``robot_file``) of the selected sequences, in index order."""
    tasks = []
    files = manifest["robot_file"].astype(object).where(manifest["robot_file"].notna(), None)
    records = manifest.to_dict("records")
    groups: dict = {}
    for rec, f in zip(records, files):
        groups.setdefault(f if isinstance(f, str) else f"?{rec.get('track')}", []).append(rec)
    used = set()
    for n, (f, recs) in enumerate(groups.items()):
        stem = Path(f).stem if not f.startswith("?") else f"{f[1:]}-nofile"
        m = _UNIT_RE.match(stem)
        track = str(recs[0].get("track"))
        shard_index = int(m.group("shard")) if m else n
        unit = re.sub(r"[^A-Za-z0-9_.-]", "_", stem)
        while unit in used:
            unit += "_"
        used.add(unit)
        tasks.append(
            BenchmarkTask(
                root=str(root), part_path=str(parts / f"{unit}.parquet"), unit=unit, track=track,
                shard_index=shard_index, records=tuple(recs), solvers=tuple(solvers), sync=tuple(syncs),
                fingerprint=_fingerprint(root, recs, solvers, syncs), solver_modules=tuple(solver_modules),
            )
        )  # fmt: skip
    return tasks


def _slim_index(root: Path, pixels: bool) -> pd.DataFrame:
    """The index without the generation recipes, which keeps the run's memory and its tasks small.

    The recipe columns are not read at all (about 0.5 GB of JSON text on the full tier).  With a pixel
    solver to run, ``extra_json`` is read for the rows of a pixel track with a pnp camera only (the others
    cannot qualify, :func:`pixels_available`), and the rows whose pixels can be rebuilt keep it cut down
    to ``{"recipe": ...}``; every other row has None there.
    """
    out = kio.load_manifest(root, without=RECIPE_COLUMNS)
    if pixels:
        extra = np.full(len(out), None, dtype=object)
        maybe = np.flatnonzero(out["track"].astype(str).isin(PIXEL_TRACKS).to_numpy()
                               & (out["camera_noise_model"].astype(str) == "pnp").to_numpy())  # fmt: skip
        if maybe.size:
            texts = read_index_column(root, "extra_json", out["sequence_id"].iloc[maybe], PIXEL_TRACKS)
            for i, r in zip(maybe, out.iloc[maybe].to_dict("records")):
                r["extra_json"] = texts.get(r["sequence_id"])
                if pixels_available(r):
                    extra[i] = jsonutil.dumps({"recipe": stored_recipe(r)})
        out["extra_json"] = extra
    return out


def _select(manifest: pd.DataFrame, tracks, max_sequences) -> pd.DataFrame:
    man = manifest
    if tracks is not None:
        present = list(dict.fromkeys(man["track"].dropna().astype(str)))
        absent = [t for t in tracks if t not in present]
        if absent:
            raise InputError(
                f"tracks: expected tracks present in the dataset ({', '.join(present) or 'none'}), "
                f"got {', '.join(absent)} without any sequence"
            )
        man = man.loc[man["track"].isin(tracks).to_numpy()]
    if max_sequences is not None:
        man = man.groupby("track", sort=False, dropna=False).head(max_sequences)
    return man


# --------------------------------------------------------------------------- #
# the run
# --------------------------------------------------------------------------- #
@dataclass
class BenchmarkSummary:
    """What :func:`run_benchmark` did.

    Attributes
    ----------
    root, out : Path
        Dataset folder and output folder.
    solvers, tracks, sync : list of str
        What was evaluated (``tracks``: the tracks of the selected sequences).
    planned_sequences, planned_units : int
        Selected sequences and the shards (units) they live in.
    skipped_units, computed_units : int
        Units whose part was already current, and units computed now.
    n_rows, n_ok : int
        Rows of ``results.parquet`` and those with ``ok``.
    unreadable : list of str
        Sequences that could not be read (their rows say ``reading failed``); the run is not ``ok``.
    failed : list of UnitOutcome
        Units that could not be evaluated (their sequences are missing from the results).
    interrupted : bool
        ``Ctrl+C``: the outputs were not written; run again to resume.
    wall_s, cpu_s : float
        Wall time of the run and CPU time spent in the units computed now.
    files : dict
        Paths of the written outputs (``results``, ``results_csv``,
        ``leaderboard``, ``summary``, ``protocol``).
    results : pandas.DataFrame or None
        The results table as written.
    log_path : Path or None
        Tracebacks of failed units.
    fingerprint : str
        :func:`kinhec.util.fingerprint.run_fingerprint` of the run.
    subset : bool
        True unless every solver, synchronisation and sequence was evaluated;
        a subset run writes into ``<benchmark folder>/subsets/<fingerprint>``.
    parts_dir : Path or None
        Scratch folder of the run's per-shard parts.
    aborted : bool
        A second ``Ctrl+C``: running units were stopped at once.
    """

    root: Path
    out: Path
    solvers: list = field(default_factory=list)
    tracks: list = field(default_factory=list)
    sync: list = field(default_factory=list)
    planned_sequences: int = 0
    planned_units: int = 0
    skipped_units: int = 0
    computed_units: int = 0
    n_rows: int = 0
    n_ok: int = 0
    unreadable: list = field(default_factory=list)
    failed: list = field(default_factory=list)
    interrupted: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    files: dict = field(default_factory=dict)
    results: pd.DataFrame | None = None
    log_path: Path | None = None
    fingerprint: str = ""
    subset: bool = False
    parts_dir: Path | None = None
    aborted: bool = False

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted and not self.unreadable


def run_benchmark(
    root,
    *,
    out=None,
    solvers: Iterable[str] | None = None,
    tracks: Iterable[str] | None = None,
    max_sequences: int | None = None,
    sync: Iterable[str] = EVAL_SYNCS,
    workers: int | None = 1,
    executor: str = "local",
    scheduler: str | None = None,
    on_event: Callable[[str, dict], None] | None = None,
    solver_modules: Iterable[str] = (),
) -> BenchmarkSummary:
    """Run (or resume) the benchmark on a dataset folder and write its outputs.

    Parameters
    ----------
    root : str or Path
        Dataset folder (``sequences.parquet`` and the shards).
    out : str or Path, optional
        Output folder (default ``root/benchmarks``).
    solvers : iterable of str, optional
        Solver names (default: every solver: the eleven published
        baselines, ``he_ml``, the pixel solver ``reprojection`` (on the
        sequences whose pixels can be rebuilt) and the plug-ins).
    solver_modules : iterable of str
        Modules (or ``.py`` files) registering plug-in solvers, imported first;
        the ``kinhec.solvers`` entry points are loaded too
        (:func:`kinhec.solvers.load_plugins`).
    tracks : iterable of str, optional
        Only these tracks (default: every sequence of the index).  A track
        without any sequence in the dataset is an error.
    max_sequences : int, optional
        The first ``max_sequences`` sequences (index order) of each track.
    sync : iterable of str
        ``"oracle"`` and / or ``"estimated"``.
    workers : int
        Parallel workers (``None``: number of cores).  One local worker runs
        in this process.
    executor : {"local", "dask"}
        Local processes, or Dask (``scheduler`` address, or a LocalCluster).
    scheduler : str, optional
        Address of a Dask scheduler (implies ``executor="dask"``).
    on_event : callable, optional
        ``on_event(kind, data)`` for a progress display: ``"start"``
        (``planned``, ``done`` sequences, ``todo_shards``), ``"shard"``
        (``outcome``: a :class:`UnitOutcome`), ``"interrupt"`` (``running``),
        ``"write"`` (outputs being written), ``"end"`` (``summary``).

    Returns
    -------
    BenchmarkSummary
        ``summary.ok`` is False if a unit failed or the run was interrupted.

    Raises
    ------
    UnknownNameError
        For an unknown solver, track or synchronisation name (the message lists the valid ones).
    InputError
        For other bad arguments, or a folder another benchmark run is writing.
    DatasetFormatError
        If ``root`` is not a dataset folder or its index cannot be read.
    """
    if isinstance(solver_modules, str):
        solver_modules = [solver_modules]
    solver_modules = list(solver_modules or ())
    _registry.load_plugins(solver_modules)
    solver_list = check_solvers(solvers)
    # plug-ins registered by an importable module are imported again by workers that lack them
    solver_modules += [m for n in solver_list if _registry.is_plugin(n)
                       for m in [_registry.SOLVERS[n].module] if m and m != "__main__" and m not in solver_modules]  # fmt: skip
    track_list = check_tracks(tracks)
    sync_list = check_sync(sync)
    max_sequences = check_count(max_sequences, "max_sequences", allow_none=True)
    if workers is None:
        workers = os.cpu_count() or 1
    workers = check_count(workers, "workers", allow_none=False)
    if executor not in EXECUTORS:
        raise InputError(f"executor: expected one of {', '.join(EXECUTORS)}, got {executor!r}")
    if scheduler:
        executor = "dask"
    if on_event is not None and not callable(on_event):
        raise InputError(f"on_event: expected a callable on_event(kind, data), got {type(on_event).__name__}")
    emit = on_event or (lambda kind, data: None)

    try:
        root = Path(root)
    except TypeError:
        raise InputError(f"root: expected a folder path, got {type(root).__name__}") from None
    refuse_if_in_use(root, "benchmark")  # a folder being generated: say so (its writer lock is taken below)
    manifest = _slim_index(root, any(_registry.uses_pixels(n) for n in solver_list))
    selected = _select(manifest, track_list, max_sequences)
    bench_dir = root / RESULTS_DIR if out is None else Path(out)
    if bench_dir.exists() and not bench_dir.is_dir():
        raise InputError(f"out: expected a folder, got the file {bench_dir}")
    # a subset run (other solvers, syncs or sequences) gets its own folder and never replaces a full run
    full = solver_list == _registry.evaluated_names() and sync_list == list(EVAL_SYNCS) and len(selected) == len(manifest)
    fingerprint = run_fingerprint(solvers=solver_list, sync=sync_list, sequence_ids=list(selected["sequence_id"]),
                                  protocol_version=PROTOCOL_VERSION, kinhec_version=__version__)  # fmt: skip
    where = run_folders(root, bench_dir, fingerprint, full=full)
    out = where["out"]

    t_wall = time.perf_counter()
    summary = BenchmarkSummary(root=root, out=out, solvers=solver_list, sync=sync_list,
                               tracks=list(dict.fromkeys(selected["track"].astype(str))),
                               fingerprint=fingerprint, subset=not full, parts_dir=where["parts"])  # fmt: skip
    parts = where["parts"]
    with writer_lock(where["lock_root"]):
        parts.mkdir(parents=True, exist_ok=True)
        for p in parts.glob("*.tmp"):
            p.unlink(missing_ok=True)
        # the tasks carry absolute paths: a Dask worker resolves a relative one in its own working directory
        tasks = _plan(root.resolve(), selected, parts.resolve(), solver_list, sync_list, solver_modules)
        summary.planned_sequences = len(selected)
        summary.planned_units = len(tasks)
        summary.log_path = parts / LOG_FILE
        todo = [t for t in tasks if not _part_is_current(Path(t.part_path), t.fingerprint, t.sequence_ids)]
        summary.skipped_units = len(tasks) - len(todo)
        done = summary.planned_sequences - sum(len(t.records) for t in todo)
        emit("start", {"planned": summary.planned_sequences, "done": done, "todo_shards": len(todo)})
        if todo:
            _run_tasks(todo, workers, executor, scheduler, summary, emit)
        if not summary.interrupted:
            emit("write", {"out": out})
            failed = {o.unit for o in summary.failed}
            table = _assemble([Path(t.part_path) for t in tasks if t.unit not in failed])
            summary.files, summary.results = _write_outputs(out, table, summary)
            summary.n_rows = table.num_rows
            summary.n_ok = int(np.count_nonzero(table.column("ok").to_numpy(zero_copy_only=False)))
            err = summary.results["error"].fillna("")
            summary.unreadable = sorted(set(summary.results.loc[err.str.startswith("reading failed"), "sequence_id"]))
    summary.wall_s = time.perf_counter() - t_wall
    emit("end", {"summary": summary})
    return summary


def _run_tasks(todo, workers, executor, scheduler, summary: BenchmarkSummary, emit) -> None:
    ex = make_executor(run_unit, executor, workers, scheduler, inline_single=True)
    pending = list(reversed(todo))
    running: dict = {}
    try:  # Dask: every worker must read the dataset and write the part files where this process reads them
        ex.require_folder(summary.root)
        ex.require_folder(summary.parts_dir, scratch=summary.parts_dir)
    except BaseException:
        ex.shutdown()
        raise

    def record(outcome: UnitOutcome) -> None:
        summary.cpu_s += outcome.seconds
        if outcome.ok:
            summary.computed_units += 1
        else:
            summary.failed.append(outcome)
            with open(summary.log_path, "a") as log:
                log.write(f"--- unit {outcome.unit} failed at {time.ctime()}\nsequence: {outcome.failed_sequence}\n"
                          f"{outcome.traceback}\n")  # fmt: skip
        emit("shard", {"outcome": outcome})

    try:
        try:
            for task, fut in completed_tasks(ex, pending, running):
                try:
                    outcome = fut.result()
                except Exception as exc:  # a worker process died, or the cluster lost the task
                    outcome = UnitOutcome(task.track, task.shard_index, len(task.records), False, unit=task.unit,
                                          error=error_text(exc), traceback=traceback.format_exc())  # fmt: skip
                if outcome.ok and not Path(task.part_path).is_file():  # a worker writing a folder of its own
                    outcome = UnitOutcome(task.track, task.shard_index, len(task.records), False, unit=task.unit,
                                          error=f"a worker reported {task.part_path} written, but it is not there: "
                                                "the Dask workers must share this folder's file system")  # fmt: skip
                record(outcome)
        except KeyboardInterrupt:
            pending.clear()

            def finished(outcome) -> None:
                if outcome.ok:
                    summary.cpu_s += outcome.seconds
                    summary.computed_units += 1
                emit("shard", {"outcome": outcome})

            # the units already running finish (workers ignore SIGINT); a second Ctrl+C aborts them
            drain_after_interrupt(ex, running, summary, emit, finished)
    finally:
        ex.shutdown()


# --------------------------------------------------------------------------- #
# outputs
# --------------------------------------------------------------------------- #
def _assemble(paths: list[Path]) -> pa.Table:
    """The parts as one table, sorted by sequence, synchronisation and solver.

    The rows are put in order one column at a time, each source column dropped once taken, so that the
    sorted copy never coexists with the whole unsorted table (the full tier's ``mixed`` track: 856k rows).
    """
    tables = [pq.read_table(p).replace_schema_metadata(None) for p in paths if p.is_file()]
    table = pa.concat_tables(tables) if tables else RESULTS_SCHEMA.empty_table()
    del tables
    table = table.cast(RESULTS_SCHEMA)
    pa.default_memory_pool().release_unused()  # (the parts' decoding buffers, before the sorted copy)
    if not table.num_rows:
        return table
    order = pc.sort_indices(table, sort_keys=[("sequence_id", "ascending"), ("eval_sync", "ascending"),
                                              ("solver", "ascending")])  # fmt: skip
    columns = []
    for name in RESULTS_SCHEMA.names:
        columns.append(table.column(name).take(order).combine_chunks())
        table = table.drop_columns([name])
    table = pa.Table.from_arrays(columns, schema=RESULTS_SCHEMA)
    pa.default_memory_pool().release_unused()
    return table


def _write_outputs(out: Path, table: pa.Table, summary: BenchmarkSummary) -> tuple[dict, pd.DataFrame]:
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "results": out / RESULTS_FILE,
        "results_csv": out / RESULTS_CSV_FILE,
        "leaderboard": out / LEADERBOARD_FILE,
        "summary": out / SUMMARY_FILE,
        "protocol": out / PROTOCOL_FILE,
    }
    fp = data_fingerprint(summary.root)  # ties the results to the data they were computed on
    meta = {FINGERPRINT_KEY: fp.encode()} if fp else None
    _write_parquet_atomic(files["results"], table.replace_schema_metadata(meta) if meta else table)
    _write_csv(files["results_csv"], table)  # (its frame, with nullable integers, is freed before the next)
    results = table.to_pandas()
    dataset = summary.root.resolve().name or str(summary.root)
    summ = summarize_results(results, solvers=summary.solvers)
    atomic_write_text(files["leaderboard"],
                leaderboard_markdown(results, solvers=summary.solvers, dataset=dataset, summary=summ))  # fmt: skip
    summ = {
        "kinhec_version": __version__,
        "protocol_version": PROTOCOL_VERSION,
        "dataset": str(summary.root),
        "n_sequences": int(sum(summ["sequences"].values())),
        "n_rows": int(len(results)),
        "n_ok": int(results["ok"].sum()),
        "solvers": summary.solvers,
        "tracks": summary.tracks,
        "eval_sync": summary.sync,
        "fingerprint": summary.fingerprint,
        "subset": summary.subset,
        "failed_units": [o.unit for o in summary.failed],
        **summ,
    }
    jsonutil.dump(summ, files["summary"], indent=2)
    jsonutil.dump(protocol_info(summary.solvers, summary.sync), files["protocol"], indent=2)
    return files, results




def _write_csv(path: Path, table: pa.Table) -> None:
    """``results.csv``: integer columns with missing values written as integers (nullable ``Int64``)."""
    df = table.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    atomic_write(path, functools.partial(df.to_csv, index=False, lineterminator="\n"))
    del df
    pa.default_memory_pool().release_unused()
