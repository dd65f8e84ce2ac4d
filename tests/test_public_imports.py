"""Every name the README, the docs and the examples import from kinhec imports from the path they use.

The statements are read from README.md's and docs/**/*.md's fenced blocks (any language: only lines that are
import statements count, so a shell block's commands are left alone), from docs/**/*.py and from examples/**/*.py:
``from kinhec... import a, b`` (also parenthesised over several lines, ``as`` aliases, comments) and
``import kinhec.x.y``.  Each module must import and hold each name (as an attribute or a submodule).  A name moved
or renamed in kinhec then fails here, naming the page and its line, instead of in a reader's session.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from helpers.paths import REPO

FENCE_RE = re.compile(r"^[ \t]*```[^\n]*\n(.*?)^[ \t]*```", re.S | re.M)
FROM_RE = re.compile(r"^[ \t]*from[ \t]+(kinhec(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
IMPORT_RE = re.compile(r"^[ \t]*import[ \t]+(kinhec(?:\.\w+)*(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)",
                       re.M)  # fmt: skip


def _names(clause: str) -> list[str]:
    """The imported names of ``a, b as c`` or ``(a,  # comment\\n b)``, aliases dropped."""
    clause = re.sub(r"#[^\n]*", "", clause).strip().strip("()").replace("\\\n", " ")
    return [part.split(" as ")[0].strip() for part in clause.split(",") if part.strip()]


def imports_in_text(text: str) -> list[tuple[int, str, str | None]]:
    """``(line, module, name)`` of every kinhec import statement in ``text`` (name None for ``import kinhec.x``)."""
    out = []
    for m in FROM_RE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        out += [(line, m.group(1), name) for name in _names(m.group(2)) if name != "*"]
    for m in IMPORT_RE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        out += [(line, mod, None) for mod in _names(m.group(1)) if mod.split(".")[0] == "kinhec"]
    return out


def imports_in_python(source: str) -> list[tuple[int, str, str | None]]:
    """The same from a Python file, by its syntax tree (statements inside functions included)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "kinhec":
            out += [(node.lineno, node.module, a.name) for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None) for a in node.names if a.name.split(".")[0] == "kinhec"]
    return out


def imports_in_markdown(text: str) -> list[tuple[int, str, str | None]]:
    """The import statements of the fenced blocks of a page, with their line numbers on the page."""
    out = []
    for block in FENCE_RE.finditer(text):
        first = text.count("\n", 0, block.start(1))
        out += [(first + line, module, name) for line, module, name in imports_in_text(block.group(1))]
    return out


def sources() -> list[Path]:
    files = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "docs").rglob("*.py"))]
    if (REPO / "examples").is_dir():
        files += sorted((REPO / "examples").rglob("*.py"))
    return files


def missing(module: str, name: str | None) -> str | None:
    """Why ``from module import name`` (or ``import module``) fails, or None when it works."""
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        return f"module {module} does not import ({type(e).__name__}: {e})"
    if name is None or hasattr(mod, name):
        return None
    try:
        importlib.import_module(f"{module}.{name}")
    except ModuleNotFoundError as e:
        if e.name == f"{module}.{name}":
            return f"{module} has no name {name}"
        return f"{module}.{name} does not import (ModuleNotFoundError: {e})"  # it needs something that is not there
    except ImportError as e:
        return f"{module}.{name} does not import (ImportError: {e})"
    return None


def test_every_documented_import_works():
    found, bad = [], []
    for path in sources():
        text = path.read_text(encoding="utf-8")
        entries = imports_in_python(text) if path.suffix == ".py" else imports_in_markdown(text)
        found += [(path, *e) for e in entries]
    # the parser finds the README's imports and the parenthesised multi-line ones of the pages
    assert any(p.name == "README.md" and m == "kinhec.evaluate.benchmark" and n == "run_benchmark" for p, _, m, n in found)
    assert len({(m, n) for _, _, m, n in found}) >= 50, "fewer kinhec imports than the pages hold: the parser broke"
    for path, line, module, name in found:
        why = missing(module, name)
        if why is not None:
            bad.append(f"{path.relative_to(REPO)}:{line}: {why}")
    if bad and all("does not import (ModuleNotFoundError" in b and "No module named 'kinhec" not in b for b in bad):
        pytest.skip("an optional dependency is missing: " + "; ".join(bad))
    assert not bad, "\n".join(bad)
