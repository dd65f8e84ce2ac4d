"""Mutation spot-check: apply one behaviour-changing mutant at a time, run the tests named for it, report.

Every mutant is a ``(file, exact original snippet, replacement, tests)``: the snippet must occur exactly once
in the current file (the script says so plainly when it no longer does, so a mutant follows code that moves
but never silently applies elsewhere).  The mutants are applied in a scratch copy of the working tree
(``<repo>/.mutants/tree-<pid>``, removed afterwards), never in the tree itself; the copy's ``src`` comes first on
``PYTHONPATH``, so the tests of the copy import the mutated package.  A mutant is *caught* when one of its
tests fails (pytest exit status 1), *survived* when they all pass; a named test that does not exist, or
fails without the mutant, is reported as an error instead of counting either way.

Usage::

    python tools/mutants.py                      # every mutant, table at the end
    python tools/mutants.py --group survivors    # the survivors of the earlier audit only
    python tools/mutants.py --only bounds_vo_student_t lsq_first_step
    python tools/mutants.py --check              # only check that every snippet is found exactly once
    python tools/mutants.py --list

The catalogue is :data:`MUTANTS` below: ``group`` is ``"survivor"`` (the survivors of the audit of commit
0e5f4eb, re-targeted to the current code), ``"fresh"`` (a set chosen in the same modules; its survivors asked
for more tests) or ``"fresh2"`` (a second set chosen after those tests, run as the tests stood).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    """One mutant: ``original`` (found exactly once in ``path``) becomes ``replacement``.

    ``original`` may be a tuple of spellings of the same code (before and after a change of it); the first
    one found is mutated.
    """

    name: str
    path: str
    original: str | tuple[str, ...]
    replacement: str
    tests: tuple[str, ...]
    what: str
    group: str = "fresh"


S = "survivor"
F2 = "fresh2"
K = "src/kinhec/"
HE = K + "solvers/he_ml_stages/"
JAC = ("tests/test_jacobians.py",)
CONS = ("tests/test_consistency.py",)
BND = ("tests/test_bound_branches.py", "tests/test_bounds.py")

MUTANTS: list[Mutant] = [
    # ---------------------------------------------------------------- survivors of the 0e5f4eb audit
    Mutant("he_ml_scale_column_sign", HE + "reweighting.py",
           "Js[:, 3:] = k * Ci[:, :3, 3]", "Js[:, 3:] = -k * Ci[:, :3, 3]",
           ("tests/test_jacobians.py", "tests/test_he_ml.py"),
           "sign of the log-scale column of he_ml's analytic Jacobian", S),
    Mutant("he_ml_dof_correction", HE + "covariance.py",
           "dof_scale = n_obs / max(n_obs - P, 1.0)", "dof_scale = 1.0",
           ("tests/test_consistency.py", "tests/test_he_ml.py"),
           "he_ml's degrees-of-freedom correction of the variance components dropped", S),
    Mutant("he_ml_student_t_information", HE + "covariance.py",
           "f_nu = 1.0 if not np.isfinite(nu) else (nu + 6.0) / (nu + 8.0)", "f_nu = 1.0",
           ("tests/test_consistency.py", "tests/test_he_ml.py"),
           "he_ml's Student-t information factor of the covariance ignored", S),
    Mutant("pixels_em_posterior_term", HE + "pixels.py",
           "v_rot_new = max(float(np.sum(xi[:, :3] ** 2) + np.sum(d[:, :3])) / (3 * n), _VAR_FLOOR)",
           "v_rot_new = max(float(np.sum(xi[:, :3] ** 2)) / (3 * n), _VAR_FLOOR)",
           ("tests/test_consistency.py", "tests/test_he_ml_pixels.py"),
           "pixel stage: EM update of the robot rotation variance without its posterior-variance term", S),
    Mutant("pixels_covariance_schur", HE + "pixels.py",
           "S, _ = _schur(Htt, Htx, np.linalg.inv(Hxx))", "S = Htt",
           ("tests/test_consistency.py", "tests/test_he_ml_pixels.py"),
           "pixel stage: covariance without the Schur complement (robot errors not marginalised)", S),
    Mutant("bounds_interpolation_factor", K + "evaluate/bounds.py",
           "return (1.0 - w) ** 2 + w**2", "return np.ones_like(w)",
           ("tests/test_bound_branches.py", "tests/test_bounds.py"),
           "bound: the variance factor of an interpolated robot pose dropped", S),
    Mutant("bounds_vo_student_t", K + "evaluate/bounds.py",
           "var = var * dof / (dof - 2.0)", "var = var",
           ("tests/test_bound_branches.py", "tests/test_bounds.py"),
           "bound: the Student-t variance factor of visual-odometry increments dropped", S),
    Mutant("bounds_vo_min_outer", K + "evaluate/bounds.py",
           "m = np.minimum.outer(frames, frames)", "m = np.maximum.outer(frames, frames)",
           ("tests/test_bound_branches.py", "tests/test_bounds.py"),
           "bound: covariance of the VO random walk from the later keyframe instead of the earlier", S),
    Mutant("bounds_robot_student_t_ignored", K + "evaluate/bounds.py",
           ("f = 1.0 / student_t_information_factor(robot_student_t_dof(config))",
            'f = 1.0 / student_t_information_factor(config.get("robot_student_t_dof"))'), "f = 1.0",
           ("tests/test_bound_branches.py", "tests/test_bounds.py"),
           "bound: the robot Student-t information factor ignored (the nested-config bug's effect)", S),
    Mutant("bounds_robot_student_t_flat_key", K + "evaluate/bounds.py",
           "f = 1.0 / student_t_information_factor(robot_student_t_dof(config))",
           'f = 1.0 / student_t_information_factor(config.get("robot_student_t_dof"))',
           ("tests/test_bound_branches.py", "tests/test_bounds.py"),
           "bound: the robot Student-t degrees of freedom read from the flat key (the bug as it was)", S),
    Mutant("calibrate_jacobian_sign", K + "calibrate/solve.py",
           "J[:, 3:, 0:3] = se3.hat(t_pred)", "J[:, 3:, 0:3] = -se3.hat(t_pred)",
           ("tests/test_jacobians.py", "tests/test_calibrate_synthetic.py"),
           "calibrate: a sign in the X-rotation block of the analytic Jacobian (eye-in-hand)", S),
    Mutant("pairing_gap_factor", K + "calibrate/pairing.py",
           "GAP_FACTOR = 3.0", "GAP_FACTOR = 300.0",
           ("tests/test_calibrate_synthetic.py", "tests/test_calibrate_formats.py", "tests/test_calibrate_cli.py"),
           "calibrate: gap detection of the pairing effectively off", S),
    Mutant("observability_lambda2", K + "calibrate/observability.py",
           "if lam2 < MIN_LAMBDA2:", "if lam2 < MIN_LAMBDA2 / 100.0:",
           ("tests/test_calibrate_synthetic.py", "tests/test_calibrate_cli.py"),
           "calibrate: the axis-scatter warning threshold 100x looser", S),
    Mutant("suite_drift_nan", K + "evaluate/suite/checks.py",
           "if not (x == y or (math.isnan(x) and math.isnan(y))):", "if False:",
           ("tests/test_suite.py",),
           "suite drift ignores values that turn NaN or infinite", S),
    Mutant("recipe_json_depth_std", K + "synth/recipe_json.py",
           "camera_trans_std_z_m=trans[2]", "camera_trans_std_z_m=trans[1]",
           ("tests/test_published_format.py", "tests/test_tiers.py", "tests/test_generator.py"),
           "published config: the depth std read from the lateral entry", S),
    Mutant("report_best_is_worst", K + "report/data.py",
           "best = min(oracle, key=lambda r: r[3])", "best = max(oracle, key=lambda r: r[3])",
           ("tests/test_report.py", "tests/test_report_browser.py"),
           "report: the sequence table's best solver is the worst", S),
    Mutant("report_quaternion_w_first", K + "report/calibration.py",
           "for v in (q[1], q[2], q[3], q[0])", "for v in (q[0], q[1], q[2], q[3])",
           ("tests/test_report.py", "tests/test_report_browser.py"),
           "report: the calibration page prints the quaternion w first under an x, y, z, w label", S),
    Mutant("schema_half_open_upper", K + "synth/tier_schema.py",
           "(x >= f.hi if f.hi_open else x > f.hi)", "(x > f.hi)",
           ("tests/test_tiers.py",),
           "tier schema: a half-open upper bound treated as closed", S),
    Mutant("lsq_first_step", K + "geometry/lsq.py",
           "vals_b[:, c] = df[ok] / dx[s.row_view[ok]]", "vals_b[:, c] = df[ok] / dx[0]",
           ("tests/test_jacobians.py", "tests/test_reprojection.py"),
           "block Jacobian: every view divided by the first view's finite-difference step", S),
    Mutant("shards_ignore_ids", K + "io/shards.py",
           "if st.null_count != 0 or st.min != expected[k] or st.max != expected[k]:", "if st.null_count != 0:",
           ("tests/test_io.py", "tests/test_resume.py"),
           "shard status ignores the row groups' sequence ids", S),
    # ---------------------------------------------------------------- a fresh set in the same modules
    Mutant("pm_robot_jacobian_sign", K + "solvers/pair_model.py",
           "G = -AdCi @ AdXi", "G = AdCi @ AdXi", JAC + ("tests/test_bounds.py", "tests/test_he_ml.py"),
           "pair model: sign of the robot-twist Jacobian G (eye-in-hand)"),
    Mutant("pm_adjoint_row", K + "solvers/pair_model.py",
           "out[..., 3, :3] = ty * r2 - tz * r1", "out[..., 3, :3] = tz * r1 - ty * r2",
           JAC + ("tests/test_bounds.py", "tests/test_he_ml.py"), "pair model: a row of hat(t) R in the adjoint"),
    Mutant("pm_scale_direction", K + "solvers/pair_model.py",
           "(np.swapaxes(C[:, :3, :3], 1, 2) @ C[:, :3, 3, None])", "(C[:, :3, :3] @ C[:, :3, 3, None])",
           JAC + ("tests/test_bounds.py", "tests/test_he_ml.py"), "pair model: scale direction R t instead of R^T t"),
    Mutant("pm_camera_depth_axis", K + "solvers/pair_model.py",
           "D = np.array([xy_std**2, xy_std**2, z_std**2])", "D = np.array([z_std**2, xy_std**2, xy_std**2])",
           CONS + ("tests/test_bounds.py", "tests/test_he_ml.py"),
           "pair model: the depth noise on the camera x axis instead of z"),
    Mutant("wls_scale_factor", HE + "reweighting.py",
           "Jr[:, 3:] *= k", "Jr[:, 3:] *= 1.0", JAC + ("tests/test_he_ml.py",),
           "he_ml: the scale factor of the translation rows of the Jacobian dropped"),
    Mutant("wls_gate", HE + "reweighting.py",
           "CHI2_GATE = 22.4577", "CHI2_GATE = 12.5916", CONS + ("tests/test_he_ml.py",),
           "he_ml: the inlier gate at the 95 % instead of the 99.9 % quantile of chi2(6)"),
    Mutant("t_density_constant", HE + "reweighting.py",
           "0.5 * k * math.log(math.pi * nu)", "0.5 * k * math.log(nu)", CONS + ("tests/test_he_ml.py",),
           "he_ml: the Student-t log density without its pi (the bug fixed here, put back)"),
    Mutant("motion_fit_scale_columns", HE + "camera_drift.py",
           "J[:, :, 3:6] *= s", "J[:, :, 3:6] *= 1.0", JAC + ("tests/test_he_ml.py",),
           "he_ml motion fit: the scale of the translation columns dropped"),
    Mutant("pixels_normals_cross", HE + "pixels.py",
           "Jr[..., :3] = np.cross(Pp, a)", "Jr[..., :3] = np.cross(a, Pp)", JAC + ("tests/test_he_ml_pixels.py",),
           "pixel stage: the rotation rows of the pixel Jacobian with the cross product reversed"),
    Mutant("pixels_reml_term", HE + "pixels.py",
           "+ float(np.sum(self.yy - bu)) / s2 + logdet_t - 12 * p[0])", "+ float(np.sum(self.yy - bu)) / s2)",
           CONS + JAC + ("tests/test_he_ml_pixels.py",),
           "pixel stage: the marginal likelihood of the levels without the restricted term of X and Y"),
    Mutant("bounds_jitter_dropped", K + "evaluate/bounds.py",
           'cov += jit**2 * np.einsum("ni,nj->nij", V, V)', 'cov += 0.0 * np.einsum("ni,nj->nij", V, V)',
           BND, "bound: the camera time-stamp jitter term dropped"),
    Mutant("bounds_joint_frame", K + "evaluate/bounds.py",
           "Jf = np.concatenate([Rt @ Jb[:, :3], Rt @ Jb[:, 3:]], axis=1)", "Jf = Jb",
           BND, "bound: encoder noise through the base-frame Jacobian instead of the flange frame"),
    Mutant("bounds_scale_drift_power", K + "evaluate/bounds.py",
           "m = np.minimum.outer(idx, idx).astype(np.float64) * drift**2",
           "m = np.minimum.outer(idx, idx).astype(np.float64) * drift", BND,
           "bound: the scale drift's standard deviation used as its variance"),
    Mutant("bounds_velocity_step", K + "evaluate/bounds.py",
           "return se3.se3_log(se3.invert_transform(T0, check=False) @ T1, check=False) / (2 * h)",
           "return se3.se3_log(se3.invert_transform(T0, check=False) @ T1, check=False) / h", BND,
           "bound: the flange velocity of the jitter term twice too large"),
    Mutant("bounds_camera_student_t", K + "evaluate/bounds.py",
           "        f = 1.0 / student_t_information_factor(dof)\n        camera_cov = f *",
           "        f = 1.0\n        camera_cov = f *", BND, "bound: the camera Student-t information factor dropped"),
    Mutant("calibrate_small_sample", K + "calibrate/solve.py",
           "small_sample = dof / (dof - 7.0) if dof > 14 else 2.0", "small_sample = 1.0",
           CONS + ("tests/test_calibrate_synthetic.py",),
           "calibrate: the small-sample factor of the covariance dropped"),
    Mutant("calibrate_eth_jacobian_sign", K + "calibrate/solve.py",
           "J[:, 3:, 6:9] = se3.hat(t_pred)", "J[:, 3:, 6:9] = -se3.hat(t_pred)",
           JAC + ("tests/test_calibrate_synthetic.py",), "calibrate: a sign of the eye-to-hand Jacobian"),
    Mutant("calibrate_scale_column_sign", K + "calibrate/solve.py",
           "J[:, 3:, k] = t_meas", "J[:, 3:, k] = -t_meas", JAC + ("tests/test_calibrate_synthetic.py",),
           "calibrate: sign of the scale column of the Jacobian"),
    Mutant("observability_rot_range", K + "calibrate/observability.py",
           "if rot_range < MIN_ROT_RANGE_DEG:", "if rot_range < MIN_ROT_RANGE_DEG / 10.0:",
           ("tests/test_calibrate_synthetic.py", "tests/test_calibrate_cli.py"),
           "calibrate: the rotation-range warning threshold 10x looser"),
    Mutant("pairing_outside_stream", K + "calibrate/pairing.py",
           "inside = (tq >= self.t[0]) & (tq <= self.t[-1])", "inside = np.ones(tq.shape, dtype=bool)",
           ("tests/test_calibrate_synthetic.py", "tests/test_calibrate_formats.py"),
           "calibrate: samples outside the other stream are paired (extrapolated)"),
    Mutant("suite_drift_tolerance", K + "evaluate/suite/checks.py",
           "tol = abs_tol + rel_tol * max(abs(x), abs(y))", "tol = abs_tol + 10.0 * rel_tol * max(abs(x), abs(y))",
           ("tests/test_suite.py",), "suite drift: the relative tolerance 10x looser"),
    Mutant("recipe_json_robot_dof", K + "synth/recipe_json.py",
           'robot_student_t_dof=rn["student_t_dof"]', "robot_student_t_dof=None",
           ("tests/test_published_format.py", "tests/test_generator.py"),
           "published config: the robot Student-t degrees of freedom dropped"),
    Mutant("report_median_is_mean", K + "report/data.py",
           '"median_rot": _round(np.median([r[3] for r in oracle]))',
           '"median_rot": _round(np.mean([r[3] for r in oracle]))', ("tests/test_report.py",),
           "report: the sequence table's median rotation error is a mean"),
    Mutant("schema_lower_bound_open", K + "synth/tier_schema.py",
           "if f.lo is not None and x < f.lo:", "if f.lo is not None and x <= f.lo:", ("tests/test_tiers.py",),
           "tier schema: every lower bound treated as open"),
    Mutant("lsq_step_size", K + "geometry/lsq.py",
           "eps = np.finfo(float).eps ** (1.0 / 3.0 if central else 0.5)", "eps = 1e-3",
           JAC + ("tests/test_reprojection.py",), "block Jacobian: a finite-difference step of 1e-3"),
    # ---------------------------------------------------------------- a second fresh set, chosen after the tests
    # that the first one asked for, and run once as they stand (an unbiased measure of the tests' sharpness)
    Mutant("he_ml_cov_outliers", HE + "covariance.py", "Ji = J[inl]", "Ji = J",
           CONS + ("tests/test_he_ml.py",), "he_ml: the information summed over the outliers too", F2),
    Mutant("he_ml_settled_sinv", HE + "covariance.py", "Sinv = Sinv / dof_scale", "Sinv = Sinv",
           CONS + ("tests/test_he_ml.py",), "he_ml: the settled round's inverse covariances not corrected", F2),
    Mutant("scale_drift_start_step", HE + "scale_drift.py",
           "sigma_d = max(float(np.std(np.diff(d))) / 2.0, 1e-6)",
           "sigma_d = max(float(np.std(np.diff(d))) * 2.0, 1e-6)",
           JAC + ("tests/test_he_ml.py",), "he_ml scale drift: the walk's starting step 4x larger", F2),
    Mutant("scale_drift_em_covariance", HE + "scale_drift.py",
           "var[1:] = var[1:] + var[:-1] - 2.0 * np.diag(Cq, k=1)", "var[1:] = var[1:] + var[:-1]",
           JAC + ("tests/test_he_ml.py",), "he_ml scale drift: EM step without the offsets' posterior covariance", F2),
    Mutant("pixels_no_prior_block", HE + "pixels.py", "Hxx = (GT @ MG) / s2 + Lam", "Hxx = (GT @ MG) / s2",
           CONS + JAC + ("tests/test_he_ml_pixels.py",), "pixel stage: the twists' block without their prior", F2),
    Mutant("pixels_em_dof", HE + "pixels.py", "dof = max(2 * prob.n_pts - 12, 1)", "dof = max(2 * prob.n_pts, 1)",
           CONS + ("tests/test_he_ml_pixels.py",), "pixel stage: the EM pixel variance without the fit's dof", F2),
    Mutant("bounds_robot_sandwich", K + "evaluate/bounds.py",
           'Sigma = Sigma + np.einsum("nij,njk,nlk->nil", G, robot_cov, G)',
           'Sigma = Sigma + np.einsum("nij,njk,nkl->nil", G, robot_cov, G)', BND,
           "bound: the robot covariance carried as G S G instead of G S G^T", F2),
    Mutant("bounds_vo_first_increment", K + "evaluate/bounds.py", "inc[0] = 0.0", "inc[0] = inc[0]", BND,
           "bound: the VO walk's error at its first frame not zero", F2),
    Mutant("bounds_median_radians", K + "evaluate/bounds.py", "return math.degrees(out[0]), 1000.0 * out[1]",
           "return out[0], 1000.0 * out[1]", BND, "bound: the median rotation error in radians", F2),
    Mutant("calibrate_noise_dof", K + "calibrate/solve.py", "dof = max(m - prob.P / 6.0, 1.0)", "dof = max(m, 1.0)",
           CONS + ("tests/test_calibrate_synthetic.py",), "calibrate: the noise covariance without the fit's dof", F2),
    Mutant("calibrate_gate", K + "calibrate/solve.py", "new = d2 < CHI2_6_9999", "new = d2 < 2.0 * CHI2_6_9999",
           CONS + ("tests/test_calibrate_synthetic.py", "tests/test_calibrate_cli.py"),
           "calibrate: the outlier gate twice as wide", F2),
    Mutant("recipe_json_lateral_from_depth", K + "synth/recipe_json.py", "camera_trans_std_m=trans[0]",
           "camera_trans_std_m=trans[2]", ("tests/test_published_format.py", "tests/test_generator.py"),
           "published config: the lateral std read from the depth entry", F2),
    Mutant("pm_robot_covariance_sandwich", K + "solvers/pair_model.py",
           'return np.einsum("nij,j,nkj->nik", G, d, G)', 'return np.einsum("nij,j,njk->nik", G, d, G)',
           CONS + JAC + ("tests/test_bounds.py",), "pair model: the robot covariance G D G instead of G D G^T", F2),
    Mutant("multi_scale_column_sign", K + "solvers/multi_axyb.py",
           "out[:, 3:, 12] = k[:, None] * Ci[:, :3, 3]", "out[:, 3:, 12] = -k[:, None] * Ci[:, :3, 3]",
           JAC + ("tests/test_multi.py",), "multi_axyb: sign of the log-scale column of the local Jacobian", F2),
    Mutant("lsq_central_forward", K + "geometry/lsq.py", "xm[idx] -= h_all[idx]", "xm[idx] -= 0.0",
           JAC + ("tests/test_reprojection.py",), "block Jacobian: the central differences one-sided", F2),
    Mutant("report_translation_metres", K + "report/calibration.py",
           '", ".join(_fmt(1e3 * v, 5) for v in T[:3, 3])', '", ".join(_fmt(v, 5) for v in T[:3, 3])',
           ("tests/test_report.py",), "report: the calibration page's translation in metres under [mm]", F2),
]


# --------------------------------------------------------------------------- #
# running
# --------------------------------------------------------------------------- #
def _source_files(repo: Path) -> list[str]:
    """Tracked and untracked (not ignored) files of the working tree, as they are on disk."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=repo, check=True,
                         capture_output=True).stdout.decode()  # fmt: skip
    return [f for f in out.split("\0") if f and (repo / f).is_file()]


