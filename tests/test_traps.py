"""The smaller traps a careful user walks into, each with the behaviour expected of kinhec."""

from __future__ import annotations

import json
import shutil
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec import io as kio
from kinhec import solvers
from kinhec.geometry import se3
from kinhec.cli import main
from kinhec.util.errors import DatasetFormatError, InputError
from kinhec.geometry.motion import relative_motions, select_keyframes
from kinhec.synth.runner import generate_dataset
from kinhec.solvers import AbsolutePosesWarning
from kinhec.solvers.ransac import RANSAC_SEED


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("traps") / "smoke"
    assert generate_dataset("smoke", root, workers=1, tracks=["noise", "pnp"], limit=2, progress=False).ok
    return root


# --- --tracks noise DATA -------------------------------------------------------------------------------------------
def test_multi_value_option_leaves_DATA_alone(data, tmp_path):
    out = tmp_path / "b"
    r = CliRunner().invoke(main, ["benchmark", "--tracks", "noise", str(data), "--solvers", "shah", "park_martin",
                                  "--out", str(out), "-q", "--sync", "oracle"])  # fmt: skip
    assert r.exit_code == 0, r.output
    import pandas as pd

    (sub,) = (out / "subsets").iterdir()  # a run over some solvers: its own folder
    df = pd.read_parquet(sub / "results.parquet")
    assert set(df.track) == {"noise"} and set(df.solver) == {"shah", "park_martin"}
    # a word that is not a track ends the list too (here: a DATA that does not exist)
    r = CliRunner().invoke(main, ["benchmark", "--tracks", "noise", "pnp", "md2"])
    assert r.exit_code == 2 and "'md2' does not exist" in r.output
    # commas still work, and the help says how the list ends
    r = CliRunner().invoke(main, ["benchmark", str(data), "--tracks", "noise,pnp", "--solvers", "shah", "--out",
                                  str(tmp_path / "c"), "-q", "--sync", "oracle"])  # fmt: skip
    assert r.exit_code == 0, r.output
    help_text = " ".join(CliRunner().invoke(main, ["benchmark", "--help"]).output.split())
    assert "several words or commas: --tracks noise pnp or noise,pnp" in help_text


def test_visualize_sequences_leave_DATA_alone(data):
    from kinhec.cli import _MultiValue

    opt = _MultiValue(["--sequences"])
    assert opt._takes("noise-000000") and not opt._takes(str(data)) and not opt._takes("--out")


# --- absolute poses given to an A X = X B solver -----------------------------------------------------------------
def test_absolute_poses_to_an_axxb_solver_warn(data):
    man = kio.load_manifest(data)
    seq = kio.load_sequence(data, man.sequence_id.iloc[0], man)
    Aabs, Babs = seq.axyb_keyframe_poses()
    with pytest.warns(AbsolutePosesWarning, match=r"expected relative motions .* Sequence\.axxb_motions"):
        X_wrong = solvers.park_martin(Aabs, Babs)
    assert se3.pose_error(X_wrong, seq.X)[0] > 5.0  # the answer this habit gives is far off
    A, B = relative_motions(Aabs), relative_motions(Babs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the right input: no warning at all
        X = solvers.park_martin(A, B)
    assert se3.pose_error(X, seq.X)[0] < 2.0


def test_outlying_motions_do_not_trigger_the_absolute_pose_warning():
    rng = np.random.default_rng(4)
    X = se3.random_poses(rng, 1)[0]
    A = se3.random_poses(rng, 30)
    B = se3.invert_transform(X) @ A @ X
    B[:12] = se3.random_poses(rng, 12)  # 40 % outliers: relative motions all the same
    with warnings.catch_warnings():
        warnings.simplefilter("error", AbsolutePosesWarning)
        solvers.ransac_axxb(A, B)


# --- keyframe thresholds -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad, match", [("5", r"min_rot_deg: expected a number in \[0, 180\], got str '5'"),
                                        (-1, r"min_rot_deg: expected a number in \[0, 180\], got -1"),
                                        (float("nan"), "min_rot_deg"), (True, "got bool")])  # fmt: skip
def test_min_rot_deg_is_checked(data, bad, match):
    man = kio.load_manifest(data)
    seq = kio.load_sequence(data, man.sequence_id.iloc[0], man)
    with pytest.raises(InputError, match=match):
        seq.axxb_motions(min_rot_deg=bad)
    with pytest.raises(InputError, match="min_trans_m"):
        select_keyframes(seq.robot.T_base_ee_meas, min_trans_m=-0.1)
    assert seq.axxb_motions(min_rot_deg=np.float32(5))[0].shape == seq.axxb_motions(min_rot_deg=5)[0].shape


# --- ransac_axxb without rng -----------------------------------------------------------------------------------------
def _outlier_motions(seed: int, rot_std: float = 0.004, trans_std: float = 0.003):
    rng = np.random.default_rng(seed)
    X = se3.random_poses(rng, 1, trans_std_m=0.1)[0]
    A = se3.random_poses(rng, 40, trans_std_m=0.2)
    B = se3.invert_transform(X) @ A @ X
    B = B @ se3.se3_exp(np.concatenate([rng.normal(0, rot_std, (40, 3)), rng.normal(0, trans_std, (40, 3))], axis=1))
    B[:10] = se3.random_poses(rng, 10, trans_std_m=0.2)
    return A, B, X


