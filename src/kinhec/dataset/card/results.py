"""The card's results: the evaluation protocol, the baseline leaderboard of the copy and its figures."""

from __future__ import annotations

import re
from pathlib import Path

from kinhec.dataset.card import markdown as md
from kinhec.dataset.card.folder import CardInputs
from kinhec.io.schema import TRACKS

__all__ = ["results_section", "figures_section", "figure_caption"]

#: The leaderboard is quoted in full up to this many lines, else cut at whole sections.
_LEADERBOARD_MAX_LINES = 160


def results_section(c: CardInputs) -> list[str]:
    """The evaluation protocol and the copy's leaderboard (benchmarks/leaderboard.md), when present."""
    root, folder = c.root, c.folder
    L: list[str] = []
    # ---- protocol and results -------------------------------------------------
    L += [
        "",
        "## Evaluation protocol and baseline results",
        "",
        "`kinhec benchmark` treats every solver alike: it pairs the streams (row by row for synchronous sequences; "
        "for asynchronous ones the measured robot stream is interpolated at `t - offset`, with the true offset "
        "(`oracle`) or with the offset estimated by cross-correlating angular speeds (`estimated`)), keeps the "
        "frames that carry a measurement, selects keyframes at least 5 deg or 2 cm apart (at most 200; all paired "
        "frames when fewer than three survive), feeds consecutive keyframe motions to the `A X = X B` solvers and "
        "the absolute keyframe poses to the `A X = Y B` solvers, and reports the geodesic rotation error [deg] and "
        "the Euclidean translation error [mm] of `X` (and `Y`).",
        "",
        "**Read the medians, not the success count.** A solver counts as successful on a sequence whenever it "
        "returns a finite estimate. A closed-form solver returns an orthonormal `X` whatever its input, also on "
        "the degenerate motions of the `motion` track and on the outlier-ridden sequences of the `outliers` track, "
        "so a full success count says nothing about whether a track was solved; the median errors do.",
        "",
    ]
    lb = root / "benchmarks" / "leaderboard.md"
    if lb.is_file():
        lines, cut = _leaderboard_lines(lb)
        L += lines
        L += ["", "Full tables: [`benchmarks/leaderboard.md`](benchmarks/leaderboard.md)" +
              (" (shortened here)." if cut else ".")]  # fmt: skip
        if (root / "benchmarks" / "results.parquet").is_file():
            L[-1] += " Raw per-sequence results: `benchmarks/results.parquet`."
    else:
        L += [f"No baseline results in this copy yet; `kinhec benchmark {folder}` computes them into `benchmarks/`."]
    return L


def figures_section(c: CardInputs) -> list[str]:
    """The figures of the copy (figures/*.png), the dataset's first, with their captions."""
    root, hf_repo = c.root, c.hf_repo
    L: list[str] = []
    # ---- figures ------------------------------------------------------------------
    figs = sorted((root / "figures").glob("*.png")) if (root / "figures").is_dir() else []
    if figs:
        L += ["", "## Figures"]
        results_fig = re.compile(r"^(benchmark_|robustness_|error_vs_)")
        groups = (
            ("The dataset", sorted((f for f in figs if not results_fig.match(f.stem)), key=_figure_order)),
            ("Baseline results", sorted((f for f in figs if results_fig.match(f.stem)), key=_figure_order)),
        )
        for title, group in groups:
            if group:
                L += ["", f"### {title}", ""]
            for f in group:
                url = (f"https://huggingface.co/datasets/{hf_repo}/resolve/main/figures/{f.name}" if hf_repo
                       else f"figures/{f.name}")  # fmt: skip
                cap = figure_caption(f.stem)
                L += [f"![{cap}]({url})", "", f"*{cap}*", ""]
            if group:
                L.pop()
    return L


