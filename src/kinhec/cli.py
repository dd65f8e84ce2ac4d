"""The ``kinhec`` command line.

Each command is a thin entry point: parse the arguments, call one library
function, print.  Every known problem is one line on stderr,
``kinhec <command>: error: <what was expected, what came>``, with the exit
status of its kind (:func:`exit_status`): 2 for bad input (a missing or wrong
path, option or name, a file that is not what the command reads: fix the
command and run it again), 1 when the command ran and the job failed or found
problems (validation findings, failed shards, a folder another kinhec process
is writing, motions that do not determine the unknowns).  ``kinhec --debug
...`` shows the full traceback instead.  Heavy modules are imported inside
the commands so that ``kinhec --help`` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kinhec import __version__
from kinhec.util.errors import DatasetFormatError, FolderInUseError, InputError, KinhecError
from kinhec.util.optional import MissingDependencyError, missing_dependency, require

#: Exit status of bad input (the command line or a file it names) and of a job that failed or found problems.
EXIT_BAD_INPUT, EXIT_FAILED = 2, 1


def exit_status(exc: BaseException) -> int:
    """2 for bad input (usage errors, :class:`InputError`, :class:`DatasetFormatError`, paths that cannot be
    read or written) and for an optional package that is not installed (:class:`MissingDependencyError`), 1 for
    every other known problem (a folder in use, degenerate motion, no convergence)."""
    if isinstance(exc, FolderInUseError):
        return EXIT_FAILED
    if isinstance(exc, (click.UsageError, InputError, DatasetFormatError, MissingDependencyError, OSError)):
        return EXIT_BAD_INPUT
    return EXIT_FAILED


class OneLineError(click.ClickException):
    """A known problem, shown as ``kinhec <command>: error: <message>`` (one line) with its exit status."""

    def __init__(self, command: str, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.command = command
        self.exit_code = exit_code

    def show(self, file=None) -> None:
        click.echo(f"{self.command}: error: {' '.join(str(self.message).split())}", err=True)


def _command_path(ctx: click.Context) -> str:
    """``kinhec`` and the sub-command being run (``kinhec benchmark``); set once the group has resolved it."""
    sub = ctx.invoked_subcommand if ctx is not None else None
    return f"kinhec {sub}" if sub else "kinhec"


def _usage_path(exc: click.UsageError) -> str:
    """The command path of a usage error, named ``kinhec`` whatever the program was called."""
    words = exc.ctx.command_path.split() if exc.ctx is not None else []
    return " ".join(["kinhec"] + words[1:])


def _usage_message(exc: click.UsageError) -> str:
    return f"{exc.format_message().rstrip('.')} (see {_usage_path(exc)} --help)"


class _KinhecGroup(click.Group):
    """A click group that turns known problems and usage errors into one line and their exit status."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:  # e.g. an unknown option of kinhec itself
            raise OneLineError("kinhec", _usage_message(exc), EXIT_BAD_INPUT) from None

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except OneLineError:
            raise
        except click.UsageError as exc:  # a missing folder, a bad option value, an unknown command or option
            raise OneLineError(_usage_path(exc) if exc.ctx is not None else _command_path(ctx), _usage_message(exc),
                               EXIT_BAD_INPUT) from None  # fmt: skip
        except KinhecError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            raise OneLineError(_command_path(ctx), str(exc), exit_status(exc)) from None
        except ImportError as exc:  # an optional package (an extra of pyproject.toml) that is not installed
            missing = missing_dependency(exc)
            if missing is None or (ctx.obj and ctx.obj.get("debug")):
                raise
            raise OneLineError(_command_path(ctx), str(missing), EXIT_BAD_INPUT) from None
        except OSError as exc:  # a path that cannot be created, read or written
            if ctx.obj and ctx.obj.get("debug"):
                raise
            where = f"{exc.filename}: " if exc.filename else ""
            raise OneLineError(_command_path(ctx), f"{where}{exc.strerror or exc}", EXIT_BAD_INPUT) from None
        except KeyboardInterrupt:
            click.echo("kinhec: interrupted", err=True)
            ctx.exit(130)


class _MultiValue(click.Option):
    """A repeatable option that also takes several values at once: ``--tracks noise pnp`` or ``--tracks noise,pnp``.

    The words after the option are taken up to the next option, an existing file or folder (the command's
    DATA argument: ``--tracks noise my_data`` leaves ``my_data`` to DATA), or, for an option with a fixed
    vocabulary (``vocabulary``: a function returning the valid words), the first word outside it.
    """

    def __init__(self, *args, vocabulary=None, **kwargs):
        kwargs.setdefault("multiple", True)
        self.vocabulary = vocabulary
        super().__init__(*args, **kwargs)

    def _takes(self, word: str) -> bool:
        if word.startswith("-") or Path(word).exists():
            return False
        if self.vocabulary is None:
            return True
        valid = set(self.vocabulary())
        return all(part in valid for part in word.split(",") if part)

    def add_to_parser(self, parser, ctx):
        super().add_to_parser(parser, ctx)
        names = set(self.opts)
        for opt_name in names:
            opt = parser._long_opt.get(opt_name) or parser._short_opt.get(opt_name)
            if opt is None:
                continue
            original = opt.process

            def process(value, state, original=original, parser=parser):
                values = [value]
                # take the following words too, up to the next option, an existing path or an unknown word
                while state.rargs and self._takes(state.rargs[0]):
                    values.append(state.rargs.pop(0))
                for v in values:
                    for part in str(v).split(","):
                        if part:
                            original(part, state)

            opt.process = process


def _tracks():
    from kinhec.io.schema import TRACKS

    return TRACKS


def _syncs():
    return ("oracle", "estimated")


_SEVERAL = "several words or commas: {ex}; repeatable"


@click.group(cls=_KinhecGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="kinhec")
@click.option("--debug", is_flag=True, help="Show full tracebacks instead of one-line errors.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """kinhec: hand-eye (AX=XB) and robot-world/hand-eye (AX=YB) calibration toolkit and benchmark."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def _console():
    return require("rich.console").Console()


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON instead of tables.")
def info(as_json: bool) -> None:
    """List robots, camera and target presets, tracks, tiers and solvers."""
    from kinhec.dataset.inventory import inventory

    data = inventory()
    if as_json:
        from kinhec.util import jsonutil

        click.echo(jsonutil.dumps(data, indent=2))
        return
    from rich.table import Table

    con = _console()
    con.print(f"[bold]kinhec {__version__}[/bold]")
    t = Table(title="Robots", title_justify="left")
    for c in ("name", "DoF", "DH convention", "rate [Hz]", "reach [m]", "description"):
        t.add_column(c)
    for r in data["robots"]:
        t.add_row(r["name"], str(r["dof"]), r["convention"], f"{r['control_rate_hz']:g}", f"{r['reach_m']:.3f}", r["description"])
    con.print(t)
    t = Table(title="Reduced-DOF machines (kinhec only: not in the published tiers; flange level)",
              title_justify="left")
    for c in ("name", "DoF", "joints", "rate [Hz]", "reach [m]", "description"):
        t.add_column(c)
    for r in data["machines"]:
        t.add_row(r["name"], str(r["dof"]), r["joints"], f"{r['control_rate_hz']:g}", f"{r['reach_m']:.3f}",
                  r["description"])
    con.print(t)
    t = Table(title="Camera presets", title_justify="left")
    for c in ("name", "width", "height", "f [px]", "HFOV [deg]"):
        t.add_column(c)
    for c in data["cameras"]:
        t.add_row(c["name"], str(c["width_px"]), str(c["height_px"]), f"{c['f_px']:g}", f"{c['hfov_deg']:.1f}")
    con.print(t)
    t = Table(title="Target presets", title_justify="left")
    for c in ("name", "points", "pitch [mm]", "kind", "min. visible"):
        t.add_column(c)
    for g in data["targets"]:
        t.add_row(g["name"], f"{g['cols']}x{g['rows']}", f"{1000 * g['pitch_m']:g}", g["kind"], str(g["min_visible_points"]))
    con.print(t)
    t = Table(title="Tracks and tiers (sequences)", title_justify="left")
    t.add_column("track")
    tiers = data["tiers"]
    for name in tiers:
        t.add_column(name, justify="right")
    for track, desc in data["tracks"].items():
        t.add_row(track, *[f"{tiers[n]['counts'].get(track, 0):,}" for n in tiers])
    t.add_row("[bold]total", *[f"[bold]{tiers[n]['total']:,}" for n in tiers])
    con.print(t)
    if data["solvers"]:
        t = Table(title="Solvers", title_justify="left")
        for c in ("name", "problem", "reference"):
            t.add_column(c)
        for s in data["solvers"]:
            name = s["name"] + (" (plug-in)" if s.get("plugin") else "")
            t.add_row(name, s["kind"], s.get("citation", "") or s.get("module", ""))
        con.print(t)


@main.command()
@click.option("--tier", "tier_name", default="smoke", show_default=True,
              help="Built-in tier (smoke, small, medium, full) or path to a tier YAML file.")
@click.option("--tracks", cls=_MultiValue, vocabulary=_tracks,
              help="Only these tracks (" + _SEVERAL.format(ex="--tracks noise pnp or noise,pnp") + "; default: every track "
                   "of the tier).")
def plan(tier_name: str, tracks: tuple[str, ...]) -> None:
    """Print the number of sequences per track and in total for a tier."""
    from rich.table import Table

    from kinhec.synth import tiers as tiers_mod

    tier = tiers_mod.load_tier(tier_name)
    counts = tiers_mod.plan_counts(tier, tracks or None)
    con = _console()
    con.print(f"tier {tier.name} ({tier.source}): global seed {tier.global_seed}, {tier.shard_size} sequences per shard")
    t = Table()
    t.add_column("track")
    t.add_column("sequences", justify="right")
    t.add_column("shards", justify="right")
    for track, n in counts.items():
        t.add_row(track, f"{n:,}", f"{-(-n // tier.shard_size):,}")
    t.add_row("[bold]total", f"[bold]{sum(counts.values()):,}", f"{sum(-(-n // tier.shard_size) for n in counts.values()):,}")
    con.print(t)


def _positive_int(ctx, param, value):
    if value is not None and value < 1:
        raise click.BadParameter(f"expected an integer >= 1, got {value}")
    return value


def _check_tracks(tracks):
    from kinhec.util.errors import UnknownNameError
    from kinhec.io.tracks import TRACKS

    for t in tracks:
        if t not in TRACKS:
            raise UnknownNameError("track", t, TRACKS)
    return tracks


@main.command()
@click.option("--tier", "tier_name", default="smoke", show_default=True,
              help="Built-in tier (smoke, small, medium, full) or path to a tier YAML file.")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="Dataset folder to write or resume.")
