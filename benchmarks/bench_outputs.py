"""CPU and peak memory of a benchmark's last phase (assembling the parts, writing the outputs) at a large size.

Usage::

    python benchmarks/bench_outputs.py RESULTS.parquet [--rows 855756] [--repeats 1]

The full tier's ``mixed`` track gives 855,756 result rows, and the parent
process of its benchmark holds them all while it writes ``results.parquet``,
``results.csv``, the leaderboard and ``summary.json``.  This script builds a
results table of ``--rows`` rows by repeating the rows of ``RESULTS.parquet``
(a small tier's results; every copy gets its own sequence ids), writes it as
parts, and times :func:`kinhec.evaluate.benchmark.run._assemble` plus
:func:`kinhec.evaluate.benchmark.run._write_outputs` in a fresh process, printing the CPU
time and the process's peak resident memory before and after the phase.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
import pyarrow.parquet as pq
from kinhec.evaluate.benchmark import protocol, run as b

parts, out, root = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
paths = sorted(parts.glob("*.parquet"))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
c0 = time.process_time()
table = b._assemble(paths)
summary = b.BenchmarkSummary(root=root, out=out, solvers=b._registry.evaluated_names(), sync=list(protocol.EVAL_SYNCS),
                             tracks=sorted(set(table.column("track").to_pylist())))
files, results = b._write_outputs(out, table, summary)
cpu = time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(json.dumps({"rows": table.num_rows, "cpu_s": round(cpu, 2), "rss_before_mb": round(before),
                  "peak_mb": round(peak)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--rows", type=int, default=855_756)
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    base = pq.read_table(args.results).replace_schema_metadata(None)
    copies = -(-args.rows // base.num_rows)
    with tempfile.TemporaryDirectory() as tmp:
        parts, root = Path(tmp) / "parts", Path(tmp) / "data"
        parts.mkdir()
        root.mkdir()
        left = args.rows
        for k in range(copies):
            t = base.slice(0, min(left, base.num_rows))
            ids = t.column("sequence_id").cast(pa.string())
            sid = pc.binary_join_element_wise(ids, pa.scalar(f"c{k:04d}"), "-").cast(t.schema.field("sequence_id").type)
            t = t.set_column(t.schema.get_field_index("sequence_id"), "sequence_id", sid)
            pq.write_table(t, parts / f"part-{k:04d}.parquet")
            left -= t.num_rows
        for r in range(args.repeats):
            out = Path(tmp) / f"out{r}"
            res = subprocess.run([sys.executable, "-c", _CHILD, str(parts), str(out), str(root)],
                                 capture_output=True, text=True, check=True)  # fmt: skip
            print(json.loads(res.stdout.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
