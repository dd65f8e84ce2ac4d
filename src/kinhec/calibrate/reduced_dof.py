"""Machines that turn about one axis (SCARA, 4-axis palletisers, XY-theta gantries): what the motion leaves open.

When every hand rotation is about one axis, ``A_i X = Y B_i`` keeps part of ``(X, Y)`` open.  With the flange
turning about the base's ``z`` axis (``R_A,i = Rz(theta_i) R_0``) and moving sideways, moving the flange frame's
origin of ``X`` by ``s`` along ``a = R_0^T e_z`` (the turning axis in the flange frame) and ``Y``'s by ``s`` along
the base's ``z`` changes no pair: ``A_i (X + s a) = A_i X + s R_A,i a = A_i X + s e_z``.  One direction, the
translations of ``X`` and ``Y`` along the axis *together*, is undetermined; their difference along it is.  A
motion that also never moves sideways (a rotary table) leaves the rotation about the axis open as well.

Which components are open is read off the information of the fit (the Gauss-Newton normal matrix of
:func:`kinhec.calibrate.solve.refine`, its nuisance parameters -- clock offset, scale -- marginalised) with the hand's
rotations made exactly one-axis (:func:`kinhec.calibrate.solve.one_axis_information`: each rotation replaced by its
part about the principal axis, the eye rotations by what ``X`` and ``Y`` predict from them): scaled to unit
diagonal (each parameter in units of its own information, so that the test depends on no unit), its eigenvectors
with eigenvalues below :data:`NULL_LEVEL` of the largest are the open directions.  On the measured poses an open
direction keeps what the noise tilting the axes gives it (about ``2 lambda2``: 1e-8 to 1e-5 on generated SCARA,
palletiser and gantry recordings), and a weakly determined one can have less than 1e-3 (a camera looking at a
marker on the flange from afar couples the rotation of ``Y`` with the translations: 2e-4 to 4e-3 of the largest,
the same in the information of the noise-free recording): the two overlap.  With the rotations made one-axis an open
direction is open to round-off (1e-16); one left open by a flange that never moves sideways (a rotary table) keeps
what the noise of the hand's translations gives it (3e-8 at 0.2 mm); the determined ones do not change.  The level
sits between.  The analysis runs only on motions whose axes scatter less than
:data:`kinhec.calibrate.observability.MIN_LAMBDA2`; a motion that turns about two axes or more is judged as before.

The open directions are named in the parameters calibrate reports (:data:`COMPONENTS`: ``X.rx .. X.tz, Y.rx ..
Y.tz``, rotations in the frame of the transform, translations in its parent frame: ``X.tz`` the camera's (the
marker's) origin along the flange's ``z`` axis, ``Y.tz`` the target's (the camera's) along the base's ``z``).
A component is named when the direction moves it by at least :data:`NAME_SHARE` of the largest move (in those
scaled units).

Stating components (``known``, metres) completes the solution: the fit is repeated with them held by a prior
:data:`KNOWN_WEIGHT` times stronger than the data's strongest information (the limit of a constrained fit;
their standard deviation is then reported as exactly 0).  The stated components must fix the open directions
and nothing else: a component the motion determines is refused (the data would be overruled), and so is one
more than the open directions need.  ``partial`` fixes them by a convention instead (the translation of ``X``
along the axis set to 0) and reports the open components without standard deviations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError

__all__ = ["COMPONENTS", "NULL_LEVEL", "NAME_SHARE", "KNOWN_WEIGHT", "OpenDirections", "parse_known",
           "open_directions", "check_known", "move_to_known", "gauge_components", "refusal", "describe_component",
           "component_value", "xy_information", "resolution_note"]

#: The 12 parameters of ``(X, Y)`` in calibrate's order (rotation [rad] then translation [m], each).
COMPONENTS = tuple(f"{t}.{c}" for t in "XY" for c in ("rx", "ry", "rz", "tx", "ty", "tz"))
#: An eigenvalue of the unit-diagonal information of the one-axis motion below this share of the largest is an open
#: direction.
NULL_LEVEL = 1e-5
#: A component is part of an open direction when the direction moves it by this share of its largest move.
NAME_SHARE = 0.1
#: The prior that holds a stated component is this many times the data's largest information.
KNOWN_WEIGHT = 1e6


@dataclass
class OpenDirections:
    """The directions of ``(X, Y)`` the motion leaves open.

    ``basis`` (12, k): the directions in calibrate's parameters (rotation [rad], translation [m]), each scaled to
    a largest translation move of 1 (or rotation, without one); ``eigenvalues`` (k,) their unit-diagonal
    information over the largest; ``components`` the names of the components they move (in :data:`COMPONENTS`
    order); ``lambda2`` the hand's axis scatter.
    """

    basis: np.ndarray
    eigenvalues: np.ndarray
    components: list
    lambda2: float
    next_eigenvalue: float = 1.0  # the smallest determined direction's, over the largest (the margin to the level)
    known: dict = field(default_factory=dict)  # index -> value [m] stated by the user
    convention: dict = field(default_factory=dict)  # index -> value fixed by --partial's convention
    held_rotations: list = field(default_factory=list)  # indices of rotations --partial holds where the fit left them

    @property
    def k(self) -> int:
        return int(self.basis.shape[1])

    def relation(self) -> str:
        """How the open components move together, in words (``X.tz + Y.tz`` is what the data determine...)."""
        if self.k == 1:
            v = self.basis[:, 0]
            idx = [COMPONENTS.index(c) for c in self.components]
            if len(idx) == 2 and np.isclose(abs(v[idx[0]]), abs(v[idx[1]]), rtol=0.05):
                a, b = (COMPONENTS[i] for i in idx)
                sign = "+" if v[idx[0]] * v[idx[1]] < 0 else "-"
                return f"only {a} {sign} {b} is determined"
            if len(idx) >= 2:
                move = ", ".join(f"{COMPONENTS[i]} by {v[i]:+.3g}" for i in idx)
                return f"moving {move} (per unit) fits the pairs equally"
            return "it fits the pairs equally at any value"
        return f"{self.k} directions fit the pairs equally"

    def to_dict(self) -> dict:
        return {
            "components": list(self.components),
            "directions": [{COMPONENTS[i]: float(v) for i, v in enumerate(col) if abs(v) > 0} for col in self.basis.T],
            "information_ratio": [float(v) for v in self.eigenvalues],
            "determined_information_ratio_min": float(self.next_eigenvalue),
            "lambda2": float(self.lambda2),
            "relation": self.relation(),
            "known": {COMPONENTS[i]: float(v) for i, v in self.known.items()},
            "convention": {COMPONENTS[i]: float(v) for i, v in self.convention.items()},
            "convention_rotations_as_fitted": [COMPONENTS[i] for i in self.held_rotations],
            "level": NULL_LEVEL,
        }


def parse_known(items) -> dict[int, float]:
    """``["X.tz=0.120", ...]`` (or a mapping) as ``{parameter index: value [m]}``; only translations."""
    if items is None:
        return {}
    pairs = list(items.items()) if isinstance(items, dict) else []
    if not isinstance(items, dict):
        for it in ([items] if isinstance(items, str) else items):
            name, sep, value = str(it).partition("=")
            if not sep:
                raise InputError(f"known: expected COMPONENT=VALUE (e.g. X.tz=0.120, metres), got {it!r}")
            pairs.append((name.strip(), value.strip()))
    out = {}
    for name, value in pairs:
        if name not in COMPONENTS:
            raise InputError(f"known: expected a component of {', '.join(COMPONENTS)}, got {name!r}")
        if name.split(".")[1].startswith("r"):
            raise InputError(f"known: {name}: only translations (X.tx .. Y.tz, metres) can be stated; a rotation "
                             "about the axis is left open only by a motion that never moves sideways: move the hand "
                             "sideways between stations")
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise InputError(f"known: {name}: expected a number of metres, got {value!r}") from None
        if not np.isfinite(v):
            raise InputError(f"known: {name}: expected a finite number of metres, got {value!r}")
        k = COMPONENTS.index(name)
        if k in out:
            raise InputError(f"known: {name} given twice")
        out[k] = v
    return out


def xy_information(G: np.ndarray, prior_information: np.ndarray | None) -> np.ndarray:
    """The information on ``(X, Y)`` (12, 12) of a whitened Jacobian ``G`` (n, 6, P), the rest marginalised."""
    Gf = G.reshape(-1, G.shape[2])
    H = Gf.T @ Gf
    if prior_information is not None:
        H = H + prior_information
    if H.shape[0] == 12:
        return H
    Hn = H[12:, 12:]
    return H[:12, :12] - H[:12, 12:] @ np.linalg.pinv(Hn) @ H[12:, :12]


def open_directions(H: np.ndarray, lambda2: float) -> OpenDirections | None:
    """The open directions of the information ``H`` (12, 12) on ``(X, Y)``; None when there is none."""
    d = np.sqrt(np.maximum(np.diag(H), 0.0))
    if not np.all(d > 0):  # a parameter without any information: every component is open
        d = np.where(d > 0, d, 1.0)
    Hs = H / np.outer(d, d)
    Hs = 0.5 * (Hs + Hs.T)
    w, V = np.linalg.eigh(Hs)
    top = max(float(w[-1]), 1e-300)
    sel = w < NULL_LEVEL * top
    if not sel.any():
        return None
    Vs = V[:, sel]
    # a component is moved by the open span when its projection on it is a tenth of the largest one's (one
    # direction: its coefficient against the largest coefficient)
    reach = np.sqrt(np.einsum("ik,ik->i", Vs, Vs))
    moved = reach >= NAME_SHARE * reach.max()
    B = np.where(moved[:, None], Vs, 0.0) / d[:, None] if Vs.shape[1] == 1 else Vs / d[:, None]  # rad, m
    for j in range(B.shape[1]):  # each direction scaled to a largest translation move of 1 (rotation without one)
        col = B[:, j]
        tr = np.r_[col[3:6], col[9:12]]
        B[:, j] = col / (tr[np.argmax(np.abs(tr))] if np.abs(tr).max() > 0 else col[np.argmax(np.abs(col))])
    names = [COMPONENTS[i] for i in np.flatnonzero(moved)]
    rest = w[~sel]
    return OpenDirections(B, w[sel] / top, names, float(lambda2), float(rest.min() / top) if rest.size else 0.0)


def describe_component(name: str, setup: str) -> str:
    """What a component is, in the setup's frames (``X.tz``: the camera's origin along the flange's z axis)."""
    which, c = name.split(".")
    axis = c[1]
    if which == "X":
        what = "the marker's" if setup == "eye_to_hand" else "the camera's"
        return (f"{what} origin along the flange's {axis} axis" if c[0] == "t"
                else f"{what} rotation about its own {axis} axis")
    what = "the camera's" if setup == "eye_to_hand" else "the target's"
    return (f"{what} origin along the robot base's {axis} axis" if c[0] == "t"
            else f"{what} rotation about its own {axis} axis")


