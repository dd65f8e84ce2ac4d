"""Optional third-party packages: imported where they are used, with one clear line when one is missing.

kinhec's numeric core (:mod:`kinhec.solvers`, :mod:`kinhec.calibrate` from pose files, :mod:`kinhec.geometry`)
needs numpy and scipy only; every other package belongs to an extra of ``pyproject.toml``
(:data:`EXTRA_OF`).  ``pip install .`` installs all of them but ``report``'s; a light install (``pip install
--no-deps .`` beside numpy and scipy) has none.  :func:`require` imports a module of such a package or raises
:class:`MissingDependencyError`, whose message names the package, what needs it and the extra that installs it::

    figure = require("matplotlib.figure", "drawing a figure")  # matplotlib is in the extra "viz"

This module imports only the standard library.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from kinhec.util.errors import KinhecError

__all__ = ["EXTRA_OF", "MissingDependencyError", "require", "missing_dependency", "install_hint"]

#: The extra of ``pyproject.toml`` that installs each optional top-level package (its import name).
#: ``data``, ``cli`` and ``viz`` are in the base dependencies too; ``report``, ``cluster``, ``vision``, ``certify``,
#: ``ros`` and ``robots`` are installed only when asked for (``pip install "kinhec[vision]"``).
EXTRA_OF = {
    "plotly": "report",
    "deflate": "report",
    "matplotlib": "viz",
    "mpl_toolkits": "viz",
    "pandas": "data",
    "pyarrow": "data",
    "yaml": "data",
    "jsonschema": "data",
    "threadpoolctl": "data",
    "click": "cli",
    "rich": "cli",
    "dask": "cluster",
    "cv2": "vision",
    "scs": "certify",
    "clarabel": "certify",
    "rosbags": "ros",
    "yourdfpy": "robots",
}

#: The distribution name of a package whose import name differs.
_DISTRIBUTION = {"yaml": "pyyaml", "mpl_toolkits": "matplotlib", "cv2": "opencv-python-headless"}


class MissingDependencyError(KinhecError, ImportError):
    """An optional package that a command or function needs is not installed (or cannot be imported)."""


def install_hint(package: str) -> str:
    """``pip install "kinhec[EXTRA]"`` for a package of an extra, ``pip install PACKAGE`` otherwise."""
    top = package.split(".")[0]
    extra = EXTRA_OF.get(top)
    return f'pip install "kinhec[{extra}]"' if extra else f"pip install {_DISTRIBUTION.get(top, top)}"


def _message(top: str, purpose: str | None, exc: ImportError) -> str:
    dist = _DISTRIBUTION.get(top, top)
    missing = (exc.name or "").split(".")[0]
    # not installed, or there but one of its own dependencies is not (then both are named)
    what = "is not installed" if missing in ("", top) else f"cannot be imported ({exc})"
    if purpose:
        return f"{purpose} needs {dist}, which {what}: {install_hint(top)}"
    return f"{dist} {what}: {install_hint(top)}"


def require(module: str, purpose: str | None = None) -> ModuleType:
    """Import ``module`` (e.g. ``"matplotlib.figure"``) and return it.

    Raises
    ------
    MissingDependencyError
        The package is not installed or cannot be imported; the message names it, ``purpose`` (what needs it,
        e.g. ``"kinhec visualize"``) and the ``pip install`` that brings it (its extra, :data:`EXTRA_OF`).
    """
    try:
        return importlib.import_module(module)
    except MissingDependencyError:
        raise
    except ImportError as exc:
        raise MissingDependencyError(_message(module.split(".")[0], purpose, exc), name=module) from None


def missing_dependency(exc: BaseException, purpose: str | None = None) -> MissingDependencyError | None:
    """The :class:`MissingDependencyError` for an ``ImportError`` of an optional package (:data:`EXTRA_OF`).

    ``None`` for any other exception, and for a missing module that is not one of the optional packages
    (a bug, or a package kinhec does not know: it keeps its traceback).
    """
    if isinstance(exc, MissingDependencyError):
        return exc
    if not isinstance(exc, ImportError) or not exc.name:
        return None
    top = exc.name.split(".")[0]
    if top not in EXTRA_OF:
        return None
    return MissingDependencyError(_message(top, purpose, exc), name=exc.name)
