"""Integrity checks of a dataset folder (``kinhec validate``).

:func:`validate_dataset` inspects a folder and returns a
:class:`ValidationReport`: a list of :class:`Finding` objects (level
``"error"`` or ``"warning"``, the check that produced it, the sequence and the
file concerned, a message) and, per check, how many items it looked at.  It
reports what it finds instead of raising; the only exception is a folder that
is not a dataset at all (no ``sequences.parquet`` and no shard folders), which
raises :class:`~kinhec.util.errors.DatasetFormatError` with a one-line message.

The checks (names as they appear in the findings, :data:`CHECKS`)
------------------------------------------------------------------
Folder and index (always over the whole folder, also when sampling):

``files``
    ``sequences.parquet``, ``sequences.csv``, ``robots.json``,
    ``cameras_targets.json``, ``generation_info.json``, the folders ``robot/``
    and ``camera/`` and every shard file the index references are present and
    the JSON files parse; ``README.md``, ``LICENSE`` and ``CITATION.cff``
    missing, stray files in the shard folders, leftover ``*.tmp`` files and
    missing ``generation_info.json`` keys are warnings.
``complete``
    Every track holds as many sequences as ``generation_info.json`` plans for
    it (``planned_sequences``): an interrupted ``generate`` leaves a folder
    whose shards and index are sound but hold fewer; that is an error, or a
    warning when the folder is validated as ``partial`` (``--partial``).
``index_schema``
    ``sequences.parquet`` against :data:`kinhec.io.schema.INDEX_SCHEMA` (missing
    or mistyped columns are errors; extra columns, other column order or a
    wider type of the same kind are warnings), unique and non-empty sequence
    ids, names of the enumerated columns, file-location columns present.
``index_csv``
    ``sequences.csv`` has the columns of
    :data:`~kinhec.io.schema.INDEX_CSV_COLUMNS` and the same sequences in the same
    order as the Parquet index.
``shards``
    Every shard file opens (a truncated or empty file is reported here), has
    the robot / camera schema of :mod:`kinhec.io.schema`, and its ``kinhec.index``
    metadata, when present, lists the ids its row groups hold (warning).
``row_groups``
    The index against the shards: every row group of every shard file is
    referenced by exactly one index row (orphaned row groups and duplicated
    references are errors), every reference points to an existing row group
    holding that sequence and only it.  Row-group ids come from the Parquet
    footer statistics (min = max = id), or from the ``sequence_id`` column of
    the row group when a writer stored no statistics.

Per sequence (every sequence, or a sample with ``max_sequences``):

``read``
    The sequence's row groups can be read and decoded
    (:meth:`kinhec.io.Sequence.from_tables`).  A sequence that cannot be read
    is one error finding; the other per-sequence checks are then skipped.
``frame_counts``
    ``n_robot_frames`` / ``n_camera_frames`` equal the rows of the streams,
    ``frame`` is ``0 .. N-1`` in both, synchronous streams have as many rows,
    and ``dof`` matches the joint lists.
``timestamps``
    ``t`` of both streams and ``t_gt`` are finite and strictly increasing;
    the camera ``t`` of an asynchronous sequence with jitter
    (``t = t_gt + time_offset_s + jitter``) may step back (only ``t_gt`` must
    increase; the ``clocks`` check bounds the jitter).
``clocks``
    Synchronous (``sync`` not starting with ``async``) and station sequences:
    robot ``t`` equals camera ``t`` row by row and ``t == t_gt`` (within
    :data:`CLOCK_TOL_S`).  Asynchronous ones: the residual
    ``r = t - t_gt - time_offset_s`` is 0 (within :data:`CLOCK_TOL_S`) when
    ``time_jitter_std_s`` is 0; otherwise every ``|r| <= 7 sigma + CLOCK_TOL_S``
    (:data:`JITTER_FRAME_SIGMAS`; 7 rather than 6 because a full tier holds
    tens of millions of jittered frames), ``|mean(r)| <= 6 sigma / sqrt(M) +
    CLOCK_TOL_S`` and the sample standard deviation lies within six standard
    errors of ``sigma`` (:data:`JITTER_SIGMAS`; the lower bound from ten
    frames on).  Camera instants outside the robot stream's time
    range are a warning.
``poses``
    Ground-truth poses (robot and camera ``base_ee_gt``, ``cam_target_gt``,
    ``X`` and ``Y`` of the index) finite on every row; measured poses either
    complete or entirely NaN on a row, never infinite.
``quaternions``
    Every stored quaternion (ground truth and measured, both streams, ``X``,
    ``Y``) has unit norm (within :data:`QUAT_UNIT_TOL`) and ``qw >= 0``.  A
    stored pose is orthonormal exactly when its quaternion is unit, so this is
    also the orthonormality check.
``availability``
    Camera measurements consistent with the noise model: ``pnp`` has a
    measurement exactly on the visible frames (outliers are still
    measurements), every other model on every frame; ``reproj_rmse_px`` is
    finite where a ``pnp`` measurement exists (warning otherwise); the robot
    stream's measured poses and encoder readings are finite on every row.
``visibility``
    ``n_visible_frames`` / ``n_outlier_frames`` equal the counts of the
    ``visible`` / ``outlier`` labels, outliers only on frames with a
    measurement, none when ``outlier_fraction`` is 0 or the model is
    ``none``, every frame visible for ``world_frame = vo_origin``; a count
    other than ``round(outlier_fraction * measured frames)`` is a warning.
``fk``
    Forward kinematics of ``q_gt`` reproduces the robot stream's ground-truth
    flange poses within :data:`FK_TOL_DEG` / :data:`FK_TOL_MM`, with the
    registered model of the ``robot`` column or, for ``dh_error`` sequences,
    the true model stored in ``extra_json["true_dh"]``
    (:meth:`kinhec.models.robots.RobotModel.to_dict` form).  Skipped for ``free6d``.
``flange_gt``
    The two streams' ground-truth flange poses agree: row by row on shared
    instants (within :data:`FK_TOL_DEG` / :data:`FK_TOL_MM`); for asynchronous
    sequences the robot stream interpolated at ``t_gt`` must match the
    camera's ``base_ee_gt`` within a bound on the interpolation error derived
    from the robot stream's own second differences.
``axyb``
    ``A_i X = Y B_i`` on every camera frame of the ground truth
    (``A_i = base_ee_gt`` of the camera stream, ``B_i = inv(T_cam_target)``
    eye-in-hand or ``T_cam_target`` eye-to-hand) within :data:`AXYB_TOL_DEG`
    and :data:`AXYB_TOL_MM`.

Sampling: ``max_sequences=N`` checks ``N`` sequences evenly spaced over the
index order (positions ``floor(k (n - 1) / (N - 1) + 1/2)``, ``k = 0 .. N-1``,
always including the first and the last), which is deterministic and, the
index being sorted by track, covers every track of a large folder.

Every per-sequence check works on all frames of a sequence at once.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kinhec import __version__
from kinhec.geometry import se3
from kinhec.util import jsonutil
from kinhec import io as kio
from kinhec.util.errors import DatasetFormatError, InputError, KinhecError
from kinhec.util.locking import refuse_if_in_use
from kinhec.models.robots import RobotModel, get_robot
from kinhec.io.schema import (
    CAMERA_NOISE_MODELS,
    CAMERA_SCHEMA,
    CONFIGURATIONS,
    FAMILIES,
    INDEX_CSV_COLUMNS,
    INDEX_SCHEMA,
    OUTLIER_MODELS,
    ROBOT_NOISE_MODELS,
    ROBOT_SCHEMA,
    SAMPLING_MODES,
    TRACKS,
    WORLD_FRAMES,
    pose_columns,
)

__all__ = [
    "CHECKS",
    "ERROR",
    "WARNING",
    "Finding",
    "ValidationReport",
    "validate_dataset",
    "AXYB_TOL_DEG",
    "AXYB_TOL_MM",
    "FK_TOL_DEG",
    "FK_TOL_MM",
    "QUAT_UNIT_TOL",
    "CLOCK_TOL_S",
    "JITTER_FRAME_SIGMAS",
    "JITTER_SIGMAS",
]

ERROR = "error"
WARNING = "warning"

#: Tolerance of ``A_i X = Y B_i`` on the ground truth: rotation [deg].
AXYB_TOL_DEG = 1e-7
#: Tolerance of ``A_i X = Y B_i`` on the ground truth: translation [mm].
AXYB_TOL_MM = 1e-6
#: Tolerance of forward kinematics against the stored flange poses (and of the
#: row-wise agreement of the two streams' flange poses): rotation [deg].
FK_TOL_DEG = 1e-7
#: Same, translation [mm].
FK_TOL_MM = 1e-6
#: Largest accepted ``| |q| - 1 |`` of a stored quaternion.
QUAT_UNIT_TOL = 1e-9
#: Absolute tolerance [s] of time-stamp equalities.
CLOCK_TOL_S = 1e-9
#: Each jitter residual is accepted up to this many standard deviations.
JITTER_FRAME_SIGMAS = 7.0
#: The mean and the standard deviation of the jitter residuals are accepted up
#: to this many standard errors from 0 and from ``time_jitter_std_s``.
JITTER_SIGMAS = 6.0

#: The checks, in the order they run, with a one-line description.
CHECKS: dict[str, str] = {
    "files": "required files present, JSON files readable",
    "complete": "every sequence generation_info.json plans is in the index (an interrupted run leaves some out)",
    "index_schema": "sequences.parquet against the index schema, unique ids, known names",
    "index_csv": "sequences.csv has the CSV columns and the same sequences as the Parquet index",
    "shards": "shard files open and have the stream schemas",
    "row_groups": "every row group referenced by exactly one index row, references valid",
    "read": "the sequence's row groups can be read and decoded",
    "frame_counts": "frame counts and frame numbers match the index",
    "timestamps": "finite, strictly increasing time stamps",
    "clocks": "identical clocks when synchronous; stamps consistent with the offset and jitter",
    "poses": "finite ground-truth poses; measured poses complete or absent",
    "quaternions": "unit quaternions with qw >= 0",
    "availability": "measurements present where the noise model says",
    "visibility": "visible / outlier labels consistent with the index counts and the models",
    "fk": "forward kinematics of q_gt (true DH for dh_error) reproduces the flange poses",
    "flange_gt": "robot and camera streams agree on the ground-truth flange pose",
    "axyb": "A_i X = Y B_i on every camera frame of the ground truth",
}

REQUIRED_FILES = ("sequences.parquet", "sequences.csv", "robots.json", "cameras_targets.json", "generation_info.json")
REQUIRED_DIRS = ("robot", "camera")
RECOMMENDED_FILES = ("README.md", "LICENSE", "CITATION.cff")
GENERATION_INFO_KEYS = ("dataset", "generator_version", "tier", "tier_config", "global_seed", "tracks")

_SHARD_FILE_RE = re.compile(r"^(?P<stream>robot|camera)/(?P<track>[A-Za-z0-9_]+)-(?P<shard>\d{5})\.parquet$")
_SHARD_NAME_RE = re.compile(r"^[A-Za-z0-9_]+-\d{5}\.parquet$")
_SEQ_ID_RE = re.compile(r"^(?P<track>[A-Za-z0-9_]+)-\d{6}$")
_STREAM_SCHEMAS = {"robot": ROBOT_SCHEMA, "camera": CAMERA_SCHEMA}
_RECORD_CHUNK = 1000



# --------------------------------------------------------------------------- #
# report
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class Finding:
    """One problem found by :func:`validate_dataset`.

    Attributes
    ----------
    level : {"error", "warning"}
        Errors make the report fail; warnings do not.
    check : str
        Name of the check (a key of :data:`CHECKS`).
    sequence_id : str or None
        The sequence concerned, if any.
    path : str or None
        The file concerned, relative to the dataset folder, if any.
    message : str
        What was expected and what was found.
    """

    level: str
    check: str
    sequence_id: str | None
    path: str | None
    message: str

    def to_dict(self) -> dict:
        return {
            "level": self.level,
            "check": self.check,
            "sequence_id": self.sequence_id,
            "path": self.path,
            "message": self.message,
        }

    def __str__(self) -> str:
        where = " ".join(s for s in (self.sequence_id, self.path) if s)
        return f"{self.level:<7} [{self.check}] {where + ': ' if where else ''}{self.message}"


@dataclass
class ValidationReport:
    """Outcome of :func:`validate_dataset`.

    Attributes
    ----------
    root : str
        The dataset folder.
    findings : list of Finding
        Every error and warning, in the order found.
    checks : dict
        Per check (every key of :data:`CHECKS`): ``{"checked": n, "errors": e,
        "warnings": w}``, where ``n`` counts the items the check looked at
        (files, shard files, index rows or sequences).
    n_sequences : int
        Sequences listed by the index.
    n_checked : int
        Sequences that went through the per-sequence checks.
    sample : str
        ``"all"`` or a description of the sample.
    seconds : float
        Wall time of the validation [s].
    n_planned : int or None
        Sequences ``generation_info.json`` plans (None when it does not say).
    n_missing : int
        Planned sequences the index does not hold (an error, or a warning when
        the folder is validated as ``partial``).
    """

    root: str
    findings: list[Finding] = field(default_factory=list)
    checks: dict = field(default_factory=lambda: {k: {"checked": 0, "errors": 0, "warnings": 0} for k in CHECKS})
    n_sequences: int = 0
    n_checked: int = 0
    sample: str = "all"
    seconds: float = 0.0
    n_planned: int | None = None
    n_missing: int = 0

    @property
    def ok(self) -> bool:
        """True when no finding is an error."""
        return self.n_errors == 0

    @property
    def n_errors(self) -> int:
        return sum(1 for f in self.findings if f.level == ERROR)

    @property
    def n_warnings(self) -> int:
        return sum(1 for f in self.findings if f.level == WARNING)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == ERROR]

    @property
    def failed_sequences(self) -> list[str]:
        """Ids of the sequences with at least one error, in the order found."""
        return list(dict.fromkeys(f.sequence_id for f in self.findings if f.level == ERROR and f.sequence_id))

    def by_check(self, check: str, level: str | None = None) -> list[Finding]:
        """Findings of one check (optionally of one level)."""
        return [f for f in self.findings if f.check == check and (level is None or f.level == level)]

    # -- recording (used while validating) ---------------------------------
    def _add(self, level: str, check: str, message: str, sequence_id=None, path=None) -> None:
        self.findings.append(Finding(level, check, sequence_id, None if path is None else str(path), message))
        self.checks[check]["errors" if level == ERROR else "warnings"] += 1

    def _ran(self, check: str, n: int = 1) -> None:
        self.checks[check]["checked"] += int(n)

    # -- output ------------------------------------------------------------
    def to_dict(self) -> dict:
        """JSON-ready content of the report (write it with :func:`kinhec.util.jsonutil.dumps`)."""
        return {
            "root": self.root,
            "kinhec_version": __version__,
            "ok": self.ok,
            "n_errors": self.n_errors,
            "n_warnings": self.n_warnings,
            "sequences": {
                "planned": self.n_planned,
                "missing": self.n_missing,
                "indexed": self.n_sequences,
                "checked": self.n_checked,
                "failed": len(self.failed_sequences),
                "sample": self.sample,
            },
            "seconds": round(self.seconds, 3),
            "tolerances": {
                "axyb_deg": AXYB_TOL_DEG,
                "axyb_mm": AXYB_TOL_MM,
                "fk_deg": FK_TOL_DEG,
                "fk_mm": FK_TOL_MM,
                "quaternion_unit": QUAT_UNIT_TOL,
                "clock_s": CLOCK_TOL_S,
                "jitter_frame_sigmas": JITTER_FRAME_SIGMAS,
                "jitter_sigmas": JITTER_SIGMAS,
            },
            "checks": {k: {"description": CHECKS[k], **v} for k, v in self.checks.items()},
            "failed_sequences": self.failed_sequences,
            "findings": [f.to_dict() for f in self.findings],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON text (:func:`kinhec.util.jsonutil.dumps`)."""
        return jsonutil.dumps(self.to_dict(), indent=indent)

    def write_json(self, path) -> Path:
        """Write :meth:`to_json` to ``path``; returns the path."""
        path = Path(path)
        path.write_text(self.to_json() + "\n", encoding="utf-8")
        return path

    def summary_lines(self, max_findings: int = 20) -> list[str]:
        """Lines to print: the verdict, a table of the checks and the first findings.

        Parameters
        ----------
        max_findings : int
            At most this many findings are listed (errors first); the rest are
            counted.
        """
        planned = ""
        if self.n_planned is not None:
            planned = f"; {self.n_planned} planned, {self.n_missing} of them missing" if self.n_missing else (
                f"; all {self.n_planned} planned present")
        lines = [
            f"validated {self.root}: {self.n_checked} of {self.n_sequences} sequences checked "
            f"({self.sample}){planned} in {self.seconds:.1f} s"
        ]
        width = max(len(k) for k in CHECKS)
        lines.append(f"  {'check':<{width}}  {'checked':>8}  {'errors':>6}  {'warnings':>8}")
        for k, v in self.checks.items():
            lines.append(f"  {k:<{width}}  {v['checked']:>8}  {v['errors']:>6}  {v['warnings']:>8}")
        ordered = [f for f in self.findings if f.level == ERROR] + [f for f in self.findings if f.level != ERROR]
        for f in ordered[: max(int(max_findings), 0)]:
            lines.append(f"  {f}")
        if len(ordered) > max_findings:
            lines.append(f"  ... and {len(ordered) - max_findings} more findings (see the JSON report)")
        n_failed = len(self.failed_sequences)
        if self.ok:
            lines.append(f"OK: no errors, {self.n_warnings} warning{'s' if self.n_warnings != 1 else ''}")
        else:
            lines.append(
                f"FAILED: {self.n_errors} error{'s' if self.n_errors != 1 else ''} "
                f"({n_failed} sequence{'s' if n_failed != 1 else ''} affected), "
                f"{self.n_warnings} warning{'s' if self.n_warnings != 1 else ''}"
            )
        return lines


