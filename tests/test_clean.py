"""kinhec clean: plans that delete nothing, refusals, safe removal, and resuming after --partial."""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path

import pytest

from kinhec import InputError, load_manifest
from kinhec.dataset import clean
from kinhec.dataset.clean import execute, find_root, looks_like_dataset, plan_clean
from kinhec.io import shard_paths, shard_status
from kinhec.synth.runner import generate_dataset

PYPROJECT = '[build-system]\nrequires = ["setuptools"]\n\n[project]\nname = "kinhec"\nversion = "0"\n'


def touch(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


@pytest.fixture
def repo(tmp_path):
    """A checkout-like root with caches, scratch, build output, version control and data folders."""
    root = tmp_path / "repo"
    touch(root / "pyproject.toml", PYPROJECT)
    touch(root / "src" / "kinhec" / "__init__.py")
    touch(root / "src" / "kinhec" / "__pycache__" / "io.cpython-311.pyc")
    touch(root / "tests" / "__pycache__" / "t.pyc")
    touch(root / ".pytest_cache" / "v" / "cache" / "lastfailed", "{}")
    touch(root / ".hypothesis" / "examples" / "a")
    touch(root / "_to_delete" / "kinhec_work" / "generate_smoke.log")
    touch(root / ".git" / "HEAD", "ref: refs/heads/main\n")
    touch(root / ".git" / "__pycache__" / "hook.pyc")  # inside version control: never touched
    touch(root / ".venv" / "pyvenv.cfg")
    touch(root / ".venv" / "lib" / "__pycache__" / "site.pyc")  # a virtual environment is not entered
    touch(root / "build" / "lib" / "x.py")
    touch(root / "dist" / "kinhec-0.tar.gz")
    touch(root / "src" / "kinhec.egg-info" / "PKG-INFO")
    touch(root / "data" / "generation_info.json", "{}")
    touch(root / "data_a" / "sequences.parquet")
    touch(root / "data_b" / "notes.txt")  # a data_* folder that is not a dataset
    touch(root / "notes" / "todo.txt")
    return root


def rel(plan, root):
    return sorted(str(p.relative_to(root)) for p in plan.paths)


def test_find_root(repo, tmp_path):
    assert find_root(repo / "src" / "kinhec") == repo.resolve()
    assert find_root(repo) == repo.resolve()
    other = tmp_path / "elsewhere" / "deep"
    other.mkdir(parents=True)
    assert find_root(other) == other.resolve()
    touch(tmp_path / "elsewhere" / "pyproject.toml", '[project]\nname = "other"\n')
    assert find_root(other) == other.resolve()  # a project of another name is not the root


def test_default_plan_is_caches_and_scratch_and_a_dry_run_deletes_nothing(repo):
    before = snapshot(repo)
    plan = plan_clean(repo)
    assert rel(plan, repo) == [".hypothesis", ".pytest_cache", "_to_delete", "src/kinhec/__pycache__",
                               "tests/__pycache__"]  # fmt: skip
    assert not plan.refused and not plan.needs_confirmation
    assert snapshot(repo) == before  # planning (a dry run) changes nothing
    assert any("scratch folder" in line for line in plan.describe())
    res = execute(plan)
    assert res.ok and sorted(res.removed) == sorted(plan.paths)
    after = snapshot(repo)
    assert all(k in after for k in before if not any(k.startswith(p) for p in rel(plan, repo)))
    assert not any(k.startswith(("_to_delete", ".pytest_cache", "src/kinhec/__pycache__")) for k in after)
    assert (repo / ".git" / "__pycache__" / "hook.pyc").exists()
    assert (repo / ".venv" / "lib" / "__pycache__" / "site.pyc").exists()


def test_build_and_all(repo):
    assert rel(plan_clean(repo, build=True), repo) == [
        ".hypothesis", ".pytest_cache", "_to_delete", "build", "dist", "src/kinhec.egg-info",
        "src/kinhec/__pycache__", "tests/__pycache__",
    ]  # fmt: skip
    plan = plan_clean(repo, all_=True)
    paths = rel(plan, repo)
    assert "data_a" in paths and "data" not in paths and "data_b" not in paths
    assert [r.path.name for r in plan.refused] == ["data_b"]
    assert plan.needs_confirmation and [it.path.name for it in plan.items if it.confirm] == ["data_a"]
    declined = plan.without_unconfirmed()
    assert "data_a" not in rel(declined, repo) and not declined.needs_confirmation
    res = execute(declined)
    assert res.ok and (repo / "data_a").is_dir() and (repo / "data").is_dir() and not (repo / "build").exists()


def test_data_accepts_only_datasets_unless_forced(repo):
    plan = plan_clean(repo, data=[repo / "notes"])
    assert plan.items == [] and len(plan.refused) == 1
    assert "expected a kinhec dataset folder" in plan.refused[0].reason
    plan = plan_clean(repo, data=[repo / "notes"], force=True)
    assert rel(plan, repo) == ["notes"] and plan.items[0].confirm
    plan = plan_clean(repo, data=[repo / "data"])  # named explicitly, data/ is accepted
    assert rel(plan, repo) == ["data"]  # --data alone touches nothing else
    assert execute(plan).ok and not (repo / "data").exists() and (repo / "_to_delete").exists()
    assert looks_like_dataset(repo / "data_a") and not looks_like_dataset(repo / "notes")


def test_paths_outside_the_root_are_refused(repo, tmp_path):
    outside = tmp_path / "data_elsewhere"
    touch(outside / "generation_info.json", "{}")
    plan = plan_clean(repo, data=[outside], partial=[outside])
    assert plan.items == [] and len(plan.refused) == 2
    assert all("expected a folder inside the root" in r.reason for r in plan.refused)
    # a link inside the root that leads out of it is refused too
    (repo / "data_link").symlink_to(outside, target_is_directory=True)
    plan = plan_clean(repo, data=[repo / "data_link"])
    assert plan.items == [] and "a link to" in plan.refused[0].reason
    plan = plan_clean(repo, data=[outside], force=True)
    assert plan.paths == [outside.resolve()]


def test_links_are_never_followed(repo, tmp_path):
    outside = tmp_path / "outside"
    touch(outside / "__pycache__" / "keep.pyc")
    touch(outside / "_to_delete" / "keep.txt")
    (repo / "linked").symlink_to(outside, target_is_directory=True)
    (repo / "_to_delete" / "out").symlink_to(outside, target_is_directory=True)
    plan = plan_clean(repo, all_=True)
    assert all(repo.resolve() in p.parents for p in plan.paths)
    assert execute(plan).ok
    assert (outside / "__pycache__" / "keep.pyc").exists() and (outside / "_to_delete" / "keep.txt").exists()
    assert not (repo / "_to_delete").exists()


def test_never_the_root_its_parents_or_version_control(repo):
    for target in (repo, repo.parent, repo / ".git", Path("/")):
        plan = plan_clean(repo, data=[target], force=True)
        assert plan.items == [], target
        assert "refused" in plan.refused[0].reason


def test_missing_and_bad_arguments(repo):
    plan = plan_clean(repo, data=[repo / "nope"], partial=[repo / "pyproject.toml"])
    assert [r.reason.split(":")[0] for r in plan.refused] == ["--partial", "--data"]
    assert "expected a folder, got a file" in plan.refused[0].reason
    assert "expected an existing folder, got no such path" in plan.refused[1].reason
    with pytest.raises(InputError, match="root: expected an existing folder"):
        plan_clean(repo / "nope")
    with pytest.raises(InputError, match="data: expected a list of folders, got the single value"):
        plan_clean(repo, data="data_a")
    with pytest.raises(InputError, match="plan: expected a CleanPlan"):
        execute([repo])


def test_read_only_files_and_folders_are_removed(repo):
    ds = repo / "data_ro"
    f = touch(ds / "robot" / "noise-00000.parquet")
    touch(ds / "camera" / "noise-00000.parquet")
    os.chmod(f, stat.S_IRUSR)
    os.chmod(ds / "robot", stat.S_IRUSR | stat.S_IXUSR)
    res = execute(plan_clean(repo, data=[ds]))
    assert res.ok and res.removed == [ds.resolve()] and not ds.exists()


def test_version_control_inside_a_dataset_is_kept(repo):
    ds = repo / "data_hub"
    touch(ds / "sequences.parquet")
    touch(ds / ".git" / "config")
    res = execute(plan_clean(repo, data=[ds]))
    assert res.ok and res.removed == [] and res.kept == [(ds / ".git").resolve()]
    assert sorted(p.name for p in ds.iterdir()) == [".git"]


def test_a_failure_is_reported(repo, monkeypatch):
    stuck = repo / "_to_delete" / "kinhec_work" / "generate_smoke.log"
    unlink = os.unlink

    def fake_unlink(path, *a, **k):
        if Path(path) == stuck:
            raise PermissionError(1, "Operation not permitted")
        return unlink(path, *a, **k)

    monkeypatch.setattr(os, "unlink", fake_unlink)
    res = execute(plan_clean(repo))
    assert not res.ok and res.failed == [(stuck, "Operation not permitted")]
    assert stuck.exists() and (repo / "_to_delete").resolve() not in res.removed
    assert not (repo / ".pytest_cache").exists()  # the other items were still removed


def test_partial_keeps_complete_shards_and_generate_resumes(tmp_path):
    root = tmp_path / "repo"
    touch(root / "pyproject.toml", PYPROJECT)
    data = root / "data_smoke"
    tracks = ["noise", "pnp"]  # three shards: noise-00000, noise-00001, pnp-00000
    assert generate_dataset("smoke", data, workers=1, tracks=tracks, progress=False).ok
    keep_robot, keep_camera = shard_paths(data, "noise", 0)
    kept = {p: p.read_bytes() for p in (keep_robot, keep_camera)}
    # an interrupted run: one shard with its camera file missing, one truncated shard, temporary files
    shard_paths(data, "noise", 1)[1].unlink()
    pnp_robot, pnp_camera = shard_paths(data, "pnp", 0)
    pnp_robot.write_bytes(pnp_robot.read_bytes()[:1000])
    touch(data / "robot" / "noise-00002.parquet.tmp")
    touch(data / "sequences.parquet.tmp")
    touch(data / "robot" / "other-00000.parquet")  # not a kinhec track name: left alone
    lock = touch(data / ".kinhec" / "lock", json.dumps({"pid": 2**22 + 12345, "host": socket.gethostname()}))

    before = snapshot(data)
    plan = plan_clean(root, partial=[data])
    assert snapshot(data) == before
    assert rel(plan, data.resolve()) == ["camera/pnp-00000.parquet", "robot/noise-00001.parquet",
                                         "robot/noise-00002.parquet.tmp", "robot/pnp-00000.parquet",
                                         "sequences.parquet.tmp"]  # fmt: skip
    assert not plan.needs_confirmation
    res = execute(plan)
    assert res.ok
    assert {p: p.read_bytes() for p in kept} == kept
    assert lock.exists() and (data / "robot" / "other-00000.parquet").exists()

    (data / "robot" / "other-00000.parquet").unlink()
    summary = generate_dataset("smoke", data, workers=1, tracks=tracks, progress=False)
    assert summary.ok and summary.skipped_shards == 1 and summary.written_shards == 2
    man = load_manifest(data)
    assert len(man) == 20
    for track, k in (("noise", 0), ("noise", 1), ("pnp", 0)):
        ids = man[man.robot_file == f"robot/{track}-{k:05d}.parquet"].sequence_id.tolist()
        assert shard_status(data, track, k, ids) == "complete"
    assert {p: p.read_bytes() for p in kept} == kept


def test_partial_refuses_a_folder_being_generated(repo):
    ds = repo / "data_a"
    touch(ds / ".kinhec" / "lock", json.dumps({"pid": os.getpid(), "host": socket.gethostname()}))
    touch(ds / "x.tmp")
    plan = plan_clean(repo, partial=[ds])
    assert plan.items == [] and f"pid {os.getpid()}" in plan.refused[0].reason
    assert rel(plan_clean(repo, partial=[ds], force=True), ds.resolve()) == ["x.tmp"]
    assert clean.SCRATCH_DIR == "_to_delete"


def test_relative_paths_from_the_current_folder_or_the_root(repo, monkeypatch):
    monkeypatch.chdir(repo / "src")  # data_a is not here: it is taken from the root
    assert rel(plan_clean(repo, data=["data_a"]), repo.resolve()) == ["data_a"]
    monkeypatch.chdir(repo)
    assert rel(plan_clean(data=["data_a"]), repo.resolve()) == ["data_a"]  # root found from the current folder


def test_partial_leaves_shards_written_by_another_tool_alone(tmp_path):
    """A complete shard without kinhec's stored index rows (e.g. a published copy) is not half-written."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from kinhec.synth.runner import generate_dataset

    root = tmp_path / "data_foreign"
    assert generate_dataset("smoke", root, workers=1, limit=2, tracks=["noise"], progress=False).ok
    for sub in ("robot", "camera"):  # rewrite both files as another writer would: no kinhec metadata
        p = root / sub / "noise-00000.parquet"
        t = pq.read_table(p).replace_schema_metadata(None)
        with pq.ParquetWriter(p, t.schema, compression="zstd") as w:
            for sid in ("noise-000000", "noise-000001"):
                w.write_table(t.filter(pc.equal(t.column("sequence_id"), sid)))
    plan = clean.plan_clean(tmp_path, partial=[root])
    assert not [it for it in plan.items if "noise-00000" in str(it.path)]
    # a truncated file still makes the pair half-written
    cam = root / "camera" / "noise-00000.parquet"
    cam.write_bytes(cam.read_bytes()[:100])
    plan = clean.plan_clean(tmp_path, partial=[root])
    assert sorted(it.path.name for it in plan.items if "shard" in it.reason) == ["noise-00000.parquet"] * 2
