"""A real Dask cluster: ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1.

The test generates a tier through ``kinhec generate --scheduler tcp://127.0.0.1:PORT --out data`` (a path
relative to the command's working directory, which is not the workers'), kills one worker while shards are
running, and checks that the folder is identical (sha256 of every file) to a local run; then it benchmarks
the folder through the same scheduler (``kinhec benchmark data``, relative again) and compares the results
with a local benchmark (every column except the two run times).  The workers load ``_cluster_preload.py``, which only makes each
shard take half a second longer, so that a worker is surely busy when it is killed.

The default tier is ``smoke`` (well under a minute); ``KINHEC_CLUSTER_TIER=small`` runs the same test on the
small tier (several minutes on two cores).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from kinhec.evaluate.benchmark import run_benchmark
from kinhec.synth.runner import generate_dataset

distributed = pytest.importorskip("distributed", reason="the cluster test needs dask[distributed] (dev extra)")

TIER = os.environ.get("KINHEC_CLUSTER_TIER", "smoke")
HERE = Path(__file__).resolve().parent
DASK = shutil.which("dask", path=str(Path(sys.executable).parent)) or shutil.which("dask")
SOLVERS = ["park_martin", "shah", "tsai_lenz"]
TIMEOUT_S = 600 if TIER != "smoke" else 120


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _digest(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith((".kinhec/", "benchmarks/")):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _comparable(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=["runtime_ms", "time_offset_runtime_ms"]).reset_index(drop=True)


class _Cluster:
    """Scheduler and workers as separate processes; everything is killed on exit."""

    def __init__(self, logs: Path) -> None:
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.logs = logs
        self.procs: dict[str, subprocess.Popen] = {}

    def _start(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "w")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
        # the workers' working directory is not the client's: a relative path sent to them would land here
        proc = subprocess.Popen([DASK, *args], stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                env=env, cwd=self.logs)  # fmt: skip
        self.procs[name] = proc
        return proc

    def __enter__(self):
        self._start("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard"])
        for k in range(2):
            self.start_worker(f"worker{k}")
        from distributed import Client

        with Client(self.address, timeout=60) as c:
            c.wait_for_workers(2, timeout=60)
        return self

    def start_worker(self, name: str) -> None:
        self._start(name, ["worker", self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                           "--name", name, "--preload", "_cluster_preload", "--death-timeout", "60"])  # fmt: skip

    def kill(self, name: str) -> None:
        proc = self.procs[name]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def __exit__(self, *exc) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for proc in self.procs.values():
            proc.wait(timeout=30)


@pytest.mark.skipif(DASK is None, reason="the dask command is not installed")
def test_a_real_cluster_gives_the_local_folder_despite_a_killed_worker(tmp_path):
    local = tmp_path / "local" / "data"  # same folder name: the dataset card names its folder
    assert generate_dataset(TIER, local, workers=2, progress=False).ok
    out = tmp_path / "cluster" / "data"
    out.parent.mkdir()
    logs = tmp_path / "logs"
    logs.mkdir()
    with _Cluster(logs) as cluster:
        cmd = [sys.executable, "-m", "kinhec", "generate", "--tier", TIER, "--out", "data",
               "--scheduler", cluster.address, "-q"]  # fmt: skip
        gen = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                               cwd=out.parent)  # fmt: skip
        try:
            deadline = time.monotonic() + TIMEOUT_S
            while not list(out.glob("camera/*.parquet")):
                assert gen.poll() is None, gen.communicate()[0]
                assert time.monotonic() < deadline, "no shard written"
                time.sleep(0.05)
            assert gen.poll() is None, "the run ended before a worker could be killed"
            cluster.kill("worker1")  # shards running on it are lost and rescheduled
            output, _ = gen.communicate(timeout=TIMEOUT_S)
        finally:
            if gen.poll() is None:
                os.killpg(gen.pid, signal.SIGKILL)
                gen.wait()
        assert gen.returncode == 0, output
        assert "9 shards written" in " ".join(output.split()) or TIER != "smoke", output
        assert _digest(out) == _digest(local)
        assert not (logs / "data").exists()  # nothing written under the workers' own working directory

        cluster.start_worker("worker2")
        bench = subprocess.run([sys.executable, "-m", "kinhec", "benchmark", "data", "--solvers", ",".join(SOLVERS),
                                "--scheduler", cluster.address, "-q"], cwd=out.parent, capture_output=True, text=True,
                               timeout=TIMEOUT_S)  # fmt: skip
        assert bench.returncode == 0, bench.stdout + bench.stderr
    here = run_benchmark(local, solvers=SOLVERS, workers=1)
    assert here.subset  # the same subset folder (same fingerprint) on both sides
    remote = pd.read_parquet(out / "benchmarks" / "subsets" / here.fingerprint / "results.parquet")
    assert len(remote) == len(here.results) > 0
    pd.testing.assert_frame_equal(_comparable(remote), _comparable(here.results))


def test_workers_that_do_not_see_the_folder_are_named(tmp_path):
    """The folder check before any work is sent: one worker shares the file system, one has a folder of the same
    name of its own (another machine); the error names that worker and the folder, and the probe is removed."""
    from kinhec.util.errors import InputError
    from kinhec.util.executors import DaskExecutor

    other_machine = tmp_path / "other_machine"

    class Client:  # the one method of dask.distributed.Client the check uses
        def run(self, fn, probe, token):
            there = other_machine / Path(probe).relative_to(Path(probe).anchor)
            there.parent.mkdir(parents=True, exist_ok=True)
            return {"tcp://10.0.0.1:4000": fn(probe, token), "tcp://10.0.0.2:4000": fn(str(there), token)}

    folder = tmp_path / "data"
    folder.mkdir()
    ex = DaskExecutor.__new__(DaskExecutor)  # no cluster: only the check
    ex.client = Client()
    with pytest.raises(InputError, match=r"data: expected every Dask worker to see this folder, got 1 of 2 that do not "
                                         r"\(tcp://10.0.0.2:4000: no file .*probe-[0-9a-f]{32}\); .*shared? "):  # fmt: skip
        ex.require_folder(folder)
    assert not list((folder / ".kinhec").iterdir())  # the probe file is gone

    class Everyone(Client):
        def run(self, fn, probe, token):
            return {"tcp://10.0.0.1:4000": fn(probe, token)}

    ex.client = Everyone()
    ex.require_folder(folder)  # passes