@click.option("--workers", type=int, default=None, callback=_positive_int,
              help="Worker processes (default: number of cores).")
@click.option("--tracks", cls=_MultiValue, vocabulary=_tracks,
              help="Only these tracks (" + _SEVERAL.format(ex="--tracks noise pnp or noise,pnp") + "); other tracks in "
                   "the folder are kept.")
@click.option("--limit", type=int, default=None, callback=_positive_int, help="First N sequences of each track only.")
@click.option("--fail-fast", is_flag=True, help="Stop submitting shards after the first failure.")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Local process pool or a Dask cluster.")
@click.option("--scheduler", default=None, help="Address of a Dask scheduler (implies --executor dask).")
@click.option("--overwrite", is_flag=True,
              help="Write into a folder made by another tier/seed/version (its shards and the benchmark results, "
                   "figures and card derived from them are deleted).")
@click.option("--force", is_flag=True,
              help="Write into a non-empty folder that is not a dataset; the files there (LICENSE, CITATION.cff, ...) "
                   "are kept.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def generate(ctx, tier_name, out, workers, tracks, limit, fail_fast, executor, scheduler, overwrite, force, quiet):
    """Generate (or resume) a dataset folder from a tier; finished shards are skipped."""
    _check_tracks(tracks)  # before the heavy imports: a wrong name is reported at once
    from kinhec.synth.runner import generate_dataset

    con = _console()
    reporter = _ShardProgress(con, enabled=not quiet)
    try:
        summary = generate_dataset(
            tier_name, out, workers=workers, tracks=tracks or None, limit=limit, fail_fast=fail_fast,
            executor=executor, scheduler=scheduler, overwrite=overwrite, force=force, on_event=reporter,
        )  # fmt: skip
    finally:
        reporter.close()
    _print_generate_summary(con, summary)
    if not summary.ok:
        ctx.exit(1)


class _ShardProgress:
    """Rich progress bar fed by the events of a shard runner (generate, benchmark)."""

    def __init__(self, console, enabled: bool, label: str = "generate") -> None:
        self.console = console
        self.enabled = enabled
        self.label = label
        self.progress = None
        self.task = None

    def __call__(self, kind: str, data: dict) -> None:
        if kind == "start" and self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self.progress = Progress(
                TextColumn(f"[bold]{self.label}"), BarColumn(), MofNCompleteColumn(), TextColumn("sequences"),
                TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                console=self.console, transient=False,
            )  # fmt: skip
            self.progress.start()
            self.task = self.progress.add_task(self.label, total=data["planned"], completed=data["done"], rate="")
            self._t0 = __import__("time").perf_counter()
            self._n0 = data["done"]
        elif kind == "shard":
            o = data["outcome"]
            if not o.ok:
                self.console.print(f"[red]shard {o.track}-{o.shard_index:05d} failed[/red] at {o.failed_sequence}: {o.error}")
            if self.progress is not None and o.ok:
                self.progress.advance(self.task, o.n_sequences)
                done = self.progress.tasks[0].completed - self._n0
                dt = __import__("time").perf_counter() - self._t0
                self.progress.update(self.task, rate=f"{done / dt:.1f} seq/s" if dt > 0 else "")
        elif kind == "interrupt":
            then = "then writing the index" if self.label == "generate" else "results of finished shards are kept"
            self.console.print(f"[yellow]interrupted: finishing {data['running']} running shard(s); {then} "
                               "(Ctrl+C again to stop at once)[/yellow]")
        elif kind == "abort":
            self.console.print(f"[yellow]stopped: {data['running']} running shard(s) abandoned; re-run the same "
                               "command to resume[/yellow]")
        elif kind == "end":
            self.close()

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


@main.command("generate-machines")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="New or empty folder to write.")
@click.option("--machines", cls=_MultiValue, help="Machines to record (default: all; kinhec info lists them).")
@click.option("--per-setup", "per_setup", type=int, default=50, show_default=True, callback=_positive_int,
              help="Sequences per machine eye-in-hand, and as many eye-to-hand.")
@click.option("--seed", type=int, default=0, show_default=True, help="Global seed of the sequences.")
@click.option("--tier", "tier_name", default="small", show_default=True, help="Tier whose noise levels are used.")
def generate_machines(out, machines, per_setup, seed, tier_name):
    """Recordings of the reduced-DOF machines (kinhec only) with exact ground truth, as a dataset folder."""
    from kinhec.models.robots import MACHINE_NAMES
    from kinhec.synth.machines import generate_machine_dataset

    names = tuple(machines) if machines else MACHINE_NAMES
    written = generate_machine_dataset(out, names, per_setup, seed=seed, tier=tier_name)
    click.echo(f"{2 * per_setup * len(names)} sequences of {', '.join(names)} in {len(written) // 2} shards: {out}")


def _print_generate_summary(con, s) -> None:
    con.print(
        f"[bold]{s.root}[/bold]: tier {s.tier}, {s.planned_sequences:,} sequences in {s.planned_shards:,} shards; "
        f"{s.written_shards:,} shards written ({s.written_sequences:,} sequences), {s.skipped_shards:,} already complete; "
        f"{s.wall_s:.1f} s wall, {s.cpu_s:.1f} s CPU in workers"
    )
    if s.kept_files:
        con.print(f"kept your files (not replaced): {', '.join(s.kept_files)}", highlight=False, markup=False)
    if s.removed_outputs:
        con.print(f"removed stale outputs of the replaced data: {', '.join(s.removed_outputs)}", highlight=False,
                  markup=False)  # fmt: skip
    if s.failed:
        con.print(f"[red]{len(s.failed)} shard(s) failed[/red]; tracebacks in {s.log_path}; re-run the same command to retry them:")
        for o in s.failed:
            con.print(f"  {o.track}-{o.shard_index:05d}: {o.failed_sequence}: {o.error}")
    if s.interrupted:
        con.print("[yellow]interrupted[/yellow]: re-run the same command to resume")


@main.command()
@click.argument("data", type=click.Path(exists=True, file_okay=False))
def index(data):
    """Rebuild sequences.parquet / sequences.csv from the shards' metadata."""
    from kinhec import io
    from kinhec.util.errors import DatasetFormatError

    if not any((Path(data) / sub).is_dir() for sub in ("robot", "camera")):
        raise DatasetFormatError(f"{data}: not a kinhec dataset: expected robot/ and camera/ shard folders, found neither")
    from kinhec.util.locking import writer_lock

    with writer_lock(data):  # the one lock of every writer (generate, benchmark, index)
        man = io.rebuild_index(data)
        io.write_index(data, man)
    click.echo(f"{data}: index rebuilt, {len(man):,} sequences")


