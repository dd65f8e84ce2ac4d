"""Many cameras, many targets, one solution: ``calibrate_multi`` and the joint rig.

``calibrate_multi(pairs)`` solves the generalised robot-world/hand-eye problem ``A_k X_i(k) = Y_j(k) B_k``
over a bipartite graph (:mod:`kinhec.solvers.multi_axyb`): the maximum-likelihood ``X_i`` and ``Y_j``, their
standard deviations, the camera-to-camera transforms with theirs, per-pair residuals, an observability
verdict per unknown and a certificate that the rotations are the global optimum
(:mod:`kinhec.solvers.certificate`).

File layout (``kinhec calibrate-multi DIR``, :func:`read_pairs`)::

    DIR/<x_id>/<y_id>/hand.<ext>    hand poses A_k (T_base_ee, or T_world_body)
    DIR/<x_id>/<y_id>/eye.<ext>     eye poses (T_cam_target as read by default, --eye-pose target_T_cam)

one folder per edge (a tag ``x_id`` seen by a camera ``y_id`` eye-to-hand; a camera ``x_id`` seeing a target
``y_id`` eye-in-hand), any format of :mod:`kinhec.calibrate.readers` (``tum``, ``csv``, ``eth``, ``rwhe``,
``tabb``); paired by order, or by time stamp (the denser stream interpolated) when both files are stamped and
hold different counts.

The rig (``kinhec calibrate --setup rig``, :func:`joint_rig`): each camera's pairs (body pose, camera in the
world, at the camera's own clock offset) become one edge ``(camera, world)``; when the cameras share one
world, one ``Y`` serves them all and the cameras are solved jointly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kinhec import __version__
from kinhec.geometry import se3
from kinhec.util import jsonutil
from kinhec.calibrate import multi_edges as me
from kinhec.calibrate import pairing as pr
from kinhec.calibrate.frames import eye_solver_form, hand_metric
from kinhec.calibrate.multi_edges import EdgeFiles, stated_direction
from kinhec.calibrate.observability import MAX_X_STD_DEG, MAX_X_STD_M
from kinhec.calibrate.option_values import units_pair
from kinhec.calibrate.output import quat_xyzw
from kinhec.calibrate.readers import read_stream
from kinhec.util.errors import InputError, KinhecError, UnknownNameError
from kinhec.solvers.multi_axyb import parent_std
from kinhec.solvers.multi_axyb import graph_data, multi_axyb

__all__ = ["MultiCalibrationResult", "calibrate_multi", "read_pairs", "calibrate_multi_dir", "joint_rig",
           "SETUPS", "RIG_WORLDS"]  # fmt: skip

SETUPS = ("eye_to_hand", "eye_in_hand")
RIG_WORLDS = ("auto", "shared", "per_camera")
#: 99.99 % quantile of chi2(6): two cameras' ``Y`` that differ by less are taken as one world (``auto``).
WORLD_CHI2 = 27.856


def _mat(T) -> list:
    return [[float(v) for v in row] for row in np.asarray(T)]


@dataclass
class MultiCalibrationResult:
    """What :func:`calibrate_multi` found.

    Attributes
    ----------
    X, Y : dict of id -> ndarray (4, 4)
        The unknowns [m]: eye-to-hand ``X = T_ee_tag``, ``Y = T_base_cam``; eye-in-hand ``X = T_body_cam``,
        ``Y = T_world_target``.
    X_std, Y_std : dict of id -> ndarray (6,)
        Standard deviations: rotation [rad] (right perturbation), then translation [m].
    residuals : dict of (x_id, y_id) -> dict
        Per pair of every edge: ``rot_deg``, ``trans_mm`` (the camera pose's error at the solution),
        ``chi2`` (Mahalanobis, 6 degrees of freedom) and ``inlier``.
    certificate : dict
        ``certified`` (the rotations are the certified global optimum of the chordal rotation problem; see
        ``docs/multi.md``), ``duality_gap`` (cost of the estimate minus the lower bound, chi-square units),
        ``threshold`` and the details of :func:`kinhec.solvers.multi_axyb.multi_axyb`.
    cam_T_cam, cam_T_cam_std : dict of str -> ndarray
        ``"a_T_b"``: pose of camera ``b`` in camera ``a`` and its standard deviations (cross-covariances of
        the joint estimate included).
    scale, scale_std : dict of camera id -> float
        Monocular scales (camera = ``s`` x metric) when estimated.
    configuration : str
    observability : dict of str -> dict
        Per unknown (``"X:id"``, ``"Y:id"``): ``determined``, ``undetermined`` parts, ``edges``, ``pairs``.
    noise : dict of camera id -> dict
    warnings, notes : list of str
    fit : MultiAxybResult
        The solver's full result (covariance, chi-square, ...).
    inputs : dict
        What was read (folder, options, ``edges``, ``dropped``).
    edge_readings : list of dict
        The check of every edge's reading (:mod:`kinhec.calibrate.multi_edges`): which readings fit, the
        margin of the best over the one as read.
    """

    X: dict
    Y: dict
    X_std: dict
    Y_std: dict
    residuals: dict
    certificate: dict
    cam_T_cam: dict
    cam_T_cam_std: dict
    scale: dict
    scale_std: dict
    configuration: str
    observability: dict
    noise: dict
    warnings: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    fit: object = field(default=None, repr=False)
    inputs: dict = field(default_factory=dict)
    edge_readings: list = field(default_factory=list)

    @property
    def n_pairs(self) -> int:
        return int(sum(len(r["rot_deg"]) for r in self.residuals.values()))

    @property
    def determined(self) -> bool:
        return all(v["determined"] for v in self.observability.values())

    @property
    def verdict(self) -> str:
        """One sentence: usable, certified, how precise."""
        if not self.determined:
            bad = [k for k, v in self.observability.items() if not v["determined"]]
            return f"NOT determined by these pairs: {', '.join(bad)}; do not use them."
        rot = max(float(np.degrees(s[:3]).max()) for s in list(self.X_std.values()) + list(self.Y_std.values()))
        tr = max(float(1000 * s[3:].max()) for s in list(self.X_std.values()) + list(self.Y_std.values()))
        n_out = sum(int((~r["inlier"]).sum()) for r in self.residuals.values())
        rejected = [f"{e[0]}-{e[1]}" for e, r in self.residuals.items() if not r["inlier"].any()]
        outl = f"{n_out} outlier{'s' if n_out != 1 else ''}"
        if rejected:
            outl += f"; every pair of edge{'s' if len(rejected) > 1 else ''} {', '.join(rejected)} rejected"
        return (f"{len(self.X)} X and {len(self.Y)} Y determined to {rot:.2g} deg / {tr:.2g} mm (largest 1 sigma) "
                f"from {self.n_pairs} pairs ({outl}); {self.certificate_statement}.")

    @property
    def certificate_statement(self) -> str:
        """What the certificate says, for the problem it was computed on (the edges kept)."""
        c = self.certificate
        if c.get("method") == "none":
            return "rotations not certified (no certificate computed)"
        head = ("rotations certified globally optimal" if c.get("certified") else
                "rotations NOT certified globally optimal")  # fmt: skip
        dropped = list(self.inputs.get("dropped", []))
        left = list(c.get("edges_left_out", []))
        n_cert = c.get("edges_certified")
        if n_cert is not None and (dropped or left):
            n_all = int(c.get("edges_total", n_cert)) + len(dropped)
            why = []
            if dropped:
                why.append(f"{', '.join(dropped)} dropped with --drop-edge")
            if left:
                why.append(f"{', '.join(left)} left out by the outlier gate")
            head += f" for the {n_cert} of {n_all} edges kept ({'; '.join(why)})"
        return f"{head} (duality gap {c.get('duality_gap', math.nan):.3g})"

    def to_dict(self) -> dict:
        """The JSON-ready dictionary (keys may be added, never removed or renamed)."""
        def poses(T, S):
            return {str(k): {"T": _mat(v), "quat_xyzw": quat_xyzw(v), "t_m": [float(x) for x in v[:3, 3]],
                             "std": [float(x) for x in S[k]]} for k, v in T.items()}  # fmt: skip

        cert = {k: (v if not isinstance(v, (np.floating, np.bool_)) else v.item()) for k, v in self.certificate.items()}
        return {
            "kinhec_version": __version__,
            "configuration": self.configuration,
            "inputs": dict(self.inputs),
            "X": poses(self.X, self.X_std),
            "Y": poses(self.Y, self.Y_std),
            "cam_T_cam": {k: _mat(v) for k, v in self.cam_T_cam.items()},
            "cam_T_cam_std": {k: [float(x) for x in v] for k, v in self.cam_T_cam_std.items()},
            "scale": {str(k): float(v) for k, v in self.scale.items()},
            "scale_std": {str(k): float(v) for k, v in self.scale_std.items()},
            "certificate": jsonutil_safe(cert),
            "observability": {k: dict(v) for k, v in self.observability.items()},
            "noise": {str(k): dict(v) for k, v in self.noise.items()},
            "residuals": [{"x": str(e[0]), "y": str(e[1]),
                           **{k: [bool(x) if k == "inlier" else float(x) for x in v] for k, v in r.items()}}
                          for e, r in self.residuals.items()],  # fmt: skip
            "n_pairs": self.n_pairs,
            "edge_readings": list(self.edge_readings),
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "verdict": self.verdict,
        }

    def write_json(self, path) -> Path:
        """Write :meth:`to_dict` to ``path`` (atomically); returns the path."""
        path = Path(path)
        jsonutil.dump(self.to_dict(), path)
        return path


def jsonutil_safe(d: dict) -> dict:
    """Floats that JSON can hold (``nan``/``inf`` become None)."""
    out = {}
    for k, v in d.items():
        if isinstance(v, float) and not math.isfinite(v):
            v = None
        out[k] = v
    return out


def _camera_pairs(fit) -> tuple[dict, dict]:
    """Every camera-to-camera transform of the joint estimate and its standard deviations."""
    cams = fit.y_ids if fit.configuration == "eye_to_hand" else fit.x_ids
    T, S = {}, {}
    for i, a in enumerate(cams):
        for b in cams[i + 1 :]:
            Z, cov = fit.relative(a, b)
            T[f"{a}_T_{b}"] = Z
            S[f"{a}_T_{b}"] = parent_std(Z, cov)
    return T, S


def _precision(fit, observability: dict) -> tuple[dict, list[str]]:
    """Every unknown whose standard deviations exceed the limits of ``kinhec calibrate`` is not determined."""
    obs = {k: dict(v) for k, v in observability.items()}
    warns = []
    for kind, S in (("X", fit.X_std), ("Y", fit.Y_std)):
        for k, v in S.items():
            rot, tr = float(np.degrees(np.max(v[:3]))), float(np.max(v[3:]))
            o = obs[f"{kind}:{k}"]
            o["std_max_deg"], o["std_max_mm"] = rot, 1000 * tr
            if o["determined"] and not (rot <= MAX_X_STD_DEG and tr <= MAX_X_STD_M):
                o["determined"] = False
                o["undetermined"] = list(o.get("undetermined", [])) + ["precision"]
                warns.append(f"{kind}:{k}: standard deviations up to {rot:.3g} deg and {1000 * tr:.3g} mm (limits "
                             f"{MAX_X_STD_DEG:g} deg, {1000 * MAX_X_STD_M:g} mm): not determined")  # fmt: skip
    return obs, warns


def calibrate_multi(pairs, *, configuration: str | None = None, scale=False, noise: dict | None = None,
                    robust: bool = True, start: dict | None = None, certify: str | None = "auto",
                    sdp_solver: str = "scs", check_readings: bool = True, force: bool = False,
                    edge_files: dict | None = None) -> MultiCalibrationResult:  # fmt: skip
    """Jointly calibrate many ``X`` and ``Y`` from pose pairs over a graph, with a certificate.

    Parameters
    ----------
    pairs : dict of (x_id, y_id) -> (A, B)
        ``A``, ``B`` arrays (N, 4, 4) in metres per edge: ``A_k X_x_id = Y_y_id B_k``.  Eye-to-hand (fixed
        cameras ``Y = T_base_cam`` watching tags ``X = T_ee_tag``): ``A = T_base_ee``, ``B = T_cam_tag``.
        Eye-in-hand (cameras ``X = T_body_cam`` on one body watching targets ``Y = T_world_target``):
        ``A = T_world_body``, ``B = T_target_cam``.  The graph must be connected.
    configuration : {"eye_to_hand", "eye_in_hand"}, optional
        Identified from ``B`` when omitted.
    scale : bool or iterable of camera ids
        Monocular scale per camera (all, or the ones named).
    noise : dict, optional
        Known noise levels for every camera (:data:`kinhec.solvers.he_ml.NOISE_KEYS`).
    robust : bool
        Outlier rejection and Student-t weights.
    start : dict, optional
        ``{"X": {...}, "Y": {...}}``: refine from there only (the certificate tells whether that reached the
        global optimum).
    certify : {"auto", "local", "sdp"} or None
        See :func:`kinhec.solvers.multi_axyb.multi_axyb`.
    sdp_solver : {"scs", "clarabel"}
    check_readings : bool
        Check every edge's reading on its own and against the other edges first
        (:mod:`kinhec.calibrate.multi_edges`).
    force : bool
        An edge whose files fit only another reading is kept as read, with a warning, instead of refused.
    edge_files : dict of (x_id, y_id) -> EdgeFiles, optional
        What each edge's files are and were read as (for the messages; :func:`calibrate_multi_dir` gives it).

    Returns
    -------
    MultiCalibrationResult
        An unknown whose standard deviations exceed the limits of ``kinhec calibrate``
        (:data:`kinhec.calibrate.observability.MAX_X_STD_DEG`, ``MAX_X_STD_M``) is not determined.

    Raises
    ------
    InputError
        Bad pairs (naming the edge), a disconnected graph, bad options.
    EdgeReadingError
        (an ``InputError``) An edge fits only with its hand or eye poses inverted, or several readings of it fit
        equally while the one as read does not (naming the edge, what each reading gives and how to state it),
        unless ``force``.
    """
    reading_warnings, edge_readings = [], []
    if check_readings:
        d = graph_data(pairs, configuration, scale)  # the pairs checked before anything is fitted
        cams = set(d.scaled)
        scaled_edges = [e for e in d.edges if (e[1] if d.configuration == "eye_to_hand" else e[0]) in cams]
        checks = me.check_edges(pairs, scaled_edges=scaled_edges)
        files = {e: (edge_files or {}).get(e) or me.arrays_files(e) for e in checks}
        reading_warnings = me.refusal(checks, files, force)
        edge_readings = [ch.to_dict() for ch in checks.values()]
    fit = multi_axyb(pairs, configuration=configuration, noise=noise, scale=scale, robust=robust, start=start,
                     certify=certify, sdp_solver=sdp_solver)  # fmt: skip
    residuals = {}
    for e, r in fit.residuals.items():
        residuals[e] = {"rot_deg": np.degrees(np.linalg.norm(r[:, :3], axis=1)),
                        "trans_mm": 1000.0 * np.linalg.norm(r[:, 3:], axis=1),
                        "chi2": fit.chi2[e], "inlier": fit.inliers[e]}  # fmt: skip
    cam_T_cam, cam_std = _camera_pairs(fit)
    P6 = 6 * (len(fit.x_ids) + len(fit.y_ids))
    scale_std = {k: float(fit.scale[k] * math.sqrt(max(fit.cov[P6 + i, P6 + i], 0.0)))
                 for i, k in enumerate(fit.scaled)}  # fmt: skip
    observability, precision = _precision(fit, fit.observability)
    warnings = list(reading_warnings)
    for k, v in fit.observability.items():
        if not v["determined"]:
            warnings.append(f"{k}: the pairs leave its {' and '.join(v['undetermined'])} undetermined "
                            f"({v.get('edges', 0)} edge(s), {v.get('pairs', 0)} pair(s))")  # fmt: skip
    c = fit.certificate
    if c.get("method") != "none" and not c.get("certified"):
        why = ("the relaxation is not tight at these data" if not c.get("relaxation_tight") else
               f"the estimate is {c.get('global_rotation_distance_deg', math.nan):.3g} deg from the certified "
               "global rotations")  # fmt: skip
        warnings.append(f"the rotations are not certified globally optimal: {why}")
    for e, r in residuals.items():
        n_out = int((~r["inlier"]).sum())
        if n_out > 0.2 * len(r["inlier"]):
            warnings.append(f"edge {e[0]}-{e[1]}: {n_out} of {len(r['inlier'])} pairs are outliers")
    warnings += precision
    return MultiCalibrationResult(X=fit.X, Y=fit.Y, X_std=fit.X_std, Y_std=fit.Y_std, residuals=residuals,
                                  certificate=c, cam_T_cam=cam_T_cam, cam_T_cam_std=cam_std, scale=dict(fit.scale),
                                  scale_std=scale_std, configuration=fit.configuration,
                                  observability=observability, noise=fit.noise, warnings=warnings,
                                  notes=list(fit.info.get("notes", [])), fit=fit,
                                  edge_readings=edge_readings)  # fmt: skip


# --------------------------------------------------------------------------- #
# files
# --------------------------------------------------------------------------- #
def _one_file(folder: Path, stem: str) -> Path:
    found = sorted(p for p in folder.iterdir() if p.is_file() and p.name.split(".")[0] == stem)
    if len(found) != 1:
        got = ", ".join(p.name for p in found) or "none"
        raise InputError(f"{folder}: expected one file named {stem}.<ext> (e.g. {stem}.tum), got {got}")
    return found[0]


def _edge_options(edge_poses, drop) -> tuple[dict, list]:
    """``{"x/y/hand": dir}`` (or an iterable of ``"x/y/role=dir"``) and ``["x/y", ...]``, checked."""
    out = {}
    items = edge_poses.items() if isinstance(edge_poses, dict) else (
        tuple(str(v).split("=", 1)) if "=" in str(v) else (str(v), None) for v in (edge_poses or ()))  # fmt: skip
    for key, direction in items:
        parts = str(key).strip("/").split("/")
        if len(parts) != 3 or parts[2] not in ("hand", "eye") or not direction:
            raise InputError(f"--edge-pose: expected X_ID/Y_ID/hand=DIRECTION or X_ID/Y_ID/eye=DIRECTION, got {key!r}"
                             + (f"={direction}" if direction else ""))  # fmt: skip
        out[(parts[0], parts[1], parts[2])] = direction
    dropped = []
    for key in drop or ():
        parts = str(key).strip("/").split("/")
        if len(parts) != 2:
            raise InputError(f"--drop-edge: expected X_ID/Y_ID, got {key!r}")
        dropped.append((parts[0], parts[1]))
    return out, dropped


def _read_edges(folder, *, setup: str = "eye_to_hand", fmt: str | None = None, hand_pose: str | None = None,
                eye_pose: str | None = None, units: str | None = None, edge_poses=None, drop=()):  # fmt: skip
    """The pairs, what each edge was read as (:class:`~kinhec.calibrate.multi_edges.EdgeFiles`) and the edges
    left out (see :func:`read_pairs`)."""
    if setup not in SETUPS:
        raise UnknownNameError("setup", setup, SETUPS)
    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"{root}: expected a folder of <x_id>/<y_id>/{{hand,eye}} files, got no such folder")
    uh, ue = units_pair(units)
    per_edge, dropped = _edge_options(edge_poses, drop)
    found = {(x.name, y.name): y for x in sorted(p for p in root.iterdir() if p.is_dir())
             for y in sorted(p for p in x.iterdir() if p.is_dir())}  # fmt: skip
    unknown = sorted({f"{k[0]}/{k[1]}" for k in list(per_edge) + dropped if (k[0], k[1]) not in found})
    if unknown:
        raise InputError(f"{root}: --edge-pose/--drop-edge name edges it does not hold: {', '.join(unknown)} "
                         f"(expected one of {', '.join(f'{x}/{y}' for x, y in found) or 'none'})")  # fmt: skip
    pairs, files = {}, {}
    for (x, y), ydir in found.items():
        if (x, y) in dropped:
            continue
        key = f"{x}/{y}"
        hand = read_stream(_one_file(ydir, "hand"), fmt)
        eye = read_stream(_one_file(ydir, "eye"), fmt)
        hp, hsrc = stated_direction(hand, "hand", key, per_edge.get((x, y, "hand")), hand_pose)
        ep, esrc = stated_direction(eye, "eye", key, per_edge.get((x, y, "eye")), eye_pose)
        A = hand_metric(hand, hp, uh)
        # the solver's B: T_cam_tag eye-to-hand, T_target_cam eye-in-hand (kinhec.calibrate's solver form)
        B = eye_solver_form(eye, ep, ue, setup)
        if hand.t is not None and eye.t is not None and len(hand) != len(eye):
            p = pr.TimePairing(hand, A, eye, B, 0.0, 0.0)
            A, B = p.at(0.0)
        else:
            A, B = pr.pair_by_order(hand, A, eye, B).at()
        pairs[(x, y)] = (A, B)
        files[(x, y)] = EdgeFiles(key=key, hand=str(hand.path), eye=str(eye.path),
                                  hand_pose=hp or hand.direction or "base_T_ee",
                                  eye_pose=ep or eye.direction or "cam_T_target", hand_source=hsrc, eye_source=esrc)
    if not pairs:
        raise InputError(f"{root}: expected edge folders <x_id>/<y_id>/ with hand.<ext> and eye.<ext>, got none"
                         + (" left after --drop-edge" if dropped else ""))  # fmt: skip
    return pairs, files, [f"{x}/{y}" for x, y in dropped]


def read_pairs(folder, *, setup: str = "eye_to_hand", fmt: str | None = None, hand_pose: str | None = None,
               eye_pose: str | None = None, units: str | None = None, edge_poses=None, drop=()) -> dict:  # fmt: skip
    """Read ``DIR/<x_id>/<y_id>/{hand,eye}.<ext>`` into ``pairs`` for :func:`calibrate_multi` (see the module text).

    Directions and units as in :func:`kinhec.calibrate.calibrate` (``hand_pose`` ``base_T_ee`` or
    ``ee_T_base``; ``eye_pose`` ``cam_T_target`` or ``target_T_cam``; ``units`` ``m``, ``mm`` or
    ``HAND,EYE``).  Each file's direction comes from, in this order: ``edge_poses`` (``{"x_id/y_id/eye":
    "target_T_cam"}``, or strings ``"x_id/y_id/eye=target_T_cam"``), ``hand_pose``/``eye_pose``, the file's
    format, a frame pair in its comment lines or name (``# T_target_cam``), the default
    (:func:`kinhec.calibrate.multi_edges.stated_direction`).  ``drop``: edges ``"x_id/y_id"`` left out.

    Raises
    ------
    InputError
        No edge folders, a folder without exactly one hand and one eye file, unreadable files (naming the
        file and line), counts that cannot be paired, options naming edges the folder does not hold.
    """
    return _read_edges(folder, setup=setup, fmt=fmt, hand_pose=hand_pose, eye_pose=eye_pose, units=units,
                       edge_poses=edge_poses, drop=drop)[0]


def calibrate_multi_dir(folder, *, setup: str = "eye_to_hand", fmt: str | None = None, hand_pose: str | None = None,
                        eye_pose: str | None = None, units: str | None = None, edge_poses=None, drop=(),
                        **kw) -> MultiCalibrationResult:  # fmt: skip
    """:func:`read_pairs` then :func:`calibrate_multi` (``setup`` is the configuration; ``force`` and the other
    options of :func:`calibrate_multi` pass through).

    Raises
    ------
    EdgeReadingError
        An edge's files fit only another reading than the one stated (naming the files, the reading that fits,
        what each gives, and ``--edge-pose``/``--drop-edge``), unless ``force``.
    """
    pairs, files, dropped = _read_edges(folder, setup=setup, fmt=fmt, hand_pose=hand_pose, eye_pose=eye_pose,
                                        units=units, edge_poses=edge_poses, drop=drop)  # fmt: skip
    res = calibrate_multi(pairs, configuration=setup, edge_files=files, **kw)
    res.inputs = {"folder": str(folder), "setup": setup, "format": fmt, "hand_pose": hand_pose or "base_T_ee",
                  "eye_pose": eye_pose or "cam_T_target", "units": units or "m",
                  "edges": [f"{x}/{y}" for x, y in pairs], "dropped": dropped,
                  "read_as": {f.key: {"hand": [f.hand_pose, f.hand_source], "eye": [f.eye_pose, f.eye_source]}
                              for f in files.values()}}  # fmt: skip
    return res


# --------------------------------------------------------------------------- #
# the rig of kinhec calibrate --setup rig
# --------------------------------------------------------------------------- #
@dataclass
class JointRig:
    """The rig solved jointly: ``X`` per camera, camera-to-camera transforms, and what was decided."""

    X: dict
    X_std: dict
    cam_T_cam: dict
    cam_T_cam_std: dict
    info: dict


def _same_world(per: dict) -> tuple[bool, float]:
    """Whether every two cameras' ``Y`` agree within their covariances (largest chi-square, 6 dof)."""
    worst = 0.0
    names = list(per)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            Ya, Yb = per[a].Y, per[b].Y
            v = np.concatenate([se3.so3_log(Ya[:3, :3].T @ Yb[:3, :3], check=False), Yb[:3, 3] - Ya[:3, 3]])
            C = per[a].cov[6:12, 6:12] + per[b].cov[6:12, 6:12]
            worst = max(worst, float(v @ np.linalg.lstsq(C, v, rcond=None)[0]))
    return worst <= WORLD_CHI2, worst


