"""The solver registry: readable names -> one uniform call, used by the benchmark and the CLI.

Every entry is a :class:`SolverSpec`.  Its ``run`` takes

* for ``kind == "axxb"``: relative motions ``run(A, B)`` of shape ``(N, 4, 4)``
  (consecutive keyframe motions in the benchmark protocol);
* for ``kind == "axyb"``: absolute pose pairs ``run(A_abs, B_abs)``;

and returns a :class:`SolverResult`.  The names are those of the results and
leaderboard tables.  An unknown name raises
:class:`~kinhec.errors.UnknownNameError`, which lists the valid ones; nothing
falls back silently.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

from kinhec.errors import InputError, UnknownNameError
from kinhec.solvers import _common as c
from kinhec.solvers import axxb_andreff as _andreff_mod
from kinhec.solvers import axxb_daniilidis as _daniilidis_mod
from kinhec.solvers import axxb_horaud_dornaika as _horaud_mod
from kinhec.solvers import axyb_li_kronecker as _li_mod
from kinhec.solvers import axxb_park_martin as _park_mod
from kinhec.solvers import ransac as _ransac_mod
from kinhec.solvers import refine as _refine_mod
from kinhec.solvers import axyb_shah as _shah_mod
from kinhec.solvers import axxb_tsai_lenz as _tsai_mod

__all__ = ["SolverResult", "SolverSpec", "SOLVERS", "PIXEL_SOLVERS", "KINDS", "get_solver", "solver_names", "ransac_seed"]

KINDS = ("axxb", "axyb")


@dataclass(frozen=True)
class SolverResult:
    """Uniform output of a registry entry.

    Attributes
    ----------
    X : ndarray, shape (4, 4)
        Hand-eye transform (``T_ee_cam`` eye-in-hand, ``T_ee_marker`` eye-to-hand) [m].
    Y : ndarray, shape (4, 4) or None
        Robot-world transform (``T_base_world`` / ``T_base_cam``), ``A X = Y B`` solvers only.
    scale : float or None
        Camera-translation scale ``s`` (camera = ``s`` x metric), ``andreff_scale`` only.
    n_inliers : int or None
        Motions kept by RANSAC, ``ransac_park_martin`` only.
    """

    X: np.ndarray
    Y: np.ndarray | None = None
    scale: float | None = None
    n_inliers: int | None = None


@dataclass(frozen=True)
class SolverSpec:
    """One registry entry.

    Attributes
    ----------
    name : str
        Name used in results and leaderboards.
    kind : {"axxb", "axyb"}
        ``A X = X B`` on relative motions, or ``A X = Y B`` on absolute pose pairs.
    run : callable
        ``run(A, B) -> SolverResult`` (validates its input).
    returns : str
        Which fields of the result are filled, e.g. ``"X"``, ``"X, Y"``, ``"X, scale"``.
    citation : str
        Reference(s) of the method.
    description : str
        One line on what the entry does.
    """

    name: str
    kind: str
    run: Callable[[np.ndarray, np.ndarray], SolverResult]
    returns: str
    citation: str
    description: str


def ransac_seed(A: np.ndarray, B: np.ndarray) -> int:
    """Deterministic seed of the registry's RANSAC: CRC-32 of the (float64) input bytes.

    The same data always give the same samples, independently of call order.
    """
    return zlib.crc32(B.tobytes(), zlib.crc32(A.tobytes()))


def _axxb(kernel):
    def run(A, B):
        A, B = c.check_motions(A, B)
        return SolverResult(X=kernel(A, B))

    return run


def _run_andreff_scale(A, B):
    A, B = c.check_motions(A, B)
    X, s = _andreff_mod._andreff(A, B, unknown_scale=True)
    return SolverResult(X=X, scale=float(s))


def _run_park_martin_lm(A, B):
    A, B = c.check_motions(A, B)
    X0 = _park_mod._park_martin(A, B)
    return SolverResult(X=_refine_mod._refine_lm(A, B, X0))


def _run_ransac(A, B):
    A, B = c.check_motions(A, B, min_motions=3)
    rng = np.random.default_rng(ransac_seed(A, B))
    res = _ransac_mod.ransac_axxb(A, B, rng)
    return SolverResult(X=res.X, n_inliers=res.n_inliers)


def _run_shah(A, B):
    A, B = c.check_pairs(A, B)
    X, Y = _shah_mod._shah(A, B)
    return SolverResult(X=X, Y=Y)


def _run_li(A, B):
    A, B = c.check_pairs(A, B)
    X, Y = _li_mod._li_kronecker(A, B)
    return SolverResult(X=X, Y=Y)


def _run_shah_lm(A, B):
    A, B = c.check_pairs(A, B)
    X0, Y0 = _shah_mod._shah(A, B)
    X, Y = _refine_mod._refine_lm_axyb(A, B, X0, Y0)
    return SolverResult(X=X, Y=Y)


_LM_CITE = _refine_mod.CITATION

#: All baselines by name, in the order of the leaderboard.
SOLVERS: dict[str, SolverSpec] = {
    s.name: s
    for s in (
        SolverSpec("tsai_lenz", "axxb", _axxb(_tsai_mod._tsai_lenz), "X", _tsai_mod.CITATION,
                   "modified Rodrigues vectors, then translation by least squares"),
        SolverSpec("park_martin", "axxb", _axxb(_park_mod._park_martin), "X", _park_mod.CITATION,
                   "Procrustes fit of the rotation logarithms, then translation by least squares"),
        SolverSpec("horaud_dornaika", "axxb", _axxb(_horaud_mod._horaud_dornaika), "X", _horaud_mod.CITATION,
                   "smallest eigenvector of the quaternion form, then translation by least squares"),
        SolverSpec("daniilidis", "axxb", _axxb(_daniilidis_mod._daniilidis), "X", _daniilidis_mod.CITATION,
                   "dual quaternions: rotation and translation from one SVD"),
        SolverSpec("andreff", "axxb", _axxb(_andreff_mod._andreff), "X", _andreff_mod.CITATION,
                   "linear Kronecker system, then translation with the known scale"),
        SolverSpec("andreff_scale", "axxb", _run_andreff_scale, "X, scale", _andreff_mod.CITATION,
                   "linear Kronecker system with an unknown scale of the camera translations"),
        SolverSpec("park_martin+lm", "axxb", _run_park_martin_lm, "X",
                   _park_mod.CITATION + " Refinement: " + _LM_CITE,
                   "park_martin, then Levenberg-Marquardt on SE(3) (refine_lm)"),
        SolverSpec("ransac_park_martin", "axxb", _run_ransac, "X, n_inliers", _ransac_mod.CITATION,
                   "RANSAC over two-motion Park-Martin samples, refit on the inliers (seed from the data)"),
        SolverSpec("shah", "axyb", _run_shah, "X, Y", _shah_mod.CITATION,
                   "rotations from the SVD of a sum of Kronecker products, then translations"),
        SolverSpec("li_kronecker", "axyb", _run_li, "X, Y", _li_mod.CITATION,
                   "rotations and translations from one Kronecker linear system"),
        SolverSpec("shah+lm", "axyb", _run_shah_lm, "X, Y",
                   _shah_mod.CITATION + " Refinement: " + _LM_CITE,
                   "shah, then Levenberg-Marquardt on SE(3) x SE(3) (refine_lm_axyb)"),
    )
}


def _run_reprojection(T_base_ee, views):
    from kinhec.solvers import reprojection as _reprojection_mod

    res = _reprojection_mod.solve_pixel_views(T_base_ee, views)
    return SolverResult(X=res.X, Y=res.Y)


#: Solvers on pixel observations (the target corners of the pnp track):
#: ``run(T_base_ee, views)`` with ``T_base_ee`` (N, 4, 4) and ``views`` a
#: :class:`kinhec.solvers.reprojection.PixelViews`.  Kept apart from
#: :data:`SOLVERS`, whose entries take poses, until the benchmark feeds pixels.
PIXEL_SOLVERS: dict[str, SolverSpec] = {
    "reprojection": SolverSpec(
        "reprojection", "pixels", _run_reprojection, "X, Y",
        "Zhang, IEEE TPAMI 22(11), 2000; Shah, J. Mechanisms Robotics 5(3), 2013; "
        "Tabb & Ahmad Yousef, Machine Vision and Applications 28, 2017",
        "intrinsics by Zhang (or known), X, Y by shah, then joint refinement on the pixel residuals",
    ),
}


def solver_names(kind: str | None = None) -> list[str]:
    """Registry names, all or those of one ``kind`` (``"axxb"`` or ``"axyb"``), in leaderboard order."""
    if kind is None:
        return list(SOLVERS)
    if kind not in KINDS:
        raise InputError(f"kind: expected one of {', '.join(KINDS)} or None, got {kind!r}")
    return [n for n, s in SOLVERS.items() if s.kind == kind]


def get_solver(name: str) -> SolverSpec:
    """The registry entry called ``name``; raises :class:`UnknownNameError` listing the valid names."""
    try:
        return SOLVERS[name]
    except (KeyError, TypeError):
        raise UnknownNameError("solver", name, SOLVERS) from None
