"""Every ```python block of README.md and docs/*.md runs, in order per file, against a small generated dataset.

A block is skipped only when the line before it says ``<!-- not run: REASON -->``; the list of skipped
blocks is pinned below, so a block cannot drop out silently.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kinhec.runner import generate_dataset
from kinhec.solvers import registry

REPO = Path(__file__).resolve().parents[1]
DOC_FILES = ["README.md"] + sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md"))
BLOCK_RE = re.compile(r"(?P<before>[^\n]*)\n[ \t]*```python\n(?P<code>.*?)\n[ \t]*```", re.S)
SKIP_RE = re.compile(r"<!-- not run: (?P<why>.+?) -->")

#: (file, reason) of every block that is not run.
EXPECTED_SKIPS = [
    ("README.md", "needs dask-jobqueue and a SLURM cluster"),
    ("docs/calibrate.md", "needs a recording laid out as above (tests/test_calibrate_synthetic.py builds one)"),
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


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs")
    assert generate_dataset("smoke", root / "data", workers=1, tracks=["noise"], limit=2, progress=False).ok
    return root


def test_skipped_blocks_are_the_expected_ones():
    skipped = [(name, why) for name in DOC_FILES for _, _, why in _blocks(name) if why]
    assert skipped == EXPECTED_SKIPS
    assert sum(len(_blocks(n)) for n in DOC_FILES) >= 19


@pytest.mark.parametrize("name", [n for n in DOC_FILES if _blocks(n)])
def test_doc_code_blocks_run(name, workdir, monkeypatch, capsys):
    monkeypatch.chdir(workdir)
    before = dict(registry.SOLVERS)
    namespace: dict = {"__name__": f"doc:{name}"}
    try:
        for line, code, why in _blocks(name):
            if why:
                continue
            # line numbers in tracebacks point into the Markdown file
            exec(compile("\n" * (line - 1) + code, str(REPO / name), "exec"), namespace)
    finally:
        registry.SOLVERS.clear()
        registry.SOLVERS.update(before)
    if name == "README.md":
        out = capsys.readouterr().out
        assert "my_solver" in out and "park_martin" in out  # the plug-in's results beside the baseline's
