"""Comparisons of a result with its reference (drift, sigma) and with the truth."""

from __future__ import annotations

import math

from kinhec.geometry import se3
from kinhec.synth.observations import transform_from_pose_json
from kinhec.solvers.reprojection import POSE_PARAMETER_NAMES

__all__ = ["flatten", "drift", "sigma_changes", "compare", "truth_errors", "max_abs", "pose_error_of"]


def flatten(obj, prefix: str = "") -> dict:
    """``{json path: leaf}`` of a nested dict/list (``poses.X.rotation[0]``)."""
    out = {}
    if isinstance(obj, dict):
        for k in sorted(obj):
            out.update(flatten(obj[k], f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(flatten(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = obj
    return out


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def drift(result: dict, reference: dict, abs_tol: float, rel_tol: float, *, skip=()) -> list[str]:
    """Every value that moved: a number beyond ``abs_tol + rel_tol * max(|ref|, |new|)``, a string or shape change.

    Keys in ``skip`` (flattened paths) are left out.
    """
    a, b = flatten(result), flatten(reference)
    moved = []
    for k in sorted((set(a) | set(b)) - set(skip)):
        if k not in a or k not in b:
            moved.append(f"{k}: {'missing in the result' if k not in a else 'not in the reference'}")
            continue
        x, y = a[k], b[k]
        if _is_num(x) and _is_num(y):
            if not (math.isfinite(x) and math.isfinite(y)):
                if not (x == y or (math.isnan(x) and math.isnan(y))):
                    moved.append(f"{k}: {y!r} -> {x!r}")
                continue
            tol = abs_tol + rel_tol * max(abs(x), abs(y))
            if abs(x - y) > tol:
                moved.append(f"{k}: {y!r} -> {x!r} (|change| {abs(x - y):.3g} > tolerance {tol:.3g})")
        elif x != y:
            moved.append(f"{k}: {y!r} -> {x!r}")
    return moved


def _pose_z(T, T_ref, sigma: dict, name: str) -> dict:
    xi = se3.se3_log(se3.invert_transform(T_ref, check=False) @ T, check=False)
    out = {}
    for j, c in enumerate(POSE_PARAMETER_NAMES):
        s = sigma.get(f"{name}.{c}")
        if s:
            out[f"{name}.{c}"] = float(xi[j] / s)
    return out


def sigma_changes(result: dict, reference: dict, sigma: dict | None = None) -> dict:
    """Change of every estimated parameter in units of the reference's standard deviation (signed).

    Scalars: ``(new - ref) / sigma``; poses: the right perturbation
    ``T_ref^-1 T`` in twist coordinates over the sigma of each component.
    """
    sigma = reference.get("sigma", {}) if sigma is None else sigma
    out = {}
    for n, v in result.get("parameters", {}).items():
        s = sigma.get(n)
        ref = reference.get("parameters", {}).get(n)
        if s and ref is not None:
            out[n] = float((v - ref) / s)
    for n, p in result.get("poses", {}).items():
        ref = reference.get("poses", {}).get(n)
        if ref is not None:
            out.update(_pose_z(transform_from_pose_json(p, n), transform_from_pose_json(ref, n), sigma, n))
    return out


def _sigma_keys(result: dict, reference: dict, z: dict) -> set:
    """Flattened paths of the numbers that :func:`sigma_changes` measured (``z``): a scalar parameter, or every
    component of a pose whose six twist components all have a standard deviation."""
    keys = {f"parameters.{n}" for n in result.get("parameters", {}) if n in z}
    for name in result.get("poses", {}):
        if all(f"{name}.{c}" in z for c in POSE_PARAMETER_NAMES):
            keys.update(k for k in flatten(reference.get("poses", {}).get(name, {}), f"poses.{name}"))
            keys.update(k for k in flatten(result["poses"][name], f"poses.{name}"))
    return keys


def compare(result: dict, reference: dict, abs_tol: float, rel_tol: float, sigma_tol: float) -> list[str]:
    """What moved between a result and its reference, each number on its own scale.

    An estimated parameter with a reference standard deviation (a scalar, or a
    pose by its right-perturbation twist) passes within ``sigma_tol`` of that
    standard deviation: where the data determine a parameter weakly (a
    distortion coefficient with sigma 176), its last digits follow the
    round-off of the machine, and only a change on the scale of its
    uncertainty means anything.  Every other number (standard deviations,
    statistics, parameters without sigma) passes within
    ``abs_tol + rel_tol * max(|ref|, |new|)``; strings and shapes must match.
    """
    z = sigma_changes(result, reference)
    moved = [f"{k}: moved {abs(v):.3g} sigma > {sigma_tol:g}{_values(k, result, reference)}"
             for k, v in sorted(z.items()) if not abs(v) <= sigma_tol]  # fmt: skip
    return moved + drift(result, reference, abs_tol, rel_tol, skip=_sigma_keys(result, reference, z))


def _values(key: str, result: dict, reference: dict) -> str:
    """`` (ref -> new)`` of a scalar parameter (empty for a pose component)."""
    ref, new = reference.get("parameters", {}).get(key), result.get("parameters", {}).get(key)
    return f" ({ref!r} -> {new!r})" if ref is not None and new is not None else ""


def truth_errors(result: dict, truth: dict, sigma: dict) -> dict:
    """Error of every estimated parameter the truth names, in units of ``sigma`` (a result's own)."""
    return sigma_changes(result, truth, sigma)


def max_abs(d: dict) -> tuple[str | None, float]:
    """The key with the largest ``|value|`` and that value (``(None, nan)`` when empty)."""
    if not d:
        return None, float("nan")
    k = max(d, key=lambda k: abs(d[k]))
    return k, abs(float(d[k]))


def pose_error_of(result: dict, truth: dict, name: str = "X") -> tuple[float, float]:
    """Rotation [deg] and translation [mm] error of pose ``name`` against the truth."""
    T = transform_from_pose_json(result["poses"][name], name)
    Tt = transform_from_pose_json(truth["poses"][name], name)
    return se3.pose_error(T, Tt)


