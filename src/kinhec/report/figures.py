"""Plotly figure specifications (``{"data": [...], "layout": {...}}``) of the report pages.

The figures are written as the plain JSON that plotly.js draws (the same
structure ``plotly.graph_objects.Figure.to_plotly_json`` produces), without
building ``graph_objects`` first: their validation costs more than the rest
of the page on a large copy.  The per-sequence drill-down is drawn by the page
script from the packed arrays of :mod:`kinhec.report.sequences`.
"""

from __future__ import annotations

import math

from kinhec.util import palette

__all__ = ["SOLVER_COLORS", "CONFIG_COLORS", "solver_colors", "curve_figure", "composition_figures", "base_layout",
           "axis_spec", "log_axis", "tick_label"]  # fmt: skip

#: Colours of the solvers and configurations: :mod:`kinhec.util.palette`, the same as in the PNG figures.
SOLVER_COLORS = palette.SOLVER_COLORS
CONFIG_COLORS = palette.CONFIG_COLORS
solver_colors = palette.solver_colors


def base_layout(**kw) -> dict:
    """Common layout: white background, compact margins, the page's font."""
    layout = {
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "font": {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12},
        "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
    }
    layout.update(kw)
    return layout


def axis_spec(title: str, **kw) -> dict:
    """An axis with a title, a light grid and a line; ``kw`` adds or overrides plotly axis keys."""
    return {"title": {"text": title}, "gridcolor": "#e5e5e5", "zeroline": False, "showline": True,
            "linecolor": "#888", "automargin": True, **kw}  # fmt: skip


def tick_label(x: float) -> str:
    """The label of a tick: the whole number (``0.05``, ``2``, ``300``, ``2e-05``), never a bare mantissa."""
    if x == 0 or not math.isfinite(x):
        return str(x)
    if 1e-4 <= abs(x) < 1e5:
        return f"{x:.4g}"
    mant, _, exp = f"{x:.0e}".partition("e")
    return f"{mant}e{int(exp)}"


def log_axis(title: str, values, **kw) -> dict:
    """A log axis whose ticks are labelled with whole numbers at 1, 2 and 5 times the powers of ten.

    plotly.js labels the minor ticks of a short log axis with their first digit only ("5, 2" for 0.5 and
    0.05); explicit tick values and texts avoid that.  Up to three decades get 1-2-5 ticks, up to eight
    decades 1-ticks, more every other power of ten.

    Parameters
    ----------
    title : str
        Axis title.
    values : iterable of float or None
        Every value drawn on the axis (medians and error-bar ends); non-positive and missing ones are ignored.
    """
    v = [float(x) for x in values if x is not None and isinstance(x, (int, float)) and math.isfinite(x) and x > 0]
    if not v:
        return axis_spec(title, type="log", **kw)
    a, b = math.log10(min(v)), math.log10(max(v))
    pad = max(0.06 * (b - a), 0.08)
    lo, hi = a - pad, b + pad
    span = hi - lo
    mants = (1.0, 2.0, 5.0) if span < 3.2 else (1.0,)
    step = 1 if span <= 8.5 else 2
    ticks = [m * 10.0**e for e in range(math.floor(lo), math.ceil(hi) + 1, step) for m in mants
             if lo <= math.log10(m * 10.0**e) <= hi]  # fmt: skip
    if len(ticks) < 2:  # less than a 1-2-5 step inside the range: widen it to the neighbouring ticks
        below = [m * 10.0**e for e in range(math.floor(lo) - 1, math.floor(lo) + 1) for m in (1.0, 2.0, 5.0)]
        above = [m * 10.0**e for e in range(math.ceil(hi) - 1, math.ceil(hi) + 1) for m in (1.0, 2.0, 5.0)]
        t_lo = max(t for t in below if math.log10(t) <= a)
        t_hi = min(t for t in above if math.log10(t) >= b)
        ticks = sorted({t_lo, t_hi, *ticks})
        lo, hi = min(lo, math.log10(t_lo) - 0.02), max(hi, math.log10(t_hi) + 0.02)
    return axis_spec(title, type="log", range=[lo, hi], tickmode="array", tickvals=ticks,
                     ticktext=[tick_label(t) for t in ticks], **kw)  # fmt: skip


def _band(med, q1, q3):
    plus = [None if m is None or q is None else max(q - m, 0.0) for m, q in zip(med, q3)]
    minus = [None if m is None or q is None else max(m - q, 0.0) for m, q in zip(med, q1)]
    return {"type": "data", "array": plus, "arrayminus": minus, "thickness": 1, "width": 3}


