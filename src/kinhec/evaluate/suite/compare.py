"""``suite compare``: kinhec's reference results against another library's on the same observations.

For every entry with ``results/<id>/kinhec.json`` and ``results/<id>/opencv.json``:

* ``largest d/sigma``: the largest difference of an estimated parameter
  between the two results, in units of kinhec's standard deviation (poses:
  the right perturbation ``T_kinhec^-1 T_opencv`` per twist component), and
  which parameter;
* ``X d``: rotation [deg] and translation [mm] between the two hand-eye estimates;
* ``mean px``: each library's mean Euclidean reprojection error through the
  whole chain (intrinsics, X, Y, robot poses as each used them), the same
  definition on both sides (not RMS);
* synthetic entries: each library's largest error against the truth in
  units of kinhec's sigma, and its X error [deg, mm].
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from kinhec.util.errors import DatasetFormatError
from kinhec.evaluate.suite import checks
from kinhec.evaluate.suite.manifest import load_suite
from kinhec.evaluate.suite.opencv import OPENCV_RUNNERS

__all__ = ["compare_rows", "format_table", "run_opencv", "COLUMNS"]

COLUMNS = ("entry", "largest d/sigma", "X d [deg, mm]", "mean px kinhec", "mean px opencv",
           "truth kinhec [sigma]", "truth opencv [sigma]", "X err kinhec [deg, mm]", "X err opencv [deg, mm]")  # fmt: skip


def _read(path: Path):
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(f"{path}: expected JSON, got {exc}") from None


def run_opencv(root, *, only=None, progress=None) -> list[str]:
    """Write ``results/<id>/opencv.json`` for every selected entry OpenCV has a runner for (needs ``cv2``)."""
    suite = load_suite(root)
    done = []
    for e in suite.select(only):
        fn = OPENCV_RUNNERS.get(e.problem)
        if fn is None:
            continue
        doc = fn(suite.root / e.observation_file(), e.config)
        out = suite.root / "results" / e.id / "opencv.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        done.append(e.id)
        if progress is not None:
            progress(e.id)
    return done


def compare_rows(root, *, only=None) -> list[dict]:
    """One dict per entry with the columns of :data:`COLUMNS` (NaN / None where not applicable)."""
    suite = load_suite(root)
    rows = []
    nan = math.nan
    for e in suite.select(only):
        d = suite.root / "results" / e.id
        kin, ocv = _read(d / "kinhec.json"), _read(d / "opencv.json")
        truth = _read(suite.root / e.truth_file())
        row = dict.fromkeys(COLUMNS)
        row["entry"] = e.id
        if kin is None:
            rows.append(row)
            continue
        sig = kin.get("sigma", {})
        row["mean px kinhec"] = kin.get("statistics", {}).get("mean_px", nan)
        if ocv is not None:
            z = checks.sigma_changes(ocv, kin, sig)
            name, v = checks.max_abs(z)
            row["largest d/sigma"] = (v, name)
            row["X d [deg, mm]"] = checks.pose_error_of(ocv, kin, "X")
            row["mean px opencv"] = ocv.get("statistics", {}).get("mean_px", nan)
        if truth is not None:
            row["truth kinhec [sigma]"] = checks.max_abs(checks.truth_errors(kin, truth, sig))[::-1]
            row["X err kinhec [deg, mm]"] = checks.pose_error_of(kin, truth, "X")
            if ocv is not None:
                row["truth opencv [sigma]"] = checks.max_abs(checks.truth_errors(ocv, truth, sig))[::-1]
                row["X err opencv [deg, mm]"] = checks.pose_error_of(ocv, truth, "X")
        rows.append(row)
    return rows


def _cell(v) -> str:
    if v is None or (isinstance(v, tuple) and (v[1] is None or v[0] != v[0])):
        return "-"
    if isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], str):
        return f"{v[0]:.2f} ({v[1]})"
    if isinstance(v, tuple):
        return f"{v[0]:.3f}, {v[1]:.2f}"
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{v:.3f}"
    return str(v)


def format_table(rows: list[dict]) -> str:
    """The rows as a Markdown table (the one ``kinhec suite compare`` prints)."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in rows:
        lines.append("| " + " | ".join(_cell(r[c]) for c in COLUMNS) + " |")
    return "\n".join(lines)
