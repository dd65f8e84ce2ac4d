"""The benchmark: every registered solver on every sequence of a dataset, under one protocol.

Protocol (version :data:`PROTOCOL_VERSION`; every constant is also written to
``protocol.json``)
---------------------------------------------------------------------------------

For each sequence and each evaluation synchronisation ``eval_sync``:

1. **Pairing.**  ``oracle`` (every sequence): synchronous streams are paired
   row by row; for asynchronous ones the *measured* robot stream is
   interpolated (SLERP / linear) at the camera stamps shifted by the
   ground-truth clock offset, ``t - time_offset_s``.  ``estimated``
   (asynchronous sequences only): the offset is first estimated from the
   measured streams by :func:`kinhec.solvers.estimate_time_offset`
   (angular-speed cross-correlation, settings :data:`TIME_OFFSET_SETTINGS`)
   and the streams are paired at ``t - estimate``.  The estimated results keep
   the sequences where the correlation finds no peak (the estimator then
   returns 0 with ``time_offset_peak_corr = 0``); filter on
   ``time_offset_peak_corr`` before quoting a clock-offset accuracy.
   Frames without a camera measurement, or outside the robot stream, are
   dropped (see :meth:`kinhec.io.Sequence.axyb_poses`).
2. **Keyframes** on the paired flange poses: at least
   :data:`~kinhec.geometry.motion.KEYFRAME_MIN_ROT_DEG` deg or
   :data:`~kinhec.geometry.motion.KEYFRAME_MIN_TRANS_M` m apart, at most
   :data:`~kinhec.geometry.motion.KEYFRAME_MAX`; every paired frame when fewer than
   three survive (:func:`kinhec.geometry.motion.select_keyframes`).
3. **Solvers.**  ``A X = X B`` entries of the registry receive the motions
   between consecutive keyframes, ``A = inv(A_i) A_j``, ``B = inv(B_i) B_j``;
   ``A X = Y B`` entries receive the absolute keyframe pairs.
   Every solver runs on every sequence, as the published protocol does:
   ``andreff_scale`` too (on a metric sequence it estimates a scale near 1),
   and the scale-free solvers on monocular sequences (they then fail on the
   translation, which is what the monocular track shows).
   The pixel solvers (:data:`kinhec.solvers.registry.PIXEL_SOLVERS`:
   ``reprojection``) run where the target corners can be rebuilt
   (:func:`pixels_available`): the ``pnp`` track, camera model ``pnp``, synchronous streams and
   kinhec's recipe in ``extra_json``.  The pixels are not stored;
   :func:`kinhec.synth.observations.recipe_pixels` re-simulates them exactly as the
   generator drew them.  Such a solver receives the same keyframes, the
   measured flange poses there and the detected corners of those frames, with
   the intrinsics of the camera preset held fixed (the PnP behind the pose
   solvers' camera poses used them too).  Its rows carry every column of the
   others (``Y_*`` included, ``n_motions`` = views); a sequence without
   pixels gets no row of it, so the rows of a copy written by the published
   toolkit are the published ones.  A pose solver with a pixel entry
   (``SolverSpec.run_pixels``: ``he_ml``) gets the same pixels as well on
   those sequences, and the poses only everywhere else.
4. **Scores.**  Geodesic rotation error [deg] and Euclidean translation error
   [mm] of ``X`` (and ``Y``) against the metric ground truth
   (:func:`kinhec.geometry.se3.pose_error`); wall time of the solver call alone
   [ms] (for a pixel solver, rebuilding the pixels is not counted); the clock-offset error ``(estimate - truth)`` [ms]; for
   ``andreff_scale`` the scale estimate and its relative error
   ``|s_est - s_true| / s_true``.

A solver that raises gets a row with ``ok = False`` and ``error =
"ExcType: message"``; so does one that returns a non-finite ``X`` or ``Y``.
A :class:`~kinhec.solvers.DegenerateMotionWarning` keeps ``ok = True`` and
is noted in ``error``.  A sequence that cannot be read, paired or (for
``estimated``) time-aligned gives ``ok = False`` rows for every solver, so
``results.parquet`` always holds sequences x solvers x eval_sync rows (a pixel solver: on the
sequences with pixels).  A pixel solver (or ``he_ml`` there) whose pixels cannot be rebuilt, or whose
rebuilt poses are not the stored ones, gets ``ok = False`` rows saying so.

Columns that do not apply are NaN: the three ``time_offset_*`` estimation
columns and ``time_offset_err_ms`` on ``oracle`` rows (the pairing used the
true offset; nothing was estimated), ``Y_*`` for ``A X = X B`` solvers, ``scale_*`` for
every solver but ``andreff_scale`` (and ``he_ml`` where it finds a monocular
scale), ``n_inliers`` for every solver but ``ransac_park_martin`` and
``he_ml``.  ``n_motions`` counts the relative motions given to an
``A X = X B`` solver and the absolute pairs given to an ``A X = Y B`` solver.

After the published columns come the Cramér-Rao bound of the sequence
(``X_rot_crlb_deg``, ``X_trans_crlb_mm``: expected median errors of an
efficient estimator on the same keyframe pairs, :mod:`kinhec.evaluate.bounds`), each
row's efficiency (``X_*_efficiency`` = error / bound) and ``crlb_modelled``
(False for outliers and DH errors, which the bound does not model); see
:func:`add_bound_columns`.  The pixel solvers' rows carry the same bound: it
uses the first-order PnP covariance of the corners' noise, so to first order
the pose pairs hold what the pixels tell about ``X`` and ``Y``.

Outputs (in ``DATA/benchmarks/`` unless ``out`` says otherwise)
--------------------------------------------------------------
``results.parquet`` / ``results.csv`` (:data:`kinhec.io.schema.RESULTS_SCHEMA`,
sorted by ``sequence_id``, ``eval_sync``, ``solver``), ``leaderboard.md``
(medians per track, per synchronisation and per factor level),
``summary.json`` (the same figures as JSON) and ``protocol.json``.

Running and resuming
--------------------
A shard of the dataset (the sequences of one ``robot_file``) is the unit of
work, run on the executors of ``kinhec generate``
(:mod:`kinhec.util.executors`: in this process for one worker, a local process
pool, or Dask).  Each finished unit is written atomically to
``.kinhec/benchmark/<run fingerprint>/<track>-<shard>.parquet`` (scratch,
never published; :mod:`kinhec.util.fingerprint`) with a unit fingerprint
(protocol version, kinhec version and a digest of its sources, solvers,
synchronisations, the shard's sequences and files); a re-run skips every part whose fingerprint still
matches and recomputes the others.  A run with ``solvers``, ``sync``,
``tracks`` or ``max_sequences`` narrower than everything is a subset run: its
outputs go to ``<out>/subsets/<run fingerprint>/`` and a full run's results
are never replaced.  Every writer of a folder takes its one lock
(:mod:`kinhec.util.locking`).  ``Ctrl+C`` cancels the units not started, lets the
running ones finish and returns without writing the outputs (a second
``Ctrl+C`` stops the running ones at once); the next run resumes.

Where each part lives
---------------------
:mod:`~kinhec.evaluate.benchmark.protocol` (the constants, the argument checks, ``protocol.json``),
:mod:`~kinhec.evaluate.benchmark.sequence` (one sequence: pairing, the solvers, the bound columns, its rows),
:mod:`~kinhec.evaluate.benchmark.run` (units, parts, planning, resuming, the outputs),
:mod:`~kinhec.evaluate.benchmark.summary` (``summary.json``) and :mod:`~kinhec.evaluate.benchmark.leaderboard`
(``leaderboard.md``).  The names below are the package's interface.
"""

