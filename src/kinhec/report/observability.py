"""The observability section of the calibration page: each quantity with its unit, its limit and its reference.

A calibration result's ``observability`` dict (:func:`kinhec.calibrate.observability.observability`) holds
raw numbers.  The page states for each one what it measures, the *limit* that decides whether ``X`` is
determined at all (the verdict) and a *reference* of good practice for a precise calibration: a quantity can
fall short of its reference (orange) while ``X`` stays determined, which then shows in its standard
deviations; only a failed limit (red) makes ``X`` undetermined.  :func:`observability_rows` gives the rows,
:func:`observability_table` and :func:`verdict_explanation` the HTML, :func:`observability_figure` the bars.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from kinhec.calibrate import observability as obs_mod
from kinhec.report.figures import axis_spec, base_layout

__all__ = ["Quantity", "QUANTITIES", "observability_rows", "observability_table", "observability_figure",
           "verdict_explanation", "format_value"]  # fmt: skip

#: Status of a quantity, its colour on the page.
MEETS, SHORT, FAILS, INFO = "meets", "short", "fails", "info"
STATUS_COLORS = {MEETS: "#2ca02c", SHORT: "#ff7f0e", FAILS: "#d62728", INFO: "#7f7f7f"}
_STATUS_TEXT = {
    MEETS: "meets the reference",
    SHORT: "short of the reference; X is still determined, less precisely",
    FAILS: "fails the limit: X is not determined",
    INFO: "",
}


@dataclass(frozen=True)
class Quantity:
    """One observability quantity: where it is in the dict, how it is shown and judged.

    ``limit_key`` names its entry in the result's ``observability["limits"]`` (the limit of the verdict);
    ``reference`` is the good-practice value; ``larger`` says which side is better.
    """

    key: str
    label: str
    unit: str
    factor: float
    limit_key: str | None
    default_limit: float | None
    reference: float | None
    larger: bool
    meaning: str


#: The judged quantities, in page order.
QUANTITIES = (
    Quantity("lambda2", "rotation-axis spread (lambda2)", "", 1.0, "lambda2", obs_mod.MIN_LAMBDA2, 0.1, True,
             "second eigenvalue of the scatter of the hand's rotation axes: 0 when the hand turns about one axis "
             "only (then the rotation of X about it and its translation along it are unknown), 1/3 for axes spread "
             "evenly; well-excited benchmark sequences lie at 0.15-0.3"),
    Quantity("rot_range_deg", "rotation range", "deg", 1.0, "rot_range_deg", obs_mod.MIN_ROT_RANGE_DEG, 30.0, True,
             "largest rotation between two hand poses: larger rotations make the rotation of X more precise"),
    Quantity("trans_range_m", "translation range", "m", 1.0, None, None, 0.1, True,
             "largest distance between two hand poses"),
    Quantity("X_std_max_deg", "largest 1-sigma of the rotation of X", "deg", 1.0, "X_std_deg", obs_mod.MAX_X_STD_DEG,
             None, False, "from the covariance of the estimate"),
    Quantity("X_std_max_mm", "largest 1-sigma of the translation of X", "mm", 1.0, "X_std_mm",
             1000 * obs_mod.MAX_X_STD_M, None, False, "from the covariance of the estimate"),
    Quantity("condition", "condition number of the correlation of the unknowns", "", 1.0, None, None, 100.0, False,
             "large when estimated unknowns trade off against each other (often the rotation and the translation "
             "of Y when the target is far from the robot base); the standard deviations above include that "
             "trade-off, so it does not decide the verdict"),
)  # fmt: skip


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def format_value(v, digits: int = 3) -> str:
    """A number with ``digits`` significant digits (no 16-digit floats), a list as comma-separated numbers."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (list, tuple)):
        return ", ".join(format_value(x, digits) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{k} {format_value(x, digits)}" for k, x in v.items())
    f = _num(v)
    if not math.isfinite(f):
        return "–" if v is None or isinstance(v, (int, float)) else str(v)
    if f != 0 and (abs(f) >= 1e5 or abs(f) < 1e-4):
        return f"{f:.{max(digits - 1, 0)}e}"
    return f"{f:.{digits}g}"


def _with_unit(v: float, unit: str) -> str:
    return format_value(v) + (f" {unit}" if unit else "")


def observability_rows(obs: dict) -> list[dict]:
    """One row per judged quantity present in ``obs``.

    Returns
    -------
    list of dict
        ``key``, ``label``, ``unit``, ``value`` (float), ``limit`` and ``reference`` (float or None),
        ``larger`` (bool), ``status`` (``"meets"``, ``"short"``, ``"fails"``), ``status_text``, ``meaning``,
        ``ratio`` (value over reference, inverted when smaller is better; None without a reference).
    """
    limits = obs.get("limits") if isinstance(obs.get("limits"), dict) else {}
    rows = []
    for q in QUANTITIES:
        v = _num(obs.get(q.key)) * q.factor
        if not math.isfinite(v):
            continue
        limit = _num(limits.get(q.limit_key)) if q.limit_key and q.limit_key in limits else q.default_limit
        ok_limit = limit is None or (v >= limit if q.larger else v <= limit)
        ok_ref = q.reference is None or (v >= q.reference if q.larger else v <= q.reference)
        status = FAILS if not ok_limit else (MEETS if ok_ref else SHORT)
        ratio = None
        if q.reference is not None:
            ratio = v / q.reference if q.larger else (q.reference / v if v > 0 else math.inf)
        text = _STATUS_TEXT[status]
        if q.key == "condition" and status == SHORT:
            text = "above the reference: some unknowns trade off (see their 1-sigma); informational, not part of the verdict"
        elif q.key == "condition":
            text = "below the reference; informational, not part of the verdict"
        elif q.reference is None and status == MEETS:
            text = "within the limit"
        rows.append({"key": q.key, "label": q.label, "unit": q.unit, "value": v, "limit": limit,
                     "reference": q.reference, "larger": q.larger, "status": status, "status_text": text,
                     "meaning": q.meaning, "ratio": ratio})  # fmt: skip
    return rows


def _bound(v, larger: bool, unit: str) -> str:
    if v is None:
        return "–"
    return ("≥ " if larger else "≤ ") + _with_unit(v, unit)


def observability_table(obs: dict) -> str:
    """HTML: the judged quantities, then the noise model the covariance comes from, then any other entry."""
    rows = observability_rows(obs)
    body = []
    for r in rows:
        body.append(
            f'<tr data-key="{html.escape(r["key"])}"><td class="text">{html.escape(r["label"])}</td>'
            f'<td>{html.escape(_with_unit(r["value"], r["unit"]))}</td>'
            f'<td>{html.escape(_bound(r["limit"], r["larger"], r["unit"]))}</td>'
            f'<td>{html.escape(_bound(r["reference"], r["larger"], r["unit"]))}</td>'
            f'<td class="text wrap status-{r["status"]}">{html.escape(r["status_text"])}</td>'
            f'<td class="text wrap wide">{html.escape(r["meaning"])}</td></tr>'
        )
    extra = []
    n_in = obs.get("n_inliers")
    if n_in is not None:
        extra.append(("pairs used (inliers)", format_value(n_in), "the pairs the estimate and its covariance rest on"))
    rs = obs.get("residual_std_rad_m")
    if isinstance(rs, (list, tuple)) and len(rs) == 6:
        extra.append(("residual spread, rotation x, y, z [deg]", format_value([math.degrees(_num(x)) for x in rs[:3]]),
                      "standard deviation of the pairs' residuals about each axis: the noise the covariance assumes"))  # fmt: skip
        extra.append(("residual spread, translation x, y, z [mm]", format_value([1000 * _num(x) for x in rs[3:]]),
                      "the same along each axis"))
    infl = obs.get("covariance_inflation")
    if infl is not None:
        extra.append(("covariance inflation", format_value(infl),
                      "1 when the residuals of consecutive pairs do not correlate; above 1 they do, and the standard "
                      "deviations were multiplied by its square root"))  # fmt: skip
    known = {q.key for q in QUANTITIES} | {"limits", "determined", "n_inliers", "residual_std_rad_m", "covariance_inflation"}
    for k, v in obs.items():
        if k not in known:
            extra.append((k.replace("_", " "), format_value(v), ""))
    head = ('<thead><tr><th class="text">quantity</th><th>value</th><th>limit for "determined"</th>'
            '<th>reference (good practice)</th><th class="text wrap">status</th><th class="text wrap">what it measures</th>'
            "</tr></thead>")  # fmt: skip
    table = f'<table class="data obs" id="obs-table">{head}<tbody>{"".join(body)}</tbody></table>'
    if extra:
        table += ('<table class="data obs" id="obs-noise"><thead><tr><th class="text">noise model</th><th>value</th>'
                  '<th class="text">what it is</th></tr></thead><tbody>'
                  + "".join(f'<tr><td class="text">{html.escape(a)}</td><td>{html.escape(b)}</td>'
                            f'<td class="text wrap">{html.escape(c)}</td></tr>' for a, b, c in extra)
                  + "</tbody></table>")  # fmt: skip
    return table


def verdict_explanation(obs: dict) -> str:
    """One paragraph (plain text): why the verdict holds or not, in terms of the limits and references."""
    rows = observability_rows(obs)
    failed = [r for r in rows if r["status"] == FAILS]
    short = [r for r in rows if r["status"] == SHORT and r["key"] != "condition"]
    limits = ", ".join(f"{r['label']} {_bound(r['limit'], r['larger'], r['unit'])}" for r in rows if r["limit"] is not None)
    if failed:
        parts = "; ".join(f"{r['label']} {_with_unit(r['value'], r['unit'])} "
                          f"(limit {_bound(r['limit'], r['larger'], r['unit'])})" for r in failed)  # fmt: skip
        return f"Not determined: {parts}. X is determined when every limit holds ({limits})."
    text = f"Determined: every limit holds ({limits})."
    if short:
        text += (" Short of the good-practice reference: "
                 + "; ".join(f"{r['label']} {_with_unit(r['value'], r['unit'])} "
                             f"(reference {_bound(r['reference'], r['larger'], r['unit'])})" for r in short)
                 + ". That makes X less precise, as its 1-sigma values show, not undetermined.")  # fmt: skip
    cond = next((r for r in rows if r["key"] == "condition"), None)
    if cond is not None and cond["status"] == SHORT:
        text += (f" The condition number ({format_value(cond['value'])}, reference ≤ 100) is informational: "
                 "large values mean some unknowns trade off, which their standard deviations already include.")
    return text


def observability_figure(obs: dict) -> dict | None:
    """Bars of value / reference (inverted when smaller is better), coloured by status; None without data."""
    rows = [r for r in observability_rows(obs) if r["ratio"] is not None]
    if not rows:
        return None
    names = [r["label"] for r in rows]
    ratios = [min(r["ratio"], 10.0) for r in rows]
    texts = [f"{_with_unit(r['value'], r['unit'])} (reference {_bound(r['reference'], r['larger'], r['unit'])}"
             + (f", limit {_bound(r['limit'], r['larger'], r['unit'])})" if r["limit"] is not None else ")")
             for r in rows]  # fmt: skip
    colors = [STATUS_COLORS[r["status"]] for r in rows]
    data = [{"type": "bar", "orientation": "h", "y": names, "x": ratios, "text": texts, "textposition": "auto",
             "marker": {"color": colors}, "hovertemplate": "%{y}: %{text}<extra></extra>"}]  # fmt: skip
    layout = base_layout(
        title={"text": "Motion against good-practice references (1 = the reference; green meets it, orange is short "
                       "of it with X still determined, red fails a limit)", "font": {"size": 13}},  # fmt: skip
        xaxis=axis_spec("value / reference (inverted where smaller is better; capped at 10)", type="linear",
                        range=[0, max(2.0, max(ratios) * 1.05)]),  # fmt: skip
        yaxis=axis_spec("", autorange="reversed"),
        shapes=[{"type": "line", "x0": 1, "x1": 1, "yref": "paper", "y0": 0, "y1": 1, "line": {"color": "#555", "dash": "dot"}}],
        height=90 + 45 * len(rows), margin={"l": 20, "r": 20, "t": 50, "b": 50},
    )  # fmt: skip
    return {"data": data, "layout": layout}
