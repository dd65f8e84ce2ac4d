"""Per-sequence drill-down data of the benchmark page: the 3D scene and the two streams, thinned and packed.

A page holds every sequence of a copy (562 on the small tier), so each one is
reduced to what the drill-down draws: the arm at three configurations, the
flange path and the streams decimated to at most :data:`MAX_POINTS` samples,
a dozen camera frustums and the observed reference.  Arrays are quantised to
16-bit integers over their own range and base64-encoded (:func:`pack`), which
keeps a sequence at a few kilobytes; the page script decodes them.

The shard files are read directly, one file at a time and only the columns
drawn, rather than through :func:`kinhec.io.load_sequence`, which decodes
every column of every frame.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from kinhec.geometry import se3
from kinhec.models.cameras import TARGET_NAMES as _TARGET_NAMES
from kinhec.models.cameras import get_camera, get_target
from kinhec.util.errors import DatasetFormatError, KinhecError
from kinhec.models.robots import get_robot

__all__ = ["MAX_POINTS", "N_CAMERAS", "pack", "unpack", "scene_data", "sequence_payloads"]

#: Largest number of samples kept per stream (and of the flange path).
MAX_POINTS = 150

#: Camera frustums drawn per sequence.
N_CAMERAS = 10

_NAN_CODE = -32768  # int16 code of a missing value
_P = ("px", "py", "pz")
_Q = ("qw", "qx", "qy", "qz")
_ROBOT_COLUMNS = ["t", "q_gt"] + [f"base_ee_gt_{c}" for c in _P] + [f"base_ee_meas_{c}" for c in _P]
_CAMERA_COLUMNS = (["t", "visible", "outlier"] + [f"base_ee_gt_{c}" for c in _P + _Q]
                   + [f"cam_target_meas_{c}" for c in _P])  # fmt: skip


def pack(a) -> dict:
    """Quantise a float array to int16 over its finite range and encode it in base64.

    Parameters
    ----------
    a : array_like
        Any shape; flattened in C order.  NaN / inf are kept as missing.

    Returns
    -------
    dict
        ``{"o": offset, "s": step, "n": size, "q": base64 of little-endian int16}``; value
        ``o + (code + 32767) * s``, code ``-32768`` for a missing value.  The error is at most
        ``s / 2`` = range / 131068.
    """
    a = np.asarray(a, dtype=np.float64).ravel()
    fin = np.isfinite(a)
    lo = float(a[fin].min()) if fin.any() else 0.0
    hi = float(a[fin].max()) if fin.any() else 0.0
    step = (hi - lo) / 65534.0 if hi > lo else 1.0
    code = np.full(a.shape, _NAN_CODE, dtype="<i2")
    code[fin] = (np.rint((a[fin] - lo) / step) - 32767).astype("<i2")
    return {"o": lo, "s": step, "n": int(a.size), "q": base64.b64encode(code.tobytes()).decode("ascii")}


def unpack(p: dict) -> np.ndarray:
    """Inverse of :func:`pack` (flat float64 array, NaN where missing); the page script does the same."""
    code = np.frombuffer(base64.b64decode(p["q"]), dtype="<i2").astype(np.float64)
    out = p["o"] + (code + 32767.0) * p["s"]
    out[code == _NAN_CODE] = np.nan
    return out


def _evenly(n: int, k: int) -> np.ndarray:
    """``min(n, k)`` increasing positions spread evenly over ``range(n)`` (first and last included)."""
    if n <= k:
        return np.arange(n)
    return np.round(np.linspace(0, n - 1, k)).astype(np.int64)  # step > 1: no duplicates


def _pose(info: dict, prefix: str) -> np.ndarray | None:
    p = np.array([info.get(f"{prefix}_{c}", np.nan) for c in _P], dtype=float)
    q = np.array([info.get(f"{prefix}_{c}", np.nan) for c in _Q], dtype=float)
    if not (np.isfinite(p).all() and np.isfinite(q).all()):
        return None
    return se3.transform_from_pq(p, q, normalize=True)


def _extra(info: dict) -> dict:
    """The recipe's ``extra_json`` (camera and target of custom presets)."""
    try:
        e = json.loads(info.get("extra_json") or "{}")
    except (TypeError, ValueError):
        return {}
    return e if isinstance(e, dict) else {}


