"""Architecture: a module uses another module's public names, never its ``_private`` ones.

Counted over every ``.py`` under ``src/kinhec``:

* ``from kinhec.x import _name`` (absolute or relative) whose ``_name`` is a private name (one leading
  underscore, not a dunder) and not a sub-module of the package (``from kinhec.solvers import _common`` and
  ``from kinhec.solvers._common import rotation_angle`` are fine: a package-internal module, public names);
* ``m._name`` where ``m`` is a local name bound to a kinhec module (``import kinhec.geometry.se3 as se3``,
  ``from kinhec import se3``, ``import kinhec.geometry.se3`` then ``kinhec.geometry.se3._name``).

Importing a module under a private alias (``from kinhec.solvers import refine as _refine``) is not a private
name and is not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import kinhec

PKG = Path(kinhec.__file__).parent
#: Uses of another module's private names allowed in the whole package (the issue's ceiling was 20; there are none).
LIMIT = 0


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(dotted: str) -> bool:
    """Whether ``dotted`` (``kinhec.solvers._common``) names a module or package of kinhec."""
    parts = dotted.split(".")
    if parts[0] != "kinhec":
        return False
    base = PKG.parent.joinpath(*parts)
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _absolute(own: str, is_package: bool, node: ast.ImportFrom) -> str | None:
    """The module an ``ImportFrom`` in module ``own`` reads from, made absolute; None outside kinhec."""
    if node.level == 0:
        mod = node.module or ""
        return mod if mod == "kinhec" or mod.startswith("kinhec.") else None
    package = own.split(".")
    if not is_package:
        package = package[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join(package + ([node.module] if node.module else []))


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def offenders(path: Path, own: str | None = None) -> list[str]:
    """``file:line name`` for each use in ``path`` (the module ``own``, by default where it sits in the
    package) of another kinhec module's private name."""
    tree = ast.parse(path.read_text(), filename=str(path))
    own = own or _module_name(path)
    rel = path.relative_to(PKG.parent) if path.is_relative_to(PKG.parent) else path
    bound: dict[str, str] = {}  # local name -> the kinhec module it stands for
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "kinhec" or a.name.startswith("kinhec."):
                    if a.asname:
                        bound[a.asname] = a.name
                    else:
                        bound["kinhec"] = "kinhec"
        elif isinstance(node, ast.ImportFrom):
            src = _absolute(own, path.name == "__init__.py", node)
            if src is None:
                continue
            for a in node.names:
                full = f"{src}.{a.name}"
                if _is_module(full):
                    bound[a.asname or a.name] = full
                elif _private(a.name) and src != own:
                    out.append(f"{rel}:{node.lineno} {src}.{a.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            head = _dotted(node.value)
            if head is None:
                continue
            first, _, rest = head.partition(".")
            if first not in bound:
                continue
            mod = bound[first] + (f".{rest}" if rest else "")
            if _is_module(mod) and mod != own and not _is_module(f"{mod}.{node.attr}"):
                out.append(f"{rel}:{node.lineno} {mod}.{node.attr}")
    return out


def test_no_module_uses_another_modules_private_names():
    found = [f for p in sorted(PKG.rglob("*.py")) for f in offenders(p)]
    assert len(found) <= LIMIT, (
        f"{len(found)} uses of another module's private names (at most {LIMIT}); give them public names:\n"
        + "\n".join(found)
    )


def test_the_count_sees_private_imports_and_attributes(tmp_path):
    """The counter itself: private imports and private attributes of imported modules count, the rest not."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import kinhec.geometry.se3 as se3\n"
        "import kinhec.solvers.refine\n"
        "from kinhec.models import cameras\n"
        "from kinhec.solvers import _common\n"
        "from kinhec.solvers import refine as _refine\n"
        "from kinhec.solvers._common import rotation_angle\n"
        "from . import se3 as s\n"
        "from kinhec.models.cameras import _hidden\n"  # counted
        "from kinhec.solvers.refine import _other\n"  # counted
        "from .se3 import _up\n"  # counted
        "se3._x\n"  # counted
        "cameras._y\n"  # counted
        "s._z\n"  # counted
        "kinhec.solvers.refine._w\n"  # counted
        "_common.public\n"
        "_refine.__name__\n"
        "self._v\n"
    )
    found = offenders(probe, own="kinhec.geometry.probe")
    names = sorted(f.split(" ", 1)[1] for f in found)
    assert names == sorted([
        "kinhec.models.cameras._hidden", "kinhec.solvers.refine._other", "kinhec.geometry.se3._up", "kinhec.geometry.se3._x",
        "kinhec.models.cameras._y", "kinhec.geometry.se3._z", "kinhec.solvers.refine._w",
    ]), found
