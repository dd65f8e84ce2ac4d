"""Removing what runs leave behind, so that the next one starts from a known state.

Planning and removing are separate steps: :func:`plan_clean` only looks at
the disk and returns a :class:`CleanPlan` (what would be removed and why, and
what was refused and why); :func:`execute` removes the planned paths and
returns a :class:`CleanResult`.  A dry run is a plan that is printed and not
executed.

What is planned
---------------
* by default (and with ``build`` / ``all_``): the caches ``__pycache__/``,
  ``.pytest_cache/`` and ``.hypothesis/`` anywhere below the root, and the
  scratch folder ``_to_delete/`` of the root;
* ``build``: ``build/``, ``dist/`` and ``src/*.egg-info`` of the root;
* ``partial``: inside each given dataset folder, the ``*.tmp`` files and the
  half-written shards (a shard whose robot or camera file is missing, or
  whose files do not open as a complete kinhec shard); complete shards are
  kept, so that ``kinhec generate`` resumes where it stopped;
* ``data``: each given dataset folder as a whole (these items carry
  ``confirm=True``: the command asks before removing them);
* ``all_``: the defaults, ``build``, and every ``data_*`` folder of the root
  that looks like a dataset (never a folder named ``data``).

With only ``partial`` and/or ``data`` given, nothing else is touched.

Safety rules
------------
* The root is the ``root`` argument, else :func:`find_root`: the nearest
  parent of the current folder whose ``pyproject.toml`` names the project
  ``kinhec``, else the current folder.  Caches and the scratch folder are only
  looked for inside the root, and the walk never follows a symbolic link.
* A folder given to ``partial`` / ``data`` must exist, lie inside the root
  (after resolving symbolic links) and look like a dataset
  (``generation_info.json``, ``sequences.parquet``, or both ``robot/`` and
  ``camera/``); ``force=True`` lifts these two conditions.  A folder that a
  running ``kinhec generate`` holds locked is refused, unless ``force``.
* Never, even with ``force``: the file-system root, the home folder, the
  clean root itself or one of its parents, the current folder or one of its
  parents, and version-control folders (``.git``, ``.hg``, ``.svn``, ``.bzr``),
  which are also left in place inside a folder being removed.
* Read-only files and folders are made writable and removed.
"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from kinhec.util.errors import InputError
from kinhec.io import INDEX_METADATA_KEY, WRITER_METADATA_KEY, read_shard_index, shard_status
from kinhec.synth.runner import LOCK_NAME, STATE_DIR
from kinhec.io.schema import TRACKS

__all__ = [
    "SCRATCH_DIR",
    "CACHE_DIRS",
    "BUILD_DIRS",
    "VCS_DIRS",
    "CleanItem",
    "Refusal",
    "CleanPlan",
    "CleanResult",
    "find_root",
    "looks_like_dataset",
    "plan_clean",
    "execute",
]

#: Scratch folder of the root (logs, expanded plans, temporary output).
SCRATCH_DIR = "_to_delete"
#: Cache folders removed wherever they are below the root.
CACHE_DIRS = ("__pycache__", ".pytest_cache", ".hypothesis")
#: Build output of the root (with ``src/*.egg-info``).
BUILD_DIRS = ("build", "dist")
#: Version-control folders: never removed, never entered.
VCS_DIRS = (".git", ".hg", ".svn", ".bzr")

_SHARD_RE = re.compile(r"^(?P<track>[A-Za-z0-9_]+)-(?P<shard>\d{5})\.parquet$")
_PROJECT_NAME_RE = re.compile(r'^\s*name\s*=\s*["\']kinhec["\']\s*$', re.MULTILINE)


@dataclass(frozen=True)
class CleanItem:
    """One path to remove.

    Attributes
    ----------
    path : Path
        Absolute path (a file, a folder, or a symbolic link, which is removed itself).
    reason : str
        Why it is planned (``"cache"``, ``"scratch folder"``, ``"half-written shard ..."``, ...).
    confirm : bool
        Remove only after the user agreed (whole dataset folders).
    size_bytes : int
        Bytes of the files it holds, counted without following links.
    """

    path: Path
    reason: str
    confirm: bool = False
    size_bytes: int = 0


@dataclass(frozen=True)
class Refusal:
    """A requested path that will not be touched, and why."""

    path: Path
    reason: str


@dataclass
class CleanPlan:
    """What :func:`execute` would remove (``items``) and what was refused (``refused``)."""

    root: Path
    items: list[CleanItem] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)

    @property
    def paths(self) -> list[Path]:
        """The planned paths, in order."""
        return [it.path for it in self.items]

    @property
    def needs_confirmation(self) -> bool:
        """True if some item must be confirmed by the user (a whole dataset folder)."""
        return any(it.confirm for it in self.items)

    @property
    def size_bytes(self) -> int:
        return sum(it.size_bytes for it in self.items)

    def without_unconfirmed(self) -> CleanPlan:
        """The same plan without the items that needed a confirmation (the user answered no)."""
        return CleanPlan(self.root, [it for it in self.items if not it.confirm], list(self.refused))

    def display(self, path: Path) -> str:
        """``path`` relative to the root when inside it, else absolute."""
        try:
            rel = Path(path).relative_to(self.root)
        except ValueError:
            return str(path)
        return str(rel) if str(rel) != "." else str(path)

    def describe(self) -> list[str]:
        """One line per planned item and per refusal, for printing."""
        lines = [f"{self.display(it.path)}  ({it.reason}, {_human_bytes(it.size_bytes)})" for it in self.items]
        lines += [f"refused: {self.display(r.path)}: {r.reason}" for r in self.refused]
        return lines


@dataclass
class CleanResult:
    """Outcome of :func:`execute`.

    Attributes
    ----------
    removed : list of Path
        Planned paths that are gone.
    failed : list of (Path, str)
        Paths that could not be removed, with the reason.
    kept : list of Path
        Version-control folders left in place inside removed folders (their
        parents stay too).
    """

    removed: list[Path] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing failed (the command's exit status is 1 otherwise)."""
        return not self.failed


