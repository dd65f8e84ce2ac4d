"""Does ``kinhec calibrate`` ever answer confidently from an input a user got wrong?

The property: a reading of the files that the fit cannot choose comes from the user's statement, the files' own
claims or physical impossibility, else the run stops with exit 2.  So for any input, **exit 0 implies that the
setup, X, Y and the printed ROS ``static_transform_publisher`` line (its frames and its transform) lie within 3σ
of the true reading's result**.

This script takes recordings (the real ones in ``tests/data/realdata`` and generated ones of both setups,
stamped and unstamped), applies a catalogue of ordinary mistakes to their files and to what the user states,
singly and in pairs, each with the user's statements (setup and directions) and without, runs ``kinhec
calibrate --json`` on each and classifies the outcome:

* ``right``: exit 0 and the result is the true reading's;
* ``WRONG``: exit 0 and it is not -- the property violated; printed with the command that reproduces it;
* ``as stated``: exit 0 following a false statement of the user's about what the data cannot tell (a wrong
  ``--setup``, directions stated for exchanged files), with the numbers of a reading that fits exactly as well
  as the true one (``X`` and ``Y`` as they are, both inverted or exchanged, within 3σ): the reading came from
  the user, as the property allows;
* ``as claimed``: the same, following a false claim of the files: an inverted file that still carries the name
  (or format) of the direction it had, when the run took the reading that keeps the files' claims among
  readings that fit exactly as well.  The files' claims come second in the rule, after the user's statements;
  counted apart, as the price of trusting names;
* ``refused``: exit 2;
* ``crashed``: any other exit status (a failure too).

The true reading: the ground truth of a generated recording; for a real one, the result of the correctly stated,
unmodified files.  "Within 3σ": the rotation error (angle of ``R_true^T R``) at most 3 times the norm of the
result's own rotation standard deviations and the translation error at most 3 times the norm of its translation
standard deviations, for X and for Y; the setup equal; the ROS line's parent and child frames equal to the true
reading's and its transform within 3σ of the true sensor mount (X eye-in-hand, Y eye-to-hand).

Acceptance: 0 wrong answers, no crash, and correctly stated unmodified inputs refused in at most 2 % of runs.

    python benchmarks/mistakes.py [--sample N] [--jobs J] [--json FILE] [--only MISTAKE[,MISTAKE]] [--seed S]
    python benchmarks/mistakes.py --write KEY DIR     # one run's input (KEY as printed), to reproduce it
    python benchmarks/mistakes.py --list              # the catalogue, the recordings and the number of runs
    python benchmarks/mistakes.py --recording-seeds 21,22 --jobs 2   # the same catalogue on fresh recordings

Cost: about 0.2 s of CPU per run on average (0.1 s median; the stamped ETH streams most), about 15 CPU-minutes for
the 3,368 runs of the whole catalogue (``--jobs`` spreads them over processes).

Deterministic: the recordings are seeded, the sample is a seeded choice of the runs, the table is sorted.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shlex
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from kinhec.geometry import se3

REPO = Path(__file__).resolve().parents[1]
REAL = REPO / "tests" / "data" / "realdata"
#: The developers' and CI's copy beside the clone (``shared/`` beside it or a parent): it holds the same recordings
#: (and the ETH intrinsics, which the pose path does not read), so it only confirms what is present.
SHARED_REAL = next((p / "shared" / "realdata" for p in REPO.parents if (p / "shared").is_dir()), None)

# --------------------------------------------------------------------------- #
# recordings
# --------------------------------------------------------------------------- #


@dataclass
class Recording:
    """A recording as its two files hold it.

    ``A`` is ``T_base_ee`` [m] (the hand file's rows), ``E`` the eye file's rows [m] in the direction
    ``eye_pose`` (``cam_T_target`` or ``target_T_cam``), ``t_h``/``t_e`` their stamps [s] (None: unstamped).
    ``fmt`` is how the files are written (``eth``: comma-separated, ``tum``: whitespace, both
    ``t x y z qx qy qz qw``; ``rwhe``: one row-major 4x4 per line).  ``X``/``Y`` is the truth of a generated
    recording (None for a real one: the correctly stated unmodified run is the reference).
    """

    name: str
    kind: str  # "real" or "generated"
    setup: str
    fmt: str
    A: np.ndarray
    E: np.ndarray
    eye_pose: str
    hand_name: str
    eye_name: str
    t_h: np.ndarray | None = None
    t_e: np.ndarray | None = None
    X: np.ndarray | None = None
    Y: np.ndarray | None = None

    @property
    def stamped(self) -> bool:
        return self.t_h is not None


def _read_eth(path: Path):
    rows = np.loadtxt(path, delimiter=",", ndmin=2)
    q_wxyz = rows[:, [7, 4, 5, 6]]
    T = se3.transform_from_rotation_translation(se3.matrix_from_quaternion(q_wxyz / np.linalg.norm(q_wxyz, axis=1,
                                                                                                  keepdims=True)),
                                                rows[:, 1:4])  # fmt: skip
    return rows[:, 0], T


def real_recordings() -> tuple[list[Recording], list[str]]:
    """The real recordings of ``tests/data/realdata`` (and a note per one that is missing)."""
    out, missing = [], []
    eth = REAL / "ethz_asl"
    for run, hand_word, eye_word in (("robot_arm_real", "hinge", "target_ir"), ("prime_sense_1", "vicon", "camera"),
                                     ("prime_sense_2", "vicon", "camera")):  # fmt: skip
        files = sorted((eth / run).glob("*.csv"))
        hand = [f for f in files if hand_word in f.name]
        eye = [f for f in files if eye_word in f.name]
        if not (hand and eye):
            missing.append(f"{eth / run}: no ETH streams")
            continue
        t_h, A = _read_eth(hand[0])
        t_e, E = _read_eth(eye[0])  # the camera in the target frame
        out.append(Recording(f"eth_{run}", "real", "eye_in_hand", "eth", A, E, "target_T_cam", hand[0].name,
                             eye[0].name, t_h, t_e))  # fmt: skip
    for name in ("kuka_1", "kuka_2"):
        folder = REAL / "rwhe_calib" / name
        if not (folder / "opencv_reference_calibration.json").exists():
            missing.append(f"{folder}: no RWHE-Calib views")
            continue
        ref = json.loads((folder / "opencv_reference_calibration.json").read_text())
        E = np.array([v["T_cam_target"] for v in ref["per_view"]], dtype=float)
        A = np.loadtxt(folder / "RobotPosesVec.txt").reshape(-1, 4, 4)
        out.append(Recording(f"rwhe_{name}", "real", "eye_in_hand", "rwhe", A, E, "cam_T_target",
                             "RobotPosesVec.txt", "cam_T_target.txt"))  # fmt: skip
    tabb = REAL / "tabb_ds1"
    if (tabb / "robot_cali.txt").exists():
        from kinhec.calibrate.readers import read_stream

        h = read_stream(tabb / "robot_cali.txt", "tabb")  # T_ee_base [mm]
        e = read_stream(tabb / "cali.txt", "tabb")  # T_cam_target [mm]
        A, E = se3.invert_transform(h.T), e.T.copy()
        A[:, :3, 3] /= 1000
        E[:, :3, 3] /= 1000
        out.append(Recording("tabb_ds1", "real", "eye_in_hand", "rwhe", A, E, "cam_T_target", "robot_poses.txt",
                             "camera_poses.txt"))  # fmt: skip
    else:
        missing.append(f"{tabb}: no Tabb DS1")
    return out, missing


#: STATIONS of tests/helpers/recordings.py: 25 look-at stations of a UR5e, realistic robot and camera noise.
STATIONS = dict(sequence_id="noise-000000", track="noise", seed=11, robot="ur5e", configuration="eye_in_hand",
                family="lookat", sampling_mode="stations", n_stations=25, camera="hd",
                robot_noise_models=("se3_gaussian",), robot_rot_std_rad=2e-4, robot_trans_std_m=1e-4,
                camera_noise_model="se3_gaussian", camera_rot_std_rad=1e-3, camera_trans_std_m=3e-4,
                camera_trans_std_z_m=1e-3)  # fmt: skip


def generated_recordings(seeds=(11, 12)) -> list[Recording]:
    """Both setups, stamped (8 s of joint sinusoids, camera 40 ms late, TUM as ``kinhec export`` names it) and
    unstamped (25 stations, 4x4 text as a PnP pipeline writes ``T_cam_target``), per seed."""
    from kinhec.synth.generator import simulate

    out = []
    for seed, setup in itertools.product(seeds, ("eye_in_hand", "eye_to_hand")):
        tag = "eih" if setup == "eye_in_hand" else "eth"
        g = simulate(dict(STATIONS, seed=seed, configuration=setup))
        ok = np.isfinite(g.T_cam_target_meas).all(axis=(1, 2))
        out.append(Recording(f"gen_{tag}_stations_{seed}", "generated", setup, "rwhe", g.T_base_ee_meas,
                             g.T_cam_target_meas[ok], "cam_T_target", "robot_base_ee.txt",
                             "camera_cam_target.txt" if setup == "eye_in_hand" else "camera_cam_marker.txt",
                             X=g.X, Y=g.Y))  # fmt: skip
        if not ok.all():  # a station without a detection: pair the hand rows that have one
            out[-1].A = g.T_base_ee_meas[ok]
        g = simulate(dict(STATIONS, seed=seed, configuration=setup, sync="async", sampling_mode="continuous",
                          family="joint_sinusoid", duration_s=8.0, time_offset_s=0.04))  # fmt: skip
        ok = np.isfinite(g.T_cam_target_meas).all(axis=(1, 2))
        T = g.T_cam_target_meas[ok]
        E, eye_pose, eye_name = ((se3.invert_transform(T), "target_T_cam", f"seq{seed}_target_cam_meas.tum")
                                 if setup == "eye_in_hand" else (T, "cam_T_target", f"seq{seed}_cam_marker_meas.tum"))
        out.append(Recording(f"gen_{tag}_stamped_{seed}", "generated", setup, "tum", g.T_base_ee_meas, E, eye_pose,
                             f"seq{seed}_base_ee_meas.tum", eye_name, g.t_robot_s, g.t_camera_s[ok], X=g.X,
                             Y=g.Y))  # fmt: skip
    return out


#: Seeds of the generated recordings (``--recording-seeds``): the stored sample and the tests use these.
RECORDING_SEEDS = (11, 12)


def recordings(seeds=None) -> tuple[list, list[str]]:
    """Every recording (the real ones found, the generated ones, the calibrate-multi folders) and what is missing.

    ``seeds``: those of the generated recordings (default :data:`RECORDING_SEEDS`)."""
    seeds = tuple(seeds) if seeds else RECORDING_SEEDS
    real, missing = real_recordings()
    return real + generated_recordings(seeds) + multi_recordings(seeds), missing


@dataclass
class MultiRecording:
    """A ``calibrate-multi`` folder: one marker on the flange seen by two fixed cameras (eye-to-hand).

    ``edges`` maps ``(x_id, y_id)`` to the hand rows ``T_base_ee`` and the eye rows ``T_cam_marker`` [m];
    ``X``/``Y`` the truth per id.
    """

    name: str
    edges: dict
    X: dict
    Y: dict
    kind: str = "generated"
    setup: str = "eye_to_hand"
    stamped: bool = False
    fmt: str = "rwhe"


def multi_recordings(seeds=(11, 12)) -> list[MultiRecording]:
    """Per seed, the generated eye-to-hand stations seen by a second camera, 0.5 m and 25 deg from the first,
    with its own noise (the same levels as the first's)."""
    from kinhec.synth.generator import simulate

    out = []
    for seed in seeds:
        g = simulate(dict(STATIONS, seed=seed, configuration="eye_to_hand"))
        ok = np.isfinite(g.T_cam_target_meas).all(axis=(1, 2))
        rng = np.random.default_rng(seed)
        axis = rng.normal(size=3)
        off = se3.transform_from_rotation_translation(se3.so3_exp(np.radians(25) * axis / np.linalg.norm(axis)),
                                                      [0.5, 0.1, 0.0])  # fmt: skip
        n = int(ok.sum())
        noise = np.c_[rng.normal(0, 1e-3, (n, 3)), rng.normal(0, [3e-4, 3e-4, 1e-3], (n, 3))]
        B1 = se3.invert_transform(off) @ g.T_cam_target_gt[ok] @ se3.se3_exp(noise)
        A = g.T_base_ee_meas[ok]
        out.append(MultiRecording(f"multi_gen_eth_{seed}", {("marker0", "cam0"): (A, g.T_cam_target_meas[ok]),
                                                            ("marker0", "cam1"): (A, B1)},
                                  {"marker0": g.X}, {"cam0": g.Y, "cam1": g.Y @ off}))  # fmt: skip
    return out


# --------------------------------------------------------------------------- #
# a case: the files as the user has them and what the user states
# --------------------------------------------------------------------------- #
@dataclass
class Case:
    """One input: the two streams as they will be written, and the options given."""

    A: np.ndarray
    E: np.ndarray
    t_h: np.ndarray | None
    t_e: np.ndarray | None
    fmt: str
    hand_name: str
    eye_name: str
    hand_order: str = "xyzw"
    eye_order: str = "xyzw"
    hand_mm: bool = False
    eye_mm: bool = False
    swap: bool = False
    opts: dict = field(default_factory=dict)
    false_statement: bool = False  # the user states something the files are not


OTHER_SETUP = {"eye_in_hand": "eye_to_hand", "eye_to_hand": "eye_in_hand"}
OTHER_EYE = {"cam_T_target": "target_T_cam", "target_T_cam": "cam_T_target"}


@dataclass(frozen=True)
class Mistake:
    """A mistake users make: what it does to a case, where it applies and what the right run looks like.

    ``identifiable``: whether the data, the files' claims or physics can still tell the true reading.  Where
    they cannot and the user states the false reading, exit 0 with that reading is what the property allows
    ("as stated"); otherwise the right run is the true reading (exit 0) or a refusal (exit 2).
    ``falsifies``: the statements (``setup``, ``hand_pose``, ``eye_pose``) the mistake makes false when given.
    """

    name: str
    what: str
    apply: Callable[[Case, Recording], None]
    applies: Callable[[Recording], bool] = lambda rec: True
    identifiable: bool = True
    falsifies: frozenset = frozenset()
    right_run: str = "the true reading with a note naming the correction, or exit 2 naming the readings that fit"


def _set(**kw):
    def f(case: Case, rec: Recording) -> None:
        for k, v in kw.items():
            setattr(case, k, v)
    return f


def _swap(case, rec):
    case.swap = True


def _hand_inv(case, rec):
    case.A = se3.invert_transform(case.A)


def _eye_inv(case, rec):
    case.E = se3.invert_transform(case.E)


def _both_inv(case, rec):
    _hand_inv(case, rec)
    _eye_inv(case, rec)


def _stamps(which: str, factor: float):
    def f(case, rec):
        if which in ("hand", "both"):
            case.t_h = case.t_h * factor
        if which in ("eye", "both"):
            case.t_e = case.t_e * factor
    return f


def _drop(which: str, where: str):
    def f(case, rec):
        n = len(case.E if which == "eye" else case.A)
        i = n // 2 if where == "middle" else n - 1
        if which == "eye":
            case.E = np.delete(case.E, i, axis=0)
        else:
            case.A = np.delete(case.A, i, axis=0)
    return f


def _repeat(case, rec):
    i = len(case.E) // 3
    case.E = np.insert(case.E, i, case.E[i], axis=0)


def _opt(key: str, value_of: Callable[[Recording], str | None]):
    def f(case, rec):
        v = value_of(rec)
        if v is None:
            case.opts.pop(key, None)
        else:
            case.opts[key] = v
    return f


def _neutral(case, rec):
    case.hand_name, case.eye_name = "a.txt", "b.txt"


def _quat_files(rec):
    return rec.fmt in ("tum", "eth")


CATALOGUE: list[Mistake] = [
    Mistake("swap_files", "the files exchanged (--hand names the eye file, --eye the hand file)", _swap,
            identifiable=False, falsifies=frozenset({"hand_pose", "eye_pose"}),
            right_run="the true reading where the names, rates or the camera's view tell the files apart, "
                      "else exit 2 naming both readings"),
    Mistake("hand_inverted", "the hand poses inverted (T_ee_base written)", _hand_inv,
            falsifies=frozenset({"hand_pose"})),
    Mistake("eye_inverted", "the eye poses inverted", _eye_inv, falsifies=frozenset({"eye_pose"})),
    Mistake("both_inverted", "both files inverted (X and Y exchange; the flange's distance tells)", _both_inv,
            identifiable=False, falsifies=frozenset({"hand_pose", "eye_pose"})),
    Mistake("hand_quat_wxyz", "the hand file's quaternions scalar first (w x y z)", _set(hand_order="wxyz"),
            _quat_files),
    Mistake("eye_quat_wxyz", "the eye file's quaternions scalar first (w x y z)", _set(eye_order="wxyz"),
            _quat_files),
    Mistake("hand_mm", "the hand translations in mm (the eye's in m)", _set(hand_mm=True)),
    Mistake("eye_mm", "the eye translations in mm (the hand's in m)", _set(eye_mm=True)),
    Mistake("eye_stamps_ms", "the eye stamps in ms (the hand's in s)", _stamps("eye", 1e3), lambda r: r.stamped),
    Mistake("hand_stamps_us", "the hand stamps in us (the eye's in s)", _stamps("hand", 1e6), lambda r: r.stamped),
    Mistake("eye_stamps_ns", "the eye stamps in ns (the hand's in s)", _stamps("eye", 1e9), lambda r: r.stamped),
    Mistake("both_stamps_ms", "both streams' stamps in ms", _stamps("both", 1e3), lambda r: r.stamped,
            right_run="the true X and Y (one clock in other units: the pairing is the same), or exit 2"),
    Mistake("eye_row_missing_middle", "a row missing in the middle of the eye file (a dropped image)",
            _drop("eye", "middle"), lambda r: not r.stamped),
    Mistake("hand_row_missing_end", "the hand file's last row missing", _drop("hand", "end"),
            lambda r: not r.stamped),
    Mistake("eye_row_repeated", "an eye row written twice (unstamped)", _repeat, lambda r: not r.stamped),
    Mistake("wrong_setup", "the other --setup stated", _opt("setup", lambda r: OTHER_SETUP[r.setup]),
            identifiable=False, falsifies=frozenset({"setup"}),
            right_run="exit 2 where the data or physics contradict the stated setup, else its reading (as stated)"),
    Mistake("setup_missing", "--setup not given (the statement left out)", _opt("setup", lambda r: None),
            right_run="the true setup where the files or physics tell it, else exit 2 naming both"),
    Mistake("wrong_hand_pose", "--hand-pose ee_T_base stated for base_T_ee poses",
            _opt("hand_pose", lambda r: "ee_T_base"), falsifies=frozenset({"hand_pose"}),
            right_run="exit 2 naming --hand-pose (the data contradict it)"),
    Mistake("wrong_eye_pose", "the other --eye-pose stated", _opt("eye_pose", lambda r: OTHER_EYE[r.eye_pose]),
            falsifies=frozenset({"eye_pose"}), right_run="exit 2 naming --eye-pose (the data contradict it)"),
    Mistake("neutral_names", "file names without frame words (a.txt, b.txt)", _neutral),
    Mistake("multi_edge_inverted", "calibrate-multi: one camera's eye file inverted (a mislabelled edge)",
            lambda case, rec: None, lambda r: isinstance(r, MultiRecording), falsifies=frozenset({"eye_pose"}),
            right_run="exit 2 (the edge fits no common X), or the true X and Y"),
]
BY_NAME = {m.name: m for m in CATALOGUE}
#: Mistakes that say something about the same statement or the same rows, not combined with each other.
EXCLUSIVE = [{"wrong_setup", "setup_missing"}, {"hand_inverted", "both_inverted", "wrong_hand_pose"},
             {"eye_inverted", "both_inverted", "wrong_eye_pose"},
             {"eye_stamps_ms", "eye_stamps_ns", "both_stamps_ms"}, {"hand_stamps_us", "both_stamps_ms"},
             {"eye_row_missing_middle", "eye_row_repeated"}]  # fmt: skip

MODES = ("stated", "unstated")
#: Mistakes that change what a file holds while its name keeps naming the frames it held before.
DIRECTION_MISTAKES = {"hand_inverted", "eye_inverted", "both_inverted"}


@dataclass(frozen=True)
class Run:
    recording: str
    mistakes: tuple[str, ...]
    mode: str

    @property
    def key(self) -> str:
        return f"{self.recording}|{'+'.join(self.mistakes) or 'none'}|{self.mode}"


def runs(recs: list[Recording], only: set[str] | None = None) -> list[Run]:
    """Every run: each recording unmodified, with each mistake and each allowed pair, in both modes."""
    out = []
    for rec in recs:
        if isinstance(rec, MultiRecording):
            for combo, mode in itertools.product(((), ("multi_edge_inverted",)), MODES):
                if only is None or set(combo) & only or (not combo and "none" in only):
                    out.append(Run(rec.name, combo, mode))
            continue
        names = [m.name for m in CATALOGUE if m.applies(rec)]
        combos = [()] + [(n,) for n in names]
        combos += [p for p in itertools.combinations(names, 2)
                   if not any(set(p) <= ex for ex in EXCLUSIVE)]
        for combo, mode in itertools.product(combos, MODES):
            if mode == "unstated" and combo == ("setup_missing",):
                continue  # the same input as the unmodified one without statements
            if only is not None and not (set(combo) & only or (not combo and "none" in only)):
                continue
            out.append(Run(rec.name, combo, mode))
    return out


def make_case(rec: Recording, run: Run) -> Case:
    case = Case(rec.A.copy(), rec.E.copy(), rec.t_h, rec.t_e, rec.fmt, rec.hand_name, rec.eye_name)
    if run.mode == "stated":
        case.opts = {"setup": rec.setup, "hand_pose": "base_T_ee", "eye_pose": rec.eye_pose}
    falsified = set()
    for name in run.mistakes:
        m = BY_NAME[name]
        m.apply(case, rec)
        falsified |= m.falsifies
    stated = set(case.opts)
    # a wrong statement the mistake itself adds, or a true statement the files no longer keep
    case.false_statement = bool(falsified & stated)
    return case


# --------------------------------------------------------------------------- #
# writing and running
# --------------------------------------------------------------------------- #
def _rows_text(fmt: str, T: np.ndarray, t, order: str, mm: bool) -> str:
    T = T.copy()
    if mm:
        T[:, :3, 3] *= 1000
    if fmt == "rwhe":
        return "".join(" ".join(repr(v) for v in M.ravel().tolist()) + "\n" for M in T)
    q = se3.quaternion_from_matrix(T[:, :3, :3])  # w x y z
    q = q if order == "wxyz" else q[:, [1, 2, 3, 0]]
    rows = np.column_stack([t, T[:, :3, 3], q])
    sep = "," if fmt == "eth" else " "
    return "".join(sep.join(repr(v) for v in r) + "\n" for r in rows.tolist())


def write_case(case: Case, folder: Path) -> list[str]:
    """The two files in ``folder`` and the ``kinhec calibrate`` arguments that read them (without --json)."""
    folder.mkdir(parents=True, exist_ok=True)
    hand_name, eye_name = case.hand_name, case.eye_name
    if hand_name == eye_name:
        eye_name = "eye_" + eye_name
    h = folder / hand_name
    e = folder / eye_name
    h.write_text(_rows_text(case.fmt, case.A, case.t_h, case.hand_order, case.hand_mm))
    e.write_text(_rows_text(case.fmt, case.E, case.t_e, case.eye_order, case.eye_mm))
    if case.swap:
        h, e = e, h
    args = ["calibrate", "--hand", str(h), "--eye", str(e)]
    for k in ("setup", "hand_pose", "eye_pose"):
        if k in case.opts:
            args += [f"--{k.replace('_', '-')}", case.opts[k]]
    return args


def _ros_line(output: str):
    for line in output.splitlines():
        if line.startswith("ros2 run tf2_ros static_transform_publisher"):
            tok = line.split()
            val = {tok[i][2:]: tok[i + 1] for i in range(4, len(tok) - 1, 2)}
            T = se3.transform_from_pq(np.array([float(val[k]) for k in ("x", "y", "z")]),
                                      np.array([float(val[k]) for k in ("qw", "qx", "qy", "qz")]))  # fmt: skip
            return T, val["frame-id"], val["child-frame-id"]
    return None


def invoke(args: list[str], json_out: Path) -> dict:
    """Run the CLI in this process; exit status, stdout+stderr, the JSON (or None) and the CPU seconds."""
    from click.testing import CliRunner

    from kinhec.cli import main

    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = CliRunner().invoke(main, [*args, "--json", str(json_out)])
    cpu = time.process_time() - t0
    out = {"exit": r.exit_code, "output": r.output, "cpu_s": cpu, "json": None, "ros": None, "error": ""}
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        out["error"] = f"{type(r.exception).__name__}: {r.exception}"
    if r.exit_code == 0 and json_out.exists():
        out["json"] = json.loads(json_out.read_text())
        out["ros"] = _ros_line(r.output)
    return out


def _err(T, T_true):
    rot = float(np.linalg.norm(se3.so3_log(T_true[:3, :3].T @ T[:3, :3])))
    return rot, float(np.linalg.norm(T[:3, 3] - T_true[:3, 3]))


def _within(T, T_true, std) -> tuple[bool, float]:
    """Whether pose ``T`` is within 3σ of ``T_true`` (rotation angle against the norm of the rotation σ,
    translation distance against the norm of the translation σ); and the larger of the two ratios."""
    rot, tr = _err(T, T_true)
    std = np.asarray(std, dtype=float)
    ratio = max(rot / max(3 * np.linalg.norm(std[:3]), 1e-9), tr / max(3 * np.linalg.norm(std[3:]), 1e-9))
    return ratio <= 1.0, ratio


def write_multi(rec: MultiRecording, run: Run, folder: Path) -> list[str]:
    """The ``calibrate-multi`` folder of a run and its arguments (without --json)."""
    for (x, y), (A, E) in rec.edges.items():
        edge = folder / x / y
        edge.mkdir(parents=True, exist_ok=True)
        if "multi_edge_inverted" in run.mistakes and y == "cam1":
            E = se3.invert_transform(E)
        (edge / "hand.txt").write_text(_rows_text("rwhe", A, None, "xyzw", False))
        (edge / "eye.txt").write_text(_rows_text("rwhe", E, None, "xyzw", False))
    args = ["calibrate-multi", str(folder)]
    if run.mode == "stated":
        args += ["--setup", rec.setup, "--hand-pose", "base_T_ee", "--eye-pose", "cam_T_target"]
    return args


def judge_multi(d: dict, rec: MultiRecording) -> tuple[bool, str]:
    """Whether a calibrate-multi result gives every X and Y within 3σ of the truth."""
    why = []
    if d.get("configuration") != rec.setup:
        why.append(f"configuration {d.get('configuration')} (true {rec.setup})")
    for kind, truth in (("X", rec.X), ("Y", rec.Y)):
        for k, T_true in truth.items():
            got = d[kind].get(k)
            if got is None:
                why.append(f"no {kind} {k}")
                continue
            T = np.array(got["T"])
            ok, r = _within(T, T_true, got["std"])
            if not ok:
                rot, tr = _err(T, T_true)
                why.append(f"{kind} {k} {np.degrees(rot):.3g} deg / {1000 * tr:.3g} mm off ({r:.1f} x 3σ)")
    return not why, "; ".join(why)


@dataclass
class Truth:
    setup: str
    X: np.ndarray
    Y: np.ndarray
    frames: tuple[str, str]


def _as_one(mistakes) -> tuple:
    """The mistakes with the hand and the eye file inverted separately counted as both files inverted: together they
    are the exact symmetry of ``A X = Y B`` that exchanges X and Y, which no data can tell."""
    if {"hand_inverted", "eye_inverted"} <= set(mistakes):
        return tuple(m for m in mistakes if m not in ("hand_inverted", "eye_inverted")) + ("both_inverted",)
    return tuple(mistakes)


def _follows_claims(d: dict) -> bool:
    """Whether the run's reading, of readings that fit the same, is one that keeps every claim of the files while
    another does not (the files' claims narrowed the choice, physics perhaps finishing it)."""
    conv = (d.get("inputs") or {}).get("conventions") or {}
    same = conv.get("fit_the_same") or {}
    if same.get("chosen_by") not in ("claims", "physics"):
        return False
    used = set(conv.get("reading") or ())
    chosen = [r for r in same.get("readings", ()) if set(r["reading"]) <= used]
    return bool(chosen) and not chosen[0]["against"] and any(r["against"] for r in same["readings"])


def indistinguishable(d: dict, truth: Truth) -> bool:
    """Whether the result's numbers are those of a reading that fits exactly as well as the true one: the same
    ``X`` and ``Y`` under other names (another setup), both inverted (files exchanged) or exchanged (both files
    inverted), each within 3σ.  A false statement about what the data cannot tell leads there and nowhere else."""
    X, Y = np.array(d["X"]), np.array(d["Y"]) if d["Y"] is not None else None
    if Y is None:
        return False
    inv = se3.invert_transform
    for Xa, Ya in ((truth.X, truth.Y), (inv(truth.X), inv(truth.Y)), (truth.Y, truth.X),
                   (inv(truth.Y), inv(truth.X))):  # fmt: skip
        if _within(X, Xa, d["X_std"])[0] and _within(Y, Ya, d["Y_std"])[0]:
            return True
    return False


def judge(res: dict, truth: Truth, ratios: list | None = None) -> tuple[bool, str]:
    """Whether an exit-0 result is the true reading's, and why not (``ratios`` collects each pose's error over
    its 3σ bound)."""
    d = res["json"]
    if d is None:
        return False, "no JSON written"
    ratios = [] if ratios is None else ratios
    why = []
    if d["setup"] != truth.setup:
        why.append(f"setup {d['setup']} (true {truth.setup})")
    X = np.array(d["X"])
    ok, r = _within(X, truth.X, d["X_std"])
    ratios.append(r)
    if not ok:
        why.append("X {:.3g} deg / {:.3g} mm off ({:.1f} x 3σ)".format(np.degrees(_err(X, truth.X)[0]),
                                                                      1000 * _err(X, truth.X)[1], r))
    if d["Y"] is None:
        why.append("no Y")
    else:
        Y = np.array(d["Y"])
        ok, r = _within(Y, truth.Y, d["Y_std"])
        ratios.append(r)
        if not ok:
            why.append("Y {:.3g} deg / {:.3g} mm off ({:.1f} x 3σ)".format(np.degrees(_err(Y, truth.Y)[0]),
                                                                          1000 * _err(Y, truth.Y)[1], r))
    ros = res["ros"]
    if ros is None:
        why.append("no ROS line")
    else:
        T, parent, child = ros
        if (parent, child) != truth.frames:
            why.append(f"ROS frames {parent}->{child} (true {truth.frames[0]}->{truth.frames[1]})")
        mount, std = (truth.X, d["X_std"]) if truth.setup == "eye_in_hand" else (truth.Y, d["Y_std"])
        ok, r = _within(T, mount, std if std is not None else d["X_std"])
        if not ok:
            why.append(f"ROS transform {r:.1f} x 3σ from the true mount")
    return not why, "; ".join(why)


# --------------------------------------------------------------------------- #
# the worker
# --------------------------------------------------------------------------- #
_STATE: dict = {}


def _init(seeds=None) -> None:
    import atexit
    import shutil

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _STATE["seeds"] = tuple(seeds) if seeds else RECORDING_SEEDS
    recs, _ = recordings(_STATE["seeds"])
    _STATE["recs"] = {r.name: r for r in recs}
    _STATE["truth"] = {}
    _STATE["tmp"] = Path(tempfile.mkdtemp(prefix="kinhec-mistakes-"))
    atexit.register(shutil.rmtree, _STATE["tmp"], ignore_errors=True)


def parse_key(key: str) -> Run:
    """The run a key names (``recording|mistake+mistake|mode``, ``none`` for no mistake)."""
    rec, combo, mode = key.split("|")
    return Run(rec, () if combo == "none" else tuple(combo.split("+")), mode)


def write_run(key: str, folder: Path, seeds=None) -> str:
    """Write the input of the run ``key`` into ``folder``; the command that calibrates it."""
    recs, _ = recordings(seeds)
    run = parse_key(key)
    rec = next(r for r in recs if r.name == run.recording)
    if isinstance(rec, MultiRecording):
        return "kinhec " + shlex.join(write_multi(rec, run, Path(folder)))
    return "kinhec " + shlex.join(write_case(make_case(rec, run), Path(folder)))


def truth_of(rec: Recording) -> tuple[Truth | None, dict]:
    """The true reading's result: the correctly stated unmodified run (and, generated, the ground truth)."""
    if rec.name not in _STATE["truth"]:
        folder = _STATE["tmp"] / rec.name / "reference"
        case = make_case(rec, Run(rec.name, (), "stated"))
        res = invoke(write_case(case, folder), folder / "out.json")
        truth = None
        if res["exit"] == 0 and res["ros"] is not None:
            d = res["json"]
            X = rec.X if rec.X is not None else np.array(d["X"])
            Y = rec.Y if rec.Y is not None else np.array(d["Y"])
            truth = Truth(rec.setup, X, Y, (res["ros"][1], res["ros"][2]))
        _STATE["truth"][rec.name] = (truth, {k: res[k] for k in ("exit", "cpu_s")})
    return _STATE["truth"][rec.name]


def _reproduce(key: str) -> str:
    """The command that writes a run's input (with the recording seeds when they are not the default ones)."""
    seeds = _STATE.get("seeds", RECORDING_SEEDS)
    flag = "" if seeds == RECORDING_SEEDS else f" --recording-seeds {','.join(map(str, seeds))}"
    return f"python benchmarks/mistakes.py{flag} --write {shlex.quote(key)} DIR"


def execute(run: Run) -> dict:
    if "recs" not in _STATE:
        _init()
    rec = _STATE["recs"][run.recording]
    folder = _STATE["tmp"] / rec.name / f"{'+'.join(run.mistakes) or 'none'}-{run.mode}"
    if isinstance(rec, MultiRecording):
        return execute_multi(rec, run, folder)
    truth, _ = truth_of(rec)
    case = make_case(rec, run)
    args = write_case(case, folder)
    res = invoke(args, folder / "out.json")
    out = {"key": run.key, "recording": run.recording, "mistakes": list(run.mistakes), "mode": run.mode,
           "exit": res["exit"], "cpu_s": round(res["cpu_s"], 3), "false_statement": case.false_statement,
           "command": "kinhec " + shlex.join(args).replace(str(folder), "DIR"),
           "reproduce": _reproduce(run.key), "why": ""}  # fmt: skip
    # the files' names still say the direction the mistake undid (kinhec reads names as claims)
    out["stale_names"] = bool(set(run.mistakes) & DIRECTION_MISTAKES) and "neutral_names" not in run.mistakes
    if res["exit"] == 0:
        if truth is None:
            out["outcome"], out["why"] = "crashed", "the reference run (correctly stated, unmodified) failed"
        else:
            ratios = []
            ok, why = judge(res, truth, ratios)
            out["ratio"] = round(float(max(ratios)), 3) if ratios else None  # the worst pose error over its 3σ bound
            if ok:
                out["outcome"] = "right"
            elif (case.false_statement and not all(BY_NAME[m].identifiable for m in _as_one(run.mistakes)
                                                   if BY_NAME[m].falsifies & set(case.opts))
                  and indistinguishable(res["json"], truth)):
                out["outcome"], out["why"] = "as_stated", why
            elif out["stale_names"] and _follows_claims(res["json"]) and indistinguishable(res["json"], truth):
                # the names still claim the directions the mistake undid, and the readings that fit the same are
                # told apart by what the files claim: a false claim followed, as a false statement is
                out["outcome"], out["why"] = "as_claimed", why
            else:
                out["outcome"], out["why"] = "wrong", why
    elif res["exit"] == 2:
        out["outcome"] = "refused"
        out["why"] = res["output"].strip().splitlines()[-1][:300] if res["output"].strip() else ""
    else:
        out["outcome"], out["why"] = "crashed", (res["error"] or res["output"].strip()[-300:])
    return out


def execute_multi(rec: MultiRecording, run: Run, folder: Path) -> dict:
    args = write_multi(rec, run, folder)
    res = invoke(args, folder / "out.json")
    false_statement = run.mode == "stated" and bool(run.mistakes)
    out = {"key": run.key, "recording": run.recording, "mistakes": list(run.mistakes), "mode": run.mode,
           "exit": res["exit"], "cpu_s": round(res["cpu_s"], 3), "false_statement": false_statement,
           "command": "kinhec " + shlex.join(args).replace(str(folder), "DIR"),
           "reproduce": _reproduce(run.key), "why": ""}  # fmt: skip
    if res["exit"] == 0:
        ok, why = judge_multi(res["json"], rec)
        out["outcome"], out["why"] = ("right", "") if ok else ("wrong", why)
    elif res["exit"] == 2:
        out["outcome"] = "refused"
        out["why"] = res["output"].strip().splitlines()[-1][:300] if res["output"].strip() else ""
    else:
        out["outcome"], out["why"] = "crashed", (res["error"] or res["output"].strip()[-300:])
    return out


# --------------------------------------------------------------------------- #
# the table
# --------------------------------------------------------------------------- #
OUTCOMES = ("right", "wrong", "as_stated", "as_claimed", "refused", "crashed")


def summarise(results: list[dict]) -> dict:
    rows = {}
    for r in results:
        names = r["mistakes"] or ["none"]
        for name in names:
            row = rows.setdefault(name, {k: 0 for k in ("runs", *OUTCOMES, "unstated", "unstated_refused")})
            row["runs"] += 1
            row[r["outcome"]] += 1
            if r["mode"] == "unstated":
                row["unstated"] += 1
                row["unstated_refused"] += r["outcome"] == "refused"
    total = {k: 0 for k in ("runs", *OUTCOMES, "unstated", "unstated_refused")}
    for r in results:
        total["runs"] += 1
        total[r["outcome"]] += 1
        if r["mode"] == "unstated":
            total["unstated"] += 1
            total["unstated_refused"] += r["outcome"] == "refused"
    clean = [r for r in results if not r["mistakes"] and r["mode"] == "stated"]
    order = ["none"] + [m.name for m in CATALOGUE]
    return {
        "rows": {k: rows[k] for k in order if k in rows},
        "total": total,
        "clean_stated_runs": len(clean),
        "clean_stated_refused": sum(r["outcome"] == "refused" for r in clean),
        "cpu_s_total": round(sum(r["cpu_s"] for r in results), 1),
        "cpu_s_per_run_median": round(float(np.median([r["cpu_s"] for r in results])), 3) if results else None,
    }


def table(summary: dict) -> str:
    head = "| mistake | runs | right | wrong | as stated | as claimed | refused | crashed | refused, unstated |"
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def row(name, r):
        share = f"{100 * r['unstated_refused'] / r['unstated']:.0f} %" if r["unstated"] else "-"
        return (f"| {name} | {r['runs']} | {r['right']} | {r['wrong']} | {r['as_stated']} | {r['as_claimed']} | "
                f"{r['refused']} | "
                f"{r['crashed']} | {share} |")

    for name, r in summary["rows"].items():
        lines.append(row(name, r))
    lines.append(row("**all runs**", summary["total"]))
    return "\n".join(lines)


def acceptance(summary: dict) -> list[str]:
    t = summary["total"]
    n, k = summary["clean_stated_runs"], summary["clean_stated_refused"]
    share = 100 * k / n if n else 0.0
    return [f"exit-0 wrong answers: {t['wrong']} (accepted: 0)",
            f"crashes: {t['crashed']} (accepted: 0)",
            f"correctly stated unmodified inputs refused: {k} of {n} ({share:.1f} %; accepted: at most 2 %)"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=None,
                    help="a seeded random subset of N runs with mistakes, and every unmodified run")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--only", default=None, help="comma-separated mistakes (runs that include one; 'none': clean)")
    ap.add_argument("--json", default=None, help="write every run and the table as JSON")
    ap.add_argument("--list", action="store_true", help="print the catalogue and the recordings, run nothing")
    ap.add_argument("--write", nargs=2, metavar=("KEY", "DIR"),
                    help="write the input of one run (its key as printed) into DIR and print its command")
    ap.add_argument("--recording-seeds", default=",".join(map(str, RECORDING_SEEDS)),
                    help="comma-separated seeds of the generated recordings (default %(default)s)")
    a = ap.parse_args(argv)
    try:
        seeds = tuple(int(v) for v in a.recording_seeds.split(","))
    except ValueError:
        ap.error(f"--recording-seeds: expected comma-separated integers, got {a.recording_seeds!r}")
    if a.write:
        print(write_run(*a.write, seeds=seeds))
        return 0

    recs, missing = recordings(seeds)
    if SHARED_REAL is None or not SHARED_REAL.exists():
        missing.append("shared/realdata: absent (it holds the same recordings as tests/data/realdata)")
    for m in missing:
        print(f"note: skipped {m}")
    only = set(a.only.split(",")) if a.only else None
    if only and not only <= set(BY_NAME) | {"none"}:
        ap.error(f"--only: unknown {sorted(only - set(BY_NAME) - {'none'})}; known: {', '.join(BY_NAME)}")
    todo = runs(recs, only)
    if a.list:
        for m in CATALOGUE:
            print(f"{m.name}: {m.what} [identifiable: {m.identifiable}; right run: {m.right_run}]")
        for r in recs:
            rows = (f"{len(r.A)} + {len(r.E)} rows" if isinstance(r, Recording) else
                    f"calibrate-multi, edges {', '.join('/'.join(e) for e in r.edges)}")
            print(f"{r.name}: {r.kind}, {r.setup}, {'stamped' if r.stamped else 'unstamped'}, {r.fmt}, {rows}")
        print(f"runs: {len(todo)}")
        return 0
    n_all = len(todo)
    if a.sample is not None:  # N runs with mistakes drawn, and every unmodified run (the acceptance's 2 %)
        clean = [r for r in todo if not r.mistakes]
        rest = [r for r in todo if r.mistakes]
        if a.sample < len(rest):
            idx = np.sort(np.random.default_rng(a.seed).choice(len(rest), a.sample, replace=False))
            rest = [rest[i] for i in idx]
        todo = clean + rest
    print(f"{len(todo)} of {n_all} runs on {len(recs)} recordings ({sum(r.kind == 'real' for r in recs)} real), "
          f"{a.jobs} job(s)", flush=True)
    t0 = time.time()
    if a.jobs > 1:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(a.jobs, initializer=_init, initargs=(seeds,)) as pool:
            results = pool.map(execute, todo, chunksize=1)
    else:
        _init(seeds)
        results = [execute(r) for r in todo]
    results.sort(key=lambda r: r["key"])
    summary = summarise(results)
    for r in results:
        if r["outcome"] in ("wrong", "crashed"):
            stale = " (the file names still name the directions before the mistake)" if r.get("stale_names") else ""
            print(f"\n!!! {r['outcome'].upper()}: {r['key']}: {r['why']}{stale}\n    {r['reproduce']} && "
                  f"{r['command']}")
    print()
    print(table(summary))
    print()
    for line in acceptance(summary):
        print(line)
    print(f"CPU: {summary['cpu_s_total']} s in all, median {summary['cpu_s_per_run_median']} s per run "
          f"(the references not counted); wall {time.time() - t0:.0f} s")
    if a.json:
        doc = {"sample": a.sample, "seed": a.seed, "recording_seeds": list(seeds), "runs_in_catalogue": n_all,
               "only": a.only,
               "recordings": [dict(name=r.name, kind=r.kind, setup=r.setup, stamped=r.stamped, fmt=r.fmt)
                              for r in recs],
               "catalogue": [dict(name=m.name, what=m.what, identifiable=m.identifiable, right_run=m.right_run)
                             for m in CATALOGUE],
               "summary": summary,
               "runs": [{k: v for k, v in r.items() if k not in ("command", "reproduce")} for r in results]}  # fmt: skip
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps(doc, indent=1) + "\n")
        print(f"written: {a.json}")
    bad = summary["total"]["wrong"] + summary["total"]["crashed"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
