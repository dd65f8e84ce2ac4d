"""The colours of kinhec's figures and pages: one palette for the PNGs (:mod:`kinhec.report.viz`) and the HTML pages.

A solver, a track, a configuration or a frame axis has the same colour in
every figure kinhec draws, whether matplotlib draws it (``kinhec visualize``,
``kinhec calibrate --figure``) or plotly.js (``kinhec report``, ``kinhec
calibrate --report``).  Colours are ``#rrggbb`` strings, so both libraries take
them as they are.  This module imports nothing.
"""

from __future__ import annotations

__all__ = [
    "SOLVER_COLORS",
    "EXTRA_COLORS",
    "TRACK_COLORS",
    "CONFIG_COLORS",
    "XYZ_COLORS",
    "GT_COLOR",
    "MEAS_COLOR",
    "INLIER_COLOR",
    "OUTLIER_COLOR",
    "solver_colors",
]

#: Colours of kinhec's thirteen solvers (twelve on poses, ``reprojection`` on pixels); no two alike.
SOLVER_COLORS = {
    "tsai_lenz": "#1f77b4",
    "park_martin": "#ff7f0e",
    "horaud_dornaika": "#2ca02c",
    "daniilidis": "#d62728",
    "andreff": "#9467bd",
    "andreff_scale": "#c5b0d5",
    "park_martin+lm": "#8c564b",
    "ransac_park_martin": "#e377c2",
    "shah": "#7f7f7f",
    "li_kronecker": "#bcbd22",
    "shah+lm": "#17becf",
    "he_ml": "#000000",
    "reprojection": "#ff9896",
}

#: Colours of other solvers (plug-ins), in the order they are met; none is a colour of :data:`SOLVER_COLORS`.
EXTRA_COLORS = ("#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354")

#: Colours of the tracks (dataset overview).
TRACK_COLORS = {
    "noise": "#4c72b0",
    "motion": "#dd8452",
    "temporal": "#55a868",
    "outliers": "#c44e52",
    "monocular": "#8172b3",
    "robot_error": "#937860",
    "pnp": "#da8bc3",
    "mixed": "#8c8c8c",
}

#: Colours of the two configurations.
CONFIG_COLORS = {"eye_in_hand": "#4c72b0", "eye_to_hand": "#dd8452"}

#: Colours of the x, y, z components (and of frame axes): red, green, blue.
XYZ_COLORS = ("#d62728", "#2ca02c", "#1f77b4")

#: Ground truth and measurement.
GT_COLOR = "#222222"
MEAS_COLOR = "#e4572e"

#: Inlying and outlying pairs of a calibration.
INLIER_COLOR = "#4c72b0"
OUTLIER_COLOR = "#c44e52"


def solver_colors(names) -> dict[str, str]:
    """Colour of every solver name: the fixed palette for kinhec's solvers, :data:`EXTRA_COLORS` for others.

    Parameters
    ----------
    names : iterable of str
        Solver names, in the order the others (plug-ins) get their colours.

    Returns
    -------
    dict
        ``{name: "#rrggbb"}``; a kinhec solver's colour does not depend on which other solvers are listed.
    """
    out, k = {}, 0
    for n in names:
        if n in SOLVER_COLORS:
            out[n] = SOLVER_COLORS[n]
        else:
            out[n] = EXTRA_COLORS[k % len(EXTRA_COLORS)]
            k += 1
    return out
