"""The solver registry: readable names -> one uniform call, used by the benchmark and the CLI.

Every entry is a :class:`SolverSpec`.  Its ``run`` takes

* for ``kind == "axxb"``: relative motions ``run(A, B)`` of shape ``(N, 4, 4)``
  (consecutive keyframe motions in the benchmark protocol);
* for ``kind == "axyb"``: absolute pose pairs ``run(A_abs, B_abs)``;

and returns a :class:`SolverResult`.  The names are those of the results and
leaderboard tables.  An unknown name raises
:class:`~kinhec.util.errors.UnknownNameError`, which lists the valid ones; nothing
falls back silently.

Plug-in solvers
---------------
:func:`register` adds a user's solver beside the baselines (:data:`BASELINES`).
A module that calls it is imported by ``kinhec benchmark DATA --solver-module
mypkg.mysolvers`` (:func:`load_plugins`), or found through the entry-point
group :data:`ENTRY_POINT_GROUP` of an installed distribution::

    [project.entry-points."kinhec.solvers"]
    mysolvers = "mypkg.mysolvers"

An entry point names a module (importing it registers its solvers) or a
function without arguments (called once; it calls :func:`register`).  The
``run`` of a plug-in may return a :class:`SolverResult`, a bare ``X`` (4x4
array) or a tuple (``(X, Y)`` for ``"axyb"``, ``(X,)`` or ``(X, scale)`` for
``"axxb"``); :func:`normalise_result` turns that into a :class:`SolverResult`
and raises :class:`SolverOutputError` on anything else, which the benchmark
records as an ``ok = False`` row with the reason.
"""

from __future__ import annotations

import importlib
import importlib.util
import numbers
import re
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np

from kinhec.util.errors import InputError, SolverOutputError, UnknownNameError
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
# the module by its path: the package attribute kinhec.solvers.he_ml is the function
from kinhec.solvers.he_ml import CITATION as _HE_ML_CITATION
from kinhec.solvers.he_ml import he_ml as _he_ml

