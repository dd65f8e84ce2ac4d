"""Start-up cost: ``import kinhec`` and the light commands import only what they need.

The check is on the import graph (which modules end up in ``sys.modules`` after a
command ran in a fresh interpreter), not on the clock, so it holds on a loaded
machine; ``benchmarks/bench_startup.py`` prints the times.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pandas", "pyarrow", "scipy", "matplotlib", "dask", "distributed")

_RUN = """
import json, sys
from kinhec.cli import main
sys.argv = ["kinhec"] + json.loads(sys.argv[1])
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
top = sorted({m.split(".")[0] for m in sys.modules})
sys.stderr.write("\\nMODULES " + json.dumps({"code": code, "top": top}) + "\\n")
"""


def _modules_after(args: list[str]) -> tuple[int, set[str]]:
    proc = subprocess.run([sys.executable, "-c", _RUN, json.dumps(args)], capture_output=True, text=True, timeout=120)
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("MODULES ")]
    assert line, proc.stderr
    data = json.loads(line[-1][len("MODULES "):])
    return data["code"], set(data["top"])


def test_import_kinhec_imports_only_the_standard_library():
    code = "import sys, kinhec; print(json.dumps(sorted(m for m in ('numpy',) + HEAVY if m in sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", f"import json; HEAVY={HEAVY!r}; " + code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == []


def test_public_names_stay_reachable_lazily():
    import kinhec

    assert callable(kinhec.load_sequence) and callable(kinhec.load_manifest) and callable(kinhec.iter_sequences)
    assert kinhec.Sequence.__name__ == "Sequence"
    assert hasattr(kinhec.se3, "matrix_from_quaternion") or hasattr(kinhec.se3, "exp")
    for name in kinhec.__all__:
        assert getattr(kinhec, name) is not None, name
    assert set(kinhec.__all__) <= set(dir(kinhec))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        kinhec.nope  # noqa: B018


@pytest.mark.parametrize(
    "args, expected_code",
    [
        (["--help"], 0),
        (["--version"], 0),
        (["info", "--json"], 0),
        (["info"], 0),
        (["plan", "--tier", "full"], 0),
        (["plan", "--tier", "nope"], 2),  # bad input: exit 2
        (["generate", "--help"], 0),
        (["generate"], 2),  # missing --out
        (["generate", "--out", "x", "--tracks", "bogus"], 2),
        (["generate", "--out", "x", "--workers", "0"], 2),
        (["benchmark", "/nonexistent/folder"], 2),
        (["validate"], 2),
        (["visualize", "--help"], 0),
        (["index", "/nonexistent/folder"], 2),
        (["bogus-command"], 2),
    ],
)
def test_light_commands_do_not_import_heavy_libraries(args, expected_code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, top = _modules_after(args)
    assert code == expected_code, (args, code)
    heavy = sorted(top & set(HEAVY))
    assert not heavy, f"kinhec {' '.join(args)} imported {heavy}"
