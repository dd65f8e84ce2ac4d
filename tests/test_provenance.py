"""generate never replaces a file it did not write; derived outputs of replaced data are removed or refused."""

from __future__ import annotations

import shutil

import pytest
import yaml
from click.testing import CliRunner

from kinhec.synth import tiers
from kinhec.util import provenance
from kinhec.evaluate.benchmark import run_benchmark
from kinhec.dataset.card import write_card
from kinhec.cli import main
from kinhec.util.errors import InputError
from kinhec.synth.runner import generate_dataset

MY_LICENSE = "Copyright (c) 2026 My Lab. All rights reserved.\n"
MY_CITATION = "cff-version: 1.2.0\ntitle: my own experiment\n"


def _gen(root, tier="smoke", **kw):
    s = generate_dataset(tier, root, workers=1, tracks=["noise"], limit=1, progress=False, **kw)
    assert s.ok
    return s


def _tier_with_seed(tmp_path, seed: int):
    cfg = yaml.safe_load(tiers.load_tier("smoke").yaml_text())
    cfg["global_seed"] = seed
    p = tmp_path / f"smoke_{seed}.yaml"
    p.write_text(yaml.safe_dump(cfg))
    return str(p)


def test_a_folder_of_the_users_is_refused_then_kept_with_force(tmp_path):
    root = tmp_path / "mine"
    root.mkdir()
    (root / "LICENSE").write_text(MY_LICENSE)
    (root / "CITATION.cff").write_text(MY_CITATION)
    (root / "notes.txt").write_text("lab notes\n")
    with pytest.raises(InputError, match=r"--out .*mine: expected an empty folder or a dataset folder, got a folder "
                                         r"with 3 other file\(s\) \(CITATION.cff, LICENSE, notes.txt\).*--force"):
        _gen(root)
    assert not (root / "generation_info.json").exists() and not (root / "robot").exists()
    s = _gen(root, force=True)
    assert (root / "LICENSE").read_text() == MY_LICENSE
    assert (root / "CITATION.cff").read_text() == MY_CITATION
    assert (root / "notes.txt").read_text() == "lab notes\n"
    assert {"LICENSE", "CITATION.cff", "notes.txt"} <= set(s.kept_files)
    assert (root / "sequences.parquet").is_file()
    # a second run (now a dataset folder) still keeps them
    s = _gen(root)
    assert (root / "LICENSE").read_text() == MY_LICENSE and "LICENSE" in s.kept_files


def test_cli_says_which_files_it_kept(tmp_path):
    root = tmp_path / "mine"
    root.mkdir()
    (root / "LICENSE").write_text(MY_LICENSE)
    r = CliRunner().invoke(main, ["generate", "--out", str(root), "--tracks", "noise", "--limit", "1", "--workers", "1", "-q"])
    assert r.exit_code == 2 and "--force" in r.output
    r = CliRunner().invoke(main, ["generate", "--out", str(root), "--tracks", "noise", "--limit", "1", "--workers", "1",
                                  "-q", "--force"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "kept your files (not replaced): LICENSE" in r.output
    assert (root / "LICENSE").read_text() == MY_LICENSE


def test_a_license_edited_in_a_dataset_folder_survives_regeneration(tmp_path):
    root = tmp_path / "data"
    _gen(root)
    ours = (root / "LICENSE").read_text()
    assert provenance.is_owned(root, "LICENSE")
    # kinhec's own file is rewritten freely (same content here), a user's edit is kept from then on
    (root / "LICENSE").unlink()
    _gen(root)
    assert (root / "LICENSE").read_text() == ours
    (root / "LICENSE").write_text(MY_LICENSE)
    assert not provenance.is_owned(root, "LICENSE")
    s = _gen(root)
    assert (root / "LICENSE").read_text() == MY_LICENSE and s.kept_files == ["LICENSE"]
    # the card command keeps it too
    write_card(root)
    assert (root / "LICENSE").read_text() == MY_LICENSE


def test_own_data_files_in_a_foreign_folder_are_refused_even_with_force(tmp_path):
    root = tmp_path / "mine"
    root.mkdir()
    (root / "robots.json").write_text("{}")
    with pytest.raises(InputError, match="expected no robots.json of your own"):
        _gen(root, force=True)
    assert (root / "robots.json").read_text() == "{}"


def test_overwrite_removes_stale_outputs_and_mismatched_results_are_refused(tmp_path):
    a = tmp_path / "a"
    _gen(a)
    bench = run_benchmark(a, workers=1)  # a full run: its outputs in a/benchmarks
    assert bench.out == a / "benchmarks"
    assert bench.ok
    fp = provenance.data_fingerprint(a)
    assert fp and provenance.results_fingerprint(bench.out / "results.parquet") == fp
    (a / "figures").mkdir()
    (a / "figures" / "benchmark_summary.png").write_bytes(b"\x89PNG")
    write_card(a)
    b = tmp_path / "b"
    _gen(b, tier=_tier_with_seed(tmp_path, 7))
    assert provenance.data_fingerprint(b) != fp

    # results of a's data copied into b (or b regenerated over a's results): visualize and card refuse them
    shutil.copytree(a / "benchmarks", b / "benchmarks")
    from kinhec.report.viz import make_figures

    with pytest.raises(InputError, match=r"results.parquet: expected benchmark results of the data now in .*b, got "
                                         r"results of other data"):
        make_figures(b, on_progress=lambda m: None)
    with pytest.raises(InputError, match="got results of other data"):
        write_card(b)
    r = CliRunner().invoke(main, ["visualize", str(b), "-q"])
    assert r.exit_code == 2 and "run `kinhec benchmark" in r.output

    # --overwrite with another seed deletes the shards and every output derived from them
    s = _gen(a, tier=_tier_with_seed(tmp_path, 7), overwrite=True)
    assert set(s.removed_outputs) >= {"benchmarks/results.parquet", "benchmarks/leaderboard.md", "figures", "README.md"}
    assert not (a / "benchmarks" / "results.parquet").exists() and not (a / "figures").exists()
    assert provenance.data_fingerprint(a) == provenance.data_fingerprint(b)


def test_results_without_a_fingerprint_are_accepted(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "results.parquet"
    pq.write_table(pa.table({"x": [1]}), p)
    assert provenance.results_fingerprint(p) is None
    provenance.check_results_match(tmp_path, p)  # no fingerprint (older run, published copy): nothing to compare
