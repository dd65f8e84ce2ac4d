"""Long runs: subset benchmark runs keep a full run intact, scratch state stays out of the upload, one lock for
every writer, and a second Ctrl+C stops at once while the next run still resumes to the same folder."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kinhec.evaluate.benchmark import run_benchmark
from kinhec.util.errors import InputError
from kinhec.util.fingerprint import run_fingerprint
from kinhec.util.locking import lock_holder, writer_lock
from kinhec.synth.runner import generate_dataset

from helpers.upload import UPLOAD_EXCLUDE, published_files, upload_command

REPO = Path(__file__).resolve().parents[1]


def _digest(root: Path, skip=(".kinhec/", "README.md")) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not any(rel.startswith(s) for s in skip):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("scale") / "data"
    s = generate_dataset("smoke", root, workers=1, limit=1, tracks=["noise", "temporal", "monocular"], progress=False)
    assert s.ok
    return root


def test_fingerprint_depends_on_every_input():
    base = dict(solvers=["shah"], sync=["oracle"], sequence_ids=["noise-000000"], protocol_version="1",
                kinhec_version="0.1.0")  # fmt: skip
    fp = run_fingerprint(**base)
    assert fp == run_fingerprint(**base) and len(fp) == 16
    for key, other in [("solvers", ["park_martin"]), ("sync", ["estimated"]), ("sequence_ids", ["noise-000001"]),
                       ("protocol_version", "2"), ("kinhec_version", "0.2.0")]:  # fmt: skip
        assert run_fingerprint(**{**base, key: other}) != fp, key
    # the ids are hashed one per line: no two lists collide by concatenation
    assert run_fingerprint(**{**base, "sequence_ids": ["ab", "c"]}) != run_fingerprint(**{**base, "sequence_ids": ["a", "bc"]})


def test_a_subset_run_never_replaces_a_full_run(tiny):
    full = run_benchmark(tiny)
    assert full.ok and not full.subset and full.out == tiny / "benchmarks"
    before = _digest(tiny / "benchmarks")
    for kwargs in ({"solvers": ["shah"]}, {"sync": ["oracle"]}, {"max_sequences": 1, "tracks": ["noise"]}):
        sub = run_benchmark(tiny, **kwargs)
        assert sub.ok and sub.subset
        assert sub.out == tiny / "benchmarks" / "subsets" / sub.fingerprint
        assert (sub.out / "results.parquet").is_file()
        assert json.loads((sub.out / "summary.json").read_text())["fingerprint"] == sub.fingerprint
        after = {k: v for k, v in _digest(tiny / "benchmarks").items() if not k.startswith("subsets/")}
        assert after == before, kwargs  # the full run's files are untouched
        assert sub.parts_dir != full.parts_dir and sub.parts_dir.is_relative_to(tiny / ".kinhec")
    # the full run resumes from its own parts
    again = run_benchmark(tiny)
    assert again.skipped_units == again.planned_units and again.computed_units == 0


def test_scratch_state_is_not_uploaded(tiny):
    run_benchmark(tiny, solvers=["park_martin"], sync=["oracle"])
    (tiny / "robot" / "noise-00009.parquet.tmp").write_bytes(b"half")
    try:
        files = published_files(tiny)
    finally:
        (tiny / "robot" / "noise-00009.parquet.tmp").unlink()
    assert "sequences.parquet" in files and "benchmarks/results.parquet" in files
    assert any(f.startswith("robot/") for f in files) and any(f.startswith("camera/") for f in files)
    scratch = [f for f in files if f.startswith((".kinhec/", "benchmarks/subsets/")) or f.endswith(".tmp")]
    assert not scratch
    # scratch does exist on disk: the recipe is what keeps it out
    assert any((tiny / ".kinhec").rglob("*.parquet")) and (tiny / "benchmarks" / "subsets").is_dir()
    cmd = upload_command(tiny, "user/kinhec-smoke")
    for pat in UPLOAD_EXCLUDE:
        assert f"--exclude '{pat}'" in cmd or f"--exclude {pat}" in cmd
    doc = (REPO / "docs" / "performance.md").read_text()
    for pat in UPLOAD_EXCLUDE:
        assert pat in doc, f"docs/performance.md: the upload recipe does not exclude {pat}"


def test_one_lock_for_every_writer(tiny, tmp_path):
    from click.testing import CliRunner

    from kinhec.cli import main

    with writer_lock(tiny):
        holder = lock_holder(tiny / ".kinhec" / "lock")
        assert holder["pid"] == os.getpid() and holder["command"]
        with pytest.raises(InputError, match=rf"pid {os.getpid()} on .* running '.*'"):
            generate_dataset("smoke", tiny, workers=1, limit=1, tracks=["noise", "temporal", "monocular"], progress=False)
        with pytest.raises(InputError, match=rf"in use: .* \(pid {os.getpid()} on .*\) is writing it; benchmark it when"):
            run_benchmark(tiny, solvers=["shah"])
        res = CliRunner().invoke(main, ["index", str(tiny)])
        assert res.exit_code == 1 and f"pid {os.getpid()}" in res.output
    assert not (tiny / ".kinhec" / "lock").exists()
    assert CliRunner().invoke(main, ["index", str(tiny)]).exit_code == 0


def _second_ctrl_c(proc, draining):
    """Send the second Ctrl+C once the first is being handled; return the seconds the process took to stop.

    Two SIGINTs that arrive before Python's handler has run count as one: on a loaded machine the main
    thread can go unscheduled for a second, so the test waits for the runner to say it is draining.
    """
    deadline = time.monotonic() + 30
    while not draining.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the first Ctrl+C was never handled"
        time.sleep(0.05)
    time.sleep(0.2)
    assert proc.poll() is None  # the first Ctrl+C waits for the running tasks
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    return time.monotonic() - t0


_SLOW_GENERATE = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # a parent started in the background may ignore SIGINT
import kinhec.synth.runner as r

original = r.run_shard

def run_shard(task):
    if task.shard_index == 0 and task.track == "noise":
        return original(task)
    time.sleep(120)  # a long shard: the first Ctrl+C would wait for it
    return original(task)

run_shard.__module__, run_shard.__qualname__ = "kinhec.synth.runner", "run_shard"
r.run_shard = run_shard

original_drain = r.drain_after_interrupt

def drain_after_interrupt(*args, **kwargs):  # the first Ctrl+C is being handled: say so (see _second_ctrl_c)
    open(os.environ["KINHEC_TEST_DRAINING"], "w").close()
    return original_drain(*args, **kwargs)

r.drain_after_interrupt = drain_after_interrupt
from kinhec.cli import main
sys.argv = ["kinhec"] + sys.argv[1:]
main()
"""


