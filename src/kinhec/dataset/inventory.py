"""What kinhec knows about: robots, camera and target presets, tracks, tiers and solvers.

Used by ``kinhec info`` and by the dataset card; returns plain, JSON-ready data.
"""

from __future__ import annotations

from kinhec.io.tracks import TRACKS
from kinhec.models import cameras, robots
from kinhec.solvers import registry
from kinhec.synth import tiers


def _joint_kinds(model) -> str:
    """``"RRPR"``: R for each revolute joint, P for each prismatic one."""
    return "".join("P" if t == "prismatic" else "R" for t in (model.joint_types or ("revolute",) * model.dof))


def inventory() -> dict:
    """Registry contents as lists/dicts of plain values; ``machines`` are the reduced-DOF models that only kinhec
    carries (not in the published model table or tiers)."""
    out: dict = {"robots": [], "cameras": [], "targets": [], "tracks": {}, "tiers": {}, "solvers": []}
    for name in robots.ROBOT_NAMES:
        m = robots.get_robot(name)
        out["robots"].append(
            {
                "name": m.name,
                "dof": m.dof,
                "convention": m.convention,
                "control_rate_hz": float(m.control_rate_hz),
                "reach_m": float(m.reach_m),
                "description": m.description,
            }
        )
    out["machines"] = [
        {"name": m.name, "dof": m.dof, "convention": m.convention, "joints": _joint_kinds(m),
         "control_rate_hz": float(m.control_rate_hz), "reach_m": float(m.reach_m), "description": m.description,
         "source": m.source}
        for m in map(robots.get_robot, robots.MACHINE_NAMES)
    ]  # fmt: skip
    for name in cameras.CAMERA_NAMES:
        c = cameras.get_camera(name)
        out["cameras"].append(
            {"name": c.name, "width_px": c.width_px, "height_px": c.height_px, "f_px": float(c.f_px), "hfov_deg": float(c.hfov_deg)}
        )
    for name in cameras.TARGET_NAMES:
        g = cameras.get_target(name)
        out["targets"].append(
            {
                "name": g.name,
                "cols": g.cols,
                "rows": g.rows,
                "pitch_m": float(g.pitch_m),
                "kind": g.kind,
                "min_visible_points": g.min_visible_points,
            }
        )
    out["tracks"] = {t: tiers.TRACK_DESCRIPTIONS[t] for t in TRACKS}
    for name in tiers.TIER_NAMES:
        tier = tiers.load_tier(name)
        counts = tiers.plan_counts(tier)
        out["tiers"][name] = {"counts": counts, "total": sum(counts.values()), "shard_size": tier.shard_size}
    registry.load_plugins()  # plug-ins of installed packages (kinhec.solvers entry points) are listed too
    for spec in [*registry.SOLVERS.values(), *registry.PIXEL_SOLVERS.values()]:
        entry = {"name": spec.name, "kind": spec.kind, "citation": getattr(spec, "citation", "")}
        if getattr(spec, "plugin", False):
            entry.update(plugin=True, module=spec.module)
        out["solvers"].append(entry)
    return out
