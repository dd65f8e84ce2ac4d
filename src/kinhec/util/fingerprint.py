"""The fingerprint of a benchmark run, and where a run's outputs and scratch parts go.

A benchmark run is identified by what its results depend on: the solvers,
the evaluation synchronisations, the sequences evaluated, the protocol version
and the kinhec version.  A *full* run (every solver of the registry, every
synchronisation, every sequence of the index) writes the published outputs
into the benchmark folder itself (``DATA/benchmarks`` by default); any other
run (``--solvers``, ``--sync``, ``--tracks``, ``--max-sequences``) is a
*subset* run and writes into ``<benchmark folder>/subsets/<fingerprint>/``,
so it never replaces the results of a full run.  The per-shard parts of a run
live in the scratch folder ``.kinhec/benchmark/<fingerprint>/`` (of the dataset
when the benchmark folder is inside it, else of the benchmark folder), never
among the published files.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from kinhec.util.locking import STATE_DIR

__all__ = ["SUBSETS_DIR", "run_fingerprint", "run_folders", "source_digest"]

#: Folder (inside the benchmark folder) of the outputs of subset runs, one sub-folder per fingerprint.
SUBSETS_DIR = "subsets"
#: Length of the hexadecimal fingerprint used in folder names.
FINGERPRINT_CHARS = 16


@functools.lru_cache(maxsize=1)
def source_digest() -> str:
    """SHA-256 (first 16 hex digits) of the kinhec package's Python sources.

    A benchmark part records it, so results computed by other solver or
    protocol code (an edited checkout between two runs of the same version)
    are computed again rather than reused.
    """
    pkg = Path(__file__).resolve().parent.parent  # the package: this module sits in kinhec/util
    h = hashlib.sha256()
    for path in sorted(pkg.rglob("*.py")):
        h.update(path.relative_to(pkg).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()[:FINGERPRINT_CHARS]


def run_fingerprint(*, solvers, sync, sequence_ids, protocol_version: str, kinhec_version: str) -> str:
    """SHA-256 (first 16 hex digits) of the run's options and of its sequence ids, in order.

    Parameters
    ----------
    solvers, sync : sequence of str
        Solver names and evaluation synchronisations, in the order the run uses them.
    sequence_ids : sequence of str
        Ids of the evaluated sequences.
    protocol_version, kinhec_version : str
        Versions the results depend on.
    """
    h = hashlib.sha256()
    head = {"solvers": list(solvers), "sync": list(sync), "protocol_version": str(protocol_version),
            "kinhec_version": str(kinhec_version), "n_sequences": len(sequence_ids)}  # fmt: skip
    h.update(json.dumps(head, sort_keys=True).encode())
    for sid in sequence_ids:
        h.update(b"\n" + str(sid).encode())
    return h.hexdigest()[:FINGERPRINT_CHARS]


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def run_folders(root, benchmark_dir, fingerprint: str, *, full: bool) -> dict[str, Path]:
    """Where a run writes.

    Returns
    -------
    dict
        ``out``: the outputs (``benchmark_dir`` for a full run, else
        ``benchmark_dir/subsets/<fingerprint>``); ``lock_root``: the folder whose
        writer lock the run takes (the dataset when ``benchmark_dir`` is inside
        it, else ``benchmark_dir``); ``parts``: the scratch folder of the run's
        parts, ``<lock_root>/.kinhec/benchmark/<fingerprint>``.
    """
    root, benchmark_dir = Path(root), Path(benchmark_dir)
    lock_root = root if _inside(benchmark_dir, root) else benchmark_dir
    out = benchmark_dir if full else benchmark_dir / SUBSETS_DIR / fingerprint
    return {"out": out, "lock_root": lock_root, "parts": lock_root / STATE_DIR / "benchmark" / fingerprint}