def refusal(od: OpenDirections, setup: str, partial: bool = True) -> str:
    """The one-line refusal naming the open components and the options that complete the solution (``partial``:
    ``--partial`` among them)."""
    tr = [c for c in od.components if c.split(".")[1][0] == "t"]
    rot = [c for c in od.components if c.split(".")[1][0] == "r"]
    head = (f"the hand rotates about one axis only (axis scatter lambda2 = {od.lambda2:.3g}): "
            f"{', '.join(od.components)} {'is' if len(od.components) == 1 else 'are'} not determined "
            f"({od.relation()})")
    if rot:
        return (head + f"; the rotation{'s' if len(rot) > 1 else ''} {', '.join(rot)} cannot be stated: move the hand "
                "sideways between stations (or rotate about a second axis)" + ("; --partial gives the rest" if partial
                                                                               else ""))
    ex = " or ".join(f"--known {c}=METRES ({describe_component(c, setup)})" for c in tr[:2])
    need = "one of them" if od.k == 1 and len(tr) > 1 else f"{od.k} of them"
    return head + f"; state {need} with {ex}" + (", or --partial for the rest without it" if partial else "")


def component_value(X, Y, i: int) -> float:
    """The translation component ``i`` (an index of :data:`COMPONENTS`) of ``X`` or ``Y`` [m]."""
    T = np.asarray(X) if i < 6 else np.asarray(Y)
    return float(T[(i % 6) - 3, 3])


