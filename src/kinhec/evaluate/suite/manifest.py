"""``suite.toml`` and ``SHA256SUMS`` of a regression suite folder."""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kinhec.util.errors import DatasetFormatError, UnknownNameError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["Entry", "Suite", "load_suite", "sha256_file", "read_checksums", "write_checksums",
           "DEFAULT_ABS", "DEFAULT_REL", "DEFAULT_SIGMA", "DEFAULT_TRUTH_SIGMA"]  # fmt: skip

DEFAULT_ABS = 1e-9
DEFAULT_REL = 1e-6
#: An estimated parameter with a standard deviation passes ``suite check`` within this many of them.
DEFAULT_SIGMA = 1e-4
DEFAULT_TRUTH_SIGMA = 5.0
_REQUIRED = ("id", "description", "licence", "citation", "source", "problem")
_TOLERANCE_KEYS = ("sigma", "abs", "rel", "truth_sigma")


@dataclass(frozen=True)
class Entry:
    """One entry of ``suite.toml``.

    Attributes
    ----------
    id, description, licence, citation, source, problem : str
        ``licence`` is an SPDX identifier or ``NOASSERTION``.
    config : dict
        Keyword arguments of the problem's solver.
    tolerance : dict
        ``sigma`` (an estimated parameter with a standard deviation: change within ``sigma`` of it), ``abs``,
        ``rel`` (every other number: drift) and ``truth_sigma`` (accuracy against the truth).
    freeze : dict
        How ``suite freeze`` rebuilds the observations (an ``rwhe`` folder, or a generator ``recipe``).
    observations : str
        Id of the entry whose observation file this one reads (default: its own id).
    """

    id: str
    description: str
    licence: str
    citation: str
    source: str
    problem: str
    config: dict = field(default_factory=dict)
    tolerance: dict = field(default_factory=dict)
    freeze: dict = field(default_factory=dict)
    observations: str = ""

    @property
    def abs_tol(self) -> float:
        return float(self.tolerance.get("abs", DEFAULT_ABS))

    @property
    def rel_tol(self) -> float:
        return float(self.tolerance.get("rel", DEFAULT_REL))

    @property
    def sigma_tol(self) -> float:
        return float(self.tolerance.get("sigma", DEFAULT_SIGMA))

    @property
    def truth_sigma(self) -> float:
        return float(self.tolerance.get("truth_sigma", DEFAULT_TRUTH_SIGMA))

    def observation_file(self) -> str:
        return f"observations/{self.observations or self.id}.json"

    def truth_file(self) -> str:
        return f"truth/{self.id}.json"

    def frozen_files(self, root: Path) -> list[str]:
        """Suite-relative paths of the entry's checksummed files (observations, truth if any)."""
        files = [self.observation_file()]
        if (root / self.truth_file()).exists() or self.freeze.get("recipe"):
            files.append(self.truth_file())
        return files


@dataclass(frozen=True)
class Suite:
    """A suite folder and its entries (in ``suite.toml`` order)."""

    root: Path
    entries: list

    def select(self, only=None) -> list:
        """Entries named in ``only`` (all when None); an unknown id lists the valid ones."""
        if not only:
            return list(self.entries)
        ids = {e.id: e for e in self.entries}
        for name in only:
            if name not in ids:
                raise UnknownNameError("suite entry", name, ids)
        return [e for e in self.entries if e.id in set(only)]


def load_suite(root) -> Suite:
    """Read ``<root>/suite.toml``; raises :class:`DatasetFormatError` naming the file and the entry."""
    root = Path(root)
    path = root / "suite.toml"
    try:
        doc = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise DatasetFormatError(f"{path}: expected a suite manifest, got no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise DatasetFormatError(f"{path}: expected TOML, got {exc}") from None
    entries = []
    seen = set()
    for i, e in enumerate(doc.get("entry", [])):
        missing = [k for k in _REQUIRED if not isinstance(e.get(k), str) or not e.get(k)]
        if missing:
            raise DatasetFormatError(f"{path}: entry[{i}]: expected the keys {', '.join(missing)} (strings)")
        if e["id"] in seen:
            raise DatasetFormatError(f"{path}: entry[{i}]: duplicate id {e['id']!r}")
        seen.add(e["id"])
        bad = sorted(set(e.get("tolerance", {})) - set(_TOLERANCE_KEYS))
        if bad:
            raise DatasetFormatError(f"{path}: entry {e['id']}: tolerance: expected keys among "
                                     f"{', '.join(_TOLERANCE_KEYS)}, got {', '.join(bad)}")  # fmt: skip
        entries.append(Entry(e["id"], e["description"], e["licence"], e["citation"], e["source"], e["problem"],
                             dict(e.get("config", {})), dict(e.get("tolerance", {})), dict(e.get("freeze", {})),
                             str(e.get("observations", ""))))  # fmt: skip
    if not entries:
        raise DatasetFormatError(f"{path}: expected at least one [[entry]], got none")
    return Suite(root, entries)


def sha256_file(path) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_checksums(root) -> dict:
    """``{relative path: hex digest}`` from ``<root>/SHA256SUMS`` (empty when there is none)."""
    path = Path(root) / "SHA256SUMS"
    if not path.exists():
        return {}
    out = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name:
            raise DatasetFormatError(f"{path}:{n}: expected '<sha256>  <path>', got {line!r}")
        out[name.strip()] = digest
    return out


def write_checksums(root, files) -> Path:
    """Write ``SHA256SUMS`` for the suite-relative ``files`` (sorted), verifiable by ``sha256sum -c``."""
    root = Path(root)
    lines = [f"{sha256_file(root / f)}  {f}" for f in sorted(set(files))]
    path = root / "SHA256SUMS"
    path.write_text("\n".join(lines) + "\n")
    return path
