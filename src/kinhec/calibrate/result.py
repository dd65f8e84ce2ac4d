"""The outcome of a calibration: :class:`CalibrationResult` and its JSON form (``CALIBRATION_JSON``).

The dictionary of :meth:`CalibrationResult.to_dict` is the contract read by the
report page: keys may be added, never removed or renamed.  Poses are 4x4
``a_T_b`` matrices in metres (``X_name`` / ``Y_name`` say which), with their
quaternion scalar last and translation alongside.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kinhec import __version__
from kinhec.util import jsonutil
from kinhec.calibrate import held_out as ho
from kinhec.calibrate import output
from kinhec.calibrate.figure import draw
from kinhec.calibrate.output import quat_xyzw

__all__ = ["CalibrationResult", "RigResult", "quat_xyzw"]


def _mat(T) -> list | None:
    return None if T is None else [[float(v) for v in row] for row in np.asarray(T)]


def _std(v):
    """A standard deviation for JSON: None for NaN (a component set by convention has none)."""
    v = float(v)
    return None if np.isnan(v) else v


def _num(v):
    if v is None:
        return None
    v = float(v)
    return v if np.isfinite(v) else None


@dataclass
class RigResult:
    """Camera rig: each camera's ``X`` (``T_body_cam``) and every camera->camera transform.

    Attributes
    ----------
    cameras : list of str
    X : dict of str -> ndarray (4, 4)
        ``T_ee_camK`` per camera [m].
    X_std : dict of str -> ndarray (6,)
    cam_T_cam : dict of str -> ndarray (4, 4)
        ``"camA_T_camB"``: pose of camera B in camera A [m].
    cam_T_cam_std : dict of str -> ndarray (6,)
        Rotation [rad] then translation [m] standard deviations.
    per_camera : dict of str -> CalibrationResult
    joint : dict or None
        When the cameras were solved jointly (one world): ``world``, ``world_chi2``, ``certificate``, the
        shared ``Y`` and its ``Y_std`` (:func:`kinhec.calibrate.multi.joint_rig`); None when each camera was
        solved on its own and the camera-to-camera transforms composed.
    """

    cameras: list
    X: dict
    X_std: dict
    cam_T_cam: dict
    cam_T_cam_std: dict
    per_camera: dict
    joint: dict | None = None  # the joint solution's world decision and certificate (kinhec.calibrate.multi)

    def to_dict(self) -> dict:
        return {
            "cameras": list(self.cameras),
            "X": {k: _mat(v) for k, v in self.X.items()},
            "X_std": {k: [float(x) for x in v] for k, v in self.X_std.items()},
            "cam_T_cam": {k: _mat(v) for k, v in self.cam_T_cam.items()},
            "cam_T_cam_std": {k: [float(x) for x in v] for k, v in self.cam_T_cam_std.items()},
            "time_offset_s": {k: _num(r.time_offset_s) for k, r in self.per_camera.items()},
            "n_pairs": {k: r.n_pairs for k, r in self.per_camera.items()},
            "joint": self.joint,
        }


@dataclass
class CalibrationResult:
    """What :func:`kinhec.calibrate.calibrate` found.

    Attributes
    ----------
    setup : str
        ``"eye_in_hand"``, ``"eye_to_hand"`` or ``"rig"``.
    inputs : dict
        Files, format, directions and units used.
    X, Y : ndarray, shape (4, 4)
        ``X = T_ee_cam`` (eye-in-hand, rig: of the first camera) or ``T_ee_marker``
        (eye-to-hand); ``Y = T_base_target`` or ``T_base_cam`` [m].
    X_name, Y_name : str
    X_std, Y_std : ndarray, shape (6,)
        Standard deviations: rotation [rad] (right perturbation), then translation [m].
    time_offset_s, time_offset_std_s : float or None
        Clock offset (eye stamp = hand time + offset) and its standard deviation [s].
    time_offset_peak_corr : float or None
        Angular-speed correlation at the coarse offset (a confidence in [0, 1]).
    scale, scale_std : float or None
        Scale of the eye translations (eye = scale x metric): a monocular stream's, or the
        metric stream's board size and focal length (:mod:`kinhec.calibrate.scale`).
    n_pairs : int
    outliers : list of int
        Indices of the pairs labelled outliers.
    observability : dict
    warnings : list of str
    notes : list of str
        What was fixed or chosen on the way (repeated stamps, gaps, solver).
    residuals : dict
        Per pair: ``t_s``, ``rot_deg``, ``trans_mm``, ``outlier``.
    offset_curve : dict or None
        ``offset_s`` and ``cost`` of the residual around the estimated offset.
    rig : RigResult or None
    init_solver : str
        Registry solver whose result started the refinement.
    """

    setup: str
    inputs: dict
    X: np.ndarray
    Y: np.ndarray
    X_name: str
    Y_name: str
    X_std: np.ndarray
    Y_std: np.ndarray
    time_offset_s: float | None
    time_offset_std_s: float | None
    time_offset_peak_corr: float | None
    scale: float | None
    scale_std: float | None
    n_pairs: int
    outliers: list
    observability: dict
    warnings: list
    notes: list
    residuals: dict
    offset_curve: dict | None
    init_solver: str
    rig: RigResult | None = None
    cov: np.ndarray | None = field(default=None, repr=False)
    pairs: tuple | None = field(default=None, repr=False)  # (A, B) of the pairs at the final offset
    where: str = ""  # the input files and their line spans, for messages
    held_out: dict | None = None  # leave-one-station-out accuracy (kinhec.calibrate.held_out.assess)
    point_cam_m: np.ndarray | None = None  # the work point in the camera frame [m] (default: the target's mean)

    @property
    def determined(self) -> bool:
        """``X`` is determined by the motion (see :mod:`kinhec.calibrate.observability`)."""
        return bool(self.observability.get("determined", False))

    @property
    def undetermined(self) -> list:
        """The components of ``X`` and ``Y`` the motion leaves open and that were not stated (``X.tz`` ...;
        :mod:`kinhec.calibrate.reduced_dof`); empty when every component is determined or stated."""
        return list(self.observability.get("undetermined") or [])

    @property
    def verdict(self) -> str:
        """One sentence: is the result usable, and how precise is it."""
        xs = np.nan_to_num(self.X_std, nan=0.0)  # components set by convention (--partial) have none
        rot = np.degrees(xs[:3]).max()
        tr = 1000 * xs[3:].max()
        n_out = len(self.outliers)
        if not self.determined:
            return (f"X is NOT determined by this motion ({'; '.join(self.warnings[:1]) or 'see warnings'}); "
                    "do not use it.")
        open_ = self.undetermined
        if open_:
            rot_ = f"{rot:.2g} deg / {tr:.2g} mm (1 sigma)"
            return (f"X and Y determined to {rot_} from {self.n_pairs} pairs except {', '.join(open_)}: not "
                    "determined by this motion (they turn about one axis only); their values here are a convention, "
                    "not a measurement: " + ("state them with --known for a complete X and Y." if
                                             all(c.split(".")[1][0] == "t" for c in open_) else
                                             "a complete X and Y needs a motion that also moves sideways."))
        extra = f", clock offset {1000 * self.time_offset_s:.1f} ms" if self.time_offset_s is not None else ""
        held = ""
        h = self.held_out
        if h and "rms_px" in h:  # a corner calibration's views (kinhec.calibrate.held_out_pixels)
            held = (f" Held-out views {h['rms_px']:.3g} px RMS (sigma predicts {h['predicted_rms_px']:.3g} px)"
                    + (", far above: see the held-out warning." if not h.get("consistent", True) else "."))
        elif h:  # the held-out accuracy beside what sigma predicts for it (kinhec.calibrate.held_out)
            held = (f" Held-out eye poses {h['rms_mm']:.3g} mm / {h['rms_deg']:.3g} deg RMS (sigma predicts "
                    f"{h['predicted_rms_mm']:.3g} mm / {h['predicted_rms_deg']:.3g} deg)"
                    + (", far above: see the held-out warning." if not h.get("consistent", True) else "."))
        return (f"X determined to {rot:.2g} deg / {tr:.2g} mm (1 sigma) from {self.n_pairs} pairs "
                f"({n_out} outlier{'s' if n_out != 1 else ''}){extra}.{held}")

    def point_error(self, point_cam_m=None) -> dict | None:
        """The predicted 95 % error in the robot base of a point the camera sees (``point_cam_m``, camera frame [m];
        default :attr:`point_cam_m`), :func:`kinhec.calibrate.held_out.point_error`; None without a point or a
        covariance, and when components of ``X`` or ``Y`` were set by convention (``partial``: the point's error
        depends on them)."""
        p = self.point_cam_m if point_cam_m is None else point_cam_m
        od = self.observability.get("open_directions") or {}
        by_convention = bool(od.get("convention") or od.get("convention_rotations_as_fitted"))  # --partial
        if p is None or self.cov is None or self.cov.shape[0] < 12 or self.Y is None or by_convention:
            return None
        A = None if self.pairs is None else self.pairs[0]
        return ho.point_error(self.cov, self.setup if self.setup != "rig" else "eye_in_hand", self.X, self.Y, p, A)

    @property
    def sigma(self) -> dict:
        """Every estimated quantity with its standard deviation (JSON-ready; ``None`` where not estimated).

        ``X``, ``Y``: rotation [deg] (right perturbation) and translation [mm] per axis; ``time_offset_ms``;
        ``scale`` (of the eye translations); ``intrinsics`` (``--corners``: value and std per parameter [px]);
        ``noise``: every estimated noise level with its std (pose files: the residual std per component,
        rotation [deg] then translation [mm]; corners: pixel [px] and robot [mrad, mm]).
        """
        o = self.observability
        out = {
            "X": {"rot_deg": [_std(v) for v in np.degrees(self.X_std[:3])],
                  "trans_mm": [_std(v) for v in 1000 * self.X_std[3:]]},
            "Y": None if self.Y_std is None else {"rot_deg": [_std(v) for v in np.degrees(self.Y_std[:3])],
                                                  "trans_mm": [_std(v) for v in 1000 * self.Y_std[3:]]},
            "time_offset_ms": None if self.time_offset_std_s is None else
            {"value": 1000 * float(self.time_offset_s), "std": 1000 * float(self.time_offset_std_s)},
            "scale": None if self.scale_std is None else
            {"value": float(self.scale), "std": float(self.scale_std), **(o.get("scale") or {})},
            "intrinsics": None,
            "noise": None,
        }  # fmt: skip
        if o.get("intrinsics_std"):
            model = self.inputs.get("distortion_model")
            names = (("fx", "fy", "cx", "cy", "k1", "k2", "k3", "k4") if model == "equidistant"
                     else ("fx", "fy", "cx", "cy", "k1", "k2", "p1", "p2", "k3")
                     + (("k4", "k5", "k6") if model == "rational" else ()))  # fmt: skip
            values = dict(zip(names, self.inputs.get("intrinsics_refined") or self.inputs.get("intrinsics") or []))
            out["intrinsics"] = {k: {"value": _num(values.get(k)), "std": float(v)} for k, v in o["intrinsics_std"].items()}
        if "residual_std_rad_m" in o:
            sd, ss = np.asarray(o["residual_std_rad_m"]), np.asarray(o.get("residual_std_std") or [np.nan] * 6)
            unit = np.array([180 / np.pi] * 3 + [1000.0] * 3)
            out["noise"] = {"residual_deg_mm": [float(v) for v in sd * unit], "std": [_num(v) for v in ss * unit]}
        elif "pixel_std_px" in o:
            rs = o.get("robot_std_rad_m") or [np.nan, np.nan]
            rss = o.get("robot_std_std_rad_m") or [None, None]
            out["noise"] = {"pixel_px": {"value": _num(o["pixel_std_px"]), "std": _num(o.get("pixel_std_std_px"))},
                            "robot_rot_mrad": {"value": _num(1000 * rs[0]), "std": _num(None if rss[0] is None else 1000 * rss[0])},
                            "robot_trans_mm": {"value": _num(1000 * rs[1]), "std": _num(None if rss[1] is None else 1000 * rss[1])}}  # fmt: skip
        return out

    def sigma_lines(self) -> list[str]:
        """The standard deviations of :attr:`sigma` beyond ``X``'s, one line each, for the screen."""
        sg = self.sigma
        f3 = lambda v: " ".join("-" if x is None else f"{x:.3g}" for x in v)  # noqa: E731
        lines = []
        if sg["Y"] is not None:
            lines.append(f"  std of Y: rot_deg {f3(sg['Y']['rot_deg'])}  trans_mm {f3(sg['Y']['trans_mm'])}")
        if sg["scale"] is not None:
            s = sg["scale"]
            how = {"monocular": "monocular, free", "metric": "from the robot's translations" if s.get("determined")
                   else "the robot's translations do not determine it: its prior counted"}.get(s.get("mode"), "")  # fmt: skip
            lines.append(f"scale of the eye translations: {s['value']:.5f} +- {s['std']:.5f}" + (f" ({how})" if how else ""))
        if sg["intrinsics"]:
            lines.append("intrinsics: " + ", ".join(f"{k} {v['value']:.6g} +- {v['std']:.2g}" for k, v in sg["intrinsics"].items()
                                                     if v["value"] is not None))  # fmt: skip
        nz = sg["noise"]
        if nz and "residual_deg_mm" in nz:
            lines.append("noise (residual std, rot_deg x3, trans_mm x3): "
                         + " ".join(f"{v:.3g}+-{e:.1g}" if e is not None else f"{v:.3g}"
                                    for v, e in zip(nz["residual_deg_mm"], nz["std"])))  # fmt: skip
        elif nz:
            lines.append("noise: " + ", ".join(f"{k} {v['value']:.3g}" + (f" +- {v['std']:.2g}" if v["std"] is not None else "")
                                               for k, v in nz.items() if v["value"] is not None))  # fmt: skip
        return lines

    def to_dict(self) -> dict:
        """The JSON-ready dictionary of the calibration-result contract."""
        d = {
            "kinhec_version": __version__,
            "setup": self.setup,
            "inputs": dict(self.inputs),
            "X": _mat(self.X),
            "X_name": self.X_name,
            "X_quat_xyzw": quat_xyzw(self.X),
            "X_t_m": [float(v) for v in self.X[:3, 3]],
            "Y": _mat(self.Y),
            "Y_name": self.Y_name if self.Y is not None else None,
            "Y_quat_xyzw": quat_xyzw(self.Y) if self.Y is not None else None,
            "Y_t_m": [float(v) for v in self.Y[:3, 3]] if self.Y is not None else None,
            "time_offset_s": _num(self.time_offset_s),
            "time_offset_std_s": _num(self.time_offset_std_s),
            "time_offset_peak_corr": _num(self.time_offset_peak_corr),
            "scale": _num(self.scale),
            "scale_std": _num(self.scale_std),
            "X_std": [_std(v) for v in self.X_std],
            "Y_std": [_std(v) for v in self.Y_std] if self.Y_std is not None else None,
            "undetermined": self.undetermined,
            "n_pairs": int(self.n_pairs),
            "outliers": [int(i) for i in self.outliers],
            "observability": dict(self.observability),
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "verdict": self.verdict,
            "init_solver": self.init_solver,
            "residuals": {k: [bool(x) if k == "outlier" else float(x) for x in v] for k, v in self.residuals.items()},
            "offset_curve": None if self.offset_curve is None else
            {k: [float(x) for x in v] for k, v in self.offset_curve.items()},
            "rig": None if self.rig is None else self.rig.to_dict(),
            "sigma": self.sigma,
            "held_out": None if self.held_out is None else dict(self.held_out),
        }
        pe = self.point_error()
        d["point_error_95_mm"] = None if pe is None else pe["point_error_95_mm"]
        d["point_error"] = pe
        return d

    def write_json(self, path) -> Path:
        """Write :meth:`to_dict` to ``path`` (atomically); returns the path."""
        path = Path(path)
        jsonutil.dump(self.to_dict(), path)
        return path

    # forms to paste into a robot stack (see kinhec.calibrate.output)
    def opencv_yaml(self) -> str:
        return output.opencv_yaml(self)

    def ros_static_transform(self, parent: str | None = None, child: str | None = None) -> str:
        _, a, b = self.X_name.split("_", 2)
        return output.ros_static_transform(self.X, parent or a, child or b)

    def urdf_origin(self) -> str:
        return output.urdf_origin(self.X)

    def figure(self, path):
        """Draw the one-page figure (residuals over time, offset curve, axes) to ``path``; needs matplotlib."""
        return draw(self, path)
