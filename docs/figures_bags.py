"""The run-derived figures of ``docs/bags.md``: ``kinhec calibrate --bag`` on a bag written by the page's own recipe.

* ``bags.run``, ``bags.launch``, ``bags.wrong-names``: the page's Python block (a generated smoke sequence,
  ``noise-000000``, written into a ROS 1 bag with ``support.bag_writer``, ``benchmarks/support/``) is run in a temporary folder,
  then the page's commands on that bag; the console output (its ``note:`` lines left out), the launch file
  (shortened as on the page) and the error for a wrong frame name go on the page as printed.
* ``bags.eth``: the ETH-ASL ``robot_arm_real`` CSVs kept with the tests (``tests/data/realdata``) written into a
  bag as tf and calibrated from the bag and from the CSVs.

Needs ``rosbags`` (the ``ros`` extra; the dev extra has it).  Written by ``python docs/build_figures.py``; checked
by ``tests/test_doc_figures.py``.  About 10 s of CPU.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import os
import re
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PAGE = HERE / "bags.md"
ETH_ARM = REPO / "tests" / "data" / "realdata" / "ethz_asl" / "robot_arm_real"
if str(REPO / "benchmarks") not in sys.path:  # support.bag_writer (benchmarks/support/): not shipped with kinhec
    sys.path.append(str(REPO / "benchmarks"))

#: The page's blocks, in page order; those whose figures depend on the OpenCV version installed (none).
NAMES = ("bags.run", "bags.launch", "bags.wrong-names", "bags.eth")
OPENCV_BLOCKS = ()

RUN = ["calibrate", "--bag", "recording.bag", "--hand-tf", "base_link:tool0", "--eye-tf", "camera_optical:board",
       "--launch", "hand_eye.launch.py"]  # fmt: skip
WRONG = ["calibrate", "--bag", "recording.bag", "--hand-tf", "base_link:tool1", "--eye-tf", "camera_optical:board"]

#: The arguments of the launch file's first node shown on the page (the others are elided).
LAUNCH_SHOWN = ('"--x"', '"--qw"', '"--frame-id"')


def _page_recipe() -> str:
    """The code of the page's one Python block (the recipe that writes ``recording.bag``)."""
    blocks = re.findall(r"```python\n(.*?)\n```", PAGE.read_text(encoding="utf-8"), re.S)
    if len(blocks) != 1:
        raise ValueError(f"{PAGE.name}: expected one ```python block (the recipe of the bag), got {len(blocks)}")
    return blocks[0]


def _cli(args: list[str]) -> tuple[int, str]:
    from click.testing import CliRunner

    from kinhec.cli import main

    r = CliRunner().invoke(main, args)
    return r.exit_code, r.output


def _fenced(lines: list[str]) -> str:
    return "```\n" + "\n".join(lines) + "\n```\n"


def _launch_excerpt(text: str) -> list[str]:
    """The launch file as the page shows it: its docstring's first line, the first node in full except the arguments
    between ``--x`` and ``--qw``, the second node's comment lines, then ``...``."""
    lines = text.splitlines()
    out = [lines[0], "..."]
    i = next(k for k, s in enumerate(lines) if s.startswith('"""') and k > 0)
    body = lines[i:]
    end = next(k for k, s in enumerate(body) if s.strip().startswith("# Node(")) + 1
    skipping = False
    for s in body[:end]:
        arg = s.strip().split(",")[0]
        if arg.startswith('"--'):
            if arg in LAUNCH_SHOWN:
                if skipping:
                    out.append(" " * (len(s) - len(s.lstrip())) + "...")
                    skipping = False
                out.append(s)
            else:
                skipping = True
            continue
        out.append(s)
    return out + ["        ...", "    ])"]