def test_ransac_axxb_default_rng_is_seeded_and_documented():
    A, B, X = _outlier_motions(1)
    r1, r2 = solvers.ransac_axxb(A, B), solvers.ransac_axxb(A, B)
    r3 = solvers.ransac_axxb(A, B, np.random.default_rng(RANSAC_SEED))
    assert np.array_equal(r1.X, r2.X) and np.array_equal(r1.X, r3.X)
    assert se3.pose_error(r1.X, X)[0] < 1.0
    assert "default_rng(RANSAC_SEED)" in solvers.ransac_axxb.__doc__


def test_registry_ransac_does_not_jump_on_last_bit_changes():
    # the cause of the leaderboard cells that did not reproduce: the seed was a CRC of the input bytes, so a
    # one-ulp difference in the motions (another BLAS build or CPU) drew other samples and gave another X
    run = solvers.get_solver("ransac_park_martin").run
    for seed in range(12):  # noisy enough that the inlier sets are borderline (the CRC seed changed 3 of 12)
        A, B, X = _outlier_motions(100 + seed, 0.02, 0.01)
        B2 = B.copy()
        B2[:, :3, 3] = np.nextafter(B2[:, :3, 3], np.inf)  # one ulp on every camera translation
        x1, x2 = run(A, B).X, run(A, B2).X
        assert np.abs(x1 - x2).max() < 1e-9, seed


# --- load_manifest and sequence ids ------------------------------------------------------------------------------------
def test_load_manifest_accepts_the_index_file(data):
    by_folder = kio.load_manifest(data)
    by_file = kio.load_manifest(data / "sequences.parquet")
    assert by_file.equals(by_folder)
    with pytest.raises(DatasetFormatError, match=r"robots\.json: expected a dataset folder \(or its sequences"
                                                 r"\.parquet\), got a file"):
        kio.load_manifest(data / "robots.json")


def test_unknown_sequence_id_suggests_close_ones(data):
    man = kio.load_manifest(data)
    with pytest.raises(InputError, match=r"unknown sequence 'noise-00001'; did you mean 'noise-000001'"):
        kio.load_sequence(data, "noise-00001")
    with pytest.raises(InputError, match=r"unknown sequence 'nosie-000000'; did you mean 'noise-000000'"):
        kio.load_sequence(data, "nosie-000000", man)
    with pytest.raises(InputError, match=r"did you mean 'pnp-000001'"):
        list(kio.iter_sequences(data, man, sequence_ids=["pnp-00001"]))


# --- a folder being generated ------------------------------------------------------------------------------------------
def test_validate_says_a_folder_being_generated_is_in_use(data, tmp_path):
    from kinhec.dataset.validate import validate_dataset

    lock = data / ".kinhec" / "lock"
    lock.parent.mkdir(exist_ok=True)
    lock.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": time.time(),
                                "command": "kinhec generate small --out data"}))
    try:
        with pytest.raises(InputError, match=r"in use: kinhec generate small --out data \(pid \d+ .*\) is writing it"):
            validate_dataset(data)
        r = CliRunner().invoke(main, ["validate", str(data), "-q"])
        assert r.exit_code == 1 and "in use" in r.output
        # benchmark and report say so too, naming the writer (before its index exists as well as after)
        for args, verb in ((["benchmark", str(data), "-q"], "benchmark it"), (["report", str(data), "-q"], "report on it")):
            r = CliRunner().invoke(main, args)
            assert r.exit_code == 1 and "in use: kinhec generate small --out data" in r.output and verb in r.output, r.output
        copy = tmp_path / "being_written"
        shutil.copytree(data, copy, ignore=shutil.ignore_patterns("sequences.parquet", "sequences.csv"))
        for args in (["benchmark", str(copy), "-q"], ["report", str(copy), "-q"], ["validate", str(copy), "-q"]):
            r = CliRunner().invoke(main, args)
            assert r.exit_code == 1 and "in use" in r.output and "not a kinhec dataset" not in r.output, (args, r.output)
        with pytest.raises(InputError, match="in use"):
            kio.load_manifest(copy)
        # a lock left by a process that is gone does not count
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        lock.write_text(json.dumps({"pid": int(dead.stdout), "host": socket.gethostname(), "started": 0}))
        assert validate_dataset(data, max_sequences=1).ok
    finally:
        lock.unlink(missing_ok=True)


# --- workers die with their parent ---------------------------------------------------------------------------------------
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL of a process tree is POSIX")
def test_pool_workers_die_with_a_killed_parent(tmp_path):
    script = textwrap.dedent(
        """
        import sys, time
        from kinhec.util.executors import LocalExecutor
        ex = LocalExecutor(time.sleep, 2)
        futs = [ex.submit(60) for _ in range(2)]
        time.sleep(1.0)
        print(" ".join(str(p) for p in ex.pool._processes), flush=True)
        time.sleep(120)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 5.0
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(p) for p in pids), "workers outlived their killed parent"
    finally:
        parent.kill()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"  # a zombie is dead, only not yet reaped
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
