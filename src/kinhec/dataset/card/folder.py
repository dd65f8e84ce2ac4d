"""What the card knows about a folder: its index, ``generation_info.json``, the tier that made it, its names.

:func:`read_folder` gathers it once into a :class:`CardInputs`, which every section of the card reads.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from kinhec.util.errors import DatasetFormatError, InputError
from kinhec.io import load_manifest
from kinhec.io.publish import hf_configs
from kinhec.io.schema import TRACKS
from kinhec.synth.tiers import TIER_NAMES, load_tier

__all__ = ["SIZE_CATEGORIES", "CardInputs", "read_folder", "size_category", "front_matter", "check_hf_repo",
           "check_source", "install_command", "install_note"]  # fmt: skip

#: Hugging Face Hub size categories (by number of rows of the main table): (upper bound, label).
SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
    (10_000_000_000, "1B<n<10B"),
    (100_000_000_000, "10B<n<100B"),
    (1_000_000_000_000, "100B<n<1T"),
)

_HF_REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_LEADERBOARD_MAX_LINES = 160


@dataclass(frozen=True)
class CardInputs:
    """Everything the card's sections read from a folder (built by :func:`read_folder`).

    ``folder`` is the folder's name as the commands in the card use it, ``local`` the name of the local copy
    in the examples (the download folder with ``hf_repo``), ``source`` where to install kinhec from (None:
    the card asks for a clone or a git URL of kinhec's source).
    """

    root: Path
    man: pd.DataFrame
    info: dict
    cfg: dict | None
    cfg_source: str | None
    tracks: list
    configs: list
    tier_name: str
    versions: list
    seed: object
    folder: str
    local: str
    hf_repo: str | None
    source: str | None


def check_hf_repo(hf_repo):
    """``hf_repo`` when it is a Hub repository id ``USER/NAME`` (or None), else :class:`InputError`."""
    if hf_repo is None:
        return None
    if not isinstance(hf_repo, str) or not _HF_REPO_RE.match(hf_repo) or ".." in hf_repo:
        raise InputError(f"hf_repo: expected a Hub repository id USER/NAME, got {hf_repo!r}")
    return hf_repo


def check_source(source):
    """``source`` when it is a non-empty one-line string (a git URL or a path for ``pip install``), or None."""
    if source is None:
        return None
    if not isinstance(source, str) or not source.strip() or "\n" in source:
        raise InputError(f"source: expected where to pip-install kinhec from (a git URL or a path), got {source!r}")
    return source.strip()


def read_folder(root, *, hf_repo: str | None = None, source: str | None = None) -> CardInputs:
    """Read the index, ``generation_info.json`` and the tier configuration of a dataset folder.

    Raises
    ------
    DatasetFormatError
        ``root`` is not a dataset folder, or its index or ``generation_info.json`` cannot be read.
    InputError
        A bad ``hf_repo`` or ``source``.
    """
    hf_repo = check_hf_repo(hf_repo)
    source = check_source(source)
    root = Path(root)
    man = load_manifest(root)
    info = _read_generation_info(root)
    cfg, cfg_source = _tier_config(root, info)
    tracks = [t for t in TRACKS if (man["track"] == t).any()]
    tracks += sorted(set(man["track"].dropna().astype(str)) - set(TRACKS))
    versions = sorted(set(man["generator_version"].dropna().astype(str))) or [str(info.get("generator_version", "?"))]
    folder = root.resolve().name or "data"
    return CardInputs(
        root=root, man=man, info=info, cfg=cfg, cfg_source=cfg_source, tracks=tracks,
        configs=hf_configs(root, tracks), tier_name=str(info.get("tier") or (cfg or {}).get("tier") or "unknown"),
        versions=versions, seed=info.get("global_seed", (cfg or {}).get("global_seed")), folder=folder,
        local="kinhec_data" if hf_repo else folder, hf_repo=hf_repo, source=source,
    )  # fmt: skip


def size_category(n_rows: int) -> str:
    """Hugging Face size category of a table with ``n_rows`` rows (``"n<1K"``, ``"1K<n<10K"``, ...)."""
    if isinstance(n_rows, bool) or not isinstance(n_rows, int) or n_rows < 0:
        raise InputError(f"n_rows: expected a non-negative integer, got {n_rows!r}")
    for bound, label in SIZE_CATEGORIES:
        if n_rows < bound:
            return label
    return "n>1T"


def _read_generation_info(root: Path) -> dict:
    path = root / "generation_info.json"
    if not path.is_file():
        return {}
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise DatasetFormatError(f"{path}: expected valid JSON, got unreadable content ({exc})") from None
    return info if isinstance(info, dict) else {}


def _tier_config(root: Path, info: dict) -> tuple[dict | None, str | None]:
    """The tier configuration that produced the copy, and where it came from.

    ``generation_info.json`` first, then ``configs/<tier>.yaml`` of the folder,
    then the shipped tier of that name.
    """
    cfg = info.get("tier_config")
    if isinstance(cfg, dict) and "robot_levels" in cfg:
        return cfg, "generation_info.json"
    tier = info.get("tier")
    candidates = [root / "configs" / f"{tier}.yaml"] if tier else []
    candidates += sorted((root / "configs").glob("*.yaml")) if (root / "configs").is_dir() else []
    for p in candidates:
        try:
            data = yaml.safe_load(p.read_text())
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, dict) and "robot_levels" in data:
            return data, f"configs/{p.name}"
    if tier in TIER_NAMES:
        return load_tier(tier).config, f"the shipped tier {tier!r}"
    return None, None


def is_shipped_tier(cfg: dict | None) -> bool:
    """``cfg`` is one of the tiers shipped with kinhec, unchanged (the card then names it instead of a file)."""
    name = (cfg or {}).get("tier")
    if name not in TIER_NAMES:
        return False
    return load_tier(name).config == cfg


def front_matter(n_sequences: int, configs: list[dict]) -> str:
    """The YAML front matter of the Hugging Face Hub (licence, tags, size category, dataset-viewer configs)."""
    meta = {
        "license": "mit",
        "pretty_name": "KinHEC-format hand-eye calibration benchmark",
        "task_categories": ["robotics"],
        "tags": [
            "hand-eye-calibration",
            "robot-world-calibration",
            "calibration",
            "robotics",
            "pose-estimation",
            "synthetic",
            "benchmark",
            "kinhec",
        ],
        "size_categories": [size_category(int(n_sequences))],
        "configs": configs,
    }
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, default_flow_style=False) + "---\n"


def install_command(c: CardInputs, extra: str = "") -> str:
    """The ``pip install`` line of kinhec itself (never ``pip install kinhec``: that name on the package index is
    another toolkit): ``c.source`` when given, else a clone of kinhec's source in ``./kinhec``."""
    what = f'"{c.source}"' if c.source else "./kinhec"
    line = f"pip install {what}" + (f" {extra}" if extra else "")
    return line if c.source else f"{line}    # a clone of kinhec's source (see the note above)"


def install_note(c: CardInputs) -> str:
    """One paragraph: which kinhec wrote the copy, how its versions are numbered, and why not ``pip install kinhec``."""
    versions = ", ".join(c.versions)
    where = (f"from `{c.source}`" if c.source else
             "from its source: clone the kinhec repository into `./kinhec` (or give pip its git URL)")
    return (f"The copy was written by kinhec {versions}, the toolkit whose commands and Python API this card uses; "
            f"install it {where}. kinhec numbers its versions 0.x (this copy: {versions}, also in "
            "`generation_info.json` and in the index column `generator_version`). The name `kinhec` on the Python "
            "Package Index belongs to a different program, the published KinHEC toolkit (versions 1.x, another "
            "API), so `pip install kinhec` does not install this one; that toolkit reads these files too, as the "
            "two write the same format.")