def curve_figure(track: str, curve: dict, colors: dict[str, str]) -> dict:
    """Robustness curve of one factor: median X rotation and translation error per level, one trace per solver.

    Parameters
    ----------
    track : str
        The track swept.
    curve : dict
        One entry of :func:`kinhec.report.data.robustness_curves` (levels, per-solver medians and quartiles).
    colors : dict
        Solver -> colour.

    Returns
    -------
    dict
        Plotly figure; every trace carries ``legendgroup`` = the solver name, which the page uses to
        show the selected solvers only.  Error bars span the interquartile range.
    """
    data = []
    x = curve["ticks"] if curve["categorical"] else curve["x"]
    for solver, d in curve["solvers"].items():
        for axis, key in (("", "rot"), ("2", "trans")):
            data.append({
                "type": "scatter", "mode": "lines+markers", "name": solver, "legendgroup": solver,
                "showlegend": axis == "", "x": x, "y": d[key], "xaxis": "x" + axis, "yaxis": "y" + axis,
                "line": {"color": colors.get(solver, "#444"), "width": 2}, "marker": {"size": 6},
                "error_y": _band(d[key], d[key + "_q1"], d[key + "_q3"]),
                "customdata": d["n"],
                "hovertemplate": f"{solver}<br>%{{x}}<br>%{{y:.3g}} {'deg' if key == 'rot' else 'mm'}"
                                 "<br>%{customdata} sequences<extra></extra>",
            })  # fmt: skip
    values = {key: [v for d in curve["solvers"].values() for k in (key, key + "_q1", key + "_q3") for v in d[k]]
              for key in ("rot", "trans")}  # fmt: skip
    if curve["categorical"]:
        # the whole label inside the plot: categories padded by half a step, the details on a second line
        xkw = {"type": "category", "range": [-0.5, len(x) - 0.5], "tickmode": "array", "tickvals": x,
               "ticktext": [t.replace(" (", "<br>(", 1) for t in x]}  # fmt: skip
    else:
        xkw = {"type": "linear"}
    layout = base_layout(
        title={"text": f"<b>{track}</b>: X error vs {curve['label']} "
                       f"({curve['eval_sync']} synchronisation; median, bars = interquartile range)",
               "font": {"size": 14}},  # fmt: skip
        xaxis=axis_spec(curve["label"], domain=[0.0, 0.45], **xkw),
        yaxis=log_axis("X rotation error [deg]", values["rot"]),
        xaxis2=axis_spec(curve["label"], domain=[0.55, 1.0], **xkw),
        yaxis2=log_axis("X translation error [mm]", values["trans"], anchor="x2"),
        legend={"orientation": "h", "y": -0.28},
        height=500,
        margin={"l": 60, "r": 30, "t": 60, "b": 120},
    )
    return {"data": data, "layout": layout}


def composition_figures(comp: dict) -> list[dict]:
    """Composition bars (stacked by configuration) and descriptor histograms of the index.

    Parameters
    ----------
    comp : dict
        :func:`kinhec.report.data.composition`.

    Returns
    -------
    list of dict
        One plotly figure per composition column, then one per descriptor.
    """
    figs = []
    for col, c in comp["counts"].items():
        data = [{"type": "bar", "name": cfg.replace("_", "-"), "x": c["categories"], "y": counts,
                 "marker": {"color": CONFIG_COLORS.get(cfg, "#888")}, "legendgroup": cfg}
                for cfg, counts in c["by_config"].items()]  # fmt: skip
        figs.append({"data": data, "layout": base_layout(
            title={"text": f"sequences per {col.replace('_', ' ')}", "font": {"size": 13}}, barmode="stack",
            xaxis=axis_spec("", tickangle=-30), yaxis=axis_spec("sequences"), height=300,
            legend={"orientation": "h", "y": 1.12, "x": 1, "xanchor": "right"}, margin={"l": 50, "r": 10, "t": 50, "b": 60},
        )})  # fmt: skip
    for d in comp["descriptors"]:
        data = [{"type": "histogram", "name": cfg.replace("_", "-"), "x": vals, "opacity": 0.7, "nbinsx": 30,
                 "marker": {"color": CONFIG_COLORS.get(cfg, "#888")}}
                for cfg, vals in d["values"].items()]  # fmt: skip
        figs.append({"data": data, "layout": base_layout(
            title={"text": d["label"], "font": {"size": 13}}, barmode="overlay",
            xaxis=axis_spec(d["label"]), yaxis=axis_spec("sequences"), height=300, showlegend=False,
            margin={"l": 50, "r": 10, "t": 50, "b": 50},
        )})  # fmt: skip
    return figs