__all__ = [
    "SolverResult",
    "SolverSpec",
    "SOLVERS",
    "PIXEL_SOLVERS",
    "evaluated_names",
    "evaluated_spec",
    "uses_pixels",
    "BASELINES",
    "KINDS",
    "ENTRY_POINT_GROUP",
    "get_solver",
    "solver_names",
    "ransac_seed",
    "register",
    "unregister",
    "is_plugin",
    "load_plugins",
    "normalise_result",
]

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
    plugin : bool
        True for a solver added by :func:`register` (not a kinhec baseline).
    module : str or None
        Module that registered a plug-in (imported again by worker processes).
    run_pixels : callable or None
        ``run_pixels(A, B, views) -> SolverResult``: the same solver given the
        target's pixels behind ``B`` as well (a
        :class:`kinhec.solvers.reprojection.PixelViews`, one view per pair).
        The benchmark calls it instead of ``run`` where it can rebuild a
        sequence's pixels; ``he_ml`` only.
    """

    name: str
    kind: str
    run: Callable[[np.ndarray, np.ndarray], SolverResult]
    returns: str
    citation: str
    description: str
    plugin: bool = False
    module: str | None = None
    run_pixels: Callable | None = None


def ransac_seed(A: np.ndarray, B: np.ndarray) -> int:
    """Seed of the registry's RANSAC: the constant :data:`kinhec.solvers.ransac.RANSAC_SEED`.

    It used to be a CRC-32 of the input bytes, which made the samples (and the
    result) jump when the input changed in its last bit, as it does between
    BLAS builds and CPUs; a constant keeps equal data on equal samples and
    nearly equal data on the same samples.  ``A`` and ``B`` are not used.
    """
    return _ransac_mod.RANSAC_SEED


def _axxb(kernel):
    def run(A, B):
        A, B = c.check_motions(A, B)
        return SolverResult(X=kernel(A, B))

    return run


def _run_andreff_scale(A, B):
    # the published toolkit's form (1/s with the camera translations as regressor; see axxb_andreff)
    A, B = c.check_motions(A, B)
    X, s = _andreff_mod.andreff_kernel(A, B, unknown_scale=True, scale_regressor="camera")
    return SolverResult(X=X, scale=float(s))


def _run_park_martin_lm(A, B):
    A, B = c.check_motions(A, B)
    X0 = _park_mod.park_martin_kernel(A, B)
    return SolverResult(X=_refine_mod.refine_twist(A, B, X0)[0])


#: How the registry's ``ransac_park_martin`` calls :func:`kinhec.solvers.ransac_axxb`: an estimate on every
#: sequence, as in the published protocol (every motion an inlier, with a warning, when no consensus forms).
RANSAC_SETTINGS = {"on_no_consensus": "all"}


def _run_ransac(A, B):
    A, B = c.check_motions(A, B)
    rng = np.random.default_rng(ransac_seed(A, B))
    res = _ransac_mod.ransac_axxb(A, B, rng, **RANSAC_SETTINGS)
    return SolverResult(X=res.X, n_inliers=res.n_inliers)


def _run_shah(A, B):
    A, B = c.check_pairs(A, B)
    X, Y = _shah_mod.shah_kernel(A, B)
    return SolverResult(X=X, Y=Y)


def _run_li(A, B):
    A, B = c.check_pairs(A, B)
    X, Y = _li_mod.li_kronecker_kernel(A, B)
    return SolverResult(X=X, Y=Y)


def _run_shah_lm(A, B):
    A, B = c.check_pairs(A, B)
    X0, Y0 = _shah_mod.shah_kernel(A, B)
    X, Y = _refine_mod.refine_twist(A, B, X0, Y0)
    return SolverResult(X=X, Y=Y)


def _run_he_ml(A, B):
    res = _he_ml(A, B)
    return SolverResult(X=res.X, Y=res.Y, scale=res.scale, n_inliers=res.n_inliers)


def _run_he_ml_pixels(A, B, views):
    res = _he_ml(A, B, pixels=views)
    return SolverResult(X=res.X, Y=res.Y, scale=res.scale, n_inliers=res.n_inliers)


_LM_CITE = _refine_mod.CITATION

#: All baselines by name, in the order of the leaderboard.
SOLVERS: dict[str, SolverSpec] = {
    s.name: s
    for s in (
        SolverSpec("tsai_lenz", "axxb", _axxb(_tsai_mod.tsai_lenz_kernel), "X", _tsai_mod.CITATION,
                   "modified Rodrigues vectors, then translation by least squares"),
        SolverSpec("park_martin", "axxb", _axxb(_park_mod.park_martin_kernel), "X", _park_mod.CITATION,
                   "Procrustes fit of the rotation logarithms, then translation by least squares"),
        SolverSpec("horaud_dornaika", "axxb", _axxb(_horaud_mod.horaud_dornaika_kernel), "X", _horaud_mod.CITATION,
                   "smallest eigenvector of the quaternion form, then translation by least squares"),
        SolverSpec("daniilidis", "axxb", _axxb(_daniilidis_mod.daniilidis_kernel), "X", _daniilidis_mod.CITATION,
                   "dual quaternions: rotation and translation from one SVD"),
        SolverSpec("andreff", "axxb", _axxb(_andreff_mod.andreff_kernel), "X", _andreff_mod.CITATION,
                   "linear Kronecker system, then translation with the known scale"),
        SolverSpec("andreff_scale", "axxb", _run_andreff_scale, "X, scale", _andreff_mod.CITATION,
                   "linear Kronecker system, then the translation and 1/s with the camera translations as regressor "
                   "(the published form; andreff(..., unknown_scale=True) is the form unbiased by camera noise)"),
        SolverSpec("park_martin+lm", "axxb", _run_park_martin_lm, "X",
                   _park_mod.CITATION + " Refinement: " + _LM_CITE,
                   "park_martin, then unweighted Levenberg-Marquardt on the SE(3) logarithm of inv(X B) A X (refine_lm)"),
        SolverSpec("ransac_park_martin", "axxb", _run_ransac, "X, n_inliers", _ransac_mod.CITATION,
                   "RANSAC over two-motion Park-Martin samples, refit and polished on the inliers (fixed seed, adaptive thresholds; every motion an inlier when no consensus forms)"),
        SolverSpec("shah", "axyb", _run_shah, "X, Y", _shah_mod.CITATION,
                   "rotations from the SVD of a sum of Kronecker products, then translations"),
        SolverSpec("li_kronecker", "axyb", _run_li, "X, Y", _li_mod.CITATION,
                   "rotations and translations from one Kronecker linear system"),
        SolverSpec("shah+lm", "axyb", _run_shah_lm, "X, Y",
                   _shah_mod.CITATION + " Refinement: " + _LM_CITE,
                   "shah, then unweighted Levenberg-Marquardt on the SE(3) logarithm of inv(Y B) A X (refine_lm_axyb)"),
        SolverSpec("he_ml", "axyb", _run_he_ml, "X, Y, scale, n_inliers", _HE_ML_CITATION,
                   "maximum likelihood under the anisotropic noise model: robust minimal-set start, variance "
                   "components, chi-square gate, planar-flip repair, Student-t weights, monocular scale; on the "
                   "target's pixels with the robot errors marginalised where they are given",
                   run_pixels=_run_he_ml_pixels),
    )
}


def _run_reprojection(T_base_ee, views):
    from kinhec.solvers import reprojection as _reprojection_mod  # scipy.sparse: kept off `kinhec info`'s start

    res = _reprojection_mod.solve_pixel_views(T_base_ee, views)
    return SolverResult(X=res.X, Y=res.Y)


#: Solvers on pixel observations (the target corners of a ``pnp`` sequence), kind ``"pixels"``:
#: ``run(T_base_ee, views)`` with ``T_base_ee`` (N, 4, 4) and ``views`` a
#: :class:`kinhec.solvers.reprojection.PixelViews`.  Kept apart from
#: :data:`SOLVERS`, whose entries take poses (the calibration commands and
#: :func:`solver_names` list those only); the benchmark runs both
#: (:func:`evaluated_names`), these on the sequences whose pixels it can rebuild.
PIXEL_SOLVERS: dict[str, SolverSpec] = {
    "reprojection": SolverSpec(
        "reprojection", "pixels", _run_reprojection, "X, Y",
        "Zhang, IEEE TPAMI 22(11), 2000; Shah, J. Mechanisms Robotics 5(3), 2013; "
        "Tabb & Ahmad Yousef, Machine Vision and Applications 28, 2017",
        "intrinsics by Zhang (or known), X, Y by shah, then joint refinement on the pixel residuals",
    ),
}


def evaluated_names() -> list[str]:
    """Every solver the benchmark knows, in leaderboard order.

    The pose baselines (:data:`BASELINES`), then the pixel solvers
    (:data:`PIXEL_SOLVERS`), then the plug-ins in order of registration.
    """
    return [*BASELINES, *PIXEL_SOLVERS, *(n for n in SOLVERS if n not in BASELINES)]


def evaluated_spec(name: str) -> SolverSpec:
    """The entry of a name of :func:`evaluated_names` (pose solvers and plug-ins first, then pixel solvers)."""
    spec = SOLVERS.get(name) or PIXEL_SOLVERS.get(name)
    if spec is None:
        raise UnknownNameError("solver", name, evaluated_names())
    return spec


def uses_pixels(name: str) -> bool:
    """True for a solver the benchmark gives a sequence's pixels (a pixel solver, or one with ``run_pixels``)."""
    spec = evaluated_spec(name)
    return spec.kind == "pixels" or spec.run_pixels is not None


