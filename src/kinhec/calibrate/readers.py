"""Readers of the pose files users record: every format ``kinhec calibrate`` takes.

Each reader returns a :class:`PoseStream`: poses ``(N, 4, 4)`` exactly as the
file states them (direction and units untouched; :func:`to_metres` and the
caller's direction option convert them), the time stamps when the file has
any, and the 1-based line number of every pose, so that a problem is reported
as ``FILE, line K: ...``.

Formats (``--format``)
----------------------
``tum``
    ``timestamp tx ty tz qx qy qz qw`` per line, whitespace separated, ``#``
    comments (quaternion scalar last).  A comment line naming the eight
    columns (``# timestamp tx ty tz qw qx qy qz``) sets their order.  Also the
    per-camera files of a motion-capture rig folder (``gt_poses/camNN_poses.txt``).
``eth``
    The same eight columns separated by commas, no header (ETH-ASL
    ``hand_eye_calibration`` CSV).

Every stream keeps its file's comment lines (:attr:`PoseStream.comments`) and,
for the formats whose quaternion columns are known only by position (``tum``,
``eth``, rig files), the raw quaternion columns, so that
:func:`with_quaternion_order` can read them in the other order.
``csv``
    Comma-separated with a header naming the columns: a time column
    (``t``, ``time``, ``timestamp``, ``stamp``, or named with its unit,
    ``t_ns``, ``timestamp [ms]``, which sets :attr:`PoseStream.stamp_unit`;
    optional), the position
    (``x y z``, ``tx ty tz``, ``px py pz`` or ``pos_x ...``) and the quaternion
    (``qx qy qz qw`` in any column order).
``rwhe``
    One pose per line, 16 numbers, a row-major 4x4 (RWHE-Calib
    ``RobotPosesVec.txt``); no stamps.
``tabb``
    Tabb and Ahmad Yousef's files: ``robot_cali.txt`` (a count line, then
    counted 4x4 blocks, ``T_ee_base`` in millimetres) or ``cali.txt`` (a count
    line, then ``name K(9) R(9) t(3) dist(5) 0 0 0`` per image,
    ``T_cam_target`` in millimetres).  The format fixes direction and units.
``observations``
    The calibration-rs observation JSON: the robot poses
    ``meta.base_se3_gripper`` of its views (``T_base_ee``, metres); the
    image observations themselves are not used here.
``rig``
    A folder laid out as a multi-camera motion-capture recording:
    ``gt_poses/camNN_poses.txt`` (TUM, camera-to-world) per camera; a camera
    is picked as ``FOLDER:camNN`` (all cameras when no name is given).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError, UnknownNameError
from kinhec import io

__all__ = ["FORMATS", "QUAT_ORDERS", "PoseStream", "header_unit", "read_stream", "read_streams", "read_kinhec", "detect_format",
           "to_metres", "rig_cameras", "with_quaternion_order"]

#: Formats understood by :func:`read_stream` (``kinhec`` sequences are read by :mod:`kinhec.calibrate.sources`).
FORMATS = ("tum", "eth", "csv", "rwhe", "tabb", "observations", "rig")

#: Largest accepted deviation of a stored rotation from orthonormality (files carry 6 to 9 digits);
#: rotations within it are projected onto SO(3), others are rejected naming the line.
ROTATION_TOL = 1e-3
#: Largest accepted deviation of a stored quaternion norm from 1 (it is normalised).
QUATERNION_TOL = 1e-2
#: Orders of the four quaternion columns: scalar last (TUM, ROS) or scalar first.
QUAT_ORDERS = ("xyzw", "wxyz")


#: A CSV time column's name that states its unit (``t_ns``, ``timestamp [ms]``, ``time(s)``).
_HEADER = re.compile(r"^#?\s*(?:t|time|timestamp|stamp)\s*(?:_|\[|\()\s*(s|ms|us|µs|ns)\s*[\])]?$")


def header_unit(name: str) -> str | None:
    """The stamp unit a CSV time column's name states (``t_ns``, ``timestamp [ms]``, ``time(s)``), or None."""
    m = _HEADER.match(name.strip().lower())
    if m is None:
        return None
    return "us" if m.group(1) == "µs" else m.group(1)


