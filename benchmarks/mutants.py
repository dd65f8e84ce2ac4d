"""Mutation audit of the newest modules: does the test suite catch realistic bugs in them?

Each mutant is one edit a developer could plausibly make -- a sign, a transpose, an off-by-one, a unit, a
wrong quantile or number of degrees of freedom, a forgotten square root or inverse, swapped arguments --
written as ``(id, file, original snippet, mutated snippet, test files, description)``.  The runner applies one
mutant at a time to the source tree, runs the listed test files (``pytest -x``, so a caught mutant stops at its
first failure) with a timeout, restores the file (also on Ctrl+C or a failure of the runner), and prints one
row per mutant: caught or survived, and the first failing test.

    python benchmarks/mutants.py                 # every mutant
    python benchmarks/mutants.py --only RE1 CE2  # some
    python benchmarks/mutants.py --list          # the catalogue
    python benchmarks/mutants.py --check         # every original snippet occurs exactly once

The catalogue holds every audit so far: the sets named by their id prefixes (``RE``, ``CE`` ..., ``F4-`` to
``F11-``) and, with descriptive ids and ``[S]``, ``[F]``, ``[F2]`` in their descriptions, the first three audits of
the solvers, bounds, calibrate, suite and report (the survivors of the first, re-targeted to the current code, and
two fresh sets chosen after them).

The runner refuses to start when a file it would mutate has uncommitted changes (the restore writes back the
committed text it read, and a half-edited file would be neither).  Byte code is not written during the runs
and a restored file gets its modification time back, so no mutated module can be loaded from a stale cache.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "kinhec"


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str  # relative to src/kinhec
    original: str
    mutated: str
    tests: tuple
    description: str


def _m(id, file, original, mutated, tests, description) -> Mutant:
    return Mutant(id, file, original, mutated, tuple(tests), description)


# test files, fastest first within each list (the focused *_quantities files first)
_READ = ["tests/test_io.py"]
_DIST = ["tests/test_distributions.py"]
_JAC = ["tests/test_jacobians.py"]
_BOUNDS = ["tests/test_bounds.py"]
_RE = ["tests/test_calibrate_robot_error_quantities.py", "tests/test_calibrate_robot_error.py"]
_GATE = ["tests/test_calibrate_outliers_quantities.py", "tests/test_calibrate_gate.py",
         "tests/test_calibrate_symptoms.py"]
_SIGMA = ["tests/test_calibrate_uncertainty_quantities.py", "tests/test_calibrate_gate.py",
          "tests/test_calibrate_sigma.py"]
_SCALE = ["tests/test_calibrate_free_scale_quantities.py", "tests/test_calibrate_scale_quantities.py",
          "tests/test_calibrate_scale.py", "tests/test_calibrate_firewall.py"]
_CORNERS = ["tests/test_calibrate_bundle_quantities.py", "tests/test_calibrate_corners_quantities.py",
            "tests/test_calibrate_corners.py", "tests/test_calibrate_scale.py"]
_EYE_BIAS = ["tests/test_calibrate_eye_bias_quantities.py", "tests/test_jacobians.py",
             "tests/test_calibrate_firewall.py"]
_OBS = ["tests/test_calibrate_observability_quantities.py", "tests/test_calibrate_gate.py",
        "tests/test_calibrate_robot_error.py", "tests/test_calibrate_sigma.py", "tests/test_calibrate_synthetic.py"]
_TF = ["tests/test_calibrate_tftree_quantities.py", "tests/test_tftree.py", "tests/test_tf_messages.py",
       "tests/test_calibrate_bags.py"]
_VISION = ["tests/test_vision_quantities.py", "tests/test_vision.py"]
_IMAGES = ["tests/test_vision_quantities.py", "tests/test_calibrate_images_quantities.py", "tests/test_vision.py",
           "tests/test_calibrate_images.py"]
_MULTI = ["tests/test_solvers_multi_axyb_quantities.py", "tests/test_certificate.py", "tests/test_jacobians.py",
          "tests/test_multi.py"]
_HE_ML = ["tests/test_he_ml_stages_quantities.py", "tests/test_he_ml.py", "tests/test_he_ml_pixels.py",
          "tests/test_calibrate_symptoms.py"]

_STAMPS = ["tests/test_calibrate_stamp_units.py"]
_ROWS = ["tests/test_row_alignment.py", "tests/test_calibrate_firewall.py"]
_READINGS = ["tests/test_reading_choice.py", "tests/test_calibrate_symptoms.py", "tests/test_calibrate_cli.py",
             "tests/test_calibrate_firewall.py"]
_MULTI_EDGES = ["tests/test_multi_edges.py", "tests/test_multi.py"]
_DECISIONS = ["tests/test_decision_stability.py", "tests/test_calibrate_symptoms.py", "tests/test_he_ml.py"]

_HPX = ["tests/test_held_out_pixels_quantities.py", "tests/test_held_out_pixels.py"]
_INTR = ["tests/test_calibrate_intrinsics_files.py", "tests/test_planner_own_setup.py"]
_ROBOT_FILES = ["tests/test_robot_files_quantities.py", "tests/test_robot_files.py", "tests/test_planner_own_setup.py"]
_CHAIN = ["tests/test_robot_files.py", "tests/test_robots.py", "tests/test_planner_own_setup.py"]
_PLAN_OWN = ["tests/test_planner_inputs_quantities.py", "tests/test_planner_own_setup.py", "tests/test_planner.py"]
_PIPE = ["tests/test_calibrate_stages_quantities.py", "tests/test_calibrate_shape.py",
         "tests/test_calibrate_firewall.py", "tests/test_calibrate_formats.py", "tests/test_calibrate_synthetic.py",
         "tests/test_calibrate_scale.py", "tests/test_calibrate_sigma.py", "tests/test_calibrate_cli.py"]
_RIG = ["tests/test_calibrate_stages_quantities.py", "tests/test_calibrate_synthetic.py", "tests/test_multi.py",
        "tests/test_calibrate_bags.py"]
_RANSAC = ["tests/test_ransac_quantities.py", "tests/test_solvers.py", "tests/test_traps.py"]
_MOVED = ["tests/test_moved.py", "tests/test_layers.py", "tests/test_startup.py", "tests/test_private_names.py"]

# the fifth set's test files, chosen by their names only (the module's *_quantities file first)
_F5_STAGES = ["tests/test_calibrate_stages_quantities.py", "tests/test_calibrate_shape.py",
              "tests/test_calibrate_formats.py", "tests/test_calibrate_synthetic.py"]
_F5_SPREAD = ["tests/test_calibrate_stages_quantities.py", "tests/test_calibrate_sigma.py",
              "tests/test_calibrate_synthetic.py"]
_F5_VERDICT_SCALE = ["tests/test_calibrate_stages_quantities.py", "tests/test_calibrate_scale_quantities.py",
                     "tests/test_calibrate_scale.py"]
_F5_POINT = ["tests/test_calibrate_stages_quantities.py", "tests/test_held_out_quantities.py", "tests/test_held_out.py"]
_F5_RIG = ["tests/test_calibrate_stages_quantities.py", "tests/test_multi.py", "tests/test_calibrate_synthetic.py"]
_F5_STAMPS = ["tests/test_calibrate_stamp_units_quantities.py", "tests/test_calibrate_stamp_units.py"]
_F5_ROWS = ["tests/test_row_alignment_quantities.py", "tests/test_row_alignment.py", "tests/test_calibrate_firewall.py"]
_F5_PAIRING = ["tests/test_calibrate_pairing_quantities.py", "tests/test_calibrate_synthetic.py",
               "tests/test_calibrate_formats.py"]
_F5_FIREWALL = ["tests/test_calibrate_firewall.py", "tests/test_calibrate_symptoms.py", "tests/test_calibrate_cli.py"]
_F5_CHOICE = ["tests/test_reading_choice_quantities.py", "tests/test_reading_choice.py",
              "tests/test_calibrate_firewall.py"]
_F5_READINGS = ["tests/test_calibrate_readings_quantities.py", "tests/test_calibrate_firewall.py",
                "tests/test_row_alignment.py"]
_F5_READERS = ["tests/test_calibrate_readers_quantities.py", "tests/test_calibrate_formats.py",
               "tests/test_calibrate_firewall.py"]
_F5_HELD = ["tests/test_held_out_quantities.py", "tests/test_held_out.py"]
_F5_CHECK = ["tests/test_check_quantities.py", "tests/test_check.py"]
_F5_RESULT = ["tests/test_calibrate_result_quantities.py", "tests/test_calibrate_shape.py",
              "tests/test_calibrate_cli.py"]
_F5_SOLVE = ["tests/test_calibrate_solve_quantities.py", "tests/test_calibrate_noise_dof.py",
             "tests/test_calibrate_sigma.py", "tests/test_calibrate_synthetic.py"]
_F5_EDGES = ["tests/test_multi_edges_quantities.py", "tests/test_multi_edges.py", "tests/test_multi.py"]
_F5_OPTIONS = ["tests/test_calibrate_options_quantities.py", "tests/test_calibrate_cli.py",
               "tests/test_calibrate_formats.py"]
_F5_FRAMES = ["tests/test_calibrate_options_quantities.py", "tests/test_calibrate_inputs_quantities.py",
              "tests/test_calibrate_stages_quantities.py", "tests/test_calibrate_formats.py"]
_F5_INPUTS = ["tests/test_calibrate_inputs_quantities.py", "tests/test_calibrate_synthetic.py",
              "tests/test_calibrate_cli.py"]
_F5_PLAN = ["tests/test_planner_quantities.py", "tests/test_planner.py", "tests/test_planner_own_setup.py"]
_F5_CAND = ["tests/test_planner_quantities.py", "tests/test_planner.py"]
_F5_DETECT = ["tests/test_vision_detect_quantities.py", "tests/test_detect_workers.py", "tests/test_vision.py"]

# the sixth set's test files, chosen by their names only (the module's *_quantities file first)
_F6_STAGES = ["tests/test_calibrate_stages_quantities.py", "tests/test_calibrate_shape.py",
              "tests/test_calibrate_synthetic.py", "tests/test_calibrate_formats.py"]
_F6_SPREAD = ["tests/test_calibrate_stages_quantities.py", "tests/test_calibrate_uncertainty_quantities.py",
              "tests/test_calibrate_sigma.py", "tests/test_calibrate_synthetic.py"]
_F6_VERDICT = ["tests/test_calibrate_stages_quantities.py", "tests/test_calibrate_outliers_quantities.py",
               "tests/test_calibrate_shape.py", "tests/test_calibrate_synthetic.py"]
_F6_OUTPUTS = ["tests/test_calibrate_stages_quantities.py", "tests/test_calibrate_shape.py",
               "tests/test_calibrate_cli.py", "tests/test_calibrate_synthetic.py"]
_F6_CAMERA = ["tests/test_calibrate_stages_quantities.py", "tests/test_calibrate_eye_bias_quantities.py",
              "tests/test_calibrate_synthetic.py", "tests/test_calibrate_sigma.py"]
_F6_RIG = ["tests/test_calibrate_stages_quantities.py", "tests/test_multi.py", "tests/test_calibrate_synthetic.py",
           "tests/test_calibrate_bags.py"]
_F6_STAMPS = ["tests/test_calibrate_stamp_units_quantities.py", "tests/test_calibrate_stamp_units.py"]
_F6_ROWS = ["tests/test_row_alignment_quantities.py", "tests/test_row_alignment.py", "tests/test_calibrate_firewall.py"]
_F6_PAIRING = ["tests/test_calibrate_pairing_quantities.py", "tests/test_calibrate_same_clock.py",
               "tests/test_calibrate_synthetic.py"]
_F6_FIREWALL = ["tests/test_calibrate_firewall.py", "tests/test_calibrate_symptoms.py", "tests/test_calibrate_scale.py",
                "tests/test_calibrate_cli.py"]
_F6_CHOICE = ["tests/test_reading_choice_quantities.py", "tests/test_reading_choice.py",
              "tests/test_calibrate_firewall.py"]
_F6_READINGS = ["tests/test_calibrate_readings_quantities.py", "tests/test_calibrate_firewall.py",
                "tests/test_calibrate_symptoms.py"]
_F6_READERS = ["tests/test_calibrate_readers_quantities.py", "tests/test_calibrate_formats.py",
               "tests/test_calibrate_firewall.py"]
_F6_HELD = ["tests/test_held_out_quantities.py", "tests/test_held_out.py", "tests/test_held_out_pixels_quantities.py"]
_F6_HPX = ["tests/test_held_out_pixels_quantities.py", "tests/test_held_out_pixels.py"]
_F6_CHECK = ["tests/test_check_quantities.py", "tests/test_check.py"]
_F6_RESULT = ["tests/test_calibrate_result_quantities.py", "tests/test_calibrate_shape.py",
              "tests/test_calibrate_cli.py"]
_F6_SOLVE = ["tests/test_calibrate_solve_quantities.py", "tests/test_calibrate_noise_dof.py",
             "tests/test_calibrate_sigma.py", "tests/test_calibrate_synthetic.py"]
_F6_EDGES = ["tests/test_multi_edges_quantities.py", "tests/test_multi_edges.py", "tests/test_multi.py"]
_F6_CORNERS = ["tests/test_calibrate_corners_quantities.py", "tests/test_calibrate_bundle_quantities.py",
               "tests/test_calibrate_corners.py"]
_F6_OUTPUT = ["tests/test_calibrate_formats.py", "tests/test_export.py", "tests/test_calibrate_cli.py",
              "tests/test_calibrate_bags.py"]
_F6_OPTIONS = ["tests/test_calibrate_options_quantities.py", "tests/test_calibrate_cli.py",
               "tests/test_calibrate_formats.py"]
_F6_FRAMES = ["tests/test_calibrate_inputs_quantities.py", "tests/test_calibrate_stages_quantities.py",
              "tests/test_calibrate_formats.py", "tests/test_calibrate_synthetic.py"]
_F6_INPUTS = ["tests/test_calibrate_inputs_quantities.py", "tests/test_multi.py", "tests/test_calibrate_synthetic.py",
              "tests/test_calibrate_cli.py"]
_F6_INTR = ["tests/test_calibrate_intrinsics_files.py", "tests/test_planner_own_setup.py"]
_F6_WRITERS = ["tests/test_intrinsics_writers.py", "tests/test_calibrate_intrinsics_files.py"]
_F6_ROBOT_FILES = ["tests/test_robot_files_quantities.py", "tests/test_robot_files.py",
                   "tests/test_planner_own_setup.py"]
_F6_PLAN = ["tests/test_planner_quantities.py", "tests/test_planner_inputs_quantities.py",
            "tests/test_planner_own_setup.py", "tests/test_planner.py"]
_F6_CAND = ["tests/test_planner_quantities.py", "tests/test_planner.py", "tests/test_planner_own_setup.py"]
_F6_MODEL = ["tests/test_planner_quantities.py", "tests/test_planner.py"]
_F6_TRAJ = ["tests/test_planner_quantities.py", "tests/test_planner_own_setup.py", "tests/test_planner.py"]
_F6_PLAN_IN = ["tests/test_planner_inputs_quantities.py", "tests/test_planner_own_setup.py", "tests/test_planner.py"]
_F6_DETECT = ["tests/test_vision_detect_quantities.py", "tests/test_detect_workers.py", "tests/test_vision.py",
              "tests/test_calibrate_images.py"]
_F6_VPAIR = ["tests/test_vision_quantities.py", "tests/test_calibrate_images_quantities.py", "tests/test_vision.py",
             "tests/test_calibrate_images.py"]
_F6_TARGETS = ["tests/test_vision_quantities.py", "tests/test_vision.py", "tests/test_planner_own_setup.py"]

CATALOGUE: list[Mutant] = [
    # ---------------------------------------------------------------- calibrate/robot_error.py
    _m("RE1", "calibrate/robot_error.py", "S[:3, :3] = R.T", "S[:3, :3] = R", _RE,
       "sensitivity: rotation block R instead of R^T (forgotten transpose)"),
    _m("RE2", "calibrate/robot_error.py", "S[3:, :3] = -se3.hat(t)", "S[3:, :3] = se3.hat(t)", _RE,
       "sensitivity: lever arm t x w instead of w x t (sign)"),
    _m("RE3", "calibrate/robot_error.py", "rot = np.radians(level[0]) / np.sqrt(3.0)",
       "rot = np.radians(level[0]) / 3.0", _RE,
       "consider_cov: RMS angle spread over 3 axes by /3 instead of /sqrt(3)"),
    _m("RE4", "calibrate/robot_error.py", "res.X_std = np.sqrt(res.X_std**2 + np.diag(CX))",
       "res.X_std = res.X_std + np.sqrt(np.diag(CX))", _RE,
       "apply: standard deviations added instead of variances"),
    # ---------------------------------------------------------------- calibrate/free_scale.py
    _m("FS1", "calibrate/free_scale.py", "return float(-0.5 * (len(r) * logdet + np.minimum(d2, sv.CHI2_6_9999).sum()))",
       "return float(-0.5 * (logdet + np.minimum(d2, sv.CHI2_6_9999).sum()))",
       _SCALE, "log_likelihood: profiled Gaussian log-likelihood without the factor n"),
    _m("FS2", "calibrate/free_scale.py", "MARGIN + 0.5 * float(np.log(max(int(keep.sum()), 2)))",
       "MARGIN + 0.5 * float(max(int(keep.sum()), 2))", _SCALE,
       "gain: the freed parameter costs n/2 instead of log(n)/2 (forgotten log)"),
    _m("FS3", "calibrate/free_scale.py", "and abs(np.log(ratio)) >= max(", "and np.log(ratio) >= max(", _SCALE,
       "_far: missing abs, eye translations too short are never far"),
    _m("FS4", "calibrate/free_scale.py", "b = 1.0 / free.scale", "b = free.scale", _CORNERS,
       "board_scale: board factor is the eye scale instead of its inverse"),
    # ---------------------------------------------------------------- calibrate/outliers.py
    _m("OU1", "calibrate/outliers.py", "var = 2.0 * n1 * n2 * (2.0 * n1 * n2 - n)", "var = 2.0 * n1 * n2 * (2.0 * n1 * n2)",
       _GATE, "runs_z: variance of the number of runs without the -n term"),
    _m("OU2", "calibrate/outliers.py", "if k < MIN_INLIER_SHARE * n:", "if k <= MIN_INLIER_SHARE * n:", _GATE,
       "judge: exactly half inliers counted a minority (< for <=)"),
    _m("OU3", "calibrate/outliers.py", "if share > MAX_RUN_SHARE and z < RUNS_Z:",
       "if share > MAX_RUN_SHARE or z < RUNS_Z:", _GATE,
       "judge: runs rule fires on either condition (or for and)"),
    _m("OU4", "calibrate/outliers.py", "if np.degrees(np.arccos(tr).max()) < MIN_ROT_RANGE_DEG:",
       "if np.arccos(tr).max() < MIN_ROT_RANGE_DEG:", _GATE,
       "_determines: rotation range in radians compared with a limit in degrees"),
    # ---------------------------------------------------------------- calibrate/uncertainty.py
    _m("UN1", "calibrate/uncertainty.py", "tau = -1.0 + 2.0 * mono.sum(axis=0)", "tau = 1.0 + 2.0 * mono.sum(axis=0)",
       _SIGMA, "autocorrelation_time: 1 + 2 sum instead of -1 + 2 sum over Geyer pairs (rho(0) counted twice)"),
    _m("UN2", "calibrate/uncertainty.py", "if rho < SIGNIFICANT_RHO / np.sqrt(z.size):",
       "if rho < SIGNIFICANT_RHO / np.sqrt(z.shape[0]):", _SIGMA,
       "long_run_inflation: significance of the pooled lag-one correlation from n instead of 6 n values"),
    _m("UN3", "calibrate/uncertainty.py", 'h = np.einsum("nkp,pq,nkq->n", G, C, G) / p',
       'h = np.einsum("nkp,pq,nkq->n", G, C, G)', _SIGMA,
       "gate: leverage as the trace, not divided by the dimension p"),
    _m("UN4", "calibrate/uncertainty.py", "f_ppf(level, p, nu - p + 1.0)",
       "f_ppf(1.0 - level, p, nu - p + 1.0)", _SIGMA,
       "gate: predictive quantile at the wrong tail (1 - level)"),
    _m("UN5", "calibrate/uncertainty.py", "return cov * np.outer(d, d)",
       "return cov * np.outer(self.factors, self.factors)", _SIGMA,
       "Inflation.apply: variance factors applied without their square root"),
    # ---------------------------------------------------------------- calibrate/bundle.py
    _m("BU1", "calibrate/bundle.py", "v_trans = (np.sum(xi[:, 3:] ** 2) + np.sum(dC[:, 3:])) / (3 * N)",
       "v_trans = (np.sum(xi[:, 3:] ** 2) + np.sum(dC[:, 3:])) / (6 * N)", _CORNERS,
       "EM: robot translation variance over 6N components instead of 3N"),
    _m("BU2", "calibrate/bundle.py", "rms = float(np.sqrt(np.mean(e * e) * 2.0))", "rms = float(np.sqrt(np.mean(e * e)))",
       _CORNERS, "rms_px: per coordinate instead of per corner"),
    _m("BU3", "calibrate/bundle.py", "T[:3, 3] = u + bb * (K @ u) + c * (K2 @ u)",
       "T[:3, 3] = u + a * (K @ u) + c * (K2 @ u)", _CORNERS,
       "_exp6: left Jacobian's first coefficient sin/th instead of (1 - cos)/th^2"),
    _m("BU4", "calibrate/bundle.py", "C[:, :3, 3] /= b", "C[:, :3, 3] *= b", _CORNERS,
       "fun: the board scale multiplies the chain's translation instead of dividing it"),
    # ---------------------------------------------------------------- calibrate/eye_bias.py
    _m("EB1", "calibrate/eye_bias.py", "t = T[:, :3, 3] @ R0.T", "t = T[:, :3, 3] @ R0", _EYE_BIAS,
       "correct: translation turned by R0^T instead of R0 (row vectors)"),
    _m("EB2", "calibrate/eye_bias.py", "turn = se3.so3_exp(np.cross(a, b))", "turn = se3.so3_exp(np.cross(b, a))",
       _EYE_BIAS, "correct: the line-of-sight turn from b to a (swapped cross product)"),
    _m("EB3", "calibrate/eye_bias.py", "np.array([theta[2], theta[3], theta[4]])", "np.array([theta[3], theta[2], theta[4]])",
       _EYE_BIAS, "correct: lateral shifts a_x, a_y swapped"),
    # ---------------------------------------------------------------- calibrate/scale.py
    _m("SC1", "calibrate/scale.py", 'board = "smaller" if dev > 0 else "larger"',
       'board = "larger" if dev > 0 else "smaller"', _SCALE,
       "describe: longer eye translations blamed on a larger board"),
    _m("SC2", "calibrate/scale.py", "if abs(dev) > 3 * scale_std and abs(dev) > MIN_REPORTED:",
       "if abs(dev) > 3 * scale_std or abs(dev) > MIN_REPORTED:", _SCALE,
       "describe: warning on significance or size (or for and)"),
    # ---------------------------------------------------------------- calibrate/same_clock.py
    _m("SK1", "calibrate/same_clock.py", "if sol.offset is None or abs(sol.offset) <= SAME_CLOCK_PERIODS * period_s:",
       "if sol.offset is None or sol.offset <= SAME_CLOCK_PERIODS * period_s:",
       ["tests/test_calibrate_same_clock.py"], "refit_from_zero_offset: negative offsets never refitted (missing abs)"),
    _m("SK2", "calibrate/same_clock.py", "if len(p0) < len(pairing) // 2:", "if len(p0) < len(pairing):",
       ["tests/test_calibrate_same_clock.py"], "refit_from_zero_offset: zero-offset pairing must keep every pair"),
    # ---------------------------------------------------------------- calibrate/observability.py
    _m("OB1", "calibrate/observability.py", "std_deg = float(np.degrees(np.max(xs[:3])))",
       "std_deg = float(np.max(xs[:3]))", _OBS, "X_std_max_deg in radians (unit)"),
    _m("OB2", "calibrate/observability.py", "return c.axis_scatter_lambda2(se3.so3_log(Rm.T @ R, check=False))",
       "return c.axis_scatter_lambda2(se3.so3_log(Rm @ R, check=False))",
       _OBS, "lambda2 from Rm R instead of Rm^T R (forgotten transpose)"),
    _m("OB3", "calibrate/observability.py", "drift = bool(eff is not None and n >= MIN_DRIFT_PAIRS",
       "drift = bool(eff is not None and len(A) >= MIN_DRIFT_PAIRS", _OBS,
       "drift rule counts the hand poses, not the n_pairs the autocorrelation time came from"),
    # ---------------------------------------------------------------- calibrate/images.py
    _m("IM1", "calibrate/images.py", "margin = 1.0 / np.sqrt(3.0 * n_views)", "margin = 1.0 / np.sqrt(6.0 * n_views)",
       _IMAGES, "_agrees_best: margin of one level's log (6 N) instead of the sum of two (3 N)"),
    _m("IM2", "calibrate/images.py", "if len(dropped) > DROPPED_WARN_FRACTION * len(files):",
       "if len(dropped) > DROPPED_WARN_FRACTION * used.size:", _IMAGES,
       "dropped-images warning as a fraction of the used images, not of the folder"),
    # ---------------------------------------------------------------- calibrate/corners.py
    _m("CO1", "calibrate/corners.py", 'report["pixel_std_std_px"] = fit.pixel_std / np.sqrt(2.0 * max(',
       'report["pixel_std_std_px"] = fit.pixel_std * np.sqrt(2.0 / max(', _CORNERS,
       "pixel_std_std_px: relative std of a variance sqrt(2/d) instead of a std's sqrt(1/(2d))"),
    _m("CO2", "calibrate/corners.py", "[v / np.sqrt(2.0 * 3 * max(int(inl.sum()), 1))",
       "[v / np.sqrt(2.0 * 6 * max(int(inl.sum()), 1))", _CORNERS,
       "robot_std_std_rad_m: 6 components per view instead of 3 per level"),
    _m("CO3", "calibrate/corners.py", "vals[0] <= 0 or vals[1] <= 0", "vals[0] < 0 or vals[1] < 0", _CORNERS,
       "parse_intrinsics: a zero focal length accepted (< for <=)"),
    # ---------------------------------------------------------------- calibrate/tftree.py
    _m("TF1", "calibrate/tftree.py", "keep[1:] = ts[1:] != ts[:-1]", "keep[:-1] = ts[1:] != ts[:-1]", _TF,
       "_dedup: repeated stamps keep their last transform, not their first"),
    _m("TF2", "calibrate/tftree.py", "edges.append(Edge(a, b, None, T[idx[-1:]], int(idx.size)))",
       "edges.append(Edge(a, b, None, T[idx[:1]], int(idx.size)))", _TF,
       "from_transforms: a republished static edge keeps its first transform, not its last"),
    _m("TF3", "calibrate/tftree.py", "T = se3.invert_transform(np.broadcast_to(T_c_a, (n, 4, 4)), check=False)\n",
       "T = np.broadcast_to(T_c_a, (n, 4, 4)).copy()\n", _TF,
       "lookup: b above a gives T_b_a instead of T_a_b (forgotten inverse)"),
    _m("TF4", "calibrate/tftree.py", "q_wxyz = np.column_stack([q_xyzw[:, 3], q_xyzw[:, :3]])",
       "q_wxyz = np.column_stack([q_xyzw[:, 0], q_xyzw[:, 1:]])", _TF,
       "transforms_from_ros: quaternion read as w, x, y, z"),
    # ---------------------------------------------------------------- calibrate/tf_messages.py
    _m("TM1", "calibrate/tf_messages.py", "fixed, signed_sec=not ros1)", "fixed, signed_sec=ros1)", _TF,
       "parse_template: ROS 1 seconds read signed, ROS 2 unsigned"),
    _m("TM2", "calibrate/tf_messages.py", '"t_ns": (sec * 1_000_000_000 + nsec)', '"t_ns": (sec * 1_000_000 + nsec)',
       _TF, "decode_batch: seconds times 1e6 instead of 1e9 (unit)"),
    # ---------------------------------------------------------------- vision
    _m("VC1", "vision/checks.py", "local = np.sqrt(np.abs(_jacobian_det(H, xy[good]))) * spacing_m",
       "local = np.abs(_jacobian_det(H, xy[good])) * spacing_m", _VISION,
       "fit_check: local square size from det(J) without its square root"),
    _m("VC2", "vision/checks.py", "limit = int(MAX_BAD_FRACTION * k) + 1 if max_remove is None",
       "limit = int(MAX_BAD_FRACTION * k) if max_remove is None", _VISION,
       "fit_check: one corner fewer may be removed (off by one)"),
    _m("VS1", "vision/symmetry.py", "W, H = (board.cols - 1) * board.square_m, (board.rows - 1) * board.square_m",
       "W, H = board.cols * board.square_m, board.rows * board.square_m", _IMAGES,
       "half_turn: centre from the square count, not the inner corner count (off by one)"),
    _m("VS2", "vision/symmetry.py", "if m1 + MIN_MARGIN_DEG < m0:", "if m1 < m0 + MIN_MARGIN_DEG:", _IMAGES,
       "resolve_half_turns: margin on the wrong side"),
    _m("VP1", "vision/pairing.py", "if abs(t[j] - tq) <= 0.5 * period or", "if abs(t[j] - tq) <= period or", _IMAGES,
       "_poses_at: nearest pose accepted within a whole period, not half"),
    # ---------------------------------------------------------------- solvers/multi_axyb.py
    _m("MA1", "solvers/multi_axyb.py", "out[fin] = (nu[fin] + 6.0) / (nu[fin] + chi2[fin])",
       "out[fin] = (nu[fin] + 3.0) / (nu[fin] + chi2[fin])", _MULTI,
       "_student_weights: dimension 3 instead of 6 in the Student-t weight"),
    _m("MA2", "solvers/multi_axyb.py", "J[:, :6] = -pm.adjoint(se3.invert_transform(Z, check=False))",
       "J[:, :6] = -pm.adjoint(Z)", _MULTI, "relative: Jacobian with Ad(Z) instead of Ad(inv Z) (forgotten inverse)"),
    _m("MA3", "solvers/multi_axyb.py", "D[3:, 3:] = T[:3, :3]\n    return np.sqrt(", "D[3:, 3:] = T[:3, :3].T\n    return np.sqrt(",
       _MULTI, "parent_std: translation rotated by R^T instead of R"),
    _m("MA4", "solvers/multi_axyb.py", "tau = float(chi2_ppf(ESTIMATE_GAP_QUANTILE, 3 * K))",
       "tau = float(chi2_ppf(ESTIMATE_GAP_QUANTILE, K))", _MULTI,
       "_certify: gap threshold with K instead of 3 K degrees of freedom"),
    # ---------------------------------------------------------------- solvers/certificate.py
    _m("CE1", "solvers/certificate.py", "c0 = 6.0 * float(sum(", "c0 = 3.0 * float(sum(", _MULTI,
       "rotation_problem: constant 3 sum w instead of 6 sum w"),
    _m("CE2", "solvers/certificate.py", "Hb[idx, :, idx, :] += 2.0 * D", "Hb[idx, :, idx, :] -= 2.0 * D", _MULTI,
       "_gradient_hessian: curvature term of the Riemannian Hessian with the wrong sign"),
    _m("CE3", "solvers/certificate.py", "bound = problem.c0 + dual + 3.0 * K * min(lam, 0.0)",
       "bound = problem.c0 + dual + K * min(lam, 0.0)", _MULTI,
       "dual_certificate: eigenvalue term without |z|^2 = 3 K"),
    _m("CE4", "solvers/certificate.py", "return P.reshape(3, 3, 3, 3).transpose(1, 3, 0, 2).reshape(9, 9)",
       "return P.reshape(3, 3, 3, 3).transpose(0, 2, 1, 3).reshape(9, 9)", _MULTI,
       "edge_kronecker_sum: kron(R_A, R_B) instead of kron(R_A^T, R_B^T)"),
    # ---------------------------------------------------------------- solvers/he_ml_stages
    _m("HM1", "solvers/he_ml_stages/covariance.py", "f_nu = 1.0 if not np.isfinite(nu) else (nu + 6.0) / (nu + 8.0)",
       "f_nu = 1.0 if not np.isfinite(nu) else (nu + 8.0) / (nu + 6.0)", _HE_ML,
       "final_covariance: Student-t expected information factor inverted"),
    _m("HM2", "solvers/he_ml_stages/covariance.py", "dof_scale = n_obs / max(n_obs - P, 1.0)",
       "dof_scale = n_obs / max(n_obs - P / 6.0, 1.0)", _HE_ML,
       "final_covariance: degrees of freedom lost to the fit counted in pairs, not observations"),
    _m("HM6", "solvers/gauss_newton.py", "    if not converged:\n        p = p + levenberg_marquardt(",
       "    if False:\n        p = p + levenberg_marquardt(", _HE_ML,
       "damped_gauss_newton: no hand-over to MINPACK when the steps exhaust their budget (a far scale start stays far)"),
    _m("HM3", "solvers/he_ml_stages/collapse.py", "if k * 2 >= n or k == 0:", "if k * 2 > n or k == 0:", _HE_ML,
       "minority_collapse: exactly half the pairs counted a minority"),
    _m("HM4", "solvers/he_ml_stages/reweighting.py", "- 0.5 * k * math.log(math.pi * nu)",
       "- 0.5 * math.log(math.pi * nu)", _HE_ML,
       "t_loglik: Student-t normalising constant (pi nu)^(-1/2) instead of (pi nu)^(-k/2)"),
    _m("HM5", "solvers/he_ml_stages/variance_components.py",
       "logdet = -2.0 * np.log(Linv.diagonal(axis1=-2, axis2=-1)).sum(axis=-1)",
       "logdet = -np.log(Linv.diagonal(axis1=-2, axis2=-1)).sum(axis=-1)", _HE_ML,
       "whitener: log-determinant from the Cholesky factor without the factor 2"),
    # ---------------------------------------------------------------- written after the focused tests
    # A holdout: these were designed once the tests for the survivors above were in, and never used to write a
    # test, so their catch rate says whether those tests check quantities or only the mutants they were made for.
    _m("X1", "calibrate/outliers.py", "runs = 1 + int(np.count_nonzero(x[1:] != x[:-1]))",
       "runs = int(np.count_nonzero(x[1:] != x[:-1]))", _GATE, "runs_z: the number of runs one short (changes only)"),
    _m("X2", "calibrate/uncertainty.py", "zc = z - z.mean(axis=0)", "zc = z", _SIGMA,
       "lag_one_correlation: residuals not centred"),
    _m("X3", "calibrate/uncertainty.py", "q_in = p * (nu - 1.0) / (nu - p) * f_ppf",
       "q_in = p * (nu - 1.0) / (nu - p + 1.0) * f_ppf", _SIGMA,
       "gate: leave-one-out scale factor with the predictive one's denominator"),
    _m("X4", "calibrate/uncertainty.py", "lag = 2.0 * positive.sum(axis=0)", "lag = positive.sum(axis=0)", _SIGMA,
       "autocorrelation_time: truncation lag counted in pairs of lags, not lags"),
    _m("X5", "calibrate/observability.py", "if not (std_deg <= MAX_X_STD_DEG and std_m <= MAX_X_STD_M):",
       "if not (std_deg <= MAX_X_STD_DEG or std_m <= MAX_X_STD_M):", _OBS,
       "X poorly determined only when both its rotation and translation are (or for and)"),
    _m("X6", "calibrate/eye_bias.py", "stretch = t[:, 2:3] * np.array([0.0, 0.0, theta[5]])",
       "stretch = t[:, 2:3] * np.array([0.0, 0.0, theta[4]])", _EYE_BIAS,
       "correct: the turning depth stretch reads the plain one's parameter (index)"),
    _m("X7", "calibrate/bundle.py", "v_rot = (np.sum(xi[:, :3] ** 2) + np.sum(dC[:, :3])) / (3 * N)",
       "v_rot = np.sum(xi[:, :3] ** 2) / (3 * N)", _CORNERS,
       "EM: robot rotation variance without the posterior covariance term"),
    _m("X8", "calibrate/tftree.py", "lo = max(int(e.t_ns[0]) for e in dynamic)", "lo = min(int(e.t_ns[0]) for e in dynamic)",
       _TF, "lookup: the common span starts at the earliest first stamp, not the latest"),
    _m("X9", "vision/pairing.py", "<= np.abs(t[i] - t_query), i - 1, i)", "<= np.abs(t[i] - t_query), i, i - 1)",
       _IMAGES, "_poses_at: the farther of the two bracketing poses taken as the nearest"),
    _m("X10", "solvers/multi_axyb.py", "np.where(a2 / var <= _CHI2_3_GATE, 0.5 / var, 0.0)",
       "np.where(a2 / var <= _CHI2_3_GATE, 1.0 / var, 0.0)", _MULTI,
       "_reference_problem: weights 1 / sigma^2 instead of 1 / (2 sigma^2) (chi-square units lost)"),
    _m("X11", "solvers/he_ml_stages/collapse.py", "if rot_range < MIN_ROT_RANGE_DEG or lam2 < c.NEAR_DEGENERATE_LAMBDA2:",
       "if rot_range < MIN_ROT_RANGE_DEG and lam2 < c.NEAR_DEGENERATE_LAMBDA2:", _HE_ML,
       "minority_collapse: needs both a small range and one axis (and for or)"),
    _m("X12", "vision/checks.py", "u = r / (4.685 * scale)", "u = r / scale", _VISION,
       "_robust_fit: Tukey weights without their tuning constant"),
    # (X13, the free-scale restart started from 1 / r instead of r, is left out as equivalent in effect: the free
    # fit converges to the same optimum from either start, its scale and X differing by 2e-5 and 4 micrometres.)
    # ---------------------------------------------------------------- the newest modules, by another hand
    # Designed without reading the tests of these modules (stamp units, row alignment, the reading choice, the
    # multi-camera edge check, the decisions kept off the last bits), and run once against the suite as it was.
    _m("N1", "calibrate/stamp_units.py", "rate = 1.0 / (step * f) if step > 0", "rate = f / step if step > 0",
       _STAMPS, "plausible: the rate divides by the unit's seconds instead of multiplying the step by them"),
    _m("N2", "calibrate/stamp_units.py", "dur = span * f", "dur = span / f", _STAMPS,
       "plausible: the duration divided by the unit's seconds"),
    _m("N3", "calibrate/stamp_units.py", "return min(a1, b1) - max(a0, b0) >= 0.5 * short",
       "return min(a1, b1) - max(a0, b0) >= 0.5 * long_", _STAMPS,
       "consistency: the overlap asked of half the longer span, not the shorter"),
    _m("N4", "calibrate/stamp_units.py", "return abs(offset_s) >= max_offset_s - min(",
       "return abs(offset_s) >= max_offset_s + min(", _STAMPS,
       "offset_at_edge: the sample period added to the range instead of taken off"),
    _m("N5", "calibrate/row_alignment.py", "MARGIN = 2.0 * float(np.log(100.0))", "MARGIN = float(np.log(100.0))",
       _ROWS, "row alignment: the margin in log units used as a cost (-2 ln) margin"),
    _m("N6", "calibrate/row_alignment.py", "return CAP * np.log1p(chi2 / CAP)", "return np.log1p(chi2 / CAP)", _ROWS,
       "row alignment: the pair cost without its scale (the Gaussian core lost)"),
    _m("N7", "calibrate/row_alignment.py", "SKIP = CAP / 2", "SKIP = CAP * 2", _ROWS,
       "row alignment: a row without a partner four times as dear"),
    _m("N8", "calibrate/reading_choice.py", "    least_all = min(c.against_weight for c in pool)",
       "    least_all = min(c.against_weight for c in kept)", _READINGS,
       "reading choice: a statement checked against the claims of the readings it keeps only"),
    _m("N9", "calibrate/reading_choice.py", "    if st.setup and st.eye_pose and c.eye_pose != st.eye_pose:",
       "    if st.eye_pose and c.eye_pose != st.eye_pose:", _READINGS,
       "reading choice: a stated eye direction binds without a stated setup"),
    _m("N10", "calibrate/firewall.py", "    if x.info[\"x_m\"] > cv.X_IMPOSSIBLE_M:",
       "    if x.info[\"y_m\"] > cv.X_IMPOSSIBLE_M:", _READINGS,
       "physical check: the flange distance read from Y instead of X"),
    _m("N11", "calibrate/multi_edges.py", "        return self.total[self.best] - self.total[READINGS[0]]",
       "        return self.total[READINGS[0]] - self.total[self.best]", _MULTI_EDGES,
       "edge check: the margin of the best reading over the one as read, sign turned"),
    _m("N12", "calibrate/multi_edges.py", "        return sorted((r for r in READINGS if b - self.total[r] < cv.DECISIVE)",
       "        return sorted((r for r in READINGS if b - self.total[r] <= 0.0)", _MULTI_EDGES,
       "edge check: only the best reading counted as fitting (no margin)"),
    _m("N13", "solvers/he_ml_stages/configuration.py", "    return rot > RESOLUTION and trans > RESOLUTION",
       "    return rot > RESOLUTION or trans > RESOLUTION", _DECISIONS,
       "configuration: residuals resolved when either part is above rounding"),
    _m("N14", "solvers/he_ml_stages/configuration.py",
       "    trans = math.sqrt(float(np.mean(r[:, 3:] ** 2))) / scale",
       "    trans = math.sqrt(float(np.mean(r[:, 3:] ** 2)))", _DECISIONS,
       "configuration: the translation residual compared with the resolution in metres, not relative"),
    _m("N15", "solvers/he_ml.py", "he_ml(A, B, configuration=given, noise=noise",
       "he_ml(A, B, configuration=fit.configuration, noise=noise", _DECISIONS,
       "collapse refit: the configuration of the refused minority kept"),
    _m("N16", "solvers/he_ml_stages/camera_drift.py",
       "math.exp(min(max(lsp, -_LOG_SCALE_BOUND), _LOG_SCALE_BOUND))", "math.exp(lsp)", _DECISIONS,
       "motion fit: the trial log-scale not clamped"),
    # ---------------------------------------------------------------- the newest modules, a fourth set
    # Chosen from the code of these modules before their tests were read (held-out pixels, the intrinsics and
    # robot files, the general chain, the planner's own camera and target and its trajectory, the staged
    # calibrate pipeline, the RANSAC fallback for singular samples, the old import paths), and run once.
    _m("F4-01", "calibrate/held_out_pixels.py", "dof = 2.0 * mean * mean / var", "dof = mean * mean / var", _HPX,
       "_scaled_chi2: Satterthwaite degrees of freedom without the factor 2"),
    _m("F4-02", "calibrate/held_out_pixels.py", 'out["m"][v] = npx / 2', 'out["m"][v] = npx', _HPX,
       "leave_one_view_out: corners per view counted as pixel coordinates"),
    _m("F4-03", "calibrate/held_out_pixels.py", "delta = -K @ (g - gv)", "delta = K @ (g - gv)", _HPX,
       "leave_one_view_out: the deletion step with the wrong sign"),
    _m("F4-04", "calibrate/held_out_pixels.py", "K = _sym_inverse(H - Hv)", "K = _sym_inverse(H)", _HPX,
       "leave_one_view_out: the leave-out covariance with the view kept in (H instead of H - H_v)"),
    _m("F4-05", "calibrate/held_out_pixels.py", "B[:npx] * sig], axis=1)", "B[:npx] * sig**2], axis=1)", _HPX,
       "leave_one_view_out: the robot pose error propagated with variances instead of standard deviations"),
    _m("F4-06", "calibrate/held_out.py", "a = (1.0 - level) / 2.0", "a = 1.0 - level", _HPX,
       "rms_interval (held out in mm, deg and pixels): the 95 % interval from one-sided 5 % and 95 % quantiles"),
    _m("F4-07", "models/intrinsics_files.py", "return _make(K[0, 0], K[1, 1], K[0, 2], K[1, 2], wh",
       "return _make(K[0, 0], K[1, 1], K[2, 0], K[2, 1], wh", _INTR,
       "OpenCV YAML: the principal point read from the transposed camera matrix"),
    _m("F4-08", "models/intrinsics_files.py", "return _make(k[0], k[1], k[2], k[3], wh, dist, \"radtan\" if",
       "return _make(k[0], k[2], k[1], k[3], wh, dist, \"radtan\" if", _INTR,
       "Kalibr: intrinsics read as fx, cx, fy, cy instead of fu, fv, pu, pv"),
    _m("F4-09", "models/intrinsics_files.py", 'k = inputs.get("intrinsics_refined") or inputs.get("intrinsics")',
       'k = inputs.get("intrinsics") or inputs.get("intrinsics_refined")', _INTR,
       "kinhec JSON: the intrinsics as given preferred to the refined ones"),
    _m("F4-10", "models/intrinsics_files.py", "PRINCIPAL_POINT_SPAN = 0.25", "PRINCIPAL_POINT_SPAN = 0.5", _INTR,
       "the principal point accepted anywhere in the image (span 0.5 instead of the central half)"),
    _m("F4-11", "models/intrinsics_files.py", "tuple(float(v) for v in k[4:]), model",
       "tuple(float(v) for v in k[5:]), model", _INTR,
       "kinhec JSON: the distortion read from the sixth number on (k1 lost, off by one)"),
    _m("F4-12", "models/robot_files.py", "[-sp, cp * sr, cp * cr]])", "[sp, cp * sr, cp * cr]])", _ROBOT_FILES,
       "rpy_matrix: the last row's sin(pitch) with the wrong sign"),
    _m("F4-13", "models/robot_files.py",
       'T[:3, :3] = rpy_matrix(*np.radians(_numbers(doc.get("rpy_deg", [0, 0, 0]), 3, "tool: rpy_deg")))',
       'T[:3, :3] = rpy_matrix(*_numbers(doc.get("rpy_deg", [0, 0, 0]), 3, "tool: rpy_deg"))', _ROBOT_FILES,
       "DH YAML tool: roll, pitch, yaw in degrees used as radians"),
    _m("F4-14", "models/robot_files.py", "theta_offset_rad=np.radians(cols[\"theta_offset_deg\"])",
       "theta_offset_rad=np.asarray(cols[\"theta_offset_deg\"])", _ROBOT_FILES,
       "DH YAML: theta offsets in degrees used as radians"),
    _m("F4-15", "models/robot_files.py", "        pending = A.T.copy()\n", "        pending = A.copy()\n", _ROBOT_FILES,
       "URDF: the axis alignment not undone after the joint (A instead of A^T)"),
    _m("F4-16", "models/robot_files.py", "a, b = float(lim.lower), float(lim.upper)",
       "a, b = math.radians(float(lim.lower)), math.radians(float(lim.upper))", _ROBOT_FILES,
       "URDF: the joint limits (radians) converted from degrees again"),
    _m("F4-17", "models/robot_files.py", "            pending = pending @ origin\n",
       "            pending = origin @ pending\n", _ROBOT_FILES,
       "URDF: a fixed joint's origin composed on the wrong side"),
    _m("F4-18", "models/robot_files.py", "shoulder = model.joint_frames(home)[1, :3, 3]",
       "shoulder = model.joint_frames(home)[0, :3, 3]", _ROBOT_FILES,
       "default reach measured from the base instead of the first joint frame (off by one)"),
    _m("F4-19", "models/robots.py", "post.append(np.asarray(self.chain[i + 1], dtype=np.float64))",
       "post.append(np.asarray(self.chain[i], dtype=np.float64))", _CHAIN,
       "chain convention: the constant after joint i taken as C_i instead of C_(i+1) (off by one)"),
    _m("F4-20", "planner/inputs.py", "f = math.sqrt(intr.fx * intr.fy)", "f = 0.5 * (intr.fx + intr.fy)", _PLAN_OWN,
       "planner camera: the focal length the arithmetic mean of fx, fy instead of the geometric"),
    # (F4-21, the spec's points rotated by R^T instead of R, is left out as equivalent: the rotation of every
    # target's T_centred_target is the identity or diag(1, -1, -1), its own transpose; F4-42 replaces it.)
    _m("F4-22", "planner/inputs.py", "A[3:, :3] = P @ R", "A[3:, :3] = R @ P", _PLAN_OWN,
       "adjoint: the lower-left block R [p]x instead of [p]x R"),
    _m("F4-23", "planner/trajectory.py", "dwell_s * np.arange(q.shape[0])", "dwell_s * np.arange(1, q.shape[0] + 1)",
       _PLAN_OWN, "trajectory_times: the dwell at the pose arrived at counted before arriving (off by one)"),
    _m("F4-24", "planner/trajectory.py", "pts = np.vstack([q_start[None], q])", "pts = np.vstack([q[:1], q])", _PLAN_OWN,
       "trajectory_times: the first move from the first pose itself, not from the start configuration"),
    _m("F4-25", "calibrate/stages/uncertainty.py", "float(sol.scale * std[k])", "float(std[k])", _PIPE,
       "spread: the scale's standard deviation that of its logarithm (forgotten factor s)"),
    _m("F4-26", "calibrate/stages/uncertainty.py", "        off_std = float(std[k])\n        k += 1\n",
       "        off_std = float(std[k])\n", _PIPE,
       "spread: the scale's standard deviation read at the offset's index (index not advanced)"),
    _m("F4-27", "calibrate/stages/outputs.py", '"rot_deg": np.degrees(np.linalg.norm(r[:, :3], axis=1))',
       '"rot_deg": np.linalg.norm(r[:, :3], axis=1)', _PIPE, "result: rotation residuals in radians labelled degrees"),
    _m("F4-28", "calibrate/stages/outputs.py", "time_offset_s=sol.offset if paired.stamped else None",
       "time_offset_s=sol.offset if paired.estimate_offset else None", _PIPE,
       "result: a given clock offset not reported (estimated only)"),
    _m("F4-29", "calibrate/stages/conventions.py", "u_hand, u_eye = (r.units[1], r.units[0]) if r.swap else r.units",
       "u_hand, u_eye = r.units", _PIPE, "apply_reading: the units not swapped with the files"),
    _m("F4-30", "calibrate/stages/verdict.py", "abs(np.log(r)) > 3 * r_std / r", "abs(np.log(r)) > 3 * r_std", _PIPE,
       "check_scale: the standard deviation of log r without the 1 / r of the delta method"),
    _m("F4-31", "calibrate/stages/rig.py", "J[:, k] = (f(e) - f(-e)) / 2e-7", "J[:, k] = (f(e) - f(-e)) / 1e-7", _RIG,
       "compose_std: the central difference over h instead of 2 h"),
    _m("F4-32", "calibrate/options.py", "eb.prior_std(k_std[1], k_std[0])", "eb.prior_std(k_std[0], k_std[1])", _PIPE,
       "parse_options: the intrinsics' focal and principal point errors swapped in the eye-bias prior"),
    _m("F4-33", "calibrate/options.py", "units=(self.units_hand, self.units_eye) if",
       "units=(self.units_eye, self.units_hand) if", _PIPE, "firewall_options: the hand's and the eye's units swapped"),
    _m("F4-34", "calibrate/inputs.py", 'hand_pose="base_T_ee" if direction == "target_T_cam" else "ee_T_base"',
       'hand_pose="ee_T_base" if direction == "target_T_cam" else "base_T_ee"', _RIG,
       "rig without a body stream: the reference camera's direction read the wrong way round"),
    _m("F4-35", "calibrate/frames.py",
       'HAND_POSES)\n    T = to_metres(s.T, units or s.units or "m")',
       'HAND_POSES)\n    T = to_metres(s.T, s.units or units or "m")', _PIPE,
       "hand_metric: the file's units override the units given"),
    _m("F4-36", "solvers/ransac.py", "usable = np.linalg.cond(CtC) < 1e12", "usable = np.linalg.cond(CtC) > 1e12",
       _RANSAC, "singular samples: the usable ones are the ill-conditioned (comparison flipped)"),
    _m("F4-37", "solvers/ransac.py", "rot_thr = max(rot_thr, _ADAPT", "rot_thr = min(rot_thr, _ADAPT", _RANSAC,
       "adaptive threshold: the rotation threshold may drop below the given one (min for max)"),
    _m("F4-38", "solvers/ransac.py", "_ADAPT * float(np.quantile(trans[best], 0.25))",
       "_ADAPT * float(np.quantile(trans[best], 0.75))", _RANSAC,
       "adaptive threshold: translation noise scale from the upper quartile, not the lower"),
    _m("F4-39", "solvers/ransac.py", "if A.shape[0] < MIN_CONSENSUS:", "if A.shape[0] <= MIN_CONSENSUS:", _RANSAC,
       "fallback: exactly MIN_CONSENSUS motions taken as no consensus (off by one)"),
    _m("F4-40", "util/moved.py", 'return f"kinhec.{new}" + (f".{rest}" if rest else "")', 'return f"kinhec.{new}"',
       _MOVED, "current_name: a module inside a moved package resolves to the package"),
    _m("F4-41", "util/moved.py", "        module.__spec__ = self.spec  #", "        pass  #", _MOVED,
       "_Alias: the module takes the old name's spec"),
    _m("F4-42", "calibrate/stages/outputs.py", "period * np.linspace(-10, 10, 21)", "period * np.linspace(-10, 10, 20)",
       _PIPE, "offset_curve: 20 offsets instead of 21, the estimated one no longer among them (off by one)"),
    # ---------------------------------------------------------------- the newest modules, a fifth set
    # Chosen from the code of these modules alone, before any of their tests was read (the staged one-camera
    # pipeline and the rig, the stamp units, the row alignment, the pairing, the convention firewall and its
    # reading choice, the readings and the readers, the held-out accuracy and the work point, kinhec check, the
    # result, the refinement, the edges of a multi-sensor graph, the options and the inputs, the pose planner and
    # the detection of targets), and run once.
    _m("F5-01", "calibrate/stages/conventions.py", "B = eye_solver_form(eye, r.eye_pose, u_eye, setup)",
       "B = eye_solver_form(eye, r.eye_pose, u_hand, setup)", _F5_STAGES,
       "apply_reading: the eye file converted with the hand file's units (copy-paste)"),
    _m("F5-02", "calibrate/stages/pairing.py", "out.period_s = min(ph, pe)", "out.period_s = max(ph, pe)",
       _F5_STAGES, "_by_time: the offset curve's step and the offset's edge tolerance from the longer sample "
       "period instead of the shorter"),
    _m("F5-03", "calibrate/stages/solve.py", 'eye_in_hand=cv.setup != "eye_to_hand"',
       'eye_in_hand=cv.setup == "eye_to_hand"', _F5_STAGES,
       "solve: the eye poses' systematic error applied in the camera frame of the other setup (inverted test)"),
    _m("F5-04", "calibrate/stages/uncertainty.py", "return Spread(std[0:6], std[6:12], off_std, scale_std)",
       "return Spread(std[6:12], std[0:6], off_std, scale_std)", _F5_SPREAD,
       "spread: the standard deviations of X and Y exchanged (wrong slice)"),
    _m("F5-05", "calibrate/stages/verdict.py", "if n_out > 0.2 * n:", "if n_out > 0.2:", _F5_STAGES,
       "judge: the outlier-share warning for any outlier (the factor n forgotten)"),
    _m("F5-06", "calibrate/stages/verdict.py", "if not (lo < r < hi) and (not np.isfinite(r_std)",
       "if not (lo < r < hi) or (not np.isfinite(r_std)", _F5_VERDICT_SCALE,
       "check_scale: the monocular warning on a ratio out of range or a significant one (or for and)"),
    _m("F5-07", "calibrate/stages/outputs.py", '"trans_mm": 1000 * np.linalg.norm(r[:, 3:], axis=1),',
       '"trans_mm": np.linalg.norm(r[:, 3:], axis=1),', _F5_STAGES,
       "result: per-pair translation residuals in metres labelled mm"),
    _m("F5-08", "calibrate/stages/outputs.py", "point_cam_m=ho.default_point(A_and_B[1], cv.setup, sol.scale)",
       "point_cam_m=ho.default_point(A_and_B[0], cv.setup, sol.scale)", _F5_POINT,
       "result: the default work point from the hand poses instead of the eye poses (wrong index)"),
    _m("F5-09", "calibrate/stages/rig.py", "C_all = {k: r.cov[:6, :6] for k, r in per.items()}",
       "C_all = {k: r.cov[6:12, 6:12] for k, r in per.items()}", _F5_RIG,
       "_rig: camera-to-camera deviations composed from each camera's Y covariance instead of X's"),
    _m("F5-10", "calibrate/stamp_units.py", "rate = 1.0 / (step * f) if step > 0 else float(\"inf\")",
       "rate = 1.0 / step * f if step > 0 else float(\"inf\")", _F5_STAMPS,
       "plausible: the rate as f / step instead of 1 / (step f) (operator precedence)"),
    _m("F5-11", "calibrate/stamp_units.py", "return abs(offset_s) >= max_offset_s - min(",
       "return offset_s >= max_offset_s - min(", _F5_STAMPS,
       "offset_at_edge: a refined offset at the negative edge never refused (missing abs)"),
    _m("F5-12", "calibrate/row_alignment.py", "fewest = (max(0, -d), max(0, d))", "fewest = (max(0, d), max(0, -d))",
       _F5_ROWS, "align_rows: the rows left out charged to the shorter file instead of the longer (swapped)"),
    _m("F5-13", "calibrate/pairing.py", "shift = +1.0  # eye stamp = hand time + offset",
       "shift = -1.0  # eye stamp = hand time + offset", _F5_PAIRING,
       "TimePairing: the clock offset's sign reversed when the eye stream is the one interpolated"),
    _m("F5-14", "calibrate/pairing.py",
       "rows = np.concatenate([pairing.A.reshape(n, -1), pairing.B.reshape(n, -1)], axis=1)",
       "rows = pairing.A.reshape(n, -1)", _F5_PAIRING,
       "drop_repeated_pairs: a pair dropped when only its hand pose repeats (eye pose not compared)"),
    _m("F5-15", "calibrate/firewall.py", "ratio = c_e / (fit.scale * c_h) if fit.scale > 0 else float(\"nan\")",
       "ratio = c_h / (fit.scale * c_e) if fit.scale > 0 else float(\"nan\")", _F5_FIREWALL,
       "_score_all: the metric ratio of the eye translations with the unit factors inverted (mm/m)"),
    _m("F5-16", "calibrate/firewall.py", "coarse = pr.CoarseOffset(-coarse.offset_s)",
       "coarse = pr.CoarseOffset(coarse.offset_s)", _F5_FIREWALL,
       "_apply: a given clock offset keeps its sign when the files are exchanged"),
    _m("F5-17", "calibrate/reading_choice.py", "if st.setup and st.eye_pose and c.eye_pose != st.eye_pose:",
       "if st.eye_pose and c.eye_pose != st.eye_pose:", _F5_CHOICE,
       "_keeps: a stated eye direction narrows the readings without a stated setup"),
    _m("F5-18", "calibrate/readings.py",
       "M = np.concatenate([RA - np.eye(3), -(tB @ R.T)[:, :, None]], axis=2)",
       "M = np.concatenate([RA - np.eye(3), -(tB @ R)[:, :, None]], axis=2)", _F5_READINGS,
       "fit_class: the eye translations turned by R^T instead of R (row vectors, forgotten transpose)"),
    _m("F5-19", "calibrate/readers.py", "M[:, :3, :3] = data[:, 9:18].reshape(-1, 3, 3)",
       "M[:, :3, :3] = data[:, 9:18].reshape(-1, 3, 3).transpose(0, 2, 1)", _F5_READERS,
       "_read_tabb: cali.txt rotations read column-major (transposed)"),
    _m("F5-20", "calibrate/readers.py", "lines = lines[::4]", "lines = lines[3::4]", _F5_READERS,
       "_read_tabb: a 4x4 block's line number taken from its last row instead of its first (off by 3)"),
    _m("F5-21", "calibrate/held_out.py", "T, C = Y, cov[6:12, 6:12]", "T, C = Y, cov[0:6, 0:6]", _F5_HELD,
       "point_error: eye-to-hand, the work point's error from X's covariance instead of Y's"),
    _m("F5-22", "calibrate/held_out.py", "return p / scale if scale else p", "return p * scale if scale else p",
       _F5_HELD, "default_point: the eye translations multiplied by the scale instead of divided"),
    _m("F5-23", "calibrate/check.py", "p = min(1.0, 2 * min(p_w, p_q))", "p = min(p_w, p_q)", _F5_CHECK,
       "consistency: the two tests combined without the Bonferroni factor 2"),
    _m("F5-24", "calibrate/check.py", "V = tau * Hinv + cov0", "V = Hinv + cov0", _F5_CHECK,
       "consistency: the new pairs' covariance not inflated by the stored correlation factor tau"),
    _m("F5-25", "calibrate/result.py", "tr = 1000 * xs[3:].max()", "tr = xs[3:].max()", _F5_RESULT,
       "verdict: X's translation deviation in metres printed as mm"),
    _m("F5-26", "calibrate/result.py", '{"value": 1000 * float(self.time_offset_s), "std"',
       '{"value": float(self.time_offset_s), "std"', _F5_RESULT,
       "sigma: the clock offset's value in seconds under time_offset_ms"),
    _m("F5-27", "calibrate/solve.py", 'return _floor(S), dof / (dof - 7.0), "full"',
       'return _floor(S), dof / (dof - 6.0), "full"', _F5_SOLVE,
       "_noise_model: the small-sample factor of a full 6x6 covariance dof / (dof - 6) instead of dof / (dof - 7)"),
    _m("F5-28", "calibrate/solve.py", "return bool(out[0] <= out[1])", "return bool(out[0] >= out[1])", _F5_SOLVE,
       "choose_domain: the residual domain whose noise fits worse (inverted comparison)"),
    _m("F5-29", "calibrate/multi_edges.py", "return {r: float(cls[int(r[0] != r[1])]) for r in READINGS}",
       "return {r: float(cls[int(r[1])]) for r in READINGS}", _F5_EDGES,
       "_own_scores: an edge's direction class from the eye's inversion alone (both files inverted scored as one)"),
    _m("F5-30", "calibrate/options.py", "quat=(self.quat_hand, self.quat_eye) if self.quat_order is not None",
       "quat=(self.quat_eye, self.quat_hand) if self.quat_order is not None", _F5_OPTIONS,
       "firewall_options: per-file quaternion orders given to the firewall exchanged"),
    _m("F5-31", "calibrate/option_values.py", "np.isfinite(v) and v >= 0 for v in vals",
       "np.isfinite(v) and v > 0 for v in vals", _F5_OPTIONS,
       "nonnegative_pair: a zero level refused (> for >=)"),
    _m("F5-32", "calibrate/frames.py", 'return "T_ee_marker", "T_base_cam"', 'return "T_base_cam", "T_ee_marker"',
       _F5_FRAMES, "names: eye-to-hand X and Y names exchanged"),
    _m("F5-33", "calibrate/inputs.py", 'setup = setup_ds if opts.setup != "rig" else opts.setup',
       "setup = opts.setup", _F5_INPUTS,
       "_dataset: a kinhec dataset's own setup ignored (the default eye-in-hand kept)"),
    _m("F5-34", "planner/plan.py", "q_wxyz = np.array([a[6], a[3], a[4], a[5]]) / nq",
       "q_wxyz = np.array([a[3], a[4], a[5], a[6]]) / nq", _F5_PLAN,
       "pose_from_xyz_qxyzw: qx qy qz qw read as w x y z"),
    _m("F5-35", "planner/plan.py", "stop_var = None if stop_std_mm is None else (stop_std_mm / 1000.0) ** 2",
       "stop_var = None if stop_std_mm is None else stop_std_mm / 1000.0", _F5_PLAN,
       "plan_poses: stop_std_mm compared as a variance without squaring it"),
    _m("F5-36", "planner/candidates.py", "m = math.radians(limits.limit_margin_deg)",
       "m = limits.limit_margin_deg", _F5_CAND,
       "feasibility: the joint-limit margin in degrees used as radians"),
    _m("F5-37", "planner/candidates.py", "uv[..., 1], cam.height_px - uv[..., 1]])",
       "uv[..., 1], cam.width_px - uv[..., 1]])", _F5_CAND,
       "_in_view: the bottom border measured from the image width (copy-paste)"),
    _m("F5-38", "planner/model.py",
       "r.append(math.inf if unidentified[0] else math.degrees(math.sqrt(max(np.trace(cov[:3, :3]), 0.0))))",
       "r.append(math.inf if unidentified[0] else math.sqrt(max(np.trace(cov[:3, :3]), 0.0)))", _F5_PLAN,
       "sigma_curve: rot_rms_deg in radians"),
    _m("F5-39", "vision/detect.py", "[detections[i].uv_px for i in used], T[used])",
       "[detections[i].uv_px for i in used], T[: len(used)])", _F5_DETECT,
       "observations_from_detections: hand poses not skipped with the rejected views (misaligned pairs)"),
    # ---------------------------------------------------------------- the first three audits (solvers, bounds,
    # calibrate, suite, report): survivors of the audit of commit 0e5f4eb re-targeted, then two fresh sets
    _m('he_ml_scale_column_sign', 'solvers/he_ml_stages/reweighting.py', 'Jr[:, 3:, 12] = k * Ci[:, :3, 3]',
       'Jr[:, 3:, 12] = -k * Ci[:, :3, 3]',
       ['tests/test_jacobians.py', 'tests/test_he_ml.py'],
       "sign of the log-scale column of he_ml's analytic Jacobian [S]"),
    _m('he_ml_dof_correction', 'solvers/he_ml_stages/covariance.py', 'dof_scale = n_obs / max(n_obs - P, 1.0)',
       'dof_scale = 1.0',
       ['tests/test_consistency.py', 'tests/test_he_ml.py'],
       "he_ml's degrees-of-freedom correction of the variance components dropped [S]"),
    _m('he_ml_student_t_information', 'solvers/he_ml_stages/covariance.py', 'f_nu = 1.0 if not np.isfinite(nu) else (nu + 6.0) / (nu + 8.0)',
       'f_nu = 1.0',
       ['tests/test_consistency.py', 'tests/test_he_ml.py'],
       "he_ml's Student-t information factor of the covariance ignored [S]"),
    _m('pixels_em_posterior_term', 'solvers/he_ml_stages/pixels.py', 'v_rot_new = max(float(np.sum(xi[:, :3] ** 2) + np.sum(d[:, :3])) / (3 * n), _VAR_FLOOR)',
       'v_rot_new = max(float(np.sum(xi[:, :3] ** 2)) / (3 * n), _VAR_FLOOR)',
       ['tests/test_consistency.py', 'tests/test_he_ml_pixels.py'],
       'pixel stage: EM update of the robot rotation variance without its posterior-variance term [S]'),
    _m('pixels_covariance_schur', 'solvers/he_ml_stages/pixels.py', 'S, _ = _schur(Htt, Htx, np.linalg.inv(Hxx))',
       'S = Htt',
       ['tests/test_consistency.py', 'tests/test_he_ml_pixels.py'],
       'pixel stage: covariance without the Schur complement (robot errors not marginalised) [S]'),
    _m('bounds_interpolation_factor', 'evaluate/bounds.py', 'return (1.0 - w) ** 2 + w**2',
       'return np.ones_like(w)',
       ['tests/test_bound_branches.py', 'tests/test_bounds.py'],
       'bound: the variance factor of an interpolated robot pose dropped [S]'),
    _m('bounds_vo_student_t', 'evaluate/bounds.py', 'var = var * dof / (dof - 2.0)',
       'var = var',
       ['tests/test_bound_branches.py', 'tests/test_bounds.py'],
       'bound: the Student-t variance factor of visual-odometry increments dropped [S]'),
    _m('bounds_robot_student_t_ignored', 'evaluate/bounds.py', 'f = 1.0 / student_t_information_factor(robot_student_t_dof(config))',
       'f = 1.0',
       ['tests/test_bound_branches.py', 'tests/test_bounds.py'],
       "bound: the robot Student-t information factor ignored (the nested-config bug's effect) [S]"),
    _m('bounds_robot_student_t_flat_key', 'evaluate/bounds.py', 'f = 1.0 / student_t_information_factor(robot_student_t_dof(config))',
       'f = 1.0 / student_t_information_factor(config.get("robot_student_t_dof"))',
       ['tests/test_bound_branches.py', 'tests/test_bounds.py'],
       'bound: the robot Student-t degrees of freedom read from the flat key (the bug as it was) [S]'),
    _m('calibrate_jacobian_sign', 'calibrate/solve.py', 'J[:, 3:, 0:3] = se3.hat(t_pred)',
       'J[:, 3:, 0:3] = -se3.hat(t_pred)',
       ['tests/test_jacobians.py', 'tests/test_calibrate_synthetic.py'],
       'calibrate: a sign in the X-rotation block of the analytic Jacobian (eye-in-hand) [S]'),
    _m('pairing_gap_factor', 'calibrate/pairing.py', 'GAP_FACTOR = 3.0',
       'GAP_FACTOR = 300.0',
       ['tests/test_calibrate_synthetic.py', 'tests/test_calibrate_formats.py', 'tests/test_calibrate_cli.py'],
       'calibrate: gap detection of the pairing effectively off [S]'),
    _m('observability_lambda2', 'calibrate/observability.py', 'elif lam2 < MIN_LAMBDA2 and one_axis is None:',
       'elif lam2 < MIN_LAMBDA2 / 100.0 and one_axis is None:',
       ['tests/test_calibrate_synthetic.py', 'tests/test_calibrate_cli.py'],
       'calibrate: the axis-scatter warning threshold 100x looser [S]'),
    _m('suite_drift_nan', 'evaluate/suite/checks.py', 'if not (x == y or (math.isnan(x) and math.isnan(y))):',
       'if False:',
       ['tests/test_suite.py'],
       'suite drift ignores values that turn NaN or infinite [S]'),
    _m('recipe_json_depth_std', 'synth/recipe_json.py', 'camera_trans_std_z_m=trans[2]',
       'camera_trans_std_z_m=trans[1]',
       ['tests/test_published_format.py', 'tests/test_tiers.py', 'tests/test_generator.py'],
       'published config: the depth std read from the lateral entry [S]'),
    _m('report_best_is_worst', 'report/data.py', 'best = min(oracle, key=lambda r: r[3])',
       'best = max(oracle, key=lambda r: r[3])',
       ['tests/test_report.py', 'tests/test_report_browser.py'],
       "report: the sequence table's best solver is the worst [S]"),
    _m('report_quaternion_w_first', 'report/calibration.py', 'for v in (q[1], q[2], q[3], q[0])',
       'for v in (q[0], q[1], q[2], q[3])',
       ['tests/test_report.py', 'tests/test_report_browser.py'],
       'report: the calibration page prints the quaternion w first under an x, y, z, w label [S]'),
    _m('schema_half_open_upper', 'synth/tier_schema.py', '(x >= f.hi if f.hi_open else x > f.hi)',
       '(x > f.hi)',
       ['tests/test_tiers.py'],
       'tier schema: a half-open upper bound treated as closed [S]'),
    _m('lsq_first_step', 'geometry/lsq.py', 'vals_b[:, c] = df[ok] / dx[s.row_view[ok]]',
       'vals_b[:, c] = df[ok] / dx[0]',
       ['tests/test_jacobians.py', 'tests/test_reprojection.py'],
       "block Jacobian: every view divided by the first view's finite-difference step [S]"),
    _m('shards_ignore_ids', 'io/shards.py', 'if st.null_count != 0 or st.min != expected[k] or st.max != expected[k]:',
       'if st.null_count != 0:',
       ['tests/test_io.py', 'tests/test_resume.py'],
       "shard status ignores the row groups' sequence ids [S]"),
    _m('pm_robot_jacobian_sign', 'solvers/pair_model.py', 'G = -AdCi @ AdXi',
       'G = AdCi @ AdXi',
       ['tests/test_jacobians.py', 'tests/test_bounds.py', 'tests/test_he_ml.py'],
       'pair model: sign of the robot-twist Jacobian G (eye-in-hand) [F]'),
    _m('pm_adjoint_row', 'solvers/pair_model.py', 'out[..., 3, :3] = ty * r2 - tz * r1',
       'out[..., 3, :3] = tz * r1 - ty * r2',
       ['tests/test_jacobians.py', 'tests/test_bounds.py', 'tests/test_he_ml.py'],
       'pair model: a row of hat(t) R in the adjoint [F]'),
    _m('pm_scale_direction', 'solvers/pair_model.py', '(np.swapaxes(C[:, :3, :3], 1, 2) @ C[:, :3, 3, None])',
       '(C[:, :3, :3] @ C[:, :3, 3, None])',
       ['tests/test_jacobians.py', 'tests/test_bounds.py', 'tests/test_he_ml.py'],
       'pair model: scale direction R t instead of R^T t [F]'),
    _m('pm_camera_depth_axis', 'solvers/pair_model.py', 'D = np.array([xy_std**2, xy_std**2, z_std**2])',
       'D = np.array([z_std**2, xy_std**2, xy_std**2])',
       ['tests/test_consistency.py', 'tests/test_bounds.py', 'tests/test_he_ml.py'],
       'pair model: the depth noise on the camera x axis instead of z [F]'),
    _m('wls_scale_factor', 'solvers/he_ml_stages/reweighting.py', 'Jr[:, 3:] *= k',
       'Jr[:, 3:] *= 1.0',
       ['tests/test_jacobians.py', 'tests/test_he_ml.py'],
       'he_ml: the scale factor of the translation rows of the Jacobian dropped [F]'),
    _m('wls_gate', 'solvers/he_ml_stages/reweighting.py', 'CHI2_GATE = 22.4577',
       'CHI2_GATE = 12.5916',
       ['tests/test_consistency.py', 'tests/test_he_ml.py'],
       'he_ml: the inlier gate at the 95 % instead of the 99.9 % quantile of chi2(6) [F]'),
    _m('t_density_constant', 'solvers/he_ml_stages/reweighting.py', '0.5 * k * math.log(math.pi * nu)',
       '0.5 * k * math.log(nu)',
       ['tests/test_consistency.py', 'tests/test_he_ml.py'],
       'he_ml: the Student-t log density without its pi (the bug fixed here, put back) [F]'),
    _m('motion_fit_scale_columns', 'solvers/he_ml_stages/camera_drift.py', 'J[:, :, 3:6] *= s',
       'J[:, :, 3:6] *= 1.0',
       ['tests/test_jacobians.py', 'tests/test_he_ml.py'],
       'he_ml motion fit: the scale of the translation columns dropped [F]'),
    _m('pixels_normals_cross', 'solvers/he_ml_stages/pixels.py', 'Jr[..., :3] = np.cross(Pp, a)',
       'Jr[..., :3] = np.cross(a, Pp)',
       ['tests/test_jacobians.py', 'tests/test_he_ml_pixels.py'],
       'pixel stage: the rotation rows of the pixel Jacobian with the cross product reversed [F]'),
    _m('pixels_reml_term', 'solvers/he_ml_stages/pixels.py', '+ float(np.sum(self.yy - bu)) / s2 + logdet_t - 12 * p[0])',
       '+ float(np.sum(self.yy - bu)) / s2)',
       ['tests/test_consistency.py', 'tests/test_jacobians.py', 'tests/test_he_ml_pixels.py'],
       'pixel stage: the marginal likelihood of the levels without the restricted term of X and Y [F]'),
    _m('bounds_jitter_dropped', 'evaluate/bounds.py',
       'cov += _jitter_covariance(_body_velocity(seq, idx, t), _body_acceleration(seq, t), jit)',
       'cov += 0.0 * _jitter_covariance(_body_velocity(seq, idx, t), _body_acceleration(seq, t), jit)',
       ['tests/test_bound_branches.py', 'tests/test_bounds.py'],
       'bound: the camera time-stamp jitter term dropped [F]'),
    _m('bounds_joint_frame', 'evaluate/bounds.py', 'Jf = np.concatenate([Rt @ Jb[:, :3], Rt @ Jb[:, 3:]], axis=1)',
       'Jf = Jb',
       ['tests/test_bound_branches.py', 'tests/test_bounds.py'],
       'bound: encoder noise through the base-frame Jacobian instead of the flange frame [F]'),
    _m('bounds_velocity_step', 'evaluate/bounds.py', 'return se3.se3_log(se3.invert_transform(T0, check=False) @ T1, check=False) / (2 * h)',
       'return se3.se3_log(se3.invert_transform(T0, check=False) @ T1, check=False) / h',
       ['tests/test_bound_branches.py', 'tests/test_bounds.py'],
       'bound: the flange velocity of the jitter term twice too large [F]'),
    _m('bounds_camera_student_t', 'evaluate/bounds.py', '        f = 1.0 / student_t_information_factor(dof)\n        camera_cov = f *',
       '        f = 1.0\n        camera_cov = f *',
       ['tests/test_bound_branches.py', 'tests/test_bounds.py'],
       'bound: the camera Student-t information factor dropped [F]'),
    _m('calibrate_small_sample', 'calibrate/solve.py', 'return _floor(S), dof / (dof - 7.0), "full"',
       'return _floor(S), 1.0, "full"',
       ['tests/test_consistency.py', 'tests/test_calibrate_synthetic.py'],
       'calibrate: the small-sample factor of the covariance dropped [F]'),
    _m('calibrate_eth_jacobian_sign', 'calibrate/solve.py', 'J[:, 3:, 6:9] = se3.hat(t_pred)',
       'J[:, 3:, 6:9] = -se3.hat(t_pred)',
       ['tests/test_jacobians.py', 'tests/test_calibrate_synthetic.py'],
       'calibrate: a sign of the eye-to-hand Jacobian [F]'),
    _m('calibrate_scale_column_sign', 'calibrate/solve.py', 'J[:, 3:, self.k_scale] = s * t_pred',
       'J[:, 3:, self.k_scale] = -s * t_pred',
       ['tests/test_jacobians.py', 'tests/test_calibrate_synthetic.py'],
       'calibrate: sign of the scale column of the Jacobian [F]'),
    _m('observability_rot_range', 'calibrate/observability.py', 'if rot_range < MIN_ROT_RANGE_DEG:',
       'if rot_range < MIN_ROT_RANGE_DEG / 10.0:',
       ['tests/test_calibrate_synthetic.py', 'tests/test_calibrate_cli.py'],
       'calibrate: the rotation-range warning threshold 10x looser [F]'),
    _m('pairing_outside_stream', 'calibrate/pairing.py', 'inside = (tq >= self.t[0]) & (tq <= self.t[-1])',
       'inside = np.ones(tq.shape, dtype=bool)',
       ['tests/test_calibrate_synthetic.py', 'tests/test_calibrate_formats.py'],
       'calibrate: samples outside the other stream are paired (extrapolated) [F]'),
    _m('suite_drift_tolerance', 'evaluate/suite/checks.py', 'tol = abs_tol + rel_tol * max(abs(x), abs(y))',
       'tol = abs_tol + 10.0 * rel_tol * max(abs(x), abs(y))',
       ['tests/test_suite.py'],
       'suite drift: the relative tolerance 10x looser [F]'),
    _m('recipe_json_robot_dof', 'synth/recipe_json.py', 'robot_student_t_dof=rn["student_t_dof"]',
       'robot_student_t_dof=None',
       ['tests/test_published_format.py', 'tests/test_generator.py'],
       'published config: the robot Student-t degrees of freedom dropped [F]'),
    _m('report_median_is_mean', 'report/data.py', '"median_rot": _round(np.median([r[3] for r in oracle]))',
       '"median_rot": _round(np.mean([r[3] for r in oracle]))',
       ['tests/test_report.py'],
       "report: the sequence table's median rotation error is a mean [F]"),
    _m('schema_lower_bound_open', 'synth/tier_schema.py', 'if f.lo is not None and x < f.lo:',
       'if f.lo is not None and x <= f.lo:',
       ['tests/test_tiers.py'],
       'tier schema: every lower bound treated as open [F]'),
    _m('lsq_step_size', 'geometry/lsq.py', 'eps = np.finfo(float).eps ** (1.0 / 3.0 if central else 0.5)',
       'eps = 1e-3',
       ['tests/test_jacobians.py', 'tests/test_reprojection.py'],
       'block Jacobian: a finite-difference step of 1e-3 [F]'),
    _m('he_ml_cov_outliers', 'solvers/he_ml_stages/covariance.py', 'Ji = J[inl]',
       'Ji = J',
       ['tests/test_consistency.py', 'tests/test_he_ml.py'],
       'he_ml: the information summed over the outliers too [F2]'),
    _m('he_ml_settled_sinv', 'solvers/he_ml_stages/covariance.py', 'Sinv = Sinv / dof_scale',
       'Sinv = Sinv',
       ['tests/test_consistency.py', 'tests/test_he_ml.py'],
       "he_ml: the settled round's inverse covariances not corrected [F2]"),
    _m('scale_drift_start_step', 'solvers/he_ml_stages/scale_drift.py', 'sigma_d = max(float(np.std(np.diff(d))) / 2.0, 1e-6)',
       'sigma_d = max(float(np.std(np.diff(d))) * 2.0, 1e-6)',
       ['tests/test_jacobians.py', 'tests/test_he_ml.py'],
       "he_ml scale drift: the walk's starting step 4x larger [F2]"),
    _m('scale_drift_em_covariance', 'solvers/he_ml_stages/scale_drift.py', 'var[1:] = var[1:] + var[:-1] - 2.0 * cov.cov_q_lag1',
       'var[1:] = var[1:] + var[:-1]',
       ['tests/test_jacobians.py', 'tests/test_he_ml.py'],
       "he_ml scale drift: EM step without the offsets' posterior covariance [F2]"),
    _m('pixels_no_prior_block', 'solvers/he_ml_stages/pixels.py', 'Hxx = (GT @ MG) / s2 + Lam',
       'Hxx = (GT @ MG) / s2',
       ['tests/test_consistency.py', 'tests/test_jacobians.py', 'tests/test_he_ml_pixels.py'],
       "pixel stage: the twists' block without their prior [F2]"),
    _m('pixels_em_dof', 'solvers/he_ml_stages/pixels.py', 'dof = max(2 * prob.n_pts - 12, 1)',
       'dof = max(2 * prob.n_pts, 1)',
       ['tests/test_consistency.py', 'tests/test_he_ml_pixels.py'],
       "pixel stage: the EM pixel variance without the fit's dof [F2]"),
    _m('bounds_robot_sandwich', 'evaluate/bounds.py', 'Sigma = Sigma + np.einsum("nij,njk,nlk->nil", G, robot_cov, G)',
       'Sigma = Sigma + np.einsum("nij,njk,nkl->nil", G, robot_cov, G)',
       ['tests/test_bound_branches.py', 'tests/test_bounds.py'],
       'bound: the robot covariance carried as G S G instead of G S G^T [F2]'),
    _m('bounds_vo_first_increment', 'evaluate/bounds.py', 'inc[0] = 0.0',
       'inc[0] = inc[0]',
       ['tests/test_bound_branches.py', 'tests/test_bounds.py'],
       "bound: the VO walk's error at its first frame not zero [F2]"),
    _m('bounds_median_radians', 'evaluate/bounds.py', 'return math.degrees(out[0]), 1000.0 * out[1]',
       'return out[0], 1000.0 * out[1]',
       ['tests/test_bound_branches.py', 'tests/test_bounds.py'],
       'bound: the median rotation error in radians [F2]'),
    _m('calibrate_noise_dof', 'calibrate/solve.py', 'dof = max(fit_dof, 1.0)',
       'dof = max(float(inl.sum()), 1.0)',
       ['tests/test_calibrate_noise_dof.py', 'tests/test_consistency.py', 'tests/test_calibrate_synthetic.py'],
       "calibrate: the noise covariance without the fit's dof [F2]"),
    _m('calibrate_gate', 'calibrate/solve.py', 'inl = d2 < CHI2_6_9999',
       'inl = d2 < 2.0 * CHI2_6_9999',
       ['tests/test_consistency.py', 'tests/test_calibrate_synthetic.py', 'tests/test_calibrate_cli.py'],
       'calibrate: the outlier gate twice as wide [F2]'),
    _m('recipe_json_lateral_from_depth', 'synth/recipe_json.py', 'camera_trans_std_m=trans[0]',
       'camera_trans_std_m=trans[2]',
       ['tests/test_published_format.py', 'tests/test_generator.py'],
       'published config: the lateral std read from the depth entry [F2]'),
    _m('pm_robot_covariance_sandwich', 'solvers/pair_model.py', 'return np.einsum("nij,j,nkj->nik", G, d, G)',
       'return np.einsum("nij,j,njk->nik", G, d, G)',
       ['tests/test_consistency.py', 'tests/test_jacobians.py', 'tests/test_bounds.py'],
       'pair model: the robot covariance G D G instead of G D G^T [F2]'),
    _m('multi_scale_column_sign', 'solvers/multi_axyb.py', 'out[:, 3:, 12] = k[:, None] * Ci[:, :3, 3]',
       'out[:, 3:, 12] = -k[:, None] * Ci[:, :3, 3]',
       ['tests/test_jacobians.py', 'tests/test_multi.py'],
       'multi_axyb: sign of the log-scale column of the local Jacobian [F2]'),
    _m('lsq_central_forward', 'geometry/lsq.py', 'xm[idx] -= h_all[idx]',
       'xm[idx] -= 0.0',
       ['tests/test_jacobians.py', 'tests/test_reprojection.py'],
       'block Jacobian: the central differences one-sided [F2]'),
    _m('report_translation_metres', 'report/calibration.py', '", ".join(_fmt(1e3 * v, 5) for v in T[:3, 3])',
       '", ".join(_fmt(v, 5) for v in T[:3, 3])',
       ['tests/test_report.py'],
       "report: the calibration page's translation in metres under [mm] [F2]"),

    # ---------------------------------------------------------------- the newest modules, a sixth set
    # Chosen from the code of these modules alone, without reading any test (one mutant per module, 38 modules:
    # the staged one-camera pipeline and the rig, the stamps, rows, pairing and the convention firewall, the
    # held-out accuracy, kinhec check, the result, the refinement, the multi-sensor edges, the corners, the
    # exports, the options and inputs, the intrinsics and robot files, the planner and the vision), and run once.
    _m("F6-01", "calibrate/stages/conventions.py", "    warn += dec.warnings\n", "    notes += dec.warnings\n",
       _F6_STAGES, "apply_reading: the firewall's warnings filed among the notes"),
    _m("F6-02", "calibrate/stages/pairing.py", "out.period_s = min(ph, pe)", "out.period_s = max(ph, pe)", _F6_STAGES,
       "pair by time: the sample period (the offset curve's step, the edge zone) that of the slower stream"),
    _m("F6-03", "calibrate/stages/solve.py",
       'freed = not scale and not fixed_scale and fit.get("scale_prior_std") is None',
       'freed = not scale and not fixed_scale and fit.get("scale_prior_std") is not None', _F6_STAGES,
       "solve: the scale taken as freed when its prior was kept (test inverted)"),
    _m("F6-04", "calibrate/stages/uncertainty.py", "std = np.sqrt(np.maximum(np.diag(sol.cov), 0.0))",
       "std = np.maximum(np.diag(sol.cov), 0.0)", _F6_SPREAD,
       "spread: variances reported as standard deviations (forgotten square root)"),
    _m("F6-05", "calibrate/stages/verdict.py", 'obs["n_inliers"] = int(sol.inliers.sum())',
       'obs["n_inliers"] = int((~sol.inliers).sum())', _F6_VERDICT,
       "judge: the number of inliers counts the outliers"),
    _m("F6-06", "calibrate/stages/outputs.py", "outliers=np.flatnonzero(~sol.inliers).tolist()",
       "outliers=np.flatnonzero(sol.inliers).tolist()", _F6_OUTPUTS,
       "result: the outlier list holds the inliers' indices (forgotten negation)"),
    _m("F6-07", "calibrate/stages/camera.py", "solved = solve(cv, paired, opts, eye_bias_prior)",
       "solved = solve(cv, paired, opts)", _F6_CAMERA,
       "solve_camera: the eye poses' systematic-error prior not passed to the refinement"),
    _m("F6-08", "calibrate/stages/rig.py", "C_all = {k: r.cov[:6, :6] for k, r in per.items()}",
       "C_all = {k: r.cov[6:12, 6:12] for k, r in per.items()}", _F6_RIG,
       "rig: camera-to-camera standard deviations composed from Y's covariance block instead of X's"),
    _m("F6-09", "calibrate/stamp_units.py", "    dur = span * f\n", "    dur = span / f\n", _F6_STAMPS,
       "plausible: the duration divided by the seconds per unit instead of multiplied"),
    _m("F6-10", "calibrate/row_alignment.py", "sig = 1.4826 * np.median(np.abs(r), axis=0)",
       "sig = np.median(np.abs(r), axis=0)", _F6_ROWS,
       "row alignment: the noise scale from the median absolute residual without the factor 1.4826"),
    _m("F6-11", "calibrate/pairing.py", "s = (tc - self.t[i]) / (self.t[i + 1] - self.t[i])",
       "s = (self.t[i + 1] - tc) / (self.t[i + 1] - self.t[i])", _F6_PAIRING,
       "Interpolator: the interpolation fraction measured from the wrong end of the interval"),
    _m("F6-12", "calibrate/firewall.py", "ratio = c_e / (fit.scale * c_h) if fit.scale > 0",
       "ratio = c_h / (fit.scale * c_e) if fit.scale > 0", _F6_FIREWALL,
       "scoring: the eye-to-hand translation ratio inverted (units' factors swapped)"),
    _m("F6-13", "calibrate/reading_choice.py", "if c.against_weight <= least + _TOL] if least <= _TOL else kept",
       "if c.against_weight <= least + _TOL] if least > _TOL else kept", _F6_CHOICE,
       "choice: the files' claims decide only when every reading contradicts one (branch inverted)"),
    _m("F6-14", "calibrate/readings.py", "s_std = float(np.sqrt(max(cov[3, 3], 0.0)))",
       "s_std = float(max(cov[3, 3], 0.0))", _F6_READINGS,
       "fit_class: the scale's variance reported as its standard deviation (forgotten square root)"),
    _m("F6-15", "calibrate/readers.py", "np.column_stack([q_xyzw[:, 3], q_xyzw[:, :3]])",
       "np.column_stack([q_xyzw[:, 0], q_xyzw[:, 1:]])", _F6_READERS,
       "poses from xyzw quaternions: w read from the first column (columns taken as wxyz)"),
    _m("F6-16", "calibrate/held_out.py", "f_ppf(level, p, nu - p + 1.0))\n    nu = max", "f_ppf(level, p, nu))\n    nu = max",
       _F6_HELD, "region quantile (full noise): Hotelling's F with nu instead of nu - p + 1 denominator dof"),
    _m("F6-17", "calibrate/held_out_pixels.py", '"rms_px": float(s * np.sqrt(sq / n_pts))',
       '"rms_px": float(s * np.sqrt(sq / (2 * n_pts)))', _F6_HPX,
       "held-out pixels: the RMS per pixel coordinate instead of per corner (its prediction per corner)"),
    _m("F6-18", "calibrate/check.py", "V = tau * Hinv + cov0", "V = tau * Hinv", _F6_CHECK,
       "check: the Wald test's covariance without the calibration's own covariance"),
    _m("F6-19", "calibrate/result.py", "unit = np.array([180 / np.pi] * 3 + [1000.0] * 3)",
       "unit = np.array([1000.0] * 3 + [180 / np.pi] * 3)", _F6_RESULT,
       "summary: the noise levels' deg and mm factors applied to the wrong components"),
    _m("F6-20", "calibrate/solve.py", 'return _floor(S), dof / (dof - 7.0), "full"',
       'return _floor(S), dof / (dof - 6.0), "full"', _F6_SOLVE,
       "noise model: the small-sample factor of a full 6x6 covariance dof / (dof - p) instead of dof / (dof - p - 1)"),
    _m("F6-21", "calibrate/multi_edges.py", 'fit[r] = (math.degrees(rot), 1000.0 * trans, "graph")',
       'fit[r] = (rot, 1000.0 * trans, "graph")', _F6_EDGES,
       "edge check: the graph fit's rotation residual in radians labelled degrees"),
    _m("F6-22", "calibrate/corners.py", "np.diag(fit.cov)[12 : 12 + len(names)]",
       "np.diag(fit.cov)[13 : 13 + len(names)]", _F6_CORNERS,
       "corners: the intrinsics' standard deviations read one index late"),
    _m("F6-23", "calibrate/output.py", "return [float(q[1]), float(q[2]), float(q[3]), float(q[0])]",
       "return [float(q[0]), float(q[1]), float(q[2]), float(q[3])]", _F6_OUTPUT,
       "quat_xyzw: the quaternion written scalar first under the xyzw labels"),
    _m("F6-24", "calibrate/options.py", "quat=(self.quat_hand, self.quat_eye) if",
       "quat=(self.quat_eye, self.quat_hand) if", _F6_OPTIONS,
       "firewall_options: the hand's and the eye's quaternion orders swapped"),
    _m("F6-25", "calibrate/option_values.py", "        return parts[0], parts[-1]\n",
       "        return parts[-1], parts[0]\n", _F6_OPTIONS,
       "option_pair: HAND,EYE read as (eye, hand)"),
    _m("F6-26", "calibrate/frames.py",
       'cam_T_target = se3.invert_transform(T, check=False) if direction == "target_T_cam" else T',
       'cam_T_target = se3.invert_transform(T, check=False) if direction == "cam_T_target" else T', _F6_FRAMES,
       "eye_solver_form: the eye poses inverted when already cam_T_target (direction test inverted)"),
    _m("F6-27", "calibrate/inputs.py", "reference = eyes.pop(0)", "reference = eyes.pop()", _F6_INPUTS,
       "rig without a body stream: the last camera taken as the reference instead of the first"),
    _m("F6-28", "models/intrinsics_files.py", 'size = (doc["image_width"], doc["image_height"])',
       'size = (doc["image_height"], doc["image_width"])', _F6_INTR,
       "OpenCV YAML: image width and height swapped"),
    _m("F6-29", "models/intrinsics_writers.py", "K = (intr.fx, 0.0, intr.cx, 0.0, intr.fy, intr.cy, 0.0, 0.0, 1.0)",
       "K = (intr.fx, 0.0, intr.cy, 0.0, intr.fy, intr.cx, 0.0, 0.0, 1.0)", _F6_WRITERS,
       "OpenCV writer: the principal point's cx and cy swapped in the camera matrix"),
    _m("F6-30", "models/robot_files.py", 'cols["max_speed_deg_s"].append(to_si(sp))',
       'cols["max_speed_deg_s"].append(sp)', _F6_ROBOT_FILES,
       "DH YAML: joint speed caps in deg/s used as rad/s"),
    _m("F6-31", "planner/plan.py", 'block = slice(6, 12) if setup == "eye_in_hand" else slice(0, 6)',
       'block = slice(0, 6) if setup == "eye_in_hand" else slice(6, 12)', _F6_PLAN,
       "plan: the target frame's adjoint applied to X's block instead of Y's (and the reverse eye-to-hand)"),
    _m("F6-32", "planner/candidates.py", "m = math.radians(limits.limit_margin_deg)",
       "m = limits.limit_margin_deg", _F6_CAND, "feasibility: the joint-limit margin in degrees used as radians"),
    _m("F6-33", "planner/model.py", "1000.0 * math.sqrt(max(np.trace(cov[3:6, 3:6]), 0.0))",
       "1000.0 * math.sqrt(max(np.trace(cov[6:9, 6:9]), 0.0))", _F6_MODEL,
       "sigma_curve: the translation RMS read from Y's rotation block (wrong index)"),
    _m("F6-34", "planner/trajectory.py", "moves = move_times(robot, pts[:-1], pts[1:]) / speed",
       "moves = move_times(robot, pts[:-1], pts[1:]) * speed", _F6_TRAJ,
       "trajectory_times: the moves multiplied by the speed fraction instead of divided"),
    _m("F6-35", "planner/inputs.py", "p = t.points_m @ T[:3, :3].T + T[:3, 3]",
       "p = t.points_m @ T[:3, :3].T - T[:3, 3]", _F6_PLAN_IN,
       "planner_target: the spec's points moved to the centred frame with the translation's sign flipped"),
    _m("F6-36", "vision/detect.py", "[detections[i].uv_px for i in used], T[used])",
       "[detections[i].uv_px for i in used], T[:len(used)])", _F6_DETECT,
       "observations_from_detections: the hand poses not filtered with the accepted views (misaligned after a "
       "rejected one)"),
    _m("F6-37", "vision/pairing.py", "np.abs(t[i - 1] - t_query) <= np.abs(t[i] - t_query), i - 1, i)",
       "np.abs(t[i - 1] - t_query) <= np.abs(t[i] - t_query), i, i - 1)", _F6_VPAIR,
       "image pairing by stamp: the farther of the two neighbouring hand poses taken as the nearest"),
    _m("F6-38", "vision/targets.py", "return self.tag_m * (1.0 + self.spacing)",
       "return self.tag_m + self.spacing", _F6_TARGETS,
       "AprilGrid pitch: the spacing (a fraction of the tag) added as metres"),
    _m("F7-1", "solvers/ransac.py", "    et -= t[:, :, None]\n", "    et += t[:, :, None]\n", _RANSAC,
       "RANSAC scoring: the hypothesis' translation added instead of subtracted (R_A t + t_A - R t_B + t)"),
    _m("F7-2", "solvers/ransac.py", "np.sqrt(D[:, 0] + D[:, 1] + D[:, 2])", "np.sqrt(D[:, 0] + D[:, 1])", _RANSAC,
       "RANSAC scoring: the rotation residual's norm without its third component"),
    _m("F7-3", "solvers/ransac.py", "D = (R2 @ beta.T).reshape(h, 3, n)", "D = (R2 @ alpha.T).reshape(h, 3, n)",
       _RANSAC, "RANSAC scoring: the flange's rotation vectors rotated instead of the camera's"),
    # the poses written in place and the scipy.stats-free quantiles
    _m("F8-1", "geometry/se3.py", "    R[..., 1, 2] = 2 * (y * z - w * x)\n", "    R[..., 1, 2] = 2 * (y * z + w * x)\n",
       _READ, "poses from quaternions: one off-diagonal rotation entry with the wrong sign"),
    _m("F8-2", "geometry/se3.py", "        return a / n[..., None]\n", "        return a\n", _READ,
       "quaternions asked to be normalised returned as stored"),
    _m("F8-5", "geometry/se3.py", "    T[..., 3, :3] = 0.0\n", "", _READ,
       "transform_from_pq: the last row's zeros not written (the stack is made with np.empty)"),
    _m("F8-3", "util/distributions.py", "    inner = 2 * gammaincinv(df / 2, np.clip(q, 0.0, 1.0))\n",
       "    inner = 2 * gammaincinv(df / 2, 1.0 - np.clip(q, 0.0, 1.0))\n", _DIST,
       "chi-square quantile of 1 - q (the upper tail's) instead of q"),
    _m("F8-4", "util/distributions.py", "    inner = fdtri(dfn, dfd, np.clip(q, 0.0, 1.0))\n",
       "    inner = fdtri(dfd, dfn, np.clip(q, 0.0, 1.0))\n", _DIST, "F quantile with its degrees of freedom swapped"),
    _m("F9-1", "geometry/se3.py", "    Q = (-0.5 * P + a1[e] * (WP + PW - WPW)", "    Q = (0.5 * P + a1[e] * (WP + PW - WPW)", _JAC,
       "SE(3) right Jacobian: the first-order coupling term of the left Jacobian's, not of the negated twist's"),
    _m("F9-2", "geometry/se3.py", "    J = np.eye(3) - B[e] * W + C[e] * W2\n", "    J = np.eye(3) + B[e] * W + C[e] * W2\n",
       _JAC, "SE(3) right Jacobian with SO(3)'s left one on the diagonal"),
    _m("F9-3", "models/intrinsics.py", "    out[..., 3:] = G * inv_b\n", "    out[..., 3:] = G\n", _JAC,
       "a pixel's derivative by its pose's translation without the board's scale"),
    _m("F9-4", "solvers/reprojection.py", "        EX, EY = -ad_ci @ Jr_X, np.broadcast_to(Jr_Y, (n, 6, 6))\n",
       "        EX, EY = -ad_ci, np.broadcast_to(Jr_Y, (n, 6, 6))\n", _JAC,
       "chain Jacobian, eye-in-hand: X's column without the right Jacobian of its twist"),
    _m("F9-5", "calibrate/bundle.py", "        EX, EY, Exi = chain_perturbations(C, Ap, X, Y, configuration, JrX, JrY, Jr[2:])\n",
       "        EX, EY, Exi = chain_perturbations(C, A, X, Y, configuration, JrX, JrY, Jr[2:])\n", _JAC,
       "bundle Jacobian: the view twists carried by the measured flange poses, not the corrected ones"),
    _m("F9-6", "models/intrinsics.py", "        shared[n_pix + np.arange(held.size), held] = w[held]\n", "", _JAC,
       "camera calibration's Jacobian without the rows of the priors that hold intrinsics"),
    _m("F9-7", "solvers/reprojection.py", "    rows = np.flatnonzero(structure.row_view >= 0)  # (none without the flange twists)\n",
       "    rows = np.flatnonzero(row_view >= 0)  # (none without the flange twists)\n", _JAC,
       "pixel solver's Jacobian: view blocks on every pixel row when the flange twists are not refined"),
    _m("F9-8", "solvers/reprojection.py",
       "        EA = None if Jr_A is None else adjoint(se3.invert_transform(X, check=False)) @ Jr_A\n",
       "        EA = None if Jr_A is None else adjoint(X) @ Jr_A\n", _JAC,
       "eye-to-hand: the flange twists carried onto the view by Ad(X) instead of Ad(inv X)"),
    # the bound's bracketed median
    _m("F10-1", "evaluate/bounds.py",
       "    ranks = [(n - 1) // 2 - below, n // 2 - below]",
       "    ranks = [(n - 1) // 2 - below, (n + 1) // 2 - below]", _BOUNDS,
       "exact_median: the upper middle rank one too far for an even count"),
    _m("F10-2", "evaluate/bounds.py",
       "    inside = v[(v >= lo) & (v <= hi)]",
       "    inside = v[(v > lo) & (v <= hi)]", _BOUNDS,
       "exact_median: the bracket's lower end left out of the values selected"),
    # ---------------------------------------------------------------- F11: the full noise model's sandwich
    _m("F11-1", "calibrate/uncertainty.py",
       "    return S * np.where(off, 1.0 - lam, 1.0), lam",
       "    return S * np.where(off, lam, 1.0), lam", _F5_SOLVE,
       "shrunk_noise: the correlations scaled by the weight instead of shrunk by it"),
    _m("F11-2", "calibrate/solve.py",
       "    return cov @ M @ cov, (1.0 - lam) * small_sample + lam * dof / (dof - 2.0), lam",
       "    return cov, (1.0 - lam) * small_sample + lam * dof / (dof - 2.0), lam", _F5_SOLVE,
       "_noise_sandwich: the inverse normal matrix returned as it was (the old covariance, with the mixed factor)"),
]


# --------------------------------------------------------------------------- #
# runner
# --------------------------------------------------------------------------- #
class _Interrupted(Exception):
    pass


_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _on_signal(signum, frame):  # unwind through the restoring finally blocks
    raise _Interrupted(f"signal {signum}")


def check_catalogue(mutants) -> list[str]:
    """Problems of the catalogue: unknown files or tests, snippets not found exactly once, duplicate ids."""
    problems, seen = [], set()
    for m in mutants:
        if m.id in seen:
            problems.append(f"{m.id}: duplicate id")
        seen.add(m.id)
        path = SRC / m.file
        if not path.is_file():
            problems.append(f"{m.id}: no file {path}")
            continue
        n = path.read_text(encoding="utf-8").count(m.original)
        if n != 1:
            problems.append(f"{m.id}: the original snippet occurs {n} times in {m.file}, expected once")
        if m.original == m.mutated:
            problems.append(f"{m.id}: the mutated snippet is the original")
        for t in m.tests:
            if not (ROOT / t).is_file():
                problems.append(f"{m.id}: no test file {t}")
    return problems


def dirty_files(files) -> list[str]:
    """Files (relative to the repository) with uncommitted changes, staged or not."""
    rel = sorted({str((SRC / f).relative_to(ROOT)) for f in files})
    out = subprocess.run(["git", "status", "--porcelain", "--", *rel], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    return [line[3:] for line in out.splitlines() if line.strip()]


_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)


def run_tests(tests, timeout_s: float) -> tuple[str, str, float]:
    """``(status, first failing test, seconds)`` of ``pytest -x`` on ``tests``; status caught/survived/timeout."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-x", "-p", "no:cacheprovider", "-p", "no:randomly",
           "--tb=no", "-rfE", *tests]  # fmt: skip
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "caught (timeout)", f"no result within {timeout_s:g} s", time.perf_counter() - t0
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    dt = time.perf_counter() - t0
    if proc.returncode == 0:
        return "survived", "", dt
    hit = _FAILED.search(out)
    if hit:
        return "caught", hit.group(1), dt
    tail = out.strip().splitlines()[-1] if out.strip() else f"exit code {proc.returncode}"
    return "caught", tail, dt