#: Names of the kinhec baselines, in leaderboard order; every other name in :data:`SOLVERS` is a plug-in.
BASELINES: tuple[str, ...] = tuple(SOLVERS)

#: Entry-point group scanned by :func:`load_plugins` for plug-in solvers.
ENTRY_POINT_GROUP = "kinhec.solvers"

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


def _shape(value) -> str:
    shape = getattr(value, "shape", None)
    return f"{type(value).__name__} of shape {tuple(shape)}" if shape is not None else type(value).__name__


def _pose(value, name: str, what: str) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        a = None
    if a is None or a.shape != (4, 4):
        raise SolverOutputError(f"solver {name!r}: expected {what} as a 4x4 array, got {_shape(value)}")
    return a


def normalise_result(out, kind: str, name: str = "?") -> SolverResult:
    """The :class:`SolverResult` of what a solver's ``run`` returned.

    Parameters
    ----------
    out : SolverResult, array_like or tuple
        ``SolverResult`` (kept as it is); for ``kind == "axxb"`` a 4x4 array
        ``X`` (``T_ee_cam`` / ``T_ee_marker`` [m]), ``(X,)`` or ``(X, scale)``;
        for ``kind == "axyb"`` the tuple ``(X, Y)``.
    kind : {"axxb", "axyb"}
    name : str
        Solver name, for the message.

    Raises
    ------
    SolverOutputError
        For anything else (``None``, a string, a dict, a 3x3 matrix, a
        bare array from an ``"axyb"`` solver, ...); the message names the
        solver and says what came.
    """
    if isinstance(out, SolverResult):
        return out
    if isinstance(out, tuple):
        if kind == "axyb":
            if len(out) != 2:
                raise SolverOutputError(f"solver {name!r} (axyb): expected the tuple (X, Y), got a tuple of {len(out)}")
            return SolverResult(X=_pose(out[0], name, "X"), Y=_pose(out[1], name, "Y"))
        if len(out) == 1:
            return SolverResult(X=_pose(out[0], name, "X"))
        if len(out) == 2:
            s = out[1]
            if isinstance(s, bool) or not isinstance(s, numbers.Real):
                raise SolverOutputError(f"solver {name!r} (axxb): expected (X, scale) with a real scale, "
                                        f"got a scale of type {type(s).__name__}")  # fmt: skip
            return SolverResult(X=_pose(out[0], name, "X"), scale=float(s))
        raise SolverOutputError(f"solver {name!r} (axxb): expected X, (X,) or (X, scale), got a tuple of {len(out)}")
    if kind == "axyb":
        raise SolverOutputError(f"solver {name!r} (axyb): expected the tuple (X, Y) or a SolverResult, got {_shape(out)}")
    if out is None or isinstance(out, (str, bytes, dict)):
        raise SolverOutputError(f"solver {name!r} (axxb): expected a 4x4 array X or a SolverResult, got {_shape(out)}")
    return SolverResult(X=_pose(out, name, "X"))


