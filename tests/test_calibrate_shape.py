"""The shape of calibrate/: a short dispatcher over stages, and no function too long to read in one go."""

from __future__ import annotations

import ast
from pathlib import Path

import kinhec.calibrate

CALIBRATE = Path(kinhec.calibrate.__file__).parent
#: lines (from ``def`` to the last line, docstring included) of calibrate()'s dispatcher, and of any function here
DISPATCHER_LINES, FUNCTION_LINES = 60, 120


def _functions():
    for path in sorted(CALIBRATE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield path.relative_to(CALIBRATE), node.name, node.end_lineno - node.lineno + 1


def test_calibrate_is_a_short_dispatcher():
    (lines,) = [n for p, name, n in _functions() if p == Path("calibration.py") and name == "calibrate"]
    assert lines <= DISPATCHER_LINES, f"calibrate() has {lines} lines (at most {DISPATCHER_LINES}): give a stage its own module"


def test_no_function_in_calibrate_is_too_long():
    long = [f"{p}: {name} ({n} lines)" for p, name, n in _functions() if n > FUNCTION_LINES]
    assert not long, f"functions over {FUNCTION_LINES} lines: {long}"


def test_the_stages_run_in_their_numbered_order():
    """The one-camera chain calls its stages in the order its docstring numbers them."""
    from kinhec.calibrate.stages import camera

    tree = ast.parse(Path(camera.__file__).read_text())
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "solve_camera"]
    called = [n.value.func.id for n in fn.body if isinstance(n, (ast.Assign, ast.Return))
              and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name)]  # fmt: skip
    assert called == ["apply_reading", "pair", "solve", "spread", "judge", "result"]
