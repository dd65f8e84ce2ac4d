"""The light core: the numeric core runs with numpy and scipy only, and a missing optional package says which
extra brings it.

Each check runs in a fresh interpreter whose import system refuses the optional packages (a meta-path finder
that raises ``ModuleNotFoundError`` for them), so what passes does not need them -- it is not merely that
nothing happened to import them.  The truths are the poses the scenes are built from: noise-free, every
solver must give them back to rounding.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.util import optional
from kinhec.util.optional import MissingDependencyError, missing_dependency, require

#: Every optional package of the numeric core: none of them may be needed by it.
OPTIONAL = ("pandas", "pyarrow", "plotly", "matplotlib", "rich", "deflate", "click", "yaml", "jsonschema",
            "threadpoolctl")  # fmt: skip
#: The command line itself (click) stays importable where the command line is tested.
OPTIONAL_BUT_CLICK = tuple(m for m in OPTIONAL if m != "click")

_BLOCKER = '''
import importlib.abc, json, sys
BLOCKED = set(json.loads(sys.argv[1]))
class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
        return None
sys.meta_path.insert(0, _Blocker())
for _m in [m for m in sys.modules if m.split(".")[0] in BLOCKED]:  # nothing preloaded may serve them
    del sys.modules[_m]
ARGS = sys.argv[2:]
'''


def _run_blocked(code: str, blocked, *args, cwd=None) -> subprocess.CompletedProcess:
    script = _BLOCKER + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script, json.dumps(list(blocked)), *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=cwd)  # fmt: skip


def _scene(seed: int, n: int = 30):
    """Eye-in-hand poses with their truth: a camera on a cap 0.4-0.7 m above the target, looking at it.

    Returns ``(T_base_ee, T_target_cam, X = T_ee_cam, Y = T_base_target)``, noise-free, with
    ``T_base_ee = Y T_target_cam inv(X)``.
    """
    rng = np.random.default_rng(seed)
    d = np.column_stack([rng.normal(0, 0.5, (n, 2)), np.ones(n)])
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    z = -d  # the optical axis points at the target's origin
    x = np.cross([0.0, 1.0, 0.0], z)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    roll = se3.so3_exp(np.column_stack([np.zeros((n, 2)), rng.uniform(-1.5, 1.5, n)]))
    target_T_cam = se3.transform_from_rotation_translation(np.stack([x, np.cross(z, x), z], axis=2) @ roll,
                                                           rng.uniform(0.4, 0.7, (n, 1)) * d)  # fmt: skip
    X = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.3, 3)), rng.normal(0, 0.05, 3))
    Y = se3.transform_from_rotation_translation(se3.so3_exp([0.0, 0.0, rng.uniform(-3, 3)]), [0.6, 0.1, 0.0])
    return Y @ target_T_cam @ se3.invert_transform(X), target_T_cam, X, Y


def _write_tum(path: Path, T) -> Path:
    t = 100.0 + 0.1 * np.arange(len(T))
    q = se3.quaternion_from_matrix(T[:, :3, :3])  # w x y z
    rows = np.column_stack([t, T[:, :3, 3], q[:, 1:], q[:, :1]])
    path.write_text("# timestamp tx ty tz qx qy qz qw\n" + "".join(" ".join(map(repr, r)) + "\n" for r in rows.tolist()))
    return path


def _assert_pose(T, truth, what: str, deg: float = 1e-7, mm: float = 1e-6) -> None:
    rot_deg, trans_mm = se3.pose_error(np.asarray(T), truth)
    assert rot_deg < deg and trans_mm < mm, f"{what}: {rot_deg:.3g} deg, {trans_mm:.3g} mm from the truth"


# --------------------------------------------------------------------------- #
# the numeric core without the optional packages
# --------------------------------------------------------------------------- #
def test_numeric_core_imports_without_the_optional_packages():
    proc = _run_blocked("""
        import kinhec.solvers, kinhec.calibrate, kinhec.geometry.se3
        from kinhec.solvers import he_ml, park_martin, shah
        from kinhec.calibrate import calibrate, read_stream
        print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & BLOCKED)))
    """, OPTIONAL)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_he_ml_and_the_benchmarks_solvers_recover_the_truth_without_the_optional_packages(tmp_path):
    """``he_ml`` on the absolute pose pairs, and every baseline on the inputs the benchmark's worker gives them
    (the protocol's keyframes; ``A X = X B`` on the motions between consecutive ones).

    The worker itself (:func:`kinhec.evaluate.benchmark.sequence.evaluate_sequence`) takes a
    :class:`kinhec.io.Sequence`, read from the Parquet shards with its index row as a pandas Series, and returns
    its rows as a DataFrame: it needs pandas and pyarrow, its solvers do not.
    """
    hand, eye, X, Y = _scene(7)
    np.savez(tmp_path / "in.npz", hand=hand, eye=eye)
    proc = _run_blocked("""
        import numpy as np
        from kinhec.geometry import se3
        from kinhec.geometry.motion import select_keyframes
        from kinhec.solvers import he_ml, registry
        d = np.load(ARGS[0])
        hand, eye = d["hand"], d["eye"]
        out = {"he_ml X": he_ml(hand, eye, configuration="eye_in_hand", seed=0).X,
               "he_ml Y": he_ml(hand, eye, configuration="eye_in_hand", seed=0).Y}
        k = select_keyframes(hand)
        Ak, Bk = hand[k], eye[k]
        inputs = {"axyb": (Ak, Bk), "axxb": (se3.invert_transform(Ak[:-1]) @ Ak[1:], se3.invert_transform(Bk[:-1]) @ Bk[1:])}
        for name in registry.BASELINES:
            spec = registry.get_solver(name)
            res = registry.normalise_result(spec.run(*inputs[spec.kind]), spec.kind, name)
            out[name + " X"] = res.X
            if res.Y is not None:
                out[name + " Y"] = res.Y
        np.savez(ARGS[1], **out)
    """, OPTIONAL, tmp_path / "in.npz", tmp_path / "out.npz")
    assert proc.returncode == 0, proc.stderr
    out = dict(np.load(tmp_path / "out.npz"))
    from kinhec.solvers import registry

    assert {k.rsplit(" ", 1)[0] for k in out} == {"he_ml", *registry.BASELINES}
    for key, T in out.items():
        # the linear solvers' rounding grows with their conditioning: still 1e-6 mm, far below any noise
        _assert_pose(T, X if key.endswith(" X") else Y, key)


def test_calibrate_from_pose_files_without_the_optional_packages(tmp_path):
    hand, eye, X, Y = _scene(3)
    _write_tum(tmp_path / "hand.tum", hand)
    _write_tum(tmp_path / "eye.tum", eye)
    proc = _run_blocked("""
        import numpy as np
        from kinhec.calibrate import calibrate
        res = calibrate(ARGS[0], ARGS[1], setup="eye_in_hand", eye_pose="target_T_cam", offset="none")
        np.savez(ARGS[2], X=res.X, Y=res.Y, determined=res.determined, pairs=res.n_pairs)
    """, OPTIONAL, tmp_path / "hand.tum", tmp_path / "eye.tum", tmp_path / "out.npz")
    assert proc.returncode == 0, proc.stderr
    out = np.load(tmp_path / "out.npz")
    assert bool(out["determined"]) and int(out["pairs"]) == len(hand)
    _assert_pose(out["X"], X, "X")
    _assert_pose(out["Y"], Y, "Y")


def test_calibrate_command_without_the_packages_of_data_and_figures(tmp_path):
    """``kinhec calibrate`` on pose files needs click only, beside the numeric core."""
    hand, eye, X, Y = _scene(4)
    _write_tum(tmp_path / "hand.tum", hand)
    _write_tum(tmp_path / "eye.tum", eye)
    proc = _run_blocked("""
        from kinhec.__main__ import main
        sys.argv = ["kinhec", "calibrate", "--hand", ARGS[0], "--eye", ARGS[1], "--setup", "eye_in_hand",
                    "--eye-pose", "target_T_cam", "--offset", "none", "--json", ARGS[2]]
        main()
    """, OPTIONAL_BUT_CLICK, tmp_path / "hand.tum", tmp_path / "eye.tum", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads((tmp_path / "r.json").read_text())
    _assert_pose(d["X"], X, "X")
    _assert_pose(d["Y"], Y, "Y")


# --------------------------------------------------------------------------- #
# a missing optional package: one line naming it and its extra, exit status 2
# --------------------------------------------------------------------------- #
_CLI = """
from kinhec.__main__ import main
sys.argv = ["kinhec", *ARGS]
main()
"""


@pytest.mark.parametrize("blocked, args, line", [
    (["matplotlib"], ["visualize", "."], 'kinhec visualize: error: matplotlib is not installed: pip install "kinhec[viz]"'),
    (["plotly"], ["report", "."], 'kinhec report: error: plotly is not installed: pip install "kinhec[report]"'),
    (["deflate"], ["report", "."], 'kinhec report: error: deflate is not installed: pip install "kinhec[report]"'),
    (["matplotlib"], ["calibrate", "--hand", "hand.tum", "--eye", "eye.tum", "--figure", "f.png"],
     'kinhec calibrate: error: --figure needs matplotlib, which is not installed: pip install "kinhec[viz]"'),
    (["plotly"], ["calibrate", "--hand", "hand.tum", "--eye", "eye.tum", "--report", "r.html"],
     'kinhec calibrate: error: --report needs plotly, which is not installed: pip install "kinhec[report]"'),
    (["pandas"], ["validate", "."], 'kinhec validate: error: pandas is not installed: pip install "kinhec[data]"'),
    (["yaml"], ["plan", "--tier", "smoke"], 'kinhec plan: error: pyyaml is not installed: pip install "kinhec[data]"'),
    (["rich"], ["info"], 'kinhec info: error: rich is not installed: pip install "kinhec[cli]"'),
    (["click"], ["--help"], 'kinhec: error: the kinhec command needs click, which is not installed: pip install "kinhec[cli]"'),
])  # fmt: skip
def test_a_missing_package_is_one_line_naming_its_extra(tmp_path, blocked, args, line):
    proc = _run_blocked(_CLI, blocked, *args, cwd=tmp_path)
    assert (proc.returncode, proc.stderr.strip()) == (2, line), proc.stderr
    assert not list(tmp_path.iterdir())  # refused before anything was written


def test_the_figure_is_refused_before_the_calibration_runs(tmp_path):
    """``--figure`` without matplotlib stops at once: the poses (valid ones) are never read, nothing is written."""
    hand, eye, _, _ = _scene(5)
    _write_tum(tmp_path / "hand.tum", hand)
    _write_tum(tmp_path / "eye.tum", eye)
    proc = _run_blocked(_CLI, ["matplotlib"], "calibrate", "--hand", "hand.tum", "--eye", "eye.tum", "--json", "r.json",
                        "--figure", "f.png", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 2 and 'kinhec[viz]' in proc.stderr and proc.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eye.tum", "hand.tum"]


@pytest.mark.parametrize("blocked, call, message", [
    ("pandas", "import kinhec; kinhec.load_manifest",
     'kinhec.io.load_manifest needs pandas, which is not installed: pip install "kinhec[data]"'),
    ("pyarrow", "from kinhec.io import load_sequence",
     'kinhec.io.load_sequence needs pyarrow, which is not installed: pip install "kinhec[data]"'),
    ("plotly", "from kinhec.report.page import plotly_source; plotly_source()",
     'writing an HTML report page needs plotly, which is not installed: pip install "kinhec[report]"'),
    ("matplotlib", "from kinhec.report.viz import _style; _style.new_figure(1, 1)",
     'drawing the figures needs matplotlib, which is not installed: pip install "kinhec[viz]"'),
    # the packages installed only when asked for: the same line, with their own extra
    ("cv2", "from kinhec.vision._cv import require_cv2; require_cv2('target detection')",
     'target detection needs opencv-python-headless, which is not installed: pip install "kinhec[vision]"'),
    ("cv2", "from kinhec.evaluate.suite.opencv import _cv2; _cv2()",
     'the OpenCV harness needs opencv-python-headless, which is not installed: pip install "kinhec[vision]"'),
    ("rosbags", "from kinhec.calibrate.bags import _rosbags; _rosbags()",
     'reading ROS bags needs rosbags, which is not installed: pip install "kinhec[ros]"'),
    ("yourdfpy", "from kinhec.models.robot_files import robot_from_urdf; robot_from_urdf('arm.urdf', 'base', 'tool0')",
     'arm.urdf: reading a URDF needs yourdfpy, which is not installed: pip install "kinhec[robots]"'),
    ("dask", "from kinhec.util.executors import DaskExecutor; DaskExecutor(print, 1, None)",
     '--executor dask needs dask, which is not installed: pip install "kinhec[cluster]"'),
])  # fmt: skip
def test_the_python_api_names_the_extra_too(blocked, call, message):
    proc = _run_blocked(f"""
        from kinhec.util.optional import MissingDependencyError
        try:
            {call}
        except MissingDependencyError as exc:
            print(json.dumps([str(exc), isinstance(exc, ImportError)]))
    """, [blocked])
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [message, True]


def test_a_package_whose_own_dependency_is_missing_names_both():
    proc = _run_blocked("""
        from kinhec.util.optional import require
        try:
            require("matplotlib.figure", "the test")
        except ImportError as exc:
            print(exc)
    """, ["kiwisolver"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("the test needs matplotlib, which cannot be imported (")
    assert "kiwisolver" in proc.stdout and proc.stdout.rstrip().endswith('pip install "kinhec[viz]"')


# --------------------------------------------------------------------------- #
# the helper itself and pyproject.toml
# --------------------------------------------------------------------------- #
def test_require_returns_the_module_and_maps_only_known_packages():
    import json as json_module

    assert require("json") is json_module
    with pytest.raises(MissingDependencyError, match=r"^the test needs no_such_package_kx, which is not installed: "
                                                     r"pip install no_such_package_kx$"):  # fmt: skip
        require("no_such_package_kx", "the test")
    assert missing_dependency(ModuleNotFoundError("x", name="no_such_package_kx")) is None  # unknown: a bug, kept
    assert missing_dependency(ValueError("x")) is None
    mapped = missing_dependency(ModuleNotFoundError("x", name="pyarrow.parquet"))
    assert str(mapped) == 'pyarrow is not installed: pip install "kinhec[data]"'


def test_extras_of_pyproject_match_the_helper():
    """Each optional package's extra lists it; the base dependencies are the core, ``data``, ``cli`` and ``viz``
    (what the README's main job needs), so that ``pip install .`` runs it; ``report`` alone adds packages."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]

    def names(reqs):
        return {r.split(";")[0].split(">")[0].split("[")[0].strip().lower() for r in reqs}

    extras = {k: names(v) for k, v in project["optional-dependencies"].items()}
    base = names(project["dependencies"])
    dist = {"yaml": "pyyaml", "mpl_toolkits": "matplotlib", "cv2": "opencv-python-headless"}
    for module, extra in optional.EXTRA_OF.items():
        assert dist.get(module, module) in extras[extra], (module, extra)
    assert base == {"numpy", "scipy", "tomli"} | extras["data"] | extras["cli"] | extras["viz"]
    assert extras["report"] - base == {"plotly", "deflate"}
    assert {"plotly", "deflate"} <= extras["dev"]  # the tests of the report pages run with the dev extras
