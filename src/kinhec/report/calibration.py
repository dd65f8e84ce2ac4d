"""The calibration page: :func:`write_calibration_report` from a calibration result dict.

The dict follows the calibration result contract (what ``kinhec calibrate
--json`` writes, ``CalibrationResult.to_dict()``): ``X`` (4x4, metres) and
``X_std`` (rotation-vector std [rad] then translation std [m]), optional
``Y``/``Y_std``, ``time_offset_s``/``time_offset_std_s`` (camera stamp =
robot time + offset), ``scale``/``scale_std``, ``n_pairs``, ``outliers``,
``observability``, ``warnings``, ``verdict``, ``residuals`` (one entry per
pair) and ``offset_curve``; ``notes``, ``init_solver``, ``inputs``, ``held_out``
(the eye poses, or a corner calibration's pixels) and ``point_error`` are shown
when present.  Other keys are ignored.  The observability section is built by
:mod:`kinhec.report.observability`.
"""

from __future__ import annotations

import html
import math
from pathlib import Path

import numpy as np

from kinhec import __version__
from kinhec.geometry import se3
from kinhec.util import palette
from kinhec.util.errors import InputError
from kinhec.report.figures import axis_spec, base_layout
from kinhec.report.observability import observability_figure, observability_table, verdict_explanation
from kinhec.report.page import render_page, write_page

__all__ = ["REQUIRED_KEYS", "check_calibration_result", "write_calibration_report"]

#: Keys a calibration result must have for the page.
REQUIRED_KEYS = ("setup", "X", "X_name", "X_std", "n_pairs", "outliers", "observability", "warnings", "verdict",
                 "residuals")  # fmt: skip

_RESIDUAL_KEYS = ("t_s", "rot_deg", "trans_mm", "outlier")


def _matrix(v, name: str) -> np.ndarray:
    try:
        T = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"result[{name!r}]: expected a 4x4 matrix of numbers, got {type(v).__name__}") from None
    if T.shape != (4, 4) or not np.isfinite(T).all():
        raise InputError(f"result[{name!r}]: expected a finite 4x4 matrix, got shape {T.shape}")
    return T