def check_known(od: OpenDirections | None, known: dict, X, Y, cov) -> None:
    """Raise :class:`InputError` unless the stated components fix exactly the open directions."""
    if not known:
        return
    names = ", ".join(COMPONENTS[i] for i in known)
    if od is None:
        i = next(iter(known))
        sd = np.sqrt(max(float(cov[i, i]), 0.0))
        raise InputError(f"known {names}: the motion determines every component of X and Y ({COMPONENTS[i]} = "
                         f"{component_value(X, Y, i):.4f} m +- {1000 * sd:.2g} mm); --known is for a motion that turns "
                         "about one axis only, and a stated value would overrule the data")
    determined = [COMPONENTS[i] for i in known if COMPONENTS[i] not in od.components]
    if determined:
        raise InputError(f"known {', '.join(determined)}: determined by the motion (the open components are "
                         f"{', '.join(od.components)}); a stated value would overrule the data; state only open "
                         "components")
    idx = list(known)
    sv = np.linalg.svd(od.basis[idx, :], compute_uv=False)
    if len(idx) > od.k or (len(idx) == od.k and not sv.min() > NAME_SHARE * sv.max()):
        raise InputError(f"known {names}: {len(idx)} stated where the motion leaves {od.k} direction"
                         f"{'s' if od.k > 1 else ''} open ({od.relation()}): the data determine the rest, and "
                         "stating more would overrule them; state one component per open direction")
    if len(idx) < od.k:
        raise InputError(f"known {names}: the motion leaves {od.k} directions open ({', '.join(od.components)}); "
                         f"state {od.k} components, or --partial")


