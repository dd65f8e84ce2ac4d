"""Where the benchmark's CPU goes: a single-process pass over a folder, phase by phase and solver by solver.

Shared by ``bench_benchmark.py``, ``bench_vs_published.py`` and ``bench_sequences.py``.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path


def phase_breakdown(root: Path, per_sequence: bool = False) -> dict:
    """CPU seconds (``time.process_time``) per phase and per solver over every sequence of ``root``, one process.

    Returns ``{"n": sequences, "phases": {phase: s}, "per_solver": {name: s}, "calls": {name: count}}``; the
    phases are the benchmark's own steps: reading, clock offset, pairing and keyframes, the solver calls and
    the Cramér-Rao bound columns, and the SciPy modules the solvers import on their first call.  With
    ``per_sequence`` the result also holds ``"sequences"``: one dict per sequence (``sequence_id``, ``track``,
    ``sync``, ``n_camera_frames``, ``evaluations`` and the same phases and solvers as keys, in CPU seconds;
    ``read`` is the time to read that sequence; the first-use imports are not in them).
    """
    from kinhec.evaluate.benchmark import sequence as bm
    from kinhec import io as kio
    from kinhec.solvers import registry, validated_stacks

    specs = [registry.evaluated_spec(n) for n in registry.evaluated_names()]
    phases = {"read": 0.0, "pair + keyframes": 0.0, "clock offset": 0.0, "solvers": 0.0, "bound columns": 0.0}
    # the libraries the solvers import on their first call, imported first so that no solver or sequence is
    # charged for them (0 when they are loaded already)
    t0 = time.process_time()
    import scipy.linalg  # noqa: F401
    import scipy.optimize  # noqa: F401
    import scipy.special  # noqa: F401

    phases["first-use imports (scipy)"] = time.process_time() - t0
    per_solver = {s.name: 0.0 for s in specs}
    calls = {s.name: 0 for s in specs}
    it = kio.iter_sequences(root, kio.load_manifest(root))
    rows = []
    n = 0
    while True:
        t0 = time.process_time()
        seq = next(it, None)
        t_read = time.process_time() - t0
        phases["read"] += t_read
        if seq is None:
            break
        n += 1
        row = dict.fromkeys([*phases, *per_solver], 0.0)
        row["read"] = t_read
        offsets = [None]
        if kio.is_asynchronous(seq.info.get("sync")):
            t0 = time.process_time()
            offsets.append(float(bm._estimate_offset(seq)[0].offset_s))
            dt = time.process_time() - t0
            phases["clock offset"] += dt
            row["clock offset"] += dt
        row.update(
            sequence_id=seq.info.get("sequence_id"),
            track=seq.info.get("track"),
            sync=seq.info.get("sync"),
            n_camera_frames=seq.info.get("n_camera_frames"),
            evaluations=len(offsets),
        )
        for off in offsets:
            t0 = time.process_time()
            inputs = bm._solver_input(seq, off)
            dt = time.process_time() - t0
            phases["pair + keyframes"] += dt
            row["pair + keyframes"] += dt
            # the stacks checked once for all the solvers, as the benchmark's units do (else every solver's
            # call would carry its own rigidity tests, about 0.2 ms each); the check counts as pairing
            with contextlib.ExitStack() as trusted:
                t0 = time.process_time()
                trusted.enter_context(validated_stacks(inputs["axxb"], inputs["axyb"]))
                dt = time.process_time() - t0
                phases["pair + keyframes"] += dt
                row["pair + keyframes"] += dt
                for spec in bm._solvers_for(seq.info, specs):
                    if spec.kind not in inputs:  # a pixel solver: its input is rebuilt by the benchmark itself
                        continue
                    t0 = time.process_time()
                    try:
                        spec.run(*inputs[spec.kind])
                    except Exception:  # failures cost time too; the benchmark records them
                        pass
                    dt = time.process_time() - t0
                    phases["solvers"] += dt
                    per_solver[spec.name] += dt
                    calls[spec.name] += 1
                    row["solvers"] += dt
                    row[spec.name] += dt
            t0 = time.process_time()
            bm.add_bound_columns([], seq, off, inputs["keyframes"])
            dt = time.process_time() - t0
            phases["bound columns"] += dt
            row["bound columns"] += dt
        rows.append(row)
    out = {"n": n, "phases": phases, "per_solver": per_solver, "calls": calls}
    if per_sequence:
        out["sequences"] = rows
    return out
