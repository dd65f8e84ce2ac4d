"""Plotly figure specifications (``{"data": [...], "layout": {...}}``) of the report pages.

The figures are written as the plain JSON that plotly.js draws (the same
structure ``plotly.graph_objects.Figure.to_plotly_json`` produces), without
building ``graph_objects`` first: their validation costs more than the rest
of the page on a large copy.  The per-sequence drill-down is drawn by the page
script from the packed arrays of :mod:`kinhec.report.sequences`.
"""

from __future__ import annotations

__all__ = ["SOLVER_COLORS", "CONFIG_COLORS", "solver_colors", "curve_figure", "composition_figures", "base_layout"]

#: Colour cycle of the solvers (colour-blind safe first eight, then extras).
SOLVER_COLORS = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000",
                 "#8c564b", "#7f7f7f", "#17becf", "#bcbd22")  # fmt: skip

#: Colours of the two configurations.
CONFIG_COLORS = {"eye_in_hand": "#4c72b0", "eye_to_hand": "#dd8452"}


def solver_colors(solvers) -> dict[str, str]:
    """One colour per solver name, in order."""
    return {s: SOLVER_COLORS[i % len(SOLVER_COLORS)] for i, s in enumerate(solvers)}


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


def _axis(title: str, **kw) -> dict:
    return {"title": {"text": title}, "gridcolor": "#e5e5e5", "zeroline": False, "showline": True,
            "linecolor": "#888", **kw}  # fmt: skip


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
    xtype = "category" if curve["categorical"] else "linear"
    layout = base_layout(
        title={"text": f"<b>{track}</b>: X error vs {curve['label']} "
                       f"({curve['eval_sync']} synchronisation; median, bars = interquartile range)",
               "font": {"size": 14}},  # fmt: skip
        xaxis=_axis(curve["label"], domain=[0.0, 0.45], type=xtype),
        yaxis=_axis("X rotation error [deg]", type="log"),
        xaxis2=_axis(curve["label"], domain=[0.55, 1.0], type=xtype),
        yaxis2=_axis("X translation error [mm]", type="log", anchor="x2"),
        legend={"orientation": "h", "y": -0.22},
        height=470,
        margin={"l": 60, "r": 20, "t": 60, "b": 110},
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
            xaxis=_axis("", tickangle=-30, automargin=True), yaxis=_axis("sequences"), height=300,
            legend={"orientation": "h", "y": 1.12, "x": 1, "xanchor": "right"}, margin={"l": 50, "r": 10, "t": 50, "b": 60},
        )})  # fmt: skip
    for d in comp["descriptors"]:
        data = [{"type": "histogram", "name": cfg.replace("_", "-"), "x": vals, "opacity": 0.7, "nbinsx": 30,
                 "marker": {"color": CONFIG_COLORS.get(cfg, "#888")}}
                for cfg, vals in d["values"].items()]  # fmt: skip
        figs.append({"data": data, "layout": base_layout(
            title={"text": d["label"], "font": {"size": 13}}, barmode="overlay",
            xaxis=_axis(d["label"]), yaxis=_axis("sequences"), height=300, showlegend=False,
            margin={"l": 50, "r": 10, "t": 50, "b": 50},
        )})  # fmt: skip
    return figs
