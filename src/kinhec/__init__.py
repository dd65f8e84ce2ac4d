"""kinhec: hand-eye (A X = X B) and robot-world/hand-eye (A X = Y B) calibration toolkit.

The package is a stack of groups, each importing only the groups below it
(docs/architecture.md draws them; tests/test_layers.py holds the rule):

``util`` -> ``geometry`` -> ``models`` -> ``io`` -> ``solvers`` -> ``synth`` ->
``vision`` -> ``calibrate`` -> ``evaluate`` -> ``dataset`` -> ``report`` ->
``planner`` -> ``cli``.  Modules of the earlier flat layout keep their import
paths (``kinhec.geometry.se3`` is ``kinhec.geometry.se3``: :mod:`kinhec.util.moved`).
``import kinhec`` stays light: it imports only the standard library; the
public loaders and :mod:`kinhec.geometry.se3` are resolved on first use.
"""

from __future__ import annotations

__version__ = "0.1.0"

from kinhec.util import moved as _moved  # noqa: E402  (standard library only)
from kinhec.util.errors import (  # noqa: E402  (standard library only)
    DatasetFormatError,
    DegenerateMotionError,
    InputError,
    KinhecError,
    UnknownNameError,
)

_moved.install()

# Public names resolved on first use, so that ``import kinhec`` (and with it
# every ``kinhec`` command's start-up) pulls in neither numpy nor pyarrow nor
# pandas: ``kinhec.load_sequence`` imports :mod:`kinhec.io` when first touched.
_LAZY = {
    "se3": ("kinhec.geometry.se3", None),
    "Sequence": ("kinhec.io", "Sequence"),
    "iter_sequences": ("kinhec.io", "iter_sequences"),
    "load_manifest": ("kinhec.io", "load_manifest"),
    "load_sequence": ("kinhec.io", "load_sequence"),
}


def __getattr__(name: str):
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        moved = _moved.module_getattr(name)
        if moved is not None:
            return moved
        raise AttributeError(f"module 'kinhec' has no attribute {name!r}") from None
    import importlib

    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:  # pandas or pyarrow not installed (a light install): say which extra brings them
        from kinhec.util.optional import missing_dependency

        missing = missing_dependency(exc, f"kinhec.{name}")
        if missing is None:
            raise
        raise missing from None
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "__version__",
    "se3",
    "KinhecError",
    "InputError",
    "UnknownNameError",
    "DatasetFormatError",
    "DegenerateMotionError",
    "load_manifest",
    "load_sequence",
    "iter_sequences",
    "Sequence",
]
