"""The figures in docs/ that come from runs match a fresh run (``python docs/build_figures.py`` writes them).

Each marked block of docs/calibrate.md, docs/solvers.md, docs/performance.md, docs/bags.md and
docs/leaderboard_real.md is recomputed (the real recordings kept with the tests, the stored small-tier run, OpenCV on
noisy chains, a bag written by the page's recipe, the real-data leaderboard's stored run) and compared with the page:
the text must be the same and every number within one unit of its last printed digit.  A page that no longer
matches fails, naming the block and the figure; ``python docs/build_figures.py`` rewrites it.
"""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest

from helpers.paths import REPO

DOCS = REPO / "docs"


def _load(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, DOCS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


build = _load("build_figures")
BLOCKS = [(page, name) for page, (_, mod) in build.PAGES.items() for name in _load(mod).NAMES]


def test_the_tolerance_is_one_unit_of_the_last_printed_digit():
    assert build.mismatches("X is 0.13 deg / 1,234.5 mm.", "X is 0.1349 deg / 1,234.4 mm.") == []
    assert build.mismatches("X is 0.13 deg.", "X is 0.1251 deg.") == []
    assert build.mismatches("X is 0.13 deg.", "X is 0.1449 deg.") == [
        "0.13 on the page, 0.1449 in a fresh run (more than one unit of its last digit)"]
    assert build.mismatches("offset -19.3 ms, < 1e-09 deg", "offset -19.25 ms, < 1e-09 deg") == []
    assert build.mismatches("peak 0.07, so the scan", "peak 0.988, so the correlation")[0] == "the text differs:"
    assert build.format_block("a " * 80 + "\n\n| x | y |\n")  == build.format_block(build.format_block("a " * 80 + "\n\n| x | y |\n"))
    assert build.mismatches("--x 0.258775325 --y 0.0319272279", "--x 0.258775317 --y 0.0319272307") == []  # 1e-6
    assert build.mismatches("--x 0.258775325", "--x 0.258785325")  # 4e-5 of the value
    assert build.mismatches("trans_mm  0.536573", "trans_mm  0.536570") == []  # 6e-6: another CPU's kernels
    console = "```\n$ kinhec calibrate " + "--x 1 " * 40 + "\n  two  spaces\n```\n"
    assert build.format_block("see:\n" + console) == "see:\n" + console  # console output stays as printed


def test_every_block_on_the_pages_has_a_generator_and_back():
    for page, (fname, mod) in build.PAGES.items():
        on_page = list(build.page_blocks((DOCS / fname).read_text(encoding="utf-8")))
        assert on_page == list(_load(mod).NAMES), page


@pytest.fixture(scope="module")
def fresh(request):
    """The blocks of a fresh run, per page, computed on first use (the corner files' calibrations only for the
    page that quotes them)."""
    cache = {}

    def get(page):
        if page not in cache:
            inputs = {"corners": request.getfixturevalue("corners_results")} if page == "calibrate" else {}
            cache[page] = build.fresh_blocks(page, **inputs)
        return cache[page]

    return get


@pytest.mark.parametrize("page, name", BLOCKS, ids=[n for _, n in BLOCKS])
def test_page_matches_a_fresh_run(page, name, fresh):
    fname, mod = build.PAGES[page]
    if page == "bags":
        pytest.importorskip("rosbags", reason="docs/bags.md's figures need rosbags (ros extra, in the dev extra)")
    have = build.page_blocks((DOCS / fname).read_text(encoding="utf-8"))[name]
    if name in _load(mod).OPENCV_BLOCKS:  # OpenCV's own figures follow its version: compare like with like
        cv2 = pytest.importorskip("cv2", reason="the block's OpenCV figures need opencv-python-headless (dev extra)")
        stated = re.search(r"OpenCV (\d+\.\d+)", have).group(1)
        if not cv2.__version__.startswith(stated + "."):
            pytest.skip(f"docs/{fname} [{name}] was measured with OpenCV {stated}, this is OpenCV {cv2.__version__}")
    problems = build.mismatches(have, fresh(page)[name])
    assert not problems, f"docs/{fname} [{name}] no longer matches a fresh run (python docs/build_figures.py " \
                         f"rewrites it):\n" + "\n".join(problems)