from __future__ import annotations

from kinhec.evaluate.benchmark.leaderboard import FAILURE_KINDS, describe_failed_rows, efficiency_markdown, leaderboard_markdown
from kinhec.evaluate.benchmark.protocol import (EVAL_SYNCS, LEADERBOARD_FILE, PART_METADATA_KEY, PIXEL_CHECK_TOL, PIXEL_KIND,
                                       PIXEL_TRACKS, PROTOCOL_FILE, PROTOCOL_VERSION, RESULTS_CSV_FILE, RESULTS_DIR,
                                       RESULTS_FILE, SCALE_SOLVER, SUMMARY_FILE, TIME_OFFSET_SETTINGS, protocol_info)
from kinhec.evaluate.benchmark.run import BenchmarkSummary, BenchmarkTask, UnitOutcome, run_benchmark, run_unit
from kinhec.evaluate.benchmark.sequence import add_bound_columns, evaluate_sequence, is_monocular, pixels_available
from kinhec.evaluate.benchmark.summary import efficiency_summary, summarize_results

__all__ = [
    "PROTOCOL_VERSION",
    "EVAL_SYNCS",
    "TIME_OFFSET_SETTINGS",
    "RESULTS_DIR",
    "BenchmarkTask",
    "UnitOutcome",
    "BenchmarkSummary",
    "run_benchmark",
    "run_unit",
    "evaluate_sequence",
    "is_monocular",
    "pixels_available",
    "protocol_info",
    "summarize_results",
    "leaderboard_markdown",
    "add_bound_columns",
    "efficiency_summary",
    "efficiency_markdown",
    "describe_failed_rows",
]