def _camera_geometry(info: dict) -> tuple[float, float, float]:
    try:
        cam = get_camera(str(info.get("camera")))
        return float(cam.width_px), float(cam.height_px), float(cam.f_px)
    except KinhecError:
        c = _extra(info).get("camera") or {}
        return float(c.get("width_px", 1280)), float(c.get("height_px", 720)), float(c.get("f_px", 920))


_OUTLINES: dict[str, np.ndarray] = {}


def _board_outline(info: dict) -> np.ndarray:
    """Corners ``(4, 3)`` [m] of the target board in its own frame."""
    name = str(info.get("target"))
    if name in _OUTLINES:
        return _OUTLINES[name]
    try:
        tgt = get_target(name)
        pts, pitch = tgt.points_m, float(tgt.pitch_m)
    except KinhecError:
        t = _extra(info).get("target") or {}
        cols, rows, pitch = int(t.get("cols", 2)), int(t.get("rows", 2)), float(t.get("pitch_m", 0.04))
        half = 0.5 * np.array([(cols - 1) * pitch, (rows - 1) * pitch])
        pts = np.array([[-half[0], -half[1], 0.0], [half[0], half[1], 0.0]])
    lo = pts[:, :2].min(axis=0) - 0.5 * pitch
    hi = pts[:, :2].max(axis=0) + 0.5 * pitch
    out = np.array([[lo[0], lo[1], 0.0], [hi[0], lo[1], 0.0], [hi[0], hi[1], 0.0], [lo[0], hi[1], 0.0]])
    if name in _TARGET_NAMES:  # presets only: custom targets of the same name may differ between copies
        _OUTLINES[name] = out
    return out