def run_mutant(m: Mutant, timeout_s: float) -> tuple[str, str, float]:
    path = SRC / m.file
    text = path.read_text(encoding="utf-8")
    st = path.stat()
    if text.count(m.original) != 1:
        raise SystemExit(f"{m.id}: the original snippet does not occur exactly once in {m.file}")
    try:
        path.write_text(text.replace(m.original, m.mutated), encoding="utf-8")
        return run_tests(m.tests, timeout_s)
    finally:
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)  # no interrupt half-way through the restore
        try:
            path.write_text(text, encoding="utf-8")
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="+", metavar="ID", help="run only these mutants")
    ap.add_argument("--list", action="store_true", help="print the catalogue and exit")
    ap.add_argument("--check", action="store_true", help="check the catalogue's snippets and exit")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant's test run (default 600)")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = ap.parse_args(argv)

    mutants = CATALOGUE
    if args.only:
        known = {m.id for m in CATALOGUE}
        unknown = [i for i in args.only if i not in known]
        if unknown:
            print(f"unknown mutant id(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}", file=sys.stderr)
            return 1
        mutants = [m for m in CATALOGUE if m.id in args.only]
    if args.list:
        for m in mutants:
            print(f"{m.id:5s} {m.file:42s} {m.description}\n      - {m.original!r}\n      + {m.mutated!r}\n"
                  f"      tests: {' '.join(m.tests)}")
        return 0
    problems = check_catalogue(mutants)
    if problems or args.check:
        for p in problems:
            print(p, file=sys.stderr)
        if not problems:
            print(f"{len(mutants)} mutants: every original snippet occurs exactly once")
        return 1 if problems else 0
    dirty = dirty_files({m.file for m in mutants})
    if dirty:
        print(f"refusing to mutate files with uncommitted changes: {', '.join(dirty)} (commit or stash them)",
              file=sys.stderr)
        return 1

    # Ctrl+C, kill and a closed terminal all unwind through the restore (a job started in the background of a
    # script begins with SIGINT ignored, so it is set here rather than inherited)
    for sig in _SIGNALS:
        signal.signal(sig, _on_signal)
    rows = []
    try:
        for m in mutants:
            status, first, dt = run_mutant(m, args.timeout)
            rows.append((m, status, first, dt))
            print(f"{m.id:5s} {status:16s} {dt:6.1f} s  {first}", file=sys.stderr, flush=True)
    except (KeyboardInterrupt, _Interrupted):
        print("interrupted: every mutated file restored; partial table below", file=sys.stderr)
    caught = sum(r[1].startswith("caught") for r in rows)
    if args.markdown:
        print("| id | file | description | result | first failing test |\n|---|---|---|---|---|")
        for m, status, first, _ in rows:
            cells = (m.id, m.file, m.description, status, first)
            print("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    else:
        for m, status, first, _ in rows:
            print(f"{m.id:5s} {m.file:42s} {status:16s} {first:70s} {m.description}")
    if rows:
        print(f"\ncaught {caught} of {len(rows)} ({100.0 * caught / len(rows):.0f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
