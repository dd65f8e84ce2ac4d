"""The small family of exceptions raised by kinhec.

Every error kinhec raises on purpose derives from :class:`KinhecError`, so a
caller (and the command line) can tell a known problem with the input apart
from a bug.  Messages say what was expected and what came.
"""

from __future__ import annotations


class KinhecError(Exception):
    """Base class of every error kinhec raises on purpose."""


class InputError(KinhecError, ValueError):
    """An argument has the wrong shape, type, value or content."""


class UnknownNameError(InputError):
    """A name (robot, preset, solver, track, ...) is not in its registry."""

    def __init__(self, kind: str, name: object, valid) -> None:
        self.kind = kind
        self.name = name
        self.valid = sorted(valid)
        super().__init__(
            f"unknown {kind} {name!r}; expected one of: {', '.join(self.valid)}"
        )


class FolderInUseError(InputError):
    """Another kinhec process holds the writer lock of a folder (wait for it, or remove a stale lock)."""


class SolverOutputError(KinhecError):
    """A solver returned something that is not an estimate (see :func:`kinhec.solvers.normalise_result`)."""


class DatasetFormatError(KinhecError):
    """A dataset folder or file does not have the expected layout or content."""


class DegenerateMotionError(KinhecError):
    """The motions do not constrain the unknowns (e.g. all rotation axes parallel)."""


class ConvergenceError(KinhecError):
    """An iterative method (IK, PnP, ...) did not reach its tolerance."""
