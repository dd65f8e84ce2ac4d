"""Stage 7, a rig: every camera solved as eye-in-hand, then all of them jointly when they share one world.

Each camera goes through the one-camera stages (:func:`~kinhec.calibrate.stages.camera.solve_camera`) in
the reading the firewall decided for it; :func:`kinhec.calibrate.multi.joint_rig` then solves the cameras
jointly when their poses are in one world (``rig_world``), else every camera-to-camera transform is
composed from the per-camera ``X`` with its standard deviations.  Without a body stream the first camera
is the reference (``X`` camera-to-camera, the reference's the identity).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate import firewall as fw
from kinhec.calibrate import solve as sv
from kinhec.calibrate.bags import frame_names
from kinhec.calibrate.inputs import Inputs
from kinhec.calibrate.multi import joint_rig
from kinhec.calibrate.result import CalibrationResult, RigResult
from kinhec.calibrate.stages.camera import solve_camera
from kinhec.calibrate.stages.outputs import reading_inputs

__all__ = ["solve_rig", "compose_std"]


def compose_std(X1, C1, X2, C2):
    """``inv(X1) X2`` and the standard deviations of its (rotation, translation) parametrisation."""
    Z = se3.invert_transform(X1, check=False) @ X2

    def f(p):
        a = sv.retract(X1, p[:6])
        b = sv.retract(X2, p[6:])
        E = se3.invert_transform(Z, check=False) @ se3.invert_transform(a, check=False) @ b
        return np.concatenate([se3.so3_log(E[:3, :3], check=False), (se3.invert_transform(a, check=False) @ b)[:3, 3] - Z[:3, 3]])

    J = np.zeros((6, 12))
    for k in range(12):
        e = np.zeros(12)
        e[k] = 1e-7
        J[:, k] = (f(e) - f(-e)) / 2e-7
    C = np.zeros((12, 12))
    C[:6, :6], C[6:, 6:] = C1, C2
    return Z, np.sqrt(np.maximum(np.diag(J @ C @ J.T), 0.0))


def _per_camera(inp: Inputs) -> tuple[dict, dict, dict]:
    """Every camera solved on its own: results and firewall decisions by camera name; the rig's ``inputs``."""
    opts, per, decs = inp.options, {}, {}
    for e in inp.eyes:
        dec = fw.check(inp.hand, e, rig=True, rig_reference=inp.reference_camera, **opts.firewall_options())
        decs[e.name] = dec
        r = solve_camera(dec, "eye_in_hand", opts)
        r.inputs = dict(inp.record, eye=[e.path], **reading_inputs(dec))
        per[e.name] = r
    inputs = dict(inp.record)
    inputs.update(reading_inputs(next(iter(decs.values()))))
    if inp.from_bag:
        inputs["camera_frames"] = {e.name: frame_names("rig", d.hand, d.eye, d.reading.hand_pose, d.reading.eye_pose)
                                   for e, d in zip(inp.eyes, decs.values())}
    return per, decs, inputs


def _rig(per: dict, inp: Inputs) -> RigResult:
    hand_s, reference_camera = inp.hand, inp.reference_camera
    names = list(per)
    X_all = {k: r.X for k, r in per.items()}
    C_all = {k: r.cov[:6, :6] for k, r in per.items()}
    S_all = {k: r.X_std for k, r in per.items()}
    if reference_camera:  # the reference camera itself: identity, exactly
        names = [hand_s.name] + names
        X_all[hand_s.name], C_all[hand_s.name], S_all[hand_s.name] = np.eye(4), np.zeros((6, 6)), np.zeros(6)
    # one body, K cameras: solved jointly when in one world
    joint = joint_rig(per, reference=hand_s.name if reference_camera else None, world=inp.options.rig_world,
                      scale=inp.options.scale)
    cam_T_cam, cam_std = {}, {}
    if joint is not None:
        X_all, S_all, cam_T_cam, cam_std = joint.X, joint.X_std, joint.cam_T_cam, joint.cam_T_cam_std
    for i, a in enumerate(names if joint is None else []):
        for b in names[i + 1:]:
            Z, s = compose_std(X_all[a], C_all[a], X_all[b], C_all[b])
            cam_T_cam[f"{a}_T_{b}"] = Z
            cam_std[f"{a}_T_{b}"] = s
    return RigResult(names, X_all, S_all, cam_T_cam, cam_std, per, joint=None if joint is None else joint.info)


def solve_rig(inp: Inputs) -> CalibrationResult:
    """The rig's result: the first camera's, with the rig (:class:`~kinhec.calibrate.result.RigResult`), every
    camera's warnings (named) and observability."""
    per, _, inputs = _per_camera(inp)
    if inp.reference_camera:
        for k, r in per.items():
            r.X_name = f"T_{inp.hand.name}_{k}"
            r.Y_name = "T_world_world"
    rig = _rig(per, inp)
    first = replace(per[next(iter(per))])  # a copy: the first camera's own result stays in rig.per_camera
    first.setup = "rig"
    first.inputs = inputs
    first.rig = rig
    first.warnings = [f"{k}: {w}" for k, r in per.items() for w in r.warnings]
    first.observability = dict(first.observability,
                               determined=all(r.determined for r in per.values()),
                               per_camera={k: r.observability for k, r in per.items()})
    return first