def check_calibration_result(result) -> dict:
    """Raise unless ``result`` holds what the calibration page draws; returns it.

    Raises
    ------
    InputError
        Not a dict, a required key missing (:data:`REQUIRED_KEYS`), a pose that is not a finite 4x4
        matrix, a ``*_std`` that is not 6 numbers, or residual lists of different lengths; the message
        names the key.
    """
    if not isinstance(result, dict):
        raise InputError(f"result: expected the calibration result dict (CalibrationResult.to_dict()), got {type(result).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in result]
    if missing:
        raise InputError(f"result: expected the calibration result keys {list(REQUIRED_KEYS)}, missing {missing}")
    _matrix(result["X"], "X")
    if result.get("Y") is not None:
        _matrix(result["Y"], "Y")
    for key in ("X_std", "Y_std"):
        v = result.get(key)
        if v is None and key == "Y_std":
            continue
        if not isinstance(v, (list, tuple)) or len(v) != 6:
            raise InputError(f"result[{key!r}]: expected 6 numbers (rx, ry, rz [rad], tx, ty, tz [m]), got {v!r:.80}")
    res = result["residuals"]
    if not isinstance(res, dict) or any(k not in res for k in _RESIDUAL_KEYS):
        raise InputError(f"result['residuals']: expected a dict with the lists {list(_RESIDUAL_KEYS)}, got {res!r:.80}")
    lengths = {k: len(res[k]) for k in _RESIDUAL_KEYS}
    if len(set(lengths.values())) != 1:
        raise InputError(f"result['residuals']: expected lists of one length (one entry per pair), got {lengths}")
    curve = result.get("offset_curve")
    if curve is not None and (not isinstance(curve, dict) or len(curve.get("offset_s", [])) != len(curve.get("cost", [None]))):
        raise InputError("result['offset_curve']: expected {'offset_s': [...], 'cost': [...]} of one length, or null")
    return result


def _num(v) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def _fmt(v, digits: int = 4) -> str:
    f = _num(v)
    if not math.isfinite(f):
        return "–"
    return f"{f:.{digits}g}"


def _pose_rows(name: str, T: np.ndarray, std) -> list[tuple[str, str, str]]:
    """Table rows (quantity, value, 1-sigma) of a pose: translation [mm], rotation vector and quaternion."""
    has_std = std is not None
    std = [math.nan] * 6 if std is None else [_num(s) for s in std]
    rv = se3.so3_log(T[:3, :3])
    q = se3.quaternion_from_matrix(T[:3, :3])  # w, x, y, z
    rows = [(f"{name} translation [mm]", ", ".join(_fmt(1e3 * v, 5) for v in T[:3, 3]),
             "± " + ", ".join(_fmt(1e3 * s, 2) for s in std[3:]) if has_std else "not estimated")]  # fmt: skip
    if rv is not None:
        rows.append((f"{name} rotation vector [deg]", ", ".join(_fmt(np.degrees(v), 5) for v in rv),
                     "± " + ", ".join(_fmt(np.degrees(s), 2) for s in std[:3]) if has_std else "not estimated"))  # fmt: skip
    rows.append((f"{name} quaternion (x, y, z, w)", ", ".join(_fmt(v, 6) for v in (q[1], q[2], q[3], q[0])), ""))
    return rows


def _table(rows, cls: str = "data kv") -> str:
    body = "".join(
        "<tr>" + "".join(f'<td class="text">{html.escape(str(c))}</td>' for c in r) + "</tr>" for r in rows
    )
    return f'<table class="{cls}"><thead><tr><th class="text">quantity</th><th class="text">value</th>' \
           f'<th class="text">1 sigma</th></tr></thead><tbody>{body}</tbody></table>'  # fmt: skip


def _time_axis(result: dict) -> tuple[list[float], str, str]:
    """x values, axis title and kind (``"t"`` or ``"pair"``) of the residual figure.

    A recording with time stamps is drawn against the seconds since its first pair.  One without (RWHE,
    Tabb, corner files: paired by order) has no clock offset (``time_offset_s`` None) and ``t_s`` is the
    pair index 0, 1, 2, ...: it is drawn against the pair index, and the axis says so.
    """
    t = [_num(v) for v in result["residuals"]["t_s"]]
    if result.get("time_offset_s") is None and t == [float(i) for i in range(len(t))]:
        return t, "pair (recording order; the files have no time stamps)", "pair"
    t0 = next((v for v in t if math.isfinite(v)), 0.0)
    return [v - t0 for v in t], "time since the first pair [s]", "t"


def _short(v: float, digits: int) -> float | None:
    """``v`` to ``digits`` significant digits for a figure (None when not finite): a figure shows three or four,
    and the page stays small (17 digits per number would double a long recording's figure data)."""
    return float(f"{v:.{digits}g}") if math.isfinite(v) else None


def _residual_figure(result: dict) -> dict:
    res = result["residuals"]
    x, x_title, x_name = _time_axis(result)
    x = [round(v, 4) if math.isfinite(v) else None for v in x]  # seconds to 0.1 ms (hover shows ms); pair index
    out = [bool(v) for v in res["outlier"]]
    x_hover = "t = %{x:.3f} s" if x_name == "t" else "pair %{x}"
    data = []
    for axis, key, unit in (("", "rot_deg", "deg"), ("2", "trans_mm", "mm")):
        vals = [_num(v) for v in res[key]]
        for flag, name, color, symbol in ((False, "inlier", palette.INLIER_COLOR, "circle"), (True, "outlier", palette.OUTLIER_COLOR, "x")):
            idx = [i for i, o in enumerate(out) if o == flag]
            if not idx:
                continue
            data.append({"type": "scatter", "mode": "markers", "name": name, "legendgroup": name,
                         "showlegend": axis == "", "x": [x[i] for i in idx],
                         "y": [_short(vals[i], 5) for i in idx],
                         "marker": {"color": color, "symbol": symbol, "size": 6 if flag else 5},
                         "xaxis": "x" + axis, "yaxis": "y" + axis,
                         "hovertemplate": f"pair %{{customdata}}<br>{x_hover}<br>%{{y:.3g}} {unit}<extra>{name}</extra>",
                         "customdata": idx})  # fmt: skip
    layout = base_layout(
        title={"text": "Residuals of the pairs " + ("over time" if x_name == "t" else "in recording order")
                       + " (outliers marked)", "font": {"size": 14}},  # fmt: skip
        xaxis=axis_spec(x_title, anchor="y"), yaxis=axis_spec("rotation residual [deg]", domain=[0.56, 1.0]),
        xaxis2=axis_spec(x_title, anchor="y2"), yaxis2=axis_spec("translation residual [mm]", domain=[0.0, 0.44]),
        height=520, legend={"orientation": "h", "y": 1.08, "x": 1, "xanchor": "right"},
    )
    return {"data": data, "layout": layout}


def _offset_figure(curve: dict, offset, std) -> dict:
    x = [_short(1e3 * _num(v), 7) for v in curve["offset_s"]]  # ms
    y = [_short(_num(v), 6) for v in curve["cost"]]
    data = [{"type": "scatter", "mode": "lines", "name": "cost", "x": x, "y": y,
             "line": {"color": "#0072b2", "width": 2}}]  # fmt: skip
    shapes = []
    off = _num(offset)
    if math.isfinite(off):
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": 1e3 * off, "x1": 1e3 * off, "y0": 0, "y1": 1,
                       "line": {"color": "#b00020", "dash": "dash"}})  # fmt: skip
        s = _num(std)
        if math.isfinite(s) and s > 0:
            shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": 1e3 * (off - s), "x1": 1e3 * (off + s),
                           "y0": 0, "y1": 1, "fillcolor": "rgba(176,0,32,0.12)", "line": {"width": 0}})  # fmt: skip
    layout = base_layout(
        title={"text": "Clock-offset search: cost against the trial offset (estimate dashed, band = 1 sigma)",
               "font": {"size": 14}},  # fmt: skip
        xaxis=axis_spec("clock offset (camera stamp - robot time) [ms]"),
        yaxis=axis_spec("cost: mean truncated squared residual"), shapes=shapes, height=380,
        showlegend=False,
    )
    return {"data": data, "layout": layout}


