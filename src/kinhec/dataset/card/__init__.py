"""The dataset card: a ``README.md`` that documents a dataset folder, generated from its index.

:func:`write_card` reads what a folder says about itself (``sequences.parquet``,
``generation_info.json``, the tier configuration that produced it,
``benchmarks/leaderboard.md`` and ``figures/*.png`` when present) and writes

* ``README.md``: YAML front matter for the Hugging Face Hub (licence, tags,
  size category, and ``configs:`` that expose the index and every track's
  robot and camera streams to the dataset viewer), then the counts of this
  copy per track, robot, configuration, trajectory family and noise model,
  the named noise levels of the tier, the frame conventions, the column
  documentation of every file, the evaluation protocol with the baseline
  leaderboard, the figures and the commands that regenerate the copy;
* ``LICENSE`` and ``CITATION.cff`` beside it (:mod:`kinhec.io.publish`).

Every number in the card is computed from the folder, so running
``kinhec card`` again after a resumed or extended generation brings it up to
date.  With ``hf_repo="user/name"`` the figure links become absolute URLs of
that Hub repository and the loading examples name it; with ``source=...``
(a git URL or a path) the install lines name where kinhec is installed from.

The card is built section by section, one module each: :mod:`~kinhec.dataset.card.folder`
(what is read from the folder, :class:`~kinhec.dataset.card.folder.CardInputs`),
:mod:`~kinhec.dataset.card.overview` (front matter, this copy, quick start),
:mod:`~kinhec.dataset.card.composition` (tracks, composition, noise levels),
:mod:`~kinhec.dataset.card.conventions` (frames, files, column documentation from
:mod:`~kinhec.dataset.card.columns`), :mod:`~kinhec.dataset.card.results` (protocol,
leaderboard, figures) and :mod:`~kinhec.dataset.card.regenerate` (regenerating,
validation, limitations, licence); :mod:`~kinhec.dataset.card.markdown` holds the
table and number helpers.
"""

from __future__ import annotations

from pathlib import Path

from kinhec.dataset.card.columns import CAMERA_COLUMN_DOCS, INDEX_COLUMN_DOCS, ROBOT_COLUMN_DOCS
from kinhec.dataset.card.composition import composition_section, noise_levels_section
from kinhec.dataset.card.conventions import conventions_section, files_section
from kinhec.dataset.card.folder import SIZE_CATEGORIES, check_hf_repo, read_folder, size_category
from kinhec.dataset.card.overview import overview_section
from kinhec.dataset.card.regenerate import regenerate_section
from kinhec.dataset.card.results import figures_section, results_section
from kinhec.util.provenance import check_results_match, write_owned
from kinhec.io.publish import citation_cff, hf_configs, license_text

__all__ = [
    "CARD_FILE",
    "SECTIONS",
    "SIZE_CATEGORIES",
    "INDEX_COLUMN_DOCS",
    "ROBOT_COLUMN_DOCS",
    "CAMERA_COLUMN_DOCS",
    "size_category",
    "hf_configs",
    "card_text",
    "write_card",
]

#: File name of the card in the dataset folder.
CARD_FILE = "README.md"

#: The card's sections in order; each takes the :class:`~kinhec.dataset.card.folder.CardInputs` and returns lines.
SECTIONS = (overview_section, composition_section, noise_levels_section, conventions_section, files_section,
            results_section, figures_section, regenerate_section)  # fmt: skip


def card_text(root, *, hf_repo: str | None = None, source: str | None = None) -> str:
    """The dataset card of a folder as Markdown with YAML front matter (see :func:`write_card`)."""
    inputs = read_folder(root, hf_repo=hf_repo, source=source)
    lines: list[str] = []
    for section in SECTIONS:
        lines += section(inputs)
    return "\n".join(lines) + "\n"


def write_card(root, *, hf_repo: str | None = None, source: str | None = None) -> Path:
    """Write ``README.md`` (the dataset card), ``LICENSE`` and ``CITATION.cff`` into a dataset folder.

    Parameters
    ----------
    root : str or Path
        Dataset folder holding at least ``sequences.parquet``.
    hf_repo : str, optional
        Hugging Face Hub repository id ``USER/NAME``: figure links become
        absolute URLs of that repository, the examples download from it and
        ``CITATION.cff`` points to it.
    source : str, optional
        Where users install kinhec from, for the card's install lines: a git URL
        (``git+https://.../kinhec@v0.1.0``) or a path.  Default: the card asks for
        a clone or a git URL of kinhec's source (``pip install kinhec`` from the
        package index installs another toolkit).

    Returns
    -------
    Path
        The card written (``root / "README.md"``).

    Raises
    ------
    DatasetFormatError
        If ``root`` is not a dataset folder or its index or
        ``generation_info.json`` cannot be read.
    InputError
        If ``hf_repo`` is not of the form ``USER/NAME``, ``source`` is empty, or ``benchmarks/results.parquet``
        was computed on other data (the folder was generated again since).
    """
    hf_repo = check_hf_repo(hf_repo)
    root = Path(root)
    results = root / "benchmarks" / "results.parquet"
    if results.is_file():  # the card quotes the leaderboard: refuse results of other data
        check_results_match(root, results)
    text = card_text(root, hf_repo=hf_repo, source=source)
    url = f"https://huggingface.co/datasets/{hf_repo}" if hf_repo else None
    for name, content in (("LICENSE", license_text()), ("CITATION.cff", citation_cff(url=url))):
        write_owned(root, name, content)  # a LICENSE or CITATION.cff of the user's is kept
    write_owned(root, CARD_FILE, text, replace=True)
    return root / CARD_FILE