# --------------------------------------------------------------------------- #
# small helpers
# --------------------------------------------------------------------------- #
def _missing(v) -> bool:
    if v is None or v is pd.NA:
        return True
    if isinstance(v, (float, np.floating)):
        return bool(np.isnan(v))
    return False


def _num(v, default=math.nan) -> float:
    if _missing(v):
        return default
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def _float_col(table: pa.Table, name: str) -> np.ndarray:
    col = table.column(name)
    if col.null_count:
        col = pc.fill_null(col, np.nan)
    return np.array(col.to_numpy(), dtype=np.float64)


def _first(mask: np.ndarray) -> int:
    return int(np.argmax(mask))


def _p(x) -> str:
    """``repr`` for messages, with numpy scalars as plain Python values (``1.11``, not ``np.float64(1.11)``)."""
    if isinstance(x, np.generic):
        x = x.item()
    return repr(x)


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _rel_rotation_deg(R1: np.ndarray, R2: np.ndarray) -> np.ndarray:
    """Geodesic angle [deg] between rotation blocks ``(N, 3, 3)`` (accurate near 0)."""
    rel = np.swapaxes(R1, -1, -2) @ R2
    # sin from the antisymmetric part, cos from the trace: accurate to round-off near 0, where it matters
    s = 0.5 * np.sqrt(
        (rel[..., 2, 1] - rel[..., 1, 2]) ** 2 + (rel[..., 0, 2] - rel[..., 2, 0]) ** 2 + (rel[..., 1, 0] - rel[..., 0, 1]) ** 2
    )
    c = 0.5 * (rel[..., 0, 0] + rel[..., 1, 1] + rel[..., 2, 2] - 1.0)
    return np.degrees(np.arctan2(s, c))