_VIEWS = (("top view", 0, 1), ("front view", 0, 2), ("side view", 1, 2))


def _frame_figure(result: dict) -> dict:
    """The estimated X in three orthographic views: the parent frame at the origin, the child frame at X.

    Drawn with 2D scatter traces, three fixed views: top (x, y), front (x, z) and side (y, z) of the parent
    frame, equal scales, axes x red, y green, z blue.
    """
    X = _matrix(result["X"], "X")
    name = str(result.get("X_name") or "X")
    parts = name.split("_")
    parent, child = (parts[1], "_".join(parts[2:])) if len(parts) >= 3 else ("parent", "child")
    L = max(0.3 * float(np.linalg.norm(X[:3, 3])), 0.02)
    data, layout_axes = [], {}
    names = "xyz"
    for v, (title, i, j) in enumerate(_VIEWS):
        xa, ya = ("x", "y") if v == 0 else (f"x{v + 1}", f"y{v + 1}")
        for frame, T, width in ((parent, np.eye(4), 5), (child, X, 3)):
            for a in range(3):
                p0, p1 = T[:3, 3], T[:3, 3] + L * T[:3, a]
                data.append({"type": "scatter", "mode": "lines", "x": [p0[i], p1[i]], "y": [p0[j], p1[j]],
                             "line": {"color": palette.XYZ_COLORS[a], "width": width}, "showlegend": False,
                             "xaxis": xa, "yaxis": ya, "hovertemplate": f"{frame} {names[a]} axis<extra></extra>"})  # fmt: skip
            data.append({"type": "scatter", "mode": "markers+text", "x": [T[i, 3]], "y": [T[j, 3]], "text": [frame],
                         "textposition": "bottom center", "marker": {"size": 6, "color": "#333"}, "showlegend": False,
                         "xaxis": xa, "yaxis": ya, "hovertemplate": f"{frame} origin<extra></extra>"})  # fmt: skip
        lo, hi = v / 3 + 0.04, (v + 1) / 3 - 0.04
        layout_axes[f"xaxis{v + 1 if v else ''}"] = axis_spec(f"{names[i]} [m]", domain=[lo, hi], anchor=ya)
        layout_axes[f"yaxis{v + 1 if v else ''}"] = axis_spec(f"{names[j]} [m]", anchor=xa, scaleanchor=xa, scaleratio=1)
    annotations = [{"text": f"<b>{t}</b> ({names[i]}, {names[j]})", "x": (v + 0.5) / 3, "y": 1.02, "xref": "paper",
                    "yref": "paper", "showarrow": False, "xanchor": "center", "yanchor": "bottom"}
                   for v, (t, i, j) in enumerate(_VIEWS)]  # fmt: skip
    layout = base_layout(
        title={"text": f"{name}: the {child} frame in the {parent} frame (axes x red, y green, z blue) [m]",
               "font": {"size": 14}},  # fmt: skip
        annotations=annotations, height=360, margin={"l": 50, "r": 20, "t": 70, "b": 50}, **layout_axes,
    )
    return {"data": data, "layout": layout}


