"""The benchmark page of a dataset folder: :func:`build_benchmark_report` (``kinhec report DIR``)."""

from __future__ import annotations

import html
import json
import time
from pathlib import Path
from typing import Callable

from kinhec import __version__
from kinhec.util.errors import InputError
from kinhec.io import load_manifest
from kinhec.util.locking import refuse_if_in_use
from kinhec.report import data as rdata
from kinhec.report.figures import composition_figures, curve_figure, solver_colors
from kinhec.report.page import render_page, write_page
from kinhec.report.sequences import MAX_POINTS, sequence_payloads
from kinhec.dataset.validation_record import read_record

__all__ = ["REPORT_FILE", "build_benchmark_report"]

#: Default file name of the page, written into the dataset folder.
REPORT_FILE = "report.html"

_BODY = """
<header>
  <h1>{title}</h1>
  <p>{subtitle}</p>
  <nav>
    <button data-view="leaderboard">Leaderboard</button>
    <button data-view="curves">Robustness curves</button>
    <button data-view="dataset">Dataset</button>
    <button data-view="sequences">Sequences</button>
  </nav>
</header>
<main>
<section class="view" id="view-leaderboard">
  <h2>Leaderboard per track</h2>
  <div class="controls"><label for="lb-track">track</label> <select id="lb-track"></select>
    <span class="note" id="lb-mode"></span></div>
  <p class="note">Medians over the sequences for which a solver returned an estimate (<i>succ.</i> is that share).
  <b>oracle</b> pairs the two streams with the true clock offset, <b>estimated</b> with the offset estimated from the
  angular speeds (asynchronous sequences only). Click a column to sort; the best value of each error column is in bold.
  {crlb_note}</p>
  <div class="scroll wide"><table class="data compact" id="leaderboard"></table></div>
  {no_results}
</section>
<section class="view" id="view-curves">
  <h2>Robustness curves</h2>
  <div class="controls">
    <label for="cv-track">track</label> <select id="cv-track"></select>
    <label for="cv-factor">factor</label> <select id="cv-factor"></select>
    <button id="cv-all" type="button">all solvers</button> <button id="cv-none" type="button">none</button>
  </div>
  <div class="solvers" id="cv-solvers"></div>
  <div id="curves" class="plot"></div>
  {no_curves}
</section>
<section class="view" id="view-dataset">
  <h2>Composition and motion descriptors</h2>
  <p class="note">Counts of the sequences per track, robot, trajectory family, configuration, camera noise model and
  synchronisation (stacked by configuration), and the distributions of the motion descriptors of the index.</p>
  <div class="grid" id="composition"></div>
</section>
<section class="view" id="view-sequences">
  <h2>Sequences</h2>
  <div class="controls">
    <label for="sq-track">track</label> <select id="sq-track"></select>
    <label for="sq-robot">robot</label> <select id="sq-robot"></select>
    <label for="sq-configuration">configuration</label> <select id="sq-configuration"></select>
    <label for="sq-family">family</label> <select id="sq-family"></select>
    <span class="note" id="sq-count"></span>
  </div>
  <p class="note">Click a row to open the sequence: its scene, its two streams, every solver's result and its
  validation status. Streams are thinned to at most {max_points} samples for the page.</p>
  <div class="scroll wide-rows"><table class="data compact" id="sequences"></table></div>
  <div class="drill" id="drill" hidden>
    <h3 id="drill-title"></h3>
    <p id="drill-status"></p>
    <ul class="warnings" id="drill-findings"></ul>
    <div class="drill-grid"><div id="seq-scene" class="plot"></div><div id="streams" class="plot"></div></div>
    <div id="seq-errors" class="plot"></div>
    <div class="scroll"><table class="data compact" id="seq-results"></table></div>
  </div>
</section>
</main>
"""


