"""kinhec: hand-eye (A X = X B) and robot-world/hand-eye (A X = Y B) calibration toolkit.

The package is organised in layers; a lower layer never imports a higher one:

``se3`` -> ``robots``, ``cameras`` -> (generator, io, solvers) -> (benchmark,
validate) -> (viz, cli).  ``import kinhec`` stays light: it imports only the
standard library; the public loaders and :mod:`kinhec.se3` are resolved on
first use.
"""

from __future__ import annotations

__version__ = "0.1.0"

from kinhec.errors import (  # noqa: E402  (standard library only)
    DatasetFormatError,
    DegenerateMotionError,
    InputError,
    KinhecError,
    UnknownNameError,
)

# Public names resolved on first use, so that ``import kinhec`` (and with it
# every ``kinhec`` command's start-up) pulls in neither numpy nor pyarrow nor
# pandas: ``kinhec.load_sequence`` imports :mod:`kinhec.io` when first touched.
_LAZY = {
    "se3": ("kinhec.se3", None),
    "Sequence": ("kinhec.io", "Sequence"),
    "iter_sequences": ("kinhec.io", "iter_sequences"),
    "load_manifest": ("kinhec.io", "load_manifest"),
    "load_sequence": ("kinhec.io", "load_sequence"),
}


def __getattr__(name: str):
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'kinhec' has no attribute {name!r}") from None
    import importlib

    module = importlib.import_module(module_name)
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
