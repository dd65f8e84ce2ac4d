"""The figure of a plan: the arm at the planned poses, the camera frusta and the target; predicted error against
the number of poses, planned and random.

matplotlib is imported inside :func:`draw` only (through :mod:`kinhec.report.viz`'s
style helpers), so ``import kinhec.planner`` never loads it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["draw"]

_ARM_COLOR = "#555555"
_CAM_COLOR = "#8c2d8c"
_REF_COLOR = "#e69f00"
_PLAN_COLOR = "#000000"
_RANDOM_COLOR = "#4c72b0"


def draw(plan, path) -> Path:
    """Draw ``plan`` (a :class:`~kinhec.planner.plan.PosePlan`) to the PNG ``path``.

    Left: the scene in the robot base frame from the guesses of ``X`` and ``Y``
    (arm at every planned pose, the first solid; camera frusta; the board or
    the marker at every pose; the visiting order).  Right: predicted RMS
    translation error of ``X`` after each pose, for the plan and the median
    (and quartiles) of random feasible poses.

    Returns
    -------
    Path
    """
    from kinhec.report.viz import _style
    from kinhec.report.viz.scene import add_polygon, board_outline, transform_points

    sc = plan.scene
    robot, cam, tgt = sc.robot, sc.camera, sc.target
    eih = sc.configuration == "eye_in_hand"
    k = len(plan)
    with _style.rc_context():
        fig = _style.new_figure(14.0, 6.5, constrained=False)
        fig.subplots_adjust(left=0.0, right=0.97, bottom=0.09, top=0.9, wspace=0.05)
        ax = fig.add_subplot(1, 2, 1, projection="3d")
        cloud = [np.zeros((1, 3))]
        if k:
            F = robot.joint_frames(plan.q)[:, :, :3, 3]
            for i, p in enumerate(F):
                ax.plot(p[:, 0], p[:, 1], p[:, 2], color=_ARM_COLOR, lw=3.0 if i == 0 else 1.2,
                        alpha=0.95 if i == 0 else 0.35, solid_capstyle="round")  # fmt: skip
            cloud.append(F.reshape(-1, 3))
            flange = plan.T_base_ee[:, :3, 3]
            ax.plot(flange[:, 0], flange[:, 1], flange[:, 2], "o--", color="#4c72b0", lw=0.8, ms=3)
            for i, p in enumerate(flange):
                ax.text(*p, f" {i + 1}", fontsize=7)
        T_cam = sc.T_base_cam(plan.T_base_ee) if k else sc.Y[None]
        outline = board_outline(tgt.points_m, tgt.pitch_m)
        if eih:
            corners = transform_points(sc.Y[None], outline)[0]
            add_polygon(ax, corners, _REF_COLOR)
            ref = corners
            depth = float(np.clip(0.5 * np.median(np.linalg.norm(T_cam[:, :3, 3] - sc.Y[:3, 3], axis=-1)), 0.03, 0.3))
        else:
            ref = transform_points(plan.T_base_ee @ sc.X, outline) if k else np.zeros((0, 4, 3))
            for c in ref:
                add_polygon(ax, c, _REF_COLOR)
            ref = ref.reshape(-1, 3)
            depth = 0.3 * float(np.linalg.norm(sc.Y[:3, 3] - (flange.mean(axis=0) if k else 0.0)))
            T_cam = sc.Y[None]
        seg = _style.frustum_segments(T_cam, cam.width_px, cam.height_px, cam.f_px, depth)
        ax.plot(*_style.polyline_nan(seg), color=_CAM_COLOR, lw=0.9)
        _style.draw_triad(ax, np.eye(4), 0.15, lw=2.0)
        cloud += [seg.reshape(-1, 3), np.asarray(ref).reshape(-1, 3)]
        _style.box_aspect_3d(ax, np.vstack(cloud), pad=0.04, zoom=0.9)
        _style.few_ticks_3d(ax, 5)
        ax.view_init(elev=22, azim=-60)
        ax.set_xlabel("x (base) [m]")
        ax.set_ylabel("y (base) [m]")
        ax.set_zlabel("z (base) [m]")
        specs = [(f"arm {robot.name} at the {k} planned poses (first solid)", dict(color=_ARM_COLOR, lw=3)),
                 ("flange, in visiting order", dict(color="#4c72b0", lw=0.8, ls="--", marker="o", ms=3)),
                 ("camera frusta" if eih else "static camera", dict(color=_CAM_COLOR, lw=1.0)),
                 (f"{'board' if eih else 'marker'} {tgt.name}", dict(color=_REF_COLOR, lw=6, alpha=0.6))]  # fmt: skip
        ax.legend(handles=_style.legend_handles(specs), loc="upper left", fontsize=7.5)
        ax.set_title(f"Planned poses: {robot.name}, {sc.configuration.replace('_', '-')}, camera {cam.name}")

        ax2 = fig.add_subplot(1, 2, 2)
        n0 = plan.details.get("n_taken_counted", 0)
        x = np.arange(1, k + 1) + n0
        fin = lambda a: np.where(np.isfinite(a), a, np.nan)  # noqa: E731
        q = plan.details.get("random_sigma_quartiles_mm")
        if q is not None and k:
            lo, hi = (np.array([np.nan if v is None else v for v in row]) for row in q)
            ax2.fill_between(x, lo, hi, color=_RANDOM_COLOR, alpha=0.2, lw=0, label="random feasible poses, quartiles")
        ax2.plot(x, fin(plan.random_sigma_mm), "s-", color=_RANDOM_COLOR, ms=3.5, label="random feasible poses, median")
        ax2.plot(x, fin(plan.sigma_mm), "o-", color=_PLAN_COLOR, ms=4, label="planned poses, in path order")
        if np.isfinite(plan.sigma_taken_mm):
            ax2.axhline(plan.sigma_taken_mm, color="#999999", ls=":", label=f"the {n0} taken poses")
        stop = plan.details.get("stop_std_mm")
        if stop:
            ax2.axhline(stop, color="#c44e52", ls="--", lw=0.8, label=f"stop level {stop:g} mm")
        vals = np.concatenate([fin(plan.sigma_mm), fin(plan.random_sigma_mm)])
        if np.isfinite(vals).any():
            _style.log_scale(ax2, "y", vals[np.isfinite(vals)])
        ax2.set_xlabel("poses recorded" + (" (taken ones first)" if n0 else ""))
        ax2.set_ylabel("predicted RMS translation error of X [mm]")
        ax2.legend(fontsize=8)
        ax2.set_title("Cramér-Rao bound after each pose (" + plan.details["noise"]["camera_model"] + " camera noise)")
        return _style.save(fig, path)