_BODY = """
<header>
  <h1>{title}</h1>
  <p>{subtitle}</p>
  <nav><button data-view="calibration">Calibration</button></nav>
</header>
<main>
<section class="view" id="view-calibration">
  <h2>Verdict</h2>
  <p class="verdict{verdict_cls}" id="verdict">{verdict}</p>
  <p class="note" id="verdict-why">{verdict_why}</p>
  {warnings}
  <h2>Result</h2>
  {result_table}
  {notes}
  <h2>Residuals</h2>
  <p class="note">{residual_note}</p>
  <div id="fig-residuals" class="plot"></div>
  {offset_block}
  <h2>Observability</h2>
  <p class="note">Whether the recorded motion determines X. The <b>limits</b> decide the verdict: X is determined
  when every limit holds. The <b>references</b> are good practice for a precise calibration: a value short of its
  reference (orange) leaves X determined but less precise, which its 1-sigma values show.</p>
  {obs_table}
  <div id="fig-observability" class="plot"></div>
  <h2>Estimated transform</h2>
  <div id="fig-frames" class="plot"></div>
  {rig_block}
</section>
</main>
"""


def write_calibration_report(result: dict, out) -> Path:
    """Write the self-contained HTML page of one calibration result.

    Parameters
    ----------
    result : dict
        The calibration result (``CalibrationResult.to_dict()``, the JSON of ``kinhec calibrate --json``);
        see the module docstring for the keys drawn.
    out : str or Path
        HTML file to write (its folder must exist).

    Returns
    -------
    Path
        The page: verdict in words with the limits it rests on, the warnings, the estimate with its 1-sigma
        uncertainty, the residuals over time (seconds since the first pair; the pair index for recordings
        without time stamps) with the outliers marked, the clock-offset curve (when the offset was
        estimated), each observability quantity with its unit, limit and reference, and the estimated
        transform in three views.  It works offline and embeds the plotly package's plotly.js, packed
        (:mod:`kinhec.report.page`; the page is about 1.5 MB).

    Raises
    ------
    InputError
        ``result`` does not follow the contract (:func:`check_calibration_result`), or ``out`` is a
        folder / its folder does not exist.
    """
    r = check_calibration_result(result)
    X = _matrix(r["X"], "X")
    rows = _pose_rows(str(r["X_name"]), X, r["X_std"])
    if r.get("Y") is not None:
        rows += _pose_rows(str(r.get("Y_name") or "Y"), _matrix(r["Y"], "Y"), r.get("Y_std"))
    if r.get("time_offset_s") is not None:
        rows.append(("clock offset (camera stamp - robot time) [ms]", _fmt(1e3 * _num(r["time_offset_s"]), 5),
                     "± " + _fmt(1e3 * _num(r.get("time_offset_std_s")), 2)))  # fmt: skip
    if r.get("scale") is not None:
        rows.append(("scale of the camera translations", _fmt(r["scale"], 6), "± " + _fmt(r.get("scale_std"), 2)))
    n_out = len(r["outliers"])
    rows.append(("pairs used / outliers", f"{int(r['n_pairs'])} / {n_out}", ""))
    if r.get("init_solver"):
        rows.append(("initial estimate from", str(r["init_solver"]), ""))
    h = r.get("held_out")
    if isinstance(h, dict) and h.get("rms_mm") is not None:  # kinhec.calibrate.held_out
        a, b = h.get("predicted_interval95_mm") or (np.nan, np.nan)
        left = "views" if "rms_px" in h else "stations"
        rows.append((f"held-out eye poses, RMS [mm / deg] ({int(h['n'])} {left} left out in turn)",
                     f"{_fmt(h['rms_mm'], 3)} / {_fmt(h['rms_deg'], 3)}",
                     f"sigma predicts {_fmt(h['predicted_rms_mm'], 3)} / {_fmt(h['predicted_rms_deg'], 3)} "
                     f"(95 %: {_fmt(a, 3)}-{_fmt(b, 3)} mm); {100 * _num(h['coverage95']):.0f} % inside their 95 % regions"))
    if isinstance(h, dict) and h.get("rms_px") is not None:  # kinhec.calibrate.held_out_pixels
        a, b = h.get("predicted_interval95_px") or (np.nan, np.nan)
        rows.append((f"held-out views, RMS of their corners [px] ({int(h['n'])} views left out in turn)",
                     _fmt(h["rms_px"], 3),
                     f"sigma predicts {_fmt(h['predicted_rms_px'], 3)} (95 %: {_fmt(a, 3)}-{_fmt(b, 3)} px); "
                     f"{100 * _num(h['coverage95_px']):.0f} % of the views inside their 95 % regions"))
    pe = r.get("point_error")
    if isinstance(pe, dict) and pe.get("point_error_95_mm") is not None:
        p = ", ".join(_fmt(v, 3) for v in pe["point_cam_m"])
        rows.append((f"work point ({p}) m in the camera: 95 % error in the robot base [mm]",
                     _fmt(pe["point_error_95_mm"], 3), ""))

    obs = r["observability"] if isinstance(r["observability"], dict) else {}
    figures = {"fig-residuals": _residual_figure(r), "fig-frames": _frame_figure(r)}
    ofig = observability_figure(obs)
    if ofig is not None:
        figures["fig-observability"] = ofig
    offset_block = ""
    if r.get("offset_curve"):
        figures["fig-offset"] = _offset_figure(r["offset_curve"], r.get("time_offset_s"), r.get("time_offset_std_s"))
        offset_block = '<h2>Clock offset</h2><div id="fig-offset" class="plot"></div>'

    rig_block = ""
    rig = r.get("rig")
    if isinstance(rig, dict) and rig.get("cam_T_cam"):
        rrows = []
        for k, T in rig["cam_T_cam"].items():
            rrows += _pose_rows(k, _matrix(T, f"rig.cam_T_cam.{k}"), (rig.get("cam_T_cam_std") or {}).get(k))
        rig_block = "<h2>Camera rig</h2>" + _table(rrows)

    warnings = r["warnings"] or []
    warn_html = ("<ul class=\"warnings\">" + "".join(f"<li>{html.escape(str(w))}</li>" for w in warnings) + "</ul>"
                 if warnings else "")  # fmt: skip
    notes = r.get("notes") or []
    notes_html = ('<h3>How it was computed</h3><ul class="notes">'
                  + "".join(f"<li>{html.escape(str(n))}</li>" for n in notes) + "</ul>" if notes else "")  # fmt: skip
    determined = bool(obs.get("determined", True))
    inputs = r.get("inputs") or {}
    subtitle = (f"setup {r['setup']}; {int(r['n_pairs'])} pairs"
                + (f"; hand {inputs.get('hand')}" if inputs.get("hand") else "")
                + f"; page written by kinhec {__version__} (result from kinhec {r.get('kinhec_version', '?')})")  # fmt: skip
    res_t = r["residuals"]["t_s"]
    stamped = _time_axis(r)[2] == "t"
    residual_note = (f"One point per pair ({len(res_t)}): the rotation and translation residual of "
                     f"A_i X = Y B_i (or of A X = X B for the motions) at the estimate; "
                     f"{n_out} pair{'s' if n_out != 1 else ''} flagged as outliers (red crosses). "
                     + ("Time runs from the first pair." if stamped else
                        "The files have no time stamps: the pairs are in recording order."))  # fmt: skip
    body = _BODY.format(
        title=html.escape(f"kinhec calibration report: {r['X_name']}"),
        subtitle=html.escape(subtitle),
        verdict=html.escape(str(r["verdict"])),
        verdict_why=html.escape(verdict_explanation(obs)),
        verdict_cls="" if determined and not warnings else " bad",
        warnings=warn_html,
        result_table=_table(rows),
        notes=notes_html,
        residual_note=html.escape(residual_note),
        offset_block=offset_block,
        obs_table=observability_table(obs) if obs else "",
        rig_block=rig_block,
    )
    page = render_page(f"kinhec calibration: {r['X_name']}", body, {"figures": figures}, "calibration.js")
    return write_page(page, out)
