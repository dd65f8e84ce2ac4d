"""Architecture: a lower layer never imports a higher one, and ``import kinhec`` stays light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import kinhec

PKG = Path(kinhec.__file__).parent

# Lower number = lower layer.  Every module of the package must be listed here.
LAYERS = {
    "errors": 0, "palette": 0, "schema": 0, "jsonutil": 0, "fsutil": 0, "tracks": 0, "locking": 0, "fingerprint": 1,
    "encoding": 0, "blas": 0,
    "se3": 1,
    "robots": 2, "cameras": 2, "motion": 2, "tiers": 2, "tier_schema": 2,
    "pnp": 3, "noise": 3, "trajectories": 3, "recipe": 3, "recipe_json": 3,
    "lsq": 1, "intrinsics": 3, "observations": 5, "suite": 6,
    "generator": 4, "drift": 4, "scenes": 4, "io": 4, "solvers": 4, "bounds": 4, "executors": 4, "provenance": 4, "export": 5, "calibrate": 5,
    "runner": 5, "benchmark": 5, "validate": 5, "validation_record": 5, "publish": 5, "vision": 5,
    "inventory": 6, "fidelity": 6, "viz": 6, "planner": 6, "report": 6, "card": 6, "clean": 6, "cli": 7, "__main__": 7,
}  # fmt: skip


def _module_key(path: Path) -> str:
    rel = path.relative_to(PKG).with_suffix("")
    return rel.parts[0]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("kinhec."):
                    out.add(a.name.split(".")[1])
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and node.module.startswith("kinhec"):
                parts = node.module.split(".")
                if len(parts) > 1:
                    out.add(parts[1])
                else:
                    out.update(a.name for a in node.names)
            elif node.level > 0 and path.parent != PKG:
                # relative import inside a sub-package: only its own modules
                continue
    return out


def test_every_module_has_a_layer():
    keys = {_module_key(p) for p in PKG.rglob("*.py")} - {"__init__"}
    missing = sorted(keys - set(LAYERS))
    assert not missing, f"add these modules to LAYERS: {missing}"


def test_lower_layers_never_import_higher_ones():
    bad = []
    for p in PKG.rglob("*.py"):
        key = _module_key(p)
        if key == "__init__":
            continue
        for dep in _imports(p):
            if dep in ("__version__",) or dep == key:
                continue
            if dep in LAYERS and LAYERS[dep] > LAYERS[key]:
                bad.append(f"{p.relative_to(PKG)} (layer {LAYERS[key]}) imports {dep} (layer {LAYERS[dep]})")
    assert not bad, "\n".join(bad)


def test_import_kinhec_does_not_import_matplotlib():
    code = "import sys, kinhec; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
