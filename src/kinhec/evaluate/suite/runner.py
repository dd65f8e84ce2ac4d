"""``suite check``, ``bless`` and ``freeze``: run the entries of a suite folder."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kinhec.util.blas import single_threaded_blas
from kinhec.util.errors import DatasetFormatError, InputError, KinhecError
from kinhec.util.fsutil import atomic_write_text
from kinhec.synth.observations import (
    ObservationSet,
    observations_from_recipe,
    schema_path,
    write_document,
    write_observations,
)
from kinhec.evaluate.suite import checks
from kinhec.evaluate.suite.manifest import Suite, load_suite, read_checksums, sha256_file, write_checksums
from kinhec.evaluate.suite.poses import ethz_pose_streams, tabb_pose_pairs
from kinhec.evaluate.suite.problems import run_problem

__all__ = ["EntryReport", "verify_entry_files", "solve_entry", "check", "bless", "freeze", "REFERENCE_NAME"]

#: File name of kinhec's reference result under ``results/<id>/``.
REFERENCE_NAME = "kinhec.json"


@dataclass
class EntryReport:
    """Outcome of one entry of ``suite check``.

    Attributes
    ----------
    id : str
    ok : bool
    messages : list of str
        What failed (files, values that moved, parameters off the truth).
    max_sigma : float
        Largest change of an estimated parameter, in reference standard deviations.
    truth_sigma : float
        Largest error against the truth, in the result's standard deviations (synthetic entries).
    seconds : float
    """

    id: str
    ok: bool = True
    messages: list = field(default_factory=list)
    max_sigma: float = float("nan")
    truth_sigma: float = float("nan")
    seconds: float = 0.0

    def fail(self, msg: str) -> None:
        self.ok = False
        self.messages.append(msg)


def verify_entry_files(root: Path, entry, sums: dict) -> list[str]:
    """Checksum problems of an entry's frozen files (empty when all match)."""
    bad = []
    for rel in entry.frozen_files(root):
        path = root / rel
        if rel not in sums:
            bad.append(f"{path}: no checksum in {root / 'SHA256SUMS'}")
        elif not path.exists():
            bad.append(f"{path}: listed in SHA256SUMS but missing")
        elif sha256_file(path) != sums[rel]:
            bad.append(f"{path}: checksum mismatch (expected {sums[rel][:12]}..., got {sha256_file(path)[:12]}...)")
    return bad


def _load_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise DatasetFormatError(f"{path}: expected a result file, got no such file") from None
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(f"{path}: expected JSON, got {exc}") from None