def _plugin_run(run, kind: str, name: str):
    def call(A, B):
        return normalise_result(run(A, B), kind, name)

    call.__wrapped__ = run
    return call


def register(name: str, kind: str, run: Callable | None = None, *, citation: str = "", description: str = "",
             returns: str | None = None, replace: bool = False):  # fmt: skip
    """Add a plug-in solver to :data:`SOLVERS`, beside the baselines.

    Parameters
    ----------
    name : str
        Name in results and leaderboards (letters, digits and ``_ . + -``;
        not a baseline name).
    kind : {"axxb", "axyb"}
        ``"axxb"``: ``run(A, B)`` receives the relative motions
        ``A = inv(A_i) A_j`` (flange), ``B = inv(B_i) B_j`` (camera), shape
        ``(N, 4, 4)`` [m], and returns ``X``.  ``"axyb"``: ``run(A, B)``
        receives the absolute pairs ``A_i = T_base_ee`` and ``B_i``
        (``inv(T_cam_target)`` eye-in-hand, ``T_cam_target`` eye-to-hand) and
        returns ``(X, Y)``.
    run : callable, optional
        The solver.  It may return a :class:`SolverResult`, an array or a
        tuple (see :func:`normalise_result`).  Without ``run``, ``register``
        returns a decorator.
    citation, description : str
        Shown in ``protocol.json`` and ``kinhec info``.
    returns : str, optional
        Filled fields (default ``"X"`` or ``"X, Y"``).
    replace : bool
        Replace a plug-in registered under the same name by another function
        (registering the same function again is always accepted).

    Returns
    -------
    SolverSpec or callable
        The new entry (or the decorator).

    Raises
    ------
    InputError
        A bad or baseline name, a name taken by another plug-in (without
        ``replace``), or a ``run`` that is not callable.
    UnknownNameError
        A ``kind`` other than ``"axxb"`` / ``"axyb"``.
    """
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise InputError(f"name: expected a solver name of letters, digits and _ . + -, got {name!r}")
    if name in BASELINES or name in PIXEL_SOLVERS:
        raise InputError(f"name: {name!r} is a kinhec baseline; expected a new name for a plug-in solver")
    if kind not in KINDS:
        raise UnknownNameError("solver kind", kind, KINDS)
    if run is None:

        def decorate(fn):
            register(name, kind, fn, citation=citation, description=description, returns=returns, replace=replace)
            return fn

        return decorate
    if not callable(run):
        raise InputError(f"run: expected a callable run(A, B), got {type(run).__name__}")
    old = SOLVERS.get(name)
    if old is not None and not replace:
        same = getattr(old.run, "__wrapped__", None)
        if not (same is run or (getattr(same, "__module__", 1) == getattr(run, "__module__", 2)
                                and getattr(same, "__qualname__", 1) == getattr(run, "__qualname__", 2))):
            raise InputError(f"name: solver {name!r} is already registered by {old.module}; "
                             "expected a new name (or replace=True)")  # fmt: skip
    spec = SolverSpec(
        name, kind, _plugin_run(run, kind, name), returns or ("X, Y" if kind == "axyb" else "X"),
        str(citation), str(description or "plug-in solver"), plugin=True, module=getattr(run, "__module__", None),
    )  # fmt: skip
    SOLVERS[name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove a plug-in solver (a baseline cannot be removed)."""
    if name in BASELINES or name in PIXEL_SOLVERS:
        raise InputError(f"name: {name!r} is a kinhec baseline; only plug-in solvers can be removed")
    if name not in SOLVERS:
        raise UnknownNameError("plug-in solver", name, [n for n in SOLVERS if n not in BASELINES])
    del SOLVERS[name]


def is_plugin(name: str) -> bool:
    """True for a solver name that is not kinhec's (registered or only seen in a results table).

    kinhec's own solvers are the pose baselines and the pixel solvers (:data:`PIXEL_SOLVERS`).
    """
    return name not in BASELINES and name not in PIXEL_SOLVERS


_LOADED_ENTRY_POINTS: set = set()


def _import_solver_module(ref: str):
    if not isinstance(ref, str) or not ref.strip():
        raise InputError(f"solver module: expected a module name (mypkg.mysolvers) or a .py file, got {ref!r}")
    import os
    from pathlib import Path

    if ref.endswith(".py") or os.sep in ref:
        path = Path(ref).resolve()
        if not path.is_file():
            raise InputError(f"solver module {ref}: expected an existing .py file, got no such file")
        mod_name = "kinhec_plugin_" + re.sub(r"\W", "_", path.stem)
        if mod_name in sys.modules:
            return sys.modules[mod_name]
        spec = importlib.util.spec_from_file_location(mod_name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[mod_name]
            raise
        return mod
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:  # as `python -m` does: modules of the working folder
        sys.path.append(cwd)
    try:
        return importlib.import_module(ref)
    except ImportError as exc:
        raise InputError(f"solver module {ref!r}: expected an importable module, got {type(exc).__name__}: {exc}") from None


def load_plugins(modules=(), *, entry_points: bool = True) -> list[str]:
    """Import solver modules and the ``kinhec.solvers`` entry points; return the plug-in names registered now.

    Parameters
    ----------
    modules : iterable of str
        Module names (``mypkg.mysolvers``, found on ``sys.path`` or in the
        working folder) or paths of ``.py`` files; importing one runs its
        :func:`register` calls.
    entry_points : bool
        Also load the entry points of group :data:`ENTRY_POINT_GROUP` (each
        once per process): a module is imported, a function is called.

    Raises
    ------
    InputError
        A module that cannot be imported, or an entry point that fails to
        load (the message names it and its distribution).
    """
    if isinstance(modules, str):
        modules = [modules]
    before = set(SOLVERS)
    for ref in modules:
        _import_solver_module(ref)
    if entry_points:
        from importlib import metadata

        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            key = (ep.name, ep.value)
            if key in _LOADED_ENTRY_POINTS:
                continue
            _LOADED_ENTRY_POINTS.add(key)
            dist = getattr(getattr(ep, "dist", None), "name", None) or "?"
            try:
                obj = ep.load()
                if callable(obj) and not isinstance(obj, type(sys)):
                    obj()
            except Exception as exc:
                raise InputError(
                    f"entry point {ep.name} = {ep.value} (group {ENTRY_POINT_GROUP}, distribution {dist}): expected "
                    f"a module or function registering solvers, got {type(exc).__name__}: {exc}"
                ) from None
    return [n for n in SOLVERS if n not in before]


def solver_names(kind: str | None = None) -> list[str]:
    """Registry names, all or those of one ``kind`` (``"axxb"`` or ``"axyb"``), in leaderboard order."""
    if kind is None:
        return list(SOLVERS)
    if kind not in KINDS:
        raise InputError(f"kind: expected one of {', '.join(KINDS)} or None, got {kind!r}")
    return [n for n, s in SOLVERS.items() if s.kind == kind]


def get_solver(name: str) -> SolverSpec:
    """The registry entry called ``name``; raises :class:`UnknownNameError` listing the valid names.

    Plug-ins count once registered (:func:`register`, :func:`load_plugins`).
    """
    try:
        return SOLVERS[name]
    except (KeyError, TypeError):
        raise UnknownNameError("solver", name, SOLVERS) from None