# --------------------------------------------------------------------------- #
# root and dataset detection
# --------------------------------------------------------------------------- #
def _is_kinhec_project(pyproject: Path) -> bool:
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    try:
        import tomllib
    except ImportError:  # Python 3.10: a line `name = "kinhec"` in the [project] table
        m = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.MULTILINE | re.DOTALL)
        return bool(m and _PROJECT_NAME_RE.search(m.group(1)))
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False
    project = data.get("project")
    return isinstance(project, dict) and project.get("name") == "kinhec"


def find_root(start=None) -> Path:
    """The folder ``kinhec clean`` works on.

    The nearest folder, from ``start`` (default: the current folder) upwards,
    that holds a ``pyproject.toml`` naming the project ``kinhec``; ``start``
    itself if there is none.  Returned resolved (absolute, links resolved).
    """
    here = Path(os.getcwd() if start is None else start).resolve()
    for d in (here, *here.parents):
        if (d / "pyproject.toml").is_file() and _is_kinhec_project(d / "pyproject.toml"):
            return d
    return here


def looks_like_dataset(path) -> bool:
    """True if ``path`` holds ``generation_info.json`` or ``sequences.parquet``, or both ``robot/`` and ``camera/``."""
    p = Path(path)
    if not p.is_dir():
        return False
    if (p / "generation_info.json").is_file() or (p / "sequences.parquet").is_file():
        return True
    return (p / "robot").is_dir() and (p / "camera").is_dir()


def _running_generate(folder: Path) -> str | None:
    """Description of the live process holding the folder's writer lock (generate, benchmark, index), or None."""
    lock = folder / STATE_DIR / LOCK_NAME
    if not lock.is_file():
        return None
    try:
        info = json.loads(lock.read_text() or "{}")
        pid, host = int(info.get("pid", -1)), str(info.get("host", ""))
    except (OSError, ValueError, TypeError):
        return None  # unreadable lock: the runner treats it as stale too
    if host != socket.gethostname():
        return f"a kinhec generate on host {host!r} (pid {pid}) holds its lock {lock}"
    if pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    except OSError:
        return None
    return f"a running kinhec generate (pid {pid}) holds its lock {lock}"