def move_to_known(X, Y, od: OpenDirections, values: dict):
    """``X``, ``Y`` moved along the open directions so that the components ``values`` ({index: value}) hold."""
    idx = list(values)
    cur = np.r_[np.asarray(X)[:3, 3], np.asarray(Y)[:3, 3]]
    cur12 = np.r_[np.zeros(3), cur[:3], np.zeros(3), cur[3:]]
    delta = np.array([values[i] - cur12[i] for i in idx])
    c, *_ = np.linalg.lstsq(od.basis[idx, :], delta, rcond=None)
    p = od.basis @ c
    X2 = se3.retract(X, p[:6])
    Y2 = se3.retract(Y, p[6:])
    for i, v in values.items():  # exactly the stated values
        (X2 if i < 6 else Y2)[(i % 6) - 3, 3] = v
    return X2, Y2


def gauge_components(od: OpenDirections) -> list:
    """``--partial``'s convention: the components held, one per open direction: translations of ``X`` first, then
    of ``Y``, then rotations, each group by the size of its move."""
    groups = [(3, 4, 5), (9, 10, 11), (0, 1, 2, 6, 7, 8)]
    cand = [i for g in groups for i in sorted(g, key=lambda i: -float(np.abs(od.basis[i]).max()))
            if COMPONENTS[i] in od.components]
    chosen, tol = [], NAME_SHARE * float(np.abs(od.basis).max())
    for i in cand:
        if np.linalg.matrix_rank(od.basis[chosen + [i], :], tol=tol) == len(chosen) + 1:
            chosen.append(i)
        if len(chosen) == od.k:
            break
    return chosen


def resolution_note(od: OpenDirections, setup: str) -> str:
    """The note saying how the open components were completed: stated, or set by convention."""
    head = (f"the hand rotates about one axis only (axis scatter lambda2 = {od.lambda2:.3g}): "
            f"{', '.join(od.components)} not determined by the motion ({od.relation()})")
    if od.known:
        said = ", ".join(f"{COMPONENTS[i]} = {v:.6g} m ({describe_component(COMPONENTS[i], setup)})"
                         for i, v in od.known.items())
        return head + f"; {said} as stated (--known, standard deviation 0); the rest of X and Y from the data"
    said = ", ".join([f"{COMPONENTS[i]} = {v:g} m" for i, v in od.convention.items()]
                     + [f"{COMPONENTS[i]} as the first fit left it" for i in od.held_rotations])
    return (head + f"; --partial: set by the convention {said}, so the values of {', '.join(od.components)} are "
            "not measurements and have no standard deviation")