@pytest.mark.heavy
def test_a_second_ctrl_c_stops_at_once_and_the_next_run_resumes(tmp_path):
    ref = tmp_path / "ref"
    assert generate_dataset("smoke", ref, workers=2, limit=2, progress=False).ok
    out = tmp_path / "data"
    args = ["generate", "--tier", "smoke", "--out", str(out), "--workers", "2", "--limit", "2", "-q"]
    draining = tmp_path / "draining"
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_GENERATE, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            env=dict(os.environ, KINHEC_TEST_DRAINING=str(draining)))  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (out / "camera" / "noise-00000.parquet").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the first shard was never written"
            time.sleep(0.1)
        time.sleep(0.5)  # the slow shards are running now
        proc.send_signal(signal.SIGINT)
        stopped_in = _second_ctrl_c(proc, draining)
        output, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert stopped_in < 10, f"the second Ctrl+C took {stopped_in:.1f} s"
    assert proc.returncode != 0 and "stopped" in output, output
    assert not (out / ".kinhec" / "lock").exists()
    resumed = generate_dataset("smoke", out, workers=2, limit=2, progress=False)
    assert resumed.ok and resumed.skipped_shards >= 1
    assert not list(out.rglob("*.tmp"))
    assert _digest(out) == _digest(ref)


_SLOW_BENCHMARK = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # a parent started in the background may ignore SIGINT
import kinhec.evaluate.benchmark.run as b

original = b.run_unit
MARK = os.environ["KINHEC_TEST_MARK"]

def run_unit(task):
    try:  # the first unit to start runs at once, the others take long: the first Ctrl+C would wait for them
        os.close(os.open(MARK, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        time.sleep(120)
    return original(task)

run_unit.__module__, run_unit.__qualname__ = "kinhec.evaluate.benchmark.run", "run_unit"
b.run_unit = run_unit

original_drain = b.drain_after_interrupt

def drain_after_interrupt(*args, **kwargs):  # the first Ctrl+C is being handled: say so (see _second_ctrl_c)
    open(os.environ["KINHEC_TEST_DRAINING"], "w").close()
    return original_drain(*args, **kwargs)

b.drain_after_interrupt = drain_after_interrupt
from kinhec.cli import main
sys.argv = ["kinhec"] + sys.argv[1:]
main()
"""


@pytest.mark.heavy
def test_a_second_ctrl_c_stops_a_benchmark_at_once_and_it_resumes(tiny, tmp_path):
    import shutil

    import pandas as pd

    data = tmp_path / "data"
    shutil.copytree(tiny, data, ignore=shutil.ignore_patterns(".kinhec", "benchmarks"))
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_BENCHMARK, "benchmark", str(data), "--workers", "2", "-q",
                             "--solvers", "park_martin", "shah"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True,
                            env=dict(os.environ, KINHEC_TEST_MARK=str(tmp_path / "mark"),
                                     KINHEC_TEST_DRAINING=str(tmp_path / "draining")))  # fmt: skip
    draining = tmp_path / "draining"
    try:
        deadline = time.monotonic() + 60
        while not list(data.glob(".kinhec/benchmark/*/*.parquet")):
            assert proc.poll() is None and time.monotonic() < deadline, "the first unit was never written"
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        stopped_in = _second_ctrl_c(proc, draining)
        output, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert stopped_in < 10 and proc.returncode != 0 and "stopped" in output, output
    assert not (data / "benchmarks" / "subsets").exists() or not list((data / "benchmarks" / "subsets").rglob("results.parquet"))
    resumed = run_benchmark(data, solvers=["park_martin", "shah"])
    assert resumed.ok and resumed.skipped_units == 1 and resumed.computed_units == resumed.planned_units - 1
    reference = run_benchmark(tiny, solvers=["park_martin", "shah"])
    drop = ["runtime_ms", "time_offset_runtime_ms"]
    pd.testing.assert_frame_equal(resumed.results.drop(columns=drop), reference.results.drop(columns=drop))
