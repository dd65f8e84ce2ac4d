"""Start-up time of the ``kinhec`` commands (fresh interpreter each time).

For each command prints the median wall time of the whole process over a few
runs, the bare interpreter's time beside it, and which heavy libraries the
command imported.  Pass ``--importtime`` to also print the ten slowest imports
(cumulative, from ``python -X importtime``) of each command.

Run: ``python benchmarks/bench_startup.py [--repeat 5] [--importtime]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = [
    ["--help"],
    ["info"],
    ["plan", "--tier", "full"],
    ["generate", "--out", "x", "--tracks", "bogus"],
    ["generate"],
    ["benchmark", "/nonexistent"],
    ["validate", "--help"],
    ["visualize", "--help"],
]
HEAVY = ("numpy", "yaml", "rich", "pandas", "pyarrow", "scipy", "matplotlib")

_RUN = """
import json, sys
from kinhec.cli import main
sys.argv = ["kinhec"] + json.loads(sys.argv[1])
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + json.dumps(sorted({m.split('.')[0] for m in sys.modules})) + "\\n")
"""


def _time(argv: list[str], repeat: int, cwd: str) -> tuple[float, str]:
    times, stderr = [], ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd)
        times.append(time.perf_counter() - t0)
        stderr = proc.stderr
    return statistics.median(times), stderr


def _slowest_imports(args: list[str], cwd: str, n: int = 10) -> list[tuple[float, str]]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", _RUN, json.dumps(args)],
                          capture_output=True, text=True, cwd=cwd)  # fmt: skip
    rows = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            parts = [p.strip() for p in line[len("import time:"):].split("|")]
            if parts[1].isdigit():
                rows.append((int(parts[1]) / 1e6, parts[2]))
    return sorted(rows, reverse=True)[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--importtime", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as cwd:
        base, _ = _time([sys.executable, "-c", "pass"], args.repeat, cwd)
        print(f"bare interpreter: {base * 1000:.0f} ms (median of {args.repeat})")
        print(f"{'command':<45} {'wall [ms]':>9} {'- bare':>7}  heavy imports")
        for cmd in COMMANDS:
            wall, stderr = _time([sys.executable, "-c", _RUN, json.dumps(cmd)], args.repeat, cwd)
            mods = next((json.loads(ln[8:]) for ln in stderr.splitlines() if ln.startswith("MODULES ")), [])
            heavy = ",".join(m for m in HEAVY if m in mods) or "-"
            print(f"kinhec {' '.join(cmd):<38} {wall * 1000:9.0f} {(wall - base) * 1000:7.0f}  {heavy}")
            if args.importtime:
                for dt, name in _slowest_imports(cmd, cwd):
                    print(f"    {dt * 1000:7.1f} ms  {name}")


if __name__ == "__main__":
    main()