@main.command()
@click.argument("data", type=click.Path(exists=True, file_okay=False))
@click.option("--max-sequences", type=int, default=None, callback=_positive_int,
              help="Check N sequences evenly spaced over the index (folder-level checks always run on everything).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None, help="Write the findings as JSON.")
@click.option("--partial", is_flag=True,
              help="Accept a folder whose generation has not finished (planned sequences missing: a warning).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def validate(ctx, data, max_sequences, report_path, partial, quiet):
    """Check a dataset folder: files, schema, row groups, clocks, poses, FK and the AX=YB identity."""
    from kinhec.dataset.validate import validate_dataset

    con = _console()
    with _simple_progress(con, "validate", "sequences", enabled=not quiet) as progress:
        report = validate_dataset(data, max_sequences=max_sequences, progress=progress, partial=partial)
    for line in report.summary_lines():
        con.print(line, highlight=False, markup=False)
    if report_path:
        report.write_json(report_path)
        con.print(f"report written to {report_path}")
    from kinhec.dataset.validation_record import record_validation

    record_validation(data, report)  # for kinhec report DATA ("validation: passed"), beside the data's state
    if not report.ok:
        ctx.exit(1)


class _simple_progress:
    """Context manager giving a ``progress(done, total)`` callback backed by a rich progress bar."""

    def __init__(self, console, label: str, unit: str, enabled: bool = True) -> None:
        self.console, self.label, self.unit, self.enabled = console, label, unit, enabled
        self.progress = None
        self.task = None

    def __enter__(self):
        if not self.enabled:
            return None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        columns = (
            TextColumn(f"[bold]{self.label}"), BarColumn(), MofNCompleteColumn(), TextColumn(self.unit),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
        )  # fmt: skip

        def cb(done, total):
            if self.task is None:  # started on the first report, so an early error prints nothing else
                self.progress = Progress(*columns, console=self.console)
                self.progress.start()
                self.task = self.progress.add_task(self.label, total=total)
            self.progress.update(self.task, completed=done, total=total)

        return cb

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.stop()


@main.command()
@click.argument("data", type=click.Path(exists=True, file_okay=False))
@click.option("--hf-repo", default=None, metavar="USER/NAME",
              help="Hugging Face dataset repository: absolute figure URLs and download commands name it.")
@click.option("--source", default=None, metavar="URL|PATH",
              help="Where users pip-install kinhec from (a git URL or a path), for the card's install lines "
                   "(default: a clone of kinhec's source in ./kinhec).")
def card(data, hf_repo, source):
    """Write the dataset card README.md (with LICENSE and CITATION.cff) from the index."""
    from kinhec.dataset.card import write_card

    path = write_card(data, hf_repo=hf_repo, source=source)
    click.echo(f"card written to {path}")


@main.command()
@click.argument("data", type=click.Path(exists=True, file_okay=False))
@click.argument("sequence_id")
@click.option("--format", "fmt", type=click.Choice(["csv", "tum"]), default="csv", show_default=True,
              help="csv: one file per stream; tum: 'timestamp tx ty tz qx qy qz qw' files that evo reads.")
@click.option("--out", "out", type=click.Path(file_okay=False), default=".", show_default=True, help="Output folder.")
def export(data, sequence_id, fmt, out):
    """Export one sequence as CSV or TUM pose files."""
    from kinhec.dataset.export import export_sequence

    for p in export_sequence(data, sequence_id, fmt, out):
        click.echo(str(p))


@main.command()
@click.argument("data", type=click.Path(exists=True, file_okay=False))
@click.option("--sequence", "sequence_id", required=True, metavar="ID", help="Sequence to render (synchronous, with a target).")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="Output folder (resumed if present).")
@click.option("--target", default=None, metavar="SPEC",
              help="Printed target to draw (default: the one standing for the sequence's target preset).")
@click.option("--blur", "blur_px", type=float, default=0.7, show_default=True, help="Defocus blur sigma [px].")
@click.option("--noise", "noise_dn", type=float, default=2.0, show_default=True, help="Sensor noise at mid grey [grey levels].")
@click.option("--lighting", type=float, default=0.3, show_default=True, help="Uneven lighting, relative amplitude.")
@click.option("--motion-blur", "motion_blur_px", type=float, default=0.0, show_default=True, help="Motion blur length [px].")
@click.option("--distortion", default=None, metavar="k1,k2,p1,p2[,k3]", help="Lens distortion to render (default none).")
@click.option("--intrinsics", "intrinsics_file", default=None, type=click.Path(exists=True, dir_okay=False),
              metavar="CAMERA.yaml",
              help="Draw through this camera instead of the sequence's: an OpenCV YAML, Kalibr camchain or kinhec "
                   "calibrate JSON (pinhole, fisheye/equidistant or rational), its image size the images'.")
@click.option("--supersample", type=int, default=4, show_default=True, help="Samples per pixel along each axis.")
@click.option("--seed", type=int, default=None, help="Seed of the degradations (default: the sequence's).")
@click.option("--quiet", "-q", is_flag=True, help="No progress.")
@click.pass_context
def render(ctx, data, sequence_id, out, target, blur_px, noise_dn, lighting, motion_blur_px, distortion,
           intrinsics_file, supersample, seed, quiet):
    """Render a sequence's camera frames as images, with the hand file and the truth for kinhec calibrate --images."""
    from kinhec.calibrate.corners import intrinsics_vector, parse_intrinsics
    from kinhec.io import load_sequence
    from kinhec.models.intrinsics_files import read_intrinsics
    from kinhec.vision.render import RenderSettings, render_sequence

    k, size = None, None
    if intrinsics_file is not None:
        if distortion is not None:
            _input_error(ctx, "render", KinhecError(f"--distortion {distortion}: expected either it or --intrinsics "
                                                    f"(the file's camera has its own distortion), got both"))
        intr = read_intrinsics(intrinsics_file, size_from="--intrinsics")
        k, size = intrinsics_vector(intr, intrinsics_file), (intr.width_px, intr.height_px)
    dist = (0.0,) * 5 if distortion is None else tuple(parse_intrinsics(f"1,1,0,0,{distortion}")[4:])
    settings = RenderSettings(blur_px=blur_px, noise_dn=noise_dn, lighting=lighting, motion_blur_px=motion_blur_px,
                              supersample=supersample, distortion=dist)
    show = None if quiet or not sys.stderr.isatty() else (
        lambda i, n: click.echo(f"\rrendering {i}/{n}\x1b[K" + ("\n" if i == n else ""), nl=False, err=True))
    r = render_sequence(load_sequence(data, sequence_id), out, target=target, settings=settings, seed=seed,
                        progress=show, intrinsics=k, image_size=size)
    click.echo(f"{len(r.images)} images in {r.out / 'images'} ({r.n_written} rendered now), target {r.target.spec}")
    click.echo(f"hand poses: {r.hand}")
    click.echo(f"truth: {r.truth}" + (f"; exact corners: {r.exact}" if r.exact else "")
               + (f"; camera: {r.camera_file}" if r.camera_file else ""))
    click.echo(f"calibrate with: {r.calibrate_command()}")


@main.command()
@click.option("--root", "root", type=click.Path(exists=True, file_okay=False), default=None,
              help="Project root (default: the kinhec checkout around the current folder, else the current folder).")
@click.option("--dry-run", "-n", is_flag=True, help="List what would be removed; remove nothing.")
@click.option("--partial", multiple=True, type=click.Path(), metavar="DIR",
              help="Remove *.tmp files and half-written shards of a dataset folder, keeping complete shards.")
@click.option("--data", "data", multiple=True, type=click.Path(), metavar="DIR",
              help="Remove a whole dataset folder (asks y/N unless --yes).")
@click.option("--build", is_flag=True, help="Also remove build/, dist/ and src/*.egg-info.")
@click.option("--all", "all_", is_flag=True, help="Everything above plus every data_* folder in the root (never data/).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask before removing dataset folders.")
@click.option("--force", is_flag=True, help="Accept folders that do not look like datasets, or outside the root.")
@click.pass_context
def clean(ctx, root, dry_run, partial, data, build, all_, yes, force):
    """Remove caches and the scratch folder (default), half-written shards, dataset folders or build output."""
    from kinhec.dataset.clean import execute, plan_clean

    plan = plan_clean(root, partial=partial, data=data, build=build, all_=all_, force=force)
    lines = plan.describe()
    if not lines:
        click.echo("nothing to remove")
        return
    for line in lines:
        click.echo(("would remove: " if dry_run and not line.startswith("refused") else "") + line)
    if dry_run:
        ctx.exit(1 if plan.refused else 0)
    if plan.needs_confirmation and not yes:
        if not sys.stdin.isatty() or not click.confirm("Remove the dataset folders listed above?", default=False):
            click.echo("dataset folders kept (confirm with --yes)")
            plan = plan.without_unconfirmed()
    result = execute(plan)
    click.echo(f"removed {len(result.removed)} path(s)")
    for path, why in result.failed:
        click.echo(f"could not remove {path}: {why}", err=True)
    for path in result.kept:
        click.echo(f"kept version-control folder {path}")
    if result.failed or plan.refused:
        ctx.exit(1)


@main.command()
@click.argument("data", type=click.Path(exists=True, file_okay=False))
@click.option("--out", "out", type=click.Path(file_okay=False), default=None, help="Output folder (default DATA/benchmarks).")
@click.option("--solvers", cls=_MultiValue,
              help="Only these solvers, baselines or plug-ins (" + _SEVERAL.format(ex="--solvers shah tsai_lenz") +
                   "; default: kinhec's thirteen solvers, that is the twelve pose solvers on every sequence and "
                   "reprojection on the sequences with pixels, and every plug-in).")
@click.option("--solver-module", "solver_modules", multiple=True, metavar="MODULE",
              help="Import this module (mypkg.mysolvers) or .py file first; its kinhec.solvers.register calls add "
                   "plug-in solvers (repeatable).")
@click.option("--tracks", cls=_MultiValue, vocabulary=_tracks,
              help="Only these tracks (" + _SEVERAL.format(ex="--tracks noise pnp or noise,pnp") + ").")
@click.option("--max-sequences", type=int, default=None, callback=_positive_int, help="First N sequences of each track.")
@click.option("--sync", "sync", cls=_MultiValue, vocabulary=_syncs,
              help="Evaluation synchronisation: oracle and/or estimated (default both).")
@click.option("--workers", type=int, default=None, callback=_positive_int, help="Worker processes (default: number of cores).")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True)
@click.option("--scheduler", default=None, help="Address of a Dask scheduler (implies --executor dask).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def benchmark(ctx, data, out, solvers, solver_modules, tracks, max_sequences, sync, workers, executor, scheduler, quiet):
    """Run the baseline (and plug-in) solvers with the fixed protocol; results and leaderboard in DATA/benchmarks.

    Plug-in solvers come from --solver-module and from the kinhec.solvers entry points of installed packages.
    """
    from kinhec.evaluate.benchmark import EVAL_SYNCS, run_benchmark

    con = _console()
    reporter = _ShardProgress(con, enabled=not quiet, label="benchmark")
    try:
        s = run_benchmark(
            data, out=out, solvers=solvers or None, tracks=tracks or None, max_sequences=max_sequences,
            sync=sync or EVAL_SYNCS, workers=workers, executor=executor, scheduler=scheduler, on_event=reporter,
            solver_modules=solver_modules,
        )  # fmt: skip
    finally:
        reporter.close()
    if s.subset:
        con.print(f"subset run (fingerprint {s.fingerprint}): outputs in their own folder, a full run's are kept")
    con.print(
        f"[bold]{s.out}[/bold]: {s.planned_sequences:,} sequences x {len(s.solvers)} solvers; {s.computed_units} "
        f"shard(s) evaluated, {s.skipped_units} reused; {s.n_ok:,}/{s.n_rows:,} rows ok; "
        f"{s.wall_s:.1f} s wall, {s.cpu_s:.1f} s CPU"
    )
    from kinhec.evaluate.benchmark import describe_failed_rows

    for line in describe_failed_rows(s.results, limit=3) if s.results is not None else []:
        con.print(line, highlight=False, markup=False)  # which rows have no estimate, and whether that is expected
    for o in s.failed:
        con.print(f"[red]shard {o.track}-{o.shard_index:05d} failed[/red]: {o.error}")
    if s.unreadable:
        con.print(f"[red]{len(s.unreadable)} sequence(s) could not be read[/red] (e.g. {s.unreadable[0]}): their rows say "
                  "'reading failed'; for a partial download, restrict --tracks to the tracks you have")
    if s.interrupted:
        con.print("[yellow]interrupted[/yellow]: re-run the same command to resume")
    elif s.files:
        con.print(f"leaderboard: {s.files.get('leaderboard')}")
    if not s.ok:
        ctx.exit(1)


@main.command()
@click.argument("data", type=click.Path(exists=True, file_okay=False))
@click.option("--out", "out", type=click.Path(file_okay=False), default=None, help="Output folder (default DATA/figures).")
@click.option("--sequences", cls=_MultiValue,
              help="Sequence ids for the per-sequence figures (" + _SEVERAL.format(ex="--sequences noise-000000 "
                                                                                    "pnp-000003") + ").")
@click.option("--workers", type=int, default=1, show_default=True, callback=_positive_int,
              help="Worker processes drawing figures at once (the PNGs are the same bytes).")
@click.option("--quiet", "-q", is_flag=True, help="Do not list the figures as they are written.")
def visualize(data, out, sequences, workers, quiet):
    """Draw the PNG figures of a dataset (and of its benchmark results, when present)."""
    require("matplotlib")  # before the dataset is read
    from kinhec.report.viz import make_figures

    con = _console()
    paths = make_figures(data, out=out, sequences=list(sequences) or None, workers=workers,
                         on_progress=None if quiet else (lambda msg: con.print(msg, highlight=False, markup=False)))  # fmt: skip
    con.print(f"{len(paths)} figure(s) in {Path(paths[0]).parent if paths else out or Path(data) / 'figures'}")


def _detection_progress():
    """``progress(done, total, detection)`` that rewrites one line on a terminal's stderr (nothing otherwise)."""
    if not sys.stderr.isatty():
        return None

    def show(done, total, det):
        end = "\n" if done == total else ""
        click.echo(f"\rdetecting {done}/{total}: {det.image} {'ok' if det.ok else 'dropped'}\x1b[K{end}", nl=False,
                   err=True)

    return show


def _input_error(ctx, command: str, exc: Exception) -> None:
    """A calibration's bad input: one line on stderr, exit status 2 (``--debug``: the traceback)."""
    if ctx.obj and ctx.obj.get("debug"):
        raise exc
    where = f"{exc.filename}: " if isinstance(exc, OSError) and exc.filename else ""
    msg = str(exc.strerror or exc) if isinstance(exc, OSError) else str(exc)
    click.echo(f"kinhec {command}: error: {where}{' '.join(msg.split())}", err=True)
    ctx.exit(2)


@main.command()
@click.option("--hand", "hand", default=None, metavar="FILE",
              help="Hand poses: robot flange in the base, or a mocap body in the mocap world.")
@click.option("--eye", "eye", multiple=True, metavar="FILE",
              help="Eye poses (repeatable): target in the camera, or camera in a world; a rig folder or FOLDER:camNN.")
@click.option("--setup", type=click.Choice(["eye_in_hand", "eye_to_hand", "rig"]), default=None,
              help="[default: eye_in_hand; with --corners or --points the file's]")
@click.option("--corners", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="Observation JSON of detected target corners with the robot pose of each view, instead of "
                   "--hand/--eye: the camera from the corners, X and Y from their pixels.")
@click.option("--points", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="Point observation JSON of a depth camera (the target's points in 3D in the camera frame) with the "
                   "robot pose of each view, instead of --hand/--eye: X and Y from the points.")
@click.option("--point-noise", default=None, metavar="A,B",
              help="With --points: the depth camera's noise, along the ray A*z^2 [m], across it B*z [m] (z the depth "
                   "[m]; default: estimated from the residuals).")
@click.option("--images", default=None, type=click.Path(file_okay=False), metavar="DIR",
              help="Folder of images of the target, instead of --eye: detected, paired with --hand (needs --target).")
@click.option("--target", default=None, metavar="SPEC",
              help="With --images (or --points whose file names no target): chessboard:COLSxROWS:SQUARE_M, "
                   "charuco:SXxSY:SQUARE_M:MARKER_M:DICT, aprilgrid:COLSxROWS:TAG_M:SPACING or a Kalibr target YAML.")
@click.option("--pairing", default="auto", show_default=True, metavar="auto|order|stamp|MAP.csv",
              help="With --images: pair the images (sorted by name) with the hand poses by order, by the stamps in "
                   "their names, or by a CSV map (image, pose or t).")
@click.option("--save-corners", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="With --images: write the detected corners as an observation JSON (the input of --corners).")
@click.option("--workers", type=int, default=None, callback=_positive_int, metavar="N",
              help="With --images: images detected at once (default: the cores available; the corners do not "
                   "depend on it).")
@click.option("--fast-detection", is_flag=True,
              help="With --images: find a chessboard at half size first, then at full resolution in its window only "
                   "(about 3x less CPU; corners within about 0.02 px of the whole image's search, not identical).")
@click.option("--lens", type=click.Choice(["pinhole", "fisheye", "rational"]), default=None,
              help="With --images: the lens model estimated from the views: the pinhole with OpenCV's five "
                   "coefficients, a fisheye (equidistant) or OpenCV's rational model [default: --intrinsics' model, "
                   "else pinhole].")
@click.option("--intrinsics", default=None, metavar="fx,fy,cx,cy[,k1,k2,p1,p2[,k3[,k4,k5,k6]]]|FILE",
              help="With --corners or --images: known intrinsics [px] (twelve numbers: OpenCV's rational model), or "
                   "an OpenCV YAML, Kalibr camchain or kinhec calibrate JSON holding them, a fisheye or a rational "
                   "lens too (default: estimated from the views).")
@click.option("--write-intrinsics", "intrinsics_out", default=None, type=click.Path(dir_okay=False), metavar="OUT",
              help="With --corners or --images: write the camera's intrinsics (refined with X and Y) as an intrinsics "
                   "file, in the form --intrinsics-format gives.")
@click.option("--intrinsics-format", type=click.Choice(["opencv", "kalibr"]), default="opencv", show_default=True,
              help="Form of --write-intrinsics: OpenCV cv::FileStorage YAML or a Kalibr camchain (cam0).")
@click.option("--intrinsics-std", default=None, metavar="FOCAL,PP",
              help="How well the intrinsics are known: focal length as a fraction, principal point over the focal "
                   "length (default 0.003,0.001 for the intrinsics behind pose files; 0.01,0.01 for given "
                   "--intrinsics); 0,0 counts no such error.")
@click.option("--robot-accuracy", default=None, metavar="DEG,MM",
              help="The robot's absolute pose accuracy (RMS rotation [deg], RMS distance [mm]): its part that is "
                   "constant over the recording moves X and Y unseen, so it is added to their uncertainty "
                   "(default: not counted, noted).")
@click.option("--format", "fmt", type=click.Choice(["tum", "eth", "csv", "rwhe", "tabb", "kinhec", "observations", "rig"]),
              default=None, help="File format (default: guessed from the file).")
@click.option("--hand-pose", type=click.Choice(["base_T_ee", "ee_T_base"]), default=None,
              help="Direction of the hand poses (default: the format's, else base_T_ee).")
@click.option("--eye-pose", type=click.Choice(["cam_T_target", "target_T_cam"]), default=None,
              help="Direction of the eye poses (default: the format's, else cam_T_target).")
@click.option("--units", default=None, metavar="m|mm|HAND,EYE", help="Translation units of the files (default m).")
@click.option("--quat-order", default=None, metavar="xyzw|wxyz|HAND,EYE",
              help="Quaternion column order of TUM/ETH files (default xyzw, scalar last).")
@click.option("--offset", default="auto", show_default=True, metavar="auto|none|SECONDS",
              help="Clock offset (eye stamp = hand time + offset): estimated, zero or given.")
@click.option("--max-offset", default=0.5, show_default=True, type=float, metavar="SECONDS",
              help="Largest clock offset searched by --offset auto; an offset at its edge stops the run.")
@click.option("--stamp-unit", default=None, metavar="s|ms|us|ns|HAND,EYE",
              help="Unit of the time stamps (default: seconds, unless implausible and one unit fits both files).")
@click.option("--scale", is_flag=False, flag_value="free", default=None,
              type=click.Choice(["free", "fixed", "metric"]),
              help="The scale of the eye translations: --scale (or --scale free) estimates it freely (monocular VO / "
                   "SLAM, a board of unknown size); --scale fixed holds it at 1 (translations known exact); --scale "
                   "metric estimates it within 0.5 % (board size, focal length) and never frees it. Unstated: "
                   "metric, freed when the data decisively say it is off, refused when they cannot tell.")
@click.option("--solver", default=None, metavar="NAME", help="Registry solver for the initial estimate (default: best of all).")
@click.option("--json", "json_out", default=None, type=click.Path(dir_okay=False), metavar="OUT",
              help="Write the result as JSON.")
@click.option("--yaml", "yaml_out", default=None, type=click.Path(dir_okay=False), metavar="OUT",
              help="Write the result as OpenCV (cv::FileStorage) YAML.")
@click.option("--figure", "figure_out", default=None, type=click.Path(dir_okay=False), metavar="OUT",
              help="Draw the one-page figure (PNG or PDF).")
@click.option("--report", "report_out", default=None, type=click.Path(dir_okay=False), metavar="OUT",
              help="Write the calibration's self-contained HTML page (verdict, uncertainty, residuals, offset curve).")
@click.option("--dataset", default=None, type=click.Path(file_okay=False), help="kinhec dataset folder (with --sequence).")
@click.option("--sequence", default=None, help="Sequence id of --dataset.")
@click.option("--force", is_flag=True, help="Accept suspicious directions/units and an undetermined X (exit 0).")
@click.option("--bag", default=None, metavar="FILE",
              help="ROS 1 .bag, ROS 2 .db3/.mcap or bag folder; streams named by --hand-tf/--hand-topic, --eye-tf/--eye-topic.")
@click.option("--hand-tf", default=None, metavar="BASE:EE", help="Hand as a tf frame pair of --bag (e.g. base_link:tool0).")
@click.option("--eye-tf", multiple=True, metavar="CAMERA:TARGET",
              help="Eye as a tf frame pair of --bag (e.g. camera_optical:target; repeatable for a rig).")
@click.option("--hand-topic", default=None, metavar="TOPIC",
              help="Hand as a topic of --bag (PoseStamped, PoseWithCovarianceStamped, TransformStamped, Odometry).")
@click.option("--eye-topic", multiple=True, metavar="TOPIC", help="Eye as a pose topic of --bag (repeatable for a rig).")
@click.option("--launch", "launch_out", default=None, type=click.Path(dir_okay=False), metavar="OUT",
              help="Write a ROS 2 launch file (Python) publishing the result as static transforms.")
@click.option("--rig-world", type=click.Choice(["auto", "shared", "per_camera"]), default="auto", show_default=True,
              help="--setup rig: the cameras' poses are in one world (solved jointly), each in its own, or decided.")
@click.option("--point", default=None, metavar="X,Y,Z",
              help="A work point in the camera frame [m] (e.g. 0,0,0.5): the predicted 95 % error of its position "
                   "in the robot base (default: the target's mean position in the camera).")
@click.option("--known", multiple=True, metavar="COMP=METRES",
              help="A motion that turns about one axis only (SCARA, palletiser, XY-theta gantry): a component it "
                   "leaves open, stated (repeatable; X.tx..X.tz in the flange frame, Y.tx..Y.tz in the robot base, "
                   "e.g. X.tz=0.120).")
@click.option("--partial", is_flag=True,
              help="A motion that turns about one axis only, nothing stated: exit 0 with what it determines, the open "
                   "components set by a convention and listed as undetermined (no standard deviation). Pose files "
                   "only: refused with --corners or --images, which take --known.")
@click.pass_context
def calibrate(ctx, hand, eye, setup, corners, points, point_noise, images, target, pairing, save_corners, workers, fast_detection,
              lens, intrinsics, intrinsics_out, intrinsics_format, intrinsics_std, robot_accuracy, fmt,
              hand_pose, eye_pose, units, quat_order, offset, max_offset, stamp_unit, scale, solver, json_out, yaml_out,
              figure_out, report_out, dataset, sequence, force, bag, hand_tf, eye_tf, hand_topic, eye_topic, launch_out,
              rig_world, point, known, partial):
    """Calibrate your own recordings: X (and Y), clock offset, scale, their uncertainty and a verdict.

    Exit status 0 on success, 2 on bad input or when the motion does not determine X (unless --force).
    """
    from kinhec.calibrate import calibrate as run
    from kinhec.calibrate import held_out

    # the packages of the outputs asked for, before the calibration runs
    for given, option, modules in ((figure_out, "--figure", ("matplotlib",)),
                                   (report_out, "--report", ("plotly", "deflate", "pandas", "pyarrow"))):  # fmt: skip
        for module in modules if given else ():
            try:
                require(module, option)
            except MissingDependencyError as exc:
                _input_error(ctx, "calibrate", exc)
    if point is not None:
        try:
            point = held_out.parse_point(point)
        except KinhecError as exc:
            _input_error(ctx, "calibrate", exc)
    if intrinsics_out is not None and corners is None and images is None:
        _input_error(ctx, "calibrate", KinhecError(
            f"--write-intrinsics {intrinsics_out}: expected a calibration from --corners or --images, whose camera "
            "is calibrated with X and Y; pose files hold no intrinsics"))
    if fmt == "kinhec" and dataset is None and hand is not None:  # --format kinhec --hand DATASET --eye SEQUENCE
        dataset, sequence, hand, eye = hand, (eye[0] if eye else sequence), None, ()
    try:
        if bag is not None or hand_tf or eye_tf or hand_topic or eye_topic:
            from kinhec.calibrate.bags import cli_streams

            hand, eye = cli_streams(bag, hand, eye, hand_tf, eye_tf, hand_topic, eye_topic)
        res = run(hand, eye, setup=setup, fmt=None if fmt == "kinhec" else fmt, hand_pose=hand_pose,
                  eye_pose=eye_pose, units=units, offset=offset, scale=scale, solver=solver, force=force,
                  dataset=dataset, sequence=sequence, corners=corners, intrinsics=intrinsics, bag=bag, images=images,
                  target=target, pairing=pairing, save_corners=save_corners,
                  progress=_detection_progress() if images else None, rig_world=rig_world,
                  quat_order=quat_order, intrinsics_std=intrinsics_std, robot_accuracy=robot_accuracy,
                  max_offset_s=max_offset, stamp_unit=stamp_unit, workers=workers,
                  fast_detection=fast_detection, known=list(known) or None, partial=partial, points=points,
                  point_noise=point_noise, lens=lens)  # fmt: skip
    except (KinhecError, OSError) as exc:
        _input_error(ctx, "calibrate", exc)
    from kinhec.calibrate.output import ros2_launch, ros_static_transform, ros_transforms, urdf_origin

    if point is not None:
        res.point_cam_m = point
    np_fmt = lambda v: " ".join("        -" if x != x else f"{x: .6f}" for x in v)  # noqa: E731  (NaN: none)
    click.echo(f"{res.X_name} (X):")
    for row in res.X:
        click.echo("  " + np_fmt(row))
    d = res.to_dict()
    click.echo(f"  quat_xyzw {np_fmt(d['X_quat_xyzw'])}  t_m {np_fmt(d['X_t_m'])}")
    click.echo(f"  std: rot_deg {np_fmt(180 / 3.141592653589793 * res.X_std[:3])}  trans_mm {np_fmt(1000 * res.X_std[3:])}")
    if res.Y is not None:
        click.echo(f"{res.Y_name} (Y): quat_xyzw {np_fmt(d['Y_quat_xyzw'])}  t_m {np_fmt(d['Y_t_m'])}")
    if res.time_offset_s is not None:
        std = f" +- {1000 * res.time_offset_std_s:.2f}" if res.time_offset_std_s is not None else " (fixed)"
        click.echo(f"time offset: {1000 * res.time_offset_s:.2f}{std} ms (eye stamp = hand time + offset)")
    for line in res.sigma_lines():  # every other estimated quantity with its standard deviation
        click.echo(line)
    click.echo(f"pairs: {res.n_pairs}, outliers: {len(res.outliers)}; initial solver {res.init_solver}")
    if res.undetermined and res.determined:  # --partial
        click.echo(f"undetermined (values by convention, no std): {', '.join(res.undetermined)}")
    for line in held_out.summary_lines(res):  # held-out accuracy and the error at the work point
        click.echo(line)
    if "images" in res.inputs:
        from kinhec.calibrate.images import images_summary

        for line in images_summary(res):
            click.echo(line)
    if res.rig is not None:
        for k, T in res.rig.cam_T_cam.items():
            s = res.rig.cam_T_cam_std[k]
            click.echo(f"{k}: t_m {np_fmt(T[:3, 3])}  std rot_deg {np_fmt(180 / 3.141592653589793 * s[:3])} "
                       f"trans_mm {np_fmt(1000 * s[3:])}")
        if res.rig.joint is not None:
            c = res.rig.joint["certificate"]
            click.echo(f"rig solved jointly (one world, chi2 {res.rig.joint['world_chi2']:.3g}): rotations certified "
                       f"{c['certified']}, duality gap {c['duality_gap']:.4g}")  # fmt: skip
    if res.inputs.get("frames"):
        fr = res.inputs["frames"]
        click.echo(f"frames of the recording: X {' -> '.join(fr['X'])}, Y {' -> '.join(fr['Y'])}")
    for e in (e for e in ros_transforms(res) if e["publish"]):  # the sensor's mount, in the recording's frames
        if e["note"]:
            click.echo(f"{e['label']}: {e['note']}")
        click.echo(ros_static_transform(e["T"], e["parent"], e["child"]))
        click.echo(urdf_origin(e["T"]))
    for n in res.notes:
        click.echo(f"note: {n}")
    for w in res.warnings:
        click.echo(f"warning: {w}")
    click.echo(res.verdict)
    if json_out:
        click.echo(f"written: {res.write_json(json_out)}")
    if yaml_out:
        Path(yaml_out).write_text(res.opencv_yaml(), encoding="utf-8")
        click.echo(f"written: {yaml_out}")
    if intrinsics_out:
        from kinhec.models.intrinsics_writers import from_calibration, write_intrinsics

        try:
            click.echo(f"written: {write_intrinsics(intrinsics_out, from_calibration(res.inputs), intrinsics_format)}")
        except KinhecError as exc:
            _input_error(ctx, "calibrate", KinhecError(f"--write-intrinsics {intrinsics_out}: {exc}"))
    if figure_out:
        click.echo(f"written: {res.figure(figure_out)}")
    if launch_out:
        Path(launch_out).write_text(ros2_launch(res), encoding="utf-8")
        click.echo(f"written: {launch_out}")
    if report_out:
        from kinhec.report import write_calibration_report

        try:
            click.echo(f"written: {write_calibration_report(res.to_dict(), report_out)}")
        except KinhecError as exc:
            click.echo(f"kinhec calibrate: error: {exc}", err=True)
            ctx.exit(2)
    if not res.determined and not force:
        why = res.warnings[0] if res.warnings else "see the warnings"
        click.echo(f"kinhec calibrate: error: {res.where}: X is not determined by this motion: {why}; "
                   "--force to accept it", err=True)
        ctx.exit(2)


@main.command("check")
@click.argument("calibration", type=click.Path(dir_okay=False), metavar="CALIB.json")
@click.option("--hand", "hand", default=None, metavar="FILE", help="New hand poses (read as the calibration read its own).")
@click.option("--eye", "eye", default=None, metavar="FILE", help="New eye poses (read as the calibration read its own).")
@click.option("--bag", default=None, metavar="FILE",
              help="New poses from a ROS 1 .bag, ROS 2 .db3/.mcap or bag folder, named by --hand-tf/--hand-topic and "
                   "--eye-tf/--eye-topic (instead of --hand and --eye).")
@click.option("--hand-tf", default=None, metavar="BASE:EE", help="Hand as a tf frame pair of --bag.")
@click.option("--eye-tf", default=None, metavar="CAMERA:TARGET", help="Eye as a tf frame pair of --bag.")
@click.option("--hand-topic", default=None, metavar="TOPIC", help="Hand as a pose topic of --bag.")
@click.option("--eye-topic", default=None, metavar="TOPIC", help="Eye as a pose topic of --bag.")
@click.option("--alpha", default=0.01, show_default=True, type=float, help="False-alarm rate of the test.")
@click.option("--setup", type=click.Choice(["eye_in_hand", "eye_to_hand"]), default=None,
              help="The setup the calibration must be of (default: the calibration's).")
@click.option("--format", "fmt", type=click.Choice(["tum", "eth", "csv", "rwhe", "tabb"]), default=None,
              help="File format (default: the calibration's, else guessed).")
@click.option("--hand-pose", type=click.Choice(["base_T_ee", "ee_T_base"]), default=None,
              help="Direction of the hand poses (default: the calibration's).")
@click.option("--eye-pose", type=click.Choice(["cam_T_target", "target_T_cam"]), default=None,
              help="Direction of the eye poses (default: the calibration's).")
@click.option("--units", default=None, metavar="m|mm|HAND,EYE", help="Translation units (default: the calibration's).")
@click.option("--quat-order", default=None, metavar="xyzw|wxyz|HAND,EYE", help="Quaternion order (default: the calibration's).")
@click.option("--json", "json_out", default=None, type=click.Path(dir_okay=False), metavar="OUT",
              help="Write the verdict as JSON.")
@click.option("--update", "update_out", default=None, type=click.Path(dir_okay=False), metavar="OUT.json",
              help="Write the calibration re-estimated with the new pairs (the stored one as a prior).")
@click.pass_context
def check(ctx, calibration, hand, eye, bag, hand_tf, eye_tf, hand_topic, eye_topic, alpha, setup, fmt, hand_pose,
          eye_pose, units, quat_order, json_out, update_out):
    """Are new pose pairs consistent with a stored calibration (kinhec calibrate --json)?

    Exit status 0 consistent, 3 changed, 2 bad input (nothing written).
    """
    from kinhec.util import jsonutil
    from kinhec.calibrate import check as ck

    try:
        if bag is not None or hand_tf or eye_tf or hand_topic or eye_topic:
            from kinhec.calibrate.bags import cli_streams, read_bag

            h_name, e_names = cli_streams(bag, hand, [eye] if eye else [], hand_tf, [eye_tf] if eye_tf else [],
                                          hand_topic, [eye_topic] if eye_topic else [])  # fmt: skip
            if h_name is None:
                raise InputError("--bag: expected the hand stream as --hand-tf BASE:EE or --hand-topic TOPIC, got neither")
            hand, eyes = read_bag(bag, h_name, e_names)
            eye = eyes[0]
        elif hand is None or eye is None:
            raise InputError(f"{'--hand' if hand is None else '--eye'}: expected the new poses as --hand FILE --eye FILE "
                             "(or --bag with its streams), got none")  # fmt: skip
        res, stored, (A, B) = ck.check(calibration, hand, eye, alpha=alpha, setup=setup, fmt=fmt, hand_pose=hand_pose,
                                       eye_pose=eye_pose, units=units, quat_order=quat_order)  # fmt: skip
        updated = ck.update(stored, res, A, B) if update_out else None
    except (KinhecError, OSError) as exc:
        _input_error(ctx, "check", exc)
    for line in ck.summary_lines(res):
        click.echo(line)
    if json_out:
        jsonutil.dump(res.to_dict(), Path(json_out))
        click.echo(f"written: {json_out}")
    if updated is not None:
        jsonutil.dump(updated, Path(update_out))
        click.echo(f"updated calibration ({updated['update']['how']}) written: {update_out}")
    ctx.exit(0 if res.consistent else 3)


@main.command("calibrate-multi")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option("--setup", type=click.Choice(["eye_to_hand", "eye_in_hand"]), default="eye_to_hand", show_default=True,
              help="Fixed cameras watching tags on a robot, or cameras on one body watching fixed targets.")
@click.option("--format", "fmt", type=click.Choice(["tum", "eth", "csv", "rwhe", "tabb"]), default=None,
              help="File format (default: guessed from each file).")
@click.option("--hand-pose", type=click.Choice(["base_T_ee", "ee_T_base"]), default=None,
              help="Direction of the hand poses (default: the format's, else base_T_ee).")
@click.option("--eye-pose", type=click.Choice(["cam_T_target", "target_T_cam"]), default=None,
              help="Direction of the eye poses (default: the format's, else cam_T_target).")
@click.option("--units", default=None, metavar="m|mm|HAND,EYE", help="Translation units of the files (default m).")
@click.option("--scale", is_flag=True, help="Estimate a monocular scale per camera.")
@click.option("--certify", type=click.Choice(["auto", "local", "sdp", "none"]), default="auto", show_default=True,
              help="Certificate: SDP only when the closed form fails, never, always, or no certificate.")
@click.option("--sdp-solver", type=click.Choice(["scs", "clarabel"]), default="scs", show_default=True)
@click.option("--json", "json_out", default=None, type=click.Path(dir_okay=False), metavar="OUT",
              help="Write the result as JSON.")
@click.option("--edge-pose", "edge_poses", multiple=True, metavar="X_ID/Y_ID/hand|eye=DIRECTION",
              help="Direction of one edge's file, e.g. tag01/cam01/eye=target_T_cam (repeatable; over --hand-pose, "
                   "--eye-pose and the file's own claims).")
@click.option("--drop-edge", "drop", multiple=True, metavar="X_ID/Y_ID", help="Leave an edge out (repeatable).")
@click.option("--force", is_flag=True,
              help="Keep an edge whose files fit only another reading as read (a warning), and exit 0 even when an "
                   "unknown is undetermined.")
@click.pass_context
def calibrate_multi(ctx, folder, setup, fmt, hand_pose, eye_pose, units, scale, certify, sdp_solver, json_out,
                    edge_poses, drop, force):  # fmt: skip
    """Many cameras and targets jointly: FOLDER/<x_id>/<y_id>/{hand,eye}.<ext>, one folder per edge.

    Solves A_k X_i = Y_j B_k over the graph of edges with the maximum-likelihood fit and a certificate of
    globally optimal rotations (docs/multi.md).  Every edge's reading is checked first, on its own fit and
    against the X and Y the other edges give: an edge whose files fit only inverted is refused, naming
    the file and the reading that fits.  Exit status 0 on success, 2 on bad input, on such an edge, or
    when an unknown is not determined (by the graph, or standard deviations beyond 2 deg / 20 mm, the
    limits of kinhec calibrate), unless --force.
    """
    from kinhec.calibrate.multi import calibrate_multi_dir

    try:
        res = calibrate_multi_dir(folder, setup=setup, fmt=fmt, hand_pose=hand_pose, eye_pose=eye_pose, units=units,
                                  scale=scale, certify=None if certify == "none" else certify,
                                  sdp_solver=sdp_solver, edge_poses=edge_poses, drop=drop, force=force)  # fmt: skip
    except (KinhecError, OSError) as exc:
        _input_error(ctx, "calibrate-multi", exc)
    deg = 180 / 3.141592653589793
    np_fmt = lambda v: " ".join("        -" if x != x else f"{x: .6f}" for x in v)  # noqa: E731  (NaN: none)
    d = res.to_dict()
    for kind in ("X", "Y"):
        for k, v in d[kind].items():
            s = v["std"]
            click.echo(f"{kind} {k}: quat_xyzw {np_fmt(v['quat_xyzw'])}  t_m {np_fmt(v['t_m'])}")
            click.echo(f"    std rot_deg {np_fmt([deg * x for x in s[:3]])}  trans_mm {np_fmt([1000 * x for x in s[3:]])}")
    for k, T in res.cam_T_cam.items():
        s = res.cam_T_cam_std[k]
        click.echo(f"{k}: t_m {np_fmt(T[:3, 3])}  std rot_deg {np_fmt(deg * s[:3])} trans_mm {np_fmt(1000 * s[3:])}")
    for k, v in res.scale.items():
        click.echo(f"scale {k}: {v:.6f} +- {res.scale_std[k]:.6f}")
    c = res.certificate
    if c.get("method") != "none":
        click.echo(f"certificate: certified {c['certified']}, duality gap {c['duality_gap']:.4g} (threshold "
                   f"{c['threshold']:.4g}), relaxation tight {c['relaxation_tight']}, {c['method']}, "
                   f"SDP {c['sdp_dim']}x{c['sdp_dim']}, for {c.get('edges_certified', '?')} edges"
                   + (f" ({', '.join(c['edges_left_out'])} left out by the outlier gate)"
                      if c.get("edges_left_out") else ""))  # fmt: skip
    for w in res.warnings:
        click.echo(f"warning: {w}")
    click.echo(res.verdict)
    if json_out:
        click.echo(f"written: {res.write_json(json_out)}")
    if not res.determined and not force:
        click.echo(f"kinhec calibrate-multi: error: {folder}: {res.verdict} --force to accept it", err=True)
        ctx.exit(2)


# --------------------------------------------------------------------------- #
# plan-poses: which poses to record (docs/planner.md)
# --------------------------------------------------------------------------- #
@main.command("plan-poses")
@click.option("--robot", help="Arm or machine model (kinhec info lists them) or a DH-table YAML (docs/planner.md).")
@click.option("--urdf", type=click.Path(dir_okay=False), help="A URDF, in place of --robot (needs yourdfpy).")
@click.option("--base-link", help="With --urdf: the link the chain starts at (the base frame).")
@click.option("--tip-link", help="With --urdf: the link the chain ends at (the flange).")
@click.option("--setup", required=True, type=click.Choice(["eye_in_hand", "eye_to_hand"]))
@click.option("--camera", required=True, help="Camera preset (vga, hd, fhd, industrial_5mp) or an intrinsics file "
              "(OpenCV YAML, Kalibr camchain, kinhec calibrate JSON).")
@click.option("--image-size", metavar="WxH", help="Image size of --camera's intrinsics file (needed for a "
              "kinhec calibrate JSON, checked otherwise).")
@click.option("--target", required=True, help="Target preset, or a spec as calibrate --images takes "
              "(chessboard:COLSxROWS:SQUARE_M, charuco:..., aprilgrid:..., a Kalibr target YAML); eye-to-hand the "
              "marker on the flange.")
@click.option("--X-guess", "x_guess", metavar="x,y,z,qx,qy,qz,qw",
              help="Guess of X: T_ee_cam (eye-in-hand) or T_ee_marker (eye-to-hand) [m].")
@click.option("--Y-guess", "y_guess", metavar="x,y,z,qx,qy,qz,qw",
              help="Guess of Y: T_base_world (the board, eye-in-hand) or T_base_cam (eye-to-hand) [m].")
@click.option("--guesses-from", "guesses_from", type=click.Path(exists=True, dir_okay=False),
              help="JSON of kinhec calibrate --json: X and Y (unless given) and the guess tolerance from its sigma.")
@click.option("--n", "n", required=True, type=int, help="Poses to plan.")
@click.option("--taken", type=click.Path(exists=True, dir_okay=False), help="CSV of the poses already recorded.")
@click.option("--stop-std-mm", type=float, help="Stop once the predicted RMS translation error of X is below this.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random draw.")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="CSV to write (the JSON goes beside it).")
@click.option("--camera-noise", default="pnp", show_default=True, help="pnp, or a camera level c0..c5.")
@click.option("--pixel-std", type=float, default=0.5, show_default=True, help="Pixel noise [px] of --camera-noise pnp.")
@click.option("--robot-noise", default="r1", show_default=True, help="Robot level r0..r4.")
@click.option("--criterion", type=click.Choice(["trace", "max_eig"]), default="trace", show_default=True)
@click.option("--guess-tolerance", metavar="MM,DEG", help="Keep the target in view if the guesses are this far "
              "off [default: 50,10; with --guesses-from, from the calibration's sigma].")