def joint_rig(per: dict, *, reference: str | None = None, world: str = "auto", scale: bool = False) -> JointRig | None:
    """Solve the cameras of a rig jointly (one body, K cameras); None when their worlds are separate.

    Parameters
    ----------
    per : dict of camera name -> CalibrationResult
        The per-camera fits of :func:`kinhec.calibrate.calibrate` (their pairs at their own clock offsets).
    reference : str, optional
        Name of the reference camera that stands in for the body (its ``X`` is the identity).
    world : {"auto", "shared", "per_camera"}
        Whether the cameras' poses are in one world (one ``Y``): ``auto`` decides from the per-camera ``Y``
        (:data:`WORLD_CHI2`); ``per_camera`` keeps the cameras apart (returns None).
    scale : bool
        A monocular scale per camera.
    """
    if world not in RIG_WORLDS:
        raise UnknownNameError("rig world", world, RIG_WORLDS)
    if world == "per_camera":
        return None
    shared, worst = _same_world(per) if len(per) > 1 else (True, 0.0)
    if world == "auto" and not shared:
        return None
    pairs = {(name, "world"): r.pairs for name, r in per.items()}
    try:
        # each camera's reading was settled by the convention firewall of its own fit
        res = calibrate_multi(pairs, configuration="eye_in_hand", scale=bool(scale), check_readings=False)
    except KinhecError as exc:  # the per-camera fits stand; say why
        next(iter(per.values())).notes.append(f"the cameras were not solved jointly: {exc}")
        return None
    X, S = dict(res.X), dict(res.X_std)
    cam_T_cam, cam_std = dict(res.cam_T_cam), dict(res.cam_T_cam_std)
    if reference is not None:
        X = {reference: np.eye(4), **X}
        S = {reference: np.zeros(6), **S}
        ref_T, ref_S = {}, {}
        for name in res.X:
            ref_T[f"{reference}_T_{name}"] = res.X[name]
            ref_S[f"{reference}_T_{name}"] = res.X_std[name]
        cam_T_cam, cam_std = {**ref_T, **cam_T_cam}, {**ref_S, **cam_std}
    info = {"world": "shared", "world_chi2": worst, "certificate": jsonutil_safe(res.certificate),
            "Y": _mat(res.Y["world"]), "Y_std": [float(v) for v in res.Y_std["world"]],
            "observability": res.observability, "warnings": res.warnings}  # fmt: skip
    return JointRig(X, S, cam_T_cam, cam_std, info)
