"""Plug-in solvers: register, --solver-module, the kinhec.solvers entry point, and what a bad solver gives."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kinhec import io as kio
from kinhec import solvers
from kinhec.geometry import se3
from kinhec.evaluate.benchmark import evaluate_sequence, run_benchmark
from kinhec.util.errors import InputError, SolverOutputError, UnknownNameError
from kinhec.synth.runner import generate_dataset
from kinhec.solvers import registry

# A toy A X = X B solver: park_martin's estimate, returned as a bare array or a tuple (not a SolverResult).
TOY_MODULE = '''
import numpy as np
from kinhec import solvers

def toy(A, B):
    return {ret}

solvers.register("{name}", "axxb", toy, description="test plug-in")
'''


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("plugins") / "smoke"
    s = generate_dataset("smoke", root, workers=1, limit=2, tracks=["noise", "monocular", "temporal"], progress=False)
    assert s.ok
    return root


@pytest.fixture
def cleanup():
    names: list[str] = []
    yield names
    for n in names:
        registry.SOLVERS.pop(n, None)
    assert list(registry.SOLVERS) == list(registry.BASELINES)


def _env(*paths) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(p) for p in paths] + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _kinhec(args, env, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kinhec", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)  # fmt: skip


def _run_out(out: Path) -> Path:
    """Where a run wrote its outputs: ``out`` for a full run, its one ``subsets/<fingerprint>`` folder otherwise."""
    if (out / "results.parquet").is_file():
        return out
    (sub,) = (out / "subsets").iterdir()
    return sub


def _check_rows(out: Path, name: str, n_seq: int, truth_from=None):
    out = _run_out(out)
    df = pd.read_parquet(out / "results.parquet")
    mine = df[df.solver == name]
    assert len(mine) >= n_seq and mine.ok.all(), mine[["sequence_id", "error"]]
    # the toy returns park_martin's X: identical errors, sequence by sequence
    pm = df[df.solver == "park_martin"].set_index(["sequence_id", "eval_sync"])
    got = mine.set_index(["sequence_id", "eval_sync"]).loc[pm.index]
    np.testing.assert_array_equal(got.X_rot_err_deg.to_numpy(), pm.X_rot_err_deg.to_numpy())
    board = (out / "leaderboard.md").read_text()
    assert f"| {name} (plug-in) |" in board
    assert "park_martin (plug-in)" not in board and "| park_martin |" in board


def test_solver_module_through_the_cli(data, tmp_path):
    pkg = tmp_path / "mods" / "mypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "mysolvers.py").write_text(TOY_MODULE.format(name="toy_mod", ret="solvers.park_martin(A, B)"))
    out = tmp_path / "bench"
    proc = _kinhec(["benchmark", data, "--solver-module", "mypkg.mysolvers", "--solvers", "toy_mod", "park_martin",
                    "--tracks", "noise", "--out", out, "--workers", "2", "-q"], _env(tmp_path / "mods"), tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    _check_rows(out, "toy_mod", 2)
    # without the module the name is unknown, and the message lists the baselines
    proc = _kinhec(["benchmark", data, "--solvers", "toy_mod", "--out", tmp_path / "b2", "-q"], _env(), tmp_path)
    assert proc.returncode == 2 and "unknown solver 'toy_mod'" in proc.stderr and "park_martin" in proc.stderr


def test_solver_module_as_a_file_and_repeated(data, tmp_path):
    a = tmp_path / "one.py"
    a.write_text(TOY_MODULE.format(name="toy_one", ret="(solvers.park_martin(A, B),)"))
    b = tmp_path / "two.py"
    b.write_text(TOY_MODULE.format(name="toy_two", ret="solvers.park_martin(A, B).tolist()"))
    out = tmp_path / "bench"
    proc = _kinhec(["benchmark", data, "--solver-module", a, "--solver-module", b, "--solvers", "toy_one,toy_two",
                    "--solvers", "park_martin", "--tracks", "noise", "--out", out, "-q"], _env(), tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    _check_rows(out, "toy_one", 2)
    _check_rows(out, "toy_two", 2)


def test_entry_point_plugin_is_found_without_options(data, tmp_path):
    site = tmp_path / "site"
    (site / "epsolvers").mkdir(parents=True)
    (site / "epsolvers" / "__init__.py").write_text(TOY_MODULE.format(name="toy_ep", ret="solvers.park_martin(A, B)"))
    dist = site / "epsolvers-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: epsolvers\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[kinhec.solvers]\ntoy = epsolvers\n")
    out = tmp_path / "bench"
    proc = _kinhec(["benchmark", data, "--solvers", "toy_ep,park_martin", "--tracks", "noise", "--out", out, "-q"],
                   _env(site), tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    _check_rows(out, "toy_ep", 2)
    # the default solver list holds the baselines and the plug-in
    out2 = tmp_path / "bench_all"
    proc = _kinhec(["benchmark", data, "--tracks", "noise", "--max-sequences", "1", "--out", out2, "-q"], _env(site),
                   tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    seen = set(pd.read_parquet(_run_out(out2) / "results.parquet").solver)
    assert seen == set(registry.BASELINES) | {"toy_ep"}  # every solver on every sequence, as published
    # kinhec info lists it, marked
    proc = _kinhec(["info", "--json"], _env(site), tmp_path)
    assert proc.returncode == 0, proc.stderr
    import json

    listed = {s["name"]: s for s in json.loads(proc.stdout)["solvers"]}
    assert listed["toy_ep"]["plugin"] is True and listed["toy_ep"]["module"] == "epsolvers"
    assert "plugin" not in listed["shah"]


def test_broken_entry_point_is_one_line_naming_it(data, tmp_path):
    site = tmp_path / "site"
    dist = site / "broken-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[kinhec.solvers]\nbad = no_such_module_xyz\n")
    proc = _kinhec(["benchmark", data, "--out", tmp_path / "b", "-q"], _env(site), tmp_path)
    assert proc.returncode == 2  # a broken plug-in is bad input: one line naming it
    assert "entry point bad = no_such_module_xyz" in proc.stderr and "broken" in proc.stderr


GARBAGE = {
    "g_str": ("axxb", lambda A, B: "garbage"),
    "g_none": ("axxb", lambda A, B: None),
    "g_3x3": ("axxb", lambda A, B: np.eye(3)),
    "g_tuple3": ("axxb", lambda A, B: (np.eye(4), 1.0, 2.0)),
    "g_scale_str": ("axxb", lambda A, B: (np.eye(4), "one")),
    "g_raises": ("axxb", lambda A, B: 1 / 0),
    "g_nan": ("axxb", lambda A, B: np.full((4, 4), np.nan)),
    "g_axyb_bare": ("axyb", lambda A, B: np.eye(4)),
    "g_axyb_short": ("axyb", lambda A, B: (np.eye(4),)),
}


def test_garbage_gives_ok_false_rows_with_the_reason(data, cleanup):
    man = kio.load_manifest(data)
    seq = kio.load_sequence(data, man.sequence_id.iloc[0], man)
    for name, (kind, fn) in GARBAGE.items():
        solvers.register(name, kind, fn)
        cleanup.append(name)
    solvers.register("g_good_tuple", "axyb", lambda A, B: (seq.X, seq.Y))
    cleanup.append("g_good_tuple")
    df = evaluate_sequence(seq, solvers=list(GARBAGE) + ["g_good_tuple", "park_martin"], sync=["oracle"])
    row = df.set_index("solver")
    for name in GARBAGE:
        assert not row.loc[name, "ok"], name
        assert row.loc[name, "error"], name
    assert row.loc["g_str", "error"].startswith("SolverOutputError: solver 'g_str' (axxb): expected a 4x4 array X")
    assert "got str" in row.loc["g_str", "error"]
    assert "got NoneType" in row.loc["g_none", "error"]
    assert "got ndarray of shape (3, 3)" in row.loc["g_3x3", "error"]
    assert row.loc["g_raises", "error"] == "ZeroDivisionError: division by zero"
    assert row.loc["g_nan", "error"].startswith("NonFiniteEstimate")
    assert "expected the tuple (X, Y)" in row.loc["g_axyb_bare", "error"]
    # a right answer in tuple form is scored like any other: zero error against the truth
    assert row.loc["g_good_tuple", "ok"] and row.loc["g_good_tuple", "X_rot_err_deg"] < 1e-6
    assert row.loc["g_good_tuple", "Y_trans_err_mm"] < 1e-6
    assert row.loc["park_martin", "ok"]


def test_a_bare_array_solver_put_into_SOLVERS_by_hand_is_normalised(data, cleanup):
    # the crash: a run returning an ndarray ('numpy.ndarray' object has no attribute 'X')
    man = kio.load_manifest(data)
    seq = kio.load_sequence(data, man.sequence_id.iloc[0], man)
    registry.SOLVERS["by_hand"] = registry.SolverSpec("by_hand", "axxb", solvers.park_martin, "X", "", "")
    cleanup.append("by_hand")
    df = evaluate_sequence(seq, solvers=["by_hand", "park_martin"], sync=["oracle"]).set_index("solver")
    assert df.loc["by_hand", "ok"]
    assert df.loc["by_hand", "X_rot_err_deg"] == df.loc["park_martin", "X_rot_err_deg"]


def test_normalise_result_forms():
    X = se3.transform_from_rotation_translation(np.eye(3), [0.1, 0.2, 0.3])
    assert registry.normalise_result(X, "axxb").X is X or np.array_equal(registry.normalise_result(X, "axxb").X, X)
    r = registry.normalise_result((X, 2.5), "axxb")
    assert np.array_equal(r.X, X) and r.scale == 2.5 and r.Y is None
    r = registry.normalise_result((X, 2 * X), "axyb")
    assert np.array_equal(r.Y, 2 * X)
    with pytest.raises(SolverOutputError, match=r"solver 'x' \(axxb\): expected X, \(X,\) or \(X, scale\)"):
        registry.normalise_result((X, X, X), "axxb", "x")
    with pytest.raises(SolverOutputError, match="expected Y as a 4x4 array, got str"):
        registry.normalise_result((X, "Y"), "axyb", "x")


def test_register_checks_its_arguments(cleanup):
    with pytest.raises(InputError, match="'park_martin' is a kinhec baseline"):
        solvers.register("park_martin", "axxb", solvers.park_martin)
    with pytest.raises(UnknownNameError, match="unknown solver kind 'AXXB'"):
        solvers.register("mine", "AXXB", solvers.park_martin)
    with pytest.raises(InputError, match="expected a callable"):
        solvers.register("mine", "axxb", "park_martin")
    with pytest.raises(InputError, match="expected a solver name"):
        solvers.register("my solver", "axxb", solvers.park_martin)

    @solvers.register("mine", "axxb")
    def mine(A, B):
        return solvers.park_martin(A, B)

    cleanup.append("mine")
    assert solvers.get_solver("mine").plugin and solvers.is_plugin("mine") and not solvers.is_plugin("shah")
    solvers.register("mine", "axxb", mine)  # the same function again (a module imported twice): accepted
    with pytest.raises(InputError, match="already registered"):
        solvers.register("mine", "axxb", solvers.tsai_lenz)
    solvers.register("mine", "axxb", solvers.tsai_lenz, replace=True)
    solvers.unregister("mine")
    with pytest.raises(InputError, match="only plug-in solvers can be removed"):
        solvers.unregister("shah")


def test_plugin_in_process_marked_in_figures(data, tmp_path, cleanup):
    pytest.importorskip("matplotlib")
    from kinhec.report.viz import _style

    solvers.register("toy_fig", "axxb", lambda A, B: solvers.park_martin(A, B))
    cleanup.append("toy_fig")
    s = run_benchmark(data, out=tmp_path / "b", solvers=["toy_fig", "shah"], tracks=["noise"], sync=["oracle"])
    assert s.ok and set(s.results.solver) == {"toy_fig", "shah"}
    assert _style.solver_label("toy_fig") == "toy_fig (plug-in)" and _style.solver_label("shah") == "shah"
    import json

    proto = json.loads((s.out / "protocol.json").read_text())
    entry = {e["name"]: e for e in proto["solvers"]}
    assert entry["toy_fig"]["plugin"] is True and "plugin" not in entry["shah"]


def test_solver_module_that_cannot_be_imported(tmp_path):
    with pytest.raises(InputError, match="solver module 'no_such_mod_abc': expected an importable module"):
        solvers.load_plugins(["no_such_mod_abc"], entry_points=False)
    with pytest.raises(InputError, match="expected an existing .py file"):
        solvers.load_plugins([str(tmp_path / "nope.py")], entry_points=False)


def test_example_13_toy_solver_is_exact_on_exact_motions():
    src = Path(__file__).resolve().parents[1] / "examples" / "13_own_solver.py"
    ns: dict = {"__name__": "example13"}
    before = dict(registry.SOLVERS)
    try:
        exec(compile(src.read_text(), str(src), "exec"), ns)
    finally:
        registry.SOLVERS.clear()
        registry.SOLVERS.update(before)
    rng = np.random.default_rng(3)
    X = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(size=3)), rng.normal(size=3) * 0.1)
    A = np.stack([se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(size=3)),
                                                           rng.normal(size=3)) for _ in range(6)])  # fmt: skip
    B = se3.invert_transform(X) @ A @ X
    rot, trans = se3.pose_error(ns["axis_mean"](A, B), X)
    assert rot < 1e-9 and trans < 1e-9