def _pose_residual(T1: np.ndarray, T2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotation [deg] and translation [mm] differences of pose stacks ``(N, 4, 4)``."""
    rot = _rel_rotation_deg(T1[:, :3, :3], T2[:, :3, :3])
    trans = 1000.0 * np.linalg.norm(T1[:, :3, 3] - T2[:, :3, 3], axis=-1)
    return rot, trans


def _type_kind(t: pa.DataType) -> str:
    """Coarse kind of an Arrow type: types of one kind are read interchangeably (int32 / int64, ...)."""
    if pa.types.is_dictionary(t):
        return _type_kind(t.value_type)
    for kind, test in (("string", pa.types.is_string), ("string", pa.types.is_large_string),
                       ("integer", pa.types.is_integer), ("float", pa.types.is_floating),
                       ("bool", pa.types.is_boolean), ("null", pa.types.is_null)):  # fmt: skip
        if test(t):
            return kind
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "list<" + _type_kind(t.value_type) + ">"
    return str(t)


def _evenly_spaced(n: int, k: int) -> np.ndarray:
    if k >= n:
        return np.arange(n)
    if k == 1:
        return np.zeros(1, dtype=np.int64)
    return np.floor(np.arange(k) * ((n - 1) / (k - 1)) + 0.5).astype(np.int64)


def _model_list(value) -> list[str]:
    """Robot noise models of a ``robot_noise_models`` value (``"se3_gaussian+dh_error"``; ``"none"`` -> [])."""
    if not isinstance(value, str):
        return []
    return [m for m in re.split(r"[+,;| ]+", value.strip()) if m and m != "none"]


# --------------------------------------------------------------------------- #
# shard files
# --------------------------------------------------------------------------- #
@dataclass
class _Shard:
    """What the footer of one shard file says."""

    rel: str
    stream: str
    ok: bool = False
    error: str | None = None
    num_row_groups: int = 0
    ids: list = field(default_factory=list)  # per row group: the id, None (empty) or a tuple of several ids
    metadata: object = None  # pyarrow FileMetaData, reused when reading row groups


def _row_group_ids(pf: pq.ParquetFile, md) -> list:
    """The sequence id of each row group: from the footer statistics, else from the column itself."""
    names = md.schema.to_arrow_schema().names
    if "sequence_id" not in names:
        return [None] * md.num_row_groups
    j = names.index("sequence_id")
    out = []
    for i in range(md.num_row_groups):
        rg = md.row_group(i)
        if rg.num_rows == 0:
            out.append(None)
            continue
        st = rg.column(j).statistics
        if st is not None and st.has_min_max and st.null_count == 0:
            lo, hi = st.min, st.max
            lo = lo.decode() if isinstance(lo, bytes) else lo
            hi = hi.decode() if isinstance(hi, bytes) else hi
            if lo == hi:
                out.append(lo)
                continue
        vals = pc.unique(pf.read_row_group(i, columns=["sequence_id"]).column(0)).to_pylist()
        out.append(vals[0] if len(vals) == 1 else tuple(sorted(map(str, vals))))
    return out


def _check_one_writer(shards: dict, report: ValidationReport) -> None:
    """Shards of kinhec and of another tool (no ``kinhec.writer`` metadata) in one folder are an error."""
    writers: dict = {}
    for rel, sh in shards.items():
        if sh.ok and sh.metadata is not None:
            w = (sh.metadata.metadata or {}).get(kio.WRITER_METADATA_KEY.encode())
            writers.setdefault(w.decode("utf-8", "replace") if w else None, rel)
    if len(writers) > 1:
        found = "; ".join(f"{rel} by {w or 'another tool (the published toolkit)'}" for w, rel in writers.items())
        report._add(ERROR, "shards", f"expected shards written by one tool, got a mix ({found}); keep the shards "
                                     "of one tool in a folder", path="robot/")  # fmt: skip


def _scan_shard(root: Path, rel: str, stream: str, report: ValidationReport) -> _Shard:
    sh = _Shard(rel, stream)
    path = root / rel
    report._ran("shards")
    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for damaged files
        sh.error = f"cannot open the file, it is truncated, empty or not Parquet ({type(exc).__name__}: {exc})"
        report._add(ERROR, "shards", sh.error, path=rel)
        return sh
    try:
        md = pf.metadata
        schema = pf.schema_arrow
        want = _STREAM_SCHEMAS[stream]
        if not schema.equals(want, check_metadata=False):
            missing = [n for n in want.names if n not in schema.names]
            extra = [n for n in schema.names if n not in want.names]
            bad = [
                f"{f.name} ({schema.field(f.name).type}, expected {f.type})"
                for f in want
                if f.name in schema.names and schema.field(f.name).type != f.type
            ]
            parts = []
            if missing:
                parts.append(f"missing columns {missing}")
            if bad:
                parts.append(f"mistyped columns {bad}")
            if extra:
                parts.append(f"unexpected columns {extra}")
            if not parts:
                parts.append("columns in another order")
            level = ERROR if (missing or bad) else WARNING
            report._add(level, "shards", f"expected the {stream} stream schema, got " + "; ".join(parts), path=rel)
        sh.num_row_groups = md.num_row_groups
        sh.ids = _row_group_ids(pf, md)
        sh.metadata = md
        sh.ok = True
        # the index rows a kinhec writer stores in the footer (optional): same ids, same order
        text = (md.metadata or {}).get(kio.INDEX_METADATA_KEY.encode())
        if text is not None:
            try:
                rows = jsonutil.loads(text)
                listed = [r.get("sequence_id") for r in rows] if isinstance(rows, list) else None
            except (InputError, AttributeError):
                listed = None
            if listed is None:
                msg = f"metadata {_p(kio.INDEX_METADATA_KEY)} is not a JSON list of index rows"
                report._add(WARNING, "shards", msg, path=rel)
            elif listed != list(sh.ids):
                report._add(
                    WARNING,
                    "shards",
                    f"metadata {_p(kio.INDEX_METADATA_KEY)} lists {len(listed)} sequences that differ from the "
                    f"{sh.num_row_groups} row groups (kinhec index would rebuild a wrong index)",
                    path=rel,
                )
    except Exception as exc:
        sh.ok = False
        sh.error = f"cannot read the file's footer ({type(exc).__name__}: {exc})"
        report._add(ERROR, "shards", sh.error, path=rel)
    finally:
        pf.close()
    return sh


# --------------------------------------------------------------------------- #
# folder-level checks
# --------------------------------------------------------------------------- #
def _check_files(root: Path, report: ValidationReport) -> None:
    for name in REQUIRED_FILES:
        report._ran("files")
        if not (root / name).is_file():
            report._add(ERROR, "files", f"required file {name} is missing", path=name)
    for name in REQUIRED_DIRS:
        report._ran("files")
        if not (root / name).is_dir():
            report._add(ERROR, "files", f"required folder {name}/ is missing", path=name + "/")
    for name in RECOMMENDED_FILES:
        report._ran("files")
        if not (root / name).is_file():
            report._add(WARNING, "files", f"{name} is missing (a published copy ships it)", path=name)
    for name in ("robots.json", "cameras_targets.json", "generation_info.json"):
        p = root / name
        if not p.is_file():
            continue
        try:
            content = jsonutil.load(p)
        except (InputError, OSError, UnicodeDecodeError) as exc:
            report._add(ERROR, "files", f"cannot read the JSON file ({exc})", path=name)
            continue
        if not isinstance(content, dict):
            report._add(ERROR, "files", f"expected a JSON object, got {type(content).__name__}", path=name)
        elif name == "generation_info.json":
            missing = [k for k in GENERATION_INFO_KEYS if k not in content]
            if missing:
                msg = f"expected the keys {list(GENERATION_INFO_KEYS)}, missing {missing}"
                report._add(WARNING, "files", msg, path=name)
    for sub in REQUIRED_DIRS:
        d = root / sub
        if not d.is_dir():
            continue
        for p in sorted(d.iterdir()):
            if p.name.endswith(".tmp"):
                report._add(WARNING, "files", "leftover of an interrupted write (kinhec clean --partial removes it)",
                            path=f"{sub}/{p.name}")  # fmt: skip
            elif not (p.is_file() and _SHARD_NAME_RE.match(p.name)):
                msg = "unexpected entry in a shard folder (expected <track>-<5 digits>.parquet)"
                report._add(WARNING, "files", msg, path=f"{sub}/{p.name}")


def _check_complete(root: Path, man: pd.DataFrame, report: ValidationReport, partial: bool) -> None:
    """Planned (``generation_info.json``, per track) against indexed sequences: the missing ones, by track."""
    try:
        tracks = jsonutil.load(root / "generation_info.json").get("tracks")
    except (InputError, OSError, UnicodeDecodeError, AttributeError):
        return  # reported by the files check
    if not isinstance(tracks, dict):
        return
    planned = {t: v.get("planned_sequences") for t, v in tracks.items() if isinstance(v, dict)}
    planned = {t: int(n) for t, n in planned.items() if isinstance(n, (int, np.integer)) and not isinstance(n, bool)}
    if not planned:
        return
    report._ran("complete", len(planned))
    present = man["track"].value_counts().to_dict() if "track" in man.columns else {}
    short = {t: (int(present.get(t, 0)), n) for t, n in planned.items() if present.get(t, 0) < n}
    report.n_planned = sum(planned.values())
    report.n_missing = sum(n - have for have, n in short.values())
    if short:
        by_track = ", ".join(f"{t} {have} of {n}" for t, (have, n) in short.items())
        msg = (f"{report.n_missing} of the {report.n_planned} sequences generation_info.json plans are missing "
               f"({by_track}): the generation did not finish; run the same kinhec generate again to complete it")
        if partial:
            report._add(WARNING, "complete", msg + " (validated as a partial folder)", path="generation_info.json")
        else:
            report._add(ERROR, "complete", msg + ", or validate it with --partial", path="generation_info.json")


def _check_index_schema(root: Path, report: ValidationReport):
    """Schema findings for sequences.parquet; returns the manifest DataFrame or None."""
    path = root / kio.INDEX_FILE
    report._ran("index_schema")
    try:
        schema = pq.read_schema(path)
    except Exception as exc:
        msg = f"cannot read the index, the file is truncated or corrupt ({type(exc).__name__}: {exc})"
        report._add(ERROR, "index_schema", msg, path=kio.INDEX_FILE)
        return None
    names = schema.names
    missing = [n for n in INDEX_SCHEMA.names if n not in names]
    extra = [n for n in names if n not in INDEX_SCHEMA.names]
    if missing:
        report._add(ERROR, "index_schema", f"missing columns {missing}", path=kio.INDEX_FILE)
    if extra:
        report._add(WARNING, "index_schema", f"unexpected columns {extra}", path=kio.INDEX_FILE)
    if not missing and [n for n in names if n in INDEX_SCHEMA.names] != INDEX_SCHEMA.names:
        report._add(WARNING, "index_schema", "columns in another order than the schema", path=kio.INDEX_FILE)
    for f in INDEX_SCHEMA:
        if f.name not in names:
            continue
        got = schema.field(f.name).type
        if got == f.type:
            continue
        if _type_kind(got) in (_type_kind(f.type), "null"):  # same kind, other width: readable
            report._add(WARNING, "index_schema", f"column {_p(f.name)}: expected {f.type}, got {got} (cast when read)",
                        path=kio.INDEX_FILE)  # fmt: skip
        else:
            report._add(ERROR, "index_schema", f"column {_p(f.name)}: expected {f.type}, got {got}", path=kio.INDEX_FILE)
    try:
        man = kio.load_manifest(root)
    except KinhecError as exc:
        if not report.by_check("index_schema", ERROR):
            report._add(ERROR, "index_schema", str(exc), path=kio.INDEX_FILE)
        return None
    _check_index_values(man, report)
    return man


def _check_index_values(man: pd.DataFrame, report: ValidationReport) -> None:
    where = kio.INDEX_FILE
    sid = man["sequence_id"]
    bad = sid.isna() | (sid.astype(str).str.len() == 0)
    if bad.any():
        msg = f"{int(bad.sum())} rows without a sequence_id (first at row {_first(bad.to_numpy())})"
        report._add(ERROR, "index_schema", msg, path=where)
    dup = sid[sid.duplicated() & ~bad]
    if len(dup):
        report._add(ERROR, "index_schema", f"sequence ids listed more than once: {sorted(set(dup))[:5]}", path=where)
    for c in ("track", "configuration", "sync", "camera_noise_model", "world_frame", "robot"):
        nulls = man[c].isna()
        if nulls.any():
            report._add(ERROR, "index_schema", f"column {_p(c)}: {int(nulls.sum())} missing values", path=where)
    vocab = (
        ("configuration", CONFIGURATIONS, ERROR),
        ("camera_noise_model", CAMERA_NOISE_MODELS, ERROR),
        ("world_frame", WORLD_FRAMES, ERROR),
        ("track", TRACKS, WARNING),
        ("family", FAMILIES, WARNING),
        ("sampling_mode", SAMPLING_MODES, WARNING),
        ("outlier_model", OUTLIER_MODELS, WARNING),
        ("sync", ("synchronous", "asynchronous"), WARNING),
    )
    for col, valid, level in vocab:
        vals = man[col].dropna()
        unknown = sorted(set(vals.astype(str)) - set(valid))
        if unknown:
            msg = f"column {_p(col)}: expected one of {list(valid)}, got {unknown[:5]}"
            report._add(level, "index_schema", msg, path=where)
    rm = set()
    for v in man["robot_noise_models"].dropna().unique():
        rm.update(_model_list(v))
    unknown = sorted(rm - set(ROBOT_NOISE_MODELS))
    if unknown:
        report._add(WARNING, "index_schema", f"column 'robot_noise_models': unknown models {unknown[:5]}", path=where)
    ids = sid.dropna().astype(str)
    tracks = man.loc[ids.index, "track"].astype(str)
    m = ids.str.extract(_SEQ_ID_RE)["track"]
    off = m.isna() | (m != tracks)
    if off.any():
        report._add(WARNING, "index_schema",
                    f"{int(off.sum())} sequence ids not of the form <track>-<6 digits> (e.g. {_p(ids[off].iloc[0])})",
                    path=where)  # fmt: skip


def _check_index_csv(root: Path, man: pd.DataFrame, report: ValidationReport) -> None:
    path = root / kio.INDEX_CSV_FILE
    if not path.is_file():
        return
    report._ran("index_csv")
    try:
        header = pd.read_csv(path, nrows=0).columns.tolist()
        ids = pd.read_csv(path, usecols=["sequence_id"], dtype={"sequence_id": str})["sequence_id"].tolist()
    except Exception as exc:
        msg = f"cannot read the CSV index ({type(exc).__name__}: {exc})"
        report._add(ERROR, "index_csv", msg, path=kio.INDEX_CSV_FILE)
        return
    if header != list(INDEX_CSV_COLUMNS):
        missing = [c for c in INDEX_CSV_COLUMNS if c not in header]
        extra = [c for c in header if c not in INDEX_CSV_COLUMNS]
        detail = "; ".join(
            s for s in (f"missing {missing}" if missing else "", f"unexpected {extra}" if extra else "") if s
        ) or "columns in another order"
        report._add(ERROR if missing else WARNING, "index_csv", f"expected the CSV index columns, got {detail}",
                    path=kio.INDEX_CSV_FILE)  # fmt: skip
    want = man["sequence_id"].astype(str).tolist()
    if ids != want:
        only_csv = sorted(set(ids) - set(want))
        only_pq = sorted(set(want) - set(ids))
        if only_csv or only_pq:
            detail = (
                f"{len(only_pq)} sequences missing from it (e.g. {only_pq[:3]}), "
                f"{len(only_csv)} not in the Parquet index (e.g. {only_csv[:3]})"
            )
        else:
            detail = "the same sequences in another order"
        msg = f"expected the {len(want)} sequences of {kio.INDEX_FILE}, got {len(ids)} rows: {detail}"
        report._add(ERROR, "index_csv", msg, path=kio.INDEX_CSV_FILE)


def _referenced_locations(man: pd.DataFrame, report: ValidationReport):
    """Per index row, the valid (file, row group) of each stream, or None; findings for malformed ones."""
    locs = {"robot": [None] * len(man), "camera": [None] * len(man)}
    ids = man["sequence_id"].tolist()
    for stream in ("robot", "camera"):
        files = man[f"{stream}_file"].tolist()
        rgs = man[f"{stream}_row_group"].tolist()
        for i, (sid, rel, rg) in enumerate(zip(ids, files, rgs)):
            if not isinstance(rel, str) or not rel or _missing(rg):
                report._add(ERROR, "row_groups", f"expected {stream}_file and {stream}_row_group, got {_p(rel)} / {_p(rg)}",
                            sequence_id=sid)  # fmt: skip
                continue
            rel = rel.replace("\\", "/")
            mt = _SHARD_FILE_RE.match(rel)
            if mt is None or mt.group("stream") != stream:
                report._add(ERROR, "row_groups",
                            f"{stream}_file: expected '{stream}/<track>-<5 digits>.parquet', got {_p(rel)}",
                            sequence_id=sid)  # fmt: skip
                continue
            locs[stream][i] = (rel, int(rg))
    return locs


def _check_row_groups(root: Path, man: pd.DataFrame, report: ValidationReport) -> dict[str, _Shard]:
    """Scan every shard file once, match its row groups against the index; returns the scanned shards."""
    locs = _referenced_locations(man, report)
    rels: dict[str, str] = {}
    for stream in ("robot", "camera"):
        for loc in locs[stream]:
            if loc is not None:
                rels.setdefault(loc[0], stream)
        d = root / stream
        if d.is_dir():
            for p in sorted(d.iterdir()):
                if p.is_file() and _SHARD_NAME_RE.match(p.name):
                    rels.setdefault(f"{stream}/{p.name}", stream)
    shards: dict[str, _Shard] = {}
    referenced = {rel for stream in locs for loc in locs[stream] if loc is not None for rel in (loc[0],)}
    for rel in sorted(rels):
        if not (root / rel).is_file():
            report._ran("files")
            n = sum(1 for s in ("robot", "camera") for loc in locs[s] if loc is not None and loc[0] == rel)
            report._add(ERROR, "files", f"shard file referenced by {n} index rows is missing", path=rel)
            continue
        shards[rel] = _scan_shard(root, rel, rels[rel], report)
    _check_one_writer(shards, report)
    # references per row group
    refs: dict[tuple[str, int], list[str]] = {}
    ids = man["sequence_id"].tolist()
    for stream in ("robot", "camera"):
        for sid, loc in zip(ids, locs[stream]):
            report._ran("row_groups")
            if loc is None:
                continue
            rel, rg = loc
            sh = shards.get(rel)
            if sh is None or not sh.ok:
                continue  # missing / unreadable file: reported under files / shards, and per sequence under read
            if not 0 <= rg < sh.num_row_groups:
                report._add(ERROR, "row_groups",
                            f"{stream}_row_group {rg} does not exist: the file has {sh.num_row_groups} row groups",
                            sequence_id=sid, path=rel)  # fmt: skip
                continue
            refs.setdefault((rel, rg), []).append(sid)
            held = sh.ids[rg]
            if isinstance(held, tuple):
                report._add(ERROR, "row_groups", f"{stream} row group {rg} holds several sequences {list(held)[:3]}",
                            sequence_id=sid, path=rel)  # fmt: skip
            elif held is not None and held != sid:
                report._add(ERROR, "row_groups", f"{stream} row group {rg} holds sequence {_p(held)}, not {_p(sid)}",
                            sequence_id=sid, path=rel)  # fmt: skip
    for rel, sh in shards.items():
        if not sh.ok:
            continue
        orphans = [i for i in range(sh.num_row_groups) if (rel, i) not in refs]
        dups = {i: refs[(rel, i)] for i in range(sh.num_row_groups) if len(refs.get((rel, i), ())) > 1}
        if orphans:
            held = [sh.ids[i] for i in orphans]
            what = "no index row references this file" if rel not in referenced else "not referenced by any index row"
            report._add(ERROR, "row_groups",
                        f"{len(orphans)} orphaned row group(s) {orphans[:10]} (holding {held[:3]}): {what}",
                        path=rel)  # fmt: skip
        for i, who in dups.items():
            msg = f"row group {i} is referenced by {len(who)} index rows: {who[:5]}"
            report._add(ERROR, "row_groups", msg, path=rel)
    return shards


# --------------------------------------------------------------------------- #
# per-sequence checks
# --------------------------------------------------------------------------- #
class _Reader:
    """Reads row groups, keeping the last shard file of each stream open."""

    def __init__(self, root: Path, shards: dict[str, _Shard]) -> None:
        self.root = root
        self.shards = shards
        self.open: dict[str, tuple[str, pq.ParquetFile]] = {}

    def close(self) -> None:
        for _, pf in self.open.values():
            pf.close()
        self.open.clear()

    def read(self, info: dict, stream: str) -> pa.Table:
        sid = info["sequence_id"]
        rel = info.get(f"{stream}_file")
        rg = info.get(f"{stream}_row_group")
        if not isinstance(rel, str) or not rel or _missing(rg):
            raise DatasetFormatError(f"no valid {stream}_file / {stream}_row_group in the index ({_p(rel)} / {_p(rg)})")
        rel = rel.replace("\\", "/")
        rg = int(rg)
        cur = self.open.get(stream)
        if cur is None or cur[0] != rel:
            if cur is not None:
                cur[1].close()
                del self.open[stream]
            sh = self.shards.get(rel)
            if sh is not None and not sh.ok:
                raise DatasetFormatError(f"{rel}: {sh.error}")
            path = self.root / rel
            if not path.is_file():
                raise DatasetFormatError(f"{rel}: the {stream} shard file is missing")
            try:
                pf = pq.ParquetFile(path, metadata=sh.metadata if sh is not None else None)
            except Exception as exc:
                msg = f"{rel}: cannot open the {stream} shard ({type(exc).__name__}: {exc})"
                raise DatasetFormatError(msg) from None
            self.open[stream] = (rel, pf)
        pf = self.open[stream][1]
        if not 0 <= rg < pf.num_row_groups:
            raise DatasetFormatError(f"{rel}: row group {rg} does not exist (the file has {pf.num_row_groups})")
        try:
            table = pf.read_row_group(rg)
        except Exception as exc:
            raise DatasetFormatError(f"{rel}: cannot read row group {rg} ({type(exc).__name__}: {exc})") from None
        if "sequence_id" not in table.schema.names:
            raise DatasetFormatError(f"{rel}: no sequence_id column")
        found = [v for v in pc.unique(table.column("sequence_id")).to_pylist() if v != sid]
        if found:
            raise DatasetFormatError(f"{rel}: row group {rg} holds sequence {_p(found[0])}, not {_p(sid)}")
        return table


class _SequenceChecker:
    """All per-sequence checks of one sequence (arrays of all frames at once)."""

    def __init__(self, report: ValidationReport, info: dict, robot: pa.Table, camera: pa.Table, seq: kio.Sequence,
                 robot_rel: str | None, camera_rel: str | None) -> None:  # fmt: skip
        self.report = report
        self.info = info
        self.sid = str(info.get("sequence_id"))
        self.rt = robot
        self.ct = camera
        self.seq = seq
        self.robot_rel = robot_rel
        self.camera_rel = camera_rel
        self.same_clock = (not kio.is_asynchronous(info.get("sync"))) or info.get("sampling_mode") == "stations"

    def err(self, check: str, msg: str, path=None) -> None:
        self.report._add(ERROR, check, msg, sequence_id=self.sid, path=path)

    def warn(self, check: str, msg: str, path=None) -> None:
        self.report._add(WARNING, check, msg, sequence_id=self.sid, path=path)

    def run(self) -> None:
        for name in ("frame_counts", "timestamps", "clocks", "poses", "quaternions", "availability", "visibility",
                     "fk", "flange_gt", "axyb"):  # fmt: skip
            self.report._ran(name)
            try:
                getattr(self, "check_" + name)()
            except Exception as exc:  # a check never takes the validation down
                self.err(name, f"could not be checked ({type(exc).__name__}: {exc})")

    # ------------------------------------------------------------------ checks
    def check_frame_counts(self) -> None:
        nr, nc = len(self.seq.robot), len(self.seq.camera)
        for stream, n, col, rel in (("robot", nr, "n_robot_frames", self.robot_rel),
                                    ("camera", nc, "n_camera_frames", self.camera_rel)):  # fmt: skip
            want = self.info.get(col)
            if _missing(want) or int(want) != n:
                self.err("frame_counts", f"{col} = {want} in the index, but the {stream} stream has {n} rows", path=rel)
            frame = getattr(self.seq, stream).frame
            if frame.shape[0] and not np.array_equal(frame, np.arange(frame.shape[0])):
                k = _first(frame != np.arange(frame.shape[0]))
                msg = f"{stream} column 'frame': expected 0 .. {n - 1}, got {int(frame[k])} at row {k}"
                self.err("frame_counts", msg, path=rel)
        if nc == 0:
            self.err("frame_counts", "the camera stream has no frames", path=self.camera_rel)
        if self.same_clock and nr != nc:
            msg = f"synchronous streams must have frame-aligned rows, got {nr} robot and {nc} camera frames"
            self.err("frame_counts", msg)
        dof = self.info.get("dof")
        width = self.seq.robot.q_gt.shape[1]
        if _missing(dof) or int(dof) != width or self.seq.robot.q_meas.shape[1] != width:
            n_meas = self.seq.robot.q_meas.shape[1]
            msg = f"dof = {dof} in the index, but q_gt has {width} and q_meas {n_meas} joints per row"
            self.err("frame_counts", msg, path=self.robot_rel)

    def check_timestamps(self) -> None:
        for stream, rel, name, t in (("robot", self.robot_rel, "t", self.seq.robot.t),
                                     ("camera", self.camera_rel, "t", self.seq.camera.t),
                                     ("camera", self.camera_rel, "t_gt", self.seq.camera.t_gt)):  # fmt: skip
            bad = ~np.isfinite(t)
            if bad.any():
                msg = f"{stream} {name}: {int(bad.sum())} non-finite stamps (first at frame {_first(bad)})"
                self.err("timestamps", msg, path=rel)
                continue
            if t.size > 1:
                d = np.diff(t)
                if stream == "camera" and name == "t" and not self.same_clock and self._jittered():
                    continue  # t = t_gt + offset + jitter: jitter may reorder stamps; t_gt must increase
                if (d <= 0).any():
                    k = _first(d <= 0)
                    self.err("timestamps", f"{stream} {name}: expected strictly increasing stamps, got "
                                           f"{name}[{k + 1}] = {_p(t[k + 1])} <= {name}[{k}] = {_p(t[k])} "
                                           f"({int((d <= 0).sum())} such steps)", path=rel)  # fmt: skip

    def _jittered(self) -> bool:
        jitter = _num(self.info.get("time_jitter_std_s"), 0.0)
        return math.isfinite(jitter) and jitter > 0

    def check_clocks(self) -> None:
        tr, tc, tg = self.seq.robot.t, self.seq.camera.t, self.seq.camera.t_gt
        offset = _num(self.info.get("time_offset_s"))
        jitter = _num(self.info.get("time_jitter_std_s"), 0.0)
        if self.same_clock:
            for col in ("time_offset_s", "time_jitter_std_s", "camera_drop_fraction"):
                v = _num(self.info.get(col), 0.0)
                if v != 0.0:
                    self.warn("clocks", f"{col} = {_p(v)} for a synchronous sequence (expected 0)")
            if tr.shape == tc.shape:
                dev = np.abs(tr - tc)
                if (dev > CLOCK_TOL_S).any() or not np.isfinite(dev).all():
                    k = _first(~(dev <= CLOCK_TOL_S))
                    self.err("clocks", f"synchronous streams: robot t[{k}] = {_p(tr[k])} but camera t[{k}] = {_p(tc[k])} "
                                       f"({int((~(dev <= CLOCK_TOL_S)).sum())} rows differ)")  # fmt: skip
            dev = np.abs(tc - tg)
            if (~(dev <= CLOCK_TOL_S)).any():
                k = _first(~(dev <= CLOCK_TOL_S))
                self.err("clocks", f"synchronous stream: camera t[{k}] = {_p(tc[k])} but t_gt[{k}] = {_p(tg[k])} "
                                   f"(identical clocks expected)", path=self.camera_rel)  # fmt: skip
            return
        # asynchronous
        if not math.isfinite(offset):
            self.err("clocks", f"asynchronous sequence without a finite time_offset_s, got {_p(offset)}")
            return
        if not (math.isfinite(jitter) and jitter >= 0):
            self.err("clocks", f"time_jitter_std_s: expected a number >= 0, got {_p(self.info.get('time_jitter_std_s'))}")
            return
        r = tc - tg - offset
        fin = np.isfinite(r)
        r = r[fin]
        if r.size == 0:
            return
        if jitter == 0.0:
            bad = np.abs(r) > CLOCK_TOL_S + 1e-15 * np.abs(tc[fin])
            if bad.any():
                k = _first(bad)
                msg = (f"without jitter t = t_gt + time_offset_s is expected, got a residual of {_fmt(r[k])} s "
                       f"at frame {k} ({int(bad.sum())} frames)")  # fmt: skip
                self.err("clocks", msg, path=self.camera_rel)
        else:
            lim = JITTER_FRAME_SIGMAS * jitter + CLOCK_TOL_S
            bad = np.abs(r) > lim
            if bad.any():
                k = _first(bad)
                msg = (f"t - t_gt - time_offset_s = {_fmt(r[k])} s at frame {k} exceeds {JITTER_FRAME_SIGMAS:g} x "
                       f"time_jitter_std_s = {_fmt(lim)} s ({int(bad.sum())} frames)")  # fmt: skip
                self.err("clocks", msg, path=self.camera_rel)
            n = r.size
            mean = float(r.mean())
            if abs(mean) > JITTER_SIGMAS * jitter / math.sqrt(n) + CLOCK_TOL_S:
                self.err("clocks", f"mean of t - t_gt - time_offset_s is {_fmt(mean)} s over {n} frames, expected 0 "
                                   f"within {_fmt(JITTER_SIGMAS * jitter / math.sqrt(n))} s (wrong offset?)",
                         path=self.camera_rel)  # fmt: skip
            if n >= 2:
                std = float(r.std(ddof=1))
                se = jitter / math.sqrt(2.0 * (n - 1))
                hi = jitter + JITTER_SIGMAS * se + CLOCK_TOL_S
                lo = jitter - JITTER_SIGMAS * se if n >= 10 else -math.inf
                if not lo <= std <= hi:
                    self.err("clocks", f"standard deviation of t - t_gt - time_offset_s is {_fmt(std)} s over {n} "
                                       f"frames, inconsistent with time_jitter_std_s = {_fmt(jitter)} s",
                             path=self.camera_rel)  # fmt: skip
        if tr.size and tg.size and np.isfinite(tg).all():
            out = (tg < tr[0] - CLOCK_TOL_S) | (tg > tr[-1] + CLOCK_TOL_S)
            if out.any():
                self.warn("clocks", f"{int(out.sum())} camera instants t_gt lie outside the robot stream "
                                    f"[{_p(tr[0])}, {_p(tr[-1])}] s (first at frame {_first(out)})")  # fmt: skip

    def _pose_block(self, table: pa.Table, prefix: str) -> np.ndarray:
        if table.num_rows == 0:
            return np.zeros((0, 7))
        return np.column_stack([_float_col(table, c) for c in pose_columns(prefix)])

    def _stored_poses(self):
        """(name, rel, (N, 7) array, is_ground_truth) of every stored pose group, index X / Y included."""
        out = []
        for prefix in ("base_ee_gt", "base_ee_meas"):
            out.append((f"robot {prefix}", self.robot_rel, self._pose_block(self.rt, prefix), prefix.endswith("_gt")))
        for prefix in ("base_ee_gt", "cam_target_gt", "cam_target_meas"):
            out.append((f"camera {prefix}", self.camera_rel, self._pose_block(self.ct, prefix), prefix.endswith("_gt")))
        for prefix in ("X", "Y"):
            v = np.array([[_num(self.info.get(c)) for c in pose_columns(prefix)]])
            out.append((f"index {prefix}", kio.INDEX_FILE, v, True))
        return out

    def check_poses(self) -> None:
        for name, rel, P, gt in self._stored_poses():
            if np.isinf(P).any():
                k = _first(np.isinf(P).any(axis=1))
                self.err("poses", f"{name}: infinite values (first at row {k})", path=rel)
                continue
            fin = np.isfinite(P)
            if gt:
                bad = ~fin.all(axis=1)
                if bad.any():
                    msg = (f"{name}: ground truth must be finite on every row, got {int(bad.sum())} rows with NaN "
                           f"(first at row {_first(bad)})")  # fmt: skip
                    self.err("poses", msg, path=rel)
            else:
                partial = fin.any(axis=1) & ~fin.all(axis=1)
                if partial.any():
                    msg = (f"{name}: {int(partial.sum())} rows are partly NaN (first at row {_first(partial)}); "
                           f"a measurement is complete or absent")  # fmt: skip
                    self.err("poses", msg, path=rel)

    def check_quaternions(self) -> None:
        for name, rel, P, _gt in self._stored_poses():
            Q = P[:, 3:]
            ok = np.isfinite(Q).all(axis=1)
            if not ok.any():
                continue
            Qf = Q[ok]
            rows = np.flatnonzero(ok)
            dev = np.abs(np.linalg.norm(Qf, axis=1) - 1.0)
            bad = dev > QUAT_UNIT_TOL
            if bad.any():
                k = _first(bad)
                msg = (f"{name}: expected unit quaternions, got | |q| - 1 | = {_fmt(dev[k])} at row {rows[k]} "
                       f"({int(bad.sum())} rows, largest {_fmt(dev.max())})")  # fmt: skip
                self.err("quaternions", msg, path=rel)
            neg = Qf[:, 0] < 0
            if neg.any():
                k = _first(neg)
                self.err("quaternions", f"{name}: expected qw >= 0 as stored, got qw = {_p(Qf[k, 0])} at row {rows[k]} "
                                        f"({int(neg.sum())} rows)", path=rel)  # fmt: skip

    def check_availability(self) -> None:
        cam = self.seq.camera
        has = cam.has_measurement
        model = self.info.get("camera_noise_model")
        if model == "pnp":
            wrong = has != cam.visible
            if wrong.any():
                extra = int((has & ~cam.visible).sum())
                lost = int((~has & cam.visible).sum())
                self.err("availability", f"pnp: expected a measurement exactly on the visible frames, got {extra} "
                                         f"invisible frames with one and {lost} visible frames without "
                                         f"(first at frame {_first(wrong)})", path=self.camera_rel)  # fmt: skip
            rm = np.isfinite(cam.reproj_rmse_px)
            if (has & ~rm).any():
                self.warn("availability", f"pnp: {int((has & ~rm).sum())} measured frames without reproj_rmse_px",
                          path=self.camera_rel)  # fmt: skip
        elif model in CAMERA_NOISE_MODELS:
            if (~has).any():
                msg = (f"{model}: expected a measurement on every frame, got {int((~has).sum())} frames without "
                       f"(first at frame {_first(~has)})")  # fmt: skip
                self.err("availability", msg, path=self.camera_rel)
        rob = self.seq.robot
        bad = ~np.isfinite(rob.T_base_ee_meas).all(axis=(1, 2))
        if bad.any():
            msg = (f"robot base_ee_meas: expected a reported pose on every frame, got {int(bad.sum())} without "
                   f"(first at frame {_first(bad)})")  # fmt: skip
            self.err("availability", msg, path=self.robot_rel)
        if rob.q_meas.size:
            bad = ~np.isfinite(rob.q_meas).all(axis=1)
            if bad.any():
                self.err("availability", f"q_meas: {int(bad.sum())} rows with non-finite encoder readings "
                                         f"(first at frame {_first(bad)})", path=self.robot_rel)  # fmt: skip

    def check_visibility(self) -> None:
        cam = self.seq.camera
        for col, arr in (("n_visible_frames", cam.visible), ("n_outlier_frames", cam.outlier)):
            want = self.info.get(col)
            got = int(arr.sum())
            if _missing(want) or int(want) != got:
                self.err("visibility", f"{col} = {want} in the index, but the camera stream labels {got} frames",
                         path=self.camera_rel)  # fmt: skip
        for col in ("visible", "outlier"):
            if self.ct.column(col).null_count:
                msg = f"column {_p(col)}: {self.ct.column(col).null_count} missing labels"
                self.err("visibility", msg, path=self.camera_rel)
        has = cam.has_measurement
        bad = cam.outlier & ~has
        if bad.any():
            self.err("visibility", f"{int(bad.sum())} frames labelled outlier carry no measurement "
                                   f"(first at frame {_first(bad)})", path=self.camera_rel)  # fmt: skip
        frac = _num(self.info.get("outlier_fraction"), 0.0)
        model = self.info.get("outlier_model")
        n_out = int(cam.outlier.sum())
        if n_out and (frac == 0.0 or model in (None, "none")):
            msg = f"{n_out} outliers although outlier_fraction = {_p(frac)} and outlier_model = {_p(model)}"
            self.err("visibility", msg, path=self.camera_rel)
        elif math.isfinite(frac) and 0.0 < frac <= 1.0:
            expected = round(frac * int(has.sum()))
            if n_out != expected:
                msg = f"{n_out} outliers, expected round(outlier_fraction x measured frames) = {expected}"
                self.warn("visibility", msg, path=self.camera_rel)
        if self.info.get("world_frame") == "vo_origin" and not cam.visible.all():
            self.err("visibility", f"world_frame vo_origin has no board: every frame is visible, got "
                                   f"{int((~cam.visible).sum())} invisible", path=self.camera_rel)  # fmt: skip

    def _true_model(self) -> RobotModel | None:
        """The model whose kinematics made the ground truth (None: reported, cannot check)."""
        name = self.info.get("robot")
        self.uses_true_dh = "dh_error" in _model_list(self.info.get("robot_noise_models"))
        if self.uses_true_dh:
            true_dh = self.seq.extra.get("true_dh") if isinstance(self.seq.extra, dict) else None
            if not isinstance(true_dh, dict):
                self.err("fk", "dh_error sequence without the true DH model (extra_json['true_dh'])")
                return None
            try:
                if "a_m" in true_dh:  # an older kinhec row: the whole model
                    return RobotModel.from_dict(true_dh)
                # the published form: the perturbed a, d, alpha, theta_offset over the nominal model
                return RobotModel.from_dict({**get_robot(name).to_published_dict(), **true_dh})
            except KinhecError as exc:
                self.err("fk", f"extra_json['true_dh'] is not a valid robot model: {exc}")
                return None
        try:
            return get_robot(name)
        except KinhecError as exc:
            self.err("fk", f"cannot check the kinematics: {exc}")
            return None

    def check_fk(self) -> None:
        rob = self.seq.robot
        dof = rob.q_gt.shape[1]
        if dof == 0:
            if self.info.get("robot") not in (None, "free6d"):
                try:
                    model_dof = get_robot(self.info.get("robot")).dof
                except KinhecError:
                    model_dof = None
                if model_dof:
                    self.err("fk", f"robot {_p(self.info.get('robot'))} has {model_dof} joints but q_gt is empty",
                             path=self.robot_rel)  # fmt: skip
            return
        if len(rob) == 0:
            return
        model = self._true_model()
        if model is None:
            return
        if model.dof != dof:
            self.err("fk", f"the model of {_p(model.name)} has {model.dof} joints, q_gt has {dof}", path=self.robot_rel)
            return
        ok = np.isfinite(rob.q_gt).all(axis=1)
        if not ok.all():
            self.err("fk", f"q_gt: {int((~ok).sum())} rows with non-finite joints (first at frame {_first(~ok)})",
                     path=self.robot_rel)  # fmt: skip
        ok &= np.isfinite(rob.T_base_ee_gt).all(axis=(1, 2))
        if not ok.any():
            return
        T_fk = model.fk(rob.q_gt[ok])
        rot, trans = _pose_residual(T_fk, rob.T_base_ee_gt[ok])
        bad = (rot > FK_TOL_DEG) | (trans > FK_TOL_MM)
        if bad.any():
            rows = np.flatnonzero(ok)
            k = _first(bad)
            which = "the true DH model (extra_json.true_dh)" if self.uses_true_dh else f"model {_p(model.name)}"
            msg = (f"FK of q_gt with {which} differs from base_ee_gt by {_fmt(rot[k])} deg / {_fmt(trans[k])} mm "
                   f"at frame {rows[k]} ({int(bad.sum())} frames, largest {_fmt(rot.max())} deg / "
                   f"{_fmt(trans.max())} mm; tolerance {FK_TOL_DEG:g} deg / {FK_TOL_MM:g} mm)")  # fmt: skip
            self.err("fk", msg, path=self.robot_rel)

    def check_flange_gt(self) -> None:
        rob, cam = self.seq.robot, self.seq.camera
        Tr, Tc = rob.T_base_ee_gt, cam.T_base_ee_gt
        if self.same_clock:
            if Tr.shape != Tc.shape:
                return  # reported by frame_counts
            ok = np.isfinite(Tr).all(axis=(1, 2)) & np.isfinite(Tc).all(axis=(1, 2))
            if not ok.any():
                return
            rot, trans = _pose_residual(Tr[ok], Tc[ok])
            bad = (rot > FK_TOL_DEG) | (trans > FK_TOL_MM)
            if bad.any():
                k = _first(bad)
                self.err("flange_gt", f"robot and camera base_ee_gt differ on the shared instant of frame "
                                      f"{np.flatnonzero(ok)[k]} by {_fmt(rot[k])} deg / {_fmt(trans[k])} mm "
                                      f"({int(bad.sum())} frames)")  # fmt: skip
            return
        # asynchronous: interpolate the robot stream at t_gt, compare within a bound on the interpolation error
        ok_r = np.isfinite(Tr).all(axis=(1, 2)) & np.isfinite(rob.t)
        if ok_r.sum() < 3 or not np.all(np.diff(rob.t[ok_r]) > 0):
            return  # too short, or stamps already reported
        t_r, T_r = rob.t[ok_r], Tr[ok_r]
        ok_c = np.isfinite(cam.t_gt) & np.isfinite(Tc).all(axis=(1, 2))
        if not ok_c.any():
            return
        T_i = se3.interpolate_poses(t_r, T_r, cam.t_gt[ok_c], out_of_range="nan")
        inside = np.isfinite(T_i).all(axis=(1, 2))
        if not inside.any():
            return
        p = T_r[:, :3, 3]
        d2p = np.linalg.norm(p[2:] - 2.0 * p[1:-1] + p[:-2], axis=1)
        rel = np.swapaxes(T_r[:-1, :3, :3], -1, -2) @ T_r[1:, :3, :3]
        omega = se3.so3_log(rel, check=False)
        d2w = np.linalg.norm(omega[1:] - omega[:-1], axis=1)
        # linear / SLERP interpolation errs by at most ~|second difference| / 8 between samples: allow 8x that
        tol_mm = 1000.0 * float(d2p.max()) + FK_TOL_MM
        tol_deg = math.degrees(float(d2w.max())) + FK_TOL_DEG
        rot, trans = _pose_residual(T_i[inside], Tc[ok_c][inside])
        bad = (rot > tol_deg) | (trans > tol_mm)
        if bad.any():
            k = _first(bad)
            frame = np.flatnonzero(ok_c)[np.flatnonzero(inside)[k]]
            self.err("flange_gt", f"camera base_ee_gt at frame {frame} differs from the robot stream at t_gt by "
                                  f"{_fmt(rot[k])} deg / {_fmt(trans[k])} mm, more than interpolation explains "
                                  f"({_fmt(tol_deg)} deg / {_fmt(tol_mm)} mm; {int(bad.sum())} frames)",
                     path=self.camera_rel)  # fmt: skip

    def check_axyb(self) -> None:
        cam = self.seq.camera
        A = cam.T_base_ee_gt
        T_ct = cam.T_cam_target_gt
        ok = np.isfinite(A).all(axis=(1, 2)) & np.isfinite(T_ct).all(axis=(1, 2))
        if not ok.any():
            return
        conf = self.info.get("configuration")
        if conf == "eye_in_hand":
            B = se3.invert_transform(T_ct[ok], check=False)
        elif conf == "eye_to_hand":
            B = T_ct[ok]
        else:
            self.err("axyb", f"unknown configuration {_p(conf)}; expected one of {list(CONFIGURATIONS)}")
            return
        rot, trans = _pose_residual(A[ok] @ self.seq.X, self.seq.Y @ B)
        bad = (rot > AXYB_TOL_DEG) | (trans > AXYB_TOL_MM)
        if bad.any():
            k = _first(bad)
            self.err("axyb", f"A_i X = Y B_i fails at camera frame {np.flatnonzero(ok)[k]} by {_fmt(rot[k])} deg / "
                             f"{_fmt(trans[k])} mm ({int(bad.sum())} frames, largest {_fmt(rot.max())} deg / "
                             f"{_fmt(trans.max())} mm; tolerance {AXYB_TOL_DEG:g} deg / {AXYB_TOL_MM:g} mm)",
                     path=self.camera_rel)  # fmt: skip


# --------------------------------------------------------------------------- #
# entry point
# --------------------------------------------------------------------------- #
def _not_a_dataset(root: Path) -> str | None:
    """One-line reason when ``root`` is not a dataset folder at all, else None."""
    if not root.exists():
        return f"{root}: no such folder"
    if not root.is_dir():
        return f"{root}: expected a dataset folder, got a file"
    if (root / kio.INDEX_FILE).exists() or (root / "robot").is_dir() or (root / "camera").is_dir():
        return None
    return f"{root}: not a kinhec dataset: no {kio.INDEX_FILE} and no robot/ or camera/ shard folders"


def validate_dataset(root, *, max_sequences: int | None = None,
                     progress: Callable[[int, int], None] | None = None, partial: bool = False) -> ValidationReport:  # fmt: skip
    """Check a dataset folder and report every problem found.

    Parameters
    ----------
    root : str or Path
        The dataset folder.
    max_sequences : int, optional
        Run the per-sequence checks on this many sequences only, evenly spaced
        over the index order (first and last included); default every
        sequence.  The folder-level checks always cover the whole folder.
    progress : callable, optional
        Called as ``progress(done, total)`` after each checked sequence.
    partial : bool
        Accept a folder whose generation is not complete: the sequences
        ``generation_info.json`` plans but the index does not hold are then a
        warning, not an error (default: an error, so that an interrupted
        ``generate`` is never reported OK).

    Returns
    -------
    ValidationReport
        ``report.ok`` is False when any finding is an error.  See the module
        docstring for the checks.

    Raises
    ------
    DatasetFormatError
        Only when ``root`` is not a dataset folder at all (it does not exist,
        or holds neither ``sequences.parquet`` nor ``robot/`` / ``camera/``);
        the message is one line saying what is missing.
    InputError
        For an invalid ``max_sequences`` or ``progress``, or a folder that
        a kinhec writer is writing (its lock ``.kinhec/lock`` is held).
    """
    t0 = time.perf_counter()
    try:
        root = Path(root)
    except TypeError:
        raise InputError(f"root: expected a folder path, got {type(root).__name__}") from None
    if max_sequences is not None and (
        isinstance(max_sequences, bool) or not isinstance(max_sequences, (int, np.integer)) or max_sequences < 1
    ):
        raise InputError(f"max_sequences: expected an integer >= 1 or None, got {_p(max_sequences)}")
    if progress is not None and not callable(progress):
        raise InputError(f"progress: expected a callable progress(done, total), got {type(progress).__name__}")
    refuse_if_in_use(root, "validate")  # a folder being written is incomplete by design: say so, not its errors
    reason = _not_a_dataset(root)
    if reason is not None:
        raise DatasetFormatError(reason)

    report = ValidationReport(root=str(root))
    _check_files(root, report)
    man = None
    if (root / kio.INDEX_FILE).is_file():
        man = _check_index_schema(root, report)
    else:
        # no index: check the shards against the index their metadata describes
        try:
            man = kio.rebuild_index(root, skip_corrupt=True)
            report._add(WARNING, "files", f"checking the shards against the index rebuilt from their metadata "
                                          f"({len(man)} sequences; kinhec index rebuilds {kio.INDEX_FILE})",
                        path=kio.INDEX_FILE)  # fmt: skip
        except KinhecError as exc:
            msg = f"no index, and none can be rebuilt from the shards: {exc}"
            report._add(ERROR, "files", msg, path=kio.INDEX_FILE)
    if man is None:
        report.seconds = time.perf_counter() - t0
        return report
    _check_index_csv(root, man, report)
    _check_complete(root, man, report, partial)
    shards = _check_row_groups(root, man, report)

    n = len(man)
    report.n_sequences = n
    if max_sequences is None or max_sequences >= n:
        positions = np.arange(n)
        report.sample = "all"
    else:
        positions = _evenly_spaced(n, int(max_sequences))
        report.sample = f"{positions.size} of {n}, evenly spaced over the index order"
    reader = _Reader(root, shards)
    total = int(positions.size)
    try:
        for start in range(0, total, _RECORD_CHUNK):  # index rows as dicts, a chunk at a time
            for info in man.iloc[positions[start : start + _RECORD_CHUNK]].to_dict("records"):
                _check_sequence(report, reader, info)
                report.n_checked += 1
                if progress is not None:
                    progress(report.n_checked, total)
    finally:
        reader.close()
    report.seconds = time.perf_counter() - t0
    return report


def _check_sequence(report: ValidationReport, reader: _Reader, info: dict) -> None:
    sid = info.get("sequence_id")
    sid = None if _missing(sid) else str(sid)
    report._ran("read")
    robot_rel = info.get("robot_file") if isinstance(info.get("robot_file"), str) else None
    camera_rel = info.get("camera_file") if isinstance(info.get("camera_file"), str) else None
    with np.errstate(all="ignore"):  # damaged values (inf - inf, ...) become findings, not warnings
        try:
            robot = reader.read(info, "robot")
            camera = reader.read(info, "camera")
            seq = kio.Sequence.from_tables(info, robot, camera)
            _ = seq.extra  # decode extra_json now: a broken one is a read failure
        except KinhecError as exc:
            report._add(ERROR, "read", f"cannot read the sequence: {exc}", sequence_id=sid)
            return
        except Exception as exc:  # never crash on a damaged sequence
            report._add(ERROR, "read", f"cannot read the sequence ({type(exc).__name__}: {exc})", sequence_id=sid)
            return
        _SequenceChecker(report, info, robot, camera, seq, robot_rel, camera_rel).run()