@dataclass
class PoseStream:
    """One stream of poses as read from a file.

    Attributes
    ----------
    T : ndarray, shape (N, 4, 4)
        Poses as the file states them (direction and units as stored).
    t : ndarray, shape (N,) or None
        Time stamps [s], non-decreasing duplicates removed; None without stamps.
    lines : ndarray of int, shape (N,)
        1-based line number of every pose in its file.
    path : str
        File the poses come from.
    name : str
        Stream name (file stem or camera name).
    fmt : str
        Format it was read with.
    direction : str or None
        Direction fixed by the format (``"ee_T_base"``, ``"cam_T_target"``,
        ``"target_T_cam"``, ``"base_T_ee"``), None when the user says.
    units : str or None
        Units fixed by the format (``"mm"``), None when the user says.
    notes : list of str
        What the reader fixed (e.g. repeated stamps dropped).
    comments : list of str
        The file's comment lines (text after ``#``), for what they say about
        frames, units and columns.
    quat_raw : ndarray, shape (N, 4) or None
        The four quaternion columns as stored, for formats that know them only
        by position (``tum``, ``eth``, rig files); None otherwise.
    quat_order : str or None
        Order ``quat_raw`` was read in (``"xyzw"`` or ``"wxyz"``).
    quat_order_source : str or None
        ``"header"`` when a comment line named the columns, else None (the
        format's order).
    frames : tuple of (str, str or None), optional
        ``(parent, child)`` frame names of the stored poses ``T_parent_child``
        when the source names them (ROS bags); None for plain files.
    item : str
        What ``lines`` counts, for messages: ``"line"`` (files), ``"message"``
        or ``"sample"`` (bags).
    stamp_unit : str or None
        Unit the file states for its time stamps (a CSV header such as
        ``t_ns`` or ``timestamp [ms]``: ``"s"``, ``"ms"``, ``"us"``, ``"ns"``),
        None when it says nothing (:mod:`kinhec.calibrate.stamp_units`).
    mounts : dict, optional
        Per frame of the stream that hangs below a static subtree in the
        recording: ``{"frame": root, "T_frame_sensor": 4x4 list}``, the root of
        that subtree and the frame's pose in it (a camera driver's
        ``camera_link`` above ``camera_optical``); outputs publish the
        calibrated pose of the root, so that no frame gets a second parent.
    """

    T: np.ndarray
    t: np.ndarray | None
    lines: np.ndarray
    path: str
    name: str
    fmt: str
    direction: str | None = None
    units: str | None = None
    notes: list = field(default_factory=list)
    comments: list = field(default_factory=list)
    quat_raw: np.ndarray | None = field(default=None, repr=False)
    quat_order: str | None = None
    quat_order_source: str | None = None
    frames: tuple | None = None
    item: str = "line"
    mounts: dict | None = None
    stamp_unit: str | None = None

    def __len__(self) -> int:
        return int(self.T.shape[0])

    @property
    def rate_hz(self) -> float | None:
        """Median sample rate [Hz] of a stamped stream (None without stamps or with fewer than 2)."""
        if self.t is None or self.t.size < 2:
            return None
        dt = float(np.median(np.diff(self.t)))
        return 1.0 / dt if dt > 0 else None

    def where(self, i: int | None = None) -> str:
        """``"PATH, line K"`` of pose ``i`` (or ``"PATH"``)."""
        if i is None or len(self.lines) == 0:
            return self.path
        return f"{self.path}, {self.item} {int(self.lines[i])}"

    def span(self) -> str:
        """``"PATH, lines A-B"``."""
        if len(self.lines) == 0:
            return self.path
        return f"{self.path}, {self.item}s {int(self.lines[0])}-{int(self.lines[-1])}"


def _fail(path, line, msg: str) -> InputError:
    where = f"{path}, line {line}" if line is not None else f"{path}"
    return InputError(f"{where}: {msg}")


# --------------------------------------------------------------------------- #
# text tables
# --------------------------------------------------------------------------- #
_SPLIT = re.compile(r"[,\s]+")


#: Comment lines kept per file (what a file says about itself sits at its top).
MAX_COMMENTS = 20


