"""The dataset card: front matter for the Hub, counts equal to the index, every column documented."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest
import yaml

from kinhec import DatasetFormatError, InputError, load_manifest
from kinhec.dataset.card import card_text, size_category, write_card
from kinhec.io.publish import MINIMAL_MARKER, license_text
from kinhec.synth.runner import generate_dataset
from kinhec.io.schema import CAMERA_SCHEMA, INDEX_SCHEMA, ROBOT_SCHEMA, TRACKS
from kinhec.synth.tiers import load_tier

PNG = bytes.fromhex("89504e470d0a1a0a")  # a PNG signature is enough for a link


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("card") / "data_smoke"
    summary = generate_dataset("smoke", root, workers=1, limit=2, progress=False)  # 2 sequences per track
    assert summary.ok
    return root


@pytest.fixture(scope="module")
def card(data):
    path = write_card(data)
    return path.read_text()


def front_matter(text: str) -> dict:
    assert text.startswith("---\n")
    head, _, _ = text[4:].partition("\n---\n")
    return yaml.safe_load(head)


def section_table(text: str, heading: str) -> list[list[str]]:
    """Rows (cells stripped of backticks and bold) of the first table after a heading line."""
    lines = text.splitlines()
    i = lines.index(heading)
    while not lines[i].startswith("|"):
        i += 1
    rows = []
    for ln in lines[i + 2:]:
        if not ln.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", ln.strip()[1:-1])
        rows.append([c.strip().strip("`*").replace("\\|", "|") for c in cells])
    return rows


def num(s: str) -> int:
    return int(s.replace(",", ""))


def test_front_matter_parses_and_configs_point_at_existing_files(data, card):
    meta = front_matter(card)
    assert meta["license"] == "mit"
    assert meta["size_categories"] == ["n<1K"]
    assert "hand-eye-calibration" in meta["tags"]
    man = load_manifest(data)
    tracks = [t for t in TRACKS if (man.track == t).any()]
    names = [c["config_name"] for c in meta["configs"]]
    assert names == ["sequences"] + [f"{s}_{t}" for t in tracks for s in ("robot", "camera")]
    assert meta["configs"][0]["data_files"] == [{"split": "train", "path": "sequences.parquet"}]
    for cfg in meta["configs"]:
        (entry,) = cfg["data_files"]
        assert entry["split"] == "train"
        files = sorted(data.glob(entry["path"]))
        assert files, f"{cfg['config_name']}: {entry['path']} matches no file"
        if cfg["config_name"] != "sequences":
            stream, track = cfg["config_name"].split("_", 1)
            assert entry["path"] == f"{stream}/{track}-*.parquet"
            assert {f.name for f in files} == {f.split("/")[1] for f in man[man.track == track][f"{stream}_file"]}


def test_counts_in_the_card_equal_the_index(data, card):
    man = load_manifest(data)
    copy = {r[0]: r[1] for r in section_table(card, "## This copy")}
    assert num(copy["sequences"]) == len(man)
    assert num(copy["robot-stream frames"]) == man.n_robot_frames.sum()
    assert num(copy["camera-stream frames"]) == man.n_camera_frames.sum()
    rows = section_table(card, "## Tracks")
    assert rows[-1][0] == "total" and num(rows[-1][1]) == len(man)
    per_track = {r[0]: r for r in rows[:-1]}
    assert list(per_track) == [t for t in TRACKS if (man.track == t).any()]
    for t, r in per_track.items():
        sub = man[man.track == t]
        assert num(r[1]) == len(sub)
        assert r[2] == ("sampled" if t == "mixed" else str(sub.level.nunique()))
        assert num(r[3]) == sub.n_robot_frames.sum() and num(r[4]) == sub.n_camera_frames.sum()
    for col, heading in (
        ("robot", "### Sequences per robot"),
        ("configuration", "### Sequences per configuration"),
        ("family", "### Sequences per trajectory family"),
        ("camera_noise_model", "### Sequences per camera noise model"),
        ("robot_noise_models", "### Sequences per combination of robot noise models"),
    ):
        got = {r[0]: num(r[1]) for r in section_table(card, heading)}
        assert got == man[col].value_counts().to_dict(), col


def test_every_column_of_every_file_is_documented(card):
    for schema in (INDEX_SCHEMA, ROBOT_SCHEMA, CAMERA_SCHEMA):
        for name in schema.names:
            assert f"`{name}`" in card, name
    assert "(undocumented)" not in card
    rows = section_table(card, "### `sequences.parquet` (index)")
    units = {r[0]: r[1] for r in rows}
    assert units["duration_s"] == "s" and units["pixel_std"] == "px" and units["mean_rot_angle_deg"] == "deg"


def test_named_noise_levels_are_converted_from_the_tier(card):
    cfg = load_tier("smoke").config
    robot = {r[0]: r for r in section_table(card, "Robot levels (twist noise in the flange frame, standard deviations):")}
    assert list(robot) == list(cfg["robot_levels"])
    for k, (rot, trans) in cfg["robot_levels"].items():
        assert float(robot[k][1]) == pytest.approx(math.degrees(rot), abs=5e-4)
        assert float(robot[k][2]) == pytest.approx(1000 * trans, abs=5e-3)
    cam_heading = next(ln for ln in card.splitlines() if ln.startswith("Camera levels"))
    camera = {r[0]: r for r in section_table(card, cam_heading)}
    assert list(camera) == list(cfg["camera_levels"])
    for k, (rot, (x, y, z)) in cfg["camera_levels"].items():
        assert float(camera[k][1]) == pytest.approx(math.degrees(rot), abs=5e-4)
        assert [float(v) for v in camera[k][2:5]] == pytest.approx([1000 * x, 1000 * y, 1000 * z], abs=5e-3)
    assert "sweeps the robot levels `r2` and the camera levels `c1`, `c4`" in card


def test_card_warns_against_reading_the_success_rate(card):
    assert "Read the medians, not the success count" in card
    assert "closed-form solver returns an orthonormal `X` whatever its input" in card


def test_card_replaces_the_minimal_card_and_is_deterministic(data, card):
    assert not card.startswith(MINIMAL_MARKER)
    assert card_text(data) == card  # the card does not count itself in the size on disk
    assert (data / "LICENSE").read_text() == license_text()
    assert "url:" not in (data / "CITATION.cff").read_text()
    assert yaml.safe_load((data / "CITATION.cff").read_text())["type"] == "dataset"


def test_leaderboard_figures_and_hub_urls(tmp_path):
    root = tmp_path / "data_pnp"
    assert generate_dataset("smoke", root, workers=1, tracks=["pnp"], progress=False).ok
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "leaderboard.md").write_text(
        "# Leaderboard\n\n## Track pnp\n\n| solver | succ. | X rot [deg] |\n|---|---|---|\n| shah | 4/4 | 0.083 |\n"
        "\n| level | n |\n|---|---|\n| `robot=r2|camera=c1` | 8 |\n"
    )
    (root / "figures").mkdir()
    for name in ("scene_pnp-000000.png", "robustness_pnp_pixel_std.png"):
        (root / "figures" / name).write_bytes(PNG)
    text = write_card(root, hf_repo="someone/kinhec-pnp").read_text()
    assert "### Leaderboard" in text and "#### Track pnp" in text and "| shah | 4/4 | 0.083 |" in text
    assert "| `robot=r2\\|camera=c1` | 8 |" in text  # a pipe in a cell would split it
    base = "https://huggingface.co/datasets/someone/kinhec-pnp/resolve/main/figures/"
    assert f"]({base}scene_pnp-000000.png)" in text
    assert "Sequence pnp-000000 in the robot base frame" in text
    assert "Track pnp: error of X against the pixel noise on the projected target points." in text
    assert text.index("### The dataset") < text.index("scene_pnp") < text.index("### Baseline results")
    assert text.index("### Baseline results") < text.index("robustness_pnp_pixel_std.png")
    assert 'load_dataset("someone/kinhec-pnp", "robot_pnp"' in text
    assert yaml.safe_load((root / "CITATION.cff").read_text())["url"] == "https://huggingface.co/datasets/someone/kinhec-pnp"
    meta = front_matter(text)
    assert [c["config_name"] for c in meta["configs"]] == ["sequences", "robot_pnp", "camera_pnp"]
    local = write_card(root).read_text()
    assert "](figures/scene_pnp-000000.png)" in local and "huggingface.co" not in local


def test_incomplete_copy_is_reported(tmp_path):
    root = tmp_path / "data_part"
    assert generate_dataset("smoke", root, workers=1, tracks=["robot_error"], progress=False).ok
    info = (root / "generation_info.json").read_text()
    (root / "generation_info.json").write_text(info.replace('"planned_sequences": 2', '"planned_sequences": 5'))
    assert "This copy is not complete: `robot_error` holds 2 of 5 planned sequences." in card_text(root)


@pytest.mark.parametrize(
    "n, label",
    [(0, "n<1K"), (46, "n<1K"), (999, "n<1K"), (1000, "1K<n<10K"), (9996, "1K<n<10K"), (77628, "10K<n<100K"),
     (171_175_655, "100M<n<1B")],
)  # fmt: skip
def test_size_category(n, label):
    assert size_category(n) == label


def test_errors(tmp_path, data):
    with pytest.raises(InputError, match="expected a non-negative integer, got -1"):
        size_category(-1)
    with pytest.raises(InputError, match=r"hf_repo: expected a Hub repository id USER/NAME, got 'nobody'"):
        write_card(data, hf_repo="nobody")
    with pytest.raises(DatasetFormatError, match="expected an index file"):
        write_card(tmp_path)
    assert not (tmp_path / "README.md").exists()


def test_a_long_leaderboard_is_cut_at_a_section(tmp_path):
    root = tmp_path / "data_lb"
    assert generate_dataset("smoke", root, workers=1, tracks=["robot_error"], progress=False).ok
    (root / "benchmarks").mkdir()
    sections = [f"## Section {k}\n\n| solver | X [mm] |\n|---|---|\n" + "".join(f"| s{i} | {i} |\n" for i in range(40))
                for k in range(6)]  # fmt: skip
    (root / "benchmarks" / "leaderboard.md").write_text("# Results\n\n" + "\n".join(sections))
    text = card_text(root)
    assert "### Section 2" in text and "### Section 3" not in text  # 3 sections of 45 lines fit in 160
    assert "(shortened here)" in text


def test_install_lines_install_this_kinhec_and_say_why_not_pip_install_kinhec(data, card, tmp_path, monkeypatch):
    from kinhec import __version__

    # `pip install kinhec` from the package index installs another toolkit: the card never tells a user to run it
    assert not re.search(r"^pip install kinhec\b", card, re.M)
    assert card.count("pip install ./kinhec") == 2  # quick start and regeneration: a clone of kinhec's source
    note = card.split("## Quick start")[1].split("```")[0]
    assert f"written by kinhec {__version__}" in note and "versions 0.x" in note
    assert "`pip install kinhec` does not install this one" in note and "versions 1.x" in note
    text = card_text(data, source="git+https://example.org/kinhec@v0.1.0")
    assert text.count('pip install "git+https://example.org/kinhec@v0.1.0"') == 2 and "./kinhec" not in text
    with pytest.raises(InputError, match="source: expected where to pip-install kinhec from"):
        card_text(data, source=" ")
    # the quick start's Python runs as written, with the README's keyframe pairs for A X = Y B
    code = card.split("## Quick start")[1].split("```python\n")[1].split("```")[0]
    assert "seq.axyb_keyframe_poses()" in code and "axyb_poses()" not in code
    monkeypatch.chdir(data.parent)
    exec(compile(code, "card quick start", "exec"), {"print": lambda *a: None})
