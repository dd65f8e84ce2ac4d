"""kinhec: hand-eye (A X = X B) and robot-world/hand-eye (A X = Y B) calibration toolkit.

The package is organised in layers; a lower layer never imports a higher one:

``se3`` -> ``robots``, ``cameras`` -> (generator, io, solvers) -> (benchmark,
validate) -> (viz, cli).  ``import kinhec`` stays light: it never imports
matplotlib.
"""

from __future__ import annotations

__version__ = "0.1.0"

from kinhec import se3  # noqa: E402
from kinhec.errors import (  # noqa: E402
    DatasetFormatError,
    DegenerateMotionError,
    InputError,
    KinhecError,
    UnknownNameError,
)
from kinhec.io import Sequence, iter_sequences, load_manifest, load_sequence  # noqa: E402

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