@click.option("--min-visible-fraction", type=float, help="Keep poses that see the target in at least this fraction "
              "of the guess tolerance's perturbed scenes [default: 0.75, the chance of losing it weighed; 1 keeps "
              "only poses that never lose it, as the first stage of the two-stage workflow needs].")
@click.option("--figure", "figure_out", type=click.Path(dir_okay=False), help="Also draw the plan (PNG).")
@click.option("--trajectory", "trajectory_out", type=click.Path(dir_okay=False),
              help="Also write the poses as a ROS 2 trajectory_msgs/JointTrajectory YAML.")
@click.option("--trajectory-speed", type=float, default=0.2, show_default=True,
              help="Fraction of the joint speed caps the trajectory's timing assumes.")
@click.option("--trajectory-dwell", type=float, default=1.0, show_default=True,
              help="Seconds still at each pose in the trajectory's timing.")
def plan_poses_cmd(robot, urdf, base_link, tip_link, setup, camera, image_size, target, x_guess, y_guess, guesses_from,
                   n, taken, stop_std_mm, seed, out, camera_noise, pixel_std, robot_noise, criterion, guess_tolerance,
                   min_visible_fraction, figure_out, trajectory_out, trajectory_speed, trajectory_dwell):  # fmt: skip
    """Plan the poses to record: reachable, target in view, minimising the predicted error of X."""
    from kinhec.util.errors import InputError
    from kinhec.planner import PlanLimits, noise_model, plan_poses
    from kinhec.planner.guesses import parse_tolerance

    if figure_out:  # before the planning runs
        require("matplotlib", "--figure")
    if (robot is None) == (urdf is None):
        raise InputError("--robot/--urdf: expected one of them (a preset or DH-table YAML, or a URDF), got "
                         f"{'both' if robot else 'neither'}")  # fmt: skip
    if urdf is not None and (not base_link or not tip_link):
        raise InputError(f"--urdf {urdf}: expected --base-link and --tip-link (the chain to plan for), got "
                         f"{'neither' if not (base_link or tip_link) else 'only one'}")  # fmt: skip
    if urdf is None and (base_link or tip_link):
        raise InputError("--base-link/--tip-link: expected them with --urdf, got them with --robot")
    for v, opt in ((x_guess, "--X-guess"), (y_guess, "--Y-guess")):
        if v is None and guesses_from is None:
            raise InputError(f"{opt}: expected x,y,z,qx,qy,qz,qw (or --guesses-from a calibration), got none")
    if trajectory_out:  # the timing's options are checked before the planning
        import numpy as np

        from kinhec.planner.trajectory import trajectory_times

        trajectory_times(None, None, np.zeros((0, 0)), trajectory_speed, trajectory_dwell)
    noise = noise_model(camera_noise, robot_noise, pixel_std=pixel_std)
    limits = None
    if guess_tolerance:
        tol_mm, tol_deg = parse_tolerance(guess_tolerance)
        limits = PlanLimits(guess_tolerance_mm=tol_mm, guess_tolerance_deg=tol_deg)
    if urdf is not None:
        from pathlib import Path

        robot = Path(urdf)
    plan = plan_poses(robot, setup, camera, target, x_guess, y_guess, n, taken=taken, stop_std_mm=stop_std_mm,
                      seed=seed, noise=noise, criterion=criterion, limits=limits, calibration=guesses_from,
                      base_link=base_link, tip_link=tip_link, image_size=image_size,
                      min_visible_fraction=min_visible_fraction)  # fmt: skip
    for w in plan.details["warnings"]:
        click.echo(f"warning: {w}")
    lim = plan.details["limits"]
    src = f" (from {guesses_from})" if guesses_from else ""
    click.echo(f"guess tolerance{src}: {lim['guess_tolerance_mm']:g} mm, {lim['guess_tolerance_deg']:g} deg")
    d = plan.to_dict()
    fmt = lambda v: "undetermined" if v is None else f"{v:.3f} mm"  # noqa: E731
    click.echo(f"{len(plan)} poses planned ({d['stopped_by']}), path {d['path_time_s']:.1f} s at full joint speed")
    if d["n_taken"]:
        click.echo(f"taken poses: {d['n_taken_counted']} of {d['n_taken']} counted, predicted sigma {fmt(d['sigma_taken_mm'])}")
    for k, (s, r) in enumerate(zip(d["sigma_mm"], d["random_sigma_mm"]), start=1):
        click.echo(f"  pose {k:3d}: predicted sigma of X translation {fmt(s):>14s}   (random poses {fmt(r)})")
    for what in plan.details["undetermined"]:
        click.echo(f"undetermined: {what}")
    if plan.details["sigma_given_undetermined_mm"] is not None:
        known = fmt(plan.details["sigma_given_undetermined_mm"])
        click.echo(f"with that known: predicted sigma of X translation {known}")
    for note in plan.details["notes"]:
        click.echo(f"note: {note}")
    csv_path, json_path = plan.write(out)
    click.echo(f"written: {csv_path}")
    click.echo(f"written: {json_path}")
    if trajectory_out:
        click.echo(f"written: {plan.write_trajectory(trajectory_out, trajectory_speed, trajectory_dwell)}")
    if figure_out:
        click.echo(f"written: {plan.figure(figure_out)}")