def _dataset_name(root: Path) -> tuple[str, str]:
    info_path = root / "generation_info.json"
    try:
        info = json.loads(info_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        info = {}
    name = str(info.get("dataset") or root.resolve().name)
    tier = info.get("tier")
    return name, (f"tier {tier}" if tier else "")


def _validation_text(val: dict | None, stale: bool) -> str:
    """The subtitle's word on the validation: passed / FAILED (and on what), out of date, or not run."""
    if val is None:
        return "out of date (the index changed since kinhec validate ran)" if stale else "not run"
    what = "passed" if val["ok"] else "FAILED"
    if val.get("sample") not in (None, "all"):
        what += f" on {val.get('checked')} sequences ({val['sample']})"
    return what


def build_benchmark_report(
    root,
    out=None,
    *,
    validation=None,
    validate: bool = False,
    on_progress: Callable[[str], None] | None = None,
) -> Path:
    """Write the self-contained HTML page of a dataset folder and its benchmark results.

    Parameters
    ----------
    root : str or Path
        Dataset folder (``sequences.parquet``, the shards and, when ``kinhec benchmark`` ran,
        ``benchmarks/results.parquet``).
    out : str or Path, optional
        HTML file to write; default ``root / "report.html"``.
    validation : str or Path, optional
        A validation report (``kinhec validate DIR --report FILE``) giving the per-sequence status;
        default ``root / "validation.json"`` when it exists, else what the last ``kinhec validate DIR``
        recorded (:mod:`kinhec.dataset.validation_record`) when the index is still the one it checked.
    validate : bool
        Run the validator now (:func:`kinhec.dataset.validate.validate_dataset`, slower) instead of reading a
        report.
    on_progress : callable, optional
        Called as ``on_progress(message)`` with one line per step.

    Returns
    -------
    Path
        The page written.  It works offline: plotly.js, the style and the script are inlined and
        nothing is fetched.

    Raises
    ------
    DatasetFormatError
        ``root`` is not a dataset folder, or its index, shards, results or validation report cannot
        be read (the message names the file).
    InputError
        ``out`` is a folder or its folder does not exist; bad ``on_progress``.
    """
    if on_progress is not None and not callable(on_progress):
        raise InputError(f"on_progress: expected a callable on_progress(message), got {type(on_progress).__name__}")
    say = on_progress or (lambda msg: None)
    t0 = time.perf_counter()
    root = Path(root)
    refuse_if_in_use(root, "report on")  # a folder being written is incomplete by design
    manifest = load_manifest(root)
    out = root / REPORT_FILE if out is None else Path(out)
    if out.is_dir():
        raise InputError(f"out: expected an HTML file name, got the folder {out}")
    if not out.parent.is_dir():
        raise InputError(f"out: the folder {out.parent} does not exist")

    results = rdata.read_results(root)
    stale = False
    if validate:
        from kinhec.dataset.validate import validate_dataset

        val = rdata.validation_from_report(validate_dataset(root))
    elif validation is not None:
        val = rdata.read_validation(validation)
    elif (root / rdata.VALIDATION_FILE).is_file():
        val = rdata.read_validation(root / rdata.VALIDATION_FILE)
    else:  # what the last kinhec validate of this folder recorded, if the index is still the one it checked
        record, state = read_record(root)
        val = rdata.validation_from_dict(record) if state == "current" else None
        stale = state == "stale"
    say(f"read the index ({len(manifest)} sequences) and "
        + (f"{len(results)} result rows" if results is not None else "no results") + f" ({time.perf_counter() - t0:.1f} s)")

    scenes = sequence_payloads(root, manifest)
    say(f"thinned {len(scenes)} sequences for the drill-down ({time.perf_counter() - t0:.1f} s)")

    if results is not None and len(results):
        board = rdata.leaderboard(results)
        solvers = rdata.solver_order(results)
        colors = solver_colors(solvers)
        curves = {track: [{"name": c["name"], "label": c["label"], "figure": curve_figure(track, c, colors)}
                          for c in cs] for track, cs in rdata.robustness_curves(results, manifest).items()}  # fmt: skip
    else:
        board, solvers, colors, curves = {"columns": [], "tracks": {}, "crlb": []}, [], {}, {}
    rows = rdata.sequence_rows(manifest, results, val)

    name, tier = _dataset_name(root)
    n_res = 0 if results is None else len(results)
    subtitle = (f"{len(manifest):,} sequences{', ' + tier if tier else ''}; {n_res:,} result rows"
                f"{', ' + str(len(solvers)) + ' solvers' if solvers else ''}; "
                f"validation: {_validation_text(val, stale)}; "
                f"page written by kinhec {__version__}")  # fmt: skip
    crlb_note = ""
    if board["crlb"]:
        crlb_note = ("Efficiency columns: each run's error divided by the Cramér-Rao bound of its sequence (the "
                     "expected error of an efficient estimator on the same pairs; 1 is the best an unbiased "
                     "estimator can do), medians as above. The bound depends on the sequence, not on the solver: "
                     "its median over the track's sequences is given above the table.")  # fmt: skip
    body = _BODY.format(
        title=html.escape(f"kinhec benchmark report: {name}"),
        subtitle=html.escape(subtitle),
        crlb_note=html.escape(crlb_note),
        no_results="" if n_res else '<p class="note"><b>No benchmark results</b> in this folder: run '
                                    "<code>kinhec benchmark DIR</code>, then this command again.</p>",
        no_curves="" if curves else '<p class="note">No swept factor with results in this folder.</p>',
        max_points=MAX_POINTS,
    )
    data = {
        "title": name,
        "has_results": bool(n_res),
        "leaderboard": board,
        "solvers": solvers,
        "colors": colors,
        "curves": curves,
        "composition": composition_figures(rdata.composition(manifest)),
        "sequences": rows,
        "scenes": scenes,
        "validation_hint": (f"the index changed since the last validation: run kinhec validate {root} again" if stale
                            else f"kinhec validate {root} records it for this page"),
    }
    page = render_page(f"kinhec report: {name}", body, data, "benchmark.js")
    path = write_page(page, out)
    say(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, {time.perf_counter() - t0:.1f} s)")
    return path
