"""Every ```python block of README.md and docs/*.md runs against a small generated dataset (``data`` in the
working folder).

Each block of README.md runs on its own, in a fresh namespace and a fresh copy of the folder, as a reader who
copies one snippet runs it.  A page of docs/ reads as one session (its later blocks use the names of earlier
ones), so its blocks run in order in one namespace.

A block is skipped only when the line before it says ``<!-- not run: REASON -->``; the list of skipped
blocks is pinned below, so a block cannot drop out silently.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kinhec.synth.runner import generate_dataset
from kinhec.solvers import registry

from helpers.builds import built_once

REPO = Path(__file__).resolve().parents[1]
DOC_FILES = ["README.md"] + sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md"))
BLOCK_RE = re.compile(r"(?P<before>[^\n]*)\n[ \t]*```python\n(?P<code>.*?)\n[ \t]*```", re.S)
SKIP_RE = re.compile(r"<!-- not run: (?P<why>.+?) -->")

#: (file, reason) of every block that is not run.
EXPECTED_SKIPS = [
    ("README.md", "needs dask-jobqueue and a SLURM cluster"),
    ("docs/calibrate.md", "needs a recording laid out as above (tests/helpers/recordings.py builds one)"),
]


def _blocks(name: str):
    text = (REPO / name).read_text()
    out = []
    for m in BLOCK_RE.finditer(text):
        line = text.count("\n", 0, m.start("code")) + 1
        code = m.group("code")
        indent = min((len(s) - len(s.lstrip()) for s in code.splitlines() if s.strip()), default=0)
        code = "\n".join(s[indent:] for s in code.splitlines())
        skip = SKIP_RE.search(m.group("before"))
        out.append((line, code, skip.group("why") if skip else None))
    return out


@pytest.fixture(scope="session")
def doc_data(tmp_path_factory) -> Path:
    """The dataset the blocks read: two sequences of the smoke tier's noise track, built once per run, read-only."""

    def build(folder: Path) -> None:
        assert generate_dataset("smoke", folder / "data", workers=1, tracks=["noise"], limit=2, progress=False).ok

    return built_once(tmp_path_factory, "doc_data", build) / "data"


def _workdir(tmp_path_factory, doc_data, name: str) -> Path:
    """A fresh working folder holding a copy of the dataset as ``data`` (the blocks write beside it and into it)."""
    root = tmp_path_factory.mktemp(name)
    shutil.copytree(doc_data, root / "data")
    return root


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, doc_data):
    return _workdir(tmp_path_factory, doc_data, "docs")


def test_skipped_blocks_are_the_expected_ones():
    skipped = [(name, why) for name in DOC_FILES for _, _, why in _blocks(name) if why]
    assert skipped == EXPECTED_SKIPS
    assert sum(len(_blocks(n)) for n in DOC_FILES) >= 19


README_BLOCKS = [(line, code) for line, code, why in _blocks("README.md") if not why]


def _run(name: str, line: int, code: str, namespace: dict) -> None:
    # line numbers in tracebacks point into the Markdown file
    exec(compile("\n" * (line - 1) + code, str(REPO / name), "exec"), namespace)


@pytest.fixture
def solver_registry():
    """The solver registry as it was before the test (a block may register a plug-in)."""
    before = dict(registry.SOLVERS)
    yield
    registry.SOLVERS.clear()
    registry.SOLVERS.update(before)


@pytest.mark.parametrize("line, code", README_BLOCKS, ids=[f"README.md:{line}" for line, _ in README_BLOCKS])
def test_readme_block_runs_on_its_own(line, code, tmp_path_factory, doc_data, monkeypatch, capsys, solver_registry):
    monkeypatch.chdir(_workdir(tmp_path_factory, doc_data, "readme"))
    _run("README.md", line, code, {"__name__": "doc:README.md"})
    if "solvers.register(" in code:
        out = capsys.readouterr().out
        assert "my_solver" in out and "park_martin" in out  # the plug-in's results beside the baseline's


#: ``print(EXPR)  # VALUE`` in a block, VALUE a Python literal: the output the page shows for that line.
PRINTED_RE = re.compile(r"^print\((?P<expr>.+)\)\s+#\s*(?P<value>[\[({'\"\d-].*)$", re.M)


def _shown_outputs(code: str) -> list[tuple[str, object]]:
    """``(expression, value)`` of every line of ``code`` that shows its printed value as a literal comment."""
    import ast

    out = []
    for m in PRINTED_RE.finditer(code):
        try:
            out.append((m.group("expr"), ast.literal_eval(m.group("value").strip())))
        except (ValueError, SyntaxError):  # a comment in words, not the output
            continue
    return out


def test_shown_outputs_are_found():
    code = "print(f(1))   # ['a', 'b']\nprint(g)  # (deg, mm) against the truth\nprint(h)  # 3"
    assert _shown_outputs(code) == [("f(1)", ["a", "b"]), ("h", 3)]


@pytest.mark.parametrize("name", [n for n in DOC_FILES if n != "README.md" and _blocks(n)])
def test_doc_code_blocks_run(name, workdir, monkeypatch, solver_registry):
    """The page's blocks run in order, and a line that shows its output as a comment prints that value."""
    monkeypatch.chdir(workdir)
    namespace: dict = {"__name__": f"doc:{name}"}
    for line, code, why in _blocks(name):
        if not why:
            _run(name, line, code, namespace)
            for expr, value in _shown_outputs(code):
                assert eval(expr, namespace) == value, f"{name}, block at line {line}: print({expr}) shows {value!r}"