# --------------------------------------------------------------------------- #
# suite: the regression suite of frozen observations (docs/regression.md)
# --------------------------------------------------------------------------- #
_SUITE_ROOT = click.option("--root", "root", type=click.Path(file_okay=False), default="regression", show_default=True,
                           help="The suite folder (suite.toml, SHA256SUMS, observations/, results/).")  # fmt: skip
_SUITE_ONLY = click.option("--only", cls=_MultiValue, help="Only these entry ids (repeatable).")


@main.group()
def suite():
    """Regression suite: check, bless, freeze and compare frozen observations."""


@suite.command("check")
@_SUITE_ROOT
@_SUITE_ONLY
@click.option("--sigma", type=float, default=None, metavar="K",
              help="Compare only the estimated parameters, each within K reference standard deviations.")
@click.pass_context
def suite_check(ctx, root, only, sigma):
    """Verify checksums, re-solve every entry and compare it with its reference result."""
    from kinhec.evaluate.suite import check

    def show(r):
        status = "PASS" if r.ok else "FAIL"
        if r.max_sigma == r.max_sigma:
            extra = f"max change {r.max_sigma:.3g} sigma"
        else:  # (a reference without standard deviations: every number is held to its drift tolerance)
            extra = "no standard deviations in the reference: every number within its drift tolerance"
        if r.truth_sigma == r.truth_sigma:
            extra += f", truth {r.truth_sigma:.3g} sigma"
        click.echo(f"{status} {r.id} ({r.seconds:.1f} s; {extra})")
        for m in r.messages:
            click.echo(f"    {m}")

    reports = check(root, only=list(only) or None, sigma=sigma, progress=show)
    n_fail = sum(not r.ok for r in reports)
    click.echo(f"{len(reports) - n_fail} passed, {n_fail} failed")
    if n_fail:
        ctx.exit(1)


