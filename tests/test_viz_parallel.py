"""Figures drawn by several worker processes are the same bytes, in the same order, as drawn in one process."""

from __future__ import annotations

import hashlib

import pytest

from kinhec.report import viz
from kinhec.util.errors import InputError

from helpers.figure_runs import full_run, smoke, with_results  # noqa: F401  (module fixtures of the figure tests)


def _sha(p) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.heavy
def test_parallel_figures_are_byte_identical(full_run, tmp_path):  # noqa: F811
    root, serial_paths, serial_messages = full_run
    messages: list[str] = []
    paths = viz.make_figures(root, out=tmp_path / "par", sequences=["pnp-000000", "temporal-000000"],
                             on_progress=messages.append, workers=2)  # fmt: skip
    assert [p.name for p in paths] == [p.name for p in serial_paths]
    assert len(paths) >= 15
    for a, b in zip(serial_paths, paths):
        assert _sha(a) == _sha(b), a.name
    # the same messages in the same order (the timings aside)
    strip = lambda ms: [m.split(" (")[0].replace(str(tmp_path / "par"), "OUT") for m in ms]  # noqa: E731
    assert strip(messages) == [m.replace(str(serial_paths[0].parent), "OUT") for m in strip(serial_messages)]


def test_bad_workers(smoke, tmp_path):  # noqa: F811
    with pytest.raises(InputError, match="workers: expected an integer >= 1, got 0"):
        viz.make_figures(smoke, out=tmp_path, workers=0)