def make_scratch(repo: Path) -> Path:
    """A copy of the working tree under ``repo/.mutants/tree-<pid>`` (``../shared`` is found from there as
    from the repository: the tests walk up the parents)."""
    root = repo / ".mutants" / f"tree-{os.getpid()}"
    if root.exists():
        shutil.rmtree(root)
    for f in _source_files(repo):
        if f.startswith(".mutants/"):
            continue
        dst = root / f
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / f, dst)
    return root


def locate(m: Mutant, root: Path) -> tuple[str | None, str]:
    """``(text of the mutated file, note)``; the text is None when no spelling of the snippet occurs exactly once."""
    path = root / m.path
    if not path.is_file():
        return None, f"{m.path} does not exist"
    text = path.read_text()
    spellings = (m.original,) if isinstance(m.original, str) else m.original
    for snip in spellings:
        n = text.count(snip)
        if n == 1:
            return text.replace(snip, m.replacement), ""
        if n > 1:
            return None, f"snippet found {n} times in {m.path} (must be unique): {snip!r}"
    return None, f"snippet no longer in {m.path}: {spellings[0]!r}"


def _drop_bytecode(path: Path) -> None:
    """Remove the cached bytecode of ``path``: a mutant of the same size written within the same second
    would otherwise run the old bytecode."""
    cache = path.parent / "__pycache__"
    for pyc in cache.glob(path.stem + ".*.pyc"):
        pyc.unlink()