def _rows(path: Path, *, comma: bool | None = None, comments: list | None = None):
    """Non-blank, non-comment lines as (line number, list of fields); comment texts appended to ``comments``."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except IsADirectoryError:
        raise _fail(path, None, "expected a pose file, got a folder") from None
    out = []
    for k, raw in enumerate(text.splitlines(), start=1):
        s, hash_, note = raw.partition("#")
        s = s.strip()
        if hash_ and comments is not None and len(comments) < MAX_COMMENTS and note.strip():
            comments.append(note.strip())
        if not s:
            continue
        parts = [p for p in (s.split(",") if comma else _SPLIT.split(s)) if p.strip() != ""]
        out.append((k, [p.strip() for p in parts]))
    if not out:
        raise _fail(path, 1, "expected pose rows, got an empty file")
    return out


def _numbers(path, rows, ncols: int | tuple[int, ...], what: str) -> tuple[np.ndarray, np.ndarray]:
    ok = (ncols,) if isinstance(ncols, int) else ncols
    lines = np.array([k for k, _ in rows], dtype=np.int64)
    for k, f in rows:
        if len(f) not in ok:
            raise _fail(path, k, f"expected {what} ({' or '.join(map(str, ok))} numbers), got {len(f)} fields")
    width = max(len(f) for _, f in rows)
    if all(len(f) == width for _, f in rows):
        try:  # fast path: numpy parses the whole table at once
            return np.array([f for _, f in rows], dtype=float), lines
        except ValueError:
            pass  # find the bad field below
    data = np.empty((len(rows), width))
    for r, (k, f) in enumerate(rows):
        try:
            data[r, : len(f)] = [float(v) for v in f]
        except ValueError:
            bad = next(v for v in f if not _is_float(v))
            raise _fail(path, k, f"expected numbers, got {bad!r}") from None
    return data, lines


def _is_float(v: str) -> bool:
    try:
        float(v)
        return True
    except ValueError:
        return False


def _check_finite(path, data: np.ndarray, lines: np.ndarray) -> None:
    bad = ~np.isfinite(data).all(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise _fail(path, int(lines[i]), f"expected finite numbers, got {data[i].tolist()}")


def _poses_from_pq(path, p: np.ndarray, q_xyzw: np.ndarray, lines: np.ndarray, order: str = "xyzw") -> np.ndarray:
    """Poses from positions and quaternion columns stored in ``order`` (``"xyzw"`` or ``"wxyz"``)."""
    n = np.linalg.norm(q_xyzw, axis=1)
    bad = np.abs(n - 1.0) > QUATERNION_TOL
    if bad.any():
        i = int(np.argmax(bad))
        cols = "qx qy qz qw" if order == "xyzw" else "qw qx qy qz"
        raise _fail(path, int(lines[i]), f"expected a unit quaternion ({cols}), got norm {n[i]:.6g}")
    q_wxyz = q_xyzw if order == "wxyz" else np.column_stack([q_xyzw[:, 3], q_xyzw[:, :3]])
    return se3.transform_from_pq(p, q_wxyz / n[:, None], normalize=True)


def _poses_from_matrices(path, M: np.ndarray, lines: np.ndarray) -> np.ndarray:
    """Validate stacked 4x4 (or 3x4 padded) matrices; project near-orthonormal rotations onto SO(3)."""
    dev_last = np.abs(M[:, 3, :] - np.array([0.0, 0.0, 0.0, 1.0])).max(axis=1)
    R = M[:, :3, :3]
    e = np.abs(np.swapaxes(R, 1, 2) @ R - np.eye(3)).max(axis=(1, 2))
    det = np.linalg.det(R)
    for bad, what in (
        (dev_last > 1e-6, lambda i: f"expected the last row 0 0 0 1, got {M[i, 3].tolist()}"),
        (e > ROTATION_TOL, lambda i: f"expected an orthonormal rotation (|R^T R - I| <= {ROTATION_TOL:g}), "
                                     f"got a deviation of {e[i]:.3g}"),
        (det < 0, lambda i: f"expected det(R) = +1, got a reflection (det = {det[i]:.3g})"),
    ):
        if bad.any():
            i = int(np.argmax(bad))
            raise _fail(path, int(lines[i]), what(i))
    U, _, Vt = np.linalg.svd(R)
    out = M.copy()
    out[:, :3, :3] = U @ Vt
    out[:, 3] = [0.0, 0.0, 0.0, 1.0]
    return out


def _clean_stamps(path, t: np.ndarray, lines: np.ndarray, notes: list) -> np.ndarray:
    """Indices to keep: stamps must never go back; repeated stamps keep their first pose (noted)."""
    dt = np.diff(t)
    back = dt < 0
    if back.any():
        i = int(np.argmax(back)) + 1
        raise _fail(
            path, int(lines[i]),
            f"expected non-decreasing time stamps, got {float(t[i])!r} after {float(t[i - 1])!r} (line {int(lines[i - 1])})",
        )  # fmt: skip
    keep = np.ones(t.shape, dtype=bool)
    keep[1:] = dt > 0
    n_dup = int((~keep).sum())
    if n_dup:
        first = int(lines[int(np.argmax(~keep))])
        notes.append(f"{path}: {n_dup} repeated time stamp(s) dropped (first at line {first})")
    return np.flatnonzero(keep)


def _stamped(path, fmt, t, T, lines, name, quat_raw=None, **kw) -> PoseStream:
    notes: list = []
    keep = _clean_stamps(path, t, lines, notes)
    return PoseStream(T[keep], t[keep], lines[keep], str(path), name, fmt, notes=notes,
                      quat_raw=None if quat_raw is None else quat_raw[keep], **kw)


# --------------------------------------------------------------------------- #
# the formats
# --------------------------------------------------------------------------- #
def _header_columns(comments: list) -> list[int] | None:
    """Column indices of ``t x y z qx qy qz qw`` from a comment line naming the eight columns, else None."""
    for c in comments:
        names = [w.strip().lower() for w in _SPLIT.split(c) if w.strip()]
        if len(names) != 8:
            continue
        idx = {}
        for k, words in _CSV_NAMES.items():
            hit = [i for i, h in enumerate(names) if h in words]
            if len(hit) == 1:
                idx[k] = hit[0]
        if len(idx) == 8 and len(set(idx.values())) == 8:
            return [idx[k] for k in ("t", "x", "y", "z", "qx", "qy", "qz", "qw")]
    return None


def _read_tum(path: Path, name: str, *, comma: bool = False, fmt: str = "tum") -> PoseStream:
    comments: list = []
    rows = _rows(path, comma=comma, comments=comments)
    cols = _header_columns(comments)
    what = "t tx ty tz qx qy qz qw"
    if cols is not None:
        what = " ".join(("t", "tx", "ty", "tz", "qx", "qy", "qz", "qw")[cols.index(i)] for i in range(8))
    data, lines = _numbers(path, rows, 8, what)
    _check_finite(path, data, lines)
    order, source = "xyzw", None
    if cols is not None:
        order = "wxyz" if cols[7] < cols[4] else "xyzw"  # the order the header states
        data = data[:, cols]  # t x y z qx qy qz qw
        source = "header"
    T = _poses_from_pq(path, data[:, 1:4], data[:, 4:8], lines)
    # columns known only by position: kept, so that the other order can be tried
    raw = data[:, 4:8] if cols is None else None
    return _stamped(path, fmt, data[:, 0], T, lines, name, quat_raw=raw, comments=comments, quat_order=order,
                    quat_order_source=source)


def with_quaternion_order(stream: PoseStream, order: str) -> PoseStream:
    """The stream with its stored quaternion columns read in ``order`` (``"xyzw"`` or ``"wxyz"``).

    Raises
    ------
    InputError
        The stream's format names its quaternion columns (only ``tum``, ``eth``
        and rig files store them by position), or an unknown order.
    """
    if order not in QUAT_ORDERS:
        raise UnknownNameError("quaternion order", order, QUAT_ORDERS)
    if order == stream.quat_order:
        return stream
    if stream.quat_raw is None:
        raise InputError(f"{stream.path}: the {stream.fmt} format fixes its quaternion columns; "
                         f"expected no quaternion order, got {order}")
    T = _poses_from_pq(stream.path, stream.T[:, :3, 3], stream.quat_raw, stream.lines, order)
    out = PoseStream(**{f: getattr(stream, f) for f in stream.__dataclass_fields__})
    out.T, out.quat_order = T, order
    return out


_CSV_NAMES = {
    "t": ("t", "time", "timestamp", "stamp", "t_s", "time_s", "timestamp_s", "#timestamp", "# timestamp"),
    "x": ("x", "tx", "px", "pos_x", "p_x", "x_m"), "y": ("y", "ty", "py", "pos_y", "p_y", "y_m"),
    "z": ("z", "tz", "pz", "pos_z", "p_z", "z_m"),
    "qx": ("qx", "q_x", "rot_x", "quat_x"), "qy": ("qy", "q_y", "rot_y", "quat_y"),
    "qz": ("qz", "q_z", "rot_z", "quat_z"), "qw": ("qw", "q_w", "rot_w", "quat_w"),
}  # fmt: skip


def _read_csv(path: Path, name: str) -> PoseStream:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except IsADirectoryError:
        raise _fail(path, None, "expected a pose file, got a folder") from None
    all_lines = text.splitlines()
    head_k = next((k for k, s in enumerate(all_lines, 1) if s.strip()), None)
    if head_k is None:
        raise _fail(path, 1, "expected a header line naming the columns, got an empty file")
    header = [h.strip().lower() for h in all_lines[head_k - 1].split(",")]
    col = {}
    for key, names in _CSV_NAMES.items():
        hit = [i for i, h in enumerate(header) if h in names]
        if hit:
            col[key] = hit[0]
    if "t" not in col:  # a time column named with its unit (t_ns, timestamp [ms]): kinhec.calibrate.stamp_units
        hit = [i for i, h in enumerate(header) if header_unit(h) is not None]
        if hit:
            col["t"] = hit[0]
    missing = [k for k in ("x", "y", "z", "qx", "qy", "qz", "qw") if k not in col]
    if missing:
        raise _fail(path, head_k, f"expected a header naming the columns t, x, y, z, qx, qy, qz, qw; "
                                  f"missing {', '.join(missing)} in {header}")
    rows = []
    for k, raw in enumerate(all_lines[head_k:], start=head_k + 1):
        s = raw.split("#", 1)[0].strip()
        if s:
            rows.append((k, [p.strip() for p in s.split(",")]))
    if not rows:
        raise _fail(path, head_k + 1, "expected pose rows after the header, got none")
    data, lines = _numbers(path, rows, len(header), f"{len(header)} columns as the header")
    order = [col[k] for k in ("x", "y", "z", "qx", "qy", "qz", "qw")]
    use = data[:, order + ([col["t"]] if "t" in col else [])]
    _check_finite(path, use, lines)
    T = _poses_from_pq(path, data[:, order[:3]], data[:, order[3:]], lines)
    if "t" in col:
        return _stamped(path, "csv", data[:, col["t"]], T, lines, name, stamp_unit=header_unit(header[col["t"]]))
    return PoseStream(T, None, lines, str(path), name, "csv")


def _read_rwhe(path: Path, name: str) -> PoseStream:
    comments: list = []
    rows = _rows(path, comments=comments)
    data, lines = _numbers(path, rows, 16, "a row-major 4x4 matrix")
    _check_finite(path, data, lines)
    T = _poses_from_matrices(path, data.reshape(-1, 4, 4), lines)
    return PoseStream(T, None, lines, str(path), name, "rwhe", comments=comments)


def _read_tabb(path: Path, name: str) -> PoseStream:
    comments: list = []
    rows = _rows(path, comments=comments)
    k0, first = rows[0]
    if len(first) != 1 or not _is_float(first[0]):
        raise _fail(path, k0, f"expected a count line (Tabb format), got {' '.join(first)!r}")
    count = int(float(first[0]))
    body = rows[1:]
    if body and not _is_float(body[0][1][0]):
        # cali.txt: name K(9) R(9) t(3) dist(5) + 3 zeros
        named = [(k, f[1:]) for k, f in body]
        data, lines = _numbers(path, named, (26, 29), "name K(9) R(9) t(3) dist(5) [0 0 0]")
        _check_finite(path, data, lines)
        M = np.zeros((len(lines), 4, 4))
        M[:, :3, :3] = data[:, 9:18].reshape(-1, 3, 3)
        M[:, :3, 3] = data[:, 18:21]
        M[:, 3, 3] = 1.0
        direction = "cam_T_target"
    else:
        data, lines = _numbers(path, body, 4, "a row of a 4x4 matrix")
        if len(lines) % 4:
            raise _fail(path, int(lines[-1]), f"expected 4x4 blocks (a multiple of 4 rows), got {len(lines)} rows")
        _check_finite(path, data, lines)
        M = data.reshape(-1, 4, 4)
        lines = lines[::4]
        direction = "ee_T_base"
    if M.shape[0] != count:
        raise _fail(path, k0, f"expected {count} poses as the count line says, got {M.shape[0]}")
    T = _poses_from_matrices(path, M, lines)
    return PoseStream(T, None, lines, str(path), name, "tabb", direction=direction, units="mm", comments=comments)


def _read_observations(path: Path, name: str) -> PoseStream:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise _fail(path, exc.lineno, f"expected calibration-rs observation JSON, got invalid JSON ({exc.msg})") from None
    try:
        views = doc["input"]["views"]
    except (KeyError, TypeError):
        raise _fail(path, None, "expected an observation set with input.views") from None
    if not views:
        raise _fail(path, None, "expected at least one view in input.views, got none")
    p, q = [], []
    for i, v in enumerate(views):
        try:
            pose = v["meta"]["base_se3_gripper"]
            q.append([float(a) for a in pose["rotation"]])
            p.append([float(a) for a in pose["translation"]])
        except (KeyError, TypeError, ValueError):
            raise _fail(path, None, f"view {i}: expected meta.base_se3_gripper with rotation [qx, qy, qz, qw] "
                                    "and translation [x, y, z]") from None
    lines = np.arange(1, len(p) + 1)  # view numbers stand in for lines
    data = np.column_stack([np.array(p).reshape(-1, 3), np.array(q).reshape(-1, 4)])
    bad = ~np.isfinite(data).all(axis=1)
    if bad.any():
        raise _fail(path, None, f"view {int(np.argmax(bad))}: expected finite numbers")
    T = _poses_from_pq(path, data[:, :3], data[:, 3:], lines)
    return PoseStream(T, None, lines, str(path), name, "observations", direction="base_T_ee", units="m")


def rig_cameras(folder) -> list[str]:
    """Camera names (``camNN``) of a rig folder, from ``gt_poses/<name>_poses.txt``."""
    folder = Path(folder)
    return sorted(p.name[: -len("_poses.txt")] for p in (folder / "gt_poses").glob("*_poses.txt"))


def _split_rig(spec: str) -> tuple[Path, str | None]:
    p = Path(spec)
    if p.is_dir():
        return p, None
    if ":" in spec:
        head, _, cam = spec.rpartition(":")
        if Path(head).is_dir():
            return Path(head), cam
    return p, None


# --------------------------------------------------------------------------- #
# entry points
# --------------------------------------------------------------------------- #
def detect_format(spec) -> str:
    """Guess the format of a path (see the module documentation); ``"tum"`` by default."""
    path, _ = _split_rig(str(spec))
    if path.is_dir():
        return "rig"
    if not path.exists():
        return "tum"
    suffix = path.suffix.lower()
    if suffix == ".json":
        return "observations"
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            first = ""
            for line in fh:
                if line.split("#", 1)[0].strip():
                    first = line.split("#", 1)[0].strip()
                    break
    except OSError:
        return "tum"
    fields = [f for f in _SPLIT.split(first) if f]
    if len(fields) == 1:
        return "tabb"
    if any(not _is_float(f) for f in fields):
        return "csv"
    if len(fields) == 16:
        return "rwhe"
    return "eth" if "," in first else "tum"


_READERS = {
    "tum": _read_tum,
    "eth": lambda p, n: _read_tum(p, n, comma=True, fmt="eth"),
    "csv": _read_csv,
    "rwhe": _read_rwhe,
    "tabb": _read_tabb,
    "observations": _read_observations,
}


def read_streams(spec, fmt: str | None = None) -> list[PoseStream]:
    """Read the stream(s) a path names: one for a file, one per camera for a rig folder.

    Parameters
    ----------
    spec : str, Path or PoseStream
        A pose file, a rig folder (every camera) or ``FOLDER:camNN`` (one camera);
        a stream already read (e.g. from a ROS bag) is passed through.
    fmt : str, optional
        One of :data:`FORMATS`; guessed by :func:`detect_format` when omitted.

    Returns
    -------
    list of PoseStream

    Raises
    ------
    InputError
        A missing file, an unknown format, or a bad row (the message names the
        file and the line).
    """
    if isinstance(spec, PoseStream):
        return [spec]
    spec = str(spec)
    fmt = detect_format(spec) if fmt is None else fmt
    path, cam = _split_rig(spec)
    if fmt == "rig" or path.is_dir():
        if not path.is_dir():
            raise _fail(path, None, "expected a rig folder holding gt_poses/camNN_poses.txt, got no folder")
        names = rig_cameras(path) if cam is None else [cam]
        if not names:
            raise _fail(path, None, "expected gt_poses/camNN_poses.txt files in the rig folder, found none")
        out = []
        for n in names:
            f = path / "gt_poses" / f"{n}_poses.txt"
            if not f.is_file():
                raise UnknownNameError(f"camera of {path}", n, rig_cameras(path))
            s = _read_tum(f, n, fmt="rig")
            s.direction = "target_T_cam"  # camera-to-world
            out.append(s)
        return out
    if fmt not in _READERS:
        raise UnknownNameError("pose format", fmt, FORMATS)
    if not path.exists():
        raise InputError(f"{path}: expected a pose file, got no such file")
    return [_READERS[fmt](path, path.stem)]


def read_stream(spec, fmt: str | None = None) -> PoseStream:
    """Read one stream (see :func:`read_streams`); a rig folder must name its camera."""
    s = read_streams(spec, fmt)
    if len(s) != 1:
        raise InputError(f"{spec}: expected one stream, got {len(s)} cameras; name one as FOLDER:camNN")
    return s[0]


def to_metres(T: np.ndarray, units: str) -> np.ndarray:
    """Poses with translations converted from ``units`` (``"m"`` or ``"mm"``) to metres."""
    if units == "m":
        return T
    if units == "mm":
        out = T.copy()
        out[:, :3, 3] *= 1e-3
        return out
    raise UnknownNameError("unit", units, ("m", "mm"))


def read_kinhec(dataset, sequence: str | None):
    """The measured streams of a kinhec sequence: ``(hand, eye, setup)``.

    The hand is the robot stream's ``T_base_ee_meas`` on the robot clock, the
    eye the camera stream's ``T_cam_target_meas`` (frames with a measurement)
    on the camera clock, both in metres; ``setup`` is the sequence's
    configuration.  Read through :func:`kinhec.io.load_sequence`, so any
    stored layout the loaders accept works.
    """

    if sequence is None:
        raise InputError(f"{dataset}: expected a sequence id (--sequence) to read a kinhec dataset")
    seq = io.load_sequence(dataset, sequence)
    where = f"{dataset}/{sequence}"
    ok_r = np.isfinite(seq.robot.T_base_ee_meas).all(axis=(1, 2))
    ok_c = seq.camera.has_measurement
    hand = PoseStream(seq.robot.T_base_ee_meas[ok_r], seq.robot.t[ok_r], np.flatnonzero(ok_r) + 1,
                      f"{where} (robot)", "robot", "kinhec", direction="base_T_ee", units="m")
    t_c = seq.camera.t[ok_c]
    T_c = seq.camera.T_cam_target_meas[ok_c]
    lines_c = np.flatnonzero(ok_c) + 1
    order = np.argsort(t_c, kind="stable")
    eye = PoseStream(T_c[order], t_c[order], lines_c[order], f"{where} (camera)", "camera", "kinhec",
                     direction="cam_T_target", units="m")
    for s in (hand, eye):
        keep = _clean_stamps(s.path, s.t, s.lines, s.notes)
        s.T, s.t, s.lines = s.T[keep], s.t[keep], s.lines[keep]
    return hand, eye, seq.configuration