def _dump(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def solve_entry(suite: Suite, entry) -> dict:
    """The entry's result document (its problem runner on its observation file), BLAS on one thread.

    One thread makes the result independent of ``OPENBLAS_NUM_THREADS`` (see :mod:`kinhec.util.blas`).
    """
    with single_threaded_blas():
        return run_problem(entry.problem, suite.root / entry.observation_file(), entry.config)


def check(root, *, only=None, sigma: float | None = None, progress=None) -> list[EntryReport]:
    """Verify, re-solve and compare every selected entry; one :class:`EntryReport` each.

    Parameters
    ----------
    root : path
        The suite folder.
    only : list of str, optional
        Entry ids.
    sigma : float, optional
        Compare only the estimated parameters, each within ``sigma`` reference
        standard deviations.  Default: every number, an estimated parameter
        within the entry's ``tolerance.sigma`` of its reference standard
        deviation, any other within its drift tolerance (:func:`checks.compare`).
    progress : callable, optional
        Called with each report when its entry is done.
    """
    suite = load_suite(root)
    sums = read_checksums(suite.root)
    reports = []
    for entry in suite.select(only):
        rep = EntryReport(entry.id)
        t0 = time.perf_counter()
        bad = verify_entry_files(suite.root, entry, sums)
        for msg in bad:
            rep.fail(msg)
        if not bad:
            try:
                result = solve_entry(suite, entry)
                ref = _load_json(suite.root / "results" / entry.id / REFERENCE_NAME)
            except KinhecError as exc:
                rep.fail(str(exc))
            else:
                _compare(suite, entry, result, ref, sigma, rep)
        rep.seconds = time.perf_counter() - t0
        reports.append(rep)
        if progress is not None:
            progress(rep)
    return reports


def _compare(suite, entry, result, ref, sigma, rep: EntryReport) -> None:
    z = checks.sigma_changes(result, ref)
    _, rep.max_sigma = checks.max_abs(z)
    if sigma is None:
        for msg in checks.compare(result, ref, entry.abs_tol, entry.rel_tol, entry.sigma_tol):
            rep.fail(msg)
    else:
        for k, v in z.items():
            if abs(v) > sigma:
                rep.fail(f"{k}: moved {abs(v):.3g} sigma > {sigma:g}")
    truth_path = suite.root / entry.truth_file()
    if truth_path.exists():
        truth = _load_json(truth_path)
        e = checks.truth_errors(result, truth, result.get("sigma", {}))
        _, rep.truth_sigma = checks.max_abs(e)
        for k, v in e.items():
            if abs(v) >= entry.truth_sigma:
                rep.fail(f"{k}: {abs(v):.3g} sigma from the truth (limit {entry.truth_sigma:g})")


def bless(root, *, only=None, progress=None) -> list[str]:
    """Re-solve the selected entries (checksums verified first) and overwrite their reference results."""
    suite = load_suite(root)
    sums = read_checksums(suite.root)
    done = []
    for entry in suite.select(only):
        bad = verify_entry_files(suite.root, entry, sums)
        if bad:
            raise DatasetFormatError("; ".join(bad))
        _dump(suite.root / "results" / entry.id / REFERENCE_NAME, solve_entry(suite, entry))
        done.append(entry.id)
        if progress is not None:
            progress(entry.id)
    return done


def _rwhe_observations(folder: Path, entry_id: str) -> ObservationSet:
    """RWHE-Calib corners (``corners_opencv_detected.json``) and ``RobotPosesVec.txt`` as an observation set."""
    corners = json.loads((folder / "corners_opencv_detected.json").read_text())
    A = np.loadtxt(folder / "RobotPosesVec.txt").reshape(-1, 4, 4)
    views = corners["views"]
    if len(views) != A.shape[0] or not all(v.get("detected", True) for v in views):
        raise DatasetFormatError(f"{folder}: expected one detected view per robot pose, got {len(views)} views "
                                 f"and {A.shape[0]} poses")  # fmt: skip
    obj = np.asarray(corners["object_points_m"], dtype=np.float64)
    size = tuple(int(v) for v in views[0]["image_size_wh"])
    return ObservationSet("cam0", size, "eye_in_hand", [obj] * len(views),
                          [np.asarray(v["corners_px"], dtype=np.float64) for v in views], A)  # fmt: skip


def freeze(root, *, only=None, realdata=None) -> list[str]:
    """Rebuild the selected entries' observation (and truth) files from their sources; rewrite SHA256SUMS.

    An entry's ``freeze`` table names its source: ``rwhe = "<folder>"``
    (RWHE-Calib corners and poses), ``tabb = "<folder>"`` (Tabb's pose
    files), ``ethz = "<folder>"`` with ``robot_csv``, ``camera_csv`` and
    ``image_size`` (ETH ASL streams) -- folders of ``realdata``, default
    ``shared/realdata`` beside the repository of a developer's checkout (an
    :class:`~kinhec.util.errors.InputError` names the folder when it is missing) -- or ``recipe = {...}`` (a
    generator recipe of a ``pnp`` sequence; its truth is written too).  The JSON Schemas are copied to ``schema/``.
    """
    suite = load_suite(root)
    if realdata is None:  # a developer's checkout: shared/realdata beside the suite's repository or a parent of it
        realdata = next((p / "shared" / "realdata" for p in suite.root.resolve().parents
                         if (p / "shared" / "realdata").is_dir()), None)  # fmt: skip

    def source(entry, key: str) -> Path:
        if realdata is None or not (Path(realdata) / entry.freeze[key]).is_dir():
            where = Path(realdata) / entry.freeze[key] if realdata is not None else (
                f"shared/realdata/{entry.freeze[key]} (no shared/realdata beside {suite.root.resolve()} or its parents)")
            raise InputError(f"suite freeze: entry {entry.id} is rebuilt from the real data at {where}, which does "
                             "not exist: pass --realdata DIR, the folder holding rwhe_calib/, tabb_ds1/ and ethz_asl/")
        return Path(realdata) / entry.freeze[key]

    done = []
    for entry in suite.select(only):
        src = entry.freeze
        if entry.observations and entry.observations != entry.id:
            continue  # reads another entry's file
        obs_path = suite.root / entry.observation_file()
        if "rwhe" in src:
            obs = _rwhe_observations(source(entry, "rwhe"), entry.id)
            obs_path.parent.mkdir(parents=True, exist_ok=True)
            write_observations(obs_path, obs)
        elif "tabb" in src:
            doc = tabb_pose_pairs(source(entry, "tabb"))
            obs_path.parent.mkdir(parents=True, exist_ok=True)
            write_document(obs_path, doc)
        elif "ethz" in src:
            folder = source(entry, "ethz")
            obs_path.parent.mkdir(parents=True, exist_ok=True)
            write_document(obs_path, ethz_pose_streams(folder / src["robot_csv"], folder / src["camera_csv"],
                                                       src["image_size"]))  # fmt: skip
        elif "recipe" in src:
            obs, truth = observations_from_recipe(dict(src["recipe"]))
            obs_path.parent.mkdir(parents=True, exist_ok=True)
            write_observations(obs_path, obs)
            _dump(suite.root / entry.truth_file(), truth)
        else:
            raise DatasetFormatError(f"{suite.root / 'suite.toml'}: entry {entry.id}: expected freeze.rwhe, .tabb, "
                                     f".ethz or .recipe, got {sorted(src)}")  # fmt: skip
        done.append(entry.id)
    (suite.root / "schema").mkdir(exist_ok=True)
    shutil.copyfile(schema_path("observation_set"), suite.root / "schema" / "observation_set.schema.json")
    files = set(read_checksums(suite.root))
    for entry in suite.entries:
        files.update(f for f in entry.frozen_files(suite.root) if (suite.root / f).exists())
    write_checksums(suite.root, files)
    return done