def run_tests(root: Path, tests: tuple[str, ...], timeout: float) -> tuple[str, str, float]:
    """Run ``tests`` in the scratch copy: ``(status, failing tests, seconds)``, status ``pass``, ``fail``,
    ``timeout`` or ``error``."""
    present = tuple(t for t in tests if (root / t.split("::")[0]).exists())
    if not present:
        return "error", "none of the named tests exists", 0.0
    env = dict(os.environ, PYTHONPATH=str(root / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONDONTWRITEBYTECODE="1")  # fmt: skip
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-rf", "-p", "no:cacheprovider", "-p", "no:randomly",
           *present]  # fmt: skip
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", f"> {timeout:.0f} s", time.monotonic() - t0
    dt = time.monotonic() - t0
    failed = re.findall(r"^FAILED (\S+)", proc.stdout, flags=re.M)
    if proc.returncode == 0:
        return "pass", "", dt
    if proc.returncode == 1:
        return "fail", " ".join(failed) or "(failed)", dt
    tail = " | ".join(proc.stdout.strip().splitlines()[-3:] + proc.stderr.strip().splitlines()[-2:])
    return "error", f"pytest exit {proc.returncode}: {tail[:300]}", dt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--group", choices=("survivor", "fresh", "fresh2", "all"), default="all")
    ap.add_argument("--only", nargs="*", default=None, help="mutant names")
    ap.add_argument("--check", action="store_true", help="only check that every snippet is found exactly once")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--no-baseline", action="store_true", help="do not run the named tests without mutants first")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per mutant's test run")
    ap.add_argument("--tests", nargs="*", default=None, help="run these tests instead of each mutant's own")
    args = ap.parse_args(argv)
    todo = [m for m in MUTANTS if (args.group == "all" or m.group == args.group)
            and (args.only is None or m.name in args.only)]  # fmt: skip
    if args.only:
        unknown = set(args.only) - {m.name for m in MUTANTS}
        if unknown:
            print(f"unknown mutants: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
    if args.list:
        for m in todo:
            print(f"{m.group:9s} {m.name:34s} {m.path}: {m.what}")
        return 0
    missing = [(m, note) for m in todo for _, note in [locate(m, REPO)] if note]
    for m, note in missing:
        print(f"NOT FOUND  {m.name}: {note}")
    if args.check:
        print(f"{len(todo) - len(missing)} of {len(todo)} snippets found exactly once")
        return 1 if missing else 0
    if args.tests:
        todo = [Mutant(m.name, m.path, m.original, m.replacement, tuple(args.tests), m.what, m.group) for m in todo]
    root = make_scratch(REPO)
    rows = []
    try:
        baseline: dict[tuple, str] = {}
        for m in todo:
            text, note = locate(m, root)
            if text is None:
                rows.append((m, "not found", note, 0.0))
                continue
            if not args.no_baseline and m.tests not in baseline:
                st, why, _ = run_tests(root, m.tests, args.timeout)
                baseline[m.tests] = "" if st == "pass" else f"tests fail without the mutant: {why}"
            if baseline.get(m.tests):
                rows.append((m, "error", baseline[m.tests], 0.0))
                print(f"{'error':9s} {m.name}: {baseline[m.tests]}", flush=True)
                continue
            path = root / m.path
            original = path.read_text()
            try:
                path.write_text(text)
                _drop_bytecode(path)
                st, why, dt = run_tests(root, m.tests, args.timeout)
            finally:
                path.write_text(original)
                _drop_bytecode(path)
            status = {"fail": "caught", "timeout": "caught", "pass": "survived"}.get(st, "error")
            rows.append((m, status, why, dt))
            print(f"{status:9s} {m.name} ({dt:.0f} s) {why}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        if (REPO / ".mutants").is_dir() and not any((REPO / ".mutants").iterdir()):
            (REPO / ".mutants").rmdir()
    print()
    print("| group | mutant | file | what | result | failing test |")
    print("|---|---|---|---|---|---|")
    for m, status, why, dt in rows:
        print(f"| {m.group} | {m.name} | {m.path.removeprefix(K)} | {m.what} | {status} | {why} |")
    for group in ("survivor", "fresh", "fresh2"):
        g = [r for r in rows if r[0].group == group and r[1] in ("caught", "survived")]
        if g:
            caught = sum(r[1] == "caught" for r in g)
            print(f"{group}: {caught} of {len(g)} caught ({100.0 * caught / len(g):.0f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