@suite.command("bless")
@_SUITE_ROOT
@_SUITE_ONLY
def suite_bless(root, only):
    """Re-solve the entries and overwrite their reference results (review the diff of results/)."""
    from kinhec.evaluate.suite import bless

    bless(root, only=list(only) or None, progress=lambda i: click.echo(f"blessed {i}"))


@suite.command("freeze")
@_SUITE_ROOT
@_SUITE_ONLY
@click.option("--realdata", type=click.Path(exists=True, file_okay=False), default=None,
              help="Folder of the real data (default: shared/realdata next to the repository).")
def suite_freeze(root, only, realdata):
    """Rebuild observation and truth files from their sources and rewrite SHA256SUMS."""
    from kinhec.evaluate.suite import freeze

    for i in freeze(root, only=list(only) or None, realdata=realdata):
        click.echo(f"froze {i}")


@suite.command("compare")
@_SUITE_ROOT
@_SUITE_ONLY
@click.option("--run-opencv", is_flag=True, help="First recompute results/<id>/opencv.json (needs the dev extra).")
def suite_compare(root, only, run_opencv):
    """Print kinhec's reference results against OpenCV's on the same observations."""
    from kinhec.evaluate.suite.compare import compare_rows, format_table, run_opencv as _run

    if run_opencv:
        _run(root, only=list(only) or None, progress=lambda i: click.echo(f"opencv {i}", err=True))
    click.echo(format_table(compare_rows(root, only=list(only) or None)))


@main.command()
@click.argument("data", type=click.Path(exists=True, file_okay=False))
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="HTML file to write (default DATA/report.html).")
@click.option("--validation", "validation", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Validation report for the per-sequence status (default DATA/validation.json when present).")
@click.option("--validate", "run_validate", is_flag=True, help="Run the validator now for the per-sequence status (slower).")
@click.option("--quiet", "-q", is_flag=True, help="Do not list the steps.")
def report(data, out, validation, run_validate, quiet):
    """One self-contained HTML page of a dataset and its benchmark results (works offline)."""
    for module in ("plotly", "deflate"):  # before the dataset is read
        require(module)
    from kinhec.report import build_benchmark_report

    con = _console()
    path = build_benchmark_report(data, out, validation=validation, validate=run_validate,
                                  on_progress=None if quiet else (lambda msg: con.print(msg, highlight=False, markup=False)))  # fmt: skip
    con.print(f"report: {path}", highlight=False, markup=False)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