def figure_caption(stem: str) -> str:
    """The caption of a figure from its file name (``robustness_noise_camera`` -> "Track noise: error of X ...")."""
    fixed = {
        "pipeline": "How one sequence is generated, from the ground-truth hand-eye transform to the two stream "
        "tables.",
        "dataset_overview": "Composition of this copy and the distribution of the motion descriptors that decide how "
        "well X can be observed.",
        "robots": "The manipulator models at their home configurations.",
        "robots_home": "The manipulator models at their home configurations.",
        "benchmark_summary": "The baseline solvers per track: median errors of X (oracle synchronisation).",
        "descriptors": "Calibration error against the motion descriptors of the individual sequences.",
        "error_vs_descriptors": "Calibration error against the motion descriptors of the individual sequences.",
    }
    if stem in fixed:
        return fixed[stem]
    m = re.match(r"^(scene|streams|errors|noise|pnp_image|image|time_offset|clock)_(.+)$", stem)
    if m:
        what, sid = m.groups()
        return {
            "scene": f"Sequence {sid} in the robot base frame: arm, flange path, camera frustums and the observed "
            "reference.",
            "streams": f"The two streams of sequence {sid} over time, ground truth and measurements, each on its "
            "own clock.",
            "errors": f"The measurement errors injected into sequence {sid}, per component.",
            "noise": f"The measurement errors injected into sequence {sid}, per component.",
            "pnp_image": f"Sequence {sid} in the image plane: target points projected with the true and the "
            "measured pose.",
            "image": f"Sequence {sid} in the image plane: target points projected with the true and the measured "
            "pose.",
            "time_offset": f"Angular speed of the two streams of sequence {sid}, before and after clock-offset "
            "estimation.",
            "clock": f"Angular speed of the two streams of sequence {sid}, before and after clock-offset "
            "estimation.",
        }[what]
    named = {
        "robustness_noise_camera": "Track noise: error of X against the camera noise level.",
        "robustness_noise_robot": "Track noise: error of X against the robot noise level.",
        "robustness_motion_cone": "Track motion: error of X against the cone half-angle of the rotation axes, the "
        "degeneracy dial (0 deg leaves the rotation of X unobservable).",
        "robustness_temporal_offset": "Track temporal: error of X against the clock offset between the two streams.",
        "robustness_outliers_fraction": "Track outliers: error of X against the outlier fraction, where the RANSAC "
        "baseline separates from the closed-form solvers.",
        "robustness_robot_error_dh_len": "Track robot_error: error of X against the DH link-length errors of the "
        "uncalibrated robot.",
        "robustness_pnp_pixel_std": "Track pnp: error of X against the pixel noise on the projected target points.",
    }
    if stem in named:
        return named[stem]
    for track in sorted(TRACKS, key=len, reverse=True):  # robot_error before a shorter prefix
        if stem.startswith(f"robustness_{track}_"):
            return f"Track {track}: error of X against {stem[len(track) + 12:].replace('_', ' ')}."
    return stem.replace("_", " ").replace("-", " ").capitalize() + "."


_FIGURE_ORDER = ("pipeline", "dataset_overview", "robots", "scene_", "streams_", "errors_", "noise_", "pnp_image_",
                 "image_", "time_offset_", "clock_", "benchmark_summary", "robustness_", "error_vs_descriptors")


def _figure_order(path: Path):
    """Dataset figures first (overview, robots, then per sequence), then the baseline results."""
    stem = path.stem
    rank = next((i for i, p in enumerate(_FIGURE_ORDER) if stem.startswith(p)), len(_FIGURE_ORDER))
    return rank, stem


def _leaderboard_lines(path: Path) -> tuple[list[str], bool]:
    """The leaderboard, headings demoted under the card's section; cut at whole sections when long."""
    lines = path.read_text(encoding="utf-8").rstrip("\n").splitlines()
    lines = md.demote_headings(lines, 3)
    # a "|" inside a code span of a table row would split the cell (level strings such as `robot=r2|camera=c1`)
    lines = [
        re.sub(r"`[^`]*`", lambda m: re.sub(r"(?<!\\)\|", r"\\|", m.group(0)), ln) if ln.startswith("|") else ln
        for ln in lines
    ]
    if len(lines) <= _LEADERBOARD_MAX_LINES:
        return lines, False
    starts = [i for i, ln in enumerate(lines) if re.match(r"^#+\s", ln) and i > 0]
    whole = [s for s in starts if s <= _LEADERBOARD_MAX_LINES]
    if whole:
        cut = max(whole)  # as many whole sections as fit
    else:
        cut = starts[0] if starts else _LEADERBOARD_MAX_LINES  # at least the first section
    return lines[:cut], True


