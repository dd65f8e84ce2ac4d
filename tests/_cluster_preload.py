"""Dask worker preload of tests/test_cluster.py: every shard takes half a second longer (nothing else changes).

The client sends ``kinhec.synth.runner.run_shard`` by reference, so the worker runs the wrapper below.
"""

import time

import kinhec.synth.runner as _runner

_original = _runner.run_shard


def run_shard(task):
    time.sleep(0.5)
    return _original(task)


run_shard.__module__, run_shard.__qualname__ = "kinhec.synth.runner", "run_shard"
_runner.run_shard = run_shard
