"""The import paths of modules that moved into the package's groups keep working.

kinhec's top level holds groups by role (``geometry``, ``models``, ``synth``, ``io``, ``evaluate``, ...,
see docs/architecture.md).  Code written against the earlier flat layout imports ``kinhec.se3``,
``kinhec.benchmark.run`` or ``from kinhec import cameras``; :class:`MovedModuleFinder` answers such a
name with the module itself, so ``kinhec.se3 is kinhec.geometry.se3`` and a patch applied through one
name is seen through the other.  Only the standard library is used: ``import kinhec`` stays light.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys

#: old name under ``kinhec.`` -> the module's path under ``kinhec.`` today
MOVED = {
    "benchmark": "evaluate.benchmark",
    "blas": "util.blas",
    "bounds": "evaluate.bounds",
    "cameras": "models.cameras",
    "card": "dataset.card",
    "clean": "dataset.clean",
    "drift": "synth.drift",
    "encoding": "io.encoding",
    "errors": "util.errors",
    "executors": "util.executors",
    "export": "dataset.export",
    "fidelity": "evaluate.fidelity",
    "fingerprint": "util.fingerprint",
    "fsutil": "util.fsutil",
    "generator": "synth.generator",
    "intrinsics": "models.intrinsics",
    "inventory": "dataset.inventory",
    "jsonutil": "util.jsonutil",
    "locking": "util.locking",
    "lsq": "geometry.lsq",
    "motion": "geometry.motion",
    "noise": "models.noise",
    "observations": "synth.observations",
    "palette": "util.palette",
    "pnp": "models.pnp",
    "provenance": "util.provenance",
    "publish": "io.publish",
    "recipe": "synth.recipe",
    "recipe_json": "synth.recipe_json",
    "robots": "models.robots",
    "runner": "synth.runner",
    "scenes": "synth.scenes",
    "schema": "io.schema",
    "se3": "geometry.se3",
    "suite": "evaluate.suite",
    "tier_schema": "synth.tier_schema",
    "tiers": "synth.tiers",
    "tracks": "io.tracks",
    "trajectories": "synth.trajectories",
    "validate": "dataset.validate",
    "validation_record": "dataset.validation_record",
    "viz": "report.viz",
}


def current_name(fullname: str) -> str | None:
    """The module's name today for an old ``kinhec.`` name (a module or anything inside a moved package), else None."""
    if not fullname.startswith("kinhec."):
        return None
    head, _, rest = fullname[len("kinhec."):].partition(".")
    new = MOVED.get(head)
    if new is None:
        return None
    return f"kinhec.{new}" + (f".{rest}" if rest else "")


class _Alias(importlib.abc.Loader):
    """Hands over a module already imported under its own name, and keeps its own spec."""

    def __init__(self, module):
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        module.__spec__ = self.spec  # the import system set the old name's spec; the module keeps its own


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds ``kinhec.<old name>`` as the module it became."""

    def find_spec(self, fullname, path=None, target=None):
        new = current_name(fullname)
        if new is None:
            return None
        module = importlib.import_module(new)
        return importlib.machinery.ModuleSpec(fullname, _Alias(module),
                                              is_package=getattr(module, "__path__", None) is not None)


def install() -> None:
    """Put the finder ahead of the path finder (once)."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())


def module_getattr(name: str):
    """``kinhec.<old name>`` as an attribute of ``kinhec`` (``from kinhec import se3``), or None."""
    if name in MOVED:
        return importlib.import_module(f"kinhec.{MOVED[name]}")
    return None