def _apply(T: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Points ``p`` (P, 3) under poses ``T`` (N, 4, 4) -> (N, P, 3)."""
    return p @ T[:, :3, :3].transpose(0, 2, 1) + T[:, None, :3, 3]


def _frustums(T_base_cam: np.ndarray, w: float, h: float, f: float, depth: float) -> np.ndarray:
    """Apex and far corners ``(N, 5, 3)`` [m] of pinhole frustums (OpenCV optical frames)."""
    hw, hh = 0.5 * w / f * depth, 0.5 * h / f * depth
    local = np.array([[0.0, 0.0, 0.0], [-hw, -hh, depth], [hw, -hh, depth], [hw, hh, depth], [-hw, hh, depth]])
    return _apply(T_base_cam, local)


def scene_data(info: dict, robot: dict, camera: dict) -> dict:
    """Packed drill-down data of one sequence.

    Parameters
    ----------
    info : dict
        The sequence's index row.
    robot : dict
        Robot stream columns: ``t`` (N,) [s], ``q`` (N, dof) true joints [rad], ``p_gt`` and ``p_meas``
        (N, 3) true and reported flange positions in the base frame [m].
    camera : dict
        Camera stream columns: ``t`` (M,) camera clock [s], ``visible``, ``outlier`` (M,) bool,
        ``T_base_ee`` a callable ``T_base_ee(rows) -> (len(rows), 4, 4)``: true flange poses at the capture
        instants of those frames, ``p_meas`` (M, 3) measured
        translation of ``T_cam_target`` [m] (NaN without a measurement).

    Returns
    -------
    dict
        ``arm`` (packed (K, dof + 1, 3) joint positions, ``arm_k`` = K) or None; ``path`` (packed (P, 3));
        ``stations`` (bool); ``cams`` (packed (C, 5, 3): apex then far corners); ``ref_kind``
        (``board`` / ``markers`` / ``vo``) and ``ref`` (packed (R, 4, 3) outlines, or (1, 3) for ``vo``);
        ``rt``, ``rp`` (robot time [s], reported flange position [m]); ``ct``, ``cp`` (camera time [s],
        measured ``T_cam_target`` translation [m]); ``co`` (positions of outliers in ``ct``).
    """
    eye_in_hand = str(info.get("configuration")) == "eye_in_hand"
    vo = str(info.get("world_frame")) == "vo_origin"
    X, Y = _pose(info, "X"), _pose(info, "Y")
    out: dict = {"arm": None, "arm_k": 0}

    n = robot["t"].shape[0]
    stations = str(info.get("sampling_mode")) == "stations"
    path_idx = _evenly(n, MAX_POINTS)
    path = robot["p_gt"][path_idx]
    cloud = [path, np.zeros((1, 3))]
    q = robot["q"]
    try:
        model = get_robot(str(info.get("robot")))
    except KinhecError:
        model = None
    if model is not None and not model.is_free and q.shape[1] == model.dof and n:
        rows = _evenly(n, 3)
        F = model.joint_frames(q[rows])[:, :, :3, 3]  # (K, dof + 1, 3)
        out["arm"], out["arm_k"] = pack(F), int(F.shape[0])
        cloud.append(F.reshape(-1, 3))
    extent = max(float(np.ptp(np.vstack(cloud), axis=0).max()) if n > 1 else 0.5, 0.2)

    m = camera["t"].shape[0]
    seen = np.flatnonzero(camera["visible"] | np.isfinite(camera["p_meas"]).all(axis=1))
    if seen.size == 0:
        seen = np.arange(m)
    sel = seen[_evenly(seen.size, N_CAMERAS)]
    T_ee = camera["T_base_ee"](sel)
    w, h, f = _camera_geometry(info)
    outline = _board_outline(info)
    if X is not None and Y is not None:
        if eye_in_hand:
            T_base_cam = T_ee @ X
            depth = float(np.clip(0.1 * extent, 0.03, 0.15))
            if vo:
                out["ref_kind"], ref = "vo", Y[None, :3, 3]
            else:
                out["ref_kind"], ref = "board", _apply(Y[None], outline)
        else:
            T_base_cam = Y[None]
            centre = path.mean(axis=0) if len(path) else Y[:3, 3] + Y[:3, 2]
            depth = float(np.clip(0.3 * np.linalg.norm(centre - Y[:3, 3]), 0.05, 0.4))
            out["ref_kind"], ref = "markers", _apply(T_ee @ X, outline)
        out["cams"] = pack(_frustums(T_base_cam, w, h, f, depth))
        out["ref"] = pack(ref)
    else:
        out["cams"], out["ref_kind"], out["ref"] = None, None, None
    out["path"], out["stations"] = pack(path), stations

    out["rt"], out["rp"] = pack(robot["t"][path_idx]), pack(robot["p_meas"][path_idx])
    cam_idx = _evenly(m, MAX_POINTS)
    outl = np.flatnonzero(camera["outlier"])
    if outl.size:
        cam_idx = np.union1d(cam_idx, outl[_evenly(outl.size, MAX_POINTS // 3)])
    out["ct"], out["cp"] = pack(camera["t"][cam_idx]), pack(camera["p_meas"][cam_idx])
    out["co"] = np.flatnonzero(camera["outlier"][cam_idx]).tolist()
    return out


def _row_group_starts(pf: pq.ParquetFile) -> np.ndarray:
    sizes = [pf.metadata.row_group(i).num_rows for i in range(pf.metadata.num_row_groups)]
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def _read(root: Path, rel: str, columns: list[str]) -> tuple[pa.Table, np.ndarray]:
    path = root / rel
    try:
        pf = pq.ParquetFile(path)
        table = pf.read(columns=columns)
    except FileNotFoundError:
        raise DatasetFormatError(f"{path}: shard file listed in the index is missing") from None
    except (OSError, pa.ArrowException) as exc:
        raise DatasetFormatError(f"{path}: cannot read the columns {columns} ({exc})") from None
    return table, _row_group_starts(pf)


def _col(table: pa.Table, name: str, dtype=np.float64) -> np.ndarray:
    return table.column(name).to_numpy(zero_copy_only=False).astype(dtype, copy=False)


def _bool(table: pa.Table, name: str) -> np.ndarray:
    c = table.column(name)
    return np.array(c.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


def sequence_payloads(root, manifest: pd.DataFrame, on_sequence=None) -> dict[str, dict]:
    """:func:`scene_data` of every sequence of the index, reading each shard file once.

    Parameters
    ----------
    root : str or Path
        Dataset folder.
    manifest : pandas.DataFrame
        The index (:func:`kinhec.io.load_manifest`).
    on_sequence : callable, optional
        Called as ``on_sequence(done, total)`` after each sequence.

    Returns
    -------
    dict
        ``{sequence_id: scene_data(...)}``.

    Raises
    ------
    DatasetFormatError
        A shard file is missing or unreadable, or a row group named by the index does not exist.
    """
    root = Path(root)
    out: dict[str, dict] = {}
    total = len(manifest)
    records = manifest.to_dict("records")
    by_file: dict[tuple[str, str], list[dict]] = {}
    for info in records:
        by_file.setdefault((str(info["robot_file"]), str(info["camera_file"])), []).append(info)
    for (rfile, cfile), infos in by_file.items():
        rt, rstart = _read(root, rfile, _ROBOT_COLUMNS)
        ct, cstart = _read(root, cfile, _CAMERA_COLUMNS)
        r_t = _col(rt, "t")
        r_pg = np.stack([_col(rt, f"base_ee_gt_{c}") for c in _P], axis=-1)
        r_pm = np.stack([_col(rt, f"base_ee_meas_{c}") for c in _P], axis=-1)
        qcol = rt.column("q_gt").combine_chunks()
        q_off = qcol.offsets.to_numpy()
        q_val = qcol.values.to_numpy(zero_copy_only=False)
        c_t = _col(ct, "t")
        c_vis, c_out = _bool(ct, "visible"), _bool(ct, "outlier")
        c_p = np.stack([_col(ct, f"base_ee_gt_{c}") for c in _P], axis=-1)
        c_q = np.stack([_col(ct, f"base_ee_gt_{c}") for c in _Q], axis=-1)
        c_pm = np.stack([_col(ct, f"cam_target_meas_{c}") for c in _P], axis=-1)
        for info in infos:
            sid = str(info["sequence_id"])
            rg, cg = int(info["robot_row_group"]), int(info["camera_row_group"])
            if not (0 <= rg < rstart.size - 1 and 0 <= cg < cstart.size - 1):
                raise DatasetFormatError(
                    f"{sid}: the index names row groups robot {rg} / camera {cg}, but {root / rfile} has "
                    f"{rstart.size - 1} and {root / cfile} has {cstart.size - 1}"
                )
            a, b = rstart[rg], rstart[rg + 1]
            dof = int(info.get("dof") or 0)
            qv = q_val[q_off[a] : q_off[b]]
            q = qv.reshape(b - a, dof) if dof and qv.size == (b - a) * dof else np.zeros((b - a, 0))
            c0, c1 = cstart[cg], cstart[cg + 1]
            def T_ee(rows, c0=c0):
                return se3.transform_from_pq(c_p[c0 + rows], c_q[c0 + rows], normalize=True)

            robot = {"t": r_t[a:b], "q": q, "p_gt": r_pg[a:b], "p_meas": r_pm[a:b]}
            camera = {"t": c_t[c0:c1], "visible": c_vis[c0:c1], "outlier": c_out[c0:c1], "T_base_ee": T_ee,
                      "p_meas": c_pm[c0:c1]}  # fmt: skip
            out[sid] = scene_data(info, robot, camera)
            if on_sequence is not None:
                on_sequence(len(out), total)
    return out
