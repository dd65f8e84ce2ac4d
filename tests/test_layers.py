"""Architecture: groups stacked in layers, no circles at any level, imports at the top of modules.

The rule (docs/architecture.md):

* the top of ``src/kinhec`` holds a few groups, stacked in :data:`GROUPS`; a module imports only from its
  own group or from groups below it;
* inside every package (the groups and their subpackages), the import arrows between its members (a
  module, or a subpackage taken as one) form no circle -- counting imports inside functions, which is where
  circles hide;
* a module imports kinhec's modules at its top; an import inside a function is for an optional or heavy
  third-party package (:data:`LAZY_THIRD_PARTY`), for one of kinhec's modules that loads pandas, pyarrow or
  scipy (:data:`HEAVY`, checked to be heavy), so that light commands and the numeric core do not, or in the command line
  (:data:`LAZY_KINHEC`), whose commands load their layer when run so that ``kinhec --help`` starts at once;
* ``import kinhec`` loads only the standard library.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import kinhec
from kinhec.util.moved import MOVED, current_name

PKG = Path(kinhec.__file__).parent

#: the groups at the top of the package, lowest first; a group imports only from groups before it
GROUPS = ["util", "geometry", "models", "io", "solvers", "synth", "vision", "calibrate", "evaluate", "dataset",
          "report", "planner", "cli", "__main__"]  # fmt: skip
#: at most this many entries at the top of src/kinhec (files and folders)
TOP_LIMIT = 15
#: third-party packages a function may import when it needs them: optional extras, or heavy ones kept off
#: the import of the numeric core (kinhec.solvers, kinhec.calibrate, the benchmark's workers)
LAZY_THIRD_PARTY = {"cv2", "rosbags", "matplotlib", "mpl_toolkits", "plotly", "dask", "distributed", "scs",
                    "clarabel", "pandas", "pyarrow", "jsonschema", "scipy", "yaml", "rich", "deflate",
                    "threadpoolctl", "playwright", "tomllib", "tomli", "numpy", "yourdfpy"}  # fmt: skip
#: kinhec's modules that load pandas, pyarrow or scipy when imported: a function of a light module may import
#: them where it needs them (a test checks that each still is heavy, so the list cannot hide a light one)
HEAVY = {"kinhec.synth.generator", "kinhec.synth.recipe", "kinhec.synth.observations", "kinhec.vision.detect",
         "kinhec.io.index", "kinhec.io.reader", "kinhec.io.sequence", "kinhec.io.shards", "kinhec.io.tables",
         "kinhec.io.schema", "kinhec.dataset.validate", "kinhec.report.viz._style",
         "kinhec.report.viz.scene", "kinhec.solvers.reprojection", "kinhec.models.intrinsics"}  # fmt: skip
#: modules whose functions may import kinhec's modules: the command line, whose commands load their layer when run
LAZY_KINHEC = {"kinhec.cli", "kinhec"}


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG).with_suffix("")
        parts = ["kinhec", *rel.parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


MODULES = _modules()


def _resolve(name: str, level: int, here: str, is_package: bool) -> str:
    if level:
        base = here.split(".") if is_package else here.split(".")[:-1]
        base = base[: len(base) - (level - 1)]
        name = ".".join(base + ([name] if name else []))
    return current_name(name) or name


def _kinhec_imports(name: str, path: Path):
    """(imported kinhec module, line, inside a function) for every import of the module at ``path``."""
    tree = ast.parse(path.read_text())
    is_package = path.name == "__init__.py"
    top_level = {id(n) for n in tree.body}
    for n in tree.body:  # imports under `if TYPE_CHECKING:` or try/except at the top count as top level
        if isinstance(n, (ast.If, ast.Try)):
            top_level.update(id(m) for m in ast.walk(n))
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [_resolve(a.name, 0, name, is_package) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.module or "", node.level, name, is_package)
            for a in node.names:  # `from kinhec.x import y`: y may be a module
                sub = current_name(f"{base}.{a.name}") or f"{base}.{a.name}"
                targets.append(sub if sub in MODULES else base)
        for t in targets:
            if t == "kinhec" or t.startswith("kinhec."):
                yield t, node.lineno, id(node) not in top_level


def _third_party_inside_functions(path: Path):
    tree = ast.parse(path.read_text())
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for f in funcs:
        for node in ast.walk(f):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for m in names:
                yield m.split(".")[0], node.lineno


def _group(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "kinhec"


def test_the_top_of_the_package_is_a_few_groups():
    entries = sorted(p.name for p in PKG.iterdir() if p.name != "__pycache__" and not p.name.endswith(".pyc"))
    assert len(entries) <= TOP_LIMIT, f"{len(entries)} entries at the top of src/kinhec: {entries}"
    groups = {e.removesuffix(".py") for e in entries} - {"__init__"}
    assert groups == set(GROUPS), f"listed in GROUPS but absent: {set(GROUPS) - groups}; unlisted: {groups - set(GROUPS)}"


def test_groups_import_only_from_groups_below():
    bad = []
    for name, path in MODULES.items():
        g = _group(name)
        if g == "kinhec":
            continue
        for dep, line, _ in _kinhec_imports(name, path):
            d = _group(dep)
            if d in ("kinhec", g):
                continue
            if GROUPS.index(d) > GROUPS.index(g):
                bad.append(f"{path.relative_to(PKG)}:{line} ({g}) imports {dep} ({d}, a group above)")
    assert not bad, "\n".join(bad)


def _member(package: str, module: str) -> str | None:
    """The member of ``package`` (a direct child module or subpackage) that ``module`` is in, else None."""
    if not module.startswith(package + "."):
        return None
    return package + "." + module[len(package) + 1 :].split(".")[0]


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def test_no_circles_inside_any_package():
    packages = [m for m, p in MODULES.items() if p.name == "__init__.py"]
    found = []
    for pkg in packages:
        edges = defaultdict(set)
        for name, path in MODULES.items():
            src = _member(pkg, name)
            if src is None:
                continue
            for dep, line, _ in _kinhec_imports(name, path):
                dst = _member(pkg, dep)
                if dst is not None and dst != src:
                    edges[src].add(dst)
        for comp in _circles(edges):
            found.append(f"{pkg}: {' <-> '.join(comp)}")
    assert not found, "import circles (imports inside functions count):\n" + "\n".join(found)


def test_kinhec_modules_are_imported_at_the_top():
    bad = []
    for name, path in MODULES.items():
        if name in LAZY_KINHEC:
            continue
        for dep, line, inside in _kinhec_imports(name, path):
            if inside and dep not in HEAVY:
                bad.append(f"{path.relative_to(PKG)}:{line} imports {dep} inside a function")
    assert not bad, "\n".join(bad)


def test_the_modules_imported_where_needed_are_heavy():
    code = ("import sys, importlib\nimportlib.import_module(sys.argv[1])\n"
            "print(any(m in sys.modules for m in ('pandas', 'pyarrow', 'scipy')))")
    light = []
    for module in sorted(HEAVY):
        out = subprocess.run([sys.executable, "-c", code, module], capture_output=True, text=True, check=True)
        if out.stdout.strip() != "True":
            light.append(module)
    assert not light, f"these load none of pandas, pyarrow and scipy: import them at the top, and take them off HEAVY: {light}"


def test_functions_import_only_listed_third_party_packages():
    stdlib = set(sys.stdlib_module_names)
    bad = []
    for name, path in MODULES.items():
        for top, line in _third_party_inside_functions(path):
            if top in ("kinhec", "__future__") or top in stdlib or top in LAZY_THIRD_PARTY:
                continue
            bad.append(f"{path.relative_to(PKG)}:{line} imports {top} inside a function (not in LAZY_THIRD_PARTY)")
    assert not bad, "\n".join(bad)


def test_the_checks_see_a_circle_and_an_upward_import(tmp_path):
    """The detectors themselves: a made-up package with a circle hidden in a function, and an upward import."""
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []
    p = tmp_path / "m.py"
    p.write_text("import numpy\nfrom kinhec.se3 import so3_log\n\ndef f():\n    from kinhec.report import page\n")
    got = list(_kinhec_imports("kinhec.util.fake", p))
    assert got == [("kinhec.geometry.se3", 2, False), ("kinhec.report.page", 5, True)]
    assert GROUPS.index(_group(got[1][0])) > GROUPS.index("util")


def test_every_old_import_path_is_the_moved_module():
    code = ("import importlib, kinhec\nfrom kinhec.util.moved import MOVED\n"
            "bad = [o for o, n in MOVED.items() if importlib.import_module('kinhec.' + o) is not importlib.import_module('kinhec.' + n)]\n"
            "import kinhec.benchmark.run, kinhec.evaluate.benchmark.run, kinhec.viz.scene\n"
            "assert kinhec.benchmark.run is kinhec.evaluate.benchmark.run and kinhec.viz.scene.__name__ == 'kinhec.report.viz.scene'\n"
            "from kinhec import se3, cameras\nassert se3.__name__ == 'kinhec.geometry.se3' and cameras.__name__ == 'kinhec.models.cameras'\n"
            "print(bad)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
    assert len(MOVED) >= 30


def test_import_kinhec_loads_only_the_standard_library():
    code = "import sys, kinhec; print(sorted(m for m in ('numpy', 'pandas', 'pyarrow', 'matplotlib', 'scipy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
