"""Every script in examples/ runs on a generated smoke copy and prints the numbers it promises."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import kinhec

pytestmark = pytest.mark.heavy  # thirteen scripts in subprocesses, about 15 s

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# script -> patterns that must all appear in its standard output (real numbers, not just a banner)
EXPECTED = {
    "01_load_and_inspect.py": [r"^46 sequences", r"A_i X = Y B_i on \d+ true pose pairs: max residual \d\.\d+e-1\d deg"],
    "02_axxb_calibration.py": [r"^park_martin\s+\d+\.\d{4}\s+\d+\.\d{3}\s+\d\.\de-1\d", r"^park_martin\+lm\s+\d"],
    "03_axyb_calibration.py": [r"^\s+shah\s+\d+\.\d{4}", r"^\s+shah\+lm\s+\d+\.\d{4}", r"eye_to_hand"],
    "04_noise_robustness.py": [r"over 16 sequences of the noise track",
                               r"grows from \d+\.\d+ mm \(c1\) to \d+\.\d+ mm \(c4\)"],
    "05_degeneracy.py": [r"refused: DegenerateMotionError", r"^degenerate motions .* median translation error",
                         r"^general motions"],
    "06_clock_offset.py": [r"^temporal-000000\s+50\.00\s+-?\d+\.\d\d", r"median \|offset error\| \d+\.\d+ ms"],
    "07_outliers_ransac.py": [r"fraction=0\.2\|model=planar_flip", r"ransac_axxb \d+\.\d+ mm"],
    "08_monocular_scale.py": [r"^monocular-000000\s+ur5e\s+se3_gaussian\s+2\.00\s+\d+\.\d{3}",
                              r"median relative scale error"],
    "09_robot_model_errors.py": [r"nominal FK\(q_meas\) vs reported pose : max \d\.\de-1\d deg",
                                 r"largest DH length error", r"shah: X error"],
    "10_pnp_image_formation.py": [r"visibility flags reproduced: True", r"depth error std \d+\.\d+ mm vs lateral"],
    "11_custom_tier.py": [r"planned: \{'noise': 4, 'pnp': 4\} \(8 sequences\)", r"generated 8 sequences",
                          r"pnp\s+pixel_std=1\.0\|.*median X error"],
    "13_own_solver.py": [r"^axis_mean\s+ok (\d+)/\1\s+median X error \d+\.\d{3} deg / \d+\.\d\d mm",
                         r"^park_martin\s+ok", r"^leaderboard: .*leaderboard\.md"],
    "12_export.py": [r"TUM round trip of \d+ robot poses: max \d\.\de-\d+ deg",
                     r"time stamps identical to the loader: True"],
}  # fmt: skip


def test_every_example_is_listed():
    scripts = sorted(p.name for p in EXAMPLES.glob("[0-9][0-9]_*.py"))
    assert scripts == sorted(EXPECTED)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, smoke_tier):
    data = tmp_path_factory.mktemp("examples") / "data"
    shutil.copytree(smoke_tier, data)  # the examples may write beside the data: a copy of the run's smoke tier
    assert len(kinhec.load_manifest(data)) == 46

    def run(name):
        proc = subprocess.run(
            [sys.executable, str(EXAMPLES / name), str(data)],
            capture_output=True, text=True, timeout=120, cwd=data.parent,
        )  # fmt: skip
        return name, proc

    with ThreadPoolExecutor(max_workers=2) as pool:  # two scripts at a time
        return dict(pool.map(run, sorted(EXPECTED)))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_and_prints_results(runs, name):
    proc = runs[name]
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    for pattern in EXPECTED[name]:
        assert re.search(pattern, proc.stdout, re.MULTILINE), f"{name}: no line matching {pattern!r} in\n{proc.stdout}"
    assert not re.search(r"\bnan\b", proc.stdout, re.IGNORECASE), f"{name} printed NaN:\n{proc.stdout}"
    assert "Warning" not in proc.stderr, f"{name} warned:\n{proc.stderr}"


def test_example_reports_a_missing_folder(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "01_load_and_inspect.py"), str(tmp_path / "nowhere")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: ") and "expected a dataset folder" in proc.stderr
    assert "Traceback" not in proc.stderr