def _recording_blocks() -> dict[str, str]:
    from kinhec.synth.runner import generate_dataset

    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="kinhec_bags_doc_") as tmp:
        try:
            os.chdir(tmp)
            assert generate_dataset("smoke", "data", workers=1, tracks=["noise"], limit=2, progress=False).ok
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with contextlib.redirect_stdout(io.StringIO()):  # the recipe prints its verdict
                    exec(compile(_page_recipe(), str(PAGE), "exec"), {"__name__": "docs:bags"})
                code, out = _cli(RUN)
                assert code == 0, out
                launch = Path("hand_eye.launch.py").read_text(encoding="utf-8")
                code_wrong, wrong = _cli(WRONG)
                assert code_wrong == 2, wrong
        finally:
            os.chdir(cwd)
    lines = out.rstrip("\n").split("\n")
    notes = [s for s in lines if s.startswith("note: ")]
    first = lines.index(notes[0]) if notes else len(lines)
    shown = [s for s in lines if not s.startswith("note: ")]
    shown.insert(first, f"note: ... ({len(notes)} notes: where the stamps are counted from, the readings scored, "
                        "samples left out, the noise model, the initial solver, what the sigmas count)")  # fmt: skip
    return {
        "bags.run": _fenced(["$ kinhec " + " ".join(RUN)] + shown),
        "bags.launch": _fenced(_launch_excerpt(launch)),
        "bags.wrong-names": _fenced(["$ kinhec " + " ".join(WRONG)] + wrong.rstrip("\n").split("\n")),
    }


def _below(x: float) -> str:
    """The power of ten just above ``x`` (``"1e-8"`` for 1.2e-9): a bound that the last bits of a CPU's
    arithmetic do not move."""
    return f"1e{math.ceil(math.log10(x))}" if x > 0 else "0"


def _eth_block() -> str:
    from kinhec.calibrate import calibrate
    from kinhec.calibrate.readers import read_stream
    from support.bag_writer import TfEdge, write_bag

    files = sorted(ETH_ARM.glob("*.csv"))
    hand = next(f for f in files if "hinge" in f.name)
    eye = next(f for f in files if "target_ir" in f.name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = calibrate(hand, eye, fmt="eth", eye_pose="target_T_cam")
        h, e = read_stream(hand, "eth"), read_stream(eye, "eth")
        with tempfile.TemporaryDirectory(prefix="kinhec_bags_doc_") as tmp:
            path = write_bag(Path(tmp) / "robot_arm_real.bag", storage="ros1",
                             tf=[TfEdge("base_link", "sr300_hinge", h.T, h.t), TfEdge("target", "ir", e.T, e.t)])
            res = calibrate("base_link:sr300_hinge", "ir:target", bag=path)
        # the CSVs' stamps counted from the same whole second as the bag's
        t0 = math.floor(min(h.t[0], e.t[0]))
        shifted = calibrate(dataclasses.replace(h, t=h.t - t0), [dataclasses.replace(e, t=e.t - t0)],
                            eye_pose="target_T_cam")  # fmt: skip
    same = res.n_pairs == ref.n_pairs and list(res.outliers) == list(ref.outliers)
    dX, dt = np.abs(res.X - ref.X).max(), abs(res.time_offset_s - ref.time_offset_s)
    dX0, dt0 = np.abs(res.X - shifted.X).max(), abs(res.time_offset_s - shifted.time_offset_s)
    return (
        "The ETH-ASL `robot_arm_real` CSVs written into a bag as tf (`base_link -> sr300_hinge` at 50 Hz, `target -> "
        "ir` at 30 Hz, their own stamps) give, with `--hand-tf base_link:sr300_hinge --eye-tf ir:target`, "
        f"{'the CSV route' if same else 'unlike the CSV route'}'s {ref.n_pairs} pairs and {len(ref.outliers)} "
        f"outliers, `X` within {_below(dX)} (per element) and the clock offset within {_below(dt)} s (sigma "
        f"{ref.time_offset_std_s * 1e3:.1f} ms). The difference comes from the text route, whose stamps are "
        f"absolute float64 seconds ({h.t[0] / 1e9:.2f}e9 s holds {np.spacing(h.t[0]) * 1e7:.1f}e-7 s steps, and the "
        "offset-shifted stamps are rounded to that grid): with the CSVs' stamps counted from the same whole second "
        f"the two routes agree to {_below(dX0)} and {_below(dt0)} s.\n"
    )


def blocks(**_) -> dict[str, str]:
    """Every block of the page, ``{name: Markdown}``."""
    out = _recording_blocks()
    out["bags.eth"] = _eth_block()
    return {name: out[name] for name in NAMES}
