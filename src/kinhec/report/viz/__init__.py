"""Figures of a kinhec dataset folder (``kinhec visualize``).

:func:`make_figures` writes every PNG of a copy into ``DATA/figures`` (or
``out``); the ``plot_*`` functions draw one figure each and can be used on
their own.

matplotlib is imported inside the drawing functions only, so ``import
kinhec`` (and ``import kinhec.report.viz``) never loads it.  Figures are built with
the Agg canvas on :class:`matplotlib.figure.Figure` objects, never through
pyplot, so no window opens and no global figure state is left behind.

Figures and file names
----------------------
``dataset_overview.png``
    Composition of the copy (tracks, robots, families, camera noise models)
    and the distributions of the motion descriptors.
``robots_home.png``
    The 13 manipulator models at their home configurations.
``scene_<id>.png``
    A sequence in the robot base frame: arm, flange path, camera frustums,
    observed reference (:func:`plot_scene`).
``streams_<id>.png``
    The robot and the camera stream over time, each on its own clock.
``errors_<id>.png``
    The injected measurement errors per component.
``pnp_image_<id>.png``
    The PnP model in the image plane (points projected with the true and
    the measured pose), for sequences whose camera noise model is ``pnp``.
``time_offset_<id>.png``
    Angular speed of an asynchronous sequence before and after the
    clock-offset estimate.
``benchmark_summary.png``, ``robustness_<track>_<factor>.png``, ``error_vs_descriptors.png``
    From ``benchmarks/results.parquet`` when it exists: per-track summary of
    the baselines, robustness curves (:data:`ROBUSTNESS_FACTORS`) and the X
    error against the motion descriptors.
``efficiency.png``
    From the same table when it has the Cramér-Rao bound columns: median
    error / bound per track and solver (:func:`plot_efficiency`).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Callable

import pandas as pd

from kinhec.util.errors import InputError, KinhecError
from kinhec.io import INDEX_FILE, is_asynchronous, load_manifest, load_sequence
from kinhec.util.provenance import check_results_match
from kinhec.report.viz.dataset import plot_dataset_overview, plot_robots_home
from kinhec.report.viz.results import (
    RESULTS_FILE,
    ROBUSTNESS_FACTORS,
    RobustnessFactor,
    has_efficiency,
    load_results,
    parse_level,
    plot_benchmark_summary,
    plot_efficiency,
    plot_error_vs_descriptors,
    plot_robustness,
    robustness_factors,
)
from kinhec.report.viz.scene import plot_scene
from kinhec.report.viz.streams import plot_errors, plot_pnp_image, plot_streams, plot_time_offset

__all__ = [
    "make_figures",
    "default_sequences",
    "plot_dataset_overview",
    "plot_robots_home",
    "plot_scene",
    "plot_streams",
    "plot_errors",
    "plot_pnp_image",
    "plot_time_offset",
    "plot_benchmark_summary",
    "plot_robustness",
    "plot_error_vs_descriptors",
    "plot_efficiency",
    "load_results",
    "parse_level",
    "robustness_factors",
    "RobustnessFactor",
    "ROBUSTNESS_FACTORS",
    "RESULTS_FILE",
    "FIGURES_DIR",
]

#: Default output folder inside the dataset folder.
FIGURES_DIR = "figures"

#: Tracks whose first sequence gets a scene, streams and errors figure by default.
DEFAULT_SEQUENCE_TRACKS = ("noise", "motion", "pnp")

_log = logging.getLogger(__name__)


def _first(manifest: pd.DataFrame, mask) -> str | None:
    hit = manifest.loc[mask, "sequence_id"]
    return None if hit.empty else str(hit.iloc[0])


def _is_pnp(manifest: pd.DataFrame):
    return manifest["camera_noise_model"].astype(str) == "pnp"


def _is_async(manifest: pd.DataFrame):
    return manifest["sync"].map(is_asynchronous).astype(bool)


def default_sequences(manifest: pd.DataFrame) -> dict[str, list[str]]:
    """The sequences :func:`make_figures` draws when none are chosen.

    Parameters
    ----------
    manifest : pandas.DataFrame
        The index (:func:`kinhec.io.load_manifest`).

    Returns
    -------
    dict
        ``{"scene": ids, "pnp_image": ids, "time_offset": ids}``: the first
        ``noise``, ``motion`` and ``pnp`` sequences (the first sequence of
        the copy if it has none of these tracks) for the scene, streams and
        errors figures; the first sequence with the ``pnp`` camera model
        (preferably of the ``pnp`` track); the first asynchronous sequence
        (preferably of the ``temporal`` track).  Lists may be empty.
    """
    track = manifest["track"].astype(str)
    scene = [s for t in DEFAULT_SEQUENCE_TRACKS if (s := _first(manifest, track == t)) is not None]
    if not scene and len(manifest):
        scene = [str(manifest["sequence_id"].iloc[0])]
    pnp = _first(manifest, _is_pnp(manifest) & (track == "pnp")) or _first(manifest, _is_pnp(manifest))
    asy = _first(manifest, _is_async(manifest) & (track == "temporal")) or _first(manifest, _is_async(manifest))
    return {"scene": scene, "pnp_image": [pnp] if pnp else [], "time_offset": [asy] if asy else []}


def _selected_sequences(manifest: pd.DataFrame, sequences, root: Path) -> dict[str, list[str]]:
    if isinstance(sequences, str):
        sequences = [sequences]
    try:
        ids = list(sequences)
    except TypeError:
        raise InputError(f"sequences: expected sequence ids (strings), got {type(sequences).__name__}") from None
    bad = [s for s in ids if not isinstance(s, str)]
    if bad:
        raise InputError(f"sequences: expected sequence ids (strings) such as 'noise-000000', got {bad[:5]!r}")
    if not ids:
        raise InputError("sequences: expected at least one sequence id, got none (pass None for the defaults)")
    ids = list(dict.fromkeys(ids))
    known = set(manifest["sequence_id"].astype(str))
    unknown = [s for s in ids if s not in known]
    if unknown:
        examples = ", ".join(manifest["sequence_id"].astype(str).iloc[:3])
        raise InputError(
            f"sequences: unknown sequence ids {unknown[:10]}{' ...' if len(unknown) > 10 else ''}; "
            f"expected ids listed in {root / INDEX_FILE} ({len(manifest)} sequences, e.g. {examples})"
        )
    sub = manifest.set_index(manifest["sequence_id"].astype(str)).loc[ids]
    pnp = [s for s, p in zip(ids, _is_pnp(sub)) if p]
    asy = [s for s, a in zip(ids, _is_async(sub)) if a]
    return {"scene": ids, "pnp_image": pnp, "time_offset": asy}


def make_figures(
    root,
    *,
    out=None,
    sequences=None,
    on_progress: Callable[[str], None] | None = None,
    workers: int = 1,
) -> list[Path]:
    """Write the PNG figures of a dataset folder.

    Parameters
    ----------
    root : str or Path
        Dataset folder (``sequences.parquet`` and the shards).
    out : str or Path, optional
        Output folder; default ``root / "figures"`` (created if needed).
    sequences : str or iterable of str, optional
        Sequence ids to draw a scene, streams and errors figure for (plus a
        PnP figure for those with the ``pnp`` camera model and a clock-offset
        figure for the asynchronous ones).  Default: see
        :func:`default_sequences`.
    on_progress : callable, optional
        Called as ``on_progress(message)`` with one line per figure written
        and per figure skipped (and why); without it these lines go to the
        ``kinhec.report.viz`` logger at INFO level.
    workers : int
        Worker processes drawing figures at the same time (default 1: in this
        process).  The PNGs are the same bytes whatever the number, and the
        messages and the returned list keep the same order.

    Returns
    -------
    list of Path
        The files written, in order.

    Raises
    ------
    DatasetFormatError
        If ``root`` is not a dataset folder or its index / results table
        (InputError: results computed on other data than the folder holds)
        cannot be read.
    InputError
        Unknown or malformed sequence ids (the message names them), a bad
        ``on_progress`` or ``workers``.

    Notes
    -----
    The results figures (``benchmark_summary``, ``robustness_*``,
    ``error_vs_descriptors``) need ``benchmarks/results.parquet``; without it
    they are skipped and a message says so.  A figure that cannot be drawn
    from the data (e.g. a clock offset that cannot be estimated) is skipped
    with a message too; the others are still written.
    """
    if on_progress is not None and not callable(on_progress):
        raise InputError(f"on_progress: expected a callable on_progress(message), got {type(on_progress).__name__}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers: expected an integer >= 1, got {workers!r}")
    say = on_progress if on_progress is not None else _log.info
    root = Path(root)
    manifest = load_manifest(root)
    out = root / FIGURES_DIR if out is None else Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"out: expected a folder, got the file {out}")
    chosen = default_sequences(manifest) if sequences is None else _selected_sequences(manifest, sequences, root)
    if (root / RESULTS_FILE).is_file():  # results of data generated over since are refused, never drawn
        check_results_match(root, root / RESULTS_FILE)

    # every figure is one job (file name, kind, argument); a job needs only the folder to be drawn anywhere
    jobs: list[tuple[str, str, object]] = [("dataset_overview.png", "overview", None), ("robots_home.png", "robots_home", None)]
    notes: dict[int, list[str]] = {}  # messages said after job k (skipped figures), to keep the serial order
    for sid in chosen["scene"]:
        jobs += [(f"scene_{sid}.png", "scene", sid), (f"streams_{sid}.png", "streams", sid), (f"errors_{sid}.png", "errors", sid)]
    jobs += [(f"pnp_image_{sid}.png", "pnp_image", sid) for sid in chosen["pnp_image"]]
    if not chosen["pnp_image"]:
        notes.setdefault(len(jobs), []).append(
            "skipped pnp_image: no sequence with the pnp camera model " + ("selected" if sequences else "in the copy"))
    jobs += [(f"time_offset_{sid}.png", "time_offset", sid) for sid in chosen["time_offset"]]
    if not chosen["time_offset"]:
        notes.setdefault(len(jobs), []).append(
            "skipped time_offset: no asynchronous sequence " + ("selected" if sequences else "in the copy"))

    results_path = root / RESULTS_FILE
    results = None
    if not results_path.is_file():
        notes.setdefault(len(jobs), []).append(
            f"skipped the results figures (benchmark_summary, robustness_*, error_vs_descriptors): "
            f"no {RESULTS_FILE.as_posix()} in {root} (run kinhec benchmark first)")  # fmt: skip
    else:
        results = load_results(results_path)
        if results.empty:
            notes.setdefault(len(jobs), []).append(f"skipped the results figures: {results_path} has no rows")
        else:
            jobs.append(("benchmark_summary.png", "benchmark_summary", None))
            specs = robustness_factors(results)
            jobs += [(spec.file_name, "robustness", spec) for spec in specs]
            missing = [f"{f.track}/{f.name}" for f in ROBUSTNESS_FACTORS if f not in specs]
            if missing:
                notes.setdefault(len(jobs), []).append(f"skipped robustness curves without results: {', '.join(missing)}")
            jobs.append(("error_vs_descriptors.png", "error_vs_descriptors", None))
            if has_efficiency(results):
                jobs.append(("efficiency.png", "efficiency", None))
            else:
                notes.setdefault(len(jobs), []).append(
                    "skipped efficiency: the results table has no Cramér-Rao bound columns (re-run kinhec benchmark)")

    written: list[Path] = []
    for m in notes.get(0, []):
        say(m)
    for k, (name, path, message) in enumerate(_draw_all(root, out, jobs, workers, manifest, results), start=1):
        if path is not None:
            written.append(Path(path))
        say(message)
        for m in notes.get(k, []):
            say(m)
    return written


# --------------------------------------------------------------------------- #
# drawing jobs (in this process or in a pool)
# --------------------------------------------------------------------------- #
_STATE: dict = {}  # per process: root, manifest, results and the last sequences loaded


def _init_state(root: Path, manifest=None, results=None) -> None:
    _STATE.clear()
    _STATE.update(root=Path(root), manifest=manifest, results=results, seqs={})


def _state_manifest():
    if _STATE.get("manifest") is None:
        _STATE["manifest"] = load_manifest(_STATE["root"])
    return _STATE["manifest"]


def _state_results():
    if _STATE.get("results") is None:
        _STATE["results"] = load_results(_STATE["root"] / RESULTS_FILE)
    return _STATE["results"]


def _state_sequence(sid: str):
    seqs = _STATE["seqs"]
    if sid not in seqs:
        if len(seqs) >= 4:
            seqs.clear()
        seqs[sid] = load_sequence(_STATE["root"], sid, _state_manifest())
    return seqs[sid]


def _draw_job(job, out: Path):
    """Draw one figure: ``(name, path or None, message)``."""
    name, kind, arg = job
    path = Path(out) / name
    t0 = time.perf_counter()
    try:
        if kind == "overview":
            written = plot_dataset_overview(_state_manifest(), path)
        elif kind == "robots_home":
            written = plot_robots_home(path)
        elif kind in ("scene", "streams", "errors", "pnp_image", "time_offset"):
            fn = {"scene": plot_scene, "streams": plot_streams, "errors": plot_errors, "pnp_image": plot_pnp_image,
                  "time_offset": plot_time_offset}[kind]  # fmt: skip
            written = fn(_state_sequence(arg), path)
        elif kind == "benchmark_summary":
            written = plot_benchmark_summary(_state_results(), path)
        elif kind == "robustness":
            written = plot_robustness(_state_results(), arg, path, manifest=_state_manifest())
        elif kind == "efficiency":
            written = plot_efficiency(_state_results(), path)
        else:
            written = plot_error_vs_descriptors(_state_results(), path)
    except KinhecError as exc:
        return name, None, f"skipped {name}: {exc}"
    return name, str(written), f"wrote {written} ({time.perf_counter() - t0:.2f} s)"


def _worker_init(root: str) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is handled by the parent
    _init_state(Path(root))


def _draw_all(root: Path, out: Path, jobs, workers: int, manifest, results):
    """Yield the outcome of every job, in job order."""
    if workers == 1 or len(jobs) <= 1:
        _init_state(root, manifest, results)
        try:
            for job in jobs:
                yield _draw_job(job, out)
        finally:
            _STATE.clear()
        return
    from concurrent.futures import ProcessPoolExecutor

    # each worker loads the index once and keeps the last few sequences it drew
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), initializer=_worker_init, initargs=(str(root),)) as pool:
        futures = [pool.submit(_draw_job, job, out) for job in jobs]
        try:
            for fut in futures:
                yield fut.result()
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise
