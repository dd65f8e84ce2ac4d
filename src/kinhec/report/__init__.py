"""Self-contained HTML pages: a benchmark (``kinhec report DIR``) and a calibration result.

* :func:`build_benchmark_report` writes one page for a dataset folder and its
  benchmark results: the sortable leaderboard per track (oracle and estimated
  clock offsets side by side, Cramér-Rao columns when present), robustness
  curves with a selectable solver set, the composition and descriptor
  distributions, and a filterable sequence table whose rows open a
  drill-down (3D scene, the two streams, every solver's error, the
  validation status).
* :func:`write_calibration_report` writes the page of one calibration result
  (the dict of ``kinhec calibrate --json``): the estimate with its
  uncertainty, residuals over time with the outliers marked, the clock-offset
  curve, the observability figures and the verdict in words.

The pages work offline from ``file://``: plotly.js (from the ``plotly``
package) is inlined once, compressed (:mod:`~kinhec.report.page`), with the
style and a small page script; nothing is fetched.  Modules: :mod:`~kinhec.report.data` (tables from the index and the
results), :mod:`~kinhec.report.sequences` (thinned per-sequence data),
:mod:`~kinhec.report.figures` (plotly figure specifications),
:mod:`~kinhec.report.page` (the HTML shell), :mod:`~kinhec.report.benchmark_page`
and :mod:`~kinhec.report.calibration` (the two pages).
"""

from __future__ import annotations

from kinhec.report.benchmark_page import REPORT_FILE, build_benchmark_report
from kinhec.report.calibration import check_calibration_result, write_calibration_report

__all__ = ["build_benchmark_report", "write_calibration_report", "check_calibration_result", "REPORT_FILE"]