# --------------------------------------------------------------------------- #
# planning
# --------------------------------------------------------------------------- #
def _human_bytes(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0
    return f"{n:.1f} TB"


def _size(path: Path) -> int:
    try:
        if path.is_symlink() or not path.is_dir():
            return path.lstat().st_size
    except OSError:
        return 0
    total = 0
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        dirnames[:] = [d for d in dirnames if d not in VCS_DIRS]
        for f in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _is_venv(dirpath: str) -> bool:
    return os.path.isfile(os.path.join(dirpath, "pyvenv.cfg"))


def _find_caches(root: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, _ in os.walk(root, followlinks=False):
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d in VCS_DIRS or os.path.islink(full) or _is_venv(full):
                continue  # never entered: version control, links (may lead out of the root), virtual environments
            if d in CACHE_DIRS:
                found.append(Path(full))
                continue
            keep.append(d)
        dirnames[:] = keep
    return found


def _protected(path: Path, root: Path) -> str | None:
    """Reason why ``path`` (resolved) may never be removed, or None."""
    cwd = Path(os.getcwd()).resolve()
    try:
        home = Path.home().resolve()
    except (RuntimeError, KeyError):  # no home folder known
        home = None
    if path == Path(path.anchor):
        return "it is the root of the file system"
    if path == home:
        return "it is the home folder"
    if _inside(root, path):
        return "it is the clean root or one of its parents"
    if _inside(cwd, path):
        return "it is the current folder or one of its parents"
    if any(part in VCS_DIRS for part in path.parts):
        return "it is (inside) a version-control folder"
    return None


def _resolve_request(arg, root: Path) -> tuple[Path, Path]:
    """(as given, made absolute; resolved) for a --partial / --data argument.

    Relative paths are taken from the current folder, or from the root when
    they do not exist there.
    """
    given = Path(arg).expanduser()
    if not given.is_absolute():
        here = Path(os.getcwd()) / given
        given = here if os.path.lexists(here) or not os.path.lexists(root / given) else root / given
    return given, given.resolve()


def _check_request(arg, option: str, root: Path, force: bool, plan: CleanPlan) -> Path | None:
    """The resolved dataset folder of a --partial / --data argument, or None (refusal recorded)."""
    try:
        given, path = _resolve_request(arg, root)
    except (TypeError, OSError, RuntimeError) as exc:
        plan.refused.append(Refusal(Path(str(arg)), f"{option}: expected a folder path, got {arg!r} ({exc})"))
        return None
    if not os.path.lexists(given):
        plan.refused.append(Refusal(given, f"{option}: expected an existing folder, got no such path"))
        return None
    if not path.is_dir():
        plan.refused.append(Refusal(given, f"{option}: expected a folder, got a file"))
        return None
    why = _protected(path, root)
    if why:
        plan.refused.append(Refusal(given, f"{option}: refused: {why}"))
        return None
    if not _inside(path, root) and not force:
        via = f" (a link to {path})" if given.is_symlink() or given.resolve() != given.absolute() else ""
        plan.refused.append(Refusal(
            given,
            f"{option}: expected a folder inside the root {root}, got one outside it{via}; pass --root, or --force",
        ))  # fmt: skip
        return None
    if not looks_like_dataset(path) and not force:
        plan.refused.append(Refusal(
            given,
            f"{option}: expected a kinhec dataset folder (generation_info.json, sequences.parquet, or robot/ and "
            "camera/), got a folder without any of them; use --force to remove it anyway",
        ))  # fmt: skip
        return None
    busy = _running_generate(path)
    if busy and not force:
        plan.refused.append(Refusal(given, f"{option}: refused while {busy}; stop it first, or use --force"))
        return None
    return path


def _has_kinhec_rows(path: Path) -> bool:
    """The shard file was written by kinhec and carries its index rows (so its consistency can be judged).

    The published toolkit's shards carry the same ``kinhec_manifest`` rows but no ``kinhec.writer`` key.
    """
    try:
        kv = pq.read_metadata(path).metadata or {}
    except Exception:
        return False
    return INDEX_METADATA_KEY.encode() in kv and WRITER_METADATA_KEY.encode() in kv


def _partial_items(folder: Path) -> list[CleanItem]:
    """``*.tmp`` files and half-written shards of a dataset folder."""
    items: list[CleanItem] = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = sorted(
            d for d in dirnames if d not in VCS_DIRS and d != STATE_DIR and not os.path.islink(os.path.join(dirpath, d))
        )
        for f in sorted(filenames):
            if f.endswith(".tmp"):
                p = Path(dirpath) / f
                items.append(CleanItem(p, "temporary file of an interrupted write", size_bytes=_size(p)))
    names = set()
    for sub in ("robot", "camera"):
        d = folder / sub
        if d.is_dir() and not d.is_symlink():
            names |= {p.name for p in d.iterdir() if _SHARD_RE.match(p.name) and not p.is_symlink()}
    for name in sorted(names):
        m = _SHARD_RE.match(name)
        track, shard = m.group("track"), int(m.group("shard"))
        if track not in TRACKS:
            continue  # not a kinhec shard name: left alone
        robot, camera = folder / "robot" / name, folder / "camera" / name
        present = [p for p in (robot, camera) if p.is_file()]
        if len(present) == 1:
            other = "camera" if present[0] == robot else "robot"
            items.append(CleanItem(present[0], f"half-written shard: its {other} file is missing",
                                   size_bytes=_size(present[0])))  # fmt: skip
            continue
        if not present:
            continue
        unreadable = []
        for p in present:
            try:
                pq.ParquetFile(p).close()
            except Exception:  # truncated, empty, not Parquet: a torn write
                unreadable.append(p)
        if unreadable:  # the pair is unusable: both files go, the runner rewrites the shard
            for p in present:
                items.append(CleanItem(p, "half-written shard: a file of the pair does not open as Parquet",
                                       size_bytes=_size(p)))  # fmt: skip
            continue
        if not all(_has_kinhec_rows(p) for p in present):
            continue  # opens but was not written by kinhec (e.g. a published copy): left alone
        try:
            ids = [r["sequence_id"] for r in read_shard_index(robot)]
            status = shard_status(folder, track, shard, ids) if ids else "corrupt"
        except Exception:  # stored rows that do not decode: the two files are not one complete write
            status = "corrupt"
        if status != "complete":
            for p in present:
                items.append(CleanItem(p, "half-written shard: its files do not open as a complete shard",
                                       size_bytes=_size(p)))  # fmt: skip
    return items


def plan_clean(root=None, *, partial=(), data=(), build: bool = False, all_: bool = False, force: bool = False) -> CleanPlan:
    """Plan what ``kinhec clean`` removes; nothing is changed on disk.

    Parameters
    ----------
    root : str or Path, optional
        The folder to clean (default: :func:`find_root`).
    partial : iterable of path
        Dataset folders from which to remove ``*.tmp`` files and half-written
        shards (complete shards are kept).
    data : iterable of path
        Dataset folders to remove entirely (items with ``confirm=True``).
    build : bool
        Also ``build/``, ``dist/`` and ``src/*.egg-info``.
    all_ : bool
        Caches, scratch folder, build output and every ``data_*`` dataset
        folder of the root (never ``data/``).
    force : bool
        Accept ``partial`` / ``data`` folders outside the root, folders that
        do not look like datasets and folders locked by a running generate.

    Returns
    -------
    CleanPlan
        ``items`` (absolute paths with reasons, nested duplicates dropped)
        and ``refused`` (requested paths that will not be touched, with the
        reason).  See the module documentation for the rules.

    Raises
    ------
    InputError
        If ``root`` is not an existing folder, or ``partial`` / ``data`` is a
        single string instead of a list of paths.
    """
    if root is None:
        root_path = find_root()
    else:
        try:
            root_path = Path(root).expanduser().resolve()
        except TypeError:
            raise InputError(f"root: expected a folder path, got {type(root).__name__}") from None
        if not root_path.is_dir():
            raise InputError(f"root: expected an existing folder, got {root!r}")
    for name, v in (("partial", partial), ("data", data)):
        if isinstance(v, (str, bytes, os.PathLike)):
            raise InputError(f"{name}: expected a list of folders, got the single value {v!r}")
    partial, data = list(partial or ()), list(data or ())
    plan = CleanPlan(root_path)
    items: list[CleanItem] = []

    defaults = all_ or build or not (partial or data)
    if defaults:
        for p in _find_caches(root_path):
            items.append(CleanItem(p, "cache", size_bytes=_size(p)))
        scratch = root_path / SCRATCH_DIR
        if scratch.is_dir() and not scratch.is_symlink():
            items.append(CleanItem(scratch, "scratch folder", size_bytes=_size(scratch)))
    if build or all_:
        cands = [root_path / d for d in BUILD_DIRS]
        if (root_path / "src").is_dir() and not (root_path / "src").is_symlink():
            cands += sorted((root_path / "src").glob("*.egg-info"))
        for p in cands:
            if p.is_dir() and not p.is_symlink():
                items.append(CleanItem(p, "build output", size_bytes=_size(p)))
    for arg in partial:
        folder = _check_request(arg, "--partial", root_path, force, plan)
        if folder is not None:
            items += _partial_items(folder)
    for arg in data:
        folder = _check_request(arg, "--data", root_path, force, plan)
        if folder is not None:
            items.append(CleanItem(folder, "dataset folder", confirm=True, size_bytes=_size(folder)))
    if all_:
        for p in sorted(root_path.glob("data_*")):
            if not p.is_dir() or p.name == "data":
                continue
            if p.is_symlink():
                plan.refused.append(Refusal(p, "--all: a symbolic link, left alone (name its target with --data)"))
                continue
            if not looks_like_dataset(p):
                plan.refused.append(Refusal(p, "--all: does not look like a kinhec dataset, left alone"))
                continue
            busy = _running_generate(p)
            if busy:
                plan.refused.append(Refusal(p, f"--all: left alone while {busy}"))
                continue
            items.append(CleanItem(p, "dataset folder", confirm=True, size_bytes=_size(p)))

    # drop duplicates and paths inside another planned folder
    unique: dict[Path, CleanItem] = {}
    for it in items:
        prev = unique.get(it.path)
        unique[it.path] = it if prev is None or it.confirm else prev
    folders = {p for p, it in unique.items() if p.is_dir() and not p.is_symlink()}
    plan.items = [it for p, it in unique.items() if not any(f != p and f in p.parents for f in folders)]
    return plan


# --------------------------------------------------------------------------- #
# execution
# --------------------------------------------------------------------------- #
def _make_writable(path: str) -> None:
    try:
        mode = os.lstat(path).st_mode
        if not stat.S_ISLNK(mode):
            os.chmod(path, stat.S_IMODE(mode) | stat.S_IWUSR | stat.S_IRUSR | (stat.S_IXUSR if stat.S_ISDIR(mode) else 0))
    except OSError:
        pass


def _retry(op, path: str, result: CleanResult) -> bool:
    try:
        op(path)
        return True
    except FileNotFoundError:
        return True
    except OSError:
        # read-only file (Windows) or read-only parent folder (POSIX): make both writable, try once more
        _make_writable(os.path.dirname(path) or ".")
        _make_writable(path)
    try:
        op(path)
        return True
    except FileNotFoundError:
        return True
    except OSError as exc:
        result.failed.append((Path(path), exc.strerror or str(exc)))
        return False


def _remove(path: str, result: CleanResult) -> bool:
    """Remove a file, a link or a folder tree (links not followed, version control kept); True if gone."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError as exc:
        result.failed.append((Path(path), exc.strerror or str(exc)))
        return False
    if not stat.S_ISDIR(st.st_mode):
        return _retry(os.unlink, path, result)
    if os.path.basename(path) in VCS_DIRS:
        result.kept.append(Path(path))
        return False
    try:
        names = os.listdir(path)
    except PermissionError:
        _make_writable(path)
        try:
            names = os.listdir(path)
        except OSError as exc:
            result.failed.append((Path(path), exc.strerror or str(exc)))
            return False
    except OSError as exc:
        result.failed.append((Path(path), exc.strerror or str(exc)))
        return False
    gone = True
    for name in names:
        gone &= _remove(os.path.join(path, name), result)
    return _retry(os.rmdir, path, result) if gone else False


def execute(plan: CleanPlan) -> CleanResult:
    """Remove the paths of a plan.

    Each item is removed without following symbolic links (a link is removed
    itself, never its target); read-only files and folders are made writable
    first; version-control folders inside a removed folder are kept (and so
    is the folder holding them).  Items that have disappeared meanwhile count
    as removed.

    Returns
    -------
    CleanResult
        ``removed`` (planned paths now gone), ``failed`` (path, reason) and
        ``kept`` (version-control folders left in place); ``result.ok`` is
        False if anything failed.
    """
    if not isinstance(plan, CleanPlan):
        raise InputError(f"plan: expected a CleanPlan from plan_clean(), got {type(plan).__name__}")
    result = CleanResult()
    for it in plan.items:
        p = str(it.path)
        if any(part in VCS_DIRS for part in Path(p).parts):
            result.kept.append(it.path)  # never, even if a plan was edited by hand
            continue
        if _remove(p, result):
            result.removed.append(it.path)
    return result
