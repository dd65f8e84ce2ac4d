"""Export one sequence to plain files other tools read: CSV tables or TUM trajectories.

``csv``
    ``<id>_robot.csv`` and ``<id>_camera.csv``: the stored stream tables with
    the joint lists expanded to ``q_meas_1 .. q_meas_<dof>`` and
    ``q_gt_1 .. q_gt_<dof>`` (none for ``free6d``); poses as stored
    (position [m], quaternion ``qw, qx, qy, qz``); missing values empty.

``tum``
    Four trajectories in the TUM format: a comment line
    ``# timestamp tx ty tz qx qy qz qw``, then one pose per line (seconds,
    metres, quaternion scalar *last*), read by evo and most SLAM tools.  Each
    file is the pose of the *moving* body in the *fixed* frame
    (``T_fixed_moving``, what evo plots as a trajectory), named after the
    two frames, which a second comment line states too (with the setup of
    the camera files), so that ``kinhec calibrate`` reads the files back
    without direction options:

    * ``<id>_base_ee_gt.tum``, ``<id>_base_ee_meas.tum``: flange pose
      ``T_base_ee`` on the robot clock (robot stream);
    * eye-in-hand (the camera moves): ``<id>_target_cam_gt.tum``,
      ``<id>_target_cam_meas.tum``: the camera in the target frame,
      ``T_target_cam = inv(T_cam_target)`` (monocular sequences: in the
      visual-odometry origin);
    * eye-to-hand (the marker on the flange moves): ``<id>_cam_marker_gt.tum``,
      ``<id>_cam_marker_meas.tum``: the marker in the frame of the fixed
      camera, ``T_cam_marker = T_cam_target``;

    camera files on the camera clock (camera ``t``); frames without a
    measurement are left out.

Both formats also write ``<id>_info.json`` with the index row (ground truth
``X`` / ``Y``, clock offset, scale, factors) and the decoded ``config`` and
``extra`` recipes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from kinhec.geometry import se3
from kinhec.util import jsonutil
from kinhec.util.errors import UnknownNameError
from kinhec.io import read_tables
from kinhec.io.schema import pose_columns

__all__ = ["EXPORT_FORMATS", "export_sequence"]

#: Formats understood by :func:`export_sequence`.
EXPORT_FORMATS = ("csv", "tum")

_TUM_HEADER = "# timestamp tx ty tz qx qy qz qw"


def _expanded_frame(table: pa.Table):
    """The table as a DataFrame with the ``list<double>`` joint columns expanded to numbered columns."""
    df = table.to_pandas()
    for name in ("q_meas", "q_gt"):
        if name not in table.column_names:
            continue
        col = table.column(name).combine_chunks()
        n = len(col)
        dof = int(np.diff(np.asarray(col.offsets))[0]) if n else 0
        values = np.asarray(col.flatten().to_numpy(zero_copy_only=False), dtype=np.float64).reshape(n, dof)
        pos = df.columns.get_loc(name)
        df = df.drop(columns=name)
        for j in range(dof):
            df.insert(pos + j, f"{name}_{j + 1}", values[:, j])
    return df


def _write_tum(path: Path, t: np.ndarray, table: pa.Table, prefix: str, invert: bool = False,
               frames: str = "") -> Path:
    cols = pose_columns(prefix)  # px py pz qw qx qy qz
    P = np.column_stack([table.column(c).to_numpy() for c in cols[:3]]) if table.num_rows else np.zeros((0, 3))
    Q = np.column_stack([table.column(c).to_numpy() for c in cols[3:]]) if table.num_rows else np.zeros((0, 4))
    if invert:  # inv(T): q -> conj(q), p -> -R(q)^T p (rows with missing values stay NaN)
        ok = np.isfinite(P).all(axis=1) & np.isfinite(Q).all(axis=1)
        R = np.full((len(P), 3, 3), np.nan)
        R[ok] = se3.matrix_from_quaternion(Q[ok], normalize=True)
        P = -np.einsum("nji,nj->ni", R, P)
        Q = Q * np.array([1.0, -1.0, -1.0, -1.0])
    data = np.column_stack([t, P, Q[:, 1:], Q[:, :1]]).astype(np.float64)  # scalar last for TUM
    data = data[np.isfinite(data).all(axis=1)]
    # shortest text that reads back to the same float64 (Python's repr)
    lines = [" ".join(map(repr, row)) for row in data.tolist()]
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(_TUM_HEADER + "\n")
        if frames:
            fh.write(f"# kinhec export: {frames}\n")
        if lines:
            fh.write("\n".join(lines) + "\n")
    return path


def export_sequence(root, sequence_id: str, fmt: str, out_dir) -> list[Path]:
    """Export one sequence of a dataset folder to ``out_dir``.

    Parameters
    ----------
    root : str or Path
        Dataset folder.
    sequence_id : str
        Sequence to export, e.g. ``"noise-000000"``.
    fmt : {"csv", "tum"}
        Output format (see the module documentation).
    out_dir : str or Path
        Destination folder, created if needed.

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    UnknownNameError
        For an unknown format.
    InputError, DatasetFormatError
        As :func:`kinhec.io.load_sequence` (unknown id, damaged dataset).
    """
    if fmt not in EXPORT_FORMATS:
        raise UnknownNameError("export format", fmt, EXPORT_FORMATS)
    st = read_tables(root, sequence_id, None)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if fmt == "csv":
        for stream, table in (("robot", st.robot), ("camera", st.camera)):
            path = out / f"{sequence_id}_{stream}.csv"
            _expanded_frame(table).to_csv(path, index=False, lineterminator="\n")
            written.append(path)
    else:
        t_robot = st.robot.column("t").to_numpy()
        t_camera = st.camera.column("t").to_numpy()
        eye_in_hand = st.index_row.get("configuration") != "eye_to_hand"
        cam = "target_cam" if eye_in_hand else "cam_marker"  # the moving body in the fixed frame
        robot_frames = "T_base_ee (the flange in the robot base), robot clock"
        cam_frames = (f"T_{cam} ("
                      + ("the camera in the target frame), eye_in_hand" if eye_in_hand else
                         "the marker on the flange in the camera frame), eye_to_hand") + ", camera clock")
        for name, t, table, prefix, invert, frames in (
            ("base_ee_gt", t_robot, st.robot, "base_ee_gt", False, robot_frames),
            ("base_ee_meas", t_robot, st.robot, "base_ee_meas", False, robot_frames),
            (f"{cam}_gt", t_camera, st.camera, "cam_target_gt", eye_in_hand, cam_frames),
            (f"{cam}_meas", t_camera, st.camera, "cam_target_meas", eye_in_hand, cam_frames),
        ):
            written.append(_write_tum(out / f"{sequence_id}_{name}.tum", t, table, prefix, invert, frames))
    info = {k: v for k, v in st.index_row.items() if k not in ("config_json", "extra_json")}
    for key, col in (("config", "config_json"), ("extra", "extra_json")):
        text = st.index_row.get(col)
        info[key] = jsonutil.loads(text) if isinstance(text, str) and text.strip() else {}
    info_path = out / f"{sequence_id}_info.json"
    jsonutil.dump(info, info_path)
    written.append(info_path)
    return written
